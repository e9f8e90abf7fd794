//! Facts about core code that several passes ask: free variables, use counts, and
//! whether an expression may fail or diverge (which decides what may be moved,
//! merged or removed without changing which programs report an error).

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, BinOp, BlockId, Exp, FnId, Function, LoopForm, Program, VarId, type_vars};
use weft_hir::Level;

/// The variables an expression reads that it does not bind.
pub(crate) fn free_vars_of_exp(f: &Function, exp: &Exp) -> FxHashSet<VarId> {
    let mut free = FxHashSet::default();
    let mut bound = FxHashSet::default();
    exp_free(f, exp, &mut bound, &mut free);
    free
}

/// The variables a block reads that it does not bind.
pub(crate) fn free_vars_of_block(f: &Function, block: BlockId) -> FxHashSet<VarId> {
    let mut free = FxHashSet::default();
    block_free(f, block, &mut FxHashSet::default(), &mut free);
    free
}

fn exp_free(f: &Function, exp: &Exp, bound: &mut FxHashSet<VarId>, free: &mut FxHashSet<VarId>) {
    let note = |v: VarId, bound: &FxHashSet<VarId>, free: &mut FxHashSet<VarId>| {
        if !bound.contains(&v) {
            free.insert(v);
        }
    };
    for atom in exp.operands() {
        if let Atom::Var(v) = atom {
            note(v, bound, free);
        }
    }
    if let Exp::Size(size) = exp {
        for v in size.vars() {
            note(v, bound, free);
        }
    }
    let mut written = exp.clone();
    written.types_mut(&mut |ty| type_vars(ty, &mut |v| note(v, bound, free)));
    let binders = exp.binders();
    let newly: Vec<VarId> = binders.iter().copied().filter(|v| bound.insert(*v)).collect();
    for &b in &binders {
        type_vars(&f.vars[b].ty, &mut |v| note(v, bound, free));
    }
    for block in exp.nested_blocks() {
        block_free(f, block, bound, free);
    }
    for v in newly {
        bound.remove(&v);
    }
}

fn block_free(
    f: &Function,
    block: BlockId,
    bound: &mut FxHashSet<VarId>,
    free: &mut FxHashSet<VarId>,
) {
    let mut newly = Vec::new();
    for stmt in &f.blocks[block].stmts {
        exp_free(f, &f.exps[stmt.exp], bound, free);
        type_vars(&f.vars[stmt.var].ty, &mut |v| {
            if !bound.contains(&v) && v != stmt.var {
                free.insert(v);
            }
        });
        if bound.insert(stmt.var) {
            newly.push(stmt.var);
        }
    }
    if let Some(Atom::Var(v)) = f.blocks[block].result
        && !bound.contains(&v)
    {
        free.insert(v);
    }
    for v in newly {
        bound.remove(&v);
    }
}

/// How often each variable is read by the code reachable from the function's body
/// (operands, sizes in the types of what it binds, block results, the signature).
pub fn use_counts(f: &Function) -> FxHashMap<VarId, usize> {
    fn block(f: &Function, id: BlockId, counts: &mut FxHashMap<VarId, usize>) {
        for stmt in &f.blocks[id].stmts {
            let exp = &f.exps[stmt.exp];
            let mut bump = |v: VarId| *counts.entry(v).or_default() += 1;
            for atom in exp.operands() {
                if let Atom::Var(v) = atom {
                    bump(v);
                }
            }
            if let Exp::Size(size) = exp {
                size.vars().into_iter().for_each(&mut bump);
            }
            let mut written = exp.clone();
            written.types_mut(&mut |ty| type_vars(ty, &mut bump));
            type_vars(&f.vars[stmt.var].ty, &mut bump);
            for binder in exp.binders() {
                type_vars(&f.vars[binder].ty, &mut bump);
            }
            for nested in exp.nested_blocks() {
                block(f, nested, counts);
            }
        }
        if let Some(Atom::Var(v)) = f.blocks[id].result {
            *counts.entry(v).or_default() += 1;
        }
    }
    let mut counts: FxHashMap<VarId, usize> = FxHashMap::default();
    for &p in f.params.iter().chain(&f.size_params) {
        type_vars(&f.vars[p].ty, &mut |v| *counts.entry(v).or_default() += 1);
    }
    type_vars(&f.ret, &mut |v| *counts.entry(v).or_default() += 1);
    block(f, f.body, &mut counts);
    counts
}

