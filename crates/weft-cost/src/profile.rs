//! Device profiles: what `weft calibrate` measures on an OpenCL device with
//! micro-benchmarks, the machine-model parameters of seed 002 (§8.3) from which the
//! cost model predicts times (docs/costs.md).
//!
//! A profile is a JSON file, versioned by its `"format"` field ([`FORMAT`]). Every
//! rate and time in it is measured: bandwidths in bytes per second, arithmetic rates
//! in floating-point operations per second (a fused multiply-add counts 2), times in
//! seconds. Kernel times come from OpenCL profiling events (the start and end of the
//! command), like `weft bench`'s; each number is the median of `reps` runs after
//! warm-up runs.
//!
//! Profiles measured on the devices the project uses are committed under
//! `profiles/` and embedded in the binary ([`builtin_profiles`]);
//! [`default_profile_for`] picks the one that fits a device, and
//! [`DeviceProfile::load`] reads a user's profile from a file.

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The version of the profile format this crate writes. It also reads format 1, which
/// lacks [`Operations`] (the model then charges those operations as plain ones).
pub const FORMAT: u32 = 2;

/// The oldest format this crate reads.
pub const OLDEST_FORMAT: u32 = 1;

/// A device's measured machine model (docs/costs.md, "Device profiles").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// The format version, [`FORMAT`].
    pub format: u32,
    /// The program that measured it and its version, `weft-runner 0.1.0`.
    pub tool: String,
    /// The UTC date of the measurement, `YYYY-MM-DD`.
    pub measured: String,
    /// Whether it was measured with `--quick` (fewer and smaller runs: good enough to
    /// test the tool, not to predict times).
    pub quick: bool,
    /// Measured runs per number (after warm-up runs): each number is their median.
    pub reps: u32,
    /// What OpenCL says about the device (`clGetDeviceInfo`).
    pub device: DeviceFacts,
    /// Global-memory bandwidth: a copy kernel over sizes, and strided reads.
    pub global: GlobalMemory,
    /// Local-memory bandwidth, without and with bank conflicts.
    pub local: LocalMemory,
    /// Arithmetic rates.
    pub compute: Compute,
    /// Kernel-launch overheads.
    pub launch: Launch,
    /// Host-device transfers (`clEnqueueWriteBuffer` and `clEnqueueReadBuffer` from
    /// and to ordinary, pageable host memory, as the runtime does them).
    pub transfer: Transfers,
    /// Rates of single classes of operation (format 2; `None` in format 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Operations>,
}

/// What format 2 measures beyond format 1: the rates of special functions, atomics
/// and barriers, reads that hit a cache, and the latency of one dependent load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operations {
    /// `float` special functions: 4 independent chains `x = f(x)` per work-item, as
    /// many work-items as the multiply-add benchmark. Operations per second over the
    /// device, each with the addition or negation its chain step also does.
    pub special: Vec<SpecialRate>,
    /// `atomic_add` of 32-bit integers in global memory, one per work-item, spread
    /// over `bins` addresses (neighbouring work-items on different ones).
    pub atomics: Vec<AtomicRate>,
    /// The same for `float` additions by the compare-and-swap loop generated code
    /// uses (contended bins retry).
    pub float_atomics: Vec<AtomicRate>,
    /// Integer and float atomic additions into a work-group's bins in local memory
    /// (groups as in the barrier benchmark), per second over the device.
    pub local_atomics: Vec<AtomicRate>,
    pub local_float_atomics: Vec<AtomicRate>,
    /// Copies of 2 and 4 32-bit words per work-item (vector loads and stores) over
    /// the copy's largest buffer: bytes read + written per second. More bytes in
    /// flight per work-item reach more of the memory's bandwidth.
    pub wide_copies: Vec<WideCopy>,
    /// Work-group barriers per second over the device (groups of 256, 8 per compute
    /// unit on a GPU), each around a one-word exchange in local memory.
    pub barrier_per_s: f64,
    /// Coalesced reads of a window that stays in a cache after the first pass: bytes
    /// per second over the device, per window size.
    pub cached_reads: Vec<CachedRead>,
    /// One dependent global load (a work-item following a pseudo-random cycle through
    /// a buffer as large as the copy's largest), in seconds.
    pub load_latency_s: f64,
    /// The same over a 4 KiB buffer (the nearest cache).
    pub cached_load_latency_s: f64,
    /// One multiply-add that waits for the one before (a single work-item's chain), in
    /// seconds: the most a work-item alone issues.
    pub op_latency_s: f64,
    /// The empty kernel's event time measured after the other benchmarks (a GPU's
    /// clocks up), one work-group, one launch at a time: the floor of a kernel's time.
    pub warm_launch_s: f64,
    /// The empty kernel's event time when it waits in the queue behind a running kernel
    /// (the device prepares it meanwhile): the floor of a kernel enqueued while the
    /// device is busy.
    pub queued_launch_s: f64,
}

