//! Which updates may write into their array's own memory instead of a copy (LANGUAGE.md
//! 1.1: the meaning is pure; the compiler updates in place whenever the array is dead
//! afterwards, seed 004's short-circuiting). The one place that decides it: the back end
//! follows it and the editor's hover reports it. Updates are `xs with [i] = v`,
//! `scatter xs is vs` and `reduce_by_index xs op ne is vs`: each is its array with some
//! elements replaced.
//!
//! The rule, conservative by design: an update of `xs` in a block `B` is in place when
//! 1. `xs` owns its memory: it is the parameter of the `loop` whose body is `B` (the
//!    back end gives a loop that updates its parameter in place a buffer of its own),
//!    or it is bound in `B` by another update (a copy or an in-place update, owned
//!    either way); a function's parameter, a lambda's parameter (a row of another
//!    array) or any other value may share memory with something still needed; and
//! 2. neither `xs` nor any variable of `B` bound before the update from `xs` (directly
//!    or through others: views and lazily computed arrays read `xs` later) is used
//!    after it in `B`; and
//! 3. the update's other array operands are not made from `xs` (they may be read while
//!    `xs` is being written), with one exception: the indices and values of a `scatter`
//!    or `reduce_by_index` that are made from `xs` but computed into memory of their
//!    own (`map`, `generate`, `scan`, `iota`, `replicate`, or another name for, a view
//!    of or a column of such an array: `let`, `:>`, `reverse`, `unzip`, ...) are fine, because the back end computes them in full before
//!    the update writes (it does not fuse them into the update's kernel, where their
//!    reads of `xs` would race with its writes). Such an operand that shares `xs`'s
//!    memory instead (`xs` itself, a view of it, or anything else made from it) still
//!    forces a copy. A `with`'s new row made from `xs` forces a copy too.
//!
//! Otherwise the update copies, and the first later use is named. The operands that
//! the back end must compute before an in-place update are [`UpdatePlan::computed_first`].

use rustc_hash::{FxHashMap, FxHashSet};

use crate::{Atom, BlockId, Exp, ExpId, Function, LoopForm, VarId};

/// How an update is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateReuse {
    /// Written into the array's own memory.
    InPlace,
    /// Written into a copy. `used_later`: the statement after the update that still
    /// reads the array (or a value made from it), when that is the reason.
    Copied { used_later: Option<ExpId> },
}

/// The decision for every `Update` of `function` (nested code included).
pub fn update_reuse(function: &Function) -> FxHashMap<ExpId, UpdateReuse> {
    update_plan(function).reuse
}

/// The decisions of [`update_reuse`] with what an in-place update needs of the back end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdatePlan {
    /// How every update (`with`, `scatter`, `reduce_by_index`) of the function is done.
    pub reuse: FxHashMap<ExpId, UpdateReuse>,
    /// For an in-place `scatter` or `reduce_by_index`, its operands (indices, values)
    /// that are made from the array it writes: the back end computes them into their
    /// own memory before the update writes (rule 3), never inside the update's kernel.
    pub computed_first: FxHashMap<ExpId, Vec<VarId>>,
}

/// [`update_reuse`]'s decisions and the operands that in-place updates compute first.
pub fn update_plan(function: &Function) -> UpdatePlan {
    let mut plan = UpdatePlan::default();
    let mut walker = Walker { f: function, out: &mut plan };
    walker.block(function.body, None);
    plan
}

/// Whether the loop whose parameter is `param` and body is `body` updates its
/// parameter in place (so the back end gives it a buffer of its own).
pub fn loop_updates_in_place(
    function: &Function,
    reuse: &FxHashMap<ExpId, UpdateReuse>,
    param: VarId,
    body: BlockId,
) -> bool {
    function.blocks[body].stmts.iter().any(|s| {
        updated_array(&function.exps[s.exp]) == Some(param)
            && reuse.get(&s.exp) == Some(&UpdateReuse::InPlace)
    })
}

/// The array an update replaces elements of, with its other operands.
fn update_parts(exp: &Exp) -> Option<(VarId, Vec<Atom>)> {
    let (array, others): (&Atom, Vec<Atom>) = if let Exp::Update { array, indices, value } = exp {
        (array, indices.iter().copied().chain([*value]).collect())
    } else if let Exp::Scatter { dest, indices, values } = exp {
        (dest, vec![*indices, *values])
    } else if let Exp::ReduceByIndex { dest, neutral, indices, values, .. } = exp {
        (dest, vec![*neutral, *indices, *values])
    } else {
        return None;
    };
    match array {
        Atom::Var(v) => Some((*v, others)),
        Atom::Const(_) => None,
    }
}

/// The array an update (`with`, `scatter`, `reduce_by_index`) replaces elements of.
pub fn updated_array(exp: &Exp) -> Option<VarId> {
    update_parts(exp).map(|(array, _)| array)
}

struct Walker<'a> {
    f: &'a Function,
    out: &'a mut UpdatePlan,
}

