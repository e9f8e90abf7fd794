//! Running entries for the editor, out of process (ARCHITECTURE.md): "Run" spawns
//! `weft run FILE --entry NAME --backend interp --sources S` (the current executable,
//! the reference interpreter, on the editor's texts of the file and its imports) with
//! the test block's inputs; "Run on GPU" writes the entry's host plan to a
//! temporary file and spawns `weft-runner run --plan P --json` (docs/runtime.md), which
//! links OpenCL so that the server does not. Both have a time limit, after which the
//! child is killed. At start, `weft-runner devices --json` says which device runs use,
//! for predictions ([`detect_device`]). The only module of the server that starts
//! processes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use weft_ide::{EntryRun, GpuInput, GpuRun};

/// The result of a run, in the shape the editor clients expect (editors/README.md).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunResult {
    pub(crate) ok: bool,
    pub(crate) entry: String,
    pub(crate) values: Vec<String>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) message: String,
    pub(crate) time_ms: u64,
    /// The test block's `output { ... }` for the input run, if it has one.
    pub(crate) expected: Option<String>,
    /// Whether the values matched `expected` (the rules of `weft test`).
    pub(crate) matched: Option<bool>,
}

/// Runs `entry` of the file at `file` in the reference interpreter, on the texts of
/// `run.sources`; never panics, errors become `ok: false`.
pub(crate) fn run_entry(
    exe: &Path,
    file: &Path,
    entry: &str,
    run: &EntryRun,
    timeout: Duration,
    cancel: &AtomicBool,
) -> RunResult {
    let start = Instant::now();
    let mut result = RunResult {
        ok: false,
        entry: entry.to_owned(),
        values: Vec::new(),
        stdout: String::new(),
        stderr: String::new(),
        message: String::new(),
        time_ms: 0,
        expected: run.expected.clone(),
        matched: None,
    };
    let sources: serde_json::Map<String, serde_json::Value> = run
        .sources
        .iter()
        .map(|(path, text)| (path.clone(), serde_json::Value::String(text.clone())))
        .collect();
    let sources = match write_temp("sources", &serde_json::Value::Object(sources).to_string()) {
        Ok(sources) => sources,
        Err(error) => {
            result.message = format!("cannot write the sources of `{entry}`: {error}");
            return result;
        }
    };
    let mut args = vec!["run".to_owned(), file.display().to_string(), "--entry".to_owned()];
    args.push(entry.to_owned());
    args.extend(["--backend", "interp", "--sources"].map(str::to_owned));
    args.push(sources.display().to_string());
    let stdin = match &run.input {
        GpuInput::None => String::new(),
        GpuInput::Values(text) => text.clone(),
        GpuInput::Random(specs) => {
            for spec in specs {
                args.push("--random".to_owned());
                args.push(spec.clone());
            }
            String::new()
        }
    };
    let done = match run_process(exe, &args, &stdin, timeout, cancel) {
        Ok(done) => done,
        Err(error) => {
            result.message = format!("cannot start `{} run`: {error}", exe.display());
            return result;
        }
    };
    result.time_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    result.stdout = done.stdout;
    result.stderr = done.stderr;
    match done.ended {
        weft_process::Ended::Exited(0) => {
            result.ok = true;
            result.values = result.stdout.lines().map(str::to_owned).collect();
            let check = check_expected(&result.stdout, run.expected.as_deref());
            result.matched = check.as_ref().map(|(matched, _)| *matched);
            let shown = result.values.first().map_or("no values".to_owned(), |v| truncate(v, 80));
            let more = match result.values.len() {
                0 | 1 => String::new(),
                n => format!(" (and {} more values)", n - 1),
            };
            let check = check.map_or(String::new(), |(_, text)| format!("; {text}"));
            result.message =
                format!("`{entry}` (interpreter): {shown}{more}{check}; {} ms", result.time_ms);
        }
        weft_process::Ended::TimedOut => {
            result.message = format!("`{entry}` was stopped after {} s", timeout.as_secs());
        }
        ended => {
            let first_line = result.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            result.message = format!("`weft run` {ended}: {first_line}");
        }
    }
    result
}

