//! The cost-semantics profiler (digest 002, §3.10): an instrumented run of the
//! reference interpreter builds the cost graph; the compiled plan places it in worlds.
//!
//! - Every statement the interpreter evaluates is one edge (PRAM unit costs: scalar
//!   operations, reads and views cost 1; `iota`, `replicate`, `concat`, `transpose`,
//!   `reverse`, `scatter` and array literals are parallel copies of their elements).
//! - `map` and `generate` are parallel: on the host a balanced binary fork/join tree
//!   (`4(n-1)` unit edges, §3.2), on the device one n-ary fork/join with free edges.
//!   `reduce` and `scan` have the same shape over their operator applications plus a
//!   latency edge for the combining depth, `ceil(log2 n)` times the longest
//!   application (the interpreter's fold does the work; the tree gives the depth).
//! - Parallel constructs of more than `collapse` iterations are split like the balanced
//!   tree into at most `collapse` blocks, each one summary edge: the block's total work
//!   (run by one processor in a schedule, as a chunk of a parallel loop) and its exact
//!   span. W and S are those of the uncollapsed graph.
//! - Worlds: a top-level statement (one not inside a parallel construct) whose core
//!   origin is computed by a kernel of the plan opens a device box; the following
//!   top-level statements of the same kernels join it (fused kernels). Everything the
//!   statement evaluates goes into the box's inner graph. The box's time is
//!   `max(S_D, ceil(W_D / H)) + launch * kernels` (the digest's corrected rounds,
//!   `ceil(n/H)` times the per-thread cost for a uniform map).
//! - Transfers (residency, pitfall 12): the plan uploads every array input once at the
//!   start and reads every array output once at the end; each is a transfer edge on the
//!   bus of `latency + ceil(bytes / bytes_per_unit)`.
//! - Calibrated timing ([`Calibrated`], docs/costs.md "The profiler"): instead of unit
//!   costs, the graph is weighed in picoseconds. Each kernel that runs on the inputs'
//!   sizes has the calibrated model's predicted time of all its launches (the same
//!   prediction as `weft bench --predict`), shared by the device boxes that hold it;
//!   transfers take the profile's latency and bandwidth, and each top-level host
//!   statement a fixed time (the plan's host code: sizes, loop control). The simulated
//!   time is then comparable with a measured run.
//! - Space (§3.7, in bytes, pitfall 9): every array a top-level statement materialises
//!   is a region of its world (device inside a box, host otherwise), allocated at its
//!   statement (a box's at its launch) and freed at the end of its block (its block's
//!   result goes on to the enclosing statement). Inputs live on the host from the start
//!   and on the device from their upload; results on the host from their read-back.
//!   Arrays inside parallel constructs are per-iteration temporaries and not counted.

use std::cell::RefCell;

use rustc_hash::FxHashMap as HashMap;
use weft_core::{
    BlockId, Exp, FnId, Made, Origin, ParKind, Program, Recorder, RuntimeError, Stmt, Val, VarId,
};
use weft_plan::{Input, Output, Plan, Var};
use weft_values::Value;

use crate::graph::{
    DeviceBox, Edge, EdgeKind, Graph, NodeId, Resource, Sub, Units, World, ceil_log2,
};
use crate::model::{EntryCost, PredictError, eval_i64};
use crate::profile::DeviceProfile;
use crate::schedule::{Policy, Schedule, greedy};
use crate::space::{Timeline, timeline};

/// The machine and model parameters of a profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CostParams {
    /// P: host processors of the schedule.
    pub processors: usize,
    /// H: work-items the device runs at once.
    pub device_threads: u64,
    /// Cost of one kernel launch.
    pub launch: u64,
    /// Fixed cost of one transfer.
    pub transfer_latency: u64,
    /// Bytes a transfer moves per cost unit.
    pub bytes_per_unit: u64,
    /// Parallel constructs with more iterations are summarised into this many blocks.
    pub collapse: usize,
    /// Once a graph (the host's or a box's) has this many nodes, every further parallel
    /// construct is one summary edge, however few its iterations (W and S stay exact).
    pub node_budget: usize,
    pub policy: Policy,
    /// Weigh the graph in time with a calibrated device model (then `device_threads`,
    /// `launch`, `transfer_latency` and `bytes_per_unit` are unused).
    pub calibrated: Option<Calibrated>,
}

/// The calibrated device model of a profile, evaluated on one run's sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    /// The device profile's device name.
    pub device: String,
    /// The cost model's name and version.
    pub model: &'static str,
    /// Each kernel that runs on these sizes: its name, how many times the plan launches
    /// it, and the predicted time of all those launches in picoseconds.
    pub kernels: Vec<KernelTime>,
    /// The kernels that do not run on these sizes: versions of a construct whose
    /// conditions (thresholds) fail, and launches in loops that run no iteration.
    pub idle: Vec<String>,
    /// Picoseconds of one unit of host work.
    pub host_unit_ps: u64,
    pub upload: Link,
    pub download: Link,
    /// Single scalars the plan reads back during the run (loop control, sizes): each
    /// one read-back's latency.
    pub scalar_reads: u64,
}

/// A kernel's launches in one run, as the model predicts them.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTime {
    pub name: String,
    pub launches: u64,
    pub ps: u64,
}

/// One direction of the host-device link, as the device profile models it.
#[derive(Debug, Clone, PartialEq)]
pub struct Link(pub crate::profile::Transfer);

impl Link {
    /// Picoseconds to move `bytes` in one transfer.
    pub fn ps(&self, bytes: u64) -> u64 {
        (self.0.seconds(1.0, bytes as f64) * 1e12).round() as u64
    }

    /// Picoseconds of `n` transfers' fixed time (single scalars read back).
    pub fn latency_ps(&self, n: u64) -> u64 {
        (self.0.seconds(n as f64, 0.0) * 1e12).round() as u64
    }
}

