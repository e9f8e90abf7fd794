//! The static work of the GPU IR at given input sizes: how many statements the
//! compiled code executes, counting each statement once per point of every SegOp
//! space and iteration of every loop around it (both branches of an `if` and both
//! versions of a `version` count, so it bounds the work from above with the same
//! degree). It is computed from the code alone, with only the sizes (and `i64` inputs)
//! known: no value is computed.
//!
//! Used by the test that checks the middle end's promise (MIDDLE.md, pass 1): the
//! compiled code's work grows with the input sizes at the same polynomial degree as
//! the reference interpreter's counted work, so no hidden quadratic recomputation
//! survives.

use rustc_hash::FxHashMap;
use weft_core::{Atom, BinOp, CoreSize, FnId, Type, VarId};
use weft_values::{Scalar, Value};

use crate::ir::{BlockId, Exp, GpuFunction, GpuProgram, LoopForm, SegKind, SeqSoac};

/// The static work of `entry` on inputs of the shapes (and `i64` values) of `inputs`.
pub fn static_work(program: &GpuProgram, entry: FnId, inputs: &[Value]) -> f64 {
    let f = &program.functions[entry];
    let mut known = Known { f, ints: FxHashMap::default() };
    let mut inputs = inputs.iter();
    for &param in &f.params {
        bind_input(&mut known, &f.vars[param].ty, Some(param), &mut inputs);
    }
    let mut counter = Counter { program, known };
    counter.block(f.body)
}

/// Binds the sizes in `ty` (and the parameter itself when it is an `i64`) from the
/// next input values.
fn bind_input<'v>(
    known: &mut Known<'_>,
    ty: &Type,
    param: Option<VarId>,
    inputs: &mut impl Iterator<Item = &'v Value>,
) {
    match ty {
        Type::Tuple(elems) => {
            for elem in elems {
                bind_input(known, elem, None, inputs);
            }
        }
        _ => {
            let Some(value) = inputs.next() else { return };
            if let (Some(param), Some(Scalar::I64(n))) = (param, value.as_scalar()) {
                known.ints.insert(param, n);
            }
            let mut ty = ty;
            for &extent in value.shape() {
                let Type::Array { size, elem } = ty else { break };
                if let Some(&v) = size.as_var() {
                    known.ints.entry(v).or_insert(extent as i64);
                }
                ty = elem;
            }
        }
    }
}

/// The `i64` variables whose values follow from the sizes.
struct Known<'a> {
    f: &'a GpuFunction,
    ints: FxHashMap<VarId, i64>,
}

