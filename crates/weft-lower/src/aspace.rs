//! The `aspace` query of the backend: every pointer of the generated kernels and
//! functions gets its address space from `weft-aspace`'s inference (seed 000), never
//! from the code that emitted it.
//!
//! What the lowering knows, and hands over as facts: who shares each allocation (a
//! work-group or one work-item), which pointers are kernel arguments the host
//! allocates, which are read, written or passed to which generated function. The
//! defaults then follow from the inference: host buffers are `global`, small read-only
//! inputs read uniformly are `constant`, work-group arrays `local`, a work-item's
//! arrays `private`; a generated function's pointer parameters are polymorphic and the
//! function is cloned per instantiation (OpenCL 1.2 has no generic space).

use rustc_hash::{FxHashMap, FxHashSet};
use weft_aspace::{Decl, Fact, Func, FuncId, FuncKind, InstanceId, Program, Ptr, PtrId, Reason};
pub use weft_aspace::{Resolved, Space, Target};

use crate::imp::{CExpr, Cmd, FParam, FuncImp, KernelImp, ParLevel, Part, Sharing};
use weft_plan::ParamKind;

/// The smallest `CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE` the OpenCL spec allows: inputs
/// up to this many bytes may go to `constant` memory on every device.
pub const CONSTANT_BYTES: i64 = 64 * 1024;
/// The smallest `CL_DEVICE_MAX_CONSTANT_ARGS` the spec allows.
pub const CONSTANT_ARGS: usize = 8;

/// The inferred address spaces of one entry's kernels and functions.
#[derive(Debug, Clone, PartialEq)]
pub struct Spaces {
    /// Per kernel, in the order of `Lowered::kernels`.
    pub kernels: Vec<PtrSpaces>,
    /// Every reachable specialisation of a generated function, in a callee-first
    /// order (each is printed before its callers).
    pub instances: Vec<Instance>,
    /// What `weft dump --ir aspace` prints.
    pub report: String,
    /// Address-space errors, each with its chain of reasons.
    pub diagnostics: Vec<SpaceDiagnostic>,
    /// The OpenCL C version the spaces were inferred for.
    pub target: Target,
}

/// The resolved spaces of the pointers of one kernel or function instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PtrSpaces {
    pub spaces: FxHashMap<String, Resolved>,
    /// Why each pointer is where it is, one reason per step.
    pub why: FxHashMap<String, Vec<String>>,
    /// The instance name each call site (`CExpr::Invoke::site`) calls.
    pub calls: FxHashMap<u32, String>,
}

/// One specialisation (clone) of a generated function.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Index into `Lowered::functions`.
    pub func: u32,
    /// The C name (`dot__G_G`).
    pub name: String,
    pub ptrs: PtrSpaces,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpaceDiagnostic {
    pub code: &'static str,
    pub message: String,
    pub chain: Vec<String>,
}

/// Builds the facts, runs the inference and collects what the printers need.
pub fn infer_spaces(
    kernels: &[KernelImp],
    functions: &[FuncImp],
    site_positions: &FxHashMap<u32, String>,
    target: Target,
) -> Spaces {
    let mut program = Program { funcs: Vec::new() };
    let mut names: Vec<Vec<String>> = Vec::new();
    let n_kernels = kernels.len();
    for k in kernels {
        let (func, ptr_names) = kernel_facts(k, functions, n_kernels, site_positions);
        program.funcs.push(func);
        names.push(ptr_names);
    }
    for f in functions {
        let (func, ptr_names) = function_facts(f, functions, n_kernels, site_positions);
        program.funcs.push(func);
        names.push(ptr_names);
    }
    let inference = weft_aspace::infer(&program, target);
    let report = weft_aspace::print(&program, &inference);
    let mut out = Spaces {
        target,
        kernels: Vec::new(),
        instances: Vec::new(),
        report,
        diagnostics: inference
            .diagnostics()
            .iter()
            .map(|d| SpaceDiagnostic {
                code: d.code,
                message: d.message.clone(),
                chain: d.chain.iter().map(|r| r.text.clone()).collect(),
            })
            .collect(),
    };
    for (i, inst) in inference.instances().iter().enumerate() {
        let fid = inst.func;
        if (fid.0 as usize) < n_kernels {
            continue;
        }
        let id = InstanceId(i as u32);
        let ptrs = instance_spaces(&program, &inference, id, fid, &names[fid.0 as usize]);
        out.instances.push(Instance {
            func: fid.0 - n_kernels as u32,
            name: inst.name.clone(),
            ptrs,
        });
    }
    for (i, _) in kernels.iter().enumerate() {
        let fid = FuncId(i as u32);
        let ptrs = match inference.kernel_instance(fid) {
            Some(id) => instance_spaces(&program, &inference, id, fid, &names[i]),
            None => PtrSpaces::default(),
        };
        out.kernels.push(ptrs);
    }
    // Callees first: a clone is printed before the code that calls it.
    out.instances.reverse();
    // Why each pointer is where it is, in words.
    out.report.push_str("why\n");
    for (i, (ptrs, k)) in out.kernels.iter().zip(kernels).enumerate() {
        why_lines(&mut out.report, &k.name, ptrs, &names[i]);
    }
    for inst in &out.instances {
        let order = &names[n_kernels + inst.func as usize];
        why_lines(&mut out.report, &inst.name, &inst.ptrs, order);
    }
    out
}

