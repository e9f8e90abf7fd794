//! Internal invariants of the GPU IR (bugs in the middle end, never user errors),
//! checked after every pass in the tests.
//!
//! - Every id is in range; every variable is bound once (parameter, statement,
//!   binder, segment index); every operand and every size variable is in scope.
//! - A statement binds one variable, except a SegOp, which binds one per result.
//! - Levels: host code holds no sequential combinator and no `thread` SegOp; the body
//!   of a `grid` or `thread` SegOp holds no SegOp; the body of a `group` SegOp holds
//!   only `thread` SegOps, in its own block or in the body of a `loop` there (the
//!   whole group runs such a loop, so barriers stay in uniform control flow), never
//!   under an `if`; versions are host code.
//! - A SegOp has a non-empty space; `SegRed`/`SegScan` have at least one operator whose
//!   lambda takes twice as many parameters as it has neutral elements; the body yields
//!   as many values as the operators combine (one per result for `SegMap`).

use rustc_hash::FxHashSet;
use weft_core::{Atom, CoreSize, Type, VarId, VarKind};

use crate::ir::{
    BlockId, Exp, GpuFunction, GpuProgram, Lambda, LoopForm, SegKind, SegLevel, SeqSoac,
};

/// A violated invariant: which function, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInvariantError {
    pub function: String,
    pub message: String,
}

/// Checks the invariants listed in the module docs.
pub fn validate_gpu(program: &GpuProgram) -> Vec<GpuInvariantError> {
    let mut errors = Vec::new();
    for (_, f) in program.functions.iter() {
        let mut v = Validator {
            program,
            f,
            scope: Vec::new(),
            bound: FxHashSet::default(),
            errors: Vec::new(),
        };
        for &p in f.size_params.iter().chain(&f.params) {
            v.bind(p);
        }
        v.block(f.body, Where::Host);
        errors.extend(
            v.errors
                .into_iter()
                .map(|message| GpuInvariantError { function: f.name.to_string(), message }),
        );
    }
    errors
}

/// The element at `idx`, if it is in range.
fn get<T>(arena: &la_arena::Arena<T>, idx: la_arena::Idx<T>) -> Option<&T> {
    let index = u32::from(idx.into_raw()) as usize;
    (index < arena.len()).then(|| &arena[idx])
}

/// Where code runs, for the level rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Host,
    /// The block of a `group` SegOp's body itself.
    GroupBody,
    /// Anything run by one work-item.
    WorkItem,
}

struct Validator<'a> {
    program: &'a GpuProgram,
    f: &'a GpuFunction,
    scope: Vec<Vec<VarId>>,
    bound: FxHashSet<VarId>,
    errors: Vec<String>,
}

