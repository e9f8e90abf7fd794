//! Memory expansion (seed 004 §5, `MemoryExpand`; digest §7 with fix P4): allocations
//! inside the lambda of a `map` or `generate` are hoisted out of it.
//!
//! Expects: an annotated program ([`crate::annotate`]). Guarantees: every block whose
//! allocation is a top-level statement of a `map`/`generate` lambda and whose size does
//! not depend on anything bound inside the lambda is allocated once, right before the
//! SOAC's statement, with `se·y` elements (`se` per thread, `y` threads), and every
//! LMAD in that block is rewritten so each thread owns a disjoint part:
//!
//! - [`Layout::Interleaved`] (GPU, coalesced): address `a` of thread `x` becomes
//!   `a·y + x`, i.e. `offset' = offset·y + x`, `strides' = strides·y`. The paper prints
//!   `offset + x`, which breaks aliasing between arrays of one block with different
//!   offsets (digest E6); that rule is not implemented.
//! - [`Layout::Chunked`] (CPU): `offset' = x·se + offset`, strides unchanged.
//!
//! Only LMADs change; statements do not (the paper's point: every access goes through
//! the LMADs). SOACs are processed innermost first, so an allocation of an inner lambda
//! moves to the outer lambda's body and can be expanded again (sizes multiply, offsets
//! compose as `(a·y_in + x_in)·y_out + x_out`). Allocations that stay are listed in
//! [`MemFunction::not_expanded`] with the reason: a size that varies per thread (digest
//! D8), an allocation under a branch or loop of the lambda, or a `reduce`/`scan` lambda
//! (no thread index).
//!
//! A lambda's array result is still copied into row `x` of the SOAC's result (digest E5,
//! the implicit row copy); memory short-circuiting, which would build it in place, is
//! not implemented.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{BlockId, Exp, ExpId, Function, Lambda, Program, Type, VarId, VarKind};
use weft_size::Size;

use crate::ir::{
    BlockBinding, Expansion, Layout, MemFunction, MemInfo, MemLmad, MemProgram, MemSize, MemVar,
    NotExpanded, NotExpandedReason,
};
use crate::lower::{defined_inside, mem_size};

/// Which device the layout of expanded memory is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Interleaved per-thread parts (coalesced accesses).
    #[default]
    Gpu,
    /// Contiguous per-thread chunks (locality per thread).
    Cpu,
}

/// Options of [`expand`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExpandOptions {
    pub target: Target,
}

impl ExpandOptions {
    /// The layout for the target.
    pub fn layout(self) -> Layout {
        match self.target {
            Target::Gpu => Layout::Interleaved,
            Target::Cpu => Layout::Chunked,
        }
    }
}

/// Expands the allocations of every function of `mem` (see the module docs).
pub fn expand(program: &Program, mem: &MemProgram, options: ExpandOptions) -> MemProgram {
    let mut out = mem.clone();
    for (fn_id, function) in program.functions.iter() {
        if let Some(mem_function) = out.functions.get_mut(fn_id) {
            expand_function(function, mem_function, options.layout());
        }
    }
    out
}

/// [`expand`] of one function's memory, for callers that lay out functions each on its
/// own.
pub fn expand_one(f: &Function, mem: &MemFunction, options: ExpandOptions) -> MemFunction {
    let mut out = mem.clone();
    expand_function(f, &mut out, options.layout());
    out
}

/// The LMAD of thread `tid`'s part of an expanded block (digest §7, fixed).
pub fn expand_lmad(
    lmad: &MemLmad,
    tid: &MemSize,
    n_threads: &MemSize,
    per_thread: &MemSize,
    layout: Layout,
) -> MemLmad {
    let mut res = lmad.clone();
    match layout {
        Layout::Interleaved => {
            res.offset = lmad.offset.mul(n_threads).add(tid);
            for dim in &mut res.dims {
                dim.stride = dim.stride.mul(n_threads);
            }
        }
        Layout::Chunked => res.offset = tid.mul(per_thread).add(&lmad.offset),
    }
    res
}

fn expand_function(f: &Function, mem: &mut MemFunction, layout: Layout) {
    let mut stmt_block = FxHashMap::default();
    for (block_id, block) in f.blocks.iter() {
        for stmt in &block.stmts {
            stmt_block.insert(stmt.var, block_id);
        }
    }
    let mut ctx = Ctx { f, mem, layout, stmt_block, reported: FxHashSet::default() };
    ctx.walk(f.body);
}