/// Whether printed values match the test block's expected output, and the sentence
/// saying so; `None` without an expected output.
pub(crate) fn check_expected(printed: &str, expected: Option<&str>) -> Option<(bool, String)> {
    let expected = expected?;
    let want = match weft_values::parse_values(expected) {
        Ok(want) => want,
        Err(error) => return Some((false, format!("the expected output does not parse: {error}"))),
    };
    let got = match weft_values::parse_values(printed) {
        Ok(got) => got,
        Err(error) => return Some((false, format!("the values printed do not parse: {error}"))),
    };
    Some(match weft_values::compare_all(&got, &want) {
        Ok(()) => (true, "matches the expected output".to_owned()),
        Err(mismatch) => (false, format!("differs from the expected output: {mismatch}")),
    })
}

/// Set when dropped. A request's future holds one for its run: when tower-lsp-server
/// drops the future (`$/cancelRequest`, or the server ending), the run's process group
/// is killed instead of running on.
pub(crate) struct CancelOnDrop(pub(crate) std::sync::Arc<AtomicBool>);

impl CancelOnDrop {
    pub(crate) fn new() -> CancelOnDrop {
        CancelOnDrop(std::sync::Arc::new(AtomicBool::new(false)))
    }

    pub(crate) fn flag(&self) -> std::sync::Arc<AtomicBool> {
        std::sync::Arc::clone(&self.0)
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The `weft` executable to run: this process's own.
pub(crate) fn current_exe() -> Option<PathBuf> {
    std::env::current_exe().ok()
}

/// The result of a run on the GPU: the fields of [`RunResult`] (what the clients show)
/// and the runner's measurements.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GpuRunResult {
    pub(crate) ok: bool,
    pub(crate) entry: String,
    /// The first result values, each cut at [`MAX_VALUE_CHARS`].
    pub(crate) values: Vec<String>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// One line: the values or the error, and the measured times.
    pub(crate) message: String,
    /// The runner process's lifetime (program build included).
    pub(crate) time_ms: u64,
    pub(crate) device: Option<String>,
    /// The sum of the kernel launches' times (OpenCL profiling events).
    pub(crate) kernel_ns: Option<u64>,
    /// From the upload of the inputs to the results on the host.
    pub(crate) wall_ns: Option<u64>,
    /// One per launch, in order.
    pub(crate) kernels: Vec<KernelTime>,
    /// The test block's `output { ... }` for the input run, if it has one.
    pub(crate) expected: Option<String>,
    /// Whether the values matched `expected` (the rules of `weft test`).
    pub(crate) matched: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct KernelTime {
    pub(crate) kernel: String,
    pub(crate) ns: u64,
}

/// How many result values a GPU run shows, and how long each may be.
const MAX_VALUES: usize = 8;
const MAX_VALUE_CHARS: usize = 200;
/// How much of the runner's stderr is kept.
const MAX_STDERR_CHARS: usize = 4000;

impl GpuRunResult {
    /// A run that could not start (no plan, no runner, no inputs).
    pub(crate) fn failed(entry: &str, message: String) -> GpuRunResult {
        GpuRunResult {
            ok: false,
            entry: entry.to_owned(),
            values: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            message,
            time_ms: 0,
            device: None,
            kernel_ns: None,
            wall_ns: None,
            kernels: Vec::new(),
            expected: None,
            matched: None,
        }
    }
}

/// Settings of a GPU run.
#[derive(Debug, Clone)]
pub(crate) struct GpuRunOptions {
    pub(crate) runner: PathBuf,
    /// `--device` (else the runner reads `WEFT_DEVICE`, else picks the first GPU).
    pub(crate) device: Option<String>,
    pub(crate) timeout: Duration,
}

/// Runs a compiled entry in `weft-runner`; never panics, errors become `ok: false`.
pub(crate) fn run_on_gpu(
    run: &GpuRun,
    options: &GpuRunOptions,
    cancel: &AtomicBool,
) -> GpuRunResult {
    let plan = match write_temp("plan", &run.plan_json) {
        Ok(plan) => plan,
        Err(error) => {
            return GpuRunResult::failed(
                &run.entry,
                format!("cannot write the host plan of `{}`: {error}", run.entry),
            );
        }
    };
    let mut args: Vec<String> =
        vec!["run".into(), "--plan".into(), plan.display().to_string(), "--json".into()];
    if let Some(device) = &options.device {
        args.extend(["--device".to_owned(), device.clone()]);
    }
    let stdin = match &run.input {
        GpuInput::None => String::new(),
        GpuInput::Values(text) => text.clone(),
        GpuInput::Random(specs) => {
            for spec in specs {
                args.extend(["--random".to_owned(), spec.clone()]);
            }
            String::new()
        }
    };
    let start = Instant::now();
    let output = run_process(&options.runner, &args, &stdin, options.timeout, cancel);
    let time_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    drop(plan);
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            return GpuRunResult::failed(
                &run.entry,
                format!(
                    "cannot start the OpenCL runner `{}`: {error} (build it with `cargo build \
                     -p weft-runtime`, or set `runnerPath` or WEFT_RUNNER)",
                    options.runner.display()
                ),
            );
        }
    };
    gpu_result(&run.entry, output, time_ms, options.timeout, run.expected.as_deref())
}

