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
//! 3. the update's other array operands (a new row, the indices and values of a
//!    scatter) are not made from `xs`: they may be read while `xs` is being written.
//!
//! Otherwise the update copies, and the first later use is named.

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
    let mut out = FxHashMap::default();
    let mut walker = Walker { f: function, out: &mut out };
    walker.block(function.body, None);
    out
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
    out: &'a mut FxHashMap<ExpId, UpdateReuse>,
}

impl Walker<'_> {
    /// `loop_param`: the parameter of the loop whose body `block` is.
    fn block(&mut self, block: BlockId, loop_param: Option<VarId>) {
        let stmts = &self.f.blocks[block].stmts;
        for (at, stmt) in stmts.iter().enumerate() {
            let exp = &self.f.exps[stmt.exp];
            if let Some((xs, others)) = update_parts(exp) {
                let decision = self.decide(block, at, xs, &others, loop_param);
                self.out.insert(stmt.exp, decision);
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

    fn decide(
        &self,
        block: BlockId,
        at: usize,
        xs: VarId,
        others: &[Atom],
        loop_param: Option<VarId>,
    ) -> UpdateReuse {
        let stmts = &self.f.blocks[block].stmts;
        let owned = loop_param == Some(xs)
            || stmts[..at]
                .iter()
                .any(|s| s.var == xs && updated_array(&self.f.exps[s.exp]).is_some());
        if !owned {
            return UpdateReuse::Copied { used_later: None };
        }
        // `xs` and everything made from it before the update.
        let mut derived: FxHashSet<VarId> = FxHashSet::default();
        derived.insert(xs);
        for s in &stmts[..at] {
            if self.reads_any(s.exp, &derived) {
                derived.insert(s.var);
            }
        }
        // Scalars were computed before the update; arrays may be read while it writes.
        let reads_itself = others.iter().any(|a| {
            matches!(a, Atom::Var(v) if derived.contains(v) && self.f.vars[*v].ty.as_scalar().is_none())
        });
        if reads_itself {
            return UpdateReuse::Copied { used_later: None };
        }
        if let Some(later) = stmts[at + 1..].iter().find(|s| self.reads_any(s.exp, &derived)) {
            return UpdateReuse::Copied { used_later: Some(later.exp) };
        }
        let result_derived =
            matches!(self.f.blocks[block].result, Some(Atom::Var(r)) if derived.contains(&r));
        if result_derived {
            return UpdateReuse::Copied { used_later: None };
        }
        UpdateReuse::InPlace
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
