//! Specialisation (digest 3.10): the monomorphisation worklist from the kernels, clone naming,
//! the static restriction for OpenCL 1.2, and generic instances for OpenCL 2.0.
//!
//! An instance is a function with a closed set per scheme variable (`subst`). Applying it to the
//! function's canonical rows closes every row, and applying it to each call's instantiation gives
//! the callee's `subst`, which names (or creates) the callee instance.
//!
//! OpenCL 1.2: an instance is created per distinct `subst`; a call whose callee `subst` is a
//! variant (two labels in one variable) creates no instance, and every pointer with two labels
//! is an `aspace-two-spaces` error, reported once per group of pointers joined by flows.
//!
//! OpenCL 2.0: a helper none of whose instantiations puts `constant` in a scheme variable gets
//! ONE instance (named like the helper) whose `subst` is the union of all of them; its variant
//! pointers become [`Resolved::Generic`]. Other helpers are cloned as in 1.2 but variant rows
//! without `constant` are allowed. The union is found by a growing worklist, then the final
//! instances are built by a second run with the unions frozen, so no stale clone survives.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::diagnostic::AspaceDiagnostic;
use crate::infer::{FuncInfo, idx32};
use crate::program::{Decl, Fact, FuncId, FuncKind, Program, PtrId, Reason, Target};
use crate::row::Row;
use crate::space::{Space, SpaceSet};
use crate::trace::{Pred, Trace, trace};

/// Index into [`crate::Inference::instances`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceId(pub u32);

/// A pointer's space in one instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resolved {
    /// Exactly one space. A row that stayed `{}` (the pointer never receives a pointer value)
    /// resolves to `private` (digest 3.6.4).
    Space(Space),
    /// Several spaces: an OpenCL 2.0 generic pointer (never containing `constant` unless an
    /// `aspace-constant-in-generic` error was reported). In OpenCL 1.2 it appears only together
    /// with an `aspace-two-spaces` error.
    Generic(SpaceSet),
}

impl Resolved {
    pub fn of(set: SpaceSet) -> Resolved {
        if set.is_empty() {
            return Resolved::Space(Space::Private);
        }
        match set.is_singleton() {
            Some(space) => Resolved::Space(space),
            None => Resolved::Generic(set),
        }
    }
}

/// One reachable (function, instantiation) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub func: FuncId,
    /// Kernels keep their name; clones are `name__G_L` (one letter group per pointer parameter);
    /// OpenCL 2.0 generic instances keep the helper's name.
    pub name: String,
    /// The closed set of each scheme variable.
    pub subst: Vec<SpaceSet>,
    /// Whether this is an OpenCL 2.0 generic instance standing for all instantiations.
    pub generic: bool,
    pub(crate) rows: Vec<SpaceSet>,
    pub(crate) callees: Vec<Option<InstanceId>>,
}

fn apply(row: &Row, subst: &[SpaceSet]) -> SpaceSet {
    match row.tail {
        None => row.labels,
        Some(var) => {
            row.labels.union(subst.get(var.0 as usize).copied().unwrap_or(SpaceSet::EMPTY))
        }
    }
}

enum Policy<'a> {
    /// One instance per distinct `subst`; `reject_variants` refuses variant callee instances.
    Exact { reject_variants: bool },
    /// `merged` helpers get one instance; `frozen` fixes their `subst` (the second run).
    Merge { merged: &'a BTreeSet<FuncId>, frozen: Option<&'a BTreeMap<FuncId, Vec<SpaceSet>>> },
}

struct Worklist<'a> {
    program: &'a Program,
    infos: &'a [FuncInfo],
    policy: Policy<'a>,
    instances: Vec<Instance>,
    keys: BTreeMap<(FuncId, Option<Vec<SpaceSet>>), InstanceId>,
    queue: VecDeque<InstanceId>,
    /// Calls refused because the callee instantiation is a variant: (caller, fact).
    refused: Vec<(InstanceId, usize)>,
}

