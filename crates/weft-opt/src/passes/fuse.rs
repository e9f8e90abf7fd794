//! Vertical fusion on the GPU IR (MIDDLE.md, pass 2): a `SegMap` whose result
//! is read only by one later SegOp of the same block and level, element by element at
//! that SegOp's own point, is computed inside it instead (a map into a map, a
//! reduction or a scan: Futhark's redomap and scanomap). The producer's array is then
//! never written.
//!
//! Never across levels: a written (pinned) producer fuses only into a consumer at its
//! own level, which keeps it there (LANGUAGE.md §6: annotated producers and consumers
//! at the same level still fuse, as pull arrays do in FCL). Never when the consumer
//! reads the producer at another point (that would recompute elements, the quadratic
//! trap the staged translator fell into).
//!
//! Horizontal fusion: two chosen `SegRed`s of one block over the same space, the later
//! not reading the earlier's results and nothing between them reading those, become
//! one `SegRed` with both operators (a row's sum and sum of squares in one pass over
//! the row), when every value they reduce is a scalar (a tuple-valued reduction, an
//! argmax say, stays on its own).

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, VarId};

use crate::ir::{BlockId, Exp, GpuFunction, GpuProgram, SegKind, SegOp, Stmt};
use crate::passes::copy::Copier;

/// Fuses producers into consumers, then siblings, in every function until nothing
/// changes.
pub fn fuse(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        while fuse_once(f) || fuse_siblings_once(f) {}
    }
    out
}

/// Merges one pair of sibling reductions; whether it found one.
fn fuse_siblings_once(f: &mut GpuFunction) -> bool {
    for block in sibling_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        for (a, first) in stmts.iter().enumerate() {
            let Exp::Seg(first_seg) = &f.exps[first.exp] else { continue };
            // Siblings at one level merge whether the program wrote their levels or
            // not: each keeps its level (seed 003), and a written level and a chosen one
            // give the same kernel as two chosen ones ("Make strategy explicit" writes
            // the level of one and leaves the other, whose origin the merged kernel
            // does not name).
            if !matches!(first_seg.kind, SegKind::Red(_)) {
                continue;
            }
            for (b, second) in stmts.iter().enumerate().skip(a + 1) {
                let Exp::Seg(second_seg) = &f.exps[second.exp] else { continue };
                let same_space = first_seg.space.len() == second_seg.space.len()
                    && first_seg.space.iter().zip(&second_seg.space).all(|(x, y)| x.1 == y.1);
                if second_seg.level != first_seg.level
                    || !matches!(second_seg.kind, SegKind::Red(_))
                    || !same_space
                {
                    continue;
                }
                // Neither the second nor anything between may read the first's results.
                let reads_first = stmts[a + 1..=b].iter().any(|s| {
                    let mut reads = Vec::new();
                    reads_in(f, s, &mut reads);
                    reads.iter().any(|v| first.vars.contains(v))
                });
                // Merged reductions combine a tuple of their values; a value that is
                // itself a tuple would nest tuples, which arrays of tuples (stored as
                // tuples of arrays) do not represent.
                let scalar =
                    |vars: &[VarId]| vars.iter().all(|v| f.vars[*v].ty.as_scalar().is_some());
                if reads_first || !scalar(&first.vars) || !scalar(&second.vars) {
                    continue;
                }
                merge_siblings(f, block, a, b);
                return true;
            }
        }
    }
    false
}

/// Every variable a statement reads, nested code included.
pub fn reads_in(f: &GpuFunction, stmt: &Stmt, out: &mut Vec<VarId>) {
    let exp = &f.exps[stmt.exp];
    out.extend(exp.operands().into_iter().filter_map(|a| match a {
        Atom::Var(v) => Some(v),
        Atom::Const(_) => None,
    }));
    for nested in exp.nested_blocks() {
        for inner in &f.blocks[nested].stmts {
            reads_in(f, inner, out);
        }
        out.extend(f.blocks[nested].results.iter().filter_map(|a| match a {
            Atom::Var(v) => Some(*v),
            Atom::Const(_) => None,
        }));
    }
}

