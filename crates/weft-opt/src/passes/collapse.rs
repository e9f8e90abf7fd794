//! Three-dimensional maps as two-dimensional ones (GPU IR to GPU IR, on a GPU).
//!
//! A chosen grid `SegMap` over `(k < a, j < b, i < c)` (a 3-D stencil's
//! `generate nz (\k -> generate ny (\j -> generate nx (\i -> ...)))`) is written back
//! to the code generator as a nest of three `generate`s, which it runs as a
//! two-dimensional NDRange over the outer two with a loop over `i` in each work-item:
//! neighbouring work-items then read elements `c` apart, and there are only `a*b` of
//! them (Parboil's stencil: 10x slower than `torch.compile` on the H100). This pass
//! merges the outer two dimensions:
//!
//! ```text
//! merged: [a*b][c]t = segmap@grid (q < a*b, i < c)  let k = q / b; let j = q % b in BODY
//! result: [a][b][c]t = unflatten a b merged          (a view: no copy)
//! ```
//!
//! so the innermost dimension stays the fastest one across work-items (coalesced) and
//! every point has its own work-item.

use weft_core::{Atom, BinOp, Type, Var, VarId, VarKind};
use weft_hir::{Name, ScalarTy};

use crate::ir::{Block, Exp, GpuFunction, GpuProgram, SegKind, SegLevel, SegOp, Stmt};
use crate::passes::host::{atom_size, rewrite_host_stmts};

/// Merges the outer two dimensions of every chosen three-dimensional grid `SegMap`.
pub fn collapse_outer_dimensions(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        let body = f.body;
        rewrite_host_stmts(f, body, &mut |f, stmt, out| match f.exps[stmt.exp].clone() {
            Exp::Seg(seg)
                if seg.level == SegLevel::Grid
                    && !seg.pinned
                    && seg.kind == SegKind::Map
                    && seg.space.len() == 3 =>
            {
                collapse(f, &stmt, seg, out);
            }
            _ => out.push(stmt),
        });
    }
    out
}

fn collapse(f: &mut GpuFunction, stmt: &Stmt, mut seg: SegOp, out: &mut Vec<Stmt>) {
    let [(k, a), (j, b), (i, c)] = seg.space[..] else { return out.push(stmt.clone()) };
    // Each result's rows of rows: `[a][b]row`.
    let mut rows = Vec::new();
    for &result in &stmt.vars {
        let Type::Array { elem, .. } = &f.vars[result].ty else { return out.push(stmt.clone()) };
        let Type::Array { elem: row, .. } = &**elem else { return out.push(stmt.clone()) };
        rows.push((result, (**row).clone()));
    }
    let origin = seg.origins.first().cloned();
    let bind = |f: &mut GpuFunction, out: &mut Vec<Stmt>, var: VarId, exp: Exp| {
        let id = f.exps.alloc(exp);
        if let Some(origin) = &origin {
            f.origins.insert(id, origin.clone());
        }
        out.push(Stmt { vars: vec![var], exp: id });
    };
    let i64_var = |f: &mut GpuFunction, name: &str| {
        let ty = Type::Scalar(ScalarTy::I64);
        f.vars.alloc(Var { name: Name::new(name), ty, kind: VarKind::Bound })
    };
    let binop =
        |op, lhs, rhs| Exp::Basic(weft_core::Exp::BinOp { op, ty: ScalarTy::I64, lhs, rhs });

    let merged_size = i64_var(f, "points");
    bind(f, out, merged_size, binop(BinOp::Mul, a, b));
    // The body first recovers the outer two indices from the merged one.
    let q = i64_var(f, "q");
    let mut body = Vec::new();
    bind(f, &mut body, k, binop(BinOp::Div, Atom::Var(q), b));
    bind(f, &mut body, j, binop(BinOp::Rem, Atom::Var(q), b));
    body.extend(f.blocks[seg.body].stmts.iter().cloned());
    let results = f.blocks[seg.body].results.clone();
    seg.body = f.blocks.alloc(Block { stmts: body, results });
    seg.space = vec![(q, Atom::Var(merged_size)), (i, c)];

    // Each result `[a][b][c]t` is a view of a merged `[a*b][c]t`.
    let mut merged_vars = Vec::new();
    let mut views = Vec::new();
    for (result, row) in rows {
        let merged_ty = Type::array(atom_size(Atom::Var(merged_size)), row);
        let name = f.vars[result].name.clone();
        let merged = f.vars.alloc(Var { name, ty: merged_ty, kind: VarKind::Bound });
        merged_vars.push(merged);
        views.push((result, merged));
    }
    let id = f.exps.alloc(Exp::Seg(seg));
    if let Some(origin) = &origin {
        f.origins.insert(id, origin.clone());
    }
    out.push(Stmt { vars: merged_vars, exp: id });
    for (result, merged) in views {
        let view = weft_core::Exp::Unflatten { rows: a, cols: b, array: Atom::Var(merged) };
        bind(f, out, result, Exp::Basic(view));
    }
}
