//! The calibration's benchmarks of single operations (profile format 2, docs/costs.md
//! "The benchmarks"): special functions, integer atomics, work-group barriers, reads
//! served by caches and the latency of dependent loads. The cost model charges each
//! class of operation at its own measured rate instead of the multiply-add's.

use ocl::core::ArgVal;
use serde::Serialize;

use super::{
    Bench, MAX_ITERS, Plan, alloc, human_bytes, rate, read_u32, sample_indices, seconds, set_arg,
    wrong_result,
};
use crate::error::RunError;

/// The kernels (OpenCL C 1.2). Each special-function kernel runs 4 independent chains
/// of `x = STEP(x)` per work-item; every step is a contraction, so the chains converge
/// to a fixed point and stay normal however many iterations run.
pub(super) const SOURCE: &str = r#"
#define CHAIN(NAME, STEP)                                                          \
__kernel void NAME(__global float* out, uint iters) {                              \
    float x0 = 0.5f + (float)(get_global_id(0) & 255) * (1.0f / 1024.0f);          \
    float x1 = x0 + 0.0625f, x2 = x0 + 0.125f, x3 = x0 + 0.1875f;                  \
    for (uint k = 0; k < iters; k++) {                                             \
        x0 = STEP(x0); x1 = STEP(x1); x2 = STEP(x2); x3 = STEP(x3);                \
    }                                                                              \
    out[get_global_id(0)] = (x0 + x1) + (x2 + x3);                                 \
}
#define DIV_STEP(x) (1.0f / ((x) + 1.0f))
#define SQRT_STEP(x) sqrt((x) + 1.0f)
#define EXP_STEP(x) exp(-(x))
#define LOG_STEP(x) log((x) + 2.0f)
#define SIN_STEP(x) (sin(x) + 1.0f)
#define COS_STEP(x) cos(x)
CHAIN(chain_div, DIV_STEP)
CHAIN(chain_sqrt, SQRT_STEP)
CHAIN(chain_exp, EXP_STEP)
CHAIN(chain_log, LOG_STEP)
CHAIN(chain_sin, SIN_STEP)
CHAIN(chain_cos, COS_STEP)

/* One atomic addition per work-item, to bin (i * 7919) & mask: neighbours hit
   different bins, and with mask + 1 bins each bin gets (work-items / bins) additions. */
__kernel void atomic_bins(__global uint* bins, uint mask) {
    uint i = (uint)get_global_id(0);
    atomic_add(&bins[(i * 7919u) & mask], 1u);
}

/* The same with floats, by the compare-and-swap loop generated code uses (OpenCL 1.2
   has no float atomics): contended bins retry. */
__kernel void atomic_float_bins(__global float* bins, uint mask) {
    uint i = (uint)get_global_id(0);
    volatile __global uint* bits = (volatile __global uint*)&bins[(i * 7919u) & mask];
    uint seen, old = *bits;
    do {
        seen = old;
        old = atomic_cmpxchg(bits, seen, as_uint(as_float(seen) + 1.0f));
    } while (old != seen);
}

/* Atomic additions into a work-group's bins in local memory: `iters` per work-item,
   bin (i * 7919 + k * 31) & mask; each group then writes its bins out. */
