//! The [`Runtime`]: an OpenCL context and in-order queue (with profiling) on the
//! chosen device, the error buffer, and the cache of built programs; and the two
//! ways to run a plan on it, once ([`Runtime::run_plan`]) or as a benchmark
//! ([`Runtime::bench_plan`]).

use std::rc::Rc;
use std::time::{Duration, Instant};

use ocl::core::{DeviceInfo, DeviceInfoResult};
use ocl::flags::CommandQueueProperties;
use rustc_hash::FxHashMap;
use weft_plan::{ERROR_WORDS, Plan, Var};
use weft_values::Value;

use crate::buffer::{self, DeviceBuffer};
use crate::device::{self, DeviceSpec};
use crate::error::RunError;
use crate::exec::{Exec, KernelTime, Slot};
use crate::inputs::{InputBindings, check_inputs};
use crate::program::{self, BuildDiagnostics, BuiltProgram};

/// An OpenCL device ready to run plans.
pub struct Runtime {
    device: ocl::Device,
    description: String,
    context: ocl::Context,
    queue: ocl::Queue,
    error_buffer: ocl::Buffer<i64>,
    max_alloc: Option<u64>,
    /// Built programs by the hash of their source.
    programs: FxHashMap<u64, BuiltProgram>,
    n_builds: usize,
    build_diagnostics: BuildDiagnostics,
}

/// Options of [`Runtime::run_plan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Record every launch's kernel time (from OpenCL profiling events).
    pub timing: bool,
}

/// The outputs of a run, and how long it took.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResult {
    /// One value per plan output, in order (rank 0 for scalars).
    pub outputs: Vec<Value>,
    /// Every launch in order, when [`RunOptions::timing`] is set.
    pub kernel_times: Vec<KernelTime>,
    /// From the upload of the inputs to the outputs on the host (the program build
    /// not included).
    pub wall: Duration,
}

/// Options of [`Runtime::bench_plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchOptions {
    /// Runs whose times are dropped.
    pub warmup: usize,
    /// Runs whose times are kept (at least 1).
    pub reps: usize,
}

impl Default for BenchOptions {
    fn default() -> BenchOptions {
        BenchOptions { warmup: 3, reps: 20 }
    }
}

/// Times of a benchmark: per kernel, and per repetition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchResult {
    /// The device, as [`Runtime::device_description`] names it.
    pub device: String,
    pub warmup: usize,
    pub reps: usize,
    /// One per kernel that ran, in order of first launch.
    pub kernels: Vec<KernelStats>,
    /// The sum of all kernel times of one repetition.
    pub total_kernel_ns: Stats,
    /// Host wall time of one repetition: steps launched to device idle (inputs
    /// uploaded before, outputs not read).
    pub wall_ns: Stats,
}

/// One kernel's time per repetition (the sum over its launches in it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelStats {
    pub kernel: String,
    /// Launches per repetition.
    pub launches: usize,
    pub ns: Stats,
}

/// Median, minimum and maximum of per-repetition nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub median: u64,
    pub min: u64,
    pub max: u64,
}

impl Stats {
    /// The statistics of `samples` (all zero when empty); the median of an even
    /// count is the mean of the middle two.
    pub fn of(samples: &[u64]) -> Stats {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
            return Stats::default();
        };
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            // The mean of the two middle samples, without overflow.
            let (a, b) = (sorted[mid - 1], sorted[mid]);
            a / 2 + b / 2 + (a % 2 + b % 2) / 2
        };
        Stats { median, min, max }
    }
}

impl Runtime {
    /// A runtime on the device `spec` names, or the default device (`None`): the
    /// first GPU, else the first CPU device.
    pub fn new(spec: Option<DeviceSpec>) -> Result<Runtime, RunError> {
        let selected = device::select_device(spec)?;
        let context = ocl::Context::builder()
            .platform(selected.platform)
            .devices(selected.device)
            .build()
            .map_err(|error| RunError::opencl("creating an OpenCL context", error))?;
        let queue = ocl::Queue::new(
            &context,
            selected.device,
            Some(CommandQueueProperties::new().profiling()),
        )
        .map_err(|error| RunError::opencl("creating a command queue", error))?;
        let error_buffer = ocl::Buffer::<i64>::builder()
            .queue(queue.clone())
            .len(ERROR_WORDS)
            .build()
            .map_err(|error| RunError::opencl("allocating the error buffer", error))?;
        let max_alloc = match selected.device.info(DeviceInfo::MaxMemAllocSize) {
            Ok(DeviceInfoResult::MaxMemAllocSize(bytes)) => Some(bytes),
            _ => None,
        };
        Ok(Runtime {
            device: selected.device,
            description: selected.description,
            context,
            queue,
            error_buffer,
            max_alloc,
            programs: FxHashMap::default(),
            n_builds: 0,
            build_diagnostics: BuildDiagnostics::default(),
        })
    }