impl<'a> Worklist<'a> {
    fn new(program: &'a Program, infos: &'a [FuncInfo], policy: Policy<'a>) -> Worklist<'a> {
        Worklist {
            program,
            infos,
            policy,
            instances: Vec::new(),
            keys: BTreeMap::new(),
            queue: VecDeque::new(),
            refused: Vec::new(),
        }
    }

    fn run(mut self) -> (Vec<Instance>, Vec<(InstanceId, usize)>) {
        for (idx, func) in self.program.funcs.iter().enumerate() {
            if func.kind == FuncKind::Kernel {
                let fid = FuncId(idx32(idx));
                let n_vars = self.infos[idx].scheme.vars.len();
                self.get_or_create(fid, vec![SpaceSet::EMPTY; n_vars]);
            }
        }
        while let Some(id) = self.queue.pop_front() {
            self.process(id);
        }
        (self.instances, self.refused)
    }

    fn is_merged(&self, func: FuncId) -> bool {
        match &self.policy {
            Policy::Exact { .. } => false,
            Policy::Merge { merged, .. } => merged.contains(&func),
        }
    }

    fn get_or_create(&mut self, func: FuncId, subst: Vec<SpaceSet>) -> InstanceId {
        let merged = self.is_merged(func);
        let subst = match &self.policy {
            Policy::Merge { frozen: Some(frozen), .. } if merged => {
                frozen.get(&func).cloned().unwrap_or(subst)
            }
            _ => subst,
        };
        let key = (func, if merged { None } else { Some(subst.clone()) });
        if let Some(id) = self.keys.get(&key).copied() {
            if merged {
                let instance = &mut self.instances[id.0 as usize];
                let grown: Vec<SpaceSet> =
                    instance.subst.iter().zip(&subst).map(|(old, new)| old.union(*new)).collect();
                if grown != instance.subst {
                    instance.subst = grown;
                    self.queue.push_back(id);
                }
            }
            return id;
        }
        let id = InstanceId(idx32(self.instances.len()));
        self.instances.push(Instance {
            func,
            name: String::new(),
            subst,
            generic: merged,
            rows: Vec::new(),
            callees: Vec::new(),
        });
        self.keys.insert(key, id);
        self.queue.push_back(id);
        id
    }

    fn process(&mut self, id: InstanceId) {
        let instance = &self.instances[id.0 as usize];
        let (fid, subst) = (instance.func, instance.subst.clone());
        let info = &self.infos[fid.0 as usize];
        let rows = info.rows.iter().map(|row| apply(row, &subst)).collect();
        let mut callees = vec![None; info.call_insts.len()];
        for (fact_idx, inst) in info.call_insts.iter().enumerate() {
            let (Some(inst), Some(Fact::Call { callee, .. })) =
                (inst, self.program.funcs[fid.0 as usize].facts.get(fact_idx))
            else {
                continue;
            };
            // A callee variable that occurs in no parameter row only carries pointers out of the
            // callee (its result); inside the callee nothing flows into it, so `{}` is exact
            // there, and the caller keeps its own (larger) row. Without this, labels the caller
            // mixes into the result would leak back into the callee (digest 8.20).
            let callee_params = &self.infos[callee.0 as usize].scheme.params;
            let callee_subst: Vec<SpaceSet> = inst
                .iter()
                .enumerate()
                .map(|(var, row)| {
                    let in_params = callee_params
                        .iter()
                        .any(|param| param.tail.is_some_and(|tail| tail.0 as usize == var));
                    if in_params { apply(row, &subst) } else { SpaceSet::EMPTY }
                })
                .collect();
            let variant = callee_subst.iter().any(|set| set.len() > 1);
            if variant && matches!(self.policy, Policy::Exact { reject_variants: true }) {
                self.refused.push((id, fact_idx));
                continue;
            }
            callees[fact_idx] = Some(self.get_or_create(*callee, callee_subst));
        }
        let instance = &mut self.instances[id.0 as usize];
        instance.rows = rows;
        instance.callees = callees;
    }
}

/// The final instances and the diagnostics of the static restriction.
pub(crate) fn specialise(
    program: &Program,
    infos: &[FuncInfo],
    target: Target,
    diags: &mut Vec<AspaceDiagnostic>,
) -> Vec<Instance> {
    let (mut instances, refused) = match target {
        Target::OpenCl12 => {
            Worklist::new(program, infos, Policy::Exact { reject_variants: true }).run()
        }
        Target::OpenCl20 => {
            let (exact, _) =
                Worklist::new(program, infos, Policy::Exact { reject_variants: false }).run();
            let mut with_constant: BTreeSet<FuncId> = BTreeSet::new();
            let mut reached: BTreeSet<FuncId> = BTreeSet::new();
            for instance in &exact {
                reached.insert(instance.func);
                if instance.subst.iter().any(|set| set.contains(Space::Constant)) {
                    with_constant.insert(instance.func);
                }
            }
            let merged: BTreeSet<FuncId> = reached
                .into_iter()
                .filter(|func| {
                    program.funcs[func.0 as usize].kind == FuncKind::Helper
                        && !infos[func.0 as usize].scheme.vars.is_empty()
                        && !with_constant.contains(func)
                })
                .collect();
            let (grown, _) =
                Worklist::new(program, infos, Policy::Merge { merged: &merged, frozen: None })
                    .run();
            let frozen: BTreeMap<FuncId, Vec<SpaceSet>> = grown
                .iter()
                .filter(|instance| instance.generic)
                .map(|instance| (instance.func, instance.subst.clone()))
                .collect();
            Worklist::new(program, infos, Policy::Merge { merged: &merged, frozen: Some(&frozen) })
                .run()
        }
    };
    name_instances(program, infos, &mut instances);
    let callers = callers(&instances);
    let ctx = InstanceCtx { program, infos, instances: &instances, callers: &callers };
    let mut reported: BTreeSet<(FuncId, u32)> = BTreeSet::new();
    for idx in 0..instances.len() {
        ctx.check_variants(InstanceId(idx32(idx)), target, &mut reported, diags);
    }
    let mut reported_calls: BTreeSet<(FuncId, usize)> = BTreeSet::new();
    for (caller, fact_idx) in refused {
        ctx.report_refused_call(caller, fact_idx, &mut reported_calls, diags);
    }
    instances
}

fn name_instances(program: &Program, infos: &[FuncInfo], instances: &mut [Instance]) {
    let mut used: BTreeSet<String> = BTreeSet::new();
    for instance in instances.iter() {
        if program.funcs[instance.func.0 as usize].kind == FuncKind::Kernel {
            used.insert(program.funcs[instance.func.0 as usize].name.clone());
        }
    }
    for instance in instances.iter_mut() {
        let func = &program.funcs[instance.func.0 as usize];
        if func.kind == FuncKind::Kernel {
            instance.name = func.name.clone();
            continue;
        }
        // Without scheme variables (or parameters, see `process`) there is only one instance,
        // which keeps the plain name.
        let n_vars = infos[instance.func.0 as usize].scheme.vars.len();
        let base = if instance.generic || n_vars == 0 || func.params.is_empty() {
            func.name.clone()
        } else {
            let groups: Vec<String> = func
                .params
                .iter()
                .map(|param| match instance.rows.get(param.0 as usize) {
                    None => "X".to_owned(),
                    Some(set) if set.is_empty() => Space::Private.letter().to_string(),
                    Some(set) => set.letters(),
                })
                .collect();
            format!("{}__{}", func.name, groups.join("_"))
        };
        let mut name = base.clone();
        let mut suffix = 2;
        while used.contains(&name) {
            name = format!("{base}_{suffix}");
            suffix += 1;
        }
        used.insert(name.clone());
        instance.name = name;
    }
}

/// Per instance, the call sites that call it.
pub(crate) fn callers(instances: &[Instance]) -> Vec<Vec<(InstanceId, usize)>> {
    let mut out = vec![Vec::new(); instances.len()];
    for (idx, instance) in instances.iter().enumerate() {
        for (fact_idx, callee) in instance.callees.iter().enumerate() {
            if let Some(callee) = callee {
                out[callee.0 as usize].push((InstanceId(idx32(idx)), fact_idx));
            }
        }
    }
    out
}

/// Read-only view for instance-level provenance and checks.
pub(crate) struct InstanceCtx<'a> {
    pub(crate) program: &'a Program,
    pub(crate) infos: &'a [FuncInfo],
    pub(crate) instances: &'a [Instance],
    pub(crate) callers: &'a [Vec<(InstanceId, usize)>],
}

