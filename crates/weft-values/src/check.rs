//! The run-time checks of a Weft program, worded once. The interpreter words a failed
//! check with the numbers it found; compiled code words it when it is compiled, with
//! `{0}` and `{1}` where the numbers go, and the runner fills in the two payload words
//! the failing work-item or host check wrote (`weft_plan::ErrorSite::render`). Both go
//! through [`RuntimeCheck::words`], so the interpreter and a GPU run report the same
//! message.

use std::fmt::Display;

/// A check that can fail at run time, with what is known of it before it runs (names,
/// the operation); the numbers it fails with are given to [`RuntimeCheck::words`], at
/// most two, in the order each variant's documentation says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeCheck<'a> {
    /// An index into `array`: the index, the size of the indexed dimension.
    Index { array: &'a str },
    /// A slice of `array`: its start, the size of the sliced dimension.
    Slice { array: &'a str },
    /// `take` or `drop` (`what`) of `array`: the count, the size of `array`.
    Count { what: &'a str, array: &'a str },
    /// `split` of `array`: the size of `array`, the chunk.
    Split { array: &'a str },
    /// `unflatten` of `array`: the size of `array`, the columns asked for.
    Unflatten { array: &'a str },
    /// `value :> t`, dimension `dim` of `value` against the size `size` of `t`: the
    /// size found, the size expected.
    Coerce { value: &'a str, dim: usize, size: &'a str },
    /// `iota` or `replicate` (`what`): the size given, negative.
    NegativeSize { what: &'a str },
    /// An integer `/` or `%` of the program by zero.
    DivisionByZero,
    /// A division by zero in a size expression (`n / k` in a type).
    SizeDivisionByZero,
    /// A dimension of an entry's input against its parameter's type, in compiled code:
    /// the size found, the size expected. (The interpreter names the parameter and
    /// the dimension instead: it checks each input as it binds it.)
    InputSize,
}

impl RuntimeCheck<'_> {
    /// The message of the failed check, with `first` and `second`, the numbers it
    /// failed with, in (checks with fewer numbers ignore the rest).
    pub fn words(&self, first: &dyn Display, second: &dyn Display) -> String {
        match *self {
            RuntimeCheck::Index { array } => {
                format!("index {first} out of bounds for array `{array}` of size {second}")
            }
            RuntimeCheck::Slice { array } => {
                format!("slice out of bounds for array `{array}` of size {second} (start {first})")
            }
            RuntimeCheck::Count { what, array } => {
                format!("{what} {first} out of bounds for array `{array}` of size {second}")
            }
            RuntimeCheck::Split { array } => {
                format!("cannot split array `{array}`: size {first} is not divisible by {second}")
            }
            RuntimeCheck::Unflatten { array } => {
                format!("cannot unflatten array `{array}` of size {first} into rows of {second}")
            }
            RuntimeCheck::Coerce { value, dim, size } => format!(
                "size coercion of `{value}` failed: expected size {second} (`{size}`) in \
                 dimension {dim}, got {first}"
            ),
            RuntimeCheck::NegativeSize { what } => format!("`{what}` with negative size {first}"),
            RuntimeCheck::DivisionByZero => "integer division by zero".to_owned(),
            RuntimeCheck::SizeDivisionByZero => "size division by zero".to_owned(),
            RuntimeCheck::InputSize => format!(
                "size mismatch: an input dimension is {first}, but the parameter's type says \
                 {second}"
            ),
        }
    }

    /// The message with the numbers as `{0}` and `{1}`, for compiled code: the runner
    /// puts the payload words there.
    pub fn template(&self) -> String {
        self.words(&"{0}", &"{1}")
    }
}
