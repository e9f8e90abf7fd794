//! Test-block comparison of results with expected values.

use expect_test::{Expect, expect};

use super::value;
use crate::{Value, compare, compare_all, parse_values};

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

#[test]
fn an_element_is_measured_against_the_whole_arrays_magnitude() {
    // 0.0503 for 0.05 is off in the third digit of its own magnitude, but far inside
    // rtol of the array's scale (1000): what a cancelling sum's rounding looks like.
    check("[1000f32, 0.0503f32]", "[1000f32, 0.05f32]", expect!["ok"]);
    // 0.3 for 0.05 is more than rtol * 1000 = 0.1 off: a wrong element still fails.
    check(
        "[1000f32, 0.3f32]",
        "[1000f32, 0.05f32]",
        expect!["at index [1]: expected 5.0e-2f32, got 0.3f32 (1 of 2 elements differ)"],
    );
    // Infinities and NaNs do not set the scale.
    check(
        "[f32.inf, f32.nan, 0.5f32]",
        "[f32.inf, f32.nan, 0.25f32]",
        expect!["at index [2]: expected 0.25f32, got 0.5f32 (1 of 3 elements differ)"],
    );
}

/// `n` values in [0, 1) from a fixed linear congruential generator.
fn uniform_f32s(n: usize) -> Vec<f32> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // The top 24 bits: exactly representable in f32.
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The interpreter's order: halves summed recursively.
fn pairwise_sum(xs: &[f32]) -> f32 {
    match xs {
        [] => 0.0,
        [x] => *x,
        _ => {
            let (left, right) = xs.split_at(xs.len() / 2);
            pairwise_sum(left) + pairwise_sum(right)
        }
    }
}

/// A kernel's order: each group of 256 consecutive values folded by a tree of
/// neighbouring pairs (stride 1, 2, 4, ...), then the groups' sums left to right.
fn work_group_tree_sum(xs: &[f32]) -> f32 {
    xs.chunks(256)
        .map(|group| {
            let mut lanes = group.to_vec();
            let mut stride = 1;
            while stride < lanes.len() {
                for i in (0..lanes.len()).step_by(2 * stride) {
                    if i + stride < lanes.len() {
                        lanes[i] += lanes[i + stride];
                    }
                }
                stride *= 2;
            }
            lanes[0]
        })
        .fold(0.0, |acc, s| acc + s)
}

#[test]
fn a_well_conditioned_f32_sum_matches_in_any_order_and_a_wrong_one_does_not() {
    let xs = uniform_f32s(1 << 20);
    let pairwise = pairwise_sum(&xs);
    let tree = work_group_tree_sum(&xs);
    assert_ne!(pairwise.to_bits(), tree.to_bits(), "the two orders round differently");
    assert_eq!(compare(&Value::scalar(tree), &Value::scalar(pairwise)), Ok(()));
    assert_eq!(compare(&Value::scalar(pairwise), &Value::scalar(tree)), Ok(()));
    // One part in a thousand off (a lost group of 256 values, say) is wrong.
    let wrong = pairwise * 1.001;
    assert!(compare(&Value::scalar(wrong), &Value::scalar(pairwise)).is_err());
    let lost_group = pairwise - work_group_tree_sum(&xs[..256]);
    assert!(compare(&Value::scalar(lost_group), &Value::scalar(pairwise)).is_err());
}
