//! The runtime's error type: every way running a plan can fail, each a message for
//! the user, and the `weft-runner` exit code it maps to (docs/runtime.md).

/// Why a run failed.
///
/// Two classes (STYLE.md §6): run-time errors of the program and bad inputs
/// ([`RunError::Program`], [`RunError::Input`], exit code 1), and environment errors
/// (everything else, exit code 2). A plan that contradicts itself is a compiler bug,
/// reported as [`RunError::InvalidPlan`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A failing check of the program: a kernel's bounds or division check, a host
    /// `Check` step (size errors), or a division by zero in host size arithmetic.
    /// The message is the plan's rendered error site, `position: message`.
    #[error("{0}")]
    Program(String),
    /// Inputs that do not fit the entry: their number, element types, ranks or sizes.
    #[error("{0}")]
    Input(String),
    /// No OpenCL platform (no ICD installed, or none that loads).
    #[error("{0}")]
    NoPlatform(String),
    /// A bad device specification, or no device that fits it.
    #[error("{0}")]
    Device(String),
    /// The plan's OpenCL program failed to build.
    #[error("{}", render_build(device, log, excerpt.as_deref()))]
    Build {
        /// The device the program was built for.
        device: String,
        /// The compiler's build log, in full.
        log: String,
        /// The source lines around the first line the log names, if it names one.
        excerpt: Option<String>,
    },
    /// An allocation the device could not satisfy.
    #[error("{}", render_out_of_memory(*requested_bytes, what, *max_alloc_bytes))]
    OutOfMemory {
        /// Bytes asked for.
        requested_bytes: u64,
        /// What the memory was for (`an input`, `a buffer`).
        what: String,
        /// The device's largest single allocation, when known.
        max_alloc_bytes: Option<u64>,
    },
    /// Any other failing OpenCL call.
    #[error("OpenCL error while {action}: {message}")]
    OpenCl { action: String, message: String },
    /// The plan contradicts itself or the program (an internal compiler error).
    #[error("internal compiler error: invalid host plan: {0}")]
    InvalidPlan(String),
}

impl RunError {
    /// `weft-runner`'s exit code for this error: 1 for the program's run-time errors
    /// and bad inputs, 2 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Program(_) | RunError::Input(_) => 1,
            RunError::NoPlatform(_)
            | RunError::Device(_)
            | RunError::Build { .. }
            | RunError::OutOfMemory { .. }
            | RunError::OpenCl { .. }
            | RunError::InvalidPlan(_) => 2,
        }
    }

    /// Whether this is a run-time error of the program or a bad input (exit code 1).
    pub fn is_program_error(&self) -> bool {
        self.exit_code() == 1
    }

    pub(crate) fn opencl(action: impl Into<String>, error: impl std::fmt::Display) -> RunError {
        RunError::OpenCl { action: action.into(), message: error.to_string() }
    }
}

fn render_build(device: &str, log: &str, excerpt: Option<&str>) -> String {
    let mut out = format!("cannot build the OpenCL program for {device}; build log:\n");
    let log = log.trim_end();
    out.push_str(if log.is_empty() { "(empty)" } else { log });
    if let Some(excerpt) = excerpt {
        out.push_str("\nsource:\n");
        out.push_str(excerpt.trim_end());
    }
    out
}

fn render_out_of_memory(requested: u64, what: &str, max_alloc: Option<u64>) -> String {
    let mut out =
        format!("out of device memory: cannot allocate {} for {what}", human_bytes(requested));
    if let Some(max) = max_alloc {
        out.push_str(&format!(" (the device's largest allocation is {})", human_bytes(max)));
    }
    out
}

/// `123 bytes`, `1.5 MiB`, with the exact count for large sizes.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if size < 1024.0 {
            break;
        }
        size /= 1024.0;
        unit = next;
    }
    format!("{size:.1} {unit} ({bytes} bytes)")
}
