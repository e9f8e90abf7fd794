//! Memory annotation: the core IR to the memory IR (the paper's FUN to FUNMEM,
//! `TransformProgram`/`TransformStm`/`Support`, seed 004 §5, with the digest's fixes).
//!
//! Input: a validated core [`Program`]. Output: a [`MemProgram`] that gives every
//! bound variable a [`MemInfo`]. The rules (digest §5.2, extended to Weft's core):
//!
//! - views never allocate: aliases, tuples and projections, `zip`/`unzip`, slices and
//!   indexing a row, `transpose`, `reverse`, `take`, `drop`, `split`, `unflatten`,
//!   `replicate` of an array (a stride-0 dimension), `:>` coercions, and `flatten` when
//!   the two outer dimensions merge ([`crate::Lmad::merge_dims`]);
//! - `flatten` of a layout that does not merge (a transposed array) is a copy into a
//!   fresh row-major block, recorded as a [`ForcedCopy`] with the expression's origin;
//! - constructors allocate a fresh row-major block right before their statement:
//!   `map`, `generate`, `scan`, `scatter`, `reduce_by_index`, `with` updates (a copy:
//!   no update is done in place yet), `concat`, array literals, `iota`,
//!   `replicate` of a scalar, and the explicit copies `force`/`to_*`; arrays built
//!   inside a lambda are allocated inside it (memory expansion hoists them later);
//! - `if` results keep a block or component that both branches share and that is in
//!   scope after the `if`; everything else becomes existential (digest P5: the array
//!   itself is returned, the block is a block, both branches are considered);
//! - a loop parameter, a call result, a `reduce` result, the parameters of a `reduce`
//!   or `scan` lambda and the parameters of a non-entry function are existential
//!   (digest D4: block and LMAD components are loop parameters); a call result whose
//!   callee returns a direct array keeps an existential block but a row-major LMAD;
//! - entry parameters are dense and row-major; an entry result that is not provably
//!   direct is copied into a fresh row-major block (`TransformProgram`).

use la_arena::{ArenaMap, Idx};
use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{
    Atom, BlockId, CoreSize, Exp, ExpId, FnId, Function, IndexItem, Lambda, LoopForm, Program,
    Type, VarId,
};
use weft_hir::ScalarTy;
use weft_size::Size;
use weft_values::{BinOp, Scalar};

use crate::ir::{
    ArrayMem, BlockBinding, CopyReason, ExistRole, Existential, ForcedCopy, MemBlock, MemBlockId,
    MemFunction, MemInfo, MemLmad, MemProgram, MemSize, MemVar, Provenance,
};
use crate::lmad::{DimSlice, Lmad, LmadDim};

/// Annotates every function of `program` with memory (no expansion yet: see
/// [`crate::expand`]).
pub fn annotate(program: &Program) -> MemProgram {
    let mut functions: ArenaMap<FnId, MemFunction> = ArenaMap::default();
    // Callees come before their callers in the arena, so a call sees its callee's result.
    for (fn_id, function) in program.functions.iter() {
        let callee_result = |callee: FnId| functions.get(callee).map(|m| m.result.clone());
        let annotated = annotate_function(function, &callee_result);
        functions.insert(fn_id, annotated);
    }
    MemProgram { functions }
}

/// Annotates one function with memory, given the memory of the result of each function
/// it calls (`MemFunction::result` of the callee's annotation; `None` leaves the call's
/// result in memory chosen at run time): [`annotate`] of one function, for callers that
/// annotate functions each on its own.
pub fn annotate_function(
    f: &Function,
    callee_result: &dyn Fn(FnId) -> Option<MemInfo>,
) -> MemFunction {
    let reuse = weft_core::update_reuse(f);
    let sizes = size_definitions(f, Quotients::Polynomial);
    let mut ctx = Ctx { f, reuse, callee_result, sizes, out: MemFunction::default() };
    for &param in &f.params {
        let ty = &f.vars[param].ty;
        let info = if f.is_entry { ctx.param(param, ty) } else { ctx.exist(param, ty) };
        ctx.out.bindings.insert(param, info);
    }
    ctx.block(f.body);
    let body_result = ctx.atom_info(f.blocks[f.body].result);
    ctx.out.result = if f.is_entry {
        let result_var = match f.blocks[f.body].result {
            Some(Atom::Var(v)) => Some(v),
            Some(Atom::Const(_)) | None => None,
        };
        ctx.result_copy(&body_result, result_var)
    } else {
        body_result
    };
    ctx.out
}