/// Replaces the sibling reductions at `a` and `b` (`a < b`) of `block` by one at `b`
/// computing both: the second's body is copied into the first's at the first's point.
fn merge_siblings(f: &mut GpuFunction, block: BlockId, a: usize, b: usize) {
    let first = f.blocks[block].stmts[a].clone();
    let second = f.blocks[block].stmts[b].clone();
    let (Exp::Seg(mut merged), Exp::Seg(other)) =
        (f.exps[first.exp].clone(), f.exps[second.exp].clone())
    else {
        return;
    };
    let subst =
        other.space.iter().zip(&merged.space).map(|((o, _), (m, _))| (*o, Atom::Var(*m))).collect();
    let mut copier = Copier { subst };
    let mut body = f.blocks[merged.body].stmts.clone();
    let mut results = f.blocks[merged.body].results.clone();
    results.extend(copier.stmts_into(f, other.body, &mut body));
    merged.body = f.blocks.alloc(crate::ir::Block { stmts: body, results });
    if let (SegKind::Red(ops), SegKind::Red(other_ops)) = (&mut merged.kind, other.kind) {
        ops.extend(other_ops);
    }
    merged.origins.extend(other.origins);
    merged.pinned |= other.pinned;
    let exp = f.exps.alloc(Exp::Seg(merged));
    let mut vars = first.vars.clone();
    vars.extend(second.vars.iter().copied());
    f.blocks[block].stmts[b] = Stmt { vars, exp };
    f.blocks[block].stmts.remove(a);
}

/// How often each variable is read by code reachable from the function's body.
fn use_counts(f: &GpuFunction) -> FxHashMap<VarId, usize> {
    let mut counts = FxHashMap::default();
    count_block(f, f.body, &mut counts);
    counts
}

fn count_block(f: &GpuFunction, block: BlockId, counts: &mut FxHashMap<VarId, usize>) {
    for stmt in &f.blocks[block].stmts {
        let exp = &f.exps[stmt.exp];
        for atom in exp.operands() {
            if let Atom::Var(v) = atom {
                *counts.entry(v).or_default() += 1;
            }
        }
        for nested in exp.nested_blocks() {
            count_block(f, nested, counts);
        }
    }
    for &atom in &f.blocks[block].results {
        if let Atom::Var(v) = atom {
            *counts.entry(v).or_default() += 1;
        }
    }
}

/// The blocks whose statements may hold sibling SegOps: host blocks and the bodies of
/// `group` SegOps (and the loops in them).
fn sibling_blocks(f: &GpuFunction) -> Vec<BlockId> {
    let mut out = Vec::new();
    let mut stack = vec![f.body];
    while let Some(block) = stack.pop() {
        out.push(block);
        for stmt in &f.blocks[block].stmts {
            match &f.exps[stmt.exp] {
                Exp::If { then_branch, else_branch, .. }
                | Exp::Version { then_branch, else_branch, .. } => {
                    stack.extend([*then_branch, *else_branch]);
                }
                Exp::Loop { body, .. } => stack.push(*body),
                Exp::Seg(seg) if seg.level == crate::ir::SegLevel::Group => stack.push(seg.body),
                _ => {}
            }
        }
    }
    out
}

