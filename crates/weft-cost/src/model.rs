//! Static costs and predicted times (docs/costs.md, "Static costs" and "Predictions and
//! validation"): the records the backend's analysis of its imperative IR fills in
//! (`weft-lower`'s `cost` module), symbolic in the sizes, and the model that turns them
//! into seconds on a [`DeviceProfile`].
//!
//! Quantities are host expressions ([`weft_plan::Expr`]) over host variables: per
//! kernel over its parameters and NDRange, per entry over the entry's input sizes
//! (the launch arguments substituted). [`show`] prints them as polynomials with the
//! source's names ([`Names`]).
//!
//! The model ([`MODEL`]) of one launch, every number from the profile (docs/costs.md,
//! "Predictions and validation"):
//!
//! ```text
//! occupancy = min(1, work-items / H)       H = compute units × max work-group size (GPU),
//!                                              compute units × SIMD width (other devices)
//! compute   = max((plain / (f32_flops / 2) + Σ special_c / rate_c
//!                  + barriers / barrier rate) / occupancy,  span / clock)
//! memory    = (Σ global bytes × slowdown(stride) / bandwidth(width)
//!              + Σ uniform global bytes / cached-read bandwidth
//!              + Σ local bytes × conflicts(stride) / local bandwidth
//!              + Σ atomics / atomic rate(bins, int or float)) / occupancy
//! time      = launch + max(compute, memory)
//! ```
//!
//! `plain` is the work less the special operations (division, square root, exponential,
//! logarithm, trigonometry), each charged at its measured rate. `slowdown` is the
//! profile's strided-read table (the first measured stride at or above the access's
//! stride in elements; irregular accesses take the largest stride's slowdown);
//! `bandwidth(width)` the copy bandwidth at the kernel's global accesses per work-item
//! (`width` = accesses / 2, from 1 to 4 words, interpolated between the one-word copy
//! and the wide copies: more bytes in flight per work-item reach more of the memory's
//! bandwidth). A uniform read (one address per SIMD group) is served by a cache at the
//! cached-read rate. `conflicts` is the local table at the largest measured stride
//! dividing the stride in 32-bit words (the bank-conflict degree `gcd(stride, banks)`).
//! Atomics take the rate measured at the fewest bins at or above the destination's
//! size. `launch` is the empty kernel's time after warming up, or, for a launch the host
//! enqueues while the device still runs earlier ones (`EntryCost::predict` simulates
//! the queue: a launch every `back_to_back_s`), the empty kernel's queued behind a
//! running one. A format-1 profile has
//! none of the operation rates: special operations and barriers then cost a plain
//! operation, uniform reads one element per SIMD group of the copy bandwidth, atomics a
//! read and a write. An entry adds its transfers: per uploaded or downloaded buffer
//! `latency + bytes / bandwidth`.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use weft_plan::{BinOp, Elem, Expr, Var};
use weft_size::Size;
use weft_values::Scalar;

pub use crate::measured::{MeasuredError, measured_error};
use crate::profile::DeviceProfile;

/// The model's name and version, recorded in every [`Prediction`].
pub const MODEL: &str =
    "weft-cost v2: launch + max(compute, memory), per-class operation and access rates";

/// Names of host variables for printing (`n`, `m`, kernel parameters).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Names(pub BTreeMap<Var, String>);

impl Names {
    pub fn name(&self, var: Var) -> String {
        match self.0.get(&var) {
            Some(name) if !name.is_empty() => name.clone(),
            _ => format!("v{}", var.0),
        }
    }
}

/// An address space, as the cost model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemSpace {
    Global,
    Constant,
    Local,
    /// Registers or the work-item's own stack: not charged.
    Private,
}

impl MemSpace {
    pub fn name(self) -> &'static str {
        match self {
            MemSpace::Global => "global",
            MemSpace::Constant => "constant",
            MemSpace::Local => "local",
            MemSpace::Private => "private",
        }
    }
}

/// A read or a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    Read,
    Write,
}

/// How the addresses of neighbouring work-items (consecutive local ids) differ.
#[derive(Debug, Clone, PartialEq)]
pub enum Stride {
    /// The same address for the whole SIMD group (a broadcast).
    Uniform,
    /// This many elements apart (1: coalesced, or conflict-free in local memory).
    Elems(Expr),
    /// Data-dependent or not affine in the work-item.
    Irregular,
}

/// One memory access of a kernel's code, with how many times a launch performs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    /// The pointer (kernel parameter or array) accessed.
    pub ptr: String,
    pub space: MemSpace,
    pub dir: Dir,
    pub elem_bytes: u32,
    /// Executions per launch, all work-items together.
    pub count: Expr,
    pub stride: Stride,
    /// A read whose index does not depend on which point of the parallel operation is
    /// computed: every point reads the same elements, which a cache then serves.
    pub reused: bool,
}

/// The static cost of one launch of a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// Work-items launched (the NDRange rounded up to work-groups).
    pub items: Expr,
    /// Scalar operations (arithmetic, comparisons, conversions, calls), all work-items.
    pub work: Expr,
    /// Operations on the longest path of one work-item (loops multiplied out, a
    /// parallel loop's share per unit).
    pub span: Expr,
    pub accesses: Vec<Access>,
    /// Special operations by class, all work-items (also counted in `work`).
    pub special: Vec<(Special, Expr)>,
    /// Work-group barriers executed, all work-groups together.
    pub barriers: Expr,
    /// Atomic read-modify-writes (not among `accesses`).
    pub atomics: Vec<AtomicCount>,
    /// What the analysis approximated (a `while` loop counted once, ...).
    pub notes: Vec<String>,
    /// The time is a lower bound: a `while` loop, whose trip count is data, is counted
    /// for one iteration.
    pub lower_bound: bool,
}

/// Operations far slower than an addition, charged at their own measured rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Special {
    /// Division and remainder by a value not known at compile time.
    Div,
    Sqrt,
    /// `exp` and its relatives (`tanh`, half of `pow`).
    Exp,
    /// `log` and its relatives (half of `pow`).
    Log,
    /// `sin`, `cos`, `tan` and the inverse functions.
    Trig,
}

impl Special {
    pub const ALL: [Special; 5] =
        [Special::Div, Special::Sqrt, Special::Exp, Special::Log, Special::Trig];

