//! TAIL's optimiser: constant folding of shape computations (the singleton and
//! vector types make `shape`, `firstV` and `≢`-like values known), copy propagation,
//! and dead-code elimination (every TAIL operator is pure).

use std::collections::{HashMap, HashSet};

use crate::tail::{Body, Exp, Op, Program, Var};
use crate::ty::Ty;

/// Optimises a program in place.
pub fn optimise(p: &mut Program) {
    let keep: HashSet<Var> = p.prints.iter().copied().collect();
    let mut subst = HashMap::new();
    body(&mut p.body, &mut subst);
    dce(&mut p.body, &keep);
}

/// A let whose value its type determines: a singleton, or a vector whose elements
/// are all singletons.
fn fold(exp: &Exp, ty: &Ty, lets: &HashMap<Var, Exp>) -> Option<Exp> {
    if matches!(exp, Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) | Exp::Var(_) | Exp::Op(Op::Print, _)) {
        return None;
    }
    match ty {
        Ty::S(crate::ty::Base::Int, v) => v.as_constant().map(Exp::Int),
        Ty::S(crate::ty::Base::Bool, v) => v.as_constant().map(|c| Exp::Bool(c != 0)),
        _ => match exp {
            // The shape of an array whose shape is a literal.
            Exp::Op(Op::ShapeV | Op::Shape, args) => {
                let Some(Exp::Var(v)) = args.first() else { return None };
                match lets.get(v) {
                    Some(Exp::Vector(items, _)) => Some(Exp::Vector(vec![Exp::Int(items.len() as i64)], crate::ty::Base::Int)),
                    _ => None,
                }
            }
            _ => None,
        },
    }
}

fn subst_exp(e: &mut Exp, subst: &HashMap<Var, Exp>) {
    match e {
        Exp::Var(v) => {
            if let Some(r) = subst.get(v) {
                *e = r.clone();
            }
        }
        Exp::Vector(items, _) | Exp::Op(_, items) => items.iter_mut().for_each(|i| subst_exp(i, subst)),
        Exp::Lam(_, b) => {
            let mut inner = subst.clone();
            body(b, &mut inner);
        }
        Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) => {}
    }
}

fn body(b: &mut Body, subst: &mut HashMap<Var, Exp>) {
    let mut known: HashMap<Var, Exp> = HashMap::new();
    let mut out = Vec::new();
    for mut l in std::mem::take(&mut b.lets) {
        subst_exp(&mut l.exp, subst);
        if let Some(c) = fold(&l.exp, &l.ty, &known) {
            l.exp = c;
        }
        match &l.exp {
            // Copy propagation: variables and scalar literals are substituted.
            Exp::Var(_) | Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) => {
                subst.insert(l.var, l.exp.clone());
            }
            _ => {
                known.insert(l.var, l.exp.clone());
                out.push(l);
            }
        }
    }
    b.lets = out;
    subst_exp(&mut b.result, subst);
}

fn uses(e: &Exp, used: &mut HashSet<Var>) {
    match e {
        Exp::Var(v) => {
            used.insert(*v);
        }
        Exp::Vector(items, _) | Exp::Op(_, items) => items.iter().for_each(|i| uses(i, used)),
        Exp::Lam(_, b) => {
            b.lets.iter().for_each(|l| uses(&l.exp, used));
            uses(&b.result, used);
        }
        Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) => {}
    }
}

fn dce(b: &mut Body, keep: &HashSet<Var>) {
    let mut used = keep.clone();
    uses(&b.result, &mut used);
    let mut kept = Vec::new();
    for mut l in std::mem::take(&mut b.lets).into_iter().rev() {
        if used.contains(&l.var) {
            if let Exp::Lam(_, inner) = &mut l.exp {
                dce(inner, keep);
            }
            if let Exp::Op(_, args) = &mut l.exp {
                for a in args.iter_mut() {
                    if let Exp::Lam(_, inner) = a {
                        dce(inner, keep);
                    }
                }
            }
            uses(&l.exp, &mut used);
            kept.push(l);
        }
    }
    kept.reverse();
    b.lets = kept;
}