/// A copy of `words` 32-bit words per work-item.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WideCopy {
    pub words: u32,
    pub bytes_per_s: f64,
}

/// A special function's rate: `div`, `sqrt`, `exp`, `log`, `sin`, `cos`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecialRate {
    pub op: String,
    pub per_s: f64,
}

/// Atomic additions per second when the work-items share `bins` addresses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomicRate {
    pub bins: u64,
    pub per_s: f64,
}

/// The bandwidth of reads within a window of `window_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachedRead {
    pub window_bytes: u64,
    pub bytes_per_s: f64,
}

/// The device as `clGetDeviceInfo` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFacts {
    /// `CL_DEVICE_NAME`, trimmed: `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// `CL_DEVICE_VENDOR`: `NVIDIA Corporation`.
    pub vendor: String,
    /// `CL_PLATFORM_NAME` of its platform: `NVIDIA CUDA`, `Portable Computing Language`.
    pub platform: String,
    /// `CL_PLATFORM_VERSION`.
    pub platform_version: String,
    /// `CL_DRIVER_VERSION`.
    pub driver_version: String,
    /// `CL_DEVICE_VERSION`: `OpenCL 3.0 CUDA`.
    pub opencl_version: String,
    /// `gpu`, `cpu`, `accelerator` or `other` (`CL_DEVICE_TYPE`).
    pub kind: String,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`: streaming multiprocessors, or CPU cores.
    pub compute_units: u32,
    /// `CL_DEVICE_MAX_CLOCK_FREQUENCY`, in MHz.
    pub max_clock_mhz: u32,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`, in work-items.
    pub max_work_group_size: u64,
    /// The preferred multiple of the work-group size of a simple kernel
    /// (`CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE`): the warp width on NVIDIA.
    pub simd_width: u64,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`, in bytes.
    pub local_mem_bytes: u64,
    /// `CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE`, in bytes.
    pub max_constant_buffer_bytes: u64,
    /// `CL_DEVICE_MAX_CONSTANT_ARGS`.
    pub max_constant_args: u32,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`, in bytes.
    pub global_mem_bytes: u64,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, in bytes.
    pub max_mem_alloc_bytes: u64,
    /// `CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`, in bytes (0 without a cache).
    pub global_mem_cache_bytes: u64,
    /// `CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE`, in bytes.
    pub global_mem_cacheline_bytes: u32,
    /// Whether the device has `double` (`cl_khr_fp64`, or a non-empty
    /// `CL_DEVICE_DOUBLE_FP_CONFIG`).
    pub fp64: bool,
    /// `CL_DEVICE_PREFERRED_VECTOR_WIDTH_*`.
    pub preferred_vector_width: VectorWidths,
    /// `CL_DEVICE_NATIVE_VECTOR_WIDTH_*`.
    pub native_vector_width: VectorWidths,
}

/// Vector widths per scalar type, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorWidths {
    pub char: u32,
    pub short: u32,
    pub int: u32,
    pub long: u32,
    pub float: u32,
    pub double: u32,
}

