//! Tests: printing snapshots, normalisation, and proptest laws (normalising preserves the
//! wrapping value; substitution commutes with evaluation; ring laws hold on normal forms;
//! `(p*q)/q = p`).
//!
//! Sizes in tests are written as text and read by a small test-only parser for the size
//! grammar of LANGUAGE.md §2, with single-letter or longer identifiers as variables.

use expect_test::{Expect, expect};
use proptest::prelude::*;

use crate::{EvalError, Size};

type S = Size<String>;

/// Parses the LANGUAGE.md §2 size grammar (`+ - * /`, parentheses, unary minus).
fn parse(text: &str) -> S {
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut pos = 0;
    let size = parse_sum(&tokens, &mut pos);
    assert_eq!(pos, tokens.len(), "trailing input in {text:?}");
    size
}

fn parse_sum(tokens: &[char], pos: &mut usize) -> S {
    let mut acc = parse_product(tokens, pos);
    while let Some(&op) = tokens.get(*pos) {
        match op {
            '+' => {
                *pos += 1;
                acc = acc.add(&parse_product(tokens, pos));
            }
            '-' => {
                *pos += 1;
                acc = acc.sub(&parse_product(tokens, pos));
            }
            _ => break,
        }
    }
    acc
}

fn parse_product(tokens: &[char], pos: &mut usize) -> S {
    let mut acc = parse_atom(tokens, pos);
    while let Some(&op) = tokens.get(*pos) {
        match op {
            '*' => {
                *pos += 1;
                acc = acc.mul(&parse_atom(tokens, pos));
            }
            '/' => {
                *pos += 1;
                acc = acc.div_exact(&parse_atom(tokens, pos));
            }
            _ => break,
        }
    }
    acc
}

fn parse_atom(tokens: &[char], pos: &mut usize) -> S {
    match tokens[*pos] {
        '(' => {
            *pos += 1;
            let inner = parse_sum(tokens, pos);
            assert_eq!(tokens[*pos], ')');
            *pos += 1;
            inner
        }
        '-' => {
            *pos += 1;
            parse_atom(tokens, pos).neg()
        }
        c if c.is_ascii_digit() => {
            let start = *pos;
            while tokens.get(*pos).is_some_and(|c| c.is_ascii_digit()) {
                *pos += 1;
            }
            Size::constant(tokens[start..*pos].iter().collect::<String>().parse().unwrap())
        }
        _ => {
            let start = *pos;
            while tokens.get(*pos).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
                *pos += 1;
            }
            assert!(*pos > start, "unexpected {:?}", tokens[start]);
            Size::var(tokens[start..*pos].iter().collect())
        }
    }
}

fn check(text: &str, expect: Expect) {
    expect.assert_eq(&parse(text).to_string());
}

fn assert_same(a: &str, b: &str) {
    assert_eq!(parse(a), parse(b), "{a} vs {b}");
}

#[test]
fn prints_products_sums_and_divisions() {
    check("n*m", expect!["m*n"]);
    check("n/2048", expect!["n/2048"]);
    check("n - k", expect!["n - k"]);
    check("1 + n*2", expect!["2*n + 1"]);
    check("(n + 1)/2", expect!["(n + 1)/2"]);
    check("-n", expect!["-n"]);
    check("n - n", expect!["0"]);
    check("-5", expect!["-5"]);
    check("n*n*n - 3*n*m + 7", expect!["n*n*n - 3*m*n + 7"]);
    check("2*(n/3)", expect!["2*(n/3)"]);
    check("m*(n/3) - 1", expect!["m*(n/3) - 1"]);
    check("(n*m)/k", expect!["(m*n)/k"]);
    check("n/(k + 1)", expect!["n/(k + 1)"]);
    check("-(n/3)", expect!["-(n/3)"]);
    check("(n/2)/3", expect!["(n/2)/3"]);
}

#[test]
fn display_with_custom_names() {
    let size: Size<u32> = Size::var(0).mul(&Size::var(1)).add(&Size::constant(1));
    let names = ["n", "m"];
    let name = |v: &u32| names[*v as usize].to_owned();
    expect!["n*m + 1"].assert_eq(&size.display(&name).to_string());
}

#[test]
fn products_commute() {
    assert_same("n*m", "m*n");
    assert_same("n*m*k", "k*(m*n)");
}

#[test]
fn difference_of_squares_expands() {
    assert_same("(n + 1)*(n - 1)", "n*n - 1");
}

#[test]
fn equal_terms_cancel() {
    assert_eq!(parse("x - x"), Size::zero());
    assert_eq!(parse("2*x*y - y*x - x*y"), Size::zero());
}

