//! Translation of TAIL to Weft's core IR. Ranks are static after inference, so every
//! TAIL array becomes a nested core array with one size per axis; the operators
//! become `generate` nests over index arithmetic (pull arrays, which the middle end
//! fuses), core `reduce`/`scan` for associative primitives, sequential loops for
//! right folds and `power`, and `scatter` for replicate and compress. Indices are
//! converted from TAIL's 1-based convention here, at the edge.

use rustc_hash::FxHashMap as HashMap;

use la_arena::{Arena, ArenaMap};
use weft_core::{
    Atom, BinOp, Block, BlockId, CoreSize, Exp as CExp, Function, IndexItem, Lambda, LoopForm,
    Program as CProgram, Stmt as CStmt, Type, UnOp, Var as CVar, VarId, VarKind,
};
use weft_hir::{DefLoc, MathFn, Name, ScalarTy};
use weft_values::Scalar;

use crate::tail::{Body, Exp, Op, Program, ScalarOp, Var};
use crate::ty::{Base, Ty};

/// A translated TAIL value: the core atom, one size atom per axis, and (for shape
/// vectors known while translating) its elements.
#[derive(Debug, Clone)]
struct CVal {
    atom: Atom,
    shape: Vec<Atom>,
    base: Base,
    known: Option<Vec<Atom>>,
}

fn sty(base: Base) -> ScalarTy {
    match base {
        Base::Bool => ScalarTy::Bool,
        Base::Int => ScalarTy::I64,
        Base::Double => ScalarTy::F64,
    }
}

fn i64c(i: i64) -> Atom {
    Atom::Const(Scalar::I64(i))
}

fn const_of(a: Atom) -> Option<i64> {
    match a {
        Atom::Const(Scalar::I64(i)) => Some(i),
        _ => None,
    }
}

fn size_of(a: Atom) -> CoreSize {
    match a {
        Atom::Var(v) => CoreSize::var(v),
        Atom::Const(Scalar::I64(c)) => CoreSize::constant(c),
        Atom::Const(_) => CoreSize::constant(0),
    }
}

fn array_ty(shape: &[Atom], base: Base) -> Type {
    shape.iter().rev().fold(Type::Scalar(sty(base)), |t, &s| Type::array(size_of(s), t))
}

/// Translates a TAIL program to a core program with one entry, `main`, that returns
/// every `⎕ ←` value in order and then the program's value.
pub fn to_core(p: &Program, def: DefLoc) -> Result<CProgram, String> {
    let mut t = Tr {
        vars: Arena::new(),
        exps: Arena::new(),
        blocks: Arena::new(),
        stack: vec![Vec::new()],
        env: HashMap::default(),
        names: p.names.clone(),
    };
    let result = t.body(&p.body)?;
    let mut outs = Vec::new();
    for v in &p.prints {
        outs.push(t.env.get(v).cloned().ok_or("internal error: a printed value is not bound")?);
    }
    outs.push(result);
    // Result sizes are bound inside the body: the return type names them as
    // existential sizes.
    let mut ret_tys = Vec::new();
    for o in &outs {
        let shape: Vec<Atom> = o
            .shape
            .iter()
            .map(|&s| match s {
                Atom::Const(_) => s,
                Atom::Var(_) => Atom::Var(t.vars.alloc(CVar {
                    name: Name::new("n"),
                    ty: Type::Scalar(ScalarTy::I64),
                    kind: VarKind::Existential,
                })),
            })
            .collect();
        ret_tys.push(array_ty(&shape, o.base));
    }
    let (ret, result_atom) = if outs.len() == 1 {
        (ret_tys.remove(0), outs[0].atom)
    } else {
        let ty = Type::Tuple(ret_tys.clone());
        let a = t.bind(CExp::Tuple(outs.iter().map(|o| o.atom).collect()), ty.clone(), "result");
        (ty, a)
    };
    let stmts = t.stack.pop().unwrap_or_default();
    let body = t.blocks.alloc(Block { stmts, result: Some(result_atom) });
    let mut program = CProgram::default();
    let f = Function {
        name: Name::new("main"),
        def,
        is_entry: true,
        size_params: Vec::new(),
        params: Vec::new(),
        ret,
        body,
        vars: t.vars,
        exps: t.exps,
        blocks: t.blocks,
        origins: ArenaMap::default(),
    };
    let id = program.functions.alloc(f);
    program.entries.push(id);
    Ok(program)
}

struct Tr {
    vars: Arena<CVar>,
    exps: Arena<CExp>,
    blocks: Arena<Block>,
    stack: Vec<Vec<CStmt>>,
    env: HashMap<Var, CVal>,
    names: Vec<(Var, String)>,
}

type R<T> = Result<T, String>;

impl Tr {
    fn new_var(&mut self, ty: Type, name: &str) -> VarId {
        self.vars.alloc(CVar { name: Name::new(name), ty, kind: VarKind::Bound })
    }

    fn bind(&mut self, exp: CExp, ty: Type, name: &str) -> Atom {
        let var = self.new_var(ty, name);
        let exp = self.exps.alloc(exp);
        if let Some(b) = self.stack.last_mut() {
            b.push(CStmt { var, exp });
        }
        Atom::Var(var)
    }

    fn scalar_val(atom: Atom, base: Base) -> CVal {
        CVal { atom, shape: Vec::new(), base, known: None }
    }

    /// Runs `f` in a new block and returns the block.
    fn block(&mut self, f: impl FnOnce(&mut Self) -> R<Atom>) -> R<BlockId> {
        self.stack.push(Vec::new());
        let result = f(self);
        let stmts = self.stack.pop().unwrap_or_default();
        let result = result?;
        Ok(self.blocks.alloc(Block { stmts, result: Some(result) }))
    }

    // ---- scalar arithmetic, folding constants so that sizes stay constants ----

