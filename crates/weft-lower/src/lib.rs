//! Lowering of the core IR to kernels and a host plan (ARCHITECTURE.md, "imperative"):
//! the DPIA-style translation (seed 003) of each entry point into
//!
//! - kernels in an imperative IR ([`imp`]): commands over scalar expressions,
//!   parallel loops per level, private and local allocations, barriers, and checked
//!   failures that write the error buffer;
//! - host steps ([`weft_plan::Step`]): allocations, launches, size arithmetic,
//!   control flow.
//!
//! How: the translation stages every core variable as a host value or a kernel value
//! (`val.rs`). Arrays are memory with an LMAD (views are LMAD changes, seed 004) or
//! pull arrays (recipes, so producers fuse into their consumers, FCL). A `map` at the
//! host level becomes a kernel only where its result must be in memory; reductions and
//! scans at the host level become multi-stage kernels (`soac.rs`); code inside a kernel
//! is sequential per work-item. Calls are inlined (a deviation from ARCHITECTURE.md's
//! "defs stay OpenCL functions", recorded in docs/architecture.md).

mod arr;
pub mod aspace;
pub mod cost;
mod func;
mod gpu;
mod group;
mod host;
pub mod imp;
mod kernel;
mod matmul;
mod proven;
pub mod regions;
mod scalar;
mod soac;
#[cfg(test)]
mod tests;
mod tiles;
mod val;

use std::fmt;

use weft_core::Origin;

pub use crate::gpu::{check_gpu_entry, lower_gpu_entry};
pub use crate::host::{Lowered, Options, check_entry, lower_entry};
pub use crate::imp::{
    AtomicOp, CExpr, COp, Cmd, FParam, FuncImp, KernelImp, ParLevel, Part, Sharing, c_mem_type,
    c_type, print_func_imp, print_kernel_imp,
};

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
