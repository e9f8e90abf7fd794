//! Matrix-multiplication-shaped nests: `map (\row -> map (\col -> R) B') A` where `R`
//! reduces, with a commutative-free but fixed-order `op`, the element-wise `g` of `row`
//! and `col` (`reduce op ne (map2 g row col)`, directly or through a call of a def
//! such as `dot`), `A` is `[n][K]` and `B'` is `[m][K]` computed without `row`
//! (typically `transpose b`). The rule is on the IR, so it holds for a dot product as
//! a separate def, a transposed operand, operands swapped in `map2`, and sizes that
//! are not multiples of the tile. A batch of such nests (`map2 (\a b -> NEST) as bs`,
//! where the nest's rows are a batch parameter) runs as one launch whose third
//! NDRange dimension is the batch: each work-group fixes its batch element.
//!
//! The kernel: a work-group of 256 computes a 128x128 block of the result; each
//! work-item keeps an 8x8 block in registers (rows `8ty + r`, contiguous in local
//! memory and read with `vload4` for f32; columns `tx + 16c`, so that neighbouring
//! work-items read neighbouring words and store neighbouring elements); the shared
//! dimension is walked in stages of 8 staged in local memory, loaded along each
//! operand's contiguous dimension. By default ([`DEFAULT_VARIANT`]) a warp covers 8x4
//! work-items and the stages are double-buffered: the next one is loaded into
//! registers while the current one is multiplied. Each element is accumulated in the
//! order of `K`, as the sequential reduction does.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{Atom, Exp, FnId, Lambda, Program, VarId};
use weft_plan::{Elem, Expr};

use crate::arr::{IExpr, View};
use crate::host::Lowerer;
use crate::imp::{CExpr, COp, Cmd};
use crate::kernel::KEnv;
use crate::val::{HArr, HEnv, KArr, KVal, PullSrc, Res};

/// Rows (and columns) of the result per work-item.
const RT: i64 = 8;
/// Rows (and columns) of the result per work-group.
const TILE: i64 = 16 * RT;

pub(crate) struct Nest {
    func: FnId,
    outer: Lambda,
    env: Rc<HEnv>,
    rows: Rows,
    /// Statements of the outer body before the inner map (computing `B'`).
    prefix: usize,
    inner_array: Atom,
    dot: Dot,
}

/// Where the left operand's rows come from.
enum Rows {
    /// A host array.
    Host(HArr),
    /// A batch: `map (\p.. -> map (\row -> ..) rows) arrays`, with `rows` one of the
    /// batch lambda's parameters; the batch index fixes every array's outer dimension.
    Batch { lambda: Lambda, arrays: Vec<HArr>, rows: Atom },
}

/// `reduce op ne (map2 g x y)` in `func`, with `x`/`y` the row and the column
/// (`row_first`) or the other way round.
struct Dot {
    func: FnId,
    g: Lambda,
    op: Lambda,
    ne: Atom,
    row_first: bool,
    /// Parameters of a called def that stand for the row and the column, if `R` is a call.
    call_params: Option<(VarId, VarId)>,
}

