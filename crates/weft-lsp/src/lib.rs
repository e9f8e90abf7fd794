//! Weft's language server: the tower-lsp-server binding over `weft-ide`. The only
//! crate that knows LSP and JSON (ARCHITECTURE.md, "LSP concurrency").
//!
//! Threads and ordering:
//! - One *owner* thread ([`main_loop`]) owns the `AnalysisHost` and the open
//!   documents' texts, and applies edits in arrival order. `didOpen`, `didChange`
//!   and `didClose` push into its channel synchronously, when tower calls the
//!   handler (before any `.await`), so concurrent handlers cannot reorder edits.
//! - Reads go through the same channel: the owner makes a database snapshot and
//!   hands it to a [`pool`] of large-stack threads; the owner never keeps a
//!   snapshot. Handlers return owned data. An edit cancels running reads (salsa
//!   unwinds with `Cancelled`); they are answered with ContentModified (-32801).
//! - Diagnostics are published after edits settle (a short debounce) for every
//!   open document, the edited one first.
//! - "Run" ([`runner`]) spawns `weft run` with a time limit, holding no snapshot;
//!   "Run on GPU" compiles the entry's host plan in a read (a snapshot), then, with the
//!   snapshot dropped, spawns `weft-runner` on a blocking thread: the server never
//!   links OpenCL, and a hung kernel only costs the runner its time limit.
//! - After `exit` the process ends at once.

mod from_proto;
mod handlers;
mod later_diagnostics;
mod main_loop;
mod pool;
mod project;
mod runner;
mod server;
#[cfg(test)]
mod tests;
mod to_proto;
mod transport;

pub use project::{PROJECT_FILE, ProjectConfig, find_project_config};
pub use transport::serve_guarded;

/// Settings, from `initializationOptions` (see `docs/lsp.md`).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Quiet time after an edit before diagnostics are computed and published.
    pub(crate) diagnostics_delay: std::time::Duration,
    /// Time limit of a "Run" of an entry.
    pub(crate) run_timeout: std::time::Duration,
    /// Time limit of a "Run on GPU".
    pub(crate) gpu_run_timeout: std::time::Duration,
    /// Time limit of a "Profile".
    pub(crate) profile_timeout: std::time::Duration,
    /// The `weft-runner` executable (the `runnerPath` setting); `None`:
    /// [`Config::runner_from_environment`].
    pub(crate) runner_path: Option<std::path::PathBuf>,
    /// The `weft-runner` the server's starter named (`weft lsp` reads `WEFT_RUNNER`);
    /// `None`: the one beside the server, else on PATH.
    pub(crate) runner_from_environment: Option<std::path::PathBuf>,
    /// The OpenCL device of "Run on GPU" (`gpu`, `cpu`, `P:D`); `None`: the runner's
    /// default (`$WEFT_DEVICE`, else the first GPU, else the first CPU device).
    pub(crate) device: Option<String>,
    /// The committed device profile of predictions and performance diagnostics, by
    /// name (`nvidia-h100`, `pocl-cpu`, or a device name); `None`: the compiler's default.
    pub(crate) cost_profile: Option<String>,
    /// Diagnostic codes not reported (`uncoalesced-access`, ...).
    pub(crate) allow: Vec<String>,
    /// Whether performance diagnostics are computed and published.
    pub(crate) perf_diagnostics: bool,
    /// Hovers with the whole derivation (`hoverDetail: "full"`) instead of the summary.
    pub(crate) full_hovers: bool,
    /// The sections hovers and the detail view show (`hoverSections`).
    pub(crate) hover_sections: Vec<weft_ide::HoverSection>,
    /// Every size of an entry without test inputs, for predictions (`predictionSize`).
    pub(crate) prediction_size: Option<i64>,
    /// The `weft.json` whose `costProfile` set `cost_profile` (`None`: the setting).
    pub(crate) cost_profile_from: Option<std::path::PathBuf>,
    /// The device runs use, as `weft-runner devices` answered at start, or why there is
    /// none; `None` until it has answered.
    pub(crate) detected: Option<Result<weft_cost::profile::ListedDevice, String>>,
    /// The machine's device of the other kind (its CPU beside its GPU), found with it.
    pub(crate) other_device: Option<weft_cost::profile::ListedDevice>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            diagnostics_delay: std::time::Duration::from_millis(25),
            run_timeout: std::time::Duration::from_secs(10),
            gpu_run_timeout: std::time::Duration::from_secs(30),
            profile_timeout: std::time::Duration::from_secs(60),
            runner_path: None,
            runner_from_environment: None,
            device: None,
            cost_profile: None,
            allow: Vec::new(),
            perf_diagnostics: true,
            full_hovers: false,
            hover_sections: weft_ide::HoverSection::ALL.to_vec(),
            prediction_size: None,
            cost_profile_from: None,
            detected: None,
            other_device: None,
        }
    }
}