impl Calibrated {
    /// The model of `costs` (the compiled entry's) on `profile`'s device at `sizes`.
    /// Fails when a kernel's time depends on a value the sizes do not give.
    pub fn new(
        costs: &EntryCost,
        profile: &DeviceProfile,
        sizes: &dyn Fn(Var) -> Option<i64>,
        host_unit_ps: u64,
    ) -> Result<Calibrated, PredictError> {
        let ps = |seconds: f64| (seconds * 1e12).round() as u64;
        let prediction = costs.predict(profile, sizes)?;
        // Per kernel: the predicted seconds and the number of launches that take them.
        let mut per_kernel = vec![(0.0f64, 0.0f64); costs.kernels.len()];
        for (index, predicted) in &prediction.launches {
            let launch = &costs.launches[*index];
            let times = eval_i64(&launch.repeat, sizes)? as f64;
            if let Some(k) = per_kernel.get_mut(launch.kernel as usize) {
                k.0 += predicted.seconds;
                k.1 += times;
            }
        }
        let (mut kernels, mut idle) = (Vec::new(), Vec::new());
        for (k, (name, _, _)) in costs.kernels.iter().enumerate() {
            match per_kernel[k] {
                (seconds, launches) if launches > 0.0 => kernels.push(KernelTime {
                    name: name.clone(),
                    launches: launches as u64,
                    ps: ps(seconds),
                }),
                _ => idle.push(name.clone()),
            }
        }
        Ok(Calibrated {
            device: profile.device.name.clone(),
            model: prediction.total.model,
            kernels,
            idle,
            host_unit_ps,
            upload: Link(profile.transfer.host_to_device.clone()),
            download: Link(profile.transfer.device_to_host.clone()),
            scalar_reads: eval_i64(&costs.scalar_reads, sizes)?.max(0) as u64,
        })
    }
}

impl Default for CostParams {
    fn default() -> CostParams {
        CostParams {
            processors: 1,
            device_threads: 1 << 18,
            launch: 0,
            transfer_latency: 0,
            bytes_per_unit: 16,
            collapse: 64,
            node_budget: 5_000,
            policy: Policy::DepthFirst,
            calibrated: None,
        }
    }
}

/// time(D) of a device box: `max(span, ceil(work / H)) + launch`. For `n` uniform
/// work-items of cost `c` this is `ceil(n / H) * c` (the digest's corrected rounds, E3),
/// and never less than the longest work-item.
pub fn box_time(work: u64, span: u64, device_threads: u64, launch: u64) -> u64 {
    span.max(work.div_ceil(device_threads.max(1))) + launch
}

/// A kernel of the compiled entry: its name and the core expressions it computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub origins: Vec<Origin>,
}

/// A finished profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub entry: String,
    pub params: CostParams,
    pub graph: Graph,
    pub work: u64,
    pub span: u64,
    pub schedule: Schedule,
    pub space: Timeline,
    /// Work on the host processors, inside device boxes, and of transfers.
    pub host_work: u64,
    pub device_work: u64,
    pub transfer_work: u64,
    pub kernel_launches: u64,
    pub distinct_kernels: usize,
    pub transfers_to_device: (u64, u64),
    pub transfers_to_host: (u64, u64),
    pub collapsed: u64,
    /// Kernels the plan launches that no statement of the run maps to (calibrated:
    /// their time is one device box before the results are read back).
    pub unplaced: Vec<String>,
    /// Whether the plan placed the computation (false: host world only).
    pub placed: bool,
    /// The entry's results.
    pub results: Vec<Value>,
}

