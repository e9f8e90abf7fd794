//! Inlining of calls to functions that hold combinators (core IR to core IR).
//!
//! Flattening must see every combinator where it runs: a `reduce` inside a def called
//! from a map's body is inner parallelism of that map. Calls to functions without
//! combinators stay calls (they become device functions, ARCHITECTURE.md).
//!
//! A callee's size parameters are bound from its arguments' shapes (core IR docs): the
//! inlined code gets `let s = size d` for each, where `d` is the matching dimension of
//! an argument's type. A size parameter that is no dimension of any parameter (only of
//! a product, say) leaves the call as it is.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{
    Atom, BlockId, CoreSize, Exp, FnId, Function, Program, Stmt, Type, Var, VarId, VarKind,
};
use weft_values::Scalar;

/// Inlines, in every function an entry still calls, every call to a function that holds
/// a combinator (transitively), until none is left. A function that no entry calls once
/// the calls are inlined (every call to it was inlined) is left as it is: nothing runs
/// it, and inlining into it too made a file whose defs call one another in a chain
/// quadratic (each def would hold the whole chain below it).
pub fn inline_parallel_calls(program: &Program) -> Program {
    inline_calls_to(program, &parallel_functions(program))
}

/// Inlines every call whose callee's size parameters the arguments' shapes bind (the
/// code generator from the GPU IR compiles one body per kernel, no device functions).
pub fn inline_all_calls(program: &Program) -> Program {
    inline_calls_to(program, &program.functions.iter().map(|(id, _)| id).collect())
}

fn inline_calls_to(program: &Program, parallel: &FxHashSet<FnId>) -> Program {
    let mut out = program.clone();
    let mut live: FxHashSet<FnId> = program.entries.iter().copied().collect();
    let mut work: Vec<FnId> = program.entries.clone();
    while let Some(id) = work.pop() {
        let f = &mut out.functions[id];
        // Callees are inlined with their own calls still in them; repeat until the
        // function has no call to a parallel function (defs are not recursive, so
        // this ends after as many rounds as the call graph is deep).
        while inline_once(program, parallel, f) {}
        // What is still called (functions without combinators, or calls whose sizes
        // the arguments do not bind) runs too.
        for block in crate::passes::simplify::reachable_blocks(f) {
            for stmt in &f.blocks[block].stmts {
                if let Exp::Call { func, .. } = &f.exps[stmt.exp]
                    && live.insert(*func)
                {
                    work.push(*func);
                }
            }
        }
    }
    out
}

/// The functions that hold a combinator, directly or through a call.
fn parallel_functions(program: &Program) -> FxHashSet<FnId> {
    let mut parallel = FxHashSet::default();
    loop {
        let before = parallel.len();
        for (id, f) in program.functions.iter() {
            let holds = f.exps.iter().any(|(_, exp)| match exp {
                Exp::Map { .. }
                | Exp::Reduce { .. }
                | Exp::Scan { .. }
                | Exp::Generate { .. }
                | Exp::ReduceByIndex { .. } => true,
                Exp::Call { func, .. } => parallel.contains(func),
                _ => false,
            });
            if holds {
                parallel.insert(id);
            }
        }
        if parallel.len() == before {
            return parallel;
        }
    }
}

fn inline_once(program: &Program, parallel: &FxHashSet<FnId>, f: &mut Function) -> bool {
    let blocks: Vec<BlockId> = f.blocks.iter().map(|(id, _)| id).collect();
    replace_stmts(f, blocks, &mut |f, _, stmt| {
        let Exp::Call { func, args } = f.exps[stmt.exp].clone() else { return None };
        if !parallel.contains(&func) {
            return None;
        }
        inline_call(&program.functions[func], &args, f, stmt)
    })
}

/// What replaces a statement of a block, if anything does.
pub(crate) type Rewrite<'r> = dyn FnMut(&mut Function, BlockId, Stmt) -> Option<Vec<Stmt>> + 'r;

/// Replaces, in each of `blocks`, every statement for which `rewrite` (given the block
/// and the statement) returns statements by those; whether any was replaced.
pub(crate) fn replace_stmts(
    f: &mut Function,
    blocks: Vec<BlockId>,
    rewrite: &mut Rewrite<'_>,
) -> bool {
    let mut changed = false;
    for block in blocks {
        let stmts = f.blocks[block].stmts.clone();
        let mut out = Vec::with_capacity(stmts.len());
        for stmt in stmts {
            match rewrite(f, block, stmt) {
                Some(stmts) => {
                    out.extend(stmts);
                    changed = true;
                }
                None => out.push(stmt),
            }
        }
        f.blocks[block].stmts = out;
    }
    changed
}

