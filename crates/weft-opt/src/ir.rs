//! The GPU IR: host code and segmented operations (MIDDLE.md, "The GPU IR").
//!
//! A [`GpuProgram`] has one [`GpuFunction`] per core function (same [`FnId`]s, so calls
//! keep their targets). A function owns its variables (core [`Var`]s: names, types with
//! sizes) and two arenas: expressions ([`Exp`]) and blocks ([`Block`]). Blocks are
//! A-normal form like the core IR's, except that a statement may bind several variables
//! (a SegOp with several results) and a block may yield several results.
//!
//! - Host code: [`Exp::Basic`] (a core expression with no nested code: scalar
//!   operations, views, indexing, calls, `iota`, `replicate`, literals...), [`Exp::If`],
//!   [`Exp::Loop`], [`Exp::Version`], [`Exp::Manifest`] (a layout change) and
//!   [`Exp::Seg`].
//! - A [`SegOp`] runs its body once per point of its segment space, at a [`SegLevel`].
//!   The body is sequential code: basic expressions, `if`, `loop`, sequential
//!   combinators ([`Exp::Seq`]), and, in the body of a `group` SegOp only, `thread`
//!   SegOps over the group's work-items.
//!
//! Semantics of a SegOp over the space `[i_0 < n_0, ..., i_k < n_k]` whose body yields
//! one value per result:
//! - `SegMap`: each result is an array of shape `[n_0]...[n_k]` of the body's values.
//! - `SegRed`: the body's values are reduced along the innermost dimension `i_k` by the
//!   operators (each with its share of the results); each result has shape
//!   `[n_0]...[n_{k-1}]` (a scalar for a one-dimensional space).
//! - `SegScan`: as `SegRed`, but inclusive prefixes; results of shape `[n_0]...[n_k]`.
//! - `SegHist`: the body yields a bin index and a value; values with the same bin are
//!   combined by the operator into a copy of the bins of `dest`, per segment of the
//!   outer dimensions (`dest` has shape `[n_0]...[n_{k-1}][bins]`); bins out of range
//!   are ignored (Futhark's SegHist, whose destination is part of the operation).
//! - `SegScatter` (one-dimensional): the body yields an index and a value; the result
//!   is a copy of `dest` with each value written at its index (indices out of range
//!   are ignored; with duplicate indices, which write wins is unspecified), as
//!   `scatter` (Futhark expresses it as a SegMap with a write result).

use la_arena::{Arena, ArenaMap, Idx};
use weft_core::{Atom, CoreSize, FnId, Origin, Type, Var, VarId};
use weft_hir::{DefLoc, Name};

/// An expression of a GPU function.
pub type ExpId = Idx<Exp>;
/// A block of a GPU function.
pub type BlockId = Idx<Block>;
/// A named tunable threshold of a program.
pub type ThresholdId = Idx<Threshold>;

/// A whole program after the middle end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuProgram {
    /// One function per core function, under the core function's id.
    pub functions: ArenaMap<FnId, GpuFunction>,
    /// The entry points, in source order.
    pub entries: Vec<FnId>,
    /// The tunable thresholds that versions compare against.
    pub thresholds: Arena<Threshold>,
}

/// A named tunable: `weft tune` measures and records its best value; without a tuning
/// file, `default` (from the cost model's rules) is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threshold {
    /// `ENTRY.KIND_N`, unique in the program (Futhark's `main.suff_outer_par_0`).
    pub name: String,
    pub kind: ThresholdKind,
    pub default: i64,
}

/// What a threshold decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThresholdKind {
    /// Outer parallelism is enough: run the inner code sequentially per work-item.
    SuffOuterPar,
    /// The inner parallelism fits a work-group: one work-group per outer iteration.
    SuffIntraPar,
    /// The smallest count of bytes of local memory per work-group that the device does
    /// not have: a version that needs that much or more is not run (a fact of the
    /// device, not tuned).
    LocalMemoryExceeded,
}

impl ThresholdKind {
    pub fn name(self) -> &'static str {
        match self {
            ThresholdKind::SuffOuterPar => "suff_outer_par",
            ThresholdKind::SuffIntraPar => "suff_intra_par",
            ThresholdKind::LocalMemoryExceeded => "local_memory_exceeded",
        }
    }

    /// Whether `weft tune` may choose the value by measuring (a device's local memory
    /// is what it is: a larger value only lets a launch fail).
    pub fn tunable(self) -> bool {
        self != ThresholdKind::LocalMemoryExceeded
    }
}

