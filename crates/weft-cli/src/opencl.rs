//! The OpenCL backend from the command line: compiling entries to host plans and
//! running them in the `weft-runner` process (ARCHITECTURE.md: running code is out of
//! process, so `weft check` and `weft lsp` never load OpenCL).

use std::process::Command;
use std::time::Duration;

use weft_core::{FnId, Program};
use weft_hir::RootDatabase;
use weft_opencl::Compiled;
use weft_process::Spawn;

/// How entries are compiled: through the middle end (docs/middle.md) with the device
/// whose shape gives the thresholds' defaults, and the tuning (thresholds and
/// code-generation parameters measured by `weft tune`) of the entry's file: `--tuning
/// FILE`'s, else the committed tuning file of the device beside the source
/// (`DIR/weft-tuning/DEVICE.json`), unless `--no-tuning`. Set once by `main`; the command line is the one place that
/// reads flags and files, and library code gets the transformed program.
pub(crate) struct MiddleEnd {
    device: Option<String>,
    /// `--tuning FILE`, and the file read: it replaces the committed tuning files.
    explicit: Option<(String, crate::tune::TuningFile)>,
    /// Whether committed tuning files apply (not `--no-tuning`).
    committed: bool,
    /// The device's committed profile, found on first use (`None` when none matches).
    profile: std::sync::OnceLock<Option<&'static weft_cost::profile::DeviceProfile>>,
    /// The committed tuning files read so far, by path (`None`: there is none).
    tuning_files: std::sync::Mutex<
        std::collections::BTreeMap<
            std::path::PathBuf,
            Option<std::sync::Arc<crate::tune::TuningFile>>,
        >,
    >,
    /// The last GPU IR made, with its input and target: the commands compile a file's
    /// entries one by one from one program, which the whole-program middle end then
    /// runs on once, not once per entry.
    last_gpu:
        std::sync::Mutex<Option<(Program, weft_opt::Target, std::sync::Arc<weft_opencl::GpuCode>)>>,
}

static MIDDLE_END: std::sync::OnceLock<MiddleEnd> = std::sync::OnceLock::new();

/// Compiles this process's entries through the middle end for `device` with the tuning
/// the flags say (without this call, at an unknown GPU's thresholds).
pub(crate) fn use_middle_end(
    device: Option<String>,
    tuning_file: Option<&str>,
    committed: bool,
) -> anyhow::Result<()> {
    let explicit = match tuning_file {
        Some(path) => Some((path.to_owned(), crate::tune::read_tuning_file(path)?)),
        None => None,
    };
    let _ = MIDDLE_END.set(MiddleEnd {
        device,
        explicit,
        committed,
        profile: std::sync::OnceLock::new(),
        tuning_files: std::sync::Mutex::default(),
        last_gpu: std::sync::Mutex::new(None),
    });
    Ok(())
}

/// Steers this process's compilations with `profile` instead of the device's
/// (`weft bench --replay`: the device measured is not this machine's). Has no effect
/// once a compilation has asked for the profile.
pub(crate) fn steer_with(profile: &'static weft_cost::profile::DeviceProfile) {
    if let Some(middle) = MIDDLE_END.get() {
        let _ = middle.profile.set(Some(profile));
    }
}

/// Where the tuning of a compilation comes from (`weft bench` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TuningSource {
    /// The device's rule for every threshold and the default parameters.
    None,
    /// `--tuning FILE`.
    Explicit(String),
    /// A committed tuning file beside the source.
    Committed(std::path::PathBuf),
}

