//! Tests of the middle end: snapshots of each pass on small programs (`check_*`), and
//! properties on every example and benchmark program (`every_program`): the validators
//! accept every pass's output, simplification keeps every test case's answer, and the
//! static work of the GPU IR has the degree of the interpreter's counted work.

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};
use weft_core::{FnId, Program};
use weft_hir::{RootDatabase, SourceFile};
use weft_syntax::ast::{self, AstNode as _};
use weft_syntax::test_block::{TestInput, test_block};
use weft_values::Value;

pub(crate) fn compile(src: &str) -> Program {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    compile_file(&db, file).expect("test source compiles")
}

fn compile_file(db: &RootDatabase, file: SourceFile) -> Option<Program> {
    let checked = weft_core::CheckedFile::new(db, file)?;
    let program = weft_core::lower_file(db, checked).ok()?;
    assert_eq!(weft_core::validate(&program), Vec::new());
    Some(program)
}

/// The simplified core IR of `src`.
pub(crate) fn check_simplify(src: &str, expect: Expect) {
    let program = compile(src);
    let simplified = crate::simplify(&program);
    assert_eq!(weft_core::validate(&simplified), Vec::new());
    expect.assert_eq(&weft_core::pretty_program(&simplified));
}

/// An example or benchmark program with its entries' test inputs.
pub(crate) struct Example {
    pub(crate) name: String,
    pub(crate) program: Program,
    /// Per entry: its inputs of each test case.
    pub(crate) cases: Vec<(FnId, Vec<Vec<Value>>)>,
}

fn weft_files(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "weft"));
    paths.sort();
    paths
}

/// Every example and benchmark program of the repository that checks.
pub(crate) fn every_program() -> Vec<Example> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = weft_files(&root.join("examples"));
    paths.extend(weft_files(&root.join("bench/programs")));
    let mut out = Vec::new();
    for path in paths {
        let mut db = RootDatabase::default();
        let text = std::fs::read_to_string(&path).expect("program is readable");
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir_name =
            dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let file = db.set_file(&format!("{dir_name}/{name}"), &text);
        // Imported library files, as `weft test` loads them.
        for lib in weft_files(&dir.join("lib")) {
            let lib_name = lib.file_name().map(|n| n.to_string_lossy().into_owned());
            if let (Some(lib_name), Ok(lib_text)) = (lib_name, std::fs::read_to_string(&lib)) {
                db.set_file(&format!("{dir_name}/lib/{lib_name}"), &lib_text);
            }
        }
        let Some(program) = compile_file(&db, file) else { continue };
        let mut cases = Vec::new();
        for item in weft_hir::parse(&db, file).tree().items() {
            let ast::Item::Def(def) = item else { continue };
            if !def.is_entry() {
                continue;
            }
            let entry_name = def.name().map(|n| n.text().to_string()).unwrap_or_default();
            let Some(entry) = program
                .entries
                .iter()
                .copied()
                .find(|&e| program.functions[e].name.as_str() == entry_name)
            else {
                continue;
            };
            let _ = def.syntax();
            let (block, _) = test_block(&def);
            let mut inputs = Vec::new();
            for case in block.map(|b| b.cases).unwrap_or_default() {
                let values = match &case.input {
                    TestInput::Values(text) => weft_values::parse_values(&text.text).ok(),
                    TestInput::Random(text) => weft_values::parse_random_specs(&text.text)
                        .ok()
                        .map(|specs| weft_values::generate_inputs(&specs, 0)),
                };
                if let Some(values) =
                    values.filter(|v| v.iter().map(Value::len).sum::<usize>() <= 4096)
                {
                    inputs.push(values);
                }
            }
            cases.push((entry, inputs));
        }
        out.push(Example { name, program, cases });
    }
    out
}

