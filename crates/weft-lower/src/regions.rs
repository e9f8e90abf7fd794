//! Regions (seed 002 §4, "for our compiler"): every array the host plan materialises
//! lives in a region with a *world* (the host's memory or the device's global memory),
//! a size (symbolic, in the source's size names) and a lifetime; moving data between
//! the worlds is an explicit [`Transfer`].
//!
//! The analysis runs over the plan's steps, numbered in program order (a step inside
//! an `if` or a loop body has its own number; uploads happen before step 1 and the
//! results are read after the last step):
//!
//! - each array input is two regions: the caller's copy on the host, and the device
//!   buffer it is uploaded into (a host → device transfer before step 1);
//! - each `Alloc` is a device region, named after the binding or what the lowering made
//!   it for (`partial` sums, a `result` copy), with the source expression whose value
//!   it holds;
//! - each array result is a host region filled by a device → host transfer after the
//!   last step; each `Read` of one element (a scalar that a size or control flow needs)
//!   is a device → host transfer of that element;
//! - a region is live from its allocation to its last use, where a buffer variable
//!   uses every region it may refer to (`Alias` steps are followed flow-insensitively,
//!   which is exact for straight-line plans and an over-approximation through loop
//!   slots); a use inside a loop that the region was allocated before keeps it live to
//!   the end of the loop. The source lines of a lifetime are those of the expressions
//!   the kernels using the region compute (`KernelImp::origins`) and of its own
//!   expression.
//!
//! Sizes are the allocation lengths with the plan's host arithmetic (`Let` steps that
//! define a variable once) substituted and normalised as [`weft_size::Size`]
//! polynomials; a size that is not a polynomial (a `min`, a value read from the
//! device) keeps the part it cannot express as an opaque `(…)` term or a name.

use std::fmt::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::Origin;
use weft_plan::{Arg, BinOp, Elem, Expr, Input, Output, Step, Var};
use weft_size::Size;

use crate::imp::KernelImp;

/// Where a region's memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum World {
    Host,
    Device,
}

impl World {
    pub fn name(self) -> &'static str {
        match self {
            World::Host => "host",
            World::Device => "device",
        }
    }
}

/// Why a region exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegionKind {
    /// An array input, as the caller passes it (host) or uploaded (device).
    Input,
    /// A buffer the plan allocates.
    Alloc,
    /// An array result, read back to the host.
    Result,
}

/// A step number: 0 is before the first step (uploads), `n_steps + 1` after the last
/// (read-backs).
pub type StepNo = u32;

/// One region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// `r0`, `r1`, … in order of creation.
    pub id: u32,
    /// The source binding or input it holds, or what the lowering made it for.
    pub name: String,
    pub world: World,
    pub kind: RegionKind,
    pub elem: Elem,
    /// Element count, in the source's size names (`n*m`).
    pub len: String,
    /// Bytes (`4*n*m`).
    pub bytes: String,
    /// The bytes when they are a constant.
    pub const_bytes: Option<i64>,
    /// The source expression whose value it holds, when known.
    pub origin: Option<Origin>,
    /// The host variable of a device region's buffer.
    pub var: Option<Var>,
    /// Live from `live.0` to `live.1` (step numbers, inclusive).
    pub live: (StepNo, StepNo),
    /// The source expressions computed by kernels that use the region while it is
    /// live (for its lifetime in source lines).
    pub used_by: Vec<Origin>,
    /// The names of those kernels, in launch order.
    pub kernels: Vec<String>,
}

/// Which way a transfer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
}

/// A copy between the worlds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub direction: Direction,
    /// The step it happens at (0: before the first step; `n_steps + 1`: after the last).
    pub step: StepNo,
    /// The source region (a region id).
    pub from: u32,
    /// The target region, when the transfer fills one (a read of one element for the
    /// host's control flow fills a host scalar).
    pub to: Option<u32>,
    /// Bytes moved (`4*n`, `8`).
    pub bytes: String,
    pub why: String,
}

/// The regions and transfers of one entry's plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Regions {
    pub entry: String,
    pub regions: Vec<Region>,
    pub transfers: Vec<Transfer>,
    /// The number of steps (the last step number).
    pub n_steps: StepNo,
}

/// What the analysis reads of a lowered entry.
pub struct PlanView<'a> {
    pub steps: &'a [Step],
    pub inputs: &'a [Input],
    pub input_names: &'a [String],
    pub outputs: &'a [Output],
    pub kernels: &'a [KernelImp],
    pub var_names: &'a [String],
    pub buffer_origins: &'a FxHashMap<Var, Origin>,
}