/// Global-memory bandwidth.
///
/// The copy kernel: work-item `i` does `out[i] = in[i]` on 32-bit elements, one
/// element per work-item (as generated kernels access memory). Its bytes are those
/// read plus those written. A kernel moving `b` bytes is modelled as
/// `latency_s + b / bytes_per_s`, the line through the smallest and the largest
/// point of `copy_curve` ([`fit_latency_bandwidth`]); the curve itself shows where
/// caches make mid-sized kernels faster than that line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobalMemory {
    /// The bandwidth of the copy kernel, in bytes (read + written) per second, from
    /// the line through the ends of `copy_curve`.
    pub bytes_per_s: f64,
    /// The fixed time of a memory-bound kernel, in seconds (launch included, as
    /// profiling events see it), from the same line.
    pub latency_s: f64,
    /// Bytes moved by the largest copy, and its bandwidth (bytes per second).
    pub largest_bytes: u64,
    pub largest_bytes_per_s: f64,
    /// The copy kernel's time per size, smallest first.
    pub copy_curve: Vec<Sample>,
    /// The strided read: work-item `i` reads element `i * stride` (wrapping, so every
    /// element is read once) and writes element `i`. `strided_bytes` is the bytes
    /// each run moves (read + written), large enough to defeat the caches.
    pub strided_bytes: u64,
    /// One point per stride, stride 1 first.
    pub strided: Vec<StridePoint>,
}

/// A kernel or transfer of `bytes` that took `seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    pub bytes: u64,
    pub seconds: f64,
}

/// The bandwidth of an access pattern with neighbouring work-items `stride`
/// elements (32-bit) apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StridePoint {
    /// Elements between neighbouring work-items' accesses.
    pub stride: u32,
    /// Bytes the kernel uses per second (not the bytes the memory system moves).
    pub bytes_per_s: f64,
    /// This stride's time over stride 1's time.
    pub slowdown: f64,
}

/// Local-memory bandwidth.
///
/// Each work-group fills a 16 KiB `__local` array, then each work-item reads it
/// `iters` times, work-item `l` at word `l * stride + k` (modulo the array): stride 1
/// is conflict-free, stride `s` a `gcd(s, banks)`-way bank conflict on GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocalMemory {
    /// Bytes read per second at stride 1, over the whole device.
    pub bytes_per_s: f64,
    /// One point per stride, stride 1 first.
    pub strided: Vec<StridePoint>,
}

/// Arithmetic rates: each work-item runs 8 independent chains of `mad` (`x = x * b +
/// c`), enough work-items to fill the device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compute {
    /// `float` operations per second (a multiply-add counts 2).
    pub f32_flops: f64,
    /// `double` operations per second; `None` on devices without `double`.
    pub f64_flops: Option<f64>,
}

/// Kernel-launch overheads, from an empty kernel of one work-item.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// Its time from the start to the end of the command (profiling events): what
    /// `weft bench` counts for a kernel that does nothing.
    pub kernel_s: f64,
    /// The start-to-start interval of empty kernels queued back to back: the cost of
    /// one more launch in a sequence.
    pub back_to_back_s: f64,
    /// Host wall time of enqueueing one and waiting for it (`clFinish`).
    pub wall_s: f64,
}

/// Host-to-device and device-to-host transfers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfers {
    pub host_to_device: Transfer,
    pub device_to_host: Transfer,
}

/// One direction of transfers, modelled as `latency_s + bytes / bytes_per_s`: the
/// line through the ends of `curve` ([`fit_latency_bandwidth`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// Fitted bandwidth from profiling events, bytes per second.
    pub bytes_per_s: f64,
    /// Fitted fixed time from profiling events, seconds.
    pub latency_s: f64,
    /// The same fit on the host's wall time of a blocking transfer.
    pub wall_bytes_per_s: f64,
    pub wall_latency_s: f64,
    /// The times per size, smallest first.
    pub curve: Vec<TransferSample>,
}

impl Transfer {
    /// The model's time of `buffers` transfers of `bytes` bytes together:
    /// `buffers * latency_s + bytes / bytes_per_s`.
    pub fn seconds(&self, buffers: f64, bytes: f64) -> f64 {
        buffers * self.latency_s + bytes / self.bytes_per_s
    }
}

/// A transfer of `bytes`: `seconds` from profiling events, `wall_seconds` on the host.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferSample {
    pub bytes: u64,
    pub seconds: f64,
    pub wall_seconds: f64,
}