/// The result of "Profile": `weft profile FILE --entry NAME --out DIR` (the current
/// executable, the cost-semantics profiler of docs/costs.md) and the files it wrote.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProfileResult {
    pub(crate) ok: bool,
    pub(crate) entry: String,
    /// The cost graph summarised for reading at a glance as SVG (`summary.svg`, else
    /// the whole `graph.svg` of an older `weft`), when it was written (Graphviz's `dot`
    /// is needed to render it).
    pub(crate) svg: Option<String>,
    /// The cost graph as DOT (`graph.dot`), when it was written.
    pub(crate) dot: Option<String>,
    /// The output directory.
    pub(crate) dir: String,
    /// The profiler's report (work, span, simulated time, peak space).
    pub(crate) report: String,
    pub(crate) stderr: String,
    /// One line: what was written, or why not.
    pub(crate) message: String,
    pub(crate) time_ms: u64,
}

/// The directory "Profile" writes into: `STEM.ENTRY.profile` under the user's cache
/// (`$XDG_CACHE_HOME/weft/profiles`, else `~/.cache/weft/profiles`, else the temporary
/// directory), in a folder per source folder: never beside the source, where it once
/// cluttered the project.
pub(crate) fn profile_dir(file: &Path, entry: &str) -> PathBuf {
    use std::hash::{Hash as _, Hasher as _};
    let stem = file.file_stem().map_or_else(|| "weft".into(), |s| s.to_string_lossy());
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let mut hasher = std::hash::DefaultHasher::new();
    file.parent().hash(&mut hasher);
    let folder = format!("{:016x}", hasher.finish());
    cache.join("weft").join("profiles").join(folder).join(format!("{stem}.{entry}.profile"))
}

/// A profile that did not run (its `message` says why).
pub(crate) fn profile_failed(file: &Path, entry: &str) -> ProfileResult {
    ProfileResult {
        ok: false,
        entry: entry.to_owned(),
        svg: None,
        dot: None,
        dir: profile_dir(file, entry).display().to_string(),
        report: String::new(),
        stderr: String::new(),
        message: String::new(),
        time_ms: 0,
    }
}

/// Profiles `entry` of the file at `file` out of process; never panics.
pub(crate) fn profile_entry(
    exe: &Path,
    file: &Path,
    entry: &str,
    input: &GpuInput,
    timeout: Duration,
    cancel: &AtomicBool,
) -> ProfileResult {
    let dir = profile_dir(file, entry);
    let mut result = profile_failed(file, entry);
    let mut args: Vec<String> = vec![
        "profile".into(),
        file.display().to_string(),
        "--entry".into(),
        entry.to_owned(),
        "--out".into(),
        dir.display().to_string(),
    ];
    let stdin = match input {
        GpuInput::None => String::new(),
        GpuInput::Values(text) => text.clone(),
        GpuInput::Random(specs) => {
            for spec in specs {
                args.extend(["--random".to_owned(), spec.clone()]);
            }
            String::new()
        }
    };
    // Files of an earlier profile must not pass for this one's.
    for name in ["graph.svg", "graph.dot", "summary.svg", "summary.dot"] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    let start = Instant::now();
    let output = run_process(exe, &args, &stdin, timeout, cancel);
    result.time_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            result.message = format!("cannot start `{} profile`: {error}", exe.display());
            return result;
        }
    };
    result.report = truncate(&output.stdout, MAX_STDERR_CHARS);
    result.stderr = truncate(&output.stderr, MAX_STDERR_CHARS);
    if output.timed_out {
        result.message = format!(
            "profiling `{entry}` was stopped after {} s (the time limit, `profileTimeoutSecs`)",
            timeout.as_secs()
        );
        return result;
    }
    if output.ended != weft_process::Ended::Exited(0) {
        let first = output
            .stderr
            .lines()
            .chain(output.stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        result.message = format!("`weft profile` failed: {first}");
        return result;
    }
    let existing = |name: &str| {
        let path = dir.join(name);
        path.exists().then(|| path.display().to_string())
    };
    result.svg = existing("summary.svg").or_else(|| existing("graph.svg"));
    result.dot = existing("graph.dot");
    result.ok = true;
    result.message = match (&result.svg, &result.dot) {
        (Some(svg), _) => format!("profile of `{entry}`: cost graph {svg}"),
        (None, Some(dot)) => format!(
            "profile of `{entry}`: cost graph {dot} (no SVG: Graphviz `dot` is not installed)"
        ),
        (None, None) => {
            format!("profile of `{entry}` in {} (the graph is too large to draw)", result.dir)
        }
    };
    result
}

