//! TAIL's types: base types κ, shape terms ρ (linear, equal modulo AC and constant
//! folding) and the four array forms `[κ]^ρ`, `<κ>^ρ`, `S_κ(ρ)`, `SV_κ(ρ)`, with
//! subtyping and the least upper bound used for branches and iteration.

use std::collections::BTreeMap;
use std::fmt;

/// A base type κ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Base {
    Bool,
    Int,
    Double,
}

impl Base {
    pub fn name(self) -> &'static str {
        match self {
            Base::Bool => "bool",
            Base::Int => "int",
            Base::Double => "double",
        }
    }

    /// The base both operands of a scalar function are coerced to (`bool ⊆ int ⊆
    /// double` through `b2i` and `i2d`).
    pub fn join(self, other: Base) -> Base {
        self.max(other)
    }
}

/// A shape variable γ.
pub type ShapeVar = u32;

/// A shape term ρ: a constant plus a sum of shape variables with coefficients. The
/// normal form (sorted variables, no zero coefficients) makes equality modulo
/// associativity, commutativity and constant folding structural.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape {
    pub constant: i64,
    pub vars: BTreeMap<ShapeVar, i64>,
}

impl Shape {
    pub fn constant(c: i64) -> Shape {
        Shape { constant: c, vars: BTreeMap::new() }
    }

    pub fn var(v: ShapeVar) -> Shape {
        Shape { constant: 0, vars: BTreeMap::from([(v, 1)]) }
    }

    pub fn as_constant(&self) -> Option<i64> {
        self.vars.is_empty().then_some(self.constant)
    }

    pub fn add(&self, other: &Shape) -> Shape {
        let mut out = self.clone();
        out.constant += other.constant;
        for (&v, &c) in &other.vars {
            *out.vars.entry(v).or_insert(0) += c;
        }
        out.vars.retain(|_, c| *c != 0);
        out
    }

    pub fn neg(&self) -> Shape {
        Shape { constant: -self.constant, vars: self.vars.iter().map(|(&v, &c)| (v, -c)).collect() }
    }

    pub fn sub(&self, other: &Shape) -> Shape {
        self.add(&other.neg())
    }

    /// The product, when it is linear (one side constant).
    pub fn mul(&self, other: &Shape) -> Option<Shape> {
        let (k, s) = match (self.as_constant(), other.as_constant()) {
            (Some(k), _) => (k, other),
            (_, Some(k)) => (k, self),
            _ => return None,
        };
        let mut out = Shape {
            constant: s.constant * k,
            vars: s.vars.iter().map(|(&v, &c)| (v, c * k)).collect(),
        };
        out.vars.retain(|_, c| *c != 0);
        Some(out)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        for (&v, &c) in &self.vars {
            parts.push(match c {
                1 => format!("γ{v}"),
                _ => format!("{c}γ{v}"),
            });
        }
        if self.constant != 0 || parts.is_empty() {
            parts.push(self.constant.to_string());
        }
        let text = parts.join("+");
        if self.vars.is_empty() { write!(f, "{text}") } else { write!(f, "({text})") }
    }
}

/// A TAIL type τ.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `[κ]^ρ`: an array of rank ρ.
    Arr(Base, Shape),
    /// `<κ>^ρ`: a vector of length ρ.
    Vec(Base, Shape),
    /// `S_κ(ρ)`: a scalar whose value is ρ.
    S(Base, Shape),
    /// `SV_κ(ρ)`: a one-element vector whose element is ρ.
    SV(Base, Shape),
    /// `τ1 → … → τ`.
    Fun(Vec<Ty>, Box<Ty>),
}

impl Ty {
    pub fn scalar(base: Base) -> Ty {
        Ty::Arr(base, Shape::constant(0))
    }

    pub fn array(base: Base, rank: usize) -> Ty {
        Ty::Arr(base, Shape::constant(rank as i64))
    }

    pub fn base(&self) -> Base {
        match self {
            Ty::Arr(b, _) | Ty::Vec(b, _) | Ty::S(b, _) | Ty::SV(b, _) => *b,
            Ty::Fun(_, r) => r.base(),
        }
    }

    /// The static rank (ranks are static after inference: every program is closed and
    /// every dfn is inlined).
    pub fn rank(&self) -> Option<usize> {
        match self {
            Ty::Arr(_, r) => r.as_constant().and_then(|r| usize::try_from(r).ok()),
            Ty::Vec(..) | Ty::SV(..) => Some(1),
            Ty::S(..) => Some(0),
            Ty::Fun(..) => None,
        }
    }

