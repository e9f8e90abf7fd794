//! Bounds checks that a loop already proves: `if (!(0 <= i && i < n)) fail` where `i`
//! is the variable of an enclosing loop `for i < n` (or `parfor i < n`) and neither `i`
//! nor `n` changes inside it. The middle end writes a segmented operation's reads as
//! indexing by the space's indices (`xs[i]` for `i < n`), so every element read of a
//! fused kernel carried such a check; besides the compare, its `return` kept POCL from
//! vectorising the loop over work-items (saxpy ran at a third of numpy's speed).
//!
//! Only checks of exactly this shape go: a check whose index is computed (`i + 1`) or
//! whose bound is another size stays, so no error the interpreter reports is lost.

use std::rc::Rc;

use crate::imp::{CExpr, COp, Cmd, Part};

/// A variable known to lie in `0 ..< bound` where the code runs.
#[derive(Clone)]
struct Range {
    var: Rc<str>,
    bound: CExpr,
}

impl Range {
    /// Whether the range still holds throughout `cmds`: they assign neither the
    /// variable nor one its bound reads.
    fn stable_in(&self, cmds: &[Cmd]) -> bool {
        !assigns(cmds, &self.var) && vars_of(&self.bound).iter().all(|v| !assigns(cmds, v))
    }
}

/// Removes from `body` the bounds checks its enclosing loops prove.
pub(crate) fn drop_proven_bounds_checks(body: &mut Vec<Cmd>) {
    drop_in(body, &[]);
}

fn drop_in(cmds: &mut Vec<Cmd>, ranges: &[Range]) {
    cmds.retain(|cmd| !is_proven_check(cmd, ranges));
    for cmd in cmds.iter_mut() {
        match cmd {
            Cmd::For { var, bound, body, .. } | Cmd::ParFor { var, bound, body, .. } => {
                let own = Range { var: var.clone(), bound: bound.clone() };
                let inside: Vec<Range> = ranges
                    .iter()
                    .cloned()
                    .chain(std::iter::once(own))
                    .filter(|r| r.stable_in(body))
                    .collect();
                drop_in(body, &inside);
            }
            Cmd::If { then_cmds, else_cmds, .. } => {
                drop_in(then_cmds, ranges);
                drop_in(else_cmds, ranges);
            }
            Cmd::While { cond_cmds, body, .. } => {
                let inside: Vec<Range> = ranges
                    .iter()
                    .filter(|r| r.stable_in(body) && r.stable_in(cond_cmds))
                    .cloned()
                    .collect();
                drop_in(cond_cmds, &inside);
                drop_in(body, &inside);
            }
            _ => {}
        }
    }
}

/// `if (!(0 <= i && i < n)) { fail; [return] }` with `i < n` a known range.
fn is_proven_check(cmd: &Cmd, ranges: &[Range]) -> bool {
    let Cmd::If { cond: CExpr::Not(ok), then_cmds, else_cmds } = cmd else { return false };
    if !else_cmds.is_empty() || !matches!(then_cmds.first(), Some(Cmd::Fail { .. })) {
        return false;
    }
    let CExpr::Bin(COp::And, low, high) = &**ok else { return false };
    let (CExpr::Bin(COp::Le, zero, i), CExpr::Bin(COp::Lt, i2, n)) = (&**low, &**high) else {
        return false;
    };
    let (CExpr::Int(0), CExpr::Var(i)) = (&**zero, &**i) else { return false };
    matches!(&**i2, CExpr::Var(v) if v == i) && ranges.iter().any(|r| r.var == *i && r.bound == **n)
}

/// Whether any command in `cmds` assigns the variable `name`.
fn assigns(cmds: &[Cmd], name: &str) -> bool {
    cmds.iter().any(|cmd| match cmd {
        Cmd::Assign { name: n, .. } | Cmd::Atomic { fetch: Some(n), .. } => &**n == name,
        other => other.parts().iter().any(|p| matches!(p, Part::Body(b) if assigns(b, name))),
    })
}

