//! Building a plan's OpenCL program, and the source excerpt shown with a failed
//! build's log.
//!
//! The runtime caches built programs by a hash of their source (checked against
//! the source itself on a hit), with the kernels created from them by name, so
//! running the same plan again, as `weft-runner batch` and bench mode do, builds
//! once. Programs are built with `-cl-std=CL1.2`, the version the generated code
//! targets.

use std::ffi::CString;
use std::hash::{Hash as _, Hasher as _};

use ocl::core::{KernelInfo, KernelInfoResult, ProgramBuildInfo, ProgramBuildInfoResult};
use rustc_hash::{FxHashMap, FxHasher};

use crate::error::RunError;

/// The options every program is built with.
pub(crate) const BUILD_OPTIONS: &str = "-cl-std=CL1.2";

/// Lines of source shown on each side of the line a build log names.
const EXCERPT_CONTEXT: usize = 2;

/// A built program and its kernels.
pub(crate) struct BuiltProgram {
    pub(crate) source: String,
    pub(crate) program: ocl::core::Program,
    pub(crate) kernels: FxHashMap<String, ocl::core::Kernel>,
}

pub(crate) fn source_hash(source: &str) -> u64 {
    let mut hasher = FxHasher::default();
    source.hash(&mut hasher);
    hasher.finish()
}

/// Builds `source` for `device`; a failure carries the full build log.
pub(crate) fn build(
    context: &ocl::Context,
    device: &ocl::Device,
    device_description: &str,
    source: &str,
) -> Result<BuiltProgram, RunError> {
    let c_source = CString::new(source).map_err(|_| {
        RunError::InvalidPlan("the OpenCL source contains a NUL character".to_owned())
    })?;
    let options = CString::new(BUILD_OPTIONS).expect("invariant: the options have no NUL");
    let program = ocl::core::create_program_with_source(context, &[c_source])
        .map_err(|error| RunError::opencl("creating the OpenCL program", error))?;
    if let Err(error) = ocl::core::build_program(&program, Some(&[device]), &options, None, None) {
        let log =
            match ocl::core::get_program_build_info(&program, device, ProgramBuildInfo::BuildLog) {
                Ok(ProgramBuildInfoResult::BuildLog(log)) if !log.trim().is_empty() => log,
                // No log: the error itself is the best there is.
                _ => error.to_string(),
            };
        let excerpt = excerpt_for_log(source, &log);
        return Err(RunError::Build { device: device_description.to_owned(), log, excerpt });
    }
    Ok(BuiltProgram { source: source.to_owned(), program, kernels: FxHashMap::default() })
}

impl BuiltProgram {
    /// Creates the kernel `name` unless it exists, and checks that it takes
    /// `n_params` parameters after the error buffer.
    pub(crate) fn ensure_kernel(&mut self, name: &str, n_params: usize) -> Result<(), RunError> {
        if self.kernels.contains_key(name) {
            return Ok(());
        }
        let kernel = ocl::core::create_kernel(&self.program, name).map_err(|error| {
            RunError::InvalidPlan(format!("the program has no kernel `{name}` ({error})"))
        })?;
        if let Ok(KernelInfoResult::NumArgs(n_args)) =
            ocl::core::get_kernel_info(&kernel, KernelInfo::NumArgs)
        {
            let expected = n_params + 1;
            if usize::try_from(n_args).ok() != Some(expected) {
                return Err(RunError::InvalidPlan(format!(
                    "kernel `{name}` takes {n_args} parameters, but the plan lists {n_params} \
                     after the error buffer"
                )));
            }
        }
        self.kernels.insert(name.to_owned(), kernel);
        Ok(())
    }
}

/// The source lines around the first line a build log names in an error
/// (`<source>:12:5: error: ...` from Clang-based compilers such as POCL's and
/// NVIDIA's), numbered, with the named line marked; `None` if the log names none.
pub fn excerpt_for_log(source: &str, log: &str) -> Option<String> {
    let line =
        log.lines().filter(|l| l.contains("error")).chain(log.lines()).find_map(line_named_in)?;
    excerpt(source, line)
}

/// The 1-based line number in a log line that names a position: the first field
/// between colons that is a number, as in `<source>:12:5: error: ...` (Clang,
/// NVIDIA) or `error: /tmp/pocl/tempfile.cl:12:5: ...` (POCL).
fn line_named_in(log_line: &str) -> Option<usize> {
    let fields: Vec<&str> = log_line.split(':').collect();
    let inner = fields.get(1..fields.len().saturating_sub(1))?;
    inner
        .iter()
        .find(|field| !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|field| field.parse().ok())
}

fn excerpt(source: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = source.lines().collect();
    if line == 0 || line > lines.len() {
        return None;
    }
    let first = line.saturating_sub(EXCERPT_CONTEXT).max(1);
    let last = (line + EXCERPT_CONTEXT).min(lines.len());
    let width = last.to_string().len();
    let mut out = String::new();
    for (number, text) in
        lines.iter().enumerate().take(last).skip(first - 1).map(|(i, t)| (i + 1, t))
    {
        let marker = if number == line { '>' } else { ' ' };
        out.push_str(&format!("{marker} {number:>width$} | {text}\n"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn excerpt_marks_the_line_the_log_names() {
        let source = "a\nb\nc\nd\ne\nf\ng\n";
        let log = "<source>:4:3: error: use of undeclared identifier 'x'\n  x = 1;\n  ^\n";
        assert_eq!(
            excerpt_for_log(source, "error: /tmp/t.cl:4:11: use of 'x'\n"),
            excerpt(source, 4)
        );
        expect![[r#"
              2 | b
              3 | c
            > 4 | d
              5 | e
              6 | f
        "#]]
        .assert_eq(&excerpt_for_log(source, log).unwrap());
    }

    #[test]
    fn excerpt_is_none_without_a_line() {
        assert_eq!(excerpt_for_log("a\n", "error: something failed\n"), None);
        assert_eq!(excerpt_for_log("a\n", "<source>:40:1: error: past the end\n"), None);
    }
}
