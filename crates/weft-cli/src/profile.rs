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
use weft_cost::profile::DeviceProfile;
use weft_cost::profiler::{Calibrated, CostParams, KernelInfo, Profile, profile};
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
  core statement, maps as fork/join trees (4(n-1) edges on the host, one n-ary
  fork/join on the device), reductions with a log-depth combining edge. Statements
  computed by a kernel of the compiled plan go into that kernel's device box; array
  inputs are uploaded and array results read back. Parallel constructs of more than
  --collapse iterations become at most that many summary edges, and every construct
  after a graph reaches --node-budget nodes becomes one (work and span stay exact). If
  the entry does not compile to OpenCL, everything is costed on the host world.

Weights (default: calibrated time):
  A device box takes the calibrated cost model's predicted time of one launch of each
  of its kernels on the inputs' sizes (as `weft bench --predict`), a transfer the device
  profile's latency and bandwidth, the plan's scalar read-backs their latency, and one
  unit of host work --host-unit-ns. The device profile is --device-profile (a committed
  profile's name, `nvidia-h200`, `nvidia-h100`, `pocl-cpu`, or a `weft calibrate -o
  FILE`), else the committed profile of this machine's OpenCL device, else the compiler's
  default (the H100's). The simulated time is then comparable with a measured run: the
  device work with `weft bench`'s kernel time, T_P with `weft run --timing`'s wall time.
  With --units, digest 002's abstract PRAM costs instead: unit cost per statement, a box
  time = max(S_D, ceil(W_D/H)) + launch per kernel, transfers latency + ceil(bytes /
  bytes-per-unit).

Report: work W, span S, simulated time T_P of a greedy list schedule on P processors
  (plus one device queue and one bus), Brent's bounds, peak live bytes per world with the
  time and the allocation that reached it, kernels and transfers.

Files (in --out, default DIR/STEM.ENTRY.profile/ next to the source):
  summary.dot/.svg  the graph at a glance (the steps on the critical path darker)
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
    /// The device profile whose calibrated model times device boxes and transfers: a
    /// committed profile's name (`nvidia-h200`, `nvidia-h100`, `pocl-cpu`) or a file of
    /// `weft calibrate -o` (default: this machine's device's committed profile, else the
    /// H100's). The entry is compiled for that device.
    #[arg(long, value_name = "NAME|FILE", conflicts_with = "units")]
    device_profile: Option<String>,
    /// Nanoseconds of one unit of host work (the plan's host code between kernels).
    #[arg(long, value_name = "NS", default_value_t = 1.0, conflicts_with = "units")]
    host_unit_ns: f64,
    /// Abstract PRAM unit costs (digest 002) instead of calibrated time.
    #[arg(long)]
    units: bool,
    /// H (with --units): work-items the device runs at once.
    #[arg(long, value_name = "H", default_value_t = 1 << 18, requires = "units")]
    device_threads: u64,
    /// Cost of one kernel launch (with --units).
    #[arg(long, default_value_t = 0, requires = "units")]
    launch: u64,
    /// Fixed cost of one transfer (with --units).
    #[arg(long, default_value_t = 0, requires = "units")]
    transfer_latency: u64,
    /// Bytes a transfer moves per cost unit (with --units).
    #[arg(long, default_value_t = 16, requires = "units")]
    bytes_per_unit: u64,
    /// Parallel constructs of more iterations are summarised into this many blocks.
    #[arg(long, default_value_t = 64)]
    collapse: usize,
    /// Once a graph (host, or a device box's) has this many nodes, further parallel
    /// constructs are summarised into one edge each (work and span stay exact).
    #[arg(long, value_name = "N", default_value_t = 5_000)]
    node_budget: usize,
    /// Compile without bounds, division and size checks in kernels (as `weft run
    /// --unsafe` and `weft bench --unsafe`, whose times the profile is compared with).
    #[arg(long = "unsafe")]
    unchecked: bool,
    /// Cost the entry on the host world only (ignore the OpenCL plan).
    #[arg(long)]
    host_only: bool,
    /// Output directory for graph.dot, graph.svg and space.svg.
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
    /// Print the report as one JSON object (times in seconds when calibrated).
    #[arg(long)]
    json: bool,
}

/// Each kernel's name and the core expressions it computes: what places the run's
/// statements in device boxes.
fn kernel_infos(compiled: &weft_opencl::Compiled) -> Vec<KernelInfo> {
    compiled
        .kernels
        .iter()
        .map(|k| KernelInfo {
            name: k.name.clone(),
            origins: k.origins.iter().map(|(o, _)| o.clone()).collect(),
        })
        .collect()
}