/// Profiles `entry` on `inputs`. With `plan` (and its kernels), kernels' statements go
/// into device boxes and inputs and outputs are transferred; without, everything runs
/// on the host world.
pub fn profile(
    program: &Program,
    entry: FnId,
    inputs: Vec<Value>,
    placement: Option<(&Plan, &[KernelInfo])>,
    params: &CostParams,
) -> Result<Profile, RuntimeError> {
    let f = &program.functions[entry];
    let mut kernel_of: HashMap<Origin, Vec<u32>> = HashMap::default();
    let mut kernel_names = Vec::new();
    if let Some((_, kernels)) = placement {
        for (k, kernel) in kernels.iter().enumerate() {
            kernel_names.push(kernel.name.clone());
            for origin in &kernel.origins {
                let list = kernel_of.entry(origin.clone()).or_default();
                if !list.contains(&(k as u32)) {
                    list.push(k as u32);
                }
            }
        }
    }
    let mut g = Graph::new();
    let start = g.node("start");
    // Inputs: host regions from the start; uploads of the plan's array inputs.
    let input_names: Vec<String> = input_labels(program, entry, inputs.len());
    let mut host_inputs = Vec::new();
    for (i, value) in inputs.iter().enumerate() {
        if value.rank() > 0 {
            let r = g.alloc(start, &input_names[i], World::Host, value_bytes(value));
            host_inputs.push(r);
        }
    }
    let mut tail = Sub { src: start, sink: start };
    let mut device_inputs = Vec::new();
    let (mut h2d, mut d2h) = ((0u64, 0u64), (0u64, 0u64));
    if let Some((plan, _)) = placement {
        for (i, input) in plan.inputs.iter().enumerate() {
            if let (Input::Array { .. }, Some(value)) = (input, inputs.get(i)) {
                let bytes = value_bytes(value);
                tail = transfer(&mut g, tail, true, bytes, &input_names[i], params);
                device_inputs.push(g.alloc(tail.sink, &input_names[i], World::Device, bytes));
                h2d = (h2d.0 + 1, h2d.1 + bytes);
            }
        }
    }
    let state = State {
        program,
        kernel_of,
        kernel_names,
        params: params.clone(),
        g,
        frames: vec![Frame::Chain { tail: tail.sink }],
        boxed: None,
        stmt_depth: 0,
        pars: 0,
        scopes: Vec::new(),
        escaped: Vec::new(),
        collapsed: 0,
        launches: 0,
        used_kernels: Vec::new(),
    };
    let recorder = ProfileRecorder(RefCell::new(state));
    let results = weft_core::run_entry_recorded(program, entry, inputs, &recorder)?;
    let mut st = recorder.0.into_inner();
    st.close_box();
    let mut tail = Sub { src: start, sink: st.tail() };
    let mut unplaced = Vec::new();
    if let Some(model) = &params.calibrated {
        unplaced = time_device_boxes(&mut st.g, model);
        if !unplaced.is_empty() {
            tail = unplaced_box(&mut st.g, tail, model, &unplaced);
        }
        st.launches = model.kernels.iter().map(|k| k.launches).sum();
    }
    let mut result_regions = Vec::new();
    if let Some((plan, _)) = placement {
        for (i, output) in plan.outputs.iter().enumerate() {
            if let (Output::Array { .. }, Some(value)) = (output, results.get(i)) {
                let bytes = value_bytes(value);
                let name = format!("result #{i}");
                tail = transfer(&mut st.g, tail, false, bytes, &name, params);
                result_regions.push(st.g.alloc(tail.sink, name, World::Host, bytes));
                d2h = (d2h.0 + 1, d2h.1 + bytes);
            }
        }
    }
    if let Some(model) = params.calibrated.as_ref().filter(|m| m.scalar_reads > 0) {
        // The plan's scalar read-backs happen between kernels; their latency is summed
        // into one edge, which the total time counts wherever it falls.
        let cost = model.download.latency_ps(model.scalar_reads);
        let v = st.g.node(format!("{} scalar read-backs", model.scalar_reads));
        st.g.add_edge(Edge {
            from: tail.sink,
            to: v,
            kind: EdgeKind::Transfer { to_device: false, bytes: 8 * model.scalar_reads },
            work: cost,
            span: cost,
            duration: cost,
            resource: Resource::Bus,
        });
        tail = Sub { src: tail.src, sink: v };
    }
    tail = st.g.step(tail, EdgeKind::Seq, 0, "end");
    // Everything still live is freed at the end.
    let mut live = vec![false; st.g.regions.len()];
    for node in &st.g.nodes {
        for ev in &node.events {
            live[ev.region as usize] = ev.alloc;
        }
    }
    for (r, is_live) in live.into_iter().enumerate() {
        if is_live {
            st.g.free(tail.sink, r as u32);
        }
    }
    let mut g = st.g;
    if let Some(model) = &params.calibrated {
        weigh_host_in_time(&mut g, model.host_unit_ps, placement.is_some());
    }
    let work = g.work();
    let span = g.span();
    let schedule = greedy(&g, params.processors, params.policy);
    let space = timeline(&g, &schedule);
    let device_work = g.work_where(|e| matches!(e.kind, EdgeKind::DeviceBox { .. }));
    let transfer_work = g.work_where(|e| matches!(e.kind, EdgeKind::Transfer { .. }));
    let mut used = st.used_kernels;
    used.sort_unstable();
    used.dedup();
    Ok(Profile {
        entry: f.name.to_string(),
        params: params.clone(),
        work,
        span,
        host_work: work - device_work - transfer_work,
        device_work,
        transfer_work,
        kernel_launches: st.launches,
        distinct_kernels: params.calibrated.as_ref().map_or(used.len(), |m| m.kernels.len()),
        transfers_to_device: h2d,
        transfers_to_host: d2h,
        collapsed: st.collapsed,
        unplaced,
        placed: placement.is_some(),
        schedule,
        space,
        graph: g,
        results,
    })
}

/// Sets each device box's time from the model: a kernel's predicted time of all its
/// launches is shared by the boxes that hold it (a loop's boxes alike), so the boxes
/// sum to the model's kernel time however the run's statements fell into boxes. Returns
/// the kernels that run but are in no box.
fn time_device_boxes(g: &mut Graph, model: &Calibrated) -> Vec<String> {
    let held = |k: &KernelTime, b: &DeviceBox| b.kernels.contains(&k.name);
    let boxes_of: Vec<u64> = model
        .kernels
        .iter()
        .map(|k| g.boxes.iter().filter(|b| held(k, b)).count() as u64)
        .collect();
    for b in &mut g.boxes {
        b.time = model
            .kernels
            .iter()
            .zip(&boxes_of)
            .filter(|(k, _)| held(k, b))
            .map(|(k, &n)| k.ps / n)
            .sum();
    }
    for e in &mut g.edges {
        if let EdgeKind::DeviceBox { index } = e.kind {
            let time = g.boxes[index as usize].time;
            (e.work, e.span, e.duration) = (time, time, time);
        }
    }
    model
        .kernels
        .iter()
        .zip(&boxes_of)
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| k.name.clone())
        .collect()
}

/// One device box for the `kernels` the plan launches that no statement of the run maps
/// to, after the run (before the results are read back).
fn unplaced_box(g: &mut Graph, tail: Sub, model: &Calibrated, kernels: &[String]) -> Sub {
    let time: u64 = model.kernels.iter().filter(|k| kernels.contains(&k.name)).map(|k| k.ps).sum();
    let mut graph = Graph::new();
    graph.node("work-items");
    let index = g.boxes.len() as u32;
    g.boxes.push(DeviceBox { kernels: kernels.to_vec(), graph, work: 0, span: 0, time });
    let v = g.node(kernels.join("\n"));
    g.add_edge(Edge {
        from: tail.sink,
        to: v,
        kind: EdgeKind::DeviceBox { index },
        work: time,
        span: time,
        duration: time,
        resource: Resource::Gpu,
    });
    Sub { src: tail.src, sink: v }
}