impl InstanceCtx<'_> {
    fn row(&self, id: InstanceId, ptr: PtrId) -> SpaceSet {
        self.instances
            .get(id.0 as usize)
            .and_then(|instance| instance.rows.get(ptr.0 as usize))
            .copied()
            .unwrap_or(SpaceSet::EMPTY)
    }

    /// Where `ptr` of instance `id` gets `label` from, across calls and callers.
    pub(crate) fn trace(&self, id: InstanceId, ptr: PtrId, label: Space) -> Option<Trace> {
        let preds = |(inst, node): (u32, u32)| {
            let mut out = Vec::new();
            let Some(instance) = self.instances.get(inst as usize) else { return out };
            let func = &self.program.funcs[instance.func.0 as usize];
            let info = &self.infos[instance.func.0 as usize];
            let node_ptr = PtrId(node);
            let step = |from: (u32, PtrId), reason: &Reason, leak: bool| Pred::Step {
                from: (from.0, from.1.0),
                reason: reason.clone(),
                leak,
            };
            if let Some(ptr) = func.ptr(node_ptr)
                && ptr.decl == Decl::In(label)
            {
                out.push(Pred::Origin(Trace {
                    origin: format!("`{}`", ptr.name),
                    chain: vec![ptr.reason.clone()],
                }));
            }
            for (fact_idx, fact) in func.facts.iter().enumerate() {
                if !info.active.get(fact_idx).copied().unwrap_or(false) {
                    continue;
                }
                match fact {
                    Fact::Flow { from, to, reason } => {
                        if *to == node_ptr {
                            out.push(step((inst, *from), reason, false));
                        }
                        if *from == node_ptr {
                            out.push(step((inst, *to), reason, true));
                        }
                    }
                    Fact::Cast { from, to, space, reason } => {
                        if *space == label && (*to == node_ptr || *from == node_ptr) {
                            out.push(Pred::Origin(Trace {
                                origin: format!("the cast to {space}"),
                                chain: vec![reason.clone()],
                            }));
                        }
                    }
                    Fact::Call { args, ret, reason, .. } => {
                        let Some(Some(callee)) = instance.callees.get(fact_idx) else { continue };
                        let callee_func =
                            &self.program.funcs[self.instances[callee.0 as usize].func.0 as usize];
                        if *ret == Some(node_ptr)
                            && let Some(callee_ret) = callee_func.ret
                        {
                            out.push(step((callee.0, callee_ret), reason, false));
                        }
                        for (idx, arg) in args.iter().enumerate() {
                            if *arg == node_ptr
                                && let Some(param) = callee_func.params.get(idx)
                            {
                                out.push(step((callee.0, *param), reason, true));
                            }
                        }
                    }
                    Fact::Load { .. } | Fact::Store { .. } | Fact::Bound { .. } => {}
                }
            }
            for (caller, fact_idx) in &self.callers[inst as usize] {
                let caller_func =
                    &self.program.funcs[self.instances[caller.0 as usize].func.0 as usize];
                let Some(Fact::Call { args, ret, reason, .. }) = caller_func.facts.get(*fact_idx)
                else {
                    continue;
                };
                for (idx, param) in func.params.iter().enumerate() {
                    if *param == node_ptr
                        && let Some(arg) = args.get(idx)
                    {
                        out.push(step((caller.0, *arg), reason, false));
                    }
                }
                if func.ret == Some(node_ptr)
                    && let Some(ret) = ret
                {
                    out.push(step((caller.0, *ret), reason, true));
                }
            }
            out
        };
        let contains =
            |(inst, node): (u32, u32)| self.row(InstanceId(inst), PtrId(node)).contains(label);
        trace((id.0, ptr.0), preds, contains)
    }

    fn label_traces(&self, id: InstanceId, ptr: PtrId, set: SpaceSet) -> Vec<(Space, Trace)> {
        let func = &self.program.funcs[self.instances[id.0 as usize].func.0 as usize];
        set.iter()
            .map(|label| {
                let trace = self.trace(id, ptr, label).unwrap_or_else(|| Trace {
                    origin: format!("`{}`", func.ptr_name(ptr)),
                    chain: func.ptr(ptr).map(|ptr| ptr.reason.clone()).into_iter().collect(),
                });
                (label, trace)
            })
            .collect()
    }

    /// Reports variant pointers of one instance: in 1.2 every variant, in 2.0 variants with
    /// `constant`. Pointers joined by flows or a shared row form one group and one error.
    fn check_variants(
        &self,
        id: InstanceId,
        target: Target,
        reported: &mut BTreeSet<(FuncId, u32)>,
        diags: &mut Vec<AspaceDiagnostic>,
    ) {
        let instance = &self.instances[id.0 as usize];
        let func = &self.program.funcs[instance.func.0 as usize];
        let info = &self.infos[instance.func.0 as usize];
        let bad = |set: SpaceSet| match target {
            Target::OpenCl12 => set.len() > 1,
            Target::OpenCl20 => set.len() > 1 && set.contains(Space::Constant),
        };
        let n_ptrs = instance.rows.len();
        let mut group: Vec<usize> = (0..n_ptrs).collect();
        fn find(group: &mut [usize], idx: usize) -> usize {
            let mut root = idx;
            while group[root] != root {
                root = group[root];
            }
            group[idx] = root;
            root
        }
        let join = |group: &mut Vec<usize>, left: usize, right: usize| {
            let (left, right) = (find(group, left), find(group, right));
            let (low, high) = (left.min(right), left.max(right));
            group[high] = low;
        };
        let is_bad = |ptr: usize| instance.rows.get(ptr).is_some_and(|set| bad(*set));
        for (fact_idx, fact) in func.facts.iter().enumerate() {
            if !info.active.get(fact_idx).copied().unwrap_or(false) {
                continue;
            }
            if let Fact::Flow { from, to, .. } = fact
                && is_bad(from.0 as usize)
                && is_bad(to.0 as usize)
            {
                join(&mut group, from.0 as usize, to.0 as usize);
            }
        }
        for left in 0..n_ptrs {
            for right in left + 1..n_ptrs {
                if is_bad(left)
                    && is_bad(right)
                    && info.rows[left].tail.is_some()
                    && info.rows[left] == info.rows[right]
                {
                    join(&mut group, left, right);
                }
            }
        }
        let mut seen_roots = BTreeSet::new();
        for ptr in 0..n_ptrs {
            if !is_bad(ptr) {
                continue;
            }
            let root = find(&mut group, ptr);
            if !seen_roots.insert(root) {
                continue;
            }
            let members: Vec<usize> =
                (0..n_ptrs).filter(|idx| is_bad(*idx) && find(&mut group, *idx) == root).collect();
            // The representative receives a flow from outside the group, if any member does.
            let rep = members
                .iter()
                .copied()
                .find(|member| {
                    func.facts.iter().any(|fact| match fact {
                        Fact::Flow { from, to, .. } => {
                            to.0 as usize == *member && !members.contains(&(from.0 as usize))
                        }
                        _ => false,
                    })
                })
                .unwrap_or(root);
            let rep_ptr = PtrId(idx32(rep));
            if !reported.insert((instance.func, idx32(rep))) {
                continue;
            }
            let set = instance.rows[rep];
            let traces = self.label_traces(id, rep_ptr, set);
            let mut chain: Vec<Reason> = Vec::new();
            for (_, trace) in &traces {
                chain.extend(trace.chain.iter().cloned());
            }
            let use_reason = func
                .facts
                .iter()
                .find_map(|fact| match fact {
                    Fact::Load { ptr, reason } | Fact::Store { ptr, reason }
                        if members.contains(&(ptr.0 as usize)) =>
                    {
                        Some(reason.clone())
                    }
                    _ => None,
                })
                .or_else(|| func.ptr(rep_ptr).map(|ptr| ptr.reason.clone()));
            chain.extend(use_reason);
            let sources: Vec<String> = traces
                .iter()
                .map(|(label, trace)| format!("{label} memory (from {})", trace.origin))
                .collect();
            let (code, tail) = match target {
                Target::OpenCl12 => {
                    ("aspace-two-spaces", "OpenCL 1.2 has no generic address space")
                }
                Target::OpenCl20 => (
                    "aspace-constant-in-generic",
                    "the OpenCL 2.0 generic address space does not include constant",
                ),
            };
            let message = format!(
                "`{}` may point to {}, but {tail}",
                func.ptr_name(rep_ptr),
                join_or(&sources)
            );
            diags.push(AspaceDiagnostic {
                code,
                message,
                func: instance.func,
                ptr: Some(rep_ptr),
                chain,
            });
        }
    }

    /// A 1.2 call whose callee instantiation is a variant although no caller pointer involved is:
    /// several arguments (or the result) share one row in the callee and get different spaces.
    fn report_refused_call(
        &self,
        caller: InstanceId,
        fact_idx: usize,
        reported: &mut BTreeSet<(FuncId, usize)>,
        diags: &mut Vec<AspaceDiagnostic>,
    ) {
        let instance = &self.instances[caller.0 as usize];
        let func = &self.program.funcs[instance.func.0 as usize];
        let info = &self.infos[instance.func.0 as usize];
        let Some(Fact::Call { callee, args, ret, reason }) = func.facts.get(fact_idx) else {
            return;
        };
        let Some(Some(inst)) = info.call_insts.get(fact_idx) else { return };
        let callee_info = &self.infos[callee.0 as usize];
        let callee_func = &self.program.funcs[callee.0 as usize];
        for (var_idx, row) in inst.iter().enumerate() {
            let set = apply(row, &instance.subst);
            if set.len() < 2 {
                continue;
            }
            let var = Some(crate::row::RowVar(idx32(var_idx)));
            let mut involved: Vec<(PtrId, String)> = Vec::new();
            for (idx, arg) in args.iter().enumerate() {
                if callee_info.scheme.params.get(idx).and_then(|row| row.tail) == var {
                    let param =
                        callee_func.params.get(idx).map_or("?", |ptr| callee_func.ptr_name(*ptr));
                    involved.push((*arg, format!("`{param}`")));
                }
            }
            if let (Some(ret), Some(ret_row)) = (ret, callee_info.scheme.ret)
                && ret_row.tail == var
            {
                involved.push((*ret, "its result".to_owned()));
            }
            // A variant caller pointer is reported on its own; do not repeat it here.
            if involved.iter().any(|(ptr, _)| self.row(caller, *ptr).len() > 1) {
                continue;
            }
            if !reported.insert((instance.func, fact_idx)) {
                continue;
            }
            let mut chain = Vec::new();
            let mut sources = Vec::new();
            for label in set.iter() {
                let holder =
                    involved.iter().find(|(ptr, _)| self.row(caller, *ptr).contains(label));
                let trace = holder.and_then(|(ptr, _)| self.trace(caller, *ptr, label));
                match trace {
                    Some(trace) => {
                        chain.extend(trace.chain);
                        sources.push(format!("{label} memory (from {})", trace.origin));
                    }
                    None => sources.push(format!("{label} memory")),
                }
            }
            chain.push(reason.clone());
            let names: Vec<String> = involved.iter().map(|(_, name)| name.clone()).collect();
            let message = format!(
                "{} of `{}` share one address space, but this call gives them {}, and OpenCL 1.2 has no generic address space",
                join_and(&names),
                callee_func.name,
                join_and(&sources)
            );
            let ptr = involved.first().map(|(ptr, _)| *ptr);
            diags.push(AspaceDiagnostic {
                code: "aspace-two-spaces",
                message,
                func: instance.func,
                ptr,
                chain,
            });
        }
    }
}

fn join_words(items: &[String], word: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {word} {last}", rest.join(", ")),
    }
}

fn join_or(items: &[String]) -> String {
    join_words(items, "or")
}

fn join_and(items: &[String]) -> String {
    join_words(items, "and")
}