fn dot_in_block(
    program: &Program,
    func: FnId,
    block: weft_core::BlockId,
    x: VarId,
    y: VarId,
) -> Option<Dot> {
    let f = &program.functions[func];
    let b = &f.blocks[block];
    let [s1, s2] = b.stmts.as_slice() else {
        let [s] = b.stmts.as_slice() else { return None };
        // A call of a def that computes the dot product.
        let Exp::Call { func: callee, args } = &f.exps[s.exp] else { return None };
        if b.result != Some(Atom::Var(s.var)) {
            return None;
        }
        let cf = &program.functions[*callee];
        let [p0, p1] = cf.params.as_slice() else { return None };
        let (row_first, (pr, pc)) = match args.as_slice() {
            [Atom::Var(a0), Atom::Var(a1)] if *a0 == x && *a1 == y => (true, (*p0, *p1)),
            [Atom::Var(a0), Atom::Var(a1)] if *a0 == y && *a1 == x => (false, (*p1, *p0)),
            _ => return None,
        };
        let _ = row_first;
        let mut d = dot_in_block(program, *callee, cf.body, pr, pc)?;
        d.call_params = Some((pr, pc));
        return Some(d);
    };
    let Exp::Map { lambda: g, arrays, .. } = &f.exps[s1.exp] else { return None };
    let Exp::Reduce { lambda: op, neutral, array: Atom::Var(t), .. } = &f.exps[s2.exp] else {
        return None;
    };
    if *t != s1.var
        || b.result != Some(Atom::Var(s2.var))
        || f.vars[s2.var].ty.as_scalar().is_none()
    {
        return None;
    }
    let row_first = match arrays.as_slice() {
        [Atom::Var(u), Atom::Var(v)] if *u == x && *v == y => true,
        [Atom::Var(u), Atom::Var(v)] if *u == y && *v == x => false,
        _ => return None,
    };
    if matches!(neutral, Atom::Var(_)) {
        return None;
    }
    Some(Dot { func, g: g.clone(), op: op.clone(), ne: *neutral, row_first, call_params: None })
}

/// Recognises the nest (or a batch of nests) in a pull array about to be materialised.
pub(crate) fn matmul_nest(program: &Program, a: &HArr) -> Option<Nest> {
    let HArr::Pull(p) = a else { return None };
    if !p.views.is_empty() {
        return None;
    }
    let PullSrc::Map { func, lambda, env, arrays, .. } = &p.src else { return None };
    match p.shape.len() {
        2 => {
            let [rows] = arrays.as_slice() else { return None };
            if rows.shape().len() != 2 {
                return None;
            }
            let (prefix, inner_array, dot) = row_nest(program, *func, lambda)?;
            Some(Nest {
                func: *func,
                outer: lambda.clone(),
                env: env.clone(),
                rows: Rows::Host(rows.clone()),
                prefix,
                inner_array,
                dot,
            })
        }
        3 => {
            // A batch: the lambda's body is exactly the nest over one of its parameters.
            if lambda.params.len() != arrays.len() || arrays.iter().any(|a| a.shape().len() < 2) {
                return None;
            }
            let f = &program.functions[*func];
            let body = &f.blocks[lambda.body];
            let [only] = body.stmts.as_slice() else { return None };
            if body.result != Some(Atom::Var(only.var)) {
                return None;
            }
            let Exp::Map { lambda: outer, arrays: outer_arrays, level } = &f.exps[only.exp] else {
                return None;
            };
            if matches!(level, Some(weft_hir::Level::Group | weft_hir::Level::Thread)) {
                return None;
            }
            let [rows @ Atom::Var(rv)] = outer_arrays.as_slice() else { return None };
            if !lambda.params.contains(rv) {
                return None;
            }
            let (prefix, inner_array, dot) = row_nest(program, *func, outer)?;
            Some(Nest {
                func: *func,
                outer: outer.clone(),
                env: env.clone(),
                rows: Rows::Batch { lambda: lambda.clone(), arrays: arrays.clone(), rows: *rows },
                prefix,
                inner_array,
                dot,
            })
        }
        _ => None,
    }
}

/// `\row -> (prefix computing B'); map (\col -> R) B'`: the prefix's length, `B'` and
/// the dot product `R`.
fn row_nest(program: &Program, func: FnId, lambda: &Lambda) -> Option<(usize, Atom, Dot)> {
    if lambda.params.len() != 1 {
        return None;
    }
    let row = lambda.params[0];
    let f = &program.functions[func];
    let body = &f.blocks[lambda.body];
    let last = body.stmts.last()?;
    if body.result != Some(Atom::Var(last.var)) {
        return None;
    }
    let Exp::Map { lambda: inner, arrays: inner_arrays, level } = &f.exps[last.exp] else {
        return None;
    };
    if matches!(level, Some(weft_hir::Level::Group | weft_hir::Level::Thread)) {
        return None;
    }
    let [inner_array] = inner_arrays.as_slice() else { return None };
    // `B'` and everything before it must not depend on the row.
    let prefix = body.stmts.len() - 1;
    for s in &body.stmts[..prefix] {
        if f.exps[s.exp].operands().contains(&Atom::Var(row)) {
            return None;
        }
    }
    if *inner_array == Atom::Var(row) || inner.params.len() != 1 {
        return None;
    }
    let dot = dot_in_block(program, func, inner.body, row, inner.params[0])?;
    Some((prefix, *inner_array, dot))
}

