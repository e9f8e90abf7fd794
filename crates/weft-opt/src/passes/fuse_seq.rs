//! Fusion of sequential combinators (MIDDLE.md's pass 2 inside SegOp bodies; GPU IR to
//! GPU IR): the code a work-item runs keeps no array it can avoid.
//!
//! A `map@seq` or `generate@seq` whose result is read once, by a later statement of the
//! same block that traverses it in order, is computed inside that statement:
//!
//! - into a `reduce@seq` (Futhark's redomap, sequentialised): one loop whose
//!   accumulator starts at the neutral element and takes each mapped element,
//!
//!   ```text
//!   let t = map@seq (xs) \x -> f x
//!   let r = reduce@seq ne t \a b -> op a b
//!   ==>
//!   let r = loop acc = ne for i < length xs do
//!             let x = xs[i]   let b = f x   let a = acc   in op a b
//!   ```
//!
//! - into a `map@seq` that reads it: one map over the producer's arrays (and the
//!   consumer's others) whose lambda runs the producer's body, then the consumer's.
//!
//! Without this, the outer-parallel version of a row's mean of squares would write each
//! row's squares to memory (private or expanded per work-item) and read them back.
//!
//! A `reduce@seq` whose elements are arrays (the row of the largest first element) and
//! that nothing fused into becomes the same loop over its array's rows: the code
//! generator keeps a loop's array accumulator in memory of its own (weft-mem), which a
//! combinator's element-wise accumulators cannot be.

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, Type, Var, VarId, VarKind};
use weft_hir::{Name, ScalarTy};

use crate::ir::{Block, BlockId, Exp, GpuFunction, GpuProgram, LoopForm, SeqSoac, Stmt};

/// Fuses sequential producers into their consumers in every function, until none is
/// left to fuse.
pub fn fuse_sequential(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        while fuse_once(f) {}
        reductions_of_arrays_as_loops(f);
    }
    out
}

/// `let r = reduce@seq op ne xs` whose `ne` holds an array: `loop acc = ne for i <
/// length xs do op acc xs[i]`.
fn reductions_of_arrays_as_loops(f: &mut GpuFunction) {
    let blocks: Vec<BlockId> = f.blocks.iter().map(|(id, _)| id).collect();
    for block in blocks {
        let mut stmts = Vec::new();
        for stmt in f.blocks[block].stmts.clone() {
            match f.exps[stmt.exp].clone() {
                Exp::Seq(SeqSoac::Reduce { lambda, neutral, array: array @ Atom::Var(_) })
                    if stmt.vars.len() == 1 && f.vars[stmt.vars[0]].ty.has_array() =>
                {
                    // Its elements as an identity map over its array: the loop reads
                    // row `i` where a fused producer would compute its element.
                    let row = new_var(f, "row", f.vars[lambda.params[1]].ty.clone());
                    let body =
                        f.blocks.alloc(Block { stmts: Vec::new(), results: vec![Atom::Var(row)] });
                    let rows = SeqSoac::Map {
                        lambda: crate::ir::Lambda { params: vec![row], body },
                        arrays: vec![array],
                    };
                    let (exp, length) = into_reduce(f, &rows, &lambda, neutral, &stmt);
                    stmts.extend(length);
                    stmts.push(Stmt { vars: stmt.vars.clone(), exp });
                }
                _ => stmts.push(stmt),
            }
        }
        f.blocks[block].stmts = stmts;
    }
}

