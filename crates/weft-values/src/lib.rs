//! Weft values as users give and see them: the value model, Futhark's textual format,
//! numpy `.npy` files, random inputs from specs, and the comparison that test blocks
//! use (LANGUAGE.md §3, "Test blocks" and "Values"); and the scalar types and scalar
//! operations every evaluator shares (the interpreter, the memory checker, host plans).
//!
//! Architecture invariant: no OpenCL, no salsa, no IO beyond byte buffers. Everything
//! read from users (text, `.npy` bytes, specs) is checked, and errors are values with
//! clear messages: no input makes this crate panic.

pub mod bench_line;
mod check;
pub mod compare;
pub mod npy;
mod ops;
pub mod random;
mod scalar;
#[cfg(test)]
mod tests;
pub mod text;
mod value;

pub use crate::check::RuntimeCheck;
pub use crate::compare::{
    F16_RTOL, F32_RTOL, F64_RTOL, Mismatch, ResultsMismatch, compare, compare_all,
};
pub use crate::npy::{NpyError, read_npy, write_npy};
pub use crate::ops::{BinOp, MathFn, OpError, UnOp, binop, math, unop};
pub use crate::random::{
    OutOfMemory, RandomSpec, Rng, SpecRange, generate_inputs, parse_random_spec, parse_random_specs,
};
pub use crate::scalar::{Scalar, ScalarType, f16_from_f64};
pub use crate::text::{
    ParseError, ParseErrorKind, parse_value, parse_values, parse_values_expecting, print_values,
};
pub use crate::value::{ArrayData, ShapeError, ShapeText, Value, ValueType};
/// The `f16` of [`Scalar::F16`] (the `half` crate's binary16), so that users of the
/// values need not depend on `half` themselves.
pub use half::f16;

/// The error for an entry given the wrong number of inputs, worded once for both back
/// ends (the interpreter and the compiled plan once counted differently).
pub fn wrong_input_count(entry: &str, expected: usize, given: usize) -> String {
    format!(
        "entry `{entry}` takes {expected} input{}, but {given} {} given",
        if expected == 1 { "" } else { "s" },
        if given == 1 { "was" } else { "were" },
    )
}
