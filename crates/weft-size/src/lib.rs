//! Symbolic sizes: the integer expressions that appear in array types, the core IR, LMADs and
//! the cost model (LANGUAGE.md §2, "Types and sizes").
//!
//! A [`Size`] is an integer polynomial over size variables `V`, plus *exact-division atoms*
//! `p / q`. A division atom is opaque: it behaves like a fresh variable, except for the
//! simplifications `(p*q)/q = p` (applied by [`Size::div_exact`]) and `(p/q)*q = p` (applied
//! whenever a product contains a division atom together with its whole divisor, for divisors
//! that are a single term). Divisibility itself is a run-time check ([`Size::eval`] reports
//! [`EvalError::NotDivisible`]).
//!
//! # Normal form
//!
//! Every `Size` is kept in one normal form, so two sizes are equal exactly when their normal
//! forms are structurally equal, and the derived `Eq`, `Ord` and `Hash` are the size
//! equality the type checker needs (LANGUAGE.md §2: "Two sizes are equal when their normal
//! forms are equal"). The normal form is:
//!
//! - a list of [`Term`]s, sorted strictly by [`Monomial`] (so each monomial occurs once), with
//!   nonzero coefficients; the zero size is the empty list;
//! - a monomial is a sorted multiset of [`Atom`]s (the empty monomial is the constant term);
//! - an atom is a variable or a division `p / q` whose operands are themselves normal, where
//!   `q` does not divide `p` as a polynomial, the common integer content and common monomial
//!   factor of `p` and `q` are cancelled, and the leading coefficients (in graded
//!   lexicographic order) of both `p` and `q` are positive (a sign moves to the term);
//! - no term contains a division atom `p / (c*M)` together with `M` and a coefficient that `c`
//!   divides (such a term is rewritten with `(p/q)*q = p`).
//!
//! # Arithmetic wraps
//!
//! Coefficients are `i64` and all coefficient arithmetic wraps (two's complement), because
//! Weft's `i64` wraps: the polynomials live in the ring `Z/2^64[atoms]`, and wrapping keeps
//! `add`, `sub`, `mul` and `neg` a ring, so normalising and then evaluating with wrapping
//! arithmetic gives the same value as evaluating the original expression with wrapping
//! arithmetic. Exact division is the exception: `Z/2^64` is not an integral domain, so the
//! division rules assume that the products involved do not overflow, which holds for the
//! sizes of arrays that fit in memory.
//!
//! Architecture invariant: this crate knows nothing of syntax, salsa or IR; `V` is whatever
//! the client uses for size variables (a name, an interned id).

mod display;
mod div;
mod eval;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{Add, Mul, Neg, Sub};

pub use crate::display::SizeDisplay;
pub use crate::eval::EvalError;

/// A symbolic integer size in normal form (see the module docs).
///
/// Construct sizes with [`Size::constant`], [`Size::var`] and the arithmetic methods; the
/// representation is private so every value is normal.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Size<V> {
    // Invariant: sorted strictly by monomial, every coefficient nonzero, no term reducible by
    // `(p/q)*q = p`.
    terms: Vec<Term<V>>,
}

/// One term of a [`Size`]: a nonzero coefficient times a monomial.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Term<V> {
    monomial: Monomial<V>,
    coeff: i64,
}

/// A product of atoms, as a sorted multiset. The empty monomial is `1`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Monomial<V> {
    // Invariant: sorted (repetitions allowed: `n*n`).
    atoms: Vec<Atom<V>>,
}

/// An indivisible factor of a monomial.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Atom<V> {
    /// A size variable.
    Var(V),
    /// The exact quotient `dividend / divisor`: the integer `d` with `d * divisor = dividend`,
    /// which exists when the program runs without a divisibility error. Opaque to the
    /// algebra except for `(p*q)/q = p` and `(p/q)*q = p`. Both operands are normal, and the
    /// divisor does not divide the dividend as a polynomial.
    Div(Box<Size<V>>, Box<Size<V>>),
}

impl<V> Term<V> {
    /// The coefficient (never zero).
    pub fn coeff(&self) -> i64 {
        self.coeff
    }

