//! `weft profile FILE`: the cost-semantics profiler (digest 002, §3.10; docs/costs.md).
//!
//! Runs the entry in the instrumented reference interpreter on the inputs (as for
//! `weft run`), places the cost graph in worlds with the entry's compiled OpenCL plan
//! (kernels become device boxes, inputs and outputs transfers), and reports work, span,
//! the simulated time of a greedy schedule on P processors, and the peak space per
//! world. Writes `graph.dot`, `graph.svg` (with Graphviz `dot`) and `space.svg` into
//! the output directory.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use weft_cost::graph::World;
use weft_cost::profiler::{CostParams, KernelInfo, Profile, profile};
use weft_cost::schedule::Policy;
use weft_cost::space::{Peak, bytes};

use crate::run::{choose_entry, core_program, print_error};
use crate::workspace::load;

/// The largest graph written as DOT (and rendered as SVG).
const DOT_LIMIT: usize = 20_000;

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SchedulePolicy {
    /// Depth-first (1DF) priority.
    #[default]
    Df,
    /// Breadth-first (first ready, first served).
    Bf,
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
What it measures (docs/costs.md, \"The profiler\"):
  The entry runs in the reference interpreter, which records a cost graph: one edge per
  core statement (unit costs), maps as fork/join trees (4(n-1) unit edges on the host,
  one n-ary fork/join on the device), reductions with a log-depth combining edge.
  Statements computed by a kernel of the compiled plan go into that kernel's device box
  (time = max(S_D, ceil(W_D/H)) + launch per kernel); array inputs are uploaded and array
  results read back (transfer edges of latency + ceil(bytes / bytes-per-unit)). Parallel
  constructs of more than --collapse iterations become at most that many summary edges,
  and every construct after a graph reaches --node-budget nodes becomes one (work and
  span stay exact). If the entry does not compile to OpenCL, everything is costed on
  the host world.

Report: work W, span S, simulated time T_P of a greedy list schedule on P processors
  (plus one device queue and one bus), Brent's bounds, peak live bytes per world with the
  time and the allocation that reached it, kernels and transfers.

Files (in --out, default DIR/STEM.ENTRY.profile/ next to the source):
  graph.dot   the cost graph (device boxes are clusters); omitted over 20000 nodes
  graph.svg   graph.dot rendered by Graphviz `dot -Tsvg` (install graphviz; skipped with a
              message when `dot` is missing)
  space.svg   live bytes over the schedule's time, one line per world")]
pub(crate) struct ProfileArgs {
    /// The file that holds the entry point.
    file: String,
    /// The entry point (default: the only entry, else `main`).
    #[arg(long)]
    entry: Option<String>,
    /// Read the inputs from `.npy` files, one per value, in parameter order.
    #[arg(long = "input", value_name = "X.npy")]
    inputs: Vec<String>,
    /// Draw random inputs, one spec per value (`[1000]f32`, `i64 in 1..10`).
    #[arg(long = "random", value_name = "SPEC")]
    random: Vec<String>,
    /// Seed of `--random`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// P: host processors of the simulated schedule (default: this machine's cores).
    #[arg(long, value_name = "P")]
    processors: Option<usize>,
    /// Scheduling policy.
    #[arg(long, value_enum, default_value_t = SchedulePolicy::Df)]
    schedule: SchedulePolicy,
    /// H: work-items the device runs at once.
    #[arg(long, value_name = "H", default_value_t = 1 << 18)]
    device_threads: u64,
    /// Cost of one kernel launch (cost units).
    #[arg(long, default_value_t = 0)]
    launch: u64,
    /// Fixed cost of one transfer (cost units).
    #[arg(long, default_value_t = 0)]
    transfer_latency: u64,
    /// Bytes a transfer moves per cost unit.
    #[arg(long, default_value_t = 16)]
    bytes_per_unit: u64,
    /// Parallel constructs of more iterations are summarised into this many blocks.
    #[arg(long, default_value_t = 64)]
    collapse: usize,
    /// Once a graph (host, or a device box's) has this many nodes, further parallel
    /// constructs are summarised into one edge each (work and span stay exact).
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    node_budget: usize,
    /// Cost the entry on the host world only (ignore the OpenCL plan).
    #[arg(long)]
    host_only: bool,
    /// Output directory for graph.dot, graph.svg and space.svg.
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
}

/// The default output directory: `STEM.ENTRY.profile` beside the source.
fn default_out(file: &str, entry: &str) -> PathBuf {
    let path = Path::new(file);
    let stem = path.file_stem().map_or_else(|| "weft".into(), |s| s.to_string_lossy());
    path.with_file_name(format!("{stem}.{entry}.profile"))
}

pub(crate) fn run(args: &ProfileArgs) -> anyhow::Result<u8> {
    let (db, files) = load(std::slice::from_ref(&args.file))?;
    let Some(loaded) = files.first() else { bail!("`{}` is not a .weft file", args.file) };
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
    let inputs = crate::run::read_inputs(&args.inputs, &args.random, args.seed)?;
    let mut notes = Vec::new();
    let compiled = if args.host_only {
        notes.push("--host-only: costed on the host world".to_owned());
        None
    } else {
        match crate::opencl::compile(&db, &program, entry, crate::environment::lower_options()) {
            Ok(c) => Some(c),
            Err(message) => {
                notes.push(format!(
                    "the entry does not compile to OpenCL ({message}); costed on the host world"
                ));
                None
            }
        }
    };
    let kernels: Vec<KernelInfo> = compiled
        .as_ref()
        .map(|c| {
            c.kernels
                .iter()
                .map(|k| KernelInfo {
                    name: k.name.clone(),
                    origins: k.origins.iter().map(|(o, _)| o.clone()).collect(),
                })
                .collect()
        })
        .unwrap_or_default();
    let processors = args.processors.unwrap_or_else(|| {
        std::thread::available_parallelism().map(std::num::NonZero::get).unwrap_or(1)
    });
    if processors == 0 {
        bail!("`--processors` must be at least 1");
    }
    let params = CostParams {
        processors,
        device_threads: args.device_threads.max(1),
        launch: args.launch,
        transfer_latency: args.transfer_latency,
        bytes_per_unit: args.bytes_per_unit.max(1),
        collapse: args.collapse.max(1),
        node_budget: args.node_budget,
        policy: match args.schedule {
            SchedulePolicy::Df => Policy::DepthFirst,
            SchedulePolicy::Bf => Policy::BreadthFirst,
        },
    };
    let placement = compiled.as_ref().map(|c| (&c.plan, kernels.as_slice()));
    let prof = match profile(&program, entry, inputs, placement, &params) {
        Ok(p) => p,
        Err(error) => {
            print_error(&weft_core::render_error(&db, &error));
            return Ok(1);
        }
    };
    let entry_name = program.functions[entry].name.to_string();
    let out_dir =
        args.out.as_ref().map_or_else(|| default_out(&args.file, &entry_name), PathBuf::from);
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create `{}`", out_dir.display()))?;
    let title = format!("{} `{}` (P = {})", args.file, entry_name, processors);
    let files = write_files(&prof, &out_dir, &title, &mut notes)?;
    let mut out = std::io::stdout().lock();
    out.write_all(report(&prof, &args.file, &notes, &files).as_bytes())?;
    Ok(0)
}

/// Writes the files; returns the paths written.
fn write_files(
    prof: &Profile,
    dir: &Path,
    title: &str,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let n_nodes = prof.graph.nodes.len()
        + prof.graph.boxes.iter().map(|b| b.graph.nodes.len()).sum::<usize>();
    // The summary, read at a glance (what the editors open), and the whole graph.
    let summary = weft_cost::dot::to_summary_dot(&prof.graph, title);
    write_graph(dir, "summary", &summary, &mut written, notes)?;
    if n_nodes <= DOT_LIMIT {
        let dot = weft_cost::dot::to_dot(&prof.graph, title);
        write_graph(dir, "graph", &dot, &mut written, notes)?;
    } else {
        notes.push(format!(
            "the graph has {n_nodes} nodes, over the DOT limit of {DOT_LIMIT}: graph.dot not written (lower --collapse)"
        ));
    }
    let space_path = dir.join("space.svg");
    let svg =
        weft_cost::space::svg(&prof.space, prof.schedule.makespan, &format!("space: {title}"));
    std::fs::write(&space_path, svg)
        .with_context(|| format!("cannot write `{}`", space_path.display()))?;
    written.push(space_path);
    Ok(written)
}

/// How long Graphviz may take to draw a graph: a large device box as a cluster can take
/// it many minutes (mandelbrot's 6,000 steps did not finish in 12), and the editor's
/// "Profile" waits for this command.
const DRAW_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Writes `NAME.dot` and renders `NAME.svg` with Graphviz `dot` within [`DRAW_LIMIT`]
/// (a note when it cannot).
#[expect(clippy::disallowed_methods, reason = "renders NAME.svg with Graphviz `dot`")]
fn write_graph(
    dir: &Path,
    name: &str,
    dot: &str,
    written: &mut Vec<PathBuf>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let dot_path = dir.join(format!("{name}.dot"));
    std::fs::write(&dot_path, dot)
        .with_context(|| format!("cannot write `{}`", dot_path.display()))?;
    written.push(dot_path.clone());
    let svg_path = dir.join(format!("{name}.svg"));
    let mut command = std::process::Command::new("dot");
    command.arg("-Tsvg").arg(&dot_path).arg("-o").arg(&svg_path);
    match weft_process::spawn_with_timeout(&mut command, weft_process::Spawn::limited(DRAW_LIMIT)) {
        Ok(done) if done.ended == weft_process::Ended::Exited(0) => written.push(svg_path),
        Ok(done) if done.ended == weft_process::Ended::TimedOut => {
            let _ = std::fs::remove_file(&svg_path);
            notes.push(format!(
                "Graphviz `dot` took over {} s to draw {name}.dot: {name}.svg not written \
                 ({name}.dot is there; lower --collapse or --node-budget for a smaller graph)",
                DRAW_LIMIT.as_secs()
            ));
        }
        Ok(done) => notes.push(format!(
            "Graphviz `dot` failed on {name}.dot ({}): {}",
            done.ended,
            done.stderr_text().trim()
        )),
        Err(_) => notes.push(format!(
            "Graphviz `dot` is not installed: {name}.svg not written (install `graphviz`; {name}.dot is there)"
        )),
    }
    Ok(())
}

fn peak_line(prof: &Profile, peak: &Peak) -> String {
    if peak.bytes == 0 {
        return "0 B".to_owned();
    }
    let what = peak.region.map_or_else(String::new, |r| {
        let region = &prof.graph.regions[r as usize];
        format!(", reached by {} ({})", region.name, bytes(region.bytes))
    });
    format!("{} ({} B) at t = {}{what}", bytes(peak.bytes), peak.bytes, peak.time)
}

/// The text report.
pub(crate) fn report(prof: &Profile, file: &str, notes: &[String], files: &[PathBuf]) -> String {
    use std::fmt::Write as _;
    let p = &prof.params;
    let mut s = String::new();
    let _ = writeln!(s, "profile of `{}` in {file}", prof.entry);
    for note in notes {
        let _ = writeln!(s, "  note: {note}");
    }
    let _ = writeln!(
        s,
        "  model: P = {} processors, {} schedule, H = {} device threads, launch {}, transfer {} + bytes/{}",
        p.processors,
        match p.policy {
            Policy::DepthFirst => "greedy depth-first",
            Policy::BreadthFirst => "greedy breadth-first",
        },
        p.device_threads,
        p.launch,
        p.transfer_latency,
        p.bytes_per_unit
    );
    let _ = writeln!(
        s,
        "  work W      {:>12}   (host {}, device {}, transfers {})",
        prof.work, prof.host_work, prof.device_work, prof.transfer_work
    );
    let _ = writeln!(s, "  span S      {:>12}", prof.span);
    let bounds = if prof.graph.boxes.is_empty() && prof.transfer_work == 0 {
        format!(
            "; W/P = {}, W/P + S = {}",
            prof.work.div_ceil(p.processors as u64),
            prof.work / p.processors as u64 + prof.span
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "  time T_{:<3} {:>12}   ({} schedule steps{bounds})",
        p.processors, prof.schedule.makespan, prof.schedule.steps,
    );
    let _ = writeln!(s, "  peak space  host   {}", peak_line(prof, &prof.space.host));
    let _ = writeln!(s, "              device {}", peak_line(prof, &prof.space.device));
    let _ =
        writeln!(s, "              both   {} ({} B)", bytes(prof.space.total), prof.space.total);
    let _ = writeln!(
        s,
        "  kernels     {} launches of {} distinct kernels in {} device boxes",
        prof.kernel_launches,
        prof.distinct_kernels,
        prof.graph.boxes.len()
    );
    let _ = writeln!(
        s,
        "  transfers   {} to device ({} B), {} to host ({} B)",
        prof.transfers_to_device.0,
        prof.transfers_to_device.1,
        prof.transfers_to_host.0,
        prof.transfers_to_host.1
    );
    let inner: usize = prof.graph.boxes.iter().map(|b| b.graph.nodes.len()).sum();
    let _ = writeln!(
        s,
        "  graph       {} host nodes, {} edges, {} device-box nodes; {} parallel constructs summarised",
        prof.graph.nodes.len(),
        prof.graph.edges.len(),
        inner,
        prof.collapsed
    );
    let regions = prof.graph.regions.iter().filter(|r| r.world == World::Device).count();
    let _ = writeln!(s, "  regions     {} ({} on the device)", prof.graph.regions.len(), regions);
    for f in files {
        let _ = writeln!(s, "  wrote       {}", f.display());
    }
    s
}