/// The structure of a value of a type: an array of tuples is a tuple of arrays.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueShape {
    Scalar(ScalarTy),
    Array(Vec<CoreSize>, ScalarTy),
    Tuple(Vec<ValueShape>),
}

impl ValueShape {
    /// The sizes of every array leaf, leaf after leaf.
    fn array_dims(&self, out: &mut Vec<CoreSize>) {
        match self {
            ValueShape::Scalar(_) => {}
            ValueShape::Array(dims, _) => out.extend(dims.iter().cloned()),
            ValueShape::Tuple(items) => items.iter().for_each(|item| item.array_dims(out)),
        }
    }
}

pub fn value_shape(ty: &Type) -> ValueShape {
    fn go(ty: &Type, outer: &mut Vec<CoreSize>) -> ValueShape {
        match ty {
            Type::Scalar(s) if outer.is_empty() => ValueShape::Scalar(*s),
            Type::Scalar(s) => ValueShape::Array(outer.clone(), *s),
            Type::Array { size, elem } => {
                outer.push(size.clone());
                let res = go(elem, outer);
                outer.pop();
                res
            }
            Type::Tuple(items) => ValueShape::Tuple(items.iter().map(|t| go(t, outer)).collect()),
        }
    }
    go(ty, &mut Vec::new())
}

/// A core size as a memory size.
pub fn mem_size(size: &CoreSize) -> MemSize {
    size.map_vars(&mut |v| MemVar::Core(*v))
}

/// The integer value of a scalar constant (sizes and indices).
pub(crate) fn scalar_i64(s: Scalar) -> i64 {
    match s.convert(weft_values::ScalarType::I64) {
        Scalar::I64(x) => x,
        _ => 0,
    }
}

fn atom_size(atom: Atom) -> MemSize {
    match atom {
        Atom::Var(v) => Size::var(MemVar::Core(v)),
        Atom::Const(s) => Size::constant(scalar_i64(s)),
    }
}

/// The size each `i64` variable of `f` stands for when a statement defines it by size
/// arithmetic (a size expression, `+`, `-`, `*`, an exact `/`, a copy), in terms of
/// variables no such statement defines. Layouts and types are compared by normal form,
/// and the middle end names the sizes that types spell out (`let t = n - 1` shared by
/// CSE or hoisted), so both sides are compared with these definitions substituted.
///
/// A copy into a type with a size no one binds (`let t: [?k]i32 = s`, an existential
/// the middle end writes where a result's size is known only at run time) defines
/// that size as the copied array's.
pub(crate) fn size_definitions(f: &Function, quotients: Quotients) -> FxHashMap<VarId, MemSize> {
    let mut defs: FxHashMap<VarId, MemSize> = FxHashMap::default();
    let mut bound: FxHashSet<VarId> = f.params.iter().chain(&f.size_params).copied().collect();
    defined_inside(f, f.body, &mut bound, &mut FxHashSet::default());
    // A block runs after the statements of the blocks around it, so by the time a
    // nested block is visited every operand its statements can name is resolved.
    let mut stack = vec![f.body];
    while let Some(block) = stack.pop() {
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            let resolve = |size: MemSize| resolve_sizes(&defs, &size);
            let size = |atom: &Atom| resolve(atom_size(*atom));
            let defined = match exp {
                Exp::Size(size) => Some(resolve(mem_size(size))),
                Exp::Atom(atom @ Atom::Var(v)) if f.vars[*v].ty == Type::Scalar(ScalarTy::I64) => {
                    Some(size(atom))
                }
                Exp::BinOp { op, ty: ScalarTy::I64, lhs, rhs } => match op {
                    BinOp::Add => Some(size(lhs).add(&size(rhs))),
                    BinOp::Sub => Some(size(lhs).sub(&size(rhs))),
                    BinOp::Mul => Some(size(lhs).mul(&size(rhs))),
                    BinOp::Div => match quotients {
                        Quotients::Polynomial => size(lhs).checked_div(&size(rhs)),
                        Quotients::AssumedExact => Some(size(lhs).div_exact(&size(rhs))),
                    },
                    _ => None,
                },
                _ => None,
            };
            if let Some(defined) = defined {
                defs.insert(stmt.var, defined);
            }
            if let Exp::Atom(Atom::Var(source)) = exp {
                let dims = |v: VarId| {
                    let mut dims = Vec::new();
                    value_shape(&f.vars[v].ty).array_dims(&mut dims);
                    dims
                };
                for (to, from) in dims(stmt.var).iter().zip(dims(*source)) {
                    if let Some(&exist) = to.as_var()
                        && !bound.contains(&exist)
                        && !defs.contains_key(&exist)
                    {
                        let from = resolve_sizes(&defs, &mem_size(&from));
                        defs.insert(exist, from);
                    }
                }
            }
            stack.extend(exp.nested_blocks());
        }
    }
    defs
}