fn why_lines(out: &mut String, name: &str, ptrs: &PtrSpaces, order: &[String]) {
    use std::fmt::Write;
    for ptr in order {
        let space = match ptrs.spaces.get(ptr) {
            Some(Resolved::Space(s)) => s.name().to_owned(),
            Some(Resolved::Generic(set)) => format!("generic {set}"),
            None => continue,
        };
        let why = ptrs.why.get(ptr).map(|w| w.join(" -> ")).unwrap_or_default();
        let _ = writeln!(out, "  {name}.{ptr} ({space}): {why}");
    }
}

fn instance_spaces(
    program: &Program,
    inference: &weft_aspace::Inference,
    inst: InstanceId,
    fid: FuncId,
    names: &[String],
) -> PtrSpaces {
    let func = &program.funcs[fid.0 as usize];
    let mut out = PtrSpaces::default();
    for (i, name) in names.iter().enumerate() {
        let ptr = PtrId(i as u32);
        out.spaces.insert(name.clone(), inference.space_of(inst, ptr));
        out.why.insert(
            name.clone(),
            inference.explain(inst, ptr).into_iter().map(|r| r.text).collect(),
        );
    }
    for (index, fact) in func.facts.iter().enumerate() {
        if let Fact::Call { reason, .. } = fact
            && let Some(site) = reason.site
            && let Some(callee) = inference.callee_instance(inst, index)
        {
            out.calls.insert(site.0, inference.instance(callee).name.clone());
        }
    }
    out
}

/// Collects pointers and facts of one body.
struct Facts<'a> {
    functions: &'a [FuncImp],
    site_positions: &'a FxHashMap<u32, String>,
    n_kernels: usize,
    ptrs: Vec<Ptr>,
    index: FxHashMap<String, PtrId>,
    facts: Vec<Fact>,
}

impl<'a> Facts<'a> {
    fn new(
        functions: &'a [FuncImp],
        n_kernels: usize,
        site_positions: &'a FxHashMap<u32, String>,
    ) -> Facts<'a> {
        Facts {
            functions,
            site_positions,
            n_kernels,
            ptrs: Vec::new(),
            index: FxHashMap::default(),
            facts: Vec::new(),
        }
    }

    fn add_ptr(&mut self, name: &str, decl: Decl, why: String) -> PtrId {
        let id = PtrId(self.ptrs.len() as u32);
        self.ptrs.push(Ptr {
            name: name.to_owned(),
            decl,
            reason: Reason { text: why, site: None },
        });
        self.index.insert(name.to_owned(), id);
        id
    }

    fn cmds(&mut self, cmds: &[Cmd]) {
        for cmd in cmds {
            if let Cmd::Array { name, sharing, why, .. } = cmd {
                let space = match sharing {
                    Sharing::WorkGroup => Space::Local,
                    Sharing::WorkItem => Space::Private,
                };
                self.add_ptr(name, Decl::In(space), why.to_string());
            }
            for part in cmd.parts() {
                match part {
                    Part::Expr(e) => self.expr(e),
                    Part::Body(body) => self.cmds(body),
                }
            }
            if let Cmd::Store { ptr, .. } | Cmd::Atomic { ptr, .. } = cmd
                && let Some(&p) = self.index.get(&**ptr)
            {
                self.facts.push(Fact::Store {
                    ptr: p,
                    reason: Reason { text: format!("`{ptr}` is written"), site: None },
                });
            }
        }
    }

    fn expr(&mut self, e: &CExpr) {
        match e {
            CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_) => {}
            CExpr::Bin(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => self.expr(a),
            CExpr::Call(_, args) => args.iter().for_each(|a| self.expr(a)),
            CExpr::Load(ptr, index) => {
                self.expr(index);
                if let Some(&p) = self.index.get(&**ptr) {
                    self.facts.push(Fact::Load {
                        ptr: p,
                        reason: Reason { text: format!("`{ptr}` is read"), site: None },
                    });
                }
            }
            CExpr::Select(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            CExpr::Invoke { func, name, site, args } => {
                let callee = &self.functions[*func as usize];
                let mut ptr_args = Vec::new();
                for (param, arg) in callee.params.iter().zip(args) {
                    match (param, arg) {
                        (FParam::Ptr { .. }, CExpr::Var(v)) => {
                            if let Some(&p) = self.index.get(&**v) {
                                ptr_args.push(p);
                            }
                        }
                        _ => self.expr(arg),
                    }
                }
                self.facts.push(Fact::Call {
                    callee: FuncId((self.n_kernels + *func as usize) as u32),
                    args: ptr_args,
                    ret: None,
                    reason: Reason {
                        text: match self.site_positions.get(site) {
                            Some(at) => format!("passed to `{name}` ({at})"),
                            None => format!("passed to `{name}`"),
                        },
                        site: Some(weft_aspace::Site(*site)),
                    },
                });
            }
        }
    }
}

