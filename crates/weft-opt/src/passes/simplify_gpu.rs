//! Simplification of the GPU IR after flattening and fusion (MIDDLE.md: simplify runs
//! between passes): copy propagation (fusion binds a read to its producer's value),
//! reads of `iota` and of `replicate` of a scalar at an index that a SegOp's space or a
//! loop keeps in range (the index itself, the scalar: no array is made for them) and
//! of their lengths, and removal of statements nobody reads that cannot fail.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, CoreSize, Type, VarId};
use weft_values::Scalar;

use crate::ir::{BlockId, Exp, GpuFunction, GpuProgram};

/// Simplifies every function of `program`.
pub fn simplify_gpu(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        read_constructors(f);
        propagate_copies(f);
        while remove_dead_code(f) {}
    }
    out
}

fn reachable_blocks(f: &GpuFunction) -> Vec<BlockId> {
    let mut out = vec![f.body];
    let mut i = 0;
    while i < out.len() {
        for stmt in &f.blocks[out[i]].stmts {
            out.extend(f.exps[stmt.exp].nested_blocks());
        }
        i += 1;
    }
    out
}

/// `x = t[j]` where `t = iota n` (or `replicate n v` of a scalar) and `j` is the index
/// of an enclosing SegOp's space or `for` loop with bound `n`: `x = j` (converted to
/// `iota`'s element type), or `x = v`; a read of a `zip` of such arrays is the tuple of
/// the reads of its arrays. An index out of range would fail the read, so only indices
/// proved in range are rewritten.
fn read_constructors(f: &mut GpuFunction) {
    let mut made: FxHashMap<VarId, weft_core::Exp> = FxHashMap::default();
    for block in reachable_blocks(f) {
        for stmt in &f.blocks[block].stmts {
            if let (Exp::Basic(e @ weft_core::Exp::Zip(_)), [var]) =
                (&f.exps[stmt.exp], stmt.vars.as_slice())
            {
                made.insert(*var, e.clone());
                continue;
            }
            if let (
                Exp::Basic(e @ (weft_core::Exp::Iota { .. } | weft_core::Exp::Replicate { .. })),
                [var],
            ) = (&f.exps[stmt.exp], stmt.vars.as_slice())
            {
                let scalar_value = match e {
                    weft_core::Exp::Replicate { value: Atom::Var(v), .. } => {
                        matches!(f.vars[*v].ty, Type::Scalar(_))
                    }
                    _ => true,
                };
                if scalar_value {
                    made.insert(*var, e.clone());
                }
            }
        }
    }
    if made.is_empty() {
        return;
    }
    let body = f.body;
    let sizes = crate::sizes::SizeValues::of(f);
    rewrite_reads(f, body, &mut Vec::new(), &made, &sizes);
}

