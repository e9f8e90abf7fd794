//! Static costs of the generated code (docs/costs.md, "Static costs"): the imperative
//! IR of each kernel is counted into a [`weft_cost::model::Cost`] over the kernel's
//! parameters and NDRange, then each `Launch` of the host plan substitutes its
//! arguments (and the host's `let`s) to give formulas over the entry's input sizes.
//!
//! What is counted, per launch and all work-items together:
//!
//! - **work**: every operator, comparison, call and select evaluated (index
//!   arithmetic included; casts are free);
//! - **span**: the same along one work-item's path (a parallel loop contributes its
//!   share per unit, `⌈bound / units⌉` iterations);
//! - **accesses**: every load and store with its pointer's address space (the
//!   inference's, `crate::aspace`), element size, executions, and *stride*: how the
//!   index changes between neighbouring work-items (consecutive local ids). The
//!   stride is the derivative of the index with respect to the work-item, computed on
//!   affine expressions: `get_local_id(0)`, `get_global_id(0)` and the variables of
//!   `parfor@grid.0`/`parfor@thread` count 1; `parfor@group`, other dimensions, loop
//!   counters and parameters 0. `x / c` and `x % c` are taken as affine within runs of
//!   `c` lanes (`(x / c)' = 0` for a run-time `c`, `(x % c)' = x'`), a clamp (`min`,
//!   `max`, a select between a lane-varying and a uniform value) keeps the varying
//!   side's stride, and anything read from memory is irregular. Loads of one pointer
//!   at `base + 0 .. base + k-1` with stride `k` in the same block (four neighbouring
//!   elements per iteration) are one contiguous access: stride 1.
//!
//! Trip counts: `for` and `parfor` bounds are host expressions of the kernel's
//! parameters when the bound is computed from them (else the loop is counted once and
//! a note says so); a guard `if t < c` on the local id `t` runs `c / L` of the
//! work-group's items, `if t == 0` one of them; other `if`s count both branches (an
//! upper bound), except branches that only fail.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_cost::model::{
    self, Access, AtomicCount, Cost, Dir, EntryCost, Launch, MemSpace, Names, Special, Stride, add,
    ceil_div, div, max, mul, sum,
};
use weft_plan::{Arg, BinOp, Expr, Input, Output, ParamKind, Step, Var};

use crate::aspace::{PtrSpaces, Resolved, Space};
use crate::imp::{AtomicOp, CExpr, COp, Cmd, FParam, FuncImp, KernelImp, ParLevel, Sharing};

/// Host variables standing for a kernel's parameters and NDRange in its kernel-level
/// formulas start here.
const PSEUDO: u32 = 1 << 30;
const GLOBAL: u32 = PSEUDO + 100_000;
const LOCAL: u32 = PSEUDO + 100_100;

fn global_var(d: usize) -> Var {
    Var(GLOBAL + d as u32)
}

fn local_var(d: usize) -> Var {
    Var(LOCAL + d as u32)
}

/// The cost of one launch of `kernel`, over its parameters (variables named in the
/// returned [`Names`]) and its NDRange (`global0`, `local0`, ...). `spaces` gives the
/// inferred address spaces; without them, buffers are global, group arrays local and
/// a work-item's arrays private.
pub fn kernel_cost(
    kernel: &KernelImp,
    functions: &[FuncImp],
    spaces: Option<&PtrSpaces>,
    dims: usize,
) -> (Cost, Names) {
    let mut names = Names::default();
    let mut a = Analysis::new(functions);
    for (idx, (name, kind)) in kernel.params.iter().enumerate() {
        match kind {
            ParamKind::Scalar(_) => {
                let var = Var(PSEUDO + idx as u32);
                names.0.insert(var, name.clone());
                a.env.insert(Rc::from(name.as_str()), Info::uniform(Some(Expr::Var(var))));
            }
            ParamKind::Buffer(elem) => {
                let space = match spaces.and_then(|s| s.spaces.get(name)) {
                    Some(Resolved::Space(Space::Constant)) => MemSpace::Constant,
                    Some(Resolved::Space(Space::Local)) => MemSpace::Local,
                    Some(Resolved::Space(Space::Private)) => MemSpace::Private,
                    _ => MemSpace::Global,
                };
                a.ptrs.insert(Rc::from(name.as_str()), (space, elem.size_in_bytes() as u32));
            }
            ParamKind::Local(elem) => {
                a.ptrs.insert(
                    Rc::from(name.as_str()),
                    (MemSpace::Local, elem.size_in_bytes() as u32),
                );
            }
        }
    }
    let dims = dims.max(1);
    for d in 0..dims {
        names.0.insert(global_var(d), format!("global{d}"));
        names.0.insert(local_var(d), format!("local{d}"));
    }
    // A one-dimensional kernel written for a work-group size has that size.
    let local = |d: usize| match (dims, kernel.local_size) {
        (1, Some(size)) => Expr::I64(i64::from(size)),
        _ => Expr::Var(local_var(d)),
    };
    a.local = (0..dims).map(local).collect();
    a.dims = dims;
    // The NDRange rounded up to whole work-groups.
    let rounded: Vec<Expr> = (0..dims)
        .map(|d| {
            if kernel.local_size.is_some() {
                mul(ceil_div(Expr::Var(global_var(d)), local(d)), local(d))
            } else {
                Expr::Var(global_var(d))
            }
        })
        .collect();
    a.group_size = if kernel.local_size.is_some() {
        Some((0..dims).map(local).fold(Expr::I64(1), mul))
    } else {
        None
    };
    a.grid = rounded.clone();
    let items = rounded.iter().cloned().fold(Expr::I64(1), mul);
    let top: Vec<Factor> =
        rounded.iter().enumerate().map(|(d, g)| Factor::Dim(d, g.clone())).collect();
    let span = a.block(&kernel.body, &top);
    a.group_vectors();
    let special = Special::ALL
        .iter()
        .filter_map(|&class| {
            let counts: Vec<Expr> =
                a.special.iter().filter(|(c, _)| *c == class).map(|(_, n)| n.clone()).collect();
            (!counts.is_empty()).then(|| (class, sum(counts)))
        })
        .collect();
    let cost = Cost {
        items,
        work: sum(a.work),
        span,
        accesses: a.accesses.into_iter().map(|r| r.access).collect(),
        special,
        barriers: sum(a.barriers),
        atomics: a.atomics,
        notes: a.notes,
        lower_bound: a.lower_bound,
    };
    (cost, names)
}