/// Why a profile could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileError {
    /// The file could not be read.
    Io { path: String, message: String },
    /// Not JSON, or not a profile.
    Parse(String),
    /// A format this version does not read.
    Format(u32),
    /// A number that cannot be a measurement (zero, negative, not finite), by its
    /// JSON path.
    Invalid(String),
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Io { path, message } => {
                write!(f, "cannot read the device profile `{path}`: {message}")
            }
            ProfileError::Parse(message) => write!(f, "not a device profile: {message}"),
            ProfileError::Format(format) => write!(
                f,
                "device profile format {format} is not supported (this weft reads formats \
                 {OLDEST_FORMAT} to {FORMAT}); measure the device again with `weft calibrate`"
            ),
            ProfileError::Invalid(message) => write!(f, "invalid device profile: {message}"),
        }
    }
}

impl std::error::Error for ProfileError {}

/// What a device says about itself, to find its profile: from `weft-runner devices
/// --json` or `clGetDeviceInfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceQuery<'a> {
    /// `CL_DEVICE_NAME`.
    pub name: &'a str,
    /// `CL_DEVICE_VENDOR`.
    pub vendor: &'a str,
    /// `CL_PLATFORM_NAME`.
    pub platform: &'a str,
    /// `gpu`, `cpu`, `accelerator` or `other`.
    pub kind: &'a str,
}

/// A device as `weft-runner devices --json` lists it: what [`DeviceQuery`] asks, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedDevice {
    /// `P:D`, what `--device` takes.
    pub id: String,
    pub name: String,
    pub vendor: String,
    pub platform: String,
    pub kind: String,
}

impl ListedDevice {
    pub fn query(&self) -> DeviceQuery<'_> {
        DeviceQuery {
            name: &self.name,
            vendor: &self.vendor,
            platform: &self.platform,
            kind: &self.kind,
        }
    }
}

/// The device runs use, from the output of `weft-runner devices --json`: the one `spec`
/// names (`gpu` or `cpu`: the first of that kind; `P:D`: that one), else the runner's
/// default; `None` when none fits or the text is not that list.
pub fn listed_device(devices_json: &str, spec: Option<&str>) -> Option<ListedDevice> {
    let json: serde_json::Value = serde_json::from_str(devices_json.trim()).ok()?;
    let platforms = json.get("platforms")?.as_array()?;
    for platform in platforms {
        let platform_name = platform.get("name").and_then(|n| n.as_str()).unwrap_or("");
        for d in platform.get("devices").and_then(|d| d.as_array()).into_iter().flatten() {
            let field = |key: &str| d.get(key).and_then(|v| v.as_str()).unwrap_or("").to_owned();
            let fits = match spec {
                Some(kind @ ("gpu" | "cpu")) => field("kind") == kind,
                Some(id) => field("device") == id,
                None => d.get("default").and_then(serde_json::Value::as_bool) == Some(true),
            };
            if fits {
                return Some(ListedDevice {
                    id: field("device"),
                    name: field("name"),
                    vendor: field("vendor"),
                    platform: platform_name.to_owned(),
                    kind: field("kind"),
                });
            }
        }
    }
    None
}

/// How well a profile fits a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// The same kind of CPU device on POCL, another processor: POCL compiles the same
    /// way everywhere, so its profile's shape holds though the numbers differ.
    SamePoclCpu,
    /// The same device name and vendor.
    Exact,
}

/// The platform name POCL reports.
const POCL_PLATFORM: &str = "Portable Computing Language";

impl DeviceProfile {
    /// Reads a profile from JSON text: the right format, every field present and no
    /// other, every measurement positive and finite.
    pub fn from_json(text: &str) -> Result<DeviceProfile, ProfileError> {
        #[derive(Deserialize)]
        struct Version {
            format: u32,
        }
        let version: Version =
            serde_json::from_str(text).map_err(|error| ProfileError::Parse(error.to_string()))?;
        if !(OLDEST_FORMAT..=FORMAT).contains(&version.format) {
            return Err(ProfileError::Format(version.format));
        }
        let profile: DeviceProfile =
            serde_json::from_str(text).map_err(|error| ProfileError::Parse(error.to_string()))?;
        profile.validate()?;
        Ok(profile)
    }