/// Which functions (transitively) may fail or diverge; see [`Safety::exp_is_safe`].
pub(crate) struct Safety<'p> {
    program: &'p Program,
    functions: FxHashMap<FnId, bool>,
}

impl<'p> Safety<'p> {
    pub(crate) fn program(&self) -> &'p Program {
        self.program
    }

    pub(crate) fn new(program: &'p Program) -> Safety<'p> {
        Safety { program, functions: FxHashMap::default() }
    }

    /// Whether evaluating `exp` can neither fail (a bounds, division, size or shape
    /// check) nor diverge, nor has a meaning tied to where it is (a memory annotation,
    /// an in-place `scatter` or `reduce_by_index`, a written level other than `grid`; an update `with`
    /// fails out of bounds). Only such expressions are hoisted out of
    /// loops and maps, or removed when unused: either would otherwise change which
    /// inputs report an error.
    pub(crate) fn exp_is_safe(&mut self, f: &Function, exp: &Exp) -> bool {
        let nonnegative = |atom: &Atom| match atom {
            Atom::Const(weft_values::Scalar::I64(n)) => *n >= 0,
            Atom::Const(_) => false,
            // A size parameter is the size of an argument, so it is never negative.
            Atom::Var(v) => f.size_params.contains(v),
        };
        let here = match exp {
            Exp::Atom(_)
            | Exp::UnOp { .. }
            | Exp::Convert { .. }
            | Exp::Math { .. }
            | Exp::Tuple(_)
            | Exp::Proj { .. }
            | Exp::ArrayLit { .. }
            | Exp::Dim { .. }
            | Exp::Zip(_)
            | Exp::Unzip(_)
            | Exp::Transpose(_)
            | Exp::Reverse(_)
            | Exp::Flatten(_)
            | Exp::Concat(..)
            | Exp::If { .. } => true,
            Exp::Size(size) => !size_divides(size),
            Exp::BinOp { op, ty, .. } => {
                let integer = !ty.is_float();
                !(integer && matches!(op, BinOp::Div | BinOp::Rem | BinOp::Pow))
            }
            Exp::Iota { size } => nonnegative(size),
            Exp::Replicate { size, .. } => nonnegative(size),
            // A written `grid` level is a kernel of its own wherever the host code
            // runs it: out of a loop it is still that kernel, launched once (the
            // unannotated combinator leaves the loop too, so "Make strategy explicit"
            // keeps the program). Other written levels are tied to where they are.
            Exp::Generate { size, level: None | Some(Level::Grid), .. } => nonnegative(size),
            Exp::Loop { form: LoopForm::For { .. }, .. } => true,
            Exp::Map { level: None | Some(Level::Grid), .. }
            | Exp::Reduce { level: None | Some(Level::Grid), .. }
            | Exp::Scan { level: None | Some(Level::Grid), .. } => true,
            Exp::Call { func, .. } => self.function_is_safe(*func),
            Exp::Index { .. }
            | Exp::Unflatten { .. }
            | Exp::Split { .. }
            | Exp::Take { .. }
            | Exp::Drop { .. }
            | Exp::Coerce { .. }
            | Exp::Scatter { .. }
            | Exp::ReduceByIndex { .. }
            | Exp::Update { .. }
            | Exp::Materialise { .. }
            | Exp::Loop { .. }
            | Exp::Map { .. }
            | Exp::Reduce { .. }
            | Exp::Scan { .. }
            | Exp::Generate { .. } => false,
        };
        here && exp.nested_blocks().into_iter().all(|b| self.block_is_safe(f, b))
    }

    pub(crate) fn block_is_safe(&mut self, f: &Function, block: BlockId) -> bool {
        f.blocks[block].stmts.iter().all(|s| self.exp_is_safe(f, &f.exps[s.exp]))
    }

    fn function_is_safe(&mut self, func: FnId) -> bool {
        if let Some(&known) = self.functions.get(&func) {
            return known;
        }
        // Not recursive (the core IR is first order and defs cannot call themselves);
        // the provisional `false` only guards against a malformed program.
        self.functions.insert(func, false);
        let program = self.program;
        let callee = &program.functions[func];
        let safe = self.block_is_safe(callee, callee.body);
        self.functions.insert(func, safe);
        safe
    }
}

fn size_divides(size: &weft_core::CoreSize) -> bool {
    size.terms()
        .iter()
        .any(|term| term.monomial().atoms().iter().any(|a| matches!(a, weft_size::Atom::Div(..))))
}
