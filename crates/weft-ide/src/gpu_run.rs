//! "Run on GPU": what running an entry in the OpenCL runner needs, as plain data. The
//! server writes the host plan to a file and spawns `weft-runner run --plan P --json`
//! with the inputs (ARCHITECTURE.md: running code is out of process, so neither this
//! crate nor the server links OpenCL).
//!
//! Inputs come from the entry's test block: the first `input { ... }` (values fed on
//! stdin), else the first `random input { ... }` (one `--random SPEC` per value); an
//! entry without parameters runs with no input.

use weft_hir::{DefKind, RootDatabase};

use crate::code_lens::test_inputs;
use crate::kernels::compile_entry;
use crate::program::{blocked_entry, entry_named, entry_program};

/// An entry compiled for a run.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuRun {
    pub entry: String,
    /// The host plan with its OpenCL program (`weft_plan::Plan::to_json`).
    pub plan_json: String,
    pub n_kernels: usize,
    pub input: GpuInput,
    /// The values the test block expects of `input` (`output { ... }`), if any.
    pub expected: Option<String>,
}

/// What running an entry needs besides a compiled plan: its inputs, the output its test
/// block expects of them, and the text of the file and of the files it imports as the
/// editor has them (unsaved buffers included), so that a run sees what the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRun {
    pub input: GpuInput,
    pub expected: Option<String>,
    /// `(database path, text)` of the file and of every file it imports, transitively.
    pub sources: Vec<(String, String)>,
}

/// Where a run's inputs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuInput {
    /// The entry takes no parameters.
    None,
    /// Textual values for stdin, from the test block's first `input { ... }`.
    Values(String),
    /// Random-input specs (`[1000]f32`, `i64 in 1..10`), one per value, from the test
    /// block's first `random input { ... }`.
    Random(Vec<String>),
}

/// The inputs to run `entry` of the file at `path` with (for "Run on GPU" and
/// "Profile"): the test block's first `input { ... }`, else its first `random input
/// { ... }`, else none when the entry takes no parameters.
pub(crate) fn entry_input(
    db: &RootDatabase,
    path: &str,
    entry: &str,
) -> Result<(weft_hir::SourceFile, GpuInput), String> {
    let file =
        db.file(path).ok_or_else(|| format!("`{path}` is not a Weft file of the workspace"))?;
    let loc = weft_hir::item_tree(db, file)
        .defs
        .iter()
        .find(|loc| loc.kind == DefKind::Entry && loc.name.as_str() == entry)
        .cloned();
    let program = entry_named(db, file, entry)
        .and_then(|loc| entry_program(db, weft_hir::DefId::new(db, loc)).clone());
    let Some((program, id)) = program else {
        return Err(match loc.as_ref().and_then(|loc| blocked_entry(db, loc)) {
            Some(why) => format!("cannot run `{entry}`: {why}"),
            None if loc.is_some() => format!("`{entry}` cannot be elaborated (see `weft run`)"),
            None => format!("no entry `{entry}` in `{path}`"),
        });
    };
    let n_params = program.functions[id].params.len();
    let inputs = loc.map(|loc| test_inputs(db, &loc)).unwrap_or_default();
    let input = match (inputs.values, inputs.random) {
        (Some(values), _) => GpuInput::Values(values),
        (None, Some(random)) => {
            let specs = weft_values::parse_random_specs(&random)
                .map_err(|error| format!("the `random input` of `{entry}`: {error}"))?;
            GpuInput::Random(specs.iter().map(ToString::to_string).collect())
        }
        (None, None) if n_params == 0 => GpuInput::None,
        (None, None) => {
            return Err(format!(
                "`{entry}` has no inputs to run with: add a test block above it with \
                 `-- input {{ ... }}` or `-- random input {{ ... }}`"
            ));
        }
    };
    Ok((file, input))
}

/// The run of `entry` of the file at `path` (module docs), or why it cannot run.
pub(crate) fn entry_run(db: &RootDatabase, path: &str, entry: &str) -> Result<EntryRun, String> {
    let (file, input) = entry_input(db, path, entry)?;
    let mut sources: Vec<(String, String)> = Vec::new();
    let mut todo = vec![file];
    while let Some(f) = todo.pop() {
        if sources.iter().any(|(p, _)| p == f.path(db)) {
            continue;
        }
        sources.push((f.path(db).clone(), f.text(db).to_string()));
        todo.extend(weft_hir::file_scope(db, f).imports.iter().flatten().copied());
    }
    let expected = match input {
        GpuInput::Values(_) => expected_output(db, file, entry),
        GpuInput::None | GpuInput::Random(_) => None,
    };
    Ok(EntryRun { input, expected, sources })
}

