//! `weft-runner`: runs a compiled host plan (`weft build`'s JSON) on an OpenCL
//! device, in its own process (ARCHITECTURE.md, "Running code is out of process";
//! docs/runtime.md).
//!
//! - `run`: one run; inputs as textual values on stdin, `--input X.npy` or
//!   `--random SPEC`; results as textual values on stdout or `.npy` files.
//! - `batch`: many runs of one plan, built once; JSON cases on stdin, one JSON line
//!   per case on stdout (what `weft test` uses).
//! - `bench`: warm-up and repeated runs, per-kernel statistics.
//! - `trials`: `bench` of many plans of one entry on the same inputs, one plan path per
//!   line on stdin, one JSON line per plan (what `weft tune` uses).
//! - `devices`: the platforms and devices, with the `P:D` indices of `--device`.
//! - `calibrate`: micro-benchmarks; the device profile as JSON on stdout, progress
//!   on stderr (docs/costs.md).
//!
//! Exit codes: 0 success; 1 a run-time error of the program or inputs that do not
//! fit the entry; 2 usage, I/O, no OpenCL platform or device, a build failure, or
//! any other environment error.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use weft_plan::Plan;
use weft_runtime::{
    BenchOptions, BenchResult, CalibrateOptions, DeviceSpec, KernelTime, RunError, RunOptions,
    Runtime, Stats,
};
use weft_values::Value;

/// The seed of `--random` unless `--seed` gives one.
const DEFAULT_SEED: u64 = 0;

#[derive(Parser, Debug)]
#[command(
    name = "weft-runner",
    version,
    about = "Runs compiled Weft host plans on an OpenCL device"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Runs a plan once and prints its results.
    Run(RunArgs),
    /// Runs a plan on many inputs: `{"cases": ["<textual inputs>", ...]}` on stdin,
    /// one line `{"ok": "<outputs>"}` or `{"error": "<message>", "exit": N}` per case.
    Batch(BatchArgs),
    /// Runs a plan repeatedly and reports kernel times.
    Bench(BenchArgs),
    /// Benchmarks plans of one entry on the same inputs, drawn and uploaded once: a
    /// plan path per line on stdin, one JSON line per plan on stdout (as `bench
    /// --json` prints, or `{"error": ..., "exit": N}`), in order, until stdin closes.
    Trials(TrialsArgs),
    /// Lists OpenCL platforms and devices (`P:D` for `--device`).
    Devices(DevicesArgs),
    /// Measures a device profile with micro-benchmarks: JSON on stdout, progress on
    /// stderr (docs/costs.md).
    Calibrate(CalibrateArgs),
}

#[derive(Args, Debug)]
struct PlanArgs {
    /// The host plan, as `weft build` writes it.
    #[arg(long, value_name = "PLAN.json")]
    plan: PathBuf,
    /// `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`, else the first GPU,
    /// else the first CPU device).
    #[arg(long, value_name = "D")]
    device: Option<String>,
}

#[derive(Args, Debug)]
struct InputArgs {
    /// Read the inputs from `.npy` files, one per value, in order.
    #[arg(long = "input", value_name = "X.npy")]
    inputs: Vec<PathBuf>,
    /// Draw random inputs, one spec per value (`[1000]f32`, `i64 in 1..10`).
    #[arg(long = "random", value_name = "SPEC")]
    random: Vec<String>,
    /// Seed of `--random`.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    inputs: InputArgs,
    /// Write result `i` to `DIR/result_i.npy` instead of printing the results.
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Print each kernel's time to stderr.
    #[arg(long)]
    timing: bool,
    /// Print one JSON object: `{"ok": ..., "wall_ns": ..., "kernels": [...]}` or
    /// `{"error": ..., "exit": N}`.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct BatchArgs {
    #[command(flatten)]
    plan: PlanArgs,
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    inputs: InputArgs,
    /// Runs before the measured ones.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Measured runs (at least 1).
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// Print the statistics as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct TrialsArgs {
    /// `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`, else the first GPU,
    /// else the first CPU device).
    #[arg(long, value_name = "D")]
    device: Option<String>,
    #[command(flatten)]
    inputs: InputArgs,
    /// Runs before the measured ones, per plan.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Measured runs per plan (at least 1).
    #[arg(long, default_value_t = 5)]
    reps: usize,
}