/// What a child process gave.
struct ProcessOutput {
    ended: weft_process::Ended,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

/// Interprets the runner's `--json` line (docs/runtime.md).
fn gpu_result(
    entry: &str,
    output: ProcessOutput,
    time_ms: u64,
    timeout: Duration,
    expected: Option<&str>,
) -> GpuRunResult {
    let mut result = GpuRunResult::failed(entry, String::new());
    result.time_ms = time_ms;
    result.expected = expected.map(str::to_owned);
    result.stderr = truncate(&output.stderr, MAX_STDERR_CHARS);
    if output.timed_out {
        result.message = format!(
            "`{entry}` (OpenCL) was stopped after {} s (the time limit, `gpuRunTimeoutSecs`)",
            timeout.as_secs()
        );
        return result;
    }
    let line = output.stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let json: Option<serde_json::Value> = serde_json::from_str(line).ok();
    let Some(json) = json else {
        let first = output.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        result.message = format!("the OpenCL runner {}: {first}", output.ended);
        result.stdout = truncate(&output.stdout, MAX_STDERR_CHARS);
        return result;
    };
    if let Some(error) = json.get("error").and_then(serde_json::Value::as_str) {
        let exit = json.get("exit").and_then(serde_json::Value::as_u64).unwrap_or(2);
        let kind = if exit == 1 { "run-time error" } else { "cannot run" };
        let first = error.lines().next().unwrap_or(error);
        result.message = format!("`{entry}` (OpenCL): {kind}: {first}");
        result.stderr = truncate(error, MAX_STDERR_CHARS);
        return result;
    }
    let text = json.get("ok").and_then(serde_json::Value::as_str).unwrap_or("");
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    result.values = all.iter().take(MAX_VALUES).map(|v| truncate(v, MAX_VALUE_CHARS)).collect();
    if all.len() > MAX_VALUES {
        result.values.push(format!("… ({} more values)", all.len() - MAX_VALUES));
    }
    result.device = json.get("device").and_then(serde_json::Value::as_str).map(str::to_owned);
    result.wall_ns = json.get("wall_ns").and_then(serde_json::Value::as_u64);
    result.kernels = json
        .get("kernels")
        .and_then(|k| serde_json::from_value::<Vec<KernelTime>>(k.clone()).ok())
        .unwrap_or_default();
    let kernel_ns = result.kernels.iter().fold(0u64, |sum, k| sum.saturating_add(k.ns));
    result.kernel_ns = Some(kernel_ns);
    result.ok = true;
    let shown = all.first().map_or("no values".to_owned(), |v| truncate(v, 80));
    let more =
        if all.len() > 1 { format!(" (and {} more values)", all.len() - 1) } else { String::new() };
    let launches = result.kernels.len();
    let device = result.device.as_deref().map_or(String::new(), |d| format!(" on {d}"));
    let check = check_expected(text, expected);
    result.matched = check.as_ref().map(|(matched, _)| *matched);
    let check = check.map_or(String::new(), |(_, text)| format!("; {text}"));
    result.message = format!(
        "`{entry}`{device}: {shown}{more}{check}; kernels {} ({launches} launch{}), wall {}",
        format_ns(kernel_ns),
        if launches == 1 { "" } else { "es" },
        result.wall_ns.map_or("?".to_owned(), format_ns),
    );
    result
}

/// `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`.
pub(crate) fn format_ns(ns: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a duration shown with 3 digits")]
    let value = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", value / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", value / 1e6)
    } else {
        format!("{:.2} s", value / 1e9)
    }
}

