//! Evaluation of host expressions.

use weft_values::Scalar;

use crate::{BinOp, Elem, Expr, Var};

/// A host scalar is a Weft scalar.
pub type HostScalar = Scalar;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("host variable v{0} is not bound to a scalar")]
    Unbound(u32),
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("host expression applies `{op}` to {lhs} and {rhs}")]
    Mismatch { op: &'static str, lhs: &'static str, rhs: &'static str },
}

/// Evaluates `expr`, reading variables through `lookup`.
pub fn eval(expr: &Expr, lookup: &dyn Fn(Var) -> Option<Scalar>) -> Result<Scalar, EvalError> {
    Ok(match expr {
        Expr::I64(v) => Scalar::I64(*v),
        Expr::Bool(b) => Scalar::Bool(*b),
        Expr::Lit { elem, bits } => lit(*elem, *bits),
        Expr::Var(var) => lookup(*var).ok_or(EvalError::Unbound(var.0))?,
        Expr::Not(e) => match eval(e, lookup)? {
            Scalar::Bool(b) => Scalar::Bool(!b),
            other => return Err(mismatch("!", other, other)),
        },
        Expr::Neg(e) => match eval(e, lookup)? {
            Scalar::I64(v) => Scalar::I64(v.wrapping_neg()),
            other => return Err(mismatch("-", other, other)),
        },
        Expr::Select(c, a, b) => match eval(c, lookup)? {
            Scalar::Bool(true) => eval(a, lookup)?,
            Scalar::Bool(false) => eval(b, lookup)?,
            other => return Err(mismatch("if", other, other)),
        },
        Expr::Convert(to, e) => eval(e, lookup)?.convert(*to),
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, lookup)?, eval(b, lookup)?);
            bin(*op, a, b)?
        }
    })
}

/// The scalar an [`Expr::Lit`] stands for.
pub fn lit(elem: Elem, bits: u64) -> Scalar {
    match elem {
        Elem::I8 => Scalar::I8(bits as i8),
        Elem::I16 => Scalar::I16(bits as i16),
        Elem::U8 => Scalar::U8(bits as u8),
        Elem::U16 => Scalar::U16(bits as u16),
        Elem::F16 => Scalar::F16(weft_values::f16::from_bits(bits as u16)),
        Elem::I32 => Scalar::I32(bits as i32),
        Elem::I64 => Scalar::I64(bits as i64),
        Elem::U32 => Scalar::U32(bits as u32),
        Elem::U64 => Scalar::U64(bits),
        Elem::F32 => Scalar::F32(f32::from_bits(bits as u32)),
        Elem::F64 => Scalar::F64(f64::from_bits(bits)),
        Elem::Bool => Scalar::Bool(bits != 0),
    }
}

/// The [`Expr::Lit`] of a scalar.
pub fn lit_of(s: Scalar) -> Expr {
    let (elem, bits) = match s {
        Scalar::I8(v) => (Elem::I8, v as i64 as u64),
        Scalar::I16(v) => (Elem::I16, v as i64 as u64),
        Scalar::U8(v) => (Elem::U8, u64::from(v)),
        Scalar::U16(v) => (Elem::U16, u64::from(v)),
        Scalar::F16(v) => (Elem::F16, u64::from(v.to_bits())),
        Scalar::I32(v) => (Elem::I32, v as i64 as u64),
        Scalar::I64(v) => (Elem::I64, v as u64),
        Scalar::U32(v) => (Elem::U32, u64::from(v)),
        Scalar::U64(v) => (Elem::U64, v),
        Scalar::F32(v) => (Elem::F32, u64::from(v.to_bits())),
        Scalar::F64(v) => (Elem::F64, v.to_bits()),
        Scalar::Bool(b) => (Elem::Bool, u64::from(b)),
    };
    Expr::Lit { elem, bits }
}

fn type_name(s: Scalar) -> &'static str {
    s.ty().name()
}

