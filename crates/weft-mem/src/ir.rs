//! The memory IR (the paper's FUNMEM, seed 004 §4): the core IR plus side tables that
//! give every array binding a memory block and an LMAD.
//!
//! The memory IR does not copy the core IR. A [`MemProgram`] holds, for each core
//! [`weft_core::Function`], a [`MemFunction`]: an arena of memory blocks
//! ([`MemBlock`]), an arena of existential LMAD components ([`Existential`]), and a
//! side table from core variables to their memory ([`MemInfo`]). Statements stay the
//! core statements; an `alloc` is a block whose [`BlockBinding::Alloc`] names the
//! statement it runs before. So the core `Origin` of every expression is also the
//! origin of its memory, and no text range is stored here.
//!
//! Semantics (digest §4.3, with its fixes):
//!
//! - An array value is a block and an LMAD; an array of tuples is a tuple of arrays,
//!   each leaf with its own block and LMAD ([`MemInfo::Tuple`]).
//! - LMADs count elements, 0-based (digest P1, D6); a block's size is in elements of
//!   its scalar type, and [`MemBlock::bytes`] gives the size in bytes.
//! - A binding whose [`ArrayMem::how`] is [`Provenance::View`] reuses its operand's
//!   block and never writes; one that is [`Provenance::Fresh`] or [`Provenance::Copy`]
//!   is written, through its LMAD, by its statement only, into a block allocated for
//!   it. An [`Provenance::Existential`] binding (`if` and `loop` results, call results,
//!   reduce results and function parameters) takes its block and the components that
//!   are [`MemVar::Exist`] from the value at run time (digest §5.1, fixed `Support`).
//! - [`MemVar::Thread`] is the 0-based iteration index of a `map` or `generate`; it is
//!   in scope in that SOAC's lambda and appears in the LMADs of the lambda's
//!   parameters (row `i` of each operand) and of memory-expanded arrays.

use la_arena::{Arena, ArenaMap, Idx};
use weft_core::{ExpId, FnId, Origin, VarId};
use weft_hir::ScalarTy;
use weft_size::Size;

use crate::lmad::Lmad;

/// A memory block of a function.
pub type MemBlockId = Idx<MemBlock>;
/// An existential LMAD component of a function.
pub type ExistId = Idx<Existential>;

/// A variable of a memory size or LMAD component.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum MemVar {
    /// A core variable (an integer in scope).
    Core(VarId),
    /// The 0-based iteration index of the `map` or `generate` expression.
    Thread(ExpId),
    /// A component known only at run time.
    Exist(ExistId),
}

/// A symbolic size in the memory IR.
pub type MemSize = Size<MemVar>;
/// An LMAD in the memory IR.
pub type MemLmad = Lmad<MemVar>;

/// The memory annotation of a whole program: one [`MemFunction`] per core function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemProgram {
    pub functions: ArenaMap<FnId, MemFunction>,
}

/// The memory of one core function.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemFunction {
    pub blocks: Arena<MemBlock>,
    pub exists: Arena<Existential>,
    /// Every bound variable: statements, parameters, lambda and loop parameters.
    pub bindings: ArenaMap<VarId, MemInfo>,
    /// The memory of the function's result, after the result copy (digest §5.1,
    /// `TransformProgram`, with its fix: entry results are direct, row-major arrays).
    pub result: MemInfo,
    /// Every place where a view could not be one LMAD and a copy was inserted.
    pub forced_copies: Vec<ForcedCopy>,
    /// Allocations inside parallel lambdas that memory expansion left in place.
    pub not_expanded: Vec<NotExpanded>,
}

/// A memory block: a flat buffer of scalars of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct MemBlock {
    pub elem: ScalarTy,
    pub binding: BlockBinding,
}

impl MemBlock {
    /// The size in bytes of an allocated block, `None` for parameters and
    /// existential blocks.
    pub fn bytes(&self) -> Option<MemSize> {
        match &self.binding {
            BlockBinding::Alloc { elems, .. } | BlockBinding::ResultAlloc { elems } => {
                Some(elems.scale(elem_bytes(self.elem)))
            }
            BlockBinding::Param { .. } | BlockBinding::Existential { .. } => None,
        }
    }
}

/// The size in bytes of one element (`bool` takes a byte).
pub fn elem_bytes(ty: ScalarTy) -> i64 {
    ty.size_in_bytes() as i64
}

/// How a block comes into being.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockBinding {
    /// `alloc elems` right before the statement that binds `before`. Memory expansion
    /// moves the allocation out of a lambda (to the SOAC's statement) and records how in
    /// `expansions`, innermost first.
    Alloc { before: VarId, elems: MemSize, expansions: Vec<Expansion> },
    /// `alloc elems` after the body's statements, for the copy of the function's result.
    ResultAlloc { elems: MemSize },
    /// The block of an entry parameter (inputs are dense and row-major).
    Param { param: VarId },
    /// A block chosen at run time: the block of whatever value `var` is bound to
    /// (`if` and `loop` results, call results, parameters of non-entry functions).
    Existential { var: VarId },
}

/// One hoisting of an allocation out of a `map`/`generate` lambda (digest §7).
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The SOAC expression, whose [`MemVar::Thread`] indexes the per-thread parts.
    pub soac: ExpId,
    /// The number of threads (the SOAC's size).
    pub n_threads: MemSize,
    /// Elements per thread, before this expansion.
    pub per_thread: MemSize,
    pub layout: Layout,
}

