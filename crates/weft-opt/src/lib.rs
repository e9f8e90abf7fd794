//! Weft's middle end (MIDDLE.md): simplification of the core IR, and its translation
//! to the GPU IR of segmented operations.
//!
//! ```text
//! core IR ─► simplify ─► inline ─► flatten (versions) ─► fuse ─► GPU IR
//! ```
//!
//! Each step is a function with a printer for its output (`weft dump --ir opt` prints
//! the simplified core IR, `weft dump --ir gpu` the GPU IR), and a validator that the
//! tests run after every pass.

#![warn(clippy::wildcard_enum_match_arm)]

mod ir;
mod passes;
#[cfg(test)]
mod tests;

pub use crate::ir::{
    Block, BlockId, Exp, ExpId, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind,
    SegLevel, SegOp, SeqSoac, Stmt, Threshold, ThresholdId, ThresholdKind,
};
pub use crate::passes::simplify::simplify;
