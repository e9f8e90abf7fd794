//! Weft's middle end (MIDDLE.md): simplification of the core IR, and its translation
//! to the GPU IR of segmented operations.
//!
//! ```text
//! core IR ─► simplify ─► inline ─► flatten (versions) ─► fuse ─► coalesce ─► GPU IR
//! ```
//!
//! Each step is a function with a printer for its output (`weft dump --ir opt` prints
//! the simplified core IR, `weft dump --ir gpu` the GPU IR), and a validator that the
//! tests run after every pass.

mod ir;
pub mod passes;
mod pretty;
#[cfg(test)]
mod tests;
mod to_core;
mod validate;
mod work;

pub use crate::ir::{
    Block, BlockId, Exp, ExpId, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind,
    SegLevel, SegOp, SeqSoac, Stmt, Threshold, ThresholdId, ThresholdKind,
};
pub use crate::passes::coalesce::coalesce;
pub use crate::passes::flatten::{
    DEFAULT_SUFF_INTRA_PAR, DEFAULT_SUFF_OUTER_PAR, DeviceShape, flatten, threshold_default,
};
pub use crate::passes::fuse::fuse;
pub use crate::passes::inline::inline_parallel_calls;
pub use crate::passes::simplify::simplify;
pub use crate::passes::simplify_gpu::simplify_gpu;
pub use crate::pretty::pretty_gpu;
pub use crate::to_core::{CoreLevels, to_core};

/// The middle end's decisions as a core program for the staged translator
/// (`weft-lower`): [`pipeline`], each threshold at the value `value` gives it, written
/// back with [`CoreLevels::Written`]. Used by `--middle-end` until code generation
/// reads the GPU IR itself (docs/middle.md).
pub fn staged_program(
    program: &weft_core::Program,
    target: Target,
    value: &dyn Fn(&Threshold) -> i64,
) -> weft_core::Program {
    let gpu = pipeline_for(program, target);
    to_core(&gpu, &|t| value(&gpu.thresholds[t]), CoreLevels::Written)
}
pub use crate::validate::{GpuInvariantError, validate_gpu};
pub use crate::work::static_work;

/// The core IR the GPU IR is made from: simplified, calls to functions with
/// combinators inlined, simplified again (`weft dump --ir opt`).
pub fn optimise_core(program: &weft_core::Program) -> weft_core::Program {
    simplify(&inline_parallel_calls(&simplify(program)))
}

/// The kind of device the middle end compiles for. Its passes are the same for both
/// except coalescing by transposition ([`coalesce`]), which only a GPU's memory system
/// pays for: a CPU core running a work-item reads that work-item's row sequentially
/// through its own cache, so the transposed copy is pure extra traffic (on POCL it made
/// a row softmax, a layer norm and a k-means assignment 2-3x slower; docs/middle.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gpu,
    Cpu,
}

/// The whole middle end for a GPU: [`pipeline_for`] with [`Target::Gpu`].
pub fn pipeline(program: &weft_core::Program) -> GpuProgram {
    pipeline_for(program, Target::Gpu)
}

/// The whole middle end: [`optimise_core`], then [`flatten`], [`fuse`], [`coalesce`]
/// (on a GPU) and [`simplify_gpu`].
pub fn pipeline_for(program: &weft_core::Program, target: Target) -> GpuProgram {
    let fused = fuse(&flatten(&optimise_core(program)));
    match target {
        Target::Gpu => simplify_gpu(&coalesce(&fused)),
        Target::Cpu => simplify_gpu(&fused),
    }
}
