//! Reductions whose elements are arrays, in an entry's host code (core IR to core IR).
//!
//! `reduce op ne xs` where `ne` holds an array and `op` is not a map over its
//! arguments (interchange turns those into a reduction per column): the row of the
//! largest first element, `reduce (\a b -> if a[0] >= b[0] then a else b) ne xss`.
//! Its operator chooses or combines whole arrays, so work-items cannot combine
//! element by element in a tree; each one folds a chunk of rows in a loop whose
//! accumulator is an array (memory of its own, per work-item), and one work-item then
//! folds the chunks' results:
//!
//! ```text
//! let n = length xs   let g = max 1 (min n G)   let c = (n + g - 1) / g
//! let partials = map@grid (\k -> loop acc = ne for j < c do
//!                                  let i = k*c + j
//!                                  in if i < n then op acc xs[i] else acc) (iota g)
//! let r = (map@grid (\_ -> loop acc = ne for k < g do op acc partials[k]) (iota 1))[0]
//! ```
//!
//! Folding in order within chunks and then over chunks in order needs only the
//! associativity and the neutral element `reduce` promises. `G` is
//! [`CHUNKS_OF_ARRAY_REDUCTIONS`]: both stages' sequential work is then about
//! `n / G + G` applications of `op`.

use rustc_hash::FxHashMap;
use weft_core::{
    Atom, BinOp, Block, CoreSize, Exp, Function, IndexItem, Lambda, LoopForm, Program, Stmt, Type,
    Var, VarId, VarKind,
};
use weft_hir::{Level, MathFn, ScalarTy};

use super::inline::{Copier, replace_stmts};

/// How many work-items fold chunks of a reduction of arrays.
pub const CHUNKS_OF_ARRAY_REDUCTIONS: i64 = 1024;

/// Rewrites every unannotated reduction of arrays in an entry's body (its host code).
pub fn chunk_reductions_of_arrays(program: &Program) -> Program {
    let mut out = program.clone();
    for (_, f) in out.functions.iter_mut() {
        if !f.is_entry {
            continue;
        }
        let body = f.body;
        replace_stmts(f, vec![body], &mut |f, block, stmt| {
            if block != body {
                return None;
            }
            rewrite(f, stmt)
        });
    }
    out
}

