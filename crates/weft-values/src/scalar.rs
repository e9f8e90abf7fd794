//! Scalar types and typed scalars: the element types of Weft values (LANGUAGE.md §2,
//! `scalar ::= i32 | i64 | u32 | u64 | f32 | f64 | bool`).
//!
//! A [`Scalar`] prints in Futhark's textual format (`42i32`, `1.5f32`, `f32.nan`,
//! `true`); see [`crate::text`] for the exact float rules.

use std::fmt;

/// One of Weft's seven scalar types: the one scalar type of the compiler, from the
/// checker (`weft_hir::ScalarTy`) to host plans (`weft_plan::Elem`, serialised by its
/// name) and values.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Bool,
}

impl ScalarType {
    /// Every scalar type, in declaration order.
    pub const ALL: [ScalarType; 7] = [
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U32,
        ScalarType::U64,
        ScalarType::F32,
        ScalarType::F64,
        ScalarType::Bool,
    ];

    /// The type's name as written in Weft source and in value suffixes (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::U32 => "u32",
            ScalarType::U64 => "u64",
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
    /// (`bool` takes one byte).
    pub fn size_in_bytes(self) -> usize {
        match self {
            ScalarType::Bool => 1,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Whether this is a signed or unsigned integer type.
    pub fn is_integer(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::I64 | ScalarType::U32 | ScalarType::U64)
    }

    /// Whether this is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// Whether this is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::I64)
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
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Bool(bool),
}

impl Scalar {
    /// The scalar's type.
    pub fn ty(self) -> ScalarType {
        match self {
            Scalar::I32(_) => ScalarType::I32,
            Scalar::I64(_) => ScalarType::I64,
            Scalar::U32(_) => ScalarType::U32,
            Scalar::U64(_) => ScalarType::U64,
            Scalar::F32(_) => ScalarType::F32,
            Scalar::F64(_) => ScalarType::F64,
            Scalar::Bool(_) => ScalarType::Bool,
        }
    }

    /// The scalar converted to `to` (LANGUAGE.md): integers wrap, floats to integers
    /// saturate with NaN giving 0 (Rust's `as` does exactly that), booleans are 0 or 1,
    /// and a number converts to `true` unless it is zero. The interpreter, the memory
    /// checker and host plans all convert through this.
    pub fn convert(self, to: ScalarType) -> Scalar {
        macro_rules! cast {
            ($x:expr) => {
                match to {
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
            (a, b) => a == b,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_scalar(f, *self)
    }
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

scalar_from!(i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64, bool => Bool);
