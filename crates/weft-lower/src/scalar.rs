//! Scalar operations in OpenCL C with Weft's semantics (docs/backend.md): one place
//! for the code generator (`gpu/`), as `weft_values` is one place for the
//! interpreters.

use std::rc::Rc;

use weft_core::{BinOp, UnOp};
use weft_hir::MathFn;
use weft_plan::Elem;
use weft_values::{RuntimeCheck, Scalar};

use crate::imp::{CExpr, COp};

/// A constant as an OpenCL C literal of its type.
pub(crate) fn literal(s: Scalar) -> CExpr {
    match s {
        // Typed, so that overloaded built-ins (`min`, `abs`) pick the small type.
        Scalar::I8(v) => CExpr::Lit(Rc::from(format!("((char)({v}))"))),
        Scalar::I16(v) => CExpr::Lit(Rc::from(format!("((short)({v}))"))),
        Scalar::U8(v) => CExpr::Lit(Rc::from(format!("((uchar){v})"))),
        Scalar::U16(v) => CExpr::Lit(Rc::from(format!("((ushort){v})"))),
        // An `f16` is computed as the `float` of the same value.
        Scalar::F16(v) => literal(Scalar::F32(v.to_f32())),
        Scalar::I32(v) => {
            if v == i32::MIN {
                CExpr::lit("(-2147483647 - 1)")
            } else if v < 0 {
                CExpr::Lit(Rc::from(format!("({v})")))
            } else {
                CExpr::Lit(Rc::from(v.to_string()))
            }
        }
        Scalar::I64(v) => CExpr::Int(v),
        Scalar::U32(v) => CExpr::Lit(Rc::from(format!("{v}u"))),
        Scalar::U64(v) => CExpr::Lit(Rc::from(format!("{v}ul"))),
        Scalar::F32(v) => {
            if v.is_nan() {
                CExpr::lit("NAN")
            } else if v.is_infinite() {
                CExpr::lit(if v > 0.0 { "INFINITY" } else { "(-INFINITY)" })
            } else {
                CExpr::Lit(Rc::from(format!("{v:e}f").replace("e", "e").as_str()))
            }
        }
        Scalar::F64(v) => {
            if v.is_nan() {
                CExpr::lit("((double)NAN)")
            } else if v.is_infinite() {
                CExpr::lit(if v > 0.0 { "((double)INFINITY)" } else { "(-(double)INFINITY)" })
            } else {
                CExpr::Lit(Rc::from(format!("{v:e}").as_str()))
            }
        }
        Scalar::Bool(b) => CExpr::lit(if b { "1" } else { "0" }),
    }
}

