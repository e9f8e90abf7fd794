//! Tests of name resolution, inference and diagnostics, through the public queries.

use expect_test::{Expect, expect};

use crate::{RootDatabase, file_diagnostics, pretty_file};

/// Sets up files from a fixture: `--- /path.weft` lines separate files; without
/// one, the text is `/main.weft`.
fn db_with(fixture: &str) -> RootDatabase {
    let mut db = RootDatabase::default();
    let mut current: Option<(String, String)> = None;
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("--- /") {
            if let Some((path, text)) = current.take() {
                db.set_file(&path, &text);
            }
            current = Some((path.trim().to_owned(), String::new()));
            continue;
        }
        let entry = current.get_or_insert_with(|| ("main.weft".to_owned(), String::new()));
        entry.1.push_str(line);
        entry.1.push('\n');
    }
    if let Some((path, text)) = current {
        db.set_file(&path, &text);
    }
    db
}

fn check_types(fixture: &str, expect: Expect) {
    let db = db_with(fixture);
    let file = db.file("main.weft").expect("fixture has /main.weft");
    let mut out = pretty_file(&db, file);
    for diagnostic in file_diagnostics(&db, file) {
        out.push_str(&format!(
            "{} {:?}: {:?}\n",
            diagnostic.code(),
            diagnostic.range,
            diagnostic.kind
        ));
    }
    expect.assert_eq(&out);
}

