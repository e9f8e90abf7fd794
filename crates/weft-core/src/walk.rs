//! The one traversal of core expressions: their operands, the blocks nested in them,
//! the variables they bind for those blocks, and the types they carry. Passes and
//! analyses use these instead of their own exhaustive matches.

use crate::ir::{Atom, BlockId, Exp, IndexItem, Lambda, LoopForm, Type, VarId};

/// What an expression is: its name and what its value is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpKind {
    /// As profiles and tools name it (`map`, `array literal`).
    pub name: &'static str,
    pub made: Made,
}

/// What the reference interpreter makes of an expression's value, as the cost
/// semantics (digest 002) counts it. The memory IR differs where it can: there,
/// `transpose`, `reverse` and `replicate` are views of their operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// A scalar, or a value the operands already hold (a view, a tuple, a result
    /// passed on): no new array.
    Passed,
    /// A new array whose every element the interpreter writes itself: a parallel copy
    /// of its elements in the cost semantics.
    Copied,
    /// A new array whose elements a lambda computes (`map`, `scan`, `generate`).
    Built,
}

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

    /// The expression's kind: its name and what the reference interpreter makes of its
    /// value. One row per kind.
    pub fn kind(&self) -> ExpKind {
        let (name, made) = match self {
            Exp::Atom(_) => ("copy", Made::Passed),
            Exp::Size(_) => ("size", Made::Passed),
            Exp::BinOp { .. } => ("binop", Made::Passed),
            Exp::UnOp { .. } => ("unop", Made::Passed),
            Exp::Convert { .. } => ("convert", Made::Passed),
            Exp::Math { .. } => ("math", Made::Passed),
            Exp::Tuple(_) => ("tuple", Made::Passed),
            Exp::Proj { .. } => ("proj", Made::Passed),
            Exp::ArrayLit { .. } => ("array literal", Made::Copied),
            Exp::Index { .. } => ("index", Made::Passed),
            Exp::Dim { .. } => ("dim", Made::Passed),
            Exp::Call { .. } => ("call", Made::Passed),
            Exp::If { .. } => ("if", Made::Passed),
            Exp::Loop { .. } => ("loop", Made::Passed),
            Exp::Map { .. } => ("map", Made::Built),
            Exp::Reduce { .. } => ("reduce", Made::Passed),
            Exp::Scan { .. } => ("scan", Made::Built),
            Exp::Generate { .. } => ("generate", Made::Built),
            Exp::Scatter { .. } => ("scatter", Made::Copied),
            Exp::ReduceByIndex { .. } => ("reduce_by_index", Made::Copied),
            Exp::Update { .. } => ("update", Made::Copied),
            Exp::Iota { .. } => ("iota", Made::Copied),
            Exp::Replicate { .. } => ("replicate", Made::Copied),
            Exp::Zip(_) => ("zip", Made::Passed),
            Exp::Unzip(_) => ("unzip", Made::Passed),
            Exp::Transpose(_) => ("transpose", Made::Copied),
            Exp::Reverse(_) => ("reverse", Made::Copied),
            Exp::Flatten(_) => ("flatten", Made::Passed),
            Exp::Unflatten { .. } => ("unflatten", Made::Passed),
            Exp::Split { .. } => ("split", Made::Passed),
            Exp::Take { .. } => ("take", Made::Passed),
            Exp::Drop { .. } => ("drop", Made::Passed),
            Exp::Concat(..) => ("concat", Made::Copied),
            Exp::Materialise { .. } => ("materialise", Made::Passed),
            Exp::Coerce { .. } => ("coerce", Made::Passed),
        };
        ExpKind { name, made }
    }

    /// The expression's kind, as profiles and tools name it (`map`, `array literal`).
    pub fn name(&self) -> &'static str {
        self.kind().name
    }

    /// A combinator's written level and function argument (`map`, `reduce`, `scan`,
    /// `generate`); `None` for every other expression.
    pub fn combinator(&self) -> Option<(Option<weft_hir::Level>, &Lambda)> {
        match self {
            Exp::Map { level, lambda, .. }
            | Exp::Reduce { level, lambda, .. }
            | Exp::Scan { level, lambda, .. }
            | Exp::Generate { level, lambda, .. } => Some((*level, lambda)),
            Exp::Atom(_)
            | Exp::Size(_)
            | Exp::BinOp { .. }
            | Exp::UnOp { .. }
            | Exp::Convert { .. }
            | Exp::Math { .. }
            | Exp::Tuple(_)
            | Exp::Proj { .. }
            | Exp::ArrayLit { .. }
            | Exp::Index { .. }
            | Exp::Dim { .. }
            | Exp::Call { .. }
            | Exp::If { .. }
            | Exp::Loop { .. }
            | Exp::Scatter { .. }
            | Exp::Iota { .. }
            | Exp::Replicate { .. }
            | Exp::Zip(_)
            | Exp::Unzip(_)
            | Exp::Transpose(_)
            | Exp::Reverse(_)
            | Exp::Flatten(_)
            | Exp::Unflatten { .. }
            | Exp::Split { .. }
            | Exp::Take { .. }
            | Exp::Drop { .. }
            | Exp::Concat(..)
            | Exp::Materialise { .. }
            | Exp::Coerce { .. }
            | Exp::ReduceByIndex { .. }
            | Exp::Update { .. } => None,
        }
    }

    fn combinator_lambda_mut(&mut self) -> Option<&mut Lambda> {
        // The exhaustive list of what is a combinator is `combinator`'s.
        if let Exp::Map { lambda, .. }
        | Exp::Reduce { lambda, .. }
        | Exp::Scan { lambda, .. }
        | Exp::Generate { lambda, .. } = self
        {
            Some(lambda)
        } else {
            None
        }
    }

    /// The function argument of an expression that has one: a combinator's, or the
    /// operator of `reduce_by_index`.
    pub fn lambda(&self) -> Option<&Lambda> {
        if let Exp::ReduceByIndex { lambda, .. } = self {
            return Some(lambda);
        }
        self.combinator().map(|(_, lambda)| lambda)
    }

    fn lambda_mut(&mut self) -> Option<&mut Lambda> {
        if let Exp::ReduceByIndex { lambda, .. } = self {
            return Some(lambda);
        }
        self.combinator_lambda_mut()
    }

    /// The blocks nested in this expression, in source order (a while loop's
    /// condition before its body).
    pub fn nested_blocks(&self) -> Vec<BlockId> {
        if let Exp::If { then_branch, else_branch, .. } = self {
            return vec![*then_branch, *else_branch];
        }
        if let Exp::Loop { form, body, .. } = self {
            return match form {
                LoopForm::While { cond } => vec![*cond, *body],
                LoopForm::For { .. } => vec![*body],
            };
        }
        self.lambda().map(|lambda| vec![lambda.body]).unwrap_or_default()
    }

    /// The variables this expression binds for its nested blocks: a loop's parameter
    /// and index, a lambda's parameters.
    pub fn binders(&self) -> Vec<VarId> {
        if let Exp::Loop { param, form, .. } = self {
            return match form {
                LoopForm::For { index, .. } => vec![*param, *index],
                LoopForm::While { .. } => vec![*param],
            };
        }
        self.lambda().map(|lambda| lambda.params.clone()).unwrap_or_default()
    }

    /// Whether the expression holds nested code (`if`, `loop`, a combinator).
    pub fn has_nested_code(&self) -> bool {
        !self.nested_blocks().is_empty()
    }

    /// The level written on a combinator (`map@group`), if any.
    pub fn written_level(&self) -> Option<weft_hir::Level> {
        self.combinator().and_then(|(level, _)| level)
    }

    /// The types written in the expression, in the order of [`Exp::types_mut`].
    pub fn types(&self) -> Vec<Type> {
        // As for `operands`: one match serves both directions.
        let mut copy = self.clone();
        let mut out = Vec::new();
        copy.types_mut(&mut |ty| out.push(ty.clone()));
        out
    }

    /// Visits the types written in the expression (literal element types, coercion
    /// targets, lambda result types) mutably.
    pub fn types_mut(&mut self, f: &mut dyn FnMut(&mut Type)) {
        if let Exp::ArrayLit { elem_ty, .. } = self {
            f(elem_ty);
        } else if let Exp::Coerce { ty, .. } = self {
            f(ty);
        } else if let Some(lambda) = self.lambda_mut() {
            f(&mut lambda.ret);
        }
    }

    /// Visits the blocks nested in the expression mutably (for copying code).
    pub fn nested_blocks_mut(&mut self, f: &mut dyn FnMut(&mut BlockId)) {
        if let Exp::If { then_branch, else_branch, .. } = self {
            f(then_branch);
            f(else_branch);
        } else if let Exp::Loop { form, body, .. } = self {
            if let LoopForm::While { cond } = form {
                f(cond);
            }
            f(body);
        } else if let Some(lambda) = self.lambda_mut() {
            f(&mut lambda.body);
        }
    }

    /// Visits the variables the expression binds mutably (for copying code).
    pub fn binders_mut(&mut self, f: &mut dyn FnMut(&mut VarId)) {
        if let Exp::Loop { param, form, .. } = self {
            f(param);
            if let LoopForm::For { index, .. } = form {
                f(index);
            }
        } else if let Some(lambda) = self.lambda_mut() {
            lambda.params.iter_mut().for_each(f);
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