#[derive(Args, Debug)]
struct DevicesArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct CalibrateArgs {
    /// `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`, else the first GPU,
    /// else the first CPU device).
    #[arg(long, value_name = "D")]
    device: Option<String>,
    /// Fewer and smaller runs (for tests; the profile says `"quick": true`).
    #[arg(long)]
    quick: bool,
    /// Measured runs per number, after warm-up (default: 20 on a GPU, 11 otherwise,
    /// 5 with `--quick`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    reps: Option<u64>,
}

/// Why a command failed, with its exit code.
enum Failure {
    /// From the runtime: its own exit code (1 or 2).
    Run(RunError),
    /// Usage and I/O: exit code 2.
    Usage(anyhow::Error),
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Run(error) => error.exit_code(),
            Failure::Usage(_) => 2,
        }
    }

    fn message(&self) -> String {
        match self {
            Failure::Run(error) => error.to_string(),
            Failure::Usage(error) => format!("{error:#}"),
        }
    }
}

impl From<RunError> for Failure {
    fn from(error: RunError) -> Failure {
        Failure::Run(error)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure::Usage(error)
    }
}

fn main() -> ExitCode {
    // A runner whose `weft` or language server dies is killed with it.
    weft_process::die_with_parent();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let json = match &cli.command {
        Command::Run(args) => args.json,
        Command::Bench(args) => args.json,
        Command::Batch(_) | Command::Trials(_) | Command::Devices(_) | Command::Calibrate(_) => {
            false
        }
    };
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Batch(args) => batch(&args),
        Command::Bench(args) => bench(&args),
        Command::Trials(args) => trials(&args),
        Command::Devices(args) => devices(&args),
        Command::Calibrate(args) => calibrate(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if json {
                print_stdout(&format!(
                    "{}\n",
                    json!({ "error": failure.message(), "exit": failure.exit_code() })
                ));
            } else {
                print_error(&failure.message());
            }
            ExitCode::from(failure.exit_code())
        }
    }
}

/// The device `--device` names, else `WEFT_DEVICE`. The runner reads its environment
/// here and in [`runtime`]; the library takes values.
fn device_spec(flag: Option<&str>) -> Result<Option<DeviceSpec>, Failure> {
    let env = std::env::var(weft_runtime::DEVICE_ENV).ok();
    Ok(DeviceSpec::from_flag_or_env(flag, env.as_deref())?)
}

/// A runtime on `spec`, with the build diagnostics `WEFT_CL_OPTIONS` (extra build
/// options) and `WEFT_CL_LOG=DIR` (each program's source, log and binary) ask for.
fn runtime(spec: Option<DeviceSpec>) -> Result<Runtime, Failure> {
    let diagnostics = weft_runtime::BuildDiagnostics {
        extra_options: std::env::var("WEFT_CL_OPTIONS").unwrap_or_default(),
        log_dir: std::env::var_os("WEFT_CL_LOG").map(PathBuf::from),
    };
    Ok(Runtime::new(spec)?.with_build_diagnostics(diagnostics))
}

fn run(args: &RunArgs) -> Result<(), Failure> {
    let plan = load_plan(&args.plan.plan)?;
    let spec = device_spec(args.plan.device.as_deref())?;
    let inputs = read_inputs(&args.inputs)?;
    let mut runtime = runtime(spec)?;
    let options = RunOptions { timing: args.timing || args.json };
    let result = runtime.run_plan(&plan, inputs, &options)?;
    let mut files = Vec::new();
    if let Some(dir) = &args.output_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        for (idx, output) in result.outputs.iter().enumerate() {
            let path = dir.join(format!("result_{idx}.npy"));
            std::fs::write(&path, weft_values::write_npy(output))
                .with_context(|| format!("cannot write `{}`", path.display()))?;
            files.push(path.display().to_string());
        }
    }
    if args.timing {
        print_timing(&result.kernel_times, result.wall.as_nanos());
    }
    let text = if args.output_dir.is_some() {
        String::new()
    } else {
        weft_values::print_values(&result.outputs)
    };
    if args.json {
        let kernels: Vec<_> =
            result.kernel_times.iter().map(|t| json!({ "kernel": t.kernel, "ns": t.ns })).collect();
        let mut object = json!({
            "ok": text,
            "wall_ns": u64::try_from(result.wall.as_nanos()).unwrap_or(u64::MAX),
            "kernels": kernels,
            "device": runtime.device_description(),
        });
        if args.output_dir.is_some() {
            object["files"] = json!(files);
        }
        print_stdout(&format!("{object}\n"));
    } else {
        print_stdout(&text);
    }
    Ok(())
}

