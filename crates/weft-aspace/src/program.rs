//! The constraint program a client builds: one [`Func`] per kernel or helper, each with its
//! pointers and the facts about them (flows, accesses, calls, casts, bounds).
//!
//! The program is first-order and flow-insensitive: the order of facts only fixes the order of
//! unifications (and so which fact a diagnostic blames), never the result of a well-typed
//! program. Ids index the vectors they name; `infer` validates them and reports
//! `aspace-malformed-program` instead of panicking on bad ones.

use crate::space::{Space, SpaceSet};

/// Index into [`Program::funcs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FuncId(pub u32);

/// Index into [`Func::ptrs`] of the function it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtrId(pub u32);

/// An opaque source position. MiniAS uses line numbers, the backend an index into its own table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Site(pub u32);

/// Why a pointer or fact exists, in words a user understands (`` `tmp = g` ``), and where.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reason {
    pub text: String,
    pub site: Option<Site>,
}

/// The whole constraint program of one compiled entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub funcs: Vec<Func>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FuncKind {
    /// A root: its pointer parameters come from the host and keep the kernel's name.
    Kernel,
    /// A helper: polymorphic over the spaces of its generic pointers, cloned per instantiation.
    Helper,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Func {
    pub name: String,
    pub kind: FuncKind,
    /// The pointer parameters in order (non-pointer parameters are not listed).
    pub params: Vec<PtrId>,
    /// The pointer that stands for the returned pointer, if the function returns one.
    pub ret: Option<PtrId>,
    pub ptrs: Vec<Ptr>,
    pub facts: Vec<Fact>,
}

/// A pointer-valued variable, parameter, allocation or temporary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ptr {
    pub name: String,
    pub decl: Decl,
    pub reason: Reason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decl {
    /// Declared or allocated in this space: the closed row `{space}`.
    In(Space),
    /// No space written: a fresh row variable (the paper's "generic", digest 2.1).
    Generic,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// A pointer value flows from `from` into `to` (initialisation, assignment, return):
    /// `row(from) ⊆ row(to)` via embedding (digest 3.2a).
    Flow { from: PtrId, to: PtrId, reason: Reason },
    /// A load through `ptr`.
    Load { ptr: PtrId, reason: Reason },
    /// A store through `ptr`: `row(ptr) ⊆ all \ {constant}`.
    Store { ptr: PtrId, reason: Reason },
    /// A call; `args` in the callee's pointer-parameter order, `ret` receives the returned
    /// pointer.
    Call { callee: FuncId, args: Vec<PtrId>, ret: Option<PtrId>, reason: Reason },
    /// `to = dynamic_cast<space T*>(from)` (digest 3.11): `space ∈ row(from)` by insertion, and
    /// `{space} ⊆ row(to)`.
    Cast { from: PtrId, to: PtrId, space: Space, reason: Reason },
    /// An upper bound from the context: `row(ptr) ⊆ allowed`. `reason.text` starts the message
    /// (e.g. "`tile` escapes its work-group: only {global}").
    Bound { ptr: PtrId, allowed: SpaceSet, reason: Reason },
}

impl Fact {
    pub fn reason(&self) -> &Reason {
        match self {
            Fact::Flow { reason, .. }
            | Fact::Load { reason, .. }
            | Fact::Store { reason, .. }
            | Fact::Call { reason, .. }
            | Fact::Cast { reason, .. }
            | Fact::Bound { reason, .. } => reason,
        }
    }
}

/// The OpenCL version code is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Target {
    /// No generic address space: every pointer must resolve to one space (static mode).
    #[default]
    OpenCl12,
    /// `__opencl_c_generic_address_space`: variant rows without `constant` become generic.
    OpenCl20,
}

/// Inference options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    pub target: Target,
    /// Embedding at flows (digest 3.2a): a closed source row is opened at the use site, so a flow
    /// may widen its target. `false` is the paper's strict VASSIGN (equal rows), kept to pin the
    /// choice down in a test (digest E6).
    pub embedding: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { target: Target::OpenCl12, embedding: true }
    }
}

impl Reason {
    pub fn new(text: impl Into<String>, site: Option<Site>) -> Reason {
        Reason { text: text.into(), site }
    }
}

impl Program {
    pub fn func(&self, func: FuncId) -> Option<&Func> {
        self.funcs.get(func.0 as usize)
    }
}

impl Func {
    pub fn ptr(&self, ptr: PtrId) -> Option<&Ptr> {
        self.ptrs.get(ptr.0 as usize)
    }

    /// The pointer's name, or `?` for an out-of-range id.
    pub fn ptr_name(&self, ptr: PtrId) -> &str {
        self.ptr(ptr).map_or("?", |ptr| ptr.name.as_str())
    }
}
