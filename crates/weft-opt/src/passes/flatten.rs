//! Flattening: the core IR (simplified, parallel calls inlined) to the GPU IR
//! (MIDDLE.md, pass 3; Futhark's incremental flattening, PPoPP 2019).
//!
//! At host level every combinator becomes a SegOp:
//! - a written level translates one to one and is pinned (`map@group` is a `group`
//!   SegMap whose body's `@thread` combinators and `reduce@group` are `thread` SegOps);
//! - `reduce` and `scan` become a `grid` `SegRed` or `SegScan`;
//! - `reduce_by_index` becomes a `grid` `SegHist` into its destination; inside a SegOp
//!   body it is a sequential `hist@seq`;
//! - a `map` or `generate` whose body has no inner combinator becomes a `grid` `SegMap`;
//! - a `map` or `generate` whose body has inner combinators gets versions, chosen at
//!   run time by named thresholds:
//!   1. outer parallelism only (the inner code sequential per work-item), when the
//!      outer size reaches `suff_outer_par`;
//!   2. one work-group per outer iteration, the inner combinators `thread` SegOps over
//!      the group's work-items, when the outer size reaches `suff_intra_par` (only
//!      when the inner combinators sit directly in the body);
//!   3. fully flattened: the body is distributed, each statement its own SegOp over
//!      the outer space (inner maps extend the space, inner reductions and scans are
//!      segmented), values bound in the body becoming arrays over the space.
//!
//! Every copy of source code gets fresh variables, so versions never share a binding.

use crate::passes::host::atom_size;
use crate::passes::subst::Substitutes;
use la_arena::Arena;
use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, CoreSize, Function, IndexItem, Origin, Program, Type, Var, VarId, VarKind};
use weft_hir::{Level, ScalarTy};
use weft_values::Scalar;

use crate::ir::{
    Block, BlockId, Exp, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind, SegLevel,
    SegOp, SeqSoac, Stmt, Threshold, ThresholdKind,
};

/// The default of `suff_outer_par` when the device is not known: work-items that keep
/// a large GPU busy without the inner parallelism (Futhark's default threshold, 2^15).
pub const DEFAULT_SUFF_OUTER_PAR: i64 = 32_768;
/// The default of `suff_intra_par` when the device is not known: work-groups that fill
/// every compute unit of a large GPU at least once (an H100 has 132).
pub const DEFAULT_SUFF_INTRA_PAR: i64 = 128;

/// What the default thresholds depend on: the shape of the device that will run the
/// program (from its OpenCL facts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceShape {
    pub gpu: bool,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`: streaming multiprocessors, or CPU cores.
    pub compute_units: i64,
    /// The warp width on NVIDIA, the vector width a CPU implementation packs.
    pub simd_width: i64,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`: bytes of local memory a work-group may use.
    pub local_memory: i64,
}

/// Local memory per work-group when the device is not known: what NVIDIA GPUs give a
/// kernel without opting in to more (48 KiB; OpenCL guarantees 32 KiB).
pub const DEFAULT_LOCAL_MEMORY: i64 = 49_152;

/// A threshold's value on a device, without a tuning file: the rule `weft tune`
/// improves on by measuring.
/// - `suff_outer_par`: a GPU needs about 2048 resident work-items per compute unit to
///   hide memory latency; a CPU is busy with a few work-items per core and lane.
/// - `suff_intra_par`: one work-group per compute unit of a GPU; never on a CPU, which
///   runs a work-group's work-items as a loop on one core, so a row per work-group
///   never beats a row per work-item there.
pub fn threshold_default(kind: ThresholdKind, device: Option<&DeviceShape>) -> i64 {
    match (kind, device) {
        (ThresholdKind::SuffOuterPar, None) => DEFAULT_SUFF_OUTER_PAR,
        (ThresholdKind::SuffIntraPar, None) => DEFAULT_SUFF_INTRA_PAR,
        (ThresholdKind::SuffOuterPar, Some(d)) if d.gpu => d.compute_units.max(1) * 2048,
        (ThresholdKind::SuffOuterPar, Some(d)) => d.compute_units.max(1) * d.simd_width.max(1) * 4,
        (ThresholdKind::SuffIntraPar, Some(d)) if d.gpu => d.compute_units.max(1),
        (ThresholdKind::SuffIntraPar, Some(_)) => i64::MAX,
        (ThresholdKind::LocalMemoryExceeded, None) => DEFAULT_LOCAL_MEMORY + 1,
        (ThresholdKind::LocalMemoryExceeded, Some(d)) => d.local_memory.max(0).saturating_add(1),
    }
}

/// Translates every function of `program` (simplified, parallel calls inlined).
pub fn flatten(program: &Program) -> GpuProgram {
    let mut out = GpuProgram { entries: program.entries.clone(), ..GpuProgram::default() };
    for (id, core) in program.functions.iter() {
        let mut flattener = Flattener {
            core,
            out: GpuFunction {
                name: core.name.clone(),
                def: core.def.clone(),
                is_entry: core.is_entry,
                size_params: core.size_params.clone(),
                params: core.params.clone(),
                ret: core.ret.clone(),
                body: BlockId::from_raw(0u32.into()),
                vars: core.vars.clone(),
                exps: Arena::default(),
                blocks: Arena::default(),
                origins: Default::default(),
            },
            thresholds: &mut out.thresholds,
            subst: FxHashMap::default(),
        };
        let body = flattener.host_block(core.body);
        flattener.out.body = body;
        out.functions.insert(id, flattener.out);
    }
    out
}

/// How code inside a SegOp body treats combinators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// Every combinator is a sequential loop.
    Sequential,
    /// In a `group` body: combinators become `thread` SegOps (written `@seq` ones stay
    /// sequential).
    Group,
}

struct Flattener<'a> {
    core: &'a Function,
    out: GpuFunction,
    thresholds: &'a mut Arena<Threshold>,
    /// Core variables whose value is another atom in the code being emitted (fresh
    /// copies, values read at a point of a space).
    subst: FxHashMap<VarId, Atom>,
}

