//! `weft run FILE`: runs one entry point on inputs and prints its results
//! (ARCHITECTURE.md, "Command line"; docs/cli.md).
//!
//! Inputs are textual values on stdin unless `--input X.npy` or `--random SPEC` give
//! them; results are textual values on stdout, one per line (`--output Y.npy` writes
//! a single result as `.npy` instead). Exit codes: 0 success, 1 a run-time error or
//! errors in the program, 2 usage or I/O problems. Only the reference interpreter
//! exists so far (`--backend interp`).

use std::io::{Read as _, Write as _};

use anyhow::{Context as _, bail};
use clap::ValueEnum;
use weft_core::{FnId, Program};
use weft_hir::RootDatabase;
use weft_values::Value;

use crate::workspace::load;

/// Which implementation runs the program.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The reference interpreter over the core IR.
    Interp,
    /// Generated OpenCL kernels, run by `weft-runner` on an OpenCL device.
    #[default]
    Opencl,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// The file that holds the entry point.
    file: String,
    /// The entry point to run (default: the only entry, else `main`).
    #[arg(long)]
    entry: Option<String>,
    /// What runs the program.
    #[arg(long, value_enum, default_value_t = Backend::Opencl)]
    backend: Backend,
    /// The OpenCL device: `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`,
    /// else the first GPU, else the first CPU device), or `auto`: the one the cost
    /// model predicts faster on these inputs, transfers included (said on stderr).
    #[arg(long, value_name = "D")]
    pub(crate) device: Option<String>,
    /// With `--device auto`: a device profile measured on one of the devices (`weft
    /// calibrate -o FILE`), which predicts that device instead of the committed profile
    /// nearest it. Repeat for several devices.
    #[arg(long = "device-profile", value_name = "FILE")]
    device_profiles: Vec<String>,
    /// Print each kernel's time (OpenCL profiling) to stderr.
    #[arg(long)]
    timing: bool,
    /// Compile without bounds, division and size checks in kernels.
    #[arg(long = "unsafe")]
    unchecked: bool,
    /// The OpenCL C version of the kernels: `1.2` clones each generated function per
    /// address space; `2.0` uses the generic address space instead (the device must
    /// support it).
    #[arg(long, value_enum, default_value = "1.2")]
    opencl: crate::OpenClVersion,
    /// Stop a run that takes longer than this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Read the inputs from `.npy` files, one per value, in parameter order.
    #[arg(long = "input", value_name = "X.npy")]
    inputs: Vec<String>,
    /// Draw random inputs, one spec per value (`[1000]f32`, `i64 in 1..10`).
    #[arg(long = "random", value_name = "SPEC")]
    random: Vec<String>,
    /// Seed of `--random`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the (single) result to this `.npy` file instead of printing it.
    #[arg(long, value_name = "Y.npy")]
    output: Option<String>,
    /// A JSON object `{ "PATH": "TEXT", ... }` of file texts read instead of the disk's
    /// (an editor's unsaved buffers: the language server's "Run").
    #[arg(long, value_name = "SOURCES.json")]
    sources: Option<String>,
}

/// The core program of a file, or a message for the user: errors in the file, or an
/// internal compiler error.
pub(crate) fn core_program(
    db: &RootDatabase,
    file: weft_hir::SourceFile,
) -> Result<Program, String> {
    if crate::apl::is_apl(file.path(db)) {
        return crate::apl::core_program(db, file);
    }
    let Some(checked) = weft_core::CheckedFile::new(db, file) else {
        return Err(format!("`{}` has errors (see `weft check`)", file.path(db)));
    };
    let program = weft_core::lower_file(db, checked).map_err(|error| {
        let position = error.origin.as_ref().and_then(|o| weft_core::origin_position(db, o));
        match position {
            Some(p) => format!("internal compiler error in core: {error} at {p}"),
            None => format!("internal compiler error in core: {error}"),
        }
    })?;
    if let Some(invariant) = weft_core::validate(&program).first() {
        return Err(format!(
            "internal compiler error in core: `{}`: {}",
            invariant.function, invariant.message
        ));
    }
    Ok(program)
}

