//! Parallel strategies for reductions, scans and scatters at the host level.
//!
//! - `reduce`: two stages. Stage one runs `G` work-groups of `WG` work-items; each
//!   work-item folds its share of the input privately, then the group combines the
//!   work-items' values in a tree in local memory and writes one partial result.
//!   Stage two runs the same code on the `G` partials in one group. Commutative
//!   operators (`+`, `*`, `min`, `max`, bitwise) read the input interleaved (coalesced);
//!   others give each work-item a contiguous share and combine in order.
//! - `scan`: three stages (reduce per group, exclusive scan of the partials in one
//!   work-item, scan per group in tiles of `WG` with a carry). Indices are `long`, so
//!   sizes past 2^31 elements work.
//! - `scatter`: a copy of the destination (none when weft-core's `update_reuse` says
//!   in place), then one work-item per index.
//! - `reduce_by_index`: a copy of the destination (likewise), then either one work-item
//!   per value
//!   doing an atomic update of its bin (`+` on 32- and 64-bit integers and on floats,
//!   `min`/`max` on 32-bit integers: [`AtomicOp`]), or, for any other operator, one
//!   work-item per bin folding every value whose index is that bin (quadratic work:
//!   bins times values, but no atomics needed).
//! - `xs with [i] = v`: a copy of the array (likewise), then one work-item that checks
//!   the indices and writes the element or row.

use rustc_hash::FxHashMap;
use std::rc::Rc;
use weft_core::{FnId, Lambda, Origin, Type};
use weft_plan::{BinOp as HOp, Elem, Expr, Step};
use weft_values::RuntimeCheck;

use weft_core::CommutativeOp;

/// The most bins a work-group keeps as a sub-histogram in local memory (16 KiB of
/// 32-bit bins, a third of the 48 KiB that OpenCL devices commonly offer a group).
pub(crate) const LOCAL_HISTOGRAM_BINS: i64 = 4096;

use crate::arr::{IExpr, Mem};
use crate::host::Lowerer;
use crate::imp::{AtomicOp, CExpr, COp, Cmd, ParLevel};
use crate::kernel::{KEnv, Kb, elem_and_rank};
use crate::val::{HArr, HEnv, HScalar, HVal, KArr, KVal, Res, rebuild, scalar_leaves};

/// Whether a reduction with this operator may combine elements in any order
/// (weft-core decides, for every pass and back end).
pub(crate) fn commutative(program: &weft_core::Program, f: FnId, lambda: &Lambda) -> bool {
    weft_core::is_commutative(&program.functions[f], lambda)
}

/// The atomic update that does what a `reduce_by_index` operator does to bins of
/// `elem`, if OpenCL has one: the operator is a built-in commutative one applied to its
/// two parameters ([`commutative`]), and its element type has the atomic.
pub(crate) fn atomic_op(
    program: &weft_core::Program,
    f: FnId,
    lambda: &Lambda,
    elem: Elem,
) -> Option<AtomicOp> {
    let op = match weft_core::scalar_operator(&program.functions[f], lambda)? {
        CommutativeOp::Add => AtomicOp::Add,
        CommutativeOp::Min => AtomicOp::Min,
        CommutativeOp::Max => AtomicOp::Max,
        CommutativeOp::Mul
        | CommutativeOp::BitAnd
        | CommutativeOp::BitOr
        | CommutativeOp::BitXor => {
            return None;
        }
    };
    op.supports(elem).then_some(op)
}

/// The sizes of an array type's dimensions that are constants, outermost first.
fn constant_dims(ty: &Type) -> Vec<Option<i64>> {
    let mut dims = Vec::new();
    let mut t = ty;
    while let Type::Array { size, elem } = t {
        dims.push(size.as_constant());
        t = elem;
    }
    dims
}

/// `arr` with the dimensions its type knows as constants written as constants (the
/// shapes of values are checked against their types), so that a work-item's copy of a
/// row has a size known to the compiler (private memory).
fn static_shape(arr: KArr, dims: &[Option<i64>]) -> KArr {
    match arr {
        KArr::Mem(mut mem) => {
            for (dim, known) in mem.shape.iter_mut().zip(dims) {
                if let Some(n) = known {
                    *dim = CExpr::Int(*n);
                }
            }
            KArr::Mem(mem)
        }
        KArr::Zip(parts) => KArr::Zip(parts.into_iter().map(|p| static_shape(p, dims)).collect()),
        pull @ KArr::Pull { .. } => pull,
    }
}

/// `index` as a `long`.
fn as_index(kb: &mut Kb<'_>, index: KVal, what: &str) -> Res<CExpr> {
    let KVal::Scalar(j, elem) = index else {
        return Err(crate::LowerError::internal(what));
    };
    let j = if elem == Elem::I64 { j } else { CExpr::cast(Elem::I64, j) };
    Ok(kb.tmp("j", Elem::I64, j))
}

/// `0 <= j && j < n`.
fn in_range(j: CExpr, n: CExpr) -> CExpr {
    CExpr::bin(COp::And, CExpr::bin(COp::Le, CExpr::Int(0), j.clone()), CExpr::bin(COp::Lt, j, n))
}

/// Applies the operator lambda to two values inside a kernel.
fn apply(
    kb: &mut Kb<'_>,
    f: FnId,
    lambda: &Lambda,
    host: &Rc<HEnv>,
    a: KVal,
    b: KVal,
) -> Res<KVal> {
    let env = KEnv { vars: FxHashMap::default(), host: Some(host.clone()) };
    kb.apply(f, &env, lambda, a, b)
}

fn hval_leaves(v: &HVal, out: &mut Vec<Elem>) -> Res<()> {
    match v {
        HVal::Scalar(HScalar::Host(_, e) | HScalar::Device(_, e)) => out.push(*e),
        HVal::Tuple(parts) => {
            for p in parts {
                hval_leaves(p, out)?;
            }
        }
        HVal::Arr(_) => {
            return Err(crate::LowerError::unsupported(
                "a reduction or scan whose elements are arrays",
                None,
            ));
        }
    }
    Ok(())
}

fn rebuild_h(like: &HVal, leaves: &mut impl Iterator<Item = HVal>) -> HVal {
    match like {
        HVal::Scalar(_) => leaves.next().unwrap_or(HVal::Tuple(Vec::new())),
        HVal::Tuple(parts) => HVal::Tuple(parts.iter().map(|p| rebuild_h(p, leaves)).collect()),
        HVal::Arr(_) => like.clone(),
    }
}

impl<'p> Lowerer<'p> {
    fn let_var(&mut self, name: &str, value: Expr) -> Expr {
        let v = self.new_var(name);
        self.step(Step::Let { var: v, value });
        Expr::Var(v)
    }

    fn group_count(&mut self, n: &Expr) -> Expr {
        let wg = i64::from(self.options.work_group);
        let g = Expr::bin(HOp::Div, Expr::add(n.clone(), Expr::I64(wg - 1)), Expr::I64(wg));
        let g = Expr::bin(
            HOp::Max,
            Expr::I64(1),
            Expr::bin(HOp::Min, g, Expr::I64(i64::from(self.options.reduce_groups))),
        );
        self.let_var("groups", g)
    }

