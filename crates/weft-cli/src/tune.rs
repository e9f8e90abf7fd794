//! `weft tune PATHS [--device D] [-o FILE]`: measures the middle end's thresholds and
//! the code generator's parameters on a device and writes a tuning file (Futhark's
//! `futhark autotune`, simplified).
//!
//! For every entry with a `-- bench:` line, each of its thresholds (in the order the
//! middle end made them) is tried at "always the first version" (0) and "never"
//! (`i64::MAX`), the others held at their best so far, starting from the device's rule
//! (`weft_opt::threshold_default`); the fastest value is kept, so the file names every
//! threshold of every tuned entry. Then the entry's code-generation parameters
//! ([`Parameter`]: the work-group size of reductions and scans, the coarsening of grid
//! kernels) are tried the same way, each at its candidate values.
//!
//! A trial is compiled here and measured by one `weft-runner trials` process per entry,
//! which draws and uploads the `-- bench:` inputs once and builds each distinct OpenCL
//! program once; a trial whose plan is identical to one measured before (a parameter
//! that changes no kernel) is not run again. So tuning costs about one build and a few
//! runs per distinct trial, not a process, a device context and fresh inputs each.
//!
//! Without `-o`, each tuned file's section goes into the committed tuning file of the
//! device beside it, `DIR/weft-tuning/DEVICE.json` (other files' sections are kept),
//! which every command then uses on that device unless `--no-tuning` or `--tuning`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::Args;

use crate::workspace::load;

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    /// Files or directories with benchmark entries (`-- bench:` lines).
    #[arg(required = true)]
    paths: Vec<String>,
    /// The OpenCL device to tune for (`gpu`, `cpu` or `P:D`, as `weft bench`).
    #[arg(long)]
    pub(crate) device: Option<String>,
    /// Write one tuning file here instead of each directory's committed file for the
    /// device (`DIR/weft-tuning/DEVICE.json`).
    #[arg(short = 'o', long = "output")]
    output: Option<String>,
    /// Measured runs per trial.
    #[arg(long, default_value_t = 5)]
    reps: u32,
    /// Tune kernels compiled without bounds checks (as `weft bench --unsafe` runs them).
    #[arg(long = "unsafe")]
    unchecked: bool,
    /// Choose by the cost model's predicted kernel time at the `-- bench:` sizes instead
    /// of measuring (no device needed; docs/costs.md "Defaults against tuning").
    #[arg(long)]
    predict: bool,
    /// With --predict: the device profile that predicts, a committed profile's name
    /// (`nvidia-h200`, `nvidia-h100`, `pocl-cpu`) or a `weft calibrate -o` file (default:
    /// the committed profile of the device).
    #[arg(long, value_name = "NAME|FILE", requires = "predict")]
    profile: Option<String>,
}

/// What a tuning file fixes for one source file: the middle end's thresholds, and per
/// entry the code generator's parameters (`ENTRY.group_size`, `ENTRY.coarsen`:
/// [`Parameter`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tuning {
    pub(crate) thresholds: BTreeMap<String, i64>,
    pub(crate) parameters: BTreeMap<String, i64>,
}

/// A tuning file: a section per source file (keyed by its path as tuned, or by its file
/// name in a committed file beside the sources), or, as `weft tune -o` wrote before
/// sections, one tuning for every source.
#[derive(Debug, Clone, Default)]
pub(crate) struct TuningFile {
    files: BTreeMap<String, Tuning>,
    every_source: Option<Tuning>,
}

impl TuningFile {
    /// The tuning of the source file at `path`: its section by path, else by file name.
    pub(crate) fn for_source(&self, path: &str) -> Option<&Tuning> {
        let name = Path::new(path).file_name().and_then(|n| n.to_str());
        self.files
            .get(path)
            .or_else(|| name.and_then(|name| self.files.get(name)))
            .or(self.every_source.as_ref())
    }
}

/// Where the committed tuning file of the device named `device_name` is for `source`.
pub(crate) fn committed_path(source: &Path, device_name: &str) -> PathBuf {
    let dir = source.parent().unwrap_or(Path::new(""));
    dir.join("weft-tuning").join(format!("{}.json", device_slug(device_name)))
}

/// `NVIDIA H100 80GB HBM3` -> `nvidia-h100-80gb-hbm3`.
fn device_slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// A code-generation parameter a tuning file may set for an entry, with the values
/// `weft tune` tries (its default is `weft_lower::Options::default()`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parameter {
    /// The work-group size of reductions, scans and `map@group` (a power of two, as
    /// their trees need).
    GroupSize,
}

