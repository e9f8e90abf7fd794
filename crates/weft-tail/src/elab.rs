//! Elaboration of APL into TAIL, with type inference: infix resolution is done by
//! the parser; here every dfn and operator is inlined, scalar extension becomes
//! `each`/`zipWith`, overloading is resolved by arity and argument types, identity
//! items are supplied to reductions, and `b2i`/`i2d` coercions are inserted. Every
//! TAIL expression gets its type from its operator's typing function with the fast
//! paths of Fig 3.3 (singletons and vectors of known length), so no annotation is
//! needed; errors are reported in APL's terms with the source range.

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use crate::syntax::{Diagnostic, Expr, Fun, Operand, Span, Stmt};
use crate::tail::{Body, Exp, Let, Op, Program, ScalarOp, Var};
use crate::ty::{Base, Shape, Ty, describe};

/// A value during elaboration: an atom (variable or literal) and its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Val {
    pub exp: Exp,
    pub ty: Ty,
}

#[derive(Clone)]
enum Binding {
    /// A name whose definition had a syntax error (already reported).
    Poisoned,
    Val(Val),
    Fun(Rc<Closure>),
    Op(Rc<OpDef>),
}

/// A function with the environment it was defined in.
struct Closure {
    fun: Fun,
    env: Env,
}

struct OpDef {
    body: Vec<Stmt>,
    env: Env,
}

/// An operand bound for `⍺⍺`/`⍵⍵`.
#[derive(Clone)]
enum Bound {
    Fun(Rc<Closure>),
    /// An array operand (`f⍣n`-like user operators); `⍺⍺` always names a function in
    /// this subset, so using one is an error.
    Val,
}

#[derive(Clone, Default)]
struct Env {
    names: Rc<HashMap<String, Binding>>,
    alpha: Option<Val>,
    omega: Option<Val>,
    aa: Option<Box<Bound>>,
    ww: Option<Box<Bound>>,
}

impl Env {
    fn bind(&mut self, name: &str, b: Binding) {
        Rc::make_mut(&mut self.names).insert(name.to_owned(), b);
    }
}

/// Marks an error already reported.
#[derive(Debug)]
pub struct Reported;

type R<T> = Result<T, Reported>;

/// The result of elaboration: the TAIL program (if there were no errors), the errors,
/// and the type of every named value and application, by source range (for hovers).
pub struct Elaborated {
    pub program: Option<Program>,
    pub diagnostics: Vec<Diagnostic>,
    pub types: Vec<(Span, Ty)>,
}

/// Elaborates a parsed file.
pub fn elaborate(stmts: &[Stmt], poisoned: &[String]) -> Elaborated {
    let mut e = Elab {
        next: 0,
        scopes: vec![Vec::new()],
        diags: Vec::new(),
        types: Vec::new(),
        prints: Vec::new(),
        names: Vec::new(),
    };
    let mut env = Env::default();
    for name in poisoned {
        env.bind(name, Binding::Poisoned);
    }
    let mut last: Option<Val> = None;
    for s in stmts {
        match e.stmt(s, &mut env) {
            Ok(Some(v)) => last = Some(v),
            Ok(None) => {}
            Err(Reported) => {}
        }
    }
    let lets = e.scopes.pop().unwrap_or_default();
    let program = match (e.diags.is_empty(), last) {
        (true, Some(v)) => Some(Program {
            body: Body { lets, result: v.exp, ty: v.ty },
            prints: e.prints.clone(),
            names: e.names.clone(),
        }),
        (true, None) => {
            e.diags.push(Diagnostic {
                span: Span::default(),
                message: "the program computes no value (its last statement must be an expression)"
                    .to_owned(),
            });
            None
        }
        (false, _) => None,
    };
    Elaborated { program, diagnostics: e.diags, types: e.types }
}

struct Elab {
    next: Var,
    scopes: Vec<Vec<Let>>,
    diags: Vec<Diagnostic>,
    types: Vec<(Span, Ty)>,
    prints: Vec<Var>,
    names: Vec<(Var, String)>,
}

fn int(i: i64) -> Val {
    Val { exp: Exp::Int(i), ty: Ty::S(Base::Int, Shape::constant(i)) }
}

fn dbl(d: f64) -> Val {
    Val { exp: Exp::Double(d), ty: Ty::scalar(Base::Double) }
}

fn boolean(b: bool) -> Val {
    Val { exp: Exp::Bool(b), ty: Ty::S(Base::Bool, Shape::constant(i64::from(b))) }
}

/// The array form of `ty` with elements of `base` (the result of `each`).
fn same_form(ty: &Ty, base: Base) -> Ty {
    match ty {
        Ty::Vec(_, n) => Ty::Vec(base, n.clone()),
        Ty::SV(..) => Ty::Vec(base, Shape::constant(1)),
        other => Ty::array(base, other.rank().unwrap_or(0)),
    }
}

/// `neutral` and associativity of a primitive used with `/` and `\`.
fn identity(c: char, base: Base) -> Option<(Val, bool)> {
    let zero = |b: Base| match b {
        Base::Double => dbl(0.0),
        Base::Int => int(0),
        Base::Bool => boolean(false),
    };
    let one = |b: Base| match b {
        Base::Double => dbl(1.0),
        Base::Int => int(1),
        Base::Bool => boolean(true),
    };
    Some(match c {
        '+' => (zero(base.max(Base::Int)), true),
        '×' => (one(base.max(Base::Int)), true),
        '-' => (zero(base.max(Base::Int)), false),
        '÷' => (dbl(1.0), false),
        '⌈' => match base {
            Base::Double => (dbl(f64::NEG_INFINITY), true),
            _ => (int(i64::MIN), true),
        },
        '⌊' => match base {
            Base::Double => (dbl(f64::INFINITY), true),
            _ => (int(i64::MAX), true),
        },
        '∧' => (boolean(true), true),
        '∨' => (boolean(false), true),
        _ => return None,
    })
}

/// A scalar function at the scalar level.
#[derive(Clone, Copy, Debug)]
enum Sc {
    Op(ScalarOp),
    /// `a⍟b`: log of b in base a.
    Log,
    /// `k○x` for a static k.
    Circle,
}

impl Elab {
    fn error<T>(&mut self, span: Span, message: impl Into<String>) -> R<T> {
        self.diags.push(Diagnostic { span, message: message.into() });
        Err(Reported)
    }

    fn fresh(&mut self) -> Var {
        self.next += 1;
        self.next - 1
    }

