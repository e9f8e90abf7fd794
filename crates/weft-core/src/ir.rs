//! The core IR: nodes, ids and arenas.
//!
//! A [`Program`] is a set of first-order, monomorphic [`Function`]s. Each function owns
//! three arenas: variables ([`Var`], with their [`Type`]), expressions ([`Exp`]) and
//! blocks ([`Block`]). A block is A-normal form: a list of statements, each binding one
//! variable to one expression whose operands are [`Atom`]s (variables or constants),
//! and a result atom. Nested control (`if`, `loop`, SOAC lambdas) refers to blocks by
//! id.
//!
//! Evaluation: statements run in order; a variable is in scope from its statement to
//! the end of its block, and in every block nested below. Lambda parameters are in
//! scope in the lambda body; a function's size parameters and parameters in its whole
//! body. A lambda body may read every variable of the enclosing blocks (it is not a
//! closure value: lambdas only occur as the function argument of a SOAC).
//!
//! Sizes: every array type carries [`CoreSize`]s, polynomials over variables of the same
//! function. A variable in a size is an `i64` variable in scope, or an *existential* one
//! ([`VarKind::Existential`]): an unknown size (LANGUAGE.md §2), bound by the first
//! value whose type mentions it.
//!
//! Size parameters of a function are bound from the shapes of its arguments when it is
//! called (they are not passed explicitly); an `i64` parameter named in a later type is
//! its own size variable.
//!
//! Every expression links to the HIR expression it came from through an [`Origin`] in
//! the function's `origins` side table; no text range is stored here.

use la_arena::{Arena, ArenaMap, Idx};
use weft_hir::{DefLoc, ExprId, Level, MathFn, Name, ScalarTy};
use weft_values::Scalar;

/// A variable of a function.
pub type VarId = Idx<Var>;
/// An expression of a function.
pub type ExpId = Idx<Exp>;
/// A block of a function.
pub type BlockId = Idx<Block>;
/// A function of a program.
pub type FnId = Idx<Function>;

/// A symbolic size over a function's variables.
pub type CoreSize = weft_size::Size<VarId>;

/// A whole elaborated program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub functions: Arena<Function>,
    /// The entry points, in source order.
    pub entries: Vec<FnId>,
}

impl Program {
    /// The part of the program that `entry` runs: `entry` and every function it calls,
    /// directly or not, in their order here, with `entry` the only entry; and `entry`'s
    /// id in it. The functions are this program's (calls renumbered), so compiling the
    /// entry from either gives the same code, but passes over the whole program (the
    /// middle end inlines calls into each entry) then cost what this entry costs, not
    /// what every entry of the file costs.
    pub fn restricted_to_entry(&self, entry: FnId) -> (Program, FnId) {
        let mut reached = vec![false; self.functions.len()];
        let mut stack = vec![entry];
        while let Some(id) = stack.pop() {
            let idx = id.into_raw().into_u32() as usize;
            if std::mem::replace(&mut reached[idx], true) {
                continue;
            }
            for (_, exp) in self.functions[id].exps.iter() {
                if let Exp::Call { func, .. } = exp {
                    stack.push(*func);
                }
            }
        }
        let mut renumbered: Vec<Option<FnId>> = vec![None; self.functions.len()];
        let mut functions = Arena::new();
        for (id, function) in self.functions.iter() {
            let idx = id.into_raw().into_u32() as usize;
            if reached[idx] {
                renumbered[idx] = Some(functions.alloc(function.clone()));
            }
        }
        let new_id = |id: FnId| {
            renumbered[id.into_raw().into_u32() as usize]
                .expect("invariant: a reached function's callees are reached")
        };
        for (_, function) in functions.iter_mut() {
            for (_, exp) in function.exps.iter_mut() {
                if let Exp::Call { func, .. } = exp {
                    *func = new_id(*func);
                }
            }
        }
        let entry = new_id(entry);
        (Program { functions, entries: vec![entry] }, entry)
    }
}

/// Where a node came from: a HIR expression of a def (the def whose body holds it,
/// which for inlined code is the inlined def).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub def: DefLoc,
    pub expr: ExprId,
}

/// A monomorphic, first-order function: a user def specialised to one instance of its
/// type parameters, or an entry point.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// The source name; specialisations of one def share it (the printer numbers them).
    pub name: Name,
    pub def: DefLoc,
    pub is_entry: bool,
    /// Size parameters, bound from the argument shapes at each call.
    pub size_params: Vec<VarId>,
    pub params: Vec<VarId>,
    /// The result type, over the size parameters and parameters.
    pub ret: Type,
    pub body: BlockId,
    pub vars: Arena<Var>,
    pub exps: Arena<Exp>,
    pub blocks: Arena<Block>,
    pub origins: ArenaMap<ExpId, Origin>,
}

impl Function {
    /// How run-time errors name `atom` (the interpreter's and compiled code's alike).
    pub fn atom_name(&self, atom: Atom) -> String {
        match atom {
            Atom::Var(v) if !self.vars[v].name.as_str().is_empty() => self.vars[v].name.to_string(),
            Atom::Var(_) | Atom::Const(_) => "(temporary)".to_owned(),
        }
    }
}

/// A variable: a source name (or a made-up one for temporaries) and a type.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub name: Name,
    pub ty: Type,
    pub kind: VarKind,
}

/// How a variable is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// By a statement, a parameter, a lambda parameter or a loop.
    Bound,
    /// An unknown size: bound to the matching dimension of the first value whose type
    /// mentions it.
    Existential,
}

/// A monomorphic type. An array of tuples is a type here; values store it as a tuple
/// of arrays (LANGUAGE.md §2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarTy),
    Array { size: CoreSize, elem: Box<Type> },
    Tuple(Vec<Type>),
}