impl MiddleEnd {
    /// The profile that steers the compiler, looked up once: `WEFT_PROFILE`'s file,
    /// else the committed profile of the device the runs use.
    #[expect(clippy::print_stderr, reason = "a variable the CLI ignores is said on stderr")]
    fn profile(&self) -> Option<&'static weft_cost::profile::DeviceProfile> {
        *self.profile.get_or_init(|| {
            let file = crate::environment::steering_profile();
            match crate::predict::profile_for(file.as_deref(), self.device.as_deref()) {
                Ok(profile) => Some(profile),
                Err(error) if file.is_some() => {
                    eprintln!("warning: WEFT_PROFILE ignored: {error:#}");
                    None
                }
                Err(_) => None,
            }
        })
    }

    /// The tuning of `source` (a `.weft` file's path) and where it comes from.
    fn tuning_for(&self, source: &str) -> (crate::tune::Tuning, TuningSource) {
        self.tuning_for_device(source, self.profile())
    }

    /// The tuning of `source` on the device `profile` describes.
    fn tuning_for_device(
        &self,
        source: &str,
        profile: Option<&weft_cost::profile::DeviceProfile>,
    ) -> (crate::tune::Tuning, TuningSource) {
        if let Some((path, file)) = &self.explicit {
            let tuning = file.for_source(source).cloned().unwrap_or_default();
            return (tuning, TuningSource::Explicit(path.clone()));
        }
        let Some(profile) = profile.filter(|_| self.committed) else {
            return (crate::tune::Tuning::default(), TuningSource::None);
        };
        let path = crate::tune::committed_path(std::path::Path::new(source), &profile.device.name);
        let mut files = self.tuning_files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let file = files.entry(path.clone()).or_insert_with(|| read_committed(&path)).clone();
        match file.and_then(|file| file.for_source(source).cloned()) {
            Some(tuning) => (tuning, TuningSource::Committed(path)),
            None => (crate::tune::Tuning::default(), TuningSource::None),
        }
    }

    /// `program` through the middle end with every call inlined, and its memory (see
    /// `last_gpu`).
    fn gpu_code(
        &self,
        program: &Program,
        target: weft_opt::Target,
    ) -> std::sync::Arc<weft_opencl::GpuCode> {
        let mut last = self.last_gpu.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((input, made_for, output)) = last.as_ref()
            && input == program
            && *made_for == target
        {
            return std::sync::Arc::clone(output);
        }
        let output = std::sync::Arc::new(weft_opencl::GpuCode::new(program, target));
        *last = Some((program.clone(), target, std::sync::Arc::clone(&output)));
        output
    }
}

/// A committed tuning file, or `None` when there is none. One that cannot be read is
/// said once and ignored: a stale or broken tuning file must not stop a run.
#[expect(clippy::print_stderr, reason = "a tuning file the CLI ignores is said on stderr")]
fn read_committed(path: &std::path::Path) -> Option<std::sync::Arc<crate::tune::TuningFile>> {
    if !path.exists() {
        return None;
    }
    match crate::tune::read_tuning_file(&path.display().to_string()) {
        Ok(file) => Some(std::sync::Arc::new(file)),
        Err(error) => {
            eprintln!("warning: tuning file ignored: {error:#}");
            None
        }
    }
}

pub(crate) use weft_opencl::device_shape;

/// Compiles one entry, or says why not (with the source position).
pub(crate) fn compile(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    options: weft_lower::Options,
) -> Result<Compiled, String> {
    let tuning = MIDDLE_END.get().map(|middle| {
        let source = program.functions[entry].def.file.path(db);
        middle.tuning_for(source).0
    });
    compile_tuned(db, program, entry, options, tuning.as_ref())
}

/// The device profile the middle end steers by (`None` when no committed profile
/// matches the device).
pub(crate) fn steering_profile() -> Option<&'static weft_cost::profile::DeviceProfile> {
    MIDDLE_END.get().and_then(MiddleEnd::profile)
}

/// The kind of device the middle end compiles for (a GPU unless the steering profile is
/// a CPU's).
pub(crate) fn steering_target() -> weft_opt::Target {
    match steering_profile() {
        Some(profile) if profile.device.kind != "gpu" => weft_opt::Target::Cpu,
        _ => weft_opt::Target::Gpu,
    }
}

/// Where the tuning of `entry`'s file comes from.
pub(crate) fn tuning_source(db: &RootDatabase, program: &Program, entry: FnId) -> TuningSource {
    match MIDDLE_END.get() {
        Some(middle) => middle.tuning_for(program.functions[entry].def.file.path(db)).1,
        None => TuningSource::None,
    }
}