    /// The name printed, and the profile's benchmark (`operations.special[].op`).
    pub fn name(self) -> &'static str {
        match self {
            Special::Div => "div",
            Special::Sqrt => "sqrt",
            Special::Exp => "exp",
            Special::Log => "log",
            Special::Trig => "sin",
        }
    }
}

/// Atomic updates of one destination by a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomicCount {
    pub ptr: String,
    pub space: MemSpace,
    /// A `float` addition (a compare-and-swap loop), else an integer atomic.
    pub float: bool,
    /// Executions per launch, all work-items together.
    pub count: Expr,
    /// The addresses the updates spread over, when the index is clamped to a known
    /// range (a histogram's bins).
    pub bins: Option<Expr>,
}

impl Cost {
    /// Bytes per address space and direction.
    pub fn bytes(&self, space: MemSpace, dir: Dir) -> Expr {
        sum(self
            .accesses
            .iter()
            .filter(|a| a.space == space && a.dir == dir)
            .map(|a| mul(a.count.clone(), Expr::I64(i64::from(a.elem_bytes)))))
    }

    /// Replaces variables (the kernel's parameters by a launch's arguments).
    pub fn substitute(&self, f: &dyn Fn(Var) -> Option<Expr>) -> Cost {
        Cost {
            items: simplify(&subst(&self.items, f)),
            work: simplify(&subst(&self.work, f)),
            span: simplify(&subst(&self.span, f)),
            accesses: self
                .accesses
                .iter()
                .map(|a| Access {
                    count: simplify(&subst(&a.count, f)),
                    stride: match &a.stride {
                        Stride::Elems(e) => Stride::Elems(simplify(&subst(e, f))),
                        other => other.clone(),
                    },
                    ..a.clone()
                })
                .collect(),
            special: self
                .special
                .iter()
                .map(|(class, count)| (*class, simplify(&subst(count, f))))
                .collect(),
            barriers: simplify(&subst(&self.barriers, f)),
            atomics: self
                .atomics
                .iter()
                .map(|a| AtomicCount {
                    count: simplify(&subst(&a.count, f)),
                    bins: a.bins.as_ref().map(|b| simplify(&subst(b, f))),
                    ..a.clone()
                })
                .collect(),
            notes: self.notes.clone(),
            lower_bound: self.lower_bound,
        }
    }

    /// The predicted time of one launch on `profile`, the sizes bound by `sizes`,
    /// enqueued on an idle device ([`Prediction::queued`] for one enqueued behind
    /// running work).
    pub fn predict(
        &self,
        profile: &DeviceProfile,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<Prediction, PredictError> {
        let machine = Machine::of(profile);
        let value = |e: &Expr| eval_i64(e, sizes).map(|v| v as f64);
        let items = value(&self.items)?.max(1.0);
        let occupancy = (items / machine.concurrency).min(1.0);
        // A work-item runs at most one dependent operation per operation latency
        // (seed 002's latency-bound small grids): the device's rate needs enough
        // work-items to hide it.
        let issue = match machine.op_latency_s {
            Some(latency) => (items / (latency * machine.ops_per_s)).min(1.0),
            None => occupancy,
        };
        // Compute: plain operations at the multiply-add rate, the others at theirs.
        let mut special_s = 0.0;
        let mut special_ops = 0.0;
        for (class, count) in &self.special {
            let count = value(count)?;
            special_ops += count;
            special_s += count / machine.special_per_s(*class);
        }
        let plain = (value(&self.work)? - special_ops).max(0.0);
        let barrier_s = value(&self.barriers)? / machine.barrier_per_s;
        let compute_s = ((plain / machine.ops_per_s + special_s + barrier_s) / issue)
            .max(value(&self.span)? / machine.clock_hz);
        // Memory: reads every point makes alike (`reused`) are served by a cache.
        let cached: Vec<bool> = self
            .accesses
            .iter()
            .map(|a| a.reused && a.dir == Dir::Read && machine.cached_s_per_byte.is_some())
            .collect();
        // The copy bandwidth at the kernel's accesses per work-item.
        let mut global_accesses = 0.0;
        for (access, &cached) in self.accesses.iter().zip(&cached) {
            let global = matches!(access.space, MemSpace::Global | MemSpace::Constant);
            if global && !cached && !machine.is_uniform(&access.stride, sizes)? {
                global_accesses += value(&access.count)?;
            }
        }
        let per_item = global_accesses / items;
        let bandwidth = machine.global_bytes_per_s_at(per_item);
        let mut memory_s = 0.0;
        let mut local_s = 0.0;
        for (access, &cached) in self.accesses.iter().zip(&cached) {
            let bytes = value(&access.count)? * f64::from(access.elem_bytes);
            memory_s += match access.space {
                MemSpace::Global | MemSpace::Constant => {
                    if machine.is_uniform(&access.stride, sizes)? {
                        bytes * machine.uniform_s_per_byte
                    } else if cached {
                        bytes * machine.cached_s_per_byte.unwrap_or_default()
                    } else {
                        bytes * machine.global_factor(&access.stride, sizes)? / bandwidth
                    }
                }
                MemSpace::Local => {
                    local_s += bytes * machine.local_factor(&access.stride, sizes)?
                        / machine.local_bytes_per_s;
                    0.0
                }
                MemSpace::Private => 0.0,
            };
        }
        let mut atomic_s = 0.0;
        for atomic in &self.atomics {
            let bins = atomic.bins.as_ref().map(&value).transpose()?;
            atomic_s += value(&atomic.count)? * machine.atomic_s(atomic, bins, profile);
        }
        let memory_s = match machine.load_latency_s {
            // Little's law: a work-item has `width` words in flight, so each one's
            // accesses take `accesses / width` load latencies, in waves of the device's
            // resident work-items; the bandwidth bounds it from below.
            Some(latency) => {
                let width = machine.copy_width_at(per_item);
                let waves = (items / machine.concurrency).max(1.0);
                let latency_bound = per_item / width * latency * waves;
                memory_s.max(latency_bound) + (local_s + atomic_s) / issue
            }
            None => (memory_s + local_s + atomic_s) / occupancy,
        };
        let launch_s = machine.launch_s;
        Ok(Prediction {
            seconds: launch_s + compute_s.max(memory_s),
            compute_s,
            memory_s,
            launch_s,
            transfer_s: 0.0,
            bound: if memory_s >= compute_s { "memory" } else { "compute" },
            model: MODEL,
            lower_bound: self.lower_bound,
        })
    }
}

/// A kernel launch of an entry's host plan and the conditions under which it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// Index into the entry's kernels.
    pub kernel: u32,
    pub name: String,
    /// Host conditions that must all hold for the launch to run (enclosing `if`s).
    pub when: Vec<Expr>,
    /// Launches per run: the trip counts of the enclosing host loops.
    pub repeat: Expr,
    /// The launch's cost over the entry's sizes.
    pub cost: Cost,
}