fn kernel_facts(
    k: &KernelImp,
    functions: &[FuncImp],
    n_kernels: usize,
    site_positions: &FxHashMap<u32, String>,
) -> (Func, Vec<String>) {
    let mut facts = Facts::new(functions, n_kernels, site_positions);
    let notes: FxHashMap<&str, &str> =
        k.param_notes.iter().map(|(n, w)| (n.as_str(), w.as_str())).collect();
    let constant = constant_candidates(k);
    let mut params = Vec::new();
    for (name, kind) in &k.params {
        let why = notes.get(name.as_str()).map(|w| w.to_string()).unwrap_or_default();
        let id = match kind {
            ParamKind::Buffer(_) if constant.contains(name.as_str()) => facts.add_ptr(
                name,
                Decl::In(Space::Constant),
                format!(
                    "{why}; read-only, read alike by all work-items, and at most {} KiB",
                    CONSTANT_BYTES / 1024
                ),
            ),
            ParamKind::Buffer(_) => facts.add_ptr(name, Decl::In(Space::Global), why),
            ParamKind::Local(_) => facts.add_ptr(name, Decl::In(Space::Local), why),
            ParamKind::Scalar(_) => continue,
        };
        params.push(id);
    }
    facts.cmds(&k.body);
    let names = facts.ptrs.iter().map(|p| p.name.clone()).collect();
    let func = Func {
        name: k.name.clone(),
        kind: FuncKind::Kernel,
        params,
        ret: None,
        ptrs: facts.ptrs,
        facts: facts.facts,
    };
    (func, names)
}

fn function_facts(
    f: &FuncImp,
    functions: &[FuncImp],
    n_kernels: usize,
    site_positions: &FxHashMap<u32, String>,
) -> (Func, Vec<String>) {
    let mut facts = Facts::new(functions, n_kernels, site_positions);
    let mut params = Vec::new();
    for p in &f.params {
        if let FParam::Ptr { name, why, .. } = p {
            params.push(facts.add_ptr(name, Decl::Generic, why.clone()));
        }
    }
    facts.cmds(&f.body);
    let names = facts.ptrs.iter().map(|p| p.name.clone()).collect();
    let func = Func {
        name: f.name.clone(),
        kind: FuncKind::Helper,
        params,
        ret: None,
        ptrs: facts.ptrs,
        facts: facts.facts,
    };
    (func, names)
}

/// Buffer parameters that may live in `constant` memory: never written, never passed
/// to a function, read only at indices that are the same for every work-item of a
/// work-group, and small enough for every device (the spec's minimum limits).
fn constant_candidates(k: &KernelImp) -> FxHashSet<String> {
    let lens: FxHashMap<&str, i64> = k.buffer_lens.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    let mut varying = FxHashSet::default();
    // Iterate to a fixed point: a loop may make a variable varying after its use.
    loop {
        let before = varying.len();
        mark_varying(&k.body, false, &mut varying);
        if varying.len() == before {
            break;
        }
    }
    let mut disqualified = FxHashSet::default();
    let mut read = FxHashSet::default();
    uses(&k.body, &varying, &mut read, &mut disqualified);
    let mut out = FxHashSet::default();
    let mut bytes = 0;
    for (name, kind) in &k.params {
        let ParamKind::Buffer(elem) = kind else { continue };
        let Some(&len) = lens.get(name.as_str()) else { continue };
        let size = len.saturating_mul(elem.size_in_bytes() as i64);
        if read.contains(name.as_str())
            && !disqualified.contains(name.as_str())
            && bytes + size <= CONSTANT_BYTES
            && out.len() < CONSTANT_ARGS
        {
            bytes += size;
            out.insert(name.clone());
        }
    }
    out
}

