//! Random-input specs: parsing, defaults, ranges and determinism.

use expect_test::{Expect, expect};

use crate::random::generate_inputs;
use crate::{Rng, Scalar, Value, parse_random_spec, parse_random_specs, print_values};

fn check_specs(text: &str, expect: Expect) {
    let actual = match parse_random_specs(text) {
        Ok(specs) => specs.iter().map(|spec| format!("{spec}\n")).collect(),
        Err(err) => format!("error: {err}\n"),
    };
    expect.assert_eq(&actual);
}

/// Generates from `text` with seed 42 and prints the values.
fn check_generated(text: &str, expect: Expect) {
    let specs = parse_random_specs(text).unwrap();
    expect.assert_eq(&print_values(&generate_inputs(&specs, 42).unwrap()));
}

fn all_scalars(value: &Value) -> Vec<Scalar> {
    value.data().iter().collect()
}

#[test]
fn specs_parse() {
    check_specs(
        "[1000][64]f32 f32 [10]i64 in 1..1000 [5]f32 in -1..1 [3]f64 in -0.5..2.5e3 [0]bool",
        expect![[r#"
            [1000][64]f32
            f32
            [10]i64 in 1i64..1000i64
            [5]f32 in -1.0f32..1.0f32
            [3]f64 in -0.5f64..2500.0f64
            [0]bool
        "#]],
    );
}

#[test]
fn spec_errors() {
    check_specs(
        "[n]f32",
        expect![[r#"
        error: 1:2: expected an array size, found `n`
    "#]],
    );
    check_specs(
        "[10]f128",
        expect![[r#"
        error: 1:5: unsupported type `f128`: values are of type i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64 or bool
    "#]],
    );
    check_specs(
        "[10]i32 in 5..5",
        expect![[r#"
        error: 1:12: empty range 5i32..5i32: the lower bound must be below the upper bound
    "#]],
    );
    check_specs(
        "[10]u32 in -1..5",
        expect![[r#"
        error: 1:12: out-of-range literal -1 for u32
    "#]],
    );
    check_specs(
        "[10]i32 in 0.5..5",
        expect![[r#"
        error: 1:12: expected i32, found `0.5`
    "#]],
    );
    check_specs(
        "[10]i32 in 1i64..5",
        expect![[r#"
        error: 1:12: expected i32, found `1i64`
    "#]],
    );
    check_specs(
        "[10]bool in 0..1",
        expect![[r#"
        error: 1:10: `bool` takes no range
    "#]],
    );
    check_specs(
        "[10]f32 in 0..f32.inf",
        expect![[r#"
        error: 1:12: range bounds must be finite
    "#]],
    );
    check_specs(
        "[10]i32 in 1 5",
        expect![[r#"
        error: 1:14: expected `..`, found `5`
    "#]],
    );
    check_specs(
        "[10]",
        expect![[r#"
        error: 1:5: expected a type, found end of input
    "#]],
    );
    check_specs(
        "[99999999999999999999]f32",
        expect![[r#"
        error: 1:2: array too large to fit in memory
    "#]],
    );
    check_specs(
        "[4611686018427387904][2]f32",
        expect![[r#"
        error: 1:1: array too large to fit in memory
    "#]],
    );
}

#[test]
fn single_spec_wants_exactly_one() {
    let err = parse_random_spec("f32 f32").unwrap_err();
    expect!["1:5: expected end of input, found `f32`"].assert_eq(&err.to_string());
}

#[test]
fn generation_is_deterministic() {
    check_generated(
        "[4]f32 [3]f64 [5]i32 [3]u64 [6]bool [2][2]i64 in -3..3 [3]f32 in -1..1",
        expect![[r#"
            [0.74156487f32, 0.15991038f32, 0.2786011f32, 0.34419066f32]
            [3.803016854024621e-2f64, 0.8682280765465323f64, 0.21840519371218436f64]
            [908i32, 5i32, 974i32, 207i32, 646i32]
            [398u64, 495u64, 956u64]
            [false, false, false, false, true, true]
            [[-2i64, 0i64], [-2i64, -1i64]]
            [-0.44486535f32, 0.4839586f32, 0.5709989f32]
        "#]],
    );
}

#[test]
fn rng_stream_is_splitmix64() {
    // Reference values of SplitMix64 seeded with 0 (from the published C code).
    let mut rng = Rng::new(0);
    let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
    assert_eq!(first, [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]);
}

#[test]
fn defaults_stay_in_range() {
    let specs = parse_random_specs("[1000]f32 [1000]f64 [1000]i32 [1000]u64").unwrap();
    for value in generate_inputs(&specs, 7).unwrap() {
        for scalar in all_scalars(&value) {
            let ok = match scalar {
                Scalar::F32(x) => (0.0..1.0).contains(&x),
                Scalar::F64(x) => (0.0..1.0).contains(&x),
                Scalar::I32(x) => (0..1000).contains(&x),
                Scalar::U64(x) => x < 1000,
                other => panic!("unexpected {other}"),
            };
            assert!(ok, "{scalar} out of the default range");
        }
    }
}

#[test]
fn ranges_are_half_open() {
    let specs = parse_random_specs("[2000]i64 in -2..2 [2000]f32 in -1..1").unwrap();
    let values = generate_inputs(&specs, 3).unwrap();
    let ints = all_scalars(&values[0]);
    for want in -2..2 {
        assert!(ints.contains(&Scalar::I64(want)), "{want} never drawn");
    }
    assert!(!ints.contains(&Scalar::I64(2)));
    assert!(
        all_scalars(&values[1])
            .iter()
            .all(|s| matches!(s, Scalar::F32(x) if (-1.0..1.0).contains(x)))
    );
}

#[test]
fn full_width_ranges_do_not_overflow() {
    let specs = parse_random_specs(
        "[100]u64 in 0..18446744073709551615 [100]i64 in -9223372036854775808..9223372036854775807 [100]f64 in -1.7976931348623157e308..1.7976931348623157e308",
    )
    .unwrap();
    let values = generate_inputs(&specs, 1).unwrap();
    assert!(all_scalars(&values[2]).iter().all(|s| matches!(s, Scalar::F64(x) if x.is_finite())));
}
