//! `weft tune PATHS [--device D] [-o FILE]`: measures the middle end's thresholds and
//! the code generator's parameters on a device and writes a tuning file (Futhark's `futhark autotune`, simplified).
//!
//! For every entry with a `-- bench:` line, each of its thresholds (in the order the
//! middle end made them) is tried at "always the first version" (0) and "never"
//! (`i64::MAX`), the others held at their best so far, starting from the device's rule
//! (`weft_opt::threshold_default`); the fastest value is kept, so the file names every
//! threshold of every tuned entry. Each trial is one run of
//! `weft bench --tuning TRIAL --json --entry NAME FILE`, so a trial is
//! measured exactly as a benchmark is. Then the entry's code-generation parameters
//! ([`Parameter`]: the work-group size of reductions and scans, the coarsening of grid
//! kernels) are tried the same way, each at its candidate values. The file records the
//! device, the values, and each entry's time before and after.

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Args;
use std::collections::BTreeMap;

use crate::workspace::load;

#[derive(Args, Debug)]
pub(crate) struct TuneArgs {
    /// Files or directories with benchmark entries (`-- bench:` lines).
    #[arg(required = true)]
    paths: Vec<String>,
    /// The OpenCL device to tune for (`gpu`, `cpu` or `P:D`, as `weft bench`).
    #[arg(long)]
    pub(crate) device: Option<String>,
    /// Where to write the tuning file.
    #[arg(short = 'o', long = "output", default_value = "weft-tuning.json")]
    output: String,
    /// Measured runs per trial.
    #[arg(long, default_value_t = 5)]
    reps: u32,
}

/// What a tuning file fixes: the middle end's thresholds, and per entry the code
/// generator's parameters (`ENTRY.group_size`, `ENTRY.coarsen`: [`Parameter`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tuning {
    pub(crate) thresholds: BTreeMap<String, i64>,
    pub(crate) parameters: BTreeMap<String, i64>,
}

/// A code-generation parameter a tuning file may set for an entry, with the values
/// `weft tune` tries (its default is `weft_lower::Options::default()`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parameter {
    /// The work-group size of reductions, scans and `map@group` (a power of two, as
    /// their trees need).
    GroupSize,
    /// Elements per work-item of a one-dimensional grid kernel.
    Coarsen,
}

impl Parameter {
    pub(crate) const ALL: [Parameter; 2] = [Parameter::GroupSize, Parameter::Coarsen];

    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Parameter::GroupSize => "group_size",
            Parameter::Coarsen => "coarsen",
        }
    }

    fn candidates(self) -> &'static [i64] {
        match self {
            Parameter::GroupSize => &[64, 128, 256, 512],
            Parameter::Coarsen => &[1, 2, 4, 8, 16],
        }
    }

    fn valid(self, value: i64) -> bool {
        match self {
            Parameter::GroupSize => (32..=1024).contains(&value) && value.count_ones() == 1,
            Parameter::Coarsen => (1..=64).contains(&value),
        }
    }

    /// `options` with this parameter at `value` (already valid).
    pub(crate) fn apply(self, options: &mut weft_lower::Options, value: i64) {
        let value = u32::try_from(value).unwrap_or(1);
        match self {
            Parameter::GroupSize => options.work_group = value,
            Parameter::Coarsen => options.coarsen = value,
        }
    }

    fn from_name(name: &str) -> Option<Parameter> {
        let suffix = name.rsplit_once('.')?.1;
        Parameter::ALL.into_iter().find(|p| p.suffix() == suffix)
    }
}

/// The thresholds and parameters of a tuning file.
pub(crate) fn read_tuning_file(path: &str) -> anyhow::Result<Tuning> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read `{path}`"))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("`{path}` is not JSON"))?;
    let Some(thresholds) = json.get("thresholds").and_then(|t| t.as_object()) else {
        bail!("`{path}` has no `thresholds` object (write one with `weft tune`)");
    };
    let mut tuning = Tuning::default();
    for (name, value) in thresholds {
        let Some(value) = value.as_i64() else {
            bail!("`{path}`: threshold `{name}` is not an integer");
        };
        tuning.thresholds.insert(name.clone(), value);
    }
    if let Some(parameters) = json.get("parameters") {
        let Some(parameters) = parameters.as_object() else {
            bail!("`{path}`: `parameters` is not an object");
        };
        for (name, value) in parameters {
            let Some(parameter) = Parameter::from_name(name) else {
                bail!(
                    "`{path}`: unknown parameter `{name}` (an entry's `ENTRY.group_size` or \
                     `ENTRY.coarsen`)"
                );
            };
            match value.as_i64() {
                Some(value) if parameter.valid(value) => {
                    tuning.parameters.insert(name.clone(), value);
                }
                _ => bail!("`{path}`: parameter `{name}` has an invalid value {value}"),
            }
        }
    }
    Ok(tuning)
}