/// [`read_constructors`] in `block`, with `ranges` the indices in range (index, bound).
fn rewrite_reads(
    f: &mut GpuFunction,
    block: BlockId,
    ranges: &mut Vec<(VarId, Atom)>,
    made: &FxHashMap<VarId, weft_core::Exp>,
    sizes: &crate::sizes::SizeValues,
) {
    let mut stmts = Vec::with_capacity(f.blocks[block].stmts.len());
    for stmt in f.blocks[block].stmts.clone() {
        let exp = f.exps[stmt.exp].clone();
        if let (Exp::Basic(weft_core::Exp::Index { array: Atom::Var(t), items }), [var]) =
            (&exp, stmt.vars.as_slice())
            && let [weft_core::IndexItem::Fix(Atom::Var(j))] = items.as_slice()
            && let Some(weft_core::Exp::Zip(parts)) = made.get(t)
            && let Type::Tuple(tys) = f.vars[*var].ty.clone()
            && tys.len() == parts.len()
            && ranges.iter().any(|(index, _)| index == j)
        {
            // The tuple of the components' reads (each rewritten in turn below).
            let mut components = Vec::new();
            let mut reads = Vec::new();
            for (part, ty) in parts.iter().zip(tys) {
                let name = f.vars[*var].name.clone();
                let c = f.vars.alloc(weft_core::Var { name, ty, kind: weft_core::VarKind::Bound });
                let read = f.exps.alloc(Exp::Basic(weft_core::Exp::Index {
                    array: *part,
                    items: vec![weft_core::IndexItem::Fix(Atom::Var(*j))],
                }));
                reads.push(crate::ir::Stmt { vars: vec![c], exp: read });
                components.push(Atom::Var(c));
            }
            let reads_block =
                f.blocks.alloc(crate::ir::Block { stmts: reads, results: Vec::new() });
            rewrite_reads(f, reads_block, ranges, made, sizes);
            stmts.extend(f.blocks[reads_block].stmts.clone());
            f.exps[stmt.exp] = Exp::Basic(weft_core::Exp::Tuple(components));
            stmts.push(stmt);
            continue;
        }
        if let (Exp::Basic(weft_core::Exp::Index { array: Atom::Var(t), items }), [var]) =
            (&exp, stmt.vars.as_slice())
            && let [weft_core::IndexItem::Fix(Atom::Var(j))] = items.as_slice()
            && let Some(constructor) = made.get(t)
        {
            let size = match constructor {
                weft_core::Exp::Iota { size } | weft_core::Exp::Replicate { size, .. } => *size,
                _ => Atom::Const(Scalar::I64(0)),
            };
            if ranges.iter().any(|(index, bound)| index == j && sizes.same(bound, &size)) {
                let replaced = match constructor {
                    weft_core::Exp::Replicate { value, .. } => Some(weft_core::Exp::Atom(*value)),
                    _ => match &f.vars[*var].ty {
                        Type::Scalar(weft_hir::ScalarTy::I64) => {
                            Some(weft_core::Exp::Atom(Atom::Var(*j)))
                        }
                        Type::Scalar(to) => Some(weft_core::Exp::Convert {
                            from: weft_hir::ScalarTy::I64,
                            to: *to,
                            operand: Atom::Var(*j),
                        }),
                        _ => None,
                    },
                };
                if let Some(replaced) = replaced {
                    f.exps[stmt.exp] = Exp::Basic(replaced);
                    stmts.push(stmt);
                    continue;
                }
            }
        }
        // `dim 0 t` of such an array is its length, which keeps `t` alive otherwise (a
        // loop over `iota c` reads its bound from it).
        if let (Exp::Basic(weft_core::Exp::Dim { array: Atom::Var(t), dim: 0 }), [_]) =
            (&exp, stmt.vars.as_slice())
            && let Some(weft_core::Exp::Iota { size } | weft_core::Exp::Replicate { size, .. }) =
                made.get(t)
        {
            f.exps[stmt.exp] = Exp::Basic(weft_core::Exp::Atom(*size));
            stmts.push(stmt);
            continue;
        }
        let mut pushed = 0;
        match &exp {
            Exp::Seg(seg) => {
                for (index, bound) in &seg.space {
                    ranges.push((*index, *bound));
                    pushed += 1;
                }
            }
            Exp::Loop { form: crate::ir::LoopForm::For { index, bound }, .. } => {
                ranges.push((*index, *bound));
                pushed += 1;
            }
            _ => {}
        }
        for nested in exp.nested_blocks() {
            rewrite_reads(f, nested, ranges, made, sizes);
        }
        for _ in 0..pushed {
            ranges.pop();
        }
        stmts.push(stmt);
    }
    f.blocks[block].stmts = stmts;
}

fn propagate_copies(f: &mut GpuFunction) {
    let mut copies: FxHashMap<VarId, Atom> = FxHashMap::default();
    for block in reachable_blocks(f) {
        for stmt in &f.blocks[block].stmts {
            if let (Exp::Basic(weft_core::Exp::Atom(a)), [var]) =
                (&f.exps[stmt.exp], stmt.vars.as_slice())
            {
                let same_type = match a {
                    Atom::Var(w) => f.vars[*w].ty == f.vars[*var].ty,
                    Atom::Const(_) => true,
                };
                if same_type {
                    copies.insert(*var, *a);
                }
            }
        }
    }
    if copies.is_empty() {
        return;
    }
    let resolve = |mut a: Atom| {
        while let Atom::Var(v) = a {
            match copies.get(&v) {
                Some(&next) => a = next,
                None => break,
            }
        }
        a
    };
    let mut size_of = |v: &VarId| -> Option<CoreSize> {
        copies.get(v).map(|_| match resolve(Atom::Var(*v)) {
            Atom::Var(w) => CoreSize::var(w),
            Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
            Atom::Const(_) => CoreSize::var(*v),
        })
    };
    for block in reachable_blocks(f) {
        let exps = &f.exps;
        f.blocks[block].stmts.retain(|s| {
            !(s.vars.len() == 1
                && copies.contains_key(&s.vars[0])
                && matches!(exps[s.exp], Exp::Basic(weft_core::Exp::Atom(_))))
        });
        for result in &mut f.blocks[block].results {
            *result = resolve(*result);
        }
    }
    for (_, exp) in f.exps.iter_mut() {
        exp.operands_mut(&mut |a| *a = resolve(*a));
        match exp {
            Exp::Version { size, .. } | Exp::Basic(weft_core::Exp::Size(size)) => {
                *size = size.substitute(&mut size_of);
            }
            _ => {}
        }
        if let Exp::Basic(basic) = exp {
            basic.types_mut(&mut |ty| substitute_type(ty, &mut size_of));
        }
    }
    for (_, var) in f.vars.iter_mut() {
        substitute_type(&mut var.ty, &mut size_of);
    }
}

