//! The front end's diagnostics in words (syntax, names, imports, types, sizes and
//! levels): each test checks what `weft check` prints for a fixture, with the quoted
//! text of every range, related place and help.

use expect_test::{Expect, expect};

use crate::tests::fixture;

fn check_diagnostics(text: &str, expect: Expect) {
    let fixture = fixture(text);
    let text = fixture.text("main.weft");
    let mut out = String::new();
    for diagnostic in fixture.analysis.front_end_diagnostics("main.weft").unwrap() {
        let range = diagnostic.range;
        let snippet = &text[usize::from(range.start())..usize::from(range.end())];
        out.push_str(&format!("{} `{snippet}`: {}\n", diagnostic.code, diagnostic.message));
        for related in &diagnostic.related {
            let snippet =
                &text[usize::from(related.range.start())..usize::from(related.range.end())];
            out.push_str(&format!("  related `{snippet}`: {}\n", related.message));
        }
        if let Some(help) = &diagnostic.help {
            out.push_str(&format!("  help: {help}\n"));
        }
    }
    expect.assert_eq(&out);
}

#[test]
fn size_mismatch_names_both_arrays() {
    check_diagnostics(
        r#"
def f (xs: [n]f32) (ys: [m]f32) = map2 (+) xs ys
"#,
        expect![[r#"
            size-mismatch `ys`: size mismatch: `xs` has size n but `ys` has size m
              related `xs`: `xs` fixes the size n here
        "#]],
    );
}

#[test]
fn errors_in_one_def_do_not_hide_another() {
    check_diagnostics(
        r#"
def bad (x: i32) : f32 = x + true
def good (x: f32) : f32 = x * 2
def also_bad = undefined_thing 1
"#,
        expect![[r#"
            type-mismatch `x + true`: type mismatch: expected `f32`, but `x + true` has type `i32`
            type-mismatch `true`: type mismatch: expected `i32`, but `true` has type `bool`
            unresolved-name `undefined_thing`: cannot find `undefined_thing` in this scope
        "#]],
    );
}

#[test]
fn address_space_errors_explain_their_reasons() {
    // The chain: where the `local` label comes from, the bindings it flows through,
    // and the context that cannot hold it.
    check_diagnostics(
        r#"
entry esc (xss: [n][m]f32) : [n][m]f32 =
  map@group (\row -> let t = to_local (map@thread (\x -> x + 1) row) in let u = t in u) xss
entry grid (xss: [n][m]f32) : [n]f32 =
  map@grid (\row -> reduce@seq (+) 0 (to_local row)) xss
"#,
        expect![[r#"
            local-escapes-group `to_local (map@thread (\x -> x + 1) row)`: this local array escapes its work-group: a `map@group` result lives in global memory, after its work-group has ended: only {global}, but `u` may point to local memory (from `to_local`)
              related `to_local (map@thread (\x -> x + 1) row)`: local: materialised by `to_local` for the work-items of one work-group
              related `t`: flows through `t`
              related `u`: flows through `u`
              related `map@group`: a `map@group` result lives in global memory, after its work-group has ended: only {global}
              help: return a value computed from the local array (say, a `reduce@group` over it), or drop the `to_local`
            to-local-outside-group `to_local`: `to_local` outside a `map@group`: in a `map@grid` body no work-group shares memory: only {global, private}, but `to_local` points to local memory
              related `map@grid`: in a `map@grid` body no work-group shares memory: only {global, private}
              help: move it into the body of a `map@group`, or use `to_private` for a work-item's own copy
        "#]],
    );
}

#[test]
fn local_array_escaping_through_an_if_branch_after_a_let() {
    // The branch sees the `let` bound before the `if`.
    check_diagnostics(
        r#"
entry pick (a: [n][m]f32) (c: bool) : [n][m]f32 =
  map@group (\row -> let l = to_local row in if c then l else map@thread (\x -> x) l) a
"#,
        expect![[r#"
            local-escapes-group `to_local row`: this local array escapes its work-group: a `map@group` result lives in global memory, after its work-group has ended: only {global}, but `l` may point to local memory (from `to_local`)
              related `to_local row`: local: materialised by `to_local` for the work-items of one work-group
              related `l`: flows through `l`
              related `map@group`: a `map@group` result lives in global memory, after its work-group has ended: only {global}
              help: return a value computed from the local array (say, a `reduce@group` over it), or drop the `to_local`
        "#]],
    );
}

#[test]
fn levels_are_checked() {
    check_diagnostics(
        r#"
entry e (xs: [n]f32) : [n]f32 = map@thread (\x -> x) xs
entry g (xss: [n][m]f32) : [n]f32 =
  map@group (\row -> reduce@group (+) 0 (map@thread (\x -> reduce@grid (+) 0 [x]) row)) xss
entry h (xs: [n]f32) : [n]f32 = to_local xs
"#,
        expect![[r#"
            illegal-level `map@thread`: `map@thread` is not allowed at host level; legal here: `map@grid`, `map@group`, `reduce@grid`, `scan@grid`
            illegal-level `reduce@grid`: `reduce@grid` is not allowed in a sequential body (`@grid`, `@thread` or `@seq`); legal here: `@seq` only
            to-local-outside-group `to_local`: `to_local` outside a `map@group`: outside every combinator no work-group shares memory: only {global, private}, but `to_local` points to local memory
              related `to_local`: outside every combinator no work-group shares memory: only {global, private}
              help: move it into the body of a `map@group`, or use `to_private` for a work-item's own copy
        "#]],
    );
}

#[test]
fn recursion_and_imports() {
    check_diagnostics(
        r#"
--- /main.weft
import "lib/util"
import "missing"
def f (x: i32) : i32 = g x
def g (x: i32) : i32 = f (double x)
--- /lib/util.weft
def double (x: i32) : i32 = x * 2
"#,
        expect![[r#"
            unresolved-import `import "missing"`: cannot find `missing.weft` for `import "missing"`
            recursion-cycle `f`: recursive calls: `f` -> `g` -> `f`
              help: Weft has no recursion; use `loop`
            recursion-cycle `g`: recursive calls: `g` -> `f` -> `g`
              help: Weft has no recursion; use `loop`
        "#]],
    );
}

#[test]
fn literals_out_of_range() {
    check_diagnostics(
        r#"
def a : i32 = 2147483648
def b : i32 = -2147483648
def c : u32 = 0x1_0000_0000
def d = 0xfff32
"#,
        expect![[r#"
            literal-out-of-range `2147483648`: literal `2147483648` is out of range for `i32`
            literal-out-of-range `0x1_0000_0000`: literal `0x1_0000_0000` is out of range for `u32`
        "#]],
    );
}

#[test]
fn small_type_literals() {
    check_diagnostics(
        r#"
def a : u8 = 255
def b : u8 = 256
def c = -129i8
def d = 0xffffu16
def e = 0x1_0000u16
def f : i16 = -32768
def g = 65504f16
def h = 65520.0f16
def i : f16 = 1e5
def j = 1.5u8
def k = 0x1f16
"#,
        expect![[r#"
            literal-out-of-range `256`: literal `256` is out of range for `u8`
            literal-out-of-range `-129i8`: literal `-129i8` is out of range for `i8`
            literal-out-of-range `0x1_0000u16`: literal `0x1_0000u16` is out of range for `u16`
            literal-out-of-range `65520.0f16`: literal `65520.0f16` is out of range for `f16`
            literal-out-of-range `1e5`: literal `1e5` is out of range for `f16`
            bad-literal `1.5u8`: invalid suffix `u8` on float literal `1.5u8`
        "#]],
    );
}

#[test]
fn with_errors_name_the_indices_the_value_and_slices() {
    check_diagnostics(
        r#"
def a (xs: [n]f32) = xs with [0, 1] = 2
def b (xs: [n][m]f32) (r: [n]f32) = xs with [0] = r
def c (xs: [n]f32) = xs with [1:2] = 2
def d (xs: [n]f32) = xs with [0] = true
def e (x: f32) = x with [0] = 1
def f (is: [n]i64) (vs: [k]i32) (h: [m]i32) = reduce_by_index h (+) 0 is vs
"#,
        expect![[r#"
            too-many-indices `xs with [0, 1] = 2`: 2 indices into a value of type `[n]f32`, which has 1 dimension
            size-mismatch `r`: size mismatch: expected size m, but `r` has size n
            slice-in-update `1:2`: `with [...] = v` replaces one element or row: write indices, not a slice
            type-mismatch `true`: type mismatch: expected `f32`, but `true` has type `bool`
            not-an-array `x`: `x` is indexed but has type `f32`
            size-mismatch `vs`: size mismatch: `is` has size n but `vs` has size k
              related `is`: `is` fixes the size n here
        "#]],
    );
}

/// A lambda with an unannotated parameter has a function type, whatever type is
/// expected of it: these checked with no error and then failed in the compiler.
#[test]
fn lambdas_are_not_accepted_at_non_function_types() {
    check_diagnostics(
        r#"
entry a (s: i32) : i32 = \x -> 1i32
entry b (s: i32) : [3]f32 = (\x -> s)
def c = map (\x -> x) (\y -> y)
"#,
        expect![[r#"
            type-mismatch `\x -> 1i32`: type mismatch: expected `i32`, but `\x -> 1i32` has type `'a -> i32`
            type-mismatch `\x -> s`: type mismatch: expected `[3]f32`, but `\x -> s` has type `'a -> i32`
            type-mismatch `\y -> y`: type mismatch: expected `['s0]'a`, but `\y -> y` has type `'b -> 'b`
        "#]],
    );
}

#[test]
fn for_in_over_a_non_array_is_one_error() {
    check_diagnostics(
        "entry e (k: i32) : i32 = loop acc = 0 for x in k do acc + x",
        expect![[r#"
            not-an-array `k`: `k` is indexed but has type `i32`
        "#]],
    );
}

#[test]
fn a_malformed_parameter_is_one_error_and_callers_still_check() {
    check_diagnostics(
        "def f (d: f32, i) : f32 = d
def g (x: f32) (y: ) : f32 = x
entry main (x: f32) : f32 = f (x, 2) + g x 1
entry other (x: f32) : i32 = x
",
        expect![[r#"
            syntax-error `)`: expected `:`, found `)`
            syntax-error `)`: expected a type, found `)`
            type-mismatch `x`: type mismatch: expected `i32`, but `x` has type `f32`
        "#]],
    );
}

#[test]
fn record_errors_name_the_field() {
    check_diagnostics(
        "type t = {x: f32, x: i32}
def a (p: {x: f32, y: f32}) : f32 = p.z
def b (k: f32) : f32 = k.x
def c = {x = 1, x = 2}
def d = let {x, y} = {x = 1, y = 2, z = 3} in x
def f = \\p -> p.x
",
        expect![[r#"
            duplicate-field `t`: field `x` is written twice in one record type
            no-such-field `p.z`: no field `z` in a record of type `{x: f32, y: f32}`
            not-a-record `k`: `k` has no fields (it has type `f32`), so no `.x`
            duplicate-field `x`: field `x` is written twice in one record
            type-mismatch `{x, y}`: type mismatch: expected `{x: 'a, y: 'b}`, but `{x, y}` has type `{x: i32, y: i32, z: i32}`
            not-a-record `p`: the type of `p` must be known to take its field `x`; add a type annotation
        "#]],
    );
}

#[test]
fn unknown_futhark_and_numpy_names_get_the_weft_spelling() {
    check_diagnostics(
        "def a (xs: [3]f32) : f32 = sum xs
def b (x: f32) : f32 = f32.atan x
def c = tabluate 3 (\\i -> i)
def d (xs: [3]f32) = filter (\\x -> x > 0) xs
def e (x: i64) : f32 = f32.from_i64 x + f32.maximun [x]
def f (xs: [3]f32) = hist xs
def foo.bar (x: i32) : i32 = x
",
        expect![[r#"
            unresolved-name `sum`: cannot find `sum` in this scope
              help: Weft spells this `f32.sum`, `i32.sum`, ... (one per type), or `reduce (+) 0`
            unresolved-name `f32.atan`: cannot find `f32.atan` in this scope
              help: no `atan` yet: `f32.atan2 x 1` is the arctangent of `x`
            unresolved-name `tabluate`: cannot find `tabluate` in this scope
              help: a name with a similar spelling exists: `tabulate`
            unresolved-name `f32.from_i64`: cannot find `f32.from_i64` in this scope
              help: Weft spells this `f32.i64` (or `f32 x`)
            unresolved-name `f32.maximun`: cannot find `f32.maximun` in this scope
              help: a name with a similar spelling exists: `f32.maximum`
            unresolved-name `hist`: cannot find `hist` in this scope
              help: Weft spells this `reduce_by_index dest op ne is vs` (Futhark's `hist`)
            bad-namespace `foo.bar`: `foo.bar`: only a scalar type's namespace takes definitions (`def f32.sum`), and `foo` is not a scalar type
        "#]],
    );
}

#[test]
fn parameter_sizes_over_earlier_dimensions_are_checked_at_the_call() {
    check_diagnostics(
        "def layer [n] [h] (xs: [n]f32) (w: [n + 1][h]f32) : [h]f32 = w[0]
def ok (xs: [3]f32) (w: [4][2]f32) : [2]f32 = layer xs w
def bad (xs: [3]f32) (w: [3][2]f32) : [2]f32 = layer xs w
def later (w: [n + 1]f32) (xs: [n]f32) : f32 = xs[0]
",
        expect![[r#"
            size-mismatch `w`: size mismatch: expected size 4, but `w` has size 3
            uninferable-size `[n + 1]f32`: this parameter's size uses `n`, which is neither an earlier `i64` parameter nor a whole dimension of an earlier parameter, so it cannot be inferred from the argument
        "#]],
    );
}

#[test]
fn a_size_parameter_no_parameter_type_names_is_an_error() {
    // A call could learn `k` only from the type its result is given; the interpreter
    // and the compiler have no value for it (an internal error before).
    check_diagnostics(
        "def fill [k] (x: i32) : [k]i32 = replicate k x
def ok [k] (xs: [k]i32) : [k]i32 = xs
def ok_too (n: i64) (x: i32) : [n]i32 = replicate n x
",
        expect![[r#"
            unbound-size-param `fill`: the size parameter `k` appears in no parameter's type, so a call cannot infer it from its arguments; take it as an `i64` parameter instead (`(k: i64)`)
        "#]],
    );
}

#[test]
fn record_updates_keep_the_type_and_check_the_value() {
    check_diagnostics(
        "type particle = {pos: {x: f32, y: f32}, mass: f32}
def ok (p: particle) : particle = p with pos.x = 1 with mass = 2
def no_field (p: particle) : particle = p with pos.z = 1
def wrong_type (p: particle) : particle = p with mass = true
def not_record (x: f32) : f32 = x with y = 1
",
        expect![[r#"
            no-such-field `p with pos.z = 1`: no field `z` in a record of type `{x: f32, y: f32}`
            type-mismatch `true`: type mismatch: expected `f32`, but `true` has type `bool`
            not-a-record `x`: `x` has no fields (it has type `f32`), so no `.y`
        "#]],
    );
}

#[test]
fn an_existential_result_is_a_fresh_unknown_size_at_each_call() {
    check_diagnostics(
        r#"
def evens (xs: [n]i64) : ?[k].[k]i64 = filter (\x -> x % 2 == 0) xs
def pairs (xs: [n]i64) = map2 (+) (evens xs) (evens xs)
"#,
        expect![[r#"
            size-mismatch `evens xs`: size mismatch: `evens xs` has an unknown size, known only at run time, and so has the array it must match; they may differ
              help: name one size and coerce the other to it: `let k = length a in map2 f a (b :> [k]t)` (checked at run time)
        "#]],
    );
}

#[test]
fn an_existential_outside_a_return_type_is_an_error() {
    check_diagnostics(
        r#"
def f (xs: ?[k].[k]i32) : i32 = reduce (+) 0 xs
"#,
        expect![[r#"
            misplaced-existential `?[k].[k]i32`: `?[k].` (sizes the value determines) is allowed only in a return type
              help: name the size with a parameter (`[n]t`), or write `[]t`
        "#]],
    );
}

#[test]
fn a_declared_size_still_has_to_match() {
    check_diagnostics(
        r#"
def f (xs: [n]i32) : [n]i32 = filter (\x -> x > 0) xs
"#,
        expect![[r#"
            size-mismatch `filter (\x -> x > 0) xs`: size mismatch: expected size n, but `filter (\x -> x > 0) xs` has an unknown size
              help: an unknown size cannot be used where a known one is required: bind the size with a `let`, or coerce with `:>`
        "#]],
    );
}