impl Parameter {
    pub(crate) const ALL: [Parameter; 1] = [Parameter::GroupSize];

    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Parameter::GroupSize => "group_size",
        }
    }

    fn candidates(self) -> &'static [i64] {
        match self {
            Parameter::GroupSize => &[64, 128, 256, 512],
        }
    }

    fn valid(self, value: i64) -> bool {
        match self {
            Parameter::GroupSize => (32..=1024).contains(&value) && value.count_ones() == 1,
        }
    }

    /// `options` with this parameter at `value` (already valid).
    pub(crate) fn apply(self, options: &mut weft_lower::Options, value: i64) {
        let value = u32::try_from(value).unwrap_or(1);
        match self {
            Parameter::GroupSize => options.work_group = value,
        }
    }

    fn from_name(name: &str) -> Option<Parameter> {
        let suffix = name.rsplit_once('.')?.1;
        Parameter::ALL.into_iter().find(|p| p.suffix() == suffix)
    }
}

/// Reads a tuning file written by `weft tune`.
pub(crate) fn read_tuning_file(path: &str) -> anyhow::Result<TuningFile> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read `{path}`"))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("`{path}` is not JSON"))?;
    if let Some(files) = json.get("files") {
        let Some(files) = files.as_object() else {
            bail!("`{path}`: `files` is not an object");
        };
        let mut file = TuningFile::default();
        for (source, section) in files {
            let tuning = read_section(section).with_context(|| format!("`{path}`: `{source}`"))?;
            file.files.insert(source.clone(), tuning);
        }
        return Ok(file);
    }
    if json.get("thresholds").is_none() {
        bail!("`{path}` has no `files` object (write one with `weft tune`)");
    }
    let tuning = read_section(&json).with_context(|| format!("`{path}`"))?;
    Ok(TuningFile { files: BTreeMap::new(), every_source: Some(tuning) })
}

/// One source's `thresholds` and `parameters`.
fn read_section(section: &serde_json::Value) -> anyhow::Result<Tuning> {
    let mut tuning = Tuning::default();
    if let Some(thresholds) = section.get("thresholds") {
        let Some(thresholds) = thresholds.as_object() else {
            bail!("`thresholds` is not an object")
        };
        for (name, value) in thresholds {
            let Some(value) = value.as_i64() else {
                bail!("threshold `{name}` is not an integer");
            };
            tuning.thresholds.insert(name.clone(), value);
        }
    }
    if let Some(parameters) = section.get("parameters") {
        let Some(parameters) = parameters.as_object() else {
            bail!("`parameters` is not an object")
        };
        for (name, value) in parameters {
            let Some(parameter) = Parameter::from_name(name) else {
                // `ENTRY.coarsen`: the staged translator's thread coarsening (tuning
                // files written before it was removed); the code generator from the
                // GPU IR has no such parameter.
                if name.ends_with(".coarsen") {
                    continue;
                }
                bail!("unknown parameter `{name}` (an entry's `ENTRY.group_size`)");
            };
            match value.as_i64() {
                Some(value) if parameter.valid(value) => {
                    tuning.parameters.insert(name.clone(), value);
                }
                _ => bail!("parameter `{name}` has an invalid value {value}"),
            }
        }
    }
    Ok(tuning)
}

/// One tuned source file: its tuning and what was measured per entry.
#[derive(Default)]
struct Tuned {
    tuning: Tuning,
    entries: Vec<serde_json::Value>,
}