impl Known<'_> {
    fn size(&self, size: &CoreSize) -> Option<i64> {
        size.eval(&mut |v| self.ints.get(v).copied()).ok()
    }

    fn atom(&self, a: Atom) -> Option<i64> {
        match a {
            Atom::Const(Scalar::I64(n)) => Some(n),
            Atom::Const(_) => None,
            Atom::Var(v) => self.ints.get(&v).copied(),
        }
    }

    /// Learns the value of an `i64` statement computed from known sizes.
    fn learn(&mut self, var: VarId, exp: &weft_core::Exp) {
        let value = match exp {
            weft_core::Exp::Size(size) => self.size(size),
            weft_core::Exp::Atom(a) => self.atom(*a),
            weft_core::Exp::Dim { array: Atom::Var(a), dim } => {
                let mut ty = &self.f.vars[*a].ty;
                for _ in 0..*dim {
                    ty = ty.elem().unwrap_or(ty);
                }
                ty.outer_size().and_then(|s| self.size(s))
            }
            weft_core::Exp::Math { ty: weft_hir::ScalarTy::I64, func, args } if args.len() == 2 => {
                match (self.atom(args[0]), self.atom(args[1]), func) {
                    (Some(a), Some(b), weft_hir::MathFn::Min) => Some(a.min(b)),
                    (Some(a), Some(b), weft_hir::MathFn::Max) => Some(a.max(b)),
                    _ => None,
                }
            }
            weft_core::Exp::BinOp { op, ty: weft_hir::ScalarTy::I64, lhs, rhs } => {
                match (self.atom(*lhs), self.atom(*rhs)) {
                    (Some(a), Some(b)) => match op {
                        BinOp::Add => a.checked_add(b),
                        BinOp::Sub => a.checked_sub(b),
                        BinOp::Mul => a.checked_mul(b),
                        BinOp::Div if b != 0 => Some(a.div_euclid(b)),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(value) = value {
            self.ints.insert(var, value);
        }
    }

    /// The outer size of an array operand, when known (else 1: an unknown size counts
    /// as a constant).
    fn outer(&self, array: Atom) -> f64 {
        match array {
            Atom::Var(v) => self.f.vars[v]
                .ty
                .outer_size()
                .and_then(|s| self.size(s))
                .map_or(1.0, |n| n.max(0) as f64),
            Atom::Const(_) => 1.0,
        }
    }

    /// How many scalars a value of this type holds (unknown sizes count as 1).
    fn scalars_in(&self, ty: &Type) -> f64 {
        match ty {
            Type::Scalar(_) => 1.0,
            Type::Array { size, elem } => {
                self.size(size).map_or(1.0, |n| n.max(0) as f64) * self.scalars_in(elem)
            }
            Type::Tuple(elems) => elems.iter().map(|e| self.scalars_in(e)).sum(),
        }
    }

    fn scalars_of(&self, a: Atom) -> f64 {
        match a {
            Atom::Var(v) => self.scalars_in(&self.f.vars[v].ty),
            Atom::Const(_) => 1.0,
        }
    }

    fn count(&self, a: Atom) -> f64 {
        self.atom(a).map_or(1.0, |n| n.max(0) as f64)
    }
}

struct Counter<'a> {
    program: &'a GpuProgram,
    known: Known<'a>,
}

impl Counter<'_> {
    fn block(&mut self, block: BlockId) -> f64 {
        let f = self.known.f;
        let mut work = 0.0;
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            work += 1.0 + self.exp(exp);
            if let (Exp::Basic(basic), [var]) = (exp, stmt.vars.as_slice()) {
                self.known.learn(*var, basic);
            }
        }
        work
    }

    fn lambda_work(&mut self, body: BlockId) -> f64 {
        self.block(body)
    }

    /// The work of an expression beyond its own statement.
    fn exp(&mut self, exp: &Exp) -> f64 {
        match exp {
            Exp::Basic(basic) => match basic {
                // Making an array writes each element.
                weft_core::Exp::Iota { size } => self.known.count(*size),
                weft_core::Exp::Replicate { size, value } => {
                    self.known.count(*size) * self.known.scalars_of(*value)
                }
                weft_core::Exp::Concat(a, b) => {
                    self.known.scalars_of(*a) + self.known.scalars_of(*b)
                }
                weft_core::Exp::ArrayLit { elems, elem_ty } => {
                    elems.len() as f64 * self.known.scalars_in(elem_ty)
                }
                weft_core::Exp::Call { func, .. } => {
                    // Calls left after inlining have no combinators; their loops are
                    // counted with unknown bounds as one iteration.
                    match self.program.functions.get(*func) {
                        Some(callee) => {
                            let mut inner = Counter {
                                program: self.program,
                                known: Known { f: callee, ints: FxHashMap::default() },
                            };
                            inner.block(callee.body)
                        }
                        None => 0.0,
                    }
                }
                _ => 0.0,
            },
            // A copy writes each element.
            Exp::Manifest { array } => self.known.scalars_of(*array),
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                self.block(*then_branch) + self.block(*else_branch)
            }
            Exp::Loop { form, body, .. } => {
                let iterations = match form {
                    LoopForm::For { bound, .. } => self.known.count(*bound),
                    LoopForm::While { cond } => {
                        // Unknown trip count: one iteration (data-dependent loops are
                        // outside the degree check).
                        return self.block(*cond) + self.block(*body);
                    }
                };
                iterations * self.block(*body)
            }
            Exp::Seq(soac) => match soac {
                SeqSoac::Map { lambda, arrays } => {
                    self.known.outer(arrays[0]) * self.lambda_work(lambda.body)
                }
                SeqSoac::Generate { size, lambda } => {
                    self.known.count(*size) * self.lambda_work(lambda.body)
                }
                SeqSoac::Reduce { lambda, array, .. }
                | SeqSoac::Scan { lambda, array, .. }
                | SeqSoac::Hist { lambda, values: array, .. } => {
                    self.known.outer(*array) * self.lambda_work(lambda.body)
                }
            },
            Exp::Seg(seg) => {
                let points: f64 =
                    seg.space.iter().map(|&(_, bound)| self.known.count(bound)).product();
                let operators: f64 = match &seg.kind {
                    SegKind::Map | SegKind::Scatter { .. } => 0.0,
                    SegKind::Red(ops) | SegKind::Scan(ops) => {
                        ops.iter().map(|op| self.lambda_work(op.lambda.body)).sum()
                    }
                    SegKind::Hist { op, .. } => self.lambda_work(op.lambda.body),
                };
                points * (self.block(seg.body) + operators)
            }
        }
    }
}
