//! Executing a plan's host steps: host variables, buffers, launches, reads, checks
//! and control flow, then the outputs through their layouts.
//!
//! Host variables hold a scalar or a reference-counted buffer, so `Alias` and
//! rebinding in loops share buffers without copies, and a buffer is freed when the
//! last variable that holds it is rebound.
//!
//! Errors (ARCHITECTURE.md, "Kernels"): kernels write the first failure into the
//! error buffer. The runner reads it after the run, before every `Read` (whose value
//! may steer control flow, so a failed kernel's garbage must not), and before it
//! reports a failing host check or a host division by zero, so the error reported
//! is the first in program order.
//!
//! Launches: a global size is rounded up to a multiple of the local size when one
//! is given; a launch with a zero global dimension is skipped (OpenCL refuses it).

use std::rc::Rc;

use ocl::core::ArgVal;
use weft_plan::{Arg, ERROR_WORDS, Elem, EvalError, Expr, Output, ParamKind, Plan, Step, Var};
use weft_values::{ArrayData, Scalar, Value};

use crate::buffer::{self, BufferPool, DeviceBuffer};
use crate::error::RunError;
use crate::layout::{self, Layout};

/// A host variable's value.
#[derive(Debug, Clone)]
pub(crate) enum Slot {
    Scalar(Scalar),
    Buffer(Rc<DeviceBuffer>),
}

/// The state of one run of a plan.
pub(crate) struct Exec<'a> {
    pub(crate) plan: &'a Plan,
    pub(crate) queue: &'a ocl::Queue,
    /// The plan's kernels, by index.
    kernels: Vec<&'a ocl::core::Kernel>,
    error_buffer: &'a ocl::Buffer<i64>,
    max_alloc: Option<u64>,
    /// Where allocations come from first, when runs repeat (`release_into`).
    pool: Option<&'a BufferPool>,
    /// Buffers that died during this run (a loop's previous state, say), for the
    /// run's later allocations when there is no `pool`: a loop of 360 steps then
    /// reuses a few buffers instead of allocating thousands.
    pub(crate) own_pool: BufferPool,
    vars: Vec<Option<Slot>>,
    /// `(kernel index, event)` of every launch, when timing.
    events: Option<Vec<(usize, ocl::Event)>>,
}

/// How long one launch ran on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelTime {
    /// The kernel's name.
    pub kernel: String,
    /// Nanoseconds from the start to the end of the launch (OpenCL profiling events).
    pub ns: u64,
}

