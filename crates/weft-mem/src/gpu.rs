//! Memory for the GPU IR (MIDDLE.md, "Memory"): every array binding of a
//! [`weft_opt::GpuProgram`] gets a block and an LMAD, from the same algebra
//! ([`crate::Lmad`]) and the same view rules as the core IR's annotation
//! ([`crate::annotate`]), and every block says where it lives on the device
//! ([`Storage`]). The code generator (`weft-lower`'s translation of the GPU IR) reads
//! every layout and allocation from here; it has no layout algebra of its own.
//!
//! Rules beyond the core IR's (`lower.rs`):
//!
//! - **Where a fresh array lives** depends on where its statement runs: host code
//!   allocates global memory; an array made inside a `grid` SegOp (or a `thread` SegOp)
//!   is each work-item's own: private memory when its size is a small constant, else
//!   *expanded* (seed 004 §5, the digest's corrected formula): one global block of
//!   `elems × threads` elements the host allocates before the SegOp, each work-item's
//!   part interleaved (GPU: element `a` of work-item `x` at `a·threads + x`, so
//!   neighbouring work-items touch neighbouring addresses) or in chunks (CPU). An array
//!   made in a `group` SegOp's body is the work-group's, in local memory. A size that
//!   varies per work-item is expanded by its largest value over the SegOp's points
//!   ([`Largest`], which the host computes before the launch); in a `thread` SegOp of a
//!   group it is [`Storage::Variant`] (not supported by the code generator yet).
//! - **SegOp results** are fresh row-major arrays of the space's shape (a reduction's
//!   without its innermost dimension); a histogram or scatter writes into its
//!   destination: in place when nothing reads the destination afterwards, else a copy.
//! - **Short-circuiting**: the array a `grid` SegMap's body (or a `group` SegMap's,
//!   made by a `thread` SegMap) yields per point is built directly in its row of the
//!   SegOp's result, so there is no per-point array and no copy.
//! - **In-place updates** (`with`, a histogram's or scatter's destination): the update
//!   writes into its operand's block when no variable sharing that block is read
//!   afterwards (nor by another point of an enclosing SegOp, nor by a later iteration
//!   of an enclosing loop), and the block is the program's own (not an entry input).
//! - **`if` and `loop` results**: in host code, a block and components the branches (or
//!   the initial value and the body) share stay; the rest are existential (chosen at run
//!   time, as in the core IR). Inside a kernel, an array-valued `if` or `loop` gets
//!   memory of its own that each branch (the initial value, and each iteration's
//!   result) is copied into, unless it is already there: a loop whose body updates its
//!   parameter in place copies only at entry.
//! - **`manifest (1, 0)`** is a fresh block laid out column after column.
//! - **Entry results** are dense and row-major at offset 0; others are copied.
//!
//! Calls must have been inlined ([`weft_opt::Inline::All`]); a remaining call's result is
//! existential.

use la_arena::{Arena, ArenaMap};
use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, CoreSize, FnId, Type, VarId};
use weft_hir::ScalarTy;
use weft_opt::{
    BlockId, Exp, ExpId, GpuFunction, GpuProgram, LoopForm, SegKind, SegLevel, SeqSoac, Stmt,
};
use weft_size::Size;

use crate::ir::{
    ArrayMem, BlockBinding, CopyReason, ExistRole, Existential, Layout, MemBlock, MemBlockId,
    MemInfo, MemLmad, MemSize, MemVar, Provenance,
};
use crate::lmad::{Lmad, LmadDim};
use crate::lower::{ValueShape, mem_size, value_shape, view_op};
use crate::passes::expand::expand_lmad;

/// The memory of a whole GPU program: one [`GpuMemFunction`] per function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuMemProgram {
    pub functions: ArenaMap<FnId, GpuMemFunction>,
}

/// The memory of one GPU function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuMemFunction {
    pub blocks: Arena<MemBlock>,
    /// Where each block lives.
    pub storage: ArenaMap<MemBlockId, Storage>,
    pub exists: Arena<Existential>,
    /// Every bound variable of an array type (a tuple of them: one leaf each).
    pub bindings: ArenaMap<VarId, MemInfo>,
    /// The memory of the function's result (an entry's: dense and row-major).
    pub result: MemInfo,
    /// Copies the annotation inserted, with why.
    pub copies: Vec<GpuCopy>,
    /// Loops whose parameter starts in memory of its own, a copy of the initial value
    /// (the body updates it in place, or the loop is inside a kernel).
    pub loop_entry_copies: FxHashSet<ExpId>,
    /// The iteration index of each sequential combinator ([`ExistRole::Index`]): the
    /// LMADs of its array parameters (rows of its arrays) are in terms of it.
    pub seq_index: FxHashMap<ExpId, crate::ir::ExistId>,
    /// The arrays of a size each work-item computes, expanded by the largest size.
    pub largest: Vec<Largest>,
}

/// The largest size over the points of the SegOp `seg` of an array each of its
/// work-items allocates with `elems` elements ([`ExistRole::Largest`]): the host
/// computes it before the launch, and each work-item's part of the expanded block has
/// that many elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Largest {
    pub exist: crate::ir::ExistId,
    pub seg: ExpId,
    pub elems: MemSize,
}

/// Where a block lives on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Global memory: an entry's input, or allocated by the host.
    Global,
    /// Each work-item's own array in private memory; its size is a constant.
    Private,
    /// Each work-item's own part of one global block the host allocates before the
    /// SegOp `seg`, which has `threads` points: the block has `elems × threads`
    /// elements and the LMADs in it are expanded with `layout` (seed 004 §5).
    Expanded { seg: ExpId, threads: MemSize, layout: Layout },
    /// A work-group's array in local memory (the body of the `group` SegOp `seg`).
    Local { seg: ExpId },
    /// An array of a work-item of the SegOp `seg` whose size is known only inside the
    /// kernel: the code generator would need the largest size before the launch.
    Variant { seg: ExpId },
}

/// A copy the annotation inserted.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuCopy {
    pub var: VarId,
    pub block: MemBlockId,
    pub exp: Option<ExpId>,
    pub reason: CopyReason,
}

/// Annotates every function of `program` (after [`weft_opt::pipeline_for`] with every
/// call inlined); `target` decides the layout of expanded memory.
pub fn annotate_gpu(program: &GpuProgram, target: crate::Target) -> GpuMemProgram {
    let layout = match target {
        crate::Target::Gpu => Layout::Interleaved,
        crate::Target::Cpu => Layout::Chunked,
    };
    let mut functions = ArenaMap::default();
    for (id, f) in program.functions.iter() {
        functions.insert(id, annotate_function(f, layout));
    }
    GpuMemProgram { functions }
}

/// The most elements a work-item's array may have to live in private memory.
pub const PRIVATE_LIMIT: i64 = 64;