/// Weighs the host graph's unit-cost steps in picoseconds (device boxes and transfers
/// are already in time) and marks the graph as timed. With a plan (`placed`), the host
/// runs only the plan's host code: each top-level statement (a labelled step) takes one
/// unit, and the rest, the parallel structure and element copies of array statements
/// outside the boxes, takes no time: the plan makes such arrays as views or inside a
/// kernel, whose time is in the boxes. Without a plan every unit of work takes its time.
fn weigh_host_in_time(g: &mut Graph, unit_ps: u64, placed: bool) {
    g.units = Units::Picoseconds;
    for e in &mut g.edges {
        let weight = match e.kind {
            EdgeKind::DeviceBox { .. } | EdgeKind::Transfer { .. } => continue,
            _ if !placed => unit_ps,
            EdgeKind::Op if !g.nodes[e.to as usize].label.is_empty() => unit_ps,
            _ => 0,
        };
        e.work *= weight;
        e.span *= weight;
        e.duration *= weight;
    }
}

fn value_bytes(value: &Value) -> u64 {
    let elems: usize = value.shape().iter().product();
    elems as u64 * value.elem_type().size_in_bytes() as u64
}

/// The parameter name of each input value (a tuple parameter gives several).
fn input_labels(program: &Program, entry: FnId, n: usize) -> Vec<String> {
    fn count(ty: &weft_core::Type) -> usize {
        match ty {
            weft_core::Type::Tuple(elems) => elems.iter().map(count).sum(),
            weft_core::Type::Scalar(_) | weft_core::Type::Array { .. } => 1,
        }
    }
    let f = &program.functions[entry];
    let mut names = Vec::new();
    for &p in &f.params {
        for _ in 0..count(&f.vars[p].ty) {
            names.push(format!("input `{}`", f.vars[p].name));
        }
    }
    while names.len() < n {
        names.push(format!("input #{}", names.len()));
    }
    names
}

fn transfer(
    g: &mut Graph,
    tail: Sub,
    to_device: bool,
    bytes: u64,
    name: &str,
    params: &CostParams,
) -> Sub {
    let cost = match &params.calibrated {
        Some(model) => if to_device { &model.upload } else { &model.download }.ps(bytes),
        None => params.transfer_latency + bytes.div_ceil(params.bytes_per_unit.max(1)),
    };
    let label = format!("{} {name} ({bytes} B)", if to_device { "upload" } else { "read back" });
    let v = g.node(label);
    g.add_edge(Edge {
        from: tail.sink,
        to: v,
        kind: EdgeKind::Transfer { to_device, bytes },
        work: cost,
        span: cost,
        duration: cost,
        resource: Resource::Bus,
    });
    Sub { src: tail.src, sink: v }
}

/// A sequential builder: a chain growing in a graph, or (inside a summarised block)
/// just the work and span of the chain.
#[derive(Debug)]
enum Frame {
    Chain { tail: NodeId },
    Acc { work: u64, span: u64 },
    Par(Box<ParFrame>),
}

/// One block of a parallel construct's iterations.
#[derive(Debug, Clone)]
struct Block {
    lo: usize,
    len: usize,
    work: u64,
    /// max over iterations of (span + 2 * depth inside the block) on the host, span on
    /// the device.
    span: u64,
    /// The longest single iteration.
    max_iter_span: u64,
}

#[derive(Debug)]
struct ParFrame {
    kind: ParKind,
    world: World,
    n: usize,
    next: usize,
    /// Graph mode with one sub-graph per iteration (`n <= collapse`).
    subs: Option<Vec<Sub>>,
    /// Otherwise: blocks (in graph mode, one summary edge each; in accumulator mode,
    /// folded into the enclosing accumulator).
    blocks: Vec<Block>,
    graph_mode: bool,
    /// The source of the current iteration in graph mode.
    iter_src: NodeId,
}

/// Depth of leaf `i` in the balanced split of `len` leaves (left half `ceil(len/2)`).
fn leaf_depth(mut i: usize, mut len: usize) -> u64 {
    let mut d = 0;
    while len > 1 {
        let left = len.div_ceil(2);
        if i < left {
            len = left;
        } else {
            i -= left;
            len -= left;
        }
        d += 1;
    }
    d
}

/// The blocks of the balanced split of `n` leaves, `levels` levels down.
fn split_blocks(lo: usize, len: usize, depth: u64, levels: u64, out: &mut Vec<Block>) {
    if depth == levels || len <= 1 {
        out.push(Block { lo, len, work: 0, span: 0, max_iter_span: 0 });
        return;
    }
    let left = len.div_ceil(2);
    split_blocks(lo, left, depth + 1, levels, out);
    split_blocks(lo + left, len - left, depth + 1, levels, out);
}

/// The statement variable a region is bound to.
type Binding = (FnId, VarId);

struct OpenBox {
    kernels: Vec<u32>,
    graph: Graph,
    src: NodeId,
    launch_node: NodeId,
    level: usize,
    /// Regions of the box's top-level statements: (name, bytes, var).
    allocs: Vec<(String, u64, Binding)>,
    /// How many frames the host had when the box opened.
    host_frames: usize,
}

/// A region scope: a top-level block and the regions bound in it.
struct Scope {
    regions: Vec<(FnId, VarId, u32)>,
}

struct State<'a> {
    program: &'a Program,
    kernel_of: HashMap<Origin, Vec<u32>>,
    kernel_names: Vec<String>,
    params: CostParams,
    g: Graph,
    frames: Vec<Frame>,
    boxed: Option<OpenBox>,
    stmt_depth: usize,
    /// Parallel constructs open (statements inside them are not top-level).
    pars: usize,
    scopes: Vec<Scope>,
    /// Regions of a finished block's result, waiting for the statement that binds it.
    escaped: Vec<u32>,
    collapsed: u64,
    launches: u64,
    used_kernels: Vec<u32>,
}

struct ProfileRecorder<'a>(RefCell<State<'a>>);

