//! Vertical fusion on the GPU IR (MIDDLE.md, pass 2): a chosen `SegMap` whose result
//! is read only by one later SegOp of the same block and level, element by element at
//! that SegOp's own point, is computed inside it instead (a map into a map, a
//! reduction or a scan: Futhark's redomap and scanomap). The producer's array is then
//! never written.
//!
//! Never across a written (pinned) level, and never when the consumer reads the
//! producer at another point (that would recompute elements, the quadratic trap the
//! staged translator fell into).

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, VarId};

use crate::ir::{BlockId, Exp, GpuFunction, GpuProgram, SegKind, SegOp, Stmt};
use crate::passes::copy::Copier;

/// Fuses producers into consumers in every function until nothing changes.
pub fn fuse(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        while fuse_once(f) {}
    }
    out
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
    for block in sibling_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        for (p, producer_stmt) in stmts.iter().enumerate() {
            let Exp::Seg(producer) = &f.exps[producer_stmt.exp] else { continue };
            let [array] = producer_stmt.vars.as_slice() else { continue };
            if producer.pinned || producer.kind != SegKind::Map {
                continue;
            }
            let Some(total) = counts.get(array).copied() else { continue };
            for consumer_stmt in &stmts[p + 1..] {
                let Exp::Seg(consumer) = &f.exps[consumer_stmt.exp] else { continue };
                if consumer.pinned || consumer.level != producer.level {
                    continue;
                }
                let reads = element_reads(f, consumer, *array, producer);
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

/// The statements of the consumer's body that read `array` at the consumer's own
/// point, when the producer's space is the consumer's (same bounds); empty when any
/// read is of another kind.
fn element_reads(f: &GpuFunction, consumer: &SegOp, array: VarId, producer: &SegOp) -> Vec<usize> {
    if producer.space.len() != consumer.space.len()
        || producer.space.iter().zip(&consumer.space).any(|(p, c)| p.1 != c.1)
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