/// The variables an expression reads.
fn vars_of(e: &CExpr) -> Vec<Rc<str>> {
    let mut out = Vec::new();
    collect_vars(e, &mut out);
    out
}

fn collect_vars(e: &CExpr, out: &mut Vec<Rc<str>>) {
    match e {
        CExpr::Var(v) => out.push(v.clone()),
        CExpr::Int(_) | CExpr::Lit(_) => {}
        CExpr::Bin(_, a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => collect_vars(a, out),
        CExpr::Load(p, i) => {
            out.push(p.clone());
            collect_vars(i, out);
        }
        CExpr::Select(c, a, b) => {
            collect_vars(c, out);
            collect_vars(a, out);
            collect_vars(b, out);
        }
        CExpr::Call(_, args) | CExpr::Invoke { args, .. } => {
            args.iter().for_each(|a| collect_vars(a, out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(i: &str, n: CExpr) -> Cmd {
        let i = CExpr::var(i);
        let ok = CExpr::bin(
            COp::And,
            CExpr::bin(COp::Le, CExpr::Int(0), i.clone()),
            CExpr::bin(COp::Lt, i.clone(), n.clone()),
        );
        Cmd::If {
            cond: CExpr::not(ok),
            then_cmds: vec![Cmd::Fail { code: 1, a: i, b: n }],
            else_cmds: Vec::new(),
        }
    }

    fn count_checks(cmds: &[Cmd]) -> usize {
        cmds.iter()
            .map(|c| {
                usize::from(matches!(c, Cmd::If { then_cmds, .. } if matches!(then_cmds.first(), Some(Cmd::Fail { .. }))))
                    + c.parts()
                        .iter()
                        .map(|p| if let Part::Body(b) = p { count_checks(b) } else { 0 })
                        .sum::<usize>()
            })
            .sum()
    }

    fn parfor(var: &str, bound: CExpr, body: Vec<Cmd>) -> Cmd {
        Cmd::ParFor {
            level: crate::imp::ParLevel::Grid(0),
            var: Rc::from(var),
            bound,
            body,
            comment: None,
        }
    }

    #[test]
    fn a_check_of_the_loop_variable_against_its_bound_goes() {
        let mut body = vec![parfor("i", CExpr::var("n"), vec![check("i", CExpr::var("n"))])];
        drop_proven_bounds_checks(&mut body);
        assert_eq!(count_checks(&body), 0);
    }

    #[test]
    fn checks_against_other_bounds_or_outside_the_loop_stay() {
        let mut body = vec![
            check("i", CExpr::var("n")),
            parfor(
                "i",
                CExpr::var("n"),
                vec![check("i", CExpr::var("m")), check("j", CExpr::var("n"))],
            ),
        ];
        drop_proven_bounds_checks(&mut body);
        assert_eq!(count_checks(&body), 3);
    }

    #[test]
    fn a_bound_assigned_in_the_loop_proves_nothing() {
        let assign = Cmd::Assign { name: Rc::from("n"), value: CExpr::Int(3) };
        let mut body =
            vec![parfor("i", CExpr::var("n"), vec![assign, check("i", CExpr::var("n"))])];
        drop_proven_bounds_checks(&mut body);
        assert_eq!(count_checks(&body), 1);
    }

    #[test]
    fn nested_loops_prove_their_own_and_outer_ranges() {
        let inner = Cmd::For {
            var: Rc::from("j"),
            bound: CExpr::var("m"),
            body: vec![check("i", CExpr::var("n")), check("j", CExpr::var("m"))],
            comment: None,
        };
        let mut body = vec![parfor("i", CExpr::var("n"), vec![inner]), check("j", CExpr::var("m"))];
        drop_proven_bounds_checks(&mut body);
        assert_eq!(count_checks(&body), 1, "the check after the loops stays");
    }
}