impl Recorder for ProfileRecorder<'_> {
    fn stmt_begin(&self, func: FnId, stmt: &Stmt) {
        self.0.borrow_mut().stmt_begin(func, stmt);
    }
    fn stmt_end(&self, func: FnId, stmt: &Stmt, value: &Val) {
        self.0.borrow_mut().stmt_end(func, stmt, value);
    }
    fn block_begin(&self, _func: FnId, _block: BlockId) {
        self.0.borrow_mut().block_begin();
    }
    fn block_end(&self, func: FnId, block: BlockId) {
        self.0.borrow_mut().block_end(func, block);
    }
    fn par_begin(&self, kind: ParKind, n: usize) {
        self.0.borrow_mut().par_begin(kind, n);
    }
    fn iter_begin(&self) {
        self.0.borrow_mut().iter_begin();
    }
    fn iter_end(&self) {
        self.0.borrow_mut().iter_end();
    }
    fn par_end(&self) {
        self.0.borrow_mut().par_end();
    }
}

/// What a statement costs by itself, and how many elements it copies in parallel.
fn own_cost(exp: &Exp, value: &Val) -> (u64, u64) {
    if exp.kind().made == Made::Copied { (1, value.n_elems()) } else { (1, 0) }
}

/// A variable's source name, or `t<index>` for a temporary.
fn var_label(f: &weft_core::Function, var: VarId) -> String {
    let name = f.vars[var].name.as_str();
    if name.is_empty() { format!("t{}", var.into_raw().into_u32()) } else { name.to_owned() }
}

/// Work and span of `n` unit leaves composed in parallel in `world`.
fn bulk_cost(n: u64, world: World) -> (u64, u64) {
    if n == 0 {
        return (0, 0);
    }
    match world {
        World::Host => (n + 4 * (n - 1), 1 + 2 * ceil_log2(n)),
        World::Device => (n, 1),
    }
}

