//! Tests of elaboration (printed core IR) and of the interpreter's semantics
//! (LANGUAGE.md §4 and §5), each through Weft source.

use expect_test::{Expect, expect};
use weft_hir::RootDatabase;

use crate::{CheckedFile, lower_file, pretty_program, render_error, run_entry, validate};

fn program(src: &str) -> (RootDatabase, crate::Program) {
    let mut db = RootDatabase::default();
    let file = db.set_file("test.weft", src);
    let checked = CheckedFile::new(&db, file).expect("the test program has no errors");
    let program = lower_file(&db, checked).expect("elaboration succeeds");
    assert_eq!(validate(&program), Vec::new());
    (db, program)
}

/// Prints the core IR of every entry of `src`.
fn check_core(src: &str, expect: Expect) {
    let (_, program) = program(src);
    expect.assert_eq(&pretty_program(&program));
}

/// Runs the first entry of `src` on textual `inputs`: its results, or its error with
/// the source position.
fn check_run(src: &str, inputs: &str, expect: Expect) {
    let (db, program) = program(src);
    let entry = *program.entries.first().expect("an entry");
    let inputs = weft_values::parse_values(inputs).expect("valid inputs");
    let out = match run_entry(&program, entry, inputs) {
        Ok(values) => weft_values::print_values(&values),
        Err(error) => format!("error: {}\n", render_error(&db, &error)),
    };
    expect.assert_eq(&out);
}

