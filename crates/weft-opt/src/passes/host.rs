//! What the GPU IR passes that rewrite host code share.

use weft_core::{Atom, CoreSize};
use weft_values::Scalar;

use crate::ir::{BlockId, Exp, GpuFunction, Stmt};

/// The size an `i64` atom stands for (a segment space's bound, an array's length).
pub(crate) fn atom_size(a: Atom) -> CoreSize {
    match a {
        Atom::Var(v) => CoreSize::var(v),
        Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
        Atom::Const(_) => CoreSize::zero(),
    }
}

/// Rewrites every statement of the host-level blocks from `block` down (those of host
/// `if`s, versions and loops; not SegOp bodies): `rewrite` pushes what replaces the
/// statement, the statement itself when it leaves it as it is.
pub(crate) fn rewrite_host_stmts(
    f: &mut GpuFunction,
    block: BlockId,
    rewrite: &mut dyn FnMut(&mut GpuFunction, Stmt, &mut Vec<Stmt>),
) {
    let mut stmts = Vec::with_capacity(f.blocks[block].stmts.len());
    for stmt in f.blocks[block].stmts.clone() {
        match f.exps[stmt.exp].clone() {
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                rewrite_host_stmts(f, then_branch, rewrite);
                rewrite_host_stmts(f, else_branch, rewrite);
                stmts.push(stmt);
            }
            Exp::Loop { body, .. } => {
                rewrite_host_stmts(f, body, rewrite);
                stmts.push(stmt);
            }
            Exp::Basic(_) | Exp::Manifest { .. } | Exp::Seq(_) | Exp::Seg(_) => {
                rewrite(f, stmt, &mut stmts);
            }
        }
    }
    f.blocks[block].stmts = stmts;
}