    /// The monomial the coefficient multiplies.
    pub fn monomial(&self) -> &Monomial<V> {
        &self.monomial
    }
}

impl<V> Monomial<V> {
    /// The atoms, sorted, with repetitions for powers.
    pub fn atoms(&self) -> &[Atom<V>] {
        &self.atoms
    }

    /// The number of atoms, counting repetitions.
    pub fn degree(&self) -> usize {
        self.atoms.len()
    }
}

impl<V: Clone + Ord> Monomial<V> {
    fn one() -> Self {
        Monomial { atoms: Vec::new() }
    }

    fn from_atom(atom: Atom<V>) -> Self {
        Monomial { atoms: vec![atom] }
    }

    fn mul(&self, other: &Self) -> Self {
        let mut atoms = Vec::with_capacity(self.atoms.len() + other.atoms.len());
        atoms.extend(self.atoms.iter().cloned());
        atoms.extend(other.atoms.iter().cloned());
        atoms.sort();
        Monomial { atoms }
    }

    /// `self / other` as multisets, if `other` is a sub-multiset of `self`.
    fn checked_div(&self, other: &Self) -> Option<Self> {
        let mut atoms = Vec::with_capacity(self.atoms.len());
        let mut rest = other.atoms.iter().peekable();
        for atom in &self.atoms {
            if rest.peek() == Some(&atom) {
                rest.next();
            } else {
                atoms.push(atom.clone());
            }
        }
        if rest.next().is_some() { None } else { Some(Monomial { atoms }) }
    }

    /// The largest monomial dividing both.
    fn gcd(&self, other: &Self) -> Self {
        let mut atoms = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.atoms.len() && j < other.atoms.len() {
            match self.atoms[i].cmp(&other.atoms[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    atoms.push(self.atoms[i].clone());
                    i += 1;
                    j += 1;
                }
            }
        }
        Monomial { atoms }
    }

    /// Graded lexicographic order: higher degree is larger; at equal degree, the monomial
    /// with more of the smallest atom where they differ is larger. This is a monomial order
    /// (compatible with multiplication), which exact division needs.
    fn grlex_cmp(&self, other: &Self) -> std::cmp::Ordering {
        // For sorted multisets of equal length, "more of the first differing atom" is the
        // reverse of the lexicographic order of the sorted lists.
        self.atoms.len().cmp(&other.atoms.len()).then_with(|| other.atoms.cmp(&self.atoms))
    }
}

/// A polynomial under construction: monomial to wrapping coefficient sum.
type Accumulator<V> = BTreeMap<Monomial<V>, i64>;

fn accumulate<V: Clone + Ord>(acc: &mut Accumulator<V>, monomial: Monomial<V>, coeff: i64) {
    let entry = acc.entry(monomial).or_insert(0);
    *entry = entry.wrapping_add(coeff);
}

/// Whether `divisor` divides `dividend` as integers (`divisor` nonzero).
fn divides(divisor: i64, dividend: i64) -> bool {
    // `checked_rem` is `None` only for a zero divisor, excluded here, and for
    // `i64::MIN % -1`, whose remainder is 0.
    divisor != 0 && dividend.checked_rem(divisor).is_none_or(|rem| rem == 0)
}

impl<V: Clone + Ord + Hash + Debug> Size<V> {
    /// The constant `c`.
    pub fn constant(c: i64) -> Self {
        if c == 0 {
            Size::zero()
        } else {
            Size { terms: vec![Term { monomial: Monomial::one(), coeff: c }] }
        }
    }

    /// The constant 0 (no terms).
    pub fn zero() -> Self {
        Size { terms: Vec::new() }
    }

    /// The constant 1.
    pub fn one() -> Self {
        Size::constant(1)
    }

    /// The size variable `v`.
    pub fn var(v: V) -> Self {
        Size { terms: vec![Term { monomial: Monomial::from_atom(Atom::Var(v)), coeff: 1 }] }
    }