fn annotate_function(f: &GpuFunction, layout: Layout) -> GpuMemFunction {
    let live_after = live_after_updates(f);
    let mut ctx = Ctx {
        f,
        layout,
        sizes: size_definitions(f),
        live_after,
        places: vec![Place::Host],
        short_circuit: FxHashMap::default(),
        out: GpuMemFunction::default(),
    };
    for &param in &f.params {
        let ty = &f.vars[param].ty;
        let info = if f.is_entry { ctx.param(param, ty) } else { ctx.exist(param, ty) };
        ctx.out.bindings.insert(param, info);
    }
    ctx.block(f.body);
    let results = f.blocks[f.body].results.clone();
    let result = match results.as_slice() {
        [single] => ctx.atom_info(*single),
        many => MemInfo::Tuple(many.iter().map(|a| ctx.atom_info(*a)).collect()),
    };
    ctx.out.result = if f.is_entry {
        let var = match results.as_slice() {
            [Atom::Var(v)] => Some(*v),
            _ => None,
        };
        ctx.result_copy(&result, var)
    } else {
        result
    };
    ctx.out
}

/// Where the statement being annotated runs.
#[derive(Debug, Clone)]
enum Place {
    Host,
    /// Run by one work-item per point of the SegOp `seg` (a `grid` SegOp's body, or a
    /// `thread` SegOp's in a group): `threads` points, this one `tid`; `inside` holds
    /// every variable bound since the SegOp began (its size may not depend on them).
    Item {
        seg: ExpId,
        threads: MemSize,
        tid: MemSize,
        inside: FxHashSet<VarId>,
        /// A `thread` SegOp's body in a group (not expanded by largest size yet).
        in_group: bool,
    },
    /// The body of the `group` SegOp `seg`, shared by its work-items: `groups` points,
    /// this one `gid`.
    Group {
        seg: ExpId,
        inside: FxHashSet<VarId>,
        groups: MemSize,
        gid: MemSize,
    },
}

struct Ctx<'a> {
    f: &'a GpuFunction,
    layout: Layout,
    /// What the variables that size arithmetic defines stand for ([`size_definitions`]).
    sizes: FxHashMap<VarId, MemSize>,
    /// For each update (`with`, histogram, scatter), the variables read after it.
    live_after: FxHashMap<ExpId, FxHashSet<VarId>>,
    places: Vec<Place>,
    /// Arrays a SegMap's body yields per point, built in their row of its result.
    short_circuit: FxHashMap<VarId, ArrayMem>,
    out: GpuMemFunction,
}