impl Config {
    pub(crate) fn update(&mut self, options: &serde_json::Value) {
        if let Some(ms) = options.get("diagnosticsDelayMs").and_then(serde_json::Value::as_u64) {
            self.diagnostics_delay = std::time::Duration::from_millis(ms);
        }
        if let Some(secs) = options.get("runTimeoutSecs").and_then(serde_json::Value::as_u64) {
            self.run_timeout = std::time::Duration::from_secs(secs);
        }
        if let Some(secs) = options.get("gpuRunTimeoutSecs").and_then(serde_json::Value::as_u64) {
            self.gpu_run_timeout = std::time::Duration::from_secs(secs);
        }
        if let Some(secs) = options.get("profileTimeoutSecs").and_then(serde_json::Value::as_u64) {
            self.profile_timeout = std::time::Duration::from_secs(secs);
        }
        if let Some(path) = options.get("runnerPath").and_then(serde_json::Value::as_str) {
            self.runner_path = (!path.is_empty()).then(|| std::path::PathBuf::from(path));
        }
        if let Some(device) = options.get("device").and_then(serde_json::Value::as_str) {
            self.device = (!device.is_empty()).then(|| device.to_owned());
        }
        if let Some(name) = options.get("costProfile").and_then(serde_json::Value::as_str) {
            self.cost_profile = (!name.is_empty()).then(|| name.to_owned());
        }
        if let Some(codes) = options.get("allow").and_then(serde_json::Value::as_array) {
            self.allow =
                codes.iter().filter_map(serde_json::Value::as_str).map(str::to_owned).collect();
        }
        if let Some(on) = options.get("perfDiagnostics").and_then(serde_json::Value::as_bool) {
            self.perf_diagnostics = on;
        }
        if let Some(detail) = options.get("hoverDetail").and_then(serde_json::Value::as_str) {
            self.full_hovers = detail == "full";
        }
        if let Some(size) = options.get("predictionSize") {
            self.prediction_size = size.as_i64().filter(|&n| n > 0);
        }
        // Names not known are skipped: a newer client may know more sections.
        if let Some(sections) = options.get("hoverSections").and_then(serde_json::Value::as_array) {
            self.hover_sections = sections
                .iter()
                .filter_map(serde_json::Value::as_str)
                .filter_map(weft_ide::HoverSection::from_name)
                .collect();
        }
    }

    /// The `weft-runner` to start.
    pub(crate) fn runner(&self) -> std::path::PathBuf {
        weft_process::runner_path(
            self.runner_path.as_deref().or(self.runner_from_environment.as_deref()),
        )
    }

    /// The settings of `weft-ide`'s cost features, with the profile [`Config::profile`]
    /// chooses.
    pub(crate) fn cost_config(&self) -> weft_ide::CostConfig {
        let (profile, profile_reason) = self.profile(true);
        weft_ide::CostConfig {
            profile,
            profile_reason,
            allow: self.allow.clone(),
            full_hovers: self.full_hovers,
            hover_sections: self.hover_sections.clone(),
            prediction_size: self.prediction_size,
            alternative: self.alternative(profile),
        }
    }