fn fuse_once(f: &mut GpuFunction) -> bool {
    let counts = use_counts(f);
    let blocks: Vec<BlockId> = f.blocks.iter().map(|(id, _)| id).collect();
    for block in blocks {
        let stmts = f.blocks[block].stmts.clone();
        for (a, producer) in stmts.iter().enumerate() {
            let (Exp::Seq(soac @ (SeqSoac::Map { .. } | SeqSoac::Generate { .. })), [t]) =
                (&f.exps[producer.exp], producer.vars.as_slice())
            else {
                continue;
            };
            let soac = soac.clone();
            let t = *t;
            if counts.get(&t).copied() != Some(1) || f.blocks[block].results.contains(&Atom::Var(t))
            {
                continue;
            }
            for (b, consumer) in stmts.iter().enumerate().skip(a + 1) {
                let fused = match f.exps[consumer.exp].clone() {
                    Exp::Seq(SeqSoac::Reduce { lambda, neutral, array: Atom::Var(x) })
                        if x == t =>
                    {
                        Some(into_reduce(f, &soac, &lambda, neutral, consumer))
                    }
                    Exp::Seq(SeqSoac::Map { lambda, arrays })
                        if arrays.contains(&Atom::Var(t))
                            && matches!(soac, SeqSoac::Map { .. }) =>
                    {
                        Some((into_map(f, &soac, &lambda, &arrays, t), None))
                    }
                    Exp::Seq(SeqSoac::Map { lambda, arrays })
                        if arrays.contains(&Atom::Var(t))
                            && matches!(soac, SeqSoac::Generate { .. }) =>
                    {
                        Some((generate_into_map(f, &soac, &lambda, &arrays, t), None))
                    }
                    _ => None,
                };
                let Some((exp, length)) = fused else { continue };
                let mut new_stmts = stmts.clone();
                new_stmts[b] = Stmt { vars: consumer.vars.clone(), exp };
                // The loop's bound (a reduce's) is bound right before it.
                if let Some(length) = length {
                    new_stmts.insert(b, length);
                }
                new_stmts.remove(a);
                f.blocks[block].stmts = new_stmts;
                return true;
            }
        }
    }
    false
}

fn new_var(f: &mut GpuFunction, name: &str, ty: Type) -> VarId {
    f.vars.alloc(Var { name: Name::new(name), ty, kind: VarKind::Bound })
}

fn let_stmt(f: &mut GpuFunction, var: VarId, exp: weft_core::Exp) -> Stmt {
    let exp = f.exps.alloc(Exp::Basic(exp));
    Stmt { vars: vec![var], exp }
}

/// The statements binding the producer lambda's parameters at index `i`, and its body's
/// statements; its result.
fn producer_at(f: &mut GpuFunction, soac: &SeqSoac, i: VarId, out: &mut Vec<Stmt>) -> Atom {
    match soac {
        SeqSoac::Map { lambda, arrays } => {
            for (&p, &array) in lambda.params.iter().zip(arrays) {
                let s = let_stmt(
                    f,
                    p,
                    weft_core::Exp::Index { array, items: vec![IndexItem::Fix(Atom::Var(i))] },
                );
                out.push(s);
            }
            out.extend(f.blocks[lambda.body].stmts.clone());
            f.blocks[lambda.body].results[0]
        }
        SeqSoac::Generate { lambda, .. } => {
            let s = let_stmt(f, lambda.params[0], weft_core::Exp::Atom(Atom::Var(i)));
            out.push(s);
            out.extend(f.blocks[lambda.body].stmts.clone());
            f.blocks[lambda.body].results[0]
        }
        SeqSoac::Reduce { .. } | SeqSoac::Scan { .. } | SeqSoac::Hist { .. } => Atom::Var(i),
    }
}

fn into_reduce(
    f: &mut GpuFunction,
    producer: &SeqSoac,
    op: &crate::ir::Lambda,
    neutral: Atom,
    consumer: &Stmt,
) -> (ExpIdOf, Option<Stmt>) {
    let result = consumer.vars[0];
    let acc_ty = f.vars[result].ty.clone();
    let acc = new_var(f, "acc", acc_ty);
    let i = new_var(f, "i", Type::Scalar(ScalarTy::I64));
    // The loop's bound: the producer's length.
    let (bound, length) = match producer {
        SeqSoac::Map { arrays, .. } => {
            let n = new_var(f, "n", Type::Scalar(ScalarTy::I64));
            let s = let_stmt(f, n, weft_core::Exp::Dim { array: arrays[0], dim: 0 });
            (Atom::Var(n), Some(s))
        }
        SeqSoac::Generate { size, .. } => (*size, None),
        SeqSoac::Reduce { .. } | SeqSoac::Scan { .. } | SeqSoac::Hist { .. } => {
            (Atom::Var(i), None)
        }
    };
    let mut body = Vec::new();
    let element = producer_at(f, producer, i, &mut body);
    let a = let_stmt(f, op.params[0], weft_core::Exp::Atom(Atom::Var(acc)));
    body.push(a);
    let b = let_stmt(f, op.params[1], weft_core::Exp::Atom(element));
    body.push(b);
    body.extend(f.blocks[op.body].stmts.clone());
    let results = f.blocks[op.body].results.clone();
    let body = f.blocks.alloc(Block { stmts: body, results });
    let exp = f.exps.alloc(Exp::Loop {
        param: acc,
        init: neutral,
        form: LoopForm::For { index: i, bound },
        body,
    });
    (exp, length)
}