fn mentions_varying(e: &CExpr, varying: &FxHashSet<String>) -> bool {
    match e {
        CExpr::Var(v) => varying.contains(&**v),
        CExpr::Int(_) | CExpr::Lit(_) => false,
        CExpr::Bin(_, a, b) => mentions_varying(a, varying) || mentions_varying(b, varying),
        CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => mentions_varying(a, varying),
        CExpr::Call(name, args) => {
            matches!(&**name, "get_global_id" | "get_local_id")
                || args.iter().any(|a| mentions_varying(a, varying))
        }
        // A loaded value may differ between work-items.
        CExpr::Load(..) | CExpr::Invoke { .. } => true,
        CExpr::Select(c, a, b) => {
            mentions_varying(c, varying)
                || mentions_varying(a, varying)
                || mentions_varying(b, varying)
        }
    }
}

/// Marks the variables whose value may differ between the work-items of a group.
fn mark_varying(cmds: &[Cmd], under_varying: bool, varying: &mut FxHashSet<String>) {
    for cmd in cmds {
        match cmd {
            Cmd::Decl { name, init, .. } => {
                if under_varying || init.as_ref().is_some_and(|e| mentions_varying(e, varying)) {
                    varying.insert(name.to_string());
                }
            }
            Cmd::Assign { name, value } => {
                if under_varying || mentions_varying(value, varying) {
                    varying.insert(name.to_string());
                }
            }
            Cmd::If { cond, then_cmds, else_cmds } => {
                let v = under_varying || mentions_varying(cond, varying);
                mark_varying(then_cmds, v, varying);
                mark_varying(else_cmds, v, varying);
            }
            Cmd::For { var, bound, body, .. } => {
                let v = under_varying || mentions_varying(bound, varying);
                if v {
                    varying.insert(var.to_string());
                }
                mark_varying(body, v, varying);
            }
            Cmd::ParFor { level, var, bound, body, .. } => {
                let v = under_varying || mentions_varying(bound, varying);
                if v || matches!(
                    level,
                    ParLevel::Grid(_) | ParLevel::GridCovered(_) | ParLevel::Thread
                ) {
                    varying.insert(var.to_string());
                }
                mark_varying(body, v, varying);
            }
            Cmd::While { cond_cmds, cond, body } => {
                mark_varying(cond_cmds, under_varying, varying);
                let v = under_varying || mentions_varying(cond, varying);
                mark_varying(body, v, varying);
            }
            // Another work-item's update comes back.
            Cmd::Atomic { fetch: Some(name), .. } => {
                varying.insert(name.to_string());
            }
            // A loaded value may differ between work-items.
            Cmd::VectorLoad { lanes, .. } => {
                varying.extend(lanes.iter().map(|l| l.to_string()));
            }
            Cmd::Array { .. }
            | Cmd::Store { .. }
            | Cmd::Atomic { .. }
            | Cmd::Return(_)
            | Cmd::Barrier
            | Cmd::Fail { .. }
            | Cmd::Comment(_)
            | Cmd::Exit
            | Cmd::Unroll => {}
        }
    }
}

/// Buffers read (`read`), and buffers that cannot be `constant` (`bad`): written,
/// passed to a function, or read at an index that varies between work-items.
fn uses(
    cmds: &[Cmd],
    varying: &FxHashSet<String>,
    read: &mut FxHashSet<String>,
    bad: &mut FxHashSet<String>,
) {
    fn expr(
        e: &CExpr,
        varying: &FxHashSet<String>,
        read: &mut FxHashSet<String>,
        bad: &mut FxHashSet<String>,
    ) {
        match e {
            CExpr::Var(_) | CExpr::Int(_) | CExpr::Lit(_) => {}
            CExpr::Bin(_, a, b) => {
                expr(a, varying, read, bad);
                expr(b, varying, read, bad);
            }
            CExpr::Not(a) | CExpr::Neg(a) | CExpr::Cast(_, a) => expr(a, varying, read, bad),
            CExpr::Call(_, args) => args.iter().for_each(|a| expr(a, varying, read, bad)),
            CExpr::Invoke { args, .. } => {
                for a in args {
                    if let CExpr::Var(v) = a {
                        bad.insert(v.to_string());
                    }
                    expr(a, varying, read, bad);
                }
            }
            CExpr::Load(ptr, index) => {
                read.insert(ptr.to_string());
                if mentions_varying(index, varying) {
                    bad.insert(ptr.to_string());
                }
                expr(index, varying, read, bad);
            }
            CExpr::Select(c, a, b) => {
                expr(c, varying, read, bad);
                expr(a, varying, read, bad);
                expr(b, varying, read, bad);
            }
        }
    }
    for cmd in cmds {
        if let Cmd::Store { ptr, .. } | Cmd::Atomic { ptr, .. } = cmd {
            bad.insert(ptr.to_string());
        }
        for part in cmd.parts() {
            match part {
                Part::Expr(e) => expr(e, varying, read, bad),
                Part::Body(body) => uses(body, varying, read, bad),
            }
        }
    }
}