    /// Reads the profile in the file `path`.
    pub fn load(path: &Path) -> Result<DeviceProfile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|error| ProfileError::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        })?;
        DeviceProfile::from_json(&text)
    }

    /// The profile as JSON, indented, with a final newline (the committed form).
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self)
            .expect("invariant: a profile is plain data that always serialises");
        text.push('\n');
        text
    }

    /// Rounds every measurement to [`SIGNIFICANT_DIGITS`] significant digits: the
    /// form `weft calibrate` writes (run-to-run noise is far above that precision,
    /// and short decimals read back exactly).
    pub fn round_measurements(&mut self) {
        let global = &mut self.global;
        for value in
            [&mut global.bytes_per_s, &mut global.latency_s, &mut global.largest_bytes_per_s]
        {
            *value = round_significant(*value);
        }
        for sample in &mut global.copy_curve {
            sample.seconds = round_significant(sample.seconds);
        }
        for point in global.strided.iter_mut().chain(&mut self.local.strided) {
            point.bytes_per_s = round_significant(point.bytes_per_s);
            point.slowdown = round_significant(point.slowdown);
        }
        self.local.bytes_per_s = round_significant(self.local.bytes_per_s);
        self.compute.f32_flops = round_significant(self.compute.f32_flops);
        self.compute.f64_flops = self.compute.f64_flops.map(round_significant);
        if let Some(ops) = &mut self.operations {
            for special in &mut ops.special {
                special.per_s = round_significant(special.per_s);
            }
            for atomic in ops
                .atomics
                .iter_mut()
                .chain(&mut ops.float_atomics)
                .chain(&mut ops.local_atomics)
                .chain(&mut ops.local_float_atomics)
            {
                atomic.per_s = round_significant(atomic.per_s);
            }
            for copy in &mut ops.wide_copies {
                copy.bytes_per_s = round_significant(copy.bytes_per_s);
            }
            for read in &mut ops.cached_reads {
                read.bytes_per_s = round_significant(read.bytes_per_s);
            }
            for value in [
                &mut ops.barrier_per_s,
                &mut ops.load_latency_s,
                &mut ops.cached_load_latency_s,
                &mut ops.op_latency_s,
                &mut ops.warm_launch_s,
                &mut ops.queued_launch_s,
            ] {
                *value = round_significant(*value);
            }
        }
        let launch = &mut self.launch;
        for value in [&mut launch.kernel_s, &mut launch.back_to_back_s, &mut launch.wall_s] {
            *value = round_significant(*value);
        }
        for transfer in [&mut self.transfer.host_to_device, &mut self.transfer.device_to_host] {
            for value in [
                &mut transfer.bytes_per_s,
                &mut transfer.latency_s,
                &mut transfer.wall_bytes_per_s,
                &mut transfer.wall_latency_s,
            ] {
                *value = round_significant(*value);
            }
            for sample in &mut transfer.curve {
                sample.seconds = round_significant(sample.seconds);
                sample.wall_seconds = round_significant(sample.wall_seconds);
            }
        }
    }

    /// Checks that every measurement is a positive, finite number and every curve is
    /// non-empty and ordered by size.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let mut checks = Checks::default();
        checks.positive("global.bytes_per_s", self.global.bytes_per_s);
        checks.non_negative("global.latency_s", self.global.latency_s);
        checks.positive("global.largest_bytes_per_s", self.global.largest_bytes_per_s);
        checks.curve(
            "global.copy_curve",
            self.global.copy_curve.iter().map(|s| (s.bytes, s.seconds)),
        );
        checks.strides("global.strided", &self.global.strided);
        checks.positive("local.bytes_per_s", self.local.bytes_per_s);
        checks.strides("local.strided", &self.local.strided);
        checks.positive("compute.f32_flops", self.compute.f32_flops);
        if let Some(flops) = self.compute.f64_flops {
            checks.positive("compute.f64_flops", flops);
        }
        checks.positive("launch.kernel_s", self.launch.kernel_s);
        checks.positive("launch.back_to_back_s", self.launch.back_to_back_s);
        checks.positive("launch.wall_s", self.launch.wall_s);
        for (name, transfer) in [
            ("transfer.host_to_device", &self.transfer.host_to_device),
            ("transfer.device_to_host", &self.transfer.device_to_host),
        ] {
            checks.positive(&format!("{name}.bytes_per_s"), transfer.bytes_per_s);
            checks.non_negative(&format!("{name}.latency_s"), transfer.latency_s);
            checks.positive(&format!("{name}.wall_bytes_per_s"), transfer.wall_bytes_per_s);
            checks.non_negative(&format!("{name}.wall_latency_s"), transfer.wall_latency_s);
            checks.curve(
                &format!("{name}.curve"),
                transfer.curve.iter().map(|s| (s.bytes, s.seconds)),
            );
            for (idx, sample) in transfer.curve.iter().enumerate() {
                checks.positive(&format!("{name}.curve[{idx}].wall_seconds"), sample.wall_seconds);
            }
        }
        match (&self.operations, self.format) {
            (None, 1) => {}
            (None, _) => checks.fail(format!("format {} needs `operations`", self.format)),
            (Some(_), 1) => checks.fail("format 1 has no `operations`".to_owned()),
            (Some(ops), _) => {
                for (idx, special) in ops.special.iter().enumerate() {
                    checks.positive(&format!("operations.special[{idx}].per_s"), special.per_s);
                }
                for (idx, atomic) in ops.atomics.iter().enumerate() {
                    checks.positive(&format!("operations.atomics[{idx}].per_s"), atomic.per_s);
                }
                for (name, table) in [
                    ("float_atomics", &ops.float_atomics),
                    ("local_atomics", &ops.local_atomics),
                    ("local_float_atomics", &ops.local_float_atomics),
                ] {
                    for (idx, atomic) in table.iter().enumerate() {
                        checks.positive(&format!("operations.{name}[{idx}].per_s"), atomic.per_s);
                    }
                }
                for (idx, copy) in ops.wide_copies.iter().enumerate() {
                    let path = format!("operations.wide_copies[{idx}].bytes_per_s");
                    checks.positive(&path, copy.bytes_per_s);
                }
                checks.positive("operations.warm_launch_s", ops.warm_launch_s);
                checks.positive("operations.queued_launch_s", ops.queued_launch_s);
                checks.positive("operations.op_latency_s", ops.op_latency_s);
                for (idx, read) in ops.cached_reads.iter().enumerate() {
                    let path = format!("operations.cached_reads[{idx}].bytes_per_s");
                    checks.positive(&path, read.bytes_per_s);
                }
                checks.positive("operations.barrier_per_s", ops.barrier_per_s);
                checks.positive("operations.load_latency_s", ops.load_latency_s);
                checks.positive("operations.cached_load_latency_s", ops.cached_load_latency_s);
            }
        }
        if self.device.name.trim().is_empty() {
            checks.fail("device.name is empty".to_owned());
        }
        if self.device.compute_units == 0 {
            checks.fail("device.compute_units is 0".to_owned());
        }
        if self.reps == 0 {
            checks.fail("reps is 0".to_owned());
        }
        checks.finish()
    }

    /// How well this profile fits `device`, if at all: [`Match::Exact`] for the same
    /// name and vendor (compared without case and surrounding blanks), else
    /// [`Match::SamePoclCpu`] when both are CPU devices of POCL.
    pub fn matches(&self, device: &DeviceQuery<'_>) -> Option<Match> {
        let same = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
        if same(&self.device.name, device.name) && same(&self.device.vendor, device.vendor) {
            return Some(Match::Exact);
        }
        let pocl_cpu =
            |platform: &str, kind: &str| same(platform, POCL_PLATFORM) && same(kind, "cpu");
        (pocl_cpu(&self.device.platform, &self.device.kind)
            && pocl_cpu(device.platform, device.kind))
        .then_some(Match::SamePoclCpu)
    }
}