__kernel void atomic_local_bins(__global uint* out, uint mask, uint iters) {
    __local uint bins[4096];
    uint lid = (uint)get_local_id(0);
    uint size = (uint)get_local_size(0);
    for (uint b = lid; b <= mask; b += size) bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = (uint)get_global_id(0);
    for (uint k = 0; k < iters; k++) {
        atomic_add(&bins[(i * 7919u + k * 31u) & mask], 1u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b <= mask; b += size) out[get_group_id(0) * (mask + 1) + b] = bins[b];
}

__kernel void atomic_local_float_bins(__global float* out, uint mask, uint iters) {
    __local float bins[4096];
    uint lid = (uint)get_local_id(0);
    uint size = (uint)get_local_size(0);
    for (uint b = lid; b <= mask; b += size) bins[b] = 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = (uint)get_global_id(0);
    for (uint k = 0; k < iters; k++) {
        volatile __local uint* bits = (volatile __local uint*)&bins[(i * 7919u + k * 31u) & mask];
        uint seen, old = *bits;
        do {
            seen = old;
            old = atomic_cmpxchg(bits, seen, as_uint(as_float(seen) + 1.0f));
        } while (old != seen);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b <= mask; b += size) out[get_group_id(0) * (mask + 1) + b] = bins[b];
}

/* Copies of 2 and 4 words per work-item (vector loads and stores): more bytes in
   flight per work-item than the one-word copy. */
__kernel void copy2(__global const uint2* in, __global uint2* out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}

__kernel void copy4(__global const uint4* in, __global uint4* out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
}

/* Two work-group barriers per iteration around a local exchange. */
__kernel void barriers(__global uint* out, uint iters) {
    __local uint words[1024];
    uint lid = (uint)get_local_id(0);
    uint size = (uint)get_local_size(0);
    uint acc = 0;
    for (uint k = 0; k < iters; k++) {
        words[lid] = k;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc += words[(lid + 1) % size];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = acc;
}

/* Every work-item reads `iters` words of a window of mask + 1 words, neighbours
   reading neighbouring words: after the first pass every read hits a cache. */
__kernel void cached_read(__global const uint* in, __global uint* out, uint mask, uint iters) {
    uint i = (uint)get_global_id(0);
    uint a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (uint k = 0; k < iters; k += 4) {
        a0 += in[(i + k) & mask];
        a1 += in[(i + k + 1) & mask];
        a2 += in[(i + k + 2) & mask];
        a3 += in[(i + k + 3) & mask];
    }
    out[i] = (a0 + a1) + (a2 + a3);
}

/* One work-item's chain of dependent multiply-adds: the latency of one. */
__kernel void mad_latency(__global float* out, float b, float c, uint iters) {
    float x = 0.5f;
    for (uint k = 0; k < iters; k++) {
        x = mad(x, b, c);
    }
    out[0] = x;
}

/* One work-item follows `steps` links of `next`: each load waits for the one before. */
__kernel void chase(__global const uint* next, __global uint* out, uint steps) {
    uint p = 0;
    for (uint s = 0; s < steps; s++) {
        p = next[p];
    }
    out[0] = p;
}
"#;

/// The special functions measured, as named in the profile, with their kernels and
/// the step their chains take (for the host's check).
const SPECIALS: [(&str, &str, ChainStep); 6] = [
    ("div", "chain_div", |x| 1.0 / (x + 1.0)),
    ("sqrt", "chain_sqrt", |x| (x + 1.0).sqrt()),
    ("exp", "chain_exp", |x| (-x).exp()),
    ("log", "chain_log", |x| (x + 2.0).ln()),
    ("sin", "chain_sin", |x| x.sin() + 1.0),
    ("cos", "chain_cos", |x| x.cos()),
];

/// Integer atomics, or floats added by compare-and-swap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atomic {
    Int,
    Float,
}

/// One step of a special function's chain, as the host computes it.
type ChainStep = fn(f32) -> f32;

/// Chains per work-item in the special-function kernels.
const CHAINS: u32 = 4;

/// Bins of the atomics benchmark: one (every work-item on one address), a few, many,
/// and one per work-item.
const ATOMIC_BINS: [u64; 4] = [1, 256, 65536, 1 << 24];

/// Bins of the local-memory atomics benchmark (a work-group's sub-histogram).
const LOCAL_ATOMIC_BINS: [usize; 3] = [32, 256, 4096];

/// Windows of the cached-read benchmark, in bytes: within a compute unit's L1 and
/// within a GPU's L2.
const CACHE_WINDOWS: [usize; 2] = [16 << 10, 4 << 20];

/// What format 2 adds to a profile (`weft_cost::profile::Operations`).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Operations {
    special: Vec<SpecialRate>,
    atomics: Vec<AtomicRate>,
    float_atomics: Vec<AtomicRate>,
    local_atomics: Vec<AtomicRate>,
    local_float_atomics: Vec<AtomicRate>,
    wide_copies: Vec<WideCopy>,
    barrier_per_s: f64,
    cached_reads: Vec<CachedRead>,
    load_latency_s: f64,
    cached_load_latency_s: f64,
    op_latency_s: f64,
    warm_launch_s: f64,
    queued_launch_s: f64,
}

