//! The imperative IR (DPIA's, seed 003): kernels as commands over scalar expressions,
//! with parallel loops per level, allocations in an address space, barriers, and
//! checked failures. `weft dump --ir imperative` prints it; `weft-opencl` prints it as
//! OpenCL C.
//!
//! Expressions are built through smart constructors that fold constants and drop
//! neutral operands (`i*1 + 0` is `i`): that is the index simplification.

use std::fmt::{self, Write};
use std::rc::Rc;

use weft_plan::{Elem, ParamKind};

/// Who shares an array allocated inside a kernel. The address space is not decided
/// here: address-space inference (`weft-aspace`, via `crate::aspace`) turns a
/// work-group allocation into a `local` label and a work-item one into `private`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sharing {
    /// Every work-item of the work-group reads and writes it.
    WorkGroup,
    /// One work-item's own array.
    WorkItem,
}

/// A C operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum COp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl COp {
    pub fn symbol(self) -> &'static str {
        match self {
            COp::Add => "+",
            COp::Sub => "-",
            COp::Mul => "*",
            COp::Div => "/",
            COp::Rem => "%",
            COp::Eq => "==",
            COp::Ne => "!=",
            COp::Lt => "<",
            COp::Le => "<=",
            COp::Gt => ">",
            COp::Ge => ">=",
            COp::And => "&&",
            COp::Or => "||",
            COp::BitAnd => "&",
            COp::BitOr => "|",
            COp::BitXor => "^",
            COp::Shl => "<<",
            COp::Shr => ">>",
        }
    }

    fn precedence(self) -> u8 {
        match self {
            COp::Mul | COp::Div | COp::Rem => 10,
            COp::Add | COp::Sub => 9,
            COp::Shl | COp::Shr => 8,
            COp::Lt | COp::Le | COp::Gt | COp::Ge => 7,
            COp::Eq | COp::Ne => 6,
            COp::BitAnd => 5,
            COp::BitXor => 4,
            COp::BitOr => 3,
            COp::And => 2,
            COp::Or => 1,
        }
    }
}

/// A scalar expression. Cheap to clone (shared subtrees).
#[derive(Debug, Clone, PartialEq)]
pub enum CExpr {
    /// A variable or parameter.
    Var(Rc<str>),
    /// A `long` constant.
    Int(i64),
    /// A literal of another type, already in C syntax (`1.5f`, `true`).
    Lit(Rc<str>),
    Bin(COp, Rc<CExpr>, Rc<CExpr>),
    Not(Rc<CExpr>),
    Neg(Rc<CExpr>),
    /// A call of a built-in or runtime helper function.
    Call(Rc<str>, Vec<CExpr>),
    /// A call of a function generated from a user def ([`FuncImp`], by index); `site`
    /// numbers the call sites of one entry, so address-space specialisation can say
    /// which clone each site calls. Pointer arguments are `Var`s naming pointers.
    Invoke {
        func: u32,
        name: Rc<str>,
        site: u32,
        args: Vec<CExpr>,
    },
    /// `ptr[index]`.
    Load(Rc<str>, Rc<CExpr>),
    Select(Rc<CExpr>, Rc<CExpr>, Rc<CExpr>),
    Cast(Elem, Rc<CExpr>),
}

#[expect(
    clippy::should_implement_trait,
    reason = "smart constructors that fold constants, not arithmetic on values"
)]
impl CExpr {
    pub fn var(name: &str) -> CExpr {
        CExpr::Var(Rc::from(name))
    }

    pub fn lit(text: &str) -> CExpr {
        CExpr::Lit(Rc::from(text))
    }

    pub fn call(name: &str, args: Vec<CExpr>) -> CExpr {
        CExpr::Call(Rc::from(name), args)
    }

    pub fn load(ptr: &str, index: CExpr) -> CExpr {
        CExpr::Load(Rc::from(ptr), Rc::new(index))
    }

