//! `weft test PATHS`: runs the test block of every entry (LANGUAGE.md §3, "Test
//! blocks"; docs/cli.md).
//!
//! `input`/`output` cases compare with the test-block tolerances; `random input`
//! cases only check that the interpreter runs them without error (until a compiled
//! backend exists to compare with); `error: REGEX` cases expect a run-time error whose
//! message matches. Each failure prints one line, when its file's tests end; the last
//! line is exactly `N passed, N failed`. On a terminal, standard error shows the file
//! being tested. Exits 1 when anything failed.

use std::io::{IsTerminal as _, Write as _};

use weft_hir::RootDatabase;
use weft_syntax::ast;
use weft_syntax::line_index::LineIndex;
use weft_syntax::test_block::{Expected, TestInput, test_block};
use weft_values::Value;

use crate::run::{Backend, core_program};
use crate::workspace::load;

#[derive(clap::Args, Debug)]
pub(crate) struct TestArgs {
    /// What runs the programs. With `opencl`, `random input` cases are compared with
    /// the reference interpreter (differential testing).
    #[arg(long, value_enum, default_value_t = Backend::Interp)]
    backend: Backend,
    /// The OpenCL device (`gpu`, `cpu`, `PLATFORM:DEVICE`).
    #[arg(long, value_name = "D")]
    pub(crate) device: Option<String>,
    /// The OpenCL C version of the kernels (`1.2` or `2.0`; see `weft run --help`).
    #[arg(long, value_enum, default_value = "1.2")]
    opencl: crate::OpenClVersion,
    /// Files or directories to test.
    #[arg(required = true, value_name = "PATHS")]
    paths: Vec<String>,
}

/// The seed of `random input` cases.
pub(crate) const SEED: u64 = 0;

pub(crate) fn run(args: &TestArgs) -> anyhow::Result<u8> {
    let (db, files) = load(&args.paths)?;
    let mut passed = 0usize;
    let mut failures: Vec<String> = Vec::new();
    let mut out = std::io::stdout().lock();
    // On a terminal, the file being tested (a GPU run of every example takes minutes);
    // failures are printed as each file's tests end.
    let progress = std::io::stderr().is_terminal() && files.len() > 1;
    let mut printed = 0;
    for (number, loaded) in files.iter().enumerate() {
        let file = loaded.file;
        let path = file.path(&db).clone();
        if progress {
            show_progress(&format!("[{}/{}] {path}", number + 1, files.len()));
        }
        test_file(&db, args, file, &path, &mut passed, &mut failures)?;
        if progress && failures.len() > printed {
            show_progress("");
        }
        for failure in &failures[printed..] {
            writeln!(out, "FAIL {failure}")?;
        }
        printed = failures.len();
    }
    if progress {
        show_progress("");
    }
    writeln!(out, "{passed} passed, {} failed", failures.len())?;
    Ok(u8::from(!failures.is_empty()))
}

/// Replaces the terminal's progress line on stderr with `line`.
fn show_progress(line: &str) {
    let mut err = std::io::stderr().lock();
    // A progress line that cannot be shown is no reason to stop testing.
    let _ = write!(err, "\r\x1b[2K{line}");
    let _ = err.flush();
}

/// Runs the test blocks of one file, counting passes and recording failures.
fn test_file(
    db: &RootDatabase,
    args: &TestArgs,
    file: weft_hir::SourceFile,
    path: &str,
    passed: &mut usize,
    failures: &mut Vec<String>,
) -> anyhow::Result<()> {
    if crate::apl::is_apl(path) {
        let (device, target) = (args.device.as_deref(), args.opencl.target());
        crate::apl::test(db, file, args.backend, device, target, passed, failures);
        return Ok(());
    }
    let text = file.text(db);
    let line_index = LineIndex::new(text);
    let line_of = |offset| line_index.to_chars(text, offset).line + 1;
    let mut cases = Vec::new();
    for item in weft_hir::parse(db, file).tree().items() {
        let ast::Item::Def(def) = item else { continue };
        if !def.is_entry() {
            continue;
        }
        let (block, errors) = test_block(&def);
        let name = def.name().map(|n| n.text().to_string()).unwrap_or_default();
        for error in errors {
            failures.push(format!(
                "{path}:{}: `{name}`: malformed test block: {}",
                line_of(error.range.start()),
                error.message
            ));
        }
        if let Some(block) = block {
            for case in block.cases {
                cases.push((name.clone(), case));
            }
        }
    }
    if cases.is_empty() {
        return Ok(());
    }
    let program = match core_program(db, file) {
        Ok(program) => program,
        Err(message) => {
            failures.extend(cases.iter().map(|(name, case)| {
                format!("{path}:{}: `{name}`: {message}", line_of(case.range.start()))
            }));
            return Ok(());
        }
    };
    if args.backend == Backend::Opencl {
        let results = crate::test_opencl::run_cases(
            db,
            &program,
            &cases,
            args.device.as_deref(),
            args.opencl.target(),
        )?;
        for ((name, case), result) in cases.iter().zip(results) {
            let location = format!("{path}:{}: `{name}`", line_of(case.range.start()));
            match result {
                Ok(()) => *passed += 1,
                Err(message) => failures.push(format!("{location}: {message}")),
            }
        }
        return Ok(());
    }
    for (name, case) in cases {
        let location = format!("{path}:{}: `{name}`", line_of(case.range.start()));
        match run_case(db, &program, &name, &case) {
            Ok(()) => *passed += 1,
            Err(message) => failures.push(format!("{location}: {message}")),
        }
    }
    Ok(())
}

fn run_case(
    db: &RootDatabase,
    program: &weft_core::Program,
    name: &str,
    case: &weft_syntax::test_block::TestCase,
) -> Result<(), String> {
    let entry = crate::run::choose_entry(program, Some(name))?;
    let inputs: Vec<Value> = match &case.input {
        TestInput::Values(text) => {
            weft_values::parse_values(&text.text).map_err(|e| format!("bad input: {e}"))?
        }
        TestInput::Random(text) => {
            let specs = weft_values::parse_random_specs(&text.text)
                .map_err(|e| format!("bad random input: {e}"))?;
            weft_values::generate_inputs(&specs, SEED)
                .map_err(|e| format!("bad random input: {e}"))?
        }
    };
    let result = weft_core::run_entry(program, entry, inputs);
    match (&case.expected, result) {
        (Expected::Output(text), Ok(got)) => {
            let want =
                weft_values::parse_values(&text.text).map_err(|e| format!("bad output: {e}"))?;
            weft_values::compare_all(&got, &want).map_err(|m| m.to_string())
        }
        (Expected::Output(_) | Expected::Runs, Err(error)) => {
            Err(format!("run-time error: {}", weft_core::render_error(db, &error)))
        }
        (Expected::Runs, Ok(_)) => Ok(()),
        (Expected::Error(pattern), Ok(got)) => Err(format!(
            "expected an error matching `{}`, got {}",
            pattern.text.trim(),
            weft_values::print_values(&got).trim_end().replace('\n', " ")
        )),
        (Expected::Error(pattern), Err(error)) => {
            let regex = regex::Regex::new(pattern.text.trim())
                .map_err(|e| format!("bad error regex `{}`: {e}", pattern.text.trim()))?;
            let message = weft_core::render_error(db, &error);
            if regex.is_match(&message) {
                Ok(())
            } else {
                Err(format!("expected an error matching `{}`, got: {message}", pattern.text.trim()))
            }
        }
    }
}