    pub(crate) fn reduce(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        ne: HVal,
        arr: HArr,
        origin: Option<&Origin>,
        env: &HEnv,
    ) -> Res<HVal> {
        let n = arr.shape()[0].clone();
        let groups = self.group_count(&n);
        let comm = commutative(self.program, f, lambda);
        let host = Rc::new(env.clone());
        let partial = self.reduce_stage(
            f,
            lambda,
            &host,
            &ne,
            &arr,
            n,
            groups.clone(),
            comm,
            origin,
            "reduce_partials",
        )?;
        let total = self.reduce_stage(
            f,
            lambda,
            &host,
            &ne,
            &partial,
            groups,
            Expr::I64(1),
            comm,
            origin,
            "reduce_total",
        )?;
        let mut elems = Vec::new();
        hval_leaves(&ne, &mut elems)?;
        let bufs: Vec<HVal> = match &total {
            HArr::Mem(m) => vec![HVal::Scalar(HScalar::Device(m.buf, m.elem))],
            HArr::Zip(parts) => parts
                .iter()
                .filter_map(|p| {
                    if let HArr::Mem(m) = p {
                        Some(HVal::Scalar(HScalar::Device(m.buf, m.elem)))
                    } else {
                        None
                    }
                })
                .collect(),
            HArr::Pull(_) => Vec::new(),
        };
        Ok(rebuild_h(&ne, &mut bufs.into_iter()))
    }