/// `text` cut at `max` characters, with `…` when it was longer.
fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((idx, _)) => format!("{}…", &text[..idx]),
        None => text.to_owned(),
    }
}

/// How long `weft-runner devices` may take (POCL starts in about a second).
const DETECT_TIMEOUT: Duration = Duration::from_secs(20);

/// The device "Run on GPU" runs on: `weft-runner devices --json` asked which one `spec`
/// (`gpu`, `cpu`, `P:D`) names, else which is its default; or why there is none, in
/// words that follow "the default profile: ".
pub(crate) fn detect_device(runner: &Path, spec: Option<&str>) -> Detected {
    let (device, stdout) = detect(runner, spec);
    // The other kind of device beside it (a CPU beside a GPU), for the placement of
    // runs (`weft run --device auto`).
    let other = device.as_ref().ok().and_then(|d| {
        let kind = if d.kind == "gpu" { "cpu" } else { "gpu" };
        weft_cost::profile::listed_device(&stdout, Some(kind))
    });
    Detected { device, other }
}

/// What the server found at start: the device "Run on GPU" uses, and the machine's
/// device of the other kind.
#[derive(Debug, Clone)]
pub(crate) struct Detected {
    pub(crate) device: Result<weft_cost::profile::ListedDevice, String>,
    pub(crate) other: Option<weft_cost::profile::ListedDevice>,
}

/// The device `spec` names and `weft-runner devices --json`'s output.
fn detect(
    runner: &Path,
    spec: Option<&str>,
) -> (Result<weft_cost::profile::ListedDevice, String>, String) {
    let args = ["devices".to_owned(), "--json".to_owned()];
    let never = AtomicBool::new(false);
    let output = match run_process(runner, &args, "", DETECT_TIMEOUT, &never) {
        Ok(output) => output,
        Err(error) => {
            let why = format!("`{}` could not be started ({error})", runner.display());
            return (Err(why), String::new());
        }
    };
    if output.timed_out {
        let why =
            format!("`{} devices` took over {} s", runner.display(), DETECT_TIMEOUT.as_secs());
        return (Err(why), String::new());
    }
    let found = weft_cost::profile::listed_device(&output.stdout, spec).ok_or_else(|| match spec {
        _ if !output.stdout.trim_start().starts_with('{') => {
            let why = output.stderr.lines().next().unwrap_or("").trim();
            format!(
                "`weft-runner devices` found no OpenCL device{}",
                if why.is_empty() { String::new() } else { format!(" ({why})") }
            )
        }
        Some(spec) => format!("no OpenCL device matches `{spec}`"),
        None => "no OpenCL device".to_owned(),
    });
    (found, output.stdout)
}

/// Runs `program ARGS` with `stdin`, killing its process group after `timeout` or when
/// `cancel` becomes true.
fn run_process(
    program: &Path,
    args: &[String],
    stdin: &str,
    timeout: Duration,
    cancel: &AtomicBool,
) -> std::io::Result<ProcessOutput> {
    let mut command = command(program);
    command.args(args);
    let how = weft_process::Spawn {
        stdin: stdin.as_bytes(),
        cancel: Some(cancel),
        ..weft_process::Spawn::limited(timeout)
    };
    let done = weft_process::spawn_with_timeout(&mut command, how)?;
    Ok(ProcessOutput {
        ended: done.ended,
        timed_out: done.ended == weft_process::Ended::TimedOut,
        stdout: done.stdout_text(),
        stderr: done.stderr_text(),
    })
}

#[expect(clippy::disallowed_methods, reason = "the runner module is the one that spawns processes")]
fn command(program: &Path) -> std::process::Command {
    std::process::Command::new(program)
}