#[test]
fn map_reduce_is_anf_with_lambdas() {
    check_core(
        r#"
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
"#,
        expect![[r#"
            entry dot [n_0] (xs_1: [n_0]f32) (ys_2: [n_0]f32) : f32 =
              let t_3: [n_0]f32 = map (xs_1 ys_2) \(x_4: f32) (y_5: f32) : f32 ->
                  let t_6: f32 = mul.f32 x_4 y_5
                  in t_6
              let t_7: f32 = reduce 0.0f32 t_3 \(x_8: f32) (y_9: f32) : f32 ->
                  let t_10: f32 = add.f32 x_8 y_9
                  in t_10
              in t_7
        "#]],
    );
}

#[test]
fn first_order_defs_stay_size_polymorphic_functions() {
    check_core(
        r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry sq (xs: [n]f32) : f32 = dot xs xs
"#,
        expect![[r#"
            def dot [n_0] (xs_1: [n_0]f32) (ys_2: [n_0]f32) : f32 =
              let t_3: [n_0]f32 = map (xs_1 ys_2) \(x_4: f32) (y_5: f32) : f32 ->
                  let t_6: f32 = mul.f32 x_4 y_5
                  in t_6
              let t_7: f32 = reduce 0.0f32 t_3 \(x_8: f32) (y_9: f32) : f32 ->
                  let t_10: f32 = add.f32 x_8 y_9
                  in t_10
              in t_7

            entry sq [n_0] (xs_1: [n_0]f32) : f32 =
              let t_2: f32 = call dot xs_1 xs_1
              in t_2
        "#]],
    );
}

/// Functions are elaborated each on its own (a salsa query), so an edit inside one def
/// re-elaborates its function alone: its callers read only its signature, which the
/// edit left as it was. The program put together again is the edited one.
#[test]
fn an_edit_in_one_def_re_elaborates_its_function_alone() {
    let src = "def half (x: f32) : f32 = x / 2f32\n\
               def twice (x: f32) : f32 = half x * 4f32\n\
               entry main (x: f32) : f32 = twice x + half x\n";
    let mut db = RootDatabase::default();
    let file = db.set_file("test.weft", src);
    let checked = CheckedFile::new(&db, file).expect("no errors");
    let _ = lower_file(&db, checked).expect("elaborates");
    db.enable_log();
    let file = db.set_file("test.weft", &src.replace("4f32", "5f32"));
    let checked = CheckedFile::new(&db, file).expect("no errors");
    let program = lower_file(&db, checked).expect("elaborates");
    let log = db.take_log();
    let elaborated: Vec<&String> = log.iter().filter(|q| q.starts_with("elab_function(")).collect();
    assert_eq!(elaborated.len(), 1, "{log:#?}");
    assert!(pretty_program(&program).contains("mul.f32 t_1 5.0f32"));
}

#[test]
fn an_entry_restricted_program_keeps_only_what_it_calls() {
    let (_, program) = program(
        r#"
def half (x: f32) : f32 = x / 2f32
def unused (x: f32) : f32 = x + 1f32
def twice (x: f32) : f32 = half x * 4f32
entry a (x: f32) : f32 = unused x
entry b (x: f32) : f32 = twice x + half x
"#,
    );
    let b = program.entries[1];
    let (restricted, entry) = program.restricted_to_entry(b);
    assert_eq!(validate(&restricted), Vec::new());
    assert_eq!(restricted.entries, vec![entry]);
    expect![[r#"
        def half (x_0: f32) : f32 =
          let t_1: f32 = div.f32 x_0 2.0f32
          in t_1

        def twice (x_0: f32) : f32 =
          let t_1: f32 = call half x_0
          let t_2: f32 = mul.f32 t_1 4.0f32
          in t_2

        entry b (x_0: f32) : f32 =
          let t_1: f32 = call twice x_0
          let t_2: f32 = call half x_0
          let t_3: f32 = add.f32 t_1 t_2
          in t_3
    "#]]
    .assert_eq(&pretty_program(&restricted));
    let inputs = weft_values::parse_values("3f32").expect("a value");
    let whole = run_entry(&program, b, inputs.clone()).expect("runs");
    assert_eq!(run_entry(&restricted, entry, inputs).expect("runs"), whole);
}

#[test]
fn views_have_symbolic_sizes() {
    check_core(
        r#"
entry v (k: i64) (xs: [n]i32) : [n]i32 = drop k xs ++ take k xs
"#,
        expect![[r#"
            entry v [n_0] (k_1: i64) (xs_2: [n_0]i32) : [n_0]i32 =
              let t_3: [n_0 - k_1]i32 = drop k_1 xs_2
              let t_4: [k_1]i32 = take k_1 xs_2
              let t_5: [n_0]i32 = concat t_3 t_4
              in t_5
        "#]],
    );
}

#[test]
fn short_circuit_becomes_if() {
    check_run(
        r#"
entry f (x: i32) : bool = x != 0 && 10 / x > 1
"#,
        "0i32",
        expect![[r#"
            false
        "#]],
    );
}

#[test]
fn integer_arithmetic_wraps() {
    check_run(
        r#"
entry f (x: i32) (y: u32) (z: i64) : (i32, u32, i64) = (x + 1, y - 1u32, z * 2)
"#,
        "2147483647i32 0u32 9223372036854775807i64",
        expect![[r#"
            -2147483648i32
            4294967295u32
            -2i64
        "#]],
    );
}

#[test]
fn integer_division_truncates_toward_zero() {
    check_run(
        r#"
entry f (x: i32) (y: i32) : (i32, i32, i32, i32) = (x / y, x % y, (-x) / y, (-x) % y)
"#,
        "-7i32 2i32",
        expect![[r#"
            -3i32
            -1i32
            3i32
            1i32
        "#]],
    );
}

#[test]
fn integer_division_by_zero_is_an_error_with_position() {
    check_run(
        r#"
entry f (x: i32) (y: i32) : i32 =
  x / y
"#,
        "1i32 0i32",
        expect![[r#"
            error: test.weft:3:3: integer division by zero
        "#]],
    );
}

#[test]
fn float_to_int_saturates_and_nan_gives_zero() {
    check_run(
        r#"
entry f (x: f32) (y: f32) (z: f32) : (i32, i32, i32, u32) = (i32 x, i32 y, i32 z, u32 y)
"#,
        "1e10f32 -1e10f32 f32.nan",
        expect![[r#"
            2147483647i32
            -2147483648i32
            0i32
            0u32
        "#]],
    );
}

#[test]
fn f32_arithmetic_rounds_in_f32() {
    check_run(
        r#"
entry f (x: f32) (y: f32) : (f32, f64) = (x + y, f64 x + f64 y)
"#,
        "16777216f32 1f32",
        expect![[r#"
            1.6777216e7f32
            1.6777217e7f64
        "#]],
    );
}

#[test]
fn index_out_of_bounds_names_array_index_size_and_position() {
    check_run(
        r#"
entry f (xs: [n]i32) (i: i64) : i32 =
  let y = 1
  in xs[i] + y
"#,
        "[1i32, 2i32, 3i32] 3i64",
        expect![[r#"
            error: test.weft:4:6: index 3 out of bounds for array `xs` of size 3
        "#]],
    );
}

#[test]
fn slice_and_take_out_of_bounds_are_errors() {
    check_run(
        r#"
entry f (xs: [n]i32) (k: i64) : [k]i32 = take k xs
"#,
        "[1i32, 2i32] 3i64",
        expect![[r#"
            error: test.weft:2:42: take 3 out of bounds for array `xs` of size 2
        "#]],
    );
    check_run(
        r#"
entry f (xs: [n]i32) (a: i64) (b: i64) : [b-a]i32 = xs[a:b]
"#,
        "[1i32, 2i32] 1i64 3i64",
        expect![[r#"
            error: test.weft:2:53: slice out of bounds for array `xs` of size 2 (start 1)
        "#]],
    );
}

#[test]
fn scatter_ignores_out_of_range_indices() {
    check_run(
        r#"
entry f (xs: [n]i32) : [n]i32 = scatter xs [-1, 1, 5] [10, 20, 30]
"#,
        "[1i32, 2i32, 3i32]",
        expect![[r#"
            [1i32, 20i32, 3i32]
        "#]],
    );
}

#[test]
fn split_checks_divisibility() {
    check_run(
        r#"
entry f (xs: [n]i32) : [n/2][2]i32 = split 2 xs
"#,
        "[1i32, 2i32, 3i32]",
        expect![[r#"
            error: test.weft:2:38: cannot split array `xs`: size 3 is not divisible by 2
        "#]],
    );
}

#[test]
fn size_coercion_is_checked() {
    check_run(
        r#"
entry f (m: i64) (xs: [n]i32) : [m]i32 = xs :> [m]i32
"#,
        "2i64 [1i32, 2i32, 3i32]",
        expect![[r#"
            error: test.weft:2:42: size coercion of `xs` failed: expected size 2 (`m`) in dimension 0, got 3
        "#]],
    );
}

#[test]
fn arrays_of_tuples_are_tuples_of_arrays() {
    check_run(
        r#"
entry f (xs: [n]i32) (ys: [n]f32) : ([n]f32, [n]i32) =
  unzip (map (\(x, y) -> (y * 2, x + 1)) (zip xs ys))
"#,
        "[1i32, 2i32] [0.5f32, 1.5f32]",
        expect![[r#"
            [1.0f32, 3.0f32]
            [2i32, 3i32]
        "#]],
    );
}

#[test]
fn higher_order_defs_are_specialised() {
    check_run(
        r#"
def twice 'a (f: a -> a) (x: a) : a = f (f x)
entry f (xs: [n]i32) : [n]i32 = map (twice (*3)) xs
"#,
        "[1i32, 2i32]",
        expect![[r#"
            [9i32, 18i32]
        "#]],
    );
}

#[test]
fn entry_inputs_are_checked_against_parameter_sizes() {
    check_run(
        r#"
entry f (xs: [n]i32) (ys: [n]i32) : [n]i32 = map2 (+) xs ys
"#,
        "[1i32, 2i32] [1i32]",
        expect![[r#"
            error: entry `f`: parameter `ys`: expected size 2 (`n`) in dimension 0, got 1
        "#]],
    );
}

#[test]
fn entry_inputs_are_checked_against_parameter_types() {
    check_run(
        r#"
entry f (xs: [n]i32) (y: f32) : [n]i32 = xs
"#,
        "[1i32, 2i32]",
        expect![[r#"
            error: entry `f` takes 2 inputs, but 1 was given
        "#]],
    );
}

/// A left fold of f32 ones stops at 2^24 = 16777216, while the kernels' trees reach
/// the count: `weft test --backend opencl` failed a correct program. The interpreter
/// reduces pairwise (the regrouping LANGUAGE.md allows an associative operator).
#[test]
fn float_reductions_are_pairwise() {
    check_run(
        "entry ones (n: i64) : f32 = reduce (+) 0f32 (replicate n 1f32)\n",
        "17000000i64",
        expect![[r#"
            1.7e7f32
        "#]],
    );
    // Regrouping keeps the order of the elements: a non-commutative operator.
    check_run(
        "entry last (xs: [n]i32) : i32 = reduce (\\a b -> if b == 0 then a else b) 0 xs\n",
        "[1i32, 2i32, 0i32, 4i32, 0i32, 0i32, 7i32, 0i32]",
        expect![[r#"
            7i32
        "#]],
    );
}

#[test]
fn reduce_by_index_combines_into_bins_and_ignores_out_of_range() {
    check_core(
        r#"
entry h (is: [n]i64) (vs: [n]i32) : [3]i32 = reduce_by_index (replicate 3 0) (+) 0 is vs
"#,
        expect![[r#"
            entry h [n_0] (is_1: [n_0]i64) (vs_2: [n_0]i32) : [3]i32 =
              let t_3: [3]i32 = replicate 3i64 0i32
              let t_4: [3]i32 = reduce_by_index t_3 0i32 is_1 vs_2 \(x_5: i32) (y_6: i32) : i32 ->
                  let t_7: i32 = add.i32 x_5 y_6
                  in t_7
              in t_4
        "#]],
    );
    check_run(
        r#"
entry h (is: [n]i64) (vs: [n]i32) : [3]i32 = reduce_by_index [100, 0, 0] (+) 0 is vs
"#,
        "[0i64, 2i64, -1i64, 3i64, 2i64, 0i64] [1i32, 2i32, 4i32, 8i32, 16i32, 32i32]",
        expect![[r#"
            [133i32, 0i32, 18i32]
        "#]],
    );
    check_run(
        r#"
entry h (is: [n]i64) (vs: [n][2]f32) : [2][2]f32 =
  reduce_by_index (replicate 2 [0, 0]) (map2 f32.max) (replicate 2 f32.lowest) is vs
"#,
        "[1i64, 1i64, 0i64] [[1f32, 5f32], [3f32, 2f32], [7f32, -1f32]]",
        expect![[r#"
            [[7.0f32, 0.0f32], [3.0f32, 5.0f32]]
        "#]],
    );
}

#[test]
fn with_replaces_one_element_or_row_and_checks_bounds() {
    check_core(
        r#"
entry u (xs: [n]i32) (i: i64) : [n]i32 = xs with [i] = 7
"#,
        expect![[r#"
            entry u [n_0] (xs_1: [n_0]i32) (i_2: i64) : [n_0]i32 =
              let t_3: [n_0]i32 = xs_1 with [i_2] = 7i32
              in t_3
        "#]],
    );
    check_run(
        r#"
entry u (m: [2][3]i32) (r: [3]i32) : ([2][3]i32, [2][3]i32) = (m with [1, 2] = 9, m with [0] = r)
"#,
        "[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] [7i32, 8i32, 9i32]",
        expect![[r#"
            [[1i32, 2i32, 3i32], [4i32, 5i32, 9i32]]
            [[7i32, 8i32, 9i32], [4i32, 5i32, 6i32]]
        "#]],
    );
    check_run(
        r#"
entry u (n: i64) : [n]i64 = loop acc = replicate n 0 for i < n do acc with [i] = i * i
"#,
        "4i64",
        expect![[r#"
            [0i64, 1i64, 4i64, 9i64]
        "#]],
    );
    check_run(
        r#"
entry u (m: [2][3]i32) (i: i64) : [2][3]i32 = m with [0, i] = 0
"#,
        "[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] 3i64",
        expect![[r#"
            error: test.weft:2:47: index 3 out of bounds for array `m` of size 3
        "#]],
    );
}

/// The operators of every reduction in the first entry, in order.
fn reduction_operators(src: &str) -> Vec<Option<Vec<crate::CommutativeOp>>> {
    let (_, program) = program(src);
    let f = &program.functions[program.entries[0]];
    f.exps
        .iter()
        .filter_map(|(_, exp)| {
            let crate::Exp::Reduce { lambda, .. } = exp else { return None };
            Some(crate::componentwise_operators(f, lambda))
        })
        .collect()
}

#[test]
fn commutative_operators_are_recognised_component_by_component() {
    use crate::CommutativeOp::{Add, Max, Mul};
    let ops = reduction_operators(
        r"entry main (xs: [n]f32) (is: [n]i32) : f32 =
  let a = reduce (+) 0 xs
  let b = reduce (\x y -> y * x) 1 xs
  let (c, d) = reduce (\(p, q) (r, s) -> (p + r, i32.max s q)) (0, 0) (zip xs is)
  let (e, _) = reduce (\(p, q) (r, s) -> (p + s, q + r)) (0, 0) (zip xs xs)
  let f = reduce (-) 0 xs
  in a + b + c + f32 d + e + f",
    );
    assert_eq!(ops, vec![Some(vec![Add]), Some(vec![Mul]), Some(vec![Add, Max]), None, None],);
}

/// The reuse decision of every update in the first entry, in order.
fn update_decisions(src: &str) -> Vec<crate::UpdateReuse> {
    let (_, program) = program(src);
    let f = &program.functions[program.entries[0]];
    let reuse = crate::update_reuse(f);
    let mut updates: Vec<_> = reuse.into_iter().collect();
    updates.sort_by_key(|(exp, _)| exp.into_raw());
    updates.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn updates_of_a_loop_parameter_that_is_dead_afterwards_are_in_place() {
    use crate::UpdateReuse::InPlace;
    // A chain of updates of the parameter, reading it before: all in place.
    let decisions = update_decisions(
        "entry main (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do
    let a = acc with [i] = (if i > 0 then acc[i - 1] else 0) + 1
    in a with [0] = 7",
    );
    assert_eq!(decisions, vec![InPlace, InPlace]);
}

#[test]
fn updates_whose_array_is_still_needed_are_copies() {
    use crate::UpdateReuse::Copied;
    // A parameter of the entry: the caller's memory.
    let decisions =
        update_decisions("entry main (m: [n]i32) : ([n]i32, [n]i32) = (m with [0] = 1, m)");
    assert_eq!(decisions, vec![Copied { used_later: None }]);
    // Read after the update, directly or through a view made before it.
    for src in [
        "entry main (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do
    let b = acc with [i] = 1
    in map2 (+) b acc",
        "entry main (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do
    let r = reverse acc
    let b = acc with [i] = 1
    in map2 (+) b r",
    ] {
        let decisions = update_decisions(src);
        assert!(matches!(decisions.as_slice(), [Copied { used_later: Some(_) }]), "{src}");
    }
}

#[test]
fn scatters_and_histograms_into_a_loop_parameter_are_updates_too() {
    use crate::UpdateReuse::{Copied, InPlace};
    let decisions = update_decisions(
        "entry main (n: i64) (is: [k]i64) (vs: [k]i32) : [n]i32 =
  loop acc = replicate n 0 for _i < 3 do
    let s = scatter acc is vs
    in reduce_by_index s (+) 0 is vs",
    );
    assert_eq!(decisions, vec![InPlace, InPlace]);
    // The values are made from the array being written, but computed into memory of
    // their own: the back end computes them before the scatter writes (in place).
    let src = "entry main (n: i64) (is: [n]i64) : [n]i32 =
  loop acc = replicate n 0 for _i < 3 do scatter acc is (map (\\x -> x + 1) acc)";
    assert_eq!(update_decisions(src), vec![InPlace]);
    assert_eq!(computed_first_names(src).len(), 1);
    // The values share the array's memory (a view of it): they would be read while it
    // is written, so the scatter copies.
    for src in [
        "entry main (n: i64) (is: [n]i64) : [n]i32 =
  loop acc = replicate n 0 for _i < 3 do scatter acc is (reverse acc)",
        "entry main (n: i64) (is: [n]i64) : [n]i32 =
  loop acc = replicate n 0 for _i < 3 do reduce_by_index acc (+) 0 is acc",
    ] {
        assert_eq!(update_decisions(src), vec![Copied { used_later: None }], "{src}");
        assert!(computed_first_names(src).is_empty(), "{src}");
    }
}

/// The names of the operands that each in-place update of the first entry computes
/// first (made from its array), in order.
fn computed_first_names(src: &str) -> Vec<Vec<String>> {
    let (_, program) = program(src);
    let f = &program.functions[program.entries[0]];
    let plan = crate::update_plan(f);
    let mut updates: Vec<_> = plan.computed_first.into_iter().collect();
    updates.sort_by_key(|(exp, _)| exp.into_raw());
    updates
        .into_iter()
        .map(|(_, vars)| vars.iter().map(|v| f.vars[*v].name.to_string()).collect())
        .collect()
}

#[test]
fn scatter_values_computed_from_their_destination_first_are_in_place() {
    use crate::UpdateReuse::{Copied, InPlace};
    // Issue 13's reproducer: the values read the loop's array, then the scatter
    // writes it; nothing reads it afterwards.
    let src = "entry f (n: i64) (xs: [m]i32) : [m]i32 =
  loop xs = xs for i < n do
    let vs = map (\\j -> xs[j] + 1) (iota 2)
    in scatter xs (map (\\j -> j + 2) (iota 2)) vs";
    assert_eq!(update_decisions(src), vec![InPlace]);
    assert_eq!(computed_first_names(src), vec![vec!["vs".to_owned()]]);
    // Indices computed from the array are computed first too; values that are not
    // made from it are left to the back end (fused into the scatter's kernel).
    let src = "entry f (n: i64) (xs: [m]i64) (vs: [2]i64) : [m]i64 =
  loop xs = xs for i < n do
    let is = map (\\j -> xs[j]) (iota 2)
    in scatter xs is vs";
    assert_eq!(update_decisions(src), vec![InPlace]);
    assert_eq!(computed_first_names(src), vec![vec!["is".to_owned()]]);
    // A view of values computed from the array is computed first too.
    let src = "entry f (n: i64) (xs: [m]i32) : [m]i32 =
  loop xs = xs for i < n do scatter xs (iota m) (reverse (map (\\x -> x + 1) xs))";
    assert_eq!(update_decisions(src), vec![InPlace]);
    assert_eq!(computed_first_names(src).len(), 1);
    // Still a copy when the array is read after the scatter.
    let src = "entry f (n: i64) (xs: [m]i32) : [m]i32 =
  loop xs = xs for i < n do
    let vs = map (\\j -> xs[j] + 1) (iota 2)
    let ys = scatter xs (map (\\j -> j + 2) (iota 2)) vs
    in map2 (+) xs ys";
    assert!(matches!(update_decisions(src).as_slice(), [Copied { used_later: Some(_) }]));
    assert!(computed_first_names(src).is_empty());
    // A `with`'s new row made from the array still copies (it is written while read).
    let src = "entry f (n: i64) (xss: [m][k]i32) : [m][k]i32 =
  loop xss = xss for i < n do xss with [0] = map (\\x -> x + 1) xss[1]";
    assert_eq!(update_decisions(src), vec![Copied { used_later: None }]);
}