impl Ctx<'_> {
    fn place(&self) -> &Place {
        self.places.last().expect("invariant: a place is always set")
    }

    fn in_kernel(&self) -> bool {
        !matches!(self.place(), Place::Host)
    }

    fn bound(&mut self, var: VarId) {
        match self.places.last_mut() {
            Some(Place::Item { inside, .. } | Place::Group { inside, .. }) => {
                inside.insert(var);
            }
            Some(Place::Host) | None => {}
        }
    }

    fn atom_info(&self, atom: Atom) -> MemInfo {
        match atom {
            Atom::Var(v) => self.out.bindings.get(v).cloned().unwrap_or_default(),
            Atom::Const(_) => MemInfo::Scalar,
        }
    }

    fn new_block(&mut self, elem: ScalarTy, binding: BlockBinding, storage: Storage) -> MemBlockId {
        let id = self.out.blocks.alloc(MemBlock { elem, binding });
        self.out.storage.insert(id, storage);
        id
    }

    fn size(&self, size: &CoreSize) -> MemSize {
        mem_size(size)
    }

    fn param(&mut self, param: VarId, ty: &Type) -> MemInfo {
        self.leaves(&value_shape(ty), &mut |ctx, dims, elem| {
            let dims: Vec<MemSize> = dims.iter().map(|d| ctx.size(d)).collect();
            let block = ctx.new_block(elem, BlockBinding::Param { param }, Storage::Global);
            MemInfo::Array(ArrayMem { block, lmad: Lmad::row_major(&dims), how: Provenance::View })
        })
    }

    /// Applies `leaf` to each array leaf of `shape` (dims, element type).
    fn leaves(
        &mut self,
        shape: &ValueShape,
        leaf: &mut dyn FnMut(&mut Self, &[CoreSize], ScalarTy) -> MemInfo,
    ) -> MemInfo {
        match shape {
            ValueShape::Scalar(_) => MemInfo::Scalar,
            ValueShape::Array(dims, elem) => leaf(self, dims, *elem),
            ValueShape::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|s| self.leaves(s, leaf)).collect())
            }
        }
    }

    fn exist(&mut self, var: VarId, ty: &Type) -> MemInfo {
        self.leaves(&value_shape(ty), &mut |ctx, dims, elem| {
            let block = ctx.new_block(elem, BlockBinding::Existential { var }, Storage::Global);
            let offset = ctx.exist_var(var, ExistRole::Offset);
            let dims = dims
                .iter()
                .enumerate()
                .map(|(k, d)| LmadDim {
                    stride: ctx.exist_var(var, ExistRole::Stride(k as u32)),
                    shape: ctx.size(d),
                })
                .collect();
            MemInfo::Array(ArrayMem {
                block,
                lmad: Lmad::new(offset, dims),
                how: Provenance::Existential,
            })
        })
    }

    fn exist_var(&mut self, var: VarId, role: ExistRole) -> MemSize {
        Size::var(MemVar::Exist(self.out.exists.alloc(Existential { var, role })))
    }

    /// A fresh row-major array per leaf of `ty`, where the current place keeps arrays.
    fn fresh(&mut self, var: VarId, ty: &Type, how: &Provenance) -> MemInfo {
        if let Some(row) = self.short_circuit.remove(&var) {
            return MemInfo::Array(row);
        }
        let shape = value_shape(ty);
        self.leaves(&shape, &mut |ctx, dims, elem| {
            let dims: Vec<MemSize> = dims.iter().map(|d| ctx.size(d)).collect();
            ctx.fresh_leaf(var, elem, &dims, how)
        })
    }

    fn fresh_leaf(
        &mut self,
        var: VarId,
        elem: ScalarTy,
        dims: &[MemSize],
        how: &Provenance,
    ) -> MemInfo {
        // The size in the variables it is defined from (a size the middle end binds
        // inside a kernel, `let c = size 256`, is no size a work-item computes).
        let elems = dims.iter().fold(Size::one(), |acc, d| acc.mul(d));
        let elems = elems.substitute(&mut |v| match v {
            MemVar::Core(v) => self.sizes.get(v).cloned(),
            _ => None,
        });
        let binding = BlockBinding::Alloc { before: var, elems: elems.clone(), expansions: vec![] };
        let row_major = Lmad::row_major(dims);
        let (storage, lmad) = match self.place().clone() {
            Place::Host => (Storage::Global, row_major),
            Place::Group { seg, inside, .. } => {
                if depends_on(&elems, &inside) {
                    (Storage::Variant { seg }, row_major)
                } else {
                    (Storage::Local { seg }, row_major)
                }
            }
            Place::Item { seg, threads, tid, inside, in_group } => {
                if elems.as_constant().is_some_and(|n| n <= PRIVATE_LIMIT) {
                    (Storage::Private, row_major)
                } else if depends_on(&elems, &inside) && in_group {
                    (Storage::Variant { seg }, row_major)
                } else if depends_on(&elems, &inside) {
                    // A size each work-item computes: each gets a part of the largest
                    // size over the SegOp's points, which the host finds before the
                    // launch (Futhark's memory expansion of variant sizes).
                    let exist =
                        self.out.exists.alloc(Existential { var, role: ExistRole::Largest });
                    self.out.largest.push(Largest { exist, seg, elems: elems.clone() });
                    let per_thread = Size::var(MemVar::Exist(exist));
                    let lmad = expand_lmad(&row_major, &tid, &threads, &per_thread, self.layout);
                    let block = self.new_block(
                        elem,
                        BlockBinding::Alloc { before: var, elems: per_thread, expansions: vec![] },
                        Storage::Expanded { seg, threads, layout: self.layout },
                    );
                    return MemInfo::Array(ArrayMem { block, lmad, how: how.clone() });
                } else {
                    let lmad = expand_lmad(&row_major, &tid, &threads, &elems, self.layout);
                    (Storage::Expanded { seg, threads, layout: self.layout }, lmad)
                }
            }
        };
        let block = self.new_block(elem, binding, storage);
        MemInfo::Array(ArrayMem { block, lmad, how: how.clone() })
    }

    /// The same leaves of `src`, as views with `ty`'s shapes: `op` maps each LMAD; where
    /// it gives none (or `src` has no memory), a fresh copy.
    fn view(
        &mut self,
        var: VarId,
        exp: ExpId,
        src: &MemInfo,
        ty: &Type,
        op: &mut dyn FnMut(&MemLmad) -> Option<MemLmad>,
    ) -> MemInfo {
        let shape = value_shape(ty);
        self.view_shape(var, exp, src, &shape, op)
    }

    fn view_shape(
        &mut self,
        var: VarId,
        exp: ExpId,
        src: &MemInfo,
        shape: &ValueShape,
        op: &mut dyn FnMut(&MemLmad) -> Option<MemLmad>,
    ) -> MemInfo {
        match (src, shape) {
            (_, ValueShape::Scalar(_)) => MemInfo::Scalar,
            (MemInfo::Array(array), ValueShape::Array(dims, elem)) => {
                match op(&array.lmad).filter(|l| l.rank() == dims.len()) {
                    Some(mut lmad) => {
                        for (dim, size) in lmad.dims.iter_mut().zip(dims) {
                            dim.shape = self.size(size);
                        }
                        MemInfo::Array(ArrayMem { block: array.block, lmad, how: Provenance::View })
                    }
                    None => {
                        let dims: Vec<MemSize> = dims.iter().map(|d| self.size(d)).collect();
                        let reason = CopyReason::FlattenNotRepresentable;
                        let info =
                            self.fresh_leaf(var, *elem, &dims, &Provenance::Copy(reason.clone()));
                        self.record_copies(var, Some(exp), &info, &reason);
                        info
                    }
                }
            }
            (MemInfo::Tuple(items), ValueShape::Tuple(shapes)) if items.len() == shapes.len() => {
                MemInfo::Tuple(
                    items
                        .iter()
                        .zip(shapes)
                        .map(|(i, s)| self.view_shape(var, exp, i, s, op))
                        .collect(),
                )
            }
            // A scalar operand (`replicate` of a scalar) or a mismatch: materialised.
            _ => self.leaves(shape, &mut |ctx, dims, elem| {
                let dims: Vec<MemSize> = dims.iter().map(|d| ctx.size(d)).collect();
                ctx.fresh_leaf(var, elem, &dims, &Provenance::Fresh)
            }),
        }
    }

    fn record_copies(
        &mut self,
        var: VarId,
        exp: Option<ExpId>,
        info: &MemInfo,
        reason: &CopyReason,
    ) {
        for leaf in info.leaves() {
            self.out.copies.push(GpuCopy { var, block: leaf.block, exp, reason: reason.clone() });
        }
    }

    fn result_copy(&mut self, info: &MemInfo, var: Option<VarId>) -> MemInfo {
        match info {
            MemInfo::Scalar => MemInfo::Scalar,
            MemInfo::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|i| self.result_copy(i, var)).collect())
            }
            MemInfo::Array(array) if array.lmad.is_direct() => info.clone(),
            MemInfo::Array(array) => {
                let elem = self.out.blocks[array.block].elem;
                let elems = array.lmad.n_elements();
                let block =
                    self.new_block(elem, BlockBinding::ResultAlloc { elems }, Storage::Global);
                let reason = CopyReason::ResultNotDirect;
                if let Some(var) = var {
                    self.out.copies.push(GpuCopy { var, block, exp: None, reason: reason.clone() });
                }
                MemInfo::Array(ArrayMem {
                    block,
                    lmad: Lmad::row_major(&array.lmad.shape()),
                    how: Provenance::Copy(reason),
                })
            }
        }
    }

    fn block(&mut self, block: BlockId) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            self.stmt(stmt);
        }
    }

    fn bind(&mut self, var: VarId, info: MemInfo) {
        self.bound(var);
        self.out.bindings.insert(var, info);
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let f = self.f;
        let exp_id = stmt.exp;
        match &f.exps[exp_id] {
            Exp::Basic(exp) => {
                let var = stmt.vars[0];
                let info = self.basic(var, exp_id, exp);
                self.bind(var, info);
            }
            Exp::Manifest { array } => {
                let var = stmt.vars[0];
                let ty = &f.vars[var].ty;
                let info =
                    self.fresh(var, ty, &Provenance::Copy(CopyReason::FlattenNotRepresentable));
                // Column after column: the two outer dimensions swap strides.
                let info = info.map_arrays(&mut |a| {
                    let transposed = Lmad::row_major(&{
                        let mut shape = a.lmad.shape();
                        shape.swap(0, 1);
                        shape
                    })
                    .transpose();
                    ArrayMem { lmad: transposed, ..a.clone() }
                });
                let _: &Atom = array;
                self.bind(var, info);
            }
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                self.block(*then_branch);
                self.block(*else_branch);
                let then_results = f.blocks[*then_branch].results.clone();
                let else_results = f.blocks[*else_branch].results.clone();
                for (k, &var) in stmt.vars.iter().enumerate() {
                    let a = self.atom_info(then_results[k]);
                    let b = self.atom_info(else_results[k]);
                    let shape = value_shape(&f.vars[var].ty);
                    let info = if self.in_kernel() {
                        self.kernel_join(var, exp_id, &a, &b, &shape)
                    } else {
                        self.host_join(var, &a, &b, &shape, &[*then_branch, *else_branch])
                    };
                    self.bind(var, info);
                }
            }
            Exp::Loop { param, init, form, body } => {
                self.loop_(stmt, exp_id, *param, *init, form, *body)
            }
            Exp::Seq(soac) => {
                let var = stmt.vars[0];
                self.seq(var, exp_id, soac);
            }
            Exp::Seg(seg) => self.seg(stmt, exp_id, seg),
        }
    }

    /// A basic expression: views, fresh arrays and updates.
    fn basic(&mut self, var: VarId, exp_id: ExpId, exp: &weft_core::Exp) -> MemInfo {
        use weft_core::Exp as C;
        let f = self.f;
        let ty = &f.vars[var].ty;
        let as_view = |info: MemInfo| {
            info.map_arrays(&mut |a| ArrayMem { how: Provenance::View, ..a.clone() })
        };
        match exp {
            C::Atom(a) => as_view(self.atom_info(*a)),
            C::Tuple(atoms) | C::Zip(atoms) => {
                MemInfo::Tuple(atoms.iter().map(|&a| as_view(self.atom_info(a))).collect())
            }
            C::Unzip(a) => as_view(self.atom_info(*a)),
            C::Proj { tuple, index } => match self.atom_info(*tuple) {
                MemInfo::Tuple(items) => {
                    items.get(*index as usize).cloned().map(as_view).unwrap_or_default()
                }
                MemInfo::Scalar | MemInfo::Array(_) => MemInfo::Scalar,
            },
            C::Update { array, .. } => self.updated(var, exp_id, ty, *array),
            C::Scatter { dest, .. } | C::ReduceByIndex { dest, .. } => {
                self.updated(var, exp_id, ty, *dest)
            }
            C::ArrayLit { .. }
            | C::Iota { .. }
            | C::Concat(..)
            | C::Materialise { .. }
            | C::Map { .. }
            | C::Generate { .. }
            | C::Scan { .. } => self.fresh(var, ty, &Provenance::Fresh),
            C::Call { .. } | C::Reduce { .. } | C::If { .. } | C::Loop { .. } => {
                self.exist(var, ty)
            }
            _ => match view_op(exp) {
                Some((operand, op)) => {
                    let src = self.atom_info(operand);
                    self.view(var, exp_id, &src, ty, &mut |l| op.apply(l))
                }
                None => MemInfo::Scalar,
            },
        }
    }

    /// The memory of an update of `array`: its own when nothing reads it afterwards,
    /// else a copy.
    fn updated(&mut self, var: VarId, exp_id: ExpId, ty: &Type, array: Atom) -> MemInfo {
        let src = self.atom_info(array);
        let reusable = self.reusable(exp_id, &src);
        if reusable {
            return src.map_arrays(&mut |a| ArrayMem { how: Provenance::InPlace, ..a.clone() });
        }
        let used_later = None;
        let reason = CopyReason::UpdateOfLiveArray { used_later };
        let info = self.fresh(var, ty, &Provenance::Copy(reason.clone()));
        self.record_copies(var, Some(exp_id), &info, &reason);
        info
    }

    /// Whether an update at `exp_id` may write into `src`'s blocks: each is the
    /// program's own (allocated, not an input or chosen at run time), its LMAD writes
    /// each element once, and no variable in it is read afterwards.
    fn reusable(&self, exp_id: ExpId, src: &MemInfo) -> bool {
        let Some(live) = self.live_after.get(&exp_id) else { return false };
        let leaves = src.leaves();
        if leaves.is_empty() {
            return false;
        }
        leaves.iter().all(|leaf| {
            let owned = matches!(self.out.blocks[leaf.block].binding, BlockBinding::Alloc { .. });
            let injective = leaf.lmad.dims.iter().all(|d| !d.stride.is_zero());
            owned
                && injective
                && !live.iter().any(|v| {
                    self.out.bindings.get(*v).is_some_and(|info| {
                        info.leaves().iter().any(|other| other.block == leaf.block)
                    })
                })
        })
    }

    /// An array-valued `if` in host code: a block and LMAD components both branches
    /// share (and that exist outside them) stay, the rest are chosen at run time.
    fn host_join(
        &mut self,
        var: VarId,
        a: &MemInfo,
        b: &MemInfo,
        shape: &ValueShape,
        branches: &[BlockId],
    ) -> MemInfo {
        let mut inside = FxHashSet::default();
        for &branch in branches {
            defined_in(self.f, branch, &mut inside);
        }
        match (a, b, shape) {
            (_, _, ValueShape::Scalar(_)) => MemInfo::Scalar,
            (MemInfo::Array(x), MemInfo::Array(y), ValueShape::Array(dims, elem))
                if x.lmad.rank() == dims.len() && y.lmad.rank() == dims.len() =>
            {
                let mut existential = false;
                let block = if x.block == y.block
                    && !block_defined_in(&self.out.blocks[x.block].binding, &inside)
                {
                    x.block
                } else {
                    existential = true;
                    self.new_block(*elem, BlockBinding::Existential { var }, Storage::Global)
                };
                let mut component = |ctx: &mut Self, p: &MemSize, q: &MemSize, role| {
                    if p == q && !depends_on(p, &inside) && !has_exist(p) {
                        p.clone()
                    } else {
                        existential = true;
                        ctx.exist_var(var, role)
                    }
                };
                let offset = component(self, &x.lmad.offset, &y.lmad.offset, ExistRole::Offset);
                let mut lmad_dims = Vec::new();
                for (k, ((dx, dy), size)) in
                    x.lmad.dims.iter().zip(&y.lmad.dims).zip(dims).enumerate()
                {
                    let stride =
                        component(self, &dx.stride, &dy.stride, ExistRole::Stride(k as u32));
                    lmad_dims.push(LmadDim { stride, shape: self.size(size) });
                }
                let how = if existential { Provenance::Existential } else { Provenance::View };
                MemInfo::Array(ArrayMem { block, lmad: Lmad::new(offset, lmad_dims), how })
            }
            (MemInfo::Tuple(xs), MemInfo::Tuple(ys), ValueShape::Tuple(shapes))
                if xs.len() == shapes.len() && ys.len() == shapes.len() =>
            {
                MemInfo::Tuple(
                    xs.iter()
                        .zip(ys)
                        .zip(shapes)
                        .map(|((x, y), s)| self.host_join(var, x, y, s, branches))
                        .collect(),
                )
            }
            _ => self.leaves(shape, &mut |ctx, dims, elem| ctx.exist(var, &array_type(dims, elem))),
        }
    }

    /// An array-valued `if` in a kernel: the branches' common memory, else memory of
    /// its own that each branch's result is copied into.
    fn kernel_join(
        &mut self,
        var: VarId,
        exp: ExpId,
        a: &MemInfo,
        b: &MemInfo,
        shape: &ValueShape,
    ) -> MemInfo {
        match (a, b, shape) {
            (_, _, ValueShape::Scalar(_)) => MemInfo::Scalar,
            (MemInfo::Array(x), MemInfo::Array(y), ValueShape::Array(..))
                if x.block == y.block && x.lmad == y.lmad =>
            {
                MemInfo::Array(ArrayMem { how: Provenance::View, ..x.clone() })
            }
            (MemInfo::Tuple(xs), MemInfo::Tuple(ys), ValueShape::Tuple(shapes))
                if xs.len() == shapes.len() && ys.len() == shapes.len() =>
            {
                MemInfo::Tuple(
                    xs.iter()
                        .zip(ys)
                        .zip(shapes)
                        .map(|((x, y), s)| self.kernel_join(var, exp, x, y, s))
                        .collect(),
                )
            }
            _ => self.leaves(shape, &mut |ctx, dims, elem| {
                let dims: Vec<MemSize> = dims.iter().map(|d| ctx.size(d)).collect();
                let reason = CopyReason::UpdateOfLiveArray { used_later: None };
                let info = ctx.fresh_leaf(var, elem, &dims, &Provenance::Copy(reason.clone()));
                ctx.record_copies(var, Some(exp), &info, &reason);
                info
            }),
        }
    }

    fn loop_(
        &mut self,
        stmt: &Stmt,
        exp_id: ExpId,
        param: VarId,
        init: Atom,
        form: &LoopForm,
        body: BlockId,
    ) {
        let f = self.f;
        let var = stmt.vars[0];
        let param_ty = &f.vars[param].ty;
        let init_info = self.atom_info(init);
        let has_arrays = !init_info.leaves().is_empty();
        // The parameter's memory: in a kernel (or where the body updates it in place),
        // memory of its own that the initial value is copied into; in host code
        // otherwise, chosen at run time (the initial value's, then each iteration's).
        let updates_param = has_arrays && self.body_updates_in_place(body, param);
        if updates_param && !self.in_kernel() && self.reusable(exp_id, &init_info) {
            // The initial value is the program's own array and dead once the loop
            // starts: the loop updates it where it is, with no copy at entry.
            let param_info =
                init_info.map_arrays(&mut |a| ArrayMem { how: Provenance::InPlace, ..a.clone() });
            self.loop_body(param, param_info.clone(), form, body);
            self.bind(var, param_info);
            return;
        }
        if has_arrays && (self.in_kernel() || updates_param) {
            self.out.loop_entry_copies.insert(exp_id);
            let param_info = self.fresh(param, param_ty, &Provenance::Fresh);
            self.loop_body(param, param_info.clone(), form, body);
            self.bind(var, param_info);
            return;
        }
        // In host code the block is chosen at run time (the initial value's, then each
        // iteration's). Its layout is the initial value's when every iteration yields
        // that layout too (a stencil's grid, step after step: the kernels then see
        // constant strides); else its components are chosen at run time as well.
        if has_arrays {
            let saved = self.out.clone();
            let param_info = self.exist_block_with_layout(param, param_ty, &init_info);
            self.loop_body(param, param_info.clone(), form, body);
            let result = self.atom_info(f.blocks[body].results[0]);
            if same_layouts(&param_info, &result) {
                self.bind(var, param_info);
                return;
            }
            self.out = saved;
        }
        let param_info = self.exist(param, param_ty);
        self.loop_body(param, param_info.clone(), form, body);
        // The result is the parameter's value when the loop ends: its memory.
        self.bind(var, param_info);
    }

    fn loop_body(&mut self, param: VarId, param_info: MemInfo, form: &LoopForm, body: BlockId) {
        self.bind(param, param_info);
        match form {
            LoopForm::For { index, .. } => self.bound(*index),
            LoopForm::While { cond } => self.block(*cond),
        }
        self.block(body);
    }

    /// An existential block per leaf of `ty`, with the LMADs of `like`'s leaves.
    fn exist_block_with_layout(&mut self, var: VarId, ty: &Type, like: &MemInfo) -> MemInfo {
        let exist = self.exist(var, ty);
        let mut layouts = like.leaves().into_iter().map(|a| a.lmad.clone());
        exist.map_arrays(&mut |a| {
            let lmad = layouts.next().unwrap_or_else(|| a.lmad.clone());
            let mut lmad = lmad;
            for (dim, own) in lmad.dims.iter_mut().zip(&a.lmad.dims) {
                dim.shape = own.shape.clone();
            }
            ArrayMem { lmad, ..a.clone() }
        })
    }

    /// Whether an update in `body`'s own statements writes in place into `param`.
    fn body_updates_in_place(&self, body: BlockId, param: VarId) -> bool {
        let f = self.f;
        f.blocks[body].stmts.iter().any(|stmt| match &f.exps[stmt.exp] {
            Exp::Basic(weft_core::Exp::Update { array: Atom::Var(a), .. }) => {
                *a == param
                    && self.live_after.get(&stmt.exp).is_some_and(|live| !live.contains(&param))
            }
            Exp::Seg(seg) => match &seg.kind {
                SegKind::Hist { dest: Atom::Var(d), .. }
                | SegKind::Scatter { dest: Atom::Var(d) } => {
                    *d == param
                        && self.live_after.get(&stmt.exp).is_some_and(|live| !live.contains(&param))
                }
                _ => false,
            },
            _ => false,
        })
    }

    fn lambda_params(&mut self, params: &[VarId]) {
        for &p in params {
            let ty = &self.f.vars[p].ty;
            let info = self.exist(p, ty);
            self.bind(p, info);
        }
    }

    fn seq(&mut self, var: VarId, exp_id: ExpId, soac: &SeqSoac) {
        let f = self.f;
        let ty = &f.vars[var].ty;
        // Parameters that are elements of arrays are their rows at the loop's index.
        let index_id = self.out.exists.alloc(Existential { var, role: ExistRole::Index });
        self.out.seq_index.insert(exp_id, index_id);
        let index = Size::var(MemVar::Exist(index_id));
        let rows = |ctx: &mut Self, params: &[VarId], arrays: &[Atom]| {
            for (&param, &array) in params.iter().zip(arrays) {
                let src = ctx.atom_info(array);
                let info = ctx.view(param, exp_id, &src, &f.vars[param].ty, &mut |l| {
                    (l.rank() > 0).then(|| l.index_outer(&index))
                });
                ctx.bind(param, info);
            }
        };
        match soac {
            SeqSoac::Map { lambda, arrays } => {
                rows(self, &lambda.params, arrays);
                let info = self.fresh(var, ty, &Provenance::Fresh);
                self.block(lambda.body);
                self.bind(var, info);
            }
            SeqSoac::Generate { lambda, .. } => {
                for &p in &lambda.params {
                    self.bound(p);
                }
                let info = self.fresh(var, ty, &Provenance::Fresh);
                self.block(lambda.body);
                self.bind(var, info);
            }
            SeqSoac::Reduce { lambda, array, .. } | SeqSoac::Scan { lambda, array, .. } => {
                // The accumulator is chosen at run time; the element is a row.
                self.lambda_params(&lambda.params[..1]);
                rows(self, &lambda.params[1..], &[*array]);
                let info = match soac {
                    SeqSoac::Scan { .. } => self.fresh(var, ty, &Provenance::Fresh),
                    _ => self.exist(var, ty),
                };
                self.block(lambda.body);
                self.bind(var, info);
            }
            SeqSoac::Hist { dest, lambda, .. } => {
                self.lambda_params(&lambda.params);
                let info = self.updated(var, exp_id, ty, *dest);
                self.block(lambda.body);
                self.bind(var, info);
            }
        }
    }

    fn seg(&mut self, stmt: &Stmt, exp_id: ExpId, seg: &weft_opt::SegOp) {
        let f = self.f;
        // The results first: the body may build its per-point array in them.
        let space_dims: Vec<MemSize> =
            seg.space.iter().map(|(_, bound)| atom_size(*bound)).collect();
        let mut results = Vec::new();
        for &var in &stmt.vars {
            let ty = &f.vars[var].ty;
            let info = match &seg.kind {
                SegKind::Hist { dest, .. } | SegKind::Scatter { dest } => {
                    self.updated(var, exp_id, ty, *dest)
                }
                SegKind::Map | SegKind::Scan(_) | SegKind::Red(_) => {
                    self.fresh(var, ty, &Provenance::Fresh)
                }
            };
            results.push(info);
        }
        // The body.
        let threads = space_dims.iter().fold(Size::one(), |acc, d| acc.mul(d));
        let mut tid = Size::zero();
        for ((index, _), dim) in seg.space.iter().zip(&space_dims) {
            tid = tid.mul(dim).add(&Size::var(MemVar::Core(*index)));
        }
        let mut inside: FxHashSet<VarId> = seg.space.iter().map(|(i, _)| *i).collect();
        let place = match (seg.level, self.place()) {
            (SegLevel::Group, _) => Place::Group { seg: exp_id, inside, groups: threads, gid: tid },
            (SegLevel::Thread, Place::Group { inside: outer, groups, gid, .. }) => {
                // Each point of each group's thread space owns a part.
                inside.extend(outer.iter().copied());
                let tid = gid.mul(&threads).add(&tid);
                let threads = groups.mul(&threads);
                Place::Item { seg: exp_id, threads, tid, inside, in_group: true }
            }
            (_, _) => Place::Item { seg: exp_id, threads, tid, inside, in_group: false },
        };
        self.places.push(place);
        match &seg.kind {
            SegKind::Red(ops) | SegKind::Scan(ops) => {
                for op in ops {
                    self.lambda_params(&op.lambda.params);
                    self.block(op.lambda.body);
                }
            }
            SegKind::Hist { op, .. } => {
                self.lambda_params(&op.lambda.params);
                self.block(op.lambda.body);
            }
            SegKind::Map | SegKind::Scatter { .. } => {}
        }
        // Short-circuit: a SegMap's per-point array built in its row of the result (in
        // a group body, only an array nothing else there reads: other work-items would
        // read it from global memory, which a local barrier does not order).
        if matches!(seg.kind, SegKind::Map) {
            let body_results = f.blocks[seg.body].results.clone();
            for (result, info) in body_results.iter().zip(&results) {
                let Atom::Var(v) = result else { continue };
                let Some(producer) = stmt_binding(f, seg.body, *v) else { continue };
                let group = seg.level == SegLevel::Group;
                if !builds_fresh(f, producer, group) || (group && read_in_block(f, seg.body, *v)) {
                    continue;
                }
                if let MemInfo::Array(dest) = info
                    && matches!(value_shape(&f.vars[*v].ty), ValueShape::Array(..))
                {
                    let mut row = dest.lmad.clone();
                    for (index, _) in &seg.space {
                        row = row.fix(0, &Size::var(MemVar::Core(*index)));
                    }
                    self.short_circuit.insert(
                        *v,
                        ArrayMem { block: dest.block, lmad: row, how: Provenance::Fresh },
                    );
                }
            }
        }
        self.block(seg.body);
        self.places.pop();
        for (&var, info) in stmt.vars.iter().zip(results) {
            self.bind(var, info);
        }
    }
}