/// JSON (a host plan, a run's sources) in a temporary file, deleted when dropped.
fn write_temp(kind: &str, json: &str) -> std::io::Result<tempfile::TempPath> {
    let mut file =
        tempfile::Builder::new().prefix(&format!("weft-lsp-{kind}-")).suffix(".json").tempfile()?;
    std::io::Write::write_all(&mut file, json.as_bytes())?;
    Ok(file.into_temp_path())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use expect_test::{Expect, expect};

    use super::{ProcessOutput, gpu_result};

    fn check(stdout: &str, stderr: &str, expect: Expect) {
        let output = ProcessOutput {
            ended: weft_process::Ended::Signalled(9),
            timed_out: false,
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
        };
        let result = gpu_result("e", output, 5, Duration::from_secs(30), None);
        let json = serde_json::to_string_pretty(&result).unwrap();
        expect.assert_eq(&format!("{json}\n"));
    }

    #[test]
    fn values_and_kernel_times_are_summarised() {
        let values: Vec<String> = (0..10).map(|i| format!("{i}i32")).collect();
        let stdout = serde_json::json!({
            "ok": values.join("\n") + "\n",
            "wall_ns": 2_500_000,
            "kernels": [{"kernel": "e_map_0", "ns": 12_000}, {"kernel": "e_map_0", "ns": 800}],
            "device": "cpu-haswell (POCL)",
        });
        check(
            &stdout.to_string(),
            "",
            expect![[r#"
                {
                  "ok": true,
                  "entry": "e",
                  "values": [
                    "0i32",
                    "1i32",
                    "2i32",
                    "3i32",
                    "4i32",
                    "5i32",
                    "6i32",
                    "7i32",
                    "… (2 more values)"
                  ],
                  "stdout": "",
                  "stderr": "",
                  "message": "`e` on cpu-haswell (POCL): 0i32 (and 9 more values); kernels 12.8 µs (2 launches), wall 2.50 ms",
                  "timeMs": 5,
                  "device": "cpu-haswell (POCL)",
                  "kernelNs": 12800,
                  "wallNs": 2500000,
                  "kernels": [
                    {
                      "kernel": "e_map_0",
                      "ns": 12000
                    },
                    {
                      "kernel": "e_map_0",
                      "ns": 800
                    }
                  ],
                  "expected": null,
                  "matched": null
                }
            "#]],
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = format!("[{}]", vec!["1f32"; 100].join(", "));
        let stdout = serde_json::json!({"ok": long, "wall_ns": 10, "kernels": [], "device": "d"});
        check(
            &stdout.to_string(),
            "",
            expect![[r#"
                {
                  "ok": true,
                  "entry": "e",
                  "values": [
                    "[1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1…"
                  ],
                  "stdout": "",
                  "stderr": "",
                  "message": "`e` on d: [1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1f32, 1…; kernels 0 ns (0 launches), wall 10 ns",
                  "timeMs": 5,
                  "device": "d",
                  "kernelNs": 0,
                  "wallNs": 10,
                  "kernels": [],
                  "expected": null,
                  "matched": null
                }
            "#]],
        );
    }

    #[test]
    fn runner_errors_are_reported() {
        let stdout = r#"{"error": "main.weft:3:5: index 7 out of bounds for size 3", "exit": 1}"#;
        check(
            stdout,
            "",
            expect![[r#"
                {
                  "ok": false,
                  "entry": "e",
                  "values": [],
                  "stdout": "",
                  "stderr": "main.weft:3:5: index 7 out of bounds for size 3",
                  "message": "`e` (OpenCL): run-time error: main.weft:3:5: index 7 out of bounds for size 3",
                  "timeMs": 5,
                  "device": null,
                  "kernelNs": null,
                  "wallNs": null,
                  "kernels": [],
                  "expected": null,
                  "matched": null
                }
            "#]],
        );
    }

    #[test]
    fn a_crash_reports_stderr() {
        check(
            "",
            "thread 'main' panicked at ...\nmore\n",
            expect![[r#"
                {
                  "ok": false,
                  "entry": "e",
                  "values": [],
                  "stdout": "",
                  "stderr": "thread 'main' panicked at ...\nmore\n",
                  "message": "the OpenCL runner was killed by signal 9: thread 'main' panicked at ...",
                  "timeMs": 5,
                  "device": null,
                  "kernelNs": null,
                  "wallNs": null,
                  "kernels": [],
                  "expected": null,
                  "matched": null
                }
            "#]],
        );
    }
}