/// The device profile of the calibrated weights: `--device-profile` (a committed name or a
/// file), else the committed profile of this machine's device, else the compiler's
/// default; a note says which when it was not asked for.
fn device_profile(
    asked: Option<&str>,
    notes: &mut Vec<String>,
) -> anyhow::Result<&'static DeviceProfile> {
    if let Some(asked) = asked {
        return crate::predict::profile_named_or_file(asked);
    }
    if let Some(profile) = crate::opencl::steering_profile() {
        notes.push(format!("timed for this machine's device, {}", profile.device.name));
        return Ok(profile);
    }
    let profile = weft_lower::cost::default_profile();
    notes.push(format!(
        "no OpenCL device here has a committed profile: timed for {} (the compiler's default; \
         --device-profile picks another)",
        profile.device.name
    ));
    Ok(profile)
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
    if !(args.host_unit_ns.is_finite() && args.host_unit_ns >= 0.0) {
        bail!("`--host-unit-ns` must be a time in nanoseconds, 0 or more");
    }
    let device = if args.units || args.host_only {
        None
    } else {
        Some(device_profile(args.device_profile.as_deref(), &mut notes)?)
    };
    let compiled = if args.host_only {
        notes.push("--host-only: costed on the host world".to_owned());
        None
    } else {
        let options =
            weft_lower::Options { checks: !args.unchecked, ..crate::environment::lower_options() };
        let compiled = match device {
            Some(profile) => crate::opencl::compile_for(&db, &program, entry, options, profile),
            None => crate::opencl::compile(&db, &program, entry, options),
        };
        match compiled {
            Ok(c) => Some(c),
            Err(message) => {
                notes.push(format!(
                    "the entry does not compile to OpenCL ({message}); costed on the host world"
                ));
                None
            }
        }
    };
    let calibrated = match (device, &compiled) {
        (Some(profile), Some(compiled)) => {
            let bound = crate::placement::bind_sizes(
                &compiled.plan,
                &crate::placement::Sizes::Values(&inputs),
            );
            let sizes = crate::placement::lookup(&bound);
            let host_unit_ps = (args.host_unit_ns * 1e3).round() as u64;
            match Calibrated::new(&compiled.costs, profile, &sizes, host_unit_ps) {
                Ok(model) => Some(model),
                Err(error) => {
                    notes.push(format!(
                        "the cost model cannot time this entry's kernels on these inputs \
                         ({error}): weighed in abstract units instead (--units)"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let kernels: Vec<KernelInfo> = compiled.as_ref().map(kernel_infos).unwrap_or_default();
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
        calibrated,
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
    let text = if args.json {
        json_report(&prof, &args.file, &notes, &files)
    } else {
        report(&prof, &args.file, &notes, &files)
    };
    out.write_all(text.as_bytes())?;
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
    let svg = weft_cost::space::svg(
        &prof.space,
        prof.schedule.makespan,
        prof.graph.units,
        &format!("space: {title}"),
    );
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
    format!(
        "{} ({} B) at t = {}{what}",
        bytes(peak.bytes),
        peak.bytes,
        prof.graph.units.show(peak.time)
    )
}

/// The report as one JSON line: weights in seconds when the graph is timed, else in
/// units (`"units"` says which).
fn json_report(prof: &Profile, file: &str, notes: &[String], files: &[PathBuf]) -> String {
    let timed = prof.graph.units == weft_cost::graph::Units::Picoseconds;
    let weight = |w: u64| {
        if timed { serde_json::json!(w as f64 * 1e-12) } else { serde_json::json!(w) }
    };
    let model = prof.params.calibrated.as_ref().map(|m| {
        serde_json::json!({"model": m.model, "device": m.device, "host_unit_s": m.host_unit_ps as f64 * 1e-12})
    });
    let value = serde_json::json!({
        "file": file,
        "entry": prof.entry,
        "units": if timed { "seconds" } else { "units" },
        "calibrated": model,
        "processors": prof.params.processors,
        "work": weight(prof.work),
        "span": weight(prof.span),
        "time": weight(prof.schedule.makespan),
        "host_work": weight(prof.host_work),
        "device_work": weight(prof.device_work),
        "transfer_work": weight(prof.transfer_work),
        "kernel_launches": prof.kernel_launches,
        "unplaced": prof.unplaced,
        "peak_bytes": {"host": prof.space.host.bytes, "device": prof.space.device.bytes},
        "notes": notes,
        "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
    });
    format!("{value}\n")
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
    let policy = match p.policy {
        Policy::DepthFirst => "greedy depth-first",
        Policy::BreadthFirst => "greedy breadth-first",
    };
    match &p.calibrated {
        Some(model) => {
            let _ = writeln!(
                s,
                "  model: {} calibrated on {} (device boxes, transfers); host {} ns per unit; P = {} processors, {policy} schedule",
                model.model.split(':').next().unwrap_or(model.model),
                model.device,
                model.host_unit_ps as f64 / 1e3,
                p.processors,
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  model: abstract units; P = {} processors, {policy} schedule, H = {} device threads, launch {}, transfer {} + bytes/{}",
                p.processors, p.device_threads, p.launch, p.transfer_latency, p.bytes_per_unit
            );
        }
    }
    if !prof.unplaced.is_empty() {
        let _ = writeln!(
            s,
            "  note: no statement of the run maps to {}: timed as one device box after the run",
            prof.unplaced.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        );
    }
    let show = |weight: u64| prof.graph.units.show(weight);
    let _ = writeln!(
        s,
        "  work W      {:>12}   (host {}, device {}, transfers {})",
        show(prof.work),
        show(prof.host_work),
        show(prof.device_work),
        show(prof.transfer_work)
    );
    let _ = writeln!(s, "  span S      {:>12}", show(prof.span));
    let bounds = if prof.graph.boxes.is_empty() && prof.transfer_work == 0 {
        format!(
            "; W/P = {}, W/P + S = {}",
            show(prof.work.div_ceil(p.processors as u64)),
            show(prof.work / p.processors as u64 + prof.span)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "  time T_{:<3} {:>12}   ({} schedule steps{bounds})",
        p.processors,
        show(prof.schedule.makespan),
        prof.schedule.steps,
    );
    if p.calibrated.is_some() {
        let _ = writeln!(
            s,
            "  compare     device W with `weft bench`'s kernel time, T_{} with `weft run --timing`'s wall time",
            p.processors
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The profile of `entry` in `file` on `inputs` (weft literals), weighed by the H200's
    /// calibrated model, with the model's own prediction of the same run.
    fn calibrated(
        file: &str,
        entry: &str,
        inputs: &str,
    ) -> (Profile, weft_cost::model::EntryPrediction, u64) {
        let path = format!("{}/../../{file}", env!("CARGO_MANIFEST_DIR"));
        let (db, files) = load(&[path]).expect("the example loads");
        let program = core_program(&db, files[0].file).expect("the example compiles");
        let entry = choose_entry(&program, Some(entry)).expect("the entry exists");
        let values = weft_values::parse_values(inputs).expect("the inputs parse");
        let device = weft_cost::profile::builtin_profile_named("nvidia-h200").expect("committed");
        let compiled = crate::opencl::compile_for(
            &db,
            &program,
            entry,
            crate::environment::lower_options(),
            device,
        )
        .expect("the entry compiles to OpenCL");
        let bound =
            crate::placement::bind_sizes(&compiled.plan, &crate::placement::Sizes::Values(&values));
        let sizes = crate::placement::lookup(&bound);
        let predicted = compiled.costs.predict(device, &sizes).expect("the model predicts it");
        let model = Calibrated::new(&compiled.costs, device, &sizes, 2_000).expect("timed");
        let kernels = kernel_infos(&compiled);
        let params = CostParams { calibrated: Some(model), ..CostParams::default() };
        let prof = profile(&program, entry, values, Some((&compiled.plan, &kernels)), &params)
            .expect("the entry runs");
        let launches: u64 = predicted
            .launches
            .iter()
            .map(|(i, _)| {
                weft_cost::model::eval_i64(&compiled.costs.launches[*i].repeat, &sizes)
                    .expect("repeats evaluate") as u64
            })
            .sum();
        (prof, predicted, launches)
    }

    /// The property `weft profile` promises: its device boxes take exactly the calibrated
    /// model's kernel time and its transfers the model's transfer time, so the simulated
    /// time is the prediction `weft bench --predict` compares with measurements, plus
    /// the host's steps.
    #[test]
    fn calibrated_device_boxes_and_transfers_are_the_models_prediction() {
        let cases = [
            // One launch of one kernel.
            (
                "examples/saxpy.weft",
                "saxpy",
                "2f32 [1f32, 2f32, 3f32, 4f32] [1f32, 1f32, 1f32, 1f32]",
            ),
            // Several kernels.
            (
                "examples/kmeans.weft",
                "kmeans_step",
                "[0f32, 1f32, 0f32, 10f32, 11f32, 10f32] [0f32, 0f32, 1f32, 10f32, 10f32, 12f32] \
                 [0f32, 10f32, 50f32] [0f32, 10f32, 50f32]",
            ),
            // A host loop of launches.
            (
                "examples/histogram.weft",
                "histogram_seq",
                "4i64 [0i64, 1i64, 1i64, 3i64, 3i64, 3i64, 7i64, -1i64]",
            ),
        ];
        for (file, entry, inputs) in cases {
            let (prof, predicted, launches) = calibrated(file, entry, inputs);
            assert_eq!(prof.graph.units, weft_cost::graph::Units::Picoseconds, "{entry}");
            assert!(prof.unplaced.is_empty(), "{entry}: {:?}", prof.unplaced);
            assert_eq!(
                prof.kernel_launches, launches,
                "{entry}: the boxes launch what the plan does"
            );
            // Each launch's time is rounded to a picosecond.
            let kernels_ps = predicted.kernels_s * 1e12;
            assert!(
                (prof.device_work as f64 - kernels_ps).abs() <= launches as f64,
                "{entry}: device {} ps, predicted {kernels_ps} ps",
                prof.device_work
            );
            let transfer_ps = predicted.total.transfer_s * 1e12;
            assert!(
                (prof.transfer_work as f64 - transfer_ps).abs() <= 4.0,
                "{entry}: transfers {} ps, predicted {transfer_ps} ps",
                prof.transfer_work
            );
            // Host steps: 2 ns (the test's rate) per unit of work.
            assert_eq!(prof.host_work % 2_000, 0, "{entry}");
            assert!(prof.schedule.makespan >= prof.device_work + prof.transfer_work, "{entry}");
        }
    }
}