/// Compiles one entry for the device `profile` describes (its thresholds, its code
/// generator's facts and its committed tuning), whichever device this process steers
/// by: `weft run --device auto` compiles for each device it chooses between.
pub(crate) fn compile_for(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    mut options: weft_lower::Options,
    profile: &'static weft_cost::profile::DeviceProfile,
) -> Result<Compiled, String> {
    options.profile = Some(profile);
    let Some(middle) = MIDDLE_END.get() else {
        return compile_tuned(db, program, entry, options, None);
    };
    let source = program.functions[entry].def.file.path(db);
    let (tuning, _) = middle.tuning_for_device(source, Some(profile));
    compile_steered(db, program, entry, options, &tuning, Some(profile), middle)
}

/// Through the middle end, steered by `profile`'s device shape and tuned by `tuning`.
fn compile_steered(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    mut options: weft_lower::Options,
    tuning: &crate::tune::Tuning,
    profile: Option<&'static weft_cost::profile::DeviceProfile>,
    middle: &MiddleEnd,
) -> Result<Compiled, String> {
    // The code generator's device facts (a CPU; forward progress across work-groups)
    // are the device's that runs the code, not a generic GPU's.
    if options.profile.is_none() {
        options.profile = profile;
    }
    let settings =
        weft_opt::Settings { device: profile.map(device_shape), tuning: tuning.thresholds.clone() };
    let name = &program.functions[entry].name;
    for parameter in crate::tune::Parameter::ALL {
        if let Some(&value) = tuning.parameters.get(&format!("{name}.{}", parameter.suffix())) {
            parameter.apply(&mut options, value);
        }
    }
    let position = |origin: &weft_core::Origin| weft_core::origin_position(db, origin);
    let gpu_code = || middle.gpu_code(program, settings.target());
    weft_opencl::compile_through_middle_end(&settings, &gpu_code, entry, &position, options)
        .map_err(|error| placed_message(db, &error))
}

/// Compiles one entry with `tuning` instead of its file's (`weft tune`'s trials), or
/// says why not. `None`: at an unknown GPU's thresholds.
pub(crate) fn compile_tuned(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    options: weft_lower::Options,
    tuning: Option<&crate::tune::Tuning>,
) -> Result<Compiled, String> {
    if let (Some(middle), Some(tuning)) = (MIDDLE_END.get(), tuning) {
        return compile_steered(db, program, entry, options, tuning, middle.profile(), middle);
    }
    let position = |origin: &weft_core::Origin| weft_core::origin_position(db, origin);
    weft_opencl::compile_entry(program, entry, &position, options)
        .map_err(|error| placed_message(db, &error))
}

/// An error's message with its source position first.
fn placed_message(db: &RootDatabase, error: &weft_lower::LowerError) -> String {
    match error.origin.as_ref().and_then(|o| weft_core::origin_position(db, o)) {
        Some(p) => format!("{p}: {}", error.message),
        None => error.message.clone(),
    }
}

/// What a runner invocation gave.
pub(crate) struct RunnerOutput {
    /// The exit status, if it exited.
    pub(crate) status: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
    pub(crate) ended: weft_process::Ended,
}

/// Runs `weft-runner ARGS` with `stdin`, killing its process group after `timeout`.
pub(crate) fn run_runner(
    args: &[String],
    stdin: &str,
    timeout: Duration,
) -> anyhow::Result<RunnerOutput> {
    spawn_runner(args, weft_process::Spawn { stdin: stdin.as_bytes(), ..Spawn::limited(timeout) })
}

/// Runs `weft-runner ARGS` as [`run_runner`] does, its stderr (progress lines) shown
/// as it comes instead of collected.
pub(crate) fn run_runner_showing_stderr(
    args: &[String],
    timeout: Duration,
) -> anyhow::Result<RunnerOutput> {
    spawn_runner(args, Spawn { show_stderr: true, ..Spawn::limited(timeout) })
}