pub(crate) fn run(args: &TuneArgs) -> anyhow::Result<u8> {
    let (db, files) = load(&args.paths)?;
    // Predicting for a named profile: the compiler is steered for that device too.
    let predicting = match (&args.profile, args.predict) {
        (Some(asked), _) => Some(crate::predict::profile_named_or_file(asked)?),
        (None, true) => Some(crate::opencl::steering_profile().context(
            "no committed device profile matches the device: give `--profile NAME|FILE` to predict for one",
        )?),
        (None, false) => None,
    };
    if let Some(profile) = predicting {
        crate::opencl::steer_with(profile);
    }
    let device = crate::opencl::steering_profile();
    if args.output.is_none() && device.is_none() {
        bail!(
            "no committed device profile matches the device, so there is no committed tuning \
             file to write: give `-o FILE`"
        );
    }
    let target = match device {
        Some(profile) if profile.device.kind != "gpu" => weft_opt::Target::Cpu,
        _ => weft_opt::Target::Gpu,
    };
    let options =
        weft_lower::Options { checks: !args.unchecked, ..crate::environment::lower_options() };
    let targets = crate::bench::find_targets(&db, &files, None, None, &crate::bench::Sizes::main());
    let benchmarked =
        targets.iter().filter(|t| matches!(t.inputs, crate::bench::Inputs::Line(_))).count();
    let mut tuned: BTreeMap<String, Tuned> = BTreeMap::new();
    let mut programs: BTreeMap<String, Option<weft_core::Program>> = BTreeMap::new();
    let mut done = 0;
    for found in &targets {
        let crate::bench::Inputs::Line(line) = &found.inputs else { continue };
        if crate::apl::is_apl(&found.path) {
            continue;
        }
        done += 1;
        let program = programs.entry(found.path.clone()).or_insert_with(|| {
            crate::run::core_program(&db, found.file)
                .map_err(|message| note(&format!("{}: skipped: {message}", found.path)))
                .ok()
        });
        let Some(program) = program.as_ref() else { continue };
        let Ok(entry) = crate::run::choose_entry(program, Some(&found.entry)) else { continue };
        note(&format!("[{done}/{benchmarked}] {}: `{}`", found.path, found.entry));
        let section = tuned.entry(found.path.clone()).or_default();
        let specs: Vec<String> = line.inputs.iter().map(ToString::to_string).collect();
        let mut trials = Trials::new(args, &specs)?;
        let mut measure = |tuning: &Tuning| -> anyhow::Result<Option<f64>> {
            let compiled =
                match crate::opencl::compile_tuned(&db, program, entry, options, Some(tuning)) {
                    Ok(compiled) => compiled,
                    Err(_) => return Ok(None),
                };
            match predicting {
                Some(profile) => Ok(trials.predict(&compiled, profile, &line.inputs)),
                None => trials.measure(&compiled.plan),
            }
        };
        let mut best_tuning = section.tuning.clone();
        // Every trial names every threshold of the entry: the rule's value to start from.
        let gpu = weft_opt::pipeline_for(program, target);
        let shape = device.map(crate::opencl::device_shape);
        let prefix = format!("{}.", found.entry);
        let thresholds: Vec<String> = gpu
            .thresholds
            .iter()
            .map(|(_, t)| t)
            .filter(|t| t.name.starts_with(&prefix) && t.kind.tunable())
            .map(|t| {
                let default = weft_opt::threshold_default(t.kind, shape.as_ref());
                best_tuning.thresholds.insert(t.name.clone(), default);
                t.name.clone()
            })
            .collect();
        let Some(before) = measure(&best_tuning)? else {
            note(&format!("  not tuned: {}", trials.last_error()));
            continue;
        };
        let mut best = before;
        for threshold in &thresholds {
            for value in [0, i64::MAX] {
                let mut tried = best_tuning.clone();
                tried.thresholds.insert(threshold.clone(), value);
                if let Some(ms) = measure(&tried)?
                    && ms < best
                {
                    best = ms;
                    best_tuning = tried;
                }
            }
        }
        // Then each code-generation parameter, the others held at their best.
        for parameter in Parameter::ALL {
            let key = format!("{}.{}", found.entry, parameter.suffix());
            for &value in parameter.candidates() {
                let mut tried = best_tuning.clone();
                tried.parameters.insert(key.clone(), value);
                if let Some(ms) = measure(&tried)?
                    && ms < best
                {
                    best = ms;
                    best_tuning = tried;
                }
            }
        }
        let how = if predicting.is_some() { "predicted" } else { "run" };
        note(&format!(
            "  {before:.3} ms with the device's rule, {best:.3} ms tuned ({} trials, {} {how})",
            trials.asked, trials.ran
        ));
        section.tuning = best_tuning;
        let mut record = serde_json::json!({
            "entry": found.entry, "inputs": specs, "default_ms": before, "tuned_ms": best,
        });
        if let Some(profile) = predicting {
            // The times are the model's, not measurements.
            record["predicted_by"] = serde_json::json!(format!(
                "{} on {}",
                weft_cost::model::MODEL,
                profile.device.name
            ));
        }
        section.entries.push(record);
    }
    tuned.retain(|_, section| !section.entries.is_empty());
    if tuned.is_empty() {
        bail!("no entry to tune: add a `-- bench: SPECS` line above an entry");
    }
    let device_name = device.map(|p| p.device.name.clone()).unwrap_or_else(|| "unknown".into());
    // The tuning files to write, each with its sections by key.
    let mut outputs: BTreeMap<PathBuf, Vec<(String, Tuned)>> = BTreeMap::new();
    for (source, section) in tuned {
        let (path, key) = match &args.output {
            Some(output) => (PathBuf::from(output), source),
            None => {
                let name = Path::new(&source).file_name().and_then(|n| n.to_str());
                let key = name.unwrap_or(&source).to_owned();
                (committed_path(Path::new(&source), &device_name), key)
            }
        };
        outputs.entry(path).or_default().push((key, section));
    }
    for (path, sections) in outputs {
        write_tuning_file(&path, &device_name, sections, args.output.is_none())?;
    }
    Ok(0)
}

