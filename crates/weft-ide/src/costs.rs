//! Costs in the editor (docs/costs.md, "Costs in the editor"): the static costs that
//! `weft-lower`'s `cost` module counts over the generated code, shown in hovers (on an
//! entry's name and on combinator calls) and in a code lens per entry with the time the
//! model predicts on the selected device profile, and the performance diagnostics
//! (`uncoalesced-access`, `bank-conflict`, `local-memory-limit`) found in the same
//! records. No second analysis: strides, spaces and counts are the back end's.
//!
//! [`entry_costs`] is a salsa query over one entry, compiled without source positions
//! like `entry_kernels` and `entry_regions` (position-independent); findings are mapped
//! to source through the kernels' origins (`KernelImp::origins`, `ptr_origins`).
//!
//! Symbolic costs need sizes to become times: those of the entry's `-- bench:` line, else
//! of its test block's largest input (an `input { ... }` or a `random input { ... }`, by
//! elements), else the `predictionSize` setting for every size, else a default: every
//! size 2^20 when the entry's inputs have one size, 2^10 each when they have several.
//! Every prediction says which sizes it is at and where they come from, and which device
//! profile it uses and why (`CostConfig::profile_reason`).

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::Origin;
use weft_cost::model::{self, Cost, Dir, EntryCost, Machine, MemSpace, Stride};
use weft_cost::profile::DeviceProfile;
use weft_hir::{Db, DefId, DefKind, DefLoc, RootDatabase, Severity, SourceFile};
use weft_lower::imp::{Cmd, KernelImp, Sharing};
use weft_plan::{Arg, Expr, Input, ParamKind, Step, Var};

use crate::code_lens::test_inputs;
use crate::diagnostics::{bank_conflict, local_memory_limit, uncoalesced_access};
use crate::kernels::{Budget, def_users};

/// The local memory assumed when a profile does not give its device's: OpenCL's minimum
/// for a full profile device (`CL_DEVICE_LOCAL_MEM_SIZE` ≥ 32 KiB).
pub(crate) const MIN_LOCAL_MEM_BYTES: u64 = 32 * 1024;

/// Settings of the cost features: the profile predictions use, and the diagnostic codes
/// silenced everywhere.
#[derive(Debug, Clone)]
pub struct CostConfig {
    pub profile: &'static DeviceProfile,
    /// Codes not reported (`uncoalesced-access`, ...): `weft check --allow`, the
    /// server's `allow` setting.
    pub allow: Vec<String>,
    /// Hovers with the whole derivation (symbolic costs, regions) instead of the short
    /// summary; the detail view always has it.
    pub full_hovers: bool,
    /// The parts hovers and the detail view show (the `hoverSections` setting).
    pub hover_sections: Vec<HoverSection>,
    /// Why `profile` is the one predictions use, said after the device's name: "the
    /// device \"Run on GPU\" uses", "the `costProfile` setting", ...
    pub profile_reason: String,
    /// Every size of an entry without a `-- bench:` line or test inputs, for predictions
    /// (the `predictionSize` setting); `None`: the default sizes (module docs).
    pub prediction_size: Option<i64>,
    /// The profile of the machine's other kind of device (its CPU beside its GPU, or
    /// the reverse), when it has one: entries' hovers and lenses then predict both
    /// runs, transfers included, and say which is faster, as `weft run --device auto`
    /// chooses.
    pub alternative: Option<&'static DeviceProfile>,
}

/// A part of a hover, which the `hoverSections` setting shows or leaves out (the type
/// and the documentation are always shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoverSection {
    Memory,
    Regions,
    Kernels,
    AddressSpaces,
    Costs,
    Predictions,
}

impl HoverSection {
    pub const ALL: [HoverSection; 6] = [
        HoverSection::Memory,
        HoverSection::Regions,
        HoverSection::Kernels,
        HoverSection::AddressSpaces,
        HoverSection::Costs,
        HoverSection::Predictions,
    ];

    /// The setting's name of a section: `memory`, `regions`, `kernels`, `addressSpaces`,
    /// `costs`, `predictions`.
    pub fn name(self) -> &'static str {
        match self {
            HoverSection::Memory => "memory",
            HoverSection::Regions => "regions",
            HoverSection::Kernels => "kernels",
            HoverSection::AddressSpaces => "addressSpaces",
            HoverSection::Costs => "costs",
            HoverSection::Predictions => "predictions",
        }
    }

    pub fn from_name(name: &str) -> Option<HoverSection> {
        HoverSection::ALL.into_iter().find(|s| s.name() == name)
    }

    /// How the section's lines start in a hover (`**Kernel**`, `**Kernels**`: none ...).
    pub(crate) fn label(self) -> &'static str {
        match self {
            HoverSection::Memory => "**Memory**",
            HoverSection::Regions => "**Region**",
            HoverSection::Kernels => "**Kernel",
            HoverSection::AddressSpaces => "**Address space**",
            HoverSection::Costs => "**Cost**",
            HoverSection::Predictions => "**Predicted**",
        }
    }
}

impl Default for CostConfig {
    fn default() -> CostConfig {
        CostConfig {
            profile: weft_lower::cost::default_profile(),
            allow: Vec::new(),
            full_hovers: false,
            hover_sections: HoverSection::ALL.to_vec(),
            profile_reason: "the default profile".to_owned(),
            prediction_size: None,
            alternative: None,
        }
    }
}

impl CostConfig {
    /// `` `NVIDIA H100 80GB HBM3` (the `costProfile` setting) ``: the device of the
    /// predictions and why.
    pub(crate) fn device(&self) -> String {
        format!("`{}` ({})", self.profile.device.name.trim(), self.profile_reason)
    }
}

/// The costs of one entry and what the editor needs to map them to source.
#[derive(Debug, PartialEq)]
pub(crate) struct EntryCosts {
    /// The launches' costs over the entry's sizes and its transfers; without the costs
    /// of each kernel over its own parameters (`EntryCost::kernels` is empty here: only
    /// `weft dump --ir costs` prints them, and they were half of what a compiled entry
    /// kept).
    pub(crate) costs: EntryCost,
    pub(crate) kernels: Vec<KernelFacts>,
    pub(crate) inputs: Vec<Input>,
    /// The host's variables a `Let` defines once (a size an inlined def names `t`), with
    /// their values in the entry's own sizes: costs are shown in the signature's names.
    host_defs: FxHashMap<Var, Expr>,
}

impl EntryCosts {
    /// A cost expression in the entry's names: the host's `let`s substituted, values
    /// read back from the device shown as `?` (known at run time).
    pub(crate) fn show(&self, e: &Expr) -> String {
        // A dimension written as a constant (`[3]f32`) is named by it: it is that constant.
        let constant = |v: Var| self.costs.names.0.get(&v).and_then(|n| n.parse::<i64>().ok());
        let e = model::subst(e, &|v| {
            self.host_defs.get(&v).cloned().or_else(|| constant(v).map(Expr::I64))
        });
        model::show_readable(&e, &self.costs.names)
    }
}

/// What a kernel computes and the local memory it takes per work-group.
#[derive(Debug, PartialEq)]
pub(crate) struct KernelFacts {
    pub(crate) name: String,
    pub(crate) origins: Vec<(Origin, String)>,
    pub(crate) ptr_origins: Vec<(String, Origin)>,
    /// Why each pointer parameter exists (`input `xs` of the entry`).
    pub(crate) param_notes: Vec<(String, String)>,
    /// Per local array: its name and its bytes per work-group, over the entry's sizes
    /// (fixed arrays, and `__local` arguments of its first launch).
    pub(crate) local_bytes: Vec<(String, Expr)>,
    /// The host conditions under which it is launched (the branches of `if`s around
    /// its first launch: a version's threshold, a user's `if`), outermost first.
    pub(crate) conditions: Vec<Expr>,
}

impl KernelFacts {
    /// The source's name of a pointer the kernel accesses in `space`: the one a global
    /// parameter's note gives (`input `xs` of the entry`, `a buffer the host allocates
    /// for `ys``), else the generated name without its number (`l_6` is `l`).
    pub(crate) fn source_name(&self, ptr: &str, space: MemSpace) -> String {
        let noted = self
            .param_notes
            .iter()
            .find(|(p, _)| p == ptr && space == MemSpace::Global)
            .and_then(|(_, note)| note.split('`').nth(1).map(str::to_owned));
        noted.unwrap_or_else(|| match ptr.rsplit_once('_') {
            Some((base, n)) if !base.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                base.to_owned()
            }
            _ => ptr.to_owned(),
        })
    }
}