/// A step in program order, with the loops around it.
struct Flat<'a> {
    step: &'a Step,
    no: StepNo,
}

fn flatten<'a>(steps: &'a [Step], out: &mut Vec<Flat<'a>>, loops: &mut Vec<(StepNo, StepNo)>) {
    for step in steps {
        let no = out.len() as StepNo + 1;
        out.push(Flat { step, no });
        match step {
            Step::If { then_steps, else_steps, .. } => {
                flatten(then_steps, out, loops);
                flatten(else_steps, out, loops);
            }
            Step::For { body, .. } => {
                flatten(body, out, loops);
                loops.push((no, out.len() as StepNo));
            }
            Step::While { cond_steps, body, .. } => {
                flatten(cond_steps, out, loops);
                flatten(body, out, loops);
                loops.push((no, out.len() as StepNo));
            }
            _ => {}
        }
    }
}

/// The regions, lifetimes and transfers of a plan.
pub fn analyse(view: &PlanView<'_>) -> Regions {
    let mut flat = Vec::new();
    let mut loops = Vec::new();
    flatten(view.steps, &mut flat, &mut loops);
    let n_steps = flat.len() as StepNo;
    let end = n_steps + 1;
    let sizes = SizeNamer::new(view);
    let mut regions: Vec<Region> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    // The regions each buffer variable may refer to.
    let mut refers: FxHashMap<Var, FxHashSet<u32>> = FxHashMap::default();
    let mut aliases: Vec<(Var, Var)> = Vec::new();
    let new_region = |regions: &mut Vec<Region>, r: Region| -> u32 {
        let id = regions.len() as u32;
        regions.push(Region { id, ..r });
        id
    };
    for (i, input) in view.inputs.iter().enumerate() {
        let Input::Array { buf, elem, dims } = input else { continue };
        let len = dims.iter().fold(Expr::I64(1), |a, d| Expr::bin(BinOp::Mul, a, Expr::Var(*d)));
        let (len, bytes, const_bytes) = sizes.len_and_bytes(&len, *elem);
        let name = view.input_names.get(i).cloned().unwrap_or_default();
        let host = Region {
            id: 0,
            name: name.clone(),
            world: World::Host,
            kind: RegionKind::Input,
            elem: *elem,
            len: len.clone(),
            bytes: bytes.clone(),
            const_bytes,
            origin: None,
            var: None,
            live: (0, 0),
            used_by: Vec::new(),
            kernels: Vec::new(),
        };
        let host = new_region(&mut regions, host);
        let device = Region {
            id: 0,
            name,
            world: World::Device,
            kind: RegionKind::Input,
            elem: *elem,
            len,
            bytes: bytes.clone(),
            const_bytes,
            origin: None,
            var: Some(*buf),
            live: (0, 0),
            used_by: Vec::new(),
            kernels: Vec::new(),
        };
        let device = new_region(&mut regions, device);
        refers.entry(*buf).or_default().insert(device);
        transfers.push(Transfer {
            direction: Direction::HostToDevice,
            step: 0,
            from: host,
            to: Some(device),
            bytes,
            why: "upload of the input".to_owned(),
        });
    }
    for f in &flat {
        match f.step {
            Step::Alloc { var, elem, len } => {
                let (len, bytes, const_bytes) = sizes.len_and_bytes(len, *elem);
                let region = Region {
                    id: 0,
                    name: view.var_names.get(var.0 as usize).cloned().unwrap_or_default(),
                    world: World::Device,
                    kind: RegionKind::Alloc,
                    elem: *elem,
                    len,
                    bytes,
                    const_bytes,
                    origin: view.buffer_origins.get(var).cloned(),
                    var: Some(*var),
                    live: (f.no, f.no),
                    used_by: Vec::new(),
                    kernels: Vec::new(),
                };
                let id = new_region(&mut regions, region);
                refers.entry(*var).or_default().insert(id);
            }
            Step::Alias { var, from } => aliases.push((*var, *from)),
            _ => {}
        }
    }
    // Aliases, to a fixpoint (loop slots flow backwards).
    loop {
        let mut changed = false;
        for (var, from) in &aliases {
            let add: Vec<u32> =
                refers.get(from).map(|s| s.iter().copied().collect()).unwrap_or_default();
            let set = refers.entry(*var).or_default();
            for r in add {
                changed |= set.insert(r);
            }
        }
        if !changed {
            break;
        }
    }
    let regions_of = |var: &Var| -> Vec<u32> {
        let mut v: Vec<u32> =
            refers.get(var).map(|s| s.iter().copied().collect()).unwrap_or_default();
        v.sort_unstable();
        v
    };
    // Uses.
    let mut uses: Vec<Vec<StepNo>> = vec![Vec::new(); regions.len()];
    for f in &flat {
        match f.step {
            Step::Launch { kernel, args, .. } => {
                let k = view.kernels.get(*kernel as usize);
                for arg in args {
                    let Arg::Buffer(var) = arg else { continue };
                    for r in regions_of(var) {
                        let region = &mut regions[r as usize];
                        uses[r as usize].push(f.no);
                        let Some(k) = k else { continue };
                        if !region.kernels.contains(&k.name) {
                            region.kernels.push(k.name.clone());
                        }
                        // A buffer allocated outside any statement (a result's copy)
                        // holds what the first kernel using it computes.
                        if region.origin.is_none()
                            && region.kind == RegionKind::Alloc
                            && let Some((origin, _)) = k.origins.first()
                        {
                            region.origin = Some(origin.clone());
                        }
                        for (origin, _) in &k.origins {
                            if !region.used_by.contains(origin) {
                                region.used_by.push(origin.clone());
                            }
                        }
                    }
                }
            }
            Step::Read { buf, elem, var, .. } => {
                let from = regions_of(buf);
                for &r in &from {
                    uses[r as usize].push(f.no);
                }
                if let Some(&r) = from.first() {
                    let name = view.var_names.get(var.0 as usize).cloned().unwrap_or_default();
                    transfers.push(Transfer {
                        direction: Direction::DeviceToHost,
                        step: f.no,
                        from: r,
                        to: None,
                        bytes: elem.size_in_bytes().to_string(),
                        why: format!("one element read into host scalar `{name}`"),
                    });
                }
            }
            _ => {}
        }
    }
    for output in view.outputs {
        let Output::Array { buf, elem, shape, .. } = output else { continue };
        let from = regions_of(buf);
        for &r in &from {
            uses[r as usize].push(end);
        }
        let len = shape.iter().cloned().fold(Expr::I64(1), |a, d| Expr::bin(BinOp::Mul, a, d));
        let (len, bytes, const_bytes) = sizes.len_and_bytes(&len, *elem);
        let Some(&source) = from.first() else { continue };
        let src = &regions[source as usize];
        let result = Region {
            id: 0,
            name: src.name.clone(),
            world: World::Host,
            kind: RegionKind::Result,
            elem: *elem,
            len,
            bytes: bytes.clone(),
            const_bytes,
            origin: src.origin.clone(),
            var: None,
            live: (end, end),
            used_by: Vec::new(),
            kernels: Vec::new(),
        };
        let to = new_region(&mut regions, result);
        uses.push(Vec::new());
        transfers.push(Transfer {
            direction: Direction::DeviceToHost,
            step: end,
            from: source,
            to: Some(to),
            bytes,
            why: "read-back of the result".to_owned(),
        });
    }
    // Lifetimes.
    for (r, region) in regions.iter_mut().enumerate() {
        let Some(&last) = uses[r].iter().max() else { continue };
        let start = region.live.0;
        let mut last = last.max(start);
        for &(head, tail) in &loops {
            if start < head && uses[r].iter().any(|&u| u >= head && u <= tail) {
                last = last.max(tail);
            }
        }
        region.live.1 = last;
    }
    // An input's host copy lives until its upload; results from their read-back.
    transfers.sort_by_key(|t| t.step);
    Regions { entry: String::new(), regions, transfers, n_steps }
}

