//! Element reads of matrices as reads of rows (GPU IR to GPU IR).
//!
//! Flattening a matrix product fully gives `segred (i < n, j < m, l < k)` whose body
//! reads `a[i, l]` and `b[j, l]`. Written back for the code generator, a dimension
//! whose index only reads rows (`arow = a[i]`) is a `map` over those rows, which is the
//! nest the code generator tiles (`map (\arow -> map (\brow -> reduce (+) 0 (map2 (*)
//! arow brow)) b) a`); an element read is not. So in every multi-dimensional grid
//! SegOp, a read `x = X[i_p, i_q]` of a two-dimensional array bound outside the body,
//! by two indices of the space with `p < q`, becomes `row = X[i_p]` (one per array and
//! index, at the start of the body) and `x = row[i_q]`. Both are views: nothing is
//! copied or computed twice. (Parboil's `sgemm`, `C := alpha*A*B^T + beta*C`, ran
//! untiled: 275 ms on the H100.)

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, Type, Var, VarId, VarKind};

use crate::ir::{Block, BlockId, Exp, GpuFunction, GpuProgram, SegLevel, Stmt};
use crate::passes::host::rewrite_host_stmts;

/// Splits the matrix element reads of every multi-dimensional grid SegOp into row
/// reads (see above).
pub fn read_rows(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        let body = f.body;
        rewrite_host_stmts(f, body, &mut |f, stmt, out| {
            if let Exp::Seg(seg) = &f.exps[stmt.exp]
                && seg.level == SegLevel::Grid
                && seg.space.len() >= 2
            {
                let indices: Vec<VarId> = seg.space.iter().map(|&(i, _)| i).collect();
                let body = seg.body;
                split_reads(f, body, &indices);
            }
            out.push(stmt);
        });
    }
    out
}

/// Rewrites the top-level statements of a SegOp body.
fn split_reads(f: &mut GpuFunction, body: BlockId, indices: &[VarId]) {
    let bound_inside: Vec<VarId> =
        f.blocks[body].stmts.iter().flat_map(|s| s.vars.iter().copied()).collect();
    let position = |v: &Atom| match v {
        Atom::Var(v) => indices.iter().position(|i| i == v),
        Atom::Const(_) => None,
    };
    let mut rows: FxHashMap<(VarId, VarId), VarId> = FxHashMap::default();
    let mut row_stmts = Vec::new();
    let mut stmts = Vec::with_capacity(f.blocks[body].stmts.len());
    for stmt in f.blocks[body].stmts.clone() {
        let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(array), items }) =
            &f.exps[stmt.exp]
        else {
            stmts.push(stmt);
            continue;
        };
        let (array, items) = (*array, items.clone());
        let [IndexItem::Fix(first), IndexItem::Fix(second)] = items[..] else {
            stmts.push(stmt);
            continue;
        };
        let row_ty = match &f.vars[array].ty {
            Type::Array { elem, .. } if matches!(**elem, Type::Array { .. }) => (**elem).clone(),
            _ => {
                stmts.push(stmt);
                continue;
            }
        };
        let (Some(p), Some(q)) = (position(&first), position(&second)) else {
            stmts.push(stmt);
            continue;
        };
        let (Atom::Var(outer), true) = (first, p < q && !bound_inside.contains(&array)) else {
            stmts.push(stmt);
            continue;
        };
        let row = *rows.entry((array, outer)).or_insert_with(|| {
            let name = f.vars[array].name.clone();
            let row = f.vars.alloc(Var { name, ty: row_ty, kind: VarKind::Bound });
            let read = weft_core::Exp::Index {
                array: Atom::Var(array),
                items: vec![IndexItem::Fix(Atom::Var(outer))],
            };
            let exp = f.exps.alloc(Exp::Basic(read));
            if let Some(origin) = f.origins.get(stmt.exp).cloned() {
                f.origins.insert(exp, origin);
            }
            row_stmts.push(Stmt { vars: vec![row], exp });
            row
        });
        f.exps[stmt.exp] = Exp::Basic(weft_core::Exp::Index {
            array: Atom::Var(row),
            items: vec![IndexItem::Fix(second)],
        });
        stmts.push(stmt);
    }
    if row_stmts.is_empty() {
        return;
    }
    row_stmts.extend(stmts);
    let results = f.blocks[body].results.clone();
    f.blocks[body] = Block { stmts: row_stmts, results };
}