impl Flattener<'_> {
    // ---- building blocks -------------------------------------------------------

    /// A fresh variable copying core variable `v`, which from now on stands for it.
    fn rebind(&mut self, v: VarId) -> VarId {
        let old = &self.core.vars[v];
        let ty = self.ty(&old.ty);
        let new = self.out.vars.alloc(Var { name: old.name.clone(), ty, kind: old.kind });
        self.subst.insert(v, Atom::Var(new));
        new
    }

    fn new_var(&mut self, name: &str, ty: Type) -> VarId {
        self.out.vars.alloc(Var { name: weft_hir::Name::new(name), ty, kind: VarKind::Bound })
    }

    fn push(&mut self, stmts: &mut Vec<Stmt>, vars: Vec<VarId>, exp: Exp, origin: Option<&Origin>) {
        let id = self.out.exps.alloc(exp);
        if let Some(origin) = origin {
            self.out.origins.insert(id, origin.clone());
        }
        stmts.push(Stmt { vars, exp: id });
    }

    fn block(&mut self, stmts: Vec<Stmt>, results: Vec<Atom>) -> BlockId {
        self.out.blocks.alloc(Block { stmts, results })
    }

    /// A copy of a core expression with no nested code, operands substituted.
    fn basic(&self, exp: &weft_core::Exp) -> weft_core::Exp {
        let mut exp = exp.clone();
        exp.operands_mut(&mut |a| *a = self.atom(*a));
        if let weft_core::Exp::Size(size) = &mut exp {
            *size = self.size(size);
        }
        exp.types_mut(&mut |ty| *ty = self.ty(ty));
        exp
    }

    fn origin(&self, exp: weft_core::ExpId) -> Option<Origin> {
        self.core.origins.get(exp).cloned()
    }

    // ---- host level --------------------------------------------------------------

    fn host_block(&mut self, block: weft_core::BlockId) -> BlockId {
        let mut stmts = Vec::new();
        for stmt in &self.core.blocks[block].stmts {
            self.host_stmt(&mut stmts, *stmt);
        }
        let results = self.core.blocks[block].result.map(|a| self.atom(a)).into_iter().collect();
        self.block(stmts, results)
    }

    fn host_stmt(&mut self, stmts: &mut Vec<Stmt>, stmt: weft_core::Stmt) {
        let core = self.core;
        let exp = &core.exps[stmt.exp];
        let origin = self.origin(stmt.exp);
        match exp {
            weft_core::Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                let then_branch = self.host_block(*then_branch);
                let else_branch = self.host_block(*else_branch);
                let var = self.rebind(stmt.var);
                self.push(
                    stmts,
                    vec![var],
                    Exp::If { cond, then_branch, else_branch },
                    origin.as_ref(),
                );
            }
            weft_core::Exp::Loop { .. } => {
                let exp = self.loop_exp(exp, &mut |this, b| this.host_block(b));
                let var = self.rebind(stmt.var);
                self.push(stmts, vec![var], exp, origin.as_ref());
            }
            weft_core::Exp::Map { .. }
            | weft_core::Exp::Generate { .. }
            | weft_core::Exp::Reduce { .. }
            | weft_core::Exp::Scan { .. } => self.host_soac(stmts, stmt, origin),
            weft_core::Exp::ReduceByIndex { .. } | weft_core::Exp::Scatter { .. } => {
                self.host_hist(stmts, stmt, origin)
            }
            _ => {
                let exp = Exp::Basic(self.basic(exp));
                let var = self.rebind(stmt.var);
                self.push(stmts, vec![var], exp, origin.as_ref());
            }
        }
    }

    fn loop_exp(
        &mut self,
        exp: &weft_core::Exp,
        body_of: &mut dyn FnMut(&mut Self, weft_core::BlockId) -> BlockId,
    ) -> Exp {
        let weft_core::Exp::Loop { param, init, form, body } = exp else {
            unreachable!("loop_exp is called on loops")
        };
        let init = self.atom(*init);
        let param = self.rebind(*param);
        let form = match form {
            weft_core::LoopForm::For { index, bound } => {
                let bound = self.atom(*bound);
                LoopForm::For { index: self.rebind(*index), bound }
            }
            weft_core::LoopForm::While { cond } => LoopForm::While { cond: body_of(self, *cond) },
        };
        let body = body_of(self, *body);
        Exp::Loop { param, init, form, body }
    }

    fn host_soac(&mut self, stmts: &mut Vec<Stmt>, stmt: weft_core::Stmt, origin: Option<Origin>) {
        let exp = self.core.exps[stmt.exp].clone();
        let origins: Vec<Origin> = origin.iter().cloned().collect();
        let level = exp.written_level();
        let seg = match (&exp, level) {
            (weft_core::Exp::Reduce { .. }, _) => self.seg_reduction(stmts, &exp, origins),
            (weft_core::Exp::Scan { .. }, _) => self.seg_reduction(stmts, &exp, origins),
            (_, Some(Level::Group)) => {
                let (space, body) = self.map_body(stmts, &exp, Inside::Group);
                SegOp {
                    level: SegLevel::Group,
                    pinned: true,
                    space,
                    kind: SegKind::Map,
                    body,
                    origins,
                }
            }
            (_, Some(_)) => {
                let (space, body) = self.map_body(stmts, &exp, Inside::Sequential);
                SegOp {
                    level: SegLevel::Grid,
                    pinned: true,
                    space,
                    kind: SegKind::Map,
                    body,
                    origins,
                }
            }
            (_, None) if !self.has_inner_parallelism(&exp) => {
                let (space, body) = self.map_body(stmts, &exp, Inside::Sequential);
                SegOp {
                    level: SegLevel::Grid,
                    pinned: false,
                    space,
                    kind: SegKind::Map,
                    body,
                    origins,
                }
            }
            (_, None) => {
                self.versions(stmts, stmt, &exp, origins);
                return;
            }
        };
        let var = self.rebind(stmt.var);
        self.push(stmts, vec![var], Exp::Seg(seg), origin.as_ref());
    }

    /// `reduce_by_index dest op neutral indices values` (or `scatter dest indices
    /// values`) at host level: a SegHist (a SegScatter) over the values whose body reads
    /// each value's bin (index) and value, so that producers of either fuse into it.
    fn host_hist(&mut self, stmts: &mut Vec<Stmt>, stmt: weft_core::Stmt, origin: Option<Origin>) {
        let (dest, operator, indices, values) = match self.core.exps[stmt.exp].clone() {
            weft_core::Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                (dest, Some((lambda, neutral)), indices, values)
            }
            weft_core::Exp::Scatter { dest, indices, values } => (dest, None, indices, values),
            _ => unreachable!("host_hist is called on reduce_by_index and scatter"),
        };
        let n = self.outer_size_atom(stmts, indices);
        let index = self.new_var("i", Type::Scalar(ScalarTy::I64));
        let mut body = Vec::new();
        let mut read = |this: &mut Self, array: Atom, name: &str, ty: Type| {
            let var = this.new_var(name, ty);
            let items = vec![IndexItem::Fix(Atom::Var(index))];
            let array = this.atom(array);
            this.push(
                &mut body,
                vec![var],
                Exp::Basic(weft_core::Exp::Index { array, items }),
                None,
            );
            Atom::Var(var)
        };
        let value_ty = self.ty(&self.core.vars[stmt.var].ty).elem().cloned();
        let bin = read(self, indices, "bin", Type::Scalar(ScalarTy::I64));
        let value = read(self, values, "x", value_ty.unwrap_or(Type::Scalar(ScalarTy::I64)));
        let body = self.block(body, vec![bin, value]);
        let dest = self.atom(dest);
        let kind = match operator {
            Some((lambda, neutral)) => SegKind::Hist { dest, op: self.operator(&lambda, neutral) },
            None => SegKind::Scatter { dest },
        };
        let seg = SegOp {
            level: SegLevel::Grid,
            pinned: false,
            space: vec![(index, n)],
            kind,
            body,
            origins: origin.iter().cloned().collect(),
        };
        let var = self.rebind(stmt.var);
        self.push(stmts, vec![var], Exp::Seg(seg), origin.as_ref());
    }

    /// Whether a combinator's body (at any depth) holds an unannotated or `@thread`
    /// combinator: parallelism a version could use.
    fn has_inner_parallelism(&self, exp: &weft_core::Exp) -> bool {
        fn block_has(core: &Function, block: weft_core::BlockId) -> bool {
            core.blocks[block].stmts.iter().any(|s| {
                let exp = &core.exps[s.exp];
                let parallel = matches!(
                    exp,
                    weft_core::Exp::Map { .. }
                        | weft_core::Exp::Generate { .. }
                        | weft_core::Exp::Reduce { .. }
                        | weft_core::Exp::Scan { .. }
                ) && exp.written_level() != Some(Level::Seq);
                parallel || exp.nested_blocks().into_iter().any(|b| block_has(core, b))
            })
        }
        exp.nested_blocks().into_iter().any(|b| block_has(self.core, b))
    }

    /// The space `[i < n]` of a map or generate and its body: the lambda's parameters
    /// bound to the arrays' elements at `i` (or to `i`), then the lambda's code.
    fn map_body(
        &mut self,
        outer: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        inside: Inside,
    ) -> (Vec<(VarId, Atom)>, BlockId) {
        let mut stmts = Vec::new();
        let (dim, lambda) = self.map_point(outer, exp, &mut stmts);
        let results = self.body_code(&mut stmts, lambda.body, inside);
        (vec![dim], self.block(stmts, results))
    }

    /// One dimension `i < n` of a map or generate, with the statements binding its
    /// lambda's parameters at the point (the arrays' elements at `i`, or `i`) added to
    /// `stmts`; returns the dimension and the lambda.
    fn map_point(
        &mut self,
        outer: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        stmts: &mut Vec<Stmt>,
    ) -> ((VarId, Atom), weft_core::Lambda) {
        let (lambda, arrays, size) = match exp {
            weft_core::Exp::Map { lambda, arrays, .. } => {
                let size = self.outer_size_atom(outer, arrays[0]);
                (lambda, arrays.clone(), size)
            }
            weft_core::Exp::Generate { lambda, size, .. } => (lambda, Vec::new(), self.atom(*size)),
            _ => unreachable!("map_point is called on maps and generates"),
        };
        let index = self.new_var("i", Type::Scalar(ScalarTy::I64));
        if arrays.is_empty() {
            self.subst.insert(lambda.params[0], Atom::Var(index));
        } else {
            for (&param, &array) in lambda.params.iter().zip(&arrays) {
                let array = self.atom(array);
                let read =
                    weft_core::Exp::Index { array, items: vec![IndexItem::Fix(Atom::Var(index))] };
                let var = self.rebind(param);
                self.push(stmts, vec![var], Exp::Basic(read), None);
            }
        }
        ((index, size), lambda.clone())
    }

    /// The inner map or generate of a perfect nest: `exp`'s body is exactly one
    /// unannotated map or generate whose arrays (or size) do not depend on `exp`'s
    /// parameters, so the nest's points form a rectangle.
    fn perfect_inner(&self, exp: &weft_core::Exp) -> Option<weft_core::Exp> {
        let (weft_core::Exp::Map { lambda, .. } | weft_core::Exp::Generate { lambda, .. }) = exp
        else {
            return None;
        };
        let block = &self.core.blocks[lambda.body];
        let [stmt] = block.stmts.as_slice() else { return None };
        if block.result != Some(Atom::Var(stmt.var)) {
            return None;
        }
        let inner = &self.core.exps[stmt.exp];
        let unannotated = matches!(
            inner,
            weft_core::Exp::Map { level: None, .. } | weft_core::Exp::Generate { level: None, .. }
        );
        let rectangular = inner
            .operands()
            .iter()
            .all(|a| !matches!(a, Atom::Var(v) if lambda.params.contains(v)));
        (unannotated && rectangular).then(|| inner.clone())
    }

    /// How many maps (or generates) `exp` nests perfectly around code with no inner
    /// parallelism (0 when the innermost code has some).
    fn map_nest_depth(&self, exp: &weft_core::Exp) -> usize {
        match self.perfect_inner(exp) {
            Some(inner) => match self.map_nest_depth(&inner) {
                0 if self.has_inner_parallelism(&inner) => 0,
                0 => 2,
                depth => depth + 1,
            },
            None => 0,
        }
    }

    /// The two-dimensional space of a perfect nest (`exp` over `inner`) and its body:
    /// both lambdas' parameters bound at the point, then the inner lambda's code,
    /// sequential.
    fn perfect_nest_body(
        &mut self,
        outer: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        inner: &weft_core::Exp,
    ) -> (Vec<(VarId, Atom)>, BlockId) {
        let mut stmts = Vec::new();
        let (first, _) = self.map_point(outer, exp, &mut stmts);
        let (second, lambda) = self.map_point(outer, inner, &mut stmts);
        let results = self.body_code(&mut stmts, lambda.body, Inside::Sequential);
        (vec![first, second], self.block(stmts, results))
    }

    /// The outer size of an array operand as an atom; a size that is neither a variable
    /// nor a constant is computed by a statement added to `stmts` (it was checked when
    /// the array was made, so computing it again cannot fail).
    fn outer_size_atom(&mut self, stmts: &mut Vec<Stmt>, array: Atom) -> Atom {
        let size = match array {
            Atom::Var(v) => self.core.vars[v].ty.outer_size().map(|s| self.size(s)),
            Atom::Const(_) => None,
        }
        .unwrap_or_else(CoreSize::zero);
        if let Some(&var) = size.as_var() {
            return Atom::Var(var);
        }
        if let Some(n) = size.as_constant() {
            return Atom::Const(Scalar::I64(n));
        }
        let var = self.new_var("", Type::Scalar(ScalarTy::I64));
        self.push(stmts, vec![var], Exp::Basic(weft_core::Exp::Size(size)), None);
        Atom::Var(var)
    }

    /// The SegOp of a `reduce` or `scan` (`exp`) over its array's outer dimension.
    fn seg_reduction(
        &mut self,
        outer: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        origins: Vec<Origin>,
    ) -> SegOp {
        let pinned = exp.written_level().is_some();
        let (reduce, lambda, neutral, array) = match exp {
            weft_core::Exp::Reduce { lambda, neutral, array, .. } => {
                (true, lambda, *neutral, *array)
            }
            weft_core::Exp::Scan { lambda, neutral, array, .. } => {
                (false, lambda, *neutral, *array)
            }
            _ => unreachable!("seg_reduction is called on reductions and scans"),
        };
        let size = self.outer_size_atom(outer, array);
        let index = self.new_var("i", Type::Scalar(ScalarTy::I64));
        let array = self.atom(array);
        let elem_ty = match array {
            Atom::Var(v) => self.out.vars[v].ty.elem().cloned(),
            Atom::Const(_) => None,
        }
        .unwrap_or(Type::Scalar(ScalarTy::I64));
        let elem = self.new_var("x", elem_ty);
        let mut stmts = Vec::new();
        let read = weft_core::Exp::Index { array, items: vec![IndexItem::Fix(Atom::Var(index))] };
        self.push(&mut stmts, vec![elem], Exp::Basic(read), None);
        let body = self.block(stmts, vec![Atom::Var(elem)]);
        let op = self.operator(lambda, neutral);
        let kind = if reduce { SegKind::Red(vec![op]) } else { SegKind::Scan(vec![op]) };
        SegOp { level: SegLevel::Grid, pinned, space: vec![(index, size)], kind, body, origins }
    }

    fn operator(&mut self, lambda: &weft_core::Lambda, neutral: Atom) -> SegBinOp {
        let commutative = weft_core::is_commutative(self.core, lambda);
        let lambda = self.lambda(lambda, Inside::Sequential);
        SegBinOp { lambda, neutral: vec![self.atom(neutral)], commutative }
    }

    fn lambda(&mut self, lambda: &weft_core::Lambda, inside: Inside) -> Lambda {
        let params = lambda.params.iter().map(|&p| self.rebind(p)).collect();
        let mut stmts = Vec::new();
        let results = self.body_code(&mut stmts, lambda.body, inside);
        Lambda { params, body: self.block(stmts, results) }
    }

    // ---- inside SegOp bodies -----------------------------------------------------------

    /// Emits a core block's statements as body code; returns its result.
    fn body_code(
        &mut self,
        stmts: &mut Vec<Stmt>,
        block: weft_core::BlockId,
        inside: Inside,
    ) -> Vec<Atom> {
        for stmt in &self.core.blocks[block].stmts {
            self.body_stmt(stmts, *stmt, inside);
        }
        self.core.blocks[block].result.map(|a| self.atom(a)).into_iter().collect()
    }

    fn body_block(&mut self, block: weft_core::BlockId, inside: Inside) -> BlockId {
        let mut stmts = Vec::new();
        let results = self.body_code(&mut stmts, block, inside);
        self.block(stmts, results)
    }

    fn body_stmt(&mut self, stmts: &mut Vec<Stmt>, stmt: weft_core::Stmt, inside: Inside) {
        let core = self.core;
        let exp = &core.exps[stmt.exp];
        let origin = self.origin(stmt.exp);
        let level = exp.written_level();
        let threads = inside == Inside::Group && level != Some(Level::Seq);
        let translated = match exp {
            weft_core::Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                // Thread SegOps stay in uniform control flow: branches are sequential.
                let then_branch = self.body_block(*then_branch, Inside::Sequential);
                let else_branch = self.body_block(*else_branch, Inside::Sequential);
                Exp::If { cond, then_branch, else_branch }
            }
            weft_core::Exp::Loop { .. } => {
                self.loop_exp(exp, &mut |this, b| this.body_block(b, inside))
            }
            weft_core::Exp::Map { .. } | weft_core::Exp::Generate { .. } if threads => {
                let (space, body) = self.map_body(stmts, exp, Inside::Sequential);
                Exp::Seg(SegOp {
                    level: SegLevel::Thread,
                    pinned: level.is_some(),
                    space,
                    kind: SegKind::Map,
                    body,
                    origins: origin.iter().cloned().collect(),
                })
            }
            weft_core::Exp::Reduce { .. } | weft_core::Exp::Scan { .. } if threads => {
                let mut seg = self.seg_reduction(stmts, exp, origin.iter().cloned().collect());
                seg.level = SegLevel::Thread;
                Exp::Seg(seg)
            }
            weft_core::Exp::Map { lambda, arrays, .. } => {
                let arrays = arrays.iter().map(|&a| self.atom(a)).collect();
                Exp::Seq(SeqSoac::Map { lambda: self.lambda(lambda, Inside::Sequential), arrays })
            }
            weft_core::Exp::Generate { lambda, size, .. } => {
                let size = self.atom(*size);
                Exp::Seq(SeqSoac::Generate {
                    size,
                    lambda: self.lambda(lambda, Inside::Sequential),
                })
            }
            weft_core::Exp::Reduce { lambda, neutral, array, .. } => {
                let (neutral, array) = (self.atom(*neutral), self.atom(*array));
                let lambda = self.lambda(lambda, Inside::Sequential);
                Exp::Seq(SeqSoac::Reduce { lambda, neutral, array })
            }
            weft_core::Exp::Scan { lambda, neutral, array, .. } => {
                let (neutral, array) = (self.atom(*neutral), self.atom(*array));
                let lambda = self.lambda(lambda, Inside::Sequential);
                Exp::Seq(SeqSoac::Scan { lambda, neutral, array })
            }
            weft_core::Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                let (dest, neutral) = (self.atom(*dest), self.atom(*neutral));
                let (indices, values) = (self.atom(*indices), self.atom(*values));
                let lambda = self.lambda(lambda, Inside::Sequential);
                Exp::Seq(SeqSoac::Hist { dest, lambda, neutral, indices, values })
            }
            _ => Exp::Basic(self.basic(exp)),
        };
        let var = self.rebind(stmt.var);
        self.push(stmts, vec![var], translated, origin.as_ref());
    }

    // ---- versions ----------------------------------------------------------------------

    fn threshold(&mut self, kind: ThresholdKind) -> crate::ir::ThresholdId {
        let default = threshold_default(kind, None);
        let n = self.thresholds.iter().filter(|(_, t)| t.kind == kind).count();
        let name = format!("{}.{}_{n}", self.core.name, kind.name());
        self.thresholds.alloc(Threshold { name, kind, default })
    }

    /// The versions of an unannotated map or generate with inner parallelism.
    fn versions(
        &mut self,
        stmts: &mut Vec<Stmt>,
        stmt: weft_core::Stmt,
        exp: &weft_core::Exp,
        origins: Vec<Origin>,
    ) {
        let origin = origins.first().cloned();
        if self.map_nest_depth(exp) >= 3 {
            // A perfect nest of three or more maps around scalar code (a 3-D stencil):
            // the fully flattened SegMap gives every point a work-item, and nothing
            // needs sequential inner code; the outer version would loop over the
            // innermost dimension, the one neighbouring work-items should share.
            let result = self.distribute(stmts, exp, &[], origin.as_ref());
            let var = self.rebind(stmt.var);
            let copy = Exp::Basic(weft_core::Exp::Atom(result));
            self.push(stmts, vec![var], copy, origin.as_ref());
            return;
        }
        let outer = match exp {
            weft_core::Exp::Map { arrays, .. } => self.outer_size_atom(stmts, arrays[0]),
            weft_core::Exp::Generate { size, .. } => self.atom(*size),
            _ => unreachable!("versions are made for maps and generates"),
        };
        let outer_size = match outer {
            Atom::Var(v) if self.out.vars[v].ty == Type::Scalar(ScalarTy::I64) => CoreSize::var(v),
            Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
            _ => self
                .ty(&self.core.vars[stmt.var].ty)
                .outer_size()
                .cloned()
                .unwrap_or_else(CoreSize::zero),
        };
        let result_ty = self.ty(&self.core.vars[stmt.var].ty);

        // 1. Outer parallelism only: over both maps of a perfect nest (a matrix
        // product's rows and columns), else over the outer map.
        let (space, body) = match self.perfect_inner(exp) {
            Some(inner) => self.perfect_nest_body(stmts, exp, &inner),
            None => self.map_body(stmts, exp, Inside::Sequential),
        };
        let outer_points =
            space.iter().skip(1).fold(outer_size.clone(), |n, (_, m)| n.mul(&atom_size(*m)));
        let outer_only = SegOp {
            level: SegLevel::Grid,
            pinned: false,
            space,
            kind: SegKind::Map,
            body,
            origins: origins.clone(),
        };
        if !self.body_is_regular(exp)
            || self.body_binds_tuples_of_arrays(exp)
            || self.body_reduces_arrays(exp)
        {
            // An array whose size differs between points (`iota n` with `n` read per
            // point) cannot become an array over the space, so distributing would
            // recompute it at each use; a work-item per point is the one version.
            // Likewise a tuple holding arrays (a loop over a pair of arrays): spread
            // over the space it would be an array of tuples of arrays, which the code
            // generator does not represent. Likewise a reduction or scan whose elements
            // are arrays (the row of the largest first element): its operator chooses
            // or combines whole arrays, which a work-group's threads would have to
            // exchange; each work-item runs it as a loop.
            let var = self.rebind(stmt.var);
            self.push(stmts, vec![var], Exp::Seg(outer_only), origin.as_ref());
            return;
        }
        let outer_var = self.new_var("outer", result_ty.clone());
        let mut outer_stmts = Vec::new();
        self.push(&mut outer_stmts, vec![outer_var], Exp::Seg(outer_only), origin.as_ref());
        let outer_block = self.block(outer_stmts, vec![Atom::Var(outer_var)]);

        // 3. Fully flattened.
        let flat_block = {
            let mut flat_stmts = Vec::new();
            let result = self.distribute(&mut flat_stmts, exp, &[], origin.as_ref());
            self.block(flat_stmts, vec![result])
        };

        // 2. One work-group per outer iteration, when the combinators are directly in
        // the body (thread SegOps need uniform control flow).
        let inner_block = if self.inner_combinators_are_direct(exp) {
            let (space, body) = self.map_body(stmts, exp, Inside::Group);
            let group = SegOp {
                level: SegLevel::Group,
                pinned: false,
                space,
                kind: SegKind::Map,
                body,
                origins,
            };
            let group_var = self.new_var("intra", result_ty.clone());
            let mut group_stmts = Vec::new();
            self.push(&mut group_stmts, vec![group_var], Exp::Seg(group), origin.as_ref());
            let group_block = self.block(group_stmts, vec![Atom::Var(group_var)]);
            let threshold = self.threshold(ThresholdKind::SuffIntraPar);
            let chosen = self.new_var("versions", result_ty.clone());
            let mut stmts = Vec::new();
            let version = Exp::Version {
                size: outer_size.clone(),
                threshold,
                then_branch: group_block,
                else_branch: flat_block,
            };
            self.push(&mut stmts, vec![chosen], version, origin.as_ref());
            self.block(stmts, vec![Atom::Var(chosen)])
        } else {
            flat_block
        };
        let threshold = self.threshold(ThresholdKind::SuffOuterPar);
        let var = self.rebind(stmt.var);
        let version = Exp::Version {
            size: outer_points,
            threshold,
            then_branch: outer_block,
            else_branch: inner_block,
        };
        self.push(stmts, vec![var], version, origin.as_ref());
    }

    /// Whether every value the body of a map or generate binds has a type whose sizes
    /// are the same at every point (no size bound inside the body).
    fn body_is_regular(&self, exp: &weft_core::Exp) -> bool {
        let Some(lambda) = (match exp {
            weft_core::Exp::Map { lambda, .. } | weft_core::Exp::Generate { lambda, .. } => {
                Some(lambda)
            }
            _ => None,
        }) else {
            return true;
        };
        let body = &self.core.blocks[lambda.body];
        let mut inside: FxHashSet<VarId> = lambda.params.iter().copied().collect();
        inside.extend(body.stmts.iter().map(|s| s.var));
        body.stmts.iter().all(|s| {
            let mut regular = true;
            weft_core::type_vars(&self.core.vars[s.var].ty, &mut |v| {
                regular &= !inside.contains(&v);
            });
            regular
        })
    }

    /// Whether the body of a map or generate binds a tuple with an array in it.
    fn body_binds_tuples_of_arrays(&self, exp: &weft_core::Exp) -> bool {
        let Some(&body) = exp.nested_blocks().first() else { return false };
        self.core.blocks[body].stmts.iter().any(|s| {
            matches!(&self.core.vars[s.var].ty, Type::Tuple(parts) if parts.iter().any(Type::has_array))
        })
    }

    /// Whether the body of a map or generate binds a reduction or scan whose elements
    /// are arrays.
    fn body_reduces_arrays(&self, exp: &weft_core::Exp) -> bool {
        let Some(&body) = exp.nested_blocks().first() else { return false };
        self.core.blocks[body].stmts.iter().any(|s| {
            let ty = &self.core.vars[s.var].ty;
            match &self.core.exps[s.exp] {
                weft_core::Exp::Reduce { .. } => ty.has_array(),
                weft_core::Exp::Scan { .. } => ty.elem().is_some_and(Type::has_array),
                _ => false,
            }
        })
    }

    fn inner_combinators_are_direct(&self, exp: &weft_core::Exp) -> bool {
        let body = exp.nested_blocks()[0];
        self.core.blocks[body].stmts.iter().all(|s| {
            let inner = &self.core.exps[s.exp];
            !inner.has_nested_code()
                || (!matches!(inner, weft_core::Exp::If { .. } | weft_core::Exp::Loop { .. })
                    && !self.has_inner_parallelism(inner))
        })
    }

    /// Distributes a map or generate over the space `outer ++ [i < n]` (loop
    /// distribution): each statement of its body becomes a host statement computing its
    /// value at every point, as an array over the space. Returns the array of the body's
    /// result.
    fn distribute(
        &mut self,
        stmts: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        outer: &[Space],
        origin: Option<&Origin>,
    ) -> Atom {
        let (lambda, arrays, size) = match exp {
            weft_core::Exp::Map { lambda, arrays, .. } => {
                let size = self.outer_size_atom(stmts, arrays[0]);
                (lambda.clone(), arrays.clone(), size)
            }
            weft_core::Exp::Generate { lambda, size, .. } => {
                (lambda.clone(), Vec::new(), self.atom(*size))
            }
            _ => unreachable!("distribute is called on maps and generates"),
        };
        let mut space = outer.to_vec();
        let depth = space.len();
        // The lambda's parameters over the extended space: the arrays themselves (a
        // parameter is `array[i_depth]` at each point; outer indices come first).
        let mut per_point: Vec<PerPoint> = Vec::new();
        if arrays.is_empty() {
            per_point.push(PerPoint { core: lambda.params[0], source: Source::Index(depth) });
        } else {
            for (&param, &array) in lambda.params.iter().zip(&arrays) {
                per_point.push(PerPoint {
                    core: param,
                    source: Source::Array { array: self.atom(array), dims: vec![depth] },
                });
            }
        }
        space.push(Space { size });
        let mut expanded = ExpandedScope { values: per_point };
        for stmt in &self.core.blocks[lambda.body].stmts {
            self.distribute_stmt(stmts, *stmt, &space, &mut expanded);
        }
        let result =
            self.core.blocks[lambda.body].result.unwrap_or(Atom::Const(Scalar::Bool(false)));
        let ty = self.expanded_type(&space[..depth], &self.core.vars_of_exp_result(exp));
        self.result_over_space(stmts, result, &space, &expanded, ty, origin)
    }

    fn expanded_type(&self, space: &[Space], ty: &Type) -> Type {
        let mut out = self.ty(ty);
        for s in space.iter().rev() {
            out = Type::array(atom_size(s.size), out);
        }
        out
    }

    /// The body's result as an array over the space: a distributed value is its array;
    /// anything else is spread by a SegMap.
    fn result_over_space(
        &mut self,
        stmts: &mut Vec<Stmt>,
        result: Atom,
        space: &[Space],
        expanded: &ExpandedScope,
        ty: Type,
        origin: Option<&Origin>,
    ) -> Atom {
        if let Atom::Var(v) = result
            && let Some(PerPoint { source: Source::Array { array, dims }, .. }) = expanded.get(v)
            && dims.iter().copied().eq(0..space.len())
        {
            return array;
        }
        let (seg_space, mut body) = self.space_vars(space);
        let value = self.read_at_point(&mut body, result, &seg_space, expanded);
        let body = self.block(body, vec![value]);
        let var = self.new_var("spread", ty);
        let seg = SegOp {
            level: SegLevel::Grid,
            pinned: false,
            space: seg_space,
            kind: SegKind::Map,
            body,
            origins: origin.into_iter().cloned().collect(),
        };
        self.push(stmts, vec![var], Exp::Seg(seg), origin);
        Atom::Var(var)
    }

    fn space_vars(&mut self, space: &[Space]) -> (Vec<(VarId, Atom)>, Vec<Stmt>) {
        let vars = space
            .iter()
            .map(|s| (self.new_var("i", Type::Scalar(ScalarTy::I64)), s.size))
            .collect();
        (vars, Vec::new())
    }

    /// The value of `atom` at the current point of a SegOp body: an expanded value is
    /// read from its array; anything else is used as it is.
    fn read_at_point(
        &mut self,
        body: &mut Vec<Stmt>,
        atom: Atom,
        point: &[(VarId, Atom)],
        expanded: &ExpandedScope,
    ) -> Atom {
        let Atom::Var(v) = atom else { return atom };
        match expanded.get(v) {
            Some(PerPoint { source: Source::Index(dim), .. }) => Atom::Var(point[dim].0),
            Some(PerPoint { source, core }) => {
                let Source::Array { array, dims } = source else { unreachable!("matched above") };
                let items = dims.iter().map(|&d| IndexItem::Fix(Atom::Var(point[d].0))).collect();
                let ty = self.ty(&self.core.vars[core].ty);
                let var = self.new_var(self.core.vars[core].name.as_str(), ty);
                self.push(
                    body,
                    vec![var],
                    Exp::Basic(weft_core::Exp::Index { array, items }),
                    None,
                );
                Atom::Var(var)
            }
            None => self.atom(atom),
        }
    }

    /// Whether a combinator's operator reads a value that is per point of the space
    /// being distributed (an operator reading its row's own floor): a segmented operator sees no point, so
    /// such a combinator stays sequential at every point.
    fn operator_reads_expanded(
        &self,
        exp: &weft_core::Exp,
        operands: [Atom; 2],
        expanded: &ExpandedScope,
    ) -> bool {
        let reads = crate::passes::facts::free_vars_of_exp(self.core, exp);
        reads.into_iter().any(|v| !operands.contains(&Atom::Var(v)) && expanded.get(v).is_some())
    }

    fn distribute_stmt(
        &mut self,
        stmts: &mut Vec<Stmt>,
        stmt: weft_core::Stmt,
        space: &[Space],
        expanded: &mut ExpandedScope,
    ) {
        let core = self.core;
        let exp = &core.exps[stmt.exp];
        let origin = self.origin(stmt.exp);
        let origins: Vec<Origin> = origin.iter().cloned().collect();
        let regular = |this: &Self, a: Atom| match a {
            Atom::Var(v) => {
                expanded.get(v).is_none()
                    && !this.core.vars[v]
                        .ty
                        .outer_size()
                        .is_some_and(|s| s.vars().iter().any(|w| expanded.get(*w).is_some()))
            }
            Atom::Const(_) => true,
        };
        let ty = self.expanded_type(space, &core.vars[stmt.var].ty);
        match exp {
            // An inner map or generate over a size that is the same at every point:
            // the space grows by one dimension.
            weft_core::Exp::Map { level: None, arrays, .. }
                if arrays.iter().all(|&a| self.array_is_regular(a, expanded)) =>
            {
                let value = self.distribute_inner(stmts, exp, space, expanded, origin.as_ref());
                expanded.values.push(PerPoint {
                    core: stmt.var,
                    source: Source::Array { array: value, dims: (0..space.len()).collect() },
                });
            }
            weft_core::Exp::Generate { level: None, size, .. } if regular(self, *size) => {
                let value = self.distribute_inner(stmts, exp, space, expanded, origin.as_ref());
                expanded.values.push(PerPoint {
                    core: stmt.var,
                    source: Source::Array { array: value, dims: (0..space.len()).collect() },
                });
            }
            // An inner reduction or scan of a regular array: segmented.
            weft_core::Exp::Reduce { level: None, lambda, neutral, array }
            | weft_core::Exp::Scan { level: None, lambda, neutral, array }
                if self.array_is_regular(*array, expanded)
                    && regular(self, *neutral)
                    && !self.operator_reads_expanded(exp, [*array, *neutral], expanded) =>
            {
                let reduce = matches!(exp, weft_core::Exp::Reduce { .. });
                let inner_size = self.outer_size_atom(stmts, *array);
                let mut seg_space_sizes = space.to_vec();
                seg_space_sizes.push(Space { size: inner_size });
                let (seg_space, mut body) = self.space_vars(&seg_space_sizes);
                // The element at the point: one read of the array the row lives in
                // (`a[i.., j]`), so fusion sees the producer's element directly.
                let inner_index = seg_space[space.len()].0;
                let (source, mut dims) = match expanded.get_array(*array) {
                    Some((source, dims)) => (source, dims),
                    None => (self.atom(*array), Vec::new()),
                };
                dims.push(space.len());
                let items =
                    dims.iter().map(|&d| IndexItem::Fix(Atom::Var(seg_space[d].0))).collect();
                debug_assert_eq!(seg_space[space.len()].0, inner_index);
                let elem_ty = self.core.vars[match array {
                    Atom::Var(v) => *v,
                    Atom::Const(_) => unreachable!("a regular array is a variable"),
                }]
                .ty
                .elem()
                .map(|t| self.ty(t))
                .unwrap_or(Type::Scalar(ScalarTy::I64));
                let elem = self.new_var("x", elem_ty);
                self.push(
                    &mut body,
                    vec![elem],
                    Exp::Basic(weft_core::Exp::Index { array: source, items }),
                    None,
                );
                let body = self.block(body, vec![Atom::Var(elem)]);
                let op = self.operator(lambda, *neutral);
                let kind = if reduce { SegKind::Red(vec![op]) } else { SegKind::Scan(vec![op]) };
                let result_ty = ty.clone();
                let var = self.new_var(core.vars[stmt.var].name.as_str(), result_ty);
                let seg = SegOp {
                    level: SegLevel::Grid,
                    pinned: false,
                    space: seg_space,
                    kind,
                    body,
                    origins,
                };
                self.push(stmts, vec![var], Exp::Seg(seg), origin.as_ref());
                expanded.values.push(PerPoint {
                    core: stmt.var,
                    source: Source::Array {
                        array: Atom::Var(var),
                        dims: (0..space.len()).collect(),
                    },
                });
            }
            // Anything else: computed sequentially at every point of the space.
            _ => {
                let (seg_space, mut body) = self.space_vars(space);
                // Bind every expanded value the statement reads to its value here.
                let reads = crate::passes::facts::free_vars_of_exp(core, exp);
                let mut reads: Vec<VarId> =
                    reads.into_iter().filter(|v| expanded.get(*v).is_some()).collect();
                reads.sort();
                let saved: Vec<(VarId, Option<Atom>)> =
                    reads.iter().map(|v| (*v, self.subst.get(v).copied())).collect();
                for v in reads {
                    let value = self.read_at_point(&mut body, Atom::Var(v), &seg_space, expanded);
                    self.subst.insert(v, value);
                }
                self.body_stmt(&mut body, stmt, Inside::Sequential);
                let value = self.atom(Atom::Var(stmt.var));
                for (v, old) in saved {
                    match old {
                        Some(a) => self.subst.insert(v, a),
                        None => self.subst.remove(&v),
                    };
                }
                let body = self.block(body, vec![value]);
                let var = self.new_var(core.vars[stmt.var].name.as_str(), ty);
                let seg = SegOp {
                    level: SegLevel::Grid,
                    pinned: false,
                    space: seg_space,
                    kind: SegKind::Map,
                    body,
                    origins,
                };
                self.push(stmts, vec![var], Exp::Seg(seg), origin.as_ref());
                expanded.values.push(PerPoint {
                    core: stmt.var,
                    source: Source::Array {
                        array: Atom::Var(var),
                        dims: (0..space.len()).collect(),
                    },
                });
            }
        }
    }

    /// An inner map or generate, distributed over the space extended by its size.
    fn distribute_inner(
        &mut self,
        stmts: &mut Vec<Stmt>,
        exp: &weft_core::Exp,
        space: &[Space],
        expanded: &ExpandedScope,
        origin: Option<&Origin>,
    ) -> Atom {
        // The inner lambda's parameters read the outer arrays at the extended point: a
        // parameter bound to an expanded array `a` (rank = space) reads `a[i.., j]`; one
        // bound to an invariant array reads it at `j` only.
        let weft_core::Exp::Map { lambda, arrays, .. } = exp else {
            let weft_core::Exp::Generate { lambda, size, .. } = exp else {
                unreachable!("maps and generates")
            };
            let mut space = space.to_vec();
            let depth = space.len();
            space.push(Space { size: self.atom(*size) });
            let mut inner = ExpandedScope { values: expanded.values.clone() };
            inner.values.push(PerPoint { core: lambda.params[0], source: Source::Index(depth) });
            return self.distribute_body(stmts, lambda, &space, inner, exp, origin);
        };
        let mut inner_space = space.to_vec();
        inner_space.push(Space { size: self.outer_size_atom(stmts, arrays[0]) });
        let mut inner = ExpandedScope { values: expanded.values.clone() };
        for (&param, &array) in lambda.params.iter().zip(arrays) {
            let depth = space.len();
            let source = match array {
                Atom::Var(v) => match expanded.get(v) {
                    Some(PerPoint { source: Source::Array { array, mut dims }, .. }) => {
                        dims.push(depth);
                        Source::Array { array, dims }
                    }
                    Some(PerPoint { source: Source::Index(_), .. }) => {
                        unreachable!("an index is a scalar, never a map's array")
                    }
                    None => Source::Array { array: self.atom(Atom::Var(v)), dims: vec![depth] },
                },
                Atom::Const(_) => Source::Array { array, dims: vec![depth] },
            };
            inner.values.push(PerPoint { core: param, source });
        }
        self.distribute_body(stmts, lambda, &inner_space, inner, exp, origin)
    }

    fn distribute_body(
        &mut self,
        stmts: &mut Vec<Stmt>,
        lambda: &weft_core::Lambda,
        space: &[Space],
        mut scope: ExpandedScope,
        exp: &weft_core::Exp,
        origin: Option<&Origin>,
    ) -> Atom {
        for stmt in &self.core.blocks[lambda.body].stmts {
            self.distribute_stmt(stmts, *stmt, space, &mut scope);
        }
        let result =
            self.core.blocks[lambda.body].result.unwrap_or(Atom::Const(Scalar::Bool(false)));
        let ty = self.expanded_type(&space[..space.len() - 1], &self.core.vars_of_exp_result(exp));
        self.result_over_space(stmts, result, space, &scope, ty, origin)
    }

    /// Whether an array operand has the same shape at every point of the space (so an
    /// inner combinator over it can extend or segment the space).
    fn array_is_regular(&self, array: Atom, expanded: &ExpandedScope) -> bool {
        let Atom::Var(v) = array else { return false };
        let ty = &self.core.vars[v].ty;
        let mut sizes_invariant = true;
        weft_core::type_vars(ty, &mut |w| sizes_invariant &= expanded.get(w).is_none());
        sizes_invariant
    }
}

