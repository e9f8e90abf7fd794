//! `weft bench PATHS`: times entries on an OpenCL device (ARCHITECTURE.md, "Command
//! line"; docs/cli.md).
//!
//! An entry is benchmarked when a `-- bench: SPECS [flops=EXPR]` comment line sits
//! among the comments above it: `SPECS` are random-input specs as in test blocks
//! (`f32 [67108864]f32 [67108864]f32`), one per parameter value, and `EXPR` a product
//! of integers (`2*4096*4096*4096`), the entry's floating-point operations. Entries
//! without the line are skipped with a note (a test block's `random input` sizes are
//! too small to time). `--entry NAME --random SPEC ...` replaces the line for one entry.
//!
//! Each entry is compiled once, and its plan runs in one `weft-runner bench` process
//! (out of process, like `weft run`): warm-up runs, then repeated runs timed with
//! OpenCL profiling events. The report per entry is the median and the minimum and
//! maximum over the runs of the entry's total kernel time, the same per kernel, and
//! the achieved rate: GB/s counts every input and output once (bytes of the specs
//! plus bytes of the results, as `bench/torch_ref.py` counts PyTorch's), and GFLOP/s
//! divides the line's `flops`. Output sizes come from the plan's host arithmetic over
//! the input shapes; when they depend on a value computed on the device, the rate is
//! left out. `--json` prints one object per entry per line.
//!
//! Exit codes: 0 when every benchmarked entry ran, 1 when one could not be compiled or
//! failed at run time (or its file has errors, or its `-- bench:` line is malformed),
//! 2 for usage, I/O and device problems.

use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use weft_hir::RootDatabase;
use weft_syntax::ast;
use weft_syntax::line_index::LineIndex;
use weft_values::RandomSpec;
use weft_values::bench_line::{BenchLine, eval_product, parse_bench_line};

use crate::workspace::load;

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// The OpenCL device: `gpu`, `cpu` or `PLATFORM:DEVICE` (default: `WEFT_DEVICE`,
    /// else the first GPU, else the first CPU device).
    #[arg(long, value_name = "D")]
    pub(crate) device: Option<String>,
    /// Print one JSON object per entry per line (and no progress bar).
    #[arg(long)]
    json: bool,
    /// Runs before the measured ones.
    #[arg(long, value_name = "N", default_value_t = 3)]
    warmup: u64,
    /// Measured runs.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Benchmark only the entries of this name.
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// The inputs of `--entry`, one spec per value (`[1000]f32`, `i64 in 1..10`),
    /// instead of its `-- bench:` line.
    #[arg(long = "random", value_name = "SPEC", requires = "entry")]
    random: Vec<String>,
    /// The floating-point operations of `--entry` with `--random` (`2*4096*4096*4096`).
    #[arg(long, value_name = "EXPR", requires = "random")]
    flops: Option<String>,
    /// Benchmark the entries at this named size (their `-- bench NAME: SPECS` line)
    /// instead of the main one; `main` names the `-- bench:` line. Repeat, or separate
    /// with commas, for several.
    #[arg(long = "size", value_name = "NAME", conflicts_with = "random")]
    sizes: Vec<String>,
    /// Benchmark every entry at each of its sizes (every `-- bench:` and
    /// `-- bench NAME:` line).
    #[arg(long, conflicts_with_all = ["sizes", "random"])]
    all_sizes: bool,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Compile without bounds, division and size checks in kernels.
    #[arg(long = "unsafe")]
    unchecked: bool,
    /// Stop an entry's runs when they take longer than this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    timeout: u64,
    /// Also print each kernel's time predicted by the static cost model, its error,
    /// and the geometric mean of the absolute errors (docs/costs.md).
    #[arg(long)]
    predict: bool,
    /// The device profile for `--predict` and for the compiler's choices (default:
    /// the committed profile matching the device; see `weft calibrate`).
    #[arg(long, value_name = "FILE")]
    profile: Option<String>,
    /// Predict again the measurements of an earlier `weft bench --json` (FILE, one
    /// entry per line), with this compiler's model and `--profile` (default: the
    /// committed profile of the device recorded), instead of running anything. The
    /// entries are compiled from their files as they are now.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["random", "sizes", "all_sizes", "entry"])]
    replay: Option<String>,
    /// Files or directories to benchmark.
    #[arg(required_unless_present = "replay", value_name = "PATHS")]
    paths: Vec<String>,
}

/// One entry found under `PATHS`.
pub(crate) struct Target {
    pub(crate) file: weft_hir::SourceFile,
    pub(crate) path: String,
    pub(crate) entry: String,
    /// The named size (`-- bench small:`), `None` for the main `-- bench:` line.
    pub(crate) size: Option<String>,
    /// `FILE:LINE` of the entry, for notes.
    pub(crate) location: String,
    pub(crate) inputs: Inputs,
}

/// Which of an entry's `bench` lines to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sizes {
    /// These sizes; `None` is the main `-- bench:` line.
    Only(Vec<Option<String>>),
    All,
}