/// The static costs of an entry: per kernel (over its parameters), per launch (over
/// the entry's sizes), and its host-device transfers.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryCost {
    pub entry: String,
    /// Names of the host variables that appear in the entry-level formulas.
    pub names: Names,
    /// Per kernel, over its parameters (`names` of each in `kernel_names`).
    pub kernels: Vec<(String, Cost, Names)>,
    pub launches: Vec<Launch>,
    /// Bytes of the inputs uploaded at the start, and how many buffers.
    pub upload_bytes: Expr,
    pub uploads: Expr,
    /// Bytes of the results read back at the end, and how many buffers.
    pub download_bytes: Expr,
    pub downloads: Expr,
    /// Single scalars the plan reads back during the run (control flow, sizes).
    pub scalar_reads: Expr,
    /// Approximations made for the entry (loops of unknown trip count, ...).
    pub notes: Vec<String>,
    /// A host `while` loop's launches are counted once: the time is a lower bound.
    pub lower_bound: bool,
}

/// A predicted time and its parts, in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub seconds: f64,
    pub compute_s: f64,
    pub memory_s: f64,
    pub launch_s: f64,
    /// Host-device transfers (entries only).
    pub transfer_s: f64,
    /// `memory` or `compute`: the larger of the two.
    pub bound: &'static str,
    pub model: &'static str,
    /// At least this: a `while` loop (in a kernel or on the host) is counted once.
    pub lower_bound: bool,
}

impl Prediction {
    /// The same launch enqueued while the device still runs earlier work: its floor is
    /// the queued launch's (the device prepares it meanwhile), the rest unchanged.
    pub fn queued(&self, machine: &Machine) -> Prediction {
        let launch_s = machine.queued_launch_s;
        Prediction { seconds: self.seconds - self.launch_s + launch_s, launch_s, ..self.clone() }
    }
}

/// An entry's predicted time: kernels, transfers, and each launch that runs.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryPrediction {
    /// Kernels and transfers together.
    pub total: Prediction,
    /// The kernels only (what `weft bench` measures).
    pub kernels_s: f64,
    /// Per launch that runs on these sizes: its index in [`EntryCost::launches`], and
    /// its prediction (all its repetitions).
    pub launches: Vec<(usize, Prediction)>,
}

/// Why a prediction could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PredictError(pub String);

impl fmt::Display for PredictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PredictError {}

impl EntryCost {
    /// The sizes lookup for named sizes (`[("n", 1000), ("m", 32)]`): each host variable
    /// named so gets the value.
    pub fn bind<'a>(&'a self, sizes: &'a [(&'a str, i64)]) -> impl Fn(Var) -> Option<i64> + 'a {
        move |var| {
            let name = self.names.0.get(&var)?;
            sizes.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
        }
    }

    /// The predicted time of a run with these sizes: the launches whose conditions hold,
    /// times their repetitions, plus the transfers.
    pub fn predict(
        &self,
        profile: &DeviceProfile,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<EntryPrediction, PredictError> {
        let mut launches = Vec::new();
        let (mut compute_s, mut memory_s, mut launch_s, mut kernels_s) = (0.0, 0.0, 0.0, 0.0);
        let mut lower_bound = self.lower_bound;
        // The queue, simulated: the host enqueues a launch every `back_to_back_s`; a
        // launch enqueued while the device still runs earlier ones waits there, and its
        // floor is the queued launch's.
        let machine = Machine::of(profile);
        let back_to_back = machine.back_to_back_s;
        let (mut host_s, mut device_free_s) = (0.0f64, 0.0f64);
        for (idx, launch) in self.launches.iter().enumerate() {
            if !self.runs(launch, sizes)? {
                continue;
            }
            let times = eval_i64(&launch.repeat, sizes)? as f64;
            let idle = launch.cost.predict(profile, sizes)?;
            let queued = idle.queued(&machine);
            let first = if device_free_s > host_s { queued.clone() } else { idle.clone() };
            // Later repetitions queue behind the earlier ones when each lasts longer than
            // the host takes to enqueue the next.
            let again = if queued.seconds >= back_to_back { queued } else { idle };
            // A launch repeated 0 times (a loop that does not run) costs nothing.
            let (once, rest) = (times.clamp(0.0, 1.0), (times - 1.0).max(0.0));
            let p = Prediction {
                seconds: once * first.seconds + rest * again.seconds,
                compute_s: once * first.compute_s + rest * again.compute_s,
                memory_s: once * first.memory_s + rest * again.memory_s,
                launch_s: once * first.launch_s + rest * again.launch_s,
                ..first
            };
            device_free_s = device_free_s.max(host_s) + p.seconds;
            host_s += times * back_to_back;
            compute_s += p.compute_s;
            memory_s += p.memory_s;
            launch_s += p.launch_s;
            kernels_s += p.seconds;
            lower_bound |= p.lower_bound;
            launches.push((idx, p));
        }
        let t = &profile.transfer;
        let bytes = |e: &Expr| eval_i64(e, sizes).map(|v| v as f64);
        let transfer_s =
            t.host_to_device.seconds(bytes(&self.uploads)?, bytes(&self.upload_bytes)?)
                + t.device_to_host.seconds(
                    bytes(&self.downloads)? + bytes(&self.scalar_reads)?,
                    bytes(&self.download_bytes)?,
                );
        Ok(EntryPrediction {
            total: Prediction {
                seconds: kernels_s + transfer_s,
                compute_s,
                memory_s,
                launch_s,
                transfer_s,
                bound: if memory_s >= compute_s { "memory" } else { "compute" },
                model: MODEL,
                lower_bound,
            },
            kernels_s,
            launches,
        })
    }

    /// Whether the launch's conditions hold for these sizes.
    pub fn runs(
        &self,
        launch: &Launch,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<bool, PredictError> {
        for cond in &launch.when {
            match eval(cond, sizes)? {
                Scalar::Bool(true) => {}
                Scalar::Bool(false) => return Ok(false),
                _ => return Err(PredictError("a launch condition is not a boolean".into())),
            }
        }
        Ok(true)
    }

    /// What `weft dump --ir costs` prints: each kernel over its parameters, then the
    /// entry's launches and transfers over its sizes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "costs of entry `{}`", self.entry);
        for (name, cost, names) in &self.kernels {
            let _ = writeln!(out, "  kernel {name}");
            render_cost(&mut out, cost, names, "    ");
        }
        let _ = writeln!(out, "  launches");
        for launch in &self.launches {
            let mut line = format!("    {}", launch.name);
            if !is_one(&launch.repeat) {
                let _ = write!(line, " ×{}", show(&launch.repeat, &self.names));
            }
            if !launch.when.is_empty() {
                let conds: Vec<String> = launch.when.iter().map(|c| show(c, &self.names)).collect();
                let _ = write!(line, " when {}", conds.join(" and "));
            }
            let _ = writeln!(out, "{line}");
            render_cost(&mut out, &launch.cost, &self.names, "      ");
        }
        let _ = writeln!(
            out,
            "  transfers: upload {} bytes in {} buffers, download {} bytes in {} buffers, {} scalar reads",
            show(&self.upload_bytes, &self.names),
            show(&self.uploads, &self.names),
            show(&self.download_bytes, &self.names),
            show(&self.downloads, &self.names),
            show(&self.scalar_reads, &self.names),
        );
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        out
    }
}

