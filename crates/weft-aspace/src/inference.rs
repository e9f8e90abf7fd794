//! The entry point [`infer`] and its result, [`Inference`].

use crate::diagnostic::AspaceDiagnostic;
use crate::infer::{FuncInfo, Scheme, infer_funcs};
use crate::program::{FuncId, Options, Program, PtrId, Reason, Target};
use crate::row::Row;
use crate::space::{Space, SpaceSet};
use crate::specialise::{Instance, InstanceCtx, InstanceId, Resolved, callers, specialise};

/// Everything address-space inference found out about one program.
#[derive(Clone, Debug)]
pub struct Inference {
    program: Program,
    options: Options,
    infos: Vec<FuncInfo>,
    instances: Vec<Instance>,
    callers: Vec<Vec<(InstanceId, usize)>>,
    diagnostics: Vec<AspaceDiagnostic>,
}

/// Infers principal schemes, specialises from the kernels and checks the target's restrictions,
/// with embedding at flows. Never panics, whatever `program` contains.
pub fn infer(program: &Program, target: Target) -> Inference {
    infer_with(program, &Options { target, ..Options::default() })
}

/// [`infer`] with explicit [`Options`].
pub fn infer_with(program: &Program, options: &Options) -> Inference {
    let mut diagnostics = Vec::new();
    let infos = infer_funcs(program, options, &mut diagnostics);
    let instances = specialise(program, &infos, options.target, &mut diagnostics);
    let callers = callers(&instances);
    // Stable by function, keeping the phase order inside one function.
    diagnostics.sort_by_key(|diag| diag.func);
    Inference {
        program: program.clone(),
        options: *options,
        infos,
        instances,
        callers,
        diagnostics,
    }
}

impl Inference {
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The principal scheme of `func`.
    ///
    /// # Panics
    /// If `func` is not a function of the inferred program.
    pub fn scheme(&self, func: FuncId) -> &Scheme {
        &self.infos[func.0 as usize].scheme
    }

    /// `ptr`'s row in `func`'s scheme variables (closed for kernels and for pointers that never
    /// meet a parameter); `None` for an out-of-range id.
    pub fn row(&self, func: FuncId, ptr: PtrId) -> Option<Row> {
        self.infos.get(func.0 as usize)?.rows.get(ptr.0 as usize).copied()
    }

    /// Every reachable (function, instantiation) from the kernels, kernels first, then in
    /// worklist order.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// # Panics
    /// If `instance` is out of range.
    pub fn instance(&self, instance: InstanceId) -> &Instance {
        &self.instances[instance.0 as usize]
    }

    /// The instance of a kernel.
    pub fn kernel_instance(&self, func: FuncId) -> Option<InstanceId> {
        self.instances
            .iter()
            .position(|instance| instance.func == func)
            .map(|idx| InstanceId(idx as u32))
    }

    /// The closed row of `ptr` in `instance` (`{}` for an out-of-range id).
    pub fn row_in(&self, instance: InstanceId, ptr: PtrId) -> SpaceSet {
        self.instances
            .get(instance.0 as usize)
            .and_then(|instance| instance.rows.get(ptr.0 as usize))
            .copied()
            .unwrap_or(SpaceSet::EMPTY)
    }

    /// The space `ptr` has in `instance`: a singleton after specialisation (a `{}` row is
    /// `private`), or `Generic` (see [`Resolved::Generic`]).
    pub fn space_of(&self, instance: InstanceId, ptr: PtrId) -> Resolved {
        Resolved::of(self.row_in(instance, ptr))
    }

    /// The instance the call at `fact_idx` of `instance`'s function calls; `None` if that fact
    /// is not an active call or the call was refused (OpenCL 1.2 variant instantiation).
    pub fn callee_instance(&self, instance: InstanceId, fact_idx: usize) -> Option<InstanceId> {
        self.instances.get(instance.0 as usize)?.callees.get(fact_idx).copied().flatten()
    }

    /// Whether fact `fact_idx` of `func` was used (valid and not a recursive call).
    pub fn is_active(&self, func: FuncId, fact_idx: usize) -> bool {
        self.infos
            .get(func.0 as usize)
            .and_then(|info| info.active.get(fact_idx))
            .copied()
            .unwrap_or(false)
    }

    pub fn diagnostics(&self) -> &[AspaceDiagnostic] {
        &self.diagnostics
    }

    /// Whether inference reported no diagnostic (the backend may emit code).
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// Why `ptr` has its space in `instance`: for each label of its row (in ID order), the chain
    /// from the allocation, parameter or cast that introduced it through every flow and call.
    /// A `{}` row (private by default) is explained by the pointer's own declaration.
    pub fn explain(&self, instance: InstanceId, ptr: PtrId) -> Vec<Reason> {
        let set = self.row_in(instance, ptr);
        let mut chain = Vec::new();
        for label in set.iter() {
            chain.extend(self.explain_label(instance, ptr, label));
        }
        if set.is_empty()
            && let Some(ptr) = self.instances.get(instance.0 as usize).and_then(|instance| {
                self.program.func(instance.func).and_then(|func| func.ptr(ptr))
            })
        {
            chain.push(ptr.reason.clone());
        }
        chain
    }

    /// The chain for one label of `ptr` in `instance`; empty if the row lacks it.
    pub fn explain_label(&self, instance: InstanceId, ptr: PtrId, label: Space) -> Vec<Reason> {
        if !self.row_in(instance, ptr).contains(label) {
            return Vec::new();
        }
        let ctx = InstanceCtx {
            program: &self.program,
            infos: &self.infos,
            instances: &self.instances,
            callers: &self.callers,
        };
        ctx.trace(instance, ptr, label).map(|trace| trace.chain).unwrap_or_default()
    }
}