fn batch(args: &BatchArgs) -> Result<(), Failure> {
    #[derive(serde::Deserialize)]
    struct Batch {
        cases: Vec<String>,
    }
    let plan = load_plan(&args.plan.plan)?;
    let spec = device_spec(args.plan.device.as_deref())?;
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read the cases from stdin")?;
    let cases: Batch = serde_json::from_str(&text).context(
        "cannot read the cases from stdin (expected `{\"cases\": [\"<inputs>\", ...]}`)",
    )?;
    let mut runtime = runtime(spec)?;
    runtime.prepare(&plan)?;
    for case in &cases.cases {
        let line = match weft_values::parse_values(case) {
            Err(error) => json!({ "error": format!("cannot read the inputs: {error}"), "exit": 2 }),
            Ok(inputs) => match runtime.run_plan(&plan, inputs, &RunOptions::default()) {
                Ok(result) => json!({ "ok": weft_values::print_values(&result.outputs) }),
                Err(error) => json!({ "error": error.to_string(), "exit": error.exit_code() }),
            },
        };
        print_stdout(&format!("{line}\n"));
    }
    Ok(())
}

fn bench(args: &BenchArgs) -> Result<(), Failure> {
    let plan = load_plan(&args.plan.plan)?;
    let spec = device_spec(args.plan.device.as_deref())?;
    let inputs = read_inputs(&args.inputs)?;
    let mut runtime = runtime(spec)?;
    let options = BenchOptions { warmup: args.warmup, reps: args.reps };
    let result = runtime.bench_plan(&plan, inputs, &options)?;
    if args.json {
        print_stdout(&format!("{}\n", bench_json(&plan, &result)));
    } else {
        print_stdout(&bench_text(&plan, &result));
    }
    Ok(())
}

fn trials(args: &TrialsArgs) -> Result<(), Failure> {
    if args.inputs.inputs.is_empty() && args.inputs.random.is_empty() {
        // stdin carries the plans.
        return Err(Failure::Usage(anyhow::anyhow!(
            "`trials` takes its inputs from `--random` or `--input`"
        )));
    }
    let spec = device_spec(args.device.as_deref())?;
    let inputs = read_inputs(&args.inputs)?;
    let mut runtime = runtime(spec)?;
    let options = BenchOptions { warmup: args.warmup, reps: args.reps };
    for line in std::io::stdin().lines() {
        let line = line.context("cannot read a plan path from stdin")?;
        let path = line.trim();
        if path.is_empty() {
            continue;
        }
        // A plan that fails is that plan's answer; the next one runs on.
        let answer = match load_plan(Path::new(path)) {
            Err(error) => json!({ "error": format!("{error:#}"), "exit": 2 }),
            Ok(plan) => match runtime.bench_plan(&plan, inputs.clone(), &options) {
                Ok(result) => bench_json(&plan, &result),
                Err(error) => json!({ "error": error.to_string(), "exit": error.exit_code() }),
            },
        };
        print_stdout(&format!("{answer}\n"));
    }
    Ok(())
}

fn stats_json(stats: Stats) -> serde_json::Value {
    json!({ "median": stats.median, "min": stats.min, "max": stats.max })
}

fn bench_json(plan: &Plan, result: &BenchResult) -> serde_json::Value {
    let kernels: Vec<_> = result
        .kernels
        .iter()
        .map(|k| json!({ "kernel": k.kernel, "launches": k.launches, "ns": stats_json(k.ns) }))
        .collect();
    json!({
        "entry": plan.entry,
        "device": result.device,
        "warmup": result.warmup,
        "reps": result.reps,
        "total_kernel_ns": stats_json(result.total_kernel_ns),
        "wall_ns": stats_json(result.wall_ns),
        "kernels": kernels,
    })
}

fn bench_text(plan: &Plan, result: &BenchResult) -> String {
    let ms = |ns: u64| format!("{:.3} ms", ns as f64 / 1e6);
    let spread = |stats: Stats| {
        format!("{} (min {}, max {})", ms(stats.median), ms(stats.min), ms(stats.max))
    };
    let mut out = format!(
        "entry `{}` on {}: {} runs after {} warm-up runs, medians\n",
        plan.entry, result.device, result.reps, result.warmup
    );
    for kernel in &result.kernels {
        out.push_str(&format!("  {} ×{}: {}\n", kernel.kernel, kernel.launches, spread(kernel.ns)));
    }
    out.push_str(&format!("  all kernels: {}\n", spread(result.total_kernel_ns)));
    out.push_str(&format!("  wall: {}\n", spread(result.wall_ns)));
    out
}

