//! Scalar types and typed scalars: the element types of Weft values (LANGUAGE.md §2,
//! `scalar ::= i32 | i64 | u32 | u64 | f32 | f64 | bool`, and since issue 15 the
//! small types `i8 i16 u8 u16 f16`, docs/language.md "Small scalar types").
//!
//! A [`Scalar`] prints in Futhark's textual format (`42i32`, `1.5f32`, `f32.nan`,
//! `true`); see [`crate::text`] for the exact float rules.

use std::fmt;

/// One of Weft's twelve scalar types: the one scalar type of the compiler, from the
/// checker (`weft_hir::ScalarTy`) to host plans (`weft_plan::Elem`, serialised by its
/// name) and values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    Bool,
}

impl ScalarType {
    /// Every scalar type, in declaration order.
    pub const ALL: [ScalarType; 12] = [
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::F32,
        ScalarType::F64,
        ScalarType::Bool,
    ];

    /// The type's name as written in Weft source and in value suffixes (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I8 => "i8",
            ScalarType::I16 => "i16",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U8 => "u8",
            ScalarType::U16 => "u16",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::Bool => "bool",
        }
    }

    /// The type named `name` (`"f32"`), if it is one of Weft's scalar types.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|ty| ty.name() == name)
    }

    /// Size of one element in bytes, as stored on the device and in `.npy` files
    /// (`bool` takes one byte; `f16` is stored in its 16 bits).
    pub fn size_in_bytes(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Whether this is a signed or unsigned integer type.
    pub fn is_integer(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }

    /// Whether this is `f16`, `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F16 | ScalarType::F32 | ScalarType::F64)
    }

    /// Whether this is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64)
    }

    /// Whether this is an unsigned integer type.
    pub fn is_unsigned(self) -> bool {
        matches!(self, ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64)
    }

    /// Whether this is one of the integer types narrower than 32 bits (`i8 i16 u8
    /// u16`): C promotes them to `int`, so every operation on them in a kernel is cast
    /// back to the type (which is their wrap-around).
    pub fn is_small_integer(self) -> bool {
        self.is_integer() && self.size_in_bytes() < 4
    }

    /// Whether arithmetic applies (an integer or a float type).
    pub fn is_numeric(self) -> bool {
        self.is_integer() || self.is_float()
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One typed scalar value.
///
/// `PartialEq` is IEEE equality for floats (`NaN != NaN`); use [`Scalar::bits_eq`]
/// for identity of representation, or [`crate::compare`] for test-block tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    /// An IEEE binary16 value; arithmetic on it is done in `f32` and rounded back
    /// ([`Scalar::round_f16`]).
    F16(half::f16),
    F32(f32),
    F64(f64),
    Bool(bool),
}

impl Scalar {
    /// The scalar's type.
    pub fn ty(self) -> ScalarType {
        match self {
            Scalar::I8(_) => ScalarType::I8,
            Scalar::I16(_) => ScalarType::I16,
            Scalar::I32(_) => ScalarType::I32,
            Scalar::I64(_) => ScalarType::I64,
            Scalar::U8(_) => ScalarType::U8,
            Scalar::U16(_) => ScalarType::U16,
            Scalar::U32(_) => ScalarType::U32,
            Scalar::U64(_) => ScalarType::U64,
            Scalar::F16(_) => ScalarType::F16,
            Scalar::F32(_) => ScalarType::F32,
            Scalar::F64(_) => ScalarType::F64,
            Scalar::Bool(_) => ScalarType::Bool,
        }
    }

