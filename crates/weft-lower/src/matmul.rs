//! Matrix-multiplication-shaped nests: `map (\row -> map (\col -> R) B') A` where `R`
//! reduces, with a commutative-free but fixed-order `op`, the element-wise `g` of `row`
//! and `col` (`reduce op ne (map2 g row col)`, directly or through a call of a def
//! such as `dot`), `A` is `[n][K]` and `B'` is `[m][K]` computed without `row`
//! (typically `transpose b`). The rule is on the IR, so it holds for a dot product as
//! a separate def, a transposed operand, operands swapped in `map2`, and sizes that
//! are not multiples of the tile.
//!
//! The kernel: a work-group of 256 computes a 128x128 block of the result; each
//! work-item keeps an 8x8 block in registers (rows `8ty + r`, contiguous in local
//! memory and read as `float4` for f32; columns `tx + 16c`, so that neighbouring
//! work-items read neighbouring words and store neighbouring elements); the shared
//! dimension is walked in tiles of 8 staged in local memory, loaded along each
//! operand's contiguous dimension. Each element is accumulated in the order of `K`,
//! as the sequential reduction does.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{Atom, Exp, FnId, Lambda, Program, VarId};
use weft_plan::{Elem, Expr};

use crate::arr::{IExpr, Mem};
use crate::host::{Lowerer, exp_atoms};
use crate::imp::{CExpr, COp, Cmd};
use crate::kernel::{KEnv, elem_of};
use crate::val::{HArr, HEnv, KArr, KVal, PullSrc, Res};

/// Rows (and columns) of the result per work-item.
const RT: i64 = 8;
/// Rows (and columns) of the result per work-group.
const TILE: i64 = 16 * RT;

pub(crate) struct Nest {
    func: FnId,
    outer: Lambda,
    env: Rc<HEnv>,
    a: HArr,
    /// Statements of the outer body before the inner map (computing `B'`).
    prefix: usize,
    inner_array: Atom,
    dot: Dot,
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

/// Recognises the nest in a pull array about to be materialised.
pub(crate) fn matmul_nest(program: &Program, a: &HArr) -> Option<Nest> {
    let HArr::Pull(p) = a else { return None };
    if !p.views.is_empty() || p.shape.len() != 2 {
        return None;
    }
    let PullSrc::Map { func, lambda, env, arrays, .. } = &p.src else { return None };
    let [rows] = arrays.as_slice() else { return None };
    if rows.shape().len() != 2 || lambda.params.len() != 1 {
        return None;
    }
    let row = lambda.params[0];
    let f = &program.functions[*func];
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
        if exp_atoms(&f.exps[s.exp]).contains(&Atom::Var(row)) {
            return None;
        }
    }
    if *inner_array == Atom::Var(row) || inner.params.len() != 1 {
        return None;
    }
    let dot = dot_in_block(program, *func, inner.body, row, inner.params[0])?;
    Some(Nest {
        func: *func,
        outer: lambda.clone(),
        env: env.clone(),
        a: rows.clone(),
        prefix,
        inner_array: *inner_array,
        dot,
    })
}