#[test]
fn matmul_has_the_types_of_the_spec() {
    check_types(
        r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry matmul (a: [n][m]f32) (b: [m][p]f32) : [n][p]f32 =
  map (\row -> map (\col -> dot row col) (transpose b)) a
entry scale (xs: [n]f32) (a: f32) : [n]f32 = map (\x -> a * x + 1) xs
"#,
        expect![[r#"
            def dot : [n]f32 -> [n]f32 -> f32
              param xs : [n]f32
              param ys : [n]f32
            entry matmul : [n][m]f32 -> [m][p]f32 -> [n][p]f32
              param a : [n][m]f32
              param b : [m][p]f32
              lambda row : [m]f32
              lambda col : [m]f32
            entry scale : [n]f32 -> f32 -> [n]f32
              param xs : [n]f32
              param a : f32
              lambda x : f32
        "#]],
    );
}

#[test]
fn sizes_from_builtins_and_lets() {
    check_types(
        r#"
def f (n: i64) (m: i64) = iota (n * m)
def g (xs: [n]f32) = let k = n / 2 in take k xs
def h (xs: [n]i32) = split 4 xs
def c (xs: [n]i32) (ys: [m]i32) = xs ++ ys ++ xs
entry grid (n: i64) (m: i64) : [n][m]i64 = unflatten n m (iota (n * m))
"#,
        expect![[r#"
            def f : (n: i64) -> (m: i64) -> [m*n]i64
              param n : i64
              param m : i64
            def g : [n]f32 -> [n/2]f32
              param xs : [n]f32
              let k : i64
            def h : [n]i32 -> [n/4][4]i32
              param xs : [n]i32
            def c : [n]i32 -> [m]i32 -> [m + 2*n]i32
              param xs : [n]i32
              param ys : [m]i32
            entry grid : (n: i64) -> (m: i64) -> [n][m]i64
              param n : i64
              param m : i64
        "#]],
    );
}

#[test]
fn unsuffixed_literals_default_per_def() {
    check_types(
        r#"
def a = 1
def b = 2.5
def c (x: i64) = x + 1
def d (x: f64) = x * 2
"#,
        expect![[r#"
            def a : i32
            def b : f32
            def c : i64 -> i64
              param x : i64
            def d : f64 -> f64
              param x : f64
        "#]],
    );
}

#[test]
fn if_branches_of_different_sizes_are_unknown() {
    check_types(
        r#"
def f (b: bool) (xs: [n]f32) (ys: [m]f32) = if b then xs else ys
def g (xs: [n]f32) = loop acc = xs for i < 3 do acc ++ acc
def h (xs: [n]f32) = loop acc = xs for i < 3 do map (+1) acc
"#,
        expect![[r#"
            def f : bool -> [n]f32 -> [m]f32 -> ?[k].[k]f32
              param b : bool
              param xs : [n]f32
              param ys : [m]f32
            def g : [n]f32 -> ?[k].[k]f32
              param xs : [n]f32
              let acc : [?1]f32
              let i : i64
            def h : [n]f32 -> [n]f32
              param xs : [n]f32
              let acc : [n]f32
              let i : i64
        "#]],
    );
}

#[test]
fn editing_one_def_does_not_reinfer_the_others() {
    let mut db = db_with(
        r#"
def a (x: i32) : i32 = x + 1
def b (x: i32) = a x * 2
def c (xs: [n]f32) : f32 = reduce (+) 0 xs
"#,
    );
    let file = db.file("main.weft").unwrap();
    let _ = file_diagnostics(&db, file);
    db.enable_log();
    db.set_file("main.weft", "\ndef a (x: i32) : i32 = x + 100\ndef b (x: i32) = a x * 2\ndef c (xs: [n]f32) : f32 = reduce (+) 0 xs\n");
    let _ = file_diagnostics(&db, file);
    let infers: Vec<String> =
        db.take_log().into_iter().filter(|e| e.starts_with("infer(")).collect();
    assert_eq!(infers.len(), 1, "only `a` is re-inferred: {infers:?}");
}

#[test]
fn reduce_by_index_and_with_have_the_types_of_the_spec() {
    check_types(
        r#"
def hist (bins: [m]i32) (is: [n]i64) (vs: [n]i32) = reduce_by_index bins (+) 0 is vs
def set (xs: [n]f32) (i: i64) (x: f32) = xs with [i] = x
def set_row (a: [n][m]f32) (r: [m]f32) = a with [0] = r with [1, 2] = 5
"#,
        expect![[r#"
            def hist : [m]i32 -> [n]i64 -> [n]i32 -> [m]i32
              param bins : [m]i32
              param is : [n]i64
              param vs : [n]i32
            def set : [n]f32 -> i64 -> f32 -> [n]f32
              param xs : [n]f32
              param i : i64
              param x : f32
            def set_row : [n][m]f32 -> [m]f32 -> [n][m]f32
              param a : [n][m]f32
              param r : [m]f32
        "#]],
    );
}

#[test]
fn tuple_parameters_pipes_local_functions_and_for_in_loops() {
    check_types(
        "def f (d: f32, _: i64) : f32 = d
def g ((a, b): (i32, i32)) = a + b
entry e (xs: [n]f32) : f32 =
  let sq x = x * x
  let add (a: f32) (b: f32) : f32 = a + b
  let s = xs |> map sq |> reduce add 0
  let t = loop acc = 0 for (x, i) in zip xs (iota n) do acc + f (x, i)
  in f32.sqrt <| s + t + f32 (g (1, 2))
",
        expect![[r#"
            def f : (f32, i64) -> f32
              let d : f32
            def g : (i32, i32) -> i32
              let a : i32
              let b : i32
            entry e : [n]f32 -> f32
              param xs : [n]f32
              let sq : f32 -> f32
              lambda x : f32
              let add : f32 -> f32 -> f32
              let a : f32
              let b : f32
              let s : f32
              let t : f32
              let acc : f32
              let x : f32
              let i : i64
        "#]],
    );
}

#[test]
fn records_have_field_types_in_name_order() {
    check_types(
        "type vec2 = {y: f32, x: f32}
def add ({x = x1, y = y1}: vec2) ({x, y}: vec2) : vec2 = {y = y1 + y, x = x1 + x}
def e (xs: [n]f32) : [n]{x: f32, y: f32} =
  let vs = map (\\x -> {x, y = 2 * x}) xs
  in map (\\v -> add v {x = v.x, y = (v).y}) vs
",
        expect![[r#"
            type vec2 : {x: f32, y: f32}
            def add : {x: f32, y: f32} -> {x: f32, y: f32} -> {x: f32, y: f32}
              let x1 : f32
              let y1 : f32
              let x : f32
              let y : f32
            def e : [n]f32 -> [n]{x: f32, y: f32}
              param xs : [n]f32
              let vs : [n]{x: f32, y: f32}
              lambda x : f32
              lambda v : {x: f32, y: f32}
        "#]],
    );
}

#[test]
fn the_prelude_checks_without_errors() {
    use crate::Db as _;
    let db = RootDatabase::default();
    let diagnostics = file_diagnostics(&db, db.prelude());
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}

#[test]
fn prelude_names_resolve_and_are_shadowed_by_the_file() {
    check_types(
        "def rotate (x: i32) : i32 = x
entry e (xs: [n]f32) : (f32, i32, [n]f32) = (f32.sum xs, rotate 1, tabulate n (\\i -> f32.i64 i))
",
        expect![[r#"
            def rotate : i32 -> i32
              param x : i32
            entry e : [n]f32 -> (f32, i32, [n]f32)
              param xs : [n]f32
              lambda i : i64
        "#]],
    );
}

#[test]
fn field_sections_take_a_field() {
    check_types(
        "def f (ps: [3]{x: f32, y: i32}) : [3]i32 = map (.y) ps
",
        expect![[r#"
            def f : [3]{x: f32, y: i32} -> [3]i32
              param ps : [3]{x: f32, y: i32}
        "#]],
    );
}

#[test]
fn duplicates_are_counted_per_name_and_namespace() {
    let db = db_with(
        "def f (x: i32) : i32 = x\ntype f = i32\ndef f (x: i32) : i32 = x\ndef g (x: i32) : i32 = x\ntype f = f32\ndef f (x: i32) : i32 = x\n",
    );
    let file = db.file("main.weft").expect("fixture has /main.weft");
    let dups: Vec<String> = crate::item_tree(&db, file)
        .defs
        .iter()
        .map(|d| format!("{} {:?} {}", d.name.as_str(), d.kind, d.dup))
        .collect();
    expect![[r#"
        f Def 0
        f TypeAlias 0
        f Def 1
        g Def 0
        f TypeAlias 1
        f Def 2"#]]
    .assert_eq(&dups.join("\n"));
    let codes: Vec<_> = file_diagnostics(&db, file).iter().map(|d| d.code()).collect();
    assert_eq!(codes, ["duplicate-definition"; 3]);
}

#[test]
fn anonymous_sizes_are_existential_in_results_and_implicit_in_parameters() {
    check_types(
        r#"
entry positives (xs: []i32) (ys: [][]f32) : []i32 = filter (\x -> x > 0) xs
"#,
        expect![[r#"
            entry positives : [#1]i32 -> [#2][#3]f32 -> ?[k].[k]i32
              param xs : [#1]i32
              param ys : [#2][#3]f32
              lambda x : i32
        "#]],
    );
}

#[test]
fn small_type_literals() {
    check_types(
        r#"
def a = 7u8 + 1
def b = 2.5f16 * 2
def c (x: i16) = x >> 1
def d (x: u8) = f32.u8 x
def e (y: f16) (x: f16) = f16.atan2 y x
"#,
        expect![[r#"
            def a : u8
            def b : f16
            def c : i16 -> i16
              param x : i16
            def d : u8 -> f32
              param x : u8
            def e : f16 -> f16 -> f16
              param y : f16
              param x : f16
        "#]],
    );
}

#[test]
fn an_existential_result_is_a_fresh_unknown_size_at_each_call() {
    check_types(
        r#"
def evens (xs: [n]i64) : ?[k].[k]i64 =
  let c = reduce (+) 0 (map (\x -> 1 - x % 2) xs)
  in take c (filter (\x -> x % 2 == 0) xs)
def both (xs: [n]i64) =
  let a = evens xs
  let b = evens xs
  in (a, b)
"#,
        expect![[r#"
            def evens : [n]i64 -> ?[k].[k]i64
              param xs : [n]i64
              let c : i64
              lambda x : i64
              lambda x : i64
            def both : [n]i64 -> ?[k][m].([k]i64, [m]i64)
              param xs : [n]i64
              let a : [?1]i64
              let b : [?2]i64
        "#]],
    );
}