    /// The committed profile of the machine's other kind of device than `profile`'s,
    /// when the server found one with a profile.
    fn alternative(
        &self,
        profile: &weft_cost::profile::DeviceProfile,
    ) -> Option<&'static weft_cost::profile::DeviceProfile> {
        let other = weft_cost::profile::default_profile_for(&self.other_device.as_ref()?.query())?;
        (other.device.kind != profile.device.kind).then_some(other)
    }

    /// The settings of performance diagnostics: those of [`Config::cost_config`] with the
    /// profile `weft check` uses (the `costProfile` setting or a project's `weft.json`,
    /// else the compiler's default), never the device found at start: the editor and CI
    /// report the same warnings.
    pub(crate) fn diagnostics_cost_config(&self) -> weft_ide::CostConfig {
        let (profile, profile_reason) = self.profile(false);
        weft_ide::CostConfig { profile, profile_reason, ..self.cost_config() }
    }

    /// The OpenCL device "Run on GPU" asks for: the `device` setting, else `WEFT_DEVICE`
    /// (which the runner reads too), else none (the runner's default).
    pub(crate) fn device_spec(&self) -> Option<String> {
        self.device.clone().or_else(|| std::env::var("WEFT_DEVICE").ok().filter(|d| !d.is_empty()))
    }

    /// The profile predictions use and why: the `costProfile` setting (or a project's
    /// `weft.json`), else (with `device`) the committed profile of the device runs use
    /// (as `weft-runner devices` said at start), else the compiler's default, saying why.
    fn profile(&self, device: bool) -> (&'static weft_cost::profile::DeviceProfile, String) {
        let default = weft_ide::CostConfig::default().profile;
        if let Some(name) = &self.cost_profile {
            let from = match &self.cost_profile_from {
                Some(path) => format!("`costProfile` in `{}`", path.display()),
                None => "the `costProfile` setting".to_owned(),
            };
            return match weft_cost::profile::builtin_profile_named(name) {
                Some(profile) => (profile, from),
                None => (
                    default,
                    format!("the default profile: no committed profile is named `{name}` ({from})"),
                ),
            };
        }
        if !device {
            return (default, "the default profile, as `weft check` uses".to_owned());
        }
        match &self.detected {
            Some(Ok(device)) => match weft_cost::profile::default_profile_for(&device.query()) {
                Some(profile) if profile.device.name.trim() == device.name.trim() => {
                    (profile, format!("the device \"Run on GPU\" uses, {}", device.id))
                }
                Some(profile) => (
                    profile,
                    format!(
                        "the committed profile nearest `{}`, the device \"Run on GPU\" uses",
                        device.name.trim()
                    ),
                ),
                None => (
                    default,
                    format!(
                        "the default profile: none is committed for `{}`, the device \"Run on \
                         GPU\" uses (`weft calibrate` measures one)",
                        device.name.trim()
                    ),
                ),
            },
            Some(Err(why)) => (default, format!("the default profile: {why}")),
            None => (default, "the default profile: the device is not known yet".to_owned()),
        }
    }
}

/// Serves LSP on stdin/stdout until `exit`, then ends the process: exit code 0 if
/// `shutdown` came first, else 1 (the LSP specification). `runner`: the `weft-runner`
/// to use when the client's `runnerPath` setting names none (`weft lsp` passes
/// `WEFT_RUNNER`).
pub fn run_stdio(runner: Option<std::path::PathBuf>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("weft-lsp-io")
        .enable_all()
        .build()?;
    let shut_down =
        runtime.block_on(transport::serve_guarded(tokio::io::stdin(), tokio::io::stdout(), runner));
    // Blocking-pool and worker threads may still run; do not wait for them.
    std::process::exit(if shut_down { 0 } else { 1 });
}