type ExpIdOf = crate::ir::ExpId;

fn into_map(
    f: &mut GpuFunction,
    producer: &SeqSoac,
    consumer: &crate::ir::Lambda,
    arrays: &[Atom],
    t: VarId,
) -> ExpIdOf {
    let SeqSoac::Map { lambda: produce, arrays: inputs } = producer else {
        unreachable!("into_map is called with a map producer")
    };
    let mut params = Vec::new();
    let mut new_arrays = Vec::new();
    let mut bind_t = None;
    for (&p, &array) in consumer.params.iter().zip(arrays) {
        if array == Atom::Var(t) {
            bind_t = Some(p);
        } else {
            params.push(p);
            new_arrays.push(array);
        }
    }
    params.extend(produce.params.iter().copied());
    new_arrays.extend(inputs.iter().copied());
    let mut body = f.blocks[produce.body].stmts.clone();
    let element = f.blocks[produce.body].results[0];
    if let Some(p) = bind_t {
        let s = let_stmt(f, p, weft_core::Exp::Atom(element));
        body.push(s);
    }
    body.extend(f.blocks[consumer.body].stmts.clone());
    let results = f.blocks[consumer.body].results.clone();
    let body = f.blocks.alloc(Block { stmts: body, results });
    f.exps.alloc(Exp::Seq(SeqSoac::Map {
        lambda: crate::ir::Lambda { params, body },
        arrays: new_arrays,
    }))
}

/// `map@seq g (.., generate@seq n p, ..)`: a `generate@seq n` whose lambda reads the
/// other arrays at its index and runs the producer's body for the generated one.
fn generate_into_map(
    f: &mut GpuFunction,
    producer: &SeqSoac,
    consumer: &crate::ir::Lambda,
    arrays: &[Atom],
    t: VarId,
) -> ExpIdOf {
    let SeqSoac::Generate { size, .. } = producer else {
        unreachable!("generate_into_map is called with a generate producer")
    };
    let size = *size;
    let i = new_var(f, "i", Type::Scalar(ScalarTy::I64));
    let mut body = Vec::new();
    for (&p, &array) in consumer.params.iter().zip(arrays) {
        if array == Atom::Var(t) {
            let element = producer_at(f, producer, i, &mut body);
            let s = let_stmt(f, p, weft_core::Exp::Atom(element));
            body.push(s);
        } else {
            let s = let_stmt(
                f,
                p,
                weft_core::Exp::Index { array, items: vec![IndexItem::Fix(Atom::Var(i))] },
            );
            body.push(s);
        }
    }
    body.extend(f.blocks[consumer.body].stmts.clone());
    let results = f.blocks[consumer.body].results.clone();
    let body = f.blocks.alloc(Block { stmts: body, results });
    f.exps.alloc(Exp::Seq(SeqSoac::Generate {
        size,
        lambda: crate::ir::Lambda { params: vec![i], body },
    }))
}

/// How often each variable is read by code reachable from the function's body.
fn use_counts(f: &GpuFunction) -> FxHashMap<VarId, usize> {
    let mut counts = FxHashMap::default();
    let mut stack = vec![f.body];
    while let Some(block) = stack.pop() {
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            for atom in exp.operands() {
                if let Atom::Var(v) = atom {
                    *counts.entry(v).or_default() += 1;
                }
            }
            stack.extend(exp.nested_blocks());
        }
        for &atom in &f.blocks[block].results {
            if let Atom::Var(v) = atom {
                *counts.entry(v).or_default() += 1;
            }
        }
    }
    counts
}