/// Whether dimension 0 of a 2-D array is the contiguous one (so loads should vary it
/// fastest).
fn dim0_contiguous(a: &KArr) -> bool {
    matches!(a, KArr::Mem(m) if m.strides.first().and_then(CExpr::as_int) == Some(1) && m.strides.get(1).and_then(CExpr::as_int) != Some(1))
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
        let body = &f.blocks[nest.outer.body];
        for s in &body.stmts[..nest.prefix] {
            let v = kb.exp(nest.func, &mut env, s.exp, s.var)?;
            env.vars.insert(s.var, v);
        }
        let KVal::Arr(bt) = kb.atom(nest.func, &mut env, &nest.inner_array)? else {
            return Ok(false);
        };
        let a = kb.import_arr(&nest.a)?;
        let (KArr::Mem(_) | KArr::Pull { .. }) = &a else { return Ok(false) };
        let (KArr::Mem(_) | KArr::Pull { .. }) = &bt else { return Ok(false) };
        let dst = kb.import_arr(out)?;
        let (n, k_len) = (a.shape()[0].clone(), a.shape()[1].clone());
        let m = bt.shape()[0].clone();
        let Some(elem_a) = harr_elem(&nest.a) else { return Ok(false) };
        let Atom::Var(bv) = nest.inner_array else { return Ok(false) };
        let (bty, _) = crate::kernel::elem_and_rank(&f.vars[bv].ty);
        let Some(elem_b) = bty.as_scalar().map(elem_of) else { return Ok(false) };
        let acc_elem = out_mem.elem;
        let la = kb.local_param(
            "a_tile",
            elem_a,
            Expr::I64(TK * TILE),
            "a tile of the left operand, staged by the work-group",
        );
        let lb = kb.local_param(
            "b_tile",
            elem_b,
            Expr::I64(TK * TILE),
            "a tile of the right operand, staged by the work-group",
        );
        let tid = kb.tmp("tid", Elem::I64, CExpr::work_item("get_local_id", 0));
        let tx = kb.tmp("tx", Elem::I64, CExpr::bin(COp::Rem, tid.clone(), CExpr::Int(16)));
        let ty = kb.tmp("ty", Elem::I64, CExpr::bin(COp::Div, tid.clone(), CExpr::Int(16)));
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
        let mut dot_env = KEnv {
            vars: FxHashMap::default(),
            host: if nest.dot.call_params.is_some() { None } else { Some(nest.env.clone()) },
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
        let kk = kb.fresh_name("ktile");
        let k0 = CExpr::mul(CExpr::Var(kk.clone()), CExpr::Int(TK));
        kb.push();
        // Stage the tiles: each work-item loads TILE*TK/256 elements of each operand.
        for (arr, tile, elem) in [(&a, &la, elem_a), (&bt, &lb, elem_b)] {
            let base = if std::ptr::eq(arr, &a) { row0.clone() } else { col0.clone() };
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
                let gi = CExpr::add(base.clone(), r.clone());
                let gk = CExpr::add(k0.clone(), k.clone());
                let limit = if std::ptr::eq(arr, &a) { n.clone() } else { m.clone() };
                let ok = CExpr::bin(
                    COp::And,
                    CExpr::bin(COp::Lt, gi.clone(), limit),
                    CExpr::bin(COp::Lt, gk.clone(), k_len.clone()),
                );
                kb.push();
                let KVal::Scalar(v, _) = kb.index(arr, &[gi, gk])? else { return Ok(false) };
                kb.emit(Cmd::Store {
                    ptr: tile.clone(),
                    index: CExpr::add(CExpr::mul(k, CExpr::Int(TILE)), r),
                    value: v,
                });
                let then_cmds = kb.pop();
                kb.emit(Cmd::If { cond: ok, then_cmds, else_cmds: vec![] });
            }
            let _ = elem;
        }
        kb.emit(Cmd::Barrier);
        let kmax = CExpr::call("min", vec![CExpr::Int(TK), CExpr::sub(k_len.clone(), k0.clone())]);
        let full = CExpr::bin(COp::Le, CExpr::add(k0.clone(), CExpr::Int(TK)), k_len.clone());
        let k = kb.fresh_name("k");
        kb.push();
        // Work-item (tx, ty) owns rows ty*RT.. (contiguous in local memory: f32 ones are
        // read as float4, broadcast within a warp) and columns tx, tx+16, .. (neighbouring
        // work-items read neighbouring words: no bank conflicts, coalesced stores).
        let operand = |kb: &mut crate::kernel::Kb<'_>,
                       tile: &std::rc::Rc<str>,
                       own: &CExpr,
                       elem: Elem,
                       hint: &str,
                       contiguous: bool|
         -> Vec<CExpr> {
            let vector = contiguous && elem == Elem::F32 && RT % 4 == 0;
            let row = CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(TILE));
            let (base, step) = if contiguous {
                (CExpr::add(row, CExpr::mul(own.clone(), CExpr::Int(RT))), 1)
            } else {
                (CExpr::add(row, own.clone()), 16)
            };
            let mut vals = Vec::new();
            if vector {
                for v in 0..RT / 4 {
                    let name = kb.fresh_name(hint);
                    let at = CExpr::add(base.clone(), CExpr::Int(4 * v));
                    kb.emit(Cmd::Raw(format!("float4 {name} = vload4(0, {tile} + {at});")));
                    for lane in 0..4 {
                        vals.push(CExpr::Var(std::rc::Rc::from(format!("{name}.s{lane}"))));
                    }
                }
            } else {
                for r in 0..RT {
                    vals.push(kb.tmp(
                        hint,
                        elem,
                        CExpr::load(tile, CExpr::add(base.clone(), CExpr::Int(step * r))),
                    ));
                }
            }
            vals
        };
        let avals = operand(&mut kb, &la, &ty, elem_a, "a", true);
        let bvals = operand(&mut kb, &lb, &tx, elem_b, "b", false);
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
            then_cmds: vec![Cmd::Raw("#pragma unroll".to_owned()), full_loop],
            else_cmds: vec![partial_loop],
        });
        kb.emit(Cmd::Barrier);
        let tiles_body = kb.pop();
        let ktiles = CExpr::bin(COp::Div, CExpr::add(k_len, CExpr::Int(TK - 1)), CExpr::Int(TK));
        kb.emit(Cmd::For { var: kk, bound: ktiles, body: tiles_body, comment: None });
        for r in 0..RT {
            for c in 0..RT {
                let row = CExpr::add(
                    row0.clone(),
                    CExpr::add(CExpr::mul(ty.clone(), CExpr::Int(RT)), CExpr::Int(r)),
                );
                let col = CExpr::add(col0.clone(), CExpr::add(tx.clone(), CExpr::Int(16 * c)));
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
            kb.note(&o, "@grid: a matrix-multiplication nest, 128x128 blocks per work-group, 8x8 per work-item in registers, operands staged in local memory");
        }
        let round = |e: Expr| Expr::div(Expr::add(e, Expr::I64(TILE - 1)), Expr::I64(TILE));
        let global = vec![
            Expr::mul(round(out_mem.shape[1].clone()), Expr::I64(256)),
            round(out_mem.shape[0].clone()),
        ];
        let doc = format!(
            "materialises `{name}`, a matrix-multiplication nest: {TILE}x{TILE} tiles, {RT}x{RT} per work-item, shared dimension staged through local memory"
        );
        self.launch(kb, "matmul", doc, global, Some(vec![Expr::I64(256), Expr::I64(1)]));
        Ok(true)
    }

    fn origin_of_pull(&self, nest: &Nest) -> Option<weft_core::Origin> {
        let f = &self.program.functions[nest.func];
        let last = f.blocks[nest.outer.body].stmts.last()?;
        self.origin(nest.func, last.exp)
    }
}

fn harr_elem(a: &HArr) -> Option<Elem> {
    match a {
        HArr::Mem(Mem { elem, .. }) => Some(*elem),
        HArr::Pull(p) => p.elem_ty.as_scalar().map(elem_of),
        HArr::Zip(_) => None,
    }
}
