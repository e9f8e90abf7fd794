//! A single-pass scan with decoupled look-back (Merrill and Garland 2016) for a
//! `segscan@grid` over one dimension with one operator on a 32-bit scalar, on devices
//! whose started work-groups keep running (`Options::forward_progress`: NVIDIA GPUs):
//! each work-group takes the next tile of `wg * ITEMS` points (a counter, so every tile
//! it waits for belongs to a group that has started), computes the body at each point
//! and scans the tile in local memory, publishes its total, then walks back over the
//! tiles before it, adding totals until one has published its inclusive prefix, and
//! publishes its own. A tile's status is one 64-bit word, the flag (1: total, 2:
//! inclusive prefix) above the value's 32 bits, so one atomic exchange publishes both
//! and one atomic read sees both. The input is read once and the result written once
//! (the staged translator's `scan_lookback`, here with the body's values as elements).

use std::rc::Rc;

use weft_core::Origin;
use weft_opt::{SegBinOp, SegOp, Stmt};
use weft_plan::{Elem, Expr};

use super::kernel::{KVal, Kern};
use super::{Res, Tr, eceil_div, emul};
use crate::LowerError;
use crate::imp::{AtomicOp, CExpr, COp, Cmd, ParLevel};

/// Elements per work-item of a tile.
const ITEMS: i64 = 32;
/// Earlier tiles' status words read at once while looking back.
const WINDOW: i64 = 32;