/// Whether the expression `exp` writes a fresh array element by element, so that it can
/// write it anywhere (a SegOp's result row); in a group body, only a `thread` SegMap.
fn builds_fresh(f: &GpuFunction, exp: ExpId, group: bool) -> bool {
    use weft_core::Exp as C;
    match &f.exps[exp] {
        Exp::Seg(seg) => group && seg.level == SegLevel::Thread && seg.kind == SegKind::Map,
        _ if group => false,
        Exp::Seq(SeqSoac::Map { .. } | SeqSoac::Generate { .. } | SeqSoac::Scan { .. }) => true,
        Exp::Basic(C::Iota { .. } | C::ArrayLit { .. } | C::Concat(..) | C::Materialise { .. }) => {
            true
        }
        _ => false,
    }
}

/// Whether a statement of `block` (nested code included) reads `var`.
fn read_in_block(f: &GpuFunction, block: BlockId, var: VarId) -> bool {
    f.blocks[block].stmts.iter().any(|stmt| {
        let mut reads = Vec::new();
        weft_opt::reads_in(f, stmt, &mut reads);
        reads.contains(&var)
    })
}

/// The sizes `i64` variables stand for when a statement defines them by size arithmetic
/// (`size`, `+`, `-`, `*` and copies of such), in the variables nothing so defines.
fn size_definitions(f: &GpuFunction) -> FxHashMap<VarId, MemSize> {
    let mut defs: FxHashMap<VarId, MemSize> = FxHashMap::default();
    let mut stack = vec![f.body];
    while let Some(block) = stack.pop() {
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            stack.extend(exp.nested_blocks());
            let (Exp::Basic(exp), [var]) = (exp, stmt.vars.as_slice()) else { continue };
            let size = |atom: &Atom, defs: &FxHashMap<VarId, MemSize>| match atom {
                Atom::Var(v) => defs.get(v).cloned().unwrap_or_else(|| Size::var(MemVar::Core(*v))),
                Atom::Const(c) => Size::constant(crate::lower::scalar_i64(*c)),
            };
            let defined = match exp {
                weft_core::Exp::Size(s) => Some(mem_size(s).substitute(&mut |v| match v {
                    MemVar::Core(v) => defs.get(v).cloned(),
                    _ => None,
                })),
                weft_core::Exp::Atom(a @ Atom::Var(_))
                    if f.vars[*var].ty == Type::Scalar(ScalarTy::I64) =>
                {
                    Some(size(a, &defs))
                }
                weft_core::Exp::BinOp { op, ty: ScalarTy::I64, lhs, rhs } => match op {
                    weft_values::BinOp::Add => Some(size(lhs, &defs).add(&size(rhs, &defs))),
                    weft_values::BinOp::Sub => Some(size(lhs, &defs).sub(&size(rhs, &defs))),
                    weft_values::BinOp::Mul => Some(size(lhs, &defs).mul(&size(rhs, &defs))),
                    _ => None,
                },
                _ => None,
            };
            if let Some(defined) = defined {
                defs.insert(*var, defined);
            }
        }
    }
    defs
}

