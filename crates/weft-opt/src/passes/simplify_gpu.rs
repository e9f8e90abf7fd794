//! Simplification of the GPU IR after flattening and fusion (MIDDLE.md: simplify runs
//! between passes): copy propagation (fusion binds a read to its producer's value) and
//! removal of statements nobody reads that cannot fail.

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
    for block in reachable_blocks(f) {
        let stmts = f.blocks[block].stmts.clone();
        let kept: Vec<_> = stmts
            .into_iter()
            .filter(|s| s.vars.iter().any(|v| read.contains(v)) || !exp_is_safe(f, &f.exps[s.exp]))
            .collect();
        removed |= kept.len() != f.blocks[block].stmts.len();
        f.blocks[block].stmts = kept;
    }
    removed
}

/// Whether an expression can be dropped when unread: it cannot fail or diverge.
fn exp_is_safe(f: &GpuFunction, exp: &Exp) -> bool {
    match exp {
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
                && f.blocks[seg.body].stmts.iter().all(|s| exp_is_safe(f, &f.exps[s.exp]))
        }
        Exp::Manifest { .. } => true,
        Exp::If { .. } | Exp::Version { .. } | Exp::Loop { .. } | Exp::Seq(_) => false,
    }
}