#[test]
fn multiplied_divisor_cancels_in_division() {
    assert_same("(n*k)/k", "n");
    assert_same("(2*n)/2", "n");
    assert_same("(2*n + 4)/2", "n + 2");
    assert_same("(n*n - 1)/(n + 1)", "n - 1");
    assert_same("(n*m + n*k)/n", "m + k");
    assert_same("12/4", "3");
    assert_same("n/1", "n");
    assert_same("n/(-1)", "-n");
}

#[test]
fn indivisible_division_is_an_atom() {
    check("7/2", expect!["7/2"]);
    check("(n + 1)/n", expect!["(n + 1)/n"]);
    assert_eq!(parse("n/2").as_constant(), None);
}

#[test]
fn division_atoms_are_canonical() {
    assert_same("(2*n)/(2*m)", "n/m");
    assert_same("(n*k)/(m*k)", "n/m");
    assert_same("(2*n)/4", "n/2");
    assert_same("n/(-m)", "-(n/m)");
    assert_same("(-n)/m", "-(n/m)");
    assert_same("(n - k)/2 + (k - n)/2", "0");
}

#[test]
fn divided_size_times_divisor_cancels() {
    assert_same("(n/k)*k", "n");
    assert_same("(n/2)*2", "n");
    assert_same("(n/2)*4", "2*n");
    assert_same("(n/2) + (n/2)", "n");
    assert_same("((n + 1)/2)*2*m", "n*m + m");
    check("(n/2)*3", expect!["3*(n/2)"]);
    check("(n/(k + 1))*(k + 1)", expect!["k*(n/(k + 1)) + n/(k + 1)"]);
}

#[test]
fn division_by_zero_size_stays_an_atom() {
    check("n/0", expect!["n/0"]);
    assert_eq!(parse("n/0").eval(&mut |_| Some(4)), Err(EvalError::DivisionByZero));
    assert_same("0/n", "0");
}

#[test]
fn eval_checks_divisibility() {
    let size = parse("n/2 + 1");
    assert_eq!(size.eval(&mut |_| Some(8)), Ok(5));
    assert_eq!(
        size.eval(&mut |_| Some(7)),
        Err(EvalError::NotDivisible { dividend: 7, divisor: 2 })
    );
    assert_eq!(size.eval(&mut |_| None), Err(EvalError::UnboundVar("n".to_owned())));
}

#[test]
fn eval_wraps() {
    let size = parse("n*n");
    assert_eq!(size.eval(&mut |_| Some(1 << 32)), Ok(0));
    let size = Size::<String>::constant(i64::MAX).add(&Size::one());
    assert_eq!(size.as_constant(), Some(i64::MIN));
    assert_eq!(Size::<String>::constant(1 << 62).scale(4), Size::zero());
}

#[test]
fn queries() {
    let size = parse("n*m + k/(j + 1)");
    assert_eq!(size.vars(), vec!["j", "k", "m", "n"]);
    assert!(size.contains_var(&"j".to_owned()));
    assert!(!size.contains_var(&"x".to_owned()));
    assert_eq!(parse("n").as_var(), Some(&"n".to_owned()));
    assert_eq!(parse("2*n").as_var(), None);
    assert_eq!(parse("3").as_constant(), Some(3));
    assert_eq!(parse("0").as_constant(), Some(0));
    assert!(Size::<String>::zero().is_zero());
}

#[test]
fn substitute_renormalises_division() {
    let size = parse("n/k + m");
    let substituted = size.substitute(&mut |v| (v == "n").then(|| parse("2*k*j")));
    assert_same(&substituted.to_string(), "2*j + m");
    let renamed = parse("(a + b)/c").map_vars(&mut |v| format!("{v}_0"));
    expect!["(a_0 + b_0)/c_0"].assert_eq(&renamed.to_string());
}

#[test]
fn operators_match_methods() {
    let (n, m) = (parse("n"), parse("m"));
    assert_eq!(&n + &m, n.add(&m));
    assert_eq!(&n - &m, n.sub(&m));
    assert_eq!(&n * &m, n.mul(&m));
    assert_eq!(-&n, n.neg());
    assert_eq!(&(&n * &m) + &Size::from(1), parse("n*m + 1"));
}

/// An expression tree without division over variables `0..N_VARS`.
#[derive(Clone, Debug)]
enum Expr {
    Const(i64),
    Var(u8),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
}

const N_VARS: u8 = 3;

fn expr_strategy(coeff: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![coeff.prop_map(Expr::Const), (0..N_VARS).prop_map(Expr::Var)];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Mul(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Expr::Neg(Box::new(a))),
        ]
    })
}

fn any_expr() -> impl Strategy<Value = Expr> {
    expr_strategy(i64::MIN..=i64::MAX)
}

