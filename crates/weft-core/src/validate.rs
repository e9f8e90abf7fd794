//! Internal invariants of the core IR (bugs in elaboration, never user errors).
//!
//! Checked for every function:
//! - every block has a result, and every statement, parameter and block id is in range;
//! - every variable is bound once (by a statement, a parameter, a size parameter, a
//!   lambda parameter, or a loop), and existential variables are never bound;
//! - every atom and every size variable refers to a variable in scope (bound earlier in
//!   an enclosing block, or existential);
//! - every call refers to a function of the program.

use rustc_hash::FxHashSet;

use crate::ir::{
    Atom, BlockId, CoreSize, Exp, Function, IndexItem, LoopForm, Program, Type, VarId, VarKind,
};

/// A violated invariant: which function, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantError {
    pub function: String,
    pub message: String,
}

/// Checks the invariants listed in the module docs.
pub fn validate(program: &Program) -> Vec<InvariantError> {
    let mut errors = Vec::new();
    for (_, function) in program.functions.iter() {
        let mut v = Validator {
            program,
            f: function,
            scope: Vec::new(),
            bound: FxHashSet::default(),
            errors: Vec::new(),
        };
        v.function();
        errors.extend(
            v.errors
                .into_iter()
                .map(|message| InvariantError { function: function.name.to_string(), message }),
        );
    }
    errors
}

struct Validator<'a> {
    program: &'a Program,
    f: &'a Function,
    scope: Vec<VarId>,
    bound: FxHashSet<VarId>,
    errors: Vec<String>,
}