fn render_cost(out: &mut String, cost: &Cost, names: &Names, pad: &str) {
    let s = |e: &Expr| show(e, names);
    let _ = writeln!(out, "{pad}work-items {}", s(&cost.items));
    let _ = writeln!(out, "{pad}work {}", s(&cost.work));
    let _ = writeln!(out, "{pad}span {}", s(&cost.span));
    // Accesses grouped by space, direction, pointer and stride.
    let mut groups: BTreeMap<(MemSpace, Dir, String, String, u32), Vec<Expr>> = BTreeMap::new();
    for a in &cost.accesses {
        let stride = match &a.stride {
            Stride::Uniform => "uniform".to_owned(),
            Stride::Irregular => "irregular".to_owned(),
            Stride::Elems(e) => match e.as_const() {
                Some(1 | -1) => "coalesced".to_owned(),
                Some(0) => "uniform".to_owned(),
                _ => format!("stride {}", s(e)),
            },
        };
        let stride = if a.reused { format!("{stride}, reused") } else { stride };
        groups
            .entry((a.space, a.dir, a.ptr.clone(), stride, a.elem_bytes))
            .or_default()
            .push(a.count.clone());
    }
    for ((space, dir, ptr, stride, bytes), counts) in groups {
        let verb = match dir {
            Dir::Read => "reads",
            Dir::Write => "writes",
        };
        let total = mul(sum(counts), Expr::I64(i64::from(bytes)));
        let _ = writeln!(
            out,
            "{pad}{space} {verb} {ptr}: {} bytes, {stride}",
            s(&total),
            space = space.name()
        );
    }
    for (class, count) in &cost.special {
        let _ = writeln!(out, "{pad}special {}: {}", class.name(), s(count));
    }
    if !matches!(cost.barriers.as_const(), Some(0)) {
        let _ = writeln!(out, "{pad}barriers {}", s(&cost.barriers));
    }
    for a in &cost.atomics {
        let kind = if a.float { "float atomic adds" } else { "atomics" };
        let bins = a.bins.as_ref().map(|b| format!(" into {} bins", s(b))).unwrap_or_default();
        let _ = writeln!(out, "{pad}{} {kind} on {}: {}{bins}", a.space.name(), a.ptr, s(&a.count));
    }
    for note in &cost.notes {
        let _ = writeln!(out, "{pad}note: {note}");
    }
}

/// The profile's numbers the model uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Work-items running at once (H).
    pub concurrency: f64,
    /// Scalar operations per second over the device (`f32_flops / 2`).
    pub ops_per_s: f64,
    /// One work-item's operations per second (the clock).
    pub clock_hz: f64,
    pub global_bytes_per_s: f64,
    pub local_bytes_per_s: f64,
    pub launch_s: f64,
    /// The floor of a kernel enqueued behind running work (the idle floor without a
    /// profile of format 2).
    pub queued_launch_s: f64,
    /// The host's interval between enqueued launches.
    pub back_to_back_s: f64,
    pub simd_width: f64,
    /// `(stride, slowdown)` of strided global reads, stride 1 first.
    pub global_strided: Vec<(i64, f64)>,
    /// `(stride in words, slowdown)` of strided local reads.
    pub local_strided: Vec<(i64, f64)>,
    /// `(words per work-item, bytes per second)` of copies: the one-word copy first.
    pub copy_widths: Vec<(f64, f64)>,
    /// Seconds per byte of a uniform global read.
    pub uniform_s_per_byte: f64,
    /// One dependent global load, in seconds; `None` without a profile of format 2.
    pub load_latency_s: Option<f64>,
    /// One dependent multiply-add, in seconds; `None` without a profile of format 2.
    pub op_latency_s: Option<f64>,
    /// Seconds per byte of a coalesced read a cache serves (the largest cached window's
    /// rate); `None` without a profile of format 2.
    pub cached_s_per_byte: Option<f64>,
    /// Operations per second of each special class (the plain rate without a profile
    /// of format 2).
    pub special: Vec<(Special, f64)>,
    pub barrier_per_s: f64,
    /// `(bins, per second)` of integer and of float atomics, fewest bins first (empty
    /// without a profile of format 2).
    pub atomics: Vec<(f64, f64)>,
    pub float_atomics: Vec<(f64, f64)>,
    /// The same into a work-group's bins in local memory.
    pub local_atomics: Vec<(f64, f64)>,
    pub local_float_atomics: Vec<(f64, f64)>,
}