fn devices(args: &DevicesArgs) -> Result<(), Failure> {
    let platforms = weft_runtime::list_devices()?;
    let default = weft_runtime::choose_device(&platforms, None).ok();
    if args.json {
        let list: Vec<_> = platforms
            .iter()
            .map(|platform| {
                let devices: Vec<_> = platform
                    .devices
                    .iter()
                    .map(|device| {
                        json!({
                            "device": format!("{}:{}", device.platform, device.index),
                            "name": device.name,
                            "vendor": device.vendor,
                            "kind": device.kind.to_string(),
                            "default": default == Some((device.platform, device.index)),
                        })
                    })
                    .collect();
                json!({
                    "platform": platform.index,
                    "name": platform.name,
                    "vendor": platform.vendor,
                    "version": platform.version,
                    "devices": devices,
                })
            })
            .collect();
        print_stdout(&format!("{}\n", json!({ "platforms": list })));
        return Ok(());
    }
    let mut out = String::new();
    for platform in &platforms {
        out.push_str(&format!(
            "platform {}: {} ({}; {})\n",
            platform.index, platform.name, platform.vendor, platform.version
        ));
        for device in &platform.devices {
            let mark =
                if default == Some((device.platform, device.index)) { "  (default)" } else { "" };
            out.push_str(&format!(
                "  {}:{}  {:<4} {}{mark}\n",
                device.platform, device.index, device.kind, device.name
            ));
        }
    }
    print_stdout(&out);
    Ok(())
}

fn calibrate(args: &CalibrateArgs) -> Result<(), Failure> {
    let spec = device_spec(args.device.as_deref())?;
    let options = CalibrateOptions {
        quick: args.quick,
        reps: args.reps.map(|reps| usize::try_from(reps).unwrap_or(usize::MAX)),
    };
    let profile = weft_runtime::calibrate(spec, &options, &mut |message| {
        print_stderr(&format!("{message}\n"));
    })?;
    print_stdout(&format!("{}\n", profile.to_json()));
    Ok(())
}

fn load_plan(path: &Path) -> anyhow::Result<Plan> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the plan `{}`", path.display()))?;
    Plan::from_json(&text).with_context(|| format!("`{}` is not a host plan", path.display()))
}

fn read_inputs(args: &InputArgs) -> anyhow::Result<Vec<Value>> {
    if !args.inputs.is_empty() && !args.random.is_empty() {
        anyhow::bail!("give inputs with `--input` or `--random`, not both");
    }
    if !args.inputs.is_empty() {
        return args
            .inputs
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path)
                    .with_context(|| format!("cannot read `{}`", path.display()))?;
                weft_values::read_npy(&bytes)
                    .with_context(|| format!("cannot read `{}` as .npy", path.display()))
            })
            .collect();
    }
    if !args.random.is_empty() {
        let specs = args
            .random
            .iter()
            .map(|spec| {
                weft_values::parse_random_spec(spec)
                    .map_err(|error| anyhow::anyhow!("bad random spec `{spec}`: {error}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        return Ok(weft_values::generate_inputs(&specs, args.seed)?);
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read inputs from stdin")?;
    weft_values::parse_values(&text)
        .map_err(|error| anyhow::anyhow!("cannot read inputs from stdin: {error}"))
}

/// Per kernel, in order of first launch: launches and total time; then the wall time.
fn print_timing(times: &[KernelTime], wall_ns: u128) {
    let mut kernels: Vec<(&str, usize, u64)> = Vec::new();
    for time in times {
        match kernels.iter_mut().find(|(name, ..)| *name == time.kernel) {
            Some((_, launches, ns)) => {
                *launches += 1;
                *ns = ns.saturating_add(time.ns);
            }
            None => kernels.push((&time.kernel, 1, time.ns)),
        }
    }
    let mut out = String::new();
    for (name, launches, ns) in &kernels {
        let plural = if *launches == 1 { "launch" } else { "launches" };
        out.push_str(&format!("kernel {name}: {:.3} ms ({launches} {plural})\n", *ns as f64 / 1e6));
    }
    let total: u64 = kernels.iter().map(|(_, _, ns)| ns).fold(0, |a, b| a.saturating_add(*b));
    out.push_str(&format!(
        "all kernels: {:.3} ms; wall: {:.3} ms\n",
        total as f64 / 1e6,
        wall_ns as f64 / 1e6
    ));
    print_stderr(&out);
}

/// Writes to stdout; a closed pipe is not an error worth a panic.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn print_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn print_error(message: &str) {
    print_stderr(&format!("error: {message}\n"));
}
