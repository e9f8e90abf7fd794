//! Code generation from the middle end's GPU IR with its memory (ARCHITECTURE.md,
//! "imperative"; docs/middle.md, "Code generation from the GPU IR"): each entry point
//! of `weft_opt::pipeline_inlined`'s output, annotated by `weft_mem::annotate_gpu`,
//! becomes
//!
//! - kernels in an imperative IR ([`imp`]): commands over scalar expressions,
//!   parallel loops per level, private and local allocations, barriers, and checked
//!   failures that write the error buffer;
//! - host steps ([`weft_plan::Step`]): allocations, launches, size arithmetic,
//!   control flow.
//!
//! How (`gpu/`): every block and LMAD comes from the memory IR (weft-mem), every
//! strategy from the GPU IR (a SegOp's level and kind, a version's threshold); the
//! translation writes each SegOp as the kernels of its kind and level. Calls are
//! inlined by the middle end (a deviation from ARCHITECTURE.md's "defs stay OpenCL
//! functions", recorded in docs/architecture.md). Then the address spaces of the
//! kernels' pointers ([`aspace`]), their memory regions ([`regions`]) and static costs
//! ([`cost`]).

pub mod aspace;
pub mod cost;
mod gpu;
pub mod imp;
mod lowered;
mod proven;
pub mod regions;
mod scalar;
#[cfg(test)]
mod tests;

use std::fmt;

use weft_core::Origin;

pub use crate::gpu::{check_gpu_entry, lower_gpu_entry};
pub use crate::imp::{
    AtomicOp, CExpr, COp, Cmd, FParam, FuncImp, KernelImp, ParLevel, Part, Sharing, c_mem_type,
    c_type, print_func_imp, print_kernel_imp,
};
pub use crate::lowered::{Lowered, Options};

/// Why an entry cannot be compiled to kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    pub message: String,
    pub origin: Option<Origin>,
    /// A construct the backend does not support yet (as opposed to a compiler bug).
    pub unsupported: bool,
}

impl LowerError {
    pub(crate) fn unsupported(what: &str, origin: Option<&Origin>) -> LowerError {
        LowerError {
            message: format!("the OpenCL backend does not support {what} yet"),
            origin: origin.cloned(),
            unsupported: true,
        }
    }

    /// The error, positioned at `origin` unless it already has a position.
    pub(crate) fn placed(mut self, origin: Option<Origin>) -> LowerError {
        if self.origin.is_none() {
            self.origin = origin;
        }
        self
    }

    pub(crate) fn internal(message: impl Into<String>) -> LowerError {
        LowerError {
            message: format!("internal compiler error: {}", message.into()),
            origin: None,
            unsupported: false,
        }
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LowerError {}
