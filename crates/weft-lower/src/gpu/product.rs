//! Tiled matrix products (MIDDLE.md's pass 4, the staged translator's `matmul.rs` as a
//! strategy of the code generator): a `segred@grid` over `(i < n, j < m, k < K)` with
//! one commutative scalar operator whose body reads row `i` of one array and row `j` of
//! another at `k` (`a = X[i]`, `x = a[k]`, `b = Y[j]`, `y = b[k]`, the middle end's row
//! reads) is computed by work-groups of 16x16 work-items, each group a 128x128 block of
//! the result, each work-item an 8x8 block of it in private variables: the group stages
//! 8 columns of `k` of its 128 rows of `X` and of `Y` in local memory at a time, and
//! each work-item combines the staged values into its 16 accumulators (the body runs
//! once per accumulator, with `x` and `y` read from local memory). The middle end picks
//! this strategy for such products (`weft_opt::prefer_tiled_products`).

use rustc_hash::FxHashMap;
use weft_core::{Origin, VarId};
use weft_opt::{ProductReads, SegBinOp, SegOp, Stmt};
use weft_plan::{Elem, Expr};

use super::kernel::{KVal, Kern};
use super::{Res, Tr, eceil_div, emul};
use crate::LowerError;
use crate::imp::{CExpr, COp, Cmd};

/// Work-items per side of a work-group.
const SIDE: i64 = 16;
/// Results per side of a work-item's block.
const BLOCK: i64 = 8;
/// Rows per side of a work-group's tile of the result.
const TILE: i64 = SIDE * BLOCK;
/// Columns of `k` staged in local memory at a time.
const DEPTH: i64 = 8;