    /// `(long)name(dim)`: a work-item function (`get_global_id`, `get_local_id`, ...).
    pub fn work_item(name: &str, dim: i64) -> CExpr {
        CExpr::cast(Elem::I64, CExpr::call(name, vec![CExpr::Int(dim)]))
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            CExpr::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// `a op b` with constant folding of `long` arithmetic and neutral elements.
    pub fn bin(op: COp, a: CExpr, b: CExpr) -> CExpr {
        match (op, a.as_int(), b.as_int()) {
            (COp::Add, Some(x), Some(y)) => return CExpr::Int(x.wrapping_add(y)),
            (COp::Sub, Some(x), Some(y)) => return CExpr::Int(x.wrapping_sub(y)),
            (COp::Mul, Some(x), Some(y)) => return CExpr::Int(x.wrapping_mul(y)),
            (COp::Div, Some(x), Some(y)) if y != 0 => return CExpr::Int(x.wrapping_div(y)),
            (COp::Rem, Some(x), Some(y)) if y != 0 => return CExpr::Int(x.wrapping_rem(y)),
            (COp::Lt, Some(x), Some(y)) => return CExpr::Int(i64::from(x < y)),
            (COp::Le, Some(x), Some(y)) => return CExpr::Int(i64::from(x <= y)),
            (COp::Gt, Some(x), Some(y)) => return CExpr::Int(i64::from(x > y)),
            (COp::Ge, Some(x), Some(y)) => return CExpr::Int(i64::from(x >= y)),
            (COp::Eq, Some(x), Some(y)) => return CExpr::Int(i64::from(x == y)),
            (COp::Ne, Some(x), Some(y)) => return CExpr::Int(i64::from(x != y)),
            (COp::Add, Some(0), _) => return b,
            (COp::Add | COp::Sub, _, Some(0)) => return a,
            (COp::Mul, Some(1), _) => return b,
            (COp::Mul | COp::Div, _, Some(1)) => return a,
            (COp::Mul, Some(0), _) | (COp::Mul, _, Some(0)) => return CExpr::Int(0),
            (COp::Add, _, Some(y)) if y < 0 => {
                return CExpr::Bin(COp::Sub, Rc::new(a), Rc::new(CExpr::Int(-y)));
            }
            (COp::Mul, _, Some(-1)) => return CExpr::neg(a),
            _ => {}
        }
        if op == COp::Sub && a == b {
            return CExpr::Int(0);
        }
        // Conditions with a constant side (no "logical operator with constant operand"
        // warnings from the OpenCL compiler, and shorter code).
        match (op, a.as_int(), b.as_int()) {
            (COp::And, Some(x), _) => return if x != 0 { b } else { CExpr::Int(0) },
            (COp::And, _, Some(y)) => return if y != 0 { a } else { CExpr::Int(0) },
            (COp::Or, Some(x), _) => return if x != 0 { CExpr::Int(1) } else { b },
            (COp::Or, _, Some(y)) => return if y != 0 { CExpr::Int(1) } else { a },
            _ => {}
        }
        CExpr::Bin(op, Rc::new(a), Rc::new(b))
    }

    pub fn add(a: CExpr, b: CExpr) -> CExpr {
        CExpr::bin(COp::Add, a, b)
    }

    pub fn sub(a: CExpr, b: CExpr) -> CExpr {
        CExpr::bin(COp::Sub, a, b)
    }

    pub fn mul(a: CExpr, b: CExpr) -> CExpr {
        CExpr::bin(COp::Mul, a, b)
    }

    pub fn neg(a: CExpr) -> CExpr {
        match a {
            CExpr::Int(v) => CExpr::Int(v.wrapping_neg()),
            CExpr::Neg(inner) => (*inner).clone(),
            other => CExpr::Neg(Rc::new(other)),
        }
    }

    pub fn not(a: CExpr) -> CExpr {
        match a.as_int() {
            Some(v) => CExpr::Int(i64::from(v == 0)),
            None => CExpr::Not(Rc::new(a)),
        }
    }

    pub fn select(c: CExpr, a: CExpr, b: CExpr) -> CExpr {
        if a == b {
            return a;
        }
        if let Some(c) = c.as_int() {
            return if c != 0 { a } else { b };
        }
        CExpr::Select(Rc::new(c), Rc::new(a), Rc::new(b))
    }

    pub fn cast(elem: Elem, a: CExpr) -> CExpr {
        CExpr::Cast(elem, Rc::new(a))
    }

    /// Rewrites every call of a generated function with `f(site, name, args)` (args
    /// already rewritten); shares unchanged subtrees.
    pub fn map_invokes(&self, f: &dyn Fn(u32, &str, Vec<CExpr>) -> CExpr) -> CExpr {
        let go = |e: &Rc<CExpr>| Rc::new(e.map_invokes(f));
        match self {
            CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_) => self.clone(),
            CExpr::Bin(op, a, b) => CExpr::Bin(*op, go(a), go(b)),
            CExpr::Not(a) => CExpr::Not(go(a)),
            CExpr::Neg(a) => CExpr::Neg(go(a)),
            CExpr::Cast(elem, a) => CExpr::Cast(*elem, go(a)),
            CExpr::Call(name, args) => {
                CExpr::Call(name.clone(), args.iter().map(|a| a.map_invokes(f)).collect())
            }
            CExpr::Invoke { name, site, args, .. } => {
                f(*site, name, args.iter().map(|a| a.map_invokes(f)).collect())
            }
            CExpr::Load(ptr, index) => CExpr::Load(ptr.clone(), go(index)),
            CExpr::Select(c, a, b) => CExpr::Select(go(c), go(a), go(b)),
        }
    }