/// The line `seconds = latency + bytes / bandwidth` through the smallest and the
/// largest of the `(bytes, seconds)` samples, as `(latency, bandwidth)`: exact at
/// both ends, so the fixed cost comes from the smallest size and the bandwidth from
/// the largest, where caches no longer help. When the times do not grow with the
/// size or the line would start below 0, the latency is 0 and the bandwidth the
/// largest sample's. `weft-runner calibrate` fits its curves this way (it mirrors
/// this function; the tests check committed profiles against it).
pub fn fit_latency_bandwidth(samples: &[(f64, f64)]) -> (f64, f64) {
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

/// The significant digits of the measurements `weft calibrate` writes.
pub const SIGNIFICANT_DIGITS: usize = 4;

/// `value` rounded to [`SIGNIFICANT_DIGITS`] significant digits (the nearest `f64`
/// to that decimal); non-finite values and 0 unchanged.
fn round_significant(value: f64) -> f64 {
    if !value.is_finite() || value == 0.0 {
        return value;
    }
    let text = format!("{value:.prec$e}", prec = SIGNIFICANT_DIGITS - 1);
    text.parse().unwrap_or(value)
}

#[derive(Default)]
struct Checks {
    problems: Vec<String>,
}

impl Checks {
    fn fail(&mut self, problem: String) {
        self.problems.push(problem);
    }

    fn positive(&mut self, path: &str, value: f64) {
        if !(value.is_finite() && value > 0.0) {
            self.fail(format!("{path} is {value}, not a positive number"));
        }
    }

    fn non_negative(&mut self, path: &str, value: f64) {
        if !(value.is_finite() && value >= 0.0) {
            self.fail(format!("{path} is {value}, not a number ≥ 0"));
        }
    }

    fn curve(&mut self, path: &str, samples: impl Iterator<Item = (u64, f64)>) {
        let mut previous = 0;
        let mut n_samples = 0;
        for (idx, (bytes, seconds)) in samples.enumerate() {
            n_samples += 1;
            if bytes <= previous {
                self.fail(format!("{path}[{idx}].bytes is {bytes}, not above the previous size"));
            }
            previous = bytes;
            self.positive(&format!("{path}[{idx}].seconds"), seconds);
        }
        if n_samples == 0 {
            self.fail(format!("{path} is empty"));
        }
    }

    fn strides(&mut self, path: &str, points: &[StridePoint]) {
        match points.first() {
            None => self.fail(format!("{path} is empty")),
            Some(first) if first.stride != 1 => {
                self.fail(format!("{path}[0].stride is {}, not 1", first.stride));
            }
            Some(_) => {}
        }
        for (idx, point) in points.iter().enumerate() {
            self.positive(&format!("{path}[{idx}].bytes_per_s"), point.bytes_per_s);
            self.positive(&format!("{path}[{idx}].slowdown"), point.slowdown);
        }
    }

    fn finish(self) -> Result<(), ProfileError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ProfileError::Invalid(self.problems.join("; ")))
        }
    }
}