    /// The static vector length as a constant (`SV` has length 1).
    pub fn const_length(&self) -> Option<i64> {
        match self {
            Ty::Vec(_, n) => n.as_constant(),
            Ty::SV(..) => Some(1),
            Ty::Arr(..) | Ty::S(..) | Ty::Fun(..) => None,
        }
    }

    /// The statically known value of a singleton.
    pub fn singleton(&self) -> Option<&Shape> {
        match self {
            Ty::S(_, v) | Ty::SV(_, v) => Some(v),
            Ty::Arr(..) | Ty::Vec(..) | Ty::Fun(..) => None,
        }
    }

    /// The widest type of the same rank (what a value of this type is at run time).
    pub fn widen(&self) -> Ty {
        match self {
            Ty::S(b, _) => Ty::scalar(*b),
            Ty::SV(b, _) => Ty::Vec(*b, Shape::constant(1)),
            Ty::Vec(b, _) => Ty::array(*b, 1),
            other => other.clone(),
        }
    }

    /// The same form with another base type (after a coercion).
    pub fn with_base(&self, base: Base) -> Ty {
        match self {
            Ty::Arr(_, r) => Ty::Arr(base, r.clone()),
            Ty::Vec(_, n) => Ty::Vec(base, n.clone()),
            // A coerced singleton keeps its value only from bool to int (`b2i`); an
            // integer made boolean is 0 or 1, not its value.
            Ty::S(b, v) if *b == base || (*b == Base::Bool && base == Base::Int) => {
                Ty::S(base, v.clone())
            }
            Ty::S(..) => Ty::scalar(base),
            Ty::SV(b, v) if *b == base || (*b == Base::Bool && base == Base::Int) => {
                Ty::SV(base, v.clone())
            }
            Ty::SV(..) => Ty::Vec(base, Shape::constant(1)),
            Ty::Fun(a, r) => Ty::Fun(a.clone(), Box::new(r.with_base(base))),
        }
    }
}

/// Subtyping (rules 3.1–3.5): reflexive, transitive, `S ⊆ [κ]^0`, `SV ⊆ <κ>^1`,
/// `<κ>^ρ ⊆ [κ]^1`.
pub fn subtype(a: &Ty, b: &Ty) -> bool {
    if a == b {
        return true;
    }
    match (a, b) {
        (Ty::S(k, _), Ty::Arr(k2, r)) => k == k2 && r.as_constant() == Some(0),
        (Ty::SV(k, _), Ty::Vec(k2, n)) => k == k2 && n.as_constant() == Some(1),
        (Ty::SV(k, _), Ty::Arr(k2, r)) | (Ty::Vec(k, _), Ty::Arr(k2, r)) => {
            k == k2 && r.as_constant() == Some(1)
        }
        _ => false,
    }
}

/// The least upper bound, for `power` and branches: equal singletons stay, others
/// widen step by step.
pub fn join(a: &Ty, b: &Ty) -> Option<Ty> {
    if subtype(a, b) {
        return Some(b.clone());
    }
    if subtype(b, a) {
        return Some(a.clone());
    }
    if a.base() != b.base() {
        return None;
    }
    let (wa, wb) = (a.widen(), b.widen());
    if wa == *a && wb == *b {
        return None;
    }
    join(&wa, &wb)
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Arr(b, r) => write!(f, "[{}]{r}", b.name()),
            Ty::Vec(b, n) => write!(f, "<{}>{n}", b.name()),
            Ty::S(b, v) => write!(f, "S({},{v})", b.name()),
            Ty::SV(b, v) => write!(f, "SV({},{v})", b.name()),
            Ty::Fun(args, r) => {
                for a in args {
                    write!(f, "{a} -> ")?;
                }
                write!(f, "{r}")
            }
        }
    }
}

/// A type in APL terms for error messages: `an int vector of length 3`.
pub fn describe(ty: &Ty) -> String {
    let a = |b: Base| if b == Base::Int { "an" } else { "a" };
    match ty {
        Ty::S(b, v) => format!("the {} scalar {v}", b.name()),
        Ty::SV(b, v) => format!("the one-element {} vector ({v})", b.name()),
        Ty::Vec(b, n) => format!("{} {} vector of length {n}", a(*b), b.name()),
        Ty::Arr(b, r) => match r.as_constant() {
            Some(0) => format!("{} {} scalar", a(*b), b.name()),
            Some(1) => format!("{} {} vector", a(*b), b.name()),
            Some(2) => format!("{} {} matrix", a(*b), b.name()),
            _ => format!("a rank-{r} {} array", b.name()),
        },
        Ty::Fun(..) => format!("a function `{ty}`"),
    }
}