#[expect(clippy::print_stderr, reason = "progress for the user goes to stderr")]
fn note(text: &str) {
    eprintln!("{text}");
}

/// Writes `sections` to the tuning file at `path`; with `keep`, the sections of other
/// sources already there stay.
fn write_tuning_file(
    path: &Path,
    device: &str,
    sections: Vec<(String, Tuned)>,
    keep: bool,
) -> anyhow::Result<()> {
    let mut files = serde_json::Map::new();
    if keep
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(old) = json.get("files").and_then(|f| f.as_object())
    {
        files = old.clone();
    }
    let written = sections.len();
    for (key, section) in sections {
        files.insert(
            key,
            serde_json::json!({
                "thresholds": section.tuning.thresholds,
                "parameters": section.tuning.parameters,
                "entries": section.entries,
            }),
        );
    }
    let json = serde_json::json!({ "tool": "weft tune", "device": device, "files": files });
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    note(&format!("wrote {} ({written} files tuned)", path.display()));
    Ok(())
}

/// The trials of one entry, measured by one `weft-runner trials` process.
struct Trials {
    runner_args: Vec<String>,
    session: Option<weft_process::LineSession>,
    /// Plans measured so far (by their JSON) and their median kernel time in ms.
    measured: BTreeMap<String, Option<f64>>,
    dir: tempfile::TempDir,
    best_ms: Option<f64>,
    last_error: Option<String>,
    /// Trials asked for, and those that ran on the device.
    asked: usize,
    ran: usize,
}

impl Trials {
    fn new(args: &TuneArgs, specs: &[String]) -> anyhow::Result<Trials> {
        let mut runner_args = vec![
            "trials".to_owned(),
            "--warmup".to_owned(),
            "1".to_owned(),
            "--reps".to_owned(),
            args.reps.max(1).to_string(),
        ];
        if let Some(device) = &args.device {
            runner_args.extend(["--device".to_owned(), device.clone()]);
        }
        for spec in specs {
            runner_args.extend(["--random".to_owned(), spec.clone()]);
        }
        Ok(Trials {
            runner_args,
            session: None,
            measured: BTreeMap::new(),
            dir: tempfile::Builder::new().prefix("weft-tune-").tempdir()?,
            best_ms: None,
            last_error: None,
            asked: 0,
            ran: 0,
        })
    }

    fn last_error(&self) -> String {
        self.last_error.clone().unwrap_or_else(|| "no measurement".to_owned())
    }

    /// The cost model's predicted kernel time of `compiled` in ms at the sizes of `specs`
    /// on `profile`'s device, or `None` when the model cannot predict it.
    fn predict(
        &mut self,
        compiled: &weft_opencl::Compiled,
        profile: &weft_cost::profile::DeviceProfile,
        specs: &[weft_values::RandomSpec],
    ) -> Option<f64> {
        self.asked += 1;
        self.ran += 1;
        let sizes = crate::predict::sizes_of(&compiled.plan.inputs, specs);
        match compiled.costs.predict(profile, &sizes) {
            Ok(prediction) => Some(prediction.kernels_s * 1e3),
            Err(error) => {
                self.last_error = Some(format!("the cost model cannot predict it: {error}"));
                None
            }
        }
    }

