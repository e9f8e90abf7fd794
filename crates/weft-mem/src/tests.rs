//! Tests of the memory IR: printed snapshots from Weft source (`check`, `check_cpu`),
//! forced copies (`check_forced_copies`), the editor query (`check_memory_of`), and the
//! validity check on every example's test cases (`validity_holds_on_every_example`).

use expect_test::{Expect, expect};
use weft_core::Program;
use weft_hir::{RootDatabase, SourceFile};
use weft_syntax::ast::{self, AstNode as _};
use weft_syntax::test_block::{TestInput, test_block};
use weft_values::Value;

use crate::heap::Validity;
use crate::{ExpandOptions, Target};

fn compile(db: &RootDatabase, file: SourceFile) -> Program {
    let checked = weft_core::CheckedFile::new(db, file).expect("test source has no errors");
    let program = weft_core::lower_file(db, checked).expect("test source elaborates");
    assert_eq!(weft_core::validate(&program), Vec::new());
    program
}

fn load(src: &str) -> (RootDatabase, SourceFile) {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    (db, file)
}

fn dump(src: &str, options: ExpandOptions) -> String {
    let (db, file) = load(src);
    let program = compile(&db, file);
    let mem = crate::pipeline(&program, options);
    assert_eq!(crate::validate(&program, &mem), Vec::new());
    crate::pretty_mem(&program, &mem)
}

/// The memory IR (GPU layout) of `src`.
fn check(src: &str, expect: Expect) {
    expect.assert_eq(&dump(src, ExpandOptions::default()));
}

/// The memory IR (CPU layout) of `src`.
fn check_cpu(src: &str, expect: Expect) {
    expect.assert_eq(&dump(src, ExpandOptions { target: Target::Cpu }));
}

/// One line per forced copy (`forced_copies`): its function, position, size and reason.
fn check_forced_copies(src: &str, expect: Expect) {
    let (db, file) = load(src);
    let program = compile(&db, file);
    let mem = crate::pipeline(&program, ExpandOptions::default());
    let mut out = String::new();
    for copy in crate::forced_copies(&program, &mem) {
        let position = copy.origin.as_ref().and_then(|o| weft_core::origin_position(&db, o));
        out.push_str(&format!(
            "{}: at {}: {} bytes: {}\n",
            program.functions[copy.function].name,
            position.unwrap_or_else(|| "the result".to_owned()),
            copy.bytes.as_deref().unwrap_or("?"),
            copy.reason.message()
        ));
    }
    expect.assert_eq(&out);
}

/// The memory of the expression starting at the `$0` marker (`memory_of_binding`).
fn check_memory_of(src: &str, expect: Expect) {
    let offset = src.find("$0").expect("fixture has a $0 marker");
    let text = src.replace("$0", "");
    let (db, file) = load(&text);
    let program = compile(&db, file);
    let mem = crate::pipeline(&program, ExpandOptions::default());
    let mut origins = Vec::new();
    for (_, f) in program.functions.iter() {
        for (exp, origin) in f.origins.iter() {
            let _ = exp;
            let def = weft_hir::DefId::new(&db, origin.def.clone());
            let source_map = weft_hir::source_map(&db, def);
            if let Some(range) = source_map.expr_range(origin.expr)
                && usize::from(range.start()) == offset
                && !origins.contains(origin)
            {
                origins.push(origin.clone());
            }
        }
    }
    let mut out = String::new();
    for origin in &origins {
        for binding in crate::memory_of_binding(&program, &mem, origin) {
            out.push_str(&format!("{}: {:?}\n", binding.name, binding.leaves));
        }
    }
    expect.assert_eq(&out);
}

/// Runs every test case of every entry of `src` on the heap; returns (same, skipped).
fn check_valid_file(
    db: &RootDatabase,
    file: SourceFile,
    options: ExpandOptions,
    compiled: Compiled,
) -> Result<(usize, usize), String> {
    let program = compiled.program(compile(db, file));
    let annotated = crate::annotate(&program);
    let errors = crate::validate(&program, &annotated);
    if !errors.is_empty() {
        return Err(format!("invalid memory IR after annotation: {errors:?}"));
    }
    let mem = crate::expand(&program, &annotated, options);
    let errors = crate::validate(&program, &mem);
    if !errors.is_empty() {
        return Err(format!("invalid memory IR after expansion: {errors:?}"));
    }
    let (mut same, mut skipped) = (0, 0);
    for item in weft_hir::parse(db, file).tree().items() {
        let ast::Item::Def(def) = item else { continue };
        if !def.is_entry() {
            continue;
        }
        let name = def.name().map(|n| n.text().to_string()).unwrap_or_default();
        let Some(entry) =
            program.entries.iter().copied().find(|&e| program.functions[e].name.as_str() == name)
        else {
            continue;
        };
        let _ = def.syntax();
        let (block, _) = test_block(&def);
        for case in block.map(|b| b.cases).unwrap_or_default() {
            let inputs: Vec<Value> = match &case.input {
                TestInput::Values(text) => {
                    weft_values::parse_values(&text.text).map_err(|e| e.to_string())?
                }
                TestInput::Random(text) => {
                    let specs =
                        weft_values::parse_random_specs(&text.text).map_err(|e| e.to_string())?;
                    weft_values::generate_inputs(&specs, 0).map_err(|e| e.to_string())?
                }
            };
            if inputs.iter().map(Value::len).sum::<usize>() > 1024 {
                skipped += 1;
                continue;
            }
            match crate::check_validity(&program, &mem, entry, &inputs) {
                Ok(Validity::Same) => same += 1,
                Ok(Validity::ReferenceFailed) => skipped += 1,
                Err(error) => return Err(format!("`{name}`: {error:?}")),
            }
        }
    }
    Ok((same, skipped))
}

/// Which program of an example the validity check runs on.
#[derive(Clone, Copy)]
enum Compiled {
    /// The core program as elaborated.
    Elaborated,
    /// The middle end's output for this target (the GPU IR the code generator reads,
    /// each threshold at the device's value) written as the core program it means
    /// (`weft_opt::to_core`): its memory laid out and run on the heap.
    MiddleEnd(Target),
}