    /// Rewrites every load with `f(ptr, index)` (index already rewritten).
    pub fn map_loads(&self, f: &dyn Fn(&str, CExpr) -> CExpr) -> CExpr {
        let go = |e: &Rc<CExpr>| Rc::new(e.map_loads(f));
        match self {
            CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_) => self.clone(),
            CExpr::Bin(op, a, b) => CExpr::Bin(*op, go(a), go(b)),
            CExpr::Not(a) => CExpr::Not(go(a)),
            CExpr::Neg(a) => CExpr::Neg(go(a)),
            CExpr::Cast(elem, a) => CExpr::Cast(*elem, go(a)),
            CExpr::Call(name, args) => {
                CExpr::Call(name.clone(), args.iter().map(|a| a.map_loads(f)).collect())
            }
            CExpr::Invoke { func, name, site, args } => CExpr::Invoke {
                func: *func,
                name: name.clone(),
                site: *site,
                args: args.iter().map(|a| a.map_loads(f)).collect(),
            },
            CExpr::Load(ptr, index) => f(ptr, index.map_loads(f)),
            CExpr::Select(c, a, b) => CExpr::Select(go(c), go(a), go(b)),
        }
    }

    /// Calls `f` with every variable and pointer the expression reads, left to right.
    pub fn visit_vars(&self, f: &mut dyn FnMut(&str)) {
        match self {
            CExpr::Var(name) => f(name),
            CExpr::Int(_) | CExpr::Lit(_) => {}
            CExpr::Bin(_, a, b) => {
                a.visit_vars(f);
                b.visit_vars(f);
            }
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => a.visit_vars(f),
            CExpr::Call(_, args) | CExpr::Invoke { args, .. } => {
                args.iter().for_each(|a| a.visit_vars(f));
            }
            CExpr::Load(ptr, index) => {
                f(ptr);
                index.visit_vars(f);
            }
            CExpr::Select(c, a, b) => {
                c.visit_vars(f);
                a.visit_vars(f);
                b.visit_vars(f);
            }
        }
    }

    /// Whether printing this twice costs nothing (no need for a temporary).
    pub fn is_trivial(&self) -> bool {
        matches!(self, CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_))
    }
}