/// Small coefficients, so that products of these trees do not overflow and exact division
/// behaves as over the integers.
fn small_expr() -> impl Strategy<Value = Expr> {
    expr_strategy(-9..=9)
}

fn eval_expr(expr: &Expr, env: &[i64]) -> i64 {
    match expr {
        Expr::Const(c) => *c,
        Expr::Var(v) => env[usize::from(*v)],
        Expr::Add(a, b) => eval_expr(a, env).wrapping_add(eval_expr(b, env)),
        Expr::Sub(a, b) => eval_expr(a, env).wrapping_sub(eval_expr(b, env)),
        Expr::Mul(a, b) => eval_expr(a, env).wrapping_mul(eval_expr(b, env)),
        Expr::Neg(a) => eval_expr(a, env).wrapping_neg(),
    }
}

fn to_size(expr: &Expr) -> Size<u8> {
    match expr {
        Expr::Const(c) => Size::constant(*c),
        Expr::Var(v) => Size::var(*v),
        Expr::Add(a, b) => to_size(a).add(&to_size(b)),
        Expr::Sub(a, b) => to_size(a).sub(&to_size(b)),
        Expr::Mul(a, b) => to_size(a).mul(&to_size(b)),
        Expr::Neg(a) => to_size(a).neg(),
    }
}

fn eval_size(size: &Size<u8>, env: &[i64]) -> i64 {
    size.eval(&mut |v| env.get(usize::from(*v)).copied()).unwrap()
}

fn env_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(prop_oneof![-20i64..20, any::<i64>()], usize::from(N_VARS))
}

proptest! {
    #[test]
    fn normalising_preserves_wrapping_value(expr in any_expr(), env in env_strategy()) {
        prop_assert_eq!(eval_size(&to_size(&expr), &env), eval_expr(&expr, &env));
    }

    #[test]
    fn substitute_then_eval_is_eval_in_substituted_env(
        expr in any_expr(),
        replacements in prop::collection::vec(any_expr(), usize::from(N_VARS)),
        env in env_strategy(),
    ) {
        let size = to_size(&expr);
        let substituted = size.substitute(&mut |v| Some(to_size(&replacements[usize::from(*v)])));
        let env2: Vec<i64> = replacements.iter().map(|r| eval_expr(r, &env)).collect();
        prop_assert_eq!(eval_size(&substituted, &env), eval_size(&size, &env2));
    }

    #[test]
    fn ring_laws_hold_on_normal_forms(a in any_expr(), b in any_expr(), c in any_expr()) {
        let (a, b, c) = (to_size(&a), to_size(&b), to_size(&c));
        prop_assert_eq!(a.add(&b), b.add(&a));
        prop_assert_eq!(a.mul(&b), b.mul(&a));
        prop_assert_eq!(a.add(&b).add(&c), a.add(&b.add(&c)));
        prop_assert_eq!(a.mul(&b).mul(&c), a.mul(&b.mul(&c)));
        prop_assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
        prop_assert_eq!(a.sub(&a), Size::zero());
        prop_assert_eq!(a.add(&Size::zero()), a.clone());
        prop_assert_eq!(a.mul(&Size::one()), a.clone());
        prop_assert_eq!(a.neg().neg(), a);
    }

    #[test]
    fn product_divided_by_factor_is_other_factor(p in small_expr(), q in small_expr()) {
        let (p, q) = (to_size(&p), to_size(&q));
        prop_assume!(!q.is_zero());
        prop_assert_eq!(p.mul(&q).div_exact(&q), p.clone());
        prop_assert_eq!(p.div_exact(&q).mul(&q).div_exact(&q), p.div_exact(&q));
    }

    #[test]
    fn division_evaluates_to_the_exact_quotient(
        p in small_expr(),
        q in small_expr(),
        env in prop::collection::vec(-5i64..=5, usize::from(N_VARS)),
    ) {
        let (p_value, q_value) = (eval_expr(&p, &env), eval_expr(&q, &env));
        prop_assume!(q_value != 0 && p_value % q_value == 0);
        let quotient = to_size(&p).div_exact(&to_size(&q));
        let value = quotient.eval(&mut |v| env.get(usize::from(*v)).copied());
        prop_assert_eq!(value, Ok(p_value / q_value), "{:?}", quotient);
    }

    #[test]
    fn map_vars_round_trips(expr in any_expr()) {
        let size = to_size(&expr);
        let renamed = size.map_vars(&mut |v| u32::from(*v) + 10);
        prop_assert_eq!(renamed.map_vars(&mut |v| u8::try_from(*v - 10).unwrap()), size);
    }
}