/// The costs of one entry, from its one compilation (`kernels::entry_backend`); `None`
/// when its file has errors, it is not an entry or the back end refused it.
pub(crate) fn entry_costs<'db>(db: &'db dyn Db, entry: DefId<'db>) -> &'db Option<Arc<EntryCosts>> {
    &crate::kernels::entry_backend(db, entry).costs
}

/// What the editor keeps of a compiled entry's costs.
pub(crate) fn entry_costs_of(
    plan: weft_plan::Plan,
    kernels: &[KernelImp],
    mut costs: EntryCost,
) -> EntryCosts {
    let local_args = local_args(&plan.steps);
    let mut conditions = FxHashMap::default();
    launch_conditions(&plan.steps, &mut Vec::new(), &mut conditions);
    let kernels = kernels
        .iter()
        .enumerate()
        .map(|(idx, k)| KernelFacts {
            name: k.name.clone(),
            origins: k.origins.clone(),
            ptr_origins: k.ptr_origins.clone(),
            param_notes: k.param_notes.clone(),
            local_bytes: kernel_local_bytes(k, local_args.get(&(idx as u32))),
            conditions: conditions.remove(&(idx as u32)).unwrap_or_default(),
        })
        .collect();
    let host_defs = host_defs(&plan.steps, &mut costs.names);
    costs.kernels = Vec::new();
    EntryCosts { costs, kernels, inputs: plan.inputs, host_defs }
}

/// For each kernel, the conditions of the host `if`s around its first launch (an
/// `else` branch's negated).
fn launch_conditions(steps: &[Step], around: &mut Vec<Expr>, out: &mut FxHashMap<u32, Vec<Expr>>) {
    for step in steps {
        match step {
            Step::Launch { kernel, .. } => {
                out.entry(*kernel).or_insert_with(|| around.clone());
            }
            Step::If { cond, then_steps, else_steps } => {
                around.push(cond.clone());
                launch_conditions(then_steps, around, out);
                around.pop();
                around.push(negated(cond));
                launch_conditions(else_steps, around, out);
                around.pop();
            }
            Step::For { body, .. } => launch_conditions(body, around, out),
            Step::While { cond_steps, body, .. } => {
                launch_conditions(cond_steps, around, out);
                launch_conditions(body, around, out);
            }
            _ => {}
        }
    }
}

/// `!c`, written as the opposite comparison when `c` is one (`n < 32768` for
/// `!(n >= 32768)`).
fn negated(cond: &Expr) -> Expr {
    use weft_plan::BinOp;
    if let Expr::Bin(op, a, b) = cond {
        let opposite = match op {
            BinOp::Lt => Some(BinOp::Ge),
            BinOp::Le => Some(BinOp::Gt),
            BinOp::Gt => Some(BinOp::Le),
            BinOp::Ge => Some(BinOp::Lt),
            BinOp::Eq => Some(BinOp::Ne),
            BinOp::Ne => Some(BinOp::Eq),
            _ => None,
        };
        if let Some(op) = opposite {
            return Expr::Bin(op, a.clone(), b.clone());
        }
    }
    if let Expr::Not(inner) = cond {
        return (**inner).clone();
    }
    Expr::Not(Box::new(cond.clone()))
}

/// The conditions under which kernel `kernel_idx` of `entry` runs, in the entry's size
/// names (`n >= 32768`), joined by "and"; `None` when it always runs.
pub(crate) fn kernel_condition(
    db: &RootDatabase,
    file: SourceFile,
    entry: &str,
    kernel_idx: usize,
) -> Option<String> {
    let loc = entry_loc(db, file, entry)?;
    let costs = entry_costs(db, DefId::new(db, loc)).as_ref()?;
    let kernel = costs.kernels.get(kernel_idx)?;
    // A condition longer than a short line is the detail view's. A condition of
    // constants (a histogram's bin count against the local-memory limit) says nothing
    // about the sizes. Nor does a work-group version's guard, its arrays' bytes against
    // the local memory of the unknown GPU the editor compiles for (the middle end's
    // `local_memory_exceeded`): it says whether the device can run the version at all.
    let local_memory_guard =
        weft_opt::threshold_default(weft_opt::ThresholdKind::LocalMemoryExceeded, None);
    let shown: Vec<String> = kernel
        .conditions
        .iter()
        // Evaluable without any size: a constant.
        .filter(|c| model::eval_i64(c, &|_| None).is_err())
        .filter(|c| {
            let c = model::subst(c, &|v| costs.host_defs.get(&v).cloned());
            !compares_with(&c, local_memory_guard) && only_named(&c, &costs.costs.names)
        })
        .map(|c| costs.show(c))
        .filter(|text| text.len() <= MAX_CONDITION_CHARS)
        .map(|text| format!("`{text}`"))
        .collect();
    (!shown.is_empty()).then(|| shown.join(" and "))
}

/// Whether every variable of `e` has a name of the source (a condition on a value the
/// host computes, unnamed, is not shown as `v12`).
fn only_named(e: &Expr, names: &model::Names) -> bool {
    match e {
        Expr::Var(v) => names.0.get(v).is_some_and(|n| !n.is_empty()),
        Expr::I64(_) | Expr::Bool(_) | Expr::Lit { .. } => true,
        Expr::Bin(_, a, b) => only_named(a, names) && only_named(b, names),
        Expr::Not(a) | Expr::Neg(a) | Expr::Convert(_, a) => only_named(a, names),
        Expr::Select(c, a, b) => {
            only_named(c, names) && only_named(a, names) && only_named(b, names)
        }
    }
}

/// Whether `cond` compares something with the constant `value` (`e >= value`, `e <
/// value`, or their negations).
fn compares_with(cond: &Expr, value: i64) -> bool {
    match cond {
        Expr::Not(inner) => compares_with(inner, value),
        Expr::Bin(_, a, b) => [a, b].iter().any(|side| match &***side {
            Expr::I64(v) => *v == value,
            Expr::Lit { elem: weft_plan::Elem::I64, bits } => {
                i64::from_ne_bytes(bits.to_ne_bytes()) == value
            }
            _ => false,
        }),
        _ => false,
    }
}

/// The longest condition a hover's kernel line shows.
const MAX_CONDITION_CHARS: usize = 48;

/// The entry named `entry` of `file`.
fn entry_loc(db: &RootDatabase, file: SourceFile, entry: &str) -> Option<DefLoc> {
    crate::program::entry_named(db, file, entry)
}

/// The variables a single `Let` of the plan defines, with their values substituted in
/// turn; the variables `Read` defines are renamed `?` in `names`.
fn host_defs(steps: &[Step], names: &mut model::Names) -> FxHashMap<Var, Expr> {
    fn count(steps: &[Step], lets: &mut FxHashMap<Var, u32>, names: &mut model::Names) {
        for step in steps {
            match step {
                Step::Let { var, .. } => *lets.entry(*var).or_default() += 1,
                Step::Read { var, .. } => {
                    names.0.insert(*var, "?".to_owned());
                }
                Step::If { then_steps, else_steps, .. } => {
                    count(then_steps, lets, names);
                    count(else_steps, lets, names);
                }
                Step::For { body, .. } => count(body, lets, names),
                Step::While { cond_steps, body, .. } => {
                    count(cond_steps, lets, names);
                    count(body, lets, names);
                }
                _ => {}
            }
        }
    }
    fn define(steps: &[Step], once: &FxHashMap<Var, u32>, defs: &mut FxHashMap<Var, Expr>) {
        for step in steps {
            match step {
                Step::Let { var, value } if once.get(var) == Some(&1) => {
                    let value = model::subst(value, &|v| defs.get(&v).cloned());
                    defs.insert(*var, value);
                }
                Step::If { then_steps, else_steps, .. } => {
                    define(then_steps, once, defs);
                    define(else_steps, once, defs);
                }
                Step::For { body, .. } => define(body, once, defs),
                Step::While { cond_steps, body, .. } => {
                    define(cond_steps, once, defs);
                    define(body, once, defs);
                }
                _ => {}
            }
        }
    }
    let mut lets = FxHashMap::default();
    count(steps, &mut lets, names);
    let mut defs = FxHashMap::default();
    define(steps, &lets, &mut defs);
    defs
}