/// The committed profiles, as `(file name, JSON)`.
const BUILTIN: &[(&str, &str)] = &[
    ("nvidia-h100.json", include_str!("../profiles/nvidia-h100.json")),
    ("nvidia-h200.json", include_str!("../profiles/nvidia-h200.json")),
    ("pocl-cpu.json", include_str!("../profiles/pocl-cpu.json")),
];

/// The committed profiles (`crates/weft-cost/profiles/`), in the order of [`BUILTIN`].
pub fn builtin_profiles() -> &'static [DeviceProfile] {
    static PROFILES: OnceLock<Vec<DeviceProfile>> = OnceLock::new();
    PROFILES.get_or_init(|| {
        BUILTIN
            .iter()
            .map(|(file, text)| match DeviceProfile::from_json(text) {
                Ok(profile) => profile,
                // The tests read every committed profile.
                Err(error) => panic!("invariant: the committed profile `{file}` reads: {error}"),
            })
            .collect()
    })
}

/// The committed profile named `name`: its file's stem (`nvidia-h100`, `pocl-cpu`) or its
/// device's name (`NVIDIA H100 80GB HBM3`), case and surrounding blanks ignored.
pub fn builtin_profile_named(name: &str) -> Option<&'static DeviceProfile> {
    let name = name.trim();
    BUILTIN.iter().zip(builtin_profiles()).find_map(|((file, _), profile)| {
        let stem = file.strip_suffix(".json").unwrap_or(file);
        (stem.eq_ignore_ascii_case(name) || profile.device.name.trim().eq_ignore_ascii_case(name))
            .then_some(profile)
    })
}

/// The committed profile that fits `device` best ([`DeviceProfile::matches`]): an
/// exact match, else another POCL CPU device's (the first committed one among equals);
/// `None` when none fits.
pub fn default_profile_for(device: &DeviceQuery<'_>) -> Option<&'static DeviceProfile> {
    builtin_profiles()
        .iter()
        .rev()
        .filter_map(|profile| profile.matches(device).map(|quality| (quality, profile)))
        .max_by_key(|(quality, _)| *quality)
        .map(|(_, profile)| profile)
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
