//! Per-function inference (digest 3.3-3.6): validation, call-graph order, the walk over facts
//! with embedding at flows, generalisation to canonical schemes, and defaulting.
//!
//! Functions are inferred callees first (topological order of the call graph; calls on a cycle
//! are reported as `aspace-recursion` and ignored). Each function gets its own [`RowStore`], so
//! fresh-variable numbering is per function and independent of the order of `Program::funcs`.
//! After the walk, a helper's scheme quantifies the tails of its parameter and return rows, in
//! order of appearance; every other tail (locals that never meet a parameter) is closed to `{}`
//! (digest 3.6.2). A kernel closes every tail (3.6.3), so its rows are all closed.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use crate::diagnostic::AspaceDiagnostic;
use crate::program::{Decl, Fact, Func, FuncId, FuncKind, Options, Program, PtrId, Reason};
use crate::row::{Cause, Row, RowError, RowStore, RowVar, Side, write_row};
use crate::space::{Space, SpaceSet};
use crate::trace::{Pred, Trace, trace};

/// A principal, canonical address-space scheme `∀r1..rn. P => (params) -> ret`, printed with
/// `_` as the result of a function that returns no pointer.
///
/// Quantified variable `k` is `RowVar(k)` in the rows below and prints as `r{k+1}`; variables
/// are numbered in order of first appearance in `params` then `ret`, so equal schemes compare
/// equal whatever the body's fresh-variable history was (digest 5.12).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scheme {
    /// The lacks set of each quantified variable: the predicates `rk \ a`.
    pub vars: Vec<SpaceSet>,
    /// One row per pointer parameter.
    pub params: Vec<Row>,
    /// The returned pointer's row, if the function returns a pointer.
    pub ret: Option<Row>,
}

/// What a lacks predicate stands for, to name it in a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CauseKind {
    Store,
    Bound { text: String },
}

/// A lacks predicate's origin: its kind and the chain from the call sites it was instantiated
/// through down to the store or bound that imposed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CauseData {
    pub(crate) kind: CauseKind,
    pub(crate) chain: Vec<Reason>,
}

/// Everything later phases need from one function's inference.
#[derive(Clone, Debug)]
pub(crate) struct FuncInfo {
    pub(crate) scheme: Scheme,
    /// Each pointer's final row, with tails renamed to scheme variables.
    pub(crate) rows: Vec<Row>,
    /// Per fact: for a call, the callee's instantiation (one row per callee scheme variable, in
    /// this function's scheme variables).
    pub(crate) call_insts: Vec<Option<Vec<Row>>>,
    /// Per scheme variable and label: why the variable lacks it.
    pub(crate) lacks_causes: Vec<[Option<CauseData>; 4]>,
    /// Per fact: whether it passed validation and is not a recursive call.
    pub(crate) active: Vec<bool>,
}

impl Scheme {
    fn var_name(var: RowVar) -> String {
        format!("r{}", u64::from(var.0) + 1)
    }

    /// Prints one row of this scheme with its variables renamed `r1..rn`.
    pub fn display_row(row: Row) -> impl fmt::Display {
        DisplayRow(row)
    }
}

struct DisplayRow(Row);

impl fmt::Display for DisplayRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_row(f, self.0, &Scheme::var_name)
    }
}

impl fmt::Display for Scheme {
    /// `∀r1 r2. (r1\constant, r2\global) => (ASpace r1, ASpace {global | r2}) -> ASpace r1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.vars.is_empty() {
            let names: Vec<String> =
                (0..self.vars.len()).map(|idx| Scheme::var_name(RowVar(idx as u32))).collect();
            write!(f, "∀{}. ", names.join(" "))?;
        }
        let mut preds = Vec::new();
        for (idx, lacks) in self.vars.iter().enumerate() {
            for label in lacks.iter() {
                preds.push(format!("{}\\{label}", Scheme::var_name(RowVar(idx as u32))));
            }
        }
        if !preds.is_empty() {
            write!(f, "({}) => ", preds.join(", "))?;
        }
        let params: Vec<String> =
            self.params.iter().map(|row| format!("ASpace {}", DisplayRow(*row))).collect();
        write!(f, "({}) -> ", params.join(", "))?;
        match self.ret {
            None => f.write_str("_"),
            Some(row) => write!(f, "ASpace {}", DisplayRow(row)),
        }
    }
}

pub(crate) fn idx32(idx: usize) -> u32 {
    u32::try_from(idx).expect("invariant: fewer than 2^32 functions, pointers and facts")
}