/// Which integer divisions [`size_definitions`] turns into sizes. `Size`'s division
/// is exact (it fails to evaluate otherwise) where `/` floors, so a layout or an
/// allocation may use only a quotient that divides as a polynomial; a comparison of a
/// layout with a type may take any quotient as exact, since the two agree wherever the
/// type's size is defined (an inexact size is an error where it is computed).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quotients {
    Polynomial,
    AssumedExact,
}

/// `size` with the variables [`size_definitions`] defines replaced by their sizes.
pub(crate) fn resolve_sizes(defs: &FxHashMap<VarId, MemSize>, size: &MemSize) -> MemSize {
    size.substitute(&mut |v| match v {
        MemVar::Core(v) => defs.get(v).cloned(),
        _ => None,
    })
}

/// The variables and expressions defined inside a block, at any depth.
pub(crate) fn defined_inside(
    f: &Function,
    block: BlockId,
    vars: &mut FxHashSet<VarId>,
    exps: &mut FxHashSet<ExpId>,
) {
    let mut stack = vec![block];
    while let Some(block) = stack.pop() {
        for stmt in &f.blocks[block].stmts {
            vars.insert(stmt.var);
            exps.insert(stmt.exp);
            let exp = &f.exps[stmt.exp];
            vars.extend(exp.binders());
            stack.extend(exp.nested_blocks());
        }
    }
}

struct Ctx<'a> {
    f: &'a Function,
    /// Which updates write in place (weft-core decides; the back end follows the same).
    reuse: rustc_hash::FxHashMap<ExpId, weft_core::UpdateReuse>,
    /// The memory of each callee's result.
    callee_result: &'a dyn Fn(FnId) -> Option<MemInfo>,
    /// [`size_definitions`]: layouts and allocations are stated in sizes the function
    /// binds, never in an existential that only a type names.
    sizes: FxHashMap<VarId, MemSize>,
    out: MemFunction,
}

