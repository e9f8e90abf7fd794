//! Interchange of a reduction or scan whose operator maps over its arrays (core IR to
//! core IR; Futhark's ISRWIM, "interchange scan/reduce with inner map").
//!
//! `reduce (\a b -> map2 op a b) ne xss` over the rows of `xss: [n][m]t` combines rows
//! element by element, so it is one reduction per column:
//!
//! ```text
//! reduce (map2 op) ne xss  =  map (\col ne_j -> reduce op ne_j col) (transpose xss) ne
//! scan   (map2 op) ne xss  =  transpose (map (\col ne_j -> scan op ne_j col) (transpose xss) ne)
//! ```
//!
//! After the rewrite the operator is scalar (or again a map, for three or more
//! dimensions, which the next round interchanges), so flattening sees a `map` with an
//! inner reduction or scan and gives it its versions: a column per work-item (reading
//! `xss[i][j]` with neighbouring work-items at neighbouring `j`, coalesced), a column
//! per work-group, or a segmented reduction. The transpositions are views, not copies.
//!
//! The operator qualifies when its body is exactly `map f ..` (unannotated) over its two
//! parameters, each read once there and nowhere else, and possibly over arrays bound
//! outside it (a weight vector, say), which become more arrays of the outer `map`.

use rustc_hash::FxHashMap;
use weft_core::{Atom, Block, Exp, Function, Lambda, Program, Stmt, Type, Var, VarId, VarKind};

use super::facts::use_counts;
use super::simplify::reachable_blocks;

/// Rewrites, in every function, every unannotated `reduce` and `scan` whose operator
/// maps over its arguments into a `map` of reductions or scans over the columns, until
/// none is left.
pub fn interchange(program: &Program) -> Program {
    let mut out = program.clone();
    for (_, f) in out.functions.iter_mut() {
        // Each round removes one dimension from the rewritten operators; an operator
        // over arrays of rank r is scalar after r rounds.
        while combines_arrays(f) && interchange_once(f) {}
    }
    out
}

/// Whether some unannotated reduction or scan of `f` combines arrays (the only
/// candidates: most functions have none, and a round costs a walk of the function).
fn combines_arrays(f: &Function) -> bool {
    f.exps.iter().any(|(_, exp)| match exp {
        Exp::Reduce { level: None, lambda, .. } | Exp::Scan { level: None, lambda, .. } => {
            !matches!(lambda.ret, Type::Scalar(_))
        }
        _ => false,
    })
}

fn interchange_once(f: &mut Function) -> bool {
    let counts = use_counts(f);
    let replicated = replicated_scalars(f);
    let mut changed = false;
    for block in reachable_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        let mut out = Vec::with_capacity(stmts.len());
        for stmt in stmts {
            match rewrite(f, &counts, &replicated, stmt) {
                Some(stmts) => {
                    out.extend(stmts);
                    changed = true;
                }
                None => out.push(stmt),
            }
        }
        f.blocks[block].stmts = out;
    }
    changed
}

/// The operator's inner map: the lambda applied to each column's elements, the arrays
/// it maps over besides the two parameters, and where the parameters sit among its
/// lambda's parameters.
struct InnerMap {
    lambda: Lambda,
    /// `(param of the inner lambda, array bound outside the operator)`.
    free: Vec<(VarId, Atom)>,
    /// The inner lambda's parameters bound to the elements of the operator's first and
    /// second parameter.
    left: VarId,
    right: VarId,
}

/// Recognises `\a b -> map f .. a .. b ..` (each of `a`, `b` read once, in the map's
/// arrays).
fn inner_map(f: &Function, counts: &FxHashMap<VarId, usize>, op: &Lambda) -> Option<InnerMap> {
    let [a, b] = op.params[..] else { return None };
    let body = &f.blocks[op.body];
    let [stmt] = body.stmts[..] else { return None };
    if body.result != Some(Atom::Var(stmt.var)) {
        return None;
    }
    let Exp::Map { level: None, lambda, arrays } = &f.exps[stmt.exp] else { return None };
    if counts.get(&a) != Some(&1) || counts.get(&b) != Some(&1) {
        return None;
    }
    let (mut left, mut right, mut free) = (None, None, Vec::new());
    for (&param, &array) in lambda.params.iter().zip(arrays) {
        match array {
            Atom::Var(v) if v == a => left = Some(param),
            Atom::Var(v) if v == b => right = Some(param),
            Atom::Var(_) => free.push((param, array)),
            Atom::Const(_) => return None,
        }
    }
    Some(InnerMap { lambda: lambda.clone(), free, left: left?, right: right? })
}

/// The variables bound to `replicate n x` with `x` a scalar, and `x`.
fn replicated_scalars(f: &Function) -> FxHashMap<VarId, Atom> {
    let mut out = FxHashMap::default();
    for block in reachable_blocks(f) {
        for stmt in &f.blocks[block].stmts {
            if let Exp::Replicate { value, .. } = f.exps[stmt.exp]
                && let Type::Array { elem, .. } = &f.vars[stmt.var].ty
                && matches!(**elem, Type::Scalar(_))
            {
                out.insert(stmt.var, value);
            }
        }
    }
    out
}