impl Walker<'_> {
    /// `loop_param`: the parameter of the loop whose body `block` is.
    fn block(&mut self, block: BlockId, loop_param: Option<VarId>) {
        let stmts = &self.f.blocks[block].stmts;
        for (at, stmt) in stmts.iter().enumerate() {
            let exp = &self.f.exps[stmt.exp];
            if let Some((xs, others)) = update_parts(exp) {
                let computes = matches!(exp, Exp::Scatter { .. } | Exp::ReduceByIndex { .. });
                let (decision, first) = self.decide(block, at, xs, &others, computes, loop_param);
                if decision == UpdateReuse::InPlace && !first.is_empty() {
                    self.out.computed_first.insert(stmt.exp, first);
                }
                self.out.reuse.insert(stmt.exp, decision);
            }
            if let Exp::Loop { param, form, body, .. } = exp {
                if let LoopForm::While { cond } = form {
                    self.block(*cond, None);
                }
                self.block(*body, Some(*param));
            } else {
                for nested in exp.nested_blocks() {
                    self.block(nested, None);
                }
            }
        }
    }

    /// The decision for the update at `at` in `block`, and (when in place) the
    /// operands made from `xs` that the back end computes first. `computes`: the
    /// update's array operands may be computed first (a `scatter`, a `reduce_by_index`).
    fn decide(
        &self,
        block: BlockId,
        at: usize,
        xs: VarId,
        others: &[Atom],
        computes: bool,
        loop_param: Option<VarId>,
    ) -> (UpdateReuse, Vec<VarId>) {
        let copied = |used_later| (UpdateReuse::Copied { used_later }, Vec::new());
        let stmts = &self.f.blocks[block].stmts;
        let owned = loop_param == Some(xs)
            || stmts[..at]
                .iter()
                .any(|s| s.var == xs && updated_array(&self.f.exps[s.exp]).is_some());
        if !owned {
            return copied(None);
        }
        // `xs` and everything made from it before the update; `shared`: those that
        // may share its memory (everything but values computed into memory of their
        // own, and columns of those).
        let mut derived: FxHashSet<VarId> = FxHashSet::default();
        let mut shared: FxHashSet<VarId> = FxHashSet::default();
        derived.insert(xs);
        shared.insert(xs);
        for s in &stmts[..at] {
            if self.reads_any(s.exp, &derived) {
                derived.insert(s.var);
                let exp = &self.f.exps[s.exp];
                let own_memory = match exp {
                    Exp::Map { .. }
                    | Exp::Generate { .. }
                    | Exp::Scan { .. }
                    | Exp::Iota { .. }
                    | Exp::Replicate { .. } => true,
                    // Another name for, a view of, or a column of its operands: their
                    // memory.
                    Exp::Atom(_)
                    | Exp::Coerce { .. }
                    | Exp::Tuple(_)
                    | Exp::Proj { .. }
                    | Exp::Zip(_)
                    | Exp::Unzip(_)
                    | Exp::Index { .. }
                    | Exp::Transpose(_)
                    | Exp::Reverse(_)
                    | Exp::Flatten(_)
                    | Exp::Unflatten { .. }
                    | Exp::Split { .. }
                    | Exp::Take { .. }
                    | Exp::Drop { .. } => !exp
                        .operands()
                        .iter()
                        .any(|a| matches!(a, Atom::Var(v) if shared.contains(v))),
                    // Anything else made from `xs` may share its memory (conservative).
                    Exp::Size(_)
                    | Exp::BinOp { .. }
                    | Exp::UnOp { .. }
                    | Exp::Convert { .. }
                    | Exp::Math { .. }
                    | Exp::ArrayLit { .. }
                    | Exp::Dim { .. }
                    | Exp::Call { .. }
                    | Exp::If { .. }
                    | Exp::Loop { .. }
                    | Exp::Reduce { .. }
                    | Exp::Scatter { .. }
                    | Exp::ReduceByIndex { .. }
                    | Exp::Update { .. }
                    | Exp::Concat(..)
                    | Exp::Materialise { .. } => false,
                };
                if !own_memory {
                    shared.insert(s.var);
                }
            }
        }
        // Scalars were computed before the update; arrays may be read while it writes,
        // unless the back end computes them first (rule 3).
        let mut first = Vec::new();
        for a in others {
            let Atom::Var(v) = a else { continue };
            if !derived.contains(v) || self.f.vars[*v].ty.as_scalar().is_some() {
                continue;
            }
            if !computes || shared.contains(v) {
                return copied(None);
            }
            if !first.contains(v) {
                first.push(*v);
            }
        }
        if let Some(later) = stmts[at + 1..].iter().find(|s| self.reads_any(s.exp, &derived)) {
            return copied(Some(later.exp));
        }
        let result_derived =
            matches!(self.f.blocks[block].result, Some(Atom::Var(r)) if derived.contains(&r));
        if result_derived {
            return copied(None);
        }
        (UpdateReuse::InPlace, first)
    }

    /// Whether an expression (nested code included) reads any of `vars`.
    fn reads_any(&self, exp: ExpId, vars: &FxHashSet<VarId>) -> bool {
        let exp = &self.f.exps[exp];
        let reads = |a: &Atom| matches!(a, Atom::Var(v) if vars.contains(v));
        if exp.operands().iter().any(reads) {
            return true;
        }
        exp.nested_blocks().into_iter().any(|b| self.block_reads_any(b, vars))
    }

    fn block_reads_any(&self, block: BlockId, vars: &FxHashSet<VarId>) -> bool {
        let b = &self.f.blocks[block];
        b.stmts.iter().any(|s| self.reads_any(s.exp, vars))
            || matches!(b.result, Some(Atom::Var(r)) if vars.contains(&r))
    }
}