#[cfg(test)]
mod config_tests {
    #[test]
    fn cost_settings_select_a_committed_profile_and_silence_codes() {
        let mut config = super::Config::default();
        assert_eq!(config.cost_config().profile.device.name, "NVIDIA H100 80GB HBM3");
        config.update(&serde_json::json!({
            "costProfile": "pocl-cpu",
            "allow": ["bank-conflict"],
            "perfDiagnostics": false,
        }));
        let costs = config.cost_config();
        assert_eq!(costs.profile.device.name, "pthread-haswell-AMD EPYC");
        // Without a profile, the device runs are made on decides, once the runner said
        // which it is.
        let mut on_cpu = super::Config::default();
        on_cpu.update(&serde_json::json!({ "device": "cpu" }));
        assert_eq!(on_cpu.cost_config().profile.device.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(
            on_cpu.cost_config().profile_reason,
            "the default profile: the device is not known yet"
        );
        on_cpu.detected = Some(Ok(weft_cost::profile::ListedDevice {
            id: "0:0".to_owned(),
            name: "pthread-skylake-avx512-AMD EPYC".to_owned(),
            vendor: "AuthenticAMD".to_owned(),
            platform: "Portable Computing Language".to_owned(),
            kind: "cpu".to_owned(),
        }));
        let costs_on_cpu = on_cpu.cost_config();
        assert_eq!(costs_on_cpu.profile.device.name, "pthread-haswell-AMD EPYC");
        // Performance diagnostics keep `weft check`'s profile: the editor and CI agree.
        assert_eq!(on_cpu.diagnostics_cost_config().profile.device.name, "NVIDIA H100 80GB HBM3");
        assert_eq!(
            costs_on_cpu.profile_reason,
            "the committed profile nearest `pthread-skylake-avx512-AMD EPYC`, the device \"Run on GPU\" uses"
        );
        // A GPU found beside the CPU: predictions place entries' runs between the two.
        assert!(costs_on_cpu.alternative.is_none());
        on_cpu.other_device = Some(weft_cost::profile::ListedDevice {
            id: "1:0".to_owned(),
            name: "NVIDIA H200".to_owned(),
            vendor: "NVIDIA Corporation".to_owned(),
            platform: "NVIDIA CUDA".to_owned(),
            kind: "gpu".to_owned(),
        });
        let alternative = on_cpu.cost_config().alternative.map(|p| p.device.name.as_str());
        assert_eq!(alternative, Some("NVIDIA H200"));
        on_cpu.detected = Some(Err("`weft-runner devices` found no OpenCL device".to_owned()));
        on_cpu.other_device = None;
        assert_eq!(
            on_cpu.cost_config().profile_reason,
            "the default profile: `weft-runner devices` found no OpenCL device"
        );
        assert_eq!(costs.profile_reason, "the `costProfile` setting");
        assert_eq!(costs.allow, ["bank-conflict"]);
        assert!(!config.perf_diagnostics);
        assert_eq!(costs.hover_sections, weft_ide::HoverSection::ALL);
        config.update(&serde_json::json!({ "hoverSections": ["kernels", "predictions", "new"] }));
        let sections = config.cost_config().hover_sections;
        assert_eq!(
            sections,
            [weft_ide::HoverSection::Kernels, weft_ide::HoverSection::Predictions]
        );
    }

    #[test]
    fn the_runner_setting_comes_before_the_environments() {
        let mut config = super::Config {
            runner_from_environment: Some("/env/weft-runner".into()),
            ..super::Config::default()
        };
        assert_eq!(config.runner(), std::path::Path::new("/env/weft-runner"));
        config.update(&serde_json::json!({ "runnerPath": "/setting/weft-runner" }));
        assert_eq!(config.runner(), std::path::Path::new("/setting/weft-runner"));
        // An empty setting clears it: the environment's comes back.
        config.update(&serde_json::json!({ "runnerPath": "" }));
        assert_eq!(config.runner(), std::path::Path::new("/env/weft-runner"));
    }
}