/// The statements that replace `stmt` (`let v = call callee args`), or `None` when a
/// size parameter cannot be bound from the arguments' shapes.
fn inline_call(
    callee: &Function,
    args: &[Atom],
    f: &mut Function,
    stmt: Stmt,
) -> Option<Vec<Stmt>> {
    let mut sizes: FxHashMap<VarId, CoreSize> = FxHashMap::default();
    for (&param, arg) in callee.params.iter().zip(args) {
        if let Atom::Var(arg) = arg {
            match_dims(&callee.vars[param].ty, &f.vars[*arg].ty, &mut sizes);
        }
    }
    let mut copier = Copier { callee, map: FxHashMap::default() };
    let mut prologue = Vec::new();
    for &size_param in &callee.size_params {
        let size = sizes.get(&size_param)?.clone();
        match size.as_var() {
            Some(&v) => {
                copier.map.insert(size_param, Atom::Var(v));
            }
            None => {
                let var = f.vars.alloc(Var {
                    name: callee.vars[size_param].name.clone(),
                    ty: Type::Scalar(weft_hir::ScalarTy::I64),
                    kind: VarKind::Bound,
                });
                let exp = f.exps.alloc(Exp::Size(size));
                prologue.push(Stmt { var, exp });
                copier.map.insert(size_param, Atom::Var(var));
            }
        }
    }
    for (&param, &arg) in callee.params.iter().zip(args) {
        copier.map.insert(param, arg);
    }
    let body = copier.block(callee.body, f);
    let mut out = prologue;
    out.extend(f.blocks[body].stmts.clone());
    let result = f.blocks[body].result?;
    f.exps[stmt.exp] = Exp::Atom(result);
    out.push(stmt);
    Some(out)
}

/// Records, for each variable that is a whole dimension of `param`, the matching
/// dimension of `arg`.
fn match_dims(param: &Type, arg: &Type, sizes: &mut FxHashMap<VarId, CoreSize>) {
    match (param, arg) {
        (Type::Array { size: p, elem: pe }, Type::Array { size: a, elem: ae }) => {
            if let Some(&v) = p.as_var() {
                sizes.entry(v).or_insert_with(|| a.clone());
            }
            match_dims(pe, ae, sizes);
        }
        (Type::Tuple(ps), Type::Tuple(args)) => {
            for (p, a) in ps.iter().zip(args) {
                match_dims(p, a, sizes);
            }
        }
        _ => {}
    }
}

/// Copies a callee's code into the caller with fresh variables (or, given a snapshot
/// of the function itself with its free variables mapped to themselves, makes a copy
/// of a block with fresh variables: `interchange`).
pub(crate) struct Copier<'c> {
    pub(crate) callee: &'c Function,
    pub(crate) map: FxHashMap<VarId, Atom>,
}

impl Copier<'_> {
    pub(crate) fn var(&mut self, v: VarId, f: &mut Function) -> VarId {
        if let Some(Atom::Var(w)) = self.map.get(&v) {
            return *w;
        }
        let old = &self.callee.vars[v];
        // Allocate first so that a type mentioning the variable itself maps to it.
        let new = f.vars.alloc(Var { name: old.name.clone(), ty: old.ty.clone(), kind: old.kind });
        self.map.insert(v, Atom::Var(new));
        let ty = self.ty(&old.ty, f);
        f.vars[new].ty = ty;
        new
    }

    fn atom(&mut self, a: Atom, f: &mut Function) -> Atom {
        match a {
            Atom::Var(v) => match self.map.get(&v) {
                Some(&mapped) => mapped,
                None => Atom::Var(self.var(v, f)),
            },
            Atom::Const(_) => a,
        }
    }

    fn size(&mut self, size: &CoreSize, f: &mut Function) -> CoreSize {
        size.substitute(&mut |v| {
            Some(match self.atom(Atom::Var(*v), f) {
                Atom::Var(w) => CoreSize::var(w),
                Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
                Atom::Const(_) => return None,
            })
        })
    }

    fn ty(&mut self, ty: &Type, f: &mut Function) -> Type {
        match ty {
            Type::Scalar(_) => ty.clone(),
            Type::Array { size, elem } => {
                let size = self.size(size, f);
                Type::array(size, self.ty(elem, f))
            }
            Type::Tuple(elems) => Type::Tuple(elems.iter().map(|e| self.ty(e, f)).collect()),
        }
    }

    pub(crate) fn block(&mut self, block: BlockId, f: &mut Function) -> BlockId {
        let old = &self.callee.blocks[block];
        let mut stmts = Vec::with_capacity(old.stmts.len());
        for stmt in &old.stmts {
            let mut exp = self.callee.exps[stmt.exp].clone();
            exp.binders_mut(&mut |b| *b = self.var(*b, f));
            exp.operands_mut(&mut |a| *a = self.atom(*a, f));
            if let Exp::Size(size) = &mut exp {
                *size = self.size(size, f);
            }
            exp.types_mut(&mut |ty| *ty = self.ty(ty, f));
            exp.nested_blocks_mut(&mut |b| *b = self.block(*b, f));
            let origin = self.callee.origins.get(stmt.exp).cloned();
            let exp_id = f.exps.alloc(exp);
            if let Some(origin) = origin {
                f.origins.insert(exp_id, origin);
            }
            let var = self.var(stmt.var, f);
            stmts.push(Stmt { var, exp: exp_id });
        }
        let result = old.result.map(|a| self.atom(a, f));
        f.blocks.alloc(weft_core::Block { stmts, result })
    }
}
