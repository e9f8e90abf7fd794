//! The value model: constructors, access, types.

use expect_test::expect;

use crate::{ArrayData, Scalar, ScalarType, Value};

#[test]
fn new_checks_length_against_shape() {
    let err = Value::new(vec![3, 2], vec![1i32, 2, 3]).unwrap_err();
    expect!["shape [3][2] has 6 elements, but 3 were given"].assert_eq(&err.to_string());
}

#[test]
fn new_rejects_overflowing_shape() {
    let err = Value::new(vec![usize::MAX, 2], Vec::<f32>::new()).unwrap_err();
    expect!["shape [18446744073709551615][2] has more elements than fit in memory"]
        .assert_eq(&err.to_string());
}

#[test]
fn zero_dims_are_allowed() {
    let value = Value::new(vec![2, 0], Vec::<i64>::new()).unwrap();
    assert!(value.is_empty());
    assert_eq!(value.value_type().to_string(), "[2][0]i64");
}

#[test]
fn element_access_is_row_major() {
    let value = Value::new(vec![2, 3], vec![0i32, 1, 2, 3, 4, 5]).unwrap();
    assert_eq!(value.get(&[1, 0]), Some(Scalar::I32(3)));
    assert_eq!(value.get(&[0, 2]), Some(Scalar::I32(2)));
    assert_eq!(value.get(&[2, 0]), None);
    assert_eq!(value.get(&[0]), None);
    assert_eq!(value.get_flat(5), Some(Scalar::I32(5)));
    assert_eq!(value.unflatten_index(5), vec![1, 2]);
}

#[test]
fn scalar_is_rank_zero() {
    let value = Value::scalar(1.5f32);
    assert_eq!(value.rank(), 0);
    assert_eq!(value.as_scalar(), Some(Scalar::F32(1.5)));
    assert_eq!(value.get(&[]), Some(Scalar::F32(1.5)));
    assert_eq!(value.value_type().to_string(), "f32");
}

#[test]
fn value_type_prints_as_in_source() {
    let value = Value::new(vec![3, 2], ArrayData::with_capacity(ScalarType::I64, 0));
    assert!(value.is_err());
    let value = Value::new(vec![3, 2], vec![0i64; 6]).unwrap();
    expect!["expected [3]f32, got [3][2]i64"]
        .assert_eq(&format!("expected [3]f32, got {}", value.value_type()));
}

#[test]
fn scalar_type_names_and_sizes() {
    let table: Vec<String> =
        ScalarType::ALL.iter().map(|ty| format!("{} {}", ty.name(), ty.size_in_bytes())).collect();
    expect!["i8 1, i16 2, i32 4, i64 8, u8 1, u16 2, u32 4, u64 8, f16 2, f32 4, f64 8, bool 1"]
        .assert_eq(&table.join(", "));
    assert_eq!(ScalarType::from_name("u64"), Some(ScalarType::U64));
    assert_eq!(ScalarType::from_name("u8"), Some(ScalarType::U8));
    assert_eq!(ScalarType::from_name("u128"), None);
}
