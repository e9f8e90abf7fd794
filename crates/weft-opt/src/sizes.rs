//! Sizes compared by value. Flattening and hoisting bind the same size more than once
//! (`t = size h*w` for one SegOp's space, `u = mul.i64 h w` for a `replicate`'s length,
//! `v = size h*w` for the next SegOp's space); passes that must know two bounds are
//! equal (fusion, reads of `replicate` and `iota` in range) compare what the atoms
//! hold: the polynomial their definitions give over the variables they start from.

use rustc_hash::FxHashMap;
use weft_core::{Atom, BinOp, CoreSize, VarId};
use weft_hir::ScalarTy;
use weft_values::Scalar;

use crate::ir::{Exp, GpuFunction};

/// The `i64` definitions of a function's variables that sizes are made of.
pub(crate) struct SizeValues {
    defs: FxHashMap<VarId, weft_core::Exp>,
    /// `v = i64.max a b`: not a polynomial, but at least `a` and `b` (chunk counts and
    /// lengths are kept at least 1 this way).
    maxima: FxHashMap<VarId, [Atom; 2]>,
}

/// How many definitions one value follows before it stops (size chains are short; the
/// limit keeps a pathological program from recursing deeply).
const DEPTH: usize = 32;

impl SizeValues {
    pub(crate) fn of(f: &GpuFunction) -> SizeValues {
        let mut defs = FxHashMap::default();
        let mut maxima = FxHashMap::default();
        let mut blocks = vec![f.body];
        while let Some(block) = blocks.pop() {
            for stmt in &f.blocks[block].stmts {
                let exp = &f.exps[stmt.exp];
                if let (
                    [var],
                    Exp::Basic(
                        e @ (weft_core::Exp::Size(_)
                        | weft_core::Exp::BinOp {
                            op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                            ty: ScalarTy::I64,
                            ..
                        }),
                    ),
                ) = (stmt.vars.as_slice(), exp)
                {
                    defs.insert(*var, e.clone());
                }
                // `dim d x` is the size `x`'s type gives its dimension `d` (the bound of
                // a loop over an array is read from the array: `n = dim 0 (iota c)`).
                if let ([var], Exp::Basic(weft_core::Exp::Dim { array: Atom::Var(x), dim })) =
                    (stmt.vars.as_slice(), exp)
                    && let Some(size) = dimension(&f.vars[*x].ty, *dim as usize)
                {
                    defs.insert(*var, weft_core::Exp::Size(size));
                }
                if let (
                    [var],
                    Exp::Basic(weft_core::Exp::Math {
                        ty: ScalarTy::I64,
                        func: weft_hir::MathFn::Max,
                        args,
                    }),
                ) = (stmt.vars.as_slice(), exp)
                    && let [a, b] = args[..]
                {
                    maxima.insert(*var, [a, b]);
                }
                blocks.extend(exp.nested_blocks());
            }
        }
        SizeValues { defs, maxima }
    }

    /// Whether `a` and `b` hold the same `i64` value.
    pub(crate) fn same(&self, a: &Atom, b: &Atom) -> bool {
        let i64_valued = |x: &Atom| !matches!(x, Atom::Const(c) if !matches!(c, Scalar::I64(_)));
        a == b || (i64_valued(a) && i64_valued(b) && self.value(a, DEPTH) == self.value(b, DEPTH))
    }

    /// Whether `atom` is never negative: a sum of products of size parameters (sizes of
    /// arguments) with nonnegative coefficients, or the maximum of something that is.
    pub(crate) fn nonnegative(&self, atom: &Atom, size_params: &[VarId]) -> bool {
        self.nonnegative_within(atom, size_params, DEPTH)
    }

    fn nonnegative_within(&self, atom: &Atom, size_params: &[VarId], depth: usize) -> bool {
        if let Atom::Const(c) = atom {
            return matches!(c, Scalar::I64(n) if *n >= 0);
        }
        if let Atom::Var(v) = atom
            && let Some(args) = self.maxima.get(v)
            && let Some(depth) = depth.checked_sub(1)
            && args.iter().any(|a| self.nonnegative_within(a, size_params, depth))
        {
            return true;
        }
        self.value(atom, DEPTH).terms().iter().all(|term| {
            term.coeff() >= 0
                && term
                    .monomial()
                    .atoms()
                    .iter()
                    .all(|a| matches!(a, weft_size::Atom::Var(v) if size_params.contains(v)))
        })
    }

    fn value(&self, atom: &Atom, depth: usize) -> CoreSize {
        match atom {
            Atom::Const(Scalar::I64(c)) => CoreSize::constant(*c),
            Atom::Const(_) => CoreSize::zero(),
            Atom::Var(v) => self.var_value(*v, depth),
        }
    }

    fn var_value(&self, v: VarId, depth: usize) -> CoreSize {
        let Some(depth) = depth.checked_sub(1) else { return CoreSize::var(v) };
        match self.defs.get(&v) {
            Some(weft_core::Exp::Size(size)) => {
                size.substitute(&mut |w: &VarId| Some(self.var_value(*w, depth)))
            }
            Some(weft_core::Exp::BinOp { op, lhs, rhs, .. }) => {
                let (l, r) = (self.value(lhs, depth), self.value(rhs, depth));
                match op {
                    BinOp::Add => l.add(&r),
                    BinOp::Sub => l.sub(&r),
                    _ => l.mul(&r),
                }
            }
            _ => CoreSize::var(v),
        }
    }
}

/// The size of dimension `dim` of an array type.
fn dimension(ty: &weft_core::Type, dim: usize) -> Option<CoreSize> {
    match ty {
        weft_core::Type::Array { size, elem } => {
            if dim == 0 {
                Some(size.clone())
            } else {
                dimension(elem, dim - 1)
            }
        }
        _ => None,
    }
}