/// A function of the GPU IR.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuFunction {
    pub name: Name,
    pub def: DefLoc,
    pub is_entry: bool,
    pub size_params: Vec<VarId>,
    pub params: Vec<VarId>,
    pub ret: Type,
    pub body: BlockId,
    pub vars: Arena<Var>,
    pub exps: Arena<Exp>,
    pub blocks: Arena<Block>,
    pub origins: ArenaMap<ExpId, Origin>,
}

/// A block: statements, then the values it yields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub results: Vec<Atom>,
}

/// `let (vars) = exp`: one variable for most expressions, one per result for a SegOp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    pub vars: Vec<VarId>,
    pub exp: ExpId,
}

/// A function argument of a sequential combinator or a SegOp operator.
#[derive(Debug, Clone, PartialEq)]
pub struct Lambda {
    pub params: Vec<VarId>,
    pub body: BlockId,
}

/// The loop form.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopForm {
    For {
        index: VarId,
        bound: Atom,
    },
    /// The block reads the loop parameter and yields a `bool`.
    While {
        cond: BlockId,
    },
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Exp {
    /// A core expression with no nested code (never `if`, `loop` or a combinator).
    Basic(weft_core::Exp),
    If {
        cond: Atom,
        then_branch: BlockId,
        else_branch: BlockId,
    },
    Loop {
        param: VarId,
        init: Atom,
        form: LoopForm,
        body: BlockId,
    },
    /// A combinator run as a loop by one work-item (only inside a SegOp body).
    Seq(SeqSoac),
    Seg(SegOp),
    /// A copy of a two-dimensional array stored transposed: the value (every element at
    /// its index) is the array's, but the memory holds column after column, so that
    /// work-items reading one row each, element by element, read neighbouring addresses
    /// (Futhark's `manifest (1, 0)`, made by `passes/coalesce.rs`). Host level only.
    Manifest {
        array: Atom,
    },
    /// `if size >= threshold then then_branch else else_branch`: versions of one
    /// computation (incremental flattening), chosen at run time.
    Version {
        size: CoreSize,
        threshold: ThresholdId,
        then_branch: BlockId,
        else_branch: BlockId,
    },
}

/// A sequential combinator (`Hist` is `reduce_by_index dest op neutral indices values`).
#[derive(Debug, Clone, PartialEq)]
pub enum SeqSoac {
    Map { lambda: Lambda, arrays: Vec<Atom> },
    Reduce { lambda: Lambda, neutral: Atom, array: Atom },
    Scan { lambda: Lambda, neutral: Atom, array: Atom },
    Generate { size: Atom, lambda: Lambda },
    Hist { dest: Atom, lambda: Lambda, neutral: Atom, indices: Atom, values: Atom },
}

/// Where a SegOp runs (FCL's levels, LANGUAGE.md section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegLevel {
    /// One point of the space per work-item of the whole NDRange.
    Grid,
    /// One point per work-group; the body may hold `thread` SegOps.
    Group,
    /// One point per work-item of the enclosing group.
    Thread,
}

impl SegLevel {
    pub fn name(self) -> &'static str {
        match self {
            SegLevel::Grid => "grid",
            SegLevel::Group => "group",
            SegLevel::Thread => "thread",
        }
    }
}

/// A segmented operation.
#[derive(Debug, Clone, PartialEq)]
pub struct SegOp {
    pub level: SegLevel,
    /// The program wrote the level (seed 003: kept exactly); otherwise the compiler
    /// chose it.
    pub pinned: bool,
    /// The space, outermost first: each point binds the index variables.
    pub space: Vec<(VarId, Atom)>,
    pub kind: SegKind,
    /// Run per point; yields one value per result (for `SegHist`, the bin then the
    /// value, per operator).
    pub body: BlockId,
    /// The source expressions this SegOp computes (fused producers included).
    pub origins: Vec<Origin>,
}

/// What a SegOp computes.
#[derive(Debug, Clone, PartialEq)]
pub enum SegKind {
    Map,
    Red(Vec<SegBinOp>),
    Scan(Vec<SegBinOp>),
    Hist { dest: Atom, op: SegBinOp },
    Scatter { dest: Atom },
}

/// An associative operator with its neutral elements, over `n` values: the lambda has
/// `2n` parameters (accumulators, then the new values) and yields `n` values.
#[derive(Debug, Clone, PartialEq)]
pub struct SegBinOp {
    pub lambda: Lambda,
    pub neutral: Vec<Atom>,
    pub commutative: bool,
}