/// A parallel loop's level (DPIA's parfor per level of the OpenCL hierarchy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParLevel {
    /// Over all work-items of the NDRange, dimension `dim` (mapGlobal).
    Grid(u32),
    /// As `Grid`, where the launch has a work-item for every iteration (its global size
    /// is the bound, rounded up to the work-group size): each runs at most one, written
    /// `if` rather than a grid-stride loop. A loop inside each work-item keeps POCL from
    /// vectorising its own loop over work-items (LLVM vectorises innermost loops only):
    /// a reverse of 2^22 floats took 6 ms as a loop and about 1 ms as an `if`.
    GridCovered(u32),
    /// Over the work-groups (mapWorkgroup).
    Group,
    /// Over the work-items of one work-group (mapLocal).
    Thread,
}

/// A read-modify-write of one element of global memory that concurrent work-items
/// may do at once (a histogram's bins). OpenCL 1.2 has `atomic_add`, `atomic_min`
/// and `atomic_max` on 32-bit integers and, with `cl_khr_int64_base_atomics` (which the
/// prelude already needs), `atom_add` on 64-bit ones; float additions are a
/// compare-and-swap loop on the bits (a helper of the prelude).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Min,
    Max,
    /// Writes the value (`atomic_xchg`; a scan's status words, read back by
    /// [`Cmd::Atomic`]'s `fetch`).
    Exchange,
}

impl AtomicOp {
    /// Whether OpenCL 1.2 (with the prelude's extensions) can do `op` on `elem` atomically.
    pub fn supports(self, elem: Elem) -> bool {
        match self {
            AtomicOp::Add => {
                matches!(
                    elem,
                    Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64 | Elem::F32 | Elem::F64
                )
            }
            AtomicOp::Min | AtomicOp::Max => matches!(elem, Elem::I32 | Elem::U32),
            AtomicOp::Exchange => matches!(elem, Elem::I32 | Elem::U32 | Elem::I64 | Elem::U64),
        }
    }

    /// The 32-bit integer (`I32` or `U32`) that leaves a bin unchanged (an exchange
    /// has none; 0 is as good as any).
    pub fn identity_32(self, elem: Elem) -> i64 {
        match (self, elem) {
            (AtomicOp::Add | AtomicOp::Exchange, _) => 0,
            (AtomicOp::Min, Elem::U32) => i64::from(u32::MAX),
            (AtomicOp::Min, _) => i64::from(i32::MAX),
            (AtomicOp::Max, Elem::U32) => 0,
            (AtomicOp::Max, _) => i64::from(i32::MIN),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Min => "min",
            AtomicOp::Max => "max",
            AtomicOp::Exchange => "xchg",
        }
    }
}

/// A command.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    /// `T name = init;` in private memory.
    Decl {
        name: Rc<str>,
        elem: Elem,
        init: Option<CExpr>,
    },
    /// `T name[len]`, a fixed size, shared as `sharing` says; `why` is the reason
    /// in words (hovers and `weft dump --ir aspace` show it).
    Array {
        name: Rc<str>,
        elem: Elem,
        sharing: Sharing,
        len: i64,
        why: Rc<str>,
    },
    Assign {
        name: Rc<str>,
        value: CExpr,
    },
    /// `ptr[index] = value`.
    Store {
        ptr: Rc<str>,
        index: CExpr,
        value: CExpr,
    },
    If {
        cond: CExpr,
        then_cmds: Vec<Cmd>,
        else_cmds: Vec<Cmd>,
    },
    /// `for (long var = 0; var < bound; var++)`, with the source line it comes from.
    For {
        var: Rc<str>,
        bound: CExpr,
        body: Vec<Cmd>,
        comment: Option<String>,
    },
    /// A parallel loop: each iteration runs on one unit of `level`, strided when the
    /// bound exceeds the units.
    ParFor {
        level: ParLevel,
        var: Rc<str>,
        bound: CExpr,
        body: Vec<Cmd>,
        comment: Option<String>,
    },
    /// `while (true) { cond_cmds; if (!cond) break; body }`.
    While {
        cond_cmds: Vec<Cmd>,
        cond: CExpr,
        body: Vec<Cmd>,
    },
    /// A work-group barrier on local memory.
    Barrier,
    /// Records run-time error `code` (first writer wins) with two payload words.
    Fail {
        code: u32,
        a: CExpr,
        b: CExpr,
    },
    /// `ptr[index] = ptr[index] op value`, atomically ([`AtomicOp::supports`] holds
    /// for `elem`, the element type of `ptr`); `fetch` names a declared variable of
    /// type `elem` that receives the element's value before the update.
    Atomic {
        op: AtomicOp,
        elem: Elem,
        ptr: Rc<str>,
        index: CExpr,
        value: CExpr,
        fetch: Option<Rc<str>>,
    },
    /// `return value;` from a function generated from a user def.
    Return(CExpr),
    /// The work-item ends (`return;` from a kernel, after a failed check).
    Exit,
    /// Asks the OpenCL compiler to unroll the loop that follows (`#pragma unroll`).
    Unroll,
    /// `lanes.len()` (2, 4, 8 or 16) neighbouring elements from the one `load` reads
    /// (a [`CExpr::Load`]), loaded as one vector (`vloadN`) into the fresh scalar
    /// variables `lanes`, in order. `aligned`: the first element's index is a multiple
    /// of the lane count, so in a buffer (an allocation of its own, aligned beyond any
    /// vector) the vector is aligned to its size and one wide load reads it.
    VectorLoad {
        lanes: Vec<Rc<str>>,
        elem: Elem,
        load: CExpr,
        aligned: bool,
    },
    Comment(String),
}