    /// This runtime, building its programs with `diagnostics`.
    pub fn with_build_diagnostics(self, diagnostics: BuildDiagnostics) -> Runtime {
        Runtime { build_diagnostics: diagnostics, ..self }
    }

    /// The device, as `` `NAME` (device P:D) ``.
    pub fn device_description(&self) -> &str {
        &self.description
    }

    /// How many programs this runtime has built (cache misses).
    pub fn n_builds(&self) -> usize {
        self.n_builds
    }

    /// Builds the plan's program and creates its kernels, unless a plan with the
    /// same source was prepared before. Running a plan prepares it; preparing first
    /// separates build failures from run-time errors.
    pub fn prepare(&mut self, plan: &Plan) -> Result<(), RunError> {
        self.prepared(plan)
    }

    fn prepared(&mut self, plan: &Plan) -> Result<(), RunError> {
        // A plan without kernels (an entry that only reshapes its inputs) needs no
        // program.
        if plan.kernels.is_empty() {
            return Ok(());
        }
        let hash = program::source_hash(&plan.source);
        let cached = self.programs.get(&hash).is_some_and(|built| built.source == plan.source);
        if !cached {
            let built = program::build(
                &self.context,
                &self.device,
                &self.description,
                &plan.source,
                &self.build_diagnostics,
            )?;
            self.n_builds += 1;
            self.programs.insert(hash, built);
        }
        let built = self.programs.get_mut(&hash).expect("invariant: inserted above");
        for kernel in &plan.kernels {
            built.ensure_kernel(&kernel.name, kernel.params.len())?;
        }
        Ok(())
    }

    /// Runs `plan` on `inputs`: checks them against the plan's inputs, uploads them,
    /// runs the steps, reports the first run-time error, and reads the outputs.
    pub fn run_plan(
        &mut self,
        plan: &Plan,
        inputs: Vec<Value>,
        options: &RunOptions,
    ) -> Result<RunResult, RunError> {
        let bindings = check_inputs(plan, &inputs)?;
        self.prepared(plan)?;
        let start = Instant::now();
        let mut exec = self.exec(plan, options.timing)?;
        bind_inputs(&mut exec, &bindings, &inputs, |var, _, value| {
            upload(&self.queue, self.max_alloc, var, value)
        })?;
        exec.reset_errors()?;
        exec.run_steps(&plan.steps)?;
        exec.check_errors()?;
        let outputs = exec.read_outputs()?;
        let wall = start.elapsed();
        let kernel_times = exec.take_times()?;
        Ok(RunResult { outputs, kernel_times, wall })
    }