impl Ctx<'_> {
    /// A size of a type, as layouts and allocations state it.
    fn size(&self, size: &CoreSize) -> MemSize {
        resolve_sizes(&self.sizes, &mem_size(size))
    }

    fn atom_info(&self, atom: Option<Atom>) -> MemInfo {
        match atom {
            Some(Atom::Var(v)) => self.out.bindings.get(v).cloned().unwrap_or_default(),
            Some(Atom::Const(_)) | None => MemInfo::Scalar,
        }
    }

    fn new_block(&mut self, elem: ScalarTy, binding: BlockBinding) -> MemBlockId {
        self.out.blocks.alloc(MemBlock { elem, binding })
    }

    /// The memory of an update of `array` (`with`, `scatter`, `reduce_by_index`):
    /// `array`'s own when weft-core's `update_reuse` says in place, else a copy.
    fn updated(&mut self, var: VarId, ty: &Type, exp_id: ExpId, array: Atom) -> MemInfo {
        match self.reuse.get(&exp_id) {
            Some(weft_core::UpdateReuse::InPlace) => self
                .atom_info(Some(array))
                .map_arrays(&mut |a| ArrayMem { how: Provenance::InPlace, ..a.clone() }),
            Some(weft_core::UpdateReuse::Copied { used_later }) => {
                let reason = CopyReason::UpdateOfLiveArray { used_later: *used_later };
                self.fresh(var, ty, &Provenance::Copy(reason))
            }
            None => self.fresh(var, ty, &Provenance::Fresh),
        }
    }

    /// A fresh row-major block per array leaf of `ty`, allocated before `var`.
    fn fresh(&mut self, var: VarId, ty: &Type, how: &Provenance) -> MemInfo {
        self.fresh_shape(var, &value_shape(ty), how)
    }

    fn fresh_shape(&mut self, var: VarId, shape: &ValueShape, how: &Provenance) -> MemInfo {
        match shape {
            ValueShape::Scalar(_) => MemInfo::Scalar,
            ValueShape::Array(dims, elem) => {
                let dims: Vec<MemSize> = dims.iter().map(|d| self.size(d)).collect();
                let elems = dims.iter().fold(Size::one(), |acc, d| acc.mul(d));
                let block = self.new_block(
                    *elem,
                    BlockBinding::Alloc { before: var, elems, expansions: Vec::new() },
                );
                MemInfo::Array(ArrayMem { block, lmad: Lmad::row_major(&dims), how: how.clone() })
            }
            ValueShape::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|s| self.fresh_shape(var, s, how)).collect())
            }
        }
    }

    fn param(&mut self, param: VarId, ty: &Type) -> MemInfo {
        self.param_shape(param, &value_shape(ty))
    }

    fn param_shape(&mut self, param: VarId, shape: &ValueShape) -> MemInfo {
        match shape {
            ValueShape::Scalar(_) => MemInfo::Scalar,
            ValueShape::Array(dims, elem) => {
                let dims: Vec<MemSize> = dims.iter().map(|d| self.size(d)).collect();
                let block = self.new_block(*elem, BlockBinding::Param { param });
                MemInfo::Array(ArrayMem {
                    block,
                    lmad: Lmad::row_major(&dims),
                    how: Provenance::View,
                })
            }
            ValueShape::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|s| self.param_shape(param, s)).collect())
            }
        }
    }

    /// An existential block and LMAD per array leaf of `ty`, fixed by `var`'s value.
    fn exist(&mut self, var: VarId, ty: &Type) -> MemInfo {
        self.exist_shape(var, &value_shape(ty))
    }

    fn exist_shape(&mut self, var: VarId, shape: &ValueShape) -> MemInfo {
        match shape {
            ValueShape::Scalar(_) => MemInfo::Scalar,
            ValueShape::Array(dims, elem) => {
                let block = self.new_block(*elem, BlockBinding::Existential { var });
                let offset = self.exist_var(var, ExistRole::Offset);
                let dims = dims
                    .iter()
                    .enumerate()
                    .map(|(dim_idx, d)| LmadDim {
                        stride: self.exist_var(
                            var,
                            ExistRole::Stride(u32::try_from(dim_idx).unwrap_or(u32::MAX)),
                        ),
                        shape: self.size(d),
                    })
                    .collect();
                MemInfo::Array(ArrayMem {
                    block,
                    lmad: Lmad::new(offset, dims),
                    how: Provenance::Existential,
                })
            }
            ValueShape::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|s| self.exist_shape(var, s)).collect())
            }
        }
    }

    fn exist_var(&mut self, var: VarId, role: ExistRole) -> MemSize {
        Size::var(MemVar::Exist(self.out.exists.alloc(Existential { var, role })))
    }

    /// A view of `src` with the shape of `ty`: `op` maps each leaf's LMAD; `None`
    /// from `op` means "not one LMAD", and that leaf is copied.
    fn view(
        &mut self,
        var: VarId,
        exp: ExpId,
        src: &MemInfo,
        ty: &Type,
        op: &mut dyn FnMut(&MemLmad) -> Option<MemLmad>,
    ) -> MemInfo {
        let reason = match &self.f.exps[exp] {
            Exp::Index { .. } => CopyReason::SliceStrideUnknown,
            _ => CopyReason::FlattenNotRepresentable,
        };
        self.view_shape(var, exp, src, &value_shape(ty), &reason, op)
    }

    fn view_shape(
        &mut self,
        var: VarId,
        exp: ExpId,
        src: &MemInfo,
        shape: &ValueShape,
        reason: &CopyReason,
        op: &mut dyn FnMut(&MemLmad) -> Option<MemLmad>,
    ) -> MemInfo {
        match (src, shape) {
            (_, ValueShape::Scalar(_)) => MemInfo::Scalar,
            (MemInfo::Array(array), ValueShape::Array(dims, _)) => {
                match op(&array.lmad).filter(|l| l.rank() == dims.len()) {
                    Some(mut lmad) => {
                        for (dim, size) in lmad.dims.iter_mut().zip(dims) {
                            dim.shape = self.size(size);
                        }
                        MemInfo::Array(ArrayMem { block: array.block, lmad, how: Provenance::View })
                    }
                    None => self.forced_copy(var, exp, shape, reason.clone()),
                }
            }
            (MemInfo::Tuple(items), ValueShape::Tuple(shapes)) if items.len() == shapes.len() => {
                MemInfo::Tuple(
                    items
                        .iter()
                        .zip(shapes)
                        .map(|(i, s)| self.view_shape(var, exp, i, s, reason, op))
                        .collect(),
                )
            }
            // A scalar source leaf (replicate of a scalar) or a structure mismatch:
            // materialise.
            (
                MemInfo::Scalar | MemInfo::Array(_) | MemInfo::Tuple(_),
                ValueShape::Array(..) | ValueShape::Tuple(_),
            ) => self.fresh_shape(var, shape, &Provenance::Fresh),
        }
    }

    fn forced_copy(
        &mut self,
        var: VarId,
        exp: ExpId,
        shape: &ValueShape,
        reason: CopyReason,
    ) -> MemInfo {
        let info = self.fresh_shape(var, shape, &Provenance::Copy(reason.clone()));
        for leaf in info.leaves() {
            self.out.forced_copies.push(ForcedCopy {
                var,
                block: leaf.block,
                origin: self.f.origins.get(exp).cloned(),
                reason: reason.clone(),
            });
        }
        info
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
                let block = self.new_block(elem, BlockBinding::ResultAlloc { elems });
                let reason = CopyReason::ResultNotDirect;
                if let Some(var) = var {
                    self.out.forced_copies.push(ForcedCopy {
                        var,
                        block,
                        origin: None,
                        reason: reason.clone(),
                    });
                }
                MemInfo::Array(ArrayMem {
                    block,
                    lmad: Lmad::row_major(&array.lmad.shape()),
                    how: Provenance::Copy(reason),
                })
            }
        }
    }

    /// A call result is in a block chosen by the callee (existential), but where the
    /// callee returns a direct array its layout is known: row-major at offset 0.
    fn direct_call_result(&self, info: &MemInfo, callee_result: &MemInfo) -> MemInfo {
        match (info, callee_result) {
            (MemInfo::Array(array), MemInfo::Array(callee)) if callee.lmad.is_direct() => {
                MemInfo::Array(ArrayMem {
                    lmad: Lmad::row_major(&array.lmad.shape()),
                    ..array.clone()
                })
            }
            (MemInfo::Tuple(items), MemInfo::Tuple(callee_items))
                if items.len() == callee_items.len() =>
            {
                MemInfo::Tuple(
                    items
                        .iter()
                        .zip(callee_items)
                        .map(|(i, c)| self.direct_call_result(i, c))
                        .collect(),
                )
            }
            _ => info.clone(),
        }
    }

    fn block(&mut self, block: BlockId) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            let info = self.stmt(stmt.var, stmt.exp);
            self.out.bindings.insert(stmt.var, info);
        }
    }

    fn lambda_params_exist(&mut self, lambda: &Lambda) {
        for &param in &lambda.params {
            let info = self.exist(param, &self.f.vars[param].ty);
            self.out.bindings.insert(param, info);
        }
    }

    #[expect(clippy::too_many_lines, reason = "one arm per expression kind")]
    fn stmt(&mut self, var: VarId, exp_id: ExpId) -> MemInfo {
        let f = self.f;
        let ty = &f.vars[var].ty;
        let info_of = |ctx: &Self, atom: Atom| ctx.atom_info(Some(atom));
        match &f.exps[exp_id] {
            Exp::Atom(a) => as_view(&info_of(self, *a)),
            Exp::Size(_)
            | Exp::BinOp { .. }
            | Exp::UnOp { .. }
            | Exp::Convert { .. }
            | Exp::Math { .. }
            | Exp::Dim { .. } => MemInfo::Scalar,
            Exp::Tuple(atoms) => {
                MemInfo::Tuple(atoms.iter().map(|&a| as_view(&info_of(self, a))).collect())
            }
            Exp::Proj { tuple, index } => match info_of(self, *tuple) {
                MemInfo::Tuple(items) => {
                    items.get(*index as usize).map(as_view).unwrap_or_default()
                }
                MemInfo::Scalar | MemInfo::Array(_) => MemInfo::Scalar,
            },
            Exp::Update { array, .. } | Exp::Scatter { dest: array, .. } => {
                self.updated(var, ty, exp_id, *array)
            }
            Exp::ArrayLit { .. } | Exp::Iota { .. } | Exp::Concat(..) | Exp::Materialise { .. } => {
                self.fresh(var, ty, &Provenance::Fresh)
            }
            Exp::Call { func, .. } => {
                let info = self.exist(var, ty);
                match (self.callee_result)(*func) {
                    Some(result) => self.direct_call_result(&info, &result),
                    None => info,
                }
            }
            Exp::If { then_branch, else_branch, .. } => self.if_(var, *then_branch, *else_branch),
            Exp::Loop { param, form, body, .. } => {
                let info = self.exist(*param, &f.vars[*param].ty);
                self.out.bindings.insert(*param, info.clone());
                match form {
                    LoopForm::For { index, .. } => {
                        self.out.bindings.insert(*index, MemInfo::Scalar);
                    }
                    LoopForm::While { cond } => self.block(*cond),
                }
                self.block(*body);
                info
            }
            Exp::Map { lambda, arrays, .. } => {
                let thread = Size::var(MemVar::Thread(exp_id));
                for (&param, &array) in lambda.params.iter().zip(arrays) {
                    let src = info_of(self, array);
                    let info = self.view(param, exp_id, &src, &f.vars[param].ty, &mut |l| {
                        (l.rank() > 0).then(|| l.index_outer(&thread))
                    });
                    self.out.bindings.insert(param, info);
                }
                let info = self.fresh(var, ty, &Provenance::Fresh);
                self.block(lambda.body);
                info
            }
            Exp::Generate { lambda, .. } => {
                for &param in &lambda.params {
                    self.out.bindings.insert(param, MemInfo::Scalar);
                }
                let info = self.fresh(var, ty, &Provenance::Fresh);
                self.block(lambda.body);
                info
            }
            Exp::Reduce { lambda, .. } => {
                self.lambda_params_exist(lambda);
                self.block(lambda.body);
                self.exist(var, ty)
            }
            Exp::Scan { lambda, .. } => {
                self.lambda_params_exist(lambda);
                let info = self.fresh(var, ty, &Provenance::Fresh);
                self.block(lambda.body);
                info
            }
            Exp::ReduceByIndex { lambda, dest, .. } => {
                self.lambda_params_exist(lambda);
                let info = self.updated(var, ty, exp_id, *dest);
                self.block(lambda.body);
                info
            }
            Exp::Zip(atoms) => {
                MemInfo::Tuple(atoms.iter().map(|&a| as_view(&info_of(self, a))).collect())
            }
            Exp::Unzip(a) => as_view(&info_of(self, *a)),
            Exp::Index { .. }
            | Exp::Replicate { .. }
            | Exp::Coerce { .. }
            | Exp::Transpose(_)
            | Exp::Reverse(_)
            | Exp::Flatten(_)
            | Exp::Unflatten { .. }
            | Exp::Split { .. }
            | Exp::Take { .. }
            | Exp::Drop { .. } => {
                let (operand, op) = view_op(&f.exps[exp_id])
                    .expect("invariant: every arm here is a view expression");
                let src = info_of(self, operand);
                self.view(var, exp_id, &src, ty, &mut |l| op.apply(l))
            }
        }
    }

    /// An `if`: shared, in-scope blocks and components stay; the rest are existential.
    fn if_(&mut self, var: VarId, then_branch: BlockId, else_branch: BlockId) -> MemInfo {
        let n_blocks = self.out.blocks.len();
        let n_exists = self.out.exists.len();
        self.block(then_branch);
        self.block(else_branch);
        let then_info = self.atom_info(self.f.blocks[then_branch].result);
        let else_info = self.atom_info(self.f.blocks[else_branch].result);
        let mut vars = FxHashSet::default();
        let mut exps = FxHashSet::default();
        defined_inside(self.f, then_branch, &mut vars, &mut exps);
        defined_inside(self.f, else_branch, &mut vars, &mut exps);
        let scope = Scope { vars, exps, n_blocks, n_exists };
        let shape = value_shape(&self.f.vars[var].ty);
        self.join(var, &then_info, &else_info, &shape, &scope)
    }

    fn join(
        &mut self,
        var: VarId,
        a: &MemInfo,
        b: &MemInfo,
        shape: &ValueShape,
        scope: &Scope,
    ) -> MemInfo {
        match (a, b, shape) {
            (MemInfo::Array(x), MemInfo::Array(y), ValueShape::Array(dims, elem))
                if x.lmad.rank() == dims.len() =>
            {
                let mut existential = false;
                let block = if x.block == y.block && idx(x.block) < scope.n_blocks {
                    x.block
                } else {
                    existential = true;
                    self.new_block(*elem, BlockBinding::Existential { var })
                };
                let mut component = |ctx: &mut Self, p: &MemSize, q: &MemSize, role| {
                    if p == q && scope.contains(p) {
                        p.clone()
                    } else {
                        existential = true;
                        ctx.exist_var(var, role)
                    }
                };
                let offset = component(self, &x.lmad.offset, &y.lmad.offset, ExistRole::Offset);
                let mut lmad_dims = Vec::new();
                for (dim_idx, ((dx, dy), size)) in
                    x.lmad.dims.iter().zip(&y.lmad.dims).zip(dims).enumerate()
                {
                    let role = ExistRole::Stride(u32::try_from(dim_idx).unwrap_or(u32::MAX));
                    let stride = component(self, &dx.stride, &dy.stride, role);
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
                        .map(|((x, y), s)| self.join(var, x, y, s, scope))
                        .collect(),
                )
            }
            (_, _, ValueShape::Scalar(_)) => MemInfo::Scalar,
            _ => self.exist_shape(var, shape),
        }
    }
}

