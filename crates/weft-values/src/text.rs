//! Futhark's textual value format (LANGUAGE.md §3 "Values"), parsed and printed.
//!
//! ```text
//! 42i32  -3i64  7u32  1.5f32  2e-3f64  f32.nan  -f32.inf  true
//! [1f32, 2f32]  [[1i32, 2i32], [3i32, 4i32]]  empty([2][0]i64)
//! ```
//!
//! A stream is values separated by whitespace, with `--` comments. Literals follow
//! LANGUAGE.md §1: `1_000`, `0xff`, `2e-3`, `3f32` (digits with a float suffix are a
//! float). Unsuffixed literals follow Futhark: an integer is `i32`, a decimal `f64`.
//! Inside an array, one suffixed element types the unsuffixed ones (`[1, 2.5f32]` is
//! `[2]f32`), and with no suffix at all, one decimal makes the array `f64`.
//! [`parse_values_expecting`] instead reads unsuffixed literals as the types the
//! caller expects (an entry's parameter types, for `weft run`).
//!
//! Printing gives one line per value. Floats print with the shortest digits that read
//! back to the same bits, in Haskell's `show` notation as Futhark does: decimal for
//! `0.1 <= |x| < 10^7` (`1.5f32`, `100.0f64`), scientific otherwise (`1.0e-3f32`,
//! `1.2345678e7f32`); NaN and infinities as `f32.nan`, `f32.inf`, `-f32.inf`. An array
//! with a zero dimension prints as `empty([2][0]i64)`. Printing then parsing gives the
//! same value, bit for bit except NaN payloads.
//!
//! Parsing never panics and never recurses on the input's nesting: arrays are read
//! with an explicit stack. Errors carry the byte offset and a 1-based line:column
//! (columns count Unicode scalar values).

pub(crate) mod lexer;
pub(crate) mod parse;
pub(crate) mod print;

use crate::scalar::ScalarType;
use crate::value::{Value, ValueType};

/// A positioned error in value or random-spec text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {kind}")]
pub struct ParseError {
    /// Byte offset into the parsed text.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in Unicode scalar values.
    pub column: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// What went wrong while reading value text (messages follow rustc's wording rules:
/// lowercase, no final period, code in backticks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("unexpected character `{0}`")]
    UnexpectedChar(char),
    #[error("expected {expected}, found {found}")]
    Unexpected { expected: &'static str, found: String },
    #[error("unknown word `{0}`: expected a value")]
    UnknownWord(String),
    #[error(
        "unsupported type `{0}`: values are of type i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64 or bool"
    )]
    UnsupportedType(String),
    #[error("invalid literal `{0}`")]
    InvalidLiteral(String),
    #[error("decimal literal `{0}` cannot have an integer type")]
    DecimalWithIntegerSuffix(String),
    #[error("out-of-range literal {literal} for {ty}")]
    OutOfRange { literal: String, ty: ScalarType },
    #[error("expected {expected}, found `{found}`")]
    ExpectedType { expected: ScalarType, found: String },
    #[error("array elements have different types: {first} and {found}")]
    MixedElementTypes { first: ScalarType, found: ScalarType },
    #[error(
        "irregular array: row {row} has {}, row 1 has {}",
        elements(*n_elems),
        elements(*n_first)
    )]
    IrregularRow { row: usize, n_elems: usize, n_first: usize },
    #[error("irregular array: expected a scalar, found a nested array")]
    IrregularNestedArray,
    #[error("irregular array: expected a nested array, found a scalar")]
    IrregularScalar,
    #[error("empty array `[]` has no element type: write `empty([0]t)`, e.g. `empty([0]f32)`")]
    EmptyArrayLiteral,
    #[error("`empty(...)` cannot be an element of an array literal")]
    EmptyInsideArray,
    #[error("`empty` needs an array type with a zero dimension, such as `[0]f32`")]
    EmptyOfScalar,
    #[error("`empty({0})` would have elements: one dimension must be 0")]
    EmptyNotEmpty(ValueType),
    #[error("array too large to fit in memory")]
    TooLarge,
    #[error("too many values: expected {expected}")]
    TooManyValues { expected: usize },
    #[error("expected {expected} values, found {found}")]
    TooFewValues { expected: usize, found: usize },
    #[error("empty range {lo}..{hi}: the lower bound must be below the upper bound")]
    EmptyRange { lo: String, hi: String },
    #[error("range bounds must be finite")]
    NonFiniteRange,
    #[error("`bool` takes no range")]
    BoolRange,
}

fn elements(n: usize) -> String {
    if n == 1 { "1 element".to_owned() } else { format!("{n} elements") }
}

/// Parses a whitespace-separated stream of values (`--` comments allowed), reading
/// unsuffixed literals as Futhark does: integers as `i32`, decimals as `f64`.
pub fn parse_values(text: &str) -> Result<Vec<Value>, ParseError> {
    parse::Parser::new(text).values(None)
}

/// Parses exactly `expected.len()` values; value `i`'s unsuffixed literals take the
/// element type `expected[i]`, and a literal of another type is an error.
pub fn parse_values_expecting(
    text: &str,
    expected: &[ScalarType],
) -> Result<Vec<Value>, ParseError> {
    parse::Parser::new(text).values(Some(expected))
}

/// Parses exactly one value (with optional surrounding whitespace and comments).
pub fn parse_value(text: &str) -> Result<Value, ParseError> {
    parse::Parser::new(text).single_value()
}

/// Prints values one per line, each followed by a newline.
pub fn print_values(values: &[Value]) -> String {
    let mut out = String::new();
    for value in values {
        print::write_value(&mut out, value).expect("invariant: writing to a String cannot fail");
        out.push('\n');
    }
    out
}
