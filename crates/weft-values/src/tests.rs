//! Tests: `check*` helpers over the public API, with one file per area.

mod compare;
mod npy;
mod proptests;
mod random;
mod small;
mod text;
mod value;

use expect_test::Expect;

use crate::{ScalarType, Value, parse_values, parse_values_expecting, print_values};

/// Parses `text` as a value stream and prints the values (or the error) back.
fn check(text: &str, expect: Expect) {
    let actual = match parse_values(text) {
        Ok(values) => print_values(&values),
        Err(err) => format!("error: {err}\n"),
    };
    expect.assert_eq(&actual);
}

/// Like [`check`], reading unsuffixed literals as the `expected` types.
fn check_expecting(text: &str, expected: &[ScalarType], expect: Expect) {
    let actual = match parse_values_expecting(text, expected) {
        Ok(values) => print_values(&values),
        Err(err) => format!("error: {err}\n"),
    };
    expect.assert_eq(&actual);
}

/// Parses values, each of which must be valid.
fn values(text: &str) -> Vec<Value> {
    match parse_values(text) {
        Ok(values) => values,
        Err(err) => panic!("{text:?} does not parse: {err}"),
    }
}

/// Parses exactly one value.
fn value(text: &str) -> Value {
    match crate::parse_value(text) {
        Ok(value) => value,
        Err(err) => panic!("{text:?} does not parse: {err}"),
    }
}

/// Same type, shape and bits (all NaNs equal).
fn bits_eq(a: &Value, b: &Value) -> bool {
    a.value_type() == b.value_type()
        && a.data().iter().zip(b.data().iter()).all(|(x, y)| x.bits_eq(y))
}