/// The costs of an entry's kernels and launches (see the module docs).
#[expect(clippy::too_many_arguments, reason = "the parts of a lowered entry")]
pub fn entry_costs(
    entry: &str,
    kernels: &[KernelImp],
    functions: &[FuncImp],
    spaces: &[PtrSpaces],
    steps: &[Step],
    inputs: &[Input],
    outputs: &[Output],
    var_names: &[String],
) -> EntryCost {
    let mut names = Names::default();
    for (idx, name) in var_names.iter().enumerate() {
        names.0.insert(Var(idx as u32), name.clone());
    }
    let dims_of = launch_dims(steps);
    let per_kernel: Vec<(String, Cost, Names)> = kernels
        .iter()
        .enumerate()
        .map(|(idx, k)| {
            let (cost, names) = kernel_cost(
                k,
                functions,
                spaces.get(idx),
                dims_of.get(&(idx as u32)).copied().unwrap_or(1),
            );
            (k.name.clone(), cost, names)
        })
        .collect();
    let mut walk = PlanWalk {
        kernels,
        per_kernel: &per_kernel,
        defs: FxHashMap::default(),
        when: Vec::new(),
        repeat: Expr::I64(1),
        launches: Vec::new(),
        scalar_reads: Vec::new(),
        notes: Vec::new(),
        lower_bound: false,
    };
    walk.steps(steps);
    let (mut upload_bytes, mut uploads) = (Vec::new(), 0);
    for input in inputs {
        if let Input::Array { elem, dims, .. } = input {
            let elems = dims.iter().map(|d| Expr::Var(*d)).fold(Expr::I64(1), mul);
            upload_bytes.push(mul(elems, Expr::I64(elem.size_in_bytes() as i64)));
            uploads += 1;
        }
    }
    let (mut download_bytes, mut downloads) = (Vec::new(), 0);
    for output in outputs {
        if let Output::Array { elem, shape, .. } = output {
            let elems = shape.iter().map(|d| walk.resolve(d)).fold(Expr::I64(1), mul);
            download_bytes.push(mul(elems, Expr::I64(elem.size_in_bytes() as i64)));
            downloads += 1;
        }
    }
    EntryCost {
        entry: entry.to_owned(),
        names,
        kernels: per_kernel.clone(),
        launches: walk.launches,
        upload_bytes: sum(upload_bytes),
        uploads: Expr::I64(uploads),
        download_bytes: sum(download_bytes),
        downloads: Expr::I64(downloads),
        scalar_reads: sum(walk.scalar_reads),
        notes: walk.notes,
        lower_bound: walk.lower_bound,
    }
}

/// The profile strategies are chosen for when `Options::profile` is `None`: the
/// committed H100 profile (the project's target GPU).
pub fn default_profile() -> &'static weft_cost::profile::DeviceProfile {
    let profiles = weft_cost::profile::builtin_profiles();
    profiles.iter().find(|p| p.device.kind.eq_ignore_ascii_case("gpu")).unwrap_or(&profiles[0])
}

/// The kernel-level cost with a launch's NDRange and arguments substituted.
fn bind_launch(
    cost: &Cost,
    global: &[Expr],
    local: Option<&[Expr]>,
    args: &[Arg],
    resolve: &dyn Fn(&Expr) -> Expr,
) -> Cost {
    cost.substitute(&|var| {
        if var.0 >= LOCAL {
            let d = (var.0 - LOCAL) as usize;
            return Some(local.and_then(|l| l.get(d)).map_or(Expr::I64(1), resolve));
        }
        if var.0 >= GLOBAL {
            return global.get((var.0 - GLOBAL) as usize).map(resolve);
        }
        if var.0 >= PSEUDO {
            return match args.get((var.0 - PSEUDO) as usize)? {
                Arg::Scalar { value, .. } => Some(resolve(value)),
                _ => None,
            };
        }
        None
    })
}

/// Each kernel's NDRange dimensions, from its launches.
fn launch_dims(steps: &[Step]) -> FxHashMap<u32, usize> {
    let mut out = FxHashMap::default();
    let mut stack: Vec<&Step> = steps.iter().collect();
    while let Some(step) = stack.pop() {
        match step {
            Step::Launch { kernel, global, .. } => {
                out.insert(*kernel, global.len());
            }
            Step::If { then_steps, else_steps, .. } => {
                stack.extend(then_steps.iter().chain(else_steps))
            }
            Step::For { body, .. } => stack.extend(body),
            Step::While { cond_steps, body, .. } => stack.extend(cond_steps.iter().chain(body)),
            _ => {}
        }
    }
    out
}

struct PlanWalk<'a> {
    kernels: &'a [KernelImp],
    per_kernel: &'a [(String, Cost, Names)],
    /// Host `let`s seen so far, already resolved.
    defs: FxHashMap<Var, Expr>,
    when: Vec<Expr>,
    repeat: Expr,
    launches: Vec<Launch>,
    scalar_reads: Vec<Expr>,
    notes: Vec<String>,
    /// A host `while` loop was counted once.
    lower_bound: bool,
}