impl<'a> Exec<'a> {
    pub(crate) fn new(
        plan: &'a Plan,
        queue: &'a ocl::Queue,
        kernels: Vec<&'a ocl::core::Kernel>,
        error_buffer: &'a ocl::Buffer<i64>,
        max_alloc: Option<u64>,
        timing: bool,
    ) -> Exec<'a> {
        let n_vars = usize::try_from(plan.n_vars).unwrap_or(0);
        Exec {
            plan,
            queue,
            kernels,
            error_buffer,
            max_alloc,
            pool: None,
            own_pool: BufferPool::default(),
            vars: vec![None; n_vars],
            events: timing.then(Vec::new),
        }
    }

    /// Allocations reuse `pool`'s buffers first.
    pub(crate) fn with_pool(mut self, pool: &'a BufferPool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Ends the run, giving `pool` every buffer that nothing else holds.
    pub(crate) fn release_into(self, pool: &BufferPool) {
        for slot in self.vars.into_iter().flatten() {
            if let Slot::Buffer(buffer) = slot
                && let Ok(buffer) = Rc::try_unwrap(buffer)
            {
                pool.give(buffer);
            }
        }
    }

    pub(crate) fn bind(&mut self, var: Var, slot: Slot) -> Result<(), RunError> {
        let n_vars = self.vars.len();
        let entry = self.vars.get_mut(var.0 as usize).ok_or_else(|| {
            RunError::InvalidPlan(format!("variable v{} is past `n_vars` ({n_vars})", var.0))
        })?;
        let old = entry.replace(slot);
        // A buffer that nothing holds any more is free for later allocations: the
        // queue runs in order, so a kernel that writes it again runs after every
        // kernel that read it.
        if let Some(Slot::Buffer(buffer)) = old
            && let Ok(buffer) = Rc::try_unwrap(buffer)
        {
            self.pool.unwrap_or(&self.own_pool).give(buffer);
        }
        Ok(())
    }

    /// Zeroes the error buffer (once per run).
    pub(crate) fn reset_errors(&self) -> Result<(), RunError> {
        self.error_buffer
            .write(&[0i64; ERROR_WORDS][..])
            .enq()
            .map_err(|error| RunError::opencl("clearing the error buffer", error))
    }

    /// Reads the error buffer (waiting for every command before) and reports the
    /// error a kernel wrote, if any.
    pub(crate) fn check_errors(&self) -> Result<(), RunError> {
        let mut words = vec![0i64; ERROR_WORDS];
        self.error_buffer
            .read(&mut words)
            .enq()
            .map_err(|error| RunError::opencl("reading the error buffer", error))?;
        let code = words.first().copied().unwrap_or(0);
        if code == 0 {
            return Ok(());
        }
        Err(self.error_at(code, words.get(1..).unwrap_or(&[])))
    }

    fn error_at(&self, code: i64, payload: &[i64]) -> RunError {
        let site = usize::try_from(code)
            .ok()
            .and_then(|code| code.checked_sub(1))
            .and_then(|idx| self.plan.errors.get(idx));
        match site {
            Some(site) => RunError::Program(site.render(payload)),
            None => RunError::InvalidPlan(format!(
                "error code {code} is not one of the plan's {} error sites",
                self.plan.errors.len()
            )),
        }
    }

    /// Waits for every command.
    pub(crate) fn finish(&self) -> Result<(), RunError> {
        self.queue.finish().map_err(|error| RunError::opencl("waiting for the device", error))
    }

    pub(crate) fn run_steps(&mut self, steps: &[Step]) -> Result<(), RunError> {
        for step in steps {
            self.run_step(step)?;
        }
        Ok(())
    }

    fn run_step(&mut self, step: &Step) -> Result<(), RunError> {
        match step {
            Step::Let { var, value } => {
                let value = self.eval(value)?;
                self.bind(*var, Slot::Scalar(value))
            }
            Step::Check { cond, error, payload } => {
                if self.eval_bool(cond)? {
                    return Ok(());
                }
                // A kernel's error came first in program order.
                self.check_errors()?;
                let payload =
                    payload.iter().map(|e| self.eval_i64(e)).collect::<Result<Vec<_>, _>>()?;
                Err(self.error_at(i64::from(*error), &payload))
            }
            Step::Alloc { var, elem, len } => {
                let len = self.eval_size(len, "an allocation's length")?;
                let bytes =
                    len.checked_mul(elem.size_in_bytes()).ok_or_else(|| RunError::OutOfMemory {
                        requested_bytes: u64::MAX,
                        what: format!("a buffer of {len} {} elements", elem.name()),
                        max_alloc_bytes: self.max_alloc,
                    })?;
                let buffer = DeviceBuffer::alloc_from(
                    Some(self.pool.unwrap_or(&self.own_pool)),
                    self.queue,
                    bytes,
                    elem.size_in_bytes(),
                    self.max_alloc,
                    &format!("a buffer of {len} {} elements", elem.name()),
                )?;
                self.bind(*var, Slot::Buffer(Rc::new(buffer)))
            }
            Step::Alias { var, from } => {
                let slot = self.slot(*from)?.clone();
                self.bind(*var, slot)
            }
            Step::Launch { kernel, global, local, args } => {
                self.launch(*kernel, global, local.as_deref(), args)
            }
            Step::Read { var, buf, elem, index } => {
                let value = self.read(*buf, *elem, index)?;
                self.bind(*var, Slot::Scalar(value))
            }
            Step::If { cond, then_steps, else_steps } => {
                if self.eval_bool(cond)? {
                    self.run_steps(then_steps)
                } else {
                    self.run_steps(else_steps)
                }
            }
            Step::For { index, bound, body } => {
                let bound = self.eval_i64(bound)?;
                for i in 0..bound.max(0) {
                    self.bind(*index, Slot::Scalar(Scalar::I64(i)))?;
                    self.run_steps(body)?;
                }
                Ok(())
            }
            Step::While { cond_steps, cond, body } => loop {
                self.run_steps(cond_steps)?;
                if !self.eval_bool(cond)? {
                    return Ok(());
                }
                self.run_steps(body)?;
            },
        }
    }

    pub(crate) fn slot(&self, var: Var) -> Result<&Slot, RunError> {
        self.vars
            .get(var.0 as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| RunError::InvalidPlan(format!("variable v{} is used unbound", var.0)))
    }

    fn buffer(&self, var: Var) -> Result<&Rc<DeviceBuffer>, RunError> {
        match self.slot(var)? {
            Slot::Buffer(buffer) => Ok(buffer),
            Slot::Scalar(_) => Err(RunError::InvalidPlan(format!(
                "variable v{} holds a scalar where a buffer is needed",
                var.0
            ))),
        }
    }

    pub(crate) fn eval(&self, expr: &Expr) -> Result<Scalar, RunError> {
        let lookup = |var: Var| match self.vars.get(var.0 as usize) {
            Some(Some(Slot::Scalar(scalar))) => Some(*scalar),
            _ => None,
        };
        weft_plan::eval(expr, &lookup).map_err(|error| match error {
            EvalError::DivisionByZero => match self.check_errors() {
                Err(kernel_error) => kernel_error,
                Ok(()) => {
                    RunError::Program(weft_values::RuntimeCheck::SizeDivisionByZero.words(&"", &""))
                }
            },
            EvalError::Unbound(_) | EvalError::Mismatch { .. } => {
                RunError::InvalidPlan(error.to_string())
            }
        })
    }

    /// `expr` as a scalar of `elem`, converted as `Expr::Convert` converts when the
    /// host computes it in another type (host arithmetic is `i64`).
    fn eval_as(&self, expr: &Expr, elem: Elem) -> Result<Scalar, RunError> {
        let value = self.eval(expr)?;
        if value.ty() == elem {
            return Ok(value);
        }
        self.eval(&Expr::Convert(elem, Box::new(expr.clone())))
    }

    fn eval_i64(&self, expr: &Expr) -> Result<i64, RunError> {
        match self.eval(expr)? {
            Scalar::I64(v) => Ok(v),
            other => Err(RunError::InvalidPlan(format!(
                "`{}` is a {}, not an i64",
                weft_plan::print_expr(expr),
                other.ty().name()
            ))),
        }
    }

    fn eval_bool(&self, expr: &Expr) -> Result<bool, RunError> {
        match self.eval(expr)? {
            Scalar::Bool(b) => Ok(b),
            other => Err(RunError::InvalidPlan(format!(
                "`{}` is a {}, not a bool",
                weft_plan::print_expr(expr),
                other.ty().name()
            ))),
        }
    }

    /// A non-negative size.
    fn eval_size(&self, expr: &Expr, what: &str) -> Result<usize, RunError> {
        let value = self.eval_i64(expr)?;
        usize::try_from(value).map_err(|_| {
            RunError::InvalidPlan(format!(
                "{what} `{}` is negative ({value})",
                weft_plan::print_expr(expr)
            ))
        })
    }

    fn read(&self, buf: Var, elem: Elem, index: &Expr) -> Result<Scalar, RunError> {
        let buffer = self.buffer(buf)?;
        let index = self.eval_size(index, "a read's index")?;
        let size = elem.size_in_bytes();
        let offset = index.checked_mul(size).filter(|&o| o + size <= buffer.len_bytes);
        let Some(offset) = offset else {
            return Err(RunError::InvalidPlan(format!(
                "reads element {index} of v{}, which has {} {} elements",
                buf.0,
                buffer.len_bytes / size,
                elem.name()
            )));
        };
        // A failed kernel may have left garbage that would steer control flow.
        self.check_errors()?;
        let bytes = buffer.read(offset, size)?;
        buffer::bytes_to_scalar(elem, &bytes)
            .ok_or_else(|| RunError::InvalidPlan("a read returned no element".to_owned()))
    }

    fn launch(
        &mut self,
        kernel_idx: u32,
        global: &[Expr],
        local: Option<&[Expr]>,
        args: &[Arg],
    ) -> Result<(), RunError> {
        let idx = kernel_idx as usize;
        let (Some(kernel), Some(&cl_kernel)) = (self.plan.kernels.get(idx), self.kernels.get(idx))
        else {
            return Err(RunError::InvalidPlan(format!(
                "launch of kernel #{kernel_idx}, which does not exist"
            )));
        };
        let name = kernel.name.as_str();
        if args.len() != kernel.params.len() {
            return Err(RunError::InvalidPlan(format!(
                "kernel `{name}` takes {} arguments, but its launch passes {}",
                kernel.params.len(),
                args.len()
            )));
        }
        if global.is_empty() || global.len() > 3 {
            return Err(RunError::InvalidPlan(format!(
                "kernel `{name}` is launched over {} dimensions",
                global.len()
            )));
        }
        let mut global_size = [1usize; 3];
        for (dim, expr) in global_size.iter_mut().zip(global) {
            *dim = self.eval_size(expr, "a global size")?;
        }
        let local_size = match local {
            None => None,
            Some(local) if local.len() != global.len() => {
                return Err(RunError::InvalidPlan(format!(
                    "kernel `{name}` has {} global but {} local dimensions",
                    global.len(),
                    local.len()
                )));
            }
            Some(local) => {
                let mut local_size = [1usize; 3];
                for ((dim, expr), global_dim) in
                    local_size.iter_mut().zip(local).zip(global_size.iter_mut())
                {
                    *dim = self.eval_size(expr, "a local size")?;
                    if *dim == 0 {
                        return Err(RunError::InvalidPlan(format!(
                            "kernel `{name}` has a local size of 0"
                        )));
                    }
                    *global_dim = global_dim.div_ceil(*dim).checked_mul(*dim).ok_or_else(|| {
                        RunError::InvalidPlan(format!("kernel `{name}`'s global size overflows"))
                    })?;
                }
                Some(local_size)
            }
        };
        if global_size.contains(&0) {
            return Ok(());
        }
        let set = |index: usize, result: ocl::core::Result<()>| {
            result.map_err(|error| {
                RunError::opencl(format!("setting argument {index} of kernel `{name}`"), error)
            })
        };
        set(0, ocl::core::set_kernel_arg(cl_kernel, 0, ArgVal::mem(self.error_buffer.as_core())))?;
        for (arg_idx, (arg, param)) in args.iter().zip(&kernel.params).enumerate() {
            let cl_idx = u32::try_from(arg_idx + 1).expect("invariant: at most u32 kernel params");
            match (arg, param.kind) {
                (Arg::Buffer(var), ParamKind::Buffer(_)) => {
                    let buffer = self.buffer(*var)?;
                    set(
                        arg_idx + 1,
                        ocl::core::set_kernel_arg(
                            cl_kernel,
                            cl_idx,
                            ArgVal::mem(buffer.buffer.as_core()),
                        ),
                    )?;
                }
                (Arg::Scalar { value, elem }, ParamKind::Scalar(param_elem)) => {
                    if *elem != param_elem {
                        return Err(RunError::InvalidPlan(format!(
                            "kernel `{name}`'s parameter `{}` is a {}, but its launch passes a {}",
                            param.name,
                            param_elem.name(),
                            elem.name()
                        )));
                    }
                    let value = self.eval_as(value, *elem)?;
                    set(arg_idx + 1, buffer::set_scalar_arg(cl_kernel, cl_idx, value))?;
                }
                (Arg::Local { elem, len }, ParamKind::Local(_)) => {
                    let len = self.eval_size(len, "a local buffer's length")?;
                    let bytes = len.saturating_mul(elem.size_in_bytes()).max(1);
                    set(
                        arg_idx + 1,
                        ocl::core::set_kernel_arg(cl_kernel, cl_idx, ArgVal::local::<u8>(&bytes)),
                    )?;
                }
                (arg, kind) => {
                    let passed = match arg {
                        Arg::Buffer(_) => "a buffer",
                        Arg::Scalar { .. } => "a scalar",
                        Arg::Local { .. } => "a local buffer",
                    };
                    let expected = match kind {
                        ParamKind::Buffer(_) => "a buffer",
                        ParamKind::Scalar(_) => "a scalar",
                        ParamKind::Local(_) => "a local buffer",
                    };
                    return Err(RunError::InvalidPlan(format!(
                        "kernel `{name}`'s parameter `{}` is {expected}, but its launch passes \
                         {passed}",
                        param.name
                    )));
                }
            }
        }
        let n_dims = u32::try_from(global.len()).expect("invariant: at most 3 dimensions");
        let mut event = self.events.as_ref().map(|_| ocl::Event::empty());
        enqueue(self.queue, cl_kernel, n_dims, global_size, local_size, event.as_mut()).map_err(
            |error| {
                let error = ocl::Error::from(error);
                if error.api_status() == Some(ocl::core::Status::CL_OUT_OF_RESOURCES) {
                    // Not necessarily memory: NVIDIA's driver also answers so when the
                    // launch needs more registers or local memory per work-group than a
                    // compute unit has, or when an earlier kernel of the queue faulted.
                    RunError::opencl(
                        format!(
                            "launching kernel `{name}` (the device is out of resources for \
                             it: its buffers of {}, registers or local memory per \
                             work-group, or an earlier kernel of the run failed)",
                            crate::error::human_bytes(self.kernel_buffer_bytes(args))
                        ),
                        error,
                    )
                } else if buffer::is_out_of_memory(&error) {
                    RunError::OutOfMemory {
                        requested_bytes: self.kernel_buffer_bytes(args),
                        what: format!("the buffers of kernel `{name}`"),
                        max_alloc_bytes: self.max_alloc,
                    }
                } else {
                    RunError::opencl(format!("launching kernel `{name}`"), error)
                }
            },
        )?;
        if let (Some(events), Some(event)) = (self.events.as_mut(), event) {
            events.push((idx, event));
        }
        Ok(())
    }

    fn kernel_buffer_bytes(&self, args: &[Arg]) -> u64 {
        args.iter()
            .filter_map(|arg| match arg {
                Arg::Buffer(var) => self.buffer(*var).ok(),
                Arg::Scalar { .. } | Arg::Local { .. } => None,
            })
            .map(|buffer| u64::try_from(buffer.len_bytes).unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add)
    }

    /// The kernel times of the launches so far (waits for them), in launch order.
    pub(crate) fn take_times(&mut self) -> Result<Vec<KernelTime>, RunError> {
        let Some(events) = self.events.as_mut() else { return Ok(Vec::new()) };
        let events = std::mem::take(events);
        let time = |event: &ocl::Event, info| {
            event
                .profiling_info(info)
                .and_then(|result| result.time().map_err(ocl::Error::from))
                .map_err(|error| RunError::opencl("reading a profiling event", error))
        };
        events
            .iter()
            .map(|(kernel_idx, event)| {
                let start = time(event, ocl::enums::ProfilingInfo::Start)?;
                let end = time(event, ocl::enums::ProfilingInfo::End)?;
                let kernel = self.plan.kernels.get(*kernel_idx).map_or("?", |k| k.name.as_str());
                Ok(KernelTime { kernel: kernel.to_owned(), ns: end.saturating_sub(start) })
            })
            .collect()
    }

    /// The plan's outputs.
    pub(crate) fn read_outputs(&self) -> Result<Vec<Value>, RunError> {
        self.plan.outputs.iter().map(|output| self.read_output(output)).collect()
    }

    fn read_output(&self, output: &Output) -> Result<Value, RunError> {
        match output {
            Output::Host { value, elem } => Ok(Value::scalar(self.eval_as(value, *elem)?)),
            Output::Array { buf, elem, offset, strides, shape } => {
                if strides.len() != shape.len() {
                    return Err(RunError::InvalidPlan(format!(
                        "an output has {} strides but {} dimensions",
                        strides.len(),
                        shape.len()
                    )));
                }
                let layout = Layout {
                    offset: self.eval_i64(offset)?,
                    strides: strides.iter().map(|s| self.eval_i64(s)).collect::<Result<_, _>>()?,
                    shape: shape
                        .iter()
                        .map(|d| self.eval_size(d, "an output dimension"))
                        .collect::<Result<_, _>>()?,
                };
                let buffer = self.buffer(*buf)?;
                let size = elem.size_in_bytes();
                let gather = layout.gather(buffer.len_bytes / size).map_err(|message| {
                    RunError::InvalidPlan(format!("output v{}: {message}", buf.0))
                })?;
                let data = match gather {
                    None => ArrayData::with_capacity(*elem, 0),
                    Some(gather) => {
                        let bytes = buffer
                            .read(gather.first * size, (gather.last - gather.first + 1) * size)?;
                        layout::gather(buffer::bytes_to_data(*elem, &bytes), &gather.positions)
                            .map_err(RunError::InvalidPlan)?
                    }
                };
                Value::new(layout.shape, data)
                    .map_err(|error| RunError::InvalidPlan(format!("output v{}: {error}", buf.0)))
            }
        }
    }
}

/// Enqueues `kernel`, whose arguments are all set.
#[expect(unsafe_code, reason = "ocl marks every kernel launch unsafe: kernel code is untrusted")]
fn enqueue(
    queue: &ocl::Queue,
    kernel: &ocl::core::Kernel,
    n_dims: u32,
    global: [usize; 3],
    local: Option<[usize; 3]>,
    event: Option<&mut ocl::Event>,
) -> ocl::core::Result<()> {
    // SAFETY: every argument was set just before, each to a live buffer (kept alive
    // by the host variables, and retained by OpenCL while the launch is queued) or
    // to a value of its parameter's size. What the kernel does with them is the
    // generated code's responsibility: it checks its own bounds.
    unsafe {
        ocl::core::enqueue_kernel(
            queue.as_core(),
            kernel,
            n_dims,
            None,
            &global,
            local,
            None::<()>,
            event,
        )
    }
}