    /// Builds the normal form of a sum of terms: merges equal monomials, drops zeros and
    /// rewrites `(p/q)*q` to `p` until no term can be rewritten.
    fn from_accumulator(mut acc: Accumulator<V>) -> Self {
        loop {
            let reducible =
                acc.iter().filter(|(_, coeff)| **coeff != 0).find_map(|(monomial, coeff)| {
                    reduce_term(monomial, *coeff).map(|expansion| (monomial.clone(), expansion))
                });
            let Some((monomial, expansion)) = reducible else { break };
            acc.remove(&monomial);
            for (monomial, coeff) in expansion {
                accumulate(&mut acc, monomial, coeff);
            }
        }
        let terms = acc
            .into_iter()
            .filter(|(_, coeff)| *coeff != 0)
            .map(|(monomial, coeff)| Term { monomial, coeff })
            .collect();
        Size { terms }
    }

    fn to_accumulator(&self) -> Accumulator<V> {
        self.terms.iter().map(|term| (term.monomial.clone(), term.coeff)).collect()
    }

    /// `self + o`, wrapping.
    pub fn add(&self, o: &Self) -> Self {
        let mut acc = self.to_accumulator();
        for term in &o.terms {
            accumulate(&mut acc, term.monomial.clone(), term.coeff);
        }
        Size::from_accumulator(acc)
    }

    /// `self - o`, wrapping.
    pub fn sub(&self, o: &Self) -> Self {
        self.add(&o.neg())
    }

    /// `self * o`, wrapping.
    pub fn mul(&self, o: &Self) -> Self {
        let mut acc = Accumulator::new();
        for a in &self.terms {
            for b in &o.terms {
                accumulate(&mut acc, a.monomial.mul(&b.monomial), a.coeff.wrapping_mul(b.coeff));
            }
        }
        Size::from_accumulator(acc)
    }

    /// `-self`, wrapping.
    pub fn neg(&self) -> Self {
        // Negating every coefficient keeps the terms sorted and nonzero, and cannot make a
        // term reducible (divisibility of a coefficient does not depend on its sign).
        let terms = self
            .terms
            .iter()
            .map(|term| Term { monomial: term.monomial.clone(), coeff: term.coeff.wrapping_neg() })
            .collect();
        Size { terms }
    }

    /// `self * c` for a constant `c`, wrapping.
    pub fn scale(&self, c: i64) -> Self {
        self.mul(&Size::constant(c))
    }

    /// The exact quotient `self / o`. Returns the polynomial quotient when `o` divides `self`
    /// as a polynomial (so `(p*q)/q = p`, `(2*n)/2 = n`, `6/3 = 2`, `p/1 = p`), and otherwise
    /// a division atom in canonical form (`n/2048`, `(n + 1)/2`). Division by the zero size
    /// gives the atom `p/0`, which fails at evaluation.
    pub fn div_exact(&self, o: &Self) -> Self {
        div::div_exact(self, o)
    }

    /// The polynomial quotient `self / o` if `o` divides `self` exactly as a polynomial
    /// (treating atoms as indeterminates), without creating a division atom.
    pub fn checked_div(&self, o: &Self) -> Option<Self> {
        div::polynomial_div(self, o)
    }

