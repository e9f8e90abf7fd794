//! TAIL's optimiser: constant folding of shape computations (the singleton and
//! vector types make `shape`, `firstV` and `≢`-like values known), copy propagation,
//! and dead-code elimination (every TAIL operator is pure).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::tail::{Body, Exp, Op, Program, Var};
use crate::ty::{Base, Ty};

/// Optimises a program in place.
pub fn optimise(p: &mut Program) {
    let keep: HashSet<Var> = p.prints.iter().copied().collect();
    let mut subst = HashMap::default();
    body(&mut p.body, &mut subst);
    dce(&mut p.body, &keep);
}

/// A let whose value its type determines: a singleton, or a vector whose elements
/// are all singletons.
fn fold(exp: &Exp, ty: &Ty, lets: &HashMap<Var, Exp>) -> Option<Exp> {
    if matches!(
        exp,
        Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) | Exp::Var(_) | Exp::Op(Op::Print, _)
    ) {
        return None;
    }
    match ty {
        Ty::S(Base::Int, v) => return v.as_constant().map(Exp::Int),
        Ty::S(Base::Bool, v) => return v.as_constant().map(|c| Exp::Bool(c != 0)),
        // `shapeV` of a vector of known length.
        Ty::SV(Base::Int, v) if matches!(exp, Exp::Op(Op::ShapeV, _)) => {
            return v.as_constant().map(|n| Exp::Vector(vec![Exp::Int(n)], Base::Int));
        }
        _ => {}
    }
    let Exp::Op(op, args) = exp else { return None };
    // Shape-vector operators on literal vectors of integers.
    let ints = |e: &Exp| -> Option<Vec<i64>> {
        let items = match e {
            Exp::Vector(items, Base::Int) => items,
            Exp::Var(v) => match lets.get(v) {
                Some(Exp::Vector(items, Base::Int)) => items,
                _ => return None,
            },
            _ => return None,
        };
        items.iter().map(|i| if let Exp::Int(k) = i { Some(*k) } else { None }).collect()
    };
    let int = |e: &Exp| if let Exp::Int(k) = e { Some(*k) } else { None };
    let vector = |v: Vec<i64>| Some(Exp::Vector(v.into_iter().map(Exp::Int).collect(), Base::Int));
    match (op, args.as_slice()) {
        (Op::Shape, [Exp::Var(v)]) => vector(shape_of(*v, lets)?),
        (Op::CatV, [a, b]) => {
            let mut a = ints(a)?;
            a.extend(ints(b)?);
            vector(a)
        }
        (Op::ConsV, [x, v]) => {
            let mut out = vec![int(x)?];
            out.extend(ints(v)?);
            vector(out)
        }
        (Op::SnocV, [v, x]) => {
            let mut out = ints(v)?;
            out.push(int(x)?);
            vector(out)
        }
        (Op::TakeV, [n, v]) => {
            let (n, v) = (int(n)?, ints(v)?);
            let k = usize::try_from(n.unsigned_abs()).ok()?;
            if k > v.len() {
                return None;
            }
            vector(if n >= 0 { v[..k].to_vec() } else { v[v.len() - k..].to_vec() })
        }
        (Op::DropV, [n, v]) => {
            let (n, v) = (int(n)?, ints(v)?);
            let k = usize::try_from(n.unsigned_abs()).ok()?.min(v.len());
            vector(if n >= 0 { v[k..].to_vec() } else { v[..v.len() - k].to_vec() })
        }
        (Op::FirstV, [v]) => ints(v)?.first().copied().map(Exp::Int),
        _ => None,
    }
}

/// The shape of a let-bound array, when its operators fix it: a reshape to a literal
/// shape, and transpositions of such arrays.
fn shape_of(v: Var, lets: &HashMap<Var, Exp>) -> Option<Vec<i64>> {
    let Some(Exp::Op(op, args)) = lets.get(&v) else { return None };
    let ints = |e: &Exp| -> Option<Vec<i64>> {
        let items = match e {
            Exp::Vector(items, Base::Int) => items,
            Exp::Var(v) => match lets.get(v) {
                Some(Exp::Vector(items, Base::Int)) => items,
                _ => return None,
            },
            _ => return None,
        };
        items.iter().map(|i| if let Exp::Int(k) = i { Some(*k) } else { None }).collect()
    };
    match (op, args.as_slice()) {
        (Op::Reshape, [s, _, _]) => ints(s),
        (Op::Transp, [Exp::Var(x)]) => {
            let mut s = shape_of(*x, lets)?;
            s.reverse();
            Some(s)
        }
        (Op::Transp2, [p, Exp::Var(x)]) => {
            let (p, s) = (ints(p)?, shape_of(*x, lets)?);
            let mut out = vec![0; s.len()];
            for (k, &to) in p.iter().enumerate() {
                *out.get_mut(usize::try_from(to - 1).ok()?)? = *s.get(k)?;
            }
            Some(out)
        }
        (Op::Each, [_, Exp::Var(x)]) | (Op::ZipWith, [_, Exp::Var(x), _]) => shape_of(*x, lets),
        _ => None,
    }
}

fn subst_exp(e: &mut Exp, subst: &HashMap<Var, Exp>) {
    match e {
        Exp::Var(v) => {
            if let Some(r) = subst.get(v) {
                *e = r.clone();
            }
        }
        Exp::Vector(items, _) | Exp::Op(_, items) => {
            items.iter_mut().for_each(|i| subst_exp(i, subst))
        }
        Exp::Lam(_, b) => {
            let mut inner = subst.clone();
            body(b, &mut inner);
        }
        Exp::Int(_) | Exp::Double(_) | Exp::Bool(_) => {}
    }
}

fn body(b: &mut Body, subst: &mut HashMap<Var, Exp>) {
    let mut known: HashMap<Var, Exp> = HashMap::default();
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
