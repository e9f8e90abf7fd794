//! `weft-runner calibrate`: micro-benchmarks that measure a device profile, the
//! machine model the cost model predicts times from (seed 002 §8.3; docs/costs.md).
//!
//! Each benchmark is an OpenCL kernel of [`SOURCE`] (or [`SOURCE_F64`]), timed with
//! profiling events on an in-order queue: warm-up runs, then `reps` runs, and the
//! median. Every kernel's result is checked on the host (all of it for the copies,
//! a sample for the others), so a miscompiled benchmark fails instead of reporting
//! a rate. Sizes depend on the device kind: a GPU needs buffers far beyond its L2
//! cache, while a CPU device of POCL needs smaller ones to finish in minutes.
//!
//! The JSON written is `weft_cost::profile::DeviceProfile`'s format 2: this crate
//! does not depend on weft-cost (the runner links no compiler crate), so the types
//! below mirror it field for field, and `weft calibrate` reads the output back
//! through weft-cost, which rejects any field it does not know.

use std::time::Instant;

use ocl::core::{
    ArgVal, DeviceInfo, DeviceInfoResult, KernelWorkGroupInfo, KernelWorkGroupInfoResult,
};
use ocl::enums::ProfilingInfo;
use ocl::flags::CommandQueueProperties;
use serde::Serialize;

use crate::device::{self, DeviceSpec};
use crate::error::RunError;
use crate::program;

mod operations;

/// The profile format written ([`weft_cost::profile::FORMAT`]).
const FORMAT: u32 = 2;

/// Words (32-bit) of the local-memory benchmark's `__local` array: 16 KiB, within the
/// 32 KiB every OpenCL 1.2 device has.
const LOCAL_WORDS: u32 = 4096;

/// Strides, in 32-bit elements, of the strided global and local benchmarks.
const STRIDES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Independent multiply-add chains per work-item in the arithmetic benchmarks.
const MAD_CHAINS: u32 = 8;

/// The benchmark kernels (OpenCL C 1.2).
const SOURCE: &str = r#"
#define LOCAL_WORDS 4096u

__kernel void empty(void) {}

__kernel void copy(__global const uint* in, __global uint* out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}

/* Work-item i reads element (i * stride) mod n + (i * stride) / n of n = 2^shift
   elements (mask = n - 1), so neighbours are `stride` apart and every element is
   read once. */
__kernel void strided_copy(__global const uint* in, __global uint* out, ulong stride,
                           uint shift, ulong mask) {
    ulong i = get_global_id(0);
    ulong j = i * stride;
    out[i] = in[(j & mask) + (j >> shift)];
}

__kernel void local_read(__global uint* out, uint stride, uint iters) {
    __local uint words[LOCAL_WORDS];
    uint lid = get_local_id(0);
    uint size = get_local_size(0);
    for (uint w = lid; w < LOCAL_WORDS; w += size) {
        words[w] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint base = lid * stride;
    uint a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (uint k = 0; k < iters; k += 4) {
        a0 += words[(base + k) & (LOCAL_WORDS - 1)];
        a1 += words[(base + k + 1) & (LOCAL_WORDS - 1)];
        a2 += words[(base + k + 2) & (LOCAL_WORDS - 1)];
        a3 += words[(base + k + 3) & (LOCAL_WORDS - 1)];
    }
    out[get_global_id(0)] = a0 + a1 + a2 + a3;
}

__kernel void mad_f32(__global float* out, float b, float c, uint iters) {
    float x0 = (float)(get_global_id(0) & 255) * (1.0f / 256.0f);
    float x1 = x0 + 0.125f, x2 = x0 + 0.25f, x3 = x0 + 0.375f;
    float x4 = x0 + 0.5f, x5 = x0 + 0.625f, x6 = x0 + 0.75f, x7 = x0 + 0.875f;
    for (uint k = 0; k < iters; k++) {
        x0 = mad(x0, b, c); x1 = mad(x1, b, c); x2 = mad(x2, b, c); x3 = mad(x3, b, c);
        x4 = mad(x4, b, c); x5 = mad(x5, b, c); x6 = mad(x6, b, c); x7 = mad(x7, b, c);
    }
    out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
"#;

/// The `double` benchmark, built only on devices with `double`.
const SOURCE_F64: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void mad_f64(__global double* out, double b, double c, uint iters) {
    double x0 = (double)(get_global_id(0) & 255) * (1.0 / 256.0);
    double x1 = x0 + 0.125, x2 = x0 + 0.25, x3 = x0 + 0.375;
    double x4 = x0 + 0.5, x5 = x0 + 0.625, x6 = x0 + 0.75, x7 = x0 + 0.875;
    for (uint k = 0; k < iters; k++) {
        x0 = mad(x0, b, c); x1 = mad(x1, b, c); x2 = mad(x2, b, c); x3 = mad(x3, b, c);
        x4 = mad(x4, b, c); x5 = mad(x5, b, c); x6 = mad(x6, b, c); x7 = mad(x7, b, c);
    }
    out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
"#;

/// The multiply-add's constants: `x = x * 0.999 + 0.001` converges to 1, so values
/// stay normal however many iterations run.
const MAD_B: f64 = 0.999;
const MAD_C: f64 = 0.001;

/// Options of [`calibrate`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CalibrateOptions {
    /// Fewer and smaller runs (seconds instead of minutes on POCL): for tests.
    pub quick: bool,
    /// Measured runs per number; default 20 on GPUs, 11 on other devices, 5 quick.
    pub reps: Option<usize>,
}

/// The measured profile (`weft_cost::profile::DeviceProfile`, format 2).
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    format: u32,
    tool: String,
    measured: String,
    quick: bool,
    reps: u32,
    device: DeviceFacts,
    global: GlobalMemory,
    local: LocalMemory,
    compute: Compute,
    launch: Launch,
    transfer: Transfers,
    operations: operations::Operations,
}

impl Profile {
    /// The profile as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("invariant: a profile is plain data")
    }
}