/// The entry named `name`, or the only entry, or `main`.
pub(crate) fn choose_entry(program: &Program, name: Option<&str>) -> Result<FnId, String> {
    let names: Vec<&str> =
        program.entries.iter().map(|&id| program.functions[id].name.as_str()).collect();
    let find = |n: &str| {
        program.entries.iter().copied().find(|&id| program.functions[id].name.as_str() == n)
    };
    let list = || {
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        }
    };
    match name {
        Some(n) => find(n).ok_or_else(|| format!("no entry point `{n}`; entries: {}", list())),
        None => match program.entries.as_slice() {
            [only] => Ok(*only),
            _ => find("main").ok_or_else(|| {
                format!("choose an entry point with `--entry NAME`; entries: {}", list())
            }),
        },
    }
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let (db, files) = match &args.sources {
        None => load(std::slice::from_ref(&args.file))?,
        Some(sources) => {
            let text = std::fs::read_to_string(sources)
                .with_context(|| format!("cannot read `{sources}`"))?;
            let sources: std::collections::BTreeMap<String, String> =
                serde_json::from_str(&text)
                    .with_context(|| format!("`{sources}` is not a JSON object of file texts"))?;
            crate::workspace::load_with_sources(std::slice::from_ref(&args.file), &sources)?
        }
    };
    let Some(loaded) = files.first() else { bail!("`{}` is not a .weft file", args.file) };
    if crate::apl::is_apl(&args.file) {
        let target = args.opencl.target();
        if args.device.as_deref() == Some(AUTO) {
            bail!("`--device auto` chooses for `.weft` entries; give `gpu`, `cpu` or `P:D`");
        }
        return crate::apl::run(&db, loaded.file, args.backend, args.device.as_deref(), target);
    }
    let program = match core_program(&db, loaded.file) {
        Ok(program) => program,
        Err(message) => {
            print_error(&message);
            return Ok(1);
        }
    };
    let entry = match choose_entry(&program, args.entry.as_deref()) {
        Ok(entry) => entry,
        Err(message) => {
            print_error(&message);
            return Ok(2);
        }
    };
    if args.backend == Backend::Opencl {
        return run_opencl(&db, &program, entry, args);
    }
    let inputs = read_inputs(&args.inputs, &args.random, args.seed)?;
    let results = match weft_core::run_entry(&program, entry, inputs) {
        Ok(results) => results,
        Err(error) => {
            print_error(&weft_core::render_error(&db, &error));
            return Ok(1);
        }
    };
    match &args.output {
        Some(path) => {
            let [result] = results.as_slice() else {
                bail!("`--output` takes one result, but the entry returns {}", results.len())
            };
            std::fs::write(path, weft_values::write_npy(result))
                .with_context(|| format!("cannot write `{path}`"))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(weft_values::print_values(&results).as_bytes())?;
        }
    }
    Ok(0)
}

/// An entry's inputs, as `weft run` and `weft profile` take them: `.npy` files, random
/// specs with a seed, else Futhark text values on stdin.
pub(crate) fn read_inputs(
    inputs: &[String],
    random: &[String],
    seed: u64,
) -> anyhow::Result<Vec<Value>> {
    if !inputs.is_empty() && !random.is_empty() {
        bail!("give inputs with `--input` or `--random`, not both");
    }
    if !inputs.is_empty() {
        return inputs
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path).with_context(|| format!("cannot read `{path}`"))?;
                weft_values::read_npy(&bytes)
                    .with_context(|| format!("cannot read `{path}` as .npy"))
            })
            .collect();
    }
    if !random.is_empty() {
        return Ok(weft_values::generate_inputs(&random_specs(random)?, seed)?);
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).context("cannot read inputs from stdin")?;
    weft_values::parse_values(&text)
        .map_err(|e| anyhow::anyhow!("cannot read inputs from stdin: {e}"))
}

/// The `--random SPEC`s of a command, or which one is malformed.
pub(crate) fn random_specs(random: &[String]) -> anyhow::Result<Vec<weft_values::RandomSpec>> {
    random
        .iter()
        .map(|spec| {
            weft_values::parse_random_spec(spec)
                .map_err(|e| anyhow::anyhow!("bad random spec `{spec}`: {e}"))
        })
        .collect()
}

#[expect(clippy::print_stderr, reason = "run-time errors go to stderr")]
pub(crate) fn print_error(message: &str) {
    eprintln!("error: {message}");
}

#[expect(clippy::print_stderr, reason = "what the command decided goes to stderr")]
fn note(message: &str) {
    eprintln!("note: {message}");
}

/// `--device auto`: the device the cost model predicts faster (docs/costs.md).
pub(crate) const AUTO: &str = "auto";