/// Whether dimension 0 of a 2-D array is the contiguous one (so loads should vary it
/// fastest).
fn dim0_contiguous(a: &KArr) -> bool {
    matches!(a, KArr::Mem(m) if m.strides.first().and_then(CExpr::as_int) == Some(1) && m.strides.get(1).and_then(CExpr::as_int) != Some(1))
}

/// Shape choices of the kernel, as bits of a number (`Options::matmul_variant`, a tuning
/// knob, default [`DEFAULT_VARIANT`]; `bench/results/h100-2026-11-24-sgemm-tuning.md`
/// has the H100's times of each).
#[derive(Debug, Clone, Copy)]
struct Variant {
    /// 1: columns `4tx + j` and `64 + 4tx + j` of an f32 right operand, read with
    /// `vload4` (otherwise `tx + 16c`, one word each), and rows of the local tiles
    /// padded by 4 words. NVIDIA's compiler splits `vload4` from local memory into four
    /// 32-bit loads (it cannot assume 16-byte alignment); it lost at stages of 8, but is
    /// part of the fastest configuration measured (7 with stages of 16).
    vector_cols: bool,
    /// 2: the work-items of a warp cover 8 columns x 4 rows of the 16x16 grid
    /// (otherwise 16x2): fewer distinct words of local memory per warp and step.
    warp_square: bool,
    /// 4: two local buffers: the next stage is loaded into registers while the current
    /// one is multiplied, then stored into the other buffer (one barrier per stage).
    double_buffer: bool,
}

/// Square warps and double buffering: 24.8 TFLOP/s on the H100 (0.49x cuBLAS), local
/// tiles of 32 KiB at most (8-byte elements).
pub(crate) const DEFAULT_VARIANT: u32 = 6;

fn variant(v: u32) -> Variant {
    Variant { vector_cols: v & 1 != 0, warp_square: v & 2 != 0, double_buffer: v & 4 != 0 }
}

