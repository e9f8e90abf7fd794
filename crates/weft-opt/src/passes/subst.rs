//! Substituting atoms for variables in operands, sizes and types: what copying code
//! with fresh variables (fusion's copies, flattening's versions) does at every use.

use rustc_hash::FxHashMap;
use weft_core::{Atom, CoreSize, Type, VarId};
use weft_values::Scalar;

/// Code that stands a variable for another atom (`subst`); variables not in it stay.
pub(crate) trait Substitutes {
    fn subst(&self) -> &FxHashMap<VarId, Atom>;

    fn atom(&self, a: Atom) -> Atom {
        match a {
            Atom::Var(v) => self.subst().get(&v).copied().unwrap_or(a),
            Atom::Const(_) => a,
        }
    }

    fn size(&self, size: &CoreSize) -> CoreSize {
        size.substitute(&mut |v| match self.subst().get(v)? {
            Atom::Var(w) => Some(CoreSize::var(*w)),
            Atom::Const(Scalar::I64(n)) => Some(CoreSize::constant(*n)),
            Atom::Const(_) => None,
        })
    }

    fn ty(&self, ty: &Type) -> Type {
        match ty {
            Type::Scalar(_) => ty.clone(),
            Type::Array { size, elem } => Type::array(self.size(size), self.ty(elem)),
            Type::Tuple(elems) => Type::Tuple(elems.iter().map(|e| self.ty(e)).collect()),
        }
    }
}