impl PlanWalk<'_> {
    fn resolve(&self, e: &Expr) -> Expr {
        model::subst(e, &|v| self.defs.get(&v).cloned())
    }

    fn steps(&mut self, steps: &[Step]) {
        for step in steps {
            match step {
                Step::Let { var, value } => {
                    let value = self.resolve(value);
                    self.defs.insert(*var, value);
                }
                Step::Read { var, .. } => {
                    self.defs.remove(var);
                    self.scalar_reads.push(self.repeat.clone());
                }
                Step::Launch { kernel, global, local, args } => {
                    let Some((name, cost, _)) = self.per_kernel.get(*kernel as usize) else {
                        continue;
                    };
                    let resolve = |e: &Expr| self.resolve(e);
                    let cost = bind_launch(cost, global, local.as_deref(), args, &resolve);
                    self.launches.push(Launch {
                        kernel: *kernel,
                        name: name.clone(),
                        when: self.when.clone(),
                        repeat: self.repeat.clone(),
                        cost,
                    });
                    let _ = self.kernels;
                }
                Step::If { cond, then_steps, else_steps } => {
                    let cond = self.resolve(cond);
                    self.when.push(cond.clone());
                    self.steps(then_steps);
                    self.when.pop();
                    self.when.push(Expr::Not(Box::new(cond)));
                    self.steps(else_steps);
                    self.when.pop();
                }
                Step::For { index, bound, body } => {
                    let saved = self.repeat.clone();
                    self.defs.remove(index);
                    self.repeat = mul(saved.clone(), self.resolve(bound));
                    self.steps(body);
                    self.repeat = saved;
                }
                Step::While { cond_steps, body, .. } => {
                    self.notes.push(
                        "a host `while` loop's launches are counted for one iteration".to_owned(),
                    );
                    self.lower_bound = true;
                    self.steps(cond_steps);
                    self.steps(body);
                }
                Step::Check { .. } | Step::Alloc { .. } | Step::Alias { .. } => {}
            }
        }
    }
}

/// How a value varies between neighbouring work-items.
#[derive(Debug, Clone, PartialEq)]
enum Lane {
    Uniform,
    /// Changes by this much per work-item.
    Affine(Expr),
    Irregular,
}

/// What the analysis knows of a variable of the kernel.
#[derive(Debug, Clone)]
struct Info {
    /// Its value as a host expression, when it is uniform and computable.
    value: Option<Expr>,
    lane: Lane,
    /// It holds `get_local_id(0)`.
    local_id: bool,
    /// It depends on which point of the parallel operation is computed (a work-group's
    /// or a grid work-item's index), so points read different addresses through it.
    point: bool,
    /// Its value for the first work-item (every id 0), when `value` is unknown.
    first: Option<Expr>,
}

impl Info {
    fn uniform(value: Option<Expr>) -> Info {
        Info { value, lane: Lane::Uniform, local_id: false, point: false, first: None }
    }
}

/// One dimension of the count of executions of a block: the product of the factors,
/// divided by the `Div`s.
#[derive(Debug, Clone)]
enum Factor {
    /// A dimension of the NDRange not yet distributed by a `parfor@grid`.
    Dim(usize, Expr),
    /// The work-items of a work-group, not yet distributed by a `parfor@thread`.
    GroupItems(Expr),
    Times(Expr),
    Div(Expr),
}

fn product(factors: &[Factor]) -> Expr {
    let (mut num_c, mut den_c) = (1i64, 1i64);
    let mut num = Expr::I64(1);
    let mut den = Expr::I64(1);
    for f in factors {
        match f {
            Factor::Dim(_, e) | Factor::GroupItems(e) | Factor::Times(e) => match e.as_int() {
                Some(c) => num_c = num_c.wrapping_mul(c),
                None => num = mul(num, e.clone()),
            },
            Factor::Div(e) => match e.as_int() {
                Some(c) if c != 0 => den_c = den_c.wrapping_mul(c),
                _ => den = mul(den, e.clone()),
            },
        }
    }
    let g = gcd(num_c, den_c);
    if g > 1 {
        num_c /= g;
        den_c /= g;
    }
    div(mul(Expr::I64(num_c), num), mul(Expr::I64(den_c), den))
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

trait AsInt {
    fn as_int(&self) -> Option<i64>;
}

impl AsInt for Expr {
    fn as_int(&self) -> Option<i64> {
        match self {
            Expr::I64(v) => Some(*v),
            _ => None,
        }
    }
}

struct Record {
    access: Access,
    block: usize,
    /// The index without its constant term, printed, and the constant.
    base: Option<(String, i64)>,
}

struct Analysis<'f> {
    functions: &'f [FuncImp],
    env: FxHashMap<Rc<str>, Info>,
    /// Pointer → space and element size.
    ptrs: FxHashMap<Rc<str>, (MemSpace, u32)>,
    /// A called function's pointer parameters → the caller's pointers.
    aliases: FxHashMap<Rc<str>, Rc<str>>,
    dims: usize,
    grid: Vec<Expr>,
    /// The work-group size per dimension.
    local: Vec<Expr>,
    group_size: Option<Expr>,
    work: Vec<Expr>,
    special: Vec<(Special, Expr)>,
    barriers: Vec<Expr>,
    atomics: Vec<AtomicCount>,
    accesses: Vec<Record>,
    notes: Vec<String>,
    /// A `while` loop was counted once: the cost is a lower bound.
    lower_bound: bool,
    blocks: usize,
    block: usize,
    depth: u32,
    /// Variables the enclosing `if`s bound from above (`if (x < n)`), innermost last:
    /// an atomic's destination size.
    upper_bounds: Vec<(Rc<str>, Expr)>,
}