/// `weft run --backend opencl`: compiles the entry and runs its plan in `weft-runner`.
fn run_opencl(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    args: &RunArgs,
) -> anyhow::Result<u8> {
    let options = weft_lower::Options {
        checks: !args.unchecked,
        target: args.opencl.target(),
        ..crate::environment::lower_options()
    };
    if !args.device_profiles.is_empty() && args.device.as_deref() != Some(AUTO) {
        bail!("`--device-profile` chooses between devices: give it with `--device auto`");
    }
    let from_stdin = args.inputs.is_empty() && args.random.is_empty();
    let mut stdin = String::new();
    if from_stdin {
        std::io::stdin().read_to_string(&mut stdin).context("cannot read the inputs from stdin")?;
    }
    let (compiled, device) = if args.device.as_deref() == Some(AUTO) {
        // The inputs' sizes decide: read them as the runner will.
        let values;
        let specs;
        let sizes = if !args.random.is_empty() {
            specs = random_specs(&args.random)?;
            crate::placement::Sizes::Specs(&specs)
        } else {
            values = if from_stdin {
                weft_values::parse_values(&stdin)
                    .map_err(|e| anyhow::anyhow!("cannot read inputs from stdin: {e}"))?
            } else {
                read_inputs(&args.inputs, &[], args.seed)?
            };
            crate::placement::Sizes::Values(&values)
        };
        let mut measured = Vec::new();
        for path in &args.device_profiles {
            let profile = weft_cost::profile::DeviceProfile::load(std::path::Path::new(path))?;
            // One per file for the whole run: leaked so that compile options can hold it.
            let profile: &'static weft_cost::profile::DeviceProfile = Box::leak(Box::new(profile));
            measured.push(profile);
        }
        match crate::placement::choose(db, program, entry, &options, &sizes, &measured)? {
            Ok(placement) => {
                note(&placement.why);
                (placement.compiled, Some(placement.device))
            }
            Err(message) => {
                print_error(&message);
                return Ok(1);
            }
        }
    } else {
        match crate::opencl::compile(db, program, entry, options) {
            Ok(c) => (c, args.device.clone()),
            Err(message) => {
                print_error(&message);
                return Ok(1);
            }
        }
    };
    let plan = crate::opencl::write_plan(&compiled.plan)?;
    let mut runner_args = vec!["run".to_owned(), "--plan".to_owned(), plan.display().to_string()];
    if let Some(device) = &device {
        runner_args.extend(["--device".to_owned(), device.clone()]);
    }
    for input in &args.inputs {
        runner_args.extend(["--input".to_owned(), input.clone()]);
    }
    for spec in &args.random {
        runner_args.extend(["--random".to_owned(), spec.clone()]);
    }
    if !args.random.is_empty() {
        runner_args.extend(["--seed".to_owned(), args.seed.to_string()]);
    }
    if args.timing {
        runner_args.push("--timing".to_owned());
    }
    let out = crate::opencl::run_runner(
        &runner_args,
        &stdin,
        std::time::Duration::from_secs(args.timeout),
    )?;
    if out.timed_out {
        print_error(&format!(
            "the run took longer than {} s (`--timeout`) and was stopped",
            args.timeout
        ));
        return Ok(1);
    }
    let results = out.stdout;
    if out.status != Some(0) && out.status != Some(1) && out.stderr.trim().is_empty() {
        // A runner that crashed or was killed says nothing itself.
        print_error(&format!("the OpenCL runner {} before it finished", out.ended));
        return Ok(2);
    }
    if out.status == Some(0)
        && let Err(error) = weft_values::parse_values(&results)
    {
        // Whatever printed this was not a working runner: it is not a result.
        print_error(&format!("the OpenCL runner printed something that is not values: {error}"));
        std::io::stderr().lock().write_all(out.stderr.as_bytes())?;
        return Ok(2);
    }
    match &args.output {
        Some(path) if out.status == Some(0) => {
            let values = weft_values::parse_values(&results)
                .map_err(|e| anyhow::anyhow!("the runner printed bad values: {e}"))?;
            let [result] = values.as_slice() else {
                bail!("`--output` takes one result, but the entry returns {}", values.len())
            };
            std::fs::write(path, weft_values::write_npy(result))
                .with_context(|| format!("cannot write `{path}`"))?;
        }
        _ => std::io::stdout().lock().write_all(results.as_bytes())?,
    }
    std::io::stderr().lock().write_all(out.stderr.as_bytes())?;
    Ok(match out.status {
        Some(0) => 0,
        Some(1) => 1,
        _ => 2,
    })
}