/// The statement of `block`'s own statements that binds `var`.
fn stmt_binding(f: &GpuFunction, block: BlockId, var: VarId) -> Option<ExpId> {
    f.blocks[block].stmts.iter().find(|s| s.vars.contains(&var)).map(|s| s.exp)
}

fn array_type(dims: &[CoreSize], elem: ScalarTy) -> Type {
    dims.iter().rev().fold(Type::Scalar(elem), |inner, size| Type::Array {
        size: size.clone(),
        elem: Box::new(inner),
    })
}

fn atom_size(atom: Atom) -> MemSize {
    match atom {
        Atom::Var(v) => Size::var(MemVar::Core(v)),
        Atom::Const(s) => Size::constant(crate::lower::scalar_i64(s)),
    }
}

/// Whether two values' array leaves have the same LMADs.
fn same_layouts(a: &MemInfo, b: &MemInfo) -> bool {
    let (a, b) = (a.leaves(), b.leaves());
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.lmad == y.lmad)
}

/// Whether `size` has a component chosen at run time.
fn has_exist(size: &MemSize) -> bool {
    size.vars().iter().any(|v| matches!(v, MemVar::Exist(_)))
}

/// Whether `size` reads a variable of `vars`.
fn depends_on(size: &MemSize, vars: &FxHashSet<VarId>) -> bool {
    size.vars().iter().any(|v| matches!(v, MemVar::Core(v) if vars.contains(v)))
}

