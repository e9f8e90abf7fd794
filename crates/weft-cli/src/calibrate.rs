//! `weft calibrate [--device D] [-o FILE]`: measures a device profile with
//! micro-benchmarks (docs/costs.md; seed 002 §8.3).
//!
//! The benchmarks run in `weft-runner calibrate` (out of process, like every OpenCL
//! command), whose progress lines pass straight through to stderr. Its JSON is read
//! back through `weft_cost::profile`, which checks the format and every number, then
//! written indented to `FILE` or stdout.
//!
//! Exit codes: 0 when the profile was measured and written, 2 for usage, I/O and
//! device problems (the runner's own message on stderr).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use weft_cost::profile::{DeviceProfile, DeviceQuery, Match, default_profile_for};

/// What `weft calibrate --help` says.
pub(crate) const LONG_ABOUT: &str = "\
Measure an OpenCL device's profile with micro-benchmarks, as JSON.

The cost model predicts a kernel's time from the profile's measured rates, as
max(compute, memory) plus the launch overhead, and an entry's time as its kernels
plus its host-device transfers (docs/costs.md). Every number is the median of
repeated runs after warm-up runs, timed with OpenCL profiling events like
`weft bench`, and every benchmark's result is checked on the host:

  global memory   a copy kernel (one 32-bit element per work-item) over buffers
                  from 4 KiB up to 256 MiB (GPU) or 64 MiB (CPU), fitted as
                  latency + bytes / bandwidth; reads at strides 1, 2, 4, ..., 32
                  elements (uncoalesced access)
  local memory    reads of a __local array at strides 1 to 32 words (bank
                  conflicts)
  arithmetic      f32 and f64 multiply-add rates (flop/s)
  launches        an empty kernel: its event time, back to back, and wall clock
  transfers       host-to-device and device-to-host copies over sizes, fitted as
                  latency + bytes / bandwidth (events and wall clock)
  device facts    clGetDeviceInfo: name, vendor, driver, compute units, clock,
                  work-group and memory limits, vector widths

It takes well under a minute on a GPU or on POCL. Profiles of POCL on
the CPU and of the NVIDIA H100 are built into weft and used by default for
matching devices; save a profile of another device with `-o FILE`.";

#[derive(clap::Args, Debug)]
pub(crate) struct CalibrateArgs {
    /// The OpenCL device: `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`,
    /// else the first GPU, else the first CPU device).
    #[arg(long, value_name = "D")]
    device: Option<String>,
    /// Write the profile to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Fewer and smaller runs, in seconds: to test the tool, not to predict times
    /// (the profile says `"quick": true`).
    #[arg(long)]
    quick: bool,
    /// Measured runs per number (default: 20 on a GPU, 11 otherwise, 5 with
    /// `--quick`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    reps: Option<u64>,
    /// Stop the benchmarks when they take longer than this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    timeout: u64,
}

pub(crate) fn run(args: &CalibrateArgs) -> anyhow::Result<u8> {
    let mut runner_args = vec!["calibrate".to_owned()];
    if let Some(device) = &args.device {
        runner_args.extend(["--device".to_owned(), device.clone()]);
    }
    if args.quick {
        runner_args.push("--quick".to_owned());
    }
    if let Some(reps) = args.reps {
        runner_args.extend(["--reps".to_owned(), reps.to_string()]);
    }
    let out =
        crate::opencl::run_runner_showing_stderr(&runner_args, Duration::from_secs(args.timeout))?;
    match out.ended {
        weft_process::Ended::Exited(0) => {}
        // The runner printed its error on stderr.
        weft_process::Ended::Exited(code) => return Ok(u8::try_from(code).unwrap_or(2)),
        weft_process::Ended::TimedOut => anyhow::bail!(
            "the benchmarks did not finish in {} seconds (raise `--timeout`)",
            args.timeout
        ),
        ended => anyhow::bail!("`weft-runner calibrate` {ended}"),
    }
    let mut profile = DeviceProfile::from_json(out.stdout.trim())
        .context("`weft-runner calibrate` printed an invalid profile (a bug in weft)")?;
    profile.round_measurements();
    let text = profile.to_json_pretty();
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            status_line(&format!(
                "wrote the profile of `{}` to {}",
                profile.device.name,
                path.display()
            ));
        }
        None => {
            print_stdout(&text);
            status_line("save the profile with `weft calibrate -o FILE`");
        }
    }
    status_line(&builtin_note(&profile));
    Ok(0)
}

/// Which built-in profile weft uses for the device just measured.
fn builtin_note(profile: &DeviceProfile) -> String {
    let device = &profile.device;
    let query = DeviceQuery {
        name: &device.name,
        vendor: &device.vendor,
        platform: &device.platform,
        kind: &device.kind,
    };
    match default_profile_for(&query).map(|builtin| (builtin, builtin.matches(&query))) {
        Some((builtin, Some(Match::Exact))) => format!(
            "weft's built-in profile of this device was measured on {} ({})",
            builtin.measured, builtin.tool
        ),
        Some((builtin, _)) => format!(
            "weft uses its built-in profile of `{}` for this device (POCL on another CPU)",
            builtin.device.name
        ),
        None => "weft has no built-in profile of this device".to_owned(),
    }
}

#[expect(clippy::print_stdout, reason = "the profile is the command's output")]
fn print_stdout(text: &str) {
    print!("{text}");
}

#[expect(clippy::print_stderr, reason = "notes for the user go to stderr")]
fn status_line(text: &str) {
    eprintln!("{text}");
}