impl Sizes {
    /// The main `-- bench:` line only.
    pub(crate) fn main() -> Sizes {
        Sizes::Only(vec![None])
    }

    fn of(args: &BenchArgs) -> Sizes {
        if args.all_sizes {
            return Sizes::All;
        }
        if args.sizes.is_empty() {
            return Sizes::main();
        }
        let mut names = Vec::new();
        for name in args.sizes.iter().flat_map(|s| s.split(',')).map(str::trim) {
            let size = (name != "main").then(|| name.to_owned());
            if !names.contains(&size) {
                names.push(size);
            }
        }
        Sizes::Only(names)
    }
}

/// Where an entry's inputs come from.
pub(crate) enum Inputs {
    Line(BenchLine),
    /// No `-- bench:` line: the entry is skipped.
    Missing,
    /// A malformed line: where (`FILE:LINE:COLUMN`) and what.
    Malformed {
        at: String,
        message: String,
    },
}

/// What one entry's benchmark gave.
enum Outcome {
    Measured(Box<Measurement>),
    Skipped(String),
    /// Why, where (`FILE:LINE:COLUMN` when not the entry's `FILE:LINE`), and the exit
    /// code it implies (1 or 2).
    Failed {
        message: String,
        at: Option<String>,
        code: u8,
    },
}

impl Outcome {
    fn failed(message: impl Into<String>, code: u8) -> Outcome {
        Outcome::Failed { message: message.into(), at: None, code }
    }
}

/// The runner's statistics, with the rates.
struct Measurement {
    device: String,
    inputs: Vec<String>,
    warmup: u64,
    reps: u64,
    bytes: Option<u64>,
    flops: Option<u64>,
    total: Stats,
    wall: Stats,
    kernels: Vec<KernelStats>,
    /// `--predict`: the model's times, or why there are none.
    predicted: Option<Result<crate::predict::Predicted, String>>,
    /// The tuning the entry was compiled with: a committed file's path, `--tuning`, or
    /// none.
    tuning: Option<String>,
    /// Whether the kernels had their checks (not `--unsafe`), and the inputs' seed:
    /// with the file, entry and inputs, what `--replay` needs to compile the same code.
    checks: bool,
    seed: u64,
}

#[derive(Clone, Copy)]
struct Stats {
    median: u64,
    min: u64,
    max: u64,
}

struct KernelStats {
    kernel: String,
    launches: u64,
    ns: Stats,
}

pub(crate) fn run(args: &BenchArgs) -> anyhow::Result<u8> {
    if let Some(file) = &args.replay {
        return replay(args, file);
    }
    let override_line = override_line(args)?;
    let (db, files) = load(&args.paths)?;
    let sizes = Sizes::of(args);
    let targets = find_targets(&db, &files, args.entry.as_deref(), override_line.as_ref(), &sizes);
    if let (Some(name), true) = (&args.entry, targets.is_empty()) {
        bail!("no entry `{name}` in {}", args.paths.join(", "));
    }
    let n_runs = targets.iter().filter(|t| matches!(t.inputs, Inputs::Line(_))).count();
    let bar = progress_bar(args, n_runs);
    let profile = if args.predict || args.profile.is_some() {
        Some(crate::predict::profile_for(args.profile.as_deref(), args.device.as_deref())?)
    } else {
        None
    };
    let mut report = Report::new(args.json);
    let mut programs = Programs::default();
    let mut exit = 0;
    for target in &targets {
        let outcome = match &target.inputs {
            Inputs::Missing => {
                Outcome::Skipped(format!("no {} line", bench_line_name(target.size.as_deref())))
            }
            Inputs::Malformed { at, message } => {
                Outcome::Failed { message: message.clone(), at: Some(at.clone()), code: 1 }
            }
            Inputs::Line(line) => {
                bar.set_message(format!("{} ({})", target.label(), target.path));
                let outcome = match programs.of(&db, target.file) {
                    Ok(program) => bench_entry(&db, program, target, line, args, profile)?,
                    Err(message) => Outcome::failed(message.clone(), 1),
                };
                bar.inc(1);
                outcome
            }
        };
        if let Outcome::Failed { code, .. } = &outcome {
            exit = exit.max(*code);
        }
        bar.suspend(|| report.print(target, &outcome))?;
    }
    bar.finish_and_clear();
    if args.predict {
        report.summary(profile)?;
    }
    if n_runs == 0 && exit == 0 {
        bail!(
            "no entry to benchmark: add a `-- bench: SPECS` line above an entry, or give \
             `--entry NAME --random SPEC ...`"
        );
    }
    Ok(exit)
}