fn block_defined_in(binding: &BlockBinding, vars: &FxHashSet<VarId>) -> bool {
    match binding {
        BlockBinding::Alloc { before, .. } => vars.contains(before),
        BlockBinding::Existential { var } => vars.contains(var),
        BlockBinding::ResultAlloc { .. } | BlockBinding::Param { .. } => false,
    }
}

/// Every variable bound in `block` and the blocks nested in it.
fn defined_in(f: &GpuFunction, block: BlockId, out: &mut FxHashSet<VarId>) {
    for stmt in &f.blocks[block].stmts {
        out.extend(stmt.vars.iter().copied());
        let exp = &f.exps[stmt.exp];
        out.extend(binders(exp));
        for nested in exp.nested_blocks() {
            defined_in(f, nested, out);
        }
    }
}

/// The variables an expression binds besides its statement's (parameters, indices).
fn binders(exp: &Exp) -> Vec<VarId> {
    match exp {
        Exp::Loop { param, form, .. } => {
            let mut out = vec![*param];
            if let LoopForm::For { index, .. } = form {
                out.push(*index);
            }
            out
        }
        Exp::Seq(soac) => match soac {
            SeqSoac::Map { lambda, .. }
            | SeqSoac::Generate { lambda, .. }
            | SeqSoac::Reduce { lambda, .. }
            | SeqSoac::Scan { lambda, .. }
            | SeqSoac::Hist { lambda, .. } => lambda.params.clone(),
        },
        Exp::Seg(seg) => {
            let mut out: Vec<VarId> = seg.space.iter().map(|(i, _)| *i).collect();
            match &seg.kind {
                SegKind::Red(ops) | SegKind::Scan(ops) => {
                    out.extend(ops.iter().flat_map(|op| op.lambda.params.iter().copied()));
                }
                SegKind::Hist { op, .. } => out.extend(op.lambda.params.iter().copied()),
                SegKind::Map | SegKind::Scatter { .. } => {}
            }
            out
        }
        Exp::Basic(_) | Exp::Manifest { .. } | Exp::If { .. } | Exp::Version { .. } => Vec::new(),
    }
}