fn substitute_type(ty: &mut Type, f: &mut impl FnMut(&VarId) -> Option<CoreSize>) {
    match ty {
        Type::Scalar(_) => {}
        Type::Array { size, elem } => {
            *size = size.substitute(f);
            substitute_type(elem, f);
        }
        Type::Tuple(elems) => elems.iter_mut().for_each(|e| substitute_type(e, f)),
    }
}

/// Removes unread statements that cannot fail (flat expressions the core IR deems
/// safe, and SegMaps whose bodies are).
fn remove_dead_code(f: &mut GpuFunction) -> bool {
    let mut read: FxHashSet<VarId> = FxHashSet::default();
    for block in reachable_blocks(f) {
        for stmt in &f.blocks[block].stmts {
            for atom in f.exps[stmt.exp].operands() {
                if let Atom::Var(v) = atom {
                    read.insert(v);
                }
            }
            for &v in &stmt.vars {
                weft_core::type_vars(&f.vars[v].ty, &mut |w| {
                    read.insert(w);
                });
            }
        }
        for &atom in &f.blocks[block].results {
            if let Atom::Var(v) = atom {
                read.insert(v);
            }
        }
    }
    weft_core::type_vars(&f.ret, &mut |w| {
        read.insert(w);
    });
    let mut removed = false;
    let sizes = crate::sizes::SizeValues::of(f);
    for block in reachable_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        let kept: Vec<_> = stmts
            .into_iter()
            .filter(|s| {
                s.vars.iter().any(|v| read.contains(v)) || !exp_is_safe(f, &sizes, &f.exps[s.exp])
            })
            .collect();
        removed |= kept.len() != f.blocks[block].stmts.len();
        f.blocks[block].stmts = kept;
    }
    removed
}

/// Whether an expression can be dropped when unread: it cannot fail or diverge.
fn exp_is_safe(f: &GpuFunction, sizes: &crate::sizes::SizeValues, exp: &Exp) -> bool {
    // A size parameter is the size of an argument, so it is never negative, nor is a
    // sum of products of them (`h * w`).
    let nonnegative = |atom: &Atom| sizes.nonnegative(atom, &f.size_params);
    match exp {
        Exp::Basic(weft_core::Exp::Iota { size } | weft_core::Exp::Replicate { size, .. }) => {
            nonnegative(size)
        }
        Exp::Basic(basic) => {
            matches!(
                basic,
                weft_core::Exp::Atom(_)
                    | weft_core::Exp::UnOp { .. }
                    | weft_core::Exp::Convert { .. }
                    | weft_core::Exp::Math { .. }
                    | weft_core::Exp::Tuple(_)
                    | weft_core::Exp::Proj { .. }
                    | weft_core::Exp::Dim { .. }
                    | weft_core::Exp::Zip(_)
                    | weft_core::Exp::Unzip(_)
                    | weft_core::Exp::Transpose(_)
                    | weft_core::Exp::Reverse(_)
                    | weft_core::Exp::Flatten(_)
            ) || matches!(basic, weft_core::Exp::BinOp { op, ty, .. }
                if !matches!(op, weft_core::BinOp::Div | weft_core::BinOp::Rem | weft_core::BinOp::Pow)
                    || ty.is_float())
        }
        Exp::Seg(seg) => {
            seg.kind == crate::ir::SegKind::Map
                && f.blocks[seg.body].stmts.iter().all(|s| exp_is_safe(f, sizes, &f.exps[s.exp]))
        }
        Exp::Manifest { .. } => true,
        Exp::If { .. } | Exp::Version { .. } | Exp::Loop { .. } | Exp::Seq(_) => false,
    }
}
