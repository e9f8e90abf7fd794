//! Printing sizes the way Weft source writes them (LANGUAGE.md §2 grammar): `n*m`,
//! `n/2048`, `n - k`, `2*n + 1`, `(n + 1)/2`, `-n`, `0`.
//!
//! Terms print by descending degree, positive terms before negative ones of the same degree,
//! then in graded lexicographic order, so the output is deterministic and reads naturally.
//! Powers print as repeated products (`n*n`): Weft has no power operator. A division atom is
//! parenthesised whenever it is not the whole term, and its operands whenever they are not a
//! single variable or a non-negative constant, so the text parses back to the same size.

use std::fmt::{self, Debug, Display};
use std::hash::Hash;

use crate::{Atom, Size, Term};

/// A [`Size`] with a way to name its variables; see [`Size::display`].
pub struct SizeDisplay<'a, V> {
    size: &'a Size<V>,
    name: &'a dyn Fn(&V) -> String,
}

impl<V: Clone + Ord + Hash + Debug> Size<V> {
    /// Displays this size with variables named by `name`.
    pub fn display<'a>(&'a self, name: &'a dyn Fn(&V) -> String) -> SizeDisplay<'a, V> {
        SizeDisplay { size: self, name }
    }
}

impl<V: Clone + Ord + Hash + Debug> Display for SizeDisplay<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_size(f, self.size, self.name)
    }
}

impl<V: Clone + Ord + Hash + Debug + Display> Display for Size<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_size(f, self, &|v: &V| v.to_string())
    }
}

fn write_size<V: Clone + Ord + Hash + Debug>(
    f: &mut fmt::Formatter<'_>,
    size: &Size<V>,
    name: &dyn Fn(&V) -> String,
) -> fmt::Result {
    let mut terms: Vec<&Term<V>> = size.terms.iter().collect();
    if terms.is_empty() {
        return f.write_str("0");
    }
    terms.sort_by(|a, b| {
        b.monomial
            .degree()
            .cmp(&a.monomial.degree())
            .then_with(|| (a.coeff < 0).cmp(&(b.coeff < 0)))
            .then_with(|| b.monomial.grlex_cmp(&a.monomial))
    });
    for (term_idx, term) in terms.iter().enumerate() {
        let negative = term.coeff < 0;
        match (term_idx, negative) {
            (0, false) => {}
            (0, true) => f.write_str("-")?,
            (_, false) => f.write_str(" + ")?,
            (_, true) => f.write_str(" - ")?,
        }
        write_term_magnitude(f, term, name)?;
    }
    Ok(())
}

/// Writes `|coeff| * atoms`.
fn write_term_magnitude<V: Clone + Ord + Hash + Debug>(
    f: &mut fmt::Formatter<'_>,
    term: &Term<V>,
    name: &dyn Fn(&V) -> String,
) -> fmt::Result {
    let magnitude = term.coeff.unsigned_abs();
    let atoms = term.monomial.atoms();
    if atoms.is_empty() {
        return write!(f, "{magnitude}");
    }
    let alone = magnitude == 1 && atoms.len() == 1 && term.coeff > 0;
    if magnitude != 1 {
        write!(f, "{magnitude}*")?;
    }
    for (atom_idx, atom) in atoms.iter().enumerate() {
        if atom_idx > 0 {
            f.write_str("*")?;
        }
        match atom {
            Atom::Var(v) => f.write_str(&name(v))?,
            Atom::Div(dividend, divisor) => {
                if !alone {
                    f.write_str("(")?;
                }
                write_operand(f, dividend, name)?;
                f.write_str("/")?;
                write_operand(f, divisor, name)?;
                if !alone {
                    f.write_str(")")?;
                }
            }
        }
    }
    Ok(())
}

fn write_operand<V: Clone + Ord + Hash + Debug>(
    f: &mut fmt::Formatter<'_>,
    size: &Size<V>,
    name: &dyn Fn(&V) -> String,
) -> fmt::Result {
    let simple = size.as_var().is_some() || size.as_constant().is_some_and(|c| c >= 0);
    if simple {
        write_size(f, size, name)
    } else {
        f.write_str("(")?;
        write_size(f, size, name)?;
        f.write_str(")")
    }
}