/// For every update (`with`, `hist@seq`, a SegHist or SegScatter), the variables read
/// after it: later in its block, after the statements around it, by another point of
/// an enclosing SegOp, or by a later iteration of an enclosing loop.
fn live_after_updates(f: &GpuFunction) -> FxHashMap<ExpId, FxHashSet<VarId>> {
    let mut out = FxHashMap::default();
    live_block(f, f.body, &FxHashSet::default(), &mut out);
    out
}

/// The variables `block` reads when what follows it reads `live_out`; records the live
/// sets after updates.
fn live_block(
    f: &GpuFunction,
    block: BlockId,
    live_out: &FxHashSet<VarId>,
    out: &mut FxHashMap<ExpId, FxHashSet<VarId>>,
) -> FxHashSet<VarId> {
    let mut live = live_out.clone();
    live.extend(f.blocks[block].results.iter().filter_map(var_of));
    for stmt in f.blocks[block].stmts.iter().rev() {
        let exp = &f.exps[stmt.exp];
        if is_update(exp) {
            let mut after = live.clone();
            if let Exp::Seg(seg) = exp {
                // The other points of a SegScatter or SegHist run beside this one: what
                // its body reads (a view of the destination, say `reverse xs`) is read
                // while the update writes, so it counts as read afterwards.
                after.extend(seg_body_reads(f, seg));
            }
            out.insert(stmt.exp, after);
        }
        // What a loop's body and condition read from outside them (read again at every
        // iteration); its initial value is read once, at entry.
        let loop_reads: Option<FxHashSet<VarId>> = match exp {
            Exp::Loop { .. } => {
                let bound: FxHashSet<VarId> = binders(exp).into_iter().collect();
                Some(reads_from_outside(f, &exp.nested_blocks(), bound).into_iter().collect())
            }
            _ => None,
        };
        if let Some(loop_reads) = &loop_reads {
            // For a loop that would take its initial value's memory: what follows it
            // and what its iterations read.
            let mut after = live.clone();
            after.extend(loop_reads.iter().copied());
            out.insert(stmt.exp, after);
        }
        for v in &stmt.vars {
            live.remove(v);
        }
        // Nested code: what follows it is what follows the statement, and, for code run
        // again (loop bodies, SegOp bodies, operators), everything it reads itself.
        let mut reads = Vec::new();
        weft_opt::reads_in(f, stmt, &mut reads);
        let repeated: FxHashSet<VarId> = match exp {
            Exp::Loop { .. } => loop_reads.clone().unwrap_or_default(),
            Exp::Seg(_) | Exp::Seq(_) => {
                let mut bound: FxHashSet<VarId> = binders(exp).into_iter().collect();
                for nested in exp.nested_blocks() {
                    defined_in(f, nested, &mut bound);
                }
                reads.iter().copied().filter(|v| !bound.contains(v)).collect()
            }
            _ => FxHashSet::default(),
        };
        let mut nested_out = live.clone();
        nested_out.extend(repeated.iter().copied());
        for nested in exp.nested_blocks() {
            let _ = live_block(f, nested, &nested_out, out);
        }
        live.extend(exp.operands().iter().filter_map(var_of));
        live.extend(reads);
    }
    live
}

/// The variables bound outside `seg` that its body reads.
fn seg_body_reads(f: &GpuFunction, seg: &weft_opt::SegOp) -> Vec<VarId> {
    let bound: FxHashSet<VarId> = seg.space.iter().map(|(i, _)| *i).collect();
    reads_from_outside(f, &[seg.body], bound)
}

/// The variables `blocks` read (their statements, nested code included, and their
/// results) that neither `bound` nor the blocks themselves bind.
fn reads_from_outside(
    f: &GpuFunction,
    blocks: &[BlockId],
    mut bound: FxHashSet<VarId>,
) -> Vec<VarId> {
    let mut reads = Vec::new();
    for &block in blocks {
        defined_in(f, block, &mut bound);
        for stmt in &f.blocks[block].stmts {
            weft_opt::reads_in(f, stmt, &mut reads);
        }
        reads.extend(f.blocks[block].results.iter().filter_map(var_of));
    }
    reads.retain(|v| !bound.contains(v));
    reads
}

fn var_of(atom: &Atom) -> Option<VarId> {
    match atom {
        Atom::Var(v) => Some(*v),
        Atom::Const(_) => None,
    }
}

fn is_update(exp: &Exp) -> bool {
    match exp {
        Exp::Basic(weft_core::Exp::Update { .. }) => true,
        Exp::Seq(SeqSoac::Hist { .. }) => true,
        Exp::Seg(seg) => matches!(seg.kind, SegKind::Hist { .. } | SegKind::Scatter { .. }),
        _ => false,
    }
}

/// The GPU IR with memory (`weft dump --ir mem`): every array binding's type is
/// followed by its block and LMAD (`[n_0]f32 @ mem_2 -> {offset: 0; strides: [1];
/// shape: [n_0]}`), and every block is allocated by a line before the statement it
/// serves, which says where it lives (`let mem_2: global = alloc 4*n_0`, `private`,
/// `local`, `expanded over 128*n_0 work-items (interleaved)`).
pub fn pretty_gpu_mem(program: &GpuProgram, mem: &GpuMemProgram) -> String {
    let empty = GpuMemFunction::default();
    weft_opt::pretty_gpu_annotated(program, &mut |id| {
        let mem = mem.functions.get(id).unwrap_or(&empty);
        let mut allocs: FxHashMap<VarId, Vec<MemBlockId>> = FxHashMap::default();
        for (block, data) in mem.blocks.iter() {
            if let BlockBinding::Alloc { before, .. } = &data.binding {
                allocs.entry(*before).or_default().push(block);
            }
        }
        Box::new(GpuMemory { mem, names: crate::pretty::MemNames::new(&mem.blocks), allocs })
    })
}