    fn emit(&mut self, exp: Exp, ty: Ty) -> Val {
        let var = self.fresh();
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(Let { var, ty: ty.clone(), exp });
        }
        Val { exp: Exp::Var(var), ty }
    }

    fn op(&mut self, op: Op, args: Vec<Exp>, ty: Ty) -> Val {
        self.emit(Exp::Op(op, args), ty)
    }

    /// Elaborates `f` in a new scope as a lambda over `params` (fresh variables of the
    /// given types).
    fn lambda(
        &mut self,
        params: &[Ty],
        f: impl FnOnce(&mut Self, Vec<Val>) -> R<Val>,
    ) -> R<(Exp, Ty)> {
        let vars: Vec<Var> = params.iter().map(|_| self.fresh()).collect();
        let vals = vars
            .iter()
            .zip(params)
            .map(|(&v, t)| Val { exp: Exp::Var(v), ty: t.clone() })
            .collect();
        self.scopes.push(Vec::new());
        let result = f(self, vals);
        let lets = self.scopes.pop().unwrap_or_default();
        let result = result?;
        let ty = result.ty.clone();
        let body = Body { lets, result: result.exp, ty: ty.clone() };
        let params = vars.into_iter().zip(params.iter().cloned()).collect();
        Ok((Exp::Lam(params, Box::new(body)), ty))
    }

    fn stmt(&mut self, s: &Stmt, env: &mut Env) -> R<Option<Val>> {
        match s {
            Stmt::Expr(e) => self.expr(e, env).map(Some),
            Stmt::FunDef(name, f, _) => {
                let closure = Rc::new(Closure { fun: f.clone(), env: env.clone() });
                env.bind(name, Binding::Fun(closure));
                Ok(None)
            }
            Stmt::OpDef(name, body, _, _) => {
                let def = Rc::new(OpDef { body: body.clone(), env: env.clone() });
                env.bind(name, Binding::Op(def));
                Ok(None)
            }
            Stmt::Guard(_, _, span) => self.error(*span, "a guard `:` is only allowed in a dfn"),
            // Annotations are checked where their dfn is applied.
            Stmt::Annot(..) => Ok(None),
        }
    }

    fn expr(&mut self, e: &Expr, env: &mut Env) -> R<Val> {
        let v = self.expr_inner(e, env)?;
        self.types.push((e.span(), v.ty.clone()));
        Ok(v)
    }

    fn expr_inner(&mut self, e: &Expr, env: &mut Env) -> R<Val> {
        match e {
            Expr::Int(i, _) => Ok(int(*i)),
            Expr::Float(d, _) => Ok(dbl(*d)),
            Expr::Zilde(_) => {
                let ty = Ty::Vec(Base::Int, Shape::constant(0));
                Ok(self.emit(Exp::Vector(Vec::new(), Base::Int), ty))
            }
            Expr::Name(n, span) => match env.names.get(n) {
                Some(Binding::Val(v)) => Ok(v.clone()),
                Some(Binding::Fun(_) | Binding::Op(_)) => {
                    self.error(*span, format!("SYNTAX ERROR: `{n}` is a function, not an array"))
                }
                Some(Binding::Poisoned) => Err(Reported),
                None => self.error(*span, format!("VALUE ERROR: `{n}` is not defined")),
            },
            Expr::Alpha(span) => match &env.alpha {
                Some(v) => Ok(v.clone()),
                None => self.error(*span, "VALUE ERROR: `⍺` in a dfn called with one argument"),
            },
            Expr::Omega(span) => match &env.omega {
                Some(v) => Ok(v.clone()),
                None => self.error(*span, "VALUE ERROR: no `⍵` here"),
            },
            Expr::Strand(items, span) => {
                let mut vals = Vec::new();
                for i in items {
                    vals.push(self.expr(i, env)?);
                }
                self.strand(vals, *span)
            }
            Expr::Monadic(f, x, span) => {
                let x = self.expr(x, env)?;
                self.apply(f, env, None, x, *span)
            }
            Expr::Dyadic(a, f, b, span) => {
                // APL evaluates the right argument first.
                let b = self.expr(b, env)?;
                let a = self.expr(a, env)?;
                self.apply(f, env, Some(a), b, *span)
            }
            Expr::Index(target, idx, span) => {
                let a = self.expr(target, env)?;
                let mut ixs = Vec::new();
                for i in idx {
                    ixs.push(match i {
                        Some(i) => Some(self.expr(i, env)?),
                        None => None,
                    });
                }
                self.index(a, ixs, *span)
            }
            Expr::Assign(name, value, span) => {
                let v = self.expr(value, env)?;
                self.types.push((
                    Span { start: span.start, end: span.start + name.len() as u32 },
                    v.ty.clone(),
                ));
                if let Exp::Var(var) = v.exp
                    && !self.names.iter().any(|(w, _)| *w == var)
                {
                    self.names.push((var, name.clone()));
                }
                env.bind(name, Binding::Val(v.clone()));
                Ok(v)
            }
            Expr::IndexAssign(name, idx, value, span) => {
                let target = match env.names.get(name) {
                    Some(Binding::Val(v)) => v.clone(),
                    _ => {
                        return self.error(*span, format!("VALUE ERROR: `{name}` is not an array"));
                    }
                };
                let v = self.expr(value, env)?;
                let mut ixs = Vec::new();
                for i in idx {
                    match i {
                        Some(i) => {
                            let x = self.expr(i, env)?;
                            if x.ty.rank() != Some(0) || x.ty.base() == Base::Double {
                                return self.error(
                                    i.span(),
                                    "NONCE ERROR: indexed assignment takes one integer per axis",
                                );
                            }
                            ixs.push(self.coerce(x, Base::Int));
                        }
                        None => {
                            return self
                                .error(*span, "NONCE ERROR: indexed assignment needs every index");
                        }
                    }
                }
                let rank = target.ty.rank().unwrap_or(0);
                if ixs.len() != rank {
                    return self.error(
                        *span,
                        format!("RANK ERROR: {} indices for {}", ixs.len(), describe(&target.ty)),
                    );
                }
                if v.ty.rank() != Some(0) {
                    return self.error(
                        value.span(),
                        "NONCE ERROR: indexed assignment of one element at a time",
                    );
                }
                // As in APL, storing a wider value widens the array (`W[2] ← 1.5` into
                // integers makes `W` doubles), rather than truncating the value.
                let base = target.ty.base().max(v.ty.base());
                let target = self.coerce(target, base);
                let v = self.coerce(v, base);
                // `⊆_s`: an updated array loses its singleton refinement.
                let ty = match &target.ty {
                    Ty::SV(b, _) => Ty::Vec(*b, Shape::constant(1)),
                    other => other.clone(),
                };
                let ixv = Exp::Vector(ixs.into_iter().map(|x| x.exp).collect(), Base::Int);
                let updated = self.op(Op::Update, vec![target.exp, ixv, v.exp], ty);
                env.bind(name, Binding::Val(updated.clone()));
                Ok(updated)
            }
            Expr::Print(x, _) => {
                let v = self.expr(x, env)?;
                let p = self.op(Op::Print, vec![v.exp], v.ty);
                if let Exp::Var(var) = p.exp {
                    self.prints.push(var);
                }
                Ok(p)
            }
        }
    }

    fn strand(&mut self, vals: Vec<Val>, span: Span) -> R<Val> {
        if vals.iter().any(|v| v.ty.rank() != Some(0)) {
            return self.error(
                span,
                "DOMAIN ERROR: nested arrays are not supported (a strand of non-scalars)",
            );
        }
        let base = vals.iter().map(|v| v.ty.base()).max().unwrap_or(Base::Int);
        let n = vals.len() as i64;
        let items = vals.into_iter().map(|v| self.coerce(v, base).exp).collect();
        Ok(self.emit(Exp::Vector(items, base), Ty::Vec(base, Shape::constant(n))))
    }

    /// Converts to `base` (`b2i`, `i2d`, `i2b`), at the scalar level or with `each`.
    fn coerce(&mut self, v: Val, base: Base) -> Val {
        let from = v.ty.base();
        if from == base {
            return v;
        }
        match (&v.exp, base) {
            (Exp::Int(i), Base::Double) => return dbl(*i as f64),
            (Exp::Bool(b), Base::Int) => return int(i64::from(*b)),
            (Exp::Bool(b), Base::Double) => return dbl(f64::from(u8::from(*b))),
            _ => {}
        }
        if v.ty.rank() == Some(0) {
            let steps: &[ScalarOp] = match (from, base) {
                (Base::Bool, Base::Int) => &[ScalarOp::B2i],
                (Base::Int, Base::Double) => &[ScalarOp::I2d],
                (Base::Bool, Base::Double) => &[ScalarOp::B2i, ScalarOp::I2d],
                (Base::Int, Base::Bool) => &[ScalarOp::I2b],
                (Base::Double, _) | (_, _) => &[],
            };
            let mut cur = v;
            for &s in steps {
                let arg_base = cur.ty.base();
                let to = match s {
                    ScalarOp::B2i => Base::Int,
                    ScalarOp::I2d => Base::Double,
                    _ => Base::Bool,
                };
                let ty = cur.ty.with_base(to);
                let ty = if s == ScalarOp::I2d { Ty::scalar(Base::Double) } else { ty };
                cur = self.op(Op::Scalar(s, arg_base), vec![cur.exp], ty);
            }
            return cur;
        }
        let ty = same_form(&v.ty, base);
        let lam = self.lambda(&[Ty::scalar(from)], |e, p| Ok(e.coerce(p[0].clone(), base)));
        match lam {
            Ok((lam, _)) => self.op(Op::Each, vec![lam, v.exp], ty),
            Err(Reported) => v,
        }
    }

    // ---- scalar functions with scalar extension ----

    fn scalar1(&mut self, op: ScalarOp, x: Val, span: Span) -> R<Val> {
        if x.ty.rank() != Some(0) {
            let base = x.ty.base();
            let (lam, rty) =
                self.lambda(&[Ty::scalar(base)], |e, p| e.scalar1(op, p[0].clone(), span))?;
            let ty = same_form(&x.ty, rty.base());
            return Ok(self.op(Op::Each, vec![lam, x.exp], ty));
        }
        let b = x.ty.base();
        let (arg, res) = match op {
            ScalarOp::Neg | ScalarOp::Abs => {
                let a = b.max(Base::Int);
                (a, a)
            }
            // `×` of a double is an integer.
            ScalarOp::Sign => (b.max(Base::Int), Base::Int),
            ScalarOp::Floor | ScalarOp::Ceil => {
                if b != Base::Double {
                    return Ok(self.coerce(x, Base::Int));
                }
                (Base::Double, Base::Int)
            }
            ScalarOp::Not => {
                if b == Base::Double {
                    return self.error(span, "DOMAIN ERROR: `~` of a double");
                }
                (Base::Bool, Base::Bool)
            }
            _ => (Base::Double, Base::Double),
        };
        if let (ScalarOp::Neg, Exp::Int(i)) = (op, &x.exp) {
            return Ok(int(-i));
        }
        if let (ScalarOp::Neg, Exp::Double(d)) = (op, &x.exp) {
            return Ok(dbl(-d));
        }
        let x = self.coerce(x, arg);
        Ok(self.op(Op::Scalar(op, arg), vec![x.exp], Ty::scalar(res)))
    }

    fn scalar2(&mut self, sc: Sc, a: Val, b: Val, span: Span) -> R<Val> {
        let (ra, rb) = (a.ty.rank().unwrap_or(0), b.ty.rank().unwrap_or(0));
        if ra == 0 && rb == 0 {
            return self.scalar2_at(sc, a, b, span);
        }
        let (ba, bb) = (a.ty.base(), b.ty.base());
        if ra == 0 {
            let (lam, rty) = self
                .lambda(&[Ty::scalar(bb)], |e, p| e.scalar2(sc, a.clone(), p[0].clone(), span))?;
            let ty = same_form(&b.ty, rty.base());
            return Ok(self.op(Op::Each, vec![lam, b.exp], ty));
        }
        if rb == 0 {
            let (lam, rty) = self
                .lambda(&[Ty::scalar(ba)], |e, p| e.scalar2(sc, p[0].clone(), b.clone(), span))?;
            let ty = same_form(&a.ty, rty.base());
            return Ok(self.op(Op::Each, vec![lam, a.exp], ty));
        }
        if ra != rb {
            return self.error(
                span,
                format!(
                    "RANK ERROR: the arguments are {} and {}",
                    describe(&a.ty),
                    describe(&b.ty)
                ),
            );
        }
        if let (Some(n), Some(m)) = (a.ty.const_length(), b.ty.const_length())
            && n != m
        {
            return self.error(
                span,
                format!(
                    "LENGTH ERROR: the arguments are {} and {}",
                    describe(&a.ty),
                    describe(&b.ty)
                ),
            );
        }
        let (lam, rty) = self.lambda(&[Ty::scalar(ba), Ty::scalar(bb)], |e, p| {
            e.scalar2(sc, p[0].clone(), p[1].clone(), span)
        })?;
        let form = if matches!(a.ty, Ty::Vec(..) | Ty::SV(..)) { &a.ty } else { &b.ty };
        let ty = same_form(form, rty.base());
        Ok(self.op(Op::ZipWith, vec![lam, a.exp, b.exp], ty))
    }

    fn scalar2_at(&mut self, sc: Sc, a: Val, b: Val, span: Span) -> R<Val> {
        let op = match sc {
            Sc::Log => {
                let lb = self.scalar1(ScalarOp::Ln, b, span)?;
                let la = self.scalar1(ScalarOp::Ln, a, span)?;
                return self.scalar2_at(Sc::Op(ScalarOp::Div), lb, la, span);
            }
            Sc::Circle => {
                let Some(k) = a.ty.singleton().and_then(Shape::as_constant) else {
                    return self
                        .error(span, "NONCE ERROR: the left argument of `○` must be a constant");
                };
                let f = match k {
                    1 => ScalarOp::Sin,
                    2 => ScalarOp::Cos,
                    3 => ScalarOp::Tan,
                    _ => {
                        return self.error(
                            span,
                            format!("NONCE ERROR: `{k}○` is not supported (only 1 2 3)"),
                        );
                    }
                };
                return self.scalar1(f, b, span);
            }
            Sc::Op(op) => op,
        };
        let joined = a.ty.base().join(b.ty.base());
        let (arg, res) = match op {
            ScalarOp::Add
            | ScalarOp::Sub
            | ScalarOp::Mul
            | ScalarOp::Min
            | ScalarOp::Max
            | ScalarOp::Res => {
                let t = joined.max(Base::Int);
                (t, t)
            }
            ScalarOp::Div | ScalarOp::Pow => (Base::Double, Base::Double),
            ScalarOp::Lt | ScalarOp::Le | ScalarOp::Ge | ScalarOp::Gt => {
                (joined.max(Base::Int), Base::Bool)
            }
            ScalarOp::Eq | ScalarOp::Ne => (joined, Base::Bool),
            ScalarOp::And | ScalarOp::Or | ScalarOp::Nand | ScalarOp::Nor => {
                if joined == Base::Double {
                    return self.error(span, "DOMAIN ERROR: a boolean function of doubles");
                }
                (Base::Bool, Base::Bool)
            }
            _ => (joined, joined),
        };
        let a = self.coerce(a, arg);
        let b = self.coerce(b, arg);
        // Singleton arithmetic: the value is part of the type (`2+3 : S(int,5)`).
        let ty = match (&a.ty, &b.ty, op) {
            (Ty::S(Base::Int, x), Ty::S(Base::Int, y), ScalarOp::Add) => Ty::S(Base::Int, x.add(y)),
            (Ty::S(Base::Int, x), Ty::S(Base::Int, y), ScalarOp::Sub) => Ty::S(Base::Int, x.sub(y)),
            (Ty::S(Base::Int, x), Ty::S(Base::Int, y), ScalarOp::Mul) if x.mul(y).is_some() => {
                Ty::S(Base::Int, x.mul(y).unwrap_or_default())
            }
            (Ty::S(_, x), Ty::S(_, y), _) => match (x.as_constant(), y.as_constant()) {
                // Comparisons and min/max of known singletons are known too.
                (Some(x), Some(y)) => {
                    let known = match op {
                        ScalarOp::Lt => Some(i64::from(x < y)),
                        ScalarOp::Le => Some(i64::from(x <= y)),
                        ScalarOp::Eq => Some(i64::from(x == y)),
                        ScalarOp::Ge => Some(i64::from(x >= y)),
                        ScalarOp::Gt => Some(i64::from(x > y)),
                        ScalarOp::Ne => Some(i64::from(x != y)),
                        ScalarOp::Min => Some(x.min(y)),
                        ScalarOp::Max => Some(x.max(y)),
                        ScalarOp::And => Some(x & y),
                        ScalarOp::Or => Some(x | y),
                        _ => None,
                    };
                    match known {
                        Some(k) => Ty::S(res, Shape::constant(k)),
                        None => Ty::scalar(res),
                    }
                }
                _ => Ty::scalar(res),
            },
            _ => Ty::scalar(res),
        };
        Ok(self.op(Op::Scalar(op, arg), vec![a.exp, b.exp], ty))
    }

    // ---- function application ----

    /// Applies `f`; a named function or dfn records its type at this application
    /// (`<int>16 -> <int>15`: each application is an instance of its rank-polymorphic
    /// type), a primitive its result.
    fn apply(&mut self, f: &Fun, env: &Env, a: Option<Val>, x: Val, span: Span) -> R<Val> {
        let args: Vec<Ty> = a.iter().chain(std::iter::once(&x)).map(|v| v.ty.clone()).collect();
        let v = self.apply_inner(f, env, a, x, span)?;
        let ty = match f {
            Fun::Name(..) | Fun::Dfn(..) => Ty::Fun(args, Box::new(v.ty.clone())),
            _ => v.ty.clone(),
        };
        self.types.push((f.span(), ty));
        Ok(v)
    }

    fn apply_inner(&mut self, f: &Fun, env: &Env, a: Option<Val>, x: Val, span: Span) -> R<Val> {
        match f {
            Fun::Prim(c, pspan) => match a {
                None => self.prim1(*c, x, *pspan),
                Some(a) => self.prim2(*c, a, x, *pspan),
            },
            Fun::Name(n, nspan) => match env.names.get(n).cloned() {
                Some(Binding::Fun(c)) => self.apply(&c.fun.clone(), &c.env.clone(), a, x, span),
                _ => self.error(*nspan, format!("VALUE ERROR: `{n}` is not a function here")),
            },
            Fun::AlphaAlpha(s) | Fun::OmegaOmega(s) => {
                let bound =
                    if matches!(f, Fun::AlphaAlpha(_)) { env.aa.clone() } else { env.ww.clone() };
                match bound.map(|b| *b) {
                    Some(Bound::Fun(c)) => self.apply(&c.fun.clone(), &c.env.clone(), a, x, span),
                    Some(Bound::Val) => {
                        self.error(*s, "SYNTAX ERROR: this operand is an array, not a function")
                    }
                    None => self.error(*s, "VALUE ERROR: no operand here"),
                }
            }
            Fun::Dfn(body, _) => {
                let signature = body.iter().find_map(|s| match s {
                    Stmt::Annot(sig, _) => Some(sig),
                    _ => None,
                });
                let mut bindings = crate::annot::Bindings::default();
                if let Some(sig) = signature {
                    let args: Vec<(&str, &Val)> = match &a {
                        Some(a) => vec![("⍺", a), ("⍵", &x)],
                        None => vec![("⍵", &x)],
                    };
                    if sig.params.len() != args.len() {
                        return self.error(
                            span,
                            format!(
                                "SYNTAX ERROR: the annotation `⍝: {}` is for a {} function",
                                sig.text,
                                if sig.params.len() == 2 { "dyadic" } else { "monadic" }
                            ),
                        );
                    }
                    for (p, (name, v)) in sig.params.iter().zip(args) {
                        if !crate::annot::matches(p, &v.ty, &mut bindings) {
                            return self.error(span, format!("DOMAIN ERROR: the annotation `⍝: {}` needs `{name}` of type {p}, but it is {} ({})", sig.text, describe(&v.ty), v.ty));
                        }
                    }
                }
                let mut inner = env.clone();
                inner.alpha = a;
                inner.omega = Some(x);
                let result = self.dfn_body(body, &mut inner, span)?;
                if let Some(sig) = signature
                    && !crate::annot::matches(&sig.result, &result.ty, &mut bindings)
                {
                    return self.error(span, format!("DOMAIN ERROR: the annotation `⍝: {}` gives a result of type {}, but the dfn computes {} ({})", sig.text, sig.result, describe(&result.ty), result.ty));
                }
                Ok(result)
            }
            Fun::UserOp(name, operands, s) => {
                let Some(Binding::Op(def)) = env.names.get(name).cloned() else {
                    return self.error(*s, format!("VALUE ERROR: `{name}` is not an operator"));
                };
                let mut inner = def.env.clone();
                let bind = |o: &Operand, e: &mut Self| -> R<Bound> {
                    match o {
                        Operand::Fun(f) => {
                            Ok(Bound::Fun(Rc::new(Closure { fun: f.clone(), env: env.clone() })))
                        }
                        Operand::Val(v) => {
                            let mut env2 = env.clone();
                            e.expr(v, &mut env2)?;
                            Ok(Bound::Val)
                        }
                    }
                };
                inner.aa = Some(Box::new(bind(&operands[0], self)?));
                if let Some(o) = operands.get(1) {
                    inner.ww = Some(Box::new(bind(o, self)?));
                }
                inner.alpha = a;
                inner.omega = Some(x);
                self.dfn_body(&def.body, &mut inner, span)
            }
            Fun::Derived1(c, operand, s) => {
                let Operand::Fun(g) = &**operand else {
                    return self.error(*s, format!("SYNTAX ERROR: `{c}` needs a function operand"));
                };
                match c {
                    '/' | '⌿' if a.is_none() => self.reduce(g, env, x, *c == '⌿', *s),
                    '\\' | '⍀' if a.is_none() => self.scan(g, env, x, *c == '⍀', *s),
                    '¨' => self.each(g, env, a, x, *s),
                    '⍨' => match a {
                        None => self.apply(g, env, Some(x.clone()), x, span),
                        Some(a) => self.apply(g, env, Some(x), a, span),
                    },
                    _ => self.error(
                        *s,
                        format!("NONCE ERROR: `{c}` with a left argument is not supported"),
                    ),
                }
            }
            Fun::Derived2(c, l, r, s) => match (c, &**l, &**r) {
                ('.', Operand::Fun(f), Operand::Fun(g)) => match a {
                    Some(a) => self.inner_product(f, g, env, a, x, *s),
                    None => self.error(*s, "SYNTAX ERROR: an inner product needs two arguments"),
                },
                ('⍣', Operand::Fun(g), Operand::Val(n)) => {
                    let mut env2 = env.clone();
                    let n = self.expr(n, &mut env2)?;
                    self.power(g, env, a, n, x, *s)
                }
                ('∘', Operand::Val(v), Operand::Fun(g)) => {
                    let mut env2 = env.clone();
                    let v = self.expr(v, &mut env2)?;
                    self.apply(g, env, Some(v), x, span)
                }
                ('∘', Operand::Fun(g), Operand::Val(v)) => {
                    let mut env2 = env.clone();
                    let v = self.expr(v, &mut env2)?;
                    self.apply(g, env, Some(x), v, span)
                }
                ('∘', Operand::Fun(f), Operand::Fun(g)) => {
                    let y = self.apply(g, env, None, x, span)?;
                    self.apply(f, env, a, y, span)
                }
                _ => self.error(*s, format!("SYNTAX ERROR: wrong operands for `{c}`")),
            },
            Fun::Outer(g, s) => match a {
                Some(a) => self.outer_product(g, env, a, x, *s),
                None => self.error(*s, "SYNTAX ERROR: an outer product needs two arguments"),
            },
            Fun::Atop(g, h, _) => {
                let y = self.apply(h, env, a, x, span)?;
                self.apply(g, env, None, y, span)
            }
            Fun::Fork(f, g, h, _) => {
                let right = self.apply(h, env, a.clone(), x.clone(), span)?;
                let left = match &**f {
                    Operand::Fun(f) => self.apply(f, env, a, x, span)?,
                    Operand::Val(v) => {
                        let mut env2 = env.clone();
                        self.expr(v, &mut env2)?
                    }
                };
                self.apply(g, env, Some(left), right, span)
            }
        }
    }

    fn dfn_body(&mut self, body: &[Stmt], env: &mut Env, span: Span) -> R<Val> {
        let mut last = None;
        for (k, s) in body.iter().enumerate() {
            match s {
                Stmt::Expr(e) => {
                    let v = self.expr(e, env)?;
                    if !matches!(e, Expr::Assign(..) | Expr::IndexAssign(..) | Expr::Print(..)) {
                        return Ok(v);
                    }
                    last = Some(v);
                }
                Stmt::Guard(cond, result, gspan) => {
                    let c = self.expr(cond, env)?;
                    match c.ty.singleton().and_then(Shape::as_constant) {
                        Some(0) => {}
                        Some(_) => return self.expr(result, env),
                        // Decided at run time: the guard's result, or the rest of the dfn.
                        None => return self.conditional(c, result, &body[k + 1..], env, *gspan),
                    }
                }
                other => {
                    self.stmt(other, env)?;
                }
            }
        }
        match last {
            Some(v) => Ok(v),
            None => self.error(span, "VALUE ERROR: the dfn computes no value"),
        }
    }

    /// `cond(c, fn => result, fn => rest)`: a guard decided at run time. The branches
    /// must have one rank; their element types are joined (coercing the other branch).
    fn conditional(
        &mut self,
        c: Val,
        result: &Expr,
        rest: &[Stmt],
        env: &Env,
        span: Span,
    ) -> R<Val> {
        if c.ty.rank() != Some(0) || c.ty.base() == Base::Double {
            return self.error(
                span,
                format!(
                    "DOMAIN ERROR: a guard's condition must be a boolean scalar, not {}",
                    describe(&c.ty)
                ),
            );
        }
        let c = self.coerce(c, Base::Bool);
        let mut target: Option<Base> = None;
        for _ in 0..2 {
            let (mut env1, mut env2) = (env.clone(), env.clone());
            let (then_lam, t1) = self.lambda(&[], |e, _| {
                let v = e.expr(result, &mut env1)?;
                Ok(match target {
                    Some(b) => e.coerce(v, b),
                    None => v,
                })
            })?;
            let (else_lam, t2) = self.lambda(&[], |e, _| {
                let v = e.dfn_body(rest, &mut env2, span)?;
                Ok(match target {
                    Some(b) => e.coerce(v, b),
                    None => v,
                })
            })?;
            if t1.rank() != t2.rank() {
                return self.error(
                    span,
                    format!(
                        "RANK ERROR: a guard's result is {} but the rest of the dfn gives {}",
                        describe(&t1),
                        describe(&t2)
                    ),
                );
            }
            if t1.base() != t2.base() {
                target = Some(t1.base().join(t2.base()));
                continue;
            }
            let ty = crate::ty::join(&t1, &t2).unwrap_or_else(|| t1.widen());
            return Ok(self.op(Op::Cond, vec![c.exp, then_lam, else_lam], ty));
        }
        self.error(
            span,
            "DOMAIN ERROR: the branches of a guard have element types that cannot be joined",
        )
    }

    /// The function `g` as a scalar lambda over `params`.
    fn scalar_lambda(&mut self, g: &Fun, env: &Env, params: &[Ty], span: Span) -> R<(Exp, Ty)> {
        let g = g.clone();
        let env = env.clone();
        let (lam, ty) = self.lambda(params, |e, p| {
            let mut p = p.into_iter();
            let first = p.next();
            match p.next() {
                Some(second) => e.apply(&g, &env, first, second, span),
                None => e.apply(&g, &env, None, first.unwrap_or_else(|| int(0)), span),
            }
        })?;
        self.scalar_result(&ty, span)?;
        Ok((lam, ty))
    }

    /// A function applied per element must give a scalar (no nested arrays).
    fn scalar_result(&mut self, ty: &Ty, span: Span) -> R<()> {
        if ty.rank() != Some(0) {
            return self.error(span, format!("DOMAIN ERROR: the function gives {} for one element; nested arrays are not supported", describe(ty)));
        }
        Ok(())
    }

    fn each(&mut self, g: &Fun, env: &Env, a: Option<Val>, x: Val, span: Span) -> R<Val> {
        match a {
            None => {
                if x.ty.rank() == Some(0) {
                    return self.apply(g, env, None, x, span);
                }
                let (lam, rty) = self.scalar_lambda(g, env, &[Ty::scalar(x.ty.base())], span)?;
                let ty = same_form(&x.ty, rty.base());
                Ok(self.op(Op::Each, vec![lam, x.exp], ty))
            }
            Some(a) => {
                let (ra, rx) = (a.ty.rank().unwrap_or(0), x.ty.rank().unwrap_or(0));
                if ra == 0 && rx == 0 {
                    return self.apply(g, env, Some(a), x, span);
                }
                if ra != 0 && rx != 0 && ra != rx {
                    return self.error(
                        span,
                        format!(
                            "RANK ERROR: the arguments are {} and {}",
                            describe(&a.ty),
                            describe(&x.ty)
                        ),
                    );
                }
                if ra == 0 {
                    let (g2, env2) = (g.clone(), env.clone());
                    let (lam, rty) = self.lambda(&[Ty::scalar(x.ty.base())], |e, p| {
                        e.apply(&g2, &env2, Some(a.clone()), p[0].clone(), span)
                    })?;
                    self.scalar_result(&rty, span)?;
                    return Ok(self.op(
                        Op::Each,
                        vec![lam, x.exp.clone()],
                        same_form(&x.ty, rty.base()),
                    ));
                }
                if rx == 0 {
                    let (g2, env2) = (g.clone(), env.clone());
                    let (lam, rty) = self.lambda(&[Ty::scalar(a.ty.base())], |e, p| {
                        e.apply(&g2, &env2, Some(p[0].clone()), x.clone(), span)
                    })?;
                    self.scalar_result(&rty, span)?;
                    return Ok(self.op(
                        Op::Each,
                        vec![lam, a.exp.clone()],
                        same_form(&a.ty, rty.base()),
                    ));
                }
                let (lam, rty) = self.scalar_lambda(
                    g,
                    env,
                    &[Ty::scalar(a.ty.base()), Ty::scalar(x.ty.base())],
                    span,
                )?;
                let ty = same_form(&x.ty, rty.base());
                Ok(self.op(Op::ZipWith, vec![lam, a.exp, x.exp], ty))
            }
        }
    }

    /// Moves the first axis last (for `⌿ ⍀`): `transp2([r,1,…,r-1], A)`.
    fn first_axis_last(&mut self, x: Val) -> Val {
        let r = x.ty.rank().unwrap_or(0);
        if r < 2 {
            return x;
        }
        let mut p = vec![Exp::Int(r as i64)];
        p.extend((1..r as i64).map(Exp::Int));
        let ty = x.ty.clone();
        self.op(Op::Transp2, vec![Exp::Vector(p, Base::Int), x.exp], ty)
    }

    /// Undoes [`Self::first_axis_last`].
    fn last_axis_first(&mut self, x: Val) -> Val {
        let r = x.ty.rank().unwrap_or(0);
        if r < 2 {
            return x;
        }
        let mut p: Vec<Exp> = (2..=r as i64).map(Exp::Int).collect();
        p.push(Exp::Int(1));
        let ty = x.ty.clone();
        self.op(Op::Transp2, vec![Exp::Vector(p, Base::Int), x.exp], ty)
    }

    fn reduce(&mut self, g: &Fun, env: &Env, x: Val, first_axis: bool, span: Span) -> R<Val> {
        let r = x.ty.rank().unwrap_or(0);
        if r == 0 {
            return Ok(x);
        }
        let x = if first_axis { self.first_axis_last(x) } else { x };
        let prim = match g {
            Fun::Prim(c, _) => Some(*c),
            _ => None,
        };
        let (x, lam, rty) = self.settle_base(g, env, x, span)?;
        let base = rty.base();
        let (neutral, assoc) = match prim.and_then(|c| identity(c, base)) {
            Some((n, assoc)) => (self.coerce(n, base), assoc),
            None => (
                match base {
                    Base::Double => dbl(0.0),
                    Base::Int => int(0),
                    Base::Bool => boolean(false),
                },
                false,
            ),
        };
        let ty = Ty::array(base, r - 1);
        Ok(self.op(Op::Reduce { assoc }, vec![lam, neutral.exp, x.exp], ty))
    }

    /// A reduction's function must map its element type to itself: the array is
    /// coerced to the function's result type (`+/` of booleans counts, `∧/` of 0/1
    /// integers is boolean) until it does.
    fn settle_base(&mut self, g: &Fun, env: &Env, x: Val, span: Span) -> R<(Val, Exp, Ty)> {
        let mut x = x;
        for _ in 0..3 {
            let base = x.ty.base();
            let (lam, rty) =
                self.scalar_lambda(g, env, &[Ty::scalar(base), Ty::scalar(base)], span)?;
            if rty.base() == base {
                return Ok((x, lam, rty));
            }
            if rty.base() == Base::Bool && base == Base::Double {
                break;
            }
            x = self.coerce(x, rty.base());
        }
        self.error(
            span,
            format!(
                "DOMAIN ERROR: the function does not keep the element type of {}",
                describe(&x.ty)
            ),
        )
    }

    fn scan(&mut self, g: &Fun, env: &Env, x: Val, first_axis: bool, span: Span) -> R<Val> {
        let prim = match g {
            Fun::Prim(c, _) => *c,
            _ => return self.error(span, "NONCE ERROR: scan (`\\`) takes a primitive function"),
        };
        if x.ty.rank() == Some(0) {
            return Ok(x);
        }
        let moved = if first_axis { self.first_axis_last(x) } else { x };
        let (x, _, rty) = self.settle_base(g, env, moved, span)?;
        let base = rty.base();
        let Some((neutral, true)) = identity(prim, base) else {
            return self.error(
                span,
                format!("NONCE ERROR: scan of `{prim}` (only associative + × ⌈ ⌊ ∧ ∨)"),
            );
        };
        let neutral = self.coerce(neutral, base);
        let (lam, _) = self.scalar_lambda(g, env, &[Ty::scalar(base), Ty::scalar(base)], span)?;
        let ty = same_form(&x.ty, base);
        let out = self.op(Op::Scan, vec![lam, neutral.exp, x.exp], ty);
        Ok(if first_axis { self.last_axis_first(out) } else { out })
    }

    fn power(&mut self, g: &Fun, env: &Env, a: Option<Val>, n: Val, x: Val, span: Span) -> R<Val> {
        if n.ty.rank() != Some(0) || n.ty.base() == Base::Double {
            return self
                .error(span, "DOMAIN ERROR: the right operand of `⍣` must be an integer count");
        }
        let n = self.coerce(n, Base::Int);
        // The iterated type: the least upper bound of the argument and the result.
        let mut pty = x.ty.clone();
        for _ in 0..4 {
            let (g2, env2, a2) = (g.clone(), env.clone(), a.clone());
            let (lam, rty) = self.lambda(std::slice::from_ref(&pty), |e, p| {
                e.apply(&g2, &env2, a2, p[0].clone(), span)
            })?;
            if rty == pty {
                return Ok(self.op(Op::Power, vec![lam, n.exp, x.exp], pty));
            }
            match crate::ty::join(&pty, &rty) {
                Some(j) if j.rank() == pty.rank() => {
                    // The lambda's result must have the parameter's type: widen both.
                    pty = if j == pty { j.widen() } else { j };
                }
                _ => {
                    return self.error(span, format!("DOMAIN ERROR: `⍣` needs a function that keeps its argument's type; it turns {} into {}", describe(&pty), describe(&rty)));
                }
            }
            if pty.base() != x.ty.base() {
                return self.error(span, "DOMAIN ERROR: `⍣` changes the element type");
            }
        }
        self.error(span, "DOMAIN ERROR: the type of `⍣`'s iteration does not settle")
    }

    fn outer_product(&mut self, g: &Fun, env: &Env, a: Val, b: Val, span: Span) -> R<Val> {
        let (ra, rb) = (a.ty.rank().unwrap_or(0), b.ty.rank().unwrap_or(0));
        if ra == 0 || rb == 0 {
            return self.each(g, env, Some(a), b, span);
        }
        let sa = self.shape(a.clone());
        let sb = self.shape(b.clone());
        // A replicated over B's axes, then those axes moved after A's.
        let wa = self.catv(sb.clone(), sa.clone());
        let ra_ = self.reshape_to(wa, a, ra + rb);
        let mut p: Vec<Exp> = (0..rb).map(|k| Exp::Int((ra + k + 1) as i64)).collect();
        p.extend((0..ra).map(|k| Exp::Int(k as i64 + 1)));
        let ta = self.op(Op::Transp2, vec![Exp::Vector(p, Base::Int), ra_.exp], ra_.ty);
        let wb = self.catv(sa, sb);
        let tb = self.reshape_to(wb, b, ra + rb);
        let (lam, rty) = self.scalar_lambda(
            g,
            env,
            &[Ty::scalar(ta.ty.base()), Ty::scalar(tb.ty.base())],
            span,
        )?;
        Ok(self.op(Op::ZipWith, vec![lam, ta.exp, tb.exp], Ty::array(rty.base(), ra + rb)))
    }

    /// The Guibas–Wyatt inner product (§3.2): reshape both arguments to a common
    /// rank, move axes with `transp2`, `zipWith g`, then reduce with `f`.
    fn inner_product(&mut self, f: &Fun, g: &Fun, env: &Env, a: Val, b: Val, span: Span) -> R<Val> {
        let (ra, rb) = (a.ty.rank().unwrap_or(0), b.ty.rank().unwrap_or(0));
        if ra == 0 || rb == 0 {
            return self.error(span, "NONCE ERROR: inner product of scalars");
        }
        let sa = self.shape(a.clone());
        let sb = self.shape(b.clone());
        let n = ra + rb - 1;
        // WA = tail(shape B) ++ shape A; ZA = rotate(ra-1, init ⍳n) ++ [n].
        let tb_ = self.dropv(int(1), sb.clone());
        let wa = self.catv(tb_, sa.clone());
        let reshaped_a = self.reshape_to(wa, a, n);
        let init: Vec<i64> = (1..n as i64).collect();
        let k = (ra - 1) % init.len().max(1);
        let mut za: Vec<i64> = init.iter().cycle().skip(k).take(init.len()).copied().collect();
        za.push(n as i64);
        let ta = self.op(
            Op::Transp2,
            vec![Exp::Vector(za.into_iter().map(Exp::Int).collect(), Base::Int), reshaped_a.exp],
            reshaped_a.ty,
        );
        // WB = init(shape A) ++ shape B; ZB = ⍳(ra-1) ++ [n] ++ (ra … n-1): axis `ra`
        // (B's first, the one summed over) goes last and B's other axes follow A's.
        // (The inverse permutation, `⍳(ra-1) ++ (ra+1 … n) ++ [ra]`, is the same
        // only when B has rank 2.)
        let ia = self.takev(int(ra as i64 - 1), sa);
        let wb = self.catv(ia, sb);
        let reshaped_b = self.reshape_to(wb, b, n);
        let mut zb: Vec<i64> = (1..ra as i64).collect();
        zb.push(n as i64);
        zb.extend(ra as i64..n as i64);
        let tbv = self.op(
            Op::Transp2,
            vec![Exp::Vector(zb.into_iter().map(Exp::Int).collect(), Base::Int), reshaped_b.exp],
            reshaped_b.ty,
        );
        let (lam, rty) = self.scalar_lambda(
            g,
            env,
            &[Ty::scalar(ta.ty.base()), Ty::scalar(tbv.ty.base())],
            span,
        )?;
        let z = self.op(Op::ZipWith, vec![lam, ta.exp, tbv.exp], Ty::array(rty.base(), n));
        self.reduce(f, env, z, false, span)
    }

    // ---- structural primitives ----

    fn shape(&mut self, x: Val) -> Val {
        match &x.ty {
            Ty::Vec(_, n) => {
                let n = n.clone();
                self.op(Op::ShapeV, vec![x.exp], Ty::SV(Base::Int, n))
            }
            Ty::SV(..) => self.op(Op::ShapeV, vec![x.exp], Ty::SV(Base::Int, Shape::constant(1))),
            Ty::S(..) => {
                self.emit(Exp::Vector(vec![], Base::Int), Ty::Vec(Base::Int, Shape::constant(0)))
            }
            other => {
                let r = other.rank().unwrap_or(0) as i64;
                if r == 0 {
                    return self.emit(
                        Exp::Vector(vec![], Base::Int),
                        Ty::Vec(Base::Int, Shape::constant(0)),
                    );
                }
                self.op(Op::Shape, vec![x.exp], Ty::Vec(Base::Int, Shape::constant(r)))
            }
        }
    }

    fn catv(&mut self, a: Val, b: Val) -> Val {
        let len = |t: &Ty| match t {
            Ty::Vec(_, n) => n.clone(),
            _ => Shape::constant(1),
        };
        let n = len(&a.ty).add(&len(&b.ty));
        self.op(Op::CatV, vec![a.exp, b.exp], Ty::Vec(Base::Int, n))
    }

    fn dropv(&mut self, n: Val, v: Val) -> Val {
        let len = v.ty.const_length().unwrap_or(0);
        let k = n.ty.singleton().and_then(Shape::as_constant).unwrap_or(0);
        let m = (len - k.abs()).max(0);
        self.op(Op::DropV, vec![n.exp, v.exp], Ty::Vec(Base::Int, Shape::constant(m)))
    }

    fn takev(&mut self, n: Val, v: Val) -> Val {
        let k = n.ty.singleton().and_then(Shape::as_constant).unwrap_or(0);
        self.op(Op::TakeV, vec![n.exp, v.exp], Ty::Vec(v.ty.base(), Shape::constant(k.abs())))
    }

    fn default_of(base: Base) -> Exp {
        match base {
            Base::Bool => Exp::Bool(false),
            Base::Int => Exp::Int(0),
            Base::Double => Exp::Double(0.0),
        }
    }

    /// `reshape(shape, fill, x)` to a statically known rank.
    fn reshape_to(&mut self, shape: Val, x: Val, rank: usize) -> Val {
        let base = x.ty.base();
        let ty = match (&shape.ty, rank) {
            (Ty::SV(_, n), 1) => Ty::Vec(base, n.clone()),
            _ => Ty::array(base, rank),
        };
        self.op(Op::Reshape, vec![shape.exp, Self::default_of(base), x.exp], ty)
    }

    /// A left argument that is a shape or axis vector: a scalar becomes a
    /// one-element vector.
    fn as_vector(&mut self, v: Val, span: Span) -> R<Val> {
        match v.ty.rank() {
            Some(0) => {
                let ty = match &v.ty {
                    Ty::S(b, n) => Ty::SV(*b, n.clone()),
                    other => Ty::Vec(other.base(), Shape::constant(1)),
                };
                Ok(self.emit(Exp::Vector(vec![v.exp], v.ty.base()), ty))
            }
            Some(1) => Ok(v),
            _ => {
                self.error(span, format!("RANK ERROR: expected a vector, got {}", describe(&v.ty)))
            }
        }
    }

    fn ravel(&mut self, x: Val) -> Val {
        match x.ty.rank() {
            Some(1) => x,
            Some(0) => {
                let ty = match &x.ty {
                    Ty::S(b, n) => Ty::SV(*b, n.clone()),
                    other => Ty::Vec(other.base(), Shape::constant(1)),
                };
                self.emit(Exp::Vector(vec![x.exp], x.ty.base()), ty)
            }
            _ => {
                let s = self.shape(x.clone());
                let lam = self.lambda(&[Ty::scalar(Base::Int), Ty::scalar(Base::Int)], |e, p| {
                    Ok(e.op(
                        Op::Scalar(ScalarOp::Mul, Base::Int),
                        vec![p[0].exp.clone(), p[1].exp.clone()],
                        Ty::scalar(Base::Int),
                    ))
                });
                let Ok((lam, _)) = lam else { return x };
                let n = self.op(
                    Op::Reduce { assoc: true },
                    vec![lam, Exp::Int(1), s.exp],
                    Ty::scalar(Base::Int),
                );
                let sv = self.emit(
                    Exp::Vector(vec![n.exp], Base::Int),
                    Ty::Vec(Base::Int, Shape::constant(1)),
                );
                self.reshape_to(sv, x, 1)
            }
        }
    }

    fn int_arg(&mut self, v: Val, what: &str, span: Span) -> R<Val> {
        if v.ty.rank() == Some(1) && v.ty.const_length() == Some(1) {
            let first = self.op(
                Op::First,
                vec![Exp::Int(0), v.exp.clone()],
                match &v.ty {
                    Ty::SV(b, n) => Ty::S(*b, n.clone()),
                    other => Ty::scalar(other.base()),
                },
            );
            return self.int_arg(first, what, span);
        }
        if v.ty.rank() != Some(0) || v.ty.base() == Base::Double {
            return self.error(
                span,
                format!("DOMAIN ERROR: {what} must be an integer scalar, got {}", describe(&v.ty)),
            );
        }
        Ok(self.coerce(v, Base::Int))
    }

    fn prim1(&mut self, c: char, x: Val, span: Span) -> R<Val> {
        let sc = |op| Some(op);
        let scalar = match c {
            '+' => return Ok(x),
            '-' => sc(ScalarOp::Neg),
            '×' => sc(ScalarOp::Sign),
            '÷' => return self.scalar2(Sc::Op(ScalarOp::Div), dbl(1.0), x, span),
            '⌈' => sc(ScalarOp::Ceil),
            '⌊' => sc(ScalarOp::Floor),
            '|' => sc(ScalarOp::Abs),
            '*' => sc(ScalarOp::Exp),
            '⍟' => sc(ScalarOp::Ln),
            '○' => {
                return self.scalar2(Sc::Op(ScalarOp::Mul), dbl(std::f64::consts::PI), x, span);
            }
            '~' => sc(ScalarOp::Not),
            _ => None,
        };
        if let Some(op) = scalar {
            return self.scalar1(op, x, span);
        }
        match c {
            '⍴' => Ok(self.shape(x)),
            '⍳' => {
                let n = self.int_arg(x, "the argument of `⍳`", span)?;
                if let Some(k) = n.ty.singleton().and_then(Shape::as_constant)
                    && k < 0
                {
                    return self.error(
                        span,
                        format!("DOMAIN ERROR: `⍳` of the negative number ¯{}", k.unsigned_abs()),
                    );
                }
                Ok(match &n.ty {
                    Ty::S(_, v) => {
                        let v = v.clone();
                        self.op(Op::IotaV, vec![n.exp], Ty::Vec(Base::Int, v))
                    }
                    _ => self.op(Op::Iota, vec![n.exp], Ty::array(Base::Int, 1)),
                })
            }
            ',' => Ok(self.ravel(x)),
            '⍪' => {
                let r = self.ravel(x);
                let n = self.tally(r.clone());
                let s = self.emit(
                    Exp::Vector(vec![n.exp, Exp::Int(1)], Base::Int),
                    Ty::Vec(Base::Int, Shape::constant(2)),
                );
                Ok(self.reshape_to(s, r, 2))
            }
            '⌽' | '⊖' => {
                let ty = x.ty.clone();
                Ok(match (c, x.ty.rank()) {
                    (_, Some(0)) => x,
                    (_, Some(1)) | ('⊖', _) => self.op(Op::VReverse, vec![x.exp], ty),
                    _ => self.op(Op::Reverse, vec![x.exp], ty),
                })
            }
            '⍉' => {
                let ty = x.ty.clone();
                Ok(if x.ty.rank().unwrap_or(0) < 2 {
                    x
                } else {
                    self.op(Op::Transp, vec![x.exp], ty)
                })
            }
            '↑' | '⊃' => {
                if x.ty.rank() == Some(0) {
                    return Ok(x);
                }
                let ty = match &x.ty {
                    Ty::SV(b, n) => Ty::S(*b, n.clone()),
                    other => Ty::scalar(other.base()),
                };
                let op = if matches!(x.ty, Ty::SV(..)) { Op::FirstV } else { Op::First };
                let args = if op == Op::FirstV {
                    vec![x.exp]
                } else {
                    vec![Self::default_of(x.ty.base()), x.exp]
                };
                Ok(self.op(op, args, ty))
            }
            '≢' => Ok(self.tally(x)),
            '⊢' | '⊣' => Ok(x),
            _ => self.error(span, format!("NONCE ERROR: monadic `{c}` is not supported")),
        }
    }

    fn tally(&mut self, x: Val) -> Val {
        match x.ty.rank() {
            Some(0) => int(1),
            _ => {
                if let Some(n) = x.ty.const_length() {
                    return int(n);
                }
                let s = self.shape(x);
                self.op(Op::First, vec![Exp::Int(0), s.exp], Ty::scalar(Base::Int))
            }
        }
    }

    fn prim2(&mut self, c: char, a: Val, x: Val, span: Span) -> R<Val> {
        let op = match c {
            '+' => Some(ScalarOp::Add),
            '-' => Some(ScalarOp::Sub),
            '×' => Some(ScalarOp::Mul),
            '÷' => Some(ScalarOp::Div),
            '⌈' => Some(ScalarOp::Max),
            '⌊' => Some(ScalarOp::Min),
            '|' => Some(ScalarOp::Res),
            '*' => Some(ScalarOp::Pow),
            '<' => Some(ScalarOp::Lt),
            '≤' => Some(ScalarOp::Le),
            '=' => Some(ScalarOp::Eq),
            '≥' => Some(ScalarOp::Ge),
            '>' => Some(ScalarOp::Gt),
            '≠' => Some(ScalarOp::Ne),
            '∧' => Some(ScalarOp::And),
            '∨' => Some(ScalarOp::Or),
            '⍲' => Some(ScalarOp::Nand),
            '⍱' => Some(ScalarOp::Nor),
            _ => None,
        };
        if let Some(op) = op {
            return self.scalar2(Sc::Op(op), a, x, span);
        }
        match c {
            '⍟' => self.scalar2(Sc::Log, a, x, span),
            '○' => {
                if a.ty.rank() != Some(0) {
                    return self
                        .error(span, "NONCE ERROR: the left argument of `○` must be a constant");
                }
                self.scalar2(Sc::Circle, a, x, span)
            }
            '⍴' => {
                if a.ty.base() == Base::Double {
                    return self.error(span, "DOMAIN ERROR: a shape of doubles");
                }
                let a = self.coerce(a, Base::Int);
                let s = self.as_vector(a, span)?;
                if let Some(items) = self.literal_vector(&s.exp)
                    && items.iter().any(|i| matches!(i, Exp::Int(k) if *k < 0))
                {
                    return self.error(span, "DOMAIN ERROR: a shape with a negative extent");
                }
                let Some(rank) = s.ty.const_length() else {
                    return self.error(span, "NONCE ERROR: the rank of a reshape must be known when compiling (a shape vector of known length)");
                };
                if rank == 0 {
                    return Ok(self.op(
                        Op::First,
                        vec![Self::default_of(x.ty.base()), x.exp],
                        Ty::scalar(x.ty.base()),
                    ));
                }
                Ok(self.reshape_to(s, x, rank as usize))
            }
            ',' | '⍪' => self.catenate(c, a, x, span),
            '⌽' | '⊖' => {
                let n = self.int_arg(a, "the rotation count", span)?;
                let ty = x.ty.clone();
                Ok(match (c, x.ty.rank()) {
                    (_, Some(0)) => x,
                    (_, Some(1)) => self.op(Op::RotateV, vec![n.exp, x.exp], ty),
                    ('⊖', _) => self.op(Op::VRotate, vec![n.exp, x.exp], ty),
                    _ => self.op(Op::Rotate, vec![n.exp, x.exp], ty),
                })
            }
            '⍉' => self.literal_axes(a, x, span),
            '↑' | '↓' => {
                let n = self.int_arg(
                    a,
                    if c == '↑' { "the count of `↑`" } else { "the count of `↓`" },
                    span,
                )?;
                let x = if x.ty.rank() == Some(0) { self.ravel(x) } else { x };
                let k = n.ty.singleton().and_then(Shape::as_constant);
                let base = x.ty.base();
                if c == '↑' {
                    Ok(match (&x.ty, k) {
                        (Ty::Vec(..) | Ty::SV(..), Some(k)) => self.op(
                            Op::TakeV,
                            vec![n.exp, x.exp],
                            Ty::Vec(base, Shape::constant(k.abs())),
                        ),
                        _ => {
                            let ty = x.ty.widen();
                            let ty = if ty.rank() == Some(1) { Ty::array(base, 1) } else { ty };
                            self.op(Op::Take, vec![n.exp, Self::default_of(base), x.exp], ty)
                        }
                    })
                } else {
                    Ok(match (x.ty.const_length(), k) {
                        (Some(len), Some(k)) => self.op(
                            Op::DropV,
                            vec![n.exp, x.exp],
                            Ty::Vec(base, Shape::constant((len - k.abs()).max(0))),
                        ),
                        _ => {
                            let ty = x.ty.widen();
                            let ty = if ty.rank() == Some(1) { Ty::array(base, 1) } else { ty };
                            self.op(Op::Drop, vec![n.exp, x.exp], ty)
                        }
                    })
                }
            }
            '/' | '⌿' => {
                if a.ty.rank() != Some(1) || x.ty.rank() != Some(1) {
                    return self.error(
                        span,
                        format!(
                            "NONCE ERROR: compress and replicate take vectors (got {} and {})",
                            describe(&a.ty),
                            describe(&x.ty)
                        ),
                    );
                }
                if let (Some(n), Some(m)) = (a.ty.const_length(), x.ty.const_length())
                    && n != m
                {
                    return self.error(
                        span,
                        format!("LENGTH ERROR: {} and {}", describe(&a.ty), describe(&x.ty)),
                    );
                }
                let base = x.ty.base();
                Ok(match a.ty.base() {
                    Base::Bool => self.op(Op::Compress, vec![a.exp, x.exp], Ty::array(base, 1)),
                    Base::Int => self.op(
                        Op::Replicate,
                        vec![Self::default_of(base), a.exp, x.exp],
                        Ty::array(base, 1),
                    ),
                    Base::Double => {
                        return self.error(span, "DOMAIN ERROR: replicate counts must be integers");
                    }
                })
            }
            '⊢' => Ok(x),
            '⊣' => Ok(a),
            '∊' => self.member(a, x, span),
            '⍳' => self.index_of(a, x, span),
            _ => self.error(span, format!("NONCE ERROR: dyadic `{c}` is not supported")),
        }
    }

    /// The literal vector bound to `e`, looking through its `let`.
    fn literal_vector(&self, e: &Exp) -> Option<Vec<Exp>> {
        match e {
            Exp::Vector(items, _) => Some(items.clone()),
            Exp::Var(v) => self
                .scopes
                .iter()
                .rev()
                .flatten()
                .find(|l| l.var == *v)
                .and_then(|l| self.literal_vector(&l.exp)),
            _ => None,
        }
    }

    /// `a∊b`: `∨/ a∘.=b` (for scalar `a`, `∨/ a=b`); elements of `a` of any rank.
    fn member(&mut self, a: Val, b: Val, span: Span) -> R<Val> {
        let b = self.ravel(b);
        let eq = Fun::Prim('=', span);
        let table = if a.ty.rank() == Some(0) {
            self.scalar2(Sc::Op(ScalarOp::Eq), a, b, span)?
        } else {
            self.outer_product(&eq, &Env::default(), a, b, span)?
        };
        self.reduce(&Fun::Prim('∨', span), &Env::default(), table, false, span)
    }

    /// `a⍳b` for a vector `a`: the 1-based position of each element of `b` in `a`,
    /// `1+≢a` where it is missing: `1 + +/ ∧\ b∘.≠a`.
    fn index_of(&mut self, a: Val, b: Val, span: Span) -> R<Val> {
        if a.ty.rank() != Some(1) {
            return self.error(
                span,
                format!(
                    "RANK ERROR: the left argument of dyadic `⍳` must be a vector, not {}",
                    describe(&a.ty)
                ),
            );
        }
        let ne = Fun::Prim('≠', span);
        let table = if b.ty.rank() == Some(0) {
            self.scalar2(Sc::Op(ScalarOp::Ne), b, a, span)?
        } else {
            self.outer_product(&ne, &Env::default(), b, a, span)?
        };
        let prefix = self.scan(&Fun::Prim('∧', span), &Env::default(), table, false, span)?;
        let count = self.reduce(&Fun::Prim('+', span), &Env::default(), prefix, false, span)?;
        self.scalar2(Sc::Op(ScalarOp::Add), int(1), count, span)
    }

    fn literal_axes(&mut self, a: Val, x: Val, span: Span) -> R<Val> {
        let items = match &a.exp {
            Exp::Int(_) => vec![a.exp.clone()],
            e => match self.literal_vector(e) {
                Some(items) => items,
                None => {
                    return self.error(
                        span,
                        "NONCE ERROR: the axes of dyadic `⍉` must be a literal vector",
                    );
                }
            },
        };
        let mut axes = Vec::new();
        for i in &items {
            match i {
                Exp::Int(k) => axes.push(*k),
                _ => {
                    return self
                        .error(span, "NONCE ERROR: the axes of dyadic `⍉` must be constants");
                }
            }
        }
        let r = x.ty.rank().unwrap_or(0);
        let mut sorted = axes.clone();
        sorted.sort_unstable();
        if sorted != (1..=r as i64).collect::<Vec<_>>() {
            return self.error(
                span,
                format!("DOMAIN ERROR: {axes:?} is not a permutation of the {r} axes"),
            );
        }
        let ty = x.ty.clone();
        Ok(self.op(Op::Transp2, vec![Exp::Vector(items, Base::Int), x.exp], ty))
    }

    fn catenate(&mut self, c: char, a: Val, x: Val, span: Span) -> R<Val> {
        let base = a.ty.base().join(x.ty.base());
        let a = self.coerce(a, base);
        let x = self.coerce(x, base);
        let (ra, rx) = (a.ty.rank().unwrap_or(0), x.ty.rank().unwrap_or(0));
        let len = |t: &Ty| match t {
            Ty::Vec(_, n) => Some(n.clone()),
            Ty::SV(..) => Some(Shape::constant(1)),
            _ => None,
        };
        match (ra, rx) {
            (0, 0) => {
                Ok(self
                    .emit(Exp::Vector(vec![a.exp, x.exp], base), Ty::Vec(base, Shape::constant(2))))
            }
            (0, 1) => {
                let ty = len(&x.ty)
                    .map_or(Ty::array(base, 1), |n| Ty::Vec(base, n.add(&Shape::constant(1))));
                let op = if matches!(ty, Ty::Vec(..)) { Op::ConsV } else { Op::Cons };
                Ok(self.op(op, vec![a.exp, x.exp], ty))
            }
            (1, 0) => {
                let ty = len(&a.ty)
                    .map_or(Ty::array(base, 1), |n| Ty::Vec(base, n.add(&Shape::constant(1))));
                let op = if matches!(ty, Ty::Vec(..)) { Op::SnocV } else { Op::Snoc };
                Ok(self.op(op, vec![a.exp, x.exp], ty))
            }
            (1, 1) => {
                let ty = match (len(&a.ty), len(&x.ty)) {
                    (Some(n), Some(m)) => Ty::Vec(base, n.add(&m)),
                    _ => Ty::array(base, 1),
                };
                let op = if matches!(ty, Ty::Vec(..)) { Op::CatV } else { Op::Cat };
                Ok(self.op(op, vec![a.exp, x.exp], ty))
            }
            (r, s) if r == s => {
                let op = if c == '⍪' { Op::VCat } else { Op::Cat };
                Ok(self.op(op, vec![a.exp, x.exp], Ty::array(base, r)))
            }
            (r, s) if r + 1 == s && c == ',' => {
                Ok(self.op(Op::Cons, vec![a.exp, x.exp], Ty::array(base, s)))
            }
            (r, s) if r == s + 1 && c == ',' => {
                Ok(self.op(Op::Snoc, vec![a.exp, x.exp], Ty::array(base, r)))
            }
            _ => self.error(
                span,
                format!("RANK ERROR: cannot join {} and {}", describe(&a.ty), describe(&x.ty)),
            ),
        }
    }

    fn index(&mut self, a: Val, ixs: Vec<Option<Val>>, span: Span) -> R<Val> {
        let r = a.ty.rank().unwrap_or(0);
        if ixs.len() != r {
            return self
                .error(span, format!("RANK ERROR: {} indices for {}", ixs.len(), describe(&a.ty)));
        }
        // A vector index into a vector: one `index` per element.
        if r == 1
            && let Some(Some(iv)) = ixs.first()
            && iv.ty.rank() == Some(1)
        {
            let iv = iv.clone();
            if iv.ty.base() == Base::Double {
                return self.error(span, "DOMAIN ERROR: indices must be integers");
            }
            let iv = self.coerce(iv, Base::Int);
            let base = a.ty.base();
            let (lam, _) = self.lambda(&[Ty::scalar(Base::Int)], |e, p| {
                Ok(e.op(
                    Op::Index,
                    vec![Exp::Int(1), p[0].exp.clone(), a.exp.clone()],
                    Ty::scalar(base),
                ))
            })?;
            return Ok(self.op(Op::Each, vec![lam, iv.exp.clone()], same_form(&iv.ty, base)));
        }
        let mut cur = a;
        let mut removed = 0;
        for (d, ix) in ixs.into_iter().enumerate() {
            let Some(ix) = ix else { continue };
            let ix = self.int_arg(ix, "an index", span)?;
            let rank = cur.ty.rank().unwrap_or(0);
            let ty = Ty::array(cur.ty.base(), rank - 1);
            let dim = (d - removed + 1) as i64;
            cur = self.op(Op::Index, vec![Exp::Int(dim), ix.exp, cur.exp], ty);
            removed += 1;
        }
        Ok(cur)
    }
}
