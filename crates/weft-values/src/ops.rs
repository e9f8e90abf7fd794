//! The scalar operations of LANGUAGE.md, once: binary and unary operators and the
//! math functions, with their semantics on [`Scalar`]s (wrapping integers, `f16`
//! computed in `f32` and rounded). The reference interpreter, the memory checker and
//! the host-plan evaluator all evaluate through these; the OpenCL back end generates
//! code with the same meaning (weft-lower's `kernel.rs`).

use crate::check::RuntimeCheck;
use crate::scalar::{Scalar, ScalarType};

/// A scalar binary operator (after elaboration: `&&`, `||` became `if`, `++` became
/// a concatenation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    /// Whether the operator compares (its result is a `bool`).
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Neq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
}

/// A scalar unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

/// Functions in the per-type namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MathFn {
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Tanh,
    Abs,
    Min,
    Max,
    Floor,
    Ceil,
    Pow,
    /// `f32.atan2 y x`: the angle of the point `(x, y)`, in `[-pi, pi]`.
    Atan2,
    IsNan,
    /// Constants: `f32.nan`, `f32.inf`, `f32.pi`, `i32.highest`, `i32.lowest`.
    Nan,
    Inf,
    Pi,
    Highest,
    Lowest,
}

const FLOAT_FNS: &[(&str, MathFn)] = &[
    ("sqrt", MathFn::Sqrt),
    ("exp", MathFn::Exp),
    ("log", MathFn::Log),
    ("sin", MathFn::Sin),
    ("cos", MathFn::Cos),
    ("tan", MathFn::Tan),
    ("tanh", MathFn::Tanh),
    ("abs", MathFn::Abs),
    ("min", MathFn::Min),
    ("max", MathFn::Max),
    ("floor", MathFn::Floor),
    ("ceil", MathFn::Ceil),
    ("pow", MathFn::Pow),
    ("atan2", MathFn::Atan2),
    ("isnan", MathFn::IsNan),
    ("nan", MathFn::Nan),
    ("inf", MathFn::Inf),
    ("pi", MathFn::Pi),
    ("highest", MathFn::Highest),
    ("lowest", MathFn::Lowest),
];

const INT_FNS: &[(&str, MathFn)] = &[
    ("abs", MathFn::Abs),
    ("min", MathFn::Min),
    ("max", MathFn::Max),
    ("highest", MathFn::Highest),
    ("lowest", MathFn::Lowest),
];

impl MathFn {
    /// The functions in a scalar type's namespace, by name (`f32.sqrt`, `i32.max`); none
    /// for `bool`.
    pub fn namespace(ty: ScalarType) -> &'static [(&'static str, MathFn)] {
        if ty.is_float() {
            FLOAT_FNS
        } else if ty.is_integer() {
            INT_FNS
        } else {
            &[]
        }
    }

    pub fn name(self) -> &'static str {
        FLOAT_FNS.iter().find(|(_, f)| *f == self).map_or("?", |(name, _)| name)
    }

    pub fn is_constant(self) -> bool {
        matches!(self, MathFn::Nan | MathFn::Inf | MathFn::Pi | MathFn::Highest | MathFn::Lowest)
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Min | MathFn::Max | MathFn::Pow | MathFn::Atan2 => 2,
            _ if self.is_constant() => 0,
            _ => 1,
        }
    }
}

/// Why a scalar operation has no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpError {
    /// An integer division or remainder by zero: the user's run-time error.
    DivisionByZero,
    /// Operands that type checking rules out (a compiler bug), with its words.
    Internal(&'static str),
}

impl OpError {
    /// The error's words, as every evaluator reports them.
    pub fn message(self) -> String {
        match self {
            OpError::DivisionByZero => RuntimeCheck::DivisionByZero.words(&"", &""),
            OpError::Internal(message) => message.to_owned(),
        }
    }
}

