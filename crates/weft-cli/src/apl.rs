//! `.apl` files (docs/apl.md): the APL front end (`weft-tail`) in front of the same
//! core IR, interpreter and OpenCL back end as `.weft` files.

use std::io::Write as _;

use weft_core::Program;
use weft_hir::{RootDatabase, SourceFile};
use weft_values::Value;

use crate::run::Backend;

/// Whether `path` names an APL file.
pub(crate) fn is_apl(path: &str) -> bool {
    path.ends_with(".apl")
}

/// The core program of an `.apl` file, or its errors rendered for the user.
pub(crate) fn core_program(db: &RootDatabase, file: SourceFile) -> Result<Program, String> {
    let path = file.path(db).clone();
    let text = file.text(db);
    let compiled = weft_tail::compile(text);
    if !compiled.diagnostics.is_empty() {
        let lines: Vec<String> =
            compiled.diagnostics.iter().map(|d| weft_tail::render(&path, text, d)).collect();
        return Err(lines.join("\n"));
    }
    let Some(tail) = compiled.tail else { return Err(format!("`{path}` has errors")) };
    let def = weft_hir::DefLoc {
        file,
        name: weft_hir::Name::new("main"),
        dup: 0,
        kind: weft_hir::DefKind::Entry,
    };
    let program = weft_tail::to_core::to_core(&tail, def)
        .map_err(|e| format!("internal compiler error in the APL front end: {e}"))?;
    if let Some(invariant) = weft_core::validate(&program).first() {
        return Err(format!("internal compiler error in the APL front end: {}", invariant.message));
    }
    Ok(program)
}

/// Runs the program and returns its results (`⎕ ←` values, then the value).
pub(crate) fn results(
    db: &RootDatabase,
    program: &Program,
    backend: Backend,
    device: Option<&str>,
    target: weft_aspace::Target,
) -> Result<Vec<Value>, String> {
    let entry = program.entries[0];
    match backend {
        Backend::Interp => weft_core::run_entry(program, entry, Vec::new())
            .map_err(|e| weft_core::render_error(db, &e)),
        Backend::Opencl => {
            let options = weft_lower::Options { target, ..crate::environment::lower_options() };
            let compiled = crate::opencl::compile(db, program, entry, options)?;
            let plan = crate::opencl::write_plan(&compiled.plan).map_err(|e| e.to_string())?;
            let mut args = vec!["run".to_owned(), "--plan".to_owned(), plan.display().to_string()];
            if let Some(d) = device {
                args.extend(["--device".to_owned(), d.to_owned()]);
            }
            let out = crate::opencl::run_runner(&args, "", std::time::Duration::from_secs(600))
                .map_err(|e| e.to_string())?;
            if out.status != Some(0) {
                return Err(out.stderr.trim().trim_start_matches("error: ").to_owned());
            }
            weft_values::parse_values(&out.stdout)
                .map_err(|e| format!("the runner printed bad values: {e}"))
        }
    }
}

/// `weft run FILE.apl`: every `⎕ ←` output, then the value, in APL's display.
pub(crate) fn run(
    db: &RootDatabase,
    file: SourceFile,
    backend: Backend,
    device: Option<&str>,
    target: weft_aspace::Target,
) -> anyhow::Result<u8> {
    let program = match core_program(db, file) {
        Ok(p) => p,
        Err(message) => {
            crate::run::print_error(&message);
            return Ok(1);
        }
    };
    match results(db, &program, backend, device, target) {
        Ok(values) => {
            let mut out = std::io::stdout().lock();
            for v in &values {
                writeln!(out, "{}", weft_tail::display::display(v))?;
            }
            Ok(0)
        }
        Err(message) => {
            crate::run::print_error(&message);
            Ok(1)
        }
    }
}

/// `weft test` on an `.apl` file: adds to `passed` and `failures`.
pub(crate) fn test(
    db: &RootDatabase,
    file: SourceFile,
    backend: Backend,
    device: Option<&str>,
    target: weft_aspace::Target,
    passed: &mut usize,
    failures: &mut Vec<String>,
) {
    let path = file.path(db).clone();
    let cases = weft_tail::tests_of(file.text(db));
    if cases.is_empty() {
        return;
    }
    let outcome = core_program(db, file).and_then(|p| results(db, &p, backend, device, target));
    for case in cases {
        let result = match (&case, &outcome) {
            (weft_tail::TestCase::Output { text, .. }, Ok(got)) => {
                match weft_values::parse_values(text) {
                    // The program's value is the last result (`⎕ ←` outputs come first).
                    Ok(want) => got.last().map_or(Err("no value".to_owned()), |g| {
                        weft_values::compare_all(std::slice::from_ref(g), &want)
                            .map_err(|m| m.to_string())
                    }),
                    Err(e) => Err(format!("bad output: {e}")),
                }
            }
            (weft_tail::TestCase::Output { .. }, Err(e)) => Err(e.clone()),
            (weft_tail::TestCase::Error { text, .. }, Err(e)) if e.contains(text.as_str()) => {
                Ok(())
            }
            (weft_tail::TestCase::Error { text, .. }, Err(e)) => {
                Err(format!("expected an error containing `{text}`, got: {e}"))
            }
            (weft_tail::TestCase::Error { text, .. }, Ok(_)) => {
                Err(format!("expected an error containing `{text}`, but it ran"))
            }
        };
        let line = match &case {
            weft_tail::TestCase::Output { line, .. } | weft_tail::TestCase::Error { line, .. } => {
                *line
            }
        };
        match result {
            Ok(()) => *passed += 1,
            Err(m) => failures.push(format!("{path}:{line}: {}", m.replace('\n', " "))),
        }
    }
}

/// `weft dump --ir tail FILE.apl` (a `.weft` file has no TAIL program).
pub(crate) fn dump_tail(db: &RootDatabase, file: SourceFile) -> Result<String, String> {
    let path = file.path(db).clone();
    if !is_apl(&path) {
        return Err(format!(
            "`{path}` is not an APL file: `--ir tail` is the stage of `.apl` files"
        ));
    }
    let text = file.text(db);
    let compiled = weft_tail::compile(text);
    if !compiled.diagnostics.is_empty() {
        let lines: Vec<String> =
            compiled.diagnostics.iter().map(|d| weft_tail::render(&path, text, d)).collect();
        return Err(lines.join("\n"));
    }
    compiled.tail.map(|t| weft_tail::tail::print_program(&t)).ok_or_else(|| "no program".to_owned())
}