    fn bin(&mut self, op: BinOp, base: Base, a: Atom, b: Atom) -> Atom {
        if let (Some(x), Some(y)) = (const_of(a), const_of(b)) {
            let folded = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                _ => None,
            };
            if let Some(v) = folded {
                return i64c(v);
            }
        }
        match (op, const_of(a), const_of(b)) {
            (BinOp::Add, Some(0), _) => return b,
            (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul | BinOp::Div, _, Some(1)) => {
                return a;
            }
            (BinOp::Mul, Some(1), _) => return b,
            _ => {}
        }
        let res = match op {
            BinOp::Eq | BinOp::Neq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                ScalarTy::Bool
            }
            _ => sty(base),
        };
        self.bind(CExp::BinOp { op, ty: sty(base), lhs: a, rhs: b }, Type::Scalar(res), "t")
    }

    fn ibin(&mut self, op: BinOp, a: Atom, b: Atom) -> Atom {
        self.bin(op, Base::Int, a, b)
    }

    fn math(&mut self, func: MathFn, base: Base, args: Vec<Atom>) -> Atom {
        self.bind(CExp::Math { ty: sty(base), func, args }, Type::Scalar(sty(base)), "t")
    }

    fn convert(&mut self, from: Base, to: Base, a: Atom) -> Atom {
        self.bind(
            CExp::Convert { from: sty(from), to: sty(to), operand: a },
            Type::Scalar(sty(to)),
            "t",
        )
    }

    /// `if c then a else b` on scalars (or arrays of `ty`).
    fn select(
        &mut self,
        c: Atom,
        ty: Type,
        a: impl FnOnce(&mut Self) -> R<Atom>,
        b: impl FnOnce(&mut Self) -> R<Atom>,
    ) -> R<Atom> {
        if let Atom::Const(Scalar::Bool(k)) = c {
            return if k { a(self) } else { b(self) };
        }
        let then_branch = self.block(a)?;
        let else_branch = self.block(b)?;
        Ok(self.bind(CExp::If { cond: c, then_branch, else_branch }, ty, "t"))
    }

    fn imax(&mut self, a: Atom, b: Atom) -> Atom {
        if let (Some(x), Some(y)) = (const_of(a), const_of(b)) {
            return i64c(x.max(y));
        }
        self.math(MathFn::Max, Base::Int, vec![a, b])
    }

    fn iabs(&mut self, a: Atom) -> Atom {
        if let Some(x) = const_of(a) {
            return i64c(x.abs());
        }
        self.math(MathFn::Abs, Base::Int, vec![a])
    }

    /// `((a mod m) + m) mod m` for m > 0.
    fn modulo(&mut self, a: Atom, m: Atom) -> Atom {
        let r = self.ibin(BinOp::Rem, a, m);
        let r = self.ibin(BinOp::Add, r, m);
        self.ibin(BinOp::Rem, r, m)
    }

    fn product(&mut self, shape: &[Atom]) -> Atom {
        let mut acc = i64c(1);
        for &s in shape {
            acc = self.ibin(BinOp::Mul, acc, s);
        }
        acc
    }

    // ---- arrays ----

    /// A `generate` nest over `shape` whose innermost body is `body(indices)`.
    fn generate(
        &mut self,
        shape: &[Atom],
        base: Base,
        body: &mut dyn FnMut(&mut Self, &[Atom]) -> R<Atom>,
    ) -> R<Atom> {
        self.gen_rec(shape, &[], base, &mut Vec::new(), body)
    }

    /// [`Self::generate`] whose body gives arrays of shape `cell`.
    fn generate_cells(
        &mut self,
        shape: &[Atom],
        cell: &[Atom],
        base: Base,
        body: &mut dyn FnMut(&mut Self, &[Atom]) -> R<Atom>,
    ) -> R<Atom> {
        self.gen_rec(shape, cell, base, &mut Vec::new(), body)
    }

    fn gen_rec(
        &mut self,
        shape: &[Atom],
        cell: &[Atom],
        base: Base,
        idx: &mut Vec<Atom>,
        body: &mut dyn FnMut(&mut Self, &[Atom]) -> R<Atom>,
    ) -> R<Atom> {
        let Some((&n, rest)) = shape.split_first() else { return body(self, idx) };
        let i = self.new_var(Type::Scalar(ScalarTy::I64), "i");
        idx.push(Atom::Var(i));
        let inner: Vec<Atom> = rest.iter().chain(cell).copied().collect();
        let inner_ty = array_ty(&inner, base);
        let block = self.block(|t| t.gen_rec(rest, cell, base, idx, body));
        idx.pop();
        let block = block?;
        let lambda = Lambda { params: vec![i], body: block, ret: inner_ty.clone() };
        Ok(self.bind(
            CExp::Generate { level: None, size: n, lambda },
            Type::array(size_of(n), inner_ty),
            "a",
        ))
    }

    fn read(&mut self, a: &CVal, idx: &[Atom]) -> Atom {
        if idx.is_empty() {
            return a.atom;
        }
        if let (Some(known), [i]) = (&a.known, idx)
            && let Some(k) = const_of(*i)
            && let Some(&e) = usize::try_from(k).ok().and_then(|k| known.get(k))
        {
            return e;
        }
        let items = idx.iter().map(|&i| IndexItem::Fix(i)).collect();
        let rest = &a.shape[idx.len()..];
        self.bind(CExp::Index { array: a.atom, items }, array_ty(rest, a.base), "x")
    }

    /// Row-major position `flat` of `a`.
    fn read_flat(&mut self, a: &CVal, flat: Atom) -> Atom {
        let mut idx = Vec::new();
        let mut stride = i64c(1);
        let mut strides = Vec::new();
        for &s in a.shape.iter().rev() {
            strides.push(stride);
            stride = self.ibin(BinOp::Mul, stride, s);
        }
        strides.reverse();
        for (k, &s) in a.shape.iter().enumerate() {
            let q = self.ibin(BinOp::Div, flat, strides[k]);
            let q = if k == 0 { q } else { self.ibin(BinOp::Rem, q, s) };
            idx.push(q);
        }
        self.read(a, &idx)
    }

    fn flat_index(&mut self, idx: &[Atom], shape: &[Atom]) -> Atom {
        let mut acc = i64c(0);
        for (&i, &s) in idx.iter().zip(shape) {
            acc = self.ibin(BinOp::Mul, acc, s);
            acc = self.ibin(BinOp::Add, acc, i);
        }
        acc
    }

    /// Checks at run time that `b` has `shape` (a LENGTH ERROR otherwise).
    fn check_shape(&mut self, b: &CVal, shape: &[Atom]) -> CVal {
        if b.shape.iter().zip(shape).all(|(x, y)| x == y) {
            return b.clone();
        }
        let ty = array_ty(shape, b.base);
        let atom = self.bind(CExp::Coerce { value: b.atom, ty: ty.clone() }, ty, "c");
        CVal { atom, shape: shape.to_vec(), base: b.base, known: b.known.clone() }
    }

    fn atom(&mut self, e: &Exp) -> R<CVal> {
        Ok(match e {
            Exp::Var(v) => self
                .env
                .get(v)
                .cloned()
                .ok_or_else(|| format!("internal error: v{v} is not bound"))?,
            Exp::Int(i) => Self::scalar_val(i64c(*i), Base::Int),
            Exp::Double(d) => Self::scalar_val(Atom::Const(Scalar::F64(*d)), Base::Double),
            Exp::Bool(b) => Self::scalar_val(Atom::Const(Scalar::Bool(*b)), Base::Bool),
            Exp::Vector(items, base) => {
                let mut atoms = Vec::new();
                for i in items {
                    atoms.push(self.atom(i)?.atom);
                }
                let n = i64c(atoms.len() as i64);
                let a = self.bind(
                    CExp::ArrayLit { elems: atoms.clone(), elem_ty: Type::Scalar(sty(*base)) },
                    array_ty(&[n], *base),
                    "v",
                );
                CVal { atom: a, shape: vec![n], base: *base, known: Some(atoms) }
            }
            Exp::Op(op, _) => return Err(format!("internal error: a nested `{}`", op.name())),
            Exp::Lam(..) => return Err("internal error: a lambda as a value".to_owned()),
        })
    }

    fn body(&mut self, b: &Body) -> R<CVal> {
        for l in &b.lets {
            let v = self.exp(&l.exp, &l.ty)?;
            // An assigned array keeps its APL name (run-time errors name it); names
            // outside ASCII identifiers are left to the generated ones.
            if let (Atom::Var(var), Some((_, name))) =
                (v.atom, self.names.iter().find(|(w, _)| *w == l.var))
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.vars[var].name = Name::new(name);
            }
            self.env.insert(l.var, v);
        }
        self.atom(&b.result)
    }

    /// Inlines a lambda on scalar arguments.
    fn call(&mut self, lam: &Exp, args: &[CVal]) -> R<CVal> {
        let Exp::Lam(params, body) = lam else {
            return Err("internal error: not a lambda".to_owned());
        };
        for ((v, _), a) in params.iter().zip(args) {
            self.env.insert(*v, a.clone());
        }
        self.body(body)
    }

    /// A core lambda of two scalars (for `reduce` and `scan`).
    fn lambda2(&mut self, lam: &Exp, base: Base) -> R<Lambda> {
        let x = self.new_var(Type::Scalar(sty(base)), "x");
        let y = self.new_var(Type::Scalar(sty(base)), "y");
        let mut rbase = base;
        let body = self.block(|t| {
            let r = t.call(
                lam,
                &[Self::scalar_val(Atom::Var(x), base), Self::scalar_val(Atom::Var(y), base)],
            )?;
            rbase = r.base;
            Ok(r.atom)
        })?;
        Ok(Lambda { params: vec![x, y], body, ret: Type::Scalar(sty(rbase)) })
    }

    fn exp(&mut self, e: &Exp, ty: &Ty) -> R<CVal> {
        let Exp::Op(op, args) = e else { return self.atom(e) };
        let base = ty.base();
        match op {
            Op::Scalar(s, b) => {
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.atom(a)?.atom);
                }
                let atom = self.scalar_op(*s, *b, &vals)?;
                Ok(Self::scalar_val(atom, base))
            }
            Op::Iota | Op::IotaV => {
                let n = self.atom(&args[0])?.atom;
                let a = self.generate(&[n], Base::Int, &mut |t, idx| {
                    Ok(t.ibin(BinOp::Add, idx[0], i64c(1)))
                })?;
                let known = const_of(n).filter(|&n| n <= 16).map(|n| (1..=n).map(i64c).collect());
                Ok(CVal { atom: a, shape: vec![n], base: Base::Int, known })
            }
            Op::Each => {
                let a = self.atom(&args[1])?;
                let lam = &args[0];
                let atom = self.generate(&a.shape.clone(), base, &mut |t, idx| {
                    let x = t.read(&a, idx);
                    Ok(t.call(lam, &[Self::scalar_val(x, a.base)])?.atom)
                })?;
                Ok(CVal { atom, shape: a.shape, base, known: None })
            }
            Op::ZipWith => {
                let a = self.atom(&args[1])?;
                let b = self.atom(&args[2])?;
                let b = self.check_shape(&b, &a.shape);
                let lam = &args[0];
                let atom = self.generate(&a.shape.clone(), base, &mut |t, idx| {
                    let x = t.read(&a, idx);
                    let y = t.read(&b, idx);
                    Ok(t.call(lam, &[Self::scalar_val(x, a.base), Self::scalar_val(y, b.base)])?
                        .atom)
                })?;
                Ok(CVal { atom, shape: a.shape, base, known: None })
            }
            Op::Reduce { assoc } => {
                let neutral = self.atom(&args[1])?;
                let a = self.atom(&args[2])?;
                let r = a.shape.len();
                let out_shape = a.shape[..r - 1].to_vec();
                let m = a.shape[r - 1];
                let lam = &args[0];
                let assoc = *assoc;
                let atom = self.generate(&out_shape, base, &mut |t, idx| {
                    let row = if idx.is_empty() {
                        a.clone()
                    } else {
                        let atom = t.read(&a, idx);
                        CVal { atom, shape: vec![m], base: a.base, known: None }
                    };
                    if assoc {
                        let lambda = t.lambda2(lam, a.base)?;
                        Ok(t.bind(
                            CExp::Reduce {
                                level: None,
                                lambda,
                                neutral: neutral.atom,
                                array: row.atom,
                            },
                            Type::Scalar(sty(base)),
                            "r",
                        ))
                    } else {
                        t.fold_right(lam, &neutral, &row, m, base)
                    }
                })?;
                Ok(CVal { atom, shape: out_shape, base, known: None })
            }
            Op::Scan => {
                let neutral = self.atom(&args[1])?;
                let a = self.atom(&args[2])?;
                let r = a.shape.len();
                let m = a.shape[r - 1];
                let lam = &args[0];
                let outer = a.shape[..r - 1].to_vec();
                let atom = self.generate_cells(&outer, &[m], base, &mut |t, idx| {
                    let row = if idx.is_empty() { a.atom } else { t.read(&a, idx) };
                    let lambda = t.lambda2(lam, a.base)?;
                    Ok(t.bind(
                        CExp::Scan { level: None, lambda, neutral: neutral.atom, array: row },
                        array_ty(&[m], base),
                        "s",
                    ))
                })?;
                Ok(CVal { atom, shape: a.shape, base, known: None })
            }
            Op::Shape | Op::ShapeV => {
                let a = self.atom(&args[0])?;
                let n = i64c(a.shape.len() as i64);
                let atom = self.bind(
                    CExp::ArrayLit { elems: a.shape.clone(), elem_ty: Type::Scalar(ScalarTy::I64) },
                    array_ty(&[n], Base::Int),
                    "shape",
                );
                Ok(CVal { atom, shape: vec![n], base: Base::Int, known: Some(a.shape) })
            }
            Op::Reshape => {
                let s = self.atom(&args[0])?;
                let fill = self.atom(&args[1])?;
                let a = self.atom(&args[2])?;
                let rank = ty.rank().ok_or("internal error: reshape to an unknown rank")?;
                let out: Vec<Atom> = (0..rank).map(|k| self.read(&s, &[i64c(k as i64)])).collect();
                let n = self.product(&a.shape);
                let out2 = out.clone();
                let atom = self.generate(&out, base, &mut |t, idx| {
                    let flat = t.flat_index(idx, &out2);
                    if const_of(n).is_some_and(|n| n > 0) {
                        let f = t.ibin(BinOp::Rem, flat, n);
                        return Ok(t.read_flat(&a, f));
                    }
                    let empty = t.ibin(BinOp::Eq, n, i64c(0));
                    t.select(
                        empty,
                        Type::Scalar(sty(base)),
                        |_| Ok(fill.atom),
                        |t| {
                            let f = t.ibin(BinOp::Rem, flat, n);
                            Ok(t.read_flat(&a, f))
                        },
                    )
                })?;
                Ok(CVal { atom, shape: out, base, known: None })
            }
            Op::Reverse | Op::VReverse | Op::Rotate | Op::RotateV | Op::VRotate => {
                let (n, a) = match op {
                    Op::Reverse | Op::VReverse => (None, self.atom(&args[0])?),
                    _ => (Some(self.atom(&args[0])?.atom), self.atom(&args[1])?),
                };
                let axis = match op {
                    Op::Reverse | Op::Rotate => a.shape.len() - 1,
                    _ => 0,
                };
                let m = a.shape[axis];
                let atom = self.generate(&a.shape.clone(), base, &mut |t, idx| {
                    let mut src = idx.to_vec();
                    src[axis] = match n {
                        None => {
                            let last = t.ibin(BinOp::Sub, m, i64c(1));
                            t.ibin(BinOp::Sub, last, idx[axis])
                        }
                        Some(n) => {
                            let s = t.ibin(BinOp::Add, idx[axis], n);
                            t.modulo(s, m)
                        }
                    };
                    Ok(t.read(&a, &src))
                })?;
                Ok(CVal { atom, shape: a.shape, base, known: None })
            }
            Op::Transp | Op::Transp2 => {
                let (perm, a) = match op {
                    Op::Transp => {
                        let a = self.atom(&args[0])?;
                        let r = a.shape.len();
                        ((1..=r).rev().collect::<Vec<_>>(), a)
                    }
                    _ => {
                        let Exp::Vector(items, _) = &args[0] else {
                            return Err(
                                "internal error: transp2 of a non-literal axis vector".to_owned()
                            );
                        };
                        let p = items
                            .iter()
                            .map(|i| match i {
                                Exp::Int(k) => {
                                    usize::try_from(*k).map_err(|_| "bad axis".to_owned())
                                }
                                _ => Err("internal error: a non-constant axis".to_owned()),
                            })
                            .collect::<R<Vec<usize>>>()?;
                        (p, self.atom(&args[1])?)
                    }
                };
                // Axis k of the input becomes axis perm[k] of the output.
                let mut out = vec![i64c(0); perm.len()];
                for (k, &p) in perm.iter().enumerate() {
                    out[p - 1] = a.shape[k];
                }
                let atom = self.generate(&out.clone(), base, &mut |t, idx| {
                    let src: Vec<Atom> = perm.iter().map(|&p| idx[p - 1]).collect();
                    Ok(t.read(&a, &src))
                })?;
                Ok(CVal { atom, shape: out, base, known: None })
            }
            Op::Take | Op::TakeV => {
                let n = self.atom(&args[0])?.atom;
                let (fill, a) = if *op == Op::Take {
                    (self.atom(&args[1])?.atom, self.atom(&args[2])?)
                } else {
                    (default_atom(base), self.atom(&args[1])?)
                };
                let m = a.shape[0];
                let k = self.iabs(n);
                let mut out = a.shape.clone();
                out[0] = k;
                // Negative counts take from the end: skip `|n| - m` fill positions.
                let neg = match const_of(n) {
                    Some(c) => Atom::Const(Scalar::Bool(c < 0)),
                    None => self.ibin(BinOp::Lt, n, i64c(0)),
                };
                let offset = self.select(
                    neg,
                    Type::Scalar(ScalarTy::I64),
                    |t| Ok(t.ibin(BinOp::Sub, k, m)),
                    |_| Ok(i64c(0)),
                )?;
                if let (Some(known), Some(nc)) = (&a.known, const_of(n))
                    && nc >= 0
                    && nc as usize <= known.len()
                {
                    let elems = known[..nc as usize].to_vec();
                    let atom = self.bind(
                        CExp::ArrayLit { elems: elems.clone(), elem_ty: Type::Scalar(sty(base)) },
                        array_ty(&[k], base),
                        "v",
                    );
                    return Ok(CVal { atom, shape: vec![k], base, known: Some(elems) });
                }
                let atom = self.generate(&out.clone(), base, &mut |t, idx| {
                    let src = t.ibin(BinOp::Sub, idx[0], offset);
                    let lo = t.ibin(BinOp::Ge, src, i64c(0));
                    let hi = t.ibin(BinOp::Lt, src, m);
                    let ok = t.bin(BinOp::BitAnd, Base::Bool, lo, hi);
                    t.select(
                        ok,
                        Type::Scalar(sty(base)),
                        |t| {
                            let mut s = idx.to_vec();
                            s[0] = src;
                            Ok(t.read(&a, &s))
                        },
                        |_| Ok(fill),
                    )
                })?;
                Ok(CVal { atom, shape: out, base, known: None })
            }
            Op::Drop | Op::DropV => {
                let n = self.atom(&args[0])?.atom;
                let a = self.atom(&args[1])?;
                let m = a.shape[0];
                let k = self.iabs(n);
                let rest = self.ibin(BinOp::Sub, m, k);
                let len = self.imax(rest, i64c(0));
                let start = self.imax(n, i64c(0));
                if let (Some(known), Some(nc)) = (&a.known, const_of(n)) {
                    let len_c = (known.len() as i64 - nc.abs()).max(0) as usize;
                    let from = (nc.max(0) as usize).min(known.len());
                    let elems = known[from..from + len_c].to_vec();
                    let l = i64c(len_c as i64);
                    let atom = self.bind(
                        CExp::ArrayLit { elems: elems.clone(), elem_ty: Type::Scalar(sty(base)) },
                        array_ty(&[l], base),
                        "v",
                    );
                    return Ok(CVal { atom, shape: vec![l], base, known: Some(elems) });
                }
                let mut out = a.shape.clone();
                out[0] = len;
                let atom = self.generate(&out.clone(), base, &mut |t, idx| {
                    let mut s = idx.to_vec();
                    s[0] = t.ibin(BinOp::Add, idx[0], start);
                    Ok(t.read(&a, &s))
                })?;
                Ok(CVal { atom, shape: out, base, known: None })
            }
            Op::First | Op::FirstV => {
                let (default, a) = if *op == Op::First {
                    (self.atom(&args[0])?.atom, self.atom(&args[1])?)
                } else {
                    (default_atom(base), self.atom(&args[0])?)
                };
                let n = self.product(&a.shape);
                let atom = if const_of(n).is_some_and(|n| n > 0) {
                    self.read_flat(&a, i64c(0))
                } else {
                    let empty = self.ibin(BinOp::Eq, n, i64c(0));
                    self.select(
                        empty,
                        Type::Scalar(sty(base)),
                        |_| Ok(default),
                        |t| Ok(t.read_flat(&a, i64c(0))),
                    )?
                };
                Ok(Self::scalar_val(atom, base))
            }
            Op::Cat | Op::CatV | Op::VCat | Op::Cons | Op::ConsV | Op::Snoc | Op::SnocV => {
                self.catenate(*op, args, base)
            }
            Op::Index => {
                let d = match &args[0] {
                    Exp::Int(d) => {
                        usize::try_from(*d - 1).map_err(|_| "internal error: bad dimension")?
                    }
                    _ => return Err("internal error: index of a non-constant dimension".to_owned()),
                };
                let i = self.atom(&args[1])?.atom;
                let a = self.atom(&args[2])?;
                let i0 = self.ibin(BinOp::Sub, i, i64c(1));
                let mut out = a.shape.clone();
                out.remove(d);
                let atom = self.generate(&out.clone(), base, &mut |t, idx| {
                    let mut s = idx.to_vec();
                    s.insert(d, i0);
                    Ok(t.read(&a, &s))
                })?;
                Ok(CVal { atom, shape: out, base, known: None })
            }
            Op::Update => {
                let a = self.atom(&args[0])?;
                let Exp::Vector(items, _) = &args[1] else {
                    return Err("internal error: update indices".to_owned());
                };
                let mut ix = Vec::new();
                for i in items {
                    let i = self.atom(i)?.atom;
                    ix.push(self.ibin(BinOp::Sub, i, i64c(1)));
                }
                let v = self.atom(&args[2])?.atom;
                // Every index is checked against its own dimension (erratum 3.58).
                let _checked = self.read(&CVal { known: None, ..a.clone() }, &ix);
                let atom = self.generate(&a.shape.clone(), base, &mut |t, idx| {
                    let mut hit = Atom::Const(Scalar::Bool(true));
                    for (&i, &j) in idx.iter().zip(&ix) {
                        let eq = t.ibin(BinOp::Eq, i, j);
                        hit = t.bin(BinOp::BitAnd, Base::Bool, hit, eq);
                    }
                    t.select(hit, Type::Scalar(sty(base)), |_| Ok(v), |t| Ok(t.read(&a, idx)))
                })?;
                Ok(CVal { atom, shape: a.shape, base, known: None })
            }
            Op::Power => {
                let n = self.atom(&args[1])?.atom;
                let a = self.atom(&args[2])?;
                // First with the argument's sizes; if an iteration changes them, again
                // with unknown (existential) sizes read back with `Dim`.
                if let Some(done) = self.power(&args[0], n, &a, false)? {
                    return Ok(done);
                }
                Ok(self.power(&args[0], n, &a, true)?.ok_or("internal error: power")?)
            }
            Op::Print => self.atom(&args[0]),
            Op::Cond => self.cond(args, base),
            Op::Replicate | Op::Compress => self.replicate(*op, args, base),
        }
    }

    /// `power(lam, n, a)` as a loop; `None` when `dynamic` is off and an iteration
    /// changes the shape.
    fn power(&mut self, lam: &Exp, n: Atom, a: &CVal, dynamic: bool) -> R<Option<CVal>> {
        let r = a.shape.len();
        let sizes: Vec<Atom> = if dynamic {
            (0..r)
                .map(|_| {
                    Atom::Var(self.vars.alloc(CVar {
                        name: Name::new("n"),
                        ty: Type::Scalar(ScalarTy::I64),
                        kind: VarKind::Existential,
                    }))
                })
                .collect()
        } else {
            a.shape.clone()
        };
        let ty = array_ty(&sizes, a.base);
        let param = self.new_var(ty.clone(), "acc");
        let index = self.new_var(Type::Scalar(ScalarTy::I64), "k");
        let mut same_shape = true;
        let body = self.block(|t| {
            let shape = if dynamic { t.dims(Atom::Var(param), r) } else { sizes.clone() };
            let arg =
                CVal { atom: Atom::Var(param), shape: shape.clone(), base: a.base, known: None };
            let result = t.call(lam, &[arg])?;
            same_shape = result.shape == shape;
            Ok(result.atom)
        })?;
        if !dynamic && !same_shape {
            return Ok(None);
        }
        let atom = self.bind(
            CExp::Loop { param, init: a.atom, form: LoopForm::For { index, bound: n }, body },
            ty,
            "p",
        );
        let shape = if dynamic { self.dims(atom, r) } else { sizes };
        Ok(Some(CVal { atom, shape, base: a.base, known: None }))
    }

    /// `cond(b, fn => e1, fn => e2)` as an `if`; branches whose shapes differ give
    /// unknown (existential) sizes, read back with `Dim`.
    fn cond(&mut self, args: &[Exp], base: Base) -> R<CVal> {
        let c = self.atom(&args[0])?.atom;
        let mut shapes = Vec::new();
        let mut branch = |t: &mut Self, lam: &Exp| -> R<BlockId> {
            let mut shape = Vec::new();
            let block = t.block(|t| {
                let v = t.call(lam, &[])?;
                shape = v.shape;
                Ok(v.atom)
            })?;
            shapes.push(shape);
            Ok(block)
        };
        let then_branch = branch(self, &args[1])?;
        let else_branch = branch(self, &args[2])?;
        let (s1, s2) = (&shapes[0], &shapes[1]);
        let fixed =
            s1 == s2 && s1.iter().all(|a| matches!(a, Atom::Const(_)) || self.bound_outside(*a));
        let sizes: Vec<Atom> = if fixed {
            s1.clone()
        } else {
            (0..s1.len())
                .map(|_| {
                    Atom::Var(self.vars.alloc(CVar {
                        name: Name::new("n"),
                        ty: Type::Scalar(ScalarTy::I64),
                        kind: VarKind::Existential,
                    }))
                })
                .collect()
        };
        let r = sizes.len();
        let atom =
            self.bind(CExp::If { cond: c, then_branch, else_branch }, array_ty(&sizes, base), "if");
        let shape = if fixed { sizes } else { self.dims(atom, r) };
        Ok(CVal { atom, shape, base, known: None })
    }

    /// Whether a size atom is a variable bound in an enclosing (still open) block, so
    /// that a type after the current statement may name it.
    fn bound_outside(&self, a: Atom) -> bool {
        let Atom::Var(v) = a else { return true };
        self.stack.iter().flatten().any(|s| s.var == v)
    }

    /// The sizes of an array's `r` axes, read at run time.
    fn dims(&mut self, array: Atom, r: usize) -> Vec<Atom> {
        (0..r)
            .map(|k| {
                let dim = u32::try_from(k).unwrap_or(u32::MAX);
                self.bind(CExp::Dim { array, dim }, Type::Scalar(ScalarTy::I64), "d")
            })
            .collect()
    }

    /// APL's right fold `a0 f (a1 f (… f a(m-1)))`; the neutral element for m = 0.
    fn fold_right(
        &mut self,
        lam: &Exp,
        neutral: &CVal,
        row: &CVal,
        m: Atom,
        base: Base,
    ) -> R<Atom> {
        let empty = self.ibin(BinOp::Eq, m, i64c(0));
        self.select(
            empty,
            Type::Scalar(sty(base)),
            |_| Ok(neutral.atom),
            |t| {
                let last = t.ibin(BinOp::Sub, m, i64c(1));
                let init = t.read(row, &[last]);
                let param = t.new_var(Type::Scalar(sty(base)), "acc");
                let index = t.new_var(Type::Scalar(ScalarTy::I64), "j");
                let body = t.block(|t| {
                    let back = t.ibin(BinOp::Sub, m, i64c(2));
                    let k = t.ibin(BinOp::Sub, back, Atom::Var(index));
                    let x = t.read(row, &[k]);
                    let r = t.call(
                        lam,
                        &[Self::scalar_val(x, row.base), Self::scalar_val(Atom::Var(param), base)],
                    )?;
                    Ok(r.atom)
                })?;
                Ok(t.bind(
                    CExp::Loop { param, init, form: LoopForm::For { index, bound: last }, body },
                    Type::Scalar(sty(base)),
                    "fold",
                ))
            },
        )
    }

    fn catenate(&mut self, op: Op, args: &[Exp], base: Base) -> R<CVal> {
        let a = self.atom(&args[0])?;
        let b = self.atom(&args[1])?;
        // Scalars and cells of one rank less get a unit axis.
        let r = a.shape.len().max(b.shape.len());
        let axis = if op == Op::VCat { 0 } else { r - 1 };
        let lift = |v: &CVal| -> (Vec<Atom>, bool) {
            if v.shape.len() == r {
                (v.shape.clone(), false)
            } else {
                let mut s = v.shape.clone();
                s.insert(axis, i64c(1));
                (s, true)
            }
        };
        let (sa, la) = lift(&a);
        let (sb, lb) = lift(&b);
        let ma = sa[axis];
        let mb = sb[axis];
        let mut out = sa.clone();
        out[axis] = self.ibin(BinOp::Add, ma, mb);
        // The other axes must agree.
        let mut want_b = sa.clone();
        want_b[axis] = mb;
        let b = if lb { b } else { self.check_shape(&b, &want_b) };
        if let (Some(ka), Some(kb)) = (known_elems(&a, la), known_elems(&b, lb))
            && r == 1
        {
            let elems: Vec<Atom> = ka.into_iter().chain(kb).collect();
            let n = i64c(elems.len() as i64);
            let atom = self.bind(
                CExp::ArrayLit { elems: elems.clone(), elem_ty: Type::Scalar(sty(base)) },
                array_ty(&[n], base),
                "v",
            );
            return Ok(CVal { atom, shape: vec![n], base, known: Some(elems) });
        }
        let atom = self.generate(&out.clone(), base, &mut |t, idx| {
            let j = idx[axis];
            let in_a = t.ibin(BinOp::Lt, j, ma);
            t.select(
                in_a,
                Type::Scalar(sty(base)),
                |t| {
                    let mut s = idx.to_vec();
                    if la {
                        s.remove(axis);
                    }
                    Ok(t.read(&a, &s))
                },
                |t| {
                    let mut s = idx.to_vec();
                    s[axis] = t.ibin(BinOp::Sub, j, ma);
                    if lb {
                        s.remove(axis);
                    }
                    Ok(t.read(&b, &s))
                },
            )
        })?;
        Ok(CVal { atom, shape: out, base, known: None })
    }

    /// `replicate(fill, counts, A)` and `compress(flags, A)` on vectors: segment ids
    /// by a scatter of each kept element's first position and a max-scan.
    fn replicate(&mut self, op: Op, args: &[Exp], base: Base) -> R<CVal> {
        let (fill, counts, a) = if op == Op::Compress {
            (default_atom(base), self.atom(&args[0])?, self.atom(&args[1])?)
        } else {
            (self.atom(&args[0])?.atom, self.atom(&args[1])?, self.atom(&args[2])?)
        };
        let counts = self.check_shape(&counts, &a.shape);
        let n = a.shape[0];
        let cb = counts.base;
        let c = self.generate(&[n], Base::Int, &mut |t, idx| {
            let x = t.read(&counts, idx);
            Ok(if cb == Base::Bool { t.convert(Base::Bool, Base::Int, x) } else { x })
        })?;
        let c = CVal { atom: c, shape: vec![n], base: Base::Int, known: None };
        let absc = self.generate(&[n], Base::Int, &mut |t, idx| {
            let x = t.read(&c, idx);
            Ok(t.iabs(x))
        })?;
        let add = self.add_lambda(Base::Int, BinOp::Add)?;
        let incl = self.bind(
            CExp::Scan { level: None, lambda: add, neutral: i64c(0), array: absc },
            array_ty(&[n], Base::Int),
            "incl",
        );
        let add2 = self.add_lambda(Base::Int, BinOp::Add)?;
        let total = self.bind(
            CExp::Reduce { level: None, lambda: add2, neutral: i64c(0), array: absc },
            Type::Scalar(ScalarTy::I64),
            "total",
        );
        let absv = CVal { atom: absc, shape: vec![n], base: Base::Int, known: None };
        let inclv = CVal { atom: incl, shape: vec![n], base: Base::Int, known: None };
        let starts = self.generate(&[n], Base::Int, &mut |t, idx| {
            let k = t.read(&absv, idx);
            let e = t.read(&inclv, idx);
            let s = t.ibin(BinOp::Sub, e, k);
            let keep = t.ibin(BinOp::Gt, k, i64c(0));
            t.select(keep, Type::Scalar(ScalarTy::I64), |_| Ok(s), |_| Ok(i64c(-1)))
        })?;
        let ids = self.generate(&[n], Base::Int, &mut |_, idx| Ok(idx[0]))?;
        let zeros = self.bind(
            CExp::Replicate { size: total, value: i64c(0) },
            array_ty(&[total], Base::Int),
            "zeros",
        );
        let marks = self.bind(
            CExp::Scatter { dest: zeros, indices: starts, values: ids },
            array_ty(&[total], Base::Int),
            "marks",
        );
        let max = self.add_lambda(Base::Int, BinOp::Gt)?;
        let seg = self.bind(
            CExp::Scan { level: None, lambda: max, neutral: i64c(0), array: marks },
            array_ty(&[total], Base::Int),
            "seg",
        );
        let segv = CVal { atom: seg, shape: vec![total], base: Base::Int, known: None };
        let atom = self.generate(&[total], base, &mut |t, idx| {
            let k = t.read(&segv, idx);
            let ck = t.read(&c, &[k]);
            let neg = t.ibin(BinOp::Lt, ck, i64c(0));
            t.select(neg, Type::Scalar(sty(base)), |_| Ok(fill), |t| Ok(t.read(&a, &[k])))
        })?;
        Ok(CVal { atom, shape: vec![total], base, known: None })
    }

    /// `\x y -> x + y`, or `max` when `op` is `Gt`.
    fn add_lambda(&mut self, base: Base, op: BinOp) -> R<Lambda> {
        let x = self.new_var(Type::Scalar(sty(base)), "x");
        let y = self.new_var(Type::Scalar(sty(base)), "y");
        let body = self.block(|t| {
            Ok(if op == BinOp::Gt {
                t.math(MathFn::Max, base, vec![Atom::Var(x), Atom::Var(y)])
            } else {
                t.bin(op, base, Atom::Var(x), Atom::Var(y))
            })
        })?;
        Ok(Lambda { params: vec![x, y], body, ret: Type::Scalar(sty(base)) })
    }

    fn scalar_op(&mut self, s: ScalarOp, b: Base, v: &[Atom]) -> R<Atom> {
        let arg = |k: usize| {
            v.get(k).copied().ok_or_else(|| "internal error: missing operand".to_owned())
        };
        Ok(match s {
            ScalarOp::Add => self.bin(BinOp::Add, b, arg(0)?, arg(1)?),
            ScalarOp::Sub => self.bin(BinOp::Sub, b, arg(0)?, arg(1)?),
            ScalarOp::Mul => self.bin(BinOp::Mul, b, arg(0)?, arg(1)?),
            ScalarOp::Div => self.bin(BinOp::Div, b, arg(0)?, arg(1)?),
            ScalarOp::Lt => self.bin(BinOp::Lt, b, arg(0)?, arg(1)?),
            ScalarOp::Le => self.bin(BinOp::Le, b, arg(0)?, arg(1)?),
            ScalarOp::Eq => self.bin(BinOp::Eq, b, arg(0)?, arg(1)?),
            ScalarOp::Ge => self.bin(BinOp::Ge, b, arg(0)?, arg(1)?),
            ScalarOp::Gt => self.bin(BinOp::Gt, b, arg(0)?, arg(1)?),
            ScalarOp::Ne => self.bin(BinOp::Neq, b, arg(0)?, arg(1)?),
            ScalarOp::And => self.bin(BinOp::BitAnd, b, arg(0)?, arg(1)?),
            ScalarOp::Or => self.bin(BinOp::BitOr, b, arg(0)?, arg(1)?),
            ScalarOp::Nand | ScalarOp::Nor => {
                let op = if s == ScalarOp::Nand { BinOp::BitAnd } else { BinOp::BitOr };
                let x = self.bin(op, b, arg(0)?, arg(1)?);
                self.bind(
                    CExp::UnOp { op: UnOp::Not, ty: ScalarTy::Bool, operand: x },
                    Type::Scalar(ScalarTy::Bool),
                    "t",
                )
            }
            ScalarOp::Min => self.math(MathFn::Min, b, vec![arg(0)?, arg(1)?]),
            ScalarOp::Max => self.math(MathFn::Max, b, vec![arg(0)?, arg(1)?]),
            ScalarOp::Pow => self.math(MathFn::Pow, b, vec![arg(0)?, arg(1)?]),
            ScalarOp::Res => {
                // `a|b`: b modulo a with a's sign; `0|b` is b.
                let (a, x) = (arg(0)?, arg(1)?);
                let zero = if b == Base::Double { Atom::Const(Scalar::F64(0.0)) } else { i64c(0) };
                let is_zero = self.bin(BinOp::Eq, b, a, zero);
                self.select(
                    is_zero,
                    Type::Scalar(sty(b)),
                    |_| Ok(x),
                    |t| {
                        Ok(if b == Base::Double {
                            let q = t.bin(BinOp::Div, b, x, a);
                            let f = t.math(MathFn::Floor, b, vec![q]);
                            let m = t.bin(BinOp::Mul, b, a, f);
                            t.bin(BinOp::Sub, b, x, m)
                        } else {
                            let r = t.bin(BinOp::Rem, b, x, a);
                            let r = t.bin(BinOp::Add, b, r, a);
                            t.bin(BinOp::Rem, b, r, a)
                        })
                    },
                )?
            }
            ScalarOp::Neg => {
                let x = arg(0)?;
                if let Some(c) = const_of(x) {
                    return Ok(i64c(-c));
                }
                self.bind(
                    CExp::UnOp { op: UnOp::Neg, ty: sty(b), operand: x },
                    Type::Scalar(sty(b)),
                    "t",
                )
            }
            ScalarOp::Not => self.bind(
                CExp::UnOp { op: UnOp::Not, ty: ScalarTy::Bool, operand: arg(0)? },
                Type::Scalar(ScalarTy::Bool),
                "t",
            ),
            ScalarOp::Abs => self.math(MathFn::Abs, b, vec![arg(0)?]),
            ScalarOp::Sign => {
                let x = arg(0)?;
                let zero = if b == Base::Double { Atom::Const(Scalar::F64(0.0)) } else { i64c(0) };
                let pos = self.bin(BinOp::Gt, b, x, zero);
                let neg = self.bin(BinOp::Lt, b, x, zero);
                let p = self.convert(Base::Bool, Base::Int, pos);
                let n = self.convert(Base::Bool, Base::Int, neg);
                self.ibin(BinOp::Sub, p, n)
            }
            ScalarOp::Floor | ScalarOp::Ceil => {
                let f = if s == ScalarOp::Floor { MathFn::Floor } else { MathFn::Ceil };
                let x = self.math(f, Base::Double, vec![arg(0)?]);
                self.convert(Base::Double, Base::Int, x)
            }
            ScalarOp::Exp => self.math(MathFn::Exp, b, vec![arg(0)?]),
            ScalarOp::Ln => self.math(MathFn::Log, b, vec![arg(0)?]),
            ScalarOp::Sin => self.math(MathFn::Sin, b, vec![arg(0)?]),
            ScalarOp::Cos => self.math(MathFn::Cos, b, vec![arg(0)?]),
            ScalarOp::Tan => self.math(MathFn::Tan, b, vec![arg(0)?]),
            ScalarOp::Sqrt => self.math(MathFn::Sqrt, b, vec![arg(0)?]),
            ScalarOp::I2d => self.convert(Base::Int, Base::Double, arg(0)?),
            ScalarOp::B2i => self.convert(Base::Bool, Base::Int, arg(0)?),
            ScalarOp::I2b => self.ibin(BinOp::Neq, arg(0)?, i64c(0)),
        })
    }
}

fn default_atom(base: Base) -> Atom {
    match base {
        Base::Bool => Atom::Const(Scalar::Bool(false)),
        Base::Int => i64c(0),
        Base::Double => Atom::Const(Scalar::F64(0.0)),
    }
}

/// The elements of a vector known while translating (a lifted scalar is its own).
fn known_elems(v: &CVal, lifted: bool) -> Option<Vec<Atom>> {
    if lifted {
        return Some(vec![v.atom]);
    }
    v.known.clone()
}