#[derive(Debug, Clone, Serialize)]
struct DeviceFacts {
    name: String,
    vendor: String,
    platform: String,
    platform_version: String,
    driver_version: String,
    opencl_version: String,
    kind: String,
    compute_units: u32,
    max_clock_mhz: u32,
    max_work_group_size: u64,
    simd_width: u64,
    local_mem_bytes: u64,
    max_constant_buffer_bytes: u64,
    max_constant_args: u32,
    global_mem_bytes: u64,
    max_mem_alloc_bytes: u64,
    global_mem_cache_bytes: u64,
    global_mem_cacheline_bytes: u32,
    fp64: bool,
    preferred_vector_width: VectorWidths,
    native_vector_width: VectorWidths,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct VectorWidths {
    char: u32,
    short: u32,
    int: u32,
    long: u32,
    float: u32,
    double: u32,
}

#[derive(Debug, Clone, Serialize)]
struct GlobalMemory {
    bytes_per_s: f64,
    latency_s: f64,
    largest_bytes: u64,
    largest_bytes_per_s: f64,
    copy_curve: Vec<Sample>,
    strided_bytes: u64,
    strided: Vec<StridePoint>,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Sample {
    bytes: u64,
    seconds: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct StridePoint {
    stride: u32,
    bytes_per_s: f64,
    slowdown: f64,
}

#[derive(Debug, Clone, Serialize)]
struct LocalMemory {
    bytes_per_s: f64,
    strided: Vec<StridePoint>,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Compute {
    f32_flops: f64,
    f64_flops: Option<f64>,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct Launch {
    kernel_s: f64,
    back_to_back_s: f64,
    wall_s: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Transfers {
    host_to_device: Transfer,
    device_to_host: Transfer,
}

#[derive(Debug, Clone, Serialize)]
struct Transfer {
    bytes_per_s: f64,
    latency_s: f64,
    wall_bytes_per_s: f64,
    wall_latency_s: f64,
    curve: Vec<TransferSample>,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct TransferSample {
    bytes: u64,
    seconds: f64,
    wall_seconds: f64,
}

/// Sizes and repetitions, by device kind.
#[derive(Debug, Clone, Copy)]
struct Plan {
    warmup: usize,
    reps: usize,
    /// The smallest and largest buffer of the copy curve and the transfers, in bytes
    /// (powers of two; the curve goes up by factors of 4).
    smallest_buffer: usize,
    largest_buffer: usize,
    /// The buffer of the strided benchmark.
    strided_buffer: usize,
    /// The time one run of an arithmetic or local-memory benchmark should take.
    target_s: f64,
    /// Work-items of the arithmetic benchmarks, per compute unit.
    compute_items_per_unit: usize,
    /// Work-groups of the local-memory benchmark, per compute unit.
    local_groups_per_unit: usize,
    /// The work-group size of every kernel but the empty one: 256 (what generated
    /// kernels use), or the device's largest power of two below that.
    group_size: usize,
}

impl Plan {
    fn new(kind: &str, facts: &DeviceFacts, options: &CalibrateOptions) -> Plan {
        let gpu = kind == "gpu";
        let wanted_largest: usize = match (options.quick, gpu) {
            (true, _) => 1 << 20,
            (false, true) => 256 << 20,
            (false, false) => 64 << 20,
        };
        // Two buffers of the largest size, within one allocation and an eighth of the
        // device's memory.
        let limit = facts.max_mem_alloc_bytes.min(facts.global_mem_bytes / 8);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX).max(1 << 16);
        let largest = power_of_two_at_most(wanted_largest.min(limit));
        let strided_buffer = match (options.quick, gpu) {
            (true, _) => 1 << 20,
            (false, true) => largest,
            (false, false) => largest.min(16 << 20),
        };
        let default_reps = match (options.quick, gpu) {
            (true, _) => 5,
            (false, true) => 20,
            (false, false) => 11,
        };
        let max_group = usize::try_from(facts.max_work_group_size).unwrap_or(1);
        Plan {
            warmup: if options.quick {
                1
            } else if gpu {
                3
            } else {
                2
            },
            reps: options.reps.unwrap_or(default_reps).max(1),
            smallest_buffer: 4096,
            largest_buffer: largest.max(4096),
            strided_buffer: power_of_two_at_most(strided_buffer.min(largest)).max(4096),
            target_s: match (options.quick, gpu) {
                (true, true) => 0.5e-3,
                (true, false) => 5e-3,
                (false, true) => 2e-3,
                (false, false) => 20e-3,
            },
            compute_items_per_unit: if gpu { max_group.clamp(1, 1024) * 4 } else { 1024 },
            local_groups_per_unit: if gpu { 8 } else { 2 },
            group_size: power_of_two_at_most(max_group.clamp(1, 256)),
        }
    }

    /// The buffer sizes of the copy curve and the transfers.
    fn curve_sizes(&self) -> Vec<usize> {
        let mut sizes = Vec::new();
        let mut size = self.smallest_buffer;
        while size < self.largest_buffer {
            sizes.push(size);
            size *= 4;
        }
        sizes.push(self.largest_buffer);
        sizes
    }
}

fn power_of_two_at_most(n: usize) -> usize {
    if n == 0 { 1 } else { 1 << (usize::BITS - 1 - n.leading_zeros()) }
}

/// Measures the device `spec` names (or the default device), reporting each step
/// through `progress`.
pub fn calibrate(
    spec: Option<DeviceSpec>,
    options: &CalibrateOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Profile, RunError> {
    let selected = device::select_device(spec)?;
    let context = ocl::Context::builder()
        .platform(selected.platform)
        .devices(selected.device)
        .build()
        .map_err(|error| RunError::opencl("creating an OpenCL context", error))?;
    let queue =
        ocl::Queue::new(&context, selected.device, Some(CommandQueueProperties::new().profiling()))
            .map_err(|error| RunError::opencl("creating a command queue", error))?;
    let mut facts = device_facts(&selected.platform, &selected.device);
    progress(&format!(
        "calibrating {} ({}, {} compute units, {} MHz)",
        selected.description, facts.platform, facts.compute_units, facts.max_clock_mhz
    ));
    let built = program::build(
        &context,
        &selected.device,
        &selected.description,
        SOURCE,
        &Default::default(),
    )?;
    let kernel = |name: &str| {
        ocl::core::create_kernel(&built.program, name)
            .map_err(|error| RunError::opencl(format!("creating the kernel `{name}`"), error))
    };
    let kernels = Kernels {
        empty: kernel("empty")?,
        copy: kernel("copy")?,
        strided_copy: kernel("strided_copy")?,
        local_read: kernel("local_read")?,
        mad_f32: kernel("mad_f32")?,
    };
    facts.simd_width = match ocl::core::get_kernel_work_group_info(
        &kernels.copy,
        selected.device,
        KernelWorkGroupInfo::PreferredWorkGroupSizeMultiple,
    ) {
        Ok(KernelWorkGroupInfoResult::PreferredWorkGroupSizeMultiple(n)) => n as u64,
        _ => 1,
    };
    let plan = Plan::new(&facts.kind, &facts, options);
    let mut bench = Bench { queue: &queue, warmup: plan.warmup, reps: plan.reps, progress };

    let launch = bench.launch(&kernels.empty)?;
    let global = bench.global_memory(&kernels, &plan)?;
    let local = bench.local_memory(&kernels.local_read, &facts, &plan)?;
    let f32_flops = bench.mad_rate(&kernels.mad_f32, Precision::F32, &facts, &plan)?;
    let f64_flops = if facts.fp64 {
        let built = program::build(
            &context,
            &selected.device,
            &selected.description,
            SOURCE_F64,
            &Default::default(),
        )?;
        let mad_f64 = ocl::core::create_kernel(&built.program, "mad_f64")
            .map_err(|error| RunError::opencl("creating the kernel `mad_f64`", error))?;
        Some(bench.mad_rate(&mad_f64, Precision::F64, &facts, &plan)?)
    } else {
        bench.report("f64: the device has no `double`, not measured");
        None
    };
    let built = program::build(
        &context,
        &selected.device,
        &selected.description,
        operations::SOURCE,
        &Default::default(),
    )?;
    let operation_kernels = operations::OperationKernels::create(&built.program)?;
    let operations =
        bench.operations(&operation_kernels, &kernels.empty, facts.compute_units, &plan)?;
    let transfer = bench.transfers(&plan)?;
    Ok(Profile {
        format: FORMAT,
        tool: concat!("weft-runner ", env!("CARGO_PKG_VERSION")).to_owned(),
        measured: utc_date(std::time::SystemTime::now()),
        quick: options.quick,
        reps: u32::try_from(plan.reps).unwrap_or(u32::MAX),
        device: facts,
        global,
        local,
        compute: Compute { f32_flops, f64_flops },
        launch,
        transfer,
        operations,
    })
}

struct Kernels {
    empty: ocl::core::Kernel,
    copy: ocl::core::Kernel,
    strided_copy: ocl::core::Kernel,
    local_read: ocl::core::Kernel,
    mad_f32: ocl::core::Kernel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    F32,
    F64,
}

/// The most iterations an arithmetic or local-memory benchmark runs.
const MAX_ITERS: u32 = 1 << 24;

/// Runs and times kernels on one queue.
struct Bench<'a> {
    queue: &'a ocl::Queue,
    warmup: usize,
    reps: usize,
    progress: &'a mut dyn FnMut(&str),
}

impl Bench<'_> {
    fn report(&mut self, message: &str) {
        (self.progress)(message);
    }

    fn finish(&self) -> Result<(), RunError> {
        self.queue.finish().map_err(|error| RunError::opencl("waiting for the device", error))
    }

    /// The median time of `reps` runs of `kernel` (its arguments set) after
    /// `warmup` runs, from profiling events.
    fn time_kernel(
        &self,
        kernel: &ocl::core::Kernel,
        global: usize,
        local: Option<usize>,
    ) -> Result<f64, RunError> {
        let mut events = Vec::with_capacity(self.warmup + self.reps);
        for _ in 0..self.warmup + self.reps {
            let mut event = ocl::Event::empty();
            enqueue(self.queue, kernel, global, local, Some(&mut event))?;
            events.push(event);
        }
        self.finish()?;
        let times = events
            .get(self.warmup..)
            .unwrap_or_default()
            .iter()
            .map(event_seconds)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(median(times))
    }

    /// One run's time.
    fn time_once(
        &self,
        kernel: &ocl::core::Kernel,
        global: usize,
        local: Option<usize>,
    ) -> Result<f64, RunError> {
        let mut event = ocl::Event::empty();
        enqueue(self.queue, kernel, global, local, Some(&mut event))?;
        self.finish()?;
        event_seconds(&event)
    }

    /// The iterations (a multiple of 4) at which one run of `kernel` takes about
    /// `target_s`, set through `set_iters` (which also leaves them set).
    fn adapt_iters(
        &self,
        kernel: &ocl::core::Kernel,
        global: usize,
        local: Option<usize>,
        target_s: f64,
        set_iters: &dyn Fn(u32) -> Result<(), RunError>,
    ) -> Result<u32, RunError> {
        let mut iters = 16;
        set_iters(iters)?;
        // The first run may include the kernel's compilation (POCL compiles per
        // work-group size at the first launch).
        self.time_once(kernel, global, local)?;
        loop {
            set_iters(iters)?;
            let seconds = self.time_once(kernel, global, local)?;
            if seconds >= target_s || iters >= MAX_ITERS {
                return Ok(iters);
            }
            let factor = (target_s / seconds.max(1e-7)).clamp(2.0, 64.0);
            iters = ((f64::from(iters) * factor) as u32).next_multiple_of(4).min(MAX_ITERS);
        }
    }

    fn launch(&mut self, empty: &ocl::core::Kernel) -> Result<Launch, RunError> {
        let kernel_s = self.time_kernel(empty, 1, None)?;
        // Back to back: the intervals between the starts of queued launches.
        let n_launches = (self.reps * 5).max(50);
        let mut events = Vec::with_capacity(n_launches);
        for _ in 0..n_launches {
            let mut event = ocl::Event::empty();
            enqueue(self.queue, empty, 1, None, Some(&mut event))?;
            events.push(event);
        }
        self.finish()?;
        let starts = events
            .iter()
            .map(|event| event_time(event, ProfilingInfo::Start))
            .collect::<Result<Vec<_>, _>>()?;
        let intervals: Vec<f64> = starts
            .windows(2)
            .skip(self.warmup)
            .map(|pair| pair[1].saturating_sub(pair[0]) as f64 * 1e-9)
            .collect();
        let back_to_back_s = median(intervals);
        let mut walls = Vec::with_capacity(self.reps);
        for rep in 0..self.warmup + self.reps {
            let start = Instant::now();
            enqueue(self.queue, empty, 1, None, None)?;
            self.finish()?;
            if rep >= self.warmup {
                walls.push(start.elapsed().as_secs_f64());
            }
        }
        let wall_s = median(walls);
        self.report(&format!(
            "launch: empty kernel {} (events), {} back to back, {} wall",
            seconds(kernel_s),
            seconds(back_to_back_s),
            seconds(wall_s)
        ));
        Ok(Launch { kernel_s, back_to_back_s, wall_s })
    }

    fn global_memory(&mut self, kernels: &Kernels, plan: &Plan) -> Result<GlobalMemory, RunError> {
        let largest = plan.largest_buffer.max(plan.strided_buffer);
        let n_max = largest / 4;
        let host: Vec<u32> = (0..n_max).map(|i| i as u32).collect();
        let input = alloc::<u32>(self.queue, n_max, "the benchmark's input")?;
        input
            .write(&host)
            .enq()
            .map_err(|error| RunError::opencl("uploading the benchmark's input", error))?;
        let output = alloc::<u32>(self.queue, n_max, "the benchmark's output")?;
        set_arg(&kernels.copy, 0, ArgVal::mem(input.as_core()))?;
        set_arg(&kernels.copy, 1, ArgVal::mem(output.as_core()))?;
        let mut curve = Vec::new();
        for size in plan.curve_sizes() {
            let n = size / 4;
            let seconds_taken = self.time_kernel(&kernels.copy, n, Some(plan.group_size))?;
            let bytes = 2 * size as u64;
            self.report(&format!(
                "global copy of {}: {} ({})",
                human_bytes(size as u64),
                seconds(seconds_taken),
                rate(bytes as f64 / seconds_taken, "B/s")
            ));
            curve.push(Sample { bytes, seconds: seconds_taken });
            if size == plan.largest_buffer {
                check_u32("copy", &read_u32(&output, n)?, |i| i as u32)?;
            }
        }
        let (latency_s, bytes_per_s) = fit_latency_bandwidth(
            &curve.iter().map(|sample| (sample.bytes as f64, sample.seconds)).collect::<Vec<_>>(),
        );
        let last = curve.last().copied().unwrap_or(Sample { bytes: 0, seconds: 0.0 });
        self.report(&format!(
            "global copy fit: {} + bytes / {}",
            seconds(latency_s),
            rate(bytes_per_s, "B/s")
        ));

        let n = plan.strided_buffer / 4;
        let shift = n.trailing_zeros();
        let mask = (n - 1) as u64;
        set_arg(&kernels.strided_copy, 0, ArgVal::mem(input.as_core()))?;
        set_arg(&kernels.strided_copy, 1, ArgVal::mem(output.as_core()))?;
        set_arg(&kernels.strided_copy, 3, ArgVal::scalar(&shift))?;
        set_arg(&kernels.strided_copy, 4, ArgVal::scalar(&mask))?;
        let strided_bytes = 2 * plan.strided_buffer as u64;
        let mut strided = Vec::new();
        let mut stride_one_s = None;
        for stride in STRIDES {
            set_arg(&kernels.strided_copy, 2, ArgVal::scalar(&u64::from(stride)))?;
            let seconds_taken =
                self.time_kernel(&kernels.strided_copy, n, Some(plan.group_size))?;
            let base = *stride_one_s.get_or_insert(seconds_taken);
            let point = StridePoint {
                stride,
                bytes_per_s: strided_bytes as f64 / seconds_taken,
                slowdown: seconds_taken / base,
            };
            self.report(&format!(
                "global strided read, stride {stride}: {} ({}, {:.2}x stride 1)",
                seconds(seconds_taken),
                rate(point.bytes_per_s, "B/s"),
                point.slowdown
            ));
            let stride = u64::from(stride);
            check_u32("strided_copy", &read_u32(&output, n)?, |i| {
                let j = i as u64 * stride;
                ((j & mask) + (j >> shift)) as u32
            })?;
            strided.push(point);
        }
        Ok(GlobalMemory {
            bytes_per_s,
            latency_s,
            largest_bytes: last.bytes,
            largest_bytes_per_s: last.bytes as f64 / last.seconds,
            copy_curve: curve,
            strided_bytes,
            strided,
        })
    }

    fn local_memory(
        &mut self,
        kernel: &ocl::core::Kernel,
        facts: &DeviceFacts,
        plan: &Plan,
    ) -> Result<LocalMemory, RunError> {
        let local_size = plan.group_size;
        let global = facts.compute_units as usize * plan.local_groups_per_unit * local_size;
        let output = alloc::<u32>(self.queue, global, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(output.as_core()))?;
        set_arg(kernel, 1, ArgVal::scalar(&1u32))?;
        let iters =
            self.adapt_iters(kernel, global, Some(local_size), plan.target_s, &|iters| {
                set_arg(kernel, 2, ArgVal::scalar(&iters))
            })?;
        let bytes = (global as f64) * f64::from(iters) * 4.0;
        let mut strided = Vec::new();
        let mut stride_one_s = None;
        for stride in STRIDES {
            set_arg(kernel, 1, ArgVal::scalar(&stride))?;
            let seconds_taken = self.time_kernel(kernel, global, Some(local_size))?;
            let base = *stride_one_s.get_or_insert(seconds_taken);
            let point = StridePoint {
                stride,
                bytes_per_s: bytes / seconds_taken,
                slowdown: seconds_taken / base,
            };
            self.report(&format!(
                "local read, stride {stride}: {} ({}, {:.2}x stride 1)",
                seconds(seconds_taken),
                rate(point.bytes_per_s, "B/s"),
                point.slowdown
            ));
            let results = read_u32(&output, global)?;
            for idx in sample_indices(global) {
                let lid = (idx % local_size) as u32;
                let expected = local_read_sum(lid * stride, iters);
                let got = results.get(idx).copied().unwrap_or_default();
                if got != expected {
                    return Err(wrong_result("local_read", idx, &got, &expected));
                }
            }
            strided.push(point);
        }
        let bytes_per_s = strided.first().map_or(0.0, |point| point.bytes_per_s);
        Ok(LocalMemory { bytes_per_s, strided })
    }

    fn mad_rate(
        &mut self,
        kernel: &ocl::core::Kernel,
        precision: Precision,
        facts: &DeviceFacts,
        plan: &Plan,
    ) -> Result<f64, RunError> {
        let global = facts.compute_units as usize * plan.compute_items_per_unit;
        let output = match precision {
            Precision::F32 => {
                Output::F32(alloc::<f32>(self.queue, global, "the benchmark's output")?)
            }
            Precision::F64 => {
                Output::F64(alloc::<f64>(self.queue, global, "the benchmark's output")?)
            }
        };
        match &output {
            Output::F32(buffer) => {
                set_arg(kernel, 0, ArgVal::mem(buffer.as_core()))?;
                set_arg(kernel, 1, ArgVal::scalar(&(MAD_B as f32)))?;
                set_arg(kernel, 2, ArgVal::scalar(&(MAD_C as f32)))?;
            }
            Output::F64(buffer) => {
                set_arg(kernel, 0, ArgVal::mem(buffer.as_core()))?;
                set_arg(kernel, 1, ArgVal::scalar(&MAD_B))?;
                set_arg(kernel, 2, ArgVal::scalar(&MAD_C))?;
            }
        }
        let local = Some(plan.group_size);
        let iters = self.adapt_iters(kernel, global, local, plan.target_s, &|iters| {
            set_arg(kernel, 3, ArgVal::scalar(&iters))
        })?;
        let seconds_taken = self.time_kernel(kernel, global, local)?;
        let flops = global as f64 * f64::from(iters) * f64::from(MAD_CHAINS) * 2.0 / seconds_taken;
        let name = match precision {
            Precision::F32 => "mad_f32",
            Precision::F64 => "mad_f64",
        };
        self.report(&format!(
            "{name}: {} for {global} work-items x {iters} iterations ({})",
            seconds(seconds_taken),
            rate(flops, "FLOP/s")
        ));
        for idx in sample_indices(global) {
            let (got, expected, tolerance) =
                match &output {
                    Output::F32(buffer) => {
                        let mut value = [0f32];
                        buffer.read(&mut value[..]).offset(idx).enq().map_err(|error| {
                            RunError::opencl("reading a benchmark's result", error)
                        })?;
                        (f64::from(value[0]), f64::from(mad_chains_f32(idx, iters)), 1e-3)
                    }
                    Output::F64(buffer) => {
                        let mut value = [0f64];
                        buffer.read(&mut value[..]).offset(idx).enq().map_err(|error| {
                            RunError::opencl("reading a benchmark's result", error)
                        })?;
                        (value[0], mad_chains_f64(idx, iters), 1e-9)
                    }
                };
            let close = (got - expected).abs() <= tolerance * expected.abs();
            if !close {
                return Err(wrong_result(name, idx, &got, &expected));
            }
        }
        Ok(flops)
    }

    fn transfers(&mut self, plan: &Plan) -> Result<Transfers, RunError> {
        let sizes = plan.curve_sizes();
        let largest = plan.largest_buffer;
        let host: Vec<u8> = (0..largest).map(|i| (i % 251) as u8).collect();
        let mut back = vec![0u8; largest];
        let buffer = alloc::<u8>(self.queue, largest, "the transfer benchmark's buffer")?;
        let mut host_to_device = Vec::new();
        let mut device_to_host = Vec::new();
        for &size in &sizes {
            host_to_device.push(self.transfer_sample(size, &mut |event| {
                buffer
                    .write(host.get(..size).unwrap_or_default())
                    .enew(event)
                    .enq()
                    .map_err(|error| RunError::opencl("writing a buffer to the device", error))
            })?);
        }
        for &size in &sizes {
            device_to_host.push(self.transfer_sample(size, &mut |event| {
                buffer
                    .read(back.get_mut(..size).unwrap_or_default())
                    .enew(event)
                    .enq()
                    .map_err(|error| RunError::opencl("reading a buffer from the device", error))
            })?);
        }
        if let Some(idx) = (0..largest).find(|&i| back.get(i) != host.get(i)) {
            return Err(wrong_result("a transfer", idx, &back.get(idx), &host.get(idx)));
        }
        let host_to_device = self.transfer_fit("host to device", host_to_device);
        let device_to_host = self.transfer_fit("device to host", device_to_host);
        Ok(Transfers { host_to_device, device_to_host })
    }

    /// The median event and wall-clock times of `size` bytes moved by `enqueue`, after
    /// the warm-up runs.
    fn transfer_sample(
        &self,
        size: usize,
        enqueue: &mut dyn FnMut(&mut ocl::Event) -> Result<(), RunError>,
    ) -> Result<TransferSample, RunError> {
        let (mut events, mut walls) = (Vec::new(), Vec::new());
        for rep in 0..self.warmup + self.reps {
            let mut event = ocl::Event::empty();
            let start = Instant::now();
            enqueue(&mut event)?;
            let wall = start.elapsed().as_secs_f64();
            if rep >= self.warmup {
                events.push(event_seconds(&event)?);
                walls.push(wall);
            }
        }
        Ok(TransferSample {
            bytes: size as u64,
            seconds: median(events),
            wall_seconds: median(walls),
        })
    }

    fn transfer_fit(&mut self, name: &str, curve: Vec<TransferSample>) -> Transfer {
        let events: Vec<(f64, f64)> =
            curve.iter().map(|sample| (sample.bytes as f64, sample.seconds)).collect();
        let walls: Vec<(f64, f64)> =
            curve.iter().map(|sample| (sample.bytes as f64, sample.wall_seconds)).collect();
        let (latency_s, bytes_per_s) = fit_latency_bandwidth(&events);
        let (wall_latency_s, wall_bytes_per_s) = fit_latency_bandwidth(&walls);
        let largest = curve.last().map_or(0, |sample| sample.bytes);
        self.report(&format!(
            "{name}: {} + bytes / {} (events), {} + bytes / {} (wall), up to {}",
            seconds(latency_s),
            rate(bytes_per_s, "B/s"),
            seconds(wall_latency_s),
            rate(wall_bytes_per_s, "B/s"),
            human_bytes(largest)
        ));
        Transfer { bytes_per_s, latency_s, wall_bytes_per_s, wall_latency_s, curve }
    }
}

enum Output {
    F32(ocl::Buffer<f32>),
    F64(ocl::Buffer<f64>),
}

/// Enqueues `kernel` over `global` work-items (in groups of `local`, or the driver's
/// choice), its arguments all set.
#[expect(unsafe_code, reason = "ocl marks every kernel launch unsafe: kernel code is untrusted")]
fn enqueue(
    queue: &ocl::Queue,
    kernel: &ocl::core::Kernel,
    global: usize,
    local: Option<usize>,
    event: Option<&mut ocl::Event>,
) -> Result<(), RunError> {
    // SAFETY: the benchmark kernels are this module's, and every argument was set
    // to a live buffer large enough for `global` work-items (or to a value of its
    // parameter's type) before the launch.
    unsafe {
        ocl::core::enqueue_kernel(
            queue.as_core(),
            kernel,
            1,
            None,
            &[global, 1, 1],
            local.map(|local| [local, 1, 1]),
            None::<()>,
            event,
        )
    }
    .map_err(|error| RunError::opencl("launching a calibration kernel", error))
}

fn set_arg(kernel: &ocl::core::Kernel, index: u32, value: ArgVal<'_>) -> Result<(), RunError> {
    ocl::core::set_kernel_arg(kernel, index, value)
        .map_err(|error| RunError::opencl("setting a calibration kernel's argument", error))
}

fn alloc<T: ocl::OclPrm>(
    queue: &ocl::Queue,
    len: usize,
    what: &str,
) -> Result<ocl::Buffer<T>, RunError> {
    ocl::Buffer::<T>::builder().queue(queue.clone()).len(len.max(1)).build().map_err(|error| {
        if crate::buffer::is_out_of_memory(&error) {
            RunError::OutOfMemory {
                requested_bytes: (len * std::mem::size_of::<T>()) as u64,
                what: what.to_owned(),
                max_alloc_bytes: None,
            }
        } else {
            RunError::opencl(format!("allocating {what}"), error)
        }
    })
}

fn read_u32(buffer: &ocl::Buffer<u32>, len: usize) -> Result<Vec<u32>, RunError> {
    let mut values = vec![0u32; len];
    buffer
        .read(&mut values)
        .enq()
        .map_err(|error| RunError::opencl("reading a benchmark's result", error))?;
    Ok(values)
}

/// Checks every element of `got` against `expected(index)`.
fn check_u32(kernel: &str, got: &[u32], expected: impl Fn(usize) -> u32) -> Result<(), RunError> {
    match got.iter().enumerate().find(|&(idx, value)| *value != expected(idx)) {
        None => Ok(()),
        Some((idx, value)) => Err(wrong_result(kernel, idx, value, &expected(idx))),
    }
}

fn wrong_result(
    kernel: &str,
    idx: usize,
    got: &dyn std::fmt::Debug,
    expected: &dyn std::fmt::Debug,
) -> RunError {
    RunError::OpenCl {
        action: format!("checking the calibration kernel `{kernel}`"),
        message: format!(
            "element {idx} is {got:?}, expected {expected:?}: the device computes wrong results"
        ),
    }
}

/// At most 64 indices spread over `0..len`, the last one included.
fn sample_indices(len: usize) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    let step = len.div_ceil(64).max(1);
    let mut indices: Vec<usize> = (0..len).step_by(step).collect();
    if indices.last() != Some(&(len - 1)) {
        indices.push(len - 1);
    }
    indices
}

/// What `local_read` computes for a work-item whose first word is `base`: the
/// wrapping sum of words `(base + k) mod LOCAL_WORDS` for `k < iters`, word `w`
/// holding `w`.
fn local_read_sum(base: u32, iters: u32) -> u32 {
    let cycle_sum = LOCAL_WORDS * (LOCAL_WORDS - 1) / 2;
    let full_cycles = iters / LOCAL_WORDS;
    let mut sum = cycle_sum.wrapping_mul(full_cycles);
    for k in 0..iters % LOCAL_WORDS {
        sum = sum.wrapping_add(base.wrapping_add(k) & (LOCAL_WORDS - 1));
    }
    sum
}

/// What `mad_f32` computes for work-item `idx` (up to the rounding of `mad`).
fn mad_chains_f32(idx: usize, iters: u32) -> f32 {
    let (b, c) = (MAD_B as f32, MAD_C as f32);
    let x0 = (idx & 255) as f32 * (1.0 / 256.0);
    let mut xs = [0f32; 8];
    for (chain, x) in xs.iter_mut().enumerate() {
        *x = x0 + chain as f32 * 0.125;
    }
    for _ in 0..iters {
        for x in &mut xs {
            *x = *x * b + c;
        }
    }
    ((xs[0] + xs[1]) + (xs[2] + xs[3])) + ((xs[4] + xs[5]) + (xs[6] + xs[7]))
}

/// What `mad_f64` computes for work-item `idx` (up to the rounding of `mad`).
fn mad_chains_f64(idx: usize, iters: u32) -> f64 {
    let x0 = (idx & 255) as f64 * (1.0 / 256.0);
    let mut xs = [0f64; 8];
    for (chain, x) in xs.iter_mut().enumerate() {
        *x = x0 + chain as f64 * 0.125;
    }
    for _ in 0..iters {
        for x in &mut xs {
            *x = *x * MAD_B + MAD_C;
        }
    }
    ((xs[0] + xs[1]) + (xs[2] + xs[3])) + ((xs[4] + xs[5]) + (xs[6] + xs[7]))
}

fn event_time(event: &ocl::Event, info: ProfilingInfo) -> Result<u64, RunError> {
    event
        .profiling_info(info)
        .and_then(|result| result.time().map_err(ocl::Error::from))
        .map_err(|error| RunError::opencl("reading a profiling event", error))
}

/// From the start to the end of the command, in seconds.
fn event_seconds(event: &ocl::Event) -> Result<f64, RunError> {
    let start = event_time(event, ProfilingInfo::Start)?;
    let end = event_time(event, ProfilingInfo::End)?;
    Ok(end.saturating_sub(start) as f64 * 1e-9)
}

/// The median (the mean of the middle two of an even count); 0 when empty.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    match samples.len() {
        0 => 0.0,
        n if n % 2 == 1 => samples[mid],
        _ => (samples[mid - 1] + samples[mid]) / 2.0,
    }
}

/// The line `seconds = latency + bytes / bandwidth` through the smallest and the
/// largest of the `(bytes, seconds)` samples, as `(latency, bandwidth)`: exact at
/// both ends, so the fixed cost comes from the smallest size and the bandwidth from
/// the largest (where caches no longer help); sizes that fit in a cache run faster
/// than the line. When the times do not grow with the size or the line would start
/// below 0, the latency is 0 and the bandwidth the largest sample's. Mirrors
/// `weft_cost::profile::fit_latency_bandwidth`, which checks committed profiles.
pub(crate) fn fit_latency_bandwidth(samples: &[(f64, f64)]) -> (f64, f64) {
    let by_size = |a: &&(f64, f64), b: &&(f64, f64)| a.0.total_cmp(&b.0);
    let (Some(&(x0, t0)), Some(&(x1, t1))) =
        (samples.iter().min_by(by_size), samples.iter().max_by(by_size))
    else {
        return (0.0, 0.0);
    };
    if x1 > x0 && t1 > t0 {
        let seconds_per_byte = (t1 - t0) / (x1 - x0);
        let latency = t0 - seconds_per_byte * x0;
        if latency >= 0.0 {
            return (latency, 1.0 / seconds_per_byte);
        }
    }
    (0.0, if t1 > 0.0 { x1 / t1 } else { 0.0 })
}

/// `1.50 µs`, `2.31 ms`.
fn seconds(value: f64) -> String {
    if value < 1e-3 {
        format!("{:.2} µs", value * 1e6)
    } else if value < 1.0 {
        format!("{:.2} ms", value * 1e3)
    } else {
        format!("{value:.2} s")
    }
}

/// `2.95 TB/s`, `51.3 GFLOP/s` (decimal prefixes).
fn rate(value: f64, unit: &str) -> String {
    let prefixes = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, prefix) in prefixes {
        if value >= scale {
            return format!("{:.3} {prefix}{unit}", value / scale);
        }
    }
    format!("{value:.3} {unit}")
}

/// `4 KiB`, `256 MiB`.
fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// What OpenCL says about `device`; the SIMD width is filled in later, from a kernel.
fn device_facts(platform: &ocl::Platform, device: &ocl::Device) -> DeviceFacts {
    use DeviceInfoResult as R;
    let info = |what| ocl::core::get_device_info(device.as_core(), what).ok();
    let text = |what: DeviceInfo| {
        ocl::core::get_device_info_raw(device.as_core(), what as u32)
            .map(|bytes| {
                String::from_utf8_lossy(&bytes).trim_matches(char::from(0)).trim().to_owned()
            })
            .unwrap_or_default()
    };
    let uint = |what| match info(what) {
        Some(
            R::MaxComputeUnits(n)
            | R::MaxClockFrequency(n)
            | R::MaxConstantArgs(n)
            | R::GlobalMemCachelineSize(n)
            | R::PreferredVectorWidthChar(n)
            | R::PreferredVectorWidthShort(n)
            | R::PreferredVectorWidthInt(n)
            | R::PreferredVectorWidthLong(n)
            | R::PreferredVectorWidthFloat(n)
            | R::PreferredVectorWidthDouble(n)
            | R::NativeVectorWidthChar(n)
            | R::NativeVectorWidthShort(n)
            | R::NativeVectorWidthInt(n)
            | R::NativeVectorWidthLong(n)
            | R::NativeVectorWidthFloat(n)
            | R::NativeVectorWidthDouble(n),
        ) => n,
        _ => 0,
    };
    let ulong = |what| match info(what) {
        Some(
            R::LocalMemSize(n)
            | R::MaxConstantBufferSize(n)
            | R::GlobalMemSize(n)
            | R::MaxMemAllocSize(n)
            | R::GlobalMemCacheSize(n),
        ) => n,
        Some(R::MaxWorkGroupSize(n)) => n as u64,
        _ => 0,
    };
    let fp64 = text(DeviceInfo::Extensions).split_whitespace().any(|ext| ext == "cl_khr_fp64")
        || matches!(info(DeviceInfo::DoubleFpConfig), Some(R::DoubleFpConfig(config)) if !config.is_empty());
    let widths = |kinds: [DeviceInfo; 6]| VectorWidths {
        char: uint(kinds[0]),
        short: uint(kinds[1]),
        int: uint(kinds[2]),
        long: uint(kinds[3]),
        float: uint(kinds[4]),
        double: uint(kinds[5]),
    };
    DeviceFacts {
        name: text(DeviceInfo::Name),
        vendor: text(DeviceInfo::Vendor),
        platform: platform.name().map(|name| name.trim().to_owned()).unwrap_or_default(),
        platform_version: platform.version().map(|v| v.trim().to_owned()).unwrap_or_default(),
        driver_version: text(DeviceInfo::DriverVersion),
        opencl_version: text(DeviceInfo::Version),
        kind: device::device_kind(device).to_string(),
        compute_units: uint(DeviceInfo::MaxComputeUnits),
        max_clock_mhz: uint(DeviceInfo::MaxClockFrequency),
        max_work_group_size: ulong(DeviceInfo::MaxWorkGroupSize),
        simd_width: 1,
        local_mem_bytes: ulong(DeviceInfo::LocalMemSize),
        max_constant_buffer_bytes: ulong(DeviceInfo::MaxConstantBufferSize),
        max_constant_args: uint(DeviceInfo::MaxConstantArgs),
        global_mem_bytes: ulong(DeviceInfo::GlobalMemSize),
        max_mem_alloc_bytes: ulong(DeviceInfo::MaxMemAllocSize),
        global_mem_cache_bytes: ulong(DeviceInfo::GlobalMemCacheSize),
        global_mem_cacheline_bytes: uint(DeviceInfo::GlobalMemCachelineSize),
        fp64,
        preferred_vector_width: widths([
            DeviceInfo::PreferredVectorWidthChar,
            DeviceInfo::PreferredVectorWidthShort,
            DeviceInfo::PreferredVectorWidthInt,
            DeviceInfo::PreferredVectorWidthLong,
            DeviceInfo::PreferredVectorWidthFloat,
            DeviceInfo::PreferredVectorWidthDouble,
        ]),
        native_vector_width: widths([
            DeviceInfo::NativeVectorWidthChar,
            DeviceInfo::NativeVectorWidthShort,
            DeviceInfo::NativeVectorWidthInt,
            DeviceInfo::NativeVectorWidthLong,
            DeviceInfo::NativeVectorWidthFloat,
            DeviceInfo::NativeVectorWidthDouble,
        ]),
    }
}

/// The UTC date of `time`, `YYYY-MM-DD` (the proleptic Gregorian calendar).
fn utc_date(time: std::time::SystemTime) -> String {
    let secs = time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Year, month and day of the day `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_is_the_line_through_the_smallest_and_largest_samples() {
        let line = |x: f64| 2e-6 + x / 3e12;
        // A cache makes the middle sizes faster: the line ignores them.
        let samples = [(1e8, line(1e8)), (1e3, line(1e3)), (1e6, line(1e6) / 2.0)];
        let (latency, bandwidth) = fit_latency_bandwidth(&samples);
        assert!((latency - 2e-6).abs() < 1e-15, "{latency}");
        assert!((bandwidth / 3e12 - 1.0).abs() < 1e-9, "{bandwidth}");
    }

    #[test]
    fn fit_falls_back_to_the_largest_samples_rate() {
        // Times that do not grow, or a line that would start below 0.
        assert_eq!(fit_latency_bandwidth(&[(1e3, 1e-3), (1e6, 1e-3)]), (0.0, 1e9));
        assert_eq!(fit_latency_bandwidth(&[(1e3, 1e-9), (2e3, 1e-3)]), (0.0, 2e6));
        assert_eq!(fit_latency_bandwidth(&[(1e3, 2e-6)]), (0.0, 5e8));
        assert_eq!(fit_latency_bandwidth(&[]), (0.0, 0.0));
    }

    #[test]
    fn local_read_sum_matches_a_loop() {
        for (base, iters) in [(0, 4), (31 * 32, 400), (4090, 8192 + 12), (8 * 255, 4096)] {
            let looped = (0..iters)
                .fold(0u32, |sum, k: u32| sum.wrapping_add((base + k) & (LOCAL_WORDS - 1)));
            assert_eq!(local_read_sum(base, iters), looped, "base {base}, iters {iters}");
        }
    }

    #[test]
    fn medians_sizes_and_dates() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(power_of_two_at_most(300 << 20), 256 << 20);
        assert_eq!(power_of_two_at_most(4096), 4096);
        assert_eq!(sample_indices(3), vec![0, 1, 2]);
        assert_eq!(sample_indices(1000).len(), 64);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_780), (2026, 11, 23));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(human_bytes(256 << 20), "256 MiB");
        assert_eq!(rate(2.95e12, "B/s"), "2.950 TB/s");
    }
}