/// The statements replacing `stmt` when it is a reduction or scan to interchange.
fn rewrite(
    f: &mut Function,
    counts: &FxHashMap<VarId, usize>,
    replicated: &FxHashMap<VarId, Atom>,
    stmt: Stmt,
) -> Option<Vec<Stmt>> {
    let (is_scan, op, neutral, array) = match &f.exps[stmt.exp] {
        Exp::Reduce { level: None, lambda, neutral, array } => (false, lambda, *neutral, *array),
        Exp::Scan { level: None, lambda, neutral, array } => (true, lambda, *neutral, *array),
        _ => return None,
    };
    let Atom::Var(array_var) = array else { return None };
    let inner = inner_map(f, counts, op)?;
    let origin = f.origins.get(stmt.exp).cloned();
    // xss: [n][m]t, so its transposition is [m][n]t and a column is [n]t.
    let Type::Array { size: n, elem: row } = f.vars[array_var].ty.clone() else { return None };
    let Type::Array { size: m, elem: t } = *row else { return None };
    let col_ty = Type::array(n.clone(), (*t).clone());

    let mut out = Vec::new();
    let bind = |f: &mut Function, name: &str, ty: Type, exp: Exp, out: &mut Vec<Stmt>| {
        let var = f.vars.alloc(Var { name: weft_hir::Name::new(name), ty, kind: VarKind::Bound });
        let exp = f.exps.alloc(exp);
        if let Some(o) = &origin {
            f.origins.insert(exp, o.clone());
        }
        out.push(Stmt { var, exp });
        var
    };
    let transposed_ty = Type::array(m.clone(), col_ty.clone());
    let columns = bind(f, "columns", transposed_ty, Exp::Transpose(array), &mut out);

    // The per-column combinator: the inner map's function with its parameters put in
    // the operator's order; arrays bound outside become the outer map's.
    let col =
        f.vars.alloc(Var { name: weft_hir::Name::new("col"), ty: col_ty, kind: VarKind::Bound });
    // A neutral element made by `replicate m x` is `x` in every column; naming it so
    // keeps the per-column reductions one segmented reduction with one neutral element.
    let column_neutral = match neutral {
        Atom::Var(v) => replicated.get(&v).copied(),
        Atom::Const(_) => None,
    };
    let ne_j = f.vars.alloc(Var {
        name: weft_hir::Name::new("ne"),
        ty: (*t).clone(),
        kind: VarKind::Bound,
    });
    let ne_j_atom = column_neutral.unwrap_or(Atom::Var(ne_j));
    let column_op = Lambda {
        params: vec![inner.left, inner.right],
        body: inner.lambda.body,
        ret: inner.lambda.ret.clone(),
    };
    let per_column = if is_scan {
        Exp::Scan { level: None, lambda: column_op, neutral: ne_j_atom, array: Atom::Var(col) }
    } else {
        Exp::Reduce { level: None, lambda: column_op, neutral: ne_j_atom, array: Atom::Var(col) }
    };
    let per_column_ty = if is_scan { Type::array(n.clone(), (*t).clone()) } else { (*t).clone() };
    let result = f.vars.alloc(Var {
        name: weft_hir::Name::new(if is_scan { "scanned" } else { "reduced" }),
        ty: per_column_ty.clone(),
        kind: VarKind::Bound,
    });
    let result_exp = f.exps.alloc(per_column);
    if let Some(o) = &origin {
        f.origins.insert(result_exp, o.clone());
    }
    let body = f.blocks.alloc(Block {
        stmts: vec![Stmt { var: result, exp: result_exp }],
        result: Some(Atom::Var(result)),
    });
    // The free arrays' elements were bound per element of the row; per column they
    // are one element each, bound by the outer map.
    let (mut params, mut arrays) = match column_neutral {
        Some(_) => (vec![col], vec![Atom::Var(columns)]),
        None => (vec![col, ne_j], vec![Atom::Var(columns), neutral]),
    };
    for (param, free) in &inner.free {
        params.push(*param);
        arrays.push(*free);
    }
    let outer = Exp::Map {
        level: None,
        lambda: Lambda { params, body, ret: per_column_ty.clone() },
        arrays,
    };
    if is_scan {
        let by_column = bind(f, "by_column", Type::array(m, per_column_ty), outer, &mut out);
        let exp = f.exps.alloc(Exp::Transpose(Atom::Var(by_column)));
        if let Some(o) = &origin {
            f.origins.insert(exp, o.clone());
        }
        out.push(Stmt { var: stmt.var, exp });
    } else {
        let exp = f.exps.alloc(outer);
        if let Some(o) = &origin {
            f.origins.insert(exp, o.clone());
        }
        out.push(Stmt { var: stmt.var, exp });
    }
    Some(out)
}