fn spawn_runner(args: &[String], how: Spawn<'_>) -> anyhow::Result<RunnerOutput> {
    let path = weft_process::runner_path(crate::environment::runner().as_deref());
    #[expect(clippy::disallowed_methods, reason = "weft-process runs it")]
    let mut command = Command::new(&path);
    command.args(args);
    let done = weft_process::spawn_with_timeout(&mut command, how).map_err(|error| {
        anyhow::anyhow!(
            "cannot start the OpenCL runner `{}`: {error} (build it with `cargo build -p \
             weft-runtime`, or set WEFT_RUNNER)",
            path.display()
        )
    })?;
    let status = match done.ended {
        weft_process::Ended::Exited(code) => Some(code),
        _ => None,
    };
    Ok(RunnerOutput {
        status,
        stdout: done.stdout_text(),
        stderr: done.stderr_text(),
        timed_out: done.ended == weft_process::Ended::TimedOut,
        ended: done.ended,
    })
}

/// Starts `weft-runner ARGS` as a session answering one line per request (`weft
/// tune`'s trials).
pub(crate) fn runner_session(args: &[String]) -> anyhow::Result<weft_process::LineSession> {
    let path = weft_process::runner_path(crate::environment::runner().as_deref());
    #[expect(clippy::disallowed_methods, reason = "weft-process runs it")]
    let mut command = Command::new(&path);
    command.args(args);
    weft_process::LineSession::start(&mut command).map_err(|error| {
        anyhow::anyhow!(
            "cannot start the OpenCL runner `{}`: {error} (build it with `cargo build -p \
             weft-runtime`, or set WEFT_RUNNER)",
            path.display()
        )
    })
}

/// Writes a plan to a temporary file for the runner, deleted when dropped.
pub(crate) fn write_plan(plan: &weft_plan::Plan) -> anyhow::Result<tempfile::TempPath> {
    let mut file = tempfile::Builder::new().prefix("weft-plan-").suffix(".json").tempfile()?;
    std::io::Write::write_all(&mut file, plan.to_json().as_bytes())?;
    Ok(file.into_temp_path())
}

/// `weft build FILE -o DIR`: every entry's OpenCL program and host plan.
pub(crate) fn build(args: &crate::BuildArgs) -> anyhow::Result<u8> {
    let (db, files) = crate::workspace::load(std::slice::from_ref(&args.file))?;
    let Some(loaded) = files.first() else { anyhow::bail!("`{}` is not a .weft file", args.file) };
    let program = match crate::run::core_program(&db, loaded.file) {
        Ok(p) => p,
        Err(message) => {
            crate::run::print_error(&message);
            return Ok(1);
        }
    };
    let entries: Vec<FnId> = match &args.entry {
        Some(name) => match crate::run::choose_entry(&program, Some(name)) {
            Ok(e) => vec![e],
            Err(message) => {
                crate::run::print_error(&message);
                return Ok(2);
            }
        },
        None => program.entries.clone(),
    };
    std::fs::create_dir_all(&args.out)?;
    let options = weft_lower::Options {
        checks: !args.unchecked,
        target: args.opencl.target(),
        ..crate::environment::lower_options()
    };
    let mut failed = false;
    for entry in entries {
        let name = program.functions[entry].name.to_string();
        match compile(&db, &program, entry, options) {
            Ok(compiled) => {
                let dir = std::path::Path::new(&args.out);
                std::fs::write(dir.join(format!("{name}.cl")), &compiled.plan.source)?;
                std::fs::write(dir.join(format!("{name}.plan.json")), compiled.plan.to_json())?;
                crate::dump::print_status(&format!(
                    "built `{name}`: {} kernels -> {}/{name}.plan.json",
                    compiled.kernels.len(),
                    args.out
                ));
            }
            Err(message) => {
                crate::run::print_error(&format!("entry `{name}`: {message}"));
                failed = true;
            }
        }
    }
    Ok(u8::from(failed))
}