/// Validation, recursion check and per-function inference of the whole program.
pub(crate) fn infer_funcs(
    program: &Program,
    options: &Options,
    diags: &mut Vec<AspaceDiagnostic>,
) -> Vec<FuncInfo> {
    let mut active: Vec<Vec<bool>> = program
        .funcs
        .iter()
        .enumerate()
        .map(|(idx, func)| validate(program, FuncId(idx32(idx)), func, diags))
        .collect();
    let order = call_order(program, &mut active, diags);
    let mut infos: Vec<Option<FuncInfo>> = vec![None; program.funcs.len()];
    for fid in order {
        let func = &program.funcs[fid.0 as usize];
        let info =
            FuncCx::new(program, options, fid, func, &infos, active[fid.0 as usize].clone(), diags)
                .run();
        infos[fid.0 as usize] = Some(info);
    }
    infos
        .into_iter()
        .map(|info| info.expect("invariant: call_order lists every function once"))
        .collect()
}

fn malformed(
    diags: &mut Vec<AspaceDiagnostic>,
    fid: FuncId,
    message: String,
    reason: Option<&Reason>,
) {
    diags.push(AspaceDiagnostic {
        code: "aspace-malformed-program",
        message,
        func: fid,
        ptr: None,
        chain: reason.into_iter().cloned().collect(),
    });
}

/// Checks every id of `func`; returns which facts are usable.
fn validate(
    program: &Program,
    fid: FuncId,
    func: &Func,
    diags: &mut Vec<AspaceDiagnostic>,
) -> Vec<bool> {
    let n_ptrs = func.ptrs.len();
    let in_range = |ptr: PtrId| (ptr.0 as usize) < n_ptrs;
    for ptr in func.params.iter().chain(&func.ret) {
        if !in_range(*ptr) {
            let message = format!(
                "`{}` names pointer {} in its signature but has {n_ptrs} pointers",
                func.name, ptr.0
            );
            malformed(diags, fid, message, None);
        }
    }
    func.facts
        .iter()
        .enumerate()
        .map(|(fact_idx, fact)| {
            let bad_ptr = |ptr: &PtrId| !in_range(*ptr);
            let problem = match fact {
                Fact::Flow { from, to, .. } | Fact::Cast { from, to, .. } => {
                    [from, to].into_iter().find(|ptr| bad_ptr(ptr)).map(|ptr| {
                        format!(
                            "names pointer {}, but `{}` has {n_ptrs} pointers",
                            ptr.0, func.name
                        )
                    })
                }
                Fact::Load { ptr, .. } | Fact::Store { ptr, .. } | Fact::Bound { ptr, .. } => {
                    bad_ptr(ptr).then(|| {
                        format!(
                            "names pointer {}, but `{}` has {n_ptrs} pointers",
                            ptr.0, func.name
                        )
                    })
                }
                Fact::Call { callee, args, ret, .. } => match program.func(*callee) {
                    None => Some(format!(
                        "calls function {}, but there are {}",
                        callee.0,
                        program.funcs.len()
                    )),
                    Some(callee_func) => {
                        if let Some(ptr) = args.iter().chain(ret).find(|ptr| bad_ptr(ptr)) {
                            Some(format!(
                                "names pointer {}, but `{}` has {n_ptrs} pointers",
                                ptr.0, func.name
                            ))
                        } else if args.len() != callee_func.params.len() {
                            Some(format!(
                                "passes {} pointers to `{}`, which takes {}",
                                args.len(),
                                callee_func.name,
                                callee_func.params.len()
                            ))
                        } else if ret.is_some() && callee_func.ret.is_none() {
                            Some(format!(
                                "expects a pointer from `{}`, which returns none",
                                callee_func.name
                            ))
                        } else {
                            None
                        }
                    }
                },
            };
            match problem {
                None => true,
                Some(problem) => {
                    let message =
                        format!("fact {fact_idx} of `{}` {problem}; it is ignored", func.name);
                    malformed(diags, fid, message, Some(fact.reason()));
                    false
                }
            }
        })
        .collect()
}

fn active_callees(program: &Program, fid: FuncId, active: &[Vec<bool>]) -> Vec<(usize, FuncId)> {
    let func = &program.funcs[fid.0 as usize];
    func.facts
        .iter()
        .enumerate()
        .filter(|(idx, _)| active[fid.0 as usize][*idx])
        .filter_map(|(idx, fact)| match fact {
            Fact::Call { callee, .. } => Some((idx, *callee)),
            _ => None,
        })
        .collect()
}