    /// One stage: `groups` partial results of the reduction of `arr` (length `n`).
    #[expect(clippy::too_many_arguments, reason = "one stage's whole description")]
    fn reduce_stage(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        host: &Rc<HEnv>,
        ne: &HVal,
        arr: &HArr,
        n: Expr,
        groups: Expr,
        comm: bool,
        origin: Option<&Origin>,
        kind: &str,
    ) -> Res<HArr> {
        let wg = i64::from(self.options.work_group);
        let mut elems = Vec::new();
        hval_leaves(ne, &mut elems)?;
        let ty = Type::Tuple(elems.iter().map(|e| Type::Scalar(*e)).collect());
        let out = self.alloc(&ty, vec![groups.clone()], "partial")?;
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = origin {
            let role = if groups == Expr::I64(1) {
                "@grid: multi-stage reduction (second stage)"
            } else {
                "@grid: multi-stage reduction (work-group trees in local memory, then one group)"
            };
            kb.note(o, role);
        }
        let src = kb.import_arr(arr)?;
        let kn = kb.import_index(&n);
        let ne_k = kb.import_val(ne)?;
        let dst = kb.import_arr(&out)?;
        let locals: Vec<Rc<str>> = elems
            .iter()
            .map(|e| {
                kb.local_param(
                    "red",
                    *e,
                    Expr::I64(wg),
                    "the work-group's tree of partial results of a reduction",
                )
            })
            .collect();
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = kb.tmp("g", Elem::I64, CExpr::work_item("get_group_id", 0));
        let acc = kb.declare_like(&ne_k)?;
        kb.assign(&acc, &ne_k)?;
        let i = kb.fresh_name("i");
        kb.push();
        let x = kb.index(&src, &[CExpr::Var(i.clone())])?;
        let r = apply(&mut kb, f, lambda, host, acc.clone(), x)?;
        kb.assign(&acc, &r)?;
        let body = kb.pop();
        let comment = kb.comment(origin);
        if comm {
            // Four neighbouring elements per iteration: independent loads, so a work-item
            // has several in flight (and the compiler may merge them into one vector
            // load); the remaining `n % 4` elements go to the first work-items.
            let _ = body;
            let q = kb.fresh_name("q");
            let quads = kb.tmp("quads", Elem::I64, CExpr::bin(COp::Div, kn.clone(), CExpr::Int(4)));
            kb.push();
            let base = kb.tmp("base", Elem::I64, CExpr::mul(CExpr::Var(q.clone()), CExpr::Int(4)));
            let mut xs = Vec::new();
            for k in 0..4 {
                let x = kb.index(&src, &[CExpr::add(base.clone(), CExpr::Int(k))])?;
                let x = kb.declare_like(&x).and_then(|v| kb.assign(&v, &x).map(|()| v))?;
                xs.push(x);
            }
            for x in xs {
                let r = apply(&mut kb, f, lambda, host, acc.clone(), x)?;
                kb.assign(&acc, &r)?;
            }
            let quad_body = kb.pop();
            kb.emit(Cmd::ParFor {
                level: ParLevel::Grid(0),
                var: q,
                bound: quads.clone(),
                body: quad_body,
                comment: comment.clone(),
            });
            let tail_i = kb.tmp(
                "tail",
                Elem::I64,
                CExpr::add(CExpr::mul(quads, CExpr::Int(4)), CExpr::work_item("get_global_id", 0)),
            );
            kb.push();
            let x = kb.index(&src, std::slice::from_ref(&tail_i))?;
            let r = apply(&mut kb, f, lambda, host, acc.clone(), x)?;
            kb.assign(&acc, &r)?;
            let then_cmds = kb.pop();
            kb.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, tail_i, kn.clone()),
                then_cmds,
                else_cmds: vec![],
            });
            let _ = i;
        } else {
            let gsize = CExpr::work_item("get_global_size", 0);
            let per = kb.tmp(
                "per",
                Elem::I64,
                CExpr::bin(
                    COp::Div,
                    CExpr::add(kn.clone(), CExpr::sub(gsize.clone(), CExpr::Int(1))),
                    gsize,
                ),
            );
            let start = kb.tmp(
                "start",
                Elem::I64,
                CExpr::mul(CExpr::work_item("get_global_id", 0), per.clone()),
            );
            let end = kb.tmp(
                "end",
                Elem::I64,
                CExpr::call("min", vec![CExpr::add(start.clone(), per), kn]),
            );
            let k = kb.fresh_name("k");
            let body = vec![Cmd::Decl {
                name: i,
                elem: Elem::I64,
                init: Some(CExpr::add(start.clone(), CExpr::Var(k.clone()))),
            }]
            .into_iter()
            .chain(body)
            .collect();
            kb.emit(Cmd::For { var: k, bound: CExpr::sub(end, start), body, comment });
        }
        let mut acc_leaves = Vec::new();
        scalar_leaves(&acc, &mut acc_leaves);
        for (l, (v, _)) in locals.iter().zip(&acc_leaves) {
            kb.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v.clone() });
        }
        kb.emit(Cmd::Barrier);
        let load = |kb: &mut Kb<'_>, at: CExpr| -> KVal {
            let leaves: Vec<(CExpr, Elem)> =
                locals.iter().zip(&elems).map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            let _ = kb;
            rebuild(&ne_k, &mut leaves.into_iter())
        };
        let mut s = if comm { wg / 2 } else { 1 };
        while if comm { s > 0 } else { s < wg } {
            let (cond, partner) = if comm {
                (
                    CExpr::bin(COp::Lt, t.clone(), CExpr::Int(s)),
                    CExpr::add(t.clone(), CExpr::Int(s)),
                )
            } else {
                (
                    CExpr::bin(
                        COp::Eq,
                        CExpr::bin(COp::Rem, t.clone(), CExpr::Int(2 * s)),
                        CExpr::Int(0),
                    ),
                    CExpr::add(t.clone(), CExpr::Int(s)),
                )
            };
            kb.push();
            let a = load(&mut kb, t.clone());
            let b = load(&mut kb, partner);
            let r = apply(&mut kb, f, lambda, host, a, b)?;
            let mut rl = Vec::new();
            scalar_leaves(&r, &mut rl);
            for (l, (v, _)) in locals.iter().zip(rl) {
                kb.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v });
            }
            let then_cmds = kb.pop();
            kb.emit(Cmd::If { cond, then_cmds, else_cmds: Vec::new() });
            kb.emit(Cmd::Barrier);
            s = if comm { s / 2 } else { s * 2 };
        }
        kb.push();
        let total = load(&mut kb, CExpr::Int(0));
        kb.write(&dst, &[g], &total)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, t, CExpr::Int(0)),
            then_cmds,
            else_cmds: Vec::new(),
        });
        let doc = format!(
            "{}: {} work-groups of {wg} fold {} and combine in local memory",
            kind.replace('_', " "),
            if groups == Expr::I64(1) {
                "one".to_owned()
            } else {
                format!("up to {}", self.options.reduce_groups)
            },
            if comm {
                "interleaved elements (commutative operator)"
            } else {
                "contiguous shares in order"
            }
        );
        let global = vec![Expr::mul(groups, Expr::I64(wg))];
        self.launch(kb, kind, doc, global, Some(vec![Expr::I64(wg)]));
        Ok(out)
    }

    #[expect(clippy::too_many_arguments, reason = "the combinator's parts")]
    pub(crate) fn scan(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        ne: HVal,
        arr: HArr,
        ty: &Type,
        origin: Option<&Origin>,
        env: &HEnv,
    ) -> Res<HArr> {
        let wg = i64::from(self.options.work_group);
        let n = arr.shape()[0].clone();
        let host = Rc::new(env.clone());
        if let HVal::Scalar(HScalar::Host(_, elem) | HScalar::Device(_, elem)) = &ne
            && matches!(elem, Elem::F32 | Elem::I32 | Elem::U32)
            && self.options.forward_progress()
        {
            return self.scan_lookback(f, lambda, &host, &ne, *elem, &arr, ty, origin);
        }
        let groups = self.group_count(&n);
        // Stage 1: each group's total, in order.
        let partial = self.reduce_stage(
            f,
            lambda,
            &host,
            &ne,
            &arr,
            n.clone(),
            groups.clone(),
            false,
            origin,
            "scan_partials",
        )?;
        // Stage 2: exclusive scan of the partials, in one work-item.
        {
            let mut kb = self.kb();
            let p = kb.import_arr(&partial)?;
            let kg = kb.import_index(&groups);
            let ne_k = kb.import_val(&ne)?;
            let carry = kb.declare_like(&ne_k)?;
            kb.assign(&carry, &ne_k)?;
            let i = kb.fresh_name("g");
            kb.push();
            let x = kb.index(&p, &[CExpr::Var(i.clone())])?;
            let x = kb.declare_like(&x).and_then(|v| kb.assign(&v, &x).map(|()| v))?;
            kb.write(&p, &[CExpr::Var(i.clone())], &carry)?;
            let r = apply(&mut kb, f, lambda, &host, carry.clone(), x)?;
            kb.assign(&carry, &r)?;
            let body = kb.pop();
            kb.emit(Cmd::For { var: i, bound: kg, body, comment: None });
            self.launch(
                kb,
                "scan_carries",
                "scan carries: exclusive scan of the groups' totals (one work-item)".to_owned(),
                vec![Expr::I64(1)],
                None,
            );
        }
        let (elem_ty, _) = elem_and_rank(ty);
        let out = self.alloc(&elem_ty, vec![n.clone()], "scanned")?;
        if self.options.cpu_device() {
            self.scan_shares(f, lambda, &host, &ne, &arr, &partial, &out, groups, origin)?;
            return Ok(out);
        }
        // Stage 3: each group scans its range in tiles, starting from its carry.
        let per = self.let_var(
            "per",
            Expr::bin(
                HOp::Div,
                Expr::add(
                    n.clone(),
                    Expr::sub(Expr::mul(groups.clone(), Expr::I64(wg)), Expr::I64(1)),
                ),
                Expr::mul(groups.clone(), Expr::I64(wg)),
            ),
        );
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = origin {
            kb.note(o, "@grid: three-stage scan (group totals, their scan, tiles in local memory)");
        }
        let src = kb.import_arr(&arr)?;
        let p = kb.import_arr(&partial)?;
        let dst = kb.import_arr(&out)?;
        let kn = kb.import_index(&n);
        let kper = kb.import_index(&per);
        let ne_k = kb.import_val(&ne)?;
        let mut elems = Vec::new();
        hval_leaves(&ne, &mut elems)?;
        let locals: Vec<Rc<str>> = elems
            .iter()
            .map(|e| kb.local_param("tile", *e, Expr::I64(wg), "the work-group's tile of a scan"))
            .collect();
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = kb.tmp("g", Elem::I64, CExpr::work_item("get_group_id", 0));
        let gstart = kb.tmp(
            "gstart",
            Elem::I64,
            CExpr::mul(CExpr::mul(g.clone(), CExpr::Int(wg)), kper.clone()),
        );
        let gend = kb.tmp(
            "gend",
            Elem::I64,
            CExpr::call(
                "min",
                vec![CExpr::add(gstart.clone(), CExpr::mul(CExpr::Int(wg), kper)), kn],
            ),
        );
        let c0 = kb.index(&p, &[g])?;
        let carry = kb.declare_like(&c0)?;
        kb.assign(&carry, &c0)?;
        let k = kb.fresh_name("tile");
        kb.push();
        let i = kb.tmp(
            "i",
            Elem::I64,
            CExpr::add(
                CExpr::add(gstart.clone(), CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(wg))),
                t.clone(),
            ),
        );
        let in_range = CExpr::bin(COp::Lt, i.clone(), gend.clone());
        let (src2, i2, ne2) = (src.clone(), i.clone(), ne_k.clone());
        let x = kb.branch(
            in_range.clone(),
            &mut |kb: &mut Kb<'_>| kb.index(&src2, std::slice::from_ref(&i2)),
            &mut |_kb: &mut Kb<'_>| Ok(ne2.clone()),
        )?;
        let mut xl = Vec::new();
        scalar_leaves(&x, &mut xl);
        for (l, (v, _)) in locals.iter().zip(&xl) {
            kb.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v.clone() });
        }
        kb.emit(Cmd::Barrier);
        let load = |at: CExpr| -> KVal {
            let leaves: Vec<(CExpr, Elem)> =
                locals.iter().zip(&elems).map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            rebuild(&ne_k, &mut leaves.into_iter())
        };
        let mut s = 1;
        while s < wg {
            let earlier = load(CExpr::select(
                CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                CExpr::sub(t.clone(), CExpr::Int(s)),
                CExpr::Int(0),
            ));
            let v = kb.declare_like(&earlier)?;
            kb.assign(&v, &earlier)?;
            kb.emit(Cmd::Barrier);
            kb.push();
            let r = apply(&mut kb, f, lambda, &host, v, load(t.clone()))?;
            let mut rl = Vec::new();
            scalar_leaves(&r, &mut rl);
            for (l, (val, _)) in locals.iter().zip(rl) {
                kb.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: val });
            }
            let then_cmds = kb.pop();
            kb.emit(Cmd::If {
                cond: CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                then_cmds,
                else_cmds: Vec::new(),
            });
            kb.emit(Cmd::Barrier);
            s *= 2;
        }
        kb.push();
        let y = apply(&mut kb, f, lambda, &host, carry.clone(), load(t.clone()))?;
        kb.write(&dst, std::slice::from_ref(&i), &y)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: in_range, then_cmds, else_cmds: Vec::new() });
        let last = load(CExpr::Int(wg - 1));
        let last = kb.declare_like(&last).and_then(|v| kb.assign(&v, &last).map(|()| v))?;
        let nc = apply(&mut kb, f, lambda, &host, carry.clone(), last)?;
        kb.assign(&carry, &nc)?;
        kb.emit(Cmd::Barrier);
        let body = kb.pop();
        let tiles = CExpr::bin(
            COp::Div,
            CExpr::add(CExpr::sub(gend, gstart), CExpr::Int(wg - 1)),
            CExpr::Int(wg),
        );
        let comment = kb.comment(origin);
        kb.emit(Cmd::For { var: k, bound: tiles, body, comment });
        let doc = format!(
            "scan: each work-group scans its range in tiles of {wg} in local memory, from its carry"
        );
        self.launch(
            kb,
            "scan",
            doc,
            vec![Expr::mul(groups, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(out)
    }

    /// A single-pass scan with decoupled look-back (Merrill and Garland 2016), for a
    /// 32-bit element: each work-group takes the next tile of `wg * LOOKBACK_ITEMS`
    /// elements (a counter, so every tile it waits for belongs to a group that has
    /// started), scans it in local memory, publishes its total, then walks back over
    /// the tiles before it, adding totals until one has published its inclusive
    /// prefix, and publishes its own. A tile's status is one 64-bit word, the flag
    /// (1: total, 2: inclusive prefix) above the value's 32 bits, so one atomic
    /// exchange publishes both and one atomic read sees both: no fences. The input is
    /// read once and the output written once (the three-stage scan reads it twice).
    #[expect(clippy::too_many_arguments, reason = "the combinator's parts")]
    fn scan_lookback(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        host: &Rc<HEnv>,
        ne: &HVal,
        elem: Elem,
        arr: &HArr,
        ty: &Type,
        origin: Option<&Origin>,
    ) -> Res<HArr> {
        const LOOKBACK_ITEMS: i64 = 32;
        const LOOKBACK_WINDOW: i64 = 32;
        let wg = i64::from(self.options.work_group);
        let tile = wg * LOOKBACK_ITEMS;
        let n = arr.shape()[0].clone();
        let tiles = self.let_var(
            "tiles",
            Expr::bin(HOp::Div, Expr::add(n.clone(), Expr::I64(tile - 1)), Expr::I64(tile)),
        );
        // Every tile's status, then the counter that hands out tiles: zeroed first.
        let words = Expr::add(tiles.clone(), Expr::I64(1));
        let status = self.alloc(&Type::Scalar(Elem::U64), vec![words.clone()], "status")?;
        {
            let mut kb = self.kb();
            let KArr::Mem(st) = kb.import_arr(&status)? else {
                return Err(crate::LowerError::internal("a scan's status words"));
            };
            let kw = kb.import_index(&words);
            let i = kb.fresh_name("i");
            let body = vec![Cmd::Store {
                ptr: st.buf.clone(),
                index: st.address(&[CExpr::Var(i.clone())]),
                value: CExpr::cast(Elem::U64, CExpr::Int(0)),
            }];
            kb.emit(Cmd::ParFor {
                level: ParLevel::Grid(0),
                var: i,
                bound: kw,
                body,
                comment: None,
            });
            self.launch(
                kb,
                "scan_status",
                "scan status: clears the tiles' status words and the tile counter".to_owned(),
                vec![words],
                Some(vec![Expr::I64(wg)]),
            );
        }
        let (elem_ty, _) = elem_and_rank(ty);
        let out = self.alloc(&elem_ty, vec![n.clone()], "scanned")?;
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = origin {
            kb.note(o, "@grid: single-pass scan with decoupled look-back");
        }
        let src = kb.import_arr(arr)?;
        let dst = kb.import_arr(&out)?;
        let KArr::Mem(st) = kb.import_arr(&status)? else {
            return Err(crate::LowerError::internal("a scan's status words"));
        };
        let kn = kb.import_index(&n);
        let ktiles = kb.import_index(&tiles);
        let KVal::Scalar(ne_k, _) = kb.import_val(ne)? else {
            return Err(crate::LowerError::internal("a scan's 32-bit neutral element"));
        };
        let scalar = |e: CExpr| KVal::Scalar(e, elem);
        // Local memory: the tile (padded every 32 elements against bank conflicts),
        // the work-items' totals, and the tile number and carry the first item finds.
        let padded = |p: CExpr| CExpr::add(p.clone(), CExpr::bin(COp::Div, p, CExpr::Int(32)));
        let buf = kb.local_param("tile", elem, Expr::I64(tile + tile / 32), "a scan's tile");
        let sums = kb.local_param("sums", elem, Expr::I64(wg), "the work-items' totals of a scan");
        let carry_l = kb.local_param("carry", elem, Expr::I64(1), "the tile's carry");
        let id_l = kb.local_param("tile_id", Elem::I64, Expr::I64(1), "the tile this group scans");
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let is_first = CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0));
        // The tile: the next one handed out.
        kb.push();
        let ticket = kb.decl("ticket", Elem::U64, None);
        let CExpr::Var(ticket_name) = &ticket else {
            return Err(crate::LowerError::internal("a declared variable"));
        };
        kb.emit(Cmd::Atomic {
            op: AtomicOp::Add,
            elem: Elem::U64,
            ptr: st.buf.clone(),
            index: st.address(std::slice::from_ref(&ktiles)),
            value: CExpr::cast(Elem::U64, CExpr::Int(1)),
            fetch: Some(ticket_name.clone()),
        });
        kb.emit(Cmd::Store {
            ptr: id_l.clone(),
            index: CExpr::Int(0),
            value: CExpr::cast(Elem::I64, ticket),
        });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        kb.emit(Cmd::Barrier);
        let tile_id = kb.tmp("tile", Elem::I64, CExpr::load(&id_l, CExpr::Int(0)));
        let base = kb.tmp("base", Elem::I64, CExpr::mul(tile_id.clone(), CExpr::Int(tile)));
        // Load the tile, reads coalesced across work-items.
        let comment = kb.comment(origin);
        let k = kb.fresh_name("k");
        kb.push();
        let at = CExpr::add(CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(wg)), t.clone());
        let i = kb.tmp("i", Elem::I64, CExpr::add(base.clone(), at.clone()));
        let (src2, i2, ne2) = (src.clone(), i.clone(), scalar(ne_k.clone()));
        let x = kb.branch(
            CExpr::bin(COp::Lt, i.clone(), kn.clone()),
            &mut |kb: &mut Kb<'_>| kb.index(&src2, std::slice::from_ref(&i2)),
            &mut |_kb: &mut Kb<'_>| Ok(ne2.clone()),
        )?;
        let KVal::Scalar(x, _) = x else {
            return Err(crate::LowerError::internal("a scan's 32-bit element"));
        };
        kb.emit(Cmd::Store { ptr: buf.clone(), index: padded(at), value: x });
        let body = kb.pop();
        kb.emit(Cmd::For {
            var: k,
            bound: CExpr::Int(LOOKBACK_ITEMS),
            body,
            comment: comment.clone(),
        });
        kb.emit(Cmd::Barrier);
        // Each work-item scans its `LOOKBACK_ITEMS` neighbouring elements in place.
        let own =
            |k: CExpr| padded(CExpr::add(CExpr::mul(t.clone(), CExpr::Int(LOOKBACK_ITEMS)), k));
        let acc = kb.declare_like(&scalar(ne_k.clone()))?;
        kb.assign(&acc, &scalar(CExpr::load(&buf, own(CExpr::Int(0)))))?;
        let k = kb.fresh_name("k");
        kb.push();
        let at = own(CExpr::add(CExpr::Var(k.clone()), CExpr::Int(1)));
        let r =
            apply(&mut kb, f, lambda, host, acc.clone(), scalar(CExpr::load(&buf, at.clone())))?;
        kb.assign(&acc, &r)?;
        let KVal::Scalar(acc_e, _) = &acc else {
            return Err(crate::LowerError::internal("a scan's 32-bit accumulator"));
        };
        kb.emit(Cmd::Store { ptr: buf.clone(), index: at, value: acc_e.clone() });
        let body = kb.pop();
        kb.emit(Cmd::For { var: k, bound: CExpr::Int(LOOKBACK_ITEMS - 1), body, comment: None });
        kb.emit(Cmd::Store { ptr: sums.clone(), index: t.clone(), value: acc_e.clone() });
        kb.emit(Cmd::Barrier);
        // The items' totals, scanned in local memory (inclusive).
        let mut s = 1;
        while s < wg {
            let earlier = scalar(CExpr::load(
                &sums,
                CExpr::select(
                    CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                    CExpr::sub(t.clone(), CExpr::Int(s)),
                    CExpr::Int(0),
                ),
            ));
            let v = kb.declare_like(&earlier)?;
            kb.assign(&v, &earlier)?;
            kb.emit(Cmd::Barrier);
            kb.push();
            let r = apply(&mut kb, f, lambda, host, v, scalar(CExpr::load(&sums, t.clone())))?;
            let KVal::Scalar(r, _) = kb.stage(&r)? else {
                return Err(crate::LowerError::internal("a scan's 32-bit total"));
            };
            kb.emit(Cmd::Store { ptr: sums.clone(), index: t.clone(), value: r });
            let then_cmds = kb.pop();
            kb.emit(Cmd::If {
                cond: CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                then_cmds,
                else_cmds: Vec::new(),
            });
            kb.emit(Cmd::Barrier);
            s *= 2;
        }
        // The first work-item publishes the tile's total; then the group looks back
        // for its carry, `LOOKBACK_WINDOW` earlier tiles' status words at a time (read
        // by as many work-items at once, then combined in order by the first).
        let bits = |v: CExpr| match elem {
            Elem::U32 => v,
            _ => CExpr::call("as_uint", vec![v]),
        };
        let from_bits = |b: CExpr| match elem {
            Elem::F32 => CExpr::call("as_float", vec![CExpr::cast(Elem::U32, b)]),
            Elem::I32 => CExpr::call("as_int", vec![CExpr::cast(Elem::U32, b)]),
            _ => CExpr::cast(Elem::U32, b),
        };
        let word = |flag: i64, v: CExpr| {
            CExpr::bin(
                COp::BitOr,
                CExpr::bin(COp::Shl, CExpr::cast(Elem::U64, CExpr::Int(flag)), CExpr::Int(32)),
                CExpr::cast(Elem::U64, bits(v)),
            )
        };
        let publish = |kb: &mut Kb<'_>, flag: i64, v: CExpr| {
            kb.emit(Cmd::Atomic {
                op: AtomicOp::Exchange,
                elem: Elem::U64,
                ptr: st.buf.clone(),
                index: st.address(std::slice::from_ref(&tile_id)),
                value: word(flag, v),
                fetch: None,
            });
        };
        // At most one status word per work-item.
        let window_len = LOOKBACK_WINDOW.min(wg);
        let window = kb.local_param(
            "window",
            Elem::U64,
            Expr::I64(window_len),
            "earlier tiles' status words, read at once",
        );
        // `[0]`: whether the group still looks back; `[1]`: the next tile to read.
        let walk = kb.local_param("walk", Elem::I64, Expr::I64(2), "the look-back's state");
        let first_tile = CExpr::bin(COp::Eq, tile_id.clone(), CExpr::Int(0));
        let total = kb.tmp("total", elem, CExpr::load(&sums, CExpr::Int(wg - 1)));
        kb.push();
        kb.push();
        publish(&mut kb, 2, total.clone());
        let then_cmds = kb.pop();
        kb.push();
        publish(&mut kb, 1, total.clone());
        let else_cmds = kb.pop();
        kb.emit(Cmd::If { cond: first_tile.clone(), then_cmds, else_cmds });
        kb.emit(Cmd::Store {
            ptr: walk.clone(),
            index: CExpr::Int(0),
            value: CExpr::select(first_tile.clone(), CExpr::Int(0), CExpr::Int(1)),
        });
        kb.emit(Cmd::Store {
            ptr: walk.clone(),
            index: CExpr::Int(1),
            value: CExpr::sub(tile_id.clone(), CExpr::Int(1)),
        });
        kb.emit(Cmd::Store { ptr: carry_l.clone(), index: CExpr::Int(0), value: ne_k.clone() });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        kb.emit(Cmd::Barrier);
        // The loop: every work-item tests the same flag in local memory, so the
        // barriers inside are reached by all.
        kb.push();
        let looking = kb.tmp("looking", Elem::I64, CExpr::load(&walk, CExpr::Int(0)));
        let cond_cmds = kb.pop();
        kb.push();
        let j = kb.tmp("j", Elem::I64, CExpr::load(&walk, CExpr::Int(1)));
        kb.push();
        let seen = kb.decl("seen", Elem::U64, Some(CExpr::cast(Elem::U64, CExpr::Int(0))));
        let CExpr::Var(seen_name) = &seen else {
            return Err(crate::LowerError::internal("a declared variable"));
        };
        kb.push();
        kb.emit(Cmd::Atomic {
            op: AtomicOp::Add,
            elem: Elem::U64,
            ptr: st.buf.clone(),
            index: st.address(&[CExpr::sub(j.clone(), t.clone())]),
            value: CExpr::cast(Elem::U64, CExpr::Int(0)),
            fetch: Some(seen_name.clone()),
        });
        let read = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Ge, CExpr::sub(j.clone(), t.clone()), CExpr::Int(0)),
            then_cmds: read,
            else_cmds: Vec::new(),
        });
        kb.emit(Cmd::Store { ptr: window.clone(), index: t.clone(), value: seen });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Lt, t.clone(), CExpr::Int(window_len)),
            then_cmds,
            else_cmds: Vec::new(),
        });
        kb.emit(Cmd::Barrier);
        // The first work-item adds the window's values in order, up to a tile not
        // ready yet (read again next time) or one with its inclusive prefix (done).
        kb.push();
        let acc = kb.declare_like(&scalar(ne_k.clone()))?;
        kb.assign(&acc, &scalar(CExpr::load(&carry_l, CExpr::Int(0))))?;
        let KVal::Scalar(acc_e, _) = &acc else {
            return Err(crate::LowerError::internal("a scan's 32-bit carry"));
        };
        let k = kb.decl("k", Elem::I64, Some(CExpr::Int(0)));
        let go = kb.decl("go", Elem::I64, Some(CExpr::Int(1)));
        let (CExpr::Var(k_name), CExpr::Var(go_name)) = (&k, &go) else {
            return Err(crate::LowerError::internal("a declared variable"));
        };
        kb.push();
        let w = kb.tmp("w", Elem::U64, CExpr::load(&window, k.clone()));
        let flag = kb.tmp("flag", Elem::U64, CExpr::bin(COp::Shr, w.clone(), CExpr::Int(32)));
        kb.push();
        let r = apply(&mut kb, f, lambda, host, scalar(from_bits(w)), acc.clone())?;
        kb.assign(&acc, &r)?;
        kb.emit(Cmd::Assign { name: k_name.clone(), value: CExpr::add(k.clone(), CExpr::Int(1)) });
        kb.push();
        kb.emit(Cmd::Assign { name: go_name.clone(), value: CExpr::Int(0) });
        kb.emit(Cmd::Store { ptr: walk.clone(), index: CExpr::Int(0), value: CExpr::Int(0) });
        let done = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, flag.clone(), CExpr::cast(Elem::U64, CExpr::Int(2))),
            then_cmds: done,
            else_cmds: Vec::new(),
        });
        let ready = kb.pop();
        let not_ready = vec![Cmd::Assign { name: go_name.clone(), value: CExpr::Int(0) }];
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Ne, flag, CExpr::cast(Elem::U64, CExpr::Int(0))),
            then_cmds: ready,
            else_cmds: not_ready,
        });
        let body = kb.pop();
        kb.emit(Cmd::While {
            cond_cmds: Vec::new(),
            cond: CExpr::bin(
                COp::And,
                CExpr::bin(COp::Ne, go, CExpr::Int(0)),
                CExpr::bin(COp::Lt, k.clone(), CExpr::Int(window_len)),
            ),
            body,
        });
        kb.emit(Cmd::Store { ptr: carry_l.clone(), index: CExpr::Int(0), value: acc_e.clone() });
        kb.emit(Cmd::Store { ptr: walk.clone(), index: CExpr::Int(1), value: CExpr::sub(j, k) });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        kb.emit(Cmd::Barrier);
        let body = kb.pop();
        kb.emit(Cmd::While { cond_cmds, cond: CExpr::bin(COp::Ne, looking, CExpr::Int(0)), body });
        // The tile's inclusive prefix, for the tiles after it.
        kb.push();
        let excl = scalar(CExpr::load(&carry_l, CExpr::Int(0)));
        let inclusive = apply(&mut kb, f, lambda, host, excl, scalar(total))?;
        let KVal::Scalar(inclusive, _) = kb.stage(&inclusive)? else {
            return Err(crate::LowerError::internal("a scan's 32-bit prefix"));
        };
        publish(&mut kb, 2, inclusive);
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(
                COp::And,
                is_first,
                CExpr::bin(COp::Ne, tile_id.clone(), CExpr::Int(0)),
            ),
            then_cmds,
            else_cmds: Vec::new(),
        });
        // Each item's carry: the tile's, then the totals of the items before it.
        let before = kb.branch(
            CExpr::bin(COp::Gt, t.clone(), CExpr::Int(0)),
            &mut |_kb: &mut Kb<'_>| {
                Ok(scalar(CExpr::load(&sums, CExpr::sub(t.clone(), CExpr::Int(1)))))
            },
            &mut |_kb: &mut Kb<'_>| Ok(scalar(ne_k.clone())),
        )?;
        let carry =
            apply(&mut kb, f, lambda, host, scalar(CExpr::load(&carry_l, CExpr::Int(0))), before)?;
        let carry = kb.stage(&carry)?;
        let k = kb.fresh_name("k");
        kb.push();
        let at = own(CExpr::Var(k.clone()));
        let y =
            apply(&mut kb, f, lambda, host, carry.clone(), scalar(CExpr::load(&buf, at.clone())))?;
        let KVal::Scalar(y, _) = kb.stage(&y)? else {
            return Err(crate::LowerError::internal("a scan's 32-bit element"));
        };
        kb.emit(Cmd::Store { ptr: buf.clone(), index: at, value: y });
        let body = kb.pop();
        kb.emit(Cmd::For { var: k, bound: CExpr::Int(LOOKBACK_ITEMS), body, comment: None });
        kb.emit(Cmd::Barrier);
        // Store the tile, writes coalesced.
        let k = kb.fresh_name("k");
        kb.push();
        let at = CExpr::add(CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(wg)), t.clone());
        let i = kb.tmp("i", Elem::I64, CExpr::add(base, at.clone()));
        kb.push();
        kb.write(&dst, std::slice::from_ref(&i), &scalar(CExpr::load(&buf, padded(at))))?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: CExpr::bin(COp::Lt, i, kn), then_cmds, else_cmds: Vec::new() });
        let body = kb.pop();
        kb.emit(Cmd::For { var: k, bound: CExpr::Int(LOOKBACK_ITEMS), body, comment });
        let doc = format!(
            "scan: single pass, each work-group scans a tile of {tile} and looks back over earlier tiles' published totals for its carry"
        );
        self.launch(
            kb,
            "scan",
            doc,
            vec![Expr::mul(tiles, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(out)
    }

    /// Stage 3 of a scan on a CPU: each work-item folds its contiguous share (the
    /// shares of stage 1), the group's first item scans the items' totals from the
    /// group's carry, and each item then scans its share from its own carry. One
    /// pass of barriers per group instead of one per tile of `wg` elements: on POCL a
    /// scan of 2^22 floats took 28 ms in tiles and takes a few in shares.
    #[expect(clippy::too_many_arguments, reason = "the combinator's parts")]
    fn scan_shares(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        host: &Rc<HEnv>,
        ne: &HVal,
        arr: &HArr,
        partial: &HArr,
        out: &HArr,
        groups: Expr,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = i64::from(self.options.work_group);
        let n = arr.shape()[0].clone();
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = origin {
            kb.note(
                o,
                "@grid: three-stage scan (group totals, their scan, each work-item's share in order)",
            );
        }
        let src = kb.import_arr(arr)?;
        let p = kb.import_arr(partial)?;
        let dst = kb.import_arr(out)?;
        let kn = kb.import_index(&n);
        let ne_k = kb.import_val(ne)?;
        let mut elems = Vec::new();
        hval_leaves(ne, &mut elems)?;
        let locals: Vec<Rc<str>> = elems
            .iter()
            .map(|e| {
                kb.local_param("carries", *e, Expr::I64(wg), "the work-items' carries of a scan")
            })
            .collect();
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = kb.tmp("g", Elem::I64, CExpr::work_item("get_group_id", 0));
        // The shares of stage 1 (`reduce_stage`): `per` elements from `gid * per`.
        let gsize = CExpr::work_item("get_global_size", 0);
        let per = kb.tmp(
            "per",
            Elem::I64,
            CExpr::bin(
                COp::Div,
                CExpr::add(kn.clone(), CExpr::sub(gsize.clone(), CExpr::Int(1))),
                gsize,
            ),
        );
        let start = kb.tmp(
            "start",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_global_id", 0), per.clone()),
        );
        let end =
            kb.tmp("end", Elem::I64, CExpr::call("min", vec![CExpr::add(start.clone(), per), kn]));
        let count = CExpr::call("max", vec![CExpr::sub(end, start.clone()), CExpr::Int(0)]);
        let comment = kb.comment(origin);
        // The item's total.
        let acc = kb.declare_like(&ne_k)?;
        kb.assign(&acc, &ne_k)?;
        let k = kb.fresh_name("k");
        kb.push();
        let at = CExpr::add(start.clone(), CExpr::Var(k.clone()));
        let x = kb.index(&src, std::slice::from_ref(&at))?;
        let r = apply(&mut kb, f, lambda, host, acc.clone(), x)?;
        kb.assign(&acc, &r)?;
        let body = kb.pop();
        kb.emit(Cmd::For { var: k, bound: count.clone(), body, comment: comment.clone() });
        let mut leaves = Vec::new();
        scalar_leaves(&acc, &mut leaves);
        for (l, (v, _)) in locals.iter().zip(&leaves) {
            kb.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v.clone() });
        }
        kb.emit(Cmd::Barrier);
        let load = |at: CExpr| -> KVal {
            let leaves: Vec<(CExpr, Elem)> =
                locals.iter().zip(&elems).map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            rebuild(&ne_k, &mut leaves.into_iter())
        };
        // The first item turns the totals into carries, in order, from the group's.
        kb.push();
        let c0 = kb.index(&p, &[g])?;
        let carry = kb.declare_like(&c0)?;
        kb.assign(&carry, &c0)?;
        let j = kb.fresh_name("j");
        kb.push();
        let total = load(CExpr::Var(j.clone()));
        let total = kb.declare_like(&total).and_then(|v| kb.assign(&v, &total).map(|()| v))?;
        let mut carry_leaves = Vec::new();
        scalar_leaves(&carry, &mut carry_leaves);
        for (l, (v, _)) in locals.iter().zip(&carry_leaves) {
            kb.emit(Cmd::Store { ptr: l.clone(), index: CExpr::Var(j.clone()), value: v.clone() });
        }
        let next = apply(&mut kb, f, lambda, host, carry.clone(), total)?;
        kb.assign(&carry, &next)?;
        let body = kb.pop();
        kb.emit(Cmd::For { var: j, bound: CExpr::Int(wg), body, comment: None });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0)),
            then_cmds,
            else_cmds: Vec::new(),
        });
        kb.emit(Cmd::Barrier);
        // Each item scans its share from its carry.
        let mine = load(t);
        kb.assign(&acc, &mine)?;
        let k = kb.fresh_name("k");
        kb.push();
        let at = kb.tmp("i", Elem::I64, CExpr::add(start, CExpr::Var(k.clone())));
        let x = kb.index(&src, std::slice::from_ref(&at))?;
        let r = apply(&mut kb, f, lambda, host, acc.clone(), x)?;
        kb.assign(&acc, &r)?;
        kb.write(&dst, std::slice::from_ref(&at), &acc)?;
        let body = kb.pop();
        kb.emit(Cmd::For { var: k, bound: count, body, comment });
        let doc = format!(
            "scan: each work-item scans its share in order from its carry (work-groups of {wg}; a CPU)"
        );
        self.launch(
            kb,
            "scan",
            doc,
            vec![Expr::mul(groups, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(())
    }

    pub(crate) fn scatter(
        &mut self,
        dest: HArr,
        indices: HArr,
        values: HArr,
        origin: Option<&Origin>,
    ) -> Res<HArr> {
        // `dest` is the memory to write: a copy, or the array itself (in place).
        let out = dest;
        let m = indices.shape()[0].clone();
        let mut kb = self.kb();
        if let Some(o) = origin {
            kb.note(o, "@grid: one work-item per index");
        }
        let dst = kb.import_arr(&out)?;
        let idx = kb.import_arr(&indices)?;
        let vals = kb.import_arr(&values)?;
        let n = dst.shape()[0].clone();
        let i = kb.fresh_name("i");
        kb.push();
        let KVal::Scalar(j, jelem) = kb.index(&idx, &[CExpr::Var(i.clone())])? else {
            return Err(crate::LowerError::internal("scatter index"));
        };
        let j = if jelem == Elem::I64 { j } else { CExpr::cast(Elem::I64, j) };
        let j = kb.tmp("j", Elem::I64, j);
        kb.push();
        let v = kb.index(&vals, &[CExpr::Var(i.clone())])?;
        kb.write(&dst, std::slice::from_ref(&j), &v)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(
                COp::And,
                CExpr::bin(COp::Le, CExpr::Int(0), j.clone()),
                CExpr::bin(COp::Lt, j, n),
            ),
            then_cmds,
            else_cmds: Vec::new(),
        });
        let body = kb.pop();
        let comment = kb.comment(origin);
        let km = kb.import_index(&m);
        kb.emit(Cmd::ParFor { level: ParLevel::Grid(0), var: i, bound: km, body, comment });
        self.launch(
            kb,
            "scatter",
            "scatter: one work-item per index; out-of-range indices are ignored".to_owned(),
            vec![m],
            Some(vec![Expr::I64(256)]),
        );
        let _ = Mem::<Expr, weft_plan::Var>::fresh;
        let _: Option<KArr> = None;
        Ok(out)
    }

    /// `reduce_by_index` at the host level (see the module doc for the two kernels).
    #[expect(clippy::too_many_arguments, reason = "the combinator's whole description")]
    pub(crate) fn reduce_by_index(
        &mut self,
        f: FnId,
        lambda: &Lambda,
        dest: HArr,
        indices: HArr,
        values: HArr,
        ty: &Type,
        origin: Option<&Origin>,
        env: &HEnv,
    ) -> Res<HArr> {
        // `dest` is the memory to update: a copy, or the array itself (in place).
        let out = dest;
        let n = indices.shape()[0].clone();
        let m = out.shape()[0].clone();
        let atomic = match &out {
            HArr::Mem(mem) if mem.shape.len() == 1 => atomic_op(self.program, f, lambda, mem.elem),
            _ => None,
        };
        if let (Some(op), HArr::Mem(mem)) = (atomic, &out) {
            self.push_steps();
            self.hist_atomic(&out, &indices, &values, ty, op, false, origin)?;
            let global = self.pop_steps();
            if !matches!(mem.elem, Elem::I32 | Elem::U32 | Elem::F32) {
                self.steps_mut().extend(global);
                return Ok(out);
            }
            // 32-bit bins have atomics in local memory (a float addition is a
            // compare-and-swap loop there as in global memory): each work-group fills
            // its own sub-histogram there, then adds it into the bins (far fewer
            // updates of global memory contend when there are few bins; k-means' 170
            // float bins took 732 ms on the H100 with every update global).
            self.push_steps();
            self.hist_atomic(&out, &indices, &values, ty, op, true, origin)?;
            let local = self.pop_steps();
            self.step(Step::If {
                cond: Expr::bin(HOp::Le, m, Expr::I64(LOCAL_HISTOGRAM_BINS)),
                then_steps: local,
                else_steps: global,
            });
            return Ok(out);
        }
        let mut kb = self.kb();
        let dst = static_shape(kb.import_arr(&out)?, &constant_dims(ty));
        let idx = kb.import_arr(&indices)?;
        let vals = kb.import_arr(&values)?;
        let bins = dst.shape()[0].clone();
        if let Some(o) = origin {
            kb.note(
                o,
                "@grid: one work-item per bin, reading every value (no atomic for this operator)",
            );
        }
        let host = Rc::new(env.clone());
        let b = kb.fresh_name("bin");
        kb.push();
        let init = kb.index(&dst, &[CExpr::Var(b.clone())])?;
        let acc = kb.declare_like(&init)?;
        kb.assign(&acc, &init)?;
        let i = kb.fresh_name("i");
        kb.push();
        let j = kb.index(&idx, &[CExpr::Var(i.clone())])?;
        let j = as_index(&mut kb, j, "reduce_by_index index")?;
        kb.push();
        let x = kb.index(&vals, &[CExpr::Var(i.clone())])?;
        let combined = apply(&mut kb, f, lambda, &host, acc.clone(), x)?;
        kb.assign(&acc, &combined)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, j, CExpr::Var(b.clone())),
            then_cmds,
            else_cmds: Vec::new(),
        });
        let scan_values = kb.pop();
        let kn = kb.import_index(&n);
        kb.emit(Cmd::For { var: i, bound: kn, body: scan_values, comment: None });
        kb.write(&dst, &[CExpr::Var(b.clone())], &acc)?;
        let body = kb.pop();
        let comment = kb.comment(origin);
        kb.emit(Cmd::ParFor { level: ParLevel::Grid(0), var: b, bound: bins, body, comment });
        self.launch(
            kb,
            "hist_bins",
            "reduce_by_index: one work-item per bin folds every value whose index is that bin (bins times values work)".to_owned(),
            vec![m],
            Some(vec![Expr::I64(256)]),
        );
        Ok(out)
    }

    /// The kernel of a `reduce_by_index` whose operator is an atomic update of `out`'s
    /// elements: one work-item per value updates its bin, in global memory, or (with
    /// `sub_histograms`) in its work-group's copy of the bins in local memory, which the
    /// group then adds into `out` (Futhark's SegHist with local sub-histograms).
    #[expect(clippy::too_many_arguments, reason = "the histogram's whole description")]
    fn hist_atomic(
        &mut self,
        out: &HArr,
        indices: &HArr,
        values: &HArr,
        ty: &Type,
        op: AtomicOp,
        sub_histograms: bool,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let n = indices.shape()[0].clone();
        let m = out.shape()[0].clone();
        let mut kb = self.kb();
        let dst = static_shape(kb.import_arr(out)?, &constant_dims(ty));
        let KArr::Mem(mem) = &dst else {
            return Err(crate::LowerError::internal("atomic histogram into a non-memory array"));
        };
        let mem = mem.clone();
        let idx = kb.import_arr(indices)?;
        let vals = kb.import_arr(values)?;
        let bins = dst.shape()[0].clone();
        let wg = i64::from(self.options.work_group);
        let how = if sub_histograms {
            format!(
                "one work-item per value, an atomic {} into its work-group's bins in local memory, then into the bins",
                op.name()
            )
        } else {
            format!("one work-item per value, an atomic {} into its bin", op.name())
        };
        if let Some(o) = origin {
            kb.note(o, &format!("@grid: {how}"));
        }
        let sub = if sub_histograms {
            kb.can_return = false;
            let sub = kb.local_param(
                "bins",
                mem.elem,
                m.clone(),
                "the work-group's sub-histogram of a `reduce_by_index`",
            );
            let b = kb.fresh_name("b");
            let identity = CExpr::cast(mem.elem, CExpr::Int(op.identity_32(mem.elem)));
            let fill = vec![Cmd::Store {
                ptr: sub.clone(),
                index: CExpr::Var(b.clone()),
                value: identity,
            }];
            kb.emit(Cmd::ParFor {
                level: ParLevel::Thread,
                var: b,
                bound: bins.clone(),
                body: fill,
                comment: None,
            });
            kb.emit(Cmd::Barrier);
            Some(sub)
        } else {
            None
        };
        let i = kb.fresh_name("i");
        kb.push();
        let j = kb.index(&idx, &[CExpr::Var(i.clone())])?;
        let j = as_index(&mut kb, j, "reduce_by_index index")?;
        kb.push();
        let KVal::Scalar(v, _) = kb.index(&vals, &[CExpr::Var(i.clone())])? else {
            return Err(crate::LowerError::internal("reduce_by_index value"));
        };
        let (ptr, index) = match &sub {
            Some(sub) => (sub.clone(), j.clone()),
            None => (mem.buf.clone(), mem.address(std::slice::from_ref(&j))),
        };
        kb.emit(Cmd::Atomic { op, elem: mem.elem, ptr, index, value: v, fetch: None });
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: in_range(j, bins.clone()), then_cmds, else_cmds: Vec::new() });
        let body = kb.pop();
        let comment = kb.comment(origin);
        let kn = kb.import_index(&n);
        kb.emit(Cmd::ParFor { level: ParLevel::Grid(0), var: i, bound: kn, body, comment });
        let global = if let Some(sub) = sub {
            kb.emit(Cmd::Barrier);
            // Bins the group never touched hold the identity: no update needed.
            let b = kb.fresh_name("b");
            let count = CExpr::load(&sub, CExpr::Var(b.clone()));
            let add = Cmd::Atomic {
                op,
                elem: mem.elem,
                ptr: mem.buf.clone(),
                index: mem.address(&[CExpr::Var(b.clone())]),
                value: count.clone(),
                fetch: None,
            };
            let merge = vec![Cmd::If {
                cond: CExpr::bin(
                    COp::Ne,
                    count,
                    CExpr::cast(mem.elem, CExpr::Int(op.identity_32(mem.elem))),
                ),
                then_cmds: vec![add],
                else_cmds: Vec::new(),
            }];
            kb.emit(Cmd::ParFor {
                level: ParLevel::Thread,
                var: b,
                bound: bins,
                body: merge,
                comment: None,
            });
            let groups = self.group_count(&n);
            vec![Expr::mul(groups, Expr::I64(wg))]
        } else {
            vec![n]
        };
        self.launch(
            kb,
            "hist",
            format!("reduce_by_index: {how}; out-of-range indices are ignored"),
            global,
            Some(vec![Expr::I64(wg)]),
        );
        Ok(())
    }

    /// `array with [indices] = value` at the host level: a copy of the array, then one
    /// work-item checks the indices (the interpreter's wording) and writes the value.
    pub(crate) fn update(
        &mut self,
        array: HArr,
        array_name: &str,
        indices: &[HVal],
        value: &HVal,
        in_place: bool,
        origin: Option<&Origin>,
    ) -> Res<HArr> {
        // In place (weft-core's `update_reuse`): the array owns row-major memory that
        // nothing reads afterwards.
        let out = self.updated(&array, in_place, "updated")?;
        let copied = !matches!((&array, &out), (HArr::Mem(a), HArr::Mem(b)) if a.buf == b.buf);
        let mut kb = self.kb();
        if let Some(o) = origin {
            let how = if copied {
                "a copy, then one work-item writes the new element or row"
            } else {
                "in place: one work-item writes the new element or row into the array"
            };
            kb.note(o, how);
        }
        let dst = kb.import_arr(&out)?;
        let shape = dst.shape();
        let mut at = Vec::new();
        for (dim, index) in indices.iter().enumerate() {
            let i = kb.import_val(index)?;
            let i = as_index(&mut kb, i, "update index")?;
            if kb.checks() {
                let code = kb.error_site(RuntimeCheck::Index { array: array_name }, origin);
                kb.check(
                    in_range(i.clone(), shape[dim].clone()),
                    code,
                    i.clone(),
                    shape[dim].clone(),
                );
            }
            at.push(i);
        }
        let value = kb.import_val(value)?;
        kb.write(&dst, &at, &value)?;
        self.launch(
            kb,
            "update",
            if copied {
                "with: one work-item checks the indices and writes the new element or row into the copy"
            } else {
                "with: one work-item checks the indices and writes the new element or row in place"
            }
            .to_owned(),
            vec![Expr::I64(1)],
            None,
        );
        Ok(out)
    }
}