/// Each kernel's arguments at its first launch, with the host's `let`s substituted.
fn local_args(steps: &[Step]) -> FxHashMap<u32, Vec<Arg>> {
    fn walk(steps: &[Step], defs: &mut FxHashMap<Var, Expr>, out: &mut FxHashMap<u32, Vec<Arg>>) {
        for step in steps {
            match step {
                Step::Let { var, value } => {
                    let value = model::subst(value, &|v| defs.get(&v).cloned());
                    defs.insert(*var, value);
                }
                Step::Launch { kernel, args, .. } => {
                    let resolved = args
                        .iter()
                        .map(|arg| match arg {
                            Arg::Local { elem, len } => Arg::Local {
                                elem: *elem,
                                len: model::subst(len, &|v| defs.get(&v).cloned()),
                            },
                            other => other.clone(),
                        })
                        .collect();
                    out.entry(*kernel).or_insert(resolved);
                }
                Step::If { then_steps, else_steps, .. } => {
                    walk(then_steps, defs, out);
                    walk(else_steps, defs, out);
                }
                Step::For { body, .. } => walk(body, defs, out),
                Step::While { cond_steps, body, .. } => {
                    walk(cond_steps, defs, out);
                    walk(body, defs, out);
                }
                _ => {}
            }
        }
    }
    let mut out = FxHashMap::default();
    walk(steps, &mut FxHashMap::default(), &mut out);
    out
}