impl Type {
    pub fn array(size: CoreSize, elem: Type) -> Type {
        Type::Array { size, elem: Box::new(elem) }
    }

    /// The element type of an array type, or `None`.
    pub fn elem(&self) -> Option<&Type> {
        match self {
            Type::Array { elem, .. } => Some(elem),
            Type::Scalar(_) | Type::Tuple(_) => None,
        }
    }

    /// The outer size of an array type, or `None`.
    pub fn outer_size(&self) -> Option<&CoreSize> {
        match self {
            Type::Array { size, .. } => Some(size),
            Type::Scalar(_) | Type::Tuple(_) => None,
        }
    }

    pub fn as_scalar(&self) -> Option<ScalarTy> {
        match self {
            Type::Scalar(s) => Some(*s),
            Type::Array { .. } | Type::Tuple(_) => None,
        }
    }

    /// Whether a value of this type holds an array (is one, or a tuple with one).
    pub fn has_array(&self) -> bool {
        match self {
            Type::Scalar(_) => false,
            Type::Array { .. } => true,
            Type::Tuple(elems) => elems.iter().any(Type::has_array),
        }
    }
}

/// A block in A-normal form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub result: Option<Atom>,
}

/// `let var = exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt {
    pub var: VarId,
    pub exp: ExpId,
}

/// An operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Atom {
    Var(VarId),
    Const(Scalar),
}

/// A first-order function argument of a SOAC: parameters in scope in the body block.
#[derive(Debug, Clone, PartialEq)]
pub struct Lambda {
    pub params: Vec<VarId>,
    pub body: BlockId,
    pub ret: Type,
}

/// The scalar operators are Weft's, below every evaluator (weft-values `ops`).
pub use weft_values::{BinOp, UnOp};

/// One index of an [`Exp::Index`]: a fixed index drops a dimension, a slice keeps it.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexItem {
    Fix(Atom),
    Slice { start: Option<Atom>, end: Option<Atom>, stride: Option<Atom> },
}

/// The loop form.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopForm {
    /// `for i < bound`.
    For { index: VarId, bound: Atom },
    /// `while cond`: the block reads the loop parameter and yields a `bool`.
    While { cond: BlockId },
}

/// Which memory annotation (LANGUAGE.md §7); the identity on values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Local,
    Private,
    Inferred,
}

/// An expression. Operands are atoms; nested code is in blocks and lambdas.
#[derive(Debug, Clone, PartialEq)]
pub enum Exp {
    Atom(Atom),
    /// The value of a size expression (exact divisions are checked).
    Size(CoreSize),
    BinOp {
        op: BinOp,
        ty: ScalarTy,
        lhs: Atom,
        rhs: Atom,
    },
    UnOp {
        op: UnOp,
        ty: ScalarTy,
        operand: Atom,
    },
    Convert {
        from: ScalarTy,
        to: ScalarTy,
        operand: Atom,
    },
    Math {
        ty: ScalarTy,
        func: MathFn,
        args: Vec<Atom>,
    },
    Tuple(Vec<Atom>),
    Proj {
        tuple: Atom,
        index: u32,
    },
    ArrayLit {
        elems: Vec<Atom>,
        elem_ty: Type,
    },
    /// Indexing and slicing; every index is bounds-checked.
    Index {
        array: Atom,
        items: Vec<IndexItem>,
    },
    /// The size of dimension `dim` of an array.
    Dim {
        array: Atom,
        dim: u32,
    },
    Call {
        func: FnId,
        args: Vec<Atom>,
    },
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
    /// `map` over one or more arrays of one size.
    Map {
        level: Option<Level>,
        lambda: Lambda,
        arrays: Vec<Atom>,
    },
    Reduce {
        level: Option<Level>,
        lambda: Lambda,
        neutral: Atom,
        array: Atom,
    },
    Scan {
        level: Option<Level>,
        lambda: Lambda,
        neutral: Atom,
        array: Atom,
    },
    Generate {
        level: Option<Level>,
        size: Atom,
        lambda: Lambda,
    },
    Scatter {
        dest: Atom,
        indices: Atom,
        values: Atom,
    },
    /// `reduce_by_index dest op neutral indices values` (version 1.1): a copy of `dest`
    /// where each value is combined into the element its index names; indices out of
    /// range are ignored. The operator is associative and commutative, so the order of
    /// the values within one bin is unspecified.
    ReduceByIndex {
        dest: Atom,
        lambda: Lambda,
        neutral: Atom,
        indices: Atom,
        values: Atom,
    },
    /// `array with [i, j] = value` (version 1.1): a copy of `array` with the element or
    /// row the indices select replaced; every index is bounds-checked like indexing.
    Update {
        array: Atom,
        indices: Vec<Atom>,
        value: Atom,
    },
    Iota {
        size: Atom,
    },
    Replicate {
        size: Atom,
        value: Atom,
    },
    Zip(Vec<Atom>),
    Unzip(Atom),
    Transpose(Atom),
    Reverse(Atom),
    Flatten(Atom),
    /// Checks that the array has `rows * cols` elements.
    Unflatten {
        rows: Atom,
        cols: Atom,
        array: Atom,
    },
    /// Checks that the size is divisible by `chunk`.
    Split {
        chunk: Atom,
        array: Atom,
    },
    Take {
        count: Atom,
        array: Atom,
    },
    Drop {
        count: Atom,
        array: Atom,
    },
    Concat(Atom, Atom),
    Materialise {
        space: Space,
        value: Atom,
    },
    /// `e :> t`: checks that the value's shape is the type's.
    Coerce {
        value: Atom,
        ty: Type,
    },
}