impl Machine {
    pub fn of(profile: &DeviceProfile) -> Machine {
        let d = &profile.device;
        let per_unit = if d.kind.eq_ignore_ascii_case("gpu") {
            d.max_work_group_size
        } else {
            d.simd_width.max(1)
        };
        let table = |points: &[crate::profile::StridePoint]| {
            points.iter().map(|p| (i64::from(p.stride), p.slowdown.max(1.0))).collect()
        };
        let ops_per_s = profile.compute.f32_flops / 2.0;
        let simd_width = d.simd_width.max(1) as f64;
        let ops = profile.operations.as_ref();
        let mut copy_widths = vec![(1.0, profile.global.bytes_per_s)];
        let rates = |points: &[crate::profile::AtomicRate]| {
            let mut rates: Vec<(f64, f64)> =
                points.iter().map(|p| (p.bins as f64, p.per_s)).collect();
            rates.sort_by(|a, b| a.0.total_cmp(&b.0));
            rates
        };
        let (mut atomics, mut float_atomics) = (Vec::new(), Vec::new());
        let (mut local_atomics, mut local_float_atomics) = (Vec::new(), Vec::new());
        if let Some(ops) = ops {
            copy_widths.extend(ops.wide_copies.iter().map(|c| (f64::from(c.words), c.bytes_per_s)));
            copy_widths.sort_by(|a, b| a.0.total_cmp(&b.0));
            atomics = rates(&ops.atomics);
            float_atomics = rates(&ops.float_atomics);
            local_atomics = rates(&ops.local_atomics);
            local_float_atomics = rates(&ops.local_float_atomics);
        }
        let cached = ops.and_then(|o| o.cached_reads.first()).map(|c| c.bytes_per_s);
        let cached_s_per_byte =
            ops.and_then(|o| o.cached_reads.last()).map(|c| 1.0 / c.bytes_per_s);
        Machine {
            concurrency: f64::from(d.compute_units.max(1)) * per_unit.max(1) as f64,
            ops_per_s,
            clock_hz: f64::from(d.max_clock_mhz.max(1)) * 1e6,
            global_bytes_per_s: profile.global.bytes_per_s,
            local_bytes_per_s: profile.local.bytes_per_s,
            launch_s: ops.map_or(profile.launch.kernel_s, |o| o.warm_launch_s),
            queued_launch_s: ops.map_or(profile.launch.kernel_s, |o| o.queued_launch_s),
            back_to_back_s: profile.launch.back_to_back_s,
            simd_width,
            global_strided: table(&profile.global.strided),
            local_strided: table(&profile.local.strided),
            copy_widths,
            cached_s_per_byte,
            load_latency_s: ops.map(|o| o.load_latency_s),
            op_latency_s: ops.map(|o| o.op_latency_s),
            uniform_s_per_byte: match cached {
                Some(bytes_per_s) => 1.0 / bytes_per_s,
                None => 1.0 / (simd_width * profile.global.bytes_per_s),
            },
            special: Special::ALL
                .iter()
                .map(|&class| {
                    let measured = ops
                        .and_then(|o| o.special.iter().find(|r| r.op == class.name()))
                        .map(|r| r.per_s);
                    (class, measured.unwrap_or(ops_per_s))
                })
                .collect(),
            barrier_per_s: ops.map_or(f64::INFINITY, |o| o.barrier_per_s),
            atomics,
            float_atomics,
            local_atomics,
            local_float_atomics,
        }
    }

    /// Operations per second of a special class.
    pub fn special_per_s(&self, class: Special) -> f64 {
        self.special.iter().find(|(c, _)| *c == class).map_or(self.ops_per_s, |(_, r)| *r)
    }

    /// The global bandwidth of a kernel whose work-items make `accesses` global
    /// accesses each: the copy of `accesses / 2` words per work-item (1 to the widest
    /// measured), interpolated between the measured widths.
    pub fn global_bytes_per_s_at(&self, accesses: f64) -> f64 {
        let width = (accesses / 2.0).max(1.0);
        let mut below = self.copy_widths.first().copied().unwrap_or((1.0, self.global_bytes_per_s));
        for &(w, rate) in &self.copy_widths {
            if w >= width {
                if w == below.0 {
                    return rate;
                }
                let t = (width - below.0) / (w - below.0);
                return below.1 + t * (rate - below.1);
            }
            below = (w, rate);
        }
        below.1
    }

    /// The words a work-item has in flight at `accesses` global accesses each: half of
    /// them (a read and a write per word copied), from 1 to the widest measured copy.
    pub fn copy_width_at(&self, accesses: f64) -> f64 {
        let widest = self.copy_widths.last().map_or(1.0, |w| w.0);
        (accesses / 2.0).clamp(1.0, widest)
    }