/// The per-thread layout of an expanded block (digest §7, with fix P4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// GPU: thread `x`'s address `a` becomes `a·y + x` (coalesced).
    #[default]
    Interleaved,
    /// CPU: thread `x`'s address `a` becomes `x·se + a` (contiguous chunks).
    Chunked,
}

/// An LMAD component fixed at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existential {
    /// The variable whose value determines it.
    pub var: VarId,
    pub role: ExistRole,
}

/// Which component of an LMAD an [`Existential`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExistRole {
    Offset,
    Stride(u32),
    /// The iteration index of a sequential combinator of the GPU IR (`map@seq`,
    /// `reduce@seq`, ...), known only as its loop runs: its parameters are rows of its
    /// arrays at this index (`crate::gpu`).
    Index,
    /// The largest size over a SegOp's points of an array each of its work-items
    /// allocates (`crate::gpu::Largest`).
    Largest,
}

/// The memory of a value, following the value's structure (an array of tuples is a
/// tuple of arrays).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum MemInfo {
    /// A scalar: no memory.
    #[default]
    Scalar,
    Array(ArrayMem),
    Tuple(Vec<MemInfo>),
}

impl MemInfo {
    /// The array leaves, in order.
    pub fn leaves(&self) -> Vec<&ArrayMem> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(info) = stack.pop() {
            match info {
                MemInfo::Scalar => {}
                MemInfo::Array(array) => out.push(array),
                MemInfo::Tuple(items) => stack.extend(items.iter().rev()),
            }
        }
        out
    }

    /// Applies `f` to every array leaf.
    pub fn map_arrays(&self, f: &mut impl FnMut(&ArrayMem) -> ArrayMem) -> MemInfo {
        match self {
            MemInfo::Scalar => MemInfo::Scalar,
            MemInfo::Array(array) => MemInfo::Array(f(array)),
            MemInfo::Tuple(items) => {
                MemInfo::Tuple(items.iter().map(|i| i.map_arrays(f)).collect())
            }
        }
    }
}

/// An array in memory: its block, its LMAD, and how the binding got it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMem {
    pub block: MemBlockId,
    /// Invariant: the rank and shape are the array's.
    pub lmad: MemLmad,
    pub how: Provenance,
}

/// How a binding obtained its memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// The operand's block, with an LMAD computed at compile time; no copy.
    View,
    /// A constructor writes a new array into a block allocated for it.
    Fresh,
    /// A copy into a block allocated for it, where a view was not possible.
    Copy(CopyReason),
    /// `xs with [i] = v` written into `xs`'s own block, with its LMAD: nothing reads
    /// `xs` afterwards (weft-core's `update_reuse`).
    InPlace,
    /// Block and existential components come from the value at run time.
    Existential,
}

/// Why a copy was inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyReason {
    /// `flatten` of a layout whose two outer dimensions do not merge into one
    /// (for example a transposed array).
    FlattenNotRepresentable,
    /// A slice with a variable stride and no start: the start depends on the stride's
    /// sign, so the LMAD is not known at compile time.
    SliceStrideUnknown,
    /// An entry result must be dense and row-major at offset 0.
    ResultNotDirect,
    /// `xs with [i] = v` could not write into `xs`'s memory: `used_later` still reads
    /// `xs` (or a value made from it), or, without one, the memory is not the update's
    /// to reuse (a parameter's, or shared with another value).
    UpdateOfLiveArray { used_later: Option<weft_core::ExpId> },
}

impl CopyReason {
    /// A sentence for a hover or an information diagnostic.
    pub fn message(&self) -> &'static str {
        match self {
            CopyReason::FlattenNotRepresentable => {
                "`flatten` is not representable as one LMAD here (the outer dimensions do not merge), so the array is copied"
            }
            CopyReason::SliceStrideUnknown => {
                "a slice with a variable stride and no start has no compile-time LMAD, so the array is copied"
            }
            CopyReason::ResultNotDirect => {
                "an entry result must be row-major at offset 0, so it is copied"
            }
            CopyReason::UpdateOfLiveArray { used_later: Some(_) } => {
                "the update copies the array: it is still used after the update"
            }
            CopyReason::UpdateOfLiveArray { used_later: None } => {
                "the update copies the array: its memory is not the update's to reuse (a parameter's, shared with another value, or read by the update itself)"
            }
        }
    }
}

/// A copy the annotation inserted, for an information diagnostic.
#[derive(Debug, Clone, PartialEq)]
pub struct ForcedCopy {
    /// The binding that is copied (for a result copy, the function's result variable).
    pub var: VarId,
    pub block: MemBlockId,
    /// The core expression (none for a result copy of an atom).
    pub origin: Option<Origin>,
    pub reason: CopyReason,
}

/// An allocation in a parallel lambda that memory expansion did not hoist.
#[derive(Debug, Clone, PartialEq)]
pub struct NotExpanded {
    pub block: MemBlockId,
    pub reason: NotExpandedReason,
}

/// Why an allocation stayed inside a lambda.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotExpandedReason {
    /// Its size depends on a value bound inside the lambda (digest D8).
    VariantSize,
    /// It is inside a branch or loop of the lambda, not at its top level.
    Nested,
    /// The lambda belongs to a `reduce` or `scan`, which has no thread index.
    NotAMap,
}