/// Plan expressions as symbolic sizes in the source's names.
struct SizeNamer<'a> {
    view: &'a PlanView<'a>,
    /// Variables a `Let` defines exactly once, with their value.
    defs: FxHashMap<Var, &'a Expr>,
    /// Variables a `Read` defines.
    reads: FxHashSet<Var>,
}

fn mentions_any(e: &Expr, vars: &FxHashSet<Var>) -> bool {
    match e {
        Expr::Var(v) => vars.contains(v),
        Expr::I64(_) | Expr::Bool(_) | Expr::Lit { .. } => false,
        Expr::Bin(_, a, b) => mentions_any(a, vars) || mentions_any(b, vars),
        Expr::Not(a) | Expr::Neg(a) | Expr::Convert(_, a) => mentions_any(a, vars),
        Expr::Select(c, a, b) => {
            mentions_any(c, vars) || mentions_any(a, vars) || mentions_any(b, vars)
        }
    }
}

impl<'a> SizeNamer<'a> {
    fn new(view: &'a PlanView<'a>) -> SizeNamer<'a> {
        let mut count: FxHashMap<Var, u32> = FxHashMap::default();
        let mut defs: FxHashMap<Var, &'a Expr> = FxHashMap::default();
        fn walk<'a>(
            steps: &'a [Step],
            count: &mut FxHashMap<Var, u32>,
            defs: &mut FxHashMap<Var, &'a Expr>,
            reads: &mut FxHashSet<Var>,
            lets: &mut Vec<(Var, &'a Expr)>,
        ) {
            for step in steps {
                match step {
                    Step::Let { var, value } => {
                        *count.entry(*var).or_default() += 1;
                        defs.insert(*var, value);
                        lets.push((*var, value));
                    }
                    Step::Read { var, .. } => {
                        *count.entry(*var).or_default() += 2;
                        reads.insert(*var);
                    }
                    Step::For { index, body, .. } => {
                        *count.entry(*index).or_default() += 2;
                        walk(body, count, defs, reads, lets);
                    }
                    Step::If { then_steps, else_steps, .. } => {
                        walk(then_steps, count, defs, reads, lets);
                        walk(else_steps, count, defs, reads, lets);
                    }
                    Step::While { cond_steps, body, .. } => {
                        walk(cond_steps, count, defs, reads, lets);
                        walk(body, count, defs, reads, lets);
                    }
                    _ => {}
                }
            }
        }
        let mut reads = FxHashSet::default();
        // Every `let`, in branches and loops too (`defs` keeps only the last of each).
        let mut lets: Vec<(Var, &Expr)> = Vec::new();
        walk(view.steps, &mut count, &mut defs, &mut reads, &mut lets);
        // A value computed from one read back (a `filter`'s count, `0` when the input
        // is empty and else the last of its scan) is known only at run time too.
        loop {
            let before = reads.len();
            for (var, value) in &lets {
                if !reads.contains(var) && mentions_any(value, &reads) {
                    reads.insert(*var);
                }
            }
            if reads.len() == before {
                break;
            }
        }
        defs.retain(|v, _| count.get(v) == Some(&1));
        SizeNamer { view, defs, reads }
    }

    fn name(&self, var: Var) -> String {
        if self.reads.contains(&var) {
            // A value read back from the device: known at run time.
            return "?".to_owned();
        }
        let name = self.view.var_names.get(var.0 as usize).map_or("", String::as_str);
        // Several variables may share an entry's size name (`n`): the slots of loops
        // and branches are named by the sizes their types give them, which are equal.
        let size_of_entry = self.view.inputs.iter().any(|input| match input {
            Input::Array { dims, .. } => dims
                .iter()
                .any(|d| self.view.var_names.get(d.0 as usize).is_some_and(|n| n == name)),
            // An `i64` parameter that sizes name (`s` in `[bh*s]f32`).
            Input::Scalar { var: v, elem: Elem::I64 } => {
                self.view.var_names.get(v.0 as usize).is_some_and(|n| n == name)
            }
            Input::Scalar { .. } => false,
        });
        let unique = !name.is_empty()
            && (size_of_entry
                || self.view.var_names.iter().filter(|n| n.as_str() == name).count() == 1);
        if unique {
            name.to_owned()
        } else {
            format!("{}_v{}", if name.is_empty() { "v" } else { name }, var.0)
        }
    }

    fn size(&self, e: &Expr, depth: u32) -> Size<String> {
        let opaque = |e: &Expr| {
            let text = self.text(e, depth + 1);
            let call = text.starts_with("min(") || text.starts_with("max(");
            Size::var(if call { text } else { format!("({text})") })
        };
        if depth > 64 {
            return opaque(e);
        }
        match e {
            Expr::I64(v) => Size::constant(*v),
            Expr::Lit { elem, bits } => match weft_plan::lit(*elem, *bits) {
                weft_values::Scalar::I64(c) => Size::constant(c),
                weft_values::Scalar::I32(c) => Size::constant(i64::from(c)),
                _ => opaque(e),
            },
            Expr::Var(v) => match self.defs.get(v) {
                Some(def) => self.size(def, depth + 1),
                // An entry's dimension written as a constant (`[8]f32`) is named by it.
                None => match self.name(*v) {
                    name if name.parse::<i64>().is_ok() => {
                        Size::constant(name.parse().unwrap_or_default())
                    }
                    name if name.contains(' ') => Size::var(format!("({name})")),
                    name => Size::var(name),
                },
            },
            Expr::Bin(BinOp::Add, a, b) => self.size(a, depth + 1).add(&self.size(b, depth + 1)),
            Expr::Bin(BinOp::Sub, a, b) => self.size(a, depth + 1).sub(&self.size(b, depth + 1)),
            Expr::Bin(BinOp::Mul, a, b) => self.size(a, depth + 1).mul(&self.size(b, depth + 1)),
            Expr::Bin(BinOp::Div, a, b) => {
                let (p, q) = (self.size(a, depth + 1), self.size(b, depth + 1));
                match p.checked_div(&q) {
                    Some(d) => d,
                    None => opaque(e),
                }
            }
            Expr::Convert(Elem::I64, a) => self.size(a, depth + 1),
            _ => opaque(e),
        }
    }

    /// A non-polynomial expression, with variables by name.
    fn text(&self, e: &Expr, depth: u32) -> String {
        if depth > 64 {
            return "…".to_owned();
        }
        let sub = |e: &Expr| -> String {
            let s = self.size(e, depth + 1);
            if s.terms().len() > 1 { format!("({s})") } else { s.to_string() }
        };
        match e {
            Expr::Bin(op @ (BinOp::Min | BinOp::Max), a, b) => {
                format!("{}({}, {})", if *op == BinOp::Min { "min" } else { "max" }, sub(a), sub(b))
            }
            Expr::Bin(BinOp::Div, a, b) => format!("{} / {}", sub(a), sub(b)),
            Expr::Bin(BinOp::Rem, a, b) => format!("{} % {}", sub(a), sub(b)),
            Expr::Select(c, a, b) => match self.truth(c, depth + 1) {
                Some(true) => sub(a),
                Some(false) => sub(b),
                None => format!("if {} then {} else {}", self.cond(c, depth + 1), sub(a), sub(b)),
            },
            Expr::Convert(_, a) => sub(a),
            other => weft_plan::print_expr(other),
        }
    }

    /// A condition in the source's names (`k > 0`).
    fn cond(&self, c: &Expr, depth: u32) -> String {
        match (c, comparison(c)) {
            (Expr::Bin(_, a, b), Some(op)) => {
                format!("{} {op} {}", self.size(a, depth + 1), self.size(b, depth + 1))
            }
            _ => self.text(c, depth + 1),
        }
    }

    /// The value of a comparison of two constant sizes (`4 > 0`).
    fn truth(&self, c: &Expr, depth: u32) -> Option<bool> {
        let Expr::Bin(op, a, b) = c else { return None };
        let (a, b) =
            (self.size(a, depth + 1).as_constant()?, self.size(b, depth + 1).as_constant()?);
        Some(match op {
            BinOp::Eq => a == b,
            BinOp::Ne => a != b,
            BinOp::Lt => a < b,
            BinOp::Le => a <= b,
            BinOp::Gt => a > b,
            BinOp::Ge => a >= b,
            _ => return None,
        })
    }

    fn len_and_bytes(&self, len: &Expr, elem: Elem) -> (String, String, Option<i64>) {
        let len = self.size(len, 0);
        let bytes = len.scale(elem.size_in_bytes() as i64);
        (len.to_string(), bytes.to_string(), bytes.as_constant())
    }
}