impl Validator<'_> {
    fn function(&mut self) {
        for &v in self.f.size_params.iter().chain(&self.f.params) {
            self.define(v);
        }
        for &v in &self.f.params {
            self.ty(&self.f.vars[v].ty.clone());
        }
        self.block(self.f.body);
        let ret = self.f.ret.clone();
        self.ty(&ret);
    }

    fn define(&mut self, var: VarId) {
        if self.f.vars[var].kind == VarKind::Existential {
            self.errors.push(format!("existential variable {var:?} is bound"));
        }
        if !self.bound.insert(var) {
            self.errors
                .push(format!("variable {var:?} (`{}`) is bound twice", self.f.vars[var].name));
        }
        self.scope.push(var);
    }

    fn in_scope(&self, var: VarId) -> bool {
        self.f.vars[var].kind == VarKind::Existential || self.scope.contains(&var)
    }

    fn atom(&mut self, atom: Atom) {
        if let Atom::Var(v) = atom
            && !self.in_scope(v)
        {
            self.errors
                .push(format!("variable {v:?} (`{}`) used out of scope", self.f.vars[v].name));
        }
    }

    fn size(&mut self, size: &CoreSize) {
        for v in size.vars() {
            self.atom(Atom::Var(v));
        }
    }

    fn ty(&mut self, ty: &Type) {
        match ty {
            Type::Scalar(_) => {}
            Type::Array { size, elem } => {
                self.size(size);
                self.ty(elem);
            }
            Type::Tuple(elems) => elems.iter().for_each(|e| self.ty(e)),
        }
    }

    fn block(&mut self, block: BlockId) {
        let depth = self.scope.len();
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            self.exp(&f.exps[stmt.exp]);
            self.define(stmt.var);
            self.ty(&f.vars[stmt.var].ty);
        }
        match f.blocks[block].result {
            Some(atom) => self.atom(atom),
            None => self.errors.push(format!("block {block:?} has no result")),
        }
        self.scope.truncate(depth);
    }

    fn lambda_block(&mut self, params: &[VarId], body: BlockId) {
        let depth = self.scope.len();
        for &p in params {
            self.define(p);
        }
        self.block(body);
        self.scope.truncate(depth);
    }

    fn exp(&mut self, exp: &Exp) {
        match exp {
            Exp::Atom(a)
            | Exp::Unzip(a)
            | Exp::Transpose(a)
            | Exp::Reverse(a)
            | Exp::Flatten(a) => self.atom(*a),
            Exp::Size(size) => self.size(size),
            Exp::BinOp { lhs, rhs, .. } => {
                self.atom(*lhs);
                self.atom(*rhs);
            }
            Exp::UnOp { operand, .. } | Exp::Convert { operand, .. } => self.atom(*operand),
            Exp::Math { args, .. } | Exp::Tuple(args) | Exp::Zip(args) => {
                args.iter().for_each(|&a| self.atom(a))
            }
            Exp::Proj { tuple, .. } => self.atom(*tuple),
            Exp::ArrayLit { elems, elem_ty } => {
                elems.iter().for_each(|&a| self.atom(a));
                self.ty(elem_ty);
            }
            Exp::Index { array, items } => {
                self.atom(*array);
                for item in items {
                    match item {
                        IndexItem::Fix(a) => self.atom(*a),
                        IndexItem::Slice { start, end, stride } => {
                            for a in [start, end, stride].into_iter().flatten() {
                                self.atom(*a);
                            }
                        }
                    }
                }
            }
            Exp::Dim { array, .. } => self.atom(*array),
            Exp::Call { func, args } => {
                if self.program.functions.iter().all(|(id, _)| id != *func) {
                    self.errors.push(format!("call of a missing function {func:?}"));
                }
                args.iter().for_each(|&a| self.atom(a));
            }
            Exp::If { cond, then_branch, else_branch } => {
                self.atom(*cond);
                self.block(*then_branch);
                self.block(*else_branch);
            }
            Exp::Loop { param, init, form, body } => {
                self.atom(*init);
                let depth = self.scope.len();
                self.define(*param);
                match form {
                    LoopForm::For { index, bound } => {
                        self.atom(*bound);
                        self.define(*index);
                    }
                    LoopForm::While { cond } => self.block(*cond),
                }
                self.block(*body);
                self.scope.truncate(depth);
            }
            Exp::Map { lambda, arrays, .. } => {
                arrays.iter().for_each(|&a| self.atom(a));
                self.lambda_block(&lambda.params, lambda.body);
            }
            Exp::Reduce { lambda, neutral, array, .. }
            | Exp::Scan { lambda, neutral, array, .. } => {
                self.atom(*neutral);
                self.atom(*array);
                self.lambda_block(&lambda.params, lambda.body);
            }
            Exp::Generate { size, lambda, .. } => {
                self.atom(*size);
                self.lambda_block(&lambda.params, lambda.body);
            }
            Exp::Scatter { dest, indices, values } => {
                self.atom(*dest);
                self.atom(*indices);
                self.atom(*values);
            }
            Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                for &a in &[*dest, *neutral, *indices, *values] {
                    self.atom(a);
                }
                if lambda.params.len() != 2 {
                    self.errors.push(format!(
                        "reduce_by_index's operator has {} parameters, not 2",
                        lambda.params.len()
                    ));
                }
                self.lambda_block(&lambda.params, lambda.body);
            }
            Exp::Update { array, indices, value } => {
                self.atom(*array);
                if indices.is_empty() {
                    self.errors.push("an update with no index".to_owned());
                }
                indices.iter().for_each(|&a| self.atom(a));
                self.atom(*value);
            }
            Exp::Iota { size } => self.atom(*size),
            Exp::Replicate { size, value } => {
                self.atom(*size);
                self.atom(*value);
            }
            Exp::Unflatten { rows, cols, array } => {
                self.atom(*rows);
                self.atom(*cols);
                self.atom(*array);
            }
            Exp::Split { chunk: a, array: b }
            | Exp::Take { count: a, array: b }
            | Exp::Drop { count: a, array: b }
            | Exp::Concat(a, b) => {
                self.atom(*a);
                self.atom(*b);
            }
            Exp::Materialise { value, .. } => self.atom(*value),
            Exp::Coerce { value, ty } => {
                self.atom(*value);
                self.ty(ty);
            }
        }
    }
}