#[derive(Debug, Clone, Serialize)]
struct SpecialRate {
    op: String,
    per_s: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct AtomicRate {
    bins: u64,
    per_s: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct WideCopy {
    words: u32,
    bytes_per_s: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
struct CachedRead {
    window_bytes: u64,
    bytes_per_s: f64,
}

/// The kernels of [`SOURCE`].
pub(super) struct OperationKernels {
    special: Vec<ocl::core::Kernel>,
    atomic_bins: ocl::core::Kernel,
    atomic_float_bins: ocl::core::Kernel,
    atomic_local_bins: ocl::core::Kernel,
    atomic_local_float_bins: ocl::core::Kernel,
    copy2: ocl::core::Kernel,
    copy4: ocl::core::Kernel,
    barriers: ocl::core::Kernel,
    cached_read: ocl::core::Kernel,
    chase: ocl::core::Kernel,
    mad_latency: ocl::core::Kernel,
}

impl OperationKernels {
    pub(super) fn create(program: &ocl::core::Program) -> Result<OperationKernels, RunError> {
        let kernel = |name: &str| {
            ocl::core::create_kernel(program, name)
                .map_err(|error| RunError::opencl(format!("creating the kernel `{name}`"), error))
        };
        Ok(OperationKernels {
            special: SPECIALS.iter().map(|(_, name, _)| kernel(name)).collect::<Result<_, _>>()?,
            atomic_bins: kernel("atomic_bins")?,
            atomic_float_bins: kernel("atomic_float_bins")?,
            atomic_local_bins: kernel("atomic_local_bins")?,
            atomic_local_float_bins: kernel("atomic_local_float_bins")?,
            copy2: kernel("copy2")?,
            copy4: kernel("copy4")?,
            barriers: kernel("barriers")?,
            cached_read: kernel("cached_read")?,
            chase: kernel("chase")?,
            mad_latency: kernel("mad_latency")?,
        })
    }
}

impl Bench<'_> {
    pub(super) fn operations(
        &mut self,
        kernels: &OperationKernels,
        empty: &ocl::core::Kernel,
        compute_units: u32,
        plan: &Plan,
    ) -> Result<Operations, RunError> {
        let mut special = Vec::new();
        for ((op, name, step), kernel) in SPECIALS.iter().zip(&kernels.special) {
            special.push(SpecialRate {
                op: (*op).to_owned(),
                per_s: self.special_rate(kernel, name, *step, compute_units, plan)?,
            });
        }
        let atomics = self.atomics(&kernels.atomic_bins, Atomic::Int, plan)?;
        let float_atomics = self.atomics(&kernels.atomic_float_bins, Atomic::Float, plan)?;
        let local_atomics =
            self.local_atomics(&kernels.atomic_local_bins, Atomic::Int, compute_units, plan)?;
        let local_float_atomics = self.local_atomics(
            &kernels.atomic_local_float_bins,
            Atomic::Float,
            compute_units,
            plan,
        )?;
        let wide_copies = self.wide_copies(kernels, plan)?;
        let barrier_per_s = self.barrier_rate(&kernels.barriers, compute_units, plan)?;
        let cached_reads = self.cached_reads(&kernels.cached_read, compute_units, plan)?;
        let load_latency_s = self.load_latency(&kernels.chase, plan.largest_buffer, plan)?;
        let cached_load_latency_s = self.load_latency(&kernels.chase, 4096, plan)?;
        let op_latency_s = self.op_latency(&kernels.mad_latency, plan)?;
        let warm_launch_s = self.warm_launch(empty, plan)?;
        let queued_launch_s = self.queued_launch(empty, &kernels.mad_latency, plan)?;
        Ok(Operations {
            special,
            atomics,
            float_atomics,
            local_atomics,
            local_float_atomics,
            wide_copies,
            barrier_per_s,
            cached_reads,
            load_latency_s,
            cached_load_latency_s,
            op_latency_s,
            warm_launch_s,
            queued_launch_s,
        })
    }

    /// Operations of one special function per second over the device (each step
    /// also adds or negates once, which the multiply-add rate shows to be far cheaper).
    fn special_rate(
        &mut self,
        kernel: &ocl::core::Kernel,
        name: &str,
        step: fn(f32) -> f32,
        compute_units: u32,
        plan: &Plan,
    ) -> Result<f64, RunError> {
        let global = compute_units as usize * plan.compute_items_per_unit;
        let output = alloc::<f32>(self.queue, global, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(output.as_core()))?;
        let local = Some(plan.group_size);
        let iters = self.adapt_iters(kernel, global, local, plan.target_s, &|iters| {
            set_arg(kernel, 1, ArgVal::scalar(&iters))
        })?;
        let taken = self.time_kernel(kernel, global, local)?;
        let per_s = global as f64 * f64::from(iters) * f64::from(CHAINS) / taken;
        self.report(&format!("{name}: {} ({})", seconds(taken), rate(per_s, "op/s")));
        let mut values = vec![0f32; global];
        output
            .read(&mut values)
            .enq()
            .map_err(|error| RunError::opencl("reading a benchmark's result", error))?;
        for idx in sample_indices(global) {
            let x0 = 0.5 + (idx & 255) as f32 * (1.0 / 1024.0);
            let mut xs = [x0, x0 + 0.0625, x0 + 0.125, x0 + 0.1875];
            // The chains converge within a few hundred steps; more change nothing.
            for _ in 0..iters.min(4096) {
                for x in &mut xs {
                    *x = step(*x);
                }
            }
            let expected = (xs[0] + xs[1]) + (xs[2] + xs[3]);
            let got = values.get(idx).copied().unwrap_or(f32::NAN);
            if (got - expected).abs() > 1e-3 * expected.abs().max(1.0) {
                return Err(wrong_result(name, idx, &got, &expected));
            }
        }
        Ok(per_s)
    }

    /// Atomic additions per second, per number of bins the work-items share.
    fn atomics(
        &mut self,
        kernel: &ocl::core::Kernel,
        kind: Atomic,
        plan: &Plan,
    ) -> Result<Vec<AtomicRate>, RunError> {
        // Contended float bins retry: fewer work-items keep the run short.
        let items = match kind {
            Atomic::Int => (plan.largest_buffer / 4).min(1 << 24),
            // Float counts stay exact below 2^24: 2^18 additions per run.
            Atomic::Float => (plan.largest_buffer / 4).min(1 << 18),
        };
        let largest_bins = ATOMIC_BINS.iter().copied().max().unwrap_or(1) as usize;
        let bins_buffer = alloc::<u32>(self.queue, largest_bins.min(items), "the bins")?;
        set_arg(kernel, 0, ArgVal::mem(bins_buffer.as_core()))?;
        let mut rates = Vec::new();
        for bins in ATOMIC_BINS {
            let bins = (bins as usize).min(items);
            let mask = (bins - 1) as u32;
            set_arg(kernel, 1, ArgVal::scalar(&mask))?;
            bins_buffer
                .cmd()
                .fill(0u32, Some(bins))
                .enq()
                .map_err(|error| RunError::opencl("clearing the bins", error))?;
            let runs = self.warmup + self.reps;
            // A contended float bin takes microseconds per addition: 1024 per bin.
            let items = match kind {
                Atomic::Int => items,
                Atomic::Float => items.min(bins * 1024),
            };
            let taken = self.time_kernel(kernel, items, Some(plan.group_size))?;
            let per_s = items as f64 / taken;
            let what = match kind {
                Atomic::Int => "atomic add",
                Atomic::Float => "float atomic add (compare-and-swap)",
            };
            self.report(&format!(
                "{what} into {bins} bins: {} ({})",
                seconds(taken),
                rate(per_s, "op/s")
            ));
            let counts = read_u32(&bins_buffer, bins)?;
            let additions = items / bins * runs;
            let expected = match kind {
                // Exact while the counts stay below 2^24.
                Atomic::Float => (additions as f32).to_bits(),
                Atomic::Int => u32::try_from(additions).unwrap_or(u32::MAX),
            };
            if let Some((idx, got)) = counts.iter().enumerate().find(|(_, c)| **c != expected) {
                return Err(wrong_result("atomic_bins", idx, got, &expected));
            }
            rates.push(AtomicRate { bins: bins as u64, per_s });
        }
        Ok(rates)
    }

    /// The time of one multiply-add that waits for the one before, from one work-item.
    fn op_latency(&mut self, kernel: &ocl::core::Kernel, plan: &Plan) -> Result<f64, RunError> {
        let output = alloc::<f32>(self.queue, 1, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(output.as_core()))?;
        set_arg(kernel, 1, ArgVal::scalar(&(super::MAD_B as f32)))?;
        set_arg(kernel, 2, ArgVal::scalar(&(super::MAD_C as f32)))?;
        let iters = self.adapt_iters(kernel, 1, Some(1), plan.target_s / 4.0, &|iters| {
            set_arg(kernel, 3, ArgVal::scalar(&iters))
        })?;
        let taken = self.time_kernel(kernel, 1, Some(1))?;
        let latency = taken / f64::from(iters);
        self.report(&format!("dependent multiply-adds: {:.2} ns each", latency * 1e9));
        let mut got = [0f32];
        output
            .read(&mut got[..])
            .enq()
            .map_err(|error| RunError::opencl("reading a benchmark's result", error))?;
        let (b, c) = (super::MAD_B as f32, super::MAD_C as f32);
        let expected = (0..iters.min(1 << 16)).fold(0.5f32, |x, _| x * b + c);
        if (got[0] - expected).abs() > 1e-3 {
            return Err(wrong_result("mad_latency", 0, &got[0], &expected));
        }
        Ok(latency)
    }

    /// The empty kernel's event time after the other benchmarks (a GPU's clocks are up
    /// by then; the first benchmark runs before), one work-group of the plan's size,
    /// one launch at a time as a plan's runs launch: the floor of a kernel's time.
    fn warm_launch(&mut self, empty: &ocl::core::Kernel, plan: &Plan) -> Result<f64, RunError> {
        let mut times = Vec::with_capacity(self.reps);
        for rep in 0..self.warmup + self.reps {
            let taken = self.time_once(empty, plan.group_size, Some(plan.group_size))?;
            if rep >= self.warmup {
                times.push(taken);
            }
        }
        let warm = super::median(times);
        self.report(&format!("launch after warming up: empty kernel {}", seconds(warm)));
        Ok(warm)
    }

    /// The empty kernel's event time when it waits in the queue behind a running kernel
    /// (the device prepares it meanwhile): `reps` empty kernels enqueued behind one
    /// work-item's chain of multiply-adds long enough for all of them to be queued.
    fn queued_launch(
        &mut self,
        empty: &ocl::core::Kernel,
        long: &ocl::core::Kernel,
        plan: &Plan,
    ) -> Result<f64, RunError> {
        // One work-item's chain, for 20 ms (GPU) or 200 ms (CPU).
        let output = alloc::<f32>(self.queue, 1, "the benchmark's output")?;
        set_arg(long, 0, ArgVal::mem(output.as_core()))?;
        set_arg(long, 1, ArgVal::scalar(&(super::MAD_B as f32)))?;
        set_arg(long, 2, ArgVal::scalar(&(super::MAD_C as f32)))?;
        self.adapt_iters(long, 1, Some(1), plan.target_s * 10.0, &|iters| {
            set_arg(long, 3, ArgVal::scalar(&iters))
        })?;
        let mut times = Vec::new();
        for _ in 0..3 {
            super::enqueue(self.queue, long, 1, Some(1), None)?;
            let mut events = Vec::with_capacity(self.reps);
            for _ in 0..self.reps {
                let mut event = ocl::Event::empty();
                super::enqueue(
                    self.queue,
                    empty,
                    plan.group_size,
                    Some(plan.group_size),
                    Some(&mut event),
                )?;
                events.push(event);
            }
            self.finish()?;
            for event in &events {
                times.push(super::event_seconds(event)?);
            }
        }
        let queued = super::median(times);
        self.report(&format!("launch behind a running kernel: empty kernel {}", seconds(queued)));
        Ok(queued)
    }

    /// Atomic additions per second into a work-group's bins in local memory (all groups
    /// together), per number of bins.
    fn local_atomics(
        &mut self,
        kernel: &ocl::core::Kernel,
        kind: Atomic,
        compute_units: u32,
        plan: &Plan,
    ) -> Result<Vec<AtomicRate>, RunError> {
        let local = plan.group_size;
        let groups = compute_units as usize * plan.local_groups_per_unit;
        let global = groups * local;
        let mut rates = Vec::new();
        for bins in LOCAL_ATOMIC_BINS {
            let output = alloc::<u32>(self.queue, groups * bins, "the bins")?;
            set_arg(kernel, 0, ArgVal::mem(output.as_core()))?;
            set_arg(kernel, 1, ArgVal::scalar(&((bins - 1) as u32)))?;
            // Float counts stay exact below 2^24 per bin.
            let most = match kind {
                Atomic::Int => MAX_ITERS,
                Atomic::Float => u32::try_from((1usize << 23) * bins / local).unwrap_or(MAX_ITERS),
            };
            let set = |iters: u32| set_arg(kernel, 2, ArgVal::scalar(&iters.min(most)));
            let iters =
                self.adapt_iters(kernel, global, Some(local), plan.target_s, &set)?.min(most);
            let taken = self.time_kernel(kernel, global, Some(local))?;
            let per_s = global as f64 * f64::from(iters) / taken;
            self.report(&format!(
                "{} into {bins} local bins: {} ({})",
                match kind {
                    Atomic::Int => "local atomic add",
                    Atomic::Float => "local float atomic add (compare-and-swap)",
                },
                seconds(taken),
                rate(per_s, "op/s")
            ));
            // Every group's bins add up to its work-items' additions.
            let got = read_u32(&output, groups * bins)?;
            for group in sample_indices(groups) {
                let words = &got[group * bins..(group + 1) * bins];
                let total: f64 = match kind {
                    Atomic::Int => words.iter().map(|&w| f64::from(w)).sum(),
                    Atomic::Float => words.iter().map(|&w| f64::from(f32::from_bits(w))).sum(),
                };
                let expected = (local as f64) * f64::from(iters);
                if total != expected {
                    return Err(wrong_result("atomic_local_bins", group, &total, &expected));
                }
            }
            rates.push(AtomicRate { bins: bins as u64, per_s });
        }
        Ok(rates)
    }

    /// Copies of 2 and 4 words per work-item over the largest buffer: bytes (read +
    /// written) per second.
    fn wide_copies(
        &mut self,
        kernels: &OperationKernels,
        plan: &Plan,
    ) -> Result<Vec<WideCopy>, RunError> {
        let words = plan.largest_buffer / 4;
        let host: Vec<u32> = (0..words as u32).collect();
        let input = alloc::<u32>(self.queue, words, "the benchmark's input")?;
        input
            .write(&host)
            .enq()
            .map_err(|error| RunError::opencl("uploading the benchmark's input", error))?;
        let output = alloc::<u32>(self.queue, words, "the benchmark's output")?;
        let mut points = Vec::new();
        for (width, kernel) in [(2u32, &kernels.copy2), (4, &kernels.copy4)] {
            set_arg(kernel, 0, ArgVal::mem(input.as_core()))?;
            set_arg(kernel, 1, ArgVal::mem(output.as_core()))?;
            output
                .cmd()
                .fill(0u32, None)
                .enq()
                .map_err(|error| RunError::opencl("clearing the output", error))?;
            let items = words / width as usize;
            let taken = self.time_kernel(kernel, items, Some(plan.group_size))?;
            let bytes_per_s = 2.0 * plan.largest_buffer as f64 / taken;
            self.report(&format!(
                "global copy of {} by {width} words per work-item: {} ({})",
                human_bytes(plan.largest_buffer as u64),
                seconds(taken),
                rate(bytes_per_s, "B/s")
            ));
            let got = read_u32(&output, words)?;
            if let Some(idx) = (0..words).find(|&i| got[i] != host[i]) {
                return Err(wrong_result("copy_wide", idx, &got[idx], &host[idx]));
            }
            points.push(WideCopy { words: width, bytes_per_s });
        }
        Ok(points)
    }

    /// Work-group barriers per second over the device, in groups of the plan's size.
    fn barrier_rate(
        &mut self,
        kernel: &ocl::core::Kernel,
        compute_units: u32,
        plan: &Plan,
    ) -> Result<f64, RunError> {
        let local = plan.group_size;
        let global = compute_units as usize * plan.local_groups_per_unit * local;
        let output = alloc::<u32>(self.queue, global, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(output.as_core()))?;
        let iters = self.adapt_iters(kernel, global, Some(local), plan.target_s, &|iters| {
            set_arg(kernel, 1, ArgVal::scalar(&iters))
        })?;
        let taken = self.time_kernel(kernel, global, Some(local))?;
        let groups = (global / local) as f64;
        let per_s = groups * f64::from(iters) * 2.0 / taken;
        self.report(&format!("barriers: {} ({})", seconds(taken), rate(per_s, "barrier/s")));
        let expected = (0..iters).fold(0u32, u32::wrapping_add);
        let got = read_u32(&output, global)?;
        if let Some(idx) = sample_indices(global).into_iter().find(|&i| got[i] != expected) {
            return Err(wrong_result("barriers", idx, &got[idx], &expected));
        }
        Ok(per_s)
    }

    /// Bytes per second of coalesced reads that hit a cache, per window size.
    fn cached_reads(
        &mut self,
        kernel: &ocl::core::Kernel,
        compute_units: u32,
        plan: &Plan,
    ) -> Result<Vec<CachedRead>, RunError> {
        let global = compute_units as usize * plan.compute_items_per_unit;
        let largest = CACHE_WINDOWS.iter().copied().max().unwrap_or(4096) / 4;
        let host: Vec<u32> = (0..largest as u32).collect();
        let input = alloc::<u32>(self.queue, largest, "the benchmark's input")?;
        input
            .write(&host)
            .enq()
            .map_err(|error| RunError::opencl("uploading the benchmark's input", error))?;
        let output = alloc::<u32>(self.queue, global, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(input.as_core()))?;
        set_arg(kernel, 1, ArgVal::mem(output.as_core()))?;
        let mut points = Vec::new();
        for window in CACHE_WINDOWS {
            let words = window / 4;
            let mask = (words - 1) as u32;
            set_arg(kernel, 2, ArgVal::scalar(&mask))?;
            let local = Some(plan.group_size);
            let iters = self.adapt_iters(kernel, global, local, plan.target_s, &|iters| {
                set_arg(kernel, 3, ArgVal::scalar(&iters))
            })?;
            let taken = self.time_kernel(kernel, global, local)?;
            let bytes_per_s = global as f64 * f64::from(iters) * 4.0 / taken;
            self.report(&format!(
                "cached read of a {} window: {} ({})",
                human_bytes(window as u64),
                seconds(taken),
                rate(bytes_per_s, "B/s")
            ));
            let got = read_u32(&output, global)?;
            for idx in sample_indices(global) {
                let expected = (0..iters)
                    .fold(0u32, |sum, k| sum.wrapping_add((idx as u32).wrapping_add(k) & mask));
                if got[idx] != expected {
                    return Err(wrong_result("cached_read", idx, &got[idx], &expected));
                }
            }
            points.push(CachedRead { window_bytes: window as u64, bytes_per_s });
        }
        Ok(points)
    }

    /// The time of one dependent load, from one work-item following a pseudo-random
    /// cycle through a buffer of `bytes` (large: memory; 4 KiB: the nearest cache).
    fn load_latency(
        &mut self,
        kernel: &ocl::core::Kernel,
        bytes: usize,
        plan: &Plan,
    ) -> Result<f64, RunError> {
        let n = (bytes / 4).max(16).next_power_of_two();
        // A full-period linear congruential step modulo a power of two (a = 1 mod 4,
        // c odd): one cycle through every element, in an order no prefetcher follows.
        let next_of =
            |p: u32| p.wrapping_mul(1_664_525).wrapping_add(1_013_904_223) & (n as u32 - 1);
        let host: Vec<u32> = (0..n as u32).map(next_of).collect();
        let next = alloc::<u32>(self.queue, n, "the benchmark's links")?;
        next.write(&host)
            .enq()
            .map_err(|error| RunError::opencl("uploading the benchmark's links", error))?;
        let output = alloc::<u32>(self.queue, 1, "the benchmark's output")?;
        set_arg(kernel, 0, ArgVal::mem(next.as_core()))?;
        set_arg(kernel, 1, ArgVal::mem(output.as_core()))?;
        let target = plan.target_s / 4.0;
        let steps = self.adapt_iters(kernel, 1, Some(1), target, &|steps| {
            set_arg(kernel, 2, ArgVal::scalar(&steps))
        })?;
        let taken = self.time_kernel(kernel, 1, Some(1))?;
        let latency = taken / f64::from(steps);
        self.report(&format!(
            "dependent loads over {}: {:.1} ns each",
            human_bytes((n * 4) as u64),
            latency * 1e9
        ));
        let expected = (0..steps).fold(0u32, |p, _| host[p as usize]);
        let got = read_u32(&output, 1)?[0];
        if got != expected {
            return Err(wrong_result("chase", 0, &got, &expected));
        }
        Ok(latency)
    }
}