struct Scope {
    vars: FxHashSet<VarId>,
    exps: FxHashSet<ExpId>,
    n_blocks: usize,
    n_exists: usize,
}

impl Scope {
    /// Whether every variable of `size` is bound outside the branches.
    fn contains(&self, size: &MemSize) -> bool {
        size.vars().iter().all(|v| match v {
            MemVar::Core(v) => !self.vars.contains(v),
            MemVar::Thread(e) => !self.exps.contains(e),
            MemVar::Exist(x) => idx(*x) < self.n_exists,
        })
    }
}

pub(crate) fn idx<T>(id: Idx<T>) -> usize {
    id.into_raw().into_u32() as usize
}

/// The same memory, as a view (an alias writes nothing).
fn as_view(info: &MemInfo) -> MemInfo {
    info.map_arrays(&mut |a| ArrayMem { how: Provenance::View, ..a.clone() })
}

/// A layout change an expression makes of its operand (one rule per view expression,
/// shared by the core IR's annotation and the GPU IR's, `crate::gpu`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ViewOp {
    /// `array[items]`: rows, elements and slices.
    Index(Vec<IndexItem>),
    /// `replicate n array`: a stride-0 outer dimension.
    Replicate(MemSize),
    /// `array :> t`: the same layout (the shape comes from the type).
    Coerce,
    Transpose,
    Reverse,
    /// `flatten`: one LMAD only when the two outer dimensions merge.
    Flatten,
    Unflatten(MemSize, MemSize),
    Split(MemSize),
    Take(MemSize),
    Drop(MemSize),
}