#[test]
fn simplification_keeps_every_answer() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for example in every_program() {
        let simplified = crate::simplify(&example.program);
        let errors = weft_core::validate(&simplified);
        if !errors.is_empty() {
            failures.push(format!("{}: invalid after simplification: {errors:?}", example.name));
            continue;
        }
        for (entry, cases) in &example.cases {
            for inputs in cases {
                let before = weft_core::run_entry(&example.program, *entry, inputs.clone());
                let after = weft_core::run_entry(&simplified, *entry, inputs.clone());
                let same = match (&before, &after) {
                    // Debug text compares NaNs and signed zeros by their bits.
                    (Ok(a), Ok(b)) => format!("{a:?}") == format!("{b:?}"),
                    (Err(a), Err(b)) => a.message == b.message,
                    _ => false,
                };
                if !same {
                    failures.push(format!(
                        "{} `{}`: {before:?} became {after:?}",
                        example.name, example.program.functions[*entry].name
                    ));
                }
                compared += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 250, "only {compared} cases compared");
}

#[test]
fn invariant_reduction_leaves_the_map() {
    // The sum of `ys` does not depend on `x`: computed once, not once per element.
    check_simplify(
        "entry main (xs: [n]f32) (ys: [m]f32) : [n]f32 = map (\\x -> x / reduce (+) 0 ys) xs",
        expect![[r#"
            entry main [n_0] [m_1] (xs_2: [n_0]f32) (ys_3: [m_1]f32) : [n_0]f32 =
              let t_4: f32 = reduce 0.0f32 ys_3 \(x_5: f32) (y_6: f32) : f32 ->
                  let t_7: f32 = add.f32 x_5 y_6
                  in t_7
              let t_8: [n_0]f32 = map (xs_2) \(x_9: f32) : f32 ->
                  let t_10: f32 = div.f32 x_9 t_4
                  in t_10
              in t_8
        "#]],
    );
}

#[test]
fn a_bounds_checked_read_stays_inside_the_map() {
    // `ys[0]` fails on an empty `ys`; hoisting it would fail on an empty `xs` too.
    check_simplify(
        "entry main (xs: [n]f32) (ys: [m]f32) : [n]f32 = map (\\x -> x + ys[0]) xs",
        expect![[r#"
            entry main [n_0] [m_1] (xs_2: [n_0]f32) (ys_3: [m_1]f32) : [n_0]f32 =
              let t_4: [n_0]f32 = map (xs_2) \(x_5: f32) : f32 ->
                  let t_6: f32 = ys_3[0i64]
                  let t_7: f32 = add.f32 x_5 t_6
                  in t_7
              in t_4
        "#]],
    );
}

#[test]
fn common_subexpressions_are_computed_once() {
    check_simplify(
        "entry main (a: f32) (b: f32) : f32 = (a * b + 1) * (a * b + 1)",
        expect![[r#"
            entry main (a_0: f32) (b_1: f32) : f32 =
              let t_2: f32 = mul.f32 a_0 b_1
              let t_3: f32 = add.f32 t_2 1.0f32
              let t_4: f32 = mul.f32 t_3 t_3
              in t_4
        "#]],
    );
}

#[test]
fn a_written_level_keeps_its_body() {
    check_simplify(
        "entry main (xs: [n]f32) (ys: [m]f32) : [n]f32 = map@grid (\\x -> x + reduce@seq (+) 0 ys) xs",
        expect![[r#"
            entry main [n_0] [m_1] (xs_2: [n_0]f32) (ys_3: [m_1]f32) : [n_0]f32 =
              let t_4: [n_0]f32 = map@grid (xs_2) \(x_5: f32) : f32 ->
                  let t_6: f32 = reduce@seq 0.0f32 ys_3 \(x_7: f32) (y_8: f32) : f32 ->
                      let t_9: f32 = add.f32 x_7 y_8
                      in t_9
                  let t_10: f32 = add.f32 x_5 t_6
                  in t_10
              in t_4
        "#]],
    );
}