    /// Whether an access is uniform: one address per SIMD group.
    fn is_uniform(
        &self,
        stride: &Stride,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<bool, PredictError> {
        Ok(match stride {
            Stride::Uniform => true,
            Stride::Irregular => false,
            Stride::Elems(e) => eval_i64(e, sizes)? == 0,
        })
    }

    /// Seconds per atomic update: the rate at the fewest measured bins at or above the
    /// destination's (the most bins when unknown or beyond), among the measurements
    /// whose bins fit in the cache when the destination does; a read and a write at
    /// the copy bandwidth without measured rates.
    fn atomic_s(&self, atomic: &AtomicCount, bins: Option<f64>, profile: &DeviceProfile) -> f64 {
        let table = match (atomic.space, atomic.float) {
            (MemSpace::Local, true) => &self.local_float_atomics,
            (MemSpace::Local, false) => &self.local_atomics,
            (_, true) => &self.float_atomics,
            (_, false) => &self.atomics,
        };
        let cache = profile.device.global_mem_cache_bytes as f64;
        let fits = |b: f64| atomic.space == MemSpace::Local || b * 4.0 <= cache;
        let point = match bins {
            Some(bins) if fits(bins) => {
                let cached: Vec<&(f64, f64)> = table.iter().filter(|(b, _)| fits(*b)).collect();
                cached.iter().find(|(b, _)| *b >= bins).or(cached.last()).copied()
            }
            Some(bins) => table.iter().find(|(b, _)| *b >= bins).or(table.last()),
            None => table.last(),
        };
        match point {
            Some((_, per_s)) => 1.0 / per_s,
            None => 8.0 / self.global_bytes_per_s,
        }
    }

    /// The slowdown of global accesses `stride` elements apart: the first measured
    /// stride at or above it.
    pub fn global_slowdown(&self, stride: i64) -> f64 {
        let stride = stride.unsigned_abs();
        self.global_strided
            .iter()
            .find(|(s, _)| s.unsigned_abs() >= stride)
            .or(self.global_strided.last())
            .map_or(1.0, |p| p.1)
    }

    /// The slowdown of local accesses `words` 32-bit words apart: the largest measured
    /// stride that divides it (the bank-conflict degree).
    pub fn local_slowdown(&self, words: i64) -> f64 {
        if words == 0 {
            return 1.0;
        }
        self.local_strided
            .iter()
            .filter(|(s, _)| *s > 0 && words % s == 0)
            .map(|p| p.1)
            .next_back()
            .unwrap_or(1.0)
    }

    fn global_factor(
        &self,
        stride: &Stride,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<f64, PredictError> {
        Ok(match stride {
            Stride::Uniform => 1.0 / self.simd_width,
            Stride::Irregular => self.global_strided.last().map_or(1.0, |p| p.1),
            Stride::Elems(e) => match eval_i64(e, sizes)? {
                0 => 1.0 / self.simd_width,
                s => self.global_slowdown(s),
            },
        })
    }

    fn local_factor(
        &self,
        stride: &Stride,
        sizes: &dyn Fn(Var) -> Option<i64>,
    ) -> Result<f64, PredictError> {
        Ok(match stride {
            Stride::Uniform | Stride::Irregular => 1.0,
            Stride::Elems(e) => self.local_slowdown(eval_i64(e, sizes)?),
        })
    }
}

fn eval(e: &Expr, sizes: &dyn Fn(Var) -> Option<i64>) -> Result<Scalar, PredictError> {
    weft_plan::eval(e, &|v| sizes(v).map(Scalar::I64)).map_err(|error| match error {
        weft_plan::EvalError::Unbound(_) => {
            PredictError("the cost depends on a value not known before the run".into())
        }
        other => PredictError(other.to_string()),
    })
}

/// Evaluates a count or size.
pub fn eval_i64(e: &Expr, sizes: &dyn Fn(Var) -> Option<i64>) -> Result<i64, PredictError> {
    match eval(e, sizes)? {
        Scalar::I64(v) => Ok(v),
        Scalar::Bool(b) => Ok(i64::from(b)),
        _ => Err(PredictError("a cost is not an integer".into())),
    }
}

// ---- Building expressions, with the constant folding the printer relies on.

trait AsConst {
    fn as_const(&self) -> Option<i64>;
}

impl AsConst for Expr {
    fn as_const(&self) -> Option<i64> {
        match self {
            Expr::I64(v) => Some(*v),
            // An `i64` constant of the plan (a size written in the source).
            Expr::Lit { elem: Elem::I64, bits } => Some(i64::from_ne_bytes(bits.to_ne_bytes())),
            _ => None,
        }
    }
}

fn is_one(e: &Expr) -> bool {
    e.as_const() == Some(1)
}

/// `a + b`, folding constants.
pub fn add(a: Expr, b: Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::I64(x.wrapping_add(y)),
        (Some(0), _) => b,
        (_, Some(0)) => a,
        _ => Expr::bin(BinOp::Add, a, b),
    }
}

/// `a * b`, folding constants.
pub fn mul(a: Expr, b: Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::I64(x.wrapping_mul(y)),
        (Some(0), _) | (_, Some(0)) => Expr::I64(0),
        (Some(1), _) => b,
        (_, Some(1)) => a,
        _ => Expr::bin(BinOp::Mul, a, b),
    }
}

/// `a / b` (truncating), folding constants.
pub fn div(a: Expr, b: Expr) -> Expr {
    if let (Expr::Bin(BinOp::Mul, x, y), Some(c)) = (&a, b.as_const())
        && c > 0
    {
        // `(k*x) / c` is `(k/c)*x` when `c` divides `k`.
        match (x.as_const(), y.as_const()) {
            (Some(k), _) if k % c == 0 => return mul(Expr::I64(k / c), (**y).clone()),
            (_, Some(k)) if k % c == 0 => return mul((**x).clone(), Expr::I64(k / c)),
            _ => {}
        }
    }
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) if y != 0 => Expr::I64(x.wrapping_div(y)),
        (_, Some(1)) => a,
        _ => Expr::bin(BinOp::Div, a, b),
    }
}

/// `⌈a / b⌉` for positive `b`.
pub fn ceil_div(a: Expr, b: Expr) -> Expr {
    if let (Expr::Bin(BinOp::Mul, x, y), Some(c)) = (&a, b.as_const())
        && c > 0
    {
        // `(k*x) / c` is exact when `c` divides `k`.
        match (x.as_const(), y.as_const()) {
            (Some(k), _) if k % c == 0 => return mul(Expr::I64(k / c), (**y).clone()),
            (_, Some(k)) if k % c == 0 => return mul((**x).clone(), Expr::I64(k / c)),
            _ => {}
        }
    }
    match b.as_const() {
        Some(1) => a,
        Some(c) if c > 1 => div(add(a, Expr::I64(c - 1)), b),
        _ => div(add(a, Expr::bin(BinOp::Sub, b.clone(), Expr::I64(1))), b),
    }
}

/// `max(a, b)`, folding constants; `max(min(x, b), b)` is `b`.
pub fn max(a: Expr, b: Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::I64(x.max(y)),
        _ if a == b => a,
        _ if has_operand(&a, BinOp::Min, &b) => b,
        _ if has_operand(&b, BinOp::Min, &a) => a,
        _ => Expr::bin(BinOp::Max, a, b),
    }
}

/// `min(a, b)`, folding constants; `min(max(x, b), b)` is `b`.
fn min(a: Expr, b: Expr) -> Expr {
    match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::I64(x.min(y)),
        _ if a == b => a,
        _ if has_operand(&a, BinOp::Max, &b) => b,
        _ if has_operand(&b, BinOp::Max, &a) => a,
        _ => Expr::bin(BinOp::Min, a, b),
    }
}

/// Whether `e` is `op(x, y)` with `operand` as `x` or `y`.
fn has_operand(e: &Expr, op: BinOp, operand: &Expr) -> bool {
    matches!(e, Expr::Bin(o, x, y) if *o == op && (**x == *operand || **y == *operand))
}

/// `c ? a : b`, the branch taken when `c` is a constant.
fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    match c {
        Expr::Bool(true) => a,
        Expr::Bool(false) => b,
        _ if a == b => a,
        _ => match c.as_const() {
            Some(0) => b,
            Some(_) => a,
            None => Expr::Select(Box::new(c), Box::new(a), Box::new(b)),
        },
    }
}

