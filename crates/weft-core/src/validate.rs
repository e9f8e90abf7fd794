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

use crate::ir::{Atom, BlockId, CoreSize, Exp, Function, Program, Type, VarId, VarKind};

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

    /// Checks an expression through the one traversal of `walk.rs`: its operands and
    /// written types in the enclosing scope, then its nested blocks with its binders
    /// in scope.
    fn exp(&mut self, exp: &Exp) {
        exp.operands().into_iter().for_each(|a| self.atom(a));
        if let Exp::Size(size) = exp {
            self.size(size);
        }
        exp.types().iter().for_each(|ty| self.ty(ty));
        if let Exp::Call { func, .. } = exp
            && self.program.functions.iter().all(|(id, _)| id != *func)
        {
            self.errors.push(format!("call of a missing function {func:?}"));
        }
        if let Exp::ReduceByIndex { lambda, .. } = exp
            && lambda.params.len() != 2
        {
            self.errors.push(format!(
                "reduce_by_index's operator has {} parameters, not 2",
                lambda.params.len()
            ));
        }
        if let Exp::Update { indices, .. } = exp
            && indices.is_empty()
        {
            self.errors.push("an update with no index".to_owned());
        }
        let depth = self.scope.len();
        exp.binders().into_iter().for_each(|v| self.define(v));
        exp.nested_blocks().into_iter().for_each(|b| self.block(b));
        self.scope.truncate(depth);
    }
}