    /// The scalar converted to `to` (LANGUAGE.md): integers wrap, floats to integers
    /// saturate with NaN giving 0 (Rust's `as` does exactly that), booleans are 0 or 1,
    /// and a number converts to `true` unless it is zero. The interpreter, the memory
    /// checker and host plans all convert through this.
    ///
    /// `f16` converts through `f64`: a number becomes the nearest `f16` (halves to
    /// even, too large a magnitude is an infinity), rounded once, from the exact value
    /// of an `f64` or `f32` and from an integer's nearest `f64` (which is exact below
    /// 2^53, and any larger integer is an infinity in `f16` either way); an `f16`
    /// converts exactly to `f32` or `f64`, and to an integer as an `f32` does.
    pub fn convert(self, to: ScalarType) -> Scalar {
        macro_rules! cast {
            ($x:expr) => {
                match to {
                    ScalarType::I8 => Scalar::I8($x as i8),
                    ScalarType::I16 => Scalar::I16($x as i16),
                    ScalarType::U8 => Scalar::U8($x as u8),
                    ScalarType::U16 => Scalar::U16($x as u16),
                    ScalarType::F16 => Scalar::F16(f16_from_f64($x as f64)),
                    ScalarType::I32 => Scalar::I32($x as i32),
                    ScalarType::I64 => Scalar::I64($x as i64),
                    ScalarType::U32 => Scalar::U32($x as u32),
                    ScalarType::U64 => Scalar::U64($x as u64),
                    ScalarType::F32 => Scalar::F32($x as f32),
                    ScalarType::F64 => Scalar::F64($x as f64),
                    ScalarType::Bool => Scalar::Bool($x != (0 as _)),
                }
            };
        }
        match self {
            Scalar::I8(x) => cast!(x),
            Scalar::I16(x) => cast!(x),
            Scalar::U8(x) => cast!(x),
            Scalar::U16(x) => cast!(x),
            Scalar::F16(x) => cast!(x.to_f32()),
            Scalar::I32(x) => cast!(x),
            Scalar::I64(x) => cast!(x),
            Scalar::U32(x) => cast!(x),
            Scalar::U64(x) => cast!(x),
            Scalar::F32(x) => cast!(x),
            Scalar::F64(x) => cast!(x),
            Scalar::Bool(b) => cast!(u8::from(b)),
        }
    }

    /// Same type and same bits, except that all NaNs are equal to each other (the
    /// textual format does not keep NaN payloads or signs).
    pub fn bits_eq(self, other: Scalar) -> bool {
        match (self, other) {
            (Scalar::F32(a), Scalar::F32(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Scalar::F64(a), Scalar::F64(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Scalar::F16(a), Scalar::F16(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (a, b) => a == b,
        }
    }

    /// An `f32` result of `f16` arithmetic rounded back to `f16` (to nearest, halves
    /// to even); anything else (a comparison's `bool`) unchanged. `f16` operations are
    /// computed in `f32` and rounded once, as the OpenCL kernels do: for `+ - * /` and
    /// `sqrt` that is exactly IEEE binary16 arithmetic, since `f32` has more than
    /// twice `f16`'s precision.
    pub fn round_f16(self) -> Scalar {
        match self {
            Scalar::F32(x) => Scalar::F16(half::f16::from_f32(x)),
            other => other,
        }
    }

    /// An `f16` as the `f32` it is computed in; anything else unchanged.
    pub fn widen_f16(self) -> Scalar {
        match self {
            Scalar::F16(x) => Scalar::F32(x.to_f32()),
            other => other,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_scalar(f, *self)
    }
}

/// The `f16` nearest to `x` (halves to even; too large a magnitude is an infinity),
/// rounded once. `half::f16::from_f64` may go through `f32` and round twice (1 +
/// 2^-11 + 2^-40 would become 1): here the `f32` step rounds to odd instead, which
/// keeps the information the second rounding needs, since `f32` has more than two
/// bits beyond `f16`'s precision.
pub fn f16_from_f64(x: f64) -> half::f16 {
    let narrow = x as f32;
    if !x.is_finite() || !narrow.is_finite() || f64::from(narrow) == x {
        return half::f16::from_f32(narrow);
    }
    let bits = narrow.to_bits();
    let odd = if bits & 1 == 1 {
        narrow
    } else if x.abs() > f64::from(narrow.abs()) {
        f32::from_bits(bits + 1)
    } else {
        f32::from_bits(bits - 1)
    };
    half::f16::from_f32(odd)
}

macro_rules! scalar_from {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl From<$t> for Scalar {
            fn from(x: $t) -> Scalar {
                Scalar::$variant(x)
            }
        }
    )*};
}

scalar_from!(i8 => I8, i16 => I16, u8 => U8, u16 => U16, half::f16 => F16, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64, bool => Bool);