/// Callees-first order (Kahn). Calls inside a strongly connected component of the call graph are
/// reported once per component and deactivated, which makes the rest orderable.
fn call_order(
    program: &Program,
    active: &mut [Vec<bool>],
    diags: &mut Vec<AspaceDiagnostic>,
) -> Vec<FuncId> {
    let n_funcs = program.funcs.len();
    let kahn = |active: &[Vec<bool>]| -> (Vec<FuncId>, Vec<bool>) {
        let mut n_pending: Vec<usize> = vec![0; n_funcs];
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n_funcs];
        for (caller, pending) in n_pending.iter_mut().enumerate() {
            for (_, callee) in active_callees(program, FuncId(idx32(caller)), active) {
                *pending += 1;
                callers[callee.0 as usize].push(caller);
            }
        }
        let mut queue: VecDeque<usize> = (0..n_funcs).filter(|idx| n_pending[*idx] == 0).collect();
        let mut done = vec![false; n_funcs];
        let mut order = Vec::new();
        while let Some(idx) = queue.pop_front() {
            done[idx] = true;
            order.push(FuncId(idx32(idx)));
            for caller in &callers[idx] {
                n_pending[*caller] -= 1;
                if n_pending[*caller] == 0 {
                    queue.push_back(*caller);
                }
            }
        }
        (order, done)
    };
    let (order, done) = kahn(active);
    if order.len() == n_funcs {
        return order;
    }
    // Reachability among the leftovers decides the components.
    let left: Vec<usize> = (0..n_funcs).filter(|idx| !done[*idx]).collect();
    let reaches = |from: usize| -> Vec<bool> {
        let mut seen = vec![false; n_funcs];
        let mut stack = vec![from];
        while let Some(idx) = stack.pop() {
            for (_, callee) in active_callees(program, FuncId(idx32(idx)), active) {
                let callee = callee.0 as usize;
                if !seen[callee] {
                    seen[callee] = true;
                    stack.push(callee);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<usize, Vec<bool>> = left.iter().map(|idx| (*idx, reaches(*idx))).collect();
    let mut component_of: BTreeMap<usize, usize> = BTreeMap::new();
    for idx in &left {
        if component_of.contains_key(idx) {
            continue;
        }
        for other in &left {
            if *other == *idx || (reach[idx][*other] && reach[other][*idx]) {
                component_of.entry(*other).or_insert(*idx);
            }
        }
    }
    let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (member, root) in &component_of {
        components.entry(*root).or_default().push(*member);
    }
    for (root, members) in components {
        let cyclic = members.len() > 1 || reach[&root][root];
        if !cyclic {
            continue;
        }
        let mut chain = Vec::new();
        for member in &members {
            for (fact_idx, callee) in active_callees(program, FuncId(idx32(*member)), active) {
                if members.contains(&(callee.0 as usize)) {
                    active[*member][fact_idx] = false;
                    chain.push(program.funcs[*member].facts[fact_idx].reason().clone());
                }
            }
        }
        let names: Vec<String> =
            members.iter().map(|idx| format!("`{}`", program.funcs[*idx].name)).collect();
        let message = if members.len() == 1 {
            format!("{} calls itself, but OpenCL does not allow recursion", names.join(""))
        } else {
            format!("{} call each other, but OpenCL does not allow recursion", names.join(" and "))
        };
        diags.push(AspaceDiagnostic {
            code: "aspace-recursion",
            message,
            func: FuncId(idx32(root)),
            ptr: None,
            chain,
        });
    }
    let (order, _) = kahn(active);
    debug_assert_eq!(order.len(), n_funcs, "invariant: no cycles remain");
    order
}

/// Who holds a label in a failed unification.
#[derive(Clone, Copy, Debug)]
enum Holder {
    Local(PtrId),
    CalleeParam { callee: FuncId, idx: usize },
    CalleeRet { callee: FuncId },
    Cast(Space),
}

struct FuncCx<'a> {
    program: &'a Program,
    options: &'a Options,
    fid: FuncId,
    func: &'a Func,
    infos: &'a [Option<FuncInfo>],
    active: Vec<bool>,
    store: RowStore,
    rows: Vec<Row>,
    causes: Vec<CauseData>,
    call_insts: Vec<Option<Vec<Row>>>,
    diags: &'a mut Vec<AspaceDiagnostic>,
}

impl<'a> FuncCx<'a> {
    fn new(
        program: &'a Program,
        options: &'a Options,
        fid: FuncId,
        func: &'a Func,
        infos: &'a [Option<FuncInfo>],
        active: Vec<bool>,
        diags: &'a mut Vec<AspaceDiagnostic>,
    ) -> FuncCx<'a> {
        let mut store = RowStore::new();
        let rows = func
            .ptrs
            .iter()
            .map(|ptr| match ptr.decl {
                Decl::In(space) => Row::closed(SpaceSet::single(space)),
                Decl::Generic => Row::var(store.fresh(SpaceSet::EMPTY)),
            })
            .collect();
        FuncCx {
            program,
            options,
            fid,
            func,
            infos,
            active,
            store,
            rows,
            causes: Vec::new(),
            call_insts: vec![None; func.facts.len()],
            diags,
        }
    }

    fn row(&self, ptr: PtrId) -> Row {
        self.rows.get(ptr.0 as usize).copied().unwrap_or_else(Row::empty)
    }

    fn info(&self, func: FuncId) -> Option<&'a FuncInfo> {
        self.infos.get(func.0 as usize).and_then(Option::as_ref)
    }

    fn run(mut self) -> FuncInfo {
        for (fact_idx, fact) in self.func.facts.iter().enumerate() {
            if !self.active[fact_idx] {
                continue;
            }
            self.fact(fact_idx, fact);
        }
        self.generalise()
    }

    fn fact(&mut self, fact_idx: usize, fact: &'a Fact) {
        match fact {
            Fact::Flow { from, to, reason } => {
                self.flow(
                    self.row(*from),
                    self.row(*to),
                    Holder::Local(*from),
                    Holder::Local(*to),
                    reason,
                );
            }
            Fact::Load { .. } => {}
            Fact::Store { ptr, reason } => {
                self.exclude(*ptr, SpaceSet::single(Space::Constant), CauseKind::Store, reason);
            }
            Fact::Bound { ptr, allowed, reason } => {
                let kind = CauseKind::Bound { text: reason.text.clone() };
                self.exclude(*ptr, SpaceSet::ALL.minus(*allowed), kind, reason);
            }
            Fact::Cast { from, to, space, reason } => {
                match self.store.insert(*space, &self.row(*from)) {
                    Ok(_) => {}
                    Err(RowError::Lacks { cause: Some(cause), .. }) => {
                        self.report_cause(
                            *space,
                            Holder::Cast(*space),
                            Holder::Local(*from),
                            cause,
                            reason,
                        );
                    }
                    Err(_) => {
                        let holder =
                            self.holder_trace(Holder::Local(*from), self.row_first_label(*from));
                        let mut chain = holder.chain;
                        chain.push(reason.clone());
                        let message = format!(
                            "`{}` can never point to {space} memory, so this cast always fails",
                            self.func.ptr_name(*from)
                        );
                        self.report("aspace-impossible-cast", message, Some(*from), chain);
                    }
                }
                let cast = Row::closed(SpaceSet::single(*space));
                self.flow(cast, self.row(*to), Holder::Cast(*space), Holder::Local(*to), reason);
            }
            Fact::Call { callee, args, ret, reason } => {
                self.call(fact_idx, *callee, args, *ret, reason)
            }
        }
    }

    fn row_first_label(&self, ptr: PtrId) -> Option<Space> {
        self.store.resolve(&self.row(ptr)).labels.first()
    }

    fn call(
        &mut self,
        fact_idx: usize,
        callee: FuncId,
        args: &[PtrId],
        ret: Option<PtrId>,
        reason: &Reason,
    ) {
        let Some(info) = self.info(callee) else { return };
        // Instantiate: fresh variables copying the lacks predicates, with their causes extended
        // by this call site (digest 3.4 step 3).
        let mut fresh = Vec::new();
        for (var_idx, lacks) in info.scheme.vars.iter().enumerate() {
            let var = self.store.fresh(SpaceSet::EMPTY);
            for label in lacks.iter() {
                let cause = info.lacks_causes[var_idx][label.id() as usize].as_ref().map(|data| {
                    let mut chain = vec![reason.clone()];
                    chain.extend(data.chain.iter().cloned());
                    self.causes.push(CauseData { kind: data.kind.clone(), chain });
                    Cause(idx32(self.causes.len() - 1))
                });
                self.store
                    .add_lacks(&Row::var(var), label, cause)
                    .expect("invariant: a fresh variable has no labels to clash with");
            }
            fresh.push(var);
        }
        let instantiate =
            |row: Row| Row { labels: row.labels, tail: row.tail.map(|var| fresh[var.0 as usize]) };
        for (idx, arg) in args.iter().enumerate() {
            let Some(param) = info.scheme.params.get(idx) else { continue };
            self.flow(
                self.row(*arg),
                instantiate(*param),
                Holder::Local(*arg),
                Holder::CalleeParam { callee, idx },
                reason,
            );
        }
        if let (Some(ret), Some(callee_ret)) = (ret, info.scheme.ret) {
            self.flow(
                instantiate(callee_ret),
                self.row(ret),
                Holder::CalleeRet { callee },
                Holder::Local(ret),
                reason,
            );
        }
        self.call_insts[fact_idx] = Some(fresh.into_iter().map(Row::var).collect());
    }

    /// `src ⊆ dst` by embedding (digest 3.2a): a closed source row is opened with a fresh tail
    /// at this use, so the target may grow while the source keeps its precise row.
    fn flow(
        &mut self,
        src: Row,
        dst: Row,
        src_holder: Holder,
        dst_holder: Holder,
        reason: &Reason,
    ) {
        let src = self.store.resolve(&src);
        let src = match src.tail {
            None if self.options.embedding => Row::open(src.labels, self.store.fresh(src.labels)),
            _ => src,
        };
        if let Err(error) = self.store.unify(&src, &dst) {
            self.report_unify(error, src_holder, dst_holder, reason);
        }
    }

    /// Imposes `row(ptr) \ a` for every `a` in `labels`.
    fn exclude(&mut self, ptr: PtrId, labels: SpaceSet, kind: CauseKind, reason: &Reason) {
        self.causes.push(CauseData { kind, chain: vec![reason.clone()] });
        let cause = Cause(idx32(self.causes.len() - 1));
        for label in labels.iter() {
            if self.store.add_lacks(&self.row(ptr), label, Some(cause)).is_err() {
                self.report_cause(label, Holder::Local(ptr), Holder::Local(ptr), cause, reason);
                return;
            }
        }
    }

    fn holder_name(&self, holder: Holder) -> String {
        match holder {
            Holder::Local(ptr) => format!("`{}`", self.func.ptr_name(ptr)),
            Holder::CalleeParam { callee, idx } => {
                let callee = &self.program.funcs[callee.0 as usize];
                let param = callee.params.get(idx).map_or("?", |ptr| callee.ptr_name(*ptr));
                format!("parameter `{param}` of `{}`", callee.name)
            }
            Holder::CalleeRet { callee } => {
                format!("the pointer `{}` returns", self.program.funcs[callee.0 as usize].name)
            }
            Holder::Cast(space) => format!("the cast to {space}"),
        }
    }

    fn holder_ptr(&self, holder: Holder) -> Option<PtrId> {
        match holder {
            Holder::Local(ptr) => Some(ptr),
            Holder::CalleeParam { .. } | Holder::CalleeRet { .. } | Holder::Cast(_) => None,
        }
    }

    /// Where `holder`'s `label` comes from (falls back to the holder's declaration).
    fn holder_trace(&self, holder: Holder, label: Option<Space>) -> Trace {
        let fallback = |this: &Self| Trace {
            origin: this.holder_name(holder),
            chain: match holder {
                Holder::Local(ptr) => {
                    this.func.ptr(ptr).map(|ptr| ptr.reason.clone()).into_iter().collect()
                }
                Holder::CalleeParam { callee, idx } => {
                    let callee = &this.program.funcs[callee.0 as usize];
                    callee
                        .params
                        .get(idx)
                        .and_then(|ptr| callee.ptr(*ptr))
                        .map(|ptr| ptr.reason.clone())
                        .into_iter()
                        .collect()
                }
                Holder::CalleeRet { callee } => {
                    let callee = &this.program.funcs[callee.0 as usize];
                    callee
                        .ret
                        .and_then(|ptr| callee.ptr(ptr))
                        .map(|ptr| ptr.reason.clone())
                        .into_iter()
                        .collect()
                }
                Holder::Cast(_) => Vec::new(),
            },
        };
        let Some(label) = label else { return fallback(self) };
        let found = match holder {
            Holder::Local(ptr) => {
                let contains =
                    |node: PtrId| self.store.resolve(&self.row(node)).labels.contains(label);
                trace_in_func(
                    self.program,
                    self.infos,
                    self.fid,
                    &self.active,
                    ptr,
                    label,
                    &contains,
                )
            }
            Holder::CalleeParam { callee, idx } => {
                let callee_func = &self.program.funcs[callee.0 as usize];
                callee_func
                    .params
                    .get(idx)
                    .and_then(|ptr| callee_trace(self.program, self.infos, callee, *ptr, label))
            }
            Holder::CalleeRet { callee } => {
                let callee_func = &self.program.funcs[callee.0 as usize];
                callee_func
                    .ret
                    .and_then(|ptr| callee_trace(self.program, self.infos, callee, ptr, label))
            }
            Holder::Cast(_) => Some(Trace { origin: self.holder_name(holder), chain: Vec::new() }),
        };
        found.unwrap_or_else(|| fallback(self))
    }

    fn report(
        &mut self,
        code: &'static str,
        message: String,
        ptr: Option<PtrId>,
        chain: Vec<Reason>,
    ) {
        self.diags.push(AspaceDiagnostic { code, message, func: self.fid, ptr, chain });
    }

    /// `holder` has `label`, which a lacks predicate with `cause` on `subject`'s row forbids.
    fn report_cause(
        &mut self,
        label: Space,
        holder: Holder,
        subject: Holder,
        cause: Cause,
        reason: &Reason,
    ) {
        let trace = self.holder_trace(holder, Some(label));
        let data = self.causes[cause.0 as usize].clone();
        let mut chain = trace.chain;
        if chain.last() != Some(reason) {
            chain.push(reason.clone());
        }
        for step in &data.chain {
            if chain.last() != Some(step) {
                chain.push(step.clone());
            }
        }
        let name = self.holder_name(subject);
        let (code, message) = match &data.kind {
            CauseKind::Store => (
                "aspace-store-to-constant",
                format!(
                    "cannot store through a pointer to constant memory: {name} may point to constant memory (from {})",
                    trace.origin
                ),
            ),
            // A pointer that is its own origin points there; no need to name it twice.
            CauseKind::Bound { text } if name == trace.origin => {
                ("aspace-bound", format!("{text}, but {name} points to {label} memory"))
            }
            CauseKind::Bound { text } => (
                "aspace-bound",
                format!("{text}, but {name} may point to {label} memory (from {})", trace.origin),
            ),
        };
        self.report(code, message, self.holder_ptr(subject).or(self.holder_ptr(holder)), chain);
    }

    fn report_unify(&mut self, error: RowError, src: Holder, dst: Holder, reason: &Reason) {
        let pick = |side: Side| match side {
            Side::Left => (src, dst),
            Side::Right => (dst, src),
        };
        match error {
            RowError::Lacks { label, side, cause: Some(cause), .. } => {
                let (holder, subject) = pick(side);
                self.report_cause(label, holder, subject, cause, reason);
            }
            RowError::Lacks { label, side, cause: None, .. } | RowError::Occurs { label, side } => {
                let (holder, other) = pick(side);
                let trace = self.holder_trace(holder, Some(label));
                let mut chain = trace.chain;
                chain.push(reason.clone());
                let code = if matches!(error, RowError::Occurs { .. }) {
                    "aspace-mismatch"
                } else {
                    "aspace-duplicate-label"
                };
                let message = format!(
                    "{} and {} must point into the same address spaces, but {label} memory (from {}) would occur twice",
                    self.holder_name(holder),
                    self.holder_name(other),
                    trace.origin
                );
                self.report(code, message, self.holder_ptr(holder), chain);
            }
            RowError::Duplicate { label } => {
                let trace = self.holder_trace(src, Some(label));
                let mut chain = trace.chain;
                chain.push(reason.clone());
                let message =
                    format!("{label} memory (from {}) would occur twice in one row", trace.origin);
                self.report("aspace-duplicate-label", message, self.holder_ptr(src), chain);
            }
            RowError::Missing { label, side } => {
                let (holder, other) = pick(side);
                let trace = self.holder_trace(holder, Some(label));
                let other_set = match other {
                    Holder::Local(ptr) => self.store.resolve(&self.row(ptr)).labels,
                    Holder::CalleeParam { callee, idx } => self
                        .info(callee)
                        .and_then(|info| info.scheme.params.get(idx))
                        .map_or(SpaceSet::EMPTY, |row| row.labels),
                    Holder::CalleeRet { callee } => self
                        .info(callee)
                        .and_then(|info| info.scheme.ret)
                        .map_or(SpaceSet::EMPTY, |row| row.labels),
                    Holder::Cast(space) => SpaceSet::single(space),
                };
                let other_trace = self.holder_trace(other, other_set.first());
                let mut chain = trace.chain;
                chain.push(reason.clone());
                for step in other_trace.chain {
                    if !chain.contains(&step) {
                        chain.push(step);
                    }
                }
                let message = format!(
                    "{} only points to {}, but it receives a pointer to {label} memory (from {})",
                    self.holder_name(other),
                    other_set.describe(),
                    trace.origin
                );
                self.report(
                    "aspace-mismatch",
                    message,
                    self.holder_ptr(other).or(self.holder_ptr(holder)),
                    chain,
                );
            }
        }
    }

    fn generalise(mut self) -> FuncInfo {
        let sig_rows: Vec<Row> =
            self.func.params.iter().chain(&self.func.ret).map(|ptr| self.row(*ptr)).collect();
        let mut scheme_vars: Vec<RowVar> = Vec::new();
        if self.func.kind == FuncKind::Helper {
            for row in &sig_rows {
                if let Some(tail) = self.store.resolve(row).tail
                    && !scheme_vars.contains(&tail)
                {
                    scheme_vars.push(tail);
                }
            }
        }
        // Default every other tail to `{}` (digest 3.6.2, 3.6.3).
        let all_rows: Vec<Row> = self
            .rows
            .iter()
            .copied()
            .chain(self.call_insts.iter().flatten().flatten().copied())
            .collect();
        for row in &all_rows {
            if let Some(tail) = self.store.resolve(row).tail
                && !scheme_vars.contains(&tail)
            {
                self.store
                    .unify(&Row::var(tail), &Row::empty())
                    .expect("invariant: closing a tail to {} always succeeds");
            }
        }
        let canonical = |store: &RowStore, row: &Row| {
            let resolved = store.resolve(row);
            Row {
                labels: resolved.labels,
                tail: resolved.tail.map(|tail| {
                    let idx = scheme_vars
                        .iter()
                        .position(|var| *var == tail)
                        .expect("invariant: every open tail is quantified");
                    RowVar(idx32(idx))
                }),
            }
        };
        let rows: Vec<Row> = self.rows.iter().map(|row| canonical(&self.store, row)).collect();
        let call_insts = self
            .call_insts
            .iter()
            .map(|inst| {
                inst.as_ref()
                    .map(|rows| rows.iter().map(|row| canonical(&self.store, row)).collect())
            })
            .collect();
        let scheme = Scheme {
            vars: scheme_vars.iter().map(|var| self.store.lacks(*var)).collect(),
            params: self
                .func
                .params
                .iter()
                .map(|ptr| rows.get(ptr.0 as usize).copied().unwrap_or_else(Row::empty))
                .collect(),
            ret: self
                .func
                .ret
                .map(|ptr| rows.get(ptr.0 as usize).copied().unwrap_or_else(Row::empty)),
        };
        let lacks_causes = scheme_vars
            .iter()
            .map(|var| {
                Space::ALL.map(|label| {
                    self.store
                        .lacks_cause(*var, label)
                        .map(|cause| self.causes[cause.0 as usize].clone())
                })
            })
            .collect();
        if self.func.kind == FuncKind::Kernel {
            self.check_kernel_params(&rows);
        }
        FuncInfo { scheme, rows, call_insts, lacks_causes, active: self.active }
    }

    /// Kernel pointer parameters must be global, local or constant (digest 2.10 [KERNEL]).
    fn check_kernel_params(&mut self, rows: &[Row]) {
        for param in &self.func.params {
            let Some(row) = rows.get(param.0 as usize) else { continue };
            let name = self.func.ptr_name(*param).to_owned();
            if row.labels.is_empty() {
                let message = format!(
                    "kernel parameter `{name}` gets no address space from its uses and would default to private; declare it global, local or constant"
                );
                let chain =
                    self.func.ptr(*param).map(|ptr| ptr.reason.clone()).into_iter().collect();
                self.report("aspace-private-kernel-param", message, Some(*param), chain);
            } else if row.labels.contains(Space::Private) {
                let contains = |node: PtrId| {
                    self.store.resolve(&self.row(node)).labels.contains(Space::Private)
                };
                let trace = trace_in_func(
                    self.program,
                    self.infos,
                    self.fid,
                    &self.active,
                    *param,
                    Space::Private,
                    &contains,
                );
                let (origin, mut chain) = trace
                    .map_or((format!("`{name}`"), Vec::new()), |trace| (trace.origin, trace.chain));
                if let Some(ptr) = self.func.ptr(*param)
                    && !chain.contains(&ptr.reason)
                {
                    chain.push(ptr.reason.clone());
                }
                let message = format!(
                    "kernel parameter `{name}` may point to private memory (from {origin}), but kernel pointer parameters must be global, local or constant"
                );
                self.report("aspace-private-kernel-param", message, Some(*param), chain);
            }
        }
    }
}

