//! Exact division of sizes: polynomial division, and the canonical form of division atoms
//! (LANGUAGE.md §2: `p / q` is opaque, with `(p*q)/q = p`).
//!
//! Polynomial division treats atoms as indeterminates and uses the graded lexicographic
//! monomial order. Over the integers, `q` divides `p` exactly iff repeatedly cancelling the
//! leading term of the remainder with a multiple of `q`'s leading term never fails and ends
//! at zero, so the test below is a decision procedure (up to the wrapping caveat in the crate
//! docs).

use std::fmt::Debug;
use std::hash::Hash;

use crate::{Accumulator, Atom, Monomial, Size, Term, accumulate, divides};

/// Bounds the number of cancellation steps, so that a pathological input (wrapping
/// coefficients) cannot loop for long; exceeding it just means "not divisible".
const MAX_DIVISION_STEPS: usize = 10_000;

/// The polynomial quotient `dividend / divisor`, if the division is exact.
pub(crate) fn polynomial_div<V: Clone + Ord + Hash + Debug>(
    dividend: &Size<V>,
    divisor: &Size<V>,
) -> Option<Size<V>> {
    let divisor_lead = divisor.leading_term()?;
    let mut rem = dividend.to_accumulator();
    let mut quotient = Accumulator::new();
    for _ in 0..MAX_DIVISION_STEPS {
        rem.retain(|_, coeff| *coeff != 0);
        let Some((rem_lead, rem_coeff)) =
            rem.iter().max_by(|(a, _), (b, _)| a.grlex_cmp(b)).map(|(m, c)| (m.clone(), *c))
        else {
            return Some(Size::from_accumulator(quotient));
        };
        if !divides(divisor_lead.coeff, rem_coeff) {
            return None;
        }
        let factor_monomial = rem_lead.checked_div(&divisor_lead.monomial)?;
        let factor_coeff = rem_coeff.wrapping_div(divisor_lead.coeff);
        for term in &divisor.terms {
            accumulate(
                &mut rem,
                term.monomial.mul(&factor_monomial),
                term.coeff.wrapping_mul(factor_coeff).wrapping_neg(),
            );
        }
        accumulate(&mut quotient, factor_monomial, factor_coeff);
    }
    None
}

/// `dividend / divisor`: the polynomial quotient when exact, otherwise a canonical division
/// atom.
pub(crate) fn div_exact<V: Clone + Ord + Hash + Debug>(
    dividend: &Size<V>,
    divisor: &Size<V>,
) -> Size<V> {
    if let Some(quotient) = polynomial_div(dividend, divisor) {
        return quotient;
    }
    if divisor.is_zero() {
        return atom(dividend.clone(), divisor.clone(), 1);
    }
    // Cancel the common integer content and the common monomial factor: `(2*n)/(2*m)` and
    // `n/m` must be the same atom.
    let mut content: u64 = 0;
    let mut common: Option<Monomial<V>> = None;
    for term in dividend.terms.iter().chain(&divisor.terms) {
        content = gcd(content, term.coeff.unsigned_abs());
        common = Some(match common {
            None => term.monomial.clone(),
            Some(common) => common.gcd(&term.monomial),
        });
    }
    let content = i64::try_from(content).unwrap_or(1);
    let common = Size {
        terms: vec![Term { monomial: common.unwrap_or_else(Monomial::one), coeff: content }],
    };
    let (mut dividend, mut divisor) =
        match (polynomial_div(dividend, &common), polynomial_div(divisor, &common)) {
            (Some(dividend), Some(divisor)) => (dividend, divisor),
            _ => (dividend.clone(), divisor.clone()),
        };
    // Signs: `p/(-q) = (-p)/q` and `(-p)/q = -(p/q)` for exact division.
    if divisor.leading_term().is_some_and(|term| term.coeff < 0) {
        dividend = dividend.neg();
        divisor = divisor.neg();
    }
    let mut sign = 1;
    if dividend.leading_term().is_some_and(|term| term.coeff < 0) {
        dividend = dividend.neg();
        sign = -1;
    }
    atom(dividend, divisor, sign)
}

fn atom<V: Clone + Ord + Hash + Debug>(dividend: Size<V>, divisor: Size<V>, coeff: i64) -> Size<V> {
    Size {
        terms: vec![Term {
            monomial: Monomial::from_atom(Atom::Div(Box::new(dividend), Box::new(divisor))),
            coeff,
        }],
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
