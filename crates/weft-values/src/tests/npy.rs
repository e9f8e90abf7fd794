//! `.npy` reading and writing, checked against files written by numpy 2.4's
//! `np.save` (the files in `tests/npy/`).

use expect_test::{Expect, expect};

use super::{bits_eq, value};
use crate::{Value, read_npy, write_npy};

/// Reads a golden file, checks its value, and checks that writing it back gives
/// numpy's bytes exactly.
fn check_golden(bytes: &[u8], expected: &str) {
    let read = read_npy(bytes).unwrap();
    let want = value(expected);
    assert!(bits_eq(&read, &want), "read {read}, want {want}");
    assert_eq!(write_npy(&want), bytes, "writing {want} differs from numpy's bytes");
}

fn check_error(bytes: &[u8], expect: Expect) {
    let err = read_npy(bytes).unwrap_err();
    expect.assert_eq(&err.to_string());
}

#[test]
fn golden_f32_matrix() {
    check_golden(
        include_bytes!("npy/f32_2x3.npy"),
        "[[0f32, 1.5f32, -2f32], [3.25f32, f32.inf, f32.nan]]",
    );
}

#[test]
fn golden_bool_zero_d() {
    check_golden(include_bytes!("npy/bool_scalar.npy"), "true");
}

#[test]
fn golden_empty_i64() {
    check_golden(include_bytes!("npy/i64_2x0.npy"), "empty([2][0]i64)");
}

#[test]
fn golden_u32_vector() {
    check_golden(include_bytes!("npy/u32_4.npy"), "[0u32, 1u32, 4294967295u32, 7u32]");
}

#[test]
fn golden_i32_rank3() {
    check_golden(include_bytes!("npy/i32_2x1x2.npy"), "[[[1, -2]], [[3, -4]]]");
}

#[test]
fn golden_f64_vector() {
    check_golden(include_bytes!("npy/f64_3.npy"), "[0.1, -1e300, 5e-324]");
}

#[test]
fn golden_u64_vector() {
    check_golden(include_bytes!("npy/u64_2.npy"), "[0u64, 18446744073709551615u64]");
}

#[test]
fn header_bytes_match_numpy() {
    let bytes = write_npy(&value("[[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]]"));
    let header = String::from_utf8_lossy(&bytes[..128]);
    expect![[r#""�NUMPY\u{1}\0v\0{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }                                                          \n""#]].assert_eq(&format!("{header:?}"));
}

#[test]
fn round_trip_every_type_and_rank() {
    for text in [
        "1i32",
        "-5i64",
        "3u32",
        "4u64",
        "1.5f32",
        "2.5f64",
        "false",
        "[true, false, true]",
        "[[1u64, 2u64], [3u64, 4u64]]",
        "empty([0]f32)",
        "empty([3][0][2]bool)",
        "[[[f64.nan]]]",
    ] {
        let want = value(text);
        let read = read_npy(&write_npy(&want)).unwrap();
        assert!(bits_eq(&read, &want), "{text}: read back {read}");
    }
}

#[test]
fn long_headers_use_version_2() {
    let want = Value::new(vec![1; 30_000], vec![7i32]).unwrap();
    let bytes = write_npy(&want);
    assert_eq!(&bytes[6..8], &[2, 0]);
    assert!(bits_eq(&read_npy(&bytes).unwrap(), &want));
}

#[test]
fn rejects_fortran_order() {
    check_error(
        include_bytes!("npy/fortran_2x3.npy"),
        expect![
            "Fortran-order arrays are not supported: save a C-order array (`np.ascontiguousarray`)"
        ],
    );
}

#[test]
fn rejects_big_endian() {
    check_error(
        include_bytes!("npy/big_endian_3.npy"),
        expect![
            "unsupported dtype `>f4`: expected little-endian bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32 or float64"
        ],
    );
}

#[test]
fn golden_float16() {
    // numpy's bytes for `np.array([1, 2], dtype=np.float16)`.
    check_golden(include_bytes!("npy/f16_2.npy"), "[1f16, 2f16]");
}

#[test]
fn rejects_structured_dtype() {
    check_error(
        include_bytes!("npy/structured.npy"),
        expect!["structured dtypes are not supported: save one array per field"],
    );
}

#[test]
fn rejects_truncated_and_foreign_bytes() {
    let bytes = include_bytes!("npy/f32_2x3.npy");
    check_error(
        &bytes[..bytes.len() - 1],
        expect!["the data has 23 bytes, but a [2][3]f32 array needs 24"],
    );
    check_error(&bytes[..9], expect!["truncated .npy file: the header length ends early"]);
    check_error(&bytes[..50], expect!["truncated .npy file: the header ends early"]);
    check_error(b"PK\x03\x04", expect![[r#"not a .npy file: it does not start with `\x93NUMPY`"#]]);
    let mut v4 = bytes.to_vec();
    v4[6] = 4;
    check_error(&v4, expect!["unsupported .npy format version 4.0"]);
}

#[test]
fn rejects_bad_bool_bytes() {
    let mut bytes = write_npy(&value("[true, false]"));
    let last = bytes.len() - 1;
    bytes[last] = 2;
    check_error(&bytes, expect!["invalid bool byte 2 at element 1: expected 0 or 1"]);
}

#[test]
fn rejects_bad_header() {
    let mut bytes = write_npy(&value("[1i32]"));
    bytes[10..16].copy_from_slice(b"{'desk");
    check_error(&bytes, expect!["invalid .npy header: unknown key `deskr`"]);
}