/// Where `ptr` of the finished function `func` gets `label` from (its rows are final).
pub(crate) fn callee_trace(
    program: &Program,
    infos: &[Option<FuncInfo>],
    func: FuncId,
    ptr: PtrId,
    label: Space,
) -> Option<Trace> {
    let info = infos.get(func.0 as usize)?.as_ref()?;
    let contains =
        |node: PtrId| info.rows.get(node.0 as usize).is_some_and(|row| row.labels.contains(label));
    trace_in_func(program, infos, func, &info.active, ptr, label, &contains)
}

/// The function-level provenance search: nodes are the pointers of `func`, origins are
/// declarations in the label's space, casts to it, and results of callees whose returned row
/// contains it.
pub(crate) fn trace_in_func(
    program: &Program,
    infos: &[Option<FuncInfo>],
    fid: FuncId,
    active: &[bool],
    start: PtrId,
    label: Space,
    contains: &dyn Fn(PtrId) -> bool,
) -> Option<Trace> {
    let func = program.func(fid)?;
    let preds = |node: PtrId| {
        let mut out = Vec::new();
        if let Some(ptr) = func.ptr(node)
            && ptr.decl == Decl::In(label)
        {
            out.push(Pred::Origin(Trace {
                origin: format!("`{}`", ptr.name),
                chain: vec![ptr.reason.clone()],
            }));
        }
        for (fact_idx, fact) in func.facts.iter().enumerate() {
            if !active.get(fact_idx).copied().unwrap_or(false) {
                continue;
            }
            match fact {
                Fact::Flow { from, to, reason } => {
                    if *to == node {
                        out.push(Pred::Step { from: *from, reason: reason.clone(), leak: false });
                    }
                    if *from == node {
                        out.push(Pred::Step { from: *to, reason: reason.clone(), leak: true });
                    }
                }
                Fact::Cast { from, to, space, reason } => {
                    if *space == label && (*to == node || *from == node) {
                        out.push(Pred::Origin(Trace {
                            origin: format!("the cast to {space}"),
                            chain: vec![reason.clone()],
                        }));
                    }
                }
                Fact::Call { callee, args, ret, reason } => {
                    let Some(info) = infos.get(callee.0 as usize).and_then(Option::as_ref) else {
                        continue;
                    };
                    let callee_func = &program.funcs[callee.0 as usize];
                    let param_tail =
                        |idx: usize| info.scheme.params.get(idx).and_then(|row| row.tail);
                    let ret_row = info.scheme.ret;
                    if *ret == Some(node)
                        && let Some(ret_row) = ret_row
                    {
                        if ret_row.labels.contains(label) {
                            let inner = callee_func
                                .ret
                                .and_then(|ptr| callee_trace(program, infos, *callee, ptr, label));
                            let mut chain =
                                inner.as_ref().map(|trace| trace.chain.clone()).unwrap_or_default();
                            chain.push(reason.clone());
                            let origin = inner.map_or_else(
                                || format!("the pointer `{}` returns", callee_func.name),
                                |trace| format!("{} in `{}`", trace.origin, callee_func.name),
                            );
                            out.push(Pred::Origin(Trace { origin, chain }));
                        }
                        for (idx, arg) in args.iter().enumerate() {
                            if ret_row.tail.is_some() && param_tail(idx) == ret_row.tail {
                                out.push(Pred::Step {
                                    from: *arg,
                                    reason: reason.clone(),
                                    leak: false,
                                });
                            }
                        }
                    }
                    for (idx, arg) in args.iter().enumerate() {
                        if *arg != node {
                            continue;
                        }
                        let Some(tail) = param_tail(idx) else { continue };
                        for (other_idx, other) in args.iter().enumerate() {
                            if other_idx != idx && param_tail(other_idx) == Some(tail) {
                                out.push(Pred::Step {
                                    from: *other,
                                    reason: reason.clone(),
                                    leak: true,
                                });
                            }
                        }
                        if let (Some(ret), Some(ret_row)) = (ret, ret_row)
                            && ret_row.tail == Some(tail)
                        {
                            out.push(Pred::Step { from: *ret, reason: reason.clone(), leak: true });
                        }
                    }
                }
                Fact::Load { .. } | Fact::Store { .. } | Fact::Bound { .. } => {}
            }
        }
        out
    };
    trace(start, preds, contains)
}
