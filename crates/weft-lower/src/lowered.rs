//! What the code generator is given (options) and what it gives (a lowered entry).

use weft_plan::{ErrorSite, Input, Output, Step};

use crate::imp::KernelImp;

/// Choices the caller makes.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bounds, division and size checks in kernels (`--unsafe` turns them off).
    pub checks: bool,
    /// The work-group size of cooperative kernels (reductions, scans).
    pub work_group: u32,
    /// The most work-groups of the first stage of a reduction or scan.
    pub reduce_groups: u32,
    /// The OpenCL C version the kernels target: 2.0 uses the generic address space
    /// where a pointer's space differs between uses, 1.2 has none (`--opencl 2.0`).
    pub target: weft_aspace::Target,
    /// The device profile whose predicted times choose between strategies (segmented
    /// reductions); `None`: the committed H100 profile, the project's target GPU
    /// (docs/costs.md, "Predictions and validation").
    pub profile: Option<&'static weft_cost::profile::DeviceProfile>,
}

impl Options {
    /// Whether the kernels run on a CPU (the profile's device kind): a core runs a
    /// work-group's items as a loop, so sequential work per item beats trees of
    /// barriers, and contiguous shares per item read its cache lines in order.
    pub fn cpu_device(&self) -> bool {
        self.profile.is_some_and(|p| p.device.kind.eq_ignore_ascii_case("cpu"))
    }

    /// Whether a work-group may wait for another that started before it (a scan's
    /// decoupled look-back): an NVIDIA GPU keeps a started group resident until it
    /// ends, so the group waited for makes progress. OpenCL promises no such thing,
    /// so other devices (POCL) get the three-stage scan.
    pub fn forward_progress(&self) -> bool {
        self.profile.is_some_and(|p| {
            p.device.kind.eq_ignore_ascii_case("gpu") && p.device.vendor.contains("NVIDIA")
        })
    }
}

impl Default for Options {
    /// Checks on, work-groups of 256, up to 1024 groups per reduction. (`weft` lets
    /// environment variables override some of these for experiments: docs/cli.md,
    /// "Environment".)
    fn default() -> Self {
        Options {
            checks: true,
            work_group: 256,
            reduce_groups: 1024,
            target: weft_aspace::Target::OpenCl12,
            profile: None,
        }
    }
}

/// A lowered entry point.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub entry: String,
    pub kernels: Vec<KernelImp>,
    /// Functions generated from user defs (none: the middle end inlines every call).
    pub functions: Vec<crate::imp::FuncImp>,
    /// Every pointer's inferred address space.
    pub spaces: crate::aspace::Spaces,
    pub inputs: Vec<Input>,
    /// The parameter each input belongs to.
    pub input_names: Vec<String>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
    pub errors: Vec<ErrorSite>,
    pub n_vars: u32,
    /// Each host variable's name (the source binding or size it holds, or what the
    /// lowering made it for: `dim`, `read`, `partial`), indexed by [`Var`].
    pub var_names: Vec<String>,
    /// Memory regions, worlds, lifetimes and transfers of the plan ([`crate::regions`]).
    pub regions: crate::regions::Regions,
    /// Static costs of the kernels and launches, symbolic in the sizes ([`crate::cost`]).
    pub costs: weft_cost::model::EntryCost,
}