/// A part of a command: an expression it evaluates or a block it runs.
pub enum Part<'a> {
    Expr(&'a CExpr),
    Body(&'a [Cmd]),
}

impl Cmd {
    /// The expressions and nested blocks of this command, in the order they run (the
    /// one traversal analyses share; an `Array` or `Store` target is not a part).
    pub fn parts(&self) -> Vec<Part<'_>> {
        match self {
            Cmd::Decl { init, .. } => init.iter().map(Part::Expr).collect(),
            Cmd::Assign { value, .. } | Cmd::Return(value) => vec![Part::Expr(value)],
            Cmd::Store { index, value, .. } | Cmd::Atomic { index, value, .. } => {
                vec![Part::Expr(index), Part::Expr(value)]
            }
            Cmd::If { cond, then_cmds, else_cmds } => {
                vec![Part::Expr(cond), Part::Body(then_cmds), Part::Body(else_cmds)]
            }
            Cmd::For { bound, body, .. } | Cmd::ParFor { bound, body, .. } => {
                vec![Part::Expr(bound), Part::Body(body)]
            }
            Cmd::While { cond_cmds, cond, body } => {
                vec![Part::Body(cond_cmds), Part::Expr(cond), Part::Body(body)]
            }
            Cmd::Fail { a, b, .. } => vec![Part::Expr(a), Part::Expr(b)],
            Cmd::VectorLoad { load, .. } => vec![Part::Expr(load)],
            Cmd::Array { .. } | Cmd::Barrier | Cmd::Comment(_) | Cmd::Exit | Cmd::Unroll => {
                Vec::new()
            }
        }
    }
}

/// Records `at` as the origin of the variables `cmd` introduces (and those of its
/// blocks not recorded when they were emitted), each once: the first origin wins
/// (`KernelImp::var_origins`, for both code generators).
pub(crate) fn record_var_origins(
    cmd: &Cmd,
    at: &weft_core::Origin,
    named: &mut rustc_hash::FxHashSet<Rc<str>>,
    out: &mut Vec<(String, weft_core::Origin)>,
) {
    let names: Vec<&Rc<str>> = match cmd {
        Cmd::Decl { name, .. } | Cmd::Assign { name, .. } => vec![name],
        Cmd::For { var, .. } | Cmd::ParFor { var, .. } => vec![var],
        Cmd::Atomic { fetch, .. } => fetch.iter().collect(),
        Cmd::VectorLoad { lanes, .. } => lanes.iter().collect(),
        Cmd::Array { .. }
        | Cmd::Store { .. }
        | Cmd::If { .. }
        | Cmd::While { .. }
        | Cmd::Barrier
        | Cmd::Fail { .. }
        | Cmd::Return(_)
        | Cmd::Exit
        | Cmd::Unroll
        | Cmd::Comment(_) => Vec::new(),
    };
    for name in names {
        if named.insert(name.clone()) {
            out.push((name.to_string(), at.clone()));
        }
    }
    for part in cmd.parts() {
        if let Part::Body(body) = part {
            for inner in body {
                record_var_origins(inner, at, named, out);
            }
        }
    }
}