macro_rules! int_ops {
    ($op:expr, $a:expr, $b:expr, $variant:ident, $t:ty, $bits:expr) => {{
        let (a, b): ($t, $t) = ($a, $b);
        Scalar::$variant(match $op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => {
                if b == 0 {
                    return Err(OpError::DivisionByZero);
                }
                a.wrapping_div(b)
            }
            BinOp::Rem => {
                if b == 0 {
                    return Err(OpError::DivisionByZero);
                }
                a.wrapping_rem(b)
            }
            BinOp::Pow => {
                #[allow(unused_comparisons, reason = "the macro covers unsigned types")]
                let negative = b < 0;
                if negative { 0 } else { a.wrapping_pow(u32::try_from(b).unwrap_or(u32::MAX)) }
            }
            BinOp::BitAnd => a & b,
            BinOp::BitOr => a | b,
            BinOp::BitXor => a ^ b,
            BinOp::Shl => a.wrapping_shl((b as u32) % $bits),
            BinOp::Shr => a.wrapping_shr((b as u32) % $bits),
            BinOp::Eq => return Ok(Scalar::Bool(a == b)),
            BinOp::Neq => return Ok(Scalar::Bool(a != b)),
            BinOp::Lt => return Ok(Scalar::Bool(a < b)),
            BinOp::Le => return Ok(Scalar::Bool(a <= b)),
            BinOp::Gt => return Ok(Scalar::Bool(a > b)),
            BinOp::Ge => return Ok(Scalar::Bool(a >= b)),
        })
    }};
}

macro_rules! float_ops {
    ($op:expr, $a:expr, $b:expr, $variant:ident) => {{
        let (a, b) = ($a, $b);
        Scalar::$variant(match $op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Rem => a % b,
            BinOp::Pow => a.powf(b),
            BinOp::Eq => return Ok(Scalar::Bool(a == b)),
            BinOp::Neq => return Ok(Scalar::Bool(a != b)),
            BinOp::Lt => return Ok(Scalar::Bool(a < b)),
            BinOp::Le => return Ok(Scalar::Bool(a <= b)),
            BinOp::Gt => return Ok(Scalar::Bool(a > b)),
            BinOp::Ge => return Ok(Scalar::Bool(a >= b)),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                return Err(OpError::Internal("internal error: a bitwise operator on floats"));
            }
        })
    }};
}

/// A scalar binary operation with LANGUAGE.md's semantics.
pub fn binop(op: BinOp, a: Scalar, b: Scalar) -> Result<Scalar, OpError> {
    Ok(match (a, b) {
        (Scalar::I8(a), Scalar::I8(b)) => int_ops!(op, a, b, I8, i8, 8),
        (Scalar::I16(a), Scalar::I16(b)) => int_ops!(op, a, b, I16, i16, 16),
        (Scalar::U8(a), Scalar::U8(b)) => int_ops!(op, a, b, U8, u8, 8),
        (Scalar::U16(a), Scalar::U16(b)) => int_ops!(op, a, b, U16, u16, 16),
        // Computed in `f32`, rounded to `f16` (docs/language.md, "Small scalar types").
        (Scalar::F16(a), Scalar::F16(b)) => {
            binop(op, Scalar::F32(a.to_f32()), Scalar::F32(b.to_f32()))?.round_f16()
        }
        (Scalar::I32(a), Scalar::I32(b)) => int_ops!(op, a, b, I32, i32, 32),
        (Scalar::I64(a), Scalar::I64(b)) => int_ops!(op, a, b, I64, i64, 64),
        (Scalar::U32(a), Scalar::U32(b)) => int_ops!(op, a, b, U32, u32, 32),
        (Scalar::U64(a), Scalar::U64(b)) => int_ops!(op, a, b, U64, u64, 64),
        (Scalar::F32(a), Scalar::F32(b)) => float_ops!(op, a, b, F32),
        (Scalar::F64(a), Scalar::F64(b)) => float_ops!(op, a, b, F64),
        (Scalar::Bool(a), Scalar::Bool(b)) => Scalar::Bool(match op {
            BinOp::Eq => a == b,
            BinOp::Neq => a != b,
            BinOp::Lt => !a & b,
            BinOp::Le => a <= b,
            BinOp::Gt => a & !b,
            BinOp::Ge => a >= b,
            BinOp::BitAnd => a & b,
            BinOp::BitOr => a | b,
            BinOp::BitXor => a ^ b,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Pow
            | BinOp::Shl
            | BinOp::Shr => {
                return Err(OpError::Internal("internal error: arithmetic on booleans"));
            }
        }),
        _ => return Err(OpError::Internal("internal error: operands of different types")),
    })
}