fn mismatch(op: &'static str, a: Scalar, b: Scalar) -> EvalError {
    EvalError::Mismatch { op, lhs: type_name(a), rhs: type_name(b) }
}

/// Host operators are Weft's scalar operators on `i64` and `bool` (`weft_values::binop`
/// and `math`), so that host code wraps and truncates as the interpreter does.
fn bin(op: BinOp, a: Scalar, b: Scalar) -> Result<Scalar, EvalError> {
    use weft_values::{BinOp as Op, MathFn, OpError};
    let name = op.symbol();
    let ints = matches!((a, b), (Scalar::I64(_), Scalar::I64(_)));
    let bools = matches!((a, b), (Scalar::Bool(_), Scalar::Bool(_)));
    let (scalar_op, allowed) = match op {
        BinOp::Add => (Op::Add, ints),
        BinOp::Sub => (Op::Sub, ints),
        BinOp::Mul => (Op::Mul, ints),
        BinOp::Div => (Op::Div, ints),
        BinOp::Rem => (Op::Rem, ints),
        BinOp::Lt => (Op::Lt, ints),
        BinOp::Le => (Op::Le, ints),
        BinOp::Gt => (Op::Gt, ints),
        BinOp::Ge => (Op::Ge, ints),
        BinOp::Eq => (Op::Eq, ints || bools),
        BinOp::Ne => (Op::Neq, ints || bools),
        BinOp::And => (Op::BitAnd, bools),
        BinOp::Or => (Op::BitOr, bools),
        BinOp::Min | BinOp::Max => {
            if !ints {
                return Err(mismatch(name, a, b));
            }
            let func = if op == BinOp::Min { MathFn::Min } else { MathFn::Max };
            return weft_values::math(Elem::I64, func, &[a, b]).map_err(|_| mismatch(name, a, b));
        }
    };
    if !allowed {
        return Err(mismatch(name, a, b));
    }
    weft_values::binop(scalar_op, a, b).map_err(|error| match error {
        OpError::DivisionByZero => EvalError::DivisionByZero,
        OpError::Internal(_) => mismatch(name, a, b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(var: Var) -> Option<Scalar> {
        (var.0 == 0).then_some(Scalar::I64(10))
    }

    #[test]
    fn arithmetic_wraps_and_truncates() {
        let e = Expr::bin(BinOp::Div, Expr::I64(-7), Expr::I64(2));
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I64(-3)));
        let e = Expr::bin(BinOp::Rem, Expr::I64(-7), Expr::I64(2));
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I64(-1)));
        let e = Expr::bin(BinOp::Add, Expr::I64(i64::MAX), Expr::I64(1));
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I64(i64::MIN)));
        let e = Expr::bin(BinOp::Mul, Expr::Var(Var(0)), Expr::I64(3));
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I64(30)));
    }

    #[test]
    fn errors() {
        let e = Expr::bin(BinOp::Div, Expr::I64(1), Expr::I64(0));
        assert_eq!(eval(&e, &lookup), Err(EvalError::DivisionByZero));
        assert_eq!(eval(&Expr::Var(Var(3)), &lookup), Err(EvalError::Unbound(3)));
        let e = Expr::bin(BinOp::And, Expr::I64(1), Expr::Bool(true));
        assert!(matches!(eval(&e, &lookup), Err(EvalError::Mismatch { .. })));
    }

    #[test]
    fn conversions_saturate() {
        let e = Expr::Convert(Elem::I32, Box::new(Expr::I64(1 << 40)));
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I32(0)));
        let e = Expr::Select(
            Box::new(Expr::bin(BinOp::Lt, Expr::Var(Var(0)), Expr::I64(5))),
            Box::new(Expr::I64(1)),
            Box::new(Expr::I64(2)),
        );
        assert_eq!(eval(&e, &lookup), Ok(Scalar::I64(2)));
    }
}