impl<'f> Analysis<'f> {
    fn new(functions: &'f [FuncImp]) -> Self {
        Analysis {
            functions,
            env: FxHashMap::default(),
            ptrs: FxHashMap::default(),
            aliases: FxHashMap::default(),
            dims: 1,
            grid: Vec::new(),
            local: Vec::new(),
            group_size: None,
            work: Vec::new(),
            special: Vec::new(),
            barriers: Vec::new(),
            atomics: Vec::new(),
            accesses: Vec::new(),
            notes: Vec::new(),
            lower_bound: false,
            blocks: 0,
            block: 0,
            depth: 0,
            upper_bounds: Vec::new(),
        }
    }

    fn note(&mut self, note: &str) {
        if !self.notes.iter().any(|n| n == note) {
            self.notes.push(note.to_owned());
        }
    }

    /// Counts a block executed `factors` times per launch; returns its span.
    fn block(&mut self, cmds: &[Cmd], factors: &[Factor]) -> Expr {
        let saved = self.block;
        self.blocks += 1;
        self.block = self.blocks;
        let count = product(factors);
        let mut span = Vec::new();
        for cmd in cmds {
            span.push(self.cmd(cmd, factors, &count));
        }
        self.block = saved;
        sum(span)
    }

    fn cmd(&mut self, cmd: &Cmd, factors: &[Factor], count: &Expr) -> Expr {
        match cmd {
            Cmd::Decl { name, init, .. } => {
                let ops = init.as_ref().map_or(Expr::I64(0), |e| self.expr(e, count));
                let info = match init {
                    Some(e) => self.info(e),
                    None => Info::uniform(None),
                };
                self.env.insert(name.clone(), info);
                ops
            }
            Cmd::Assign { name, value } => {
                let ops = self.expr(value, count);
                let info = self.info(value);
                self.env.insert(name.clone(), info);
                ops
            }
            Cmd::Array { name, elem, sharing, .. } => {
                let space = match sharing {
                    Sharing::WorkGroup => MemSpace::Local,
                    Sharing::WorkItem => MemSpace::Private,
                };
                self.ptrs.insert(name.clone(), (space, elem.size_in_bytes() as u32));
                Expr::I64(0)
            }
            Cmd::Store { ptr, index, value } => {
                let ops = add(self.expr(index, count), self.expr(value, count));
                self.access(ptr, index, Dir::Write, count);
                ops
            }
            Cmd::Atomic { op, elem, ptr, index, value, fetch } => {
                // Charged as whole updates at the measured atomic rates (contention by
                // the destination's size), not as a read and a write.
                let ops = add(self.expr(index, count), self.expr(value, count));
                let ptr = self.resolve_ptr(ptr);
                let space = self.ptrs.get(&ptr).map_or(MemSpace::Global, |p| p.0);
                self.atomics.push(AtomicCount {
                    ptr: ptr.to_string(),
                    space,
                    float: *op == AtomicOp::Add && elem.is_float(),
                    count: count.clone(),
                    bins: self.clamp_bound(index),
                });
                if let Some(name) = fetch {
                    // What comes back is like a load of the element.
                    let info = self.info(&CExpr::load(&ptr, index.clone()));
                    self.env.insert(name.clone(), info);
                }
                ops
            }
            Cmd::If { cond, then_cmds, else_cmds } => {
                let ops = self.expr(cond, count);
                let fails = |cmds: &[Cmd]| {
                    cmds.iter().all(|c| matches!(c, Cmd::Fail { .. } | Cmd::Comment(_)))
                };
                let (then_f, else_f) = match self.guard(cond) {
                    Some((part, whole)) => (
                        with(factors, [Factor::Times(part.clone()), Factor::Div(whole.clone())]),
                        with(
                            factors,
                            [
                                Factor::Times(Expr::bin(BinOp::Sub, whole.clone(), part)),
                                Factor::Div(whole),
                            ],
                        ),
                    ),
                    None => (factors.to_vec(), factors.to_vec()),
                };
                let bounded = self.upper_bounds.len();
                self.collect_upper_bounds(cond);
                let t =
                    if fails(then_cmds) { Expr::I64(0) } else { self.block(then_cmds, &then_f) };
                self.upper_bounds.truncate(bounded);
                let e =
                    if fails(else_cmds) { Expr::I64(0) } else { self.block(else_cmds, &else_f) };
                let longer = match (t.as_int(), e.as_int()) {
                    (_, Some(0)) => t,
                    (Some(0), _) => e,
                    _ => max(t, e),
                };
                add(ops, longer)
            }
            Cmd::For { var, bound, body, .. } => {
                let ops = self.expr(bound, count);
                let trip = self.trip(bound);
                self.env.insert(var.clone(), Info::uniform(None));
                let bounded = self.upper_bounds.len();
                if let Some(n) = self.host(bound) {
                    self.upper_bounds.push((var.clone(), n));
                }
                let inner = self.block(body, &with(factors, [Factor::Times(trip.clone())]));
                self.upper_bounds.truncate(bounded);
                add(ops, mul(trip, add(inner, Expr::I64(2))))
            }
            Cmd::ParFor { level, var, bound, body, .. } => {
                let ops = self.expr(bound, count);
                let trip = self.trip(bound);
                let (inner, units, lane) = match level {
                    ParLevel::Grid(d) | ParLevel::GridCovered(d) => {
                        let d = *d as usize;
                        let units = self.grid.get(d).cloned().unwrap_or(Expr::I64(1));
                        let mut f: Vec<Factor> = factors
                            .iter()
                            .filter(|f| !matches!(f, Factor::Dim(e, _) if *e == d))
                            .cloned()
                            .collect();
                        f.push(Factor::Times(trip.clone()));
                        let lane = if d == 0 { Lane::Affine(Expr::I64(1)) } else { Lane::Uniform };
                        (f, units, lane)
                    }
                    ParLevel::Group => {
                        let size = self.group_size.clone().unwrap_or(Expr::I64(1));
                        let groups =
                            div(self.grid.iter().cloned().fold(Expr::I64(1), mul), size.clone());
                        let mut f: Vec<Factor> = factors
                            .iter()
                            .filter(|f| !matches!(f, Factor::Dim(..)))
                            .cloned()
                            .collect();
                        f.push(Factor::Times(trip.clone()));
                        f.push(Factor::GroupItems(size));
                        (f, groups, Lane::Uniform)
                    }
                    ParLevel::Thread => {
                        let size = self.group_size.clone().unwrap_or(Expr::I64(1));
                        let mut f: Vec<Factor> =
                            if factors.iter().any(|f| matches!(f, Factor::GroupItems(_))) {
                                factors
                                    .iter()
                                    .filter(|f| !matches!(f, Factor::GroupItems(_)))
                                    .cloned()
                                    .collect()
                            } else {
                                // A thread loop of every work-group: the groups times the trip.
                                let mut f: Vec<Factor> = factors
                                    .iter()
                                    .filter(|f| !matches!(f, Factor::Dim(..)))
                                    .cloned()
                                    .collect();
                                let items = self.grid.iter().cloned().fold(Expr::I64(1), mul);
                                f.push(Factor::Times(div(items, size.clone())));
                                f
                            };
                        f.push(Factor::Times(trip.clone()));
                        (f, size, Lane::Affine(Expr::I64(1)))
                    }
                };
                // The grid's and the groups' loops go over points; a thread loop splits
                // one point's work.
                let point = !matches!(level, ParLevel::Thread);
                // The first work-item's first iteration is at 0.
                let info =
                    Info { value: None, lane, local_id: false, point, first: Some(Expr::I64(0)) };
                self.env.insert(var.clone(), info);
                let bounded = self.upper_bounds.len();
                if let Some(n) = self.host(bound) {
                    self.upper_bounds.push((var.clone(), n));
                }
                let body_span = self.block(body, &inner);
                self.upper_bounds.truncate(bounded);
                add(
                    ops,
                    mul(ceil_div(trip, max(units, Expr::I64(1))), add(body_span, Expr::I64(2))),
                )
            }
            Cmd::While { cond_cmds, cond, body } => {
                self.note("a `while` loop is counted for one iteration");
                self.lower_bound = true;
                let a = self.block(cond_cmds, factors);
                let b = self.expr(cond, count);
                let c = self.block(body, factors);
                add(add(a, b), c)
            }
            Cmd::Return(value) => self.expr(value, count),
            Cmd::VectorLoad { lanes, load, .. } => {
                // `load` is the first lane's element; the others follow it.
                let ops = self.expr(load, count);
                if let CExpr::Load(ptr, index) = load {
                    for lane in 1..lanes.len() {
                        let at = CExpr::add((**index).clone(), CExpr::Int(lane as i64));
                        self.access(ptr, &at, Dir::Read, count);
                    }
                }
                let info = self.info(load);
                for lane in lanes {
                    self.env.insert(lane.clone(), info.clone());
                }
                ops
            }
            Cmd::Barrier => {
                // Once per work-group: the work-items' executions over the group size.
                let size = self.group_size.clone().unwrap_or(Expr::Var(local_var(0)));
                self.barriers.push(div(count.clone(), size));
                Expr::I64(0)
            }
            Cmd::Fail { .. } | Cmd::Comment(_) | Cmd::Exit | Cmd::Unroll => Expr::I64(0),
        }
    }