/// `a op b`, evaluated when both are constants.
pub fn fold(op: BinOp, a: Expr, b: Expr) -> Expr {
    match op {
        BinOp::Add => return add(a, b),
        BinOp::Mul => return mul(a, b),
        BinOp::Div => return div(a, b),
        BinOp::Max => return max(a, b),
        BinOp::Min => return min(a, b),
        BinOp::Sub if b.as_const() == Some(0) => return a,
        _ => {}
    }
    let folded = match (&a, &b) {
        (Expr::I64(_) | Expr::Bool(_), Expr::I64(_) | Expr::Bool(_)) => {
            weft_plan::eval(&Expr::bin(op, a.clone(), b.clone()), &|_| None).ok()
        }
        _ => None,
    };
    match folded {
        Some(Scalar::I64(v)) => Expr::I64(v),
        Some(Scalar::Bool(v)) => Expr::Bool(v),
        _ => Expr::bin(op, a, b),
    }
}

/// The sum of counts (0 for none).
pub fn sum(terms: impl IntoIterator<Item = Expr>) -> Expr {
    terms.into_iter().fold(Expr::I64(0), add)
}

/// Replaces variables by expressions.
pub fn subst(e: &Expr, f: &dyn Fn(Var) -> Option<Expr>) -> Expr {
    let go = |e: &Expr| Box::new(subst(e, f));
    match e {
        Expr::Var(v) => f(*v).unwrap_or_else(|| e.clone()),
        Expr::I64(_) | Expr::Bool(_) | Expr::Lit { .. } => e.clone(),
        Expr::Bin(op, a, b) => {
            let (a, b) = (subst(a, f), subst(b, f));
            fold(*op, a, b)
        }
        Expr::Not(a) => match subst(a, f) {
            Expr::Bool(v) => Expr::Bool(!v),
            other => Expr::Not(Box::new(other)),
        },
        Expr::Neg(a) => match subst(a, f) {
            Expr::I64(v) => Expr::I64(v.wrapping_neg()),
            other => Expr::Neg(Box::new(other)),
        },
        Expr::Select(c, a, b) => match subst(c, f) {
            Expr::Bool(true) => subst(a, f),
            Expr::Bool(false) => subst(b, f),
            c => select(c, subst(a, f), subst(b, f)),
        },
        Expr::Convert(elem, a) => Expr::Convert(*elem, go(a)),
    }
}

/// Normalises the polynomial parts of an expression (like terms merged, constants
/// folded), keeping other operations as opaque factors whose operands are simplified.
pub fn simplify(e: &Expr) -> Expr {
    simplify_with(e, false)
}

/// [`simplify`], and (`readable`, for a reader only) a quotient exact as polynomials
/// taken as it is: `(x*s)/s` is `x`, though it fails where `s` is 0.
fn simplify_with(e: &Expr, readable: bool) -> Expr {
    let mut atoms = Vec::new();
    let p = to_poly(e, &mut atoms, readable);
    let mut out = Expr::I64(0);
    for term in p.terms() {
        let mut m = Expr::I64(term.coeff());
        for atom in term.monomial().atoms() {
            if let weft_size::Atom::Var(i) = atom {
                m = mul(m, atoms[*i].clone());
            }
        }
        out = add(out, m);
    }
    out
}

fn to_poly(e: &Expr, atoms: &mut Vec<Expr>, readable: bool) -> Size<usize> {
    if let Some(v) = e.as_const() {
        return Size::constant(v);
    }
    let s = |e: &Expr| simplify_with(e, readable);
    match e {
        Expr::I64(v) => Size::constant(*v),
        // `(x*s)/s` is `x` for a reader: a quotient exact as polynomials (an integer
        // division by a size that divides every term; where the size is 0 the division
        // fails). Expressions that run keep the division.
        Expr::Bin(BinOp::Div, a, b)
            if readable
                && let Some(q) = to_poly(a, atoms, readable)
                    .checked_div(&to_poly(b, atoms, readable))
                    .filter(|_| {
                        to_poly(b, atoms, readable).as_constant().is_none_or(|c| c > 0)
                    }) =>
        {
            q
        }
        Expr::Bin(BinOp::Add, a, b) => {
            to_poly(a, atoms, readable).add(&to_poly(b, atoms, readable))
        }
        Expr::Bin(BinOp::Sub, a, b) => {
            to_poly(a, atoms, readable).sub(&to_poly(b, atoms, readable))
        }
        Expr::Bin(BinOp::Mul, a, b) => {
            to_poly(a, atoms, readable).mul(&to_poly(b, atoms, readable))
        }
        Expr::Neg(a) => to_poly(a, atoms, readable).neg(),
        other => {
            let atom = match other {
                Expr::Bin(op, a, b) => fold(*op, s(a), s(b)),
                Expr::Select(c, a, b) => select(s(c), s(a), s(b)),
                Expr::Not(a) => Expr::Not(Box::new(s(a))),
                Expr::Convert(elem, a) => Expr::Convert(*elem, Box::new(s(a))),
                _ => other.clone(),
            };
            if let Expr::I64(v) = atom {
                return Size::constant(v);
            }
            let idx = atoms.iter().position(|a| *a == atom).unwrap_or_else(|| {
                atoms.push(atom);
                atoms.len() - 1
            });
            Size::var(idx)
        }
    }
}

// ---- Printing.

/// Prints a cost expression with the names: sums and products as a normalised
/// polynomial (`4*n*m + 8*n`), `⌈a/b⌉`, `max(a, b)`, `(c ? a : b)`.
pub fn show(e: &Expr, names: &Names) -> String {
    Printer { names, readable: false }.show(e)
}

/// Prints a cost expression for a reader (the editor's hovers): [`simplify`]d, every
/// ceiling division written `⌈a/b⌉` whatever the order of its numerator's terms and
/// whether its divisor is a constant (`(255 + n)/256`, `(n + g - 1)/g`), and nested ones
/// merged (`⌈⌈k/4⌉/256⌉` is `⌈k/1024⌉`, equal for a non-negative `k`, as sizes are).
pub fn show_readable(e: &Expr, names: &Names) -> String {
    Printer { names, readable: true }.show(&simplify_with(e, true))
}

struct Printer<'a> {
    names: &'a Names,
    /// Whether ceiling divisions are found in any form ([`show_readable`]).
    readable: bool,
}

