//! The `weft` command line (ARCHITECTURE.md, "Command line").
//!
//! Every command runs on a thread with a large stack (deeply nested programs recurse
//! deeply in the parser and checker). Exit codes: 0 success, 1 errors in the program,
//! 2 usage or I/O problems.

mod apl;
mod bench;
mod calibrate;
mod check;
mod dump;
mod environment;
mod fmt;
mod opencl;
mod placement;
mod predict;
mod profile;
mod run;
mod test;
mod test_opencl;
mod tune;
mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// glibc's allocator takes a third of checking time; mimalloc halves that.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Weft: a functional array language for GPUs.
#[derive(Parser, Debug)]
// `--tuning` and `--no-tuning` may come before or after the
// subcommand; `--check` stands alone (checked in `run`).
#[command(name = "weft", version, about, long_about = None)]
struct Cli {
    /// Check PATHS like `weft check` (the language server's headless mode, for CI).
    #[arg(long = "check", value_name = "PATHS", num_args = 1..)]
    check_paths: Option<Vec<String>>,

    /// The thresholds and parameters of a tuning file written by `weft tune`, instead
    /// of the committed tuning file of the device beside each source
    /// (`DIR/weft-tuning/DEVICE.json`, used by default); others take the rule for the
    /// device (docs/middle.md, "Thresholds and tuning").
    #[arg(long = "tuning", value_name = "FILE", global = true)]
    tuning: Option<String>,

    /// Ignore the committed tuning files: every threshold takes the device's rule and
    /// every parameter its default (to see what tuning gives).
    #[arg(long = "no-tuning", global = true, conflicts_with = "tuning")]
    no_tuning: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Report syntax, name, type, size and level errors in files or directories.
    ///
    /// Directories are searched for `.weft` files. Exits with 0 when there are no
    /// errors, 1 when there are, and 2 for usage or I/O problems.
    Check(CheckArgs),
    /// Compile a file's entries to OpenCL: `ENTRY.cl` and the host plan `ENTRY.plan.json`.
    Build(BuildArgs),
    /// Time entries on an OpenCL device: median and spread of the kernel time, GB/s.
    ///
    /// Entries are benchmarked on the inputs of their `-- bench: SPECS [flops=EXPR]`
    /// comment line (or `--entry NAME --random SPEC ...`); others are skipped.
    Bench(bench::BenchArgs),
    /// Measure a device profile (JSON) with micro-benchmarks, for the cost model.
    #[command(long_about = calibrate::LONG_ABOUT)]
    Calibrate(calibrate::CalibrateArgs),
    /// Print an intermediate representation of a file.
    Dump(DumpArgs),
    /// Format `.weft` files in place (files with syntax errors are left alone).
    Fmt(FmtArgs),
    /// Run the language server on stdin/stdout.
    Lsp,
    /// Profile an entry with the cost semantics: work, span, time on P processors,
    /// peak space per world; writes the cost graph (DOT, SVG) and a space plot.
    Profile(profile::ProfileArgs),
    /// Run an entry point on inputs (textual values on stdin unless given otherwise).
    Run(run::RunArgs),
    /// Measure the middle end's thresholds on a device and write a tuning file.
    ///
    /// For every entry with a `-- bench:` line, each threshold that chooses between
    /// the entry's versions is tried at "always the first version" and "never", the
    /// others held, keeping the faster (`weft bench --middle-end` measures each
    /// trial). The file is read by `--tuning FILE` (docs/middle.md).
    Tune(tune::TuneArgs),
    /// Run the test blocks of every entry; ends with `N passed, N failed`.
    Test(test::TestArgs),
}

#[derive(clap::Args, Debug, Default)]
struct CheckArgs {
    /// Output format: `human` (like rustc) or `json` (one object per line).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Treat warnings as errors (exit 1 if there are any).
    #[arg(long)]
    deny_warnings: bool,
    /// Also report performance diagnostics (`uncoalesced-access`, `bank-conflict`,
    /// `local-memory-limit`): compiles every entry with the OpenCL back end. Without it,
    /// the project's `weft.json` decides (`perfDiagnostics`), as in the editor.
    #[arg(long)]
    perf: bool,
    /// Do not report warnings or information with this code (repeatable).
    #[arg(long, value_name = "CODE")]
    allow: Vec<String>,
    /// The committed device profile of `--perf` (`nvidia-h100`, `pocl-cpu`; default:
    /// the compiler's, the H100's).
    #[arg(long, value_name = "NAME")]
    cost_profile: Option<String>,
    /// Files or directories to check.
    #[arg(required = true, value_name = "PATHS")]
    paths: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Format {
    #[default]
    Human,
    Json,
}

#[derive(clap::Args, Debug)]
struct DumpArgs {
    /// The stage to print (docs/cli.md, "weft dump").
    #[arg(long, value_enum)]
    ir: Stage,
    /// The OpenCL C version to target: `1.2` clones functions per address space,
    /// `2.0` uses the generic address space instead where it can.
    #[arg(long, value_enum, default_value = "1.2")]
    opencl: OpenClVersion,
    /// The file to print.
    file: String,
}

#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// The file to compile.
    file: String,
    /// The output directory (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    out: String,
    /// Compile only this entry.
    #[arg(long)]
    entry: Option<String>,
    /// Compile without bounds, division and size checks in kernels.
    #[arg(long = "unsafe")]
    unchecked: bool,
    /// The OpenCL C version of the kernels: `1.2` clones each generated function per
    /// address space; `2.0` uses the generic address space instead.
    #[arg(long, value_enum, default_value = "1.2")]
    opencl: OpenClVersion,
}