/// The operator of a comparison, as the source writes it.
fn comparison(e: &Expr) -> Option<&'static str> {
    let Expr::Bin(op, ..) = e else { return None };
    matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
        .then(|| op.symbol())
}

/// `regions of entry ...`: one line per region, then the transfers. `line` gives the
/// source line of an expression (in the entry's file; `None` elsewhere).
pub fn print_regions(regions: &Regions, line: &dyn Fn(&Origin) -> Option<u32>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "regions of entry `{}` ({} plan steps)", regions.entry, regions.n_steps);
    for r in &regions.regions {
        let kind = match r.kind {
            RegionKind::Input => "input",
            RegionKind::Alloc => "alloc",
            RegionKind::Result => "result",
        };
        let _ = writeln!(
            out,
            "  r{:<3} {:<7} {:<6} {:<12} {}: {} × {} = {} bytes; live {}{}",
            r.id,
            r.world.name(),
            kind,
            if r.name.is_empty() { "–".to_owned() } else { format!("`{}`", r.name) },
            r.elem.name(),
            r.len,
            r.elem.size_in_bytes(),
            r.bytes,
            lifetime(r, regions.n_steps),
            match lines(r, line) {
                Some((a, b)) if a == b => format!(", line {a}"),
                Some((a, b)) => format!(", lines {a}–{b}"),
                None => String::new(),
            }
        );
    }
    if !regions.transfers.is_empty() {
        let _ = writeln!(out, "transfers");
    }
    for t in &regions.transfers {
        let arrow = match t.direction {
            Direction::HostToDevice => "host → device",
            Direction::DeviceToHost => "device → host",
        };
        let to = t.to.map(|r| format!(" → r{r}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} {arrow}: r{}{to}, {} bytes ({})",
            step_label(t.step, regions.n_steps),
            t.from,
            t.bytes,
            t.why
        );
    }
    out
}

