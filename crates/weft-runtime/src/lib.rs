//! Runs a compiled host plan ([`weft_plan::Plan`]) on an OpenCL device through the
//! `ocl` crate, and ships the `weft-runner` binary (docs/runtime.md).
//!
//! Running code is out of process (ARCHITECTURE.md, "Decisions already taken"):
//! `weft run`, `weft test`, `weft bench` and the editor spawn `weft-runner`, so the
//! checker and the language server never link OpenCL. This library is what that
//! binary calls, and what tests call directly.
//!
//! - [`DeviceSpec`] and [`list_devices`]: which device runs the plan.
//! - [`Runtime`]: a context and a profiling queue on one device, with a cache of
//!   built programs keyed by their source.
//! - [`Runtime::run_plan`]: inputs checked and uploaded, steps run, errors from the
//!   error buffer reported, outputs read through their layouts.
//! - [`Runtime::bench_plan`]: warm-up and repeated runs, per-kernel statistics.
//! - [`calibrate`]: micro-benchmarks that measure a device profile (docs/costs.md).
//!
//! Kernel ABI: every kernel's first parameter is `__global long* weft_err`, the
//! error buffer of [`weft_plan::ERROR_WORDS`] words, zeroed once per run; then the
//! parameters of [`weft_plan::Kernel::params`] in order. A failing work-item stores
//! its 1-based error code into word 0 with `atom_cmpxchg` (first writer wins) and its
//! payload into words 1 and 2; the runner reports `plan.errors[code - 1]` rendered
//! with the payload.

mod buffer;
mod calibrate;
mod device;
mod error;
mod exec;
mod inputs;
mod layout;
mod program;
mod runtime;

pub use crate::calibrate::{CalibrateOptions, Profile, calibrate};
pub use crate::device::{
    DEVICE_ENV, DeviceInfoEntry, DeviceKind, DeviceSpec, NO_PLATFORM_HELP, PlatformInfo,
    choose_device, list_devices,
};
pub use crate::error::RunError;
pub use crate::exec::KernelTime;
pub use crate::program::{BuildDiagnostics, excerpt_for_log};
pub use crate::runtime::{
    BenchOptions, BenchResult, KernelStats, RunOptions, RunResult, Runtime, Stats,
};