impl Tr<'_> {
    /// The tiled product (see the module documentation) of `seg` with `reads`.
    pub(crate) fn tiled_product(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        op: &SegBinOp,
        reads: &ProductReads,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let dims: Vec<Expr> =
            seg.space.iter().map(|(_, b)| self.int_atom(b)).collect::<Res<_>>()?;
        let [n, m, depth] = [dims[0].clone(), dims[1].clone(), dims[2].clone()];
        let global = vec![
            self.let_var("items", emul(eceil_div(m.clone(), Expr::I64(TILE)), Expr::I64(SIDE))),
            self.let_var("items", emul(eceil_div(n.clone(), Expr::I64(TILE)), Expr::I64(SIDE))),
        ];
        let neutral = self.atom(&op.neutral[0])?;
        let elem = match &neutral {
            super::HVal::Scalar(super::HScalar::Host(_, e) | super::HScalar::Device(_, e)) => *e,
            _ => return Err(LowerError::internal("a tiled product of non-scalars")),
        };
        let mut k = Kern::new(self);
        k.can_return = false;
        super::seg::note_all(
            &mut k,
            seg,
            "@grid: tiled matrix product (128x128 blocks per work-group, 8x8 per work-item, 8 columns staged in local memory)",
        );
        let (kn, km, kd) = (k.import_index(&n), k.import_index(&m), k.import_index(&depth));
        let ne = k.import_val(&neutral);
        let why = "a tile of a matrix product's operand, staged in local memory";
        let tiles = [
            k.local_param("tile_a", elem, Expr::I64(DEPTH * TILE), why),
            k.local_param("tile_b", elem, Expr::I64(DEPTH * TILE), why),
        ];
        let tx = k.tmp("tx", Elem::I64, CExpr::work_item("get_local_id", 0));
        let ty = k.tmp("ty", Elem::I64, CExpr::work_item("get_local_id", 1));
        let col0 = k.tmp(
            "col0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(TILE)),
        );
        let row0 = k.tmp(
            "row0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 1), CExpr::Int(TILE)),
        );
        let me = k.tmp(
            "me",
            Elem::I64,
            CExpr::add(CExpr::mul(ty.clone(), CExpr::Int(SIDE)), tx.clone()),
        );
        let mut acc = Vec::new();
        for _ in 0..BLOCK * BLOCK {
            let a = k.declare_like(&ne, "acc")?;
            k.assign(&a, &ne)?;
            acc.push(a);
        }
        let space: Vec<VarId> = seg.space.iter().map(|(v, _)| *v).collect();
        let steps =
            CExpr::bin(COp::Div, CExpr::add(kd.clone(), CExpr::Int(DEPTH - 1)), CExpr::Int(DEPTH));
        let comment = k.comment(origin);
        let acc2 = acc.clone();
        k.for_loop("step", steps, comment, &mut |k, step| {
            let k0 = k.tmp("k0", Elem::I64, CExpr::mul(step, CExpr::Int(DEPTH)));
            // Stage the tiles: `TILE * DEPTH` elements of each operand, the group's
            // work-items taking neighbouring `k` of a row.
            for (side, (tile, first)) in tiles.iter().zip([&row0, &col0]).enumerate() {
                let bound = if side == 0 { &kn } else { &km };
                for part in 0..(TILE * DEPTH) / (SIDE * SIDE) {
                    let flat = CExpr::add(me.clone(), CExpr::Int(part * SIDE * SIDE));
                    let r = CExpr::bin(COp::Div, flat.clone(), CExpr::Int(DEPTH));
                    let c = CExpr::bin(COp::Rem, flat, CExpr::Int(DEPTH));
                    let row = k.tmp("row", Elem::I64, CExpr::add(first.clone(), r.clone()));
                    let kk = k.tmp("kk", Elem::I64, CExpr::add(k0.clone(), c.clone()));
                    k.push();
                    k.bind(space[side], KVal::Scalar(row.clone(), Elem::I64));
                    let view = &reads.rows[side];
                    k.stmt(view)?;
                    let KVal::Arr(arr) = k.lookup(view.vars[0])? else {
                        return Err(LowerError::internal("a product's row that is not an array"));
                    };
                    let value = CExpr::load(&arr.ptr, arr.address(std::slice::from_ref(&kk)));
                    let at = CExpr::add(CExpr::mul(c, CExpr::Int(TILE)), r);
                    k.emit(Cmd::Store { ptr: tile.clone(), index: at, value });
                    let then_cmds = k.pop();
                    let inside = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Lt, row, bound.clone()),
                        CExpr::bin(COp::Lt, kk, kd.clone()),
                    );
                    k.emit(Cmd::If { cond: inside, then_cmds, else_cmds: vec![] });
                }
            }
            k.emit(Cmd::Barrier);
            // Each work-item's block: rows `ty + r*SIDE`, columns `tx + c*SIDE`.
            let last =
                CExpr::call("min", vec![CExpr::Int(DEPTH), CExpr::sub(kd.clone(), k0.clone())]);
            k.for_loop("d", last, None, &mut |k, d| {
                let xs: Vec<CExpr> = (0..BLOCK)
                    .map(|r| {
                        let at = CExpr::add(
                            CExpr::mul(d.clone(), CExpr::Int(TILE)),
                            CExpr::add(ty.clone(), CExpr::Int(r * SIDE)),
                        );
                        k.tmp("x", elem, CExpr::load(&tiles[0], at))
                    })
                    .collect();
                let ys: Vec<CExpr> = (0..BLOCK)
                    .map(|c| {
                        let at = CExpr::add(
                            CExpr::mul(d.clone(), CExpr::Int(TILE)),
                            CExpr::add(tx.clone(), CExpr::Int(c * SIDE)),
                        );
                        k.tmp("y", elem, CExpr::load(&tiles[1], at))
                    })
                    .collect();
                let kk = CExpr::add(k0.clone(), d);
                for r in 0..BLOCK {
                    for c in 0..BLOCK {
                        // The body at a point inside the result (rows and columns past
                        // its end are clamped; their sums are not written).
                        let i = CExpr::call(
                            "min",
                            vec![
                                CExpr::add(
                                    row0.clone(),
                                    CExpr::add(ty.clone(), CExpr::Int(r * SIDE)),
                                ),
                                CExpr::sub(kn.clone(), CExpr::Int(1)),
                            ],
                        );
                        let j = CExpr::call(
                            "min",
                            vec![
                                CExpr::add(
                                    col0.clone(),
                                    CExpr::add(tx.clone(), CExpr::Int(c * SIDE)),
                                ),
                                CExpr::sub(km.clone(), CExpr::Int(1)),
                            ],
                        );
                        let mut given: FxHashMap<VarId, KVal> = FxHashMap::default();
                        given.insert(
                            reads.elements[0].vars[0],
                            KVal::Scalar(xs[r as usize].clone(), elem),
                        );
                        given.insert(
                            reads.elements[1].vars[0],
                            KVal::Scalar(ys[c as usize].clone(), elem),
                        );
                        k.bind(space[0], KVal::Scalar(i, Elem::I64));
                        k.bind(space[1], KVal::Scalar(j, Elem::I64));
                        k.bind(space[2], KVal::Scalar(kk.clone(), Elem::I64));
                        let skip = [reads.rows[0].exp, reads.rows[1].exp];
                        let value = k.block_given(seg.body, &given, &skip)?;
                        let a = &acc2[(r * BLOCK + c) as usize];
                        let next = k.apply(&op.lambda, &[a.clone(), value])?;
                        k.assign_staged(a, &next)?;
                    }
                }
                Ok(())
            })?;
            k.emit(Cmd::Barrier);
            Ok(())
        })?;
        // The blocks' sums into the result.
        let info = k.memory(stmt.vars[0]);
        let hint = k.tr.f.vars[stmt.vars[0]].name.to_string();
        let out = k.value_of(&info, &hint)?;
        for r in 0..BLOCK {
            for c in 0..BLOCK {
                let i = k.tmp(
                    "i",
                    Elem::I64,
                    CExpr::add(row0.clone(), CExpr::add(ty.clone(), CExpr::Int(r * SIDE))),
                );
                let j = k.tmp(
                    "j",
                    Elem::I64,
                    CExpr::add(col0.clone(), CExpr::add(tx.clone(), CExpr::Int(c * SIDE))),
                );
                k.push();
                let value = acc[(r * BLOCK + c) as usize].clone();
                k.store(&out, &[i.clone(), j.clone()], &value)?;
                let then_cmds = k.pop();
                let inside = CExpr::bin(
                    COp::And,
                    CExpr::bin(COp::Lt, i, kn.clone()),
                    CExpr::bin(COp::Lt, j, km.clone()),
                );
                k.emit(Cmd::If { cond: inside, then_cmds, else_cmds: vec![] });
            }
        }
        let doc = format!(
            "segred@grid: a tiled matrix product ({TILE}x{TILE} per work-group of {SIDE}x{SIDE}, {BLOCK}x{BLOCK} per work-item){}",
            origin
                .and_then(|o| (k.tr.position)(o))
                .map(|p| format!(", {}", super::kernel::strip_column(&p)))
                .unwrap_or_default()
        );
        let name = k.tr.kernel_name("product");
        let (kernel, args) = k.finish(name, doc, Some((SIDE * SIDE) as u32));
        self.launch(kernel, args, global, Some(vec![Expr::I64(SIDE), Expr::I64(SIDE)]));
        Ok(())
    }
}