/// A kernel of the imperative IR.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelImp {
    pub name: String,
    /// The parameters after the error buffer.
    pub params: Vec<(String, ParamKind)>,
    /// Why each pointer parameter exists, in words (`input `xs` of the entry`).
    pub param_notes: Vec<(String, String)>,
    /// Element counts of buffer parameters known when compiling (inputs whose type
    /// has constant sizes): what decides whether `constant` memory can hold them.
    pub buffer_lens: Vec<(String, i64)>,
    /// The source expression whose value each allocated array holds.
    pub ptr_origins: Vec<(String, weft_core::Origin)>,
    pub body: Vec<Cmd>,
    /// The work-group size the kernel was written for, if it needs one.
    pub local_size: Option<u32>,
    /// One line saying what the kernel computes and from where.
    pub doc: String,
    /// The source expressions the kernel computes, each with its strategy in words
    /// (what the editor's hover shows).
    pub origins: Vec<(weft_core::Origin, String)>,
    /// The source expression each variable of the body (a private scalar, a loop index,
    /// a vector lane) was introduced to compute, first one first: with `ptr_origins`,
    /// what links a printed line to the source (the editor's kernel view).
    pub var_origins: Vec<(String, weft_core::Origin)>,
}

/// A parameter of a function generated from a user def.
#[derive(Debug, Clone, PartialEq)]
pub enum FParam {
    /// A pointer whose address space is inferred per call (a clone per instantiation).
    Ptr {
        name: String,
        elem: Elem,
        why: String,
    },
    Scalar {
        name: String,
        elem: Elem,
    },
}

/// A function generated from a user def called with materialised arrays: pointer
/// parameters plus layout parameters (offset, strides, shape as `long`s), so the
/// kernel reads like its source (ARCHITECTURE.md).
#[derive(Debug, Clone, PartialEq)]
pub struct FuncImp {
    /// The C name before specialisation (the def's name, numbered if one def needs
    /// several layouts or element types).
    pub name: String,
    pub params: Vec<FParam>,
    pub ret: Elem,
    pub body: Vec<Cmd>,
    pub doc: String,
    /// As [`KernelImp::var_origins`].
    pub var_origins: Vec<(String, weft_core::Origin)>,
}

impl fmt::Display for CExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, 0)
    }
}

fn write_expr(f: &mut fmt::Formatter<'_>, e: &CExpr, outer: u8) -> fmt::Result {
    match e {
        CExpr::Var(name) => f.write_str(name),
        CExpr::Int(v) => {
            if *v == i64::MIN {
                f.write_str("(-9223372036854775807L - 1)")
            } else if *v < 0 {
                write!(f, "({v})")
            } else {
                write!(f, "{v}")
            }
        }
        CExpr::Lit(text) => f.write_str(text),
        CExpr::Bin(op, a, b) => {
            let p = op.precedence();
            let paren = p <= outer;
            if paren {
                f.write_str("(")?;
            }
            write_expr(f, a, p - 1)?;
            write!(f, " {} ", op.symbol())?;
            write_expr(f, b, p)?;
            if paren {
                f.write_str(")")?;
            }
            Ok(())
        }
        CExpr::Not(a) => {
            f.write_str("!")?;
            write_expr(f, a, 20)
        }
        CExpr::Neg(a) => {
            f.write_str("-")?;
            write_expr(f, a, 20)
        }
        CExpr::Call(name, args) => {
            write!(f, "{name}(")?;
            // `min(0, x)` with a `long` x is ambiguous in OpenCL C: index constants in
            // overloaded built-ins are `long` literals.
            let overloaded = matches!(&**name, "min" | "max");
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                match arg {
                    CExpr::Int(v) if overloaded && *v != i64::MIN => write!(f, "{v}L")?,
                    _ => write_expr(f, arg, 0)?,
                }
            }
            f.write_str(")")
        }
        CExpr::Invoke { name, args, .. } => {
            write!(f, "{name}(")?;
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_expr(f, arg, 0)?;
            }
            f.write_str(")")
        }
        CExpr::Load(ptr, index) => {
            write!(f, "{ptr}[")?;
            write_expr(f, index, 0)?;
            f.write_str("]")
        }
        CExpr::Select(c, a, b) => {
            f.write_str("(")?;
            write_expr(f, c, 1)?;
            f.write_str(" ? ")?;
            write_expr(f, a, 1)?;
            f.write_str(" : ")?;
            write_expr(f, b, 1)?;
            f.write_str(")")
        }
        CExpr::Cast(elem, a) => {
            write!(f, "({})", c_type(*elem))?;
            write_expr(f, a, 20)
        }
    }
}

