//! The one traversal of core expressions: their operands, the blocks nested in them,
//! the variables they bind for those blocks, and the types they carry. Passes and
//! analyses use these instead of their own exhaustive matches.

use crate::ir::{Atom, BlockId, Exp, IndexItem, LoopForm, Type, VarId};

impl Exp {
    /// Every operand, in source order (loop bounds and slice bounds included).
    pub fn operands(&self) -> Vec<Atom> {
        // One match serves both directions: the expression is small (operands and
        // block ids, never nested code), so a copy is cheap.
        let mut copy = self.clone();
        let mut out = Vec::new();
        copy.operands_mut(&mut |a| out.push(*a));
        out
    }

    /// Visits every operand mutably, in the order of [`Exp::operands`].
    pub fn operands_mut(&mut self, f: &mut dyn FnMut(&mut Atom)) {
        match self {
            Exp::Atom(a) => f(a),
            Exp::Size(_) => {}
            Exp::BinOp { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Exp::UnOp { operand, .. } | Exp::Convert { operand, .. } => f(operand),
            Exp::Math { args, .. } | Exp::Call { args, .. } => args.iter_mut().for_each(f),
            Exp::Tuple(atoms) | Exp::Zip(atoms) => atoms.iter_mut().for_each(f),
            Exp::ArrayLit { elems, .. } => elems.iter_mut().for_each(f),
            Exp::Proj { tuple: a, .. }
            | Exp::Dim { array: a, .. }
            | Exp::Iota { size: a }
            | Exp::Unzip(a)
            | Exp::Transpose(a)
            | Exp::Reverse(a)
            | Exp::Flatten(a)
            | Exp::Materialise { value: a, .. }
            | Exp::Coerce { value: a, .. } => f(a),
            Exp::Index { array, items } => {
                f(array);
                for item in items {
                    match item {
                        IndexItem::Fix(a) => f(a),
                        IndexItem::Slice { start, end, stride } => {
                            for a in [start, end, stride].into_iter().flatten() {
                                f(a);
                            }
                        }
                    }
                }
            }
            Exp::If { cond, .. } => f(cond),
            Exp::Loop { init, form, .. } => {
                f(init);
                if let LoopForm::For { bound, .. } = form {
                    f(bound);
                }
            }
            Exp::Map { arrays, .. } => arrays.iter_mut().for_each(f),
            Exp::Reduce { neutral, array, .. } | Exp::Scan { neutral, array, .. } => {
                f(neutral);
                f(array);
            }
            Exp::Generate { size, .. } => f(size),
            Exp::Scatter { dest, indices, values } => {
                f(dest);
                f(indices);
                f(values);
            }
            Exp::ReduceByIndex { dest, neutral, indices, values, .. } => {
                f(dest);
                f(neutral);
                f(indices);
                f(values);
            }
            Exp::Update { array, indices, value } => {
                f(array);
                indices.iter_mut().for_each(&mut *f);
                f(value);
            }
            Exp::Replicate { size, value } => {
                f(size);
                f(value);
            }
            Exp::Unflatten { rows, cols, array } => {
                f(rows);
                f(cols);
                f(array);
            }
            Exp::Split { chunk: a, array }
            | Exp::Take { count: a, array }
            | Exp::Drop { count: a, array } => {
                f(a);
                f(array);
            }
            Exp::Concat(a, b) => {
                f(a);
                f(b);
            }
        }
    }

    /// The blocks nested in this expression, in source order (a while loop's
    /// condition before its body).
    pub fn nested_blocks(&self) -> Vec<BlockId> {
        match self {
            Exp::If { then_branch, else_branch, .. } => vec![*then_branch, *else_branch],
            Exp::Loop { form: LoopForm::While { cond }, body, .. } => vec![*cond, *body],
            Exp::Loop { body, .. } => vec![*body],
            Exp::Map { lambda, .. }
            | Exp::Reduce { lambda, .. }
            | Exp::Scan { lambda, .. }
            | Exp::Generate { lambda, .. }
            | Exp::ReduceByIndex { lambda, .. } => vec![lambda.body],
            _ => Vec::new(),
        }
    }

    /// The variables this expression binds for its nested blocks: a loop's parameter
    /// and index, a lambda's parameters.
    pub fn binders(&self) -> Vec<VarId> {
        match self {
            Exp::Loop { param, form: LoopForm::For { index, .. }, .. } => vec![*param, *index],
            Exp::Loop { param, .. } => vec![*param],
            Exp::Map { lambda, .. }
            | Exp::Reduce { lambda, .. }
            | Exp::Scan { lambda, .. }
            | Exp::Generate { lambda, .. }
            | Exp::ReduceByIndex { lambda, .. } => lambda.params.clone(),
            _ => Vec::new(),
        }
    }

    /// Whether the expression holds nested code (`if`, `loop`, a combinator).
    pub fn has_nested_code(&self) -> bool {
        !self.nested_blocks().is_empty()
    }

    /// The level written on a combinator (`map@group`), if any.
    pub fn written_level(&self) -> Option<weft_hir::Level> {
        match self {
            Exp::Map { level, .. }
            | Exp::Reduce { level, .. }
            | Exp::Scan { level, .. }
            | Exp::Generate { level, .. } => *level,
            _ => None,
        }
    }

    /// Visits the types written in the expression (literal element types, coercion
    /// targets, lambda result types) mutably.
    pub fn types_mut(&mut self, f: &mut dyn FnMut(&mut Type)) {
        match self {
            Exp::ArrayLit { elem_ty, .. } => f(elem_ty),
            Exp::Coerce { ty, .. } => f(ty),
            Exp::Map { lambda, .. }
            | Exp::Reduce { lambda, .. }
            | Exp::Scan { lambda, .. }
            | Exp::Generate { lambda, .. }
            | Exp::ReduceByIndex { lambda, .. } => f(&mut lambda.ret),
            _ => {}
        }
    }

    /// Visits the blocks nested in the expression mutably (for copying code).
    pub fn nested_blocks_mut(&mut self, f: &mut dyn FnMut(&mut BlockId)) {
        match self {
            Exp::If { then_branch, else_branch, .. } => {
                f(then_branch);
                f(else_branch);
            }
            Exp::Loop { form, body, .. } => {
                if let LoopForm::While { cond } = form {
                    f(cond);
                }
                f(body);
            }
            Exp::Map { lambda, .. }
            | Exp::Reduce { lambda, .. }
            | Exp::Scan { lambda, .. }
            | Exp::Generate { lambda, .. }
            | Exp::ReduceByIndex { lambda, .. } => f(&mut lambda.body),
            _ => {}
        }
    }

    /// Visits the variables the expression binds mutably (for copying code).
    pub fn binders_mut(&mut self, f: &mut dyn FnMut(&mut VarId)) {
        match self {
            Exp::Loop { param, form, .. } => {
                f(param);
                if let LoopForm::For { index, .. } = form {
                    f(index);
                }
            }
            Exp::Map { lambda, .. }
            | Exp::Reduce { lambda, .. }
            | Exp::Scan { lambda, .. }
            | Exp::Generate { lambda, .. }
            | Exp::ReduceByIndex { lambda, .. } => lambda.params.iter_mut().for_each(f),
            _ => {}
        }
    }
}

/// Visits every variable a type's sizes mention.
pub fn type_vars(ty: &Type, f: &mut dyn FnMut(VarId)) {
    match ty {
        Type::Scalar(_) => {}
        Type::Array { size, elem } => {
            size.vars().into_iter().for_each(&mut *f);
            type_vars(elem, f);
        }
        Type::Tuple(elems) => elems.iter().for_each(|e| type_vars(e, f)),
    }
}
