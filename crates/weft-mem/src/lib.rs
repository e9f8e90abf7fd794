//! Weft's memory layer (ARCHITECTURE.md pipeline step "mem"; seed 004, Munksgaard, Oancea and
//! Henriksen, *Compiling a functional array language with non-semantic memory information*,
//! and its digest `reference/004-lmad.md` with the fixes listed there).
//!
//! In the memory IR every array binding lives in a memory block and carries an [`Lmad`]
//! (linear memory access descriptor) that maps its multi-dimensional index to an element
//! offset in the block. Layout changes (slices, transposes, reversals, replication and most
//! reshapes) are computed on LMADs at compile time and never copy; only an operation whose
//! result is not one LMAD forces a copy, recorded as a [`ForcedCopy`].
//!
//! Pipeline ([`pipeline`]): core [`weft_core::Program`] → [`annotate`] (FUN to FUNMEM)
//! → [`expand`] (memory expansion, [`ExpandOptions`]) → [`validate`] after each pass.
//! [`pretty_mem`] prints the result (`weft dump --ir mem`: the core printer with memory as
//! its decoration, `weft_core::Annotate`), [`run_entry_on_heap`] runs it
//! against a flat heap and [`check_validity`] compares that run with the reference
//! interpreter (the paper's Definition 3.1). [`memory_of_binding`] answers the editor's
//! "what memory does this expression have" as plain data keyed by the core `Origin`.
//!
//! Architecture invariant: no salsa, no IO; LMAD components are [`weft_size::Size`]s, so
//! equality of layouts is equality of normal forms. The memory IR is side tables over the
//! core IR (no text ranges).

mod gpu;
mod heap;
mod ir;
pub mod lmad;
mod lower;
pub mod passes;
mod pretty;
mod query;
#[cfg(test)]
mod tests;
mod validate;

pub use crate::gpu::{
    GpuCopy, GpuMemFunction, GpuMemProgram, Largest, PRIVATE_LIMIT, Storage, annotate_gpu,
    pretty_gpu_mem, validate_gpu_mem,
};
pub use crate::heap::{HeapError, Validity, ValidityError, check_validity, run_entry_on_heap};
pub use crate::ir::{
    ArrayMem, BlockBinding, CopyReason, ExistId, ExistRole, Existential, Expansion, ForcedCopy,
    Layout, MemBlock, MemBlockId, MemFunction, MemInfo, MemLmad, MemProgram, MemSize, MemVar,
    NotExpanded, NotExpandedReason, Provenance, elem_bytes,
};
pub use crate::lmad::{DimSlice, Lmad, LmadDim, LmadDisplay};
pub use crate::lower::{ValueShape, annotate, annotate_function, mem_size, value_shape};
pub use crate::passes::expand::{ExpandOptions, Target, expand, expand_lmad, expand_one};
pub use crate::pretty::pretty_mem;
pub use crate::query::{
    BindingMemory, CopyInfo, LeafKind, LeafMemory, forced_copies, function_forced_copies,
    memory_of_binding, memory_of_function_var, memory_of_var,
};
pub use crate::validate::{InvariantError, validate, validate_one};

/// The memory pipeline: annotation, then expansion. In debug builds [`validate`] runs
/// after each pass and a violation panics (an internal bug, never user input).
pub fn pipeline(program: &weft_core::Program, options: ExpandOptions) -> MemProgram {
    let annotated = annotate(program);
    debug_assert_eq!(validate(program, &annotated), Vec::new(), "invariant: annotation is valid");
    let expanded = expand(program, &annotated, options);
    debug_assert_eq!(validate(program, &expanded), Vec::new(), "invariant: expansion is valid");
    expanded
}
