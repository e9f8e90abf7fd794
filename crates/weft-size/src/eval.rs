//! Evaluation of a size under an environment of variable values, with wrapping `i64`
//! arithmetic (the crate docs say why) and a run-time check of every exact division
//! (LANGUAGE.md §2: "divisibility is checked at run time with a clear error").

use std::fmt::Debug;
use std::hash::Hash;

use crate::{Atom, Size};

/// Why a size could not be evaluated.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum EvalError<V: Debug> {
    /// The environment has no value for this variable.
    #[error("size variable `{0:?}` has no value")]
    UnboundVar(V),
    /// A division atom's divisor evaluated to 0.
    #[error("size division by zero")]
    DivisionByZero,
    /// A division atom's divisor does not divide its dividend.
    #[error("size `{dividend}` is not divisible by `{divisor}`")]
    NotDivisible {
        /// The value of the dividend.
        dividend: i64,
        /// The value of the divisor.
        divisor: i64,
    },
}

impl<V: Clone + Ord + Hash + Debug> Size<V> {
    /// The value of this size when each variable `v` has the value `env(v)`. Arithmetic
    /// wraps; a division atom whose divisor is zero or does not divide its dividend is an
    /// error.
    pub fn eval(&self, env: &mut impl FnMut(&V) -> Option<i64>) -> Result<i64, EvalError<V>> {
        let mut sum: i64 = 0;
        for term in &self.terms {
            let mut product = term.coeff;
            for atom in &term.monomial.atoms {
                let value = match atom {
                    Atom::Var(v) => env(v).ok_or_else(|| EvalError::UnboundVar(v.clone()))?,
                    Atom::Div(dividend, divisor) => {
                        let dividend = dividend.eval(env)?;
                        let divisor = divisor.eval(env)?;
                        if divisor == 0 {
                            return Err(EvalError::DivisionByZero);
                        }
                        // `checked_rem` is `None` only for `i64::MIN % -1`, which is 0.
                        if dividend.checked_rem(divisor).is_some_and(|rem| rem != 0) {
                            return Err(EvalError::NotDivisible { dividend, divisor });
                        }
                        dividend.wrapping_div(divisor)
                    }
                };
                product = product.wrapping_mul(value);
            }
            sum = sum.wrapping_add(product);
        }
        Ok(sum)
    }
}