/// The local arrays of a kernel: fixed work-group arrays of its body and its `__local`
/// parameters (sized by the launch's arguments).
fn kernel_local_bytes(kernel: &KernelImp, args: Option<&Vec<Arg>>) -> Vec<(String, Expr)> {
    fn walk(cmds: &[Cmd], out: &mut Vec<(String, Expr)>) {
        for cmd in cmds {
            match cmd {
                Cmd::Array { name, elem, sharing: Sharing::WorkGroup, len, .. } => out.push((
                    name.to_string(),
                    Expr::I64(len.saturating_mul(elem.size_in_bytes() as i64)),
                )),
                Cmd::If { then_cmds, else_cmds, .. } => {
                    walk(then_cmds, out);
                    walk(else_cmds, out);
                }
                Cmd::For { body, .. } | Cmd::ParFor { body, .. } => walk(body, out),
                Cmd::While { cond_cmds, body, .. } => {
                    walk(cond_cmds, out);
                    walk(body, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&kernel.body, &mut out);
    for (idx, (name, kind)) in kernel.params.iter().enumerate() {
        if let ParamKind::Local(_) = kind
            && let Some(Arg::Local { elem, len }) = args.and_then(|a| a.get(idx))
        {
            let bytes = model::mul(len.clone(), Expr::I64(elem.size_in_bytes() as i64));
            out.push((name.clone(), model::simplify(&bytes)));
        }
    }
    out
}

/// Where the sizes of a prediction come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeSource {
    /// The entry's `-- bench:` line: the sizes it is meant to run at.
    Bench,
    /// The test block's largest input (by elements), an `input`...
    TestInput,
    /// ... or a `random input`.
    RandomInput,
    /// The `predictionSize` setting.
    Setting,
    Default,
}

/// Values of the entry's host variables (sizes and scalar inputs) for a prediction.
#[derive(Debug, Clone)]
pub(crate) struct SizeEnv {
    pub(crate) values: FxHashMap<Var, i64>,
    pub(crate) source: SizeSource,
}

impl SizeEnv {
    pub(crate) fn get(&self, var: Var) -> Option<i64> {
        self.values.get(&var).copied()
    }

    /// `n = 1000, m = 32 (the test block's first input)`.
    pub(crate) fn describe(&self, costs: &EntryCost) -> String {
        // Variables named by a size expression (`4*bm`, a dimension the type computes)
        // follow from the others: only the signature's names are listed.
        let mut named: Vec<(String, i64)> = self
            .values
            .iter()
            .map(|(v, x)| (costs.names.name(*v), *x))
            .filter(|(name, _)| {
                name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'\'')
            })
            .filter(|(name, _)| name.parse::<i64>().is_err())
            .collect();
        named.sort();
        named.dedup_by(|a, b| a.0 == b.0);
        let list: Vec<String> = named.iter().map(|(n, x)| format!("{n} = {x}")).collect();
        let from = match self.source {
            SizeSource::Bench => "the entry's `-- bench:` line",
            SizeSource::TestInput => "the test block's largest `input`",
            SizeSource::RandomInput => "the test block's largest `random input`",
            SizeSource::Setting => "the `predictionSize` setting: no test input",
            SizeSource::Default => "default sizes: no test input",
        };
        if list.is_empty() {
            format!("({from})")
        } else {
            format!("at {} ({from})", list.join(", "))
        }
    }
}

/// The sizes of the entry's `-- bench:` line, else of its test block's largest input,
/// else of the `predictionSize` setting, else the default (module docs).
pub(crate) fn size_env(
    db: &RootDatabase,
    entry: &DefLoc,
    inputs: &[Input],
    prediction_size: Option<i64>,
) -> SizeEnv {
    let bench = comment_lines(db, entry).into_iter().find_map(|line| {
        let bench = weft_syntax::test_block::bench_comment(line.trim_start().strip_prefix("--")?)?;
        // The main line (`-- bench:`), not a named size.
        bench.size.is_none().then_some(())?;
        weft_values::bench_line::parse_bench_line(bench.specs).ok()
    });
    if let Some(bench) = bench
        && bench.inputs.len() == inputs.len()
    {
        return SizeEnv { values: spec_sizes(inputs, &bench.inputs), source: SizeSource::Bench };
    }
    // The largest input of the test block, `input` or `random input`, by elements.
    let tests = test_inputs(db, entry);
    let values = tests
        .all_values
        .iter()
        .filter_map(|text| weft_values::parse_values(text).ok())
        .filter(|values| values.len() == inputs.len())
        .map(|values| {
            let elements = values.iter().map(weft_values::Value::len).sum::<usize>();
            (
                elements,
                SizeEnv { values: value_sizes(inputs, &values), source: SizeSource::TestInput },
            )
        });
    let random = tests
        .all_random
        .iter()
        .filter_map(|text| weft_values::parse_random_specs(text).ok())
        .filter(|specs| specs.len() == inputs.len())
        .map(|specs| {
            let elements = specs
                .iter()
                .map(|spec| spec.ty.shape.iter().fold(1usize, |n, d| n.saturating_mul(*d)))
                .fold(0usize, usize::saturating_add);
            (
                elements,
                SizeEnv { values: spec_sizes(inputs, &specs), source: SizeSource::RandomInput },
            )
        });
    // The first of equally large inputs.
    let mut largest: Option<(usize, SizeEnv)> = None;
    for (elements, env) in values.chain(random) {
        if largest.as_ref().is_none_or(|(most, _)| elements > *most) {
            largest = Some((elements, env));
        }
    }
    if let Some((_, env)) = largest {
        return env;
    }
    let mut dims: Vec<Var> = Vec::new();
    for input in inputs {
        if let Input::Array { dims: ds, .. } = input {
            for d in ds {
                if !dims.contains(d) {
                    dims.push(*d);
                }
            }
        }
    }
    let (each, source) = match prediction_size {
        Some(size) => (size, SizeSource::Setting),
        None if dims.len() == 1 => (1 << 20, SizeSource::Default),
        None => (1 << 10, SizeSource::Default),
    };
    SizeEnv { values: dims.into_iter().map(|d| (d, each)).collect(), source }
}

/// The sizes the random specs of an entry's inputs give.
fn spec_sizes(inputs: &[Input], specs: &[weft_values::RandomSpec]) -> FxHashMap<Var, i64> {
    let mut out = FxHashMap::default();
    for (input, spec) in inputs.iter().zip(specs) {
        if let Input::Array { dims, .. } = input {
            for (d, len) in dims.iter().zip(&spec.ty.shape) {
                out.insert(*d, i64::try_from(*len).unwrap_or(i64::MAX));
            }
        }
    }
    out
}

/// The sizes (and integer scalars) values of an entry's inputs give.
fn value_sizes(inputs: &[Input], values: &[weft_values::Value]) -> FxHashMap<Var, i64> {
    let mut out = FxHashMap::default();
    for (input, value) in inputs.iter().zip(values) {
        match input {
            Input::Scalar { var, .. } => {
                if let Some(x) = integer(value) {
                    out.insert(*var, x);
                }
            }
            Input::Array { dims, .. } => {
                for (d, len) in dims.iter().zip(value.shape()) {
                    out.insert(*d, i64::try_from(*len).unwrap_or(i64::MAX));
                }
            }
        }
    }
    out
}

fn integer(value: &weft_values::Value) -> Option<i64> {
    use weft_values::ArrayData;
    if value.rank() != 0 {
        return None;
    }
    match value.data() {
        ArrayData::I64(x) => x.first().copied(),
        ArrayData::I32(x) => x.first().map(|&v| i64::from(v)),
        ArrayData::U32(x) => x.first().map(|&v| i64::from(v)),
        ArrayData::U64(x) => x.first().and_then(|&v| i64::try_from(v).ok()),
        _ => None,
    }
}

/// `1.23 ms`, `45.6 µs`, three significant digits.
pub(crate) fn seconds(s: f64) -> String {
    let (value, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// The model's short name (`weft-cost v2`).
pub(crate) fn model_name() -> &'static str {
    model::MODEL.split(':').next().unwrap_or(model::MODEL)
}

/// Which measured error a prediction's interval takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorOf<'a> {
    /// An entry's kernels together: the entries' error.
    Entry,
    /// Kernels of these classes (`map`, `group`, ...: `weft_cost::measured::kernel_class`):
    /// the largest of their classes' errors, each class's own when the validation run
    /// measured enough of its kernels, else every kernel's.
    Kernels(&'a [&'a str]),
}

/// The error of `of` on the profile's device, and what it is over: `(0.16, "64 `map`
/// kernels")`.
fn error_of(e: &model::MeasuredError, of: ErrorOf<'_>) -> (f64, String) {
    match of {
        ErrorOf::Entry => (e.geomean, format!("{} entries", e.entries)),
        ErrorOf::Kernels(classes) => classes
            .iter()
            .map(|class| match e.for_class(class) {
                (error, n, Some(class)) => (error, format!("{n} `{class}` kernels")),
                (error, n, None) => (error, format!("{n} kernels")),
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((e.kernel_geomean, format!("{} kernels", e.kernels))),
    }
}

/// `±31% measured (geometric mean over 64 `map` kernels, 2026-11-29)` or `error not
/// measured`, for the profile.
pub(crate) fn measured(profile: &DeviceProfile, of: ErrorOf<'_>) -> String {
    match model::measured_error(profile) {
        Some(e) => {
            let (error, over) = error_of(&e, of);
            format!("±{:.0}% measured (geometric mean over {over}, {})", error * 100.0, e.date)
        }
        None => "error not measured".to_owned(),
    }
}

/// `7.53 µs ±16% (6.33–8.73 µs)`: a predicted time and the interval the profile's
/// measured error of its kind of prediction gives; `7.53 µs (error not measured)`
/// without one; `at least 7.53 µs (...)` when the prediction is a lower bound (a `while`
/// loop counted once), which no measured interval bounds.
pub(crate) fn with_interval(
    seconds_predicted: f64,
    lower_bound: bool,
    profile: &DeviceProfile,
    of: ErrorOf<'_>,
) -> String {
    if lower_bound {
        return format!(
            "at least {} (a `while` loop is counted for one iteration)",
            seconds(seconds_predicted)
        );
    }
    match model::measured_error(profile) {
        Some(e) => {
            let error = error_of(&e, of).0;
            let low = seconds(seconds_predicted * (1.0 - error).max(0.0));
            let high = seconds(seconds_predicted * (1.0 + error));
            // `218–260 µs` rather than `218 µs–260 µs`.
            let range = match (low.split_once(' '), high.split_once(' ')) {
                (Some((l, unit)), Some((h, other))) if unit == other => format!("{l}–{h} {unit}"),
                _ => format!("{low}–{high}"),
            };
            format!("{} ±{:.0}% ({range})", seconds(seconds_predicted), error * 100.0)
        }
        None => format!("{} (error not measured)", seconds(seconds_predicted)),
    }
}

/// The predicted runs on the GPU and the CPU (`CostConfig::alternative`), transfers
/// included, and the faster: `GPU 40.1 µs, CPU 85.3 µs with transfers: runs on the GPU`.
/// Each device's prediction reads the entry compiled for its kind of device.
pub(crate) fn placement(db: &RootDatabase, entry: &DefLoc, config: &CostConfig) -> Option<String> {
    let alternative = config.alternative?;
    let id = DefId::new(db, entry.clone());
    let mut runs = Vec::new();
    for profile in [config.profile, alternative] {
        let costs = match profile.device.kind.as_str() {
            "gpu" => entry_costs(db, id).as_ref()?,
            _ => crate::kernels::entry_cpu_costs(db, id).as_ref()?,
        };
        let env = size_env(db, entry, &costs.inputs, config.prediction_size);
        let seconds = costs.costs.predict(profile, &|v| env.get(v)).ok()?.total.seconds;
        runs.push((profile.device.kind.to_uppercase(), seconds));
    }
    let times: Vec<String> =
        runs.iter().map(|(kind, s)| format!("{kind} {}", seconds(*s))).collect();
    let faster = runs.iter().min_by(|a, b| a.1.total_cmp(&b.1)).map(|r| r.0.clone())?;
    Some(format!("{} with transfers: runs on the {faster}", times.join(", ")))
}

/// An entry's predicted kernel time at its sizes: the lens's title.
pub(crate) fn lens_title(db: &RootDatabase, entry: &DefLoc, config: &CostConfig) -> Option<String> {
    let costs = entry_costs(db, DefId::new(db, entry.clone())).as_ref()?;
    let env = size_env(db, entry, &costs.inputs, config.prediction_size);
    let profile = config.profile;
    let short = match model::measured_error(profile) {
        Some(e) => format!("±{:.0}% measured", e.geomean * 100.0),
        None => "error not measured".to_owned(),
    };
    let head = match costs.costs.predict(profile, &|v| env.get(v)) {
        Ok(p) if p.total.lower_bound => format!("predicted at least {}", seconds(p.kernels_s)),
        Ok(p) => format!("predicted {}", seconds(p.kernels_s)),
        Err(_) => "not predicted: a cost depends on a value known only at run time".to_owned(),
    };
    let title =
        format!("{head} on {} (model {}, {short})", profile.device.name.trim(), model_name());
    Some(match placement(db, entry, config) {
        Some(placement) => format!("{title} · {placement}"),
        None => title,
    })
}

/// The entry's lines for a hover on its name: the prediction at the sizes (and, in the
/// detail view, its cost over the launches that run at them, symbolic).
pub(crate) fn entry_section(
    db: &RootDatabase,
    entry: &DefLoc,
    config: &CostConfig,
) -> Option<String> {
    let costs = entry_costs(db, DefId::new(db, entry.clone())).as_ref()?;
    let env = size_env(db, entry, &costs.inputs, config.prediction_size);
    let c = &costs.costs;
    let sizes = |v: Var| env.get(v);
    let running: Vec<&model::Launch> =
        c.launches.iter().filter(|l| c.runs(l, &sizes).unwrap_or(true)).collect();
    let prediction = match c.predict(config.profile, &sizes) {
        Ok(p) => format!(
            "**Predicted**: {} for its kernels (+ {} of transfers) on {} {}; {}-bound",
            with_interval(p.kernels_s, p.total.lower_bound, config.profile, ErrorOf::Entry),
            seconds(p.total.transfer_s),
            config.device(),
            env.describe(c),
            p.total.bound,
        ),
        Err(error) => {
            format!("**Predicted**: not on {} {}: {error}", config.device(), env.describe(c))
        }
    };
    let prediction = match placement(db, entry, config) {
        Some(placement) => format!("{prediction}  \n**Placement**: {placement}"),
        None => prediction,
    };
    if !config.full_hovers {
        return Some(prediction);
    }
    let times = |e: &Expr, l: &model::Launch| model::mul(e.clone(), l.repeat.clone());
    let total = |f: &dyn Fn(&Cost) -> Expr| {
        model::simplify(&model::sum(running.iter().map(|l| times(&f(&l.cost), l))))
    };
    let show = |e: &Expr| costs.show(e);
    let mut line = format!(
        "**Cost** ({} launch{} per run): work `{}`, span `{}`",
        running.len(),
        if running.len() == 1 { "" } else { "es" },
        show(&total(&|k| k.work.clone())),
        show(&total(&|k| k.span.clone())),
    );
    line.push_str(&bytes_per_space(&|space| total(&|k| space_bytes(k, space)), &show));
    line.push_str(&format!(
        "; transfers `{}` bytes to the device, `{}` back",
        show(&c.upload_bytes),
        show(&c.download_bytes)
    ));
    let model =
        format!("**Model**: {}, {}", model_name(), measured(config.profile, ErrorOf::Entry));
    Some(format!("{line}\n\n{prediction}\n\n{model}"))
}

/// The address space the kernels of `entry` read its input `name` in, in a hover's
/// line: `constant` memory (naming the kernel) when one reads it from there, else
/// `global`; `None` when no kernel reads it.
pub(crate) fn input_space(db: &RootDatabase, entry: &DefLoc, name: &str) -> Option<String> {
    let costs = entry_costs(db, DefId::new(db, entry.clone())).as_ref()?;
    let mut global = false;
    for launch in &costs.costs.launches {
        let Some(kernel) = costs.kernels.get(launch.kernel as usize) else { continue };
        for access in &launch.cost.accesses {
            let is_input = kernel
                .param_notes
                .iter()
                .any(|(ptr, note)| *ptr == access.ptr && note.split('`').nth(1) == Some(name));
            match access.space {
                MemSpace::Constant if is_input => {
                    return Some(format!(
                        "**Address space**: constant memory in kernel `{}` (a small input every \
                         work-item reads alike: `__constant`)",
                        kernel.name
                    ));
                }
                MemSpace::Global if is_input => global = true,
                _ => {}
            }
        }
    }
    global.then(|| "**Address space**: global memory".to_owned())
}

/// Whether kernel `kernel_idx` of `entry` runs at the prediction's sizes: its launch
/// conditions (a version's threshold) hold or cannot be decided; `None` when the entry's
/// costs are not known.
pub(crate) fn kernel_runs(
    db: &RootDatabase,
    file: SourceFile,
    entry: &str,
    kernel_idx: usize,
    config: &CostConfig,
) -> Option<bool> {
    let loc = entry_loc(db, file, entry)?;
    let costs = entry_costs(db, DefId::new(db, loc.clone())).as_ref()?;
    let env = size_env(db, &loc, &costs.inputs, config.prediction_size);
    let kernel = costs.kernels.get(kernel_idx)?;
    let runs = |cond: &Expr| {
        let cond = model::subst(cond, &|v| costs.host_defs.get(&v).cloned());
        !matches!(model::eval_i64(&cond, &|v| env.get(v)), Ok(0))
    };
    Some(kernel.conditions.iter().all(runs))
}

/// The hover's summary of what some kernels of one entry cost: `**Predicted**: 8.66 µs
/// ±16% (7.27–10.0 µs) per launch of its kernel on ... at n = 1048576 (...)`, their
/// first launches' predictions added.
pub(crate) fn kernels_prediction(
    db: &RootDatabase,
    file: SourceFile,
    entry: &str,
    kernel_idxs: &[usize],
    config: &CostConfig,
) -> Option<String> {
    let loc = entry_loc(db, file, entry)?;
    let costs = entry_costs(db, DefId::new(db, loc.clone())).as_ref()?;
    let env = size_env(db, &loc, &costs.inputs, config.prediction_size);
    let c = &costs.costs;
    let mut total = 0.0;
    let mut bound = None;
    let mut lower_bound = false;
    let mut classes = Vec::new();
    for &idx in kernel_idxs {
        let launch = c.launches.iter().find(|l| l.kernel as usize == idx)?;
        classes.push(weft_cost::measured::kernel_class(&launch.name, entry));
        match launch.cost.predict(config.profile, &|v| env.get(v)) {
            Ok(p) => {
                total += p.seconds;
                lower_bound |= p.lower_bound;
                bound.get_or_insert(p.bound);
            }
            Err(error) => {
                return Some(format!(
                    "**Predicted**: not on {} {}: {error}",
                    config.device(),
                    env.describe(c)
                ));
            }
        }
    }
    let what = match kernel_idxs.len() {
        1 => "per launch of its kernel".to_owned(),
        n => format!("per launch of its {n} kernels"),
    };
    Some(format!(
        "**Predicted**: {} {what} on {} {}; {}-bound",
        with_interval(total, lower_bound, config.profile, ErrorOf::Kernels(&classes)),
        config.device(),
        env.describe(c),
        bound.unwrap_or("memory"),
    ))
}

/// The detail view's line per kernel launch computing a combinator call: its cost over
/// the entry's sizes and its predicted time; `None` for a kernel that does not run at
/// these sizes (a version for others).
pub(crate) fn kernel_line(
    db: &RootDatabase,
    file: SourceFile,
    entry: &str,
    kernel_idx: usize,
    config: &CostConfig,
) -> Option<String> {
    let loc = entry_loc(db, file, entry)?;
    let costs = entry_costs(db, DefId::new(db, loc.clone())).as_ref()?;
    let env = size_env(db, &loc, &costs.inputs, config.prediction_size);
    let c = &costs.costs;
    let launch = c.launches.iter().find(|l| l.kernel as usize == kernel_idx)?;
    if kernel_runs(db, file, entry, kernel_idx, config) == Some(false) {
        return None;
    }
    let show = |e: &Expr| costs.show(e);
    let k = &launch.cost;
    let class = weft_cost::measured::kernel_class(&launch.name, entry);
    let mut line = format!(
        "**Cost** of `{}` (entry `{entry}`): work `{}`, span `{}`",
        launch.name,
        show(&k.work),
        show(&k.span)
    );
    line.push_str(&bytes_per_space(&|space| space_bytes(k, space), &show));
    if !matches!(launch.repeat, Expr::I64(1)) {
        line.push_str(&format!(" (per launch, `{}` launches)", show(&launch.repeat)));
    }
    match k.predict(config.profile, &|v| env.get(v)) {
        Ok(p) => line.push_str(&format!(
            "; predicted {} per launch on {} {} ({}-bound, model {}, {})",
            with_interval(p.seconds, p.lower_bound, config.profile, ErrorOf::Kernels(&[class])),
            config.device(),
            env.describe(c),
            p.bound,
            model_name(),
            measured(config.profile, ErrorOf::Kernels(&[class]))
        )),
        Err(error) => line.push_str(&format!("; not predicted: {error}")),
    }
    Some(line)
}

fn space_bytes(cost: &Cost, space: MemSpace) -> Expr {
    model::add(cost.bytes(space, Dir::Read), cost.bytes(space, Dir::Write))
}

/// `; global `8*n` bytes, local `1024` bytes`, the spaces with accesses.
fn bytes_per_space(bytes: &dyn Fn(MemSpace) -> Expr, show: &dyn Fn(&Expr) -> String) -> String {
    let mut parts = Vec::new();
    for space in [MemSpace::Global, MemSpace::Constant, MemSpace::Local] {
        let b = bytes(space);
        if !matches!(b, Expr::I64(0)) {
            parts.push(format!("{} `{}` bytes", space.name(), show(&b)));
        }
    }
    if parts.is_empty() { String::new() } else { format!("; {}", parts.join(", ")) }
}

// ---- Performance diagnostics.

/// A performance problem of a kernel, at a source expression.
struct Finding {
    code: &'static str,
    origin: Origin,
    message: String,
    /// The source name of the array accessed, if the finding is about one.
    array: Option<String>,
}

/// Performance diagnostics of every entry of `file` (what `weft check --perf` prints):
/// see [`perf_diagnostics_within`].
pub fn perf_diagnostics(
    db: &RootDatabase,
    file: SourceFile,
    config: &CostConfig,
) -> Vec<crate::Diagnostic> {
    perf_diagnostics_within(db, file, config, None)
}

/// Performance diagnostics of the entries of `file`, those no larger than `budget`
/// (`None`: every entry), for the profile of `config`; codes in `config.allow`, and
/// findings in a def with a `-- weft: allow(CODE)` comment above it (or above the entry
/// it was found in), are left out.
pub(crate) fn perf_diagnostics_within(
    db: &RootDatabase,
    file: SourceFile,
    config: &CostConfig,
    budget: Option<Budget>,
) -> Vec<crate::Diagnostic> {
    // Performance diagnostics point at source expressions through origins, which the
    // APL front end does not record.
    if crate::apl::is_apl(file.path(db)) || !crate::program::has_entry_programs(db, file) {
        return Vec::new();
    }
    let users = def_users(db, file);
    let within_budget = |loc: &weft_hir::DefLoc| match budget {
        Some(budget) => users.size(loc).is_some_and(|size| size <= budget.max_size),
        None => true,
    };
    // Entries compiled here anyway: what the back end cannot compile is reported too.
    let mut out = crate::diagnostics::backend_unsupported(db, file, &|entry| {
        let compiled = within_budget(entry.loc(db));
        compiled.then(|| crate::kernels::compiled_entry_error(db, entry)).flatten()
    });
    type Cause = (weft_syntax::TextRange, &'static str, Option<String>);
    let mut seen: Vec<(Cause, Vec<weft_hir::Name>)> = Vec::new();
    for loc in weft_hir::item_tree(db, file).defs.iter() {
        if loc.kind != DefKind::Entry {
            continue;
        }
        if let Some(budget) = budget
            && users.size(loc).is_none_or(|size| size > budget.max_size)
        {
            continue;
        }
        let Some(costs) = entry_costs(db, DefId::new(db, loc.clone())) else { continue };
        let env = size_env(db, loc, &costs.inputs, config.prediction_size);
        for finding in findings(costs, config.profile, &env) {
            if config.allow.iter().any(|c| c == finding.code)
                || allowed(db, &finding.origin.def, finding.code)
                || allowed(db, loc, finding.code)
            {
                continue;
            }
            if finding.origin.def.file != file {
                continue;
            }
            let data = crate::classify::DefData::new(db, &finding.origin.def);
            let Some(range) = data.source_map.expr_range(finding.origin.expr) else {
                continue;
            };
            // The squiggle marks the access to the array, not the whole combinator.
            let range = finding
                .array
                .as_deref()
                .and_then(|array| access_range(&data, range, array))
                .unwrap_or(range);
            // One warning per cause: a def used by several entries is reported once,
            // naming the other entries.
            let cause = (
                range,
                finding.code,
                finding.message.split(" in kernel").next().map(str::to_owned),
            );
            if let Some((_, others)) = seen.iter_mut().find(|(c, _)| *c == cause) {
                if !others.contains(&loc.name) {
                    others.push(loc.name.clone());
                }
                continue;
            }
            seen.push((cause, Vec::new()));
            // In a def, the sizes are those of the entry it was compiled for: name it.
            let mut finding = finding;
            if finding.origin.def != *loc {
                finding.message.push_str(&format!(" (entry `{}`)", loc.name));
            }
            out.push(crate::Diagnostic {
                code: finding.code,
                severity: Severity::Warning,
                message: finding.message,
                file,
                range,
                related: Vec::new(),
                help: Some(format!(
                    "silence it with `-- weft: allow({})` in the comments above the def",
                    finding.code
                )),
            });
        }
    }
    // The diagnostics of this function, in order, follow the backend ones: name the
    // other entries each cause was found in.
    let first = out.len() - seen.len();
    for (diagnostic, (_, others)) in out[first..].iter_mut().zip(&seen) {
        if !others.is_empty() {
            let list: Vec<String> = others.iter().map(|e| format!("`{e}`")).collect();
            diagnostic.message.push_str(&format!(
                "; also in entr{} {}",
                if list.len() == 1 { "y" } else { "ies" },
                list.join(", ")
            ));
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    out
}

/// The range of the first access to `array` inside `within`: an indexing `xs[i]`, else
/// an indexing of the `map` lambda's parameter that `array` is passed as (`r[0]` in
/// `map (\r -> r[0]) a`), else a use of the name; `None` when there is none.
fn access_range(
    data: &crate::classify::DefData,
    within: weft_syntax::TextRange,
    array: &str,
) -> Option<weft_syntax::TextRange> {
    use weft_hir::Expr;
    let is_array = |e: weft_hir::ExprId| matches!(&data.body.exprs[e], Expr::Path { name, .. } if name.as_str() == array);
    let ranges = |pick: &dyn Fn(&Expr, weft_hir::ExprId) -> bool| {
        data.body
            .exprs
            .iter()
            .filter(|(id, e)| pick(e, *id))
            .filter_map(|(id, _)| data.source_map.expr_range(id))
            .filter(|r| within.contains_range(*r) && *r != within)
            .min_by_key(|r| r.start())
    };
    // `map (\r -> r[0]) a`: the indexing of the lambda's parameter that stands for `a`.
    let element_params: Vec<weft_hir::PatId> = data
        .body
        .exprs
        .iter()
        .filter_map(|(_, e)| match e {
            Expr::Call { callee, args } => Some((*callee, args)),
            _ => None,
        })
        .filter(|(callee, _)| {
            matches!(&data.body.exprs[*callee],
                Expr::Path { res: weft_hir::Resolution::Builtin(b), .. } if b.name().starts_with("map"))
        })
        .filter_map(|(_, args)| {
            let (first, arrays) = args.split_first()?;
            let Expr::Lambda { params, .. } = &data.body.exprs[*first] else { return None };
            let k = arrays.iter().position(|a| is_array(*a))?;
            params.get(k).copied()
        })
        .collect();
    let is_element = |e: weft_hir::ExprId| {
        matches!(&data.body.exprs[e],
            Expr::Path { res: weft_hir::Resolution::Local(p), .. } if element_params.contains(p))
    };
    ranges(&|e, _| matches!(e, Expr::Index { base, .. } if is_array(*base)))
        .or_else(|| ranges(&|e, _| matches!(e, Expr::Index { base, .. } if is_element(*base))))
        .or_else(|| ranges(&|_, id| is_array(id)))
}

/// The comment lines of a declaration: those the parser attached to it (up to its
/// name), then the comment lines right above it.
fn comment_lines(db: &RootDatabase, def: &DefLoc) -> Vec<String> {
    let source_map = weft_hir::source_map(db, DefId::new(db, def.clone()));
    let (Some(range), Some(name)) = (source_map.def_range(), source_map.name_range()) else {
        return Vec::new();
    };
    let text = def.file.text(db);
    let attached = text.get(usize::from(range.start())..usize::from(name.start())).unwrap_or("");
    let before = text.get(..usize::from(range.start())).unwrap_or("");
    let mut above = before.lines().rev();
    if !before.ends_with('\n') {
        above.next();
    }
    let above = above.take_while(|l| l.trim_start().starts_with("--"));
    attached.lines().chain(above).map(str::to_owned).collect()
}

/// Whether the comment lines directly above `def` hold `weft: allow(CODE, ...)` naming
/// `code`.
pub(crate) fn allowed(db: &RootDatabase, def: &DefLoc, code: &str) -> bool {
    comment_lines(db, def).iter().any(|line| {
        line.trim_start()
            .strip_prefix("--")
            .and_then(|c| c.trim_start().strip_prefix("weft:"))
            .and_then(|rest| rest.trim_start().strip_prefix("allow("))
            .and_then(|list| list.split(')').next())
            .is_some_and(|list| list.split(',').any(|c| c.trim() == code))
    })
}

/// A strided access of a kernel, as the performance diagnostics word it.
pub(crate) struct StridedAccess<'a> {
    /// The stride between neighbouring work-items, in elements (its absolute value).
    pub(crate) stride: u64,
    /// `reads` or `writes`.
    pub(crate) verb: &'static str,
    /// The array, quoted.
    pub(crate) what: String,
    pub(crate) kernel: &'a str,
    /// The stride as an expression of the sizes.
    pub(crate) shown: &'a str,
    /// What the stride is at the prediction's sizes (` (64 at n = 64)`), or nothing.
    pub(crate) at: &'a str,
    pub(crate) device: &'a str,
}

/// The findings of one entry's kernels: each kernel once, at its first launch that runs
/// at the sizes.
fn findings(costs: &EntryCosts, profile: &DeviceProfile, env: &SizeEnv) -> Vec<Finding> {
    let machine = Machine::of(profile);
    let c = &costs.costs;
    let sizes = |v: Var| env.get(v);
    let mut seen: FxHashSet<u32> = FxHashSet::default();
    let mut out = Vec::new();
    let device = profile.device.name.trim();
    for launch in &c.launches {
        if !c.runs(launch, &sizes).unwrap_or(true) || !seen.insert(launch.kernel) {
            continue;
        }
        let Some(kernel) = costs.kernels.get(launch.kernel as usize) else { continue };
        let Some(main) = kernel.origins.first().map(|(o, _)| o.clone()) else { continue };
        let origin_of = |ptr: &str| {
            kernel
                .ptr_origins
                .iter()
                .find(|(p, _)| p == ptr)
                .map_or(main.clone(), |(_, o)| o.clone())
        };
        let what = |ptr: &str, space: MemSpace| format!("`{}`", kernel.source_name(ptr, space));
        let mut reported: FxHashSet<(String, MemSpace)> = FxHashSet::default();
        for access in &launch.cost.accesses {
            let Stride::Elems(stride) = &access.stride else { continue };
            let value = match stride {
                Expr::I64(s) => Some(*s),
                e => model::eval_i64(e, &sizes).ok(),
            };
            let Some(s) = value.map(i64::unsigned_abs) else { continue };
            let shown = costs.show(stride);
            let at = if matches!(stride, Expr::I64(_)) || shown == s.to_string() {
                String::new()
            } else {
                format!(" ({s} {})", env.describe(c))
            };
            let verb = match access.dir {
                Dir::Read => "reads",
                Dir::Write => "writes",
            };
            let strided = StridedAccess {
                stride: s,
                verb,
                what: what(&access.ptr, access.space),
                kernel: &kernel.name,
                shown: &shown,
                at: &at,
                device,
            };
            let (code, message) = match access.space {
                MemSpace::Global => {
                    (uncoalesced_access::CODE, uncoalesced_access::message(&strided, &machine))
                }
                MemSpace::Local => {
                    (bank_conflict::CODE, bank_conflict::message(&strided, &machine))
                }
                _ => continue,
            };
            if let Some(message) = message
                && reported.insert((access.ptr.clone(), access.space))
            {
                out.push(Finding {
                    code,
                    origin: origin_of(&access.ptr),
                    array: Some(kernel.source_name(&access.ptr, access.space)),
                    message,
                });
            }
        }
        // Local memory per work-group against the device's.
        let limit = match profile.device.local_mem_bytes {
            0 => MIN_LOCAL_MEM_BYTES,
            b => b,
        };
        let mut total: u64 = 0;
        let mut parts = Vec::new();
        let mut known = true;
        for (name, bytes) in &kernel.local_bytes {
            match model::eval_i64(bytes, &sizes) {
                Ok(b) => {
                    total = total.saturating_add(u64::try_from(b).unwrap_or(0));
                    parts.push(format!("`{name}` {b} bytes"));
                }
                Err(_) => known = false,
            }
        }
        let message = local_memory_limit::message(
            &kernel.name,
            total,
            limit,
            &parts,
            &env.describe(c),
            device,
        );
        if let Some(message) = message.filter(|_| known) {
            let origin = kernel
                .local_bytes
                .iter()
                .find_map(|(name, _)| kernel.ptr_origins.iter().find(|(p, _)| p == name))
                .map_or(main.clone(), |(_, o)| o.clone());
            out.push(Finding { code: local_memory_limit::CODE, origin, array: None, message });
        }
    }
    out
}

/// The code lens titles of a file's entries, for those small enough to compile unasked.
pub(crate) fn predictions(
    db: &RootDatabase,
    path: &str,
    config: &CostConfig,
) -> Vec<(weft_syntax::TextRange, String)> {
    let Some(file) = db.file(path) else { return Vec::new() };
    if !crate::program::has_entry_programs(db, file) {
        return Vec::new();
    }
    let users = def_users(db, file);
    let mut out = Vec::new();
    for data in crate::classify::file_defs(db, file) {
        if data.loc.kind != DefKind::Entry {
            continue;
        }
        let Some(range) = data.source_map.name_range() else { continue };
        let budget = crate::kernels::IMPLICIT_BUDGET;
        if users.size(&data.loc).is_none_or(|size| size > budget.max_size) {
            continue;
        }
        if let Some(title) = lens_title(db, &data.loc, config) {
            out.push((range, title));
        }
    }
    out
}

/// Whether an entry is small enough for a hover to compile it (`HOVER_BUDGET`).
pub(crate) fn entry_budget_ok(db: &RootDatabase, entry: &DefLoc) -> bool {
    def_users(db, entry.file)
        .size(entry)
        .is_some_and(|size| size <= crate::kernels::HOVER_BUDGET.max_size)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    /// A host holding `text` as `main.weft`.
    fn host_with_main(text: &str) -> crate::AnalysisHost {
        let mut host = crate::AnalysisHost::new();
        let mut change = crate::Change::default();
        change.set_file("main.weft", text);
        host.apply_change(change);
        host
    }

    fn check_perf(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let mut out = String::new();
        let config = crate::CostConfig::default();
        for d in fixture.analysis.perf_diagnostics(&fixture.position.path, &config).unwrap() {
            let _ = writeln!(
                out,
                "{} {}[{}]: {}",
                fixture.show(&fixture.position.path, d.range),
                d.severity.as_str(),
                d.code,
                d.message
            );
        }
        expect.assert_eq(&out);
    }

    fn check_lenses(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let mut out = String::new();
        for (range, title) in fixture.analysis.entry_predictions(&fixture.position.path).unwrap() {
            let _ = writeln!(out, "{} {title}", fixture.show(&fixture.position.path, range));
        }
        expect.assert_eq(&out);
    }

    /// Predictions once used the test block's first input (toy sizes, launch overhead
    /// only): the `-- bench:` line wins, else the largest input.
    #[test]
    fn predictions_use_the_bench_line_else_the_largest_input() {
        let text = r#"
-- ==
-- input { [1f32] }
-- input { [1f32, 2f32, 3f32] }
entry small (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
-- bench: [1000000]f32
entry big (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
"#;
        let f = crate::tests::fixture(text);
        let at = |needle: &str| crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(text.trim_start_matches('\n').find(needle).unwrap())
                .unwrap()
                .into(),
        };
        let small = f.analysis.hover(&at("small")).unwrap().unwrap().markdown;
        assert!(small.contains("at n = 3 (the test block's largest `input`)"), "{small}");
        let big = f.analysis.hover(&at("big")).unwrap().unwrap().markdown;
        assert!(big.contains("at n = 1000000 (the entry's `-- bench:` line)"), "{big}");
    }

    /// The largest test input may be a `random input`; without any, the `predictionSize`
    /// setting gives every size; the prediction says which.
    #[test]
    fn predictions_use_the_largest_random_input_else_the_setting() {
        let text = r#"
-- ==
-- input { [1f32, 2f32, 3f32] }
-- random input { [50000]f32 }
entry random (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
entry untested (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
"#;
        let mut host = host_with_main(text);
        let at = |needle: &str| crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(text.find(needle).unwrap()).unwrap().into(),
        };
        let hover = |host: &crate::AnalysisHost, needle| {
            host.analysis().hover(&at(needle)).unwrap().unwrap().markdown
        };
        let random = hover(&host, "random (");
        assert!(
            random.contains("at n = 50000 (the test block's largest `random input`)"),
            "{random}"
        );
        let untested = hover(&host, "untested");
        assert!(untested.contains("at n = 1048576 (default sizes: no test input)"), "{untested}");
        host.set_cost_config(crate::CostConfig {
            prediction_size: Some(5000),
            profile_reason: "the `costProfile` setting".to_owned(),
            ..Default::default()
        });
        let untested = hover(&host, "untested");
        assert!(
            untested.contains("(the `costProfile` setting) at n = 5000 (the `predictionSize` setting: no test input)"),
            "{untested}"
        );
    }

    /// A kernel's interval is its class's measured error on a profile whose validation
    /// run measured enough kernels of that class; an entry's, the entries' error.
    #[test]
    fn intervals_come_from_the_measured_error_of_the_kernels_class() {
        let text = "-- ==\n-- random input { [100000]f32 }\nentry double (xs: [n]f32) : [n]f32 = map (\\x -> 2f32 * x) xs\n";
        let mut host = host_with_main(text);
        let h200 = weft_cost::profile::builtin_profile_named("NVIDIA H200").unwrap();
        host.set_cost_config(crate::CostConfig {
            profile: h200,
            full_hovers: true,
            ..Default::default()
        });
        let at = |needle: &str| crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(text.find(needle).unwrap()).unwrap().into(),
        };
        let on_map = host.analysis().hover(&at("map (")).unwrap().unwrap().markdown;
        assert!(on_map.contains("±17% ("), "{on_map}");
        assert!(
            on_map.contains("±17% measured (geometric mean over 64 `map` kernels, 2026-11-29)"),
            "{on_map}"
        );
        let on_entry = host.analysis().hover(&at("double")).unwrap().unwrap().markdown;
        assert!(on_entry.contains("for its kernels"), "{on_entry}");
        assert!(on_entry.contains("±18% ("), "{on_entry}");
    }

    /// A kernel with a `while` loop is predicted as a lower bound, without an interval
    /// (the loop is counted once; no measured error bounds a data-dependent trip count).
    #[test]
    fn a_while_loop_makes_the_prediction_a_lower_bound_without_an_interval() {
        let text = "-- ==\n-- random input { [100000]i64 }\nentry halve (xs: [n]i64) : [n]i64 = map (\\x -> loop y = x while y > 1 do y / 2) xs\n";
        let mut host = host_with_main(text);
        let h200 = weft_cost::profile::builtin_profile_named("NVIDIA H200").unwrap();
        host.set_cost_config(crate::CostConfig { profile: h200, ..Default::default() });
        let at = |needle: &str| crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(text.find(needle).unwrap()).unwrap().into(),
        };
        for needle in ["halve", "map ("] {
            let hover = host.analysis().hover(&at(needle)).unwrap().unwrap().markdown;
            assert!(
                hover.contains("**Predicted**: at least ")
                    && hover.contains("(a `while` loop is counted for one iteration)"),
                "{hover}"
            );
            assert!(!hover.contains('±'), "no interval on a lower bound: {hover}");
        }
        let lenses = host.analysis().entry_predictions("main.weft").unwrap();
        let titles: Vec<&str> = lenses.iter().map(|l| l.1.as_str()).collect();
        assert!(titles.iter().any(|t| t.starts_with("predicted at least ")), "{titles:?}");
    }

    /// With a CPU beside the GPU, an entry's lens and hover predict both runs (each from
    /// the entry compiled for its kind of device, transfers included) and name the
    /// faster: the GPU for a large input, the CPU for a tiny one.
    #[test]
    fn lenses_and_hovers_place_runs_on_the_faster_device() {
        let text = "-- ==\n-- random input { [4000000]f32 }\nentry big (xs: [n]f32) : f32 = reduce (+) 0 (map (\\x -> f32.exp x) xs)\n\n-- ==\n-- input { [1f32, 2f32] }\nentry tiny (xs: [n]f32) : f32 = reduce (+) 0 xs\n";
        let mut host = host_with_main(text);
        let h200 = weft_cost::profile::builtin_profile_named("NVIDIA H200").unwrap();
        let cpu =
            weft_cost::profile::builtin_profiles().iter().find(|p| p.device.kind == "cpu").unwrap();
        host.set_cost_config(crate::CostConfig {
            profile: h200,
            alternative: Some(cpu),
            ..Default::default()
        });
        let lenses = host.analysis().entry_predictions("main.weft").unwrap();
        let titles: Vec<&str> = lenses.iter().map(|l| l.1.as_str()).collect();
        let placed: Vec<&&str> = titles.iter().filter(|t| t.contains("with transfers")).collect();
        assert_eq!(placed.len(), 2, "{titles:?}");
        assert!(placed[0].ends_with("with transfers: runs on the GPU"), "{}", placed[0]);
        assert!(placed[0].contains(" · GPU "), "{}", placed[0]);
        assert!(placed[1].ends_with("with transfers: runs on the CPU"), "{}", placed[1]);
        let at = crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(text.find("big").unwrap()).unwrap().into(),
        };
        let hover = host.analysis().hover(&at).unwrap().unwrap().markdown;
        assert!(hover.contains("**Placement**: GPU "), "{hover}");
        // Without a second device, nothing is said about placement.
        host.set_cost_config(crate::CostConfig { profile: h200, ..Default::default() });
        let lenses = host.analysis().entry_predictions("main.weft").unwrap();
        assert!(lenses.iter().all(|l| !l.1.contains("with transfers")), "{lenses:?}");
    }

    #[test]
    fn a_def_used_by_two_entries_gets_one_warning_naming_both() {
        check_perf(
            r#"
def firsts (a: [n][m]f32) : [n]f32 = map (\r -> r[0]) a
-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
entry one (a: [n][m]f32) : [n]f32 = firsts a
-- ==
-- input { [[1f32, 2f32, 3f32], [3f32, 4f32, 5f32]] }
entry two (a: [n][m]f32) : [n]f32 = firsts a
"#,
            expect![[r#"
                main.weft:48..52 "r[0]" warning[uncoalesced-access]: uncoalesced global reads of `a` in kernel `one_map_0`: neighbouring work-items access elements `m` apart (2 at m = 2, n = 2 (the test block's largest `input`)); `NVIDIA H100 80GB HBM3` is 1.3× slower than coalesced at that stride (entry `one`); also in entry `two`
            "#]],
        );
    }

    #[test]
    fn uncoalesced_row_walks() {
        check_perf(
            r#"
-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
-- output { [3f32, 7f32] }
entry first_col (a: [n][m]f32) : [n]f32 = map (\r -> r[0]) a
-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
entry copy (a: [n][m]f32) : [n][m]f32 = map (\r -> map (\x -> x + 1f32) r) a
-- ==
-- random input { [4][32][32]f32 }
entry tiles (a: [n][32][32]f32) : [n][32][32]f32 =
  map@group (\tile ->
      let l = to_local tile
      in map@thread (\i -> map@seq (\j -> l[i][j] + l[j][i]) (iota 32)) (iota 32))
    a
-- ==
-- random input { [2][20000]f32 }
entry big_rows (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      let l = to_local row
      in map@thread (\x -> x + l[0]) l)
    a
-- weft: allow(uncoalesced-access)
entry silenced (a: [n][m]f32) : [n]f32 = map (\r -> r[0]) a
"#,
            expect![[r#"
                main.weft:128..132 "r[0]" warning[uncoalesced-access]: uncoalesced global reads of `a` in kernel `first_col_map_0`: neighbouring work-items access elements `m` apart (2 at m = 2, n = 2 (the test block's largest `input`)); `NVIDIA H100 80GB HBM3` is 1.3× slower than coalesced at that stride
                main.weft:355..491 "map@group (\\tile ->\n      let l = to_local tile\n      in map@thread (\\i -> map@seq (\\j -> l[i][j] + l[j][i]) (iota 32)) (iota 32))\n    a" warning[uncoalesced-access]: uncoalesced global writes of `buf` in kernel `tiles_group_1`: neighbouring work-items access elements `32` apart; `NVIDIA H100 80GB HBM3` is 7.2× slower than coalesced at that stride
                main.weft:389..402 "to_local tile" warning[bank-conflict]: local-memory bank conflicts of degree 32 on 32 banks: reads of `l` in kernel `tiles_group_1` at a stride of `32` elements; `NVIDIA H100 80GB HBM3` measured 28.8× the conflict-free time
                main.weft:611..623 "to_local row" warning[local-memory-limit]: kernel `big_rows_group_0` needs 80000 bytes of local memory per work-group (`l_6` 80000 bytes) at m = 20000, n = 2 (the test block's largest `random input`), more than the 49152 bytes of `NVIDIA H100 80GB HBM3`: its launch would fail
            "#]],
        );
    }

    fn check_hover(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let hover = fixture.analysis.hover_details(&fixture.position).unwrap().expect("a hover");
        expect.assert_eq(&hover.markdown);
    }

    #[test]
    fn hover_on_entry_shows_cost_and_prediction() {
        check_hover(
            r#"
-- ==
-- input { [1f32, 2f32, 3f32] }
entry to$0tal (xs: [n]f32) : f32 = reduce (+) 0f32 (map (\x -> x * 2f32) xs)
"#,
            expect![[r#"
                ```weft
                entry total : [n]f32 -> f32
                ```

                **Cost** (2 launches per run): work `8*((max(1, min(⌈n/256⌉, 1024)))/4) + 12*(n/4) + 5118*max(1, min(⌈n/256⌉, 1024)) + 4862`, span `10*⌈((max(1, min(⌈n/256⌉, 1024)))/4)/256⌉ + 14*⌈(n/4)/(max(256*max(1, min(⌈n/256⌉, 1024)), 1))⌉ + 67`; global `16*((max(1, min(⌈n/256⌉, 1024)))/4) + 16*(n/4) + 1028*max(1, min(⌈n/256⌉, 1024)) + 1028` bytes, local `4088*max(1, min(⌈n/256⌉, 1024)) + 4088` bytes; transfers `4*n` bytes to the device, `4` back

                **Predicted**: 11.1 µs (error not measured) for its kernels (+ 1.63 µs of transfers) on `NVIDIA H100 80GB HBM3` (the default profile) at n = 3 (the test block's largest `input`); memory-bound

                **Model**: weft-cost v2, error not measured"#]],
        );
    }

    #[test]
    fn hover_on_combinator_shows_kernel_cost() {
        check_hover(
            r#"
entry scale (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * 2f32) xs
"#,
            expect![[r#"
                ```weft
                map : (a -> r) -> [n]a -> [n]r
                ```

                applies a function to every element

                **Kernel**: `scale_map_0` — @grid: one work-item per run of 4 elements

                **Cost** of `scale_map_0` (entry `scale`): work `17*max((n/4), n % 4) + 768*⌈max((n/4), n % 4)/256⌉`, span `19*⌈(max((n/4), n % 4))/(max(256*⌈max((n/4), n % 4)/256⌉, 1))⌉ + 3`; global `40*max((n/4), n % 4)` bytes; predicted 9.51 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)"#]],
        );
    }

    #[test]
    fn lens_per_entry() {
        check_lenses(
            r#"
-- ==
-- input { [1f32, 2f32, 3f32] }
entry total (xs: [n]f32) : f32 = reduce (+) 0f32 xs
entry scale (xs: [n]f32) : [n]f32 = map (\x -> x * 2f32) xs
"#,
            expect![[r#"
                main.weft:44..49 "total" predicted 11.1 µs on NVIDIA H100 80GB HBM3 (model weft-cost v2, error not measured)
                main.weft:96..101 "scale" predicted 9.51 µs on NVIDIA H100 80GB HBM3 (model weft-cost v2, error not measured)
            "#]],
        );
    }
}