    /// Runs `plan` `warmup + reps` times on the same inputs and returns the kernel
    /// times of the last `reps` runs. Inputs are uploaded once and copied on the
    /// device before every run (outside the timings), so a plan that writes into its
    /// inputs still sees them fresh. A run's allocations reuse the buffers of the run
    /// before (`BufferPool`), as a program that runs in a loop would.
    pub fn bench_plan(
        &mut self,
        plan: &Plan,
        inputs: Vec<Value>,
        options: &BenchOptions,
    ) -> Result<BenchResult, RunError> {
        let bindings = check_inputs(plan, &inputs)?;
        self.prepared(plan)?;
        let reps = options.reps.max(1);
        let mut pristine: FxHashMap<usize, Rc<DeviceBuffer>> = FxHashMap::default();
        for &(var, input_idx) in &bindings.arrays {
            let value = inputs.get(input_idx).expect("invariant: checked inputs");
            pristine.insert(input_idx, upload(&self.queue, self.max_alloc, var, value)?);
        }
        let mut per_rep: Vec<Vec<KernelTime>> = Vec::with_capacity(reps);
        let mut wall_ns = Vec::with_capacity(reps);
        let pool = crate::buffer::BufferPool::default();
        for rep in 0..options.warmup + reps {
            let mut exec = self.exec(plan, true)?.with_pool(&pool);
            bind_inputs(&mut exec, &bindings, &inputs, |_, input_idx, value| {
                let source = pristine.get(&input_idx).expect("invariant: uploaded above");
                let copy = DeviceBuffer::alloc_from(
                    Some(&pool),
                    &self.queue,
                    source.len_bytes,
                    value.elem_type().size_in_bytes(),
                    self.max_alloc,
                    &format!("a copy of input #{input_idx}"),
                )?;
                if source.len_bytes > 0 {
                    source
                        .buffer
                        .copy(&copy.buffer, None, Some(source.len_bytes))
                        .enq()
                        .map_err(|error| RunError::opencl("copying an input", error))?;
                }
                Ok(Rc::new(copy))
            })?;
            exec.reset_errors()?;
            exec.finish()?;
            let start = Instant::now();
            exec.run_steps(&plan.steps)?;
            exec.finish()?;
            let wall = start.elapsed();
            exec.check_errors()?;
            let times = exec.take_times()?;
            exec.release_into(&pool);
            if rep >= options.warmup {
                per_rep.push(times);
                wall_ns.push(u64::try_from(wall.as_nanos()).unwrap_or(u64::MAX));
            }
        }
        Ok(BenchResult {
            device: self.description.clone(),
            warmup: options.warmup,
            reps,
            kernels: kernel_stats(&per_rep),
            total_kernel_ns: Stats::of(
                &per_rep.iter().map(|times| times.iter().map(|t| t.ns).sum()).collect::<Vec<_>>(),
            ),
            wall_ns: Stats::of(&wall_ns),
        })
    }

    fn exec<'a>(&'a self, plan: &'a Plan, timing: bool) -> Result<Exec<'a>, RunError> {
        let kernels = if plan.kernels.is_empty() {
            Vec::new()
        } else {
            let hash = program::source_hash(&plan.source);
            let built = self.programs.get(&hash).expect("invariant: the plan was prepared");
            plan.kernels
                .iter()
                .map(|kernel| built.kernels.get(&kernel.name).expect("invariant: prepared kernels"))
                .collect()
        };
        Ok(Exec::new(plan, &self.queue, kernels, &self.error_buffer, self.max_alloc, timing))
    }
}

/// Binds the input variables: scalars and sizes directly, arrays to the buffer
/// `array_buffer` makes for them.
fn bind_inputs(
    exec: &mut Exec<'_>,
    bindings: &InputBindings,
    inputs: &[Value],
    mut array_buffer: impl FnMut(Var, usize, &Value) -> Result<Rc<DeviceBuffer>, RunError>,
) -> Result<(), RunError> {
    for &(var, scalar) in &bindings.scalars {
        exec.bind(var, Slot::Scalar(scalar))?;
    }
    for &(var, input_idx) in &bindings.arrays {
        let value = inputs.get(input_idx).expect("invariant: checked inputs");
        let buffer = array_buffer(var, input_idx, value)?;
        exec.bind(var, Slot::Buffer(buffer))?;
    }
    Ok(())
}

/// A new buffer holding `value`'s elements.
fn upload(
    queue: &ocl::Queue,
    max_alloc: Option<u64>,
    var: Var,
    value: &Value,
) -> Result<Rc<DeviceBuffer>, RunError> {
    let bytes = buffer::data_to_bytes(value.data());
    let what = format!("input v{} ({})", var.0, value.value_type());
    let device_buffer = DeviceBuffer::alloc(
        queue,
        bytes.len(),
        value.elem_type().size_in_bytes(),
        max_alloc,
        &what,
    )?;
    device_buffer.write(&bytes, &what)?;
    Ok(Rc::new(device_buffer))
}