impl SegBinOp {
    /// How many values the operator combines.
    pub fn arity(&self) -> usize {
        self.neutral.len()
    }

    /// The built-in commutative operator of `\a b -> a op b` (or `b op a`), the lambda's
    /// one statement (`weft_core::operator_of`).
    pub fn scalar_operator(&self, f: &GpuFunction) -> Option<weft_core::CommutativeOp> {
        let [p, q] = self.lambda.params.as_slice() else { return None };
        let block = &f.blocks[self.lambda.body];
        let [stmt] = block.stmts.as_slice() else { return None };
        if block.results != [Atom::Var(*stmt.vars.first()?)] {
            return None;
        }
        match &f.exps[stmt.exp] {
            Exp::Basic(exp) => weft_core::operator_of(exp, *p, *q),
            _ => None,
        }
    }
}

impl Exp {
    /// This expression's own operands (not those of nested blocks): a version's size
    /// variables, a SegOp's bounds and neutral elements included.
    pub fn operands(&self) -> Vec<Atom> {
        let mut copy = self.clone();
        let mut out = Vec::new();
        copy.operands_mut(&mut |a| out.push(*a));
        if let Exp::Version { size, .. } | Exp::Basic(weft_core::Exp::Size(size)) = self {
            out.extend(size.vars().into_iter().map(Atom::Var));
        }
        out
    }

    /// Visits this expression's own operands mutably (sizes excepted: substitute those
    /// with [`CoreSize::substitute`]).
    pub fn operands_mut(&mut self, f: &mut dyn FnMut(&mut Atom)) {
        let ops = |kind: &mut SegKind, f: &mut dyn FnMut(&mut Atom)| match kind {
            SegKind::Map => {}
            SegKind::Red(ops) | SegKind::Scan(ops) => {
                ops.iter_mut().flat_map(|op| op.neutral.iter_mut()).for_each(&mut *f)
            }
            SegKind::Hist { dest, op } => {
                f(dest);
                op.neutral.iter_mut().for_each(f);
            }
            SegKind::Scatter { dest } => f(dest),
        };
        match self {
            Exp::Basic(exp) => exp.operands_mut(f),
            Exp::Manifest { array } => f(array),
            Exp::If { cond, .. } => f(cond),
            Exp::Version { .. } => {}
            Exp::Loop { init, form, .. } => {
                f(init);
                if let LoopForm::For { bound, .. } = form {
                    f(bound);
                }
            }
            Exp::Seq(soac) => match soac {
                SeqSoac::Map { arrays, .. } => arrays.iter_mut().for_each(f),
                SeqSoac::Generate { size, .. } => f(size),
                SeqSoac::Reduce { neutral, array, .. } | SeqSoac::Scan { neutral, array, .. } => {
                    f(neutral);
                    f(array);
                }
                SeqSoac::Hist { dest, neutral, indices, values, .. } => {
                    f(dest);
                    f(neutral);
                    f(indices);
                    f(values);
                }
            },
            Exp::Seg(seg) => {
                seg.space.iter_mut().for_each(|(_, bound)| f(bound));
                ops(&mut seg.kind, f);
            }
        }
    }

    /// The blocks nested in this expression: branches, loop blocks, lambda bodies
    /// (operators included) and SegOp bodies.
    pub fn nested_blocks(&self) -> Vec<BlockId> {
        match self {
            Exp::Basic(_) | Exp::Manifest { .. } => Vec::new(),
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => vec![*then_branch, *else_branch],
            Exp::Loop { form: LoopForm::While { cond }, body, .. } => vec![*cond, *body],
            Exp::Loop { body, .. } => vec![*body],
            Exp::Seq(soac) => match soac {
                SeqSoac::Map { lambda, .. }
                | SeqSoac::Generate { lambda, .. }
                | SeqSoac::Reduce { lambda, .. }
                | SeqSoac::Scan { lambda, .. }
                | SeqSoac::Hist { lambda, .. } => vec![lambda.body],
            },
            Exp::Seg(seg) => {
                let mut out: Vec<BlockId> = match &seg.kind {
                    SegKind::Map | SegKind::Scatter { .. } => Vec::new(),
                    SegKind::Red(ops) | SegKind::Scan(ops) => {
                        ops.iter().map(|op| op.lambda.body).collect()
                    }
                    SegKind::Hist { op, .. } => vec![op.lambda.body],
                };
                out.push(seg.body);
                out
            }
        }
    }
}