fn rewrite(f: &mut Function, stmt: Stmt) -> Option<Vec<Stmt>> {
    let Exp::Reduce { level: None, lambda: op, neutral, array: array @ Atom::Var(_) } =
        f.exps[stmt.exp].clone()
    else {
        return None;
    };
    let elem_ty = f.vars[stmt.var].ty.clone();
    if !elem_ty.has_array() || op.params.len() != 2 {
        return None;
    }
    let origin = f.origins.get(stmt.exp).cloned();
    let i64_ty = Type::Scalar(ScalarTy::I64);
    let int = |v: i64| Atom::Const(weft_values::Scalar::I64(v));
    let v = Atom::Var;
    let bin = |op, lhs, rhs| Exp::BinOp { op, ty: ScalarTy::I64, lhs, rhs };
    let math = |func, a, b| Exp::Math { ty: ScalarTy::I64, func, args: vec![a, b] };
    let fresh = |f: &mut Function, name: &str, ty: Type| {
        f.vars.alloc(Var { name: weft_hir::Name::new(name), ty, kind: VarKind::Bound })
    };
    let bind = |f: &mut Function, name: &str, ty: Type, exp: Exp, out: &mut Vec<Stmt>| {
        let var = fresh(f, name, ty);
        let exp = f.exps.alloc(exp);
        if let Some(o) = &origin {
            f.origins.insert(exp, o.clone());
        }
        out.push(Stmt { var, exp });
        var
    };
    // The operator's body, copied with fresh variables for each stage, its parameters
    // bound to the accumulator and the element; what it reads from outside stays.
    let snapshot = f.clone();
    let apply = |f: &mut Function, acc: VarId, x: VarId| -> (Vec<Stmt>, Option<Atom>) {
        let mut copier = Copier { callee: &snapshot, map: FxHashMap::default() };
        for free in crate::passes::facts::free_vars_of_block(&snapshot, op.body) {
            if !op.params.contains(&free) {
                copier.map.insert(free, Atom::Var(free));
            }
        }
        copier.map.insert(op.params[0], Atom::Var(acc));
        copier.map.insert(op.params[1], Atom::Var(x));
        let body = copier.block(op.body, f);
        (f.blocks[body].stmts.clone(), f.blocks[body].result)
    };

    let mut out = Vec::new();
    let n = bind(f, "n", i64_ty.clone(), Exp::Dim { array, dim: 0 }, &mut out);
    let fewer = bind(
        f,
        "t",
        i64_ty.clone(),
        math(MathFn::Min, v(n), int(CHUNKS_OF_ARRAY_REDUCTIONS)),
        &mut out,
    );
    let g = bind(f, "chunks", i64_ty.clone(), math(MathFn::Max, v(fewer), int(1)), &mut out);
    let up = bind(f, "t", i64_ty.clone(), bin(BinOp::Add, v(n), v(g)), &mut out);
    let up = bind(f, "t", i64_ty.clone(), bin(BinOp::Sub, v(up), int(1)), &mut out);
    let c = bind(f, "per_chunk", i64_ty.clone(), bin(BinOp::Div, v(up), v(g)), &mut out);
    let row_ty = f.vars[op.params[1]].ty.clone();

    // Stage 1: chunk `k`, rows `k*c ..` below `n`.
    let ks_ty = Type::array(CoreSize::var(g), i64_ty.clone());
    let ks = bind(f, "ks", ks_ty, Exp::Iota { size: v(g) }, &mut out);
    let k = fresh(f, "k", i64_ty.clone());
    let j = fresh(f, "j", i64_ty.clone());
    let acc = fresh(f, "acc", elem_ty.clone());
    let mut step = Vec::new();
    let lo = bind(f, "lo", i64_ty.clone(), bin(BinOp::Mul, v(k), v(c)), &mut step);
    let i = bind(f, "i", i64_ty.clone(), bin(BinOp::Add, v(lo), v(j)), &mut step);
    let in_range = Exp::BinOp { op: BinOp::Lt, ty: ScalarTy::I64, lhs: v(i), rhs: v(n) };
    let in_range = bind(f, "in_range", Type::Scalar(ScalarTy::Bool), in_range, &mut step);
    let mut then_stmts = Vec::new();
    let row = bind(
        f,
        "row",
        row_ty.clone(),
        Exp::Index { array, items: vec![IndexItem::Fix(v(i))] },
        &mut then_stmts,
    );
    let (applied, result) = apply(f, acc, row);
    then_stmts.extend(applied);
    let then_branch = f.blocks.alloc(Block { stmts: then_stmts, result });
    let else_branch = f.blocks.alloc(Block { stmts: Vec::new(), result: Some(v(acc)) });
    let pick = Exp::If { cond: v(in_range), then_branch, else_branch };
    let next = bind(f, "acc", elem_ty.clone(), pick, &mut step);
    let step = f.blocks.alloc(Block { stmts: step, result: Some(v(next)) });
    let fold = Exp::Loop {
        param: acc,
        init: neutral,
        form: LoopForm::For { index: j, bound: v(c) },
        body: step,
    };
    let mut chunk_body = Vec::new();
    let partial = bind(f, "partial", elem_ty.clone(), fold, &mut chunk_body);
    let chunk_body = f.blocks.alloc(Block { stmts: chunk_body, result: Some(v(partial)) });
    // Written at the grid level: a kernel of its own, a work-item per chunk.
    let stage1 = Exp::Map {
        level: Some(Level::Grid),
        lambda: Lambda { params: vec![k], body: chunk_body, ret: elem_ty.clone() },
        arrays: vec![v(ks)],
    };
    let partials_ty = Type::array(CoreSize::var(g), elem_ty.clone());
    let partials = bind(f, "partials", partials_ty, stage1, &mut out);

    // Stage 2: one work-item folds the chunks' results in order.
    let one_ty = Type::array(CoreSize::constant(1), i64_ty.clone());
    let one = bind(f, "one", one_ty, Exp::Iota { size: int(1) }, &mut out);
    let unused = fresh(f, "w", i64_ty.clone());
    let q = fresh(f, "q", i64_ty.clone());
    let acc = fresh(f, "acc", elem_ty.clone());
    let mut step = Vec::new();
    let chunk_result = bind(
        f,
        "partial",
        elem_ty.clone(),
        Exp::Index { array: v(partials), items: vec![IndexItem::Fix(v(q))] },
        &mut step,
    );
    let (applied, result) = apply(f, acc, chunk_result);
    step.extend(applied);
    let step = f.blocks.alloc(Block { stmts: step, result });
    let fold = Exp::Loop {
        param: acc,
        init: neutral,
        form: LoopForm::For { index: q, bound: v(g) },
        body: step,
    };
    let mut final_body = Vec::new();
    let folded = bind(f, "folded", elem_ty.clone(), fold, &mut final_body);
    let final_body = f.blocks.alloc(Block { stmts: final_body, result: Some(v(folded)) });
    let stage2 = Exp::Map {
        level: Some(Level::Grid),
        lambda: Lambda { params: vec![unused], body: final_body, ret: elem_ty.clone() },
        arrays: vec![v(one)],
    };
    let finals_ty = Type::array(CoreSize::constant(1), elem_ty);
    let computed = bind(f, "folded", finals_ty.clone(), stage2, &mut out);
    // Stored as computed (`to_global`): the one row is read where it is. Without it the
    // editor proposes `reduce@grid` for the source `reduce` (the row's kernel carries
    // its origin), which this rewrite does not take: "Make strategy explicit" would
    // change the program (the strategy round trip over examples/ tests it).
    let stored = Exp::Materialise { space: weft_core::Space::Global, value: v(computed) };
    let finals = bind(f, "folded", finals_ty, stored, &mut out);
    // The statement keeps its variable, now the one result.
    let exp = f.exps.alloc(Exp::Index { array: v(finals), items: vec![IndexItem::Fix(int(0))] });
    if let Some(o) = &origin {
        f.origins.insert(exp, o.clone());
    }
    out.push(Stmt { var: stmt.var, exp });
    Some(out)
}