    /// `if t < c` or `if t == 0` on the local id: (items that take it, group size).
    fn guard(&self, cond: &CExpr) -> Option<(Expr, Expr)> {
        let size = self.group_size.clone()?;
        let CExpr::Bin(op, a, b) = cond else { return None };
        let CExpr::Var(t) = &**a else { return None };
        if !self.env.get(t).is_some_and(|i| i.local_id) {
            return None;
        }
        match op {
            COp::Lt => {
                let c = self.host(b)?;
                let part = match (c.as_int(), size.as_int()) {
                    (Some(c), Some(l)) => Expr::I64(c.clamp(0, l)),
                    _ => Expr::bin(BinOp::Min, c, size.clone()),
                };
                Some((part, size))
            }
            COp::Eq if b.as_int() == Some(0) => Some((Expr::I64(1), size)),
            _ => None,
        }
    }

    /// A loop's trip count as a host expression: a bound that depends on the work-item
    /// (a work-group's items striding over a row, a work-item's run of points clipped at
    /// the end) is the first work-item's, the longest; 1, with a note, when unknown.
    fn trip(&mut self, bound: &CExpr) -> Expr {
        match self.host(bound).or_else(|| self.host_first(bound)) {
            Some(e) => e,
            None => {
                self.note("a loop bound computed from data is counted as one iteration");
                Expr::I64(1)
            }
        }
    }

    /// The conjuncts `x < n` of a condition, `n` a host expression, as upper bounds.
    fn collect_upper_bounds(&mut self, cond: &CExpr) {
        match cond {
            CExpr::Bin(COp::And, a, b) => {
                self.collect_upper_bounds(a);
                self.collect_upper_bounds(b);
            }
            CExpr::Bin(COp::Lt, x, n) => {
                if let (CExpr::Var(x), Some(n)) = (&**x, self.host(n)) {
                    self.upper_bounds.push((x.clone(), n));
                }
            }
            _ => {}
        }
    }

