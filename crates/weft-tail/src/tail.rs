//! The TAIL IR: let-bound, typed, with fully applied operators and typed lambdas,
//! and its printer (`weft dump --ir tail`).

use std::fmt::Write as _;

use crate::ty::{Base, Ty};

/// A TAIL variable, printed `v{n}`.
pub type Var = u32;

/// A scalar operator; the printed name has a base suffix (`addi`, `addd`, `andb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarOp {
    Add,
    Sub,
    Mul,
    Div,
    /// APL residue `a|b`: `b` modulo `a`, with the sign of `a`; `0|b` is `b`.
    Res,
    Min,
    Max,
    Pow,
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
    Ne,
    And,
    Or,
    Nand,
    Nor,
    Neg,
    Not,
    Abs,
    Sign,
    /// `⌊`: double to int.
    Floor,
    /// `⌈`: double to int.
    Ceil,
    Exp,
    Ln,
    Sin,
    Cos,
    Tan,
    Sqrt,
    I2d,
    B2i,
    /// int to bool (`x ≠ 0`), for `∧ ∨ ~` on 0/1 integers.
    I2b,
}

impl ScalarOp {
    pub fn name(self) -> &'static str {
        match self {
            ScalarOp::Add => "add",
            ScalarOp::Sub => "sub",
            ScalarOp::Mul => "mul",
            ScalarOp::Div => "div",
            ScalarOp::Res => "res",
            ScalarOp::Min => "min",
            ScalarOp::Max => "max",
            ScalarOp::Pow => "pow",
            ScalarOp::Lt => "lt",
            ScalarOp::Le => "lte",
            ScalarOp::Eq => "eq",
            ScalarOp::Ge => "gte",
            ScalarOp::Gt => "gt",
            ScalarOp::Ne => "neq",
            ScalarOp::And => "and",
            ScalarOp::Or => "or",
            ScalarOp::Nand => "nand",
            ScalarOp::Nor => "nor",
            ScalarOp::Neg => "neg",
            ScalarOp::Not => "not",
            ScalarOp::Abs => "abs",
            ScalarOp::Sign => "sign",
            ScalarOp::Floor => "floor",
            ScalarOp::Ceil => "ceil",
            ScalarOp::Exp => "exp",
            ScalarOp::Ln => "ln",
            ScalarOp::Sin => "sin",
            ScalarOp::Cos => "cos",
            ScalarOp::Tan => "tan",
            ScalarOp::Sqrt => "sqrt",
            ScalarOp::I2d => "i2d",
            ScalarOp::B2i => "b2i",
            ScalarOp::I2b => "i2b",
        }
    }
}

/// An operator of TAIL (Fig 3.2–3.4). The `…V` forms are the shape-vector variants
/// chosen when the argument types are vectors of known length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// A scalar operator at a base type (the operands' type).
    Scalar(ScalarOp, Base),
    Iota,
    IotaV,
    Each,
    ZipWith,
    /// `reduce(f, neutral, A)` along the last axis. `assoc`: f is an associative
    /// primitive whose identity is `neutral` (a parallel reduction); otherwise a right
    /// fold from the last element, `neutral` only for an empty axis.
    Reduce {
        assoc: bool,
    },
    /// Inclusive scan along the last axis, of an associative primitive.
    Scan,
    Compress,
    Replicate,
    Shape,
    ShapeV,
    /// `reshape(shape, fill, A)`.
    Reshape,
    Reverse,
    VReverse,
    Rotate,
    RotateV,
    VRotate,
    Transp,
    Transp2,
    /// `take(n, fill, A)` on the first axis.
    Take,
    TakeV,
    Drop,
    DropV,
    /// `first(default, A)`.
    First,
    FirstV,
    /// Along the last axis.
    Cat,
    CatV,
    /// Along the first axis (`⍪`).
    VCat,
    Cons,
    ConsV,
    Snoc,
    SnocV,
    /// `index(d, i, A)`: 1-based dimension and position.
    Index,
    /// `update(A, ixs, v)`: the array with one element replaced (1-based indices,
    /// checked per dimension); a value, not a store effect (see docs/apl.md).
    Update,
    /// `power(f, n, A)`.
    Power,
    /// `prArr(A)`: `⎕ ← A`, the value itself.
    Print,
    /// `cond(b, fn => e1, fn => e2)`: a dfn guard decided at run time (TAIL itself
    /// has no conditional; apltail has a scalar `condScl`).
    Cond,
}