/// `--replay FILE`: each measured line of an earlier `--json` run, compiled again and
/// predicted, printed as `weft bench --predict` prints a run.
fn replay(args: &BenchArgs, file: &str) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read `{file}`"))?;
    let mut lines = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let json: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{file}:{}: not a line of `weft bench --json`", k + 1))?;
        if json.get("kernels").is_some() && json.get("file").is_some() {
            lines.push((k + 1, json));
        }
    }
    if lines.is_empty() {
        bail!("{file} has no measured entry (lines of `weft bench --json` with `kernels`)");
    }
    let field = |json: &serde_json::Value, key: &str| {
        json.get(key).and_then(|v| v.as_str()).map(str::to_owned)
    };
    let mut paths: Vec<String> = lines.iter().filter_map(|(_, j)| field(j, "file")).collect();
    paths.dedup();
    let (db, files) = load(&paths)?;
    let targets = find_targets(&db, &files, None, None, &Sizes::All);
    let profile = match &args.profile {
        Some(_) => crate::predict::profile_for(args.profile.as_deref(), None)?,
        None => {
            // `` `NVIDIA H200` (device 1:0) ``: the name between the backquotes.
            let device = field(&lines[0].1, "device").unwrap_or_default();
            let name = device.split('`').nth(1).unwrap_or(&device).to_owned();
            weft_cost::profile::builtin_profile_named(&name).with_context(|| {
                format!("no committed device profile of `{name}`: pass `--profile FILE`")
            })?
        }
    };
    // Compiled as for the device measured, with its committed tuning files.
    crate::opencl::steer_with(profile);
    let mut report = Report::new(args.json);
    let mut programs = Programs::default();
    let mut exit = 0;
    for (number, json) in &lines {
        let (path, entry) = (field(json, "file"), field(json, "entry"));
        let size = field(json, "size");
        let Some(target) = targets.iter().find(|t| {
            Some(&t.path) == path.as_ref() && Some(&t.entry) == entry.as_ref() && t.size == size
        }) else {
            let what = format!("{}: `{}`", path.unwrap_or_default(), entry.unwrap_or_default());
            bail!("{file}:{number}: {what} is no longer a benchmarked entry");
        };
        let specs = json
            .get("inputs")
            .and_then(|i| i.as_array())
            .into_iter()
            .flatten()
            .map(|spec| {
                let spec = spec.as_str().unwrap_or_default();
                weft_values::parse_random_spec(spec)
                    .map_err(|e| anyhow::anyhow!("{file}:{number}: bad input `{spec}`: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let flops = json.get("flops").and_then(serde_json::Value::as_u64);
        let line = BenchLine { inputs: specs, flops };
        let checks = json.get("checks").and_then(serde_json::Value::as_bool).unwrap_or(true);
        let outcome = match programs.of(&db, target.file) {
            Ok(program) => replay_entry(&db, program, target, &line, json, checks, profile)?,
            Err(message) => Outcome::failed(message.clone(), 1),
        };
        if let Outcome::Failed { code, .. } = &outcome {
            exit = exit.max(*code);
        }
        report.print(target, &outcome)?;
    }
    report.summary(Some(profile))?;
    Ok(exit)
}

/// One measured line of `--replay`: compiled as it was run, and predicted.
fn replay_entry(
    db: &RootDatabase,
    program: &weft_core::Program,
    target: &Target,
    line: &BenchLine,
    measured: &serde_json::Value,
    checks: bool,
    profile: &'static weft_cost::profile::DeviceProfile,
) -> anyhow::Result<Outcome> {
    let entry = match crate::run::choose_entry(program, Some(&target.entry)) {
        Ok(entry) => entry,
        Err(message) => return Ok(Outcome::failed(message, 1)),
    };
    let options = weft_lower::Options {
        checks,
        profile: Some(profile),
        ..crate::environment::lower_options()
    };
    let compiled = match crate::opencl::compile(db, program, entry, options) {
        Ok(compiled) => compiled,
        Err(message) => return Ok(Outcome::failed(message, 1)),
    };
    let mut measurement = read_measurement(measured, line, &compiled.plan)
        .context("a measured line of `weft bench --json` lacks a field")?;
    measurement.checks = checks;
    measurement.seed = measured.get("seed").and_then(serde_json::Value::as_u64).unwrap_or(0);
    measurement.tuning = measured.get("tuning").and_then(|t| t.as_str()).map(str::to_owned);
    let sizes = crate::predict::sizes_of(&compiled.plan.inputs, &line.inputs);
    measurement.predicted = Some(crate::predict::predict(&compiled.costs, profile, &sizes));
    Ok(Outcome::Measured(Box::new(measurement)))
}

/// The inputs `--random` and `--flops` give, if any.
fn override_line(args: &BenchArgs) -> anyhow::Result<Option<BenchLine>> {
    if args.random.is_empty() {
        return Ok(None);
    }
    let inputs = crate::run::random_specs(&args.random)?;
    let flops = match &args.flops {
        Some(expr) => Some(
            eval_product(expr, 0)
                .map_err(|e| anyhow::anyhow!("bad `--flops {expr}`: {}", e.message))?,
        ),
        None => None,
    };
    Ok(Some(BenchLine { inputs, flops }))
}

/// Every entry of `files` (named `only`, when given) and its inputs.
pub(crate) fn find_targets(
    db: &RootDatabase,
    files: &[crate::workspace::Loaded],
    only: Option<&str>,
    override_line: Option<&BenchLine>,
    sizes: &Sizes,
) -> Vec<Target> {
    let mut targets = Vec::new();
    for loaded in files {
        let file = loaded.file;
        let path = file.path(db).clone();
        let text = file.text(db);
        let line_index = LineIndex::new(text);
        if crate::apl::is_apl(&path) {
            if only.is_none_or(|only| only == "main") {
                let (line, inputs) = apl_bench_line(text, &path, override_line);
                let location = format!("{path}:{line}");
                let entry = "main".to_owned();
                targets.push(Target { file, path, entry, size: None, location, inputs });
            }
            continue;
        }
        for item in weft_hir::parse(db, file).tree().items() {
            let ast::Item::Def(def) = item else { continue };
            if !def.is_entry() {
                continue;
            }
            let Some(name) = def.name().map(|n| n.text().to_string()) else { continue };
            if only.is_some_and(|only| only != name) {
                continue;
            }
            let position = |offset| {
                let pos = line_index.to_chars(text, offset);
                (pos.line + 1, pos.col + 1)
            };
            let name_offset =
                def.name().and_then(|n| n.ident_token()).map(|t| t.text_range().start());
            let (line, _) = position(name_offset.unwrap_or_default());
            let location = format!("{path}:{line}");
            let found = match override_line {
                Some(line) => vec![(None, Inputs::Line(line.clone()))],
                None => bench_comments(&def, &path, &position, sizes),
            };
            for (size, inputs) in found {
                targets.push(Target {
                    file,
                    path: path.clone(),
                    entry: name.clone(),
                    size,
                    location: location.clone(),
                    inputs,
                });
            }
        }
    }
    targets
}

/// An APL program (docs/apl.md) is benchmarked when it has a `⍝ bench:` line, which
/// names no inputs (its sizes are constants of the program) but may give
/// `flops=EXPR`. The line's number, and the inputs.
fn apl_bench_line(text: &str, path: &str, override_line: Option<&BenchLine>) -> (usize, Inputs) {
    let found = text.lines().enumerate().find_map(|(k, line)| {
        let comment = line.trim_start().strip_prefix('⍝')?;
        Some((k + 1, comment.trim_start().strip_prefix("bench:")?.to_owned()))
    });
    let Some((line, rest)) = found else {
        return (1, override_line.map_or(Inputs::Missing, |l| Inputs::Line(l.clone())));
    };
    if let Some(l) = override_line {
        return (line, Inputs::Line(l.clone()));
    }
    let flops = match rest.trim() {
        "" => None,
        other => match other.strip_prefix("flops=").map(|expr| eval_product(expr, 0)) {
            Some(Ok(flops)) => Some(flops),
            Some(Err(error)) => {
                let message = format!("malformed `⍝ bench:` line: {}", error.message);
                return (line, Inputs::Malformed { at: format!("{path}:{line}"), message });
            }
            None => {
                let message = "an APL `⍝ bench:` line takes only `flops=EXPR`".to_owned();
                return (line, Inputs::Malformed { at: format!("{path}:{line}"), message });
            }
        },
    };
    (line, Inputs::Line(BenchLine { inputs: Vec::new(), flops }))
}

/// The inputs of the `bench` lines among `def`'s leading comments that `sizes`
/// selects, one per size, in the order asked for (`--size`) or written (`--all-sizes`).
/// A size asked for but not written is `Inputs::Missing` (skipped with a note).
fn bench_comments(
    def: &ast::Def,
    path: &str,
    position: &dyn Fn(weft_syntax::TextSize) -> (u32, u32),
    sizes: &Sizes,
) -> Vec<(Option<String>, Inputs)> {
    let mut found: Vec<(Option<String>, Inputs)> = Vec::new();
    for comment in def.leading_comments() {
        let body = comment.text().strip_prefix("--").unwrap_or(comment.text());
        let Some(bench) = weft_syntax::test_block::bench_comment(body) else { continue };
        let size = bench.size.map(str::to_owned);
        let rest_offset = comment.text().len() - body.len() + bench.specs_offset;
        let start = comment.text_range().start();
        let at = |offset: usize| {
            let offset = u32::try_from(rest_offset + offset).unwrap_or(u32::MAX);
            let (line, column) = position(start + weft_syntax::TextSize::from(offset));
            format!("{path}:{line}:{column}")
        };
        let line_name = bench_line_name(size.as_deref());
        let inputs = if found.iter().any(|(s, _)| *s == size) {
            Inputs::Malformed { at: at(0), message: format!("a second {line_name} line") }
        } else {
            match parse_bench_line(bench.specs) {
                Ok(line) => Inputs::Line(line),
                Err(error) => Inputs::Malformed {
                    at: at(error.offset),
                    message: format!("malformed {line_name} line: {}", error.message),
                },
            }
        };
        match found.iter_mut().find(|(s, _)| *s == size) {
            // A repeated line makes its size malformed (the first one is not run).
            Some(slot) => slot.1 = inputs,
            None => found.push((size, inputs)),
        }
    }
    match sizes {
        Sizes::All if found.is_empty() => vec![(None, Inputs::Missing)],
        Sizes::All => found,
        Sizes::Only(wanted) => wanted
            .iter()
            .map(|size| {
                let inputs = found.iter().position(|(s, _)| s == size);
                (size.clone(), inputs.map_or(Inputs::Missing, |k| found.swap_remove(k).1))
            })
            .collect(),
    }
}

/// `` `-- bench:` `` or `` `-- bench small:` ``, for messages.
fn bench_line_name(size: Option<&str>) -> String {
    match size {
        None => "`-- bench:`".to_owned(),
        Some(size) => format!("`-- bench {size}:`"),
    }
}

impl Target {
    /// The entry's name, with its size when named: `sgemm [small]`.
    pub(crate) fn label(&self) -> String {
        match &self.size {
            None => self.entry.clone(),
            Some(size) => format!("{} [{size}]", self.entry),
        }
    }
}

fn progress_bar(args: &BenchArgs, len: usize) -> ProgressBar {
    if args.json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(
        Some(u64::try_from(len).unwrap_or(u64::MAX)),
        ProgressDrawTarget::stderr(),
    );
    let style = ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {elapsed} {msg}")
        .expect("invariant: a valid progress template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Compiles one entry and runs `weft-runner bench` on its plan.
fn bench_entry(
    db: &RootDatabase,
    program: &weft_core::Program,
    target: &Target,
    line: &BenchLine,
    args: &BenchArgs,
    profile: Option<&'static weft_cost::profile::DeviceProfile>,
) -> anyhow::Result<Outcome> {
    let entry = match crate::run::choose_entry(program, Some(&target.entry)) {
        Ok(entry) => entry,
        Err(message) => return Ok(Outcome::failed(message, 1)),
    };
    let options = weft_lower::Options {
        checks: !args.unchecked,
        profile,
        ..crate::environment::lower_options()
    };
    let compiled = match crate::opencl::compile(db, program, entry, options) {
        Ok(compiled) => compiled,
        Err(message) => return Ok(Outcome::failed(message, 1)),
    };
    let plan_file = crate::opencl::write_plan(&compiled.plan)?;
    let mut runner_args = vec![
        "bench".to_owned(),
        "--plan".to_owned(),
        plan_file.display().to_string(),
        "--warmup".to_owned(),
        args.warmup.to_string(),
        "--reps".to_owned(),
        args.reps.to_string(),
        "--seed".to_owned(),
        args.seed.to_string(),
        "--json".to_owned(),
    ];
    if let Some(device) = &args.device {
        runner_args.extend(["--device".to_owned(), device.clone()]);
    }
    for spec in &line.inputs {
        runner_args.extend(["--random".to_owned(), spec.to_string()]);
    }
    let out = crate::opencl::run_runner(&runner_args, "", Duration::from_secs(args.timeout))?;
    if out.timed_out {
        let message =
            format!("the runs took longer than {} s (`--timeout`) and were stopped", args.timeout);
        return Ok(Outcome::failed(message, 1));
    }
    let json: serde_json::Value = match serde_json::from_str(out.stdout.trim()) {
        Ok(json) => json,
        Err(_) => {
            let status = out.status.map_or("a signal".to_owned(), |code| format!("exit {code}"));
            let message =
                format!("the OpenCL runner gave no result ({status}): {}", out.stderr.trim());
            return Ok(Outcome::failed(message, 2));
        }
    };
    if let Some(message) = json.get("error").and_then(|e| e.as_str()) {
        let code = json.get("exit").and_then(serde_json::Value::as_u64) == Some(1);
        return Ok(Outcome::failed(message.to_owned(), if code { 1 } else { 2 }));
    }
    let mut measurement = read_measurement(&json, line, &compiled.plan)
        .with_context(|| format!("bad output from the OpenCL runner: {}", out.stdout.trim()))?;
    measurement.checks = !args.unchecked;
    measurement.seed = args.seed;
    measurement.tuning = match crate::opencl::tuning_source(db, program, entry) {
        crate::opencl::TuningSource::None => None,
        crate::opencl::TuningSource::Explicit(path) => Some(path),
        crate::opencl::TuningSource::Committed(path) => Some(path.display().to_string()),
    };
    if let (true, Some(profile)) = (args.predict, profile) {
        let sizes = crate::predict::sizes_of(&compiled.plan.inputs, &line.inputs);
        measurement.predicted = Some(crate::predict::predict(&compiled.costs, profile, &sizes));
    }
    Ok(Outcome::Measured(Box::new(measurement)))
}

fn read_measurement(
    json: &serde_json::Value,
    line: &BenchLine,
    plan: &weft_plan::Plan,
) -> anyhow::Result<Measurement> {
    let number = |value: &serde_json::Value, key: &str| {
        value.get(key).and_then(serde_json::Value::as_u64).with_context(|| format!("no `{key}`"))
    };
    let stats = |value: &serde_json::Value, key: &str| -> anyhow::Result<Stats> {
        let stats = value.get(key).with_context(|| format!("no `{key}`"))?;
        Ok(Stats {
            median: number(stats, "median")?,
            min: number(stats, "min")?,
            max: number(stats, "max")?,
        })
    };
    let kernels = json
        .get("kernels")
        .and_then(serde_json::Value::as_array)
        .context("no `kernels`")?
        .iter()
        .map(|kernel| {
            Ok(KernelStats {
                kernel: kernel.get("kernel").and_then(|k| k.as_str()).unwrap_or("?").to_owned(),
                launches: number(kernel, "launches")?,
                ns: stats(kernel, "ns")?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let input_bytes = line.inputs.iter().map(|spec| value_bytes(&spec.ty)).sum::<Option<u64>>();
    let bytes = input_bytes.zip(output_bytes(plan, &line.inputs)).map(|(i, o)| i.saturating_add(o));
    Ok(Measurement {
        device: json.get("device").and_then(|d| d.as_str()).unwrap_or("?").to_owned(),
        inputs: line.inputs.iter().map(ToString::to_string).collect(),
        warmup: number(json, "warmup")?,
        reps: number(json, "reps")?,
        bytes,
        flops: line.flops,
        total: stats(json, "total_kernel_ns")?,
        wall: stats(json, "wall_ns")?,
        kernels,
        predicted: None,
        tuning: None,
        checks: true,
        seed: 0,
    })
}

fn value_bytes(ty: &weft_values::ValueType) -> Option<u64> {
    let elem = u64::try_from(ty.elem.size_in_bytes()).ok()?;
    ty.shape.iter().try_fold(elem, |acc, &dim| acc.checked_mul(u64::try_from(dim).ok()?))
}

/// The bytes of the entry's results on these inputs, from the plan's host arithmetic:
/// input shapes bind the size variables, then the `Let`s outside control flow run.
/// `None` when a result's shape depends on anything else (a value read back from the
/// device, a loop).
fn output_bytes(plan: &weft_plan::Plan, inputs: &[RandomSpec]) -> Option<u64> {
    use weft_plan::{Expr, Output, Step, Var};
    use weft_values::Scalar;

    if plan.inputs.len() != inputs.len() {
        return None;
    }
    let mut vars: BTreeMap<Var, Scalar> = BTreeMap::new();
    for (input, spec) in plan.inputs.iter().zip(inputs) {
        if let weft_plan::Input::Array { dims, .. } = input {
            for (var, &dim) in dims.iter().zip(&spec.ty.shape) {
                vars.insert(*var, Scalar::I64(i64::try_from(dim).ok()?));
            }
        }
    }
    // Variables (re)bound inside control flow, or read from the device, are unknown.
    let mut unknown = Vec::new();
    let mut stack: Vec<(&Step, bool)> = plan.steps.iter().map(|step| (step, false)).collect();
    while let Some((step, nested)) = stack.pop() {
        match step {
            Step::Let { var, .. } if nested => unknown.push(*var),
            Step::Read { var, .. } => unknown.push(*var),
            Step::If { then_steps, else_steps, .. } => {
                stack.extend(then_steps.iter().chain(else_steps).map(|s| (s, true)));
            }
            Step::For { index, body, .. } => {
                unknown.push(*index);
                stack.extend(body.iter().map(|s| (s, true)));
            }
            Step::While { cond_steps, body, .. } => {
                stack.extend(cond_steps.iter().chain(body).map(|s| (s, true)));
            }
            Step::Let { .. }
            | Step::Check { .. }
            | Step::Alloc { .. }
            | Step::Alias { .. }
            | Step::Launch { .. } => {}
        }
    }
    for step in &plan.steps {
        if let Step::Let { var, value } = step
            && !unknown.contains(var)
            && let Ok(scalar) = weft_plan::eval(value, &|v| vars.get(&v).copied())
        {
            vars.insert(*var, scalar);
        }
    }
    let dim = |expr: &Expr| match weft_plan::eval(expr, &|v| vars.get(&v).copied()) {
        Ok(Scalar::I64(n)) => u64::try_from(n).ok(),
        _ => None,
    };
    let mut total: u64 = 0;
    for output in &plan.outputs {
        let bytes = match output {
            Output::Host { elem, .. } => u64::try_from(elem.size_in_bytes()).ok()?,
            Output::Array { elem, shape, .. } => {
                shape.iter().try_fold(u64::try_from(elem.size_in_bytes()).ok()?, |acc, d| {
                    acc.checked_mul(dim(d)?)
                })?
            }
        };
        total = total.checked_add(bytes)?;
    }
    Some(total)
}

/// Prints outcomes as a table or JSON lines.
struct Report {
    json: bool,
    /// The device of the last measurement printed (its line is printed on changes).
    device: Option<String>,
    header_done: bool,
    /// The file of the last entry printed in the table.
    file: Option<String>,
    /// `--predict`: every kernel's and entry's relative error.
    kernel_errors: Vec<f64>,
    entry_errors: Vec<f64>,
}

const NAME_WIDTH: usize = 40;

/// Each file's core program, elaborated once for all its entries (and sizes).
#[derive(Default)]
struct Programs(Vec<(weft_hir::SourceFile, Result<weft_core::Program, String>)>);

impl Programs {
    fn of(
        &mut self,
        db: &RootDatabase,
        file: weft_hir::SourceFile,
    ) -> &Result<weft_core::Program, String> {
        let idx = match self.0.iter().position(|(f, _)| *f == file) {
            Some(idx) => idx,
            None => {
                self.0.push((file, crate::run::core_program(db, file)));
                self.0.len() - 1
            }
        };
        &self.0[idx].1
    }
}

impl Report {
    fn new(json: bool) -> Report {
        Report {
            json,
            device: None,
            header_done: false,
            file: None,
            kernel_errors: Vec::new(),
            entry_errors: Vec::new(),
        }
    }

    fn print(&mut self, target: &Target, outcome: &Outcome) -> anyhow::Result<()> {
        if self.json {
            let line = match outcome {
                Outcome::Measured(m) => {
                    self.record_errors(m);
                    measurement_json(target, m)
                }
                Outcome::Skipped(reason) => {
                    json!({
                        "file": target.path,
                        "entry": target.entry,
                        "size": target.size,
                        "skipped": reason,
                    })
                }
                Outcome::Failed { message, at, code } => json!({
                    "file": target.path,
                    "entry": target.entry,
                    "size": target.size,
                    "error": message,
                    "at": at.as_ref().unwrap_or(&target.location),
                    "exit": code,
                }),
            };
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}")?;
            return Ok(out.flush()?);
        }
        match outcome {
            Outcome::Skipped(reason) => self.note(&format!(
                "{}: entry `{}` skipped: {reason}",
                target.location,
                target.label()
            )),
            Outcome::Failed { message, at, .. } => {
                let at = at.as_ref().unwrap_or(&target.location);
                let mut err = std::io::stderr().lock();
                Ok(writeln!(err, "error: {at}: entry `{}`: {message}", target.label())?)
            }
            Outcome::Measured(m) => {
                self.record_errors(m);
                self.table_rows(target, m)
            }
        }
    }

    fn record_errors(&mut self, m: &Measurement) {
        let Some(Ok(p)) = &m.predicted else { return };
        for k in &m.kernels {
            if let Some((_, seconds)) = p.kernels.iter().find(|(name, _)| *name == k.kernel)
                && let Some(error) = crate::predict::relative_error(*seconds, k.ns.median)
            {
                self.kernel_errors.push(error);
            }
        }
        if let Some(error) = crate::predict::relative_error(p.kernels_s, m.total.median) {
            self.entry_errors.push(error);
        }
    }

    /// The geometric means of the absolute errors, after all entries.
    fn summary(&self, profile: Option<&weft_cost::profile::DeviceProfile>) -> anyhow::Result<()> {
        let kernels = crate::predict::geomean_abs(&self.kernel_errors);
        let entries = crate::predict::geomean_abs(&self.entry_errors);
        let device = profile.map_or("?", |p| p.device.name.as_str());
        let mut out = std::io::stdout().lock();
        if self.json {
            let line = json!({
                "summary": {
                    "model": weft_cost::model::MODEL,
                    "profile": device,
                    "kernels": self.kernel_errors.len(),
                    "kernel_geomean_abs_error": kernels,
                    "entries": self.entry_errors.len(),
                    "entry_geomean_abs_error": entries,
                }
            });
            writeln!(out, "{line}")?;
        } else {
            let pct = |g: Option<f64>| g.map_or("–".to_owned(), |g| format!("{:.1}%", g * 100.0));
            writeln!(
                out,
                "prediction ({}, profile `{device}`): geometric mean of |error| {} over {} kernels, {} over {} entries",
                weft_cost::model::MODEL,
                pct(kernels),
                self.kernel_errors.len(),
                pct(entries),
                self.entry_errors.len(),
            )?;
        }
        Ok(out.flush()?)
    }

    fn note(&self, message: &str) -> anyhow::Result<()> {
        Ok(writeln!(std::io::stderr().lock(), "note: {message}")?)
    }

    fn table_rows(&mut self, target: &Target, m: &Measurement) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if self.device.as_deref() != Some(m.device.as_str()) {
            writeln!(
                out,
                "device: {}; {} warm-up runs, {} measured runs; kernel times from OpenCL \
                 profiling events (median, min–max)",
                m.device, m.warmup, m.reps
            )?;
            self.device = Some(m.device.clone());
        }
        if !self.header_done {
            writeln!(
                out,
                "{:<NAME_WIDTH$} {:>11} {:>21} {:>10} {:>10}",
                "entry", "median", "min–max", "GB/s", "GFLOP/s"
            )?;
            self.header_done = true;
        }
        if self.file.as_deref() != Some(target.path.as_str()) {
            match &m.tuning {
                Some(tuning) => writeln!(out, "{} (tuned: {tuning})", target.path)?,
                None => writeln!(out, "{}", target.path)?,
            }
            self.file = Some(target.path.clone());
        }
        let rate = |amount: Option<u64>| {
            rate_per_ns(amount, m.total.median)
                .map_or("–".to_owned(), |rate| format!("{rate:.1}"))
        };
        let predicted = |seconds: Option<f64>, measured: u64| match (&m.predicted, seconds) {
            (Some(Ok(_)), Some(s)) => {
                let error = crate::predict::relative_error(s, measured)
                    .map_or("–".to_owned(), |e| format!("{:+.0}%", e * 100.0));
                format!("  predicted {:.3} ms ({error})", s * 1e3)
            }
            (Some(Ok(_)), None) => "  predicted –".to_owned(),
            (Some(Err(why)), _) => format!("  not predicted: {why}"),
            (None, _) => String::new(),
        };
        let entry_s = m.predicted.as_ref().and_then(|p| p.as_ref().ok()).map(|p| p.kernels_s);
        writeln!(
            out,
            "  {:<width$} {:>11} {:>21} {:>10} {:>10}{}",
            target.label(),
            ms(m.total.median),
            spread(m.total),
            rate(m.bytes),
            rate(m.flops),
            predicted(entry_s, m.total.median),
            width = NAME_WIDTH - 2,
        )?;
        for kernel in &m.kernels {
            let name = format!("{} ×{}", kernel.kernel, kernel.launches);
            let s = m
                .predicted
                .as_ref()
                .and_then(|p| p.as_ref().ok())
                .and_then(|p| p.kernels.iter().find(|(n, _)| *n == kernel.kernel).map(|k| k.1));
            let predicted = match m.predicted {
                Some(Err(_)) => String::new(),
                _ => predicted(s, kernel.ns.median),
            };
            writeln!(
                out,
                "    {name:<width$} {:>11} {:>21}{predicted}",
                ms(kernel.ns.median),
                spread(kernel.ns),
                width = NAME_WIDTH - 4,
            )?;
        }
        Ok(())
    }
}

/// `amount` per nanosecond: bytes/ns is GB/s, flops/ns is GFLOP/s.
fn rate_per_ns(amount: Option<u64>, ns: u64) -> Option<f64> {
    amount.filter(|_| ns > 0).map(|amount| amount as f64 / ns as f64)
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

fn spread(stats: Stats) -> String {
    format!("{:.3}–{:.3} ms", stats.min as f64 / 1e6, stats.max as f64 / 1e6)
}

fn stats_json(stats: Stats) -> serde_json::Value {
    json!({ "median": stats.median, "min": stats.min, "max": stats.max })
}

fn measurement_json(target: &Target, m: &Measurement) -> serde_json::Value {
    let ok = m.predicted.as_ref().and_then(|p| p.as_ref().ok());
    let kernels: Vec<_> = m
        .kernels
        .iter()
        .map(|k| {
            let mut j =
                json!({ "kernel": k.kernel, "launches": k.launches, "ns": stats_json(k.ns) });
            if let Some(p) = ok {
                let s = p.kernels.iter().find(|(n, _)| *n == k.kernel).map(|k| k.1);
                j["predicted_ns"] = json!(s.map(|s| s * 1e9));
                j["error"] = json!(s.and_then(|s| crate::predict::relative_error(s, k.ns.median)));
            }
            j
        })
        .collect();
    let mut j = json!({
        "file": target.path,
        "entry": target.entry,
        "size": target.size,
        "device": m.device,
        "inputs": m.inputs,
        "warmup": m.warmup,
        "reps": m.reps,
        "bytes": m.bytes,
        "flops": m.flops,
        "total_kernel_ns": stats_json(m.total),
        "wall_ns": stats_json(m.wall),
        "gb_per_s": rate_per_ns(m.bytes, m.total.median),
        "gflop_per_s": rate_per_ns(m.flops, m.total.median),
        "kernels": kernels,
        "tuning": m.tuning,
        "checks": m.checks,
        "seed": m.seed,
    });
    match &m.predicted {
        Some(Ok(p)) => {
            j["predicted"] = json!({
                "model": weft_cost::model::MODEL,
                "kernel_ns": p.kernels_s * 1e9,
                "with_transfers_ns": p.with_transfers_s * 1e9,
                "bound": p.bound,
                "lower_bound": p.lower_bound,
                "error": crate::predict::relative_error(p.kernels_s, m.total.median),
            });
        }
        Some(Err(why)) => j["predicted"] = json!({ "error_message": why }),
        None => {}
    }
    j
}