/// The OpenCL C type of a value of an element type: a variable, a scalar parameter, a
/// function's result. `f16` values are computed in `float` (docs/backend.md, "Small
/// scalar types"); in memory they are [`c_mem_type`].
pub fn c_type(elem: Elem) -> &'static str {
    match elem {
        Elem::I8 => "char",
        Elem::I16 => "short",
        Elem::U8 => "uchar",
        Elem::U16 => "ushort",
        Elem::F16 => "float",
        Elem::I32 => "int",
        Elem::I64 => "long",
        Elem::U32 => "uint",
        Elem::U64 => "ulong",
        Elem::F32 => "float",
        Elem::F64 => "double",
        Elem::Bool => "uchar",
    }
}

/// The OpenCL C type of an element in memory (what a pointer or an array holds): an
/// `f16` is its 16 bits, a `ushort`, read with `weft_h2f` and written with `weft_f2h`
/// (which need no `cl_khr_fp16`); any other element is stored as its [`c_type`].
pub fn c_mem_type(elem: Elem) -> &'static str {
    match elem {
        Elem::F16 => "ushort",
        other => c_type(other),
    }
}

/// Prints commands in the imperative IR's own notation (DPIA-like: `parfor@level`,
/// `new`), for `weft dump --ir imperative`.
pub fn print_kernel_imp(kernel: &KernelImp) -> String {
    let mut out = String::new();
    let params: Vec<String> = kernel
        .params
        .iter()
        .map(|(name, kind)| match kind {
            ParamKind::Buffer(elem) => format!("{name}: buffer {}[]", elem.name()),
            ParamKind::Scalar(elem) => format!("{name}: {}", elem.name()),
            ParamKind::Local(elem) => format!("{name}: group {}[]", elem.name()),
        })
        .collect();
    let _ = writeln!(out, "-- {}", kernel.doc);
    let local = kernel.local_size.map(|l| format!(" @local_size({l})")).unwrap_or_default();
    let _ = writeln!(out, "kernel {}({}){local} {{", kernel.name, params.join(", "));
    print_cmds(&mut out, &kernel.body, 1);
    out.push_str("}\n");
    out
}

/// Prints a function generated from a user def, before specialisation: its pointer
/// parameters have no address space yet (`weft dump --ir aspace` shows the clones).
pub fn print_func_imp(func: &FuncImp) -> String {
    let mut out = String::new();
    let params: Vec<String> = func
        .params
        .iter()
        .map(|p| match p {
            FParam::Ptr { name, elem, .. } => format!("{name}: ptr {}[]", elem.name()),
            FParam::Scalar { name, elem } => format!("{name}: {}", elem.name()),
        })
        .collect();
    let _ = writeln!(out, "-- {}", func.doc);
    let _ = writeln!(out, "fun {}({}) : {} {{", func.name, params.join(", "), func.ret.name());
    print_cmds(&mut out, &func.body, 1);
    out.push_str("}\n");
    out
}