fn fuse_once(f: &mut GpuFunction) -> bool {
    let counts = use_counts(f);
    let sizes = crate::sizes::SizeValues::of(f);
    for block in sibling_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        for (p, producer_stmt) in stmts.iter().enumerate() {
            let Exp::Seg(producer) = &f.exps[producer_stmt.exp] else { continue };
            let [array] = producer_stmt.vars.as_slice() else { continue };
            if producer.kind != SegKind::Map {
                continue;
            }
            let Some(total) = counts.get(array).copied() else { continue };
            for consumer_stmt in &stmts[p + 1..] {
                let Exp::Seg(consumer) = &f.exps[consumer_stmt.exp] else { continue };
                // A chosen producer may move into a written consumer of its level and a
                // written one into any consumer of its level: neither changes level.
                if consumer.level != producer.level {
                    continue;
                }
                // A scatter or histogram may write its destination in place: a producer
                // that reads it must finish before the first write, so it stays a
                // SegOp of its own (a shift `scatter xs (j + 1) xs[j]`).
                if let SegKind::Scatter { dest: Atom::Var(dest) }
                | SegKind::Hist { dest: Atom::Var(dest), .. } = &consumer.kind
                {
                    let mut read = Vec::new();
                    reads_in(f, producer_stmt, &mut read);
                    let views = views_of(f, *dest);
                    if read.iter().any(|v| views.contains(v)) {
                        continue;
                    }
                }
                let reads = element_reads(f, &sizes, consumer, *array, producer);
                if reads.is_empty() || reads.len() != total {
                    continue;
                }
                let producer = producer.clone();
                let consumer_id = consumer_stmt.exp;
                inline_producer(f, consumer_id, &producer, &reads);
                f.blocks[block].stmts.remove(p);
                return true;
            }
        }
    }
    false
}

/// `array` and the arrays made from it by host expressions of `f` (views such as
/// `reverse`, `transpose` or a slice, and anything else computed from it), transitively.
fn views_of(f: &GpuFunction, array: VarId) -> Vec<VarId> {
    let mut out = vec![array];
    let mut blocks = vec![f.body];
    while let Some(block) = blocks.pop() {
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            if let Exp::Basic(basic) = exp
                && basic.operands().iter().any(|a| matches!(a, Atom::Var(v) if out.contains(v)))
            {
                out.extend(stmt.vars.iter().copied());
            }
            if !matches!(exp, Exp::Seg(_)) {
                blocks.extend(exp.nested_blocks());
            }
        }
    }
    out
}

/// The statements of the consumer's body that read `array` at the consumer's own
/// point, when the producer's space is the consumer's (same bounds); empty when any
/// read is of another kind.
fn element_reads(
    f: &GpuFunction,
    sizes: &crate::sizes::SizeValues,
    consumer: &SegOp,
    array: VarId,
    producer: &SegOp,
) -> Vec<usize> {
    if producer.space.len() != consumer.space.len()
        || producer.space.iter().zip(&consumer.space).any(|(p, c)| !sizes.same(&p.1, &c.1))
    {
        return Vec::new();
    }
    let mut reads = Vec::new();
    for (k, stmt) in f.blocks[consumer.body].stmts.iter().enumerate() {
        let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(read), items }) = &f.exps[stmt.exp]
        else {
            continue;
        };
        if *read != array {
            continue;
        }
        let at_point = items.len() == consumer.space.len()
            && items
                .iter()
                .zip(&consumer.space)
                .all(|(item, (index, _))| *item == IndexItem::Fix(Atom::Var(*index)));
        if !at_point {
            return Vec::new();
        }
        reads.push(k);
    }
    reads
}

/// Replaces each read (statement index in the consumer's body) by a copy of the
/// producer's body at the consumer's point.
fn inline_producer(
    f: &mut GpuFunction,
    consumer_id: crate::ir::ExpId,
    producer: &SegOp,
    reads: &[usize],
) {
    let Exp::Seg(consumer) = f.exps[consumer_id].clone() else { return };
    let body = f.blocks[consumer.body].stmts.clone();
    let mut out = Vec::with_capacity(body.len());
    for (k, stmt) in body.into_iter().enumerate() {
        if !reads.contains(&k) {
            out.push(stmt);
            continue;
        }
        let subst = producer
            .space
            .iter()
            .zip(&consumer.space)
            .map(|((p, _), (c, _))| (*p, Atom::Var(*c)))
            .collect();
        let mut copier = Copier { subst };
        let results = copier.stmts_into(f, producer.body, &mut out);
        let exp = f.exps.alloc(Exp::Basic(weft_core::Exp::Atom(results[0])));
        out.push(Stmt { vars: stmt.vars.clone(), exp });
    }
    f.blocks[consumer.body].stmts = out;
    if let Exp::Seg(seg) = &mut f.exps[consumer_id] {
        seg.origins.extend(producer.origins.iter().cloned());
    }
}