impl Compiled {
    fn program(self, program: Program) -> Program {
        let Compiled::MiddleEnd(target) = self else { return program };
        let device = weft_opt::DeviceShape {
            gpu: target == Target::Gpu,
            compute_units: if target == Target::Gpu { 132 } else { 2 },
            simd_width: if target == Target::Gpu { 32 } else { 8 },
            local_memory: 49_152,
        };
        let settings = weft_opt::Settings { device: Some(device), ..Default::default() };
        let gpu = weft_opt::pipeline_inlined(&program, settings.target());
        let program = weft_opt::to_core(&gpu, &|t| settings.value(&gpu.thresholds[t]));
        assert_eq!(weft_core::validate(&program), Vec::new());
        program
    }
}

#[test]
fn validity_holds_on_every_example_with_the_gpu_layout() {
    check_valid_examples(Target::Gpu, Compiled::Elaborated);
}

#[test]
fn validity_holds_on_every_example_with_the_cpu_layout() {
    check_valid_examples(Target::Cpu, Compiled::Elaborated);
}

#[test]
fn validity_holds_on_every_example_as_the_middle_end_compiles_it_for_a_gpu() {
    check_valid_examples(Target::Gpu, Compiled::MiddleEnd(Target::Gpu));
}

#[test]
fn validity_holds_on_every_example_as_the_middle_end_compiles_it_for_a_cpu() {
    check_valid_examples(Target::Cpu, Compiled::MiddleEnd(Target::Cpu));
}

/// Runs the validity check on the test cases of every example (at most 1024 input
/// elements each), after expansion for `target`.
fn check_valid_examples(target: Target, compiled: Compiled) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut paths: Vec<_> = std::fs::read_dir(&root)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "weft"))
        .collect();
    paths.sort();
    let mut report = Vec::new();
    let (mut total_same, mut total_skipped) = (0, 0);
    for path in &paths {
        let mut db = RootDatabase::default();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(path).expect("example is readable");
        let file = db.set_file(&format!("examples/{name}"), &text);
        // Imported library files, as `weft test` loads them.
        if let Ok(entries) = std::fs::read_dir(root.join("lib")) {
            for entry in entries.flatten() {
                let lib_name = entry.file_name().to_string_lossy().into_owned();
                if let Ok(lib_text) = std::fs::read_to_string(entry.path()) {
                    db.set_file(&format!("examples/lib/{lib_name}"), &lib_text);
                }
            }
        }
        if weft_core::CheckedFile::new(&db, file).is_none() {
            report.push(format!("{name}: has errors"));
            continue;
        }
        match check_valid_file(&db, file, ExpandOptions { target }, compiled) {
            Ok((same, skipped)) => {
                total_same += same;
                total_skipped += skipped;
            }
            Err(message) => report.push(format!("{name}: {message}")),
        }
    }
    assert!(report.is_empty(), "validity failures:\n{}", report.join("\n"));
    assert!(total_same > 150, "only {total_same} cases compared ({total_skipped} skipped)");
}

#[test]
fn funmem_branch_example() {
    check(
        include_str!("../../../examples/funmem_branch.weft"),
        expect![[r#"
            entry main (z_cond_0: bool) (x_size_1: i64) (y_size_2: i64) (k_3: i64) : [k_3]i64 @ ?mem_0 -> {offset: 0; strides: [1]; shape: [k_3]} =
              let z_4: [?5]i64 @ ?mem_0 -> {offset: 0; strides: [1]; shape: [?5]} = if z_cond_0 then
                  let mem_1: mem = alloc 8*x_size_1
                  let t_6: [x_size_1]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [x_size_1]} = iota x_size_1
                  in t_6
                else
                  let mem_2: mem = alloc 8*y_size_2
                  let t_7: [y_size_2]i64 @ mem_2 -> {offset: 0; strides: [1]; shape: [y_size_2]} = iota y_size_2
                  in t_7
              let t_8: [k_3]i64 @ ?mem_0 -> {offset: 0; strides: [1]; shape: [k_3]} = z_4 :> [k_3]i64
              in t_8
        "#]],
    );
}

#[test]
fn funmem_views_example() {
    check(
        include_str!("../../../examples/funmem_views.weft"),
        expect![[r#"
            entry views (n_0: i64) (m_1: i64) (p_2: i64) (q_3: i64) : i64 =
              let mem_0: mem = alloc 8*n_0
              let t_4: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0*m_1
              let mem_2: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_3: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let a_5: [n_0][m_1]i64 @ mem_1 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]} = map gtid_0 (t_4) \(i_6: i64) : [m_1]i64 ->
                  let t_7: [m_1]i64 @ mem_2 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = iota m_1
                  let t_8: [m_1]i64 @ mem_3 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = map gtid_1 (t_7) \(j_9: i64) : i64 ->
                      let t_10: i64 = mul.i64 i_6 m_1
                      let t_11: i64 = add.i64 t_10 j_9
                      in t_11
                  in t_8
              let b_12: [m_1][n_0]i64 @ mem_1 -> {offset: 0; strides: [1, m_1]; shape: [m_1, n_0]} = transpose a_5
              let c_13: [2][2]i64 @ mem_1 -> {offset: 1; strides: [1, m_1]; shape: [2, 2]} = b_12[1i64:3i64, 0i64:2i64]
              let t_14: i64 = c_13[p_2, q_3]
              in t_14

            entry transposed [n_0] [m_1] (a_2: [n_0][m_1]i32 @ mem_0 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}) : [m_1][n_0]i32 @ mem_1 -> {offset: 0; strides: [n_0, 1]; shape: [m_1, n_0]} =
              let t_3: [m_1][n_0]i32 @ mem_0 -> {offset: 0; strides: [1, m_1]; shape: [m_1, n_0]} = transpose a_2
              in t_3
              -- result copy: t_3 into mem_1 (alloc 4*n_0*m_1 bytes)

            entry branch [n_0] (c_1: bool) (a_2: [n_0][n_0]i32 @ mem_0 -> {offset: 0; strides: [n_0, 1]; shape: [n_0, n_0]}) : [n_0][n_0]i32 @ mem_1 -> {offset: 0; strides: [n_0, 1]; shape: [n_0, n_0]} =
              let t_3: [n_0][n_0]i32 @ mem_0 -> {offset: 0; strides: [?ex_0, ?ex_1]; shape: [n_0, n_0]} = if c_1 then
                  let t_4: [n_0][n_0]i32 @ mem_0 -> {offset: 0; strides: [1, n_0]; shape: [n_0, n_0]} = transpose a_2
                  in t_4
                else
                  in a_2
              in t_3
              -- result copy: t_3 into mem_1 (alloc 4*n_0*n_0 bytes)

            entry flatten_transposed [n_0] [m_1] (a_2: [n_0][m_1]i32 @ mem_0 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}) : [n_0*m_1]i32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0*m_1]} =
              let t_3: [m_1][n_0]i32 @ mem_0 -> {offset: 0; strides: [1, m_1]; shape: [m_1, n_0]} = transpose a_2
              let mem_1: mem = alloc 4*n_0*m_1
              let t_4: [n_0*m_1]i32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0*m_1]} = copy flatten t_3
              in t_4
        "#]],
    );
}