trait ResultType {
    fn vars_of_exp_result(&self, exp: &weft_core::Exp) -> Type;
}

impl ResultType for Function {
    /// The element type a map's or generate's lambda returns.
    fn vars_of_exp_result(&self, exp: &weft_core::Exp) -> Type {
        match exp {
            weft_core::Exp::Map { lambda, .. } | weft_core::Exp::Generate { lambda, .. } => {
                lambda.ret.clone()
            }
            _ => Type::Tuple(Vec::new()),
        }
    }
}

/// One dimension of a space being distributed over.
#[derive(Debug, Clone, Copy)]
struct Space {
    size: Atom,
}

/// Where a core variable's value at a point of the space comes from.
#[derive(Debug, Clone)]
enum Source {
    /// The point's index in dimension `dim`.
    Index(usize),
    /// `array[i_d0, i_d1, ...]` for the listed dimensions of the space.
    Array { array: Atom, dims: Vec<usize> },
}

#[derive(Debug, Clone)]
struct PerPoint {
    core: VarId,
    source: Source,
}

/// The core variables bound per point of the space being distributed over.
#[derive(Debug, Clone, Default)]
struct ExpandedScope {
    values: Vec<PerPoint>,
}

impl ExpandedScope {
    fn get(&self, v: VarId) -> Option<PerPoint> {
        self.values.iter().rev().find(|p| p.core == v).cloned()
    }

    /// The array and space dimensions an expanded array variable is read from.
    fn get_array(&self, atom: Atom) -> Option<(Atom, Vec<usize>)> {
        let Atom::Var(v) = atom else { return None };
        match self.get(v)?.source {
            Source::Array { array, dims } => Some((array, dims)),
            Source::Index(_) => None,
        }
    }
}

impl Substitutes for Flattener<'_> {
    fn subst(&self) -> &FxHashMap<VarId, Atom> {
        &self.subst
    }
}
