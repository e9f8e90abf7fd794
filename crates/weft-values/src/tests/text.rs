//! Futhark's textual format: parsing, printing and error messages.

use expect_test::expect;

use super::{check, check_expecting, value, values};
use crate::{Scalar, ScalarType, Value, parse_value};

#[test]
fn suffixed_scalars() {
    check(
        "42i32 -3i64 7u32 18446744073709551615u64 1.5f32 2e-3f64 true false",
        expect![[r#"
            42i32
            -3i64
            7u32
            18446744073709551615u64
            1.5f32
            2.0e-3f64
            true
            false
        "#]],
    );
}

#[test]
fn special_floats() {
    check(
        "f32.nan f32.inf -f32.inf f64.nan f64.inf -f64.inf",
        expect![[r#"
            f32.nan
            f32.inf
            -f32.inf
            f64.nan
            f64.inf
            -f64.inf
        "#]],
    );
}

#[test]
fn unsuffixed_int_defaults_to_i32() {
    check(
        "42 -7",
        expect![[r#"
        42i32
        -7i32
    "#]],
    );
}

#[test]
fn unsuffixed_decimal_defaults_to_f64() {
    check(
        "1.5 2e-3 1E3",
        expect![[r#"
        1.5f64
        2.0e-3f64
        1000.0f64
    "#]],
    );
}

#[test]
fn digits_with_float_suffix_are_floats() {
    check(
        "3f32 -1f64",
        expect![[r#"
        3.0f32
        -1.0f64
    "#]],
    );
}

#[test]
fn hex_and_underscores() {
    check(
        "0xff 0xFFu32 -0x10i64 1_000_000 1_0.2_5f32",
        expect![[r#"
        255i32
        255u32
        -16i64
        1000000i32
        10.25f32
    "#]],
    );
}

#[test]
fn arrays() {
    check(
        "[1f32, 2f32] [[1i32, 2i32], [3i32, 4i32]] [[[true], [false]]] [ 1i64 ,2i64 ]",
        expect![[r#"
            [1.0f32, 2.0f32]
            [[1i32, 2i32], [3i32, 4i32]]
            [[[true], [false]]]
            [1i64, 2i64]
        "#]],
    );
}

#[test]
fn one_suffix_types_the_array() {
    check(
        "[1, 2.5f32, 3] [1, 2, 3u64]",
        expect![[r#"
        [1.0f32, 2.5f32, 3.0f32]
        [1u64, 2u64, 3u64]
    "#]],
    );
}

#[test]
fn one_decimal_makes_an_unsuffixed_array_f64() {
    check(
        "[1, 2.5, 3]",
        expect![[r#"
        [1.0f64, 2.5f64, 3.0f64]
    "#]],
    );
}

#[test]
fn empty_arrays() {
    check(
        "empty([0]f32) empty([2][0]i64) empty([0][3]bool)",
        expect![[r#"
        empty([0]f32)
        empty([2][0]i64)
        empty([0][3]bool)
    "#]],
    );
}

#[test]
fn comments_and_newlines_are_skipped() {
    check(
        "-- inputs\n[1i32, -- first\n 2i32]\n\n-- and a scalar\n3i32 -- the end",
        expect![[r#"
            [1i32, 2i32]
            3i32
        "#]],
    );
}

#[test]
fn empty_input_has_no_values() {
    check("  -- nothing\n", expect![[""]]);
}

#[test]
fn float_printing_follows_haskell_show() {
    let floats = [
        0.0f32,
        -0.0,
        1.0,
        1.5,
        0.1,
        0.001,
        123.456,
        1234567.0,
        1.0e7,
        12345678.0,
        3.0e-45,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.0 / 3.0,
    ];
    let printed: Vec<String> = floats.iter().map(|&x| Scalar::F32(x).to_string()).collect();
    expect![[r#"
        0.0f32
        -0.0f32
        1.0f32
        1.5f32
        0.1f32
        1.0e-3f32
        123.456f32
        1234567.0f32
        1.0e7f32
        1.2345678e7f32
        3.0e-45f32
        3.4028235e38f32
        1.1754944e-38f32
        0.33333334f32"#]]
    .assert_eq(&printed.join("\n"));
    let doubles = [0.1f64, 0.2 + 0.1, 1e100, -2.5e-300, 5e-324, f64::MAX, 100.0];
    let printed: Vec<String> = doubles.iter().map(|&x| Scalar::F64(x).to_string()).collect();
    expect![[r#"
        0.1f64
        0.30000000000000004f64
        1.0e100f64
        -2.5e-300f64
        5.0e-324f64
        1.7976931348623157e308f64
        100.0f64"#]]
    .assert_eq(&printed.join("\n"));
}

#[test]
fn printed_floats_read_back_exactly() {
    for x in [0.1f32, 1.0 / 3.0, f32::MAX, 3.0e-45, 16777217.0, -0.0] {
        let back = value(&Scalar::F32(x).to_string());
        assert_eq!(back.as_scalar().map(|s| s.bits_eq(Scalar::F32(x))), Some(true), "{x}");
    }
}

#[test]
fn expected_types_read_unsuffixed_literals() {
    check_expecting(
        "1 [1, 2] 3 [[1.5, 2]] 7",
        &[ScalarType::I64, ScalarType::F32, ScalarType::U32, ScalarType::F64, ScalarType::F32],
        expect![[r#"
            1i64
            [1.0f32, 2.0f32]
            3u32
            [[1.5f64, 2.0f64]]
            7.0f32
        "#]],
    );
}

#[test]
fn expected_type_rejects_other_suffix() {
    check_expecting(
        "[1, 2i64]",
        &[ScalarType::F32],
        expect![[r#"
        error: 1:5: expected f32, found `2i64`
    "#]],
    );
}

#[test]
fn expected_int_rejects_decimal() {
    check_expecting(
        "1.5",
        &[ScalarType::I32],
        expect![[r#"
        error: 1:1: expected i32, found `1.5`
    "#]],
    );
}

#[test]
fn expected_type_rejects_other_empty() {
    check_expecting(
        "empty([0]i32)",
        &[ScalarType::F32],
        expect![[r#"
        error: 1:7: expected f32, found `empty([0]i32)`
    "#]],
    );
}

#[test]
fn expected_count_too_few() {
    check_expecting(
        "1 2",
        &[ScalarType::I32; 3],
        expect![[r#"
        error: 1:4: expected 3 values, found 2
    "#]],
    );
}

#[test]
fn expected_count_too_many() {
    check_expecting(
        "1\n2 3",
        &[ScalarType::I32; 2],
        expect![[r#"
        error: 2:3: too many values: expected 2
    "#]],
    );
}

#[test]
fn error_irregular_row() {
    check(
        "[[1, 2],\n [3, 4, 5]]",
        expect![[r#"
        error: 2:2: irregular array: row 2 has 3 elements, row 1 has 2 elements
    "#]],
    );
}

#[test]
fn error_irregular_third_row() {
    check(
        "[[1, 2], [3, 4], [5]]",
        expect![[r#"
        error: 1:18: irregular array: row 3 has 1 element, row 1 has 2 elements
    "#]],
    );
}

#[test]
fn error_nested_array_where_scalar_expected() {
    check(
        "[1, [2]]",
        expect![[r#"
        error: 1:5: irregular array: expected a scalar, found a nested array
    "#]],
    );
}

#[test]
fn error_scalar_where_nested_array_expected() {
    check(
        "[[1], 2]",
        expect![[r#"
        error: 1:7: irregular array: expected a nested array, found a scalar
    "#]],
    );
}

#[test]
fn error_out_of_range_literals() {
    check(
        "300000000000i32",
        expect![[r#"
        error: 1:1: out-of-range literal 300000000000 for i32
    "#]],
    );
    check(
        "-1u32",
        expect![[r#"
        error: 1:1: out-of-range literal -1 for u32
    "#]],
    );
    check(
        "2147483648",
        expect![[r#"
        error: 1:1: out-of-range literal 2147483648 for i32
    "#]],
    );
    check(
        "1e40f32",
        expect![[r#"
        error: 1:1: out-of-range literal 1e40 for f32
    "#]],
    );
    check(
        "99999999999999999999999999999999999999999999i64",
        expect![[r#"
        error: 1:1: out-of-range literal 99999999999999999999999999999999999999999999 for i64
    "#]],
    );
}

#[test]
fn extreme_literals_in_range() {
    check(
        "-2147483648 -9223372036854775808i64 0xffffffffu32",
        expect![[r#"
        -2147483648i32
        -9223372036854775808i64
        4294967295u32
    "#]],
    );
}

#[test]
fn error_unsupported_suffix() {
    check(
        "300u128",
        expect![[r#"
        error: 1:4: unsupported type `u128`: values are of type i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64 or bool
    "#]],
    );
    check(
        "1bool",
        expect![[r#"
        error: 1:2: unsupported type `bool`: values are of type i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64 or bool
    "#]],
    );
}

#[test]
fn error_mixed_element_types() {
    check(
        "[1i32, 2i64]",
        expect![[r#"
        error: 1:8: array elements have different types: i32 and i64
    "#]],
    );
    check(
        "[true, 1]",
        expect![[r#"
        error: 1:8: expected bool, found `1`
    "#]],
    );
}

#[test]
fn error_empty_brackets() {
    check(
        "[]",
        expect![[r#"
        error: 1:1: empty array `[]` has no element type: write `empty([0]t)`, e.g. `empty([0]f32)`
    "#]],
    );
}

#[test]
fn error_empty_with_elements() {
    check(
        "empty([2][3]i32)",
        expect![[r#"
        error: 1:7: `empty([2][3]i32)` would have elements: one dimension must be 0
    "#]],
    );
    check(
        "empty(f32)",
        expect![[r#"
        error: 1:7: `empty` needs an array type with a zero dimension, such as `[0]f32`
    "#]],
    );
    check(
        "[empty([0]i32)]",
        expect![[r#"
        error: 1:2: `empty(...)` cannot be an element of an array literal
    "#]],
    );
    check(
        "empty([n]i32)",
        expect![[r#"
        error: 1:8: expected an array size, found `n`
    "#]],
    );
}

#[test]
fn error_unknown_word() {
    check(
        "nan",
        expect![[r#"
        error: 1:1: unknown word `nan`: expected a value
    "#]],
    );
    check(
        "-true",
        expect![[r#"
            error: 1:2: expected `f16.inf`, `f32.inf` or `f64.inf` after `-`, found `true`
        "#]],
    );
}

#[test]
fn error_syntax() {
    check(
        "[1, 2",
        expect![[r#"
        error: 1:6: expected `,` or `]`, found end of input
    "#]],
    );
    check(
        "[1 2]",
        expect![[r#"
        error: 1:4: expected `,` or `]`, found `2`
    "#]],
    );
    check(
        "[1,]",
        expect![[r#"
        error: 1:4: expected an array element, found `]`
    "#]],
    );
    check(
        "1, 2",
        expect![[r#"
        error: 1:2: expected a value, found `,`
    "#]],
    );
    check(
        "1.5.3",
        expect![[r#"
        error: 1:4: unexpected character `.`
    "#]],
    );
    check(
        "  é",
        expect![[r#"
        error: 1:3: unexpected character `é`
    "#]],
    );
    check(
        "0x",
        expect![[r#"
        error: 1:1: invalid literal `0x`
    "#]],
    );
    check(
        "1.5i32",
        expect![[r#"
        error: 1:1: decimal literal `1.5i32` cannot have an integer type
    "#]],
    );
}

#[test]
fn error_positions_count_lines_and_chars() {
    check(
        "-- é\n\n  [1, 2]  [3,\n 4,, 5]",
        expect![[r#"
        error: 4:4: expected an array element, found `,`
    "#]],
    );
}

#[test]
fn parse_value_wants_exactly_one() {
    let err = parse_value("1 2").unwrap_err();
    expect!["1:3: too many values: expected 1"].assert_eq(&err.to_string());
    let err = parse_value("").unwrap_err();
    expect!["1:1: expected a value, found end of input"].assert_eq(&err.to_string());
}

#[test]
fn parsed_values_have_the_right_shape() {
    let parsed = values("[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]] empty([2][0]i64)");
    assert_eq!(parsed[0], Value::new(vec![2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap());
    assert_eq!(parsed[1], Value::new(vec![2, 0], Vec::<i64>::new()).unwrap());
}

#[test]
fn deep_nesting_does_not_recurse() {
    let depth = 100_000;
    let text = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let parsed = value(&text);
    assert_eq!(parsed.rank(), depth);
    assert_eq!(parsed.len(), 1);
}