struct Ctx<'a> {
    f: &'a Function,
    mem: &'a mut MemFunction,
    layout: Layout,
    stmt_block: FxHashMap<VarId, BlockId>,
    reported: FxHashSet<la_arena::Idx<crate::ir::MemBlock>>,
}

impl Ctx<'_> {
    /// Post-order: nested SOACs first.
    fn walk(&mut self, block: BlockId) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            for block in exp.nested_blocks() {
                self.walk(block);
            }
            // Only a map's (or generate's) result is expanded; the other functional
            // arguments keep their memory.
            match (exp, exp.lambda()) {
                (Exp::Map { .. } | Exp::Generate { .. }, Some(lambda)) => {
                    self.soac(stmt.var, stmt.exp, lambda);
                }
                (_, Some(lambda)) => self.keep_all(lambda, NotExpandedReason::NotAMap),
                (_, None) => {}
            }
        }
    }

    fn inside(&self, lambda: &Lambda) -> (FxHashSet<VarId>, FxHashSet<ExpId>) {
        let mut vars: FxHashSet<VarId> = lambda.params.iter().copied().collect();
        let mut exps = FxHashSet::default();
        defined_inside(self.f, lambda.body, &mut vars, &mut exps);
        (vars, exps)
    }

    fn report(&mut self, block: la_arena::Idx<crate::ir::MemBlock>, reason: NotExpandedReason) {
        if self.reported.insert(block) {
            self.mem.not_expanded.push(NotExpanded { block, reason });
        }
    }

    fn keep_all(&mut self, lambda: &Lambda, reason: NotExpandedReason) {
        let (vars, _) = self.inside(lambda);
        let blocks: Vec<_> = self
            .mem
            .blocks
            .iter()
            .filter(|(_, b)| matches!(&b.binding, BlockBinding::Alloc { before, .. } if vars.contains(before)))
            .map(|(id, _)| id)
            .collect();
        for block in blocks {
            self.report(block, reason);
        }
    }

    fn soac(&mut self, soac_var: VarId, soac: ExpId, lambda: &Lambda) {
        let Type::Array { size, .. } = &self.f.vars[soac_var].ty else { return };
        let n_threads = mem_size(size);
        let tid = Size::var(MemVar::Thread(soac));
        let (vars, exps) = self.inside(lambda);
        let candidates: Vec<_> = self
            .mem
            .blocks
            .iter()
            .filter_map(|(id, b)| match &b.binding {
                BlockBinding::Alloc { before, elems, .. } if vars.contains(before) => {
                    Some((id, *before, elems.clone()))
                }
                BlockBinding::Alloc { .. }
                | BlockBinding::ResultAlloc { .. }
                | BlockBinding::Param { .. }
                | BlockBinding::Existential { .. } => None,
            })
            .collect();
        for (block, before, elems) in candidates {
            if self.stmt_block.get(&before) != Some(&lambda.body) {
                self.report(block, NotExpandedReason::Nested);
                continue;
            }
            // An existential size is bound by a value, possibly one of this thread's:
            // conservatively variant.
            let variant = elems.vars().iter().any(|v| match v {
                MemVar::Core(v) => vars.contains(v) || self.f.vars[*v].kind == VarKind::Existential,
                MemVar::Thread(e) => exps.contains(e) || *e == soac,
                MemVar::Exist(_) => true,
            });
            if variant {
                self.report(block, NotExpandedReason::VariantSize);
                continue;
            }
            let expansion = Expansion {
                soac,
                n_threads: n_threads.clone(),
                per_thread: elems.clone(),
                layout: self.layout,
            };
            let layout = self.layout;
            let rewrite = |info: &MemInfo| {
                info.map_arrays(&mut |a| {
                    let mut a = a.clone();
                    if a.block == block {
                        a.lmad = expand_lmad(&a.lmad, &tid, &n_threads, &elems, layout);
                    }
                    a
                })
            };
            let vars_with_block: Vec<VarId> = self
                .mem
                .bindings
                .iter()
                .filter(|(_, info)| info.leaves().iter().any(|a| a.block == block))
                .map(|(v, _)| v)
                .collect();
            for var in vars_with_block {
                if let Some(info) = self.mem.bindings.get(var) {
                    let new = rewrite(info);
                    self.mem.bindings.insert(var, new);
                }
            }
            self.mem.result = rewrite(&self.mem.result);
            if let BlockBinding::Alloc { before, elems: size, expansions } =
                &mut self.mem.blocks[block].binding
            {
                *before = soac_var;
                *size = size.mul(&n_threads);
                expansions.push(expansion);
            }
        }
    }
}
