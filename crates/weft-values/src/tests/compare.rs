//! Test-block comparison of results with expected values.

use expect_test::{Expect, expect};

use super::value;
use crate::{compare, compare_all, parse_values};

fn check(got: &str, want: &str, expect: Expect) {
    let actual = match compare(&value(got), &value(want)) {
        Ok(()) => "ok".to_owned(),
        Err(mismatch) => mismatch.to_string(),
    };
    expect.assert_eq(&actual);
}

#[test]
fn integers_compare_exactly() {
    check("[1, 2, 3]", "[1, 2, 3]", expect!["ok"]);
    check(
        "[1, 2, 3]",
        "[1, 5, 4]",
        expect!["at index [1]: expected 5i32, got 2i32 (2 of 3 elements differ)"],
    );
}

#[test]
fn f32_within_relative_tolerance() {
    check("1000.05f32", "1000f32", expect!["ok"]);
    check("1000.2f32", "1000f32", expect!["expected 1000.0f32, got 1000.2f32"]);
}

#[test]
fn small_values_use_absolute_tolerance() {
    check("0.00005f32", "0f32", expect!["ok"]);
    check("0.0002f32", "0f32", expect!["expected 0.0f32, got 2.0e-4f32"]);
}

#[test]
fn f64_tolerance_is_tighter() {
    check("1.0000000001", "1.0", expect!["ok"]);
    check("1.00000001", "1.0", expect!["expected 1.0f64, got 1.00000001f64"]);
}

#[test]
fn nan_equals_nan() {
    check("[f32.nan, 1f32]", "[f32.nan, 1f32]", expect!["ok"]);
    check(
        "[f32.nan]",
        "[1f32]",
        expect!["at index [0]: expected 1.0f32, got f32.nan (1 of 1 element differs)"],
    );
    check(
        "[1f32]",
        "[f32.nan]",
        expect!["at index [0]: expected f32.nan, got 1.0f32 (1 of 1 element differs)"],
    );
}

#[test]
fn infinities_equal_only_themselves() {
    check("f64.inf", "f64.inf", expect!["ok"]);
    check("-f64.inf", "f64.inf", expect!["expected f64.inf, got -f64.inf"]);
    check("1e308", "f64.inf", expect!["expected f64.inf, got 1.0e308f64"]);
}

#[test]
fn type_and_shape_mismatches() {
    check(
        "[[1i64, 2i64], [3i64, 4i64], [5i64, 6i64]]",
        "[1f32, 2f32, 3f32]",
        expect!["expected [3]f32, got [3][2]i64"],
    );
    check("[1, 2]", "[1, 2, 3]", expect!["expected [3]i32, got [2]i32"]);
    check("1", "[1]", expect!["expected [1]i32, got i32"]);
}

#[test]
fn mismatch_names_first_index_and_count() {
    check(
        "[[1, 2], [3, 4], [5, 6]]",
        "[[1, 2], [3, 0], [0, 6]]",
        expect!["at index [1, 1]: expected 0i32, got 4i32 (2 of 6 elements differ)"],
    );
}

#[test]
fn compare_all_reports_the_value() {
    let got = parse_values("1 [1, 2]").unwrap();
    let want = parse_values("1 [1, 3]").unwrap();
    expect!["value #1: at index [1]: expected 3i32, got 2i32 (1 of 2 elements differ)"]
        .assert_eq(&compare_all(&got, &want).unwrap_err().to_string());
    expect!["expected 2 values, got 1"]
        .assert_eq(&compare_all(&got[..1], &want).unwrap_err().to_string());
}