impl State<'_> {
    fn world(&self) -> World {
        if self.boxed.is_some() { World::Device } else { World::Host }
    }

    fn tail(&self) -> NodeId {
        match self.frames.first() {
            Some(Frame::Chain { tail, .. }) => *tail,
            _ => 0,
        }
    }

    fn graph(&mut self) -> &mut Graph {
        match &mut self.boxed {
            Some(b) => &mut b.graph,
            None => &mut self.g,
        }
    }

    /// Appends an edge (work, span, duration) with a label to the current builder;
    /// returns the new node in graph mode.
    fn append(
        &mut self,
        kind: EdgeKind,
        work: u64,
        span: u64,
        label: impl FnOnce() -> String,
    ) -> Option<NodeId> {
        let resource = if span > 0 && work == 0 { Resource::Latency } else { Resource::Cpu };
        let duration = if resource == Resource::Latency { span } else { work };
        match self.frames.last_mut() {
            Some(Frame::Acc { work: w, span: s, .. }) => {
                *w += work;
                *s += span;
                None
            }
            Some(Frame::Chain { tail, .. }) => {
                let from = *tail;
                let g = match &mut self.boxed {
                    Some(b) => &mut b.graph,
                    None => &mut self.g,
                };
                let v = g.node(label());
                g.add_edge(Edge { from, to: v, kind, work, span, duration, resource });
                if let Some(Frame::Chain { tail, .. }) = self.frames.last_mut() {
                    *tail = v;
                }
                Some(v)
            }
            Some(Frame::Par(_)) | None => None,
        }
    }

    /// Appends a finished sub-graph (graph mode) to the current chain.
    fn append_sub(&mut self, sub: Sub) {
        let from = match self.frames.last() {
            Some(Frame::Chain { tail, .. }) => *tail,
            _ => return,
        };
        self.graph().add_edge(Edge::plain(from, sub.src, EdgeKind::Seq, 0));
        if let Some(Frame::Chain { tail, .. }) = self.frames.last_mut() {
            *tail = sub.sink;
        }
    }

    fn in_acc(&self) -> bool {
        matches!(self.frames.last(), Some(Frame::Acc { .. }))
    }

    fn stmt_begin(&mut self, func: FnId, stmt: &Stmt) {
        let level = self.stmt_depth;
        self.stmt_depth += 1;
        if self.pars > 0 {
            return;
        }
        let kernels = self.kernels_of(func, stmt.exp);
        if let Some(b) = &mut self.boxed {
            if b.level == level && kernels.iter().any(|k| b.kernels.contains(k)) {
                for k in kernels {
                    if !b.kernels.contains(&k) {
                        b.kernels.push(k);
                    }
                }
                return;
            }
            if b.level >= level {
                self.close_box();
            } else {
                return;
            }
        }
        if !kernels.is_empty() {
            self.open_box(kernels, level);
        }
    }

    /// The kernels computing a statement: those whose origins include the statement's
    /// expression or, for a parallel construct, an expression of its lambda (a kernel may
    /// record only the inner expressions it computes). `if` and loops are host control
    /// flow in the plan, so their blocks are not searched.
    fn kernels_of(&self, func: FnId, exp: weft_core::ExpId) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let add = |func: FnId, e: weft_core::ExpId, out: &mut Vec<u32>| {
            let f = &self.program.functions[func];
            if let Some(ks) = f.origins.get(e).and_then(|o| self.kernel_of.get(o)) {
                for &k in ks {
                    if !out.contains(&k) {
                        out.push(k);
                    }
                }
            }
        };
        add(func, exp, &mut out);
        // The combinator's lambda, then every block nested in it (versions of a nested
        // construct compute inner expressions in their own kernels), and the bodies of
        // functions called there (the middle end inlines them into the kernel); a
        // `reduce_by_index` operator is searched as a statement, not into.
        let f = &self.program.functions[func];
        let mut blocks: Vec<(FnId, BlockId)> =
            f.exps[exp].combinator().map(|(_, lambda)| (func, lambda.body)).into_iter().collect();
        let mut entered = vec![func];
        while let Some((func, b)) = blocks.pop() {
            let f = &self.program.functions[func];
            for st in &f.blocks[b].stmts {
                add(func, st.exp, &mut out);
                let inner = &f.exps[st.exp];
                match inner {
                    Exp::ReduceByIndex { .. } => {}
                    Exp::Call { func: callee, .. } => {
                        if !entered.contains(callee) {
                            entered.push(*callee);
                            blocks.push((*callee, self.program.functions[*callee].body));
                        }
                    }
                    _ => blocks.extend(inner.nested_blocks().into_iter().map(|b| (func, b))),
                }
            }
        }
        out
    }

    fn open_box(&mut self, kernels: Vec<u32>, level: usize) {
        let launch = self.g.node("launch");
        let from = self.tail();
        self.g.add_edge(Edge::plain(from, launch, EdgeKind::Seq, 0));
        if let Some(Frame::Chain { tail, .. }) = self.frames.first_mut() {
            *tail = launch;
        }
        let mut graph = Graph::new();
        let src = graph.node("");
        self.boxed = Some(OpenBox {
            kernels,
            graph,
            src,
            launch_node: launch,
            level,
            allocs: Vec::new(),
            host_frames: self.frames.len(),
        });
        self.frames.push(Frame::Chain { tail: src });
    }

    fn close_box(&mut self) {
        let Some(b) = self.boxed.take() else { return };
        let inner_tail = match self.frames.pop() {
            Some(Frame::Chain { tail, .. }) => tail,
            _ => b.src,
        };
        self.frames.truncate(b.host_frames);
        let mut graph = b.graph;
        let _ = inner_tail;
        let work = graph.work();
        let span = graph.span();
        graph.nodes[b.src as usize].label = "work-items".to_owned();
        let n_kernels = b.kernels.len() as u64;
        let mut names: Vec<String> =
            b.kernels.iter().map(|&k| self.kernel_names[k as usize].clone()).collect();
        // Calibrated: the box holds the kernels that run on these sizes (one version of
        // a construct); its time is set when the run is over (`time_device_boxes`).
        let (time, edge_work) = match &self.params.calibrated {
            Some(model) => {
                names.retain(|name| !model.idle.contains(name));
                (0, 0)
            }
            None => {
                self.launches += n_kernels;
                let launch = self.params.launch * n_kernels;
                (box_time(work, span, self.params.device_threads, launch), work)
            }
        };
        // Counted in units; calibrated, the model's running kernels are (`profile`).
        self.used_kernels.extend(&b.kernels);
        let index = self.g.boxes.len() as u32;
        let label = names.join("\n");
        self.g.boxes.push(DeviceBox { kernels: names, graph, work, span, time });
        let v = self.g.node(label);
        self.g.add_edge(Edge {
            from: b.launch_node,
            to: v,
            kind: EdgeKind::DeviceBox { index },
            work: edge_work,
            span: time,
            duration: time,
            resource: Resource::Gpu,
        });
        if let Some(Frame::Chain { tail, .. }) = self.frames.first_mut() {
            *tail = v;
        }
        for (name, bytes, var) in b.allocs {
            let r = self.g.alloc(b.launch_node, name, World::Device, bytes);
            if let Some(scope) = self.scopes.last_mut() {
                scope.regions.push((var.0, var.1, r));
            }
        }
    }

    fn stmt_end(&mut self, func: FnId, stmt: &Stmt, value: &Val) {
        self.stmt_depth -= 1;
        let f = &self.program.functions[func];
        let exp = &f.exps[stmt.exp];
        let world = self.world();
        let (own, copies) = own_cost(exp, value);
        if copies > 0 {
            self.bulk(copies, world);
        }
        let top = self.pars == 0;
        let node = self.append(EdgeKind::Op, own, own, || {
            if top { format!("{} = {}", var_label(f, stmt.var), exp.name()) } else { String::new() }
        });
        if !top {
            return;
        }
        let escaped = std::mem::take(&mut self.escaped);
        if let Some(scope) = self.scopes.last_mut() {
            for r in escaped {
                scope.regions.push((func, stmt.var, r));
            }
        }
        if exp.kind().made != Made::Passed && value.has_array() {
            let name = format!("`{}`", var_label(f, stmt.var));
            let bytes = value.n_bytes();
            if let Some(b) = &mut self.boxed {
                b.allocs.push((name, bytes, (func, stmt.var)));
            } else if let Some(node) = node {
                let r = self.g.alloc(node, name, World::Host, bytes);
                if let Some(scope) = self.scopes.last_mut() {
                    scope.regions.push((func, stmt.var, r));
                }
            }
        }
    }

    /// `n` parallel unit copies: like a `map` of `n` one-edge iterations, without
    /// iterating when they are summarised.
    fn bulk(&mut self, n: u64, world: World) {
        if self.in_acc() {
            let (w, s) = bulk_cost(n, world);
            self.append(EdgeKind::Summary { count: n }, w, s, String::new);
            return;
        }
        let len = usize::try_from(n).unwrap_or(usize::MAX);
        self.par_begin(ParKind::Map, len);
        let summarised = matches!(self.frames.last(), Some(Frame::Par(p)) if p.subs.is_none());
        if summarised {
            if let Some(Frame::Par(p)) = self.frames.last_mut() {
                for b in &mut p.blocks {
                    let (_, span) = bulk_cost(b.len as u64, world);
                    b.work = b.len as u64;
                    b.span = span;
                    b.max_iter_span = 1;
                }
            }
        } else {
            for _ in 0..len {
                self.iter_begin();
                self.append(EdgeKind::Op, 1, 1, String::new);
                self.iter_end();
            }
        }
        self.par_end();
    }

    fn block_begin(&mut self) {
        if self.pars == 0 {
            self.scopes.push(Scope { regions: Vec::new() });
        }
    }

    fn block_end(&mut self, func: FnId, block: BlockId) {
        if self.pars > 0 {
            return;
        }
        if self.boxed.as_ref().is_some_and(|b| b.level == self.stmt_depth) {
            self.close_box();
        }
        let Some(scope) = self.scopes.pop() else { return };
        let result = match self.program.functions[func].blocks[block].result {
            Some(weft_core::Atom::Var(v)) => Some(v),
            _ => None,
        };
        let tail = self.tail();
        let mut kept = Vec::new();
        for (f, var, r) in scope.regions {
            if f == func && Some(var) == result {
                kept.push(r);
            } else {
                self.g.free(tail, r);
            }
        }
        if !kept.is_empty() {
            // A loop's previous result dies when the next iteration's result is made.
            for r in std::mem::replace(&mut self.escaped, kept) {
                self.g.free(tail, r);
            }
        }
    }

    fn par_begin(&mut self, kind: ParKind, n: usize) {
        let world = self.world();
        let graph_mode = !self.in_acc();
        let collapse = self.params.collapse.max(1);
        let budget_left = match &self.boxed {
            Some(b) => b.graph.nodes.len() < self.params.node_budget,
            None => self.g.nodes.len() < self.params.node_budget,
        };
        let (subs, blocks) = if graph_mode && n <= collapse && budget_left {
            (Some(Vec::with_capacity(n)), Vec::new())
        } else {
            let mut blocks = Vec::new();
            if graph_mode {
                self.collapsed += 1;
                match world {
                    World::Host => {
                        // Over the node budget: one block.
                        let levels = if budget_left { ceil_log2(collapse as u64) } else { 0 };
                        split_blocks(0, n, 0, levels, &mut blocks);
                    }
                    World::Device => {
                        let size = if budget_left { n.div_ceil(collapse).max(1) } else { n.max(1) };
                        let mut lo = 0;
                        while lo < n {
                            let len = size.min(n - lo);
                            blocks.push(Block { lo, len, work: 0, span: 0, max_iter_span: 0 });
                            lo += len;
                        }
                    }
                }
            } else {
                blocks.push(Block { lo: 0, len: n, work: 0, span: 0, max_iter_span: 0 });
            }
            (None, blocks)
        };
        self.pars += 1;
        self.frames.push(Frame::Par(Box::new(ParFrame {
            kind,
            world,
            n,
            next: 0,
            subs,
            blocks,
            graph_mode,
            iter_src: 0,
        })));
    }

    fn iter_begin(&mut self) {
        let Some(Frame::Par(p)) = self.frames.last_mut() else { return };
        if p.subs.is_some() {
            let g = match &mut self.boxed {
                Some(b) => &mut b.graph,
                None => &mut self.g,
            };
            let src = g.node("");
            if let Some(Frame::Par(p)) = self.frames.last_mut() {
                p.iter_src = src;
            }
            self.frames.push(Frame::Chain { tail: src });
        } else {
            self.frames.push(Frame::Acc { work: 0, span: 0 });
        }
    }

    fn iter_end(&mut self) {
        let Some(frame) = self.frames.pop() else { return };
        let Some(Frame::Par(p)) = self.frames.last_mut() else { return };
        let i = p.next;
        p.next += 1;
        match frame {
            Frame::Chain { tail, .. } => {
                if let Some(subs) = &mut p.subs {
                    subs.push(Sub { src: p.iter_src, sink: tail });
                }
            }
            Frame::Acc { work, span, .. } => {
                let Some(block) = p.blocks.iter_mut().rev().find(|b| b.lo <= i) else { return };
                let overhead = match p.world {
                    World::Host => 2 * leaf_depth(i - block.lo, block.len),
                    World::Device => 0,
                };
                block.work += work;
                block.span = block.span.max(span + overhead);
                block.max_iter_span = block.max_iter_span.max(span);
            }
            Frame::Par(_) => {}
        }
    }

    fn par_end(&mut self) {
        self.pars -= 1;
        let Some(Frame::Par(p)) = self.frames.pop() else { return };
        let p = *p;
        let host = p.world == World::Host;
        let n = p.n as u64;
        let mut max_iter_span = 0;
        if let Some(subs) = p.subs {
            // Graph mode, one sub-graph per iteration.
            let g = match &mut self.boxed {
                Some(b) => &mut b.graph,
                None => &mut self.g,
            };
            for s in &subs {
                max_iter_span = max_iter_span.max(sub_span(g, *s));
            }
            let sub = if host { g.par_tree(&subs) } else { g.par_nary(&subs, 0) };
            self.append_sub(sub);
        } else if p.graph_mode {
            let g = match &mut self.boxed {
                Some(b) => &mut b.graph,
                None => &mut self.g,
            };
            let mut subs = Vec::new();
            for b in &p.blocks {
                max_iter_span = max_iter_span.max(b.max_iter_span);
                let glue = if host && b.len > 0 { 4 * (b.len as u64 - 1) } else { 0 };
                let work = b.work + glue;
                let src = g.node("");
                let to = g.node(format!("{} iterations", b.len));
                g.add_edge(Edge {
                    from: src,
                    to,
                    kind: EdgeKind::Summary { count: b.len as u64 },
                    work,
                    span: b.span,
                    duration: work,
                    resource: Resource::Cpu,
                });
                subs.push(Sub { src, sink: to });
            }
            let sub = if host { block_tree(g, &subs, &p.blocks) } else { g.par_nary(&subs, 0) };
            self.append_sub(sub);
        } else {
            // Accumulator mode: one block for all iterations.
            let b = &p.blocks[0];
            max_iter_span = b.max_iter_span;
            let (work, span) =
                if host { (b.work + 4 * n.saturating_sub(1), b.span) } else { (b.work, b.span) };
            if let Some(Frame::Acc { work: w, span: s, .. }) = self.frames.last_mut() {
                *w += work;
                *s += span;
            }
        }
        if p.kind != ParKind::Map && n > 1 {
            let depth = ceil_log2(n) * max_iter_span.max(1);
            self.append(EdgeKind::Combine, 0, depth, || "combine".to_owned());
        }
    }
}