/// `a op b` on scalars of `elem` in OpenCL C, with Weft's semantics (wrapping integer
/// arithmetic, checked integer division: `error_site` registers its run-time error).
pub(crate) fn binop(
    op: BinOp,
    elem: Elem,
    a: CExpr,
    b: CExpr,
    error_site: &mut dyn FnMut(RuntimeCheck<'_>) -> u32,
) -> (CExpr, Elem) {
    // C computes `char` and `short` in `int`: each result is cast back to its type,
    // which wraps it (docs/backend.md, "Small scalar types").
    if elem.is_small_integer() && !op.is_comparison() {
        let (value, out) = binop_int(op, elem, a, b, error_site);
        return (CExpr::cast(elem, value), out);
    }
    binop_int(op, elem, a, b, error_site)
}

fn binop_int(
    op: BinOp,
    elem: Elem,
    a: CExpr,
    b: CExpr,
    error_site: &mut dyn FnMut(RuntimeCheck<'_>) -> u32,
) -> (CExpr, Elem) {
    let int = elem.is_integer();
    let cmp = |o: COp| (CExpr::bin(o, a.clone(), b.clone()), Elem::Bool);
    match op {
        BinOp::Eq => cmp(COp::Eq),
        BinOp::Neq => cmp(COp::Ne),
        BinOp::Lt => cmp(COp::Lt),
        BinOp::Le => cmp(COp::Le),
        BinOp::Gt => cmp(COp::Gt),
        BinOp::Ge => cmp(COp::Ge),
        BinOp::BitAnd => (CExpr::bin(COp::BitAnd, a, b), elem),
        BinOp::BitOr => (CExpr::bin(COp::BitOr, a, b), elem),
        BinOp::BitXor => (CExpr::bin(COp::BitXor, a, b), elem),
        BinOp::Add | BinOp::Sub | BinOp::Mul if int => {
            let o = match op {
                BinOp::Add => COp::Add,
                BinOp::Sub => COp::Sub,
                _ => COp::Mul,
            };
            (wrapping(elem, o, a, b), elem)
        }
        BinOp::Add => (CExpr::bin(COp::Add, a, b), elem),
        BinOp::Sub => (CExpr::bin(COp::Sub, a, b), elem),
        BinOp::Mul => (CExpr::bin(COp::Mul, a, b), elem),
        BinOp::Div | BinOp::Rem if int => {
            let code = error_site(RuntimeCheck::DivisionByZero);
            let name = if op == BinOp::Div { "weft_div" } else { "weft_rem" };
            (
                CExpr::call(
                    &format!("{name}_{}", crate::imp::c_type(elem)),
                    vec![CExpr::var("weft_err"), CExpr::Int(i64::from(code)), a, b],
                ),
                elem,
            )
        }
        BinOp::Div => (CExpr::bin(COp::Div, a, b), elem),
        BinOp::Rem => (CExpr::call("fmod", vec![a, b]), elem),
        BinOp::Pow if int => {
            (CExpr::call(&format!("weft_pow_{}", crate::imp::c_type(elem)), vec![a, b]), elem)
        }
        BinOp::Pow => (CExpr::call("pow", vec![a, b]), elem),
        BinOp::Shl | BinOp::Shr => {
            let bits = elem.size_in_bytes() * 8 - 1;
            let amount =
                CExpr::bin(COp::BitAnd, CExpr::cast(Elem::U32, b), CExpr::lit(&format!("{bits}u")));
            if op == BinOp::Shl {
                let unsigned = unsigned_of(elem);
                (CExpr::cast(elem, CExpr::bin(COp::Shl, CExpr::cast(unsigned, a), amount)), elem)
            } else {
                (CExpr::bin(COp::Shr, a, amount), elem)
            }
        }
    }
}

fn unsigned_of(elem: Elem) -> Elem {
    match elem {
        Elem::I8 | Elem::U8 => Elem::U8,
        Elem::I16 | Elem::U16 => Elem::U16,
        Elem::I32 | Elem::U32 => Elem::U32,
        Elem::I64 | Elem::U64 => Elem::U64,
        other => other,
    }
}

/// Signed overflow is undefined in C: signed arithmetic goes through the unsigned type.
fn wrapping(elem: Elem, op: COp, a: CExpr, b: CExpr) -> CExpr {
    let u = unsigned_of(elem);
    if u == elem {
        return CExpr::bin(op, a, b);
    }
    // Index arithmetic on `long` values known not to overflow stays readable.
    if elem == Elem::I64 && (a.as_int().is_some() || b.as_int().is_some()) && op != COp::Mul {
        return CExpr::bin(op, a, b);
    }
    CExpr::cast(elem, CExpr::bin(op, CExpr::cast(u, a), CExpr::cast(u, b)))
}

/// An `f32` result of `f16` arithmetic rounded to `f16` (nearest, halves to even): the
/// kernels' half of [`weft_values::Scalar::round_f16`].
pub(crate) fn round_f16(value: CExpr) -> CExpr {
    CExpr::call("weft_round_h", vec![value])
}

pub(crate) fn unop(op: UnOp, elem: Elem, a: CExpr) -> CExpr {
    match (op, elem) {
        (UnOp::Neg, _) if elem.is_float() => CExpr::neg(a),
        (_, _) if elem.is_small_integer() => CExpr::cast(elem, unop_int(op, elem, a)),
        _ => unop_int(op, elem, a),
    }
}

fn unop_int(op: UnOp, elem: Elem, a: CExpr) -> CExpr {
    match (op, elem) {
        (UnOp::Neg, _) => wrapping(elem, COp::Sub, CExpr::Int(0), a).pipe_neg_fix(elem),
        (UnOp::Not, Elem::Bool) => CExpr::cast(Elem::Bool, CExpr::not(a)),
        (UnOp::Not, _) => CExpr::call("~", vec![a]),
    }
}

trait NegFix {
    fn pipe_neg_fix(self, elem: Elem) -> CExpr;
}

impl NegFix for CExpr {
    /// `0 - a` with a constant left operand is not routed through unsigned arithmetic
    /// by [`wrapping`]; negation must be, for `-INT_MIN`.
    fn pipe_neg_fix(self, elem: Elem) -> CExpr {
        match &self {
            CExpr::Bin(COp::Sub, z, a) if z.as_int() == Some(0) => {
                let u = unsigned_of(elem);
                if u == elem {
                    self
                } else {
                    CExpr::cast(
                        elem,
                        CExpr::bin(COp::Sub, CExpr::lit("0"), CExpr::cast(u, (**a).clone())),
                    )
                }
            }
            CExpr::Neg(a) => {
                let u = unsigned_of(elem);
                if u == elem {
                    CExpr::bin(COp::Sub, CExpr::lit("0"), (**a).clone())
                } else {
                    CExpr::cast(
                        elem,
                        CExpr::bin(COp::Sub, CExpr::lit("0"), CExpr::cast(u, (**a).clone())),
                    )
                }
            }
            _ => self,
        }
    }
}

pub(crate) fn convert(from: Elem, to: Elem, a: CExpr) -> CExpr {
    if from == to {
        return a;
    }
    let float_from = from.is_float();
    match to {
        Elem::Bool => CExpr::cast(Elem::Bool, CExpr::bin(COp::Ne, a, CExpr::Int(0))),
        // Rounded once from the `double` (Scalar::convert does the same).
        Elem::F16 if from == Elem::F64 => CExpr::call("weft_d2h_round", vec![a]),
        // Every integer below 2^24 is an exact `float`; any larger one is an infinity
        // in `f16` either way, so rounding through `float` is rounding once.
        Elem::F16 => round_f16(CExpr::cast(Elem::F32, a)),
        _ if to.is_integer() && float_from => {
            CExpr::call(&format!("convert_{}_sat", crate::imp::c_type(to)), vec![a])
        }
        _ => CExpr::cast(to, a),
    }
}

pub(crate) fn math(elem: Elem, func: MathFn, args: Vec<CExpr>) -> (CExpr, Elem) {
    let float = elem.is_float();
    let f32_ = elem == Elem::F32 || elem == Elem::F16;
    if func.is_constant() && elem == Elem::F16 {
        // The interpreter's constant, as a literal (one place says what they are).
        if let Ok(value) = weft_values::math(elem, func, &[]) {
            return (literal(value), elem);
        }
    }
    let call = |name: &str| (CExpr::call(name, args.clone()), elem);
    match func {
        MathFn::Sqrt => call("sqrt"),
        MathFn::Exp => call("exp"),
        MathFn::Log => call("log"),
        MathFn::Sin => call("sin"),
        MathFn::Cos => call("cos"),
        MathFn::Tan => call("tan"),
        MathFn::Tanh => call("tanh"),
        MathFn::Floor => call("floor"),
        MathFn::Ceil => call("ceil"),
        MathFn::Abs if float => call("fabs"),
        MathFn::Abs => (CExpr::cast(elem, CExpr::call("abs", args.clone())), elem),
        MathFn::Min if float => call("fmin"),
        MathFn::Max if float => call("fmax"),
        // Integer literals are `int` in C: cast both operands, or `min(0, x)` is ambiguous.
        MathFn::Min | MathFn::Max => {
            let name = if func == MathFn::Min { "min" } else { "max" };
            (CExpr::call(name, args.iter().map(|a| CExpr::cast(elem, a.clone())).collect()), elem)
        }
        MathFn::Pow if float => call("pow"),
        MathFn::Atan2 => call("atan2"),
        MathFn::Pow => {
            (CExpr::call(&format!("weft_pow_{}", crate::imp::c_type(elem)), args.clone()), elem)
        }
        MathFn::IsNan => (CExpr::cast(Elem::Bool, CExpr::call("isnan", args.clone())), Elem::Bool),
        MathFn::Nan => (CExpr::lit(if f32_ { "NAN" } else { "((double)NAN)" }), elem),
        MathFn::Inf => (CExpr::lit(if f32_ { "INFINITY" } else { "((double)INFINITY)" }), elem),
        MathFn::Pi => (CExpr::lit(if f32_ { "M_PI_F" } else { "M_PI" }), elem),
        MathFn::Highest => (
            CExpr::lit(match elem {
                Elem::F16 => "65504.0f",
                Elem::I8 => "((char)127)",
                Elem::I16 => "((short)32767)",
                Elem::U8 => "((uchar)255)",
                Elem::U16 => "((ushort)65535)",
                Elem::F32 => "FLT_MAX",
                Elem::F64 => "DBL_MAX",
                Elem::I32 => "INT_MAX",
                Elem::I64 => "LONG_MAX",
                Elem::U32 => "UINT_MAX",
                Elem::U64 => "ULONG_MAX",
                Elem::Bool => "1",
            }),
            elem,
        ),
        MathFn::Lowest => (
            CExpr::lit(match elem {
                Elem::F16 => "(-65504.0f)",
                Elem::I8 => "((char)(-128))",
                Elem::I16 => "((short)(-32768))",
                Elem::U8 => "((uchar)0)",
                Elem::U16 => "((ushort)0)",
                Elem::F32 => "(-FLT_MAX)",
                Elem::F64 => "(-DBL_MAX)",
                Elem::I32 => "INT_MIN",
                Elem::I64 => "LONG_MIN",
                Elem::U32 => "0u",
                Elem::U64 => "0ul",
                Elem::Bool => "0",
            }),
            elem,
        ),
    }
}