impl Lowerer<'_> {
    pub(crate) fn matmul_tiled(&mut self, nest: &Nest, out: &HArr, name: &str) -> Res<bool> {
        let program = self.program;
        #[expect(non_snake_case, reason = "the tile constants' names")]
        let TK = i64::from(self.options.matmul_stage);
        let HArr::Mem(out_mem) = out else { return Ok(false) };
        let f = &program.functions[nest.func];
        let mut kb = self.kb();
        kb.can_return = false;
        // B' from the outer body's prefix, evaluated once per work-item.
        let mut env = KEnv { vars: FxHashMap::default(), host: Some(nest.env.clone()) };
        // A batch: work-group dimension 2 is the batch element, which fixes the outer
        // dimension of every batched array.
        let batch = match &nest.rows {
            Rows::Host(_) => None,
            Rows::Batch { lambda, arrays, .. } => {
                let q = kb.tmp("batch", Elem::I64, CExpr::work_item("get_group_id", 2));
                for (param, arr) in lambda.params.iter().zip(arrays) {
                    let whole = kb.import_arr(arr)?;
                    let one = kb.view(&whole, &View::Fix { dim: 0, index: q.clone() });
                    env.vars.insert(*param, KVal::Arr(one));
                }
                Some(q)
            }
        };
        let body = &f.blocks[nest.outer.body];
        for s in &body.stmts[..nest.prefix] {
            let v = kb.exp(nest.func, &mut env, s.exp, s.var)?;
            env.vars.insert(s.var, v);
        }
        let KVal::Arr(bt) = kb.atom(nest.func, &mut env, &nest.inner_array)? else {
            return Ok(false);
        };
        let a = match &nest.rows {
            Rows::Host(rows) => kb.import_arr(rows)?,
            Rows::Batch { rows, .. } => match kb.atom(nest.func, &mut env, rows)? {
                KVal::Arr(a) => a,
                _ => return Ok(false),
            },
        };
        let (KArr::Mem(_) | KArr::Pull { .. }) = &a else { return Ok(false) };
        let (KArr::Mem(_) | KArr::Pull { .. }) = &bt else { return Ok(false) };
        let dst = kb.import_arr(out)?;
        let dst = match &batch {
            Some(q) => kb.view(&dst, &View::Fix { dim: 0, index: q.clone() }),
            None => dst,
        };
        let (n, k_len) = (a.shape()[0].clone(), a.shape()[1].clone());
        let m = bt.shape()[0].clone();
        let (row_ty, _) = crate::kernel::elem_and_rank(&f.vars[nest.outer.params[0]].ty);
        let Some(elem_a) = row_ty.as_scalar() else { return Ok(false) };
        let Atom::Var(bv) = nest.inner_array else { return Ok(false) };
        let (bty, _) = crate::kernel::elem_and_rank(&f.vars[bv].ty);
        let Some(elem_b) = bty.as_scalar() else { return Ok(false) };
        let acc_elem = out_mem.elem;
        let var = variant(self.options.matmul_variant);
        // Words per row of a local tile (one row per element of the shared dimension).
        let stride = TILE + if var.vector_cols { 4 } else { 0 };
        let stage_words = TK * stride;
        let buffers = if var.double_buffer { 2 } else { 1 };
        let la = kb.local_param(
            "a_tile",
            elem_a,
            Expr::I64(buffers * stage_words),
            "a tile of the left operand, staged by the work-group",
        );
        let lb = kb.local_param(
            "b_tile",
            elem_b,
            Expr::I64(buffers * stage_words),
            "a tile of the right operand, staged by the work-group",
        );
        let tid = kb.tmp("tid", Elem::I64, CExpr::work_item("get_local_id", 0));
        let (tx, ty) = if var.warp_square {
            // Warp w, lane l: tx = 8 (w % 2) + l % 8, ty = 4 (w / 2) + l / 8.
            let w = CExpr::bin(COp::Div, tid.clone(), CExpr::Int(32));
            let l = CExpr::bin(COp::Rem, tid.clone(), CExpr::Int(32));
            let tx = CExpr::add(
                CExpr::mul(CExpr::bin(COp::Rem, w.clone(), CExpr::Int(2)), CExpr::Int(8)),
                CExpr::bin(COp::Rem, l.clone(), CExpr::Int(8)),
            );
            let ty = CExpr::add(
                CExpr::mul(CExpr::bin(COp::Div, w, CExpr::Int(2)), CExpr::Int(4)),
                CExpr::bin(COp::Div, l, CExpr::Int(8)),
            );
            (kb.tmp("tx", Elem::I64, tx), kb.tmp("ty", Elem::I64, ty))
        } else {
            (
                kb.tmp("tx", Elem::I64, CExpr::bin(COp::Rem, tid.clone(), CExpr::Int(16))),
                kb.tmp("ty", Elem::I64, CExpr::bin(COp::Div, tid.clone(), CExpr::Int(16))),
            )
        };
        // The work-item's columns: `float4` reads of an f32 right operand, else one
        // word each, neighbouring work-items on neighbouring words.
        let vector_cols = var.vector_cols && elem_b == Elem::F32;
        let col_of = |c: i64| {
            if vector_cols {
                CExpr::add(CExpr::mul(tx.clone(), CExpr::Int(4)), CExpr::Int(c % 4 + 64 * (c / 4)))
            } else {
                CExpr::add(tx.clone(), CExpr::Int(16 * c))
            }
        };
        let col0 = kb.tmp(
            "col0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(TILE)),
        );
        let row0 = kb.tmp(
            "row0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 1), CExpr::Int(TILE)),
        );
        let mut dot_env = match nest.dot.call_params {
            Some(_) => KEnv::default(),
            None => KEnv { vars: env.vars.clone(), host: Some(nest.env.clone()) },
        };
        let ne = kb.atom(nest.dot.func, &mut dot_env, &nest.dot.ne)?;
        let mut accs = Vec::new();
        for r in 0..RT {
            for c in 0..RT {
                let name = format!("acc{r}{c}");
                accs.push(kb.decl(
                    &name,
                    acc_elem,
                    Some(match &ne {
                        KVal::Scalar(e, _) => e.clone(),
                        _ => CExpr::Int(0),
                    }),
                ));
            }
        }
        // Each work-item stages TILE*TK/256 elements of each operand per stage, along
        // the operand's contiguous dimension; (row, k) of each is fixed per work-item.
        struct Load {
            a_side: bool,
            r: CExpr,
            k: CExpr,
            /// The register it is loaded into, with double buffering.
            reg: Option<CExpr>,
        }
        let mut loads = Vec::new();
        for (a_side, arr, elem) in [(true, &a, elem_a), (false, &bt, elem_b)] {
            let outer_fast = dim0_contiguous(arr);
            for l in 0..(TILE * TK / 256) {
                let e = CExpr::add(tid.clone(), CExpr::Int(l * 256));
                let (r, k) = if outer_fast {
                    (
                        CExpr::bin(COp::Rem, e.clone(), CExpr::Int(TILE)),
                        CExpr::bin(COp::Div, e, CExpr::Int(TILE)),
                    )
                } else {
                    (
                        CExpr::bin(COp::Div, e.clone(), CExpr::Int(TK)),
                        CExpr::bin(COp::Rem, e, CExpr::Int(TK)),
                    )
                };
                let r = kb.tmp("r", Elem::I64, r);
                let k = kb.tmp("k", Elem::I64, k);
                let reg = var.double_buffer.then(|| kb.decl("pf", elem, Some(CExpr::Int(0))));
                loads.push(Load { a_side, r, k, reg });
            }
        }
        // Where an element goes in the tile at `off`.
        let slot = |ld: &Load, off: &CExpr| {
            CExpr::add(
                off.clone(),
                CExpr::add(CExpr::mul(ld.k.clone(), CExpr::Int(stride)), ld.r.clone()),
            )
        };
        // Loads stage `k0` (into the tiles at `off`, or into the registers).
        let stage_in = |kb: &mut crate::kernel::Kb<'_>, k0: &CExpr, off: &CExpr| -> Res<bool> {
            for ld in &loads {
                let (arr, base, limit, tile) =
                    if ld.a_side { (&a, &row0, &n, &la) } else { (&bt, &col0, &m, &lb) };
                let gi = CExpr::add(base.clone(), ld.r.clone());
                let gk = CExpr::add(k0.clone(), ld.k.clone());
                let ok = CExpr::bin(
                    COp::And,
                    CExpr::bin(COp::Lt, gi.clone(), limit.clone()),
                    CExpr::bin(COp::Lt, gk.clone(), k_len.clone()),
                );
                kb.push();
                let KVal::Scalar(v, _) = kb.index(arr, &[gi, gk])? else { return Ok(false) };
                match &ld.reg {
                    Some(CExpr::Var(reg)) => kb.emit(Cmd::Assign { name: reg.clone(), value: v }),
                    _ => kb.emit(Cmd::Store { ptr: tile.clone(), index: slot(ld, off), value: v }),
                }
                let then_cmds = kb.pop();
                kb.emit(Cmd::If { cond: ok, then_cmds, else_cmds: vec![] });
            }
            Ok(true)
        };
        // Stores the registers into the tiles at `off` (double buffering).
        let registers_out = |kb: &mut crate::kernel::Kb<'_>, off: &CExpr| {
            for ld in &loads {
                if let Some(reg) = &ld.reg {
                    kb.emit(Cmd::Store {
                        ptr: if ld.a_side { la.clone() } else { lb.clone() },
                        index: slot(ld, off),
                        value: reg.clone(),
                    });
                }
            }
        };
        let ktiles = kb.tmp(
            "ktiles",
            Elem::I64,
            CExpr::bin(COp::Div, CExpr::add(k_len.clone(), CExpr::Int(TK - 1)), CExpr::Int(TK)),
        );
        if var.double_buffer {
            // Stage 0 into buffer 0.
            if !stage_in(&mut kb, &CExpr::Int(0), &CExpr::Int(0))? {
                return Ok(false);
            }
            registers_out(&mut kb, &CExpr::Int(0));
            kb.emit(Cmd::Barrier);
        }
        let kk = kb.fresh_name("ktile");
        let k0 = CExpr::mul(CExpr::Var(kk.clone()), CExpr::Int(TK));
        kb.push();
        let off = if var.double_buffer {
            let cur = kb.tmp(
                "cur",
                Elem::I64,
                CExpr::mul(
                    CExpr::bin(COp::Rem, CExpr::Var(kk.clone()), CExpr::Int(2)),
                    CExpr::Int(stage_words),
                ),
            );
            // The next stage's loads are in flight while this one is multiplied.
            let more = CExpr::bin(
                COp::Lt,
                CExpr::add(CExpr::Var(kk.clone()), CExpr::Int(1)),
                ktiles.clone(),
            );
            kb.push();
            if !stage_in(&mut kb, &CExpr::add(k0.clone(), CExpr::Int(TK)), &CExpr::Int(0))? {
                return Ok(false);
            }
            let then_cmds = kb.pop();
            kb.emit(Cmd::If { cond: more, then_cmds, else_cmds: vec![] });
            cur
        } else {
            if !stage_in(&mut kb, &k0, &CExpr::Int(0))? {
                return Ok(false);
            }
            kb.emit(Cmd::Barrier);
            CExpr::Int(0)
        };
        let kmax = CExpr::call("min", vec![CExpr::Int(TK), CExpr::sub(k_len.clone(), k0.clone())]);
        let full = CExpr::bin(COp::Le, CExpr::add(k0.clone(), CExpr::Int(TK)), k_len.clone());
        let k = kb.fresh_name("k");
        kb.push();
        // Work-item (tx, ty) owns rows ty*RT.. (contiguous in local memory: f32 ones are
        // read as float4, broadcast within a warp) and the columns `col_of` gives.
        let row_k = CExpr::add(off.clone(), CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(stride)));
        let read = |kb: &mut crate::kernel::Kb<'_>,
                    tile: &std::rc::Rc<str>,
                    elem: Elem,
                    hint: &str,
                    at: &dyn Fn(i64) -> CExpr,
                    vector: bool|
         -> Vec<CExpr> {
            let mut vals = Vec::new();
            for r in 0..RT {
                if vector && r % 4 == 0 {
                    let at = CExpr::add(row_k.clone(), at(r));
                    let lanes: Vec<std::rc::Rc<str>> =
                        (0..4).map(|_| kb.fresh_name(hint)).collect();
                    vals.extend(lanes.iter().map(|l| CExpr::Var(l.clone())));
                    kb.emit(Cmd::VectorLoad {
                        lanes,
                        elem: Elem::F32,
                        load: CExpr::load(tile, at),
                    });
                } else if !vector {
                    let index = CExpr::add(row_k.clone(), at(r));
                    vals.push(kb.tmp(hint, elem, CExpr::load(tile, index)));
                }
            }
            vals
        };
        let own_row = |r: i64| CExpr::add(CExpr::mul(ty.clone(), CExpr::Int(RT)), CExpr::Int(r));
        let avals = read(&mut kb, &la, elem_a, "a", &own_row, elem_a == Elem::F32);
        let bvals = read(&mut kb, &lb, elem_b, "b", &col_of, vector_cols);
        for r in 0..RT as usize {
            for c in 0..RT as usize {
                let (x, y) = if nest.dot.row_first {
                    (&avals[r], &bvals[c])
                } else {
                    (&bvals[c], &avals[r])
                };
                let mut genv = dot_env.clone();
                genv.vars.insert(
                    nest.dot.g.params[0],
                    KVal::Scalar(x.clone(), if nest.dot.row_first { elem_a } else { elem_b }),
                );
                genv.vars.insert(
                    nest.dot.g.params[1],
                    KVal::Scalar(y.clone(), if nest.dot.row_first { elem_b } else { elem_a }),
                );
                let prod = kb.block(nest.dot.func, &mut genv, nest.dot.g.body)?;
                let acc = &accs[r * RT as usize + c];
                let mut oenv = dot_env.clone();
                oenv.vars.insert(nest.dot.op.params[0], KVal::Scalar(acc.clone(), acc_elem));
                oenv.vars.insert(nest.dot.op.params[1], prod);
                let KVal::Scalar(sum, _) = kb.block(nest.dot.func, &mut oenv, nest.dot.op.body)?
                else {
                    return Ok(false);
                };
                let CExpr::Var(acc_name) = acc else { return Ok(false) };
                kb.emit(Cmd::Assign { name: acc_name.clone(), value: sum });
            }
        }
        let inner = kb.pop();
        // A full stage has a constant trip count, so the compiler unrolls it.
        let full_loop =
            Cmd::For { var: k.clone(), bound: CExpr::Int(TK), body: inner.clone(), comment: None };
        let partial_loop = Cmd::For { var: k, bound: kmax, body: inner, comment: None };
        kb.emit(Cmd::If {
            cond: full,
            then_cmds: vec![Cmd::Unroll, full_loop],
            else_cmds: vec![partial_loop],
        });
        if var.double_buffer {
            // The other buffer was last read before the previous barrier.
            let more = CExpr::bin(
                COp::Lt,
                CExpr::add(CExpr::Var(kk.clone()), CExpr::Int(1)),
                ktiles.clone(),
            );
            kb.push();
            registers_out(&mut kb, &CExpr::sub(CExpr::Int(stage_words), off));
            let then_cmds = kb.pop();
            kb.emit(Cmd::If { cond: more, then_cmds, else_cmds: vec![] });
        }
        kb.emit(Cmd::Barrier);
        let tiles_body = kb.pop();
        kb.emit(Cmd::For { var: kk, bound: ktiles, body: tiles_body, comment: None });
        for r in 0..RT {
            for c in 0..RT {
                let row = CExpr::add(row0.clone(), own_row(r));
                let col = CExpr::add(col0.clone(), col_of(c));
                let ok = CExpr::bin(
                    COp::And,
                    CExpr::bin(COp::Lt, row.clone(), n.clone()),
                    CExpr::bin(COp::Lt, col.clone(), m.clone()),
                );
                kb.push();
                kb.write(
                    &dst,
                    &[row, col],
                    &KVal::Scalar(accs[(r * RT + c) as usize].clone(), acc_elem),
                )?;
                let then_cmds = kb.pop();
                kb.emit(Cmd::If { cond: ok, then_cmds, else_cmds: vec![] });
            }
        }
        if let Some(o) = self.origin_of_pull(nest) {
            let what = if batch.is_some() {
                "@grid: a batch of matrix-multiplication nests (NDRange dimension 2 is the batch), 128x128 blocks per work-group, 8x8 per work-item in registers, operands staged in local memory"
            } else {
                "@grid: a matrix-multiplication nest, 128x128 blocks per work-group, 8x8 per work-item in registers, operands staged in local memory"
            };
            kb.note(&o, what);
        }
        let round = |e: Expr| Expr::div(Expr::add(e, Expr::I64(TILE - 1)), Expr::I64(TILE));
        let d = out_mem.shape.len() - 2;
        let mut global = vec![
            Expr::mul(round(out_mem.shape[d + 1].clone()), Expr::I64(256)),
            round(out_mem.shape[d].clone()),
        ];
        let mut local = vec![Expr::I64(256), Expr::I64(1)];
        if batch.is_some() {
            global.push(out_mem.shape[0].clone());
            local.push(Expr::I64(1));
        }
        let doc = format!(
            "materialises `{name}`, a matrix-multiplication nest: {TILE}x{TILE} tiles, {RT}x{RT} per work-item, shared dimension staged through local memory"
        );
        self.launch(kb, "matmul", doc, global, Some(local));
        Ok(true)
    }

    fn origin_of_pull(&self, nest: &Nest) -> Option<weft_core::Origin> {
        let f = &self.program.functions[nest.func];
        let last = f.blocks[nest.outer.body].stmts.last()?;
        self.origin(nest.func, last.exp)
    }
}