#[test]
fn funmem_expand_example_gpu_layout_is_interleaved() {
    check(
        include_str!("../../../examples/funmem_expand.weft"),
        expect![[r#"
            entry per_thread (n_0: i64) (m_1: i64) : [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let mem_0: mem = alloc 8*n_0
              let t_2: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0
              let mem_2: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_3: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let t_3: [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = map gtid_0 (t_2) \(i_4: i64) : i64 ->
                  let t_5: [m_1]i64 @ mem_2 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = iota m_1
                  let a_6: [m_1]i64 @ mem_3 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = map gtid_1 (t_5) \(j_7: i64) : i64 ->
                      let t_8: i64 = mul.i64 i_4 j_7
                      in t_8
                  let t_9: i64 = sub.i64 m_1 1i64
                  let t_10: i64 = a_6[t_9]
                  in t_10
              in t_3

            entry rows (n_0: i64) (m_1: i64) : [n_0][m_1]i64 @ mem_1 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]} =
              let mem_0: mem = alloc 8*n_0
              let t_2: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0*m_1
              let mem_2: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_3: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (interleaved)
              let t_3: [n_0][m_1]i64 @ mem_1 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]} = map gtid_0 (t_2) \(i_4: i64) : [m_1]i64 ->
                  let t_5: [m_1]i64 @ mem_2 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = iota m_1
                  let t_6: [m_1]i64 @ mem_3 -> {offset: gtid_0; strides: [n_0]; shape: [m_1]} = map gtid_1 (t_5) \(j_7: i64) : i64 ->
                      let t_8: i64 = add.i64 i_4 j_7
                      in t_8
                  in t_6
              in t_3

            entry slice_view (n_0: i64) : [n_0][3]i64 @ mem_1 -> {offset: 0; strides: [3, 1]; shape: [n_0, 3]} =
              let mem_0: mem = alloc 8*n_0
              let t_1: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 24*n_0
              let mem_2: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_3: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_4: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_5: mem = alloc 24*n_0 -- expanded over gtid_0 < n_0 (interleaved)
              let mem_6: mem = alloc 24*n_0 -- expanded over gtid_0 < n_0 (interleaved)
              let t_2: [n_0][3]i64 @ mem_1 -> {offset: 0; strides: [3, 1]; shape: [n_0, 3]} = map gtid_0 (t_1) \(i_3: i64) : [3]i64 ->
                  let t_4: [10]i64 @ mem_2 -> {offset: gtid_0; strides: [n_0]; shape: [10]} = iota 10i64
                  let t_5: [10]i64 @ mem_3 -> {offset: gtid_0; strides: [n_0]; shape: [10]} = map gtid_1 (t_4) \(j_6: i64) : i64 ->
                      let t_7: i64 = mul.i64 i_3 10i64
                      let t_8: i64 = add.i64 t_7 j_6
                      in t_8
                  let a_9: [10]i64 @ mem_4 -> {offset: gtid_0; strides: [n_0]; shape: [10]} = force t_5
                  let b_10: [3]i64 @ mem_4 -> {offset: 5*n_0 + gtid_0; strides: [n_0]; shape: [3]} = a_9[5i64:8i64]
                  let t_11: [3]i64 @ mem_5 -> {offset: gtid_0; strides: [n_0]; shape: [3]} = iota 3i64
                  let t_12: [3]i64 @ mem_6 -> {offset: gtid_0; strides: [n_0]; shape: [3]} = map gtid_2 (t_11) \(j_13: i64) : i64 ->
                      let t_14: i64 = b_10[j_13]
                      in t_14
                  in t_12
              in t_2
        "#]],
    );
}