impl Tr<'_> {
    /// The look-back scan of `seg` (see the module documentation), whose one operator
    /// combines `elem`s.
    pub(crate) fn lookback_scan(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        op: &SegBinOp,
        elem: Elem,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = i64::from(self.options.work_group);
        let tile = wg * ITEMS;
        let n = self.int_atom(&seg.space[0].1)?;
        let tiles = self.let_var("tiles", eceil_div(n.clone(), Expr::I64(tile)));
        // Every tile's status, then the counter that hands out tiles: zeroed first.
        let words = self.let_var("words", super::eadd(tiles.clone(), Expr::I64(1)));
        let status = self.alloc_buffer("status", Elem::U64, words.clone());
        {
            let mut k = Kern::new(self);
            let st = k.buffer_param(status, Elem::U64);
            let kw = k.import_index(&words);
            let i = k.fresh_name("i");
            let body = vec![Cmd::Store {
                ptr: st,
                index: CExpr::Var(i.clone()),
                value: CExpr::cast(Elem::U64, CExpr::Int(0)),
            }];
            k.emit(Cmd::ParFor {
                level: ParLevel::Grid(0),
                var: i,
                bound: kw,
                body,
                comment: None,
            });
            let name = k.tr.kernel_name("scan_status");
            let doc = "scan status: clears the tiles' status words and the tile counter".to_owned();
            let (kernel, args) = k.finish(name, doc, Some(wg as u32));
            self.launch(kernel, args, vec![words], Some(vec![Expr::I64(wg)]));
        }
        let ne_host = self.atom(&op.neutral[0])?;
        let mut k = Kern::new(self);
        k.can_return = false;
        for o in &seg.origins {
            k.note(o, "@grid: single-pass scan with decoupled look-back");
        }
        let st = k.buffer_param(status, Elem::U64);
        let kn = k.import_index(&n);
        let ktiles = k.import_index(&tiles);
        let KVal::Scalar(ne, _) = k.import_val(&ne_host) else {
            return Err(LowerError::internal("a scan's 32-bit neutral element"));
        };
        let info = k.memory(stmt.vars[0]);
        let hint = k.tr.f.vars[stmt.vars[0]].name.to_string();
        let out = k.value_of(&info, &hint)?;
        let scalar = |e: CExpr| KVal::Scalar(e, elem);
        // The operator on two scalars.
        let combine = |k: &mut Kern<'_, '_>, a: CExpr, b: CExpr| -> Res<CExpr> {
            match k.apply(&op.lambda, &[scalar(a), scalar(b)])? {
                KVal::Scalar(r, _) => Ok(k.tmp("r", elem, r)),
                _ => Err(LowerError::internal("a scan operator with no scalar result")),
            }
        };
        // Local memory: the tile (padded every 32 elements against bank conflicts),
        // the work-items' totals, and the tile number and carry the first item finds.
        let padded = |p: CExpr| CExpr::add(p.clone(), CExpr::bin(COp::Div, p, CExpr::Int(32)));
        let buf = k.local_param("tile", elem, Expr::I64(tile + tile / 32), "a scan's tile");
        let sums = k.local_param("sums", elem, Expr::I64(wg), "the work-items' totals of a scan");
        let carry_l = k.local_param("carry", elem, Expr::I64(1), "the tile's carry");
        let id_l = k.local_param("tile_id", Elem::I64, Expr::I64(1), "the tile this group scans");
        let t = k.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let is_first = CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0));
        // The tile: the next one handed out.
        k.push();
        let ticket = k.decl("ticket", Elem::U64, None);
        let name = var_name(&ticket)?;
        k.emit(Cmd::Atomic {
            op: AtomicOp::Add,
            elem: Elem::U64,
            ptr: st.clone(),
            index: ktiles,
            value: CExpr::cast(Elem::U64, CExpr::Int(1)),
            fetch: Some(name),
        });
        k.emit(Cmd::Store {
            ptr: id_l.clone(),
            index: CExpr::Int(0),
            value: CExpr::cast(Elem::I64, ticket),
        });
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        k.emit(Cmd::Barrier);
        let tile_id = k.tmp("tile", Elem::I64, CExpr::load(&id_l, CExpr::Int(0)));
        let base = k.tmp("base", Elem::I64, CExpr::mul(tile_id.clone(), CExpr::Int(tile)));
        // The tile's elements: the body at each point, neighbouring work-items at
        // neighbouring points.
        let comment = k.comment(origin);
        let index = seg.space[0].0;
        let (buf2, base2, t2, kn2, ne2) =
            (buf.clone(), base.clone(), t.clone(), kn.clone(), ne.clone());
        k.for_loop("k", CExpr::Int(ITEMS), comment.clone(), &mut |k, step| {
            let at = CExpr::add(CExpr::mul(step, CExpr::Int(wg)), t2.clone());
            let i = k.tmp("i", Elem::I64, CExpr::add(base2.clone(), at.clone()));
            let x = k.decl("x", elem, Some(ne2.clone()));
            k.push();
            k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
            let value = k.block1(seg.body)?;
            k.assign(&scalar(x.clone()), &value)?;
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, i, kn2.clone()),
                then_cmds,
                else_cmds: vec![],
            });
            k.emit(Cmd::Store { ptr: buf2.clone(), index: padded(at), value: x });
            Ok(())
        })?;
        k.emit(Cmd::Barrier);
        // Each work-item scans its `ITEMS` neighbouring elements in place.
        let own = |i: CExpr| padded(CExpr::add(CExpr::mul(t.clone(), CExpr::Int(ITEMS)), i));
        let acc = k.decl("acc", elem, Some(CExpr::load(&buf, own(CExpr::Int(0)))));
        let acc_name = var_name(&acc)?;
        let (buf3, acc3) = (buf.clone(), acc.clone());
        k.for_loop("k", CExpr::Int(ITEMS - 1), None, &mut |k, step| {
            let at = own(CExpr::add(step, CExpr::Int(1)));
            let x = k.tmp("x", elem, CExpr::load(&buf3, at.clone()));
            let r = combine(k, acc3.clone(), x)?;
            k.emit(Cmd::Assign { name: acc_name.clone(), value: r.clone() });
            k.emit(Cmd::Store { ptr: buf3.clone(), index: at, value: r });
            Ok(())
        })?;
        k.emit(Cmd::Store { ptr: sums.clone(), index: t.clone(), value: acc });
        k.emit(Cmd::Barrier);
        // The items' totals, scanned in local memory (inclusive).
        let mut s = 1;
        while s < wg {
            let earlier = CExpr::load(
                &sums,
                CExpr::select(
                    CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                    CExpr::sub(t.clone(), CExpr::Int(s)),
                    CExpr::Int(0),
                ),
            );
            let v = k.decl("v", elem, Some(earlier));
            k.emit(Cmd::Barrier);
            k.push();
            let mine = k.tmp("x", elem, CExpr::load(&sums, t.clone()));
            let r = combine(&mut k, v, mine)?;
            k.emit(Cmd::Store { ptr: sums.clone(), index: t.clone(), value: r });
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                then_cmds,
                else_cmds: Vec::new(),
            });
            k.emit(Cmd::Barrier);
            s *= 2;
        }
        // The first work-item publishes the tile's total; then the group looks back
        // for its carry, `WINDOW` earlier tiles' status words at a time (read by as
        // many work-items at once, then combined in order by the first).
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
        let publish = |k: &mut Kern<'_, '_>, flag: i64, v: CExpr| {
            k.emit(Cmd::Atomic {
                op: AtomicOp::Exchange,
                elem: Elem::U64,
                ptr: st.clone(),
                index: tile_id.clone(),
                value: word(flag, v),
                fetch: None,
            });
        };
        let window_len = WINDOW.min(wg);
        let window = k.local_param(
            "window",
            Elem::U64,
            Expr::I64(window_len),
            "earlier tiles' status words, read at once",
        );
        // `[0]`: whether the group still looks back; `[1]`: the next tile to read.
        let walk = k.local_param("walk", Elem::I64, Expr::I64(2), "the look-back's state");
        let first_tile = CExpr::bin(COp::Eq, tile_id.clone(), CExpr::Int(0));
        let total = k.tmp("total", elem, CExpr::load(&sums, CExpr::Int(wg - 1)));
        k.push();
        k.push();
        publish(&mut k, 2, total.clone());
        let then_cmds = k.pop();
        k.push();
        publish(&mut k, 1, total.clone());
        let else_cmds = k.pop();
        k.emit(Cmd::If { cond: first_tile.clone(), then_cmds, else_cmds });
        k.emit(Cmd::Store {
            ptr: walk.clone(),
            index: CExpr::Int(0),
            value: CExpr::select(first_tile, CExpr::Int(0), CExpr::Int(1)),
        });
        k.emit(Cmd::Store {
            ptr: walk.clone(),
            index: CExpr::Int(1),
            value: CExpr::sub(tile_id.clone(), CExpr::Int(1)),
        });
        k.emit(Cmd::Store { ptr: carry_l.clone(), index: CExpr::Int(0), value: ne.clone() });
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        k.emit(Cmd::Barrier);
        // The loop: every work-item tests the same flag in local memory, so the
        // barriers inside are reached by all.
        k.push();
        let looking = k.tmp("looking", Elem::I64, CExpr::load(&walk, CExpr::Int(0)));
        let cond_cmds = k.pop();
        k.push();
        let j = k.tmp("j", Elem::I64, CExpr::load(&walk, CExpr::Int(1)));
        k.push();
        let seen = k.decl("seen", Elem::U64, Some(CExpr::cast(Elem::U64, CExpr::Int(0))));
        let seen_name = var_name(&seen)?;
        k.push();
        k.emit(Cmd::Atomic {
            op: AtomicOp::Add,
            elem: Elem::U64,
            ptr: st.clone(),
            index: CExpr::sub(j.clone(), t.clone()),
            value: CExpr::cast(Elem::U64, CExpr::Int(0)),
            fetch: Some(seen_name),
        });
        let read = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Ge, CExpr::sub(j.clone(), t.clone()), CExpr::Int(0)),
            then_cmds: read,
            else_cmds: Vec::new(),
        });
        k.emit(Cmd::Store { ptr: window.clone(), index: t.clone(), value: seen });
        let then_cmds = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Lt, t.clone(), CExpr::Int(window_len)),
            then_cmds,
            else_cmds: Vec::new(),
        });
        k.emit(Cmd::Barrier);
        // The first work-item adds the window's values in order, up to a tile not
        // ready yet (read again next time) or one with its inclusive prefix (done).
        k.push();
        let acc = k.decl("acc", elem, Some(CExpr::load(&carry_l, CExpr::Int(0))));
        let acc_name = var_name(&acc)?;
        let at = k.decl("k", Elem::I64, Some(CExpr::Int(0)));
        let go = k.decl("go", Elem::I64, Some(CExpr::Int(1)));
        let (at_name, go_name) = (var_name(&at)?, var_name(&go)?);
        k.push();
        let w = k.tmp("w", Elem::U64, CExpr::load(&window, at.clone()));
        let flag = k.tmp("flag", Elem::U64, CExpr::bin(COp::Shr, w.clone(), CExpr::Int(32)));
        k.push();
        let earlier = k.tmp("earlier", elem, from_bits(w));
        let r = combine(&mut k, earlier, acc.clone())?;
        k.emit(Cmd::Assign { name: acc_name, value: r });
        k.emit(Cmd::Assign { name: at_name, value: CExpr::add(at.clone(), CExpr::Int(1)) });
        k.push();
        k.emit(Cmd::Assign { name: go_name.clone(), value: CExpr::Int(0) });
        k.emit(Cmd::Store { ptr: walk.clone(), index: CExpr::Int(0), value: CExpr::Int(0) });
        let done = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, flag.clone(), CExpr::cast(Elem::U64, CExpr::Int(2))),
            then_cmds: done,
            else_cmds: Vec::new(),
        });
        let ready = k.pop();
        let not_ready = vec![Cmd::Assign { name: go_name, value: CExpr::Int(0) }];
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Ne, flag, CExpr::cast(Elem::U64, CExpr::Int(0))),
            then_cmds: ready,
            else_cmds: not_ready,
        });
        let body = k.pop();
        k.emit(Cmd::While {
            cond_cmds: Vec::new(),
            cond: CExpr::bin(
                COp::And,
                CExpr::bin(COp::Ne, go, CExpr::Int(0)),
                CExpr::bin(COp::Lt, at.clone(), CExpr::Int(window_len)),
            ),
            body,
        });
        k.emit(Cmd::Store { ptr: carry_l.clone(), index: CExpr::Int(0), value: acc });
        k.emit(Cmd::Store { ptr: walk.clone(), index: CExpr::Int(1), value: CExpr::sub(j, at) });
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond: is_first.clone(), then_cmds, else_cmds: Vec::new() });
        k.emit(Cmd::Barrier);
        let body = k.pop();
        k.emit(Cmd::While { cond_cmds, cond: CExpr::bin(COp::Ne, looking, CExpr::Int(0)), body });
        // The tile's inclusive prefix, for the tiles after it.
        k.push();
        let exclusive = k.tmp("exclusive", elem, CExpr::load(&carry_l, CExpr::Int(0)));
        let inclusive = combine(&mut k, exclusive, total)?;
        publish(&mut k, 2, inclusive);
        let then_cmds = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(
                COp::And,
                is_first,
                CExpr::bin(COp::Ne, tile_id.clone(), CExpr::Int(0)),
            ),
            then_cmds,
            else_cmds: Vec::new(),
        });
        // Each item's carry: the tile's, then the totals of the items before it.
        let before = k.decl("before", elem, Some(ne));
        let before_name = var_name(&before)?;
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Gt, t.clone(), CExpr::Int(0)),
            then_cmds: vec![Cmd::Assign {
                name: before_name,
                value: CExpr::load(&sums, CExpr::sub(t.clone(), CExpr::Int(1))),
            }],
            else_cmds: vec![],
        });
        let tile_carry = k.tmp("tile_carry", elem, CExpr::load(&carry_l, CExpr::Int(0)));
        let carry = combine(&mut k, tile_carry, before)?;
        let buf4 = buf.clone();
        k.for_loop("k", CExpr::Int(ITEMS), None, &mut |k, step| {
            let at = own(step);
            let x = k.tmp("x", elem, CExpr::load(&buf4, at.clone()));
            let y = combine(k, carry.clone(), x)?;
            k.emit(Cmd::Store { ptr: buf4.clone(), index: at, value: y });
            Ok(())
        })?;
        k.emit(Cmd::Barrier);
        // Store the tile, writes coalesced.
        k.for_loop("k", CExpr::Int(ITEMS), comment, &mut |k, step| {
            let at = CExpr::add(CExpr::mul(step, CExpr::Int(wg)), t.clone());
            let i = k.tmp("i", Elem::I64, CExpr::add(base.clone(), at.clone()));
            k.push();
            k.store(&out, std::slice::from_ref(&i), &scalar(CExpr::load(&buf, padded(at))))?;
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, i, kn.clone()),
                then_cmds,
                else_cmds: Vec::new(),
            });
            Ok(())
        })?;
        let doc = format!(
            "segscan@grid: single pass, each work-group scans a tile of {tile} and looks back over earlier tiles' published totals for its carry"
        );
        let name = k.tr.kernel_name("scan");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![emul(tiles, Expr::I64(wg))], Some(vec![Expr::I64(wg)]));
        Ok(())
    }
}

fn var_name(e: &CExpr) -> Res<Rc<str>> {
    match e {
        CExpr::Var(name) => Ok(name.clone()),
        _ => Err(LowerError::internal("a declared variable that is not a name")),
    }
}