    /// The number of elements an index ranges over, when known: a variable an enclosing
    /// `if (x < n)` bounds (`n`), or a clamp `max(min(i, n - 1), 0)` (`n`).
    fn clamp_bound(&self, index: &CExpr) -> Option<Expr> {
        let inner = match index {
            CExpr::Cast(_, inner) => inner,
            other => other,
        };
        if let CExpr::Var(x) = inner {
            let bound = self.upper_bounds.iter().rev().find(|(y, _)| y == x);
            return bound.map(|(_, n)| n.clone());
        }
        let CExpr::Call(name, args) = inner else { return None };
        let high = match (&**name, args.as_slice()) {
            ("max", [CExpr::Call(min, min_args), _]) if &**min == "min" => min_args.get(1)?,
            ("min", [_, high]) => high,
            _ => return None,
        };
        Some(add(self.host(high)?, Expr::I64(1)))
    }

    /// Counts an expression evaluated `count` times: its loads as accesses; returns
    /// its operations (and adds them to the work).
    fn expr(&mut self, e: &CExpr, count: &Expr) -> Expr {
        let ops = self.ops(e, count);
        self.work.push(mul(count.clone(), ops.clone()));
        ops
    }

    fn ops(&mut self, e: &CExpr, count: &Expr) -> Expr {
        match e {
            CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_) => Expr::I64(0),
            CExpr::Bin(op, a, b) => {
                // A division by a constant compiles to multiplications and shifts.
                if matches!(op, COp::Div | COp::Rem) && b.as_int().is_none() {
                    self.special.push((Special::Div, count.clone()));
                }
                add(Expr::I64(1), add(self.ops(a, count), self.ops(b, count)))
            }
            CExpr::Not(a) | CExpr::Neg(a) => add(Expr::I64(1), self.ops(a, count)),
            CExpr::Cast(_, a) => self.ops(a, count),
            CExpr::Call(name, args) => {
                for &class in special_classes(name) {
                    self.special.push((class, count.clone()));
                }
                let mut ops = Expr::I64(1);
                for a in args {
                    ops = add(ops, self.ops(a, count));
                }
                ops
            }
            CExpr::Select(c, a, b) => {
                let ops = add(self.ops(c, count), add(self.ops(a, count), self.ops(b, count)));
                add(Expr::I64(1), ops)
            }
            CExpr::Load(ptr, index) => {
                let ops = self.ops(index, count);
                self.access(ptr, index, Dir::Read, count);
                ops
            }
            CExpr::Invoke { func, args, .. } => {
                let mut ops = Expr::I64(1);
                for a in args {
                    ops = add(ops, self.ops(a, count));
                }
                add(ops, self.invoke(*func, args, count))
            }
        }
    }

    /// Inlines a call of a generated function into the counts; returns its span.
    fn invoke(&mut self, func: u32, args: &[CExpr], count: &Expr) -> Expr {
        let Some(f) = self.functions.get(func as usize) else { return Expr::I64(0) };
        if self.depth > 16 {
            return Expr::I64(0);
        }
        let mut env = FxHashMap::default();
        let mut aliases = FxHashMap::default();
        let mut ptrs = self.ptrs.clone();
        for (param, arg) in f.params.iter().zip(args) {
            match param {
                FParam::Ptr { name, elem, .. } => {
                    if let CExpr::Var(p) = arg {
                        aliases.insert(Rc::from(name.as_str()), self.resolve_ptr(p));
                    } else {
                        ptrs.insert(
                            Rc::from(name.as_str()),
                            (MemSpace::Global, elem.size_in_bytes() as u32),
                        );
                    }
                }
                FParam::Scalar { name, .. } => {
                    env.insert(Rc::from(name.as_str()), self.info(arg));
                }
            }
        }
        let saved_env = std::mem::replace(&mut self.env, env);
        let saved_aliases = std::mem::replace(&mut self.aliases, aliases);
        let saved_ptrs = std::mem::replace(&mut self.ptrs, ptrs);
        self.depth += 1;
        let factors = [Factor::Times(count.clone())];
        let span = self.block(&f.body, &factors);
        self.depth -= 1;
        self.env = saved_env;
        self.aliases = saved_aliases;
        self.ptrs = saved_ptrs;
        span
    }

    fn resolve_ptr(&self, p: &Rc<str>) -> Rc<str> {
        self.aliases.get(p).cloned().unwrap_or_else(|| p.clone())
    }

    fn access(&mut self, ptr: &Rc<str>, index: &CExpr, dir: Dir, count: &Expr) {
        let ptr = self.resolve_ptr(ptr);
        let (space, elem_bytes) = self.ptrs.get(&ptr).copied().unwrap_or((MemSpace::Global, 4));
        let stride = match self.lane(index) {
            Lane::Uniform => Stride::Uniform,
            Lane::Affine(e) => Stride::Elems(e),
            Lane::Irregular => Stride::Irregular,
        };
        let base = split_constant(index);
        // Every point reads the same addresses: after the first, a cache serves them.
        let reused = dir == Dir::Read && !self.mentions_point(index);
        self.accesses.push(Record {
            access: Access {
                ptr: ptr.to_string(),
                space,
                dir,
                elem_bytes,
                count: count.clone(),
                stride,
                reused,
            },
            block: self.block,
            base,
        });
    }

    /// Loads of one pointer at `base + 0 .. base + k-1`, each of stride `k`, in the
    /// same block: together contiguous, so stride 1.
    fn group_vectors(&mut self) {
        let mut groups: FxHashMap<(usize, String, String, i64), Vec<usize>> = FxHashMap::default();
        for (idx, r) in self.accesses.iter().enumerate() {
            let (Some((base, _)), Stride::Elems(Expr::I64(k))) = (&r.base, &r.access.stride) else {
                continue;
            };
            if *k > 1 {
                groups
                    .entry((r.block, r.access.ptr.clone(), base.clone(), *k))
                    .or_default()
                    .push(idx);
            }
        }
        for ((_, _, _, k), members) in groups {
            let mut offsets: Vec<i64> = members
                .iter()
                .filter_map(|&i| self.accesses[i].base.as_ref().map(|b| b.1))
                .collect();
            offsets.sort_unstable();
            offsets.dedup();
            let first = offsets.first().copied().unwrap_or(0);
            let covers = offsets.len() as i64 == k
                && offsets.iter().enumerate().all(|(i, o)| *o == first + i as i64);
            if covers {
                for i in members {
                    self.accesses[i].access.stride = Stride::Elems(Expr::I64(1));
                }
            }
        }
    }

    fn info(&self, e: &CExpr) -> Info {
        let lane = self.lane(e);
        let value = if lane == Lane::Uniform { self.host(e) } else { None };
        let local_id = match e {
            CExpr::Cast(_, inner) => is_local_id(inner),
            other => is_local_id(other),
        };
        let first = if value.is_none() { self.host_first(e) } else { None };
        Info { value, lane, local_id, point: self.mentions_point(e), first }
    }

    /// Whether `e` depends on which point is computed (see [`Info::point`]).
    fn mentions_point(&self, e: &CExpr) -> bool {
        match e {
            CExpr::Var(name) => self.env.get(name).is_some_and(|i| i.point),
            CExpr::Int(_) | CExpr::Lit(_) => false,
            CExpr::Bin(_, a, b) => self.mentions_point(a) || self.mentions_point(b),
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => self.mentions_point(a),
            CExpr::Select(c, a, b) => {
                self.mentions_point(c) || self.mentions_point(a) || self.mentions_point(b)
            }
            CExpr::Load(_, index) => self.mentions_point(index),
            CExpr::Call(name, args) => {
                matches!(&**name, "get_group_id" | "get_global_id")
                    || args.iter().any(|a| self.mentions_point(a))
            }
            CExpr::Invoke { args, .. } => args.iter().any(|a| self.mentions_point(a)),
        }
    }

    /// The value `e` has for the first work-item (every id 0), as a host expression.
    fn host_first(&self, e: &CExpr) -> Option<Expr> {
        self.host_at(e, true)
    }

    /// The value of a uniform expression as a host expression (see also
    /// [`Analysis::host_first`]).
    fn host(&self, e: &CExpr) -> Option<Expr> {
        self.host_at(e, false)
    }

    /// [`Analysis::host`]; `first`: for the first work-item, every id 0.
    fn host_at(&self, e: &CExpr, first: bool) -> Option<Expr> {
        Some(match e {
            CExpr::Var(name) => {
                let info = self.env.get(name)?;
                match (&info.value, &info.first) {
                    (Some(value), _) => value.clone(),
                    (None, Some(at_first)) if first => at_first.clone(),
                    _ => return None,
                }
            }
            CExpr::Int(v) => Expr::I64(*v),
            CExpr::Bin(op, a, b) => {
                let (a, b) = (self.host_at(a, first)?, self.host_at(b, first)?);
                match op {
                    COp::Add => add(a, b),
                    COp::Mul => mul(a, b),
                    COp::Div => div(a, b),
                    _ => Expr::bin(host_op(*op)?, a, b),
                }
            }
            CExpr::Neg(a) => Expr::Neg(Box::new(self.host_at(a, first)?)),
            CExpr::Not(a) => Expr::Not(Box::new(self.host_at(a, first)?)),
            CExpr::Cast(_, a) => self.host_at(a, first)?,
            CExpr::Select(c, a, b) => Expr::Select(
                Box::new(self.host_at(c, first)?),
                Box::new(self.host_at(a, first)?),
                Box::new(self.host_at(b, first)?),
            ),
            CExpr::Call(name, args) => match (&**name, args.as_slice()) {
                ("min", [a, b]) => {
                    Expr::bin(BinOp::Min, self.host_at(a, first)?, self.host_at(b, first)?)
                }
                ("max", [a, b]) => max(self.host_at(a, first)?, self.host_at(b, first)?),
                ("get_local_size", [d]) => {
                    self.local.get(usize::try_from(d.as_int()?).ok()?)?.clone()
                }
                // In trip counts every work-group is taken as a full one: the first.
                ("get_group_id", [_]) => Expr::I64(0),
                ("get_local_id" | "get_global_id", [_]) if first => Expr::I64(0),
                ("get_global_size", [d]) => {
                    self.grid.get(usize::try_from(d.as_int()?).ok()?)?.clone()
                }
                ("get_num_groups", [d]) => {
                    let d = usize::try_from(d.as_int()?).ok()?;
                    div(self.grid.get(d)?.clone(), self.local.get(d)?.clone())
                }
                _ => return None,
            },
            CExpr::Lit(_) | CExpr::Load(..) | CExpr::Invoke { .. } => return None,
        })
    }

    /// How `e` changes between neighbouring work-items.
    fn lane(&self, e: &CExpr) -> Lane {
        match e {
            CExpr::Var(name) => self.env.get(name).map_or(Lane::Uniform, |i| i.lane.clone()),
            CExpr::Int(_) | CExpr::Lit(_) => Lane::Uniform,
            CExpr::Cast(_, a) => self.lane(a),
            CExpr::Neg(a) => match self.lane(a) {
                Lane::Affine(s) => Lane::Affine(Expr::Neg(Box::new(s))),
                other => other,
            },
            CExpr::Not(a) => match self.lane(a) {
                Lane::Uniform => Lane::Uniform,
                _ => Lane::Irregular,
            },
            CExpr::Bin(op, a, b) => {
                let (la, lb) = (self.lane(a), self.lane(b));
                match (op, la, lb) {
                    (_, Lane::Uniform, Lane::Uniform) => Lane::Uniform,
                    (_, Lane::Irregular, _) | (_, _, Lane::Irregular) => Lane::Irregular,
                    (COp::Add, Lane::Affine(x), Lane::Uniform)
                    | (COp::Add, Lane::Uniform, Lane::Affine(x))
                    | (COp::Sub, Lane::Affine(x), Lane::Uniform) => Lane::Affine(x),
                    (COp::Sub, Lane::Uniform, Lane::Affine(x)) => {
                        Lane::Affine(Expr::Neg(Box::new(x)))
                    }
                    (COp::Add, Lane::Affine(x), Lane::Affine(y)) => Lane::Affine(add(x, y)),
                    (COp::Sub, Lane::Affine(x), Lane::Affine(y)) => {
                        Lane::Affine(Expr::bin(BinOp::Sub, x, y))
                    }
                    (COp::Mul, Lane::Affine(x), Lane::Uniform) => {
                        self.host(b).map_or(Lane::Irregular, |k| Lane::Affine(mul(x, k)))
                    }
                    (COp::Mul, Lane::Uniform, Lane::Affine(x)) => {
                        self.host(a).map_or(Lane::Irregular, |k| Lane::Affine(mul(k, x)))
                    }
                    (COp::Div, Lane::Affine(x), Lane::Uniform) => match (x.clone(), b.as_int()) {
                        (Expr::I64(s), Some(c)) if c != 0 && s % c == 0 => {
                            Lane::Affine(Expr::I64(s / c))
                        }
                        _ => Lane::Uniform,
                    },
                    (COp::Rem, Lane::Affine(x), Lane::Uniform) => Lane::Affine(x),
                    _ => Lane::Irregular,
                }
            }
            CExpr::Call(name, args) => match (&**name, args.as_slice()) {
                ("get_local_id" | "get_global_id", [d]) => {
                    if d.as_int() == Some(0) {
                        Lane::Affine(Expr::I64(1))
                    } else {
                        Lane::Uniform
                    }
                }
                ("min" | "max", [a, b]) => clamp(self.lane(a), self.lane(b)),
                _ => {
                    if args.iter().all(|a| self.lane(a) == Lane::Uniform) {
                        Lane::Uniform
                    } else {
                        Lane::Irregular
                    }
                }
            },
            CExpr::Select(c, a, b) => {
                let (lc, la, lb) = (self.lane(c), self.lane(a), self.lane(b));
                if lc == Lane::Uniform && la == lb { la } else { clamp(la, lb) }
            }
            CExpr::Load(_, index) => match self.lane(index) {
                Lane::Uniform => Lane::Uniform,
                _ => Lane::Irregular,
            },
            CExpr::Invoke { args, .. } => {
                if args.iter().all(|a| self.lane(a) == Lane::Uniform) {
                    Lane::Uniform
                } else {
                    Lane::Irregular
                }
            }
        }
    }
}