/// `steps 3–7`, `before step 1`, `after step 9`.
pub fn lifetime(r: &Region, n_steps: StepNo) -> String {
    let (a, b) = r.live;
    if a == b {
        return step_label(a, n_steps);
    }
    let from = if a == 0 { "from the upload".to_owned() } else { format!("from step {a}") };
    let to = if b > n_steps { "the read-back".to_owned() } else { format!("step {b}") };
    format!("{from} to {to}")
}

fn step_label(no: StepNo, n_steps: StepNo) -> String {
    if no == 0 {
        "before step 1".to_owned()
    } else if no <= n_steps {
        format!("at step {no}")
    } else {
        format!("after step {n_steps}")
    }
}

/// The first and last source line of a region's lifetime: its own expression and
/// those the kernels using it compute.
pub fn lines(r: &Region, line: &dyn Fn(&Origin) -> Option<u32>) -> Option<(u32, u32)> {
    let all: Vec<u32> = r.origin.iter().chain(&r.used_by).filter_map(line).collect();
    Some((*all.iter().min()?, *all.iter().max()?))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use weft_hir::RootDatabase;

    fn check(src: &str, expect: Expect) {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", src);
        let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
        let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
        let gpu = weft_opt::pipeline_inlined(&program, weft_opt::Target::Gpu);
        let mem = weft_mem::annotate_gpu(&gpu, weft_mem::Target::Gpu);
        let threshold = |t: weft_opt::ThresholdId| gpu.thresholds[t].default;
        let mut text = String::new();
        for &entry in &gpu.entries {
            let options = crate::Options::default();
            let lowered = crate::lower_gpu_entry(&gpu, &mem, &threshold, entry, &|_| None, options)
                .expect("compiles");
            let line = |o: &weft_core::Origin| {
                let position = weft_core::origin_position(&db, o)?;
                position.rsplit(':').nth(1)?.parse().ok()
            };
            text.push_str(&super::print_regions(&lowered.regions, &line));
        }
        expect.assert_eq(&text);
    }

    #[test]
    fn map_has_inputs_an_allocation_and_a_result() {
        check(
            "entry f (xs: [n]f32) (ys: [n]f32) : [n]f32 =\n  let zs = map2 (\\x y -> x + y) xs ys\n  in map (\\z -> z * 2) zs",
            expect![[r#"
                regions of entry `f` (3 plan steps)
                  r0   host    input  `xs`         f32: n × 4 = 4*n bytes; live before step 1
                  r1   device  input  `xs`         f32: n × 4 = 4*n bytes; live from the upload to step 3, lines 2–3
                  r2   host    input  `ys`         f32: n × 4 = 4*n bytes; live before step 1
                  r3   device  input  `ys`         f32: n × 4 = 4*n bytes; live from the upload to step 3, lines 2–3
                  r4   device  alloc  –            f32: n × 4 = 4*n bytes; live from step 1 to the read-back, lines 2–3
                  r5   host    result –            f32: n × 4 = 4*n bytes; live after step 3, line 3
                transfers
                  before step 1 host → device: r0 → r1, 4*n bytes (upload of the input)
                  before step 1 host → device: r2 → r3, 4*n bytes (upload of the input)
                  after step 3 device → host: r4 → r5, 4*n bytes (read-back of the result)
            "#]],
        );
    }

    #[test]
    fn a_matrix_size_is_a_product_of_size_names() {
        check(
            "entry t (a: [n][m]f64) : [m][n]f64 =\n  let b = map (\\r -> map (\\x -> x + 1) r) a\n  in transpose b",
            expect![[r#"
                regions of entry `t` (24 plan steps)
                  r0   host    input  `a`          f64: m*n × 8 = 8*m*n bytes; live before step 1
                  r1   device  input  `a`          f64: m*n × 8 = 8*m*n bytes; live from the upload to step 18, line 2
                  r2   device  alloc  `outer`      f64: m*n × 8 = 8*m*n bytes; live from step 2 to step 24, lines 2–3
                  r3   device  alloc  –            f64: m*n × 8 = 8*m*n bytes; live from step 10 to step 24, lines 2–3
                  r4   device  alloc  `intra`      f64: m*n × 8 = 8*m*n bytes; live from step 13 to step 24, lines 2–3
                  r5   device  alloc  –            f64: m*n × 8 = 8*m*n bytes; live from step 17 to step 24, lines 2–3
                  r6   device  alloc  `result`     f64: m*n × 8 = 8*m*n bytes; live from step 21 to the read-back, line 3
                  r7   host    result `result`     f64: m*n × 8 = 8*m*n bytes; live after step 24, line 3
                transfers
                  before step 1 host → device: r0 → r1, 8*m*n bytes (upload of the input)
                  after step 24 device → host: r6 → r7, 8*m*n bytes (read-back of the result)
            "#]],
        );
    }

    #[test]
    fn a_reduction_reads_partials_and_a_scalar_read_is_a_transfer() {
        check(
            "entry s (xs: [n]i64) : i64 =\n  let t = reduce (+) 0 xs\n  in reduce (+) 0 (map (\\i -> i * i) (iota t))",
            expect![[r#"
                regions of entry `s` (15 plan steps)
                  r0   host    input  `xs`         i64: n × 8 = 8*n bytes; live before step 1
                  r1   device  input  `xs`         i64: n × 8 = 8*n bytes; live from the upload to step 3, line 2
                  r2   device  alloc  `partial`    i64: max(1, min(((n + 255) / 256), 1024)) × 8 = 8*max(1, min(((n + 255) / 256), 1024)) bytes; live from step 2 to step 5, line 2
                  r3   device  alloc  `total`      i64: 1 × 8 = 8 bytes; live from step 4 to step 8, line 2
                  r4   device  alloc  –            i64: ? × 8 = 8*? bytes; live from step 9 to step 10, line 3
                  r5   device  alloc  `partial`    i64: max(1, min(((? + 255) / 256), 1024)) × 8 = 8*max(1, min(((? + 255) / 256), 1024)) bytes; live from step 12 to step 15, line 3
                  r6   device  alloc  `total`      i64: 1 × 8 = 8 bytes; live from step 14 to the read-back, line 3
                  r7   host    result `total`      i64: 1 × 8 = 8 bytes; live after step 15, line 3
                transfers
                  before step 1 host → device: r0 → r1, 8*n bytes (upload of the input)
                  at step 6 device → host: r3, 8 bytes (one element read into host scalar `read`)
                  at step 8 device → host: r3, 8 bytes (one element read into host scalar `read`)
                  after step 15 device → host: r6 → r7, 8 bytes (read-back of the result)
            "#]],
        );
    }

    #[test]
    fn a_buffer_used_in_a_host_loop_lives_to_the_loop_end() {
        check(
            "entry p (xs: [n]f32) (k: i64) : [n]f32 =\n  loop ys = xs for i < k do\n    map2 (\\x y -> x + y) xs ys",
            expect![[r#"
                regions of entry `p` (6 plan steps)
                  r0   host    input  `xs`         f32: n × 4 = 4*n bytes; live before step 1
                  r1   device  input  `xs`         f32: n × 4 = 4*n bytes; live from the upload to the read-back, line 3
                  r2   device  alloc  –            f32: n × 4 = 4*n bytes; live from step 3 to the read-back, line 3
                  r3   host    result `xs`         f32: n × 4 = 4*n bytes; live after step 6
                transfers
                  before step 1 host → device: r0 → r1, 4*n bytes (upload of the input)
                  after step 6 device → host: r1 → r3, 4*n bytes (read-back of the result)
            "#]],
        );
    }
}