impl Printer<'_> {
    fn show(&self, e: &Expr) -> String {
        match self.poly(e) {
            Some(p) => p.to_string(),
            None => self.atom(e),
        }
    }

    fn poly(&self, e: &Expr) -> Option<Size<String>> {
        Some(match e {
            Expr::I64(v) => Size::constant(*v),
            Expr::Lit { elem, bits } => match weft_plan::lit(*elem, *bits) {
                Scalar::I64(v) => Size::constant(v),
                Scalar::I32(v) => Size::constant(i64::from(v)),
                _ => return None,
            },
            Expr::Bin(BinOp::Add, a, b) => self.poly_or_atom(a).add(&self.poly_or_atom(b)),
            Expr::Bin(BinOp::Sub, a, b) => self.poly_or_atom(a).sub(&self.poly_or_atom(b)),
            Expr::Bin(BinOp::Mul, a, b) => self.poly_or_atom(a).mul(&self.poly_or_atom(b)),
            Expr::Neg(a) => self.poly_or_atom(a).neg(),
            // An entry's dimension written as a constant (`[8]f32`) is named by it.
            Expr::Var(v) => {
                let name = self.names.name(*v);
                match name.parse::<i64>() {
                    Ok(c) => Size::constant(c),
                    Err(_) => Size::var(paren(name)),
                }
            }
            _ => return None,
        })
    }

    fn poly_or_atom(&self, e: &Expr) -> Size<String> {
        self.poly(e).unwrap_or_else(|| Size::var(self.atom(e)))
    }

    fn atom(&self, e: &Expr) -> String {
        let s = |e: &Expr| self.show(e);
        match e {
            Expr::Bool(b) => b.to_string(),
            Expr::Lit { elem, bits } => match weft_plan::lit(*elem, *bits) {
                Scalar::I8(v) => v.to_string(),
                Scalar::I16(v) => v.to_string(),
                Scalar::U8(v) => v.to_string(),
                Scalar::U16(v) => v.to_string(),
                Scalar::F16(x) => x.to_string(),
                Scalar::I32(v) => v.to_string(),
                Scalar::I64(v) => v.to_string(),
                Scalar::U32(v) => v.to_string(),
                Scalar::U64(v) => v.to_string(),
                Scalar::F32(x) => x.to_string(),
                Scalar::F64(x) => x.to_string(),
                Scalar::Bool(b) => b.to_string(),
            },
            Expr::Bin(BinOp::Div, a, b) => {
                if self.readable
                    && let Some((x, divisor)) = ceil_div_parts(a, b)
                {
                    return match (x.as_const(), divisor.as_const(), exact_div(&x, &divisor)) {
                        (_, _, Some(quotient)) => s(&quotient),
                        // What the division computes (`(x + c - 1)/c`, truncating).
                        (Some(x), Some(c), _) => (x.saturating_add(c - 1) / c).to_string(),
                        (_, Some(c), _) => format!("⌈{}/{c}⌉", s(&x)),
                        (_, None, _) => format!("⌈{}/{}⌉", paren(s(&x)), paren(s(&divisor))),
                    };
                }
                // `(a + (c - 1)) / c` is `⌈a/c⌉`.
                if let (Expr::Bin(BinOp::Add, x, k), Some(c)) = (&**a, b.as_const())
                    && k.as_const() == Some(c - 1)
                {
                    return format!("⌈{}/{c}⌉", s(x));
                }
                format!("({}/{})", paren(s(a)), paren(s(b)))
            }
            Expr::Bin(BinOp::Max, a, b) => format!("max({}, {})", s(a), s(b)),
            Expr::Bin(BinOp::Min, a, b) => format!("min({}, {})", s(a), s(b)),
            Expr::Bin(op, a, b) => format!("{} {} {}", s(a), op.symbol(), s(b)),
            Expr::Not(a) => format!("!({})", s(a)),
            Expr::Select(c, a, b) => format!("({} ? {} : {})", s(c), s(a), s(b)),
            Expr::Convert(Elem::I64, a) => s(a),
            Expr::Convert(elem, a) => format!("{}({})", elem.name(), s(a)),
            Expr::I64(_) | Expr::Var(_) | Expr::Neg(_) => {
                self.poly(e).map_or_else(|| "?".to_owned(), |p| p.to_string())
            }
        }
    }
}

/// `num / den` as a ceiling division `⌈x/d⌉`: `(x + (c - 1)) / c` for a constant `c > 1`,
/// or `(x + d - 1) / d`, the numerator's terms in any order; a numerator that is itself
/// a ceiling division by a constant is merged (`⌈⌈x/a⌉/b⌉` is `⌈x/(a*b)⌉`).
fn ceil_div_parts(num: &Expr, den: &Expr) -> Option<(Expr, Expr)> {
    let mut terms = Vec::new();
    add_terms(num, &mut terms);
    let mut take = |wanted: &Expr| -> Option<()> {
        let idx = terms.iter().position(|t| t == wanted)?;
        terms.remove(idx);
        Some(())
    };
    match den.as_const() {
        Some(c) if c > 1 => take(&Expr::I64(c - 1))?,
        Some(_) => return None,
        None => {
            take(den)?;
            take(&Expr::I64(-1))?;
        }
    }
    let x = sum(terms);
    if let (Expr::Bin(BinOp::Div, inner_num, inner_den), Some(c)) = (&x, den.as_const())
        && let Some((inner, d)) = ceil_div_parts(inner_num, inner_den)
        && let Some(d) = d.as_const()
    {
        return Some((inner, Expr::I64(d.saturating_mul(c))));
    }
    Some((x, den.clone()))
}

/// `x / c` when the constant `c > 0` divides `x`'s constant factor (`256*g / 256` is `g`).
fn exact_div(x: &Expr, c: &Expr) -> Option<Expr> {
    let c = c.as_const().filter(|&c| c > 0)?;
    let Expr::Bin(BinOp::Mul, a, b) = x else { return None };
    match (a.as_const(), b.as_const()) {
        (Some(k), _) if k % c == 0 => Some(mul(Expr::I64(k / c), (**b).clone())),
        (_, Some(k)) if k % c == 0 => Some(mul((**a).clone(), Expr::I64(k / c))),
        _ => None,
    }
}

/// The terms of a sum (`a + b + c`), in order.
fn add_terms(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bin(BinOp::Add, a, b) => {
            add_terms(a, out);
            add_terms(b, out);
        }
        other => out.push(other.clone()),
    }
}

fn paren(text: String) -> String {
    if text.contains(' ') { format!("({text})") } else { text }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