/// `min`/`max`/select of a varying and a uniform value: the varying side's stride.
/// The special operations a call of a built-in or runtime function does (`pow` is an
/// exponential of a logarithm); none for the cheap ones.
fn special_classes(name: &str) -> &'static [Special] {
    match name {
        "sqrt" | "rsqrt" | "cbrt" | "hypot" => &[Special::Sqrt],
        "exp" | "exp2" | "exp10" | "expm1" | "tanh" | "sinh" | "cosh" => &[Special::Exp],
        "log" | "log2" | "log10" | "log1p" => &[Special::Log],
        "pow" | "powr" | "pown" => &[Special::Exp, Special::Log],
        "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sincos" => &[Special::Trig],
        "fmod" | "remainder" => &[Special::Div],
        _ if name.starts_with("weft_div_") || name.starts_with("weft_rem_") => &[Special::Div],
        _ => &[],
    }
}

fn clamp(a: Lane, b: Lane) -> Lane {
    match (a, b) {
        (Lane::Uniform, Lane::Uniform) => Lane::Uniform,
        (Lane::Affine(x), Lane::Uniform) | (Lane::Uniform, Lane::Affine(x)) => Lane::Affine(x),
        (Lane::Affine(x), Lane::Affine(y)) if x == y => Lane::Affine(x),
        _ => Lane::Irregular,
    }
}

