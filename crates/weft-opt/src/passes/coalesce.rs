//! Coalescing by transposition (MIDDLE.md, "Memory"; Futhark's coalescing pass): a
//! chosen `grid` SegOp whose work-items each read their own row of a two-dimensional
//! array `A` (`A[i]`, `i` the innermost index of the space, so neighbouring work-items
//! read rows one row apart) and traverse that row *repeatedly* gets a transposed copy
//! of `A` (`manifest (1, 0) A`) made before it and reads the copy instead: element `j`
//! of neighbouring work-items' rows is then at neighbouring addresses.
//!
//! Why only repeated traversals (the cost rule): the copy reads and writes `A` once. A
//! single sequential pass over each row reads every cache line of `A` once from memory
//! either way, so the copy would double the traffic; a row traversed again and again
//! (k-means reads its point once per centroid) is re-read through the cache, where a
//! warp's uncoalesced read costs one transaction per work-item each time.
//!
//! The value of the copy is `A`'s, so the rewrite never changes a result. A level the
//! program wrote gets the copy too: the copy changes where the data lies, not the
//! strategy (seed 003 is about levels), and "Make strategy explicit" must give the
//! program that compiles to the same kernels.

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, VarId};

use crate::ir::{BlockId, Exp, GpuFunction, GpuProgram, SegLevel, SeqSoac, Stmt};

/// Adds a transposed copy for every array that a grid SegOp's work-items read row by
/// row repeatedly, in every function.
pub fn coalesce(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        let body = f.body;
        coalesce_host_block(f, body);
    }
    out
}

/// Rewrites the grid SegOps of a host-level block (and of host-level blocks nested in
/// its branches, versions and loops).
fn coalesce_host_block(f: &mut GpuFunction, block: BlockId) {
    let mut stmts = Vec::with_capacity(f.blocks[block].stmts.len());
    // One copy per array per block, made before its first reader.
    let mut copies: FxHashMap<VarId, VarId> = FxHashMap::default();
    for stmt in f.blocks[block].stmts.clone() {
        match f.exps[stmt.exp].clone() {
            Exp::Seg(seg) if seg.level == SegLevel::Grid => {
                let Some((index, _)) = seg.space.last() else {
                    stmts.push(stmt);
                    continue;
                };
                for (read, array) in repeated_row_reads(f, seg.body, *index) {
                    let copy = *copies.entry(array).or_insert_with(|| {
                        let var = f.vars[array].clone();
                        let copy = f.vars.alloc(var);
                        let exp = f.exps.alloc(Exp::Manifest { array: Atom::Var(array) });
                        stmts.push(Stmt { vars: vec![copy], exp });
                        copy
                    });
                    if let Exp::Basic(weft_core::Exp::Index { array: a, .. }) = &mut f.exps[read] {
                        *a = Atom::Var(copy);
                    }
                }
                stmts.push(stmt);
            }
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                coalesce_host_block(f, then_branch);
                coalesce_host_block(f, else_branch);
                stmts.push(stmt);
            }
            Exp::Loop { body, .. } => {
                coalesce_host_block(f, body);
                stmts.push(stmt);
            }
            Exp::Basic(_) | Exp::Manifest { .. } | Exp::Seq(_) | Exp::Seg(_) => stmts.push(stmt),
        }
    }
    f.blocks[block].stmts = stmts;
}

/// The statements of a SegOp body that read a row `A[index]` of a two-dimensional
/// array bound outside the body, whose row the body then traverses repeatedly, with
/// the array.
fn repeated_row_reads(
    f: &GpuFunction,
    body: BlockId,
    index: VarId,
) -> Vec<(crate::ir::ExpId, VarId)> {
    let mut bound = Vec::new();
    bound_in(f, body, &mut bound);
    let mut out = Vec::new();
    for stmt in &f.blocks[body].stmts {
        let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(array), items }) =
            &f.exps[stmt.exp]
        else {
            continue;
        };
        let [IndexItem::Fix(Atom::Var(i))] = items.as_slice() else { continue };
        let [row] = stmt.vars.as_slice() else { continue };
        let two_dimensional = f.vars[*array].ty.elem().is_some_and(|r| r.outer_size().is_some());
        let long_rows = f.vars[*row].ty.outer_size().is_some_and(|m| m.as_constant() != Some(1));
        if *i == index
            && two_dimensional
            && long_rows
            && !bound.contains(array)
            && traversals(f, body, *row, 0) > 1
        {
            out.push((stmt.exp, *array));
        }
    }
    out
}

/// How many times per work-item the code of `block` (at loop depth `depth`) traverses
/// `row`: a sequential combinator over it is one traversal, or many inside another
/// combinator or loop (counted as two: the rule only asks "more than once").
fn traversals(f: &GpuFunction, block: BlockId, row: VarId, depth: usize) -> usize {
    let mut count = 0;
    for stmt in &f.blocks[block].stmts {
        let exp = &f.exps[stmt.exp];
        if let Exp::Seq(soac) = exp {
            let arrays: Vec<Atom> = match soac {
                SeqSoac::Map { arrays, .. } => arrays.clone(),
                SeqSoac::Reduce { array, .. } | SeqSoac::Scan { array, .. } => vec![*array],
                SeqSoac::Hist { indices, values, .. } => vec![*indices, *values],
                SeqSoac::Generate { .. } => Vec::new(),
            };
            if arrays.contains(&Atom::Var(row)) {
                count += if depth == 0 { 1 } else { 2 };
            }
        }
        let inner = match exp {
            Exp::Seq(_) | Exp::Loop { .. } => depth + 1,
            Exp::Basic(_)
            | Exp::Manifest { .. }
            | Exp::If { .. }
            | Exp::Version { .. }
            | Exp::Seg(_) => depth,
        };
        for nested in exp.nested_blocks() {
            count += traversals(f, nested, row, inner);
        }
    }
    count
}

/// Every variable bound in a block, nested code included.
fn bound_in(f: &GpuFunction, block: BlockId, out: &mut Vec<VarId>) {
    for stmt in &f.blocks[block].stmts {
        out.extend(&stmt.vars);
        for nested in f.exps[stmt.exp].nested_blocks() {
            bound_in(f, nested, out);
        }
    }
}