#[test]
fn funmem_expand_example_cpu_layout_is_chunked() {
    check_cpu(
        include_str!("../../../examples/funmem_expand.weft"),
        expect![[r#"
            entry per_thread (n_0: i64) (m_1: i64) : [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let mem_0: mem = alloc 8*n_0
              let t_2: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0
              let mem_2: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (chunked)
              let mem_3: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (chunked)
              let t_3: [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = map gtid_0 (t_2) \(i_4: i64) : i64 ->
                  let t_5: [m_1]i64 @ mem_2 -> {offset: m_1*gtid_0; strides: [1]; shape: [m_1]} = iota m_1
                  let a_6: [m_1]i64 @ mem_3 -> {offset: m_1*gtid_0; strides: [1]; shape: [m_1]} = map gtid_1 (t_5) \(j_7: i64) : i64 ->
                      let t_8: i64 = mul.i64 i_4 j_7
                      in t_8
                  let t_9: i64 = sub.i64 m_1 1i64
                  let t_10: i64 = a_6[t_9]
                  in t_10
              in t_3

            entry rows (n_0: i64) (m_1: i64) : [n_0][m_1]i64 @ mem_1 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]} =
              let mem_0: mem = alloc 8*n_0
              let t_2: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0*m_1
              let mem_2: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (chunked)
              let mem_3: mem = alloc 8*n_0*m_1 -- expanded over gtid_0 < n_0 (chunked)
              let t_3: [n_0][m_1]i64 @ mem_1 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]} = map gtid_0 (t_2) \(i_4: i64) : [m_1]i64 ->
                  let t_5: [m_1]i64 @ mem_2 -> {offset: m_1*gtid_0; strides: [1]; shape: [m_1]} = iota m_1
                  let t_6: [m_1]i64 @ mem_3 -> {offset: m_1*gtid_0; strides: [1]; shape: [m_1]} = map gtid_1 (t_5) \(j_7: i64) : i64 ->
                      let t_8: i64 = add.i64 i_4 j_7
                      in t_8
                  in t_6
              in t_3

            entry slice_view (n_0: i64) : [n_0][3]i64 @ mem_1 -> {offset: 0; strides: [3, 1]; shape: [n_0, 3]} =
              let mem_0: mem = alloc 8*n_0
              let t_1: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 24*n_0
              let mem_2: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (chunked)
              let mem_3: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (chunked)
              let mem_4: mem = alloc 80*n_0 -- expanded over gtid_0 < n_0 (chunked)
              let mem_5: mem = alloc 24*n_0 -- expanded over gtid_0 < n_0 (chunked)
              let mem_6: mem = alloc 24*n_0 -- expanded over gtid_0 < n_0 (chunked)
              let t_2: [n_0][3]i64 @ mem_1 -> {offset: 0; strides: [3, 1]; shape: [n_0, 3]} = map gtid_0 (t_1) \(i_3: i64) : [3]i64 ->
                  let t_4: [10]i64 @ mem_2 -> {offset: 10*gtid_0; strides: [1]; shape: [10]} = iota 10i64
                  let t_5: [10]i64 @ mem_3 -> {offset: 10*gtid_0; strides: [1]; shape: [10]} = map gtid_1 (t_4) \(j_6: i64) : i64 ->
                      let t_7: i64 = mul.i64 i_3 10i64
                      let t_8: i64 = add.i64 t_7 j_6
                      in t_8
                  let a_9: [10]i64 @ mem_4 -> {offset: 10*gtid_0; strides: [1]; shape: [10]} = force t_5
                  let b_10: [3]i64 @ mem_4 -> {offset: 10*gtid_0 + 5; strides: [1]; shape: [3]} = a_9[5i64:8i64]
                  let t_11: [3]i64 @ mem_5 -> {offset: 3*gtid_0; strides: [1]; shape: [3]} = iota 3i64
                  let t_12: [3]i64 @ mem_6 -> {offset: 3*gtid_0; strides: [1]; shape: [3]} = map gtid_2 (t_11) \(j_13: i64) : i64 ->
                      let t_14: i64 = b_10[j_13]
                      in t_14
                  in t_12
              in t_2
        "#]],
    );
}

#[test]
fn flatten_of_a_transpose_and_a_transposed_entry_result_are_forced_copies() {
    check_forced_copies(
        r"
entry f (a: [n][m]i32) : [m*n]i32 = flatten (transpose a)
entry g (a: [n][m]i32) : [n*m]i32 = flatten a
entry h (a: [n][m]f64) : [m][n]f64 = transpose a
entry k (a: [n][m]f64) : [n][m]f64 = a
",
        expect![[r#"
            f: at main.weft:2:37: 4*n*m bytes: `flatten` is not representable as one LMAD here (the outer dimensions do not merge), so the array is copied
            h: at main.weft:4:38: 8*n*m bytes: an entry result must be row-major at offset 0, so it is copied
        "#]],
    );
}

#[test]
fn a_tuple_result_is_one_copy_and_sizes_are_in_source_names() {
    // `r-1` and `c-1` are computed sizes: they print as polynomials over the source's
    // names, never as the temporaries that hold them.
    check_forced_copies(
        r"
entry pieces (a: i64) (b: i64) (xs: [n]i32) : ([b-a]i32, [n-a]i32) = (xs[a:b], xs[a:])
entry border (m: [r][c]i32) : [r-2][c-2]i32 = m[1:r-1, 1:c-1]
",
        expect![[r#"
            pieces: at main.weft:2:70: 4*n + 4*b - 8*a bytes: an entry result must be row-major at offset 0, so it is copied
            border: at main.weft:3:47: 4*r*c - 8*r - 8*c + 16 bytes: an entry result must be row-major at offset 0, so it is copied
        "#]],
    );
}

#[test]
fn memory_of_binding_reports_views_and_allocations() {
    check_memory_of(
        r"
entry f (a: [n][m]i32) : [m][n]i32 =
  let b = $0transpose a
  in map (\r -> map (+1) r) b
",
        expect![[r#"
            b: [LeafMemory { block: "mem_0", owner: Some("a"), lmad: "{offset: 0; strides: [1, m]; shape: [m, n]}", kind: View, bytes: None, copy_reason: None, used_later: None, expanded: [] }]
        "#]],
    );
}

#[test]
fn paper_gpu_formula_breaks_aliasing_and_the_fixed_one_keeps_it() {
    // Digest E6: a block of 10 elements, 4 threads, A = 0+{(10:1)}, B = A[5:3].
    use crate::{Layout, Lmad, MemSize};
    use weft_size::Size;
    let c = Size::constant;
    let a: Lmad<crate::MemVar> = Lmad::row_major(&[c(10)]);
    let b = a.slice_dim(0, &c(5), &c(3), &c(1));
    let (y, se): (MemSize, MemSize) = (c(4), c(10));
    let addr = |l: &Lmad<crate::MemVar>, j: i64| l.index(&[c(j)]).as_constant().expect("constant");
    for x in 0..4 {
        let tid = c(x);
        for layout in [Layout::Interleaved, Layout::Chunked] {
            let a2 = crate::expand_lmad(&a, &tid, &y, &se, layout);
            let b2 = crate::expand_lmad(&b, &tid, &y, &se, layout);
            for j in 0..3 {
                assert_eq!(addr(&b2, j), addr(&a2, 5 + j), "{layout:?} keeps B[j] = A[5+j]");
            }
        }
        // The paper's printed rule `offset + x`, strides times y (not implemented).
        let paper = |l: &Lmad<crate::MemVar>| {
            let mut l = l.clone();
            l.offset = l.offset.add(&tid);
            for d in &mut l.dims {
                d.stride = d.stride.mul(&y);
            }
            l
        };
        assert_ne!(addr(&paper(&b), 0), addr(&paper(&a), 5), "the paper's rule breaks aliasing");
    }
}

#[test]
fn views_never_allocate() {
    check(
        r"
entry f (xs: [n]i32) (ys: [n]f32) (k: i64) : ([k]i32, [n-k]f32, [n]i32, [3][n]f32) =
  let ps = zip xs ys
  let (a, b) = unzip (reverse ps)
  in (take k a, drop k b, xs, replicate 3 ys)
",
        expect![[r#"
            entry f [n_0] (xs_1: [n_0]i32 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}) (ys_2: [n_0]f32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]}) (k_3: i64) : ([k_3]i32 @ mem_2 -> {offset: 0; strides: [1]; shape: [k_3]}, [n_0 - k_3]f32 @ mem_3 -> {offset: 0; strides: [1]; shape: [n_0 - k_3]}, [n_0]i32 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}, [3][n_0]f32 @ mem_4 -> {offset: 0; strides: [n_0, 1]; shape: [3, n_0]}) =
              let ps_4: ([n_0]i32 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}, [n_0]f32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]}) = zip xs_1 ys_2
              let t_5: ([n_0]i32 @ mem_0 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]}, [n_0]f32 @ mem_1 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]}) = reverse ps_4
              let t_6: ([n_0]i32 @ mem_0 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]}, [n_0]f32 @ mem_1 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]}) = unzip t_5
              let a_7: [n_0]i32 @ mem_0 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]} = t_6.0
              let b_8: [n_0]f32 @ mem_1 -> {offset: n_0 - 1; strides: [-1]; shape: [n_0]} = t_6.1
              let t_9: [k_3]i32 @ mem_0 -> {offset: n_0 - 1; strides: [-1]; shape: [k_3]} = take k_3 a_7
              let t_10: [n_0 - k_3]f32 @ mem_1 -> {offset: n_0 - k_3 - 1; strides: [-1]; shape: [n_0 - k_3]} = drop k_3 b_8
              let t_11: [3][n_0]f32 @ mem_1 -> {offset: 0; strides: [0, 1]; shape: [3, n_0]} = replicate 3i64 ys_2
              let t_12: ([k_3]i32 @ mem_0 -> {offset: n_0 - 1; strides: [-1]; shape: [k_3]}, [n_0 - k_3]f32 @ mem_1 -> {offset: n_0 - k_3 - 1; strides: [-1]; shape: [n_0 - k_3]}, [n_0]i32 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}, [3][n_0]f32 @ mem_1 -> {offset: 0; strides: [0, 1]; shape: [3, n_0]}) = (t_9, t_10, xs_1, t_11)
              in t_12
              -- result copy: t_12 into mem_2 (alloc 4*k_3 bytes)
              -- result copy: t_12 into mem_3 (alloc 4*n_0 - 4*k_3 bytes)
              -- result copy: t_12 into mem_4 (alloc 12*n_0 bytes)
        "#]],
    );
}