/// The `output { ... }` of the test case whose inputs a run uses (the first `input`).
fn expected_output(db: &RootDatabase, file: weft_hir::SourceFile, entry: &str) -> Option<String> {
    let loc = weft_hir::item_tree(db, file)
        .defs
        .iter()
        .find(|loc| loc.kind == DefKind::Entry && loc.name.as_str() == entry)?
        .clone();
    test_inputs(db, &loc).expected.map(|e| e.trim().to_owned())
}

pub(crate) fn gpu_run(db: &RootDatabase, path: &str, entry: &str) -> Result<GpuRun, String> {
    let (file, input) = entry_input(db, path, entry)?;
    let expected = match input {
        GpuInput::Values(_) => expected_output(db, file, entry),
        GpuInput::None | GpuInput::Random(_) => None,
    };
    let compiled = compile_entry(db, file, entry)
        .ok_or_else(|| format!("no entry `{entry}` in `{path}`"))?
        .map_err(|message| format!("`{entry}` cannot be compiled for OpenCL: {message}"))?;
    Ok(GpuRun {
        entry: entry.to_owned(),
        plan_json: compiled.plan.to_json(),
        n_kernels: compiled.kernels.len(),
        input,
        expected,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, entry: &str, expect: Expect) {
        let fixture = fixture(text);
        let actual = match fixture.analysis.gpu_run(&fixture.position.path, entry).unwrap() {
            Ok(run) => format!(
                "{} kernel(s), plan of entry {}, input {:?}\n",
                run.n_kernels,
                serde_entry(&run.plan_json),
                run.input
            ),
            Err(message) => format!("error: {message}\n"),
        };
        expect.assert_eq(&actual);
    }

    /// The `"entry"` field of a plan, without a JSON parser.
    fn serde_entry(json: &str) -> String {
        let start = json.find("\"entry\":").map_or(0, |i| i + 8);
        json[start..].split(',').next().unwrap_or("").trim().to_owned()
    }

    #[test]
    fn first_test_input_is_fed() {
        check(
            r#"
-- ==
-- input { [1f32, 2f32] }
-- output { 3f32 }
-- random input { [100]f32 }
entry sum (xs: [n]f32) : f32 = reduce (+) 0f32 xs
"#,
            "sum",
            expect![[r#"
                2 kernel(s), plan of entry "sum", input Values(" [1f32, 2f32] ")
            "#]],
        );
    }

    #[test]
    fn random_input_gives_one_spec_per_value() {
        check(
            r#"
-- ==
-- random input { [1000]f32 i64 in 1..10 }
entry scale (xs: [n]f32) (k: i64) : [n]f32 = map (\x -> x * f32 k) xs
"#,
            "scale",
            expect![[r#"
                1 kernel(s), plan of entry "scale", input Random(["[1000]f32", "i64 in 1i64..10i64"])
            "#]],
        );
    }

    #[test]
    fn entry_without_parameters_needs_no_input() {
        check(
            r#"
entry five : [5]i64 = iota 5
"#,
            "five",
            expect![[r#"
                1 kernel(s), plan of entry "five", input None
            "#]],
        );
    }

    #[test]
    fn entry_without_inputs_is_refused() {
        check(
            r#"
entry id (xs: [n]f32) : [n]f32 = map (\x -> x) xs
"#,
            "id",
            expect![[r#"
                error: `id` has no inputs to run with: add a test block above it with `-- input { ... }` or `-- random input { ... }`
            "#]],
        );
    }

    #[test]
    fn an_error_in_another_def_does_not_stop_a_run() {
        check(
            r#"
entry id (xs: [n]f32) : [n]f32 = map (\x -> x) xs
def broken (x: i32) : i32 = x + true
"#,
            "id",
            expect![[r#"
                error: `id` has no inputs to run with: add a test block above it with `-- input { ... }` or `-- random input { ... }`
            "#]],
        );
    }
}