/// A unary operator on a scalar (LANGUAGE.md).
pub fn unop(op: UnOp, a: Scalar) -> Result<Scalar, OpError> {
    Ok(match (op, a) {
        (_, Scalar::F16(x)) => unop(op, Scalar::F32(x.to_f32()))?.round_f16(),
        (UnOp::Neg, Scalar::I8(x)) => Scalar::I8(x.wrapping_neg()),
        (UnOp::Neg, Scalar::I16(x)) => Scalar::I16(x.wrapping_neg()),
        (UnOp::Neg, Scalar::U8(x)) => Scalar::U8(x.wrapping_neg()),
        (UnOp::Neg, Scalar::U16(x)) => Scalar::U16(x.wrapping_neg()),
        (UnOp::Not, Scalar::I8(x)) => Scalar::I8(!x),
        (UnOp::Not, Scalar::I16(x)) => Scalar::I16(!x),
        (UnOp::Not, Scalar::U8(x)) => Scalar::U8(!x),
        (UnOp::Not, Scalar::U16(x)) => Scalar::U16(!x),
        (UnOp::Neg, Scalar::I32(x)) => Scalar::I32(x.wrapping_neg()),
        (UnOp::Neg, Scalar::I64(x)) => Scalar::I64(x.wrapping_neg()),
        (UnOp::Neg, Scalar::U32(x)) => Scalar::U32(x.wrapping_neg()),
        (UnOp::Neg, Scalar::U64(x)) => Scalar::U64(x.wrapping_neg()),
        (UnOp::Neg, Scalar::F32(x)) => Scalar::F32(-x),
        (UnOp::Neg, Scalar::F64(x)) => Scalar::F64(-x),
        (UnOp::Not, Scalar::Bool(x)) => Scalar::Bool(!x),
        (UnOp::Not, Scalar::I32(x)) => Scalar::I32(!x),
        (UnOp::Not, Scalar::I64(x)) => Scalar::I64(!x),
        (UnOp::Not, Scalar::U32(x)) => Scalar::U32(!x),
        (UnOp::Not, Scalar::U64(x)) => Scalar::U64(!x),
        (UnOp::Neg, Scalar::Bool(_)) | (UnOp::Not, Scalar::F32(_) | Scalar::F64(_)) => {
            return Err(OpError::Internal("internal error: bad unary operand"));
        }
    })
}

macro_rules! float_math {
    ($t:ty, $variant:ident, $func:expr, $args:expr) => {{
        let arg = |i: usize| -> Result<$t, OpError> {
            match $args.get(i) {
                Some(Scalar::$variant(x)) => Ok(*x),
                _ => Err(OpError::Internal("internal error: bad math argument")),
            }
        };
        Scalar::$variant(match $func {
            MathFn::Sqrt => arg(0)?.sqrt(),
            MathFn::Exp => arg(0)?.exp(),
            MathFn::Log => arg(0)?.ln(),
            MathFn::Sin => arg(0)?.sin(),
            MathFn::Cos => arg(0)?.cos(),
            MathFn::Tan => arg(0)?.tan(),
            MathFn::Tanh => arg(0)?.tanh(),
            MathFn::Abs => arg(0)?.abs(),
            MathFn::Min => arg(0)?.min(arg(1)?),
            MathFn::Max => arg(0)?.max(arg(1)?),
            MathFn::Floor => arg(0)?.floor(),
            MathFn::Ceil => arg(0)?.ceil(),
            MathFn::Pow => arg(0)?.powf(arg(1)?),
            MathFn::Atan2 => arg(0)?.atan2(arg(1)?),
            MathFn::IsNan => return Ok(Scalar::Bool(arg(0)?.is_nan())),
            MathFn::Nan => <$t>::NAN,
            MathFn::Inf => <$t>::INFINITY,
            MathFn::Pi => std::f64::consts::PI as $t,
            MathFn::Highest => <$t>::MAX,
            MathFn::Lowest => <$t>::MIN,
        })
    }};
}

