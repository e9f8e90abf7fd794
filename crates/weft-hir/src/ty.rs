//! Types and sizes as inference computes them (LANGUAGE.md section 2).
//!
//! A type is a plain immutable value compared structurally; sizes inside it are
//! [`weft_size::Size`] polynomials in normal form, so two types are equal exactly
//! when their normal forms are. (Types are not salsa-interned: they never leave a
//! query result as keys, and plain values keep every later IR free of `'db`.)

use std::fmt;
use std::sync::Arc;

use crate::Name;

/// A scalar type: Weft's one scalar type, under the checker's name.
pub use weft_values::ScalarType as ScalarTy;

/// A variable in a size.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SizeVar {
    /// A size parameter (`[n]`, or implicit from a parameter type) or an `i64`
    /// parameter named in a later type, of the def being checked.
    Param(Name),
    /// An `i64` let-binding whose value is not itself a size expression; `id` tells
    /// apart bindings that share a name.
    Local { name: Name, id: u32 },
    /// An unknown size: a fresh rigid variable (LANGUAGE.md: "unknown size").
    Unknown(u32),
    /// A flexible variable during inference; none remain in results.
    Infer(u32),
}

impl fmt::Display for SizeVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeVar::Param(name) | SizeVar::Local { name, .. } => write!(f, "{name}"),
            SizeVar::Unknown(idx) => write!(f, "?{idx}"),
            SizeVar::Infer(idx) => write!(f, "'s{idx}"),
        }
    }
}

/// A size: an integer polynomial over [`SizeVar`]s with exact-division terms.
pub type TySize = weft_size::Size<SizeVar>;

/// A type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(ScalarTy),
    /// `[size]elem`; an n-dimensional array nests.
    Array {
        size: TySize,
        elem: Arc<Ty>,
    },
    Tuple(Arc<[Ty]>),
    /// `{x: f32, y: f32}` (version 1.1): fields sorted by name, each name once. Stored
    /// like the tuple of its fields in that order.
    Record(Arc<[(Name, Ty)]>),
    Fn {
        param: Arc<Ty>,
        ret: Arc<Ty>,
    },
    /// A declared type parameter `'a`, written `a`.
    Param(Name),
    /// An inference variable; none remain in results (unresolved ones become `Error`
    /// with a diagnostic).
    Var(u32),
    /// The type of an erroneous expression: every check on it is silent.
    Error,
}

impl Ty {
    pub fn array(size: TySize, elem: Ty) -> Ty {
        Ty::Array { size, elem: Arc::new(elem) }
    }

    pub fn func(param: Ty, ret: Ty) -> Ty {
        Ty::Fn { param: Arc::new(param), ret: Arc::new(ret) }
    }

    pub fn tuple(elems: Vec<Ty>) -> Ty {
        Ty::Tuple(elems.into())
    }

    /// A record type from fields in any order (sorted here; the caller has rejected
    /// duplicates).
    pub fn record(mut fields: Vec<(Name, Ty)>) -> Ty {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        Ty::Record(fields.into())
    }

    pub fn i64() -> Ty {
        Ty::Scalar(ScalarTy::I64)
    }