#[derive(clap::Args, Debug)]
struct FmtArgs {
    /// Only report files that would change (exit 1 if any).
    #[arg(long)]
    check: bool,
    /// Files or directories to format.
    #[arg(required = true, value_name = "PATHS")]
    paths: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The TAIL program of an `.apl` file (typed, optimised).
    Tail,
    /// The concrete syntax tree.
    Cst,
    /// Every def's type and every binding's inferred type.
    Hir,
    /// The elaborated core IR.
    Core,
    /// The core IR after the middle end's simplification and inlining.
    Opt,
    /// The middle end's GPU IR: host code and segmented operations with their levels,
    /// versions and thresholds, as the code generator reads it (every call inlined).
    Gpu,
    /// The elaborated program's memory blocks and LMADs (what the editor's memory
    /// hover shows).
    Mem,
    /// The GPU IR with memory: every array binding's block and LMAD, and where each
    /// block lives (global, private, local, expanded per work-item).
    GpuMem,
    /// Every entry's kernels (imperative IR) and host plan.
    Kernels,
    /// Every entry's kernels in the imperative IR (DPIA-style).
    Imperative,
    /// Every pointer's address space, with the reasons.
    Aspace,
    /// Every entry's OpenCL C program and host plan.
    Opencl,
    /// Every entry's memory regions (world, size, lifetime) and transfers.
    Regions,
    /// Every kernel's and entry's static costs, symbolic in the sizes.
    Costs,
}

/// The OpenCL C version kernels are written for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpenClVersion {
    #[value(name = "1.2")]
    V12,
    #[value(name = "2.0")]
    V20,
}

impl OpenClVersion {
    pub(crate) fn target(self) -> weft_aspace::Target {
        match self {
            OpenClVersion::V12 => weft_aspace::Target::OpenCl12,
            OpenClVersion::V20 => weft_aspace::Target::OpenCl20,
        }
    }
}

fn main() -> ExitCode {
    // A `weft run` started by the language server dies with it.
    weft_process::die_with_parent();
    let cli = Cli::parse();
    let device = match &cli.command {
        // `auto` compiles for each device it chooses between (placement.rs).
        Some(Command::Run(args)) => args.device.clone().filter(|d| d != run::AUTO),
        Some(Command::Test(args)) => args.device.clone(),
        Some(Command::Bench(args)) => args.device.clone(),
        Some(Command::Tune(args)) => args.device.clone(),
        _ => None,
    };
    if let Err(error) = opencl::use_middle_end(device, cli.tuning.as_deref(), !cli.no_tuning) {
        report_error(&error);
        return ExitCode::from(2);
    }
    let code = weft_syntax::on_large_stack(move || run(cli));
    ExitCode::from(code)
}

fn run(cli: Cli) -> u8 {
    let result = match (cli.check_paths, cli.command) {
        (Some(paths), None) => check::run(&CheckArgs { paths, ..CheckArgs::default() }),
        (None, Some(Command::Check(args))) => check::run(&args),
        (None, Some(Command::Dump(args))) => dump::run(&args),
        (None, Some(Command::Build(args))) => opencl::build(&args),
        (None, Some(Command::Bench(args))) => bench::run(&args),
        (None, Some(Command::Calibrate(args))) => calibrate::run(&args),
        (None, Some(Command::Fmt(args))) => fmt::run(&args),
        (None, Some(Command::Lsp)) => weft_lsp::run_stdio(environment::runner()).map(|()| 0),
        (None, Some(Command::Run(args))) => run::run(&args),
        (None, Some(Command::Tune(args))) => tune::run(&args),
        (None, Some(Command::Profile(args))) => profile::run(&args),
        (None, Some(Command::Test(args))) => test::run(&args),
        (Some(_), Some(_)) => {
            report_error(&anyhow::anyhow!(
                "`--check PATHS` runs the checker by itself: give it no subcommand (or use `weft check PATHS`)"
            ));
            return 2;
        }
        (None, None) => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            return 2;
        }
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            report_error(&error);
            2
        }
    }
}

#[expect(clippy::print_stderr, reason = "the CLI reports environment errors on stderr")]
fn report_error(error: &anyhow::Error) {
    eprintln!("error: {error:#}");
}