impl Op {
    pub fn name(self) -> String {
        let s = match self {
            Op::Scalar(op, base) => {
                return match op {
                    ScalarOp::I2d | ScalarOp::B2i | ScalarOp::I2b => op.name().to_owned(),
                    _ => format!("{}{}", op.name(), &base.name()[..1]),
                };
            }
            Op::Iota => "iota",
            Op::IotaV => "iotaV",
            Op::Each => "each",
            Op::ZipWith => "zipWith",
            Op::Reduce { .. } => "reduce",
            Op::Scan => "scan",
            Op::Compress => "compress",
            Op::Replicate => "replicate",
            Op::Shape => "shape",
            Op::ShapeV => "shapeV",
            Op::Reshape => "reshape",
            Op::Reverse => "reverse",
            Op::VReverse => "vreverse",
            Op::Rotate => "rotate",
            Op::RotateV => "rotateV",
            Op::VRotate => "vrotate",
            Op::Transp => "transp",
            Op::Transp2 => "transp2",
            Op::Take => "take",
            Op::TakeV => "takeV",
            Op::Drop => "drop",
            Op::DropV => "dropV",
            Op::First => "first",
            Op::FirstV => "firstV",
            Op::Cat => "cat",
            Op::CatV => "catV",
            Op::VCat => "vcat",
            Op::Cons => "cons",
            Op::ConsV => "consV",
            Op::Snoc => "snoc",
            Op::SnocV => "snocV",
            Op::Index => "index",
            Op::Update => "update",
            Op::Power => "power",
            Op::Print => "prArr",
            Op::Cond => "cond",
        };
        s.to_owned()
    }
}

/// An expression. Operator arguments are atoms (variables, literals) or lambdas.
#[derive(Debug, Clone, PartialEq)]
pub enum Exp {
    Var(Var),
    Int(i64),
    Double(f64),
    Bool(bool),
    /// `[e0, …]`, a vector literal of atoms.
    Vector(Vec<Exp>, Base),
    Op(Op, Vec<Exp>),
    /// `fn x:τ y:τ' => body`.
    Lam(Vec<(Var, Ty)>, Box<Body>),
}

/// A sequence of `let`s and a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub lets: Vec<Let>,
    pub result: Exp,
    pub ty: Ty,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Let {
    pub var: Var,
    pub ty: Ty,
    pub exp: Exp,
}

/// A TAIL program: its body and the variables printed with `⎕ ←`, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub body: Body,
    pub prints: Vec<Var>,
    /// The APL name first assigned each variable (`A ← …`), for the core IR's names
    /// and so for run-time error messages.
    pub names: Vec<(Var, String)>,
}

/// Prints a program in TAIL's concrete syntax.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    print_body(&p.body, 0, &mut out);
    out.push('\n');
    out
}

fn print_body(b: &Body, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for l in &b.lets {
        let _ = write!(out, "{pad}let v{}:{} = ", l.var, l.ty);
        print_exp(&l.exp, indent, out);
        out.push_str(" in\n");
    }
    out.push_str(&pad);
    print_exp(&b.result, indent, out);
}

pub(crate) fn print_exp(e: &Exp, indent: usize, out: &mut String) {
    match e {
        Exp::Var(v) => {
            let _ = write!(out, "v{v}");
        }
        Exp::Int(i) => out.push_str(&int_text(*i)),
        Exp::Double(d) => out.push_str(&double_text(*d)),
        Exp::Bool(b) => out.push_str(if *b { "tt" } else { "ff" }),
        Exp::Vector(items, _) => {
            out.push('[');
            for (k, i) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                print_exp(i, indent, out);
            }
            out.push(']');
        }
        Exp::Op(op, args) => {
            out.push_str(&op.name());
            out.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                print_exp(a, indent, out);
            }
            out.push(')');
        }
        Exp::Lam(params, body) => {
            out.push_str("fn ");
            for (v, t) in params {
                let _ = write!(out, "v{v}:{t} ");
            }
            out.push_str("=>");
            if body.lets.is_empty() {
                out.push(' ');
                print_exp(&body.result, indent, out);
            } else {
                out.push('\n');
                print_body(body, indent + 2, out);
            }
        }
    }
}

fn int_text(i: i64) -> String {
    if i < 0 { format!("~{}", i.unsigned_abs()) } else { i.to_string() }
}

fn double_text(d: f64) -> String {
    let s = if d.is_finite() && d == d.trunc() && d.abs() < 1e15 {
        format!("{d:.1}")
    } else {
        format!("{d}")
    };
    s.replace('-', "~")
}