impl ViewOp {
    /// The operand's LMAD after the view, or `None` when it is not one LMAD (the
    /// annotation copies).
    pub(crate) fn apply(&self, l: &MemLmad) -> Option<MemLmad> {
        match self {
            ViewOp::Index(items) => index_lmad(l, items),
            ViewOp::Replicate(n) => Some(l.replicate(0, n)),
            ViewOp::Coerce => Some(l.clone()),
            ViewOp::Transpose => (l.rank() >= 2).then(|| l.transpose()),
            ViewOp::Reverse => (l.rank() >= 1).then(|| l.reverse(0)),
            ViewOp::Flatten => {
                if l.rank() >= 2 {
                    l.merge_dims(0)
                } else {
                    None
                }
            }
            ViewOp::Unflatten(rows, cols) => (l.rank() >= 1).then(|| l.unflatten(0, rows, cols)),
            ViewOp::Split(chunk) => (l.rank() >= 1).then(|| l.split(0, chunk)),
            ViewOp::Take(count) => {
                (l.rank() >= 1).then(|| l.slice_dim(0, &Size::zero(), count, &Size::one()))
            }
            ViewOp::Drop(count) => (l.rank() >= 1).then(|| {
                let len = l.dims[0].shape.sub(count);
                l.slice_dim(0, count, &len, &Size::one())
            }),
        }
    }
}