fn is_local_id(e: &CExpr) -> bool {
    matches!(e, CExpr::Call(name, args) if &**name == "get_local_id" && args.first().and_then(CExpr::as_int) == Some(0))
}

fn with<const N: usize>(factors: &[Factor], more: [Factor; N]) -> Vec<Factor> {
    let mut out = factors.to_vec();
    out.extend(more);
    out
}

fn host_op(op: COp) -> Option<BinOp> {
    Some(match op {
        COp::Add => BinOp::Add,
        COp::Sub => BinOp::Sub,
        COp::Mul => BinOp::Mul,
        COp::Div => BinOp::Div,
        COp::Rem => BinOp::Rem,
        COp::Eq => BinOp::Eq,
        COp::Ne => BinOp::Ne,
        COp::Lt => BinOp::Lt,
        COp::Le => BinOp::Le,
        COp::Gt => BinOp::Gt,
        COp::Ge => BinOp::Ge,
        COp::And => BinOp::And,
        COp::Or => BinOp::Or,
        COp::BitAnd | COp::BitOr | COp::BitXor | COp::Shl | COp::Shr => return None,
    })
}

/// An index as `rest + constant`: the non-constant terms printed in order, and the
/// constant.
fn split_constant(e: &CExpr) -> Option<(String, i64)> {
    fn terms(e: &CExpr, out: &mut Vec<String>, constant: &mut i64) {
        match e {
            CExpr::Bin(COp::Add, a, b) => {
                terms(a, out, constant);
                terms(b, out, constant);
            }
            CExpr::Bin(COp::Sub, a, b) if b.as_int().is_some() => {
                terms(a, out, constant);
                *constant -= b.as_int().unwrap_or(0);
            }
            CExpr::Int(v) => *constant += v,
            other => out.push(other.to_string()),
        }
    }
    let mut out = Vec::new();
    let mut constant = 0;
    terms(e, &mut out, &mut constant);
    out.sort();
    Some((out.join(" + "), constant))
}