#[test]
fn allocations_under_a_branch_in_a_lambda_are_not_expanded() {
    check(
        r"
entry f (n: i64) (m: i64) (c: bool) : [n]i64 =
  map (\i -> if c then reduce (+) 0 (iota m) else i) (iota n)
",
        expect![[r#"
            entry f (n_0: i64) (m_1: i64) (c_2: bool) : [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let mem_0: mem = alloc 8*n_0
              let t_3: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]} = iota n_0
              let mem_1: mem = alloc 8*n_0
              let t_4: [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = map gtid_0 (t_3) \(i_5: i64) : i64 ->
                  let t_6: i64 = if c_2 then
                      let mem_2: mem = alloc 8*m_1 -- not expanded: inside a branch or loop of a parallel lambda
                      let t_7: [m_1]i64 @ mem_2 -> {offset: 0; strides: [1]; shape: [m_1]} = iota m_1
                      let t_8: i64 = reduce 0i64 t_7 \(x_9: i64) (y_10: i64) : i64 ->
                          let t_11: i64 = add.i64 x_9 y_10
                          in t_11
                      in t_8
                    else
                      in i_5
                  in t_6
              in t_4
        "#]],
    );
}

#[test]
fn loop_parameters_have_existential_memory() {
    check(
        r"
entry f (xs: [n]i32) (k: i64) : [n]i32 =
  loop acc = xs for i < k do reverse acc
",
        expect![[r#"
            entry f [n_0] (xs_1: [n_0]i32 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}) (k_2: i64) : [n_0]i32 @ mem_2 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let t_3: [n_0]i32 @ ?mem_1 -> {offset: ?ex_0; strides: [?ex_1]; shape: [n_0]} = loop (acc_4: [n_0]i32 @ ?mem_1 -> {offset: ?ex_0; strides: [?ex_1]; shape: [n_0]}) = xs_1 for i_5 < k_2 do
                  let t_6: [n_0]i32 @ ?mem_1 -> {offset: n_0*?ex_1 + ?ex_0 - ?ex_1; strides: [-?ex_1]; shape: [n_0]} = reverse acc_4
                  in t_6
              in t_3
              -- result copy: t_3 into mem_2 (alloc 4*n_0 bytes)
        "#]],
    );
}

#[test]
fn a_host_loop_takes_the_memory_of_an_initial_array_made_for_it() {
    // The `replicate` is read by the loop alone: the loop updates it where it is, as the
    // code generator does (weft-mem's GPU annotation), so the printer says no copy.
    let text = dump(
        "entry f (n: i64) : [n]i64 = loop acc = replicate n 0 for i < n do acc with [i] = i * 2",
        ExpandOptions::default(),
    );
    assert!(!text.contains("-- loop entry"), "{text}");
    // Inside a map (a kernel) the loop's array is the work-item's own: a copy.
    let text = dump(
        "entry g (xss: [m][n]i64) : [m][n]i64 =
  map (\\xs -> loop acc = map (\\x -> x + 1) xs for i < n do acc with [i] = i) xss",
        ExpandOptions::default(),
    );
    assert!(text.contains("-- loop entry"), "{text}");
}

#[test]
fn a_loop_updating_its_parameter_in_place_starts_from_a_copy() {
    // `d` is the loop's initial value and is read inside the loop while the loop's
    // array is updated in place: the loop starts from a copy in memory of its own (as
    // the code generator does), which the printer says and the heap run models.
    let src = r"
entry f (xs: [n]i32) : [n]i32 =
  let d = map (\x -> x * 2) xs
  in loop b = d for i < n do b with [n - 1 - i] = d[i] + 1
";
    let text = dump(src, ExpandOptions::default());
    assert!(text.contains("-- loop entry: the initial value is copied"), "{text}");
    assert!(text.contains("in place b_"), "{text}");
    let (db, file) = load(src);
    let program = compile(&db, file);
    let mem = crate::pipeline(&program, ExpandOptions::default());
    let inputs = weft_values::parse_values("[1i32, 2i32, 3i32]").expect("values");
    let validity = crate::check_validity(&program, &mem, program.entries[0], &inputs);
    assert!(matches!(validity, Ok(Validity::Same)), "{validity:?}");
}

/// Runs the validity check on `input` after `corrupt` changed the memory IR.
fn check_corrupted(
    src: &str,
    input: &str,
    corrupt: fn(&Program, &mut crate::MemProgram),
    expect: Expect,
) {
    let (db, file) = load(src);
    let program = compile(&db, file);
    let mut mem = crate::pipeline(&program, ExpandOptions::default());
    let inputs = weft_values::parse_values(input).expect("valid input");
    let entry = program.entries[0];
    let before = crate::check_validity(&program, &mem, entry, &inputs);
    assert_eq!(before, Ok(Validity::Same), "the uncorrupted program is valid");
    corrupt(&program, &mut mem);
    let after = match crate::check_validity(&program, &mem, entry, &inputs) {
        Ok(validity) => format!("{validity:?}"),
        Err(crate::ValidityError::Heap(error)) => error.message,
        Err(crate::ValidityError::Mismatch(message)) => format!("mismatch: {message}"),
    };
    expect.assert_eq(&after);
}

#[test]
fn validity_check_catches_a_wrong_view_lmad() {
    check_corrupted(
        r"
entry f (a: [n][m]i32) : [m][n]i32 = map (\r -> r) (transpose a)
",
        "[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]]",
        |program, mem| {
            for (fn_id, f) in program.functions.iter() {
                for (var, info) in mem.functions[fn_id].bindings.iter_mut() {
                    if let crate::MemInfo::Array(array) = info
                        && f.vars[var].name.as_str().is_empty()
                        && array.how == crate::Provenance::View
                        && array.lmad.rank() == 2
                    {
                        // Pretend the transpose is dense.
                        array.lmad = crate::Lmad::row_major(&array.lmad.shape());
                    }
                }
            }
        },
        expect![
            "invalid memory: the annotation says HArr { label: 0, offset: 0, dims: [(3, 2), (2, 1)] } but the value is HArr { label: 0, offset: 0, dims: [(3, 1), (2, 3)] }"
        ],
    );
}

#[test]
fn validity_check_catches_threads_sharing_expanded_memory() {
    check_corrupted(
        r"
entry f (n: i64) (m: i64) : [n]i64 =
  map (\i -> let a = map (\j -> i * j) (iota m) in a[m - 1]) (iota n)
",
        "3i64 4i64",
        |_, mem| {
            for (_, mem_f) in mem.functions.iter_mut() {
                for (_, info) in mem_f.bindings.iter_mut() {
                    if let crate::MemInfo::Array(array) = info {
                        // Forget the thread's part: every thread gets the same addresses.
                        array.lmad = array.lmad.substitute(&mut |v| match v {
                            crate::MemVar::Thread(_) => Some(weft_size::Size::zero()),
                            crate::MemVar::Core(_) | crate::MemVar::Exist(_) => None,
                        });
                    }
                }
            }
        },
        expect!["invalid memory: two iterations write address 0"],
    );
}

proptest::proptest! {
    /// Digest §9, property 5: expansion maps thread `x`'s address `a` to one address
    /// `f_x(a)` for every LMAD in the block (so views keep aliasing their arrays), and
    /// the per-thread images of `[0, se)` are pairwise disjoint and inside `[0, se·y)`.
    #[test]
    fn expansion_is_an_injective_relabelling_of_addresses(
        rows in 1i64..4,
        cols in 1i64..4,
        threads in 1i64..5,
        view in 0u8..4,
        start in 0i64..3,
    ) {
        use crate::{Layout, Lmad, MemVar};
        use weft_size::Size;
        let c = Size::<MemVar>::constant;
        let se = rows * cols;
        let base: Lmad<MemVar> = Lmad::row_major(&[c(rows), c(cols)]);
        let start = start.min(rows - 1);
        let lmad = match view {
            0 => base.clone(),
            1 => base.transpose(),
            2 => base.reverse(1),
            _ => base.slice_dim(0, &c(start), &c(rows - start), &c(1)),
        };
        let shape: Vec<i64> = lmad.shape().iter().map(|s| s.as_constant().expect("constant")).collect();
        for layout in [Layout::Interleaved, Layout::Chunked] {
            let relabel = |x: i64, a: i64| match layout {
                Layout::Interleaved => a * threads + x,
                Layout::Chunked => x * se + a,
            };
            let mut seen = std::collections::BTreeSet::new();
            for x in 0..threads {
                let expanded = crate::expand_lmad(&lmad, &c(x), &c(threads), &c(se), layout);
                for i in 0..shape[0] {
                    for j in 0..shape[1] {
                        let at = |l: &Lmad<MemVar>| l.index(&[c(i), c(j)]).as_constant().expect("constant");
                        proptest::prop_assert_eq!(at(&expanded), relabel(x, at(&lmad)));
                    }
                }
                for a in 0..se {
                    let b = relabel(x, a);
                    proptest::prop_assert!((0..se * threads).contains(&b));
                    proptest::prop_assert!(seen.insert(b), "threads overlap at {}", b);
                }
            }
        }
    }
}

#[test]
fn allocations_of_per_thread_size_are_not_expanded() {
    check(
        r"
entry f (xs: [n]i64) : [n]i64 = map (\k -> reduce (+) 0 (iota k)) xs
",
        expect![[r#"
            entry f [n_0] (xs_1: [n_0]i64 @ mem_0 -> {offset: 0; strides: [1]; shape: [n_0]}) : [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let mem_1: mem = alloc 8*n_0
              let t_2: [n_0]i64 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = map gtid_0 (xs_1) \(k_3: i64) : i64 ->
                  let mem_2: mem = alloc 8*k_3 -- not expanded: its size varies per thread
                  let t_4: [k_3]i64 @ mem_2 -> {offset: 0; strides: [1]; shape: [k_3]} = iota k_3
                  let t_5: i64 = reduce 0i64 t_4 \(x_6: i64) (y_7: i64) : i64 ->
                      let t_8: i64 = add.i64 x_6 y_7
                      in t_8
                  in t_5
              in t_2
        "#]],
    );
}

#[test]
fn memory_of_binding_reports_fresh_allocations_in_bytes() {
    check_memory_of(
        r"
entry f (a: [n][m]f32) : [n][m]f32 =
  $0map (\r -> map (\x -> x * 2) (reverse r)) a
",
        expect![[r#"
            : [LeafMemory { block: "mem_1", owner: None, lmad: "{offset: 0; strides: [m, 1]; shape: [n, m]}", kind: Fresh, bytes: Some("4*n*m"), copy_reason: None, used_later: None, expanded: [] }]
        "#]],
    );
}

#[test]
fn def_parameters_are_existential_and_direct_call_results_row_major() {
    check(
        r"
def firsts [n] [m] (a: [n][m]i32) : [n]i32 = map (\r -> r[0]) a
entry f (a: [n][m]i32) : [m]i32 = firsts (transpose a)
",
        expect![[r#"
            def firsts [n_0] [m_1] (a_2: [n_0][m_1]i32 @ ?mem_0 -> {offset: ?ex_0; strides: [?ex_1, ?ex_2]; shape: [n_0, m_1]}) : [n_0]i32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} =
              let mem_1: mem = alloc 4*n_0
              let t_3: [n_0]i32 @ mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = map gtid_0 (a_2) \(r_4: [m_1]i32 @ ?mem_0 -> {offset: gtid_0*?ex_1 + ?ex_0; strides: [?ex_2]; shape: [m_1]}) : i32 ->
                  let t_5: i32 = r_4[0i64]
                  in t_5
              in t_3

            entry f [n_0] [m_1] (a_2: [n_0][m_1]i32 @ mem_0 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}) : [m_1]i32 @ ?mem_1 -> {offset: 0; strides: [1]; shape: [m_1]} =
              let t_3: [m_1][n_0]i32 @ mem_0 -> {offset: 0; strides: [1, m_1]; shape: [m_1, n_0]} = transpose a_2
              let t_4: [m_1]i32 @ ?mem_1 -> {offset: 0; strides: [1]; shape: [m_1]} = call firsts t_3
              in t_4
        "#]],
    );
}

/// The heap checker words a failed bounds check as the interpreter does
/// (`weft_values::RuntimeCheck`); it once said `index 3 out of bounds for size 3`.
#[test]
fn heap_bounds_errors_are_the_interpreters_words() {
    let src = "entry f (xs: [n]i32) (i: i64) : i32 = xs[i]\n\
               entry g (xs: [n]i32) (i: i64) : [n]i32 = xs with [i] = 0i32\n";
    let (db, file) = load(src);
    let program = compile(&db, file);
    let mem = crate::pipeline(&program, ExpandOptions::default());
    for &entry in &program.entries {
        let inputs = weft_values::parse_values("[1i32, 2i32, 3i32] 3i64").expect("valid input");
        let interpreted = weft_core::run_entry(&program, entry, inputs.clone())
            .expect_err("out of bounds")
            .message;
        let on_heap = crate::run_entry_on_heap(&program, &mem, entry, inputs)
            .expect_err("out of bounds")
            .message;
        assert_eq!(on_heap, interpreted);
        assert_eq!(on_heap, "index 3 out of bounds for array `xs` of size 3");
    }
}

// ---- memory of the GPU IR (`crate::gpu`) ----

/// The GPU IR of `src` (every call inlined) with its memory for `target`, printed.
fn gpu_mem(src: &str, target: Target) -> String {
    let (db, file) = load(src);
    let program = compile(&db, file);
    let opt_target = match target {
        Target::Gpu => weft_opt::Target::Gpu,
        Target::Cpu => weft_opt::Target::Cpu,
    };
    let gpu = weft_opt::pipeline_inlined(&program, opt_target);
    let mem = crate::annotate_gpu(&gpu, target);
    assert_eq!(crate::validate_gpu_mem(&gpu, &mem), Vec::<String>::new());
    crate::pretty_gpu_mem(&gpu, &mem)
}

#[test]
fn gpu_memory_is_valid_on_every_example_and_benchmark() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut report = Vec::new();
    let mut checked = 0;
    for dir in ["examples", "bench/apps", "bench/programs"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("the directory exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "weft"))
            .collect();
        paths.sort();
        for path in paths {
            let mut db = RootDatabase::default();
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let text = std::fs::read_to_string(&path).expect("readable");
            let file = db.set_file(&format!("{dir}/{name}"), &text);
            if let Ok(entries) = std::fs::read_dir(root.join(dir).join("lib")) {
                for entry in entries.flatten() {
                    let lib = entry.file_name().to_string_lossy().into_owned();
                    if let Ok(lib_text) = std::fs::read_to_string(entry.path()) {
                        db.set_file(&format!("{dir}/lib/{lib}"), &lib_text);
                    }
                }
            }
            if weft_core::CheckedFile::new(&db, file).is_none() {
                continue;
            }
            let program = compile(&db, file);
            for (target, opt) in
                [(Target::Gpu, weft_opt::Target::Gpu), (Target::Cpu, weft_opt::Target::Cpu)]
            {
                let gpu = weft_opt::pipeline_inlined(&program, opt);
                let mem = crate::annotate_gpu(&gpu, target);
                for error in crate::validate_gpu_mem(&gpu, &mem) {
                    report.push(format!("{dir}/{name} ({target:?}): {error}"));
                }
                checked += 1;
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
    assert!(checked > 150, "only {checked} programs checked");
}

#[test]
fn a_work_items_array_is_expanded_interleaved_on_a_gpu_and_in_chunks_on_a_cpu() {
    // Each work-item's running sums (a scan of its row) have a size only the rows
    // know: one global block of n*m elements, element `a` of work-item `i` at `a*n + i`
    // on a GPU (neighbouring work-items at neighbouring addresses), at `i*m + a` on a
    // CPU (each work-item's part contiguous).
    let src = r"entry f (xss: [n][m]i32) : [n]i32 =
  map (\xs -> let s = scan (+) 0 xs in reduce (+) 0 s + reduce i32.max 0 s) xss";
    let gpu = gpu_mem(src, Target::Gpu);
    let line = |text: &str, needle: &str| {
        text.lines().find(|l| l.contains(needle)).map(str::trim).unwrap_or_default().to_owned()
    };
    assert!(line(&gpu, "expanded over").contains("(interleaved)"), "{gpu}");
    assert!(gpu.contains("{offset: i_"), "{gpu}");
    assert!(gpu.contains("strides: [n_0]"), "{gpu}");
    let cpu = gpu_mem(src, Target::Cpu);
    assert!(line(&cpu, "expanded over").contains("(chunked)"), "{cpu}");
    assert!(cpu.contains("strides: [1]; shape: [m_1]"), "{cpu}");
}

#[test]
fn a_small_array_of_a_work_item_is_private() {
    let text = gpu_mem(
        r"entry f (xs: [n]f32) : [n]f32 =
  map (\x -> let v = [x, x * 2, x * 3] in reduce (+) 0 (map (\y -> y * y) v)) xs",
        Target::Gpu,
    );
    assert!(text.contains(": private = alloc 3 f32"), "{text}");
    assert!(!text.contains("expanded"), "{text}");
}

#[test]
fn a_rows_array_is_built_in_its_row_of_the_result() {
    // Short-circuiting: no per-work-item array, no copy.
    let text = gpu_mem(
        r"entry f (xss: [n][m]f32) : [n][m]f32 =
  map (\xs -> let s = reduce (+) 0 xs in map (\x -> x / s) xs) xss",
        Target::Cpu,
    );
    let result_block = text
        .lines()
        .find(|l| l.contains("segmap@grid (i_") && !l.contains(", i_"))
        .and_then(|l| l.split(" @ ").nth(1))
        .and_then(|l| l.split(' ').next())
        .expect(&text)
        .to_owned();
    let row = text.lines().find(|l| l.contains("= map@seq")).expect(&text);
    assert!(row.contains(&format!("@ {result_block} -> {{offset: m_1*i_")), "{text}");
}

#[test]
fn an_update_of_a_dead_array_is_in_place_and_of_a_live_one_a_copy() {
    let text = gpu_mem(
        r"entry f (n: i64) : [n]i64 =
  let xs = iota n
  in loop ys = xs for i < n do ys with [i] = i * i",
        Target::Gpu,
    );
    assert!(text.contains("(in place)"), "{text}");
    // `xs` is dead once the loop starts: the loop updates it where it is, no copy.
    assert!(!text.contains("loop entry"), "{text}");
    assert_eq!(text.matches("= alloc").count(), 1, "{text}");
    // Read after the loop: the loop starts from a copy.
    let text = gpu_mem(
        r"entry f (n: i64) : ([n]i64, [n]i64) =
  let xs = iota n
  in (loop ys = xs for i < n do ys with [i] = i * i, xs)",
        Target::Gpu,
    );
    assert!(text.contains("loop entry"), "{text}");
    // Read inside the loop: a copy too.
    let text = gpu_mem(
        r"entry f (n: i64) : [n]i64 =
  let xs = iota n
  in loop ys = xs for i < n do ys with [i] = xs[n - 1 - i]",
        Target::Gpu,
    );
    assert!(text.contains("loop entry"), "{text}");
    let text =
        gpu_mem(r"entry g (xs: [n]i64) : ([n]i64, [n]i64) = (xs with [0] = 1, xs)", Target::Gpu);
    assert!(text.contains("(copy)"), "{text}");
    assert!(!text.contains("(in place)"), "{text}");
}

#[test]
fn gpu_memory_printout() {
    expect![[r#"
        threshold f.suff_intra_par_0 = 128
        threshold f.suff_outer_par_0 = 32768

        entry f [n_0] [m_1] (xss_2: [n_0][m_1]f32 @ mem_0 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}) : [n_0]f32 =
          let t_3: [n_0]f32 @ ?mem_1 -> {offset: 0; strides: [1]; shape: [n_0]} = version n_0 >= threshold f.suff_outer_par_0 then
              let mem_2: global = alloc n_0 f32
              let outer_4: [n_0]f32 @ mem_2 -> {offset: 0; strides: [1]; shape: [n_0]} = segmap@grid (i_5 < n_0) [chosen]
                body ->
                  let xs_6: [m_1]f32 @ mem_0 -> {offset: m_1*i_5; strides: [1]; shape: [m_1]} = xss_2[i_5]
                  let t_7: f32 = reduce@seq 0.0f32 xs_6 \(x_8: f32) (y_9: f32) ->
                      let t_10: f32 = add.f32 x_8 y_9
                      in t_10
                  in t_7
              in outer_4
            else
              let versions_11: [n_0]f32 @ ?mem_3 -> {offset: 0; strides: [1]; shape: [n_0]} = version n_0 >= threshold f.suff_intra_par_0 then
                  let mem_4: global = alloc n_0 f32
                  let intra_12: [n_0]f32 @ mem_4 -> {offset: 0; strides: [1]; shape: [n_0]} = segmap@group (i_13 < n_0) [chosen]
                    body ->
                      let xs_14: [m_1]f32 @ mem_0 -> {offset: m_1*i_13; strides: [1]; shape: [m_1]} = xss_2[i_13]
                      let t_15: f32 = segred@thread (i_16 < m_1) [chosen]
                        op (commutative) 0.0f32 \(x_17: f32) (y_18: f32) ->
                            let t_19: f32 = add.f32 x_17 y_18
                            in t_19
                        body ->
                          let x_20: f32 = xs_14[i_16]
                          in x_20
                      in t_15
                  in intra_12
                else
                  let mem_5: global = alloc n_0 f32
                  let t_21: [n_0]f32 @ mem_5 -> {offset: 0; strides: [1]; shape: [n_0]} = segred@grid (i_22 < n_0, i_23 < m_1) [chosen]
                    op (commutative) 0.0f32 \(x_24: f32) (y_25: f32) ->
                        let t_26: f32 = add.f32 x_24 y_25
                        in t_26
                    body ->
                      let xss_27: [m_1]f32 @ mem_0 -> {offset: m_1*i_22; strides: [1]; shape: [m_1]} = xss_2[i_22]
                      let x_28: f32 = xss_27[i_23]
                      in x_28
                  in t_21
              in versions_11
          in t_3
    "#]]
    .assert_eq(&gpu_mem(
        "entry f (xss: [n][m]f32) : [n]f32 = map (\\xs -> reduce (+) 0 xs) xss",
        Target::Cpu,
    ));
}