/// The operand and the layout change of a view expression (`None` for any other).
pub(crate) fn view_op(exp: &Exp) -> Option<(Atom, ViewOp)> {
    Some(match exp {
        Exp::Index { array, items } => (*array, ViewOp::Index(items.clone())),
        Exp::Replicate { size, value } => (*value, ViewOp::Replicate(atom_size(*size))),
        Exp::Coerce { value, .. } => (*value, ViewOp::Coerce),
        Exp::Transpose(a) => (*a, ViewOp::Transpose),
        Exp::Reverse(a) => (*a, ViewOp::Reverse),
        Exp::Flatten(a) => (*a, ViewOp::Flatten),
        Exp::Unflatten { rows, cols, array } => {
            (*array, ViewOp::Unflatten(atom_size(*rows), atom_size(*cols)))
        }
        Exp::Split { chunk, array } => (*array, ViewOp::Split(atom_size(*chunk))),
        Exp::Take { count, array } => (*array, ViewOp::Take(atom_size(*count))),
        Exp::Drop { count, array } => (*array, ViewOp::Drop(atom_size(*count))),
        _ => return None,
    })
}

/// The LMAD of `array[items]` (missing trailing items keep their dimensions); lengths
/// are fixed afterwards from the result type.
fn index_lmad(lmad: &MemLmad, items: &[IndexItem]) -> Option<MemLmad> {
    let mut slices = Vec::new();
    for (dim, item) in lmad.dims.iter().zip(items) {
        slices.push(match item {
            IndexItem::Fix(a) => DimSlice::Fix(atom_size(*a)),
            IndexItem::Slice { start, stride, .. } => {
                let step = stride.map_or_else(Size::one, atom_size);
                let start = match (start, step.as_constant()) {
                    (Some(a), _) => atom_size(*a),
                    (None, Some(s)) if s < 0 => dim.shape.sub(&Size::one()),
                    (None, Some(_)) => Size::zero(),
                    // The default start depends on the stride's sign, unknown here.
                    (None, None) => return None,
                };
                DimSlice::Range { start, len: dim.shape.clone(), step }
            }
        });
    }
    for dim in lmad.dims.iter().skip(items.len()) {
        slices.push(DimSlice::Range {
            start: Size::zero(),
            len: dim.shape.clone(),
            step: Size::one(),
        });
    }
    Some(lmad.slice(&slices))
}