    /// The median kernel time of `plan` in ms, or `None` when its run failed or took
    /// far longer than the best so far.
    fn measure(&mut self, plan: &weft_plan::Plan) -> anyhow::Result<Option<f64>> {
        self.asked += 1;
        let json = plan.to_json();
        if let Some(&known) = self.measured.get(&json) {
            return Ok(known);
        }
        self.ran += 1;
        let path = self.dir.path().join(format!("trial-{}.json", self.ran));
        std::fs::write(&path, &json)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        // The first trial also creates the context, draws the inputs and builds; a later
        // one may take some multiple of the best, beyond which it cannot win.
        let limit = match self.best_ms {
            None => Duration::from_secs(300),
            Some(best) => Duration::from_secs_f64(20.0 + best * 20.0 * 10.0 / 1e3),
        };
        let session = match self.session.as_mut() {
            Some(session) => session,
            None => self.session.insert(crate::opencl::runner_session(&self.runner_args)?),
        };
        let time = match session.request(&path.display().to_string(), limit) {
            Ok(line) => {
                let answer: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                let median = answer.pointer("/total_kernel_ns/median").and_then(|n| n.as_f64());
                if median.is_none() {
                    let error = answer.get("error").and_then(|e| e.as_str()).unwrap_or(&line);
                    self.last_error = Some(error.to_owned());
                }
                median.map(|ns| ns / 1e6)
            }
            Err(weft_process::NoAnswer::TimedOut) => {
                self.session = None;
                self.last_error = Some(format!("a trial took longer than {limit:?}"));
                None
            }
            Err(weft_process::NoAnswer::Ended(stderr)) => {
                self.session = None;
                self.last_error = Some(format!("the OpenCL runner ended: {}", stderr.trim()));
                None
            }
        };
        let _ = std::fs::remove_file(&path);
        if let Some(ms) = time {
            self.best_ms = Some(self.best_ms.map_or(ms, |best| best.min(ms)));
        }
        self.measured.insert(json, time);
        Ok(time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_name_becomes_a_file_name() {
        assert_eq!(device_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(
            device_slug("cpu-haswell-AMD EPYC 7B13 (pocl)"),
            "cpu-haswell-amd-epyc-7b13-pocl"
        );
        assert_eq!(
            committed_path(Path::new("bench/apps/nw.weft"), "NVIDIA H100 80GB HBM3"),
            Path::new("bench/apps/weft-tuning/nvidia-h100-80gb-hbm3.json")
        );
    }

    #[test]
    fn a_source_finds_its_section_by_path_then_by_name() {
        let tuning = |value| Tuning {
            thresholds: BTreeMap::from([("main.suff_outer_par_0".to_owned(), value)]),
            parameters: BTreeMap::new(),
        };
        let file = TuningFile {
            files: BTreeMap::from([
                ("bench/programs/sgemm.weft".to_owned(), tuning(1)),
                ("sgemm.weft".to_owned(), tuning(2)),
            ]),
            every_source: None,
        };
        assert_eq!(file.for_source("bench/programs/sgemm.weft"), Some(&tuning(1)));
        assert_eq!(file.for_source("bench/apps/sgemm.weft"), Some(&tuning(2)));
        assert_eq!(file.for_source("bench/apps/nw.weft"), None);
    }

    #[test]
    fn tuning_files_are_read_in_both_formats_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        };
        let sections = write(
            "sections.json",
            r#"{"files": {"a.weft": {"thresholds": {"main.t_0": 5},
                "parameters": {"main.group_size": 128}}}}"#,
        );
        let file = read_tuning_file(&sections).unwrap();
        let a = file.for_source("x/a.weft").unwrap();
        assert_eq!(a.thresholds["main.t_0"], 5);
        assert_eq!(a.parameters["main.group_size"], 128);
        assert!(file.for_source("x/b.weft").is_none());
        let flat = write("flat.json", r#"{"thresholds": {"main.t_0": 7}}"#);
        let file = read_tuning_file(&flat).unwrap();
        assert_eq!(file.for_source("anything.weft").unwrap().thresholds["main.t_0"], 7);
        let bad =
            write("bad.json", r#"{"files": {"a.weft": {"parameters": {"main.group_size": 100}}}}"#);
        let error = format!("{:#}", read_tuning_file(&bad).unwrap_err());
        assert!(error.contains("`a.weft`") && error.contains("invalid value 100"), "{error}");
        let none = write("none.json", r#"{"other": 1}"#);
        assert!(format!("{:#}", read_tuning_file(&none).unwrap_err()).contains("no `files`"));
    }
}