struct GpuMemory<'a> {
    mem: &'a GpuMemFunction,
    names: crate::pretty::MemNames<'a>,
    allocs: FxHashMap<VarId, Vec<MemBlockId>>,
}

impl weft_opt::GpuAnnotate for GpuMemory<'_> {
    fn binding_ty(
        &mut self,
        names: &mut weft_core::VarNames<'_>,
        var: VarId,
        plain: String,
    ) -> String {
        let Some(info) = self.mem.bindings.get(var) else { return plain };
        if info.leaves().is_empty() {
            return plain;
        }
        let shape = value_shape(&names.vars()[var].ty);
        let mut text = self.names.shape(names, &shape, info);
        let leaves = info.leaves();
        if leaves.iter().any(|a| matches!(a.how, Provenance::Copy(_))) {
            text.push_str(" (copy)");
        } else if leaves.iter().any(|a| a.how == Provenance::InPlace) {
            text.push_str(" (in place)");
        }
        text
    }

    fn before_stmt(&mut self, names: &mut weft_core::VarNames<'_>, stmt: &Stmt) -> Vec<String> {
        let mut lines = Vec::new();
        for var in &stmt.vars {
            for block in self.allocs.get(var).cloned().unwrap_or_default() {
                lines.push(self.alloc_line(names, block));
            }
        }
        if self.mem.loop_entry_copies.contains(&stmt.exp) {
            lines.push(
                "-- loop entry: the initial value is copied into the loop's own memory".into(),
            );
        }
        lines
    }

    fn after_function(&mut self, names: &mut weft_core::VarNames<'_>) -> Vec<String> {
        let mut lines = Vec::new();
        for (block, data) in self.mem.blocks.iter() {
            if let BlockBinding::ResultAlloc { .. } = data.binding {
                let line = self.alloc_line(names, block);
                lines.push(format!("-- result copy: {line}"));
            }
        }
        lines
    }
}

impl GpuMemory<'_> {
    fn alloc_line(&mut self, names: &mut weft_core::VarNames<'_>, block: MemBlockId) -> String {
        let name = self.names.block_name(block);
        let data = &self.mem.blocks[block];
        let elems = match &data.binding {
            BlockBinding::Alloc { elems, .. } | BlockBinding::ResultAlloc { elems } => {
                self.names.size(names, elems)
            }
            BlockBinding::Param { .. } | BlockBinding::Existential { .. } => String::new(),
        };
        let elem = data.elem.name();
        match self.mem.storage.get(block) {
            Some(Storage::Expanded { threads, layout, .. }) => {
                let threads = self.names.size(names, threads);
                let layout = match layout {
                    Layout::Interleaved => "interleaved",
                    Layout::Chunked => "chunked",
                };
                format!(
                    "let {name}: global = alloc ({elems})*{threads} {elem} -- each work-item's {elems}, expanded over {threads} work-items ({layout})"
                )
            }
            Some(Storage::Private) => format!("let {name}: private = alloc {elems} {elem}"),
            Some(Storage::Local { .. }) => format!("let {name}: local = alloc {elems} {elem}"),
            Some(Storage::Variant { .. }) => format!(
                "let {name}: private = alloc {elems} {elem} -- its size is known only inside the kernel"
            ),
            Some(Storage::Global) | None => format!("let {name}: global = alloc {elems} {elem}"),
        }
    }
}

/// The invariants of the GPU IR's memory (bugs in the annotation, never user errors),
/// checked on every example in the tests:
///
/// - every variable of an array type has memory, one leaf per array leaf of its type,
///   each LMAD of the type's rank, in a block of the function with a storage;
/// - a private block has a constant size of at most [`PRIVATE_LIMIT`] elements;
/// - a block expanded over (or local to) a SegOp is used only inside that SegOp.
pub fn validate_gpu_mem(program: &GpuProgram, mem: &GpuMemProgram) -> Vec<String> {
    let mut errors = Vec::new();
    for (id, f) in program.functions.iter() {
        let Some(fmem) = mem.functions.get(id) else {
            errors.push(format!("`{}` has no memory", f.name));
            continue;
        };
        let mut v = MemValidator { f, mem: fmem, segs: Vec::new(), errors: Vec::new() };
        for &p in &f.params {
            v.var(p);
        }
        v.block(f.body);
        errors.extend(v.errors.into_iter().map(|e| format!("`{}`: {e}", f.name)));
    }
    errors
}

struct MemValidator<'a> {
    f: &'a GpuFunction,
    mem: &'a GpuMemFunction,
    /// The SegOps around the code being checked.
    segs: Vec<ExpId>,
    errors: Vec<String>,
}

impl MemValidator<'_> {
    fn var(&mut self, var: VarId) {
        let name = self.f.vars[var].name.to_string();
        let mut dims = Vec::new();
        collect_array_ranks(&value_shape(&self.f.vars[var].ty), &mut dims);
        if dims.is_empty() {
            return;
        }
        let Some(info) = self.mem.bindings.get(var) else {
            self.errors.push(format!("array `{name}` has no memory"));
            return;
        };
        let leaves = info.leaves();
        if leaves.len() != dims.len() {
            self.errors.push(format!(
                "`{name}` has {} memory leaves for {} arrays",
                leaves.len(),
                dims.len()
            ));
            return;
        }
        for (leaf, rank) in leaves.iter().zip(dims) {
            if leaf.lmad.rank() != rank {
                self.errors.push(format!(
                    "`{name}`: an LMAD of rank {} for an array of rank {rank}",
                    leaf.lmad.rank()
                ));
            }
            let index = crate::lower::idx(leaf.block);
            if index >= self.mem.blocks.len() {
                self.errors.push(format!("`{name}`: a block out of range"));
                continue;
            }
            match (self.mem.storage.get(leaf.block), &self.mem.blocks[leaf.block].binding) {
                (None, _) => self.errors.push(format!("`{name}`: a block with no storage")),
                (Some(Storage::Private), BlockBinding::Alloc { elems, .. })
                    if elems.as_constant().is_none_or(|n| n > PRIVATE_LIMIT) =>
                {
                    self.errors.push(format!("`{name}`: a private block of variable size"));
                }
                (Some(Storage::Expanded { seg, .. } | Storage::Local { seg }), _)
                    if !self.segs.contains(seg) =>
                {
                    self.errors.push(format!("`{name}`: a block of a SegOp used outside it"));
                }
                _ => {}
            }
        }
    }

    fn block(&mut self, block: BlockId) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            let is_seg = matches!(exp, Exp::Seg(_));
            if is_seg {
                self.segs.push(stmt.exp);
            }
            for v in binders(exp) {
                self.var(v);
            }
            for nested in exp.nested_blocks() {
                self.block(nested);
            }
            if is_seg {
                self.segs.pop();
            }
            // A SegOp's results live outside it (or, in a group, in its memory).
            for &v in &stmt.vars {
                self.var(v);
            }
        }
    }
}

fn collect_array_ranks(shape: &ValueShape, out: &mut Vec<usize>) {
    match shape {
        ValueShape::Scalar(_) => {}
        ValueShape::Array(dims, _) => out.push(dims.len()),
        ValueShape::Tuple(items) => items.iter().for_each(|s| collect_array_ranks(s, out)),
    }
}
