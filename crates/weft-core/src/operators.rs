//! Recognising the built-in operators a reduction, scan or histogram lambda applies:
//! the one place that decides whether an operator is commutative (so a reduction may
//! combine elements in any order) and which atomic update a histogram may use.

use weft_hir::MathFn;

use crate::{Atom, BinOp, Exp, Function, Lambda, VarId};

/// A built-in commutative and associative scalar operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommutativeOp {
    Add,
    Mul,
    BitAnd,
    BitOr,
    BitXor,
    Min,
    Max,
}

/// The operator of `\a b -> a op b` (or `b op a`) for a built-in commutative `op`.
pub fn scalar_operator(function: &Function, lambda: &Lambda) -> Option<CommutativeOp> {
    let [p, q] = lambda.params.as_slice() else { return None };
    let block = &function.blocks[lambda.body];
    let [stmt] = block.stmts.as_slice() else { return None };
    if block.result != Some(Atom::Var(stmt.var)) {
        return None;
    }
    operator_of(&function.exps[stmt.exp], *p, *q)
}

/// The operators of a lambda that combines its two arguments component by component
/// with built-in commutative operators: `\a b -> a op b` (one operator) or
/// `\(a0, .., ak) (b0, .., bk) -> (a0 op0 b0, .., ak opk bk)`, each component's
/// operands in either order. `None` for any other lambda.
pub fn componentwise_operators(function: &Function, lambda: &Lambda) -> Option<Vec<CommutativeOp>> {
    if let Some(op) = scalar_operator(function, lambda) {
        return Some(vec![op]);
    }
    let [p, q] = lambda.params.as_slice() else { return None };
    let block = &function.blocks[lambda.body];
    let Some(Atom::Var(result)) = block.result else { return None };
    let bound =
        |var: VarId| block.stmts.iter().find(|s| s.var == var).map(|s| &function.exps[s.exp]);
    let Some(Exp::Tuple(components)) = bound(result) else { return None };
    // Every statement is a projection of a parameter, a component's operator or the
    // result tuple: nothing else runs, so swapping the arguments changes nothing else.
    let projection = |var: VarId, k: usize| {
        if let Some(Exp::Proj { tuple: Atom::Var(t), index }) = bound(var) {
            return (*index as usize == k).then_some(*t);
        }
        None
    };
    let mut ops = Vec::with_capacity(components.len());
    for (k, component) in components.iter().enumerate() {
        let Atom::Var(c) = component else { return None };
        let exp = bound(*c)?;
        let (x, y) = operands(exp)?;
        let (Atom::Var(x), Atom::Var(y)) = (x, y) else { return None };
        let (tx, ty) = (projection(x, k)?, projection(y, k)?);
        if !((tx == *p && ty == *q) || (tx == *q && ty == *p)) {
            return None;
        }
        ops.push(operator_of(exp, x, y)?);
    }
    let used = 1 + 3 * components.len();
    (block.stmts.len() == used).then_some(ops)
}

/// Whether a reduction with this operator may combine elements in any order.
pub fn is_commutative(function: &Function, lambda: &Lambda) -> bool {
    componentwise_operators(function, lambda).is_some()
}

fn operands(exp: &Exp) -> Option<(Atom, Atom)> {
    if let Exp::BinOp { lhs, rhs, .. } = exp {
        return Some((*lhs, *rhs));
    }
    if let Exp::Math { args, .. } = exp
        && let [x, y] = args.as_slice()
    {
        return Some((*x, *y));
    }
    None
}

/// The operator of `exp` when it applies a built-in commutative operator to `p` and
/// `q` (in either order): what [`scalar_operator`] recognises in one statement, for IRs
/// whose lambdas are not core lambdas (the GPU IR's operators).
pub fn operator_of(exp: &Exp, p: VarId, q: VarId) -> Option<CommutativeOp> {
    let (x, y) = operands(exp)?;
    let (a, b) = (Atom::Var(p), Atom::Var(q));
    if !((x == a && y == b) || (x == b && y == a)) {
        return None;
    }
    if let Exp::BinOp { op, .. } = exp {
        return match op {
            BinOp::Add => Some(CommutativeOp::Add),
            BinOp::Mul => Some(CommutativeOp::Mul),
            BinOp::BitAnd => Some(CommutativeOp::BitAnd),
            BinOp::BitOr => Some(CommutativeOp::BitOr),
            BinOp::BitXor => Some(CommutativeOp::BitXor),
            BinOp::Sub
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Pow
            | BinOp::Eq
            | BinOp::Neq
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::Shl
            | BinOp::Shr => None,
        };
    }
    if let Exp::Math { func: MathFn::Min, .. } = exp {
        return Some(CommutativeOp::Min);
    }
    if let Exp::Math { func: MathFn::Max, .. } = exp {
        return Some(CommutativeOp::Max);
    }
    None
}
