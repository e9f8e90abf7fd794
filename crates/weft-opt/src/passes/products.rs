//! Tiled matrix products (MIDDLE.md's pass 4, GPU IR to GPU IR, GPU only): a chosen
//! `segred@grid` over `(i < n, j < m, k < K)` with one commutative scalar operator whose
//! body reads row `i` of one array and row `j` of another at `k` (the fully flattened
//! version of a matrix product, after `read_rows`) is what the code generator computes
//! as a tiled product (blocks of the result per work-group and per work-item, columns
//! of `k` staged in local memory: `weft-lower`'s `gpu/product.rs`). That strategy is
//! faster than the versions incremental flattening makes for such a nest (a work-item
//! per element, or per row) at every size that fills a GPU, so the versions around it
//! are dropped: the product is the fully flattened version alone.

use weft_core::{Atom, IndexItem, VarId};

use crate::ir::{BlockId, Exp, ExpId, GpuFunction, GpuProgram, SegKind, SegLevel, SegOp, Stmt};

/// The reads a tiled product stages: the statements `a = X[i]`, `b = Y[j]` (views of
/// arrays bound outside the body) and `x = a[k]`, `y = b[k]`.
pub struct ProductReads {
    pub rows: [Stmt; 2],
    pub elements: [Stmt; 2],
}

/// The reads of a product, when `seg`'s body has exactly that shape and `k` is read
/// nowhere else.
pub fn product_reads(f: &GpuFunction, seg: &SegOp) -> Option<ProductReads> {
    let [(i, _), (j, _), (k, _)] = seg.space[..] else { return None };
    let body = &f.blocks[seg.body];
    let fixed = |stmt: &Stmt| match &f.exps[stmt.exp] {
        Exp::Basic(weft_core::Exp::Index { array: Atom::Var(v), items }) => match &items[..] {
            [IndexItem::Fix(Atom::Var(index))] => Some((*v, *index)),
            _ => None,
        },
        _ => None,
    };
    let bound_here: Vec<VarId> = body.stmts.iter().flat_map(|s| s.vars.iter().copied()).collect();
    let row = |outer: VarId| {
        body.stmts
            .iter()
            .find(|s| fixed(s).is_some_and(|(v, index)| index == outer && !bound_here.contains(&v)))
    };
    let (row_a, row_b) = (row(i)?.clone(), row(j)?.clone());
    let element = |row: &Stmt| {
        body.stmts
            .iter()
            .find(|s| fixed(s).is_some_and(|(v, index)| v == row.vars[0] && index == k))
    };
    let (x, y) = (element(&row_a)?.clone(), element(&row_b)?.clone());
    // `k`, `a` and `b` are read by those statements only.
    let mut reads = Vec::new();
    for stmt in &body.stmts {
        crate::passes::fuse::reads_in(f, stmt, &mut reads);
    }
    reads.extend(body.results.iter().filter_map(|a| match a {
        Atom::Var(v) => Some(*v),
        Atom::Const(_) => None,
    }));
    let count = |v: VarId| reads.iter().filter(|r| **r == v).count();
    if count(k) != 2 || count(row_a.vars[0]) != 1 || count(row_b.vars[0]) != 1 {
        return None;
    }
    Some(ProductReads { rows: [row_a, row_b], elements: [x, y] })
}

/// Replaces every version whose fully flattened branch is a tiled product by that
/// branch.
pub fn prefer_tiled_products(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        let body = f.body;
        prefer_in(f, body);
    }
    out
}

/// [`prefer_tiled_products`] in a block of host code and the host blocks nested in it.
fn prefer_in(f: &mut GpuFunction, block: BlockId) {
    let mut stmts = Vec::with_capacity(f.blocks[block].stmts.len());
    for stmt in f.blocks[block].stmts.clone() {
        let flat = match &f.exps[stmt.exp] {
            Exp::Version { .. } => fully_flattened(f, stmt.exp).filter(|&b| holds_product(f, b)),
            _ => None,
        };
        if let Some(flat) = flat {
            stmts.extend(f.blocks[flat].stmts.clone());
            for (&var, &result) in stmt.vars.iter().zip(&f.blocks[flat].results.clone()) {
                let exp = f.exps.alloc(Exp::Basic(weft_core::Exp::Atom(result)));
                stmts.push(Stmt { vars: vec![var], exp });
            }
            continue;
        }
        match f.exps[stmt.exp].clone() {
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                prefer_in(f, then_branch);
                prefer_in(f, else_branch);
            }
            Exp::Loop { body, .. } => prefer_in(f, body),
            _ => {}
        }
        stmts.push(stmt);
    }
    f.blocks[block].stmts = stmts;
}

/// The innermost `else` of a version (and of the versions that are all of an `else`).
fn fully_flattened(f: &GpuFunction, version: ExpId) -> Option<BlockId> {
    let Exp::Version { else_branch, .. } = &f.exps[version] else { return None };
    let block = &f.blocks[*else_branch];
    let nested = block.stmts.iter().find(|s| {
        matches!(f.exps[s.exp], Exp::Version { .. })
            && block.results.iter().all(|r| matches!(r, Atom::Var(v) if s.vars.contains(v)))
    });
    match nested {
        Some(stmt) => fully_flattened(f, stmt.exp),
        None => Some(*else_branch),
    }
}

/// Whether the block is a tiled product and elementwise code of the result's shape
/// around it (an epilogue such as `alpha * A*B + beta * C`), not a product whose rows
/// another reduction consumes (k-means' distances, whose minimum the outer version takes
/// without writing them).
fn holds_product(f: &GpuFunction, block: BlockId) -> bool {
    let mut products = 0;
    for stmt in &f.blocks[block].stmts {
        if let Exp::Seg(seg) = &f.exps[stmt.exp] {
            match &seg.kind {
                SegKind::Map if seg.space.len() == 2 => {}
                _ if is_tiled_product(f, seg) && stmt.vars.len() == 1 => products += 1,
                _ => return false,
            }
        }
    }
    products == 1
}

/// Whether the code generator computes `seg` as a tiled product.
pub fn is_tiled_product(f: &GpuFunction, seg: &SegOp) -> bool {
    let SegKind::Red(ops) = &seg.kind else { return false };
    seg.level == SegLevel::Grid
        && !seg.pinned
        && matches!(&ops[..], [op] if op.commutative && op.arity() == 1)
        && product_reads(f, seg).is_some()
}
