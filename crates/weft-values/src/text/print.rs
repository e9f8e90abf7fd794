//! The value printer: Futhark's textual format, floats in the shortest digits that
//! read back to the same bits, laid out as Haskell's `show` does (Futhark's printer
//! is Haskell): decimal notation for `0.1 <= |x| < 10^7`, else `d.ddde<exp>`.

use std::fmt::{self, Write};

use crate::scalar::Scalar;
use crate::value::{ArrayData, Value};

/// Writes one scalar with its suffix (`42i32`, `1.0e-3f32`, `f64.nan`, `true`).
pub(crate) fn write_scalar(out: &mut impl Write, scalar: Scalar) -> fmt::Result {
    match scalar {
        Scalar::I8(x) => write!(out, "{x}i8"),
        Scalar::I16(x) => write!(out, "{x}i16"),
        Scalar::U8(x) => write!(out, "{x}u8"),
        Scalar::U16(x) => write!(out, "{x}u16"),
        // As Futhark prints `f16` (Haskell's `show` of the value as a `Float`): the
        // shortest digits of its exact `f32`, which read back to the same `f16`.
        Scalar::F16(x) => {
            let wide = x.to_f32();
            write_float(out, x.is_nan(), x.is_sign_negative(), &format!("{wide:e}"), "f16")
        }
        Scalar::I32(x) => write!(out, "{x}i32"),
        Scalar::I64(x) => write!(out, "{x}i64"),
        Scalar::U32(x) => write!(out, "{x}u32"),
        Scalar::U64(x) => write!(out, "{x}u64"),
        Scalar::F32(x) => {
            write_float(out, x.is_nan(), x.is_sign_negative(), &format!("{x:e}"), "f32")
        }
        Scalar::F64(x) => {
            write_float(out, x.is_nan(), x.is_sign_negative(), &format!("{x:e}"), "f64")
        }
        Scalar::Bool(x) => write!(out, "{x}"),
    }
}

/// Writes a float given Rust's shortest round-trip scientific form (`-1.25e-3`,
/// `inf`, `NaN`).
fn write_float(
    out: &mut impl Write,
    is_nan: bool,
    negative: bool,
    scientific: &str,
    suffix: &str,
) -> fmt::Result {
    if is_nan {
        return write!(out, "{suffix}.nan");
    }
    let sign = if negative { "-" } else { "" };
    let magnitude = scientific.strip_prefix('-').unwrap_or(scientific);
    if magnitude == "inf" {
        return write!(out, "{sign}{suffix}.inf");
    }
    let (mantissa, exponent) = magnitude.split_once('e').unwrap_or((magnitude, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if digits.bytes().all(|b| b == b'0') {
        return write!(out, "{sign}0.0{suffix}");
    }
    // The value is 0.DIGITS * 10^point.
    let point = exponent + 1;
    out.write_str(sign)?;
    if (0..=7).contains(&point) {
        let point = usize::try_from(point).unwrap_or(0);
        if point == 0 {
            write!(out, "0.{digits}")?;
        } else if digits.len() <= point {
            write!(out, "{digits}{}.0", "0".repeat(point - digits.len()))?;
        } else {
            write!(out, "{}.{}", &digits[..point], &digits[point..])?;
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        write!(out, "{first}.{rest}e{exponent}")?;
    }
    out.write_str(suffix)
}

/// Writes a value on one line: a scalar, a bracketed array, or `empty([2][0]t)`.
pub(crate) fn write_value(out: &mut impl Write, value: &Value) -> fmt::Result {
    let shape = value.shape();
    if shape.is_empty() {
        return match value.get_flat(0) {
            Some(scalar) => write_scalar(out, scalar),
            None => Ok(()),
        };
    }
    if value.is_empty() {
        return write!(out, "empty({})", value.value_type());
    }
    // `row_len[d]` is the number of elements in one row at depth `d`.
    let mut row_len = vec![1usize; shape.len()];
    let mut acc = 1usize;
    for (slot, &dim) in row_len.iter_mut().zip(shape).rev() {
        acc *= dim;
        *slot = acc;
    }
    let data = value.data();
    for idx in 0..data.len() {
        if idx > 0 {
            out.write_str(", ")?;
        }
        for &len in &row_len {
            if idx % len == 0 {
                out.write_char('[')?;
            }
        }
        write_element(out, data, idx)?;
        for &len in &row_len {
            if (idx + 1) % len == 0 {
                out.write_char(']')?;
            }
        }
    }
    Ok(())
}

fn write_element(out: &mut impl Write, data: &ArrayData, idx: usize) -> fmt::Result {
    match data.get(idx) {
        Some(scalar) => write_scalar(out, scalar),
        None => Ok(()),
    }
}