macro_rules! int_math {
    ($t:ty, $variant:ident, $func:expr, $args:expr) => {{
        let arg = |i: usize| -> Result<$t, OpError> {
            match $args.get(i) {
                Some(Scalar::$variant(x)) => Ok(*x),
                _ => Err(OpError::Internal("internal error: bad math argument")),
            }
        };
        Scalar::$variant(match $func {
            MathFn::Abs => {
                #[allow(unused_comparisons, reason = "the macro covers unsigned types")]
                let negative = arg(0)? < 0;
                if negative { (0 as $t).wrapping_sub(arg(0)?) } else { arg(0)? }
            }
            MathFn::Min => arg(0)?.min(arg(1)?),
            MathFn::Max => arg(0)?.max(arg(1)?),
            MathFn::Pow => binop_pow(arg(0)?, arg(1)?),
            MathFn::Highest => <$t>::MAX,
            MathFn::Lowest => <$t>::MIN,
            MathFn::Sqrt
            | MathFn::Exp
            | MathFn::Log
            | MathFn::Sin
            | MathFn::Cos
            | MathFn::Tan
            | MathFn::Tanh
            | MathFn::Atan2
            | MathFn::Floor
            | MathFn::Ceil
            | MathFn::IsNan
            | MathFn::Nan
            | MathFn::Inf
            | MathFn::Pi => {
                return Err(OpError::Internal("internal error: a float function on integers"));
            }
        })
    }};
}

fn binop_pow<T: Copy + TryInto<u32> + Default + PartialOrd + WrappingPow>(a: T, b: T) -> T {
    if b < T::default() { T::default() } else { a.wpow(b.try_into().unwrap_or(u32::MAX)) }
}

trait WrappingPow {
    fn wpow(self, exp: u32) -> Self;
}

macro_rules! wrapping_pow {
    ($($t:ty),*) => {$(impl WrappingPow for $t { fn wpow(self, exp: u32) -> Self { self.wrapping_pow(exp) } })*};
}
wrapping_pow!(i8, i16, i32, i64, u8, u16, u32, u64);

/// A math function of LANGUAGE.md on scalars of type `ty`.
pub fn math(ty: ScalarType, func: MathFn, args: &[Scalar]) -> Result<Scalar, OpError> {
    Ok(match ty {
        // The largest finite `f16` is 65504, not `f32::MAX` rounded (an infinity).
        ScalarType::F16 if func == MathFn::Highest => Scalar::F16(half::f16::MAX),
        ScalarType::F16 if func == MathFn::Lowest => Scalar::F16(half::f16::MIN),
        // Computed in `f32`, rounded to `f16`, like the operators.
        ScalarType::F16 => {
            let wide: Vec<Scalar> = args.iter().map(|a| a.widen_f16()).collect();
            math(ScalarType::F32, func, &wide)?.round_f16()
        }
        ScalarType::I8 => int_math!(i8, I8, func, args),
        ScalarType::I16 => int_math!(i16, I16, func, args),
        ScalarType::U8 => int_math!(u8, U8, func, args),
        ScalarType::U16 => int_math!(u16, U16, func, args),
        ScalarType::F32 => float_math!(f32, F32, func, args),
        ScalarType::F64 => float_math!(f64, F64, func, args),
        ScalarType::I32 => int_math!(i32, I32, func, args),
        ScalarType::I64 => int_math!(i64, I64, func, args),
        ScalarType::U32 => int_math!(u32, U32, func, args),
        ScalarType::U64 => int_math!(u64, U64, func, args),
        ScalarType::Bool => {
            return Err(OpError::Internal("internal error: a math function on booleans"));
        }
    })
}