impl Validator<'_> {
    fn name(&self, v: VarId) -> String {
        format!("`{}` ({v:?})", get(&self.f.vars, v).map_or("?", |var| var.name.as_str()))
    }

    fn bind(&mut self, v: VarId) {
        if get(&self.f.vars, v).is_none() {
            self.errors.push(format!("variable {v:?} is out of range"));
            return;
        }
        if !self.bound.insert(v) {
            let name = self.name(v);
            self.errors.push(format!("{name} is bound twice"));
        }
        match self.scope.last_mut() {
            Some(frame) => frame.push(v),
            None => self.scope.push(vec![v]),
        }
        let ty = self.f.vars[v].ty.clone();
        self.ty(&ty);
    }

    fn in_scope(&self, v: VarId) -> bool {
        get(&self.f.vars, v).is_some_and(|var| var.kind == VarKind::Existential)
            || self.scope.iter().any(|frame| frame.contains(&v))
    }

    fn use_var(&mut self, v: VarId) {
        if !self.in_scope(v) {
            let name = self.name(v);
            self.errors.push(format!("{name} is used out of scope"));
        }
    }

    fn atom(&mut self, a: Atom) {
        if let Atom::Var(v) = a {
            self.use_var(v);
        }
    }

    fn size(&mut self, size: &CoreSize) {
        for v in size.vars() {
            self.use_var(v);
        }
    }

    fn ty(&mut self, ty: &Type) {
        let mut vars = Vec::new();
        weft_core::type_vars(ty, &mut |v| vars.push(v));
        for v in vars {
            // A type may name the variable it types (an `i64` size of itself) or a
            // size bound later by the same SegOp; only unknown ids are errors here.
            if get(&self.f.vars, v).is_none() {
                self.errors.push(format!("a type names variable {v:?}, out of range"));
            }
        }
    }

    fn block(&mut self, block: BlockId, at: Where) {
        let Some(b) = get(&self.f.blocks, block) else {
            self.errors.push(format!("block {block:?} is out of range"));
            return;
        };
        self.scope.push(Vec::new());
        for stmt in &b.stmts {
            let Some(exp) = get(&self.f.exps, stmt.exp) else {
                self.errors.push(format!("expression {:?} is out of range", stmt.exp));
                continue;
            };
            let results = match exp {
                Exp::Seg(seg) => match &seg.kind {
                    SegKind::Map => get(&self.f.blocks, seg.body).map_or(0, |b| b.results.len()),
                    SegKind::Red(ops) | SegKind::Scan(ops) => ops.iter().map(|op| op.arity()).sum(),
                    SegKind::Hist { op, .. } => op.arity(),
                    SegKind::Scatter { .. } => 1,
                },
                _ => 1,
            };
            if stmt.vars.len() != results {
                self.errors.push(format!(
                    "a statement binds {} variables for {results} results",
                    stmt.vars.len()
                ));
            }
            self.exp(exp, at);
            for &v in &stmt.vars {
                self.bind(v);
            }
        }
        for &a in &b.results {
            self.atom(a);
        }
        self.scope.pop();
    }

    fn lambda(&mut self, lambda: &Lambda) {
        self.scope.push(Vec::new());
        for &p in &lambda.params {
            self.bind(p);
        }
        self.block(lambda.body, Where::WorkItem);
        self.scope.pop();
    }

    fn exp(&mut self, exp: &Exp, at: Where) {
        let inner = if at == Where::GroupBody { Where::WorkItem } else { at };
        match exp {
            Exp::Basic(basic) => {
                if basic.has_nested_code() {
                    self.errors.push("a basic expression holds nested code".into());
                }
                for a in basic.operands() {
                    self.atom(a);
                }
                if let weft_core::Exp::Size(size) = basic {
                    self.size(size);
                }
            }
            Exp::Manifest { array } => {
                if at != Where::Host {
                    self.errors.push("a manifest inside a SegOp body".into());
                }
                self.atom(*array);
                let rank2 = match array {
                    Atom::Var(v) => {
                        self.f.vars[*v].ty.elem().is_some_and(|row| row.outer_size().is_some())
                    }
                    Atom::Const(_) => false,
                };
                if !rank2 {
                    self.errors.push("a manifest of an array of fewer than two dimensions".into());
                }
            }
            Exp::If { cond, then_branch, else_branch } => {
                self.atom(*cond);
                self.block(*then_branch, inner);
                self.block(*else_branch, inner);
            }
            Exp::Version { size, threshold, then_branch, else_branch } => {
                if at != Where::Host {
                    self.errors.push("a version inside a SegOp body".into());
                }
                if get(&self.program.thresholds, *threshold).is_none() {
                    self.errors.push(format!("threshold {threshold:?} is out of range"));
                }
                self.size(size);
                self.block(*then_branch, at);
                self.block(*else_branch, at);
            }
            Exp::Loop { param, init, form, body } => {
                self.atom(*init);
                self.scope.push(Vec::new());
                self.bind(*param);
                match form {
                    LoopForm::For { index, bound } => {
                        self.atom(*bound);
                        self.bind(*index);
                    }
                    LoopForm::While { cond } => self.block(*cond, inner),
                }
                self.block(*body, at);
                self.scope.pop();
            }
            Exp::Seq(soac) => {
                if at == Where::Host {
                    self.errors.push("a sequential combinator in host code".into());
                }
                match soac {
                    SeqSoac::Map { lambda, arrays } => {
                        arrays.iter().for_each(|&a| self.atom(a));
                        self.lambda(lambda);
                    }
                    SeqSoac::Generate { size, lambda } => {
                        self.atom(*size);
                        self.lambda(lambda);
                    }
                    SeqSoac::Reduce { lambda, neutral, array }
                    | SeqSoac::Scan { lambda, neutral, array } => {
                        self.atom(*neutral);
                        self.atom(*array);
                        self.lambda(lambda);
                    }
                    SeqSoac::Hist { dest, lambda, neutral, indices, values } => {
                        for &a in &[*dest, *neutral, *indices, *values] {
                            self.atom(a);
                        }
                        self.lambda(lambda);
                    }
                }
            }
            Exp::Seg(seg) => {
                let allowed = match (at, seg.level) {
                    (Where::Host, SegLevel::Grid | SegLevel::Group) => true,
                    (Where::GroupBody, SegLevel::Thread) => true,
                    (Where::Host | Where::GroupBody | Where::WorkItem, _) => false,
                };
                if !allowed {
                    self.errors.push(format!("a {} SegOp in {at:?} code", seg.level.name()));
                }
                if seg.space.is_empty() {
                    self.errors.push("a SegOp with an empty space".into());
                }
                match &seg.kind {
                    SegKind::Map => {}
                    SegKind::Red(ops) | SegKind::Scan(ops) => {
                        if ops.is_empty() {
                            self.errors.push("a reduction SegOp without operators".into());
                        }
                        for op in ops {
                            op.neutral.iter().for_each(|&a| self.atom(a));
                            if op.lambda.params.len() != 2 * op.arity() {
                                self.errors.push("an operator whose parameters are not twice its neutral elements".into());
                            }
                            self.lambda(&op.lambda);
                        }
                    }
                    SegKind::Scatter { dest } => {
                        self.atom(*dest);
                        let yields = get(&self.f.blocks, seg.body).map_or(0, |b| b.results.len());
                        if yields != 2 {
                            self.errors.push(format!(
                                "a SegScatter body yields {yields} values, not an index and a value"
                            ));
                        }
                        if seg.space.len() != 1 {
                            self.errors.push("a SegScatter over more than one dimension".into());
                        }
                    }
                    SegKind::Hist { dest, op } => {
                        self.atom(*dest);
                        op.neutral.iter().for_each(|&a| self.atom(a));
                        if op.lambda.params.len() != 2 * op.arity() {
                            self.errors.push(
                                "an operator whose parameters are not twice its neutral elements"
                                    .into(),
                            );
                        }
                        let yields = get(&self.f.blocks, seg.body).map_or(0, |b| b.results.len());
                        if yields != 1 + op.arity() {
                            self.errors.push(format!(
                                "a SegHist body yields {yields} values, not a bin and {}",
                                op.arity()
                            ));
                        }
                        self.lambda(&op.lambda);
                    }
                }
                self.scope.push(Vec::new());
                for &(index, bound) in &seg.space {
                    self.atom(bound);
                    self.bind(index);
                }
                let body_at =
                    if seg.level == SegLevel::Group { Where::GroupBody } else { Where::WorkItem };
                self.block(seg.body, body_at);
                self.scope.pop();
            }
        }
    }
}