/// The longest path inside a sub-graph from its source (its nodes are reachable only
/// from it).
fn sub_span(g: &Graph, s: Sub) -> u64 {
    let mut dist: HashMap<NodeId, u64> = HashMap::default();
    dist.insert(s.src, 0);
    let mut stack = vec![s.src];
    let mut order = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    // Depth-first post-order for a topological order of the reachable part.
    fn visit(
        g: &Graph,
        v: NodeId,
        seen: &mut rustc_hash::FxHashSet<NodeId>,
        order: &mut Vec<NodeId>,
        stop: NodeId,
    ) {
        if !seen.insert(v) {
            return;
        }
        if v != stop {
            for &e in &g.out[v as usize] {
                visit(g, g.edges[e as usize].to, seen, order, stop);
            }
        }
        order.push(v);
    }
    stack.clear();
    visit(g, s.src, &mut seen, &mut order, s.sink);
    let mut best = 0;
    for &v in order.iter().rev() {
        let d = dist.get(&v).copied().unwrap_or(0);
        best = best.max(d);
        if v == s.sink {
            continue;
        }
        for &e in &g.out[v as usize] {
            let edge = &g.edges[e as usize];
            let entry = dist.entry(edge.to).or_insert(0);
            *entry = (*entry).max(d + edge.span);
        }
    }
    best
}