fn kernel_stats(per_rep: &[Vec<KernelTime>]) -> Vec<KernelStats> {
    let mut names: Vec<&str> = Vec::new();
    for times in per_rep {
        for time in times {
            if !names.contains(&time.kernel.as_str()) {
                names.push(&time.kernel);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let samples: Vec<u64> = per_rep
                .iter()
                .map(|times| times.iter().filter(|t| t.kernel == name).map(|t| t.ns).sum())
                .collect();
            let launches = per_rep
                .first()
                .map_or(0, |times| times.iter().filter(|t| t.kernel == name).count());
            KernelStats { kernel: name.to_owned(), launches, ns: Stats::of(&samples) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Exec, Slot};

    #[test]
    fn stats_of_samples() {
        assert_eq!(Stats::of(&[5, 1, 3]), Stats { median: 3, min: 1, max: 5 });
        assert_eq!(Stats::of(&[4, 1, 3, 10]), Stats { median: 3, min: 1, max: 10 });
        assert_eq!(Stats::of(&[u64::MAX, u64::MAX]).median, u64::MAX);
        assert_eq!(Stats::of(&[]), Stats::default());
    }

    /// A run's allocations reuse the buffers of the run before that nothing else
    /// holds, by allocated size; a buffer still held is never handed out twice.
    #[test]
    fn a_pool_reuses_released_buffers_of_the_same_size() {
        let Ok(runtime) = Runtime::new(None) else { panic!("no OpenCL device for the tests") };
        let queue = &runtime.queue;
        let pool = crate::buffer::BufferPool::default();
        let alloc = |bytes| {
            DeviceBuffer::alloc_from(Some(&pool), queue, bytes, 4, None, "a test buffer")
                .expect("allocates")
        };
        let id = |b: &DeviceBuffer| b.buffer.as_core().as_ptr();
        let (first, held) = (alloc(4096), Rc::new(alloc(4096)));
        let (first_id, held_id) = (id(&first), id(&held));
        let plan = empty_plan(2);
        let mut exec = Exec::new(&plan, queue, Vec::new(), &runtime.error_buffer, None, false);
        exec.bind(Var(0), Slot::Buffer(Rc::new(first))).expect("binds");
        exec.bind(Var(1), Slot::Buffer(Rc::clone(&held))).expect("binds");
        exec.release_into(&pool);
        let again = alloc(4096);
        assert_eq!(id(&again), first_id, "the released buffer comes back");
        let fresh = alloc(4096);
        assert!(id(&fresh) != first_id && id(&fresh) != held_id, "a held buffer stays out");
        assert!(id(&alloc(8192)) != first_id, "sizes never mix");
    }

    /// A plan with `n_vars` variables and nothing else, to bind buffers in by hand.
    fn empty_plan(n_vars: u32) -> Plan {
        Plan {
            entry: String::new(),
            source: String::new(),
            kernels: Vec::new(),
            inputs: Vec::new(),
            input_names: Vec::new(),
            n_vars,
            steps: Vec::new(),
            outputs: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// A loop that allocates at every step (HotSpot's 360 steps, each a few 8 MB
    /// arrays) reuses the buffers of the step before instead of allocating anew.
    #[test]
    fn a_buffer_whose_variable_is_rebound_is_reused_within_the_run() {
        let Ok(runtime) = Runtime::new(None) else { panic!("no OpenCL device for the tests") };
        let queue = &runtime.queue;
        let alloc =
            || DeviceBuffer::alloc(queue, 4096, 4, None, "a test buffer").expect("allocates");
        let id = |b: &DeviceBuffer| b.buffer.as_core().as_ptr();
        let plan = empty_plan(3);
        let mut exec = Exec::new(&plan, queue, Vec::new(), &runtime.error_buffer, None, false);
        let (dead, held) = (alloc(), Rc::new(alloc()));
        let (dead_id, held_id) = (id(&dead), id(&held));
        exec.bind(Var(0), Slot::Buffer(Rc::new(dead))).expect("binds");
        exec.bind(Var(1), Slot::Buffer(Rc::clone(&held))).expect("binds");
        // Rebinding both: the first buffer is dead, the second still held elsewhere.
        exec.bind(Var(0), Slot::Scalar(weft_values::Scalar::I64(0))).expect("binds");
        exec.bind(Var(1), Slot::Scalar(weft_values::Scalar::I64(0))).expect("binds");
        assert_eq!(exec.own_pool.len(), 1, "the dead buffer is kept, the held one is not");
        let step = |var| weft_plan::Step::Alloc {
            var: Var(var),
            elem: weft_plan::Elem::I32,
            len: weft_plan::Expr::I64(1024),
        };
        exec.run_steps(&[step(2)]).expect("allocates");
        let Ok(Slot::Buffer(again)) = exec.slot(Var(2)).cloned() else { panic!("a buffer") };
        assert_eq!(id(&again), dead_id, "the dead buffer comes back");
        exec.run_steps(&[step(0)]).expect("allocates");
        let Ok(Slot::Buffer(fresh)) = exec.slot(Var(0)).cloned() else { panic!("a buffer") };
        assert!(id(&fresh) != dead_id && id(&fresh) != held_id, "a held buffer stays out");
    }
}