pub(crate) fn run(args: &TuneArgs) -> anyhow::Result<u8> {
    let (db, files) = load(&args.paths)?;
    let exe = std::env::current_exe().context("cannot find the weft executable")?;
    let trial_file = std::env::temp_dir().join(format!("weft-tune-{}.json", std::process::id()));
    let shape = crate::predict::profile_for(None, args.device.as_deref())
        .ok()
        .map(crate::opencl::device_shape);
    let mut chosen: BTreeMap<String, i64> = BTreeMap::new();
    let mut parameters: BTreeMap<String, i64> = BTreeMap::new();
    let mut entries = Vec::new();
    for loaded in &files {
        let path = loaded.file.path(&db).to_owned();
        let program = match crate::run::core_program(&db, loaded.file) {
            Ok(program) => program,
            Err(message) => {
                note(&format!("{path}: skipped: {message}"));
                continue;
            }
        };
        let gpu = weft_opt::pipeline(&program);
        for &entry in &program.entries {
            let name = program.functions[entry].name.to_string();
            let prefix = format!("{name}.");
            let thresholds: Vec<String> = gpu
                .thresholds
                .iter()
                .map(|(_, t)| t)
                .filter(|t| t.name.starts_with(&prefix) && t.kind.tunable())
                .map(|t| {
                    // Every trial names every threshold: the rule's value to start from.
                    chosen.insert(
                        t.name.clone(),
                        weft_opt::threshold_default(t.kind, shape.as_ref()),
                    );
                    t.name.clone()
                })
                .collect();
            let trial = |values: &BTreeMap<String, i64>,
                         parameters: &BTreeMap<String, i64>|
             -> anyhow::Result<Option<f64>> {
                write_tuning_file(&trial_file, args.device.as_deref(), values, parameters, &[])?;
                measure(&exe, &trial_file, args, &path, &name)
            };
            let Some(before) = trial(&chosen, &parameters)? else {
                // No `-- bench:` line (or it failed): nothing to measure.
                continue;
            };
            let mut best = before;
            for threshold in &thresholds {
                for value in [0, i64::MAX] {
                    let mut values = chosen.clone();
                    values.insert(threshold.clone(), value);
                    if let Some(ms) = trial(&values, &parameters)?
                        && ms < best
                    {
                        best = ms;
                        chosen = values;
                    }
                }
            }
            // Then each code-generation parameter, the others held at their best.
            for parameter in Parameter::ALL {
                let key = format!("{name}.{}", parameter.suffix());
                for &value in parameter.candidates() {
                    let mut tried = parameters.clone();
                    tried.insert(key.clone(), value);
                    if let Some(ms) = trial(&chosen, &tried)?
                        && ms < best
                    {
                        best = ms;
                        parameters = tried;
                    }
                }
            }
            note(&format!(
                "{path}: `{name}`: {before:.3} ms with the device's rule, {best:.3} ms tuned"
            ));
            entries.push(serde_json::json!({
                "file": path, "entry": name, "default_ms": before, "tuned_ms": best,
            }));
        }
    }
    let _ = std::fs::remove_file(&trial_file);
    if entries.is_empty() {
        bail!("no entry to tune: add a `-- bench: SPECS` line above an entry");
    }
    let output = PathBuf::from(&args.output);
    write_tuning_file(&output, args.device.as_deref(), &chosen, &parameters, &entries)?;
    note(&format!(
        "wrote {} ({} thresholds, {} parameters)",
        args.output,
        chosen.len(),
        parameters.len()
    ));
    Ok(0)
}

#[expect(clippy::print_stderr, reason = "progress for the user goes to stderr")]
fn note(text: &str) {
    eprintln!("{text}");
}

fn write_tuning_file(
    path: &PathBuf,
    device: Option<&str>,
    values: &BTreeMap<String, i64>,
    parameters: &BTreeMap<String, i64>,
    entries: &[serde_json::Value],
) -> anyhow::Result<()> {
    let json = serde_json::json!({
        "tool": "weft tune",
        "device": device.unwrap_or("default"),
        "thresholds": values,
        "parameters": parameters,
        "entries": entries,
    });
    std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("cannot write `{}`", path.display()))
}

/// The median kernel time of one entry's benchmark with the trial's thresholds, or
/// `None` when the entry has no `-- bench:` line or its run failed.
fn measure(
    exe: &std::path::Path,
    tuning: &std::path::Path,
    args: &TuneArgs,
    file: &str,
    entry: &str,
) -> anyhow::Result<Option<f64>> {
    let mut command = crate::opencl::weft_command(exe);
    command.arg("bench").arg("--tuning").arg(tuning).arg("--json");
    command.args(["--warmup", "1", "--reps", &args.reps.to_string(), "--entry", entry, file]);
    if let Some(device) = &args.device {
        command.args(["--device", device]);
    }
    let output = command.output().context("cannot run `weft bench`")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines() {
        let Ok(json) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if json.get("entry").and_then(|e| e.as_str()) != Some(entry) {
            continue;
        }
        if let Some(ns) = json.pointer("/total_kernel_ns/median").and_then(|n| n.as_f64()) {
            return Ok(Some(ns / 1e6));
        }
    }
    Ok(None)
}