/// The fork tree over blocks made by `split_blocks` (same balanced split).
fn block_tree(g: &mut Graph, subs: &[Sub], blocks: &[Block]) -> Sub {
    fn build(g: &mut Graph, subs: &[Sub], blocks: &[Block], lo: usize, len: usize) -> Sub {
        if let Some(i) = blocks.iter().position(|b| b.lo == lo && b.len == len) {
            return subs[i];
        }
        let left = len.div_ceil(2);
        let l = build(g, subs, blocks, lo, left);
        let r = build(g, subs, blocks, lo + left, len - left);
        g.par(l, r)
    }
    let n: usize = blocks.iter().map(|b| b.len).sum();
    if blocks.is_empty() {
        return g.single("");
    }
    build(g, subs, blocks, 0, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(kernels: &[(&str, u64, u64)]) -> Calibrated {
        let link = Link(crate::profile::Transfer {
            bytes_per_s: 1e9,
            latency_s: 0.0,
            wall_bytes_per_s: 1e9,
            wall_latency_s: 0.0,
            curve: Vec::new(),
        });
        Calibrated {
            device: "test".into(),
            model: "test",
            kernels: kernels
                .iter()
                .map(|&(name, launches, ps)| KernelTime { name: name.into(), launches, ps })
                .collect(),
            idle: Vec::new(),
            host_unit_ps: 1000,
            upload: link.clone(),
            download: link,
            scalar_reads: 0,
        }
    }

    /// A graph of one chain of device boxes holding these kernels.
    fn boxes(held: &[&[&str]]) -> Graph {
        let mut g = Graph::new();
        let mut tail = g.node("start");
        for (index, kernels) in held.iter().enumerate() {
            let graph = Graph::new();
            let kernels = kernels.iter().map(|k| (*k).to_owned()).collect();
            g.boxes.push(DeviceBox { kernels, graph, work: 7, span: 3, time: 0 });
            let v = g.node("box");
            g.add_edge(Edge {
                from: tail,
                to: v,
                kind: EdgeKind::DeviceBox { index: index as u32 },
                work: 0,
                span: 0,
                duration: 0,
                resource: Resource::Gpu,
            });
            tail = v;
        }
        g
    }

    /// The boxes share each kernel's time of all its launches, whatever the number of
    /// boxes that hold it; a kernel in no box is returned, not lost.
    #[test]
    fn device_boxes_share_the_models_kernel_time() {
        let calibrated = model(&[("k1", 2, 100), ("k2", 1, 30), ("k3", 1, 7)]);
        let mut g = boxes(&[&["k1"], &["k1", "k2"], &["k1"], &["idle"]]);
        let unplaced = time_device_boxes(&mut g, &calibrated);
        assert_eq!(unplaced, vec!["k3".to_owned()]);
        let times: Vec<u64> = g.boxes.iter().map(|b| b.time).collect();
        assert_eq!(times, vec![33, 63, 33, 0]);
        // The edges carry the boxes' times as work, span and duration.
        for e in &g.edges {
            let EdgeKind::DeviceBox { index } = e.kind else { continue };
            let time = g.boxes[index as usize].time;
            assert_eq!((e.work, e.span, e.duration), (time, time, time));
        }
        let tail = Sub { src: 0, sink: (g.nodes.len() - 1) as NodeId };
        let end = unplaced_box(&mut g, tail, &calibrated, &unplaced);
        assert_eq!(g.boxes.last().map(|b| b.time), Some(7));
        assert_eq!(g.work(), 33 + 63 + 33 + 7, "the boxes sum to the model's time (to a ps)");
        assert_eq!(g.span(), g.work());
        assert_ne!(end.sink, tail.sink);
    }

    /// With a plan, the host's time is its statements' (labelled steps); the parallel
    /// structure of array statements outside the boxes takes none. Without a plan, every
    /// unit of work takes its time.
    #[test]
    fn host_steps_are_timed_by_statement_when_placed() {
        let build = || {
            let mut g = Graph::new();
            let a = g.single("start");
            let s = g.step(a, EdgeKind::Op, 1, "x = add");
            let l = g.edge_graph(5, "");
            let r = g.edge_graph(5, "");
            let p = g.par(l, r);
            g.seq(s, 0, p);
            g
        };
        let mut placed = build();
        weigh_host_in_time(&mut placed, 1000, true);
        assert_eq!(placed.units, Units::Picoseconds);
        assert_eq!(placed.work(), 1000);
        let mut host = build();
        weigh_host_in_time(&mut host, 1000, false);
        assert_eq!(host.work(), (1 + 5 + 5 + 4) * 1000);
    }
}