    pub fn bool() -> Ty {
        Ty::Scalar(ScalarTy::Bool)
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    /// Whether an error type occurs anywhere inside (then messages about it are noise).
    pub fn contains_error(&self) -> bool {
        match self {
            Ty::Error => true,
            Ty::Scalar(_) | Ty::Param(_) | Ty::Var(_) => false,
            Ty::Array { elem, .. } => elem.contains_error(),
            Ty::Tuple(elems) => elems.iter().any(Ty::contains_error),
            Ty::Record(fields) => fields.iter().any(|(_, t)| t.contains_error()),
            Ty::Fn { param, ret } => param.contains_error() || ret.contains_error(),
        }
    }

    pub fn contains_fn(&self) -> bool {
        match self {
            Ty::Fn { .. } => true,
            Ty::Scalar(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error => false,
            Ty::Array { elem, .. } => elem.contains_fn(),
            Ty::Tuple(elems) => elems.iter().any(Ty::contains_fn),
            Ty::Record(fields) => fields.iter().any(|(_, t)| t.contains_fn()),
        }
    }

    /// The sizes of the outer dimensions and the element type below them.
    pub fn dims(&self) -> (Vec<TySize>, &Ty) {
        let mut dims = Vec::new();
        let mut ty = self;
        while let Ty::Array { size, elem } = ty {
            dims.push(size.clone());
            ty = elem;
        }
        (dims, ty)
    }

    /// Applies `f` to every size inside.
    pub fn map_sizes(&self, f: &mut impl FnMut(&TySize) -> TySize) -> Ty {
        match self {
            Ty::Scalar(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error => self.clone(),
            Ty::Array { size, elem } => {
                Ty::Array { size: f(size), elem: Arc::new(elem.map_sizes(f)) }
            }
            Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(|e| e.map_sizes(f)).collect()),
            Ty::Record(fields) => {
                Ty::Record(fields.iter().map(|(n, t)| (n.clone(), t.map_sizes(f))).collect())
            }
            Ty::Fn { param, ret } => {
                Ty::Fn { param: Arc::new(param.map_sizes(f)), ret: Arc::new(ret.map_sizes(f)) }
            }
        }
    }

    pub fn for_each_size(&self, f: &mut impl FnMut(&TySize)) {
        match self {
            Ty::Scalar(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error => {}
            Ty::Array { size, elem } => {
                f(size);
                elem.for_each_size(f);
            }
            Ty::Tuple(elems) => elems.iter().for_each(|e| e.for_each_size(f)),
            Ty::Record(fields) => fields.iter().for_each(|(_, t)| t.for_each_size(f)),
            Ty::Fn { param, ret } => {
                param.for_each_size(f);
                ret.for_each_size(f);
            }
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(scalar) => f.write_str(scalar.name()),
            Ty::Array { size, elem } => write!(f, "[{size}]{elem}"),
            Ty::Tuple(elems) => {
                f.write_str("(")?;
                for (idx, elem) in elems.iter().enumerate() {
                    if idx > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{elem}")?;
                }
                f.write_str(")")
            }
            Ty::Record(fields) => {
                f.write_str("{")?;
                for (idx, (name, ty)) in fields.iter().enumerate() {
                    if idx > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name}: {ty}")?;
                }
                f.write_str("}")
            }
            Ty::Fn { param, ret } => {
                if matches!(**param, Ty::Fn { .. }) {
                    write!(f, "({param}) -> {ret}")
                } else {
                    write!(f, "{param} -> {ret}")
                }
            }
            Ty::Param(name) => write!(f, "{name}"),
            Ty::Var(idx) => write!(f, "'t{idx}"),
            Ty::Error => f.write_str("{unknown}"),
        }
    }
}

/// A parameter of a [`Scheme`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SchemeParam {
    /// For an `i64` parameter whose name is used in later types (`(n: i64)` in
    /// `iota` or `entry grid (n: i64) : [n]i64`): the argument's value becomes that size.
    pub binds_size: Option<Name>,
    pub ty: Ty,
}

/// The polymorphic type of a def or built-in: quantified over its type parameters
/// and size parameters, with value parameters that may bind sizes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scheme {
    pub type_params: Vec<Name>,
    /// Size variables instantiated fresh at each use (inferred from arguments).
    pub size_params: Vec<Name>,
    pub params: Vec<SchemeParam>,
    pub ret: Ty,
}

impl Scheme {
    /// The curried function type, with sizes as written.
    pub fn as_fn_ty(&self) -> Ty {
        self.params.iter().rev().fold(self.ret.clone(), |ret, p| Ty::func(p.ty.clone(), ret))
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for param in &self.params {
            match &param.binds_size {
                Some(name) => write!(f, "({name}: {}) -> ", param.ty)?,
                None if matches!(param.ty, Ty::Fn { .. }) => write!(f, "({}) -> ", param.ty)?,
                None => write!(f, "{} -> ", param.ty)?,
            }
        }
        // The result's unknown sizes are fresh at each use: print them bound, as
        // written (`?[k].[k]i64`), named apart from the scheme's other sizes.
        let mut unknowns: Vec<SizeVar> = Vec::new();
        let mut taken: Vec<String> = Vec::new();
        for ty in self.params.iter().map(|p| &p.ty).chain(std::iter::once(&self.ret)) {
            ty.for_each_size(&mut |size| {
                for var in size.vars() {
                    match var {
                        SizeVar::Unknown(_) if !unknowns.contains(&var) => unknowns.push(var),
                        _ => taken.push(var.to_string()),
                    }
                }
            });
        }
        if unknowns.is_empty() {
            return write!(f, "{}", self.ret);
        }
        let mut names: Vec<(SizeVar, TySize)> = Vec::new();
        let candidates = ["k", "m", "l", "p", "q", "r", "s"].into_iter().map(str::to_owned);
        let mut candidates = candidates.chain((1..).map(|i| format!("k{i}")));
        for var in unknowns {
            let name = candidates.by_ref().find(|c| !taken.contains(c)).unwrap_or_default();
            names.push((var, TySize::var(SizeVar::Param(Name::new(&name)))));
        }
        write!(f, "?")?;
        for (_, size) in &names {
            write!(f, "[{size}]")?;
        }
        let ret = self.ret.map_sizes(&mut |size| {
            size.substitute(&mut |var| names.iter().find(|(v, _)| v == var).map(|(_, s)| s.clone()))
        });
        write!(f, ".{ret}")
    }
}
