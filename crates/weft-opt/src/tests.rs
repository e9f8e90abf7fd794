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
                        .and_then(|specs| weft_values::generate_inputs(&specs, 0).ok()),
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

/// Runs every test case of `example` on its source program and on `transformed`;
/// records a line per case whose answer changed (errors count as the same answer; with
/// `same_messages`, only with the same message) and returns how many it compared.
/// How closely a transformed program's answers must match the source's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Match {
    /// Bit for bit, and the same error messages (simplification changes no operation).
    Exact,
    /// Floats within `weft test`'s tolerance, any error for an error: the versions may
    /// combine a commutative reduction's elements in another order (a segmented
    /// reduction split into chunks), as the kernels do.
    Reassociated,
}

fn compare_answers(
    example: &Example,
    transformed: &Program,
    label: &str,
    how: Match,
    failures: &mut Vec<String>,
) -> usize {
    let mut compared = 0;
    for (entry, cases) in &example.cases {
        for inputs in cases {
            let before = weft_core::run_entry(&example.program, *entry, inputs.clone());
            let after = weft_core::run_entry(transformed, *entry, inputs.clone());
            let same = match (&before, &after) {
                // Debug text compares NaNs and signed zeros by their bits.
                (Ok(a), Ok(b)) => {
                    format!("{a:?}") == format!("{b:?}")
                        || (how == Match::Reassociated && weft_values::compare_all(b, a).is_ok())
                }
                (Err(a), Err(b)) => how == Match::Reassociated || a.message == b.message,
                _ => false,
            };
            if !same {
                failures.push(format!(
                    "{} `{}` ({label}): {:.200} became {:.200}",
                    example.name,
                    example.program.functions[*entry].name,
                    format!("{before:?}"),
                    format!("{after:?}")
                ));
            }
            compared += 1;
        }
    }
    compared
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
        compared +=
            compare_answers(&example, &simplified, "simplified", Match::Exact, &mut failures);
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
fn cheap_scalar_code_stays_in_the_map_but_leaves_inner_loops() {
    // `f32 k` out of the map would be host code, which the back end runs as a kernel of
    // one work-item: it stays. Inside the map, out of the inner `map`, it moves.
    check_simplify(
        "entry main (xss: [n][m]f32) (k: i64) : [n][m]f32 =
           map (\\xs -> map (\\x -> x * f32.i64 k) xs) xss",
        expect![[r#"
            def f32.i64 (x_0: i64) : f32 =
              let t_1: f32 = f32.i64 x_0
              in t_1

            entry main [n_0] [m_1] (xss_2: [n_0][m_1]f32) (k_3: i64) : [n_0][m_1]f32 =
              let t_4: [n_0][m_1]f32 = map (xss_2) \(xs_5: [m_1]f32) : [m_1]f32 ->
                  let t_6: f32 = call f32.i64 k_3
                  let t_7: [m_1]f32 = map (xs_5) \(x_8: f32) : f32 ->
                      let t_9: f32 = mul.f32 x_8 t_6
                      in t_9
                  in t_7
              in t_4
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

/// The GPU IR of `src`.
pub(crate) fn check_gpu(src: &str, expect: Expect) {
    let program = compile(src);
    let gpu = crate::pipeline(&program);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    expect.assert_eq(&crate::pretty_gpu(&gpu));
}

/// The GPU IR `pipeline` makes of `src`, printed.
fn gpu_text(src: &str) -> String {
    let gpu = crate::pipeline(&compile(src));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    crate::pretty_gpu(&gpu)
}

#[test]
fn a_segmented_reduction_of_few_segments_is_split_into_chunks() {
    let text =
        gpu_text(r"entry row_sums (a: [n][m]f32) : [n]f32 = map (\row -> reduce (+) 0 row) a");
    // The fully flattened version: the first stage reduces chunks (`chunk < K` of each
    // segment, `step < L` elements each, `j = chunk + step*K`, the neutral element past
    // the end), the second reduces each segment's chunks.
    let first = text.lines().find(|l| l.contains("segred@grid (i_") && l.contains(", step_"));
    let first = first.unwrap_or_else(|| panic!("no first stage:\n{text}"));
    assert!(first.contains(": [n_0][t_") && first.contains(", chunk_"), "{first}");
    assert!(text.contains("mul.i64 step_"), "{text}");
    assert!(text.contains("                else\n                  in 0.0f32"), "{text}");
    // The second stage: a work-group per segment sharing its chunks when there are
    // many (64 or more), else a work-item per segment; the host picks by `K`.
    let grid = text.lines().filter(|l| l.contains("segred@grid")).count();
    assert_eq!(grid, 2, "the first stage and the few-chunks second stage:\n{text}");
    let lines: Vec<&str> = text.lines().collect();
    let many = lines.iter().position(|l| l.contains("many_chunks_")).expect("a host choice");
    assert!(lines[many].contains("ge.i64 ") && lines[many].contains(" 64i64"), "{text}");
    assert!(lines[many + 2].contains("= segmap@group (i_"), "{text}");
    assert!(lines[many + 4].contains("= segred@thread (chunk_"), "{text}");
    assert!(text.contains("= partials_"), "{text}");
    // The chunk count is a tile parameter computed on the host from both sizes.
    assert!(text.contains("div.i64 262144i64"), "{text}");
    assert!(text.contains("i64.min") && text.contains("16384i64"), "{text}");
    // Sums of the columns of a matrix (rows of its transposition): the segment index is
    // the contiguous one, so the chunks are outer and the segments inner (`[K][m]`).
    let columns = gpu_text(
        r"entry column_sums (a: [n][m]f32) : [m]f32 = map (\col -> reduce (+) 0 col) (transpose a)",
    );
    let first =
        columns.lines().find(|l| l.contains("segred@grid (chunk_") && l.contains(", step_"));
    let first = first.unwrap_or_else(|| panic!("no first stage over chunks first:\n{columns}"));
    assert!(first.contains("= segred@grid (chunk_") && first.contains("][m_1]f32"), "{first}");
}

#[test]
fn a_work_group_version_runs_only_where_its_local_memory_fits() {
    let softmax = |row: &str| {
        format!(
            r"entry f (xss: [n]{row}f32) : [n]{row}f32 =
                map (\xs -> let mx = reduce f32.max (-f32.inf) xs
                            let es = map (\x -> f32.exp (x - mx)) xs
                            let s = reduce (+) 0 es
                            in map (\e -> e / s) es) xss"
        )
    };
    // Rows of unknown length: the version needs 8 bytes per element (two arrays of
    // floats) and runs when that is below the device's local memory; else the fully
    // flattened version (no group SegMap in it) runs.
    let text = gpu_text(&softmax("[m]"));
    let guard =
        text.lines().position(|l| l.contains(">= threshold f.local_memory_exceeded_0 then"));
    let guard = guard.unwrap_or_else(|| panic!("no guard:\n{text}"));
    assert!(text.lines().nth(guard).unwrap().contains("version 8*m_1 >="), "{text}");
    let then_branch: Vec<&str> =
        text.lines().skip(guard + 1).take_while(|l| !l.trim().starts_with("else")).collect();
    assert!(!then_branch.iter().any(|l| l.contains("segmap@group")), "{text}");
    assert!(text.contains("segmap@group"), "{text}");
    // A map fused into its reduction keeps no array (n-body's accelerations): no
    // guard; the guard runs after fusion.
    let fused = gpu_text(
        r"entry d (a: [n][m]f32) (x: [m]f32) : [n]f32 = map (\row -> reduce (+) 0 (map2 (*) row x)) a",
    );
    assert!(fused.contains("segmap@group") && !fused.contains("local_memory"), "{fused}");
    // Rows of 16 floats take 128 bytes: no guard.
    let small = gpu_text(&softmax("[16]"));
    assert!(small.contains("segmap@group") && !small.contains("local_memory"), "{small}");
    // The threshold is the device's local memory (plus one: the first size that does
    // not fit), and never tuned.
    let device =
        crate::DeviceShape { gpu: true, compute_units: 132, simd_width: 32, local_memory: 65_536 };
    assert_eq!(
        crate::threshold_default(crate::ThresholdKind::LocalMemoryExceeded, Some(&device)),
        65_537
    );
    assert!(!crate::ThresholdKind::LocalMemoryExceeded.tunable());
}

#[test]
fn a_three_dimensional_map_nest_is_one_map_over_two_dimensions() {
    let text = gpu_text(
        r"entry f (a: [p][q][r]f32) : [p][q][r]f32 =
            generate p (\k -> generate q (\j -> generate r (\i -> a[k, j, i] * 2)))",
    );
    // No versions: every point gets a work-item. The outer two dimensions are one
    // (`k = q' / q`, `j = q' % q`), the innermost stays innermost, and the result is a
    // view of the merged array.
    assert!(!text.contains("version"), "{text}");
    let maps: Vec<&str> = text.lines().filter(|l| l.contains("segmap@grid")).collect();
    assert_eq!(maps.len(), 1, "{text}");
    assert!(
        maps[0].contains("(q_") && maps[0].contains(", i_") && maps[0].contains("< r_2)"),
        "{text}"
    );
    assert!(text.contains("= mul.i64 p_0 q_1"), "{text}");
    assert!(text.contains("div.i64 q_") && text.contains("rem.i64 q_"), "{text}");
    assert!(text.contains(": [p_0][q_1][r_2]f32 = unflatten p_0 q_1 "), "{text}");
    // Two maps keep their versions (a matrix of rows is the outer version's case).
    let two =
        gpu_text(r"entry g (a: [p][q]f32) : [p][q]f32 = map (\row -> map (\x -> x * 2) row) a");
    assert!(!two.contains("unflatten"), "{two}");
}

#[test]
fn element_reads_of_matrices_in_a_nest_become_row_reads() {
    let text = gpu_text(
        r"entry mm (a: [n][k]f32) (b: [m][k]f32) : [n][m]f32 =
            map (\arow -> map (\brow -> reduce (+) 0 (map2 (*) arow brow)) b) a",
    );
    // The fully flattened version reads `a[i, l]` and `b[j, l]`: now a row of each per
    // point (`a[i]`, `b[j]`) and an element of the row.
    let flat = &text[text.find("segred@grid (i_").unwrap_or_else(|| panic!("{text}"))..];
    let reads = |array: &str| {
        flat.lines()
            .filter(|l| l.contains(&format!("= {array}")) && l.contains("[i_"))
            .map(|l| (l.contains(": [k_1]f32 ="), l.contains(", i_")))
            .collect::<Vec<_>>()
    };
    assert_eq!(reads("a_3"), [(true, false)], "{text}");
    assert_eq!(reads("b_4"), [(true, false)], "{text}");
}

#[test]
fn a_reduction_that_is_not_commutative_or_written_is_not_split() {
    // Taking the last element is associative, not commutative: chunks would reorder.
    let last =
        gpu_text(r"entry lasts (a: [n][m]f32) : [n]f32 = map (\row -> reduce (\x y -> y) 0 row) a");
    assert!(!last.contains("partials_"), "{last}");
    // A level the program wrote is kept exactly.
    let written = gpu_text(
        r"entry sums (a: [n][m]f32) : [n]f32 = map@group (\row -> reduce@group (+) 0 row) a",
    );
    assert!(!written.contains("partials_"), "{written}");
}

#[test]
fn row_softmax_gets_three_versions() {
    check_gpu(
        r"entry row_softmax (xss: [n][m]f32) : [n][m]f32 =
  map (\xs ->
    let mx = reduce f32.max (-f32.inf) xs
    let es = map (\x -> f32.exp (x - mx)) xs
    let s = reduce (+) 0 es
    in map (\e -> e / s) es) xss",
        expect![[r#"
            threshold row_softmax.suff_intra_par_0 = 128
            threshold row_softmax.suff_outer_par_0 = 32768
            threshold row_softmax.local_memory_exceeded_0 = 49153

            entry row_softmax [n_0] [m_1] (xss_2: [n_0][m_1]f32) : [n_0][m_1]f32 =
              let t_3: [n_0][m_1]f32 = version n_0 >= threshold row_softmax.suff_outer_par_0 then
                  let xss_4: [n_0][m_1]f32 = manifest (1, 0) xss_2
                  let outer_5: [n_0][m_1]f32 = segmap@grid (i_6 < n_0) [chosen]
                    body ->
                      let xs_7: [m_1]f32 = xss_4[i_6]
                      let t_8: f32 = f32.inf
                      let t_9: f32 = neg.f32 t_8
                      let mx_10: f32 = reduce@seq t_9 xs_7 \(x_11: f32) (y_12: f32) ->
                          let t_13: f32 = f32.max x_11 y_12
                          in t_13
                      let es_14: [m_1]f32 = map@seq (xs_7) \(x_15: f32) ->
                          let t_16: f32 = sub.f32 x_15 mx_10
                          let t_17: f32 = f32.exp t_16
                          in t_17
                      let s_18: f32 = reduce@seq 0.0f32 es_14 \(x_19: f32) (y_20: f32) ->
                          let t_21: f32 = add.f32 x_19 y_20
                          in t_21
                      let t_22: [m_1]f32 = map@seq (es_14) \(e_23: f32) ->
                          let t_24: f32 = div.f32 e_23 s_18
                          in t_24
                      in t_22
                  in outer_5
                else
                  let versions_25: [n_0][m_1]f32 = version n_0 >= threshold row_softmax.suff_intra_par_0 then
                      let fitting_26: [n_0][m_1]f32 = version 8*m_1 >= threshold row_softmax.local_memory_exceeded_0 then
                          let mx_27: [n_0]f32 = segmap@grid (i_28 < n_0) [chosen]
                            body ->
                              let xs_29: [m_1]f32 = xss_2[i_28]
                              let t_30: f32 = f32.inf
                              let t_31: f32 = neg.f32 t_30
                              let mx_32: f32 = reduce@seq t_31 xs_29 \(x_33: f32) (y_34: f32) ->
                                  let t_35: f32 = f32.max x_33 y_34
                                  in t_35
                              in mx_32
                          let t_36: [n_0][m_1]f32 = segmap@grid (i_37 < n_0, i_38 < m_1) [chosen]
                            body ->
                              let xss_39: [m_1]f32 = xss_2[i_37]
                              let mx_40: f32 = mx_27[i_37]
                              let x_41: f32 = xss_39[i_38]
                              let t_42: f32 = sub.f32 x_41 mx_40
                              let t_43: f32 = f32.exp t_42
                              in t_43
                          let t_44: i64 = i64.max n_0 1i64
                          let t_45: i64 = div.i64 262144i64 t_44
                          let t_46: i64 = i64.min t_45 16384i64
                          let t_47: i64 = add.i64 m_1 63i64
                          let t_48: i64 = div.i64 t_47 64i64
                          let t_49: i64 = i64.min t_46 t_48
                          let t_50: i64 = i64.max t_49 1i64
                          let t_51: i64 = sub.i64 t_50 1i64
                          let t_52: i64 = add.i64 m_1 t_51
                          let t_53: i64 = div.i64 t_52 t_50
                          let partials_54: [n_0][t_50]f32 = segred@grid (i_55 < n_0, chunk_56 < t_50, step_57 < t_53) [chosen]
                            op (commutative) 0.0f32 \(x_58: f32) (y_59: f32) ->
                                let t_60: f32 = add.f32 x_58 y_59
                                in t_60
                            body ->
                              let t_61: i64 = mul.i64 step_57 t_50
                              let i_62: i64 = add.i64 chunk_56 t_61
                              let inside_63: bool = lt.i64 i_62 m_1
                              let element_64: f32 = if inside_63 then
                                  let x_65: f32 = t_36[i_55, i_62]
                                  in x_65
                                else
                                  in 0.0f32
                              in element_64
                          let many_chunks_66: bool = ge.i64 t_50 64i64
                          let s_67: [n_0]f32 = if many_chunks_66 then
                              let reduced_68: [n_0]f32 = segmap@group (i_69 < n_0) [chosen]
                                body ->
                                  let segment_70: f32 = segred@thread (chunk_71 < t_50) [chosen]
                                    op (commutative) 0.0f32 \(x_72: f32) (y_73: f32) ->
                                        let t_74: f32 = add.f32 x_72 y_73
                                        in t_74
                                    body ->
                                      let partial_75: f32 = partials_54[i_69, chunk_71]
                                      in partial_75
                                  in segment_70
                              in reduced_68
                            else
                              let reduced_76: [n_0]f32 = segred@grid (i_77 < n_0, chunk_78 < t_50) [chosen]
                                op (commutative) 0.0f32 \(x_79: f32) (y_80: f32) ->
                                    let t_81: f32 = add.f32 x_79 y_80
                                    in t_81
                                body ->
                                  let partials_82: [t_50]f32 = partials_54[i_77]
                                  let partial_83: f32 = partials_82[chunk_78]
                                  in partial_83
                              in reduced_76
                          let t_84: [n_0][m_1]f32 = segmap@grid (i_85 < n_0, i_86 < m_1) [chosen]
                            body ->
                              let t_87: [m_1]f32 = t_36[i_85]
                              let s_88: f32 = s_67[i_85]
                              let e_89: f32 = t_87[i_86]
                              let t_90: f32 = div.f32 e_89 s_88
                              in t_90
                          in t_84
                        else
                          let intra_91: [n_0][m_1]f32 = segmap@group (i_92 < n_0) [chosen]
                            body ->
                              let xs_93: [m_1]f32 = xss_2[i_92]
                              let t_94: f32 = f32.inf
                              let t_95: f32 = neg.f32 t_94
                              let mx_96: f32 = segred@thread (i_97 < m_1) [chosen]
                                op (commutative) t_95 \(x_98: f32) (y_99: f32) ->
                                    let t_100: f32 = f32.max x_98 y_99
                                    in t_100
                                body ->
                                  let x_101: f32 = xs_93[i_97]
                                  in x_101
                              let es_102: [m_1]f32 = segmap@thread (i_103 < m_1) [chosen]
                                body ->
                                  let x_104: f32 = xs_93[i_103]
                                  let t_105: f32 = sub.f32 x_104 mx_96
                                  let t_106: f32 = f32.exp t_105
                                  in t_106
                              let s_107: f32 = segred@thread (i_108 < m_1) [chosen]
                                op (commutative) 0.0f32 \(x_109: f32) (y_110: f32) ->
                                    let t_111: f32 = add.f32 x_109 y_110
                                    in t_111
                                body ->
                                  let x_112: f32 = es_102[i_108]
                                  in x_112
                              let t_113: [m_1]f32 = segmap@thread (i_114 < m_1) [chosen]
                                body ->
                                  let e_115: f32 = es_102[i_114]
                                  let t_116: f32 = div.f32 e_115 s_107
                                  in t_116
                              in t_113
                          in intra_91
                      in fitting_26
                    else
                      let mx_117: [n_0]f32 = segmap@grid (i_118 < n_0) [chosen]
                        body ->
                          let xs_119: [m_1]f32 = xss_2[i_118]
                          let t_120: f32 = f32.inf
                          let t_121: f32 = neg.f32 t_120
                          let mx_122: f32 = reduce@seq t_121 xs_119 \(x_123: f32) (y_124: f32) ->
                              let t_125: f32 = f32.max x_123 y_124
                              in t_125
                          in mx_122
                      let t_126: [n_0][m_1]f32 = segmap@grid (i_127 < n_0, i_128 < m_1) [chosen]
                        body ->
                          let xss_129: [m_1]f32 = xss_2[i_127]
                          let mx_130: f32 = mx_117[i_127]
                          let x_131: f32 = xss_129[i_128]
                          let t_132: f32 = sub.f32 x_131 mx_130
                          let t_133: f32 = f32.exp t_132
                          in t_133
                      let t_134: i64 = i64.max n_0 1i64
                      let t_135: i64 = div.i64 262144i64 t_134
                      let t_136: i64 = i64.min t_135 16384i64
                      let t_137: i64 = add.i64 m_1 63i64
                      let t_138: i64 = div.i64 t_137 64i64
                      let t_139: i64 = i64.min t_136 t_138
                      let t_140: i64 = i64.max t_139 1i64
                      let t_141: i64 = sub.i64 t_140 1i64
                      let t_142: i64 = add.i64 m_1 t_141
                      let t_143: i64 = div.i64 t_142 t_140
                      let partials_144: [n_0][t_140]f32 = segred@grid (i_145 < n_0, chunk_146 < t_140, step_147 < t_143) [chosen]
                        op (commutative) 0.0f32 \(x_148: f32) (y_149: f32) ->
                            let t_150: f32 = add.f32 x_148 y_149
                            in t_150
                        body ->
                          let t_151: i64 = mul.i64 step_147 t_140
                          let i_152: i64 = add.i64 chunk_146 t_151
                          let inside_153: bool = lt.i64 i_152 m_1
                          let element_154: f32 = if inside_153 then
                              let x_155: f32 = t_126[i_145, i_152]
                              in x_155
                            else
                              in 0.0f32
                          in element_154
                      let many_chunks_156: bool = ge.i64 t_140 64i64
                      let s_157: [n_0]f32 = if many_chunks_156 then
                          let reduced_158: [n_0]f32 = segmap@group (i_159 < n_0) [chosen]
                            body ->
                              let segment_160: f32 = segred@thread (chunk_161 < t_140) [chosen]
                                op (commutative) 0.0f32 \(x_162: f32) (y_163: f32) ->
                                    let t_164: f32 = add.f32 x_162 y_163
                                    in t_164
                                body ->
                                  let partial_165: f32 = partials_144[i_159, chunk_161]
                                  in partial_165
                              in segment_160
                          in reduced_158
                        else
                          let reduced_166: [n_0]f32 = segred@grid (i_167 < n_0, chunk_168 < t_140) [chosen]
                            op (commutative) 0.0f32 \(x_169: f32) (y_170: f32) ->
                                let t_171: f32 = add.f32 x_169 y_170
                                in t_171
                            body ->
                              let partials_172: [t_140]f32 = partials_144[i_167]
                              let partial_173: f32 = partials_172[chunk_168]
                              in partial_173
                          in reduced_166
                      let t_174: [n_0][m_1]f32 = segmap@grid (i_175 < n_0, i_176 < m_1) [chosen]
                        body ->
                          let t_177: [m_1]f32 = t_126[i_175]
                          let s_178: f32 = s_157[i_175]
                          let e_179: f32 = t_177[i_176]
                          let t_180: f32 = div.f32 e_179 s_178
                          in t_180
                      in t_174
                  in versions_25
              in t_3
        "#]],
    );
}

#[test]
fn row_sums_are_a_segmented_reduction() {
    check_gpu(
        r"entry row_sums (a: [n][m]f32) : [n]f32 = map (\row -> reduce (+) 0 row) a",
        expect![[r#"
            threshold row_sums.suff_intra_par_0 = 128
            threshold row_sums.suff_outer_par_0 = 32768

            entry row_sums [n_0] [m_1] (a_2: [n_0][m_1]f32) : [n_0]f32 =
              let t_3: [n_0]f32 = version n_0 >= threshold row_sums.suff_outer_par_0 then
                  let outer_4: [n_0]f32 = segmap@grid (i_5 < n_0) [chosen]
                    body ->
                      let row_6: [m_1]f32 = a_2[i_5]
                      let t_7: f32 = reduce@seq 0.0f32 row_6 \(x_8: f32) (y_9: f32) ->
                          let t_10: f32 = add.f32 x_8 y_9
                          in t_10
                      in t_7
                  in outer_4
                else
                  let versions_11: [n_0]f32 = version n_0 >= threshold row_sums.suff_intra_par_0 then
                      let intra_12: [n_0]f32 = segmap@group (i_13 < n_0) [chosen]
                        body ->
                          let row_14: [m_1]f32 = a_2[i_13]
                          let t_15: f32 = segred@thread (i_16 < m_1) [chosen]
                            op (commutative) 0.0f32 \(x_17: f32) (y_18: f32) ->
                                let t_19: f32 = add.f32 x_17 y_18
                                in t_19
                            body ->
                              let x_20: f32 = row_14[i_16]
                              in x_20
                          in t_15
                      in intra_12
                    else
                      let t_21: i64 = i64.max n_0 1i64
                      let t_22: i64 = div.i64 262144i64 t_21
                      let t_23: i64 = i64.min t_22 16384i64
                      let t_24: i64 = add.i64 m_1 63i64
                      let t_25: i64 = div.i64 t_24 64i64
                      let t_26: i64 = i64.min t_23 t_25
                      let t_27: i64 = i64.max t_26 1i64
                      let t_28: i64 = sub.i64 t_27 1i64
                      let t_29: i64 = add.i64 m_1 t_28
                      let t_30: i64 = div.i64 t_29 t_27
                      let partials_31: [n_0][t_27]f32 = segred@grid (i_32 < n_0, chunk_33 < t_27, step_34 < t_30) [chosen]
                        op (commutative) 0.0f32 \(x_35: f32) (y_36: f32) ->
                            let t_37: f32 = add.f32 x_35 y_36
                            in t_37
                        body ->
                          let t_38: i64 = mul.i64 step_34 t_27
                          let i_39: i64 = add.i64 chunk_33 t_38
                          let inside_40: bool = lt.i64 i_39 m_1
                          let element_41: f32 = if inside_40 then
                              let x_42: f32 = a_2[i_32, i_39]
                              in x_42
                            else
                              in 0.0f32
                          in element_41
                      let many_chunks_43: bool = ge.i64 t_27 64i64
                      let t_44: [n_0]f32 = if many_chunks_43 then
                          let reduced_45: [n_0]f32 = segmap@group (i_46 < n_0) [chosen]
                            body ->
                              let segment_47: f32 = segred@thread (chunk_48 < t_27) [chosen]
                                op (commutative) 0.0f32 \(x_49: f32) (y_50: f32) ->
                                    let t_51: f32 = add.f32 x_49 y_50
                                    in t_51
                                body ->
                                  let partial_52: f32 = partials_31[i_46, chunk_48]
                                  in partial_52
                              in segment_47
                          in reduced_45
                        else
                          let reduced_53: [n_0]f32 = segred@grid (i_54 < n_0, chunk_55 < t_27) [chosen]
                            op (commutative) 0.0f32 \(x_56: f32) (y_57: f32) ->
                                let t_58: f32 = add.f32 x_56 y_57
                                in t_58
                            body ->
                              let partials_59: [t_27]f32 = partials_31[i_54]
                              let partial_60: f32 = partials_59[chunk_55]
                              in partial_60
                          in reduced_53
                      in t_44
                  in versions_11
              in t_3
        "#]],
    );
}

#[test]
fn every_program_flattens_to_a_valid_gpu_ir() {
    let mut failures = Vec::new();
    let mut count = 0;
    for example in every_program() {
        let optimised = crate::optimise_core(&example.program);
        let core_errors = weft_core::validate(&optimised);
        if !core_errors.is_empty() {
            failures.push(format!("{}: optimised core IR invalid: {core_errors:?}", example.name));
            continue;
        }
        let gpu = crate::flatten(&optimised);
        let errors = crate::validate_gpu(&gpu);
        if !errors.is_empty() {
            failures.push(format!("{}: {errors:?}", example.name));
        }
        count += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count > 50, "only {count} programs");
}

/// Which version each threshold selects in [`every_version_keeps_every_answer`].
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// Every threshold at its default (what `weft` compiles for an unknown GPU).
    Defaults,
    /// Every threshold 0: outer parallelism only.
    OuterOnly,
    /// `suff_outer_par` never met, `suff_intra_par` always: a work-group per iteration.
    Intra,
    /// No threshold met: fully flattened.
    Flat,
}

#[test]
fn every_version_keeps_every_answer() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for example in every_program() {
        // What the code generator reads: calls inlined, sequential combinators fused.
        let gpu = crate::pipeline_inlined(&example.program, crate::Target::Gpu);
        for choice in [Choice::OuterOnly, Choice::Intra, Choice::Flat, Choice::Defaults] {
            let value = |t: crate::ThresholdId| match (choice, gpu.thresholds[t].kind) {
                (Choice::Defaults, _) => gpu.thresholds[t].default,
                (Choice::OuterOnly, _) | (Choice::Intra, crate::ThresholdKind::SuffIntraPar) => 0,
                _ => i64::MAX,
            };
            let core = crate::to_core(&gpu, &value);
            let errors = weft_core::validate(&core);
            if !errors.is_empty() {
                failures.push(format!("{} ({choice:?}): invalid core: {errors:?}", example.name));
                continue;
            }
            let label = format!("{choice:?}");
            compared +=
                compare_answers(&example, &core, &label, Match::Reassociated, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 1000, "only {compared} cases compared");
}

/// The GPU IR of `src` right after flattening, before fusion.
fn check_flatten(src: &str, expect: Expect) {
    let program = compile(src);
    let gpu = crate::flatten(&crate::optimise_core(&program));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    expect.assert_eq(&crate::pretty_gpu(&gpu));
}

/// The number of SegOps in the GPU IR of `src`, after the whole pipeline.
fn seg_ops(src: &str) -> usize {
    let gpu = crate::pipeline(&compile(src));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new());
    let mut count = 0;
    for (_, f) in gpu.functions.iter() {
        let mut blocks = vec![f.body];
        while let Some(block) = blocks.pop() {
            for stmt in &f.blocks[block].stmts {
                let exp = &f.exps[stmt.exp];
                count += usize::from(matches!(exp, crate::Exp::Seg(_)));
                blocks.extend(exp.nested_blocks());
            }
        }
    }
    count
}

#[test]
fn a_map_fuses_into_its_reduction() {
    let src = "entry main (xs: [n]f32) : f32 = reduce (+) 0 (map (\\x -> x * 2) xs)";
    check_flatten(
        src,
        expect![[r#"
        entry main [n_0] (xs_1: [n_0]f32) : f32 =
          let t_2: [n_0]f32 = segmap@grid (i_3 < n_0) [chosen]
            body ->
              let x_4: f32 = xs_1[i_3]
              let t_5: f32 = mul.f32 x_4 2.0f32
              in t_5
          let t_6: f32 = segred@grid (i_7 < n_0) [chosen]
            op (commutative) 0.0f32 \(x_8: f32) (y_9: f32) ->
                let t_10: f32 = add.f32 x_8 y_9
                in t_10
            body ->
              let x_11: f32 = t_2[i_7]
              in x_11
          in t_6
    "#]],
    );
    check_gpu(
        src,
        expect![[r#"
        entry main [n_0] (xs_1: [n_0]f32) : f32 =
          let t_2: f32 = segred@grid (i_3 < n_0) [chosen]
            op (commutative) 0.0f32 \(x_4: f32) (y_5: f32) ->
                let t_6: f32 = add.f32 x_4 y_5
                in t_6
            body ->
              let x_7: f32 = xs_1[i_3]
              let t_8: f32 = mul.f32 x_7 2.0f32
              in t_8
          in t_2
    "#]],
    );
    assert_eq!(seg_ops(src), 1);
}

#[test]
fn a_map_read_twice_is_not_fused() {
    // `ys` is read by the reduction and returned: it must be written once.
    let src = "entry main (xs: [n]f32) : (f32, [n]f32) = let ys = map (\\x -> x * 2) xs in (reduce (+) 0 ys, ys)";
    assert_eq!(seg_ops(src), 2);
}

#[test]
fn a_written_level_fuses_at_its_level() {
    // LANGUAGE.md §6: annotated producers and consumers at the same level still fuse.
    let src = "entry main (xs: [n]f32) : f32 = reduce (+) 0 (map@grid (\\x -> x * 2) xs)";
    assert_eq!(seg_ops(src), 1);
    let src = "entry main (xs: [n]f32) : f32 = reduce@grid (+) 0 (map@grid (\\x -> x * 2) xs)";
    assert_eq!(seg_ops(src), 1);
}

#[test]
fn a_written_level_is_not_fused_across_levels() {
    // The rows are made by a grid map and summed by work-groups: `b` is written to
    // memory between the two levels.
    let src = "entry main (a: [n][m]f32) : [n]f32 = let b = map@grid (\\r -> map@seq (\\x -> x * 2) r) a in map@group (\\r -> reduce@group (+) 0 r) b";
    assert_eq!(seg_ops(src), 3);
}

#[test]
fn a_map_read_at_another_point_is_not_fused() {
    // Each element of `rs` reads `ys` at the reversed index: fusing would not be
    // element by element.
    let src = "entry main (xs: [n]f32) : [n]f32 = let ys = map (\\x -> x * 2) xs in map (\\i -> ys[n - 1 - i]) (iota n)";
    assert_eq!(seg_ops(src), 2);
}

#[test]
fn a_call_with_a_combinator_is_inlined() {
    check_simplify_inline(
        "def sum (xs: [k]f32) : f32 = reduce (+) 0 xs\nentry main (a: [n][m]f32) : [n]f32 = map (\\row -> sum row) a",
        expect![[r#"
            def sum [k_0] (xs_1: [k_0]f32) : f32 =
              let t_2: f32 = reduce 0.0f32 xs_1 \(x_3: f32) (y_4: f32) : f32 ->
                  let t_5: f32 = add.f32 x_3 y_4
                  in t_5
              in t_2

            entry main [n_0] [m_1] (a_2: [n_0][m_1]f32) : [n_0]f32 =
              let t_3: [n_0]f32 = map (a_2) \(row_4: [m_1]f32) : f32 ->
                  let t_5: f32 = reduce 0.0f32 row_4 \(x_6: f32) (y_7: f32) : f32 ->
                      let t_8: f32 = add.f32 x_6 y_7
                      in t_8
                  in t_5
              in t_3
        "#]],
    );
}

/// A def that the entry's calls were all inlined from is not inlined into: `twice`
/// keeps its call to `sum`, which nothing runs, and a chain of `k` defs stays `k` defs
/// long instead of each holding the chain below it (`bench/lsp`'s file, where each def
/// calls the one before, grew quadratically: 2 s and 380 MB for 80 defs).
#[test]
fn defs_no_entry_calls_after_inlining_are_not_inlined_into() {
    check_simplify_inline(
        "def sum (xs: [k]f32) : f32 = reduce (+) 0 xs\n\
         def twice (xs: [k]f32) : f32 = sum xs * 2\n\
         entry main (xs: [n]f32) : f32 = twice xs",
        expect![[r#"
            def sum [k_0] (xs_1: [k_0]f32) : f32 =
              let t_2: f32 = reduce 0.0f32 xs_1 \(x_3: f32) (y_4: f32) : f32 ->
                  let t_5: f32 = add.f32 x_3 y_4
                  in t_5
              in t_2

            def twice [k_0] (xs_1: [k_0]f32) : f32 =
              let t_2: f32 = call sum xs_1
              let t_3: f32 = mul.f32 t_2 2.0f32
              in t_3

            entry main [n_0] (xs_1: [n_0]f32) : f32 =
              let t_2: f32 = reduce 0.0f32 xs_1 \(x_3: f32) (y_4: f32) : f32 ->
                  let t_5: f32 = add.f32 x_3 y_4
                  in t_5
              let t_6: f32 = mul.f32 t_2 2.0f32
              in t_6
        "#]],
    );
}

fn check_simplify_inline(src: &str, expect: Expect) {
    let optimised = crate::optimise_core(&compile(src));
    assert_eq!(weft_core::validate(&optimised), Vec::new());
    let main = optimised.entries[0];
    expect.assert_eq(&weft_core::pretty_program(&weft_core::Program {
        functions: optimised.functions.clone(),
        entries: vec![main],
    }));
}

/// Inputs for `entry` with every size parameter `scale` and every `i64` scalar 3,
/// drawn at random (`i64` arrays in `0..3`, so that they index any array of at least
/// 3 elements, histogram bins given as a scalar included); `None` for a parameter type
/// this does not cover.
fn scaled_inputs(program: &Program, entry: FnId, scale: i64) -> Option<Vec<Value>> {
    use weft_core::Type;
    let f = &program.functions[entry];
    let mut known: rustc_hash::FxHashMap<weft_core::VarId, i64> =
        f.size_params.iter().map(|&v| (v, scale)).collect();
    for &p in &f.params {
        if f.vars[p].ty == Type::Scalar(weft_hir::ScalarTy::I64) {
            known.insert(p, 3);
        }
    }
    fn spec(
        ty: &Type,
        known: &rustc_hash::FxHashMap<weft_core::VarId, i64>,
        out: &mut Vec<String>,
    ) -> Option<()> {
        match ty {
            Type::Tuple(elems) => {
                for e in elems {
                    spec(e, known, out)?;
                }
            }
            _ => {
                let mut text = String::new();
                let mut t = ty;
                while let Type::Array { size, elem } = t {
                    let n = size.eval(&mut |v| known.get(v).copied()).ok()?;
                    text.push_str(&format!("[{n}]"));
                    t = elem;
                }
                let scalar = t.as_scalar()?;
                text.push_str(scalar.name());
                match scalar {
                    weft_hir::ScalarTy::I64 if text.starts_with('[') => text.push_str(" in 0..3"),
                    weft_hir::ScalarTy::I64 => text.push_str(" in 3..4"),
                    _ => {}
                }
                out.push(text);
            }
        }
        Some(())
    }
    let mut specs = Vec::new();
    for &p in &f.params {
        spec(&f.vars[p].ty, &known, &mut specs)?;
    }
    let specs = weft_values::parse_random_specs(&specs.join(" ")).ok()?;
    weft_values::generate_inputs(&specs, 7).ok()
}

/// Counts the statements the reference interpreter evaluates, and the elements that
/// `iota`, `replicate`, `concat` and array literals write (as the static work does,
/// and the cost semantics of weft-cost).
struct StatementCounter<'p> {
    program: &'p Program,
    count: std::cell::Cell<u64>,
}

impl weft_core::Recorder for StatementCounter<'_> {
    fn stmt_begin(&self, _func: FnId, _stmt: &weft_core::Stmt) {
        self.count.set(self.count.get() + 1);
    }

    fn stmt_end(&self, func: FnId, stmt: &weft_core::Stmt, value: &weft_core::Val) {
        let writes = matches!(
            self.program.functions[func].exps[stmt.exp],
            weft_core::Exp::Iota { .. }
                | weft_core::Exp::Replicate { .. }
                | weft_core::Exp::Concat(..)
                | weft_core::Exp::ArrayLit { .. }
        );
        if writes {
            self.count.set(self.count.get() + value.n_elems());
        }
    }
}

#[test]
fn compiled_work_has_the_degree_of_the_interpreters_work() {
    // Degrees from the growth between two sizes a factor of 4 apart.
    const SMALL: i64 = 8;
    const LARGE: i64 = 32;
    let degree = |small: f64, large: f64| (large / small).ln() / 4f64.ln();
    let mut measured = 0;
    let mut failures = Vec::new();
    for example in every_program() {
        let gpu = crate::pipeline(&example.program);
        for (entry, _) in &example.cases {
            let name = format!("{} `{}`", example.name, example.program.functions[*entry].name);
            let (Some(small), Some(large)) = (
                scaled_inputs(&example.program, *entry, SMALL),
                scaled_inputs(&example.program, *entry, LARGE),
            ) else {
                continue;
            };
            let interpreted = |inputs: &Vec<Value>| {
                let counter =
                    StatementCounter { program: &example.program, count: Default::default() };
                weft_core::run_entry_recorded(&example.program, *entry, inputs.clone(), &counter)
                    .ok()
                    .map(|_| counter.count.get() as f64)
            };
            let (Some(w_small), Some(w_large)) = (interpreted(&small), interpreted(&large)) else {
                // The program's preconditions (divisibility, bounds) do not hold for
                // generic inputs.
                continue;
            };
            let d_interp = degree(w_small, w_large);
            let d_static = degree(
                crate::static_work(&gpu, *entry, &small),
                crate::static_work(&gpu, *entry, &large),
            );
            if (d_static - d_interp).abs() >= 0.5 {
                failures.push(format!(
                    "{name}: interpreter degree {d_interp:.2}, compiled {d_static:.2}"
                ));
            }
            measured += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(measured > 60, "only {measured} entries measured");
}

#[test]
fn static_work_counts_every_point_of_a_space() {
    let program = compile("entry main (a: [n][m]f32) : [n]f32 = map (\\row -> reduce (+) 0 row) a");
    let gpu = crate::pipeline(&program);
    let entry = program.entries[0];
    let work = |n: usize, m: usize| {
        let a = Value::filled(vec![n, m], weft_values::Scalar::F32(1.0)).expect("shape");
        crate::static_work(&gpu, entry, &[a])
    };
    // Three versions, each touching all n*m elements: the work is linear in each size.
    assert!((work(20, 40) / work(10, 40) - 2.0).abs() < 0.1, "{} {}", work(20, 40), work(10, 40));
    assert!((work(10, 80) / work(10, 40) - 2.0).abs() < 0.1);
}

#[test]
fn sibling_reductions_share_one_pass() {
    // The sum and the sum of squares read the same array over the same space.
    let src = "entry main (xs: [n]f32) : (f32, f32) = (reduce (+) 0 xs, reduce (+) 0 (map (\\x -> x * x) xs))";
    check_gpu(
        src,
        expect![[r#"
        entry main [n_0] (xs_1: [n_0]f32) : (f32, f32) =
          let t_2: f32, t_3: f32 = segred@grid (i_4 < n_0) [chosen]
            op (commutative) 0.0f32 \(x_5: f32) (y_6: f32) ->
                let t_7: f32 = add.f32 x_5 y_6
                in t_7
            op (commutative) 0.0f32 \(x_8: f32) (y_9: f32) ->
                let t_10: f32 = add.f32 x_8 y_9
                in t_10
            body ->
              let x_11: f32 = xs_1[i_4]
              let x_12: f32 = xs_1[i_4]
              let t_13: f32 = mul.f32 x_12 x_12
              in x_11, t_13
          let t_14: (f32, f32) = (t_2, t_3)
          in t_14
    "#]],
    );
    assert_eq!(seg_ops(src), 1);
}

#[test]
fn a_reduction_reading_another_is_not_merged() {
    let src = "entry main (xs: [n]f32) : f32 = let s = reduce (+) 0 xs in reduce (+) 0 (map (\\x -> x - s) xs)";
    assert_eq!(seg_ops(src), 2);
}

#[test]
fn reduce_by_index_is_a_seghist_then_a_segmap_and_sequential_inside_a_map() {
    check_gpu(
        r"entry h (d: [m]i32) (is: [n]i64) (vs: [n]i32) : [m]i32 = reduce_by_index d (+) 0 is vs
entry rows (a: [r][c]i64) : [r][2]i32 =
  map (\row -> reduce_by_index (replicate 2 0) i32.max 0 row (replicate c 1)) a",
        expect![[r#"
            entry h [m_0] [n_1] (d_2: [m_0]i32) (is_3: [n_1]i64) (vs_4: [n_1]i32) : [m_0]i32 =
              let t_5: [m_0]i32 = seghist@grid (i_6 < n_1) [chosen] into d_2
                op (commutative) 0i32 \(x_7: i32) (y_8: i32) ->
                    let t_9: i32 = add.i32 x_7 y_8
                    in t_9
                body ->
                  let bin_10: i64 = is_3[i_6]
                  let x_11: i32 = vs_4[i_6]
                  in bin_10, x_11
              in t_5

            entry rows [r_0] [c_1] (a_2: [r_0][c_1]i64) : [r_0][2]i32 =
              let t_3: [2]i32 = replicate 2i64 0i32
              let t_4: [c_1]i32 = replicate c_1 1i32
              let t_5: [r_0][2]i32 = segmap@grid (i_6 < r_0) [chosen]
                body ->
                  let row_7: [c_1]i64 = a_2[i_6]
                  let t_8: [2]i32 = hist@seq (t_3, 0i32, row_7, t_4) \(x_9: i32) (y_10: i32) ->
                      let t_11: i32 = i32.max x_9 y_10
                      in t_11
                  in t_8
              in t_5
        "#]],
    );
}

/// The printed outer-parallel version of `src`'s first entry (the `then` branch of its
/// first version), after the whole pipeline.
fn printed_pipeline(src: &str) -> String {
    let gpu = crate::pipeline(&compile(src));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    crate::pretty_gpu(&gpu)
}

#[test]
fn rows_traversed_repeatedly_are_read_from_a_transposed_copy() {
    // Each work-item reads its point once per centroid: the points are copied
    // transposed before the outer-parallel version, whose body reads the copy.
    let text = printed_pipeline(
        r"entry assign (ps: [n][d]f32) (cs: [k][d]f32) : [n]f32 =
  map (\p -> reduce f32.min f32.inf (map (\c -> reduce (+) 0 (map2 (\a b -> (a - b) * (a - b)) p c)) cs)) ps",
    );
    let manifest = text.lines().position(|l| l.contains("= manifest (1, 0) ps_")).expect(&text);
    let outer = text.lines().position(|l| l.contains("segmap@grid (i_")).expect(&text);
    assert!(manifest < outer, "{text}");
    let copy = text.lines().nth(manifest).unwrap().split(':').next().unwrap().trim();
    let copy = copy.trim_start_matches("let ");
    assert!(text.contains(&format!("= {copy}[i_")), "the body reads the copy\n{text}");
}

#[test]
fn rows_traversed_once_are_not_copied() {
    // One pass over each row reads every cache line once either way.
    let text =
        printed_pipeline("entry sums (a: [n][m]f32) : [n]f32 = map (\\r -> reduce (+) 0 r) a");
    assert!(!text.contains("manifest"), "{text}");
}

#[test]
fn a_cpu_target_reads_rows_in_place() {
    // On a CPU each work-item's row is read sequentially through the core's cache:
    // the same program that gets a transposed copy for a GPU gets none.
    let program = compile(
        r"entry assign (ps: [n][d]f32) (cs: [k][d]f32) : [n]f32 =
  map (\p -> reduce f32.min f32.inf (map (\c -> reduce (+) 0 (map2 (\a b -> (a - b) * (a - b)) p c)) cs)) ps",
    );
    let gpu = crate::pipeline_for(&program, crate::Target::Gpu);
    let cpu = crate::pipeline_for(&program, crate::Target::Cpu);
    assert!(crate::validate_gpu(&cpu).is_empty());
    assert!(crate::pretty_gpu(&gpu).contains("manifest"));
    assert!(!crate::pretty_gpu(&cpu).contains("manifest"), "{}", crate::pretty_gpu(&cpu));
}

#[test]
fn written_levels_are_coalesced_and_kept() {
    // The copy changes the layout, not the strategy: `map@grid` stays one written grid
    // SegMap, reading the transposed copy.
    let text = printed_pipeline(
        r"entry assign (ps: [n][d]f32) (cs: [k][d]f32) : [n]f32 =
  map@grid (\p -> reduce@seq f32.min f32.inf (map@seq (\c -> reduce@seq (+) 0 (map2@seq (\a b -> (a - b) * (a - b)) p c)) cs)) ps",
    );
    assert!(text.contains("= manifest (1, 0) ps_"), "{text}");
    assert_eq!(text.matches("segmap@grid").count(), 1, "{text}");
    assert!(text.contains("[written]"), "{text}");
}

#[test]
fn the_gpu_ir_code_generator_tiles_a_product_on_a_cpu_too() {
    // Its input (calls inlined) keeps only the flattened product, which it tiles; the
    // bridge's input keeps the versions (the next test).
    let src = r"entry mm (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =
  map (\row -> map (\col -> reduce (+) 0 (map2 (*) row col)) (transpose b)) a";
    let cpu = crate::pipeline_inlined(&compile(src), crate::Target::Cpu);
    assert_eq!(crate::validate_gpu(&cpu), Vec::new());
    let text = crate::pretty_gpu(&cpu);
    assert!(!text.contains("version "), "{text}");
    let product = text.lines().find(|l| l.contains("segred@grid")).expect(&text);
    assert_eq!(product.matches(" < ").count(), 3, "{text}");
}

#[test]
fn a_perfect_nest_of_maps_is_one_two_dimensional_outer_version() {
    // On a CPU (a GPU gets the tiled product instead: the next test).
    let src = r"entry mm (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =
  map (\row -> map (\col -> reduce (+) 0 (map2 (*) row col)) (transpose b)) a";
    let cpu = crate::pipeline_for(&compile(src), crate::Target::Cpu);
    assert_eq!(crate::validate_gpu(&cpu), Vec::new());
    let text = crate::pretty_gpu(&cpu);
    // The outer-parallel version covers rows and columns, and its threshold compares
    // the number of points of both.
    assert!(text.contains("version n_0*m_2 >= threshold mm.suff_outer_par_0 then"), "{text}");
    assert!(text.contains("segmap@grid (i_8 < n_0, i_9 < m_2) [chosen]"), "{text}");
}

#[test]
fn a_matrix_product_is_one_tiled_product_on_a_gpu() {
    // The fully flattened version alone: a three-dimensional segmented reduction the
    // code generator tiles, with its epilogue; no versions.
    let text = printed_pipeline(
        r"entry mm (alpha: f32) (a: [n][k]f32) (bt: [m][k]f32) : [n][m]f32 =
  map (\row -> map (\col -> alpha * reduce (+) 0 (map2 (*) row col)) bt) a",
    );
    assert!(!text.contains("version"), "{text}");
    assert!(text.contains("segred@grid (i_"), "{text}");
    let gpu = crate::pipeline(&compile(
        r"entry mm (a: [n][k]f32) (bt: [m][k]f32) : [n][m]f32 =
  map (\row -> map (\col -> reduce (+) 0 (map2 (*) row col)) bt) a",
    ));
    let f = gpu.functions.iter().map(|(_, f)| f).next().unwrap();
    let products = f
        .exps
        .iter()
        .filter(|(_, e)| matches!(e, crate::Exp::Seg(seg) if crate::is_tiled_product(f, seg)))
        .count();
    assert_eq!(products, 1, "{}", crate::pretty_gpu(&gpu));
}

#[test]
fn a_product_whose_rows_are_reduced_keeps_its_versions() {
    // k-means' distances: the outer version takes each row's minimum without writing
    // the distances, so the rule leaves the versions.
    let text = printed_pipeline(
        r"entry assign (ps: [n][d]f32) (cs: [k][d]f32) : [n]f32 =
  map (\p -> reduce f32.min f32.inf (map (\c -> reduce (+) 0 (map2 (\a b -> (a - b) * (a - b)) p c)) cs)) ps",
    );
    assert!(text.contains("version"), "{text}");
}

#[test]
fn a_nest_whose_inner_array_depends_on_the_row_is_not_perfect() {
    let text = printed_pipeline(
        r"entry tri (a: [n][m]f32) : [n][m]f32 = map (\row -> map (\x -> reduce (+) x row) row) a",
    );
    // The outer-parallel version (the first SegOp) is over the rows only.
    let first = text.lines().find(|l| l.contains("segmap@grid (")).expect(&text);
    assert!(!first.contains(", i_"), "{text}");
}

#[test]
fn a_map_fuses_into_a_scatter() {
    let src = r"entry s (dest: [m]f32) (is: [n]i64) (xs: [n]f32) : [m]f32 = scatter dest is (map (\x -> x * 2) xs)";
    check_gpu(
        src,
        expect![[r#"
            entry s [m_0] [n_1] (dest_2: [m_0]f32) (is_3: [n_1]i64) (xs_4: [n_1]f32) : [m_0]f32 =
              let t_5: [m_0]f32 = segscatter@grid (i_6 < n_1) [chosen] into dest_2
                body ->
                  let bin_7: i64 = is_3[i_6]
                  let x_8: f32 = xs_4[i_6]
                  let t_9: f32 = mul.f32 x_8 2.0f32
                  in bin_7, t_9
              in t_5
        "#]],
    );
    assert_eq!(seg_ops(src), 1);
}

#[test]
fn a_tuple_valued_reduction_is_not_merged_with_its_siblings() {
    // An argmax reduces (value, index) pairs: merging it with the sum would nest tuples.
    let src = r"entry main (xs: [n]f32) : (f32, i64) =
  let (_, i) = reduce (\(a, i) (b, j) -> if b > a then (b, j) else (a, i)) (0, -1) (zip xs (iota n))
  in (reduce (+) 0 xs, i)";
    assert_eq!(seg_ops(src), 2);
}

/// The core IR after [`crate::optimise_core`], every function.
fn optimised_text(src: &str) -> String {
    let optimised = crate::optimise_core(&compile(src));
    assert_eq!(weft_core::validate(&optimised), Vec::new());
    weft_core::pretty_program(&optimised)
}

#[test]
fn a_reduction_of_rows_by_a_mapped_operator_is_a_map_of_column_reductions() {
    // `map2 (+)` over rows is `+` per column: a map over the columns (a transposed
    // view) of a scalar reduction, its neutral element the replicated scalar.
    check_simplify_inline(
        "entry main (xss: [n][m]f32) : [m]f32 = reduce (map2 (+)) (replicate m 0f32) xss",
        expect![[r#"
            entry main [n_0] [m_1] (xss_2: [n_0][m_1]f32) : [m_1]f32 =
              let columns_3: [m_1][n_0]f32 = transpose xss_2
              let rows_4: i64 = dim 0 xss_2
              let cols_5: i64 = dim 1 xss_2
              let t_6: i64 = i64.min rows_4 256i64
              let per_chunk_7: i64 = i64.max t_6 1i64
              let t_8: i64 = add.i64 rows_4 per_chunk_7
              let t_9: i64 = sub.i64 t_8 1i64
              let chunks_10: i64 = div.i64 t_9 per_chunk_7
              let t_11: i64 = mul.i64 chunks_10 cols_5
              let partials_12: [t_11]f32 = generate@grid t_11 \(p_13: i64) : f32 ->
                  let k_14: i64 = div.i64 p_13 cols_5
                  let i_15: i64 = rem.i64 p_13 cols_5
                  let lo_16: i64 = mul.i64 k_14 per_chunk_7
                  let offsets_17: [per_chunk_7]i64 = iota per_chunk_7
                  let chunk_18: [per_chunk_7]f32 = map@seq (offsets_17) \(o_19: i64) : f32 ->
                      let row_20: i64 = add.i64 lo_16 o_19
                      let in_range_21: bool = lt.i64 row_20 rows_4
                      let x_22: f32 = if in_range_21 then
                          let x_23: f32 = columns_3[i_15, row_20]
                          in x_23
                        else
                          in 0.0f32
                      in x_22
                  let partial_24: f32 = reduce@seq 0.0f32 chunk_18 \(x_25: f32) (y_26: f32) : f32 ->
                      let t_27: f32 = add.f32 x_25 y_26
                      in t_27
                  in partial_24
              let partials_28: [chunks_10][m_1]f32 = unflatten chunks_10 cols_5 partials_12
              let partial_columns_29: [m_1][chunks_10]f32 = transpose partials_28
              let t_30: [m_1]f32 = map (partial_columns_29) \(col_31: [chunks_10]f32) : f32 ->
                  let reduced_32: f32 = reduce 0.0f32 col_31 \(x_33: f32) (y_34: f32) : f32 ->
                      let t_35: f32 = add.f32 x_33 y_34
                      in t_35
                  in reduced_32
              in t_30
        "#]],
    );
}

#[test]
fn a_scan_of_rows_is_transposed_back_and_three_dimensions_interchange_twice() {
    let scan = optimised_text(
        "entry main (xss: [n][m]i64) : [n][m]i64 = scan (map2 (+)) (replicate m 0i64) xss",
    );
    assert!(scan.contains("scan 0i64 col_"), "{scan}");
    assert!(scan.contains(": [n_0][m_1]i64 = transpose by_column_"), "{scan}");
    let cube = optimised_text(
        "entry main (x: [n][m][k]f32) : [m][k]f32 =
           reduce (map2 (map2 (+))) (replicate m (replicate k 0f32)) x",
    );
    // Every reduction left combines scalars.
    let reductions: Vec<&str> = cube.lines().filter(|l| l.contains(" = reduce ")).collect();
    assert_eq!(reductions.len(), 1, "{cube}");
    assert!(reductions[0].contains("(x_") && reductions[0].contains(": f32)"), "{cube}");
}

#[test]
fn a_histogram_of_rows_becomes_a_histogram_of_their_elements() {
    let text = optimised_text(
        "entry main (d: [k][m]f32) (is: [n]i64) (vs: [n][m]f32) : [k][m]f32 =
           reduce_by_index d (map2 (+)) (replicate m 0f32) is vs",
    );
    // One histogram is left, of scalars, into the flattened destination, with each
    // element's bin computed from its row's and kept out of range with it.
    let histograms: Vec<&str> = text.lines().filter(|l| l.contains("reduce_by_index")).collect();
    assert_eq!(histograms.len(), 1, "{text}");
    assert!(histograms[0].contains(": [k_0*m_1]f32 = reduce_by_index flat_dest_"), "{text}");
    assert!(histograms[0].contains("0f32 flat_bins_"), "{text}");
    assert!(histograms[0].contains(": f32) (") && histograms[0].contains(": f32) :"), "{text}");
    assert!(text.contains("-1i64"), "{text}");
    assert!(text.contains("= unflatten "), "{text}");
    // A literal neutral row of one constant qualifies; one of two does not.
    let literal = optimised_text(
        "entry main (d: [k][2]i32) (is: [n]i64) (vs: [n][2]i32) : [k][2]i32 =
           reduce_by_index d (map2 i32.max) [0, 0] is vs",
    );
    assert!(literal.contains("flat_bins_"), "{literal}");
    let mixed = optimised_text(
        "entry main (d: [k][2]i32) (is: [n]i64) (vs: [n][2]i32) : [k][2]i32 =
           reduce_by_index d (map2 i32.max) [0, 1] is vs",
    );
    assert!(!mixed.contains("flat_bins_"), "{mixed}");
}

#[test]
fn an_operator_that_is_not_a_map_over_its_arguments_is_not_interchanged() {
    // Picking the row with the larger first element is not a per-column operator.
    let text = optimised_text(
        "entry main (xss: [n][m]f32) : [m]f32 =
           reduce (\\a b -> if a[0] >= b[0] then a else b) (replicate m (-f32.inf)) xss",
    );
    assert!(!text.contains("transpose"), "{text}");
    // It is folded in chunks instead (`array_reductions.rs`).
    assert!(text.contains("loop "), "{text}");
    // An operator reading an argument besides mapping over it neither.
    let text = optimised_text(
        "entry main (xss: [n][m]f32) : [m]f32 =
           reduce (\\a b -> map2 (\\x y -> x + y + a[0]) a b) (replicate m 0f32) xss",
    );
    assert!(!text.contains("transpose"), "{text}");
}

#[test]
fn an_operator_reading_a_per_row_value_is_not_segmented_when_distributed() {
    // After the interchange the operator reads the column's floor `lo`: a segmented
    // reduction's operator sees no segment, so the flattened version keeps the
    // reduction sequential per column instead of reading `lo` out of its scope.
    let program = compile(
        "entry main (xss: [n][m]f32) (floor: [m]f32) : [m]f32 =
           reduce (\\a b -> map3 (\\lo x y -> f32.max lo (f32.max x y)) floor a b)
                  (replicate m (-f32.inf)) xss",
    );
    let gpu = crate::pipeline(&program);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let text = crate::pretty_gpu(&gpu);
    assert!(!text.contains("segred@grid"), "{text}");
    let core = crate::to_core(&gpu, &|_| 0);
    assert_eq!(weft_core::validate(&core), Vec::new());
}

#[test]
fn a_map_whose_body_has_arrays_of_per_point_sizes_has_one_version() {
    // `iota n` has a size read per point: it cannot be an array over the space, so
    // there is no flattened version (which would recompute it at every use).
    let program = compile(
        "entry main (ns: [k]i64) : [k]i64 =
           map (\\n -> let a = map (\\i -> i * 2) (iota n)
                       let b = scan (+) 0 a
                       in b[n - 1] - a[n - 1]) ns",
    );
    let gpu = crate::pipeline(&program);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let text = crate::pretty_gpu(&gpu);
    assert!(!text.contains("version"), "{text}");
    assert_eq!(text.matches("segmap@grid").count(), 1, "{text}");
    assert_eq!(text.matches("iota").count(), 1, "{text}");
}

#[test]
fn a_map_whose_body_binds_a_pair_of_arrays_has_one_version() {
    // The loop's value is a pair of rows: spread over the rows it would be an array of
    // pairs of arrays, which the code generator does not represent; a work-item per
    // row is the one version (issue 13).
    let program = compile(
        "entry f (xss: [m][n]f32) : [m][n]f32 =
           map (\\xs -> let (a, b) = loop (a, b) = (xs, xs) for i < n do (a, b)
                         in map2 (+) a b) xss",
    );
    let gpu = crate::pipeline(&program);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let text = crate::pretty_gpu(&gpu);
    assert!(!text.contains("version"), "{text}");
    assert_eq!(text.matches("segmap@grid").count(), 1, "{text}");
    let core = crate::to_core(&gpu, &|_| 0);
    assert_eq!(weft_core::validate(&core), Vec::new());
}

#[test]
fn iota_of_a_size_parameter_leaves_the_map() {
    // `iota m` cannot fail (a size is never negative) and reads nothing of the row.
    let text = optimised_text(
        "entry main (xss: [n][m]f32) : [n][m]f32 =
           map (\\row -> map2 (\\x j -> x + f32.i64 j) row (iota m)) xss",
    );
    let iota = text.lines().position(|l| l.contains("= iota m_1")).expect("iota");
    let map = text.lines().position(|l| l.contains("= map (xss_2)")).expect("outer map");
    assert!(iota < map, "{text}");
}

/// Every statement of `gpu`'s functions, nested ones included.
fn gpu_exps(gpu: &crate::GpuProgram) -> Vec<&crate::Exp> {
    let mut out = Vec::new();
    for (_, f) in gpu.functions.iter() {
        let mut blocks = vec![f.body];
        while let Some(block) = blocks.pop() {
            for stmt in &f.blocks[block].stmts {
                let exp = &f.exps[stmt.exp];
                out.push(exp);
                blocks.extend(exp.nested_blocks());
            }
        }
    }
    out
}

#[test]
fn gpu_simplification_propagates_the_copies_fusion_leaves() {
    // Fusion binds the consumer's read to the producer's value (`let x = t`); the
    // simplification reads `t` in its place and drops the copy.
    let src = "entry main (xs: [n]f32) : f32 = reduce (+) 0 (map (\\x -> x * 2) xs)";
    let fused = crate::fuse(&crate::flatten(&crate::optimise_core(&compile(src))));
    let is_copy = |exp: &&crate::Exp| {
        matches!(exp, crate::Exp::Basic(weft_core::Exp::Atom(weft_core::Atom::Var(_))))
    };
    assert!(gpu_exps(&fused).iter().any(is_copy), "{}", crate::pretty_gpu(&fused));
    let simplified = crate::simplify_gpu(&fused);
    assert_eq!(crate::validate_gpu(&simplified), Vec::new());
    assert!(!gpu_exps(&simplified).iter().any(is_copy), "{}", crate::pretty_gpu(&simplified));
}

#[test]
fn gpu_simplification_keeps_an_unread_statement_that_can_fail() {
    // Nobody reads `xs[i]`, but it reports an out-of-range `i`: it stays.
    let src = "entry main (xs: [n]f32) (i: i64) : [n]f32 = map (\\x -> let y = xs[i] in x * 2) xs";
    let gpu = crate::pipeline(&compile(src));
    let is_index =
        |exp: &&crate::Exp| matches!(exp, crate::Exp::Basic(weft_core::Exp::Index { .. }));
    let reads = gpu_exps(&gpu).into_iter().filter(is_index).count();
    assert_eq!(reads, 2, "the unread read stays beside x's\n{}", crate::pretty_gpu(&gpu));
}

#[test]
fn a_producer_read_twice_at_one_point_is_fused_as_two_copies_with_fresh_variables() {
    // Fusion puts the producer's body at each read; every copy binds its own
    // variables (the GPU IR binds each variable once: `validate_gpu` checks it).
    let src = "entry main (xs: [n]f32) : f32 =
  let ys = map (\\x -> x * 2) xs in reduce (+) 0 (map2 (\\a b -> a * b) ys ys)";
    let gpu = crate::pipeline(&compile(src));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    assert_eq!(seg_ops(src), 1, "{}", crate::pretty_gpu(&gpu));
    let is_mul = |exp: &&crate::Exp| {
        matches!(exp, crate::Exp::Basic(weft_core::Exp::BinOp { op: weft_core::BinOp::Mul, .. }))
    };
    // `x * 2` for each of `a` and `b`, and `a * b`.
    assert_eq!(gpu_exps(&gpu).into_iter().filter(is_mul).count(), 3, "{}", crate::pretty_gpu(&gpu));
}

#[test]
fn a_reduction_of_rows_in_host_code_is_split_into_chunks_of_rows() {
    // First stage: a work-item per chunk of `min(n, 256)` rows and column (a tall,
    // narrow matrix still has many work-items, reading rows coalesced); second stage:
    // the columns of the partial results.
    let text = optimised_text(
        "entry main (xss: [n][m]f32) : [m]f32 = reduce (map2 (+)) (replicate m 0f32) xss",
    );
    assert!(text.contains("i64.min rows_4 256i64"), "{text}");
    assert!(text.contains("= generate@grid t_11 "), "{text}");
    // The grid `generate` is read from memory as it is: no copy (`to_global`).
    assert!(!text.contains("to_global"), "{text}");
    assert!(text.contains("unflatten chunks_10 cols_5 partials_"), "{text}");
    assert!(text.contains(": [m_1][chunks_10]f32 = transpose partials_"), "{text}");
    // Inside a map the reduction is interchanged but not split (the map gives the
    // parallelism; its flattening decides).
    let nested = optimised_text(
        "entry main (x: [b][n][m]f32) : [b][m]f32 =
           map (\\xss -> reduce (map2 (+)) (replicate m 0f32) xss) x",
    );
    assert!(!nested.contains("generate@grid"), "{nested}");
    assert!(nested.contains("transpose"), "{nested}");
}

/// The outer-parallel version (the first SegOp and its body) of `src`'s first entry on
/// a CPU, printed.
fn outer_version_on_a_cpu(src: &str) -> String {
    let gpu = crate::pipeline_inlined(&compile(src), crate::Target::Cpu);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let text = crate::pretty_gpu(&gpu);
    let start = text.find("segmap@grid (").expect(&text);
    let end = text[start..].find("\n    else").map_or(text.len(), |e| start + e);
    text[start..end].to_owned()
}

#[test]
fn a_sequential_map_fuses_into_the_reduction_that_reads_it() {
    // The row's squares are never an array: one loop accumulates them.
    let outer = outer_version_on_a_cpu(
        r"entry sq (xss: [n][m]f32) : [n]f32 =
  map (\xs -> reduce (+) 0 (map (\x -> x * x) xs)) xss",
    );
    assert!(!outer.contains("map@seq"), "{outer}");
    assert!(!outer.contains("reduce@seq"), "{outer}");
    assert!(outer.contains("loop acc_"), "{outer}");
}

#[test]
fn a_sequential_map_fuses_into_the_map_that_reads_it() {
    let outer = outer_version_on_a_cpu(
        r"entry twice (xss: [n][m]f32) : [n][m]f32 =
  map (\xs -> let s = reduce (+) 0 xs in map (\y -> y + s) (map (\x -> x * x) xs)) xss",
    );
    assert_eq!(outer.matches("map@seq").count(), 1, "{outer}");
}

#[test]
fn a_sequential_map_read_twice_stays_an_array() {
    // Its squares feed both a sum and a maximum: computing them twice would be
    // recomputation, so they stay in memory.
    let outer = outer_version_on_a_cpu(
        r"entry both (xss: [n][m]f32) : [n]f32 =
  map (\xs -> let sq = map (\x -> x * x) xs in reduce (+) 0 sq + reduce f32.max 0 sq) xss",
    );
    assert!(outer.contains("map@seq"), "{outer}");
}

#[test]
fn a_producer_reading_a_scatters_destination_is_not_fused_into_it() {
    // The scatter may write `xs` in place: the values read from `xs` must all be read
    // before the first write, so their map stays a SegOp of its own. Values not read
    // from `xs` fuse.
    let shift = "entry shift (xs: [m]i64) : [m]i64 =
  let vs = map (\\j -> xs[j]) (iota (m - 1))
  in scatter xs (map (\\j -> j + 1) (iota (m - 1))) vs";
    assert_eq!(seg_ops(shift), 2);
    let fresh = "entry fill (xs: [m]i64) (ys: [m]i64) : [m]i64 =
  let vs = map (\\j -> ys[j] * 2) (iota (m - 1))
  in scatter xs (map (\\j -> j + 1) (iota (m - 1))) vs";
    assert_eq!(seg_ops(fresh), 1);
}

#[test]
fn sizes_bound_twice_are_compared_by_value() {
    // Flattening binds `h * w` once per use (`size h*w` for each SegOp's space,
    // `mul h w` for the `replicate`): the indices' map still fuses into the histogram,
    // and the `replicate` of ones, read in range, is neither read nor made.
    let src = "entry histo (bins: i64) (image: [h][w]u32) : [bins]u32 =
  reduce_by_index (replicate bins 0u32) (+) 0 (map i64 (flatten image)) (replicate (h * w) 1u32)";
    assert_eq!(seg_ops(src), 1);
    let text = crate::pretty_gpu(&crate::pipeline(&compile(src)));
    assert_eq!(text.matches("replicate").count(), 1, "{text}");
}

#[test]
fn gpu_simplification_reads_iota_and_replicate_at_an_index_in_range_as_the_index_and_the_value() {
    // `(iota n)[i]` is `i` and `(replicate n c)[i]` is `c` where `i` ranges over `n`
    // (a SegOp's space): neither array is made. A read at an index nothing keeps in
    // range stays a read (it must fail when out of range).
    let src = "entry main (xs: [n]f32) (c: f32) : [n]f32 =
  map3 (\\i x y -> x * f32.i64 i + y) (iota n) xs (replicate n c)";
    let gpu = crate::pipeline(&compile(src));
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let made = |exp: &&crate::Exp| {
        matches!(
            exp,
            crate::Exp::Basic(weft_core::Exp::Iota { .. } | weft_core::Exp::Replicate { .. })
        )
    };
    assert!(!gpu_exps(&gpu).iter().any(made), "{}", crate::pretty_gpu(&gpu));

    let src = "entry main (n: i64) (j: i64) : i64 = (iota n)[j]";
    let gpu = crate::pipeline(&compile(src));
    assert!(gpu_exps(&gpu).iter().any(made), "{}", crate::pretty_gpu(&gpu));
}

/// Every SegOp of the GPU IR of `src` after the whole pipeline, as `(kind, level)`.
fn seg_kinds(gpu: &crate::GpuProgram) -> Vec<(String, crate::SegLevel)> {
    let mut out = Vec::new();
    for (_, f) in gpu.functions.iter() {
        let mut blocks = vec![f.body];
        while let Some(block) = blocks.pop() {
            for stmt in &f.blocks[block].stmts {
                let exp = &f.exps[stmt.exp];
                if let crate::Exp::Seg(seg) = exp {
                    out.push((format!("{:?}", seg.kind).chars().take(3).collect(), seg.level));
                }
                blocks.extend(exp.nested_blocks());
            }
        }
    }
    out
}

#[test]
fn a_reduction_of_rows_in_host_code_is_folded_in_chunks_then_by_one_work_item() {
    // The operator chooses a row: no tree of work-items can combine it element by
    // element, so there is no SegRed; two grid SegMaps fold (chunks, then their rows).
    let src = "entry best (xss: [n][m]f32) : [m]f32 =
  reduce (\\a b -> if a[0] >= b[0] then a else b) (replicate m (-f32.inf)) xss";
    let program = compile(src);
    let gpu = crate::pipeline(&program);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    let kinds = seg_kinds(&gpu);
    assert_eq!(kinds.len(), 2, "{}", crate::pretty_gpu(&gpu));
    assert!(kinds.iter().all(|(k, l)| k == "Map" && *l == crate::SegLevel::Grid), "{kinds:?}");
    // The same answers as the program as written, over fewer and more rows than chunks.
    let core = crate::optimise_core(&program);
    let (entry, _) = program.functions.iter().find(|(_, f)| f.is_entry).unwrap();
    for rows in [0, 1, 5, 1024, 1025, 3000] {
        let specs = weft_values::parse_random_specs(&format!("[{rows}][2]f32")).unwrap();
        let inputs = weft_values::generate_inputs(&specs, 7).unwrap();
        let before = weft_core::run_entry(&program, entry, inputs.clone());
        let after = weft_core::run_entry(&core, entry, inputs);
        assert_eq!(format!("{before:?}"), format!("{after:?}"), "{rows} rows");
    }
}

#[test]
fn a_sequential_reduction_of_rows_is_a_loop_with_one_version() {
    // Inside a map the reduction of rows is run by each work-item as a loop whose
    // accumulator is a row (the code generator keeps it in memory of its own); no
    // work-group version, whose threads would have to exchange rows.
    let src = "entry best (xsss: [k][n][m]f32) : [k][m]f32 =
  map (\\xss -> reduce (\\a b -> if a[0] >= b[0] then a else b) (replicate m (-f32.inf)) xss) xsss";
    let gpu = crate::pipeline_inlined(&compile(src), crate::Target::Gpu);
    assert_eq!(crate::validate_gpu(&gpu), Vec::new(), "{}", crate::pretty_gpu(&gpu));
    assert_eq!(seg_kinds(&gpu), vec![("Map".to_owned(), crate::SegLevel::Grid)]);
    let text = crate::pretty_gpu(&gpu);
    assert!(text.contains("loop acc"), "{text}");
    assert!(!text.contains("reduce@seq") && !text.contains("version"), "{text}");
}