    /// The value, if this size is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.as_slice() {
            [] => Some(0),
            [term] if term.monomial.atoms.is_empty() => Some(term.coeff),
            _ => None,
        }
    }

    /// The variable, if this size is exactly one variable.
    pub fn as_var(&self) -> Option<&V> {
        match self.terms.as_slice() {
            [Term { monomial, coeff: 1 }] => match monomial.atoms.as_slice() {
                [Atom::Var(v)] => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether this is the zero size.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms of the normal form, sorted by monomial.
    pub fn terms(&self) -> &[Term<V>] {
        &self.terms
    }

    /// All variables, sorted and deduplicated, including those inside division atoms.
    pub fn vars(&self) -> Vec<V> {
        let mut vars = BTreeSet::new();
        self.collect_vars(&mut vars);
        vars.into_iter().collect()
    }

    fn collect_vars(&self, vars: &mut BTreeSet<V>) {
        for term in &self.terms {
            for atom in &term.monomial.atoms {
                match atom {
                    Atom::Var(v) => {
                        vars.insert(v.clone());
                    }
                    Atom::Div(dividend, divisor) => {
                        dividend.collect_vars(vars);
                        divisor.collect_vars(vars);
                    }
                }
            }
        }
    }

    /// Whether `v` occurs, including inside division atoms.
    pub fn contains_var(&self, v: &V) -> bool {
        self.terms.iter().any(|term| {
            term.monomial.atoms.iter().any(|atom| match atom {
                Atom::Var(w) => w == v,
                Atom::Div(dividend, divisor) => dividend.contains_var(v) || divisor.contains_var(v),
            })
        })
    }

    /// Replaces each variable `v` for which `f` returns `Some(s)` by `s` (also inside
    /// division atoms), and re-normalises.
    pub fn substitute(&self, f: &mut impl FnMut(&V) -> Option<Size<V>>) -> Size<V> {
        self.replace_vars(&mut |v: &V| f(v).unwrap_or_else(|| Size::var(v.clone())))
    }

    /// Renames every variable with `f`, and re-normalises (the order of variables may change).
    pub fn map_vars<W: Clone + Ord + Hash + Debug>(&self, f: &mut impl FnMut(&V) -> W) -> Size<W> {
        self.replace_vars(&mut |v: &V| Size::var(f(v)))
    }

    /// Replaces every variable by the size `f` gives for it, and re-normalises. The common
    /// core of [`Size::substitute`] and [`Size::map_vars`].
    pub fn replace_vars<W: Clone + Ord + Hash + Debug>(
        &self,
        f: &mut impl FnMut(&V) -> Size<W>,
    ) -> Size<W> {
        let mut res: Size<W> = Size::zero();
        for term in &self.terms {
            let mut product: Size<W> = Size::constant(term.coeff);
            for atom in &term.monomial.atoms {
                let factor = match atom {
                    Atom::Var(v) => f(v),
                    Atom::Div(dividend, divisor) => {
                        dividend.replace_vars(f).div_exact(&divisor.replace_vars(f))
                    }
                };
                product = product.mul(&factor);
            }
            res = res.add(&product);
        }
        res
    }

    /// The leading term in graded lexicographic order.
    fn leading_term(&self) -> Option<&Term<V>> {
        self.terms.iter().max_by(|a, b| a.monomial.grlex_cmp(&b.monomial))
    }
}

/// Rewrites a term `coeff * (p/q) * rest` with `q = c*M`, `c | coeff` and `M ⊆ rest` to
/// `(coeff/c) * p * (rest/M)`, returning the expanded terms.
fn reduce_term<V: Clone + Ord + Hash + Debug>(
    monomial: &Monomial<V>,
    coeff: i64,
) -> Option<Vec<(Monomial<V>, i64)>> {
    for (atom_idx, atom) in monomial.atoms.iter().enumerate() {
        let Atom::Div(dividend, divisor) = atom else { continue };
        let [divisor_term] = divisor.terms.as_slice() else { continue };
        if !divides(divisor_term.coeff, coeff) {
            continue;
        }
        let mut rest = monomial.atoms.clone();
        rest.remove(atom_idx);
        let Some(rest) = (Monomial { atoms: rest }).checked_div(&divisor_term.monomial) else {
            continue;
        };
        let factor = coeff.wrapping_div(divisor_term.coeff);
        return Some(
            dividend
                .terms
                .iter()
                .map(|term| (term.monomial.mul(&rest), term.coeff.wrapping_mul(factor)))
                .collect(),
        );
    }
    None
}

impl<V: Clone + Ord + Hash + Debug> From<i64> for Size<V> {
    fn from(c: i64) -> Self {
        Size::constant(c)
    }
}

// Operators are implemented for references only: an owned-receiver trait method would
// shadow the inherent `add(&self, &Self)` in method-call syntax.
macro_rules! impl_binop {
    ($trait:ident, $method:ident) => {
        impl<V: Clone + Ord + Hash + Debug> $trait<&Size<V>> for &Size<V> {
            type Output = Size<V>;
            fn $method(self, o: &Size<V>) -> Size<V> {
                Size::$method(self, o)
            }
        }
    };
}

impl_binop!(Add, add);
impl_binop!(Sub, sub);
impl_binop!(Mul, mul);

impl<V: Clone + Ord + Hash + Debug> Neg for &Size<V> {
    type Output = Size<V>;
    fn neg(self) -> Size<V> {
        Size::neg(self)
    }
}
