//! Comparing a result with its expectation, as test blocks do (LANGUAGE.md §3, "Test
//! blocks"): integers and booleans exactly; floats within an absolute tolerance set by
//! the magnitude of the whole expected value, as Futhark's test tool does:
//! `|got - want| <= rtol * max(1, max |w|)`, the maximum over the finite elements `w`
//! of the expected value (one array, or one scalar), rtol [`F16_RTOL`], [`F32_RTOL`] or
//! [`F64_RTOL`]; NaN equals NaN, and an infinity equals only itself. Element type and
//! shape must match.
//!
//! Why the whole value's magnitude: an element that is a sum whose terms cancel (a
//! force summed over many bodies that nearly balance) is small, but its rounding error
//! is relative to its terms, whose size the array's largest elements show. Measured
//! against its own magnitude, the order of a correct sum (the interpreter's pairwise
//! sum, a kernel's tree) failed it; measured against the array's, a wrong element is
//! still caught at the precision of the array's scale.
//!
//! A mismatch names the first differing index, both elements, and how many differ.

use std::fmt;

use crate::scalar::Scalar;
use crate::value::{Value, ValueType};

/// Relative tolerance for `f16` elements (10 bits of mantissa: one rounding is
/// about 5e-4, and a reassociated sum rounds at each step).
pub const F16_RTOL: f64 = 1e-2;
/// Relative tolerance for `f32` elements.
pub const F32_RTOL: f64 = 1e-4;
/// Relative tolerance for `f64` elements.
pub const F64_RTOL: f64 = 1e-9;

/// How a value differs from what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// Element type or shape differ.
    #[error("expected {want}, got {got}")]
    Type { got: ValueType, want: ValueType },
    /// Same type and shape, but some elements differ beyond the tolerance.
    #[error("{}", ElementsText(self))]
    Elements {
        /// Multi-index of the first differing element (empty for a scalar).
        index: Vec<usize>,
        /// The element found there.
        got: Scalar,
        /// The element expected there.
        want: Scalar,
        /// How many elements differ in all.
        n_differing: usize,
        /// How many elements the value has.
        n_elems: usize,
    },
}

struct ElementsText<'a>(&'a Mismatch);

impl fmt::Display for ElementsText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Mismatch::Elements { index, got, want, n_differing, n_elems } = self.0 else {
            return Ok(());
        };
        if index.is_empty() {
            return write!(f, "expected {want}, got {got}");
        }
        f.write_str("at index [")?;
        for (dim_idx, idx) in index.iter().enumerate() {
            if dim_idx > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{idx}")?;
        }
        write!(f, "]: expected {want}, got {got} ")?;
        if *n_elems == 1 {
            f.write_str("(1 of 1 element differs)")
        } else {
            write!(f, "({n_differing} of {n_elems} elements differ)")
        }
    }
}

/// How a sequence of results (a tuple result, one value per component) differs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResultsMismatch {
    /// A different number of values.
    #[error("expected {want} values, got {got}")]
    Count { got: usize, want: usize },
    /// Value number `index` (from 0) differs.
    #[error("value #{index}: {mismatch}")]
    Value { index: usize, mismatch: Mismatch },
}

/// Checks that `got` matches `want` under the test-block rules.
pub fn compare(got: &Value, want: &Value) -> Result<(), Mismatch> {
    if got.elem_type() != want.elem_type() || got.shape() != want.shape() {
        return Err(Mismatch::Type { got: got.value_type(), want: want.value_type() });
    }
    let scale = magnitude(want);
    let mut first: Option<(usize, Scalar, Scalar)> = None;
    let mut n_differing = 0;
    for (idx, (g, w)) in got.data().iter().zip(want.data().iter()).enumerate() {
        if !scalars_match(g, w, scale) {
            n_differing += 1;
            first.get_or_insert((idx, g, w));
        }
    }
    match first {
        None => Ok(()),
        Some((idx, got_elem, want_elem)) => Err(Mismatch::Elements {
            index: got.unflatten_index(idx),
            got: got_elem,
            want: want_elem,
            n_differing,
            n_elems: got.len(),
        }),
    }
}

/// Compares results component by component; the first mismatch is reported.
pub fn compare_all(got: &[Value], want: &[Value]) -> Result<(), ResultsMismatch> {
    if got.len() != want.len() {
        return Err(ResultsMismatch::Count { got: got.len(), want: want.len() });
    }
    for (index, (g, w)) in got.iter().zip(want).enumerate() {
        compare(g, w).map_err(|mismatch| ResultsMismatch::Value { index, mismatch })?;
    }
    Ok(())
}

/// The magnitude float tolerances scale with: the largest finite `|w|` of `want`, at
/// least 1 (so values near zero get an absolute tolerance of rtol).
fn magnitude(want: &Value) -> f64 {
    want.data()
        .iter()
        .filter_map(|w| match w {
            Scalar::F16(w) => Some(w.to_f64()),
            Scalar::F32(w) => Some(f64::from(w)),
            Scalar::F64(w) => Some(w),
            _ => None,
        })
        .filter(|w| w.is_finite())
        .fold(1.0, |scale, w| scale.max(w.abs()))
}

/// Whether two scalars of the same type match, floats within `rtol * scale`.
fn scalars_match(got: Scalar, want: Scalar, scale: f64) -> bool {
    match (got, want) {
        (Scalar::F32(g), Scalar::F32(w)) => {
            floats_match(f64::from(g), f64::from(w), F32_RTOL * scale)
        }
        (Scalar::F64(g), Scalar::F64(w)) => floats_match(g, w, F64_RTOL * scale),
        (Scalar::F16(g), Scalar::F16(w)) => floats_match(g.to_f64(), w.to_f64(), F16_RTOL * scale),
        (g, w) => g == w,
    }
}

fn floats_match(got: f64, want: f64, tolerance: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        // An infinity is within any tolerance of itself only.
        return got == want;
    }
    (got - want).abs() <= tolerance
}