fn print_cmds(out: &mut String, cmds: &[Cmd], depth: usize) {
    let pad = "  ".repeat(depth);
    for cmd in cmds {
        match cmd {
            Cmd::Decl { name, elem, init } => match init {
                Some(init) => {
                    let _ = writeln!(out, "{pad}new private {}: {} := {init}", name, elem.name());
                }
                None => {
                    let _ = writeln!(out, "{pad}new private {}: {}", name, elem.name());
                }
            },
            Cmd::Array { name, elem, sharing, len, why } => {
                let shared = match sharing {
                    Sharing::WorkGroup => "group",
                    Sharing::WorkItem => "item",
                };
                let _ = writeln!(out, "{pad}new@{shared} {name}: [{len}]{}  -- {why}", elem.name());
            }
            Cmd::Assign { name, value } => {
                let _ = writeln!(out, "{pad}{name} := {value}");
            }
            Cmd::Store { ptr, index, value } => {
                let _ = writeln!(out, "{pad}{ptr}[{index}] := {value}");
            }
            Cmd::Atomic { op, elem, ptr, index, value, fetch } => {
                let op = op.name();
                let fetch = fetch.as_ref().map(|f| format!("{f} := ")).unwrap_or_default();
                let _ =
                    writeln!(out, "{pad}{fetch}atomic {op}.{} {ptr}[{index}] {value}", elem.name());
            }
            Cmd::If { cond, then_cmds, else_cmds } => {
                let _ = writeln!(out, "{pad}if {cond} then");
                print_cmds(out, then_cmds, depth + 1);
                if !else_cmds.is_empty() {
                    let _ = writeln!(out, "{pad}else");
                    print_cmds(out, else_cmds, depth + 1);
                }
            }
            Cmd::For { var, bound, body, comment } => {
                let comment = comment.as_ref().map(|c| format!("  -- {c}")).unwrap_or_default();
                let _ = writeln!(out, "{pad}for {var} < {bound} do{comment}");
                print_cmds(out, body, depth + 1);
            }
            Cmd::ParFor { level, var, bound, body, comment } => {
                let level = match level {
                    ParLevel::Grid(d) => format!("grid.{d}"),
                    ParLevel::GridCovered(d) => format!("grid.{d}.covered"),
                    ParLevel::Group => "group".to_owned(),
                    ParLevel::Thread => "thread".to_owned(),
                };
                let comment = comment.as_ref().map(|c| format!("  -- {c}")).unwrap_or_default();
                let _ = writeln!(out, "{pad}parfor@{level} {var} < {bound} do{comment}");
                print_cmds(out, body, depth + 1);
            }
            Cmd::While { cond_cmds, cond, body } => {
                let _ = writeln!(out, "{pad}while");
                print_cmds(out, cond_cmds, depth + 1);
                let _ = writeln!(out, "{pad}  test {cond}");
                let _ = writeln!(out, "{pad}do");
                print_cmds(out, body, depth + 1);
            }
            Cmd::Barrier => {
                let _ = writeln!(out, "{pad}barrier");
            }
            Cmd::Fail { code, a, b } => {
                let _ = writeln!(out, "{pad}fail {code} ({a}, {b})");
            }
            Cmd::Return(value) => {
                let _ = writeln!(out, "{pad}return {value}");
            }
            Cmd::Comment(text) => {
                let _ = writeln!(out, "{pad}-- {text}");
            }
            Cmd::Exit => {
                let _ = writeln!(out, "{pad}exit");
            }
            Cmd::Unroll => {
                let _ = writeln!(out, "{pad}-- unroll the next loop");
            }
            Cmd::VectorLoad { lanes, elem, load, aligned } => {
                let lanes = lanes.join(", ");
                let how = if *aligned { "aligned vector" } else { "vector" };
                let _ = writeln!(out, "{pad}{lanes} := {how} {}[{load}..]", elem.name());
            }
        }
    }
}
