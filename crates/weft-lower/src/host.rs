//! Host-level lowering: an entry's body becomes host steps; every value computation
//! becomes a kernel (`soac.rs` for the parallel ones, a one-work-item kernel for lone
//! scalar statements).

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{
    Atom, BinOp, BlockId, CoreSize, Exp, ExpId, FnId, IndexItem, LoopForm, Origin, Program, Type,
    VarId, VarKind,
};
use weft_hir::MathFn;
use weft_plan::{BinOp as HOp, Elem, ErrorSite, Expr, Input, Output, Step, Var};
use weft_values::RuntimeCheck;

use crate::LowerError;
use crate::arr::{Mem, View};
use crate::imp::{CExpr, Cmd, KernelImp, ParLevel};
use crate::kernel::{KEnv, Kb, Shared, elem_and_rank, leaves};
use crate::val::{HArr, HEnv, HPull, HScalar, HVal, KVal, PullSrc, Res};

/// Choices the caller makes.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Bounds, division and size checks in kernels (`--unsafe` turns them off).
    pub checks: bool,
    /// The work-group size of cooperative kernels (reductions, scans).
    pub work_group: u32,
    /// Elements per work-item of a one-dimensional grid kernel (thread coarsening: the
    /// NDRange has `n / coarsen` work-items, each striding over the array).
    pub coarsen: u32,
    /// The most work-groups of the first stage of a reduction or scan.
    pub reduce_groups: u32,
    /// Elements of the shared dimension per local-memory stage of a matrix product.
    pub matmul_stage: u32,
    /// The matrix-multiplication kernel's shape (`matmul.rs`, `Variant`).
    pub matmul_variant: u32,
    /// The OpenCL C version the kernels target: 1.2 clones each generated function
    /// per address-space instantiation; 2.0 uses the generic space instead, except
    /// where `constant` reaches a parameter (`--opencl 2.0`).
    pub target: weft_aspace::Target,
    /// The device profile whose predicted times choose between strategies (segmented
    /// reductions); `None`: the committed H100 profile, the project's target GPU
    /// (docs/costs.md, "Predictions and validation").
    pub profile: Option<&'static weft_cost::profile::DeviceProfile>,
    /// Whether tiled kernels (matrix products, transpositions) compete with the plain
    /// kernel by predicted time (the default), or are always used (the fixed rule, so
    /// that tests exercise the tiled kernels at any size).
    pub steer_tiling: bool,
}

impl Options {
    /// Whether the kernels run on a CPU (the profile's device kind): a core runs a
    /// work-group's items as a loop, so sequential work per item beats trees of
    /// barriers, and contiguous shares per item read its cache lines in order.
    pub fn cpu_device(&self) -> bool {
        self.profile.is_some_and(|p| p.device.kind.eq_ignore_ascii_case("cpu"))
    }

    /// Whether a work-group may wait for another that started before it (a scan's
    /// decoupled look-back): an NVIDIA GPU keeps a started group resident until it
    /// ends, so the group waited for makes progress. OpenCL promises no such thing,
    /// so other devices (POCL) get the three-stage scan.
    pub fn forward_progress(&self) -> bool {
        self.profile.is_some_and(|p| {
            p.device.kind.eq_ignore_ascii_case("gpu") && p.device.vendor.contains("NVIDIA")
        })
    }
}

impl Default for Options {
    /// Checks on, work-groups of 256, 4 elements per work-item, up to 1024 groups per
    /// reduction, stages of 8 and the default kernel variant in matrix products, tiled
    /// kernels chosen by predicted time. (`weft` lets environment variables override
    /// some of these for experiments: docs/cli.md, "Environment".)
    fn default() -> Self {
        Options {
            checks: true,
            work_group: 256,
            coarsen: 4,
            reduce_groups: 1024,
            matmul_stage: 8,
            matmul_variant: crate::matmul::DEFAULT_VARIANT,
            target: weft_aspace::Target::OpenCl12,
            profile: None,
            steer_tiling: true,
        }
    }
}

/// A lowered entry point.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub entry: String,
    pub kernels: Vec<KernelImp>,
    /// Functions generated from user defs, before specialisation.
    pub functions: Vec<crate::imp::FuncImp>,
    /// Every pointer's inferred address space, and the functions' clones.
    pub spaces: crate::aspace::Spaces,
    pub inputs: Vec<Input>,
    /// The parameter each input belongs to.
    pub input_names: Vec<String>,
    pub steps: Vec<Step>,
    pub outputs: Vec<Output>,
    pub errors: Vec<ErrorSite>,
    pub n_vars: u32,
    /// Each host variable's name (the source binding or size it holds, or what the
    /// lowering made it for: `dim`, `read`, `partial`), indexed by [`Var`].
    pub var_names: Vec<String>,
    /// Memory regions, worlds, lifetimes and transfers of the plan ([`crate::regions`]).
    pub regions: crate::regions::Regions,
    /// Static costs of the kernels and launches, symbolic in the sizes ([`crate::cost`]).
    pub costs: weft_cost::model::EntryCost,
}

pub(crate) struct Lowerer<'p> {
    pub(crate) program: &'p Program,
    pub(crate) position: &'p dyn Fn(&Origin) -> Option<String>,
    pub(crate) shared: Rc<RefCell<Shared>>,
    pub(crate) kernels: Vec<KernelImp>,
    steps: Vec<Vec<Step>>,
    n_vars: u32,
    pub(crate) options: Options,
    uses: FxHashMap<FnId, FxHashMap<VarId, u32>>,
    /// Which updates write in place (weft-core decides), per function.
    entry_name: String,
    /// The host-level statement being lowered: the source of the buffers it allocates.
    current_origin: Option<Origin>,
    /// The source expression whose value each allocated buffer holds.
    buffer_origins: FxHashMap<Var, Origin>,
}

/// Whether the back end compiles an entry, without the analyses of [`lower_entry`]
/// (address spaces, regions, costs): what `weft check` and the editor's
/// `backend-unsupported` warning need, at a third of the cost.
pub fn check_entry(program: &Program, entry: FnId, options: Options) -> Result<(), LowerError> {
    let mut l = Lowerer::new(program, entry, &|_| None, options);
    l.plan(entry).map(drop)
}

impl<'p> Lowerer<'p> {
    fn new(
        program: &'p Program,
        entry: FnId,
        position: &'p dyn Fn(&Origin) -> Option<String>,
        options: Options,
    ) -> Self {
        let shared = Rc::new(RefCell::new(Shared {
            errors: Vec::new(),
            var_names: FxHashMap::default(),
            checks: options.checks,
            static_lens: FxHashMap::default(),
            functions: Vec::new(),
            fn_index: FxHashMap::default(),
            next_site: 0,
            site_positions: FxHashMap::default(),
            update_plans: FxHashMap::default(),
        }));
        Lowerer {
            program,
            position,
            shared,
            kernels: Vec::new(),
            steps: vec![Vec::new()],
            n_vars: 0,
            options,
            uses: FxHashMap::default(),
            entry_name: program.functions[entry].name.to_string(),
            current_origin: None,
            buffer_origins: FxHashMap::default(),
        }
    }

    /// The host plan and kernels of `entry`: its inputs, their parameters' names and
    /// its outputs; the steps and kernels stay in `self`.
    fn plan(&mut self, entry: FnId) -> Result<PlanEnds, LowerError> {
        let program = self.program;
        let function = &program.functions[entry];
        let mut env = HEnv::default();
        let mut inputs = Vec::new();
        let mut size_vars: FxHashMap<VarId, Var> = FxHashMap::default();
        let mut deferred: Vec<(Var, CoreSize)> = Vec::new();
        let mut input_names = Vec::new();
        for &param in &function.params {
            let ty = function.vars[param].ty.clone();
            let name = function.vars[param].name.to_string();
            let val = self.input(
                &ty,
                &name,
                function,
                &mut size_vars,
                &mut env,
                &mut inputs,
                &mut deferred,
            )?;
            input_names.resize(inputs.len(), name.clone());
            env.insert(param, val);
        }
        for (dim, size) in deferred {
            let want = self.host_size(&mut env, &size)?;
            let code = self.error_site(RuntimeCheck::InputSize, None);
            self.step(Step::Check {
                cond: Expr::bin(HOp::Eq, Expr::Var(dim), want.clone()),
                error: code,
                payload: vec![Expr::Var(dim), want],
            });
        }
        let result = self.block(entry, &mut env, function.body)?;
        let mut outputs = Vec::new();
        self.outputs(&result, &mut outputs)?;
        Ok(PlanEnds { inputs, input_names, outputs })
    }
}

/// What goes into and comes out of an entry's plan.
struct PlanEnds {
    inputs: Vec<Input>,
    /// The parameter each input belongs to.
    input_names: Vec<String>,
    outputs: Vec<Output>,
}

/// Lowers one entry point.
pub fn lower_entry(
    program: &Program,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Lowered, LowerError> {
    let mut l = Lowerer::new(program, entry, position, options);
    let PlanEnds { inputs, input_names, outputs } = l.plan(entry)?;
    let steps = l.steps.pop().unwrap_or_default();
    let errors = l.shared.borrow().errors.clone();
    let functions = std::mem::take(&mut l.shared.borrow_mut().functions);
    let spaces = crate::aspace::infer_spaces(
        &l.kernels,
        &functions,
        &l.shared.borrow().site_positions,
        l.options.target,
    );
    let var_names: Vec<String> = {
        let shared = l.shared.borrow();
        (0..l.n_vars).map(|v| shared.var_names.get(&Var(v)).cloned().unwrap_or_default()).collect()
    };
    let mut regions = crate::regions::analyse(&crate::regions::PlanView {
        steps: &steps,
        inputs: &inputs,
        input_names: &input_names,
        outputs: &outputs,
        kernels: &l.kernels,
        var_names: &var_names,
        buffer_origins: &l.buffer_origins,
    });
    regions.entry = l.entry_name.clone();
    let costs = crate::cost::entry_costs(
        &l.entry_name,
        &l.kernels,
        &functions,
        &spaces.kernels,
        &steps,
        &inputs,
        &outputs,
        &var_names,
    );
    Ok(Lowered {
        costs,
        entry: l.entry_name,
        kernels: l.kernels,
        functions,
        spaces,
        inputs,
        input_names,
        steps,
        outputs,
        errors,
        n_vars: l.n_vars,
        var_names,
        regions,
    })
}

impl<'p> Lowerer<'p> {
    pub(crate) fn new_var(&mut self, name: &str) -> Var {
        let v = Var(self.n_vars);
        self.n_vars += 1;
        self.shared.borrow_mut().var_names.insert(v, name.to_owned());
        v
    }

    /// Records the statement being lowered as the source of a fresh buffer.
    fn note_buffer(&mut self, buf: Var) {
        if let Some(origin) = &self.current_origin {
            self.buffer_origins.insert(buf, origin.clone());
        }
    }

    pub(crate) fn push_steps(&mut self) {
        self.steps.push(Vec::new());
    }

    pub(crate) fn pop_steps(&mut self) -> Vec<Step> {
        self.steps.pop().unwrap_or_default()
    }

    /// The steps being emitted.
    pub(crate) fn steps_mut(&mut self) -> &mut Vec<Step> {
        if self.steps.is_empty() {
            self.steps.push(Vec::new());
        }
        let last = self.steps.len() - 1;
        &mut self.steps[last]
    }

    pub(crate) fn step(&mut self, step: Step) {
        if let Some(top) = self.steps.last_mut() {
            top.push(step);
        }
    }

    /// A kernel builder for the host-level statement being lowered: what it emits
    /// computes that statement's source expression until a part of it says otherwise.
    pub(crate) fn kb(&self) -> Kb<'p> {
        let mut kb = Kb::new(self.program, self.position, self.shared.clone());
        kb.computing(self.current_origin.clone());
        kb
    }

    pub(crate) fn error_site(&mut self, check: RuntimeCheck<'_>, origin: Option<&Origin>) -> u32 {
        let position = origin.and_then(|o| (self.position)(o));
        let mut shared = self.shared.borrow_mut();
        shared.errors.push(ErrorSite { message: check.template(), position });
        shared.errors.len() as u32
    }

    /// Adds a kernel and its launch.
    pub(crate) fn launch(
        &mut self,
        mut kb: Kb<'p>,
        kind: &str,
        doc: String,
        global: Vec<Expr>,
        local: Option<Vec<Expr>>,
    ) {
        let name = format!("{}_{}_{}", sanitize_name(&self.entry_name), kind, self.kernels.len());
        let local_size = local.as_ref().map(|l| {
            l.iter()
                .filter_map(|e| if let Expr::I64(v) = e { Some(*v as u32) } else { None })
                .product()
        });
        let expansions = std::mem::take(&mut kb.expansions);
        let (kernel, mut args) = kb.finish(name, doc, local_size);
        if !expansions.is_empty() {
            // The work-items the runner launches: each global size rounded up to a
            // multiple of the local size (`weft-runtime`'s launch).
            use crate::arr::IExpr;
            let items = global
                .iter()
                .enumerate()
                .map(|(d, g)| match local.as_ref().and_then(|l| l.get(d)) {
                    Some(l) => Expr::mul(
                        Expr::div(
                            Expr::add(g.clone(), Expr::sub(l.clone(), Expr::I64(1))),
                            l.clone(),
                        ),
                        l.clone(),
                    ),
                    None => g.clone(),
                })
                .fold(Expr::I64(1), Expr::mul);
            for expansion in expansions {
                let buf = self.new_var("expanded");
                let len = Expr::mul(expansion.per_item, items.clone());
                self.step(Step::Alloc { var: buf, elem: expansion.elem, len });
                args[expansion.arg] = weft_plan::Arg::Buffer(buf);
            }
        }
        let index = self.kernels.len() as u32;
        self.kernels.push(kernel);
        self.step(Step::Launch { kernel: index, global, local, args });
    }

    #[expect(clippy::too_many_arguments, reason = "the state input binding threads through")]
    fn input(
        &mut self,
        ty: &Type,
        name: &str,
        function: &weft_core::Function,
        size_vars: &mut FxHashMap<VarId, Var>,
        env: &mut HEnv,
        inputs: &mut Vec<Input>,
        deferred: &mut Vec<(Var, CoreSize)>,
    ) -> Res<HVal> {
        Ok(match ty {
            Type::Scalar(s) => {
                let var = self.new_var(name);
                inputs.push(Input::Scalar { var, elem: *s });
                HVal::Scalar(HScalar::Host(Expr::Var(var), *s))
            }
            Type::Tuple(parts) => {
                let mut vals = Vec::new();
                for p in parts {
                    vals.push(self.input(p, name, function, size_vars, env, inputs, deferred)?);
                }
                HVal::Tuple(vals)
            }
            Type::Array { .. } => {
                let (elem_ty, rank) = elem_and_rank(ty);
                let Type::Scalar(s) = elem_ty else {
                    return Err(LowerError::unsupported(
                        "entry parameters that are arrays of tuples",
                        None,
                    ));
                };
                let mut dims = Vec::new();
                let mut t = ty;
                let mut static_len = Some(1i64);
                for _ in 0..rank {
                    let Type::Array { size, elem } = t else { break };
                    static_len = static_len
                        .zip(size.as_constant())
                        .and_then(|(a, b)| a.checked_mul(b.max(0)));
                    let var = match size.as_var() {
                        Some(sv) if function.size_params.contains(sv) => match size_vars.get(sv) {
                            Some(v) => *v,
                            None => {
                                let v = self.new_var(function.vars[*sv].name.as_str());
                                size_vars.insert(*sv, v);
                                env.insert(
                                    *sv,
                                    HVal::Scalar(HScalar::Host(Expr::Var(v), Elem::I64)),
                                );
                                v
                            }
                        },
                        _ => {
                            // Named by the size the type writes (`8`, `n*m`), which costs
                            // and regions show; a run-time check makes the two equal.
                            let v = self.new_var(
                                &size
                                    .display(&|sv| function.vars[*sv].name.to_string())
                                    .to_string(),
                            );
                            deferred.push((v, size.clone()));
                            v
                        }
                    };
                    dims.push(var);
                    t = elem;
                }
                let buf = self.new_var(name);
                if let Some(len) = static_len {
                    self.shared.borrow_mut().static_lens.insert(buf, len);
                }
                inputs.push(Input::Array { buf, elem: s, dims: dims.clone() });
                HVal::Arr(HArr::Mem(Mem::fresh(buf, s, dims.into_iter().map(Expr::Var).collect())))
            }
        })
    }

    fn outputs(&mut self, v: &HVal, out: &mut Vec<Output>) -> Res<()> {
        match v {
            HVal::Tuple(parts) => {
                for p in parts {
                    self.outputs(p, out)?;
                }
            }
            HVal::Scalar(HScalar::Host(e, elem)) => {
                out.push(Output::Host { value: e.clone(), elem: *elem })
            }
            HVal::Scalar(HScalar::Device(buf, elem)) => out.push(Output::Array {
                buf: *buf,
                elem: *elem,
                offset: Expr::I64(0),
                strides: vec![],
                shape: vec![],
            }),
            HVal::Arr(a) => {
                // Results leave in row-major order, so the host reads them in one piece.
                let a = self.materialise_fresh(a, "result")?;
                self.array_outputs(&a, out)?;
            }
        }
        Ok(())
    }

    fn array_outputs(&mut self, a: &HArr, out: &mut Vec<Output>) -> Res<()> {
        match a {
            HArr::Mem(m) => out.push(Output::Array {
                buf: m.buf,
                elem: m.elem,
                offset: m.offset.clone(),
                strides: m.strides.clone(),
                shape: m.shape.clone(),
            }),
            HArr::Zip(parts) => {
                for p in parts {
                    self.array_outputs(p, out)?;
                }
            }
            HArr::Pull(_) => return Err(LowerError::internal("an output that is not in memory")),
        }
        Ok(())
    }

    // ---- use counts: how often a variable is read, a read inside a lambda counting
    // as many (it runs once per element) ----

    /// The memory an update writes: the array's own when weft-core decided in place
    /// and it is row-major memory, else a fresh copy.
    pub(crate) fn updated(&mut self, array: &HArr, in_place: bool, name: &str) -> Res<HArr> {
        match array {
            HArr::Mem(m) if in_place && m.is_row_major() => Ok(array.clone()),
            _ => self.copy_to_fresh(array, name),
        }
    }

    /// The reuse decisions of `f`'s updates (weft-core's `update_plan`).
    fn update_plan(&mut self, f: FnId) -> Rc<weft_core::UpdatePlan> {
        self.shared.borrow_mut().update_plan(self.program, f)
    }

    /// Whether weft-core decided that the update `exp` of `f` writes in place.
    fn in_place(&mut self, f: FnId, exp: ExpId) -> bool {
        self.update_plan(f).reuse.get(&exp) == Some(&weft_core::UpdateReuse::InPlace)
    }

    /// An operand of the in-place update `exp` (a `scatter`'s or `reduce_by_index`'s
    /// indices or values) that weft-core found made from the array being written
    /// (`UpdatePlan::computed_first`): computed into memory of its own now, before the
    /// update's kernel writes, rather than inside that kernel where its reads of the
    /// array would race with the writes. Other operands are returned as they are.
    fn computed_first(
        &mut self,
        f: FnId,
        exp: ExpId,
        operand: &Atom,
        arr: HArr,
        dest: &HArr,
        name: &str,
    ) -> Res<HArr> {
        let plan = self.update_plan(f);
        let first = matches!(operand, Atom::Var(v)
            if plan.computed_first.get(&exp).is_some_and(|vars| vars.contains(v)));
        if !first {
            return Ok(arr);
        }
        let mut dest_bufs = Vec::new();
        mem_buffers(dest, &mut dest_bufs);
        self.apart_from(&arr, &dest_bufs, name)
    }

    /// `a` in memory that is none of `bufs`: memory of its own is kept, a pull array
    /// computed, memory in `bufs` copied.
    fn apart_from(&mut self, a: &HArr, bufs: &[Var], name: &str) -> Res<HArr> {
        match a {
            HArr::Mem(m) if !bufs.contains(&m.buf) => Ok(a.clone()),
            HArr::Zip(parts) => Ok(HArr::Zip(
                parts.iter().map(|p| self.apart_from(p, bufs, name)).collect::<Res<_>>()?,
            )),
            _ => self.copy_to_fresh(a, name),
        }
    }

    pub(crate) fn uses(&mut self, f: FnId, var: VarId) -> u32 {
        if !self.uses.contains_key(&f) {
            let function = &self.program.functions[f];
            let mut counts: FxHashMap<VarId, u32> = FxHashMap::default();
            count_block(function, function.body, 1, &mut counts);
            self.uses.insert(f, counts);
        }
        self.uses.get(&f).and_then(|c| c.get(&var)).copied().unwrap_or(0)
    }

    // ---- blocks and expressions ----

    pub(crate) fn block(&mut self, f: FnId, env: &mut HEnv, block: BlockId) -> Res<HVal> {
        let program = self.program;
        let b = &program.functions[f].blocks[block];
        for stmt in &b.stmts {
            let outer = self.current_origin.take();
            self.current_origin = self.origin(f, stmt.exp).or_else(|| outer.clone());
            let val = self.stmt(f, env, stmt);
            self.current_origin = outer;
            let val = val?;
            let var = &program.functions[f].vars[stmt.var];
            bind_sizes(env, &var.ty, &val);
            env.insert(stmt.var, val);
        }
        match &b.result {
            Some(a) => self.atom(env, a),
            None => Ok(HVal::Tuple(Vec::new())),
        }
    }

    /// One statement's value (materialised when it is an expensive pull array used
    /// more than once).
    fn stmt(&mut self, f: FnId, env: &mut HEnv, stmt: &weft_core::Stmt) -> Res<HVal> {
        let program = self.program;
        let mut val = self.exp(f, env, stmt.exp, stmt.var)?;
        let var = &program.functions[f].vars[stmt.var];
        if let HVal::Arr(a) = &val
            && a.has_expensive_pull()
            && self.uses(f, stmt.var) > 1
        {
            val = HVal::Arr(self.materialise(a, var.name.as_str())?);
        }
        Ok(val)
    }

    pub(crate) fn atom(&mut self, env: &HEnv, atom: &Atom) -> Res<HVal> {
        match atom {
            Atom::Var(v) => env
                .get(v)
                .cloned()
                .ok_or_else(|| LowerError::internal(format!("host variable {v:?} unbound"))),
            Atom::Const(s) => Ok(HVal::Scalar(HScalar::Host(weft_plan::lit_of(*s), s.ty()))),
        }
    }

    fn array(&mut self, env: &HEnv, atom: &Atom) -> Res<HArr> {
        match self.atom(env, atom)? {
            HVal::Arr(a) => Ok(a),
            _ => Err(LowerError::internal("expected an array at the host level")),
        }
    }

    /// A scalar as a host expression, reading it from the device if needed.
    pub(crate) fn host_scalar(&mut self, v: &HVal) -> Res<(Expr, Elem)> {
        match v {
            HVal::Scalar(HScalar::Host(e, elem)) => Ok((e.clone(), *elem)),
            HVal::Scalar(HScalar::Device(buf, elem)) => {
                let var = self.new_var("read");
                self.step(Step::Read { var, buf: *buf, elem: *elem, index: Expr::I64(0) });
                Ok((Expr::Var(var), *elem))
            }
            _ => Err(LowerError::internal("expected a scalar at the host level")),
        }
    }

    /// An integer scalar as an `i64` host expression.
    pub(crate) fn host_int(&mut self, env: &HEnv, atom: &Atom) -> Res<Expr> {
        let v = self.atom(env, atom)?;
        let (e, elem) = self.host_scalar(&v)?;
        Ok(to_i64(e, elem))
    }

    pub(crate) fn host_size(&mut self, env: &mut HEnv, size: &CoreSize) -> Res<Expr> {
        use crate::arr::IExpr;
        let mut total = Expr::I64(0);
        for term in size.terms() {
            let mut prod = Expr::I64(term.coeff());
            for atom in term.monomial().atoms() {
                let factor = match atom {
                    weft_size::Atom::Var(v) => {
                        let val = env.get(v).cloned().ok_or_else(|| {
                            LowerError::unsupported(
                                "a size that is only known inside a kernel",
                                None,
                            )
                        })?;
                        let (e, elem) = self.host_scalar(&val)?;
                        to_i64(e, elem)
                    }
                    weft_size::Atom::Div(p, q) => {
                        let p = self.host_size(env, p)?;
                        let q = self.host_size(env, q)?;
                        Expr::div(p, q)
                    }
                };
                prod = Expr::mul(prod, factor);
            }
            total = Expr::add(total, prod);
        }
        Ok(total)
    }

    pub(crate) fn origin(&self, f: FnId, exp: ExpId) -> Option<Origin> {
        self.program.functions[f].origins.get(exp).cloned()
    }

    fn check(
        &mut self,
        cond: Expr,
        check: RuntimeCheck<'_>,
        origin: Option<&Origin>,
        payload: Vec<Expr>,
    ) {
        if !self.options.checks {
            return;
        }
        let code = self.error_site(check, origin);
        self.step(Step::Check { cond, error: code, payload });
    }

    /// Fails the run when `n`, the size given to `iota` or `replicate`, is negative (the
    /// interpreter's error); unchecked, a negative size made wrong results.
    fn check_count(&mut self, n: &Expr, what: &str, origin: Option<&Origin>) {
        self.check(
            Expr::bin(HOp::Le, Expr::I64(0), n.clone()),
            RuntimeCheck::NegativeSize { what },
            origin,
            vec![n.clone()],
        );
    }

    /// Translates one expression; an error without a position gets this expression's.
    fn exp(&mut self, f: FnId, env: &mut HEnv, exp: ExpId, var: VarId) -> Res<HVal> {
        self.exp_unplaced(f, env, exp, var).map_err(|error| error.placed(self.origin(f, exp)))
    }

    fn exp_unplaced(&mut self, f: FnId, env: &mut HEnv, exp: ExpId, var: VarId) -> Res<HVal> {
        use crate::arr::IExpr;
        let program = self.program;
        let function = &program.functions[f];
        let ty = &function.vars[var].ty;
        let name = function.vars[var].name.to_string();
        let origin = self.origin(f, exp);
        let var_name = |a: &Atom| function.atom_name(*a);
        match &function.exps[exp] {
            Exp::Atom(a) => self.atom(env, a),
            Exp::Size(s) => Ok(HVal::Scalar(HScalar::Host(self.host_size(env, s)?, Elem::I64))),
            Exp::BinOp { op, ty: sty, lhs, rhs } if host_op(*op, *sty).is_some() => {
                let a = self.atom(env, lhs)?;
                let b = self.atom(env, rhs)?;
                if let (Some(x), Some(y)) = (host_known(&a), host_known(&b)) {
                    let hop = host_op(*op, *sty).unwrap_or(HOp::Add);
                    if matches!(hop, HOp::Div | HOp::Rem) {
                        self.check(
                            Expr::bin(HOp::Ne, y.clone(), Expr::I64(0)),
                            RuntimeCheck::DivisionByZero,
                            origin.as_ref(),
                            vec![],
                        );
                    }
                    let out = if matches!(
                        op,
                        BinOp::Eq | BinOp::Neq | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                    ) {
                        Elem::Bool
                    } else {
                        *sty
                    };
                    return Ok(HVal::Scalar(HScalar::Host(Expr::bin(hop, x, y), out)));
                }
                self.scalar_kernel(f, env, exp, var)
            }
            // `i64.min`/`i64.max` of sizes: host arithmetic, not a kernel of one item.
            Exp::Math { ty: Elem::I64, func: func @ (MathFn::Min | MathFn::Max), args }
                if args.len() == 2 =>
            {
                let a = self.atom(env, &args[0])?;
                let b = self.atom(env, &args[1])?;
                if let (Some(x), Some(y)) = (host_known(&a), host_known(&b)) {
                    let hop = if *func == MathFn::Min { HOp::Min } else { HOp::Max };
                    return Ok(HVal::Scalar(HScalar::Host(Expr::bin(hop, x, y), Elem::I64)));
                }
                self.scalar_kernel(f, env, exp, var)
            }
            Exp::Tuple(parts) => {
                Ok(HVal::Tuple(parts.iter().map(|p| self.atom(env, p)).collect::<Res<_>>()?))
            }
            Exp::Proj { tuple, index } => match self.atom(env, tuple)? {
                HVal::Tuple(parts) => parts
                    .get(*index as usize)
                    .cloned()
                    .ok_or_else(|| LowerError::internal("projection")),
                HVal::Arr(HArr::Zip(parts)) => parts
                    .get(*index as usize)
                    .cloned()
                    .map(HVal::Arr)
                    .ok_or_else(|| LowerError::internal("projection")),
                _ => Err(LowerError::internal("projection of a non-tuple")),
            },
            Exp::ArrayLit { elems, elem_ty } => {
                let vals: Vec<HVal> =
                    elems.iter().map(|e| self.atom(env, e)).collect::<Res<_>>()?;
                let mut shape = vec![Expr::I64(vals.len() as i64)];
                match vals.first() {
                    Some(HVal::Arr(a)) => shape.extend(a.shape()),
                    _ => {
                        let (_, rank) = elem_and_rank(elem_ty);
                        let mut t = elem_ty;
                        for _ in 0..rank {
                            let Type::Array { size, elem } = t else { break };
                            shape.push(self.host_size(env, size)?);
                            t = elem;
                        }
                    }
                }
                let (full, _) = elem_and_rank(elem_ty);
                if vals.is_empty() {
                    // No element to read: an empty buffer.
                    return Ok(HVal::Arr(self.alloc(&full, shape, "empty")?));
                }
                Ok(HVal::Arr(pull(shape.clone(), shape, full, PullSrc::Lit(vals), origin.as_ref())))
            }
            Exp::Index { array, items } => {
                let (_, rank) = elem_and_rank(ty);
                let arr = self.array(env, array)?;
                if rank == 0
                    || !arr.is_mem() && items.iter().all(|i| matches!(i, IndexItem::Fix(_)))
                {
                    return self.scalar_kernel(f, env, exp, var);
                }
                let aname = var_name(array);
                let mut arr = arr;
                let mut dim = 0;
                for item in items {
                    let n = arr.shape()[dim].clone();
                    match item {
                        IndexItem::Fix(i) => {
                            let i = self.host_int(env, i)?;
                            let ok = Expr::bin(
                                HOp::And,
                                Expr::bin(HOp::Le, Expr::I64(0), i.clone()),
                                Expr::bin(HOp::Lt, i.clone(), n.clone()),
                            );
                            self.check(
                                ok,
                                RuntimeCheck::Index { array: &aname },
                                origin.as_ref(),
                                vec![i.clone(), n],
                            );
                            arr = self.view(&arr, &View::Fix { dim, index: i })?;
                        }
                        IndexItem::Slice { start, end, stride } => {
                            let stride = match stride {
                                Some(s) => self.host_int(env, s)?,
                                None => Expr::I64(1),
                            };
                            let start = match start {
                                Some(s) => Some(self.host_int(env, s)?),
                                None => None,
                            };
                            let end = match end {
                                Some(e) => Some(self.host_int(env, e)?),
                                None => None,
                            };
                            let (s, len) = self.slice_bounds(
                                &aname,
                                n,
                                start,
                                end,
                                stride.clone(),
                                origin.as_ref(),
                            );
                            arr = self.view(&arr, &View::Slice { dim, start: s, len, stride })?;
                            dim += 1;
                        }
                    }
                }
                Ok(HVal::Arr(arr))
            }
            Exp::Dim { array, dim } => {
                let arr = self.array(env, array)?;
                Ok(HVal::Scalar(HScalar::Host(arr.shape()[*dim as usize].clone(), Elem::I64)))
            }
            Exp::Call { func, args } => {
                let callee = &program.functions[*func];
                let mut cenv = HEnv::default();
                for (param, arg) in callee.params.iter().zip(args) {
                    let v = self.atom(env, arg)?;
                    cenv.insert(*param, v);
                }
                for param in &callee.params {
                    let v = cenv[param].clone();
                    bind_sizes(&mut cenv, &callee.vars[*param].ty, &v);
                }
                self.block(*func, &mut cenv, callee.body)
            }
            Exp::If { cond, then_branch, else_branch } => {
                let c = self.atom(env, cond)?;
                let (c, _) = self.host_scalar(&c)?;
                let slot = self.make_slot(f, ty, &name)?;
                self.steps.push(Vec::new());
                let mut tenv = env.clone();
                let t = self.block(f, &mut tenv, *then_branch)?;
                self.assign_slot(&slot, &t)?;
                let then_steps = self.steps.pop().unwrap_or_default();
                self.steps.push(Vec::new());
                let mut eenv = env.clone();
                let e = self.block(f, &mut eenv, *else_branch)?;
                self.assign_slot(&slot, &e)?;
                let else_steps = self.steps.pop().unwrap_or_default();
                self.step(Step::If { cond: c, then_steps, else_steps });
                Ok(slot_val(&slot))
            }
            Exp::Loop { param, init, form, body } => {
                let mut init = self.atom(env, init)?;
                let plan = self.update_plan(f);
                if weft_core::loop_updates_in_place(function, &plan.reuse, *param, *body)
                    && let HVal::Arr(a) = &init
                    && a.is_mem()
                {
                    // The body writes into its parameter: start from a buffer of the
                    // loop's own, not one that the initial value shares.
                    init = HVal::Arr(self.copy_to_fresh(a, "loop")?);
                }
                let slot = self.make_slot(
                    f,
                    &function.vars[*param].ty,
                    function.vars[*param].name.as_str(),
                )?;
                self.assign_slot(&slot, &init)?;
                let mut benv = env.clone();
                let pval = slot_val(&slot);
                bind_sizes(&mut benv, &function.vars[*param].ty, &pval);
                benv.insert(*param, pval);
                match form {
                    LoopForm::For { index, bound } => {
                        let (bound, belem) = {
                            let b = self.atom(env, bound)?;
                            self.host_scalar(&b)?
                        };
                        let ivar = self.new_var(function.vars[*index].name.as_str());
                        // The runner counts in i64; an index of another type is converted.
                        let ival = if belem == Elem::I64 {
                            Expr::Var(ivar)
                        } else {
                            Expr::Convert(belem, Box::new(Expr::Var(ivar)))
                        };
                        benv.insert(*index, HVal::Scalar(HScalar::Host(ival, belem)));
                        self.steps.push(Vec::new());
                        let r = self.block(f, &mut benv, *body)?;
                        self.assign_slot(&slot, &r)?;
                        let body_steps = self.steps.pop().unwrap_or_default();
                        self.step(Step::For {
                            index: ivar,
                            bound: to_i64(bound, belem),
                            body: body_steps,
                        });
                    }
                    LoopForm::While { cond } => {
                        self.steps.push(Vec::new());
                        let mut cenv = benv.clone();
                        let c = self.block(f, &mut cenv, *cond)?;
                        let (c, _) = self.host_scalar(&c)?;
                        let cond_steps = self.steps.pop().unwrap_or_default();
                        self.steps.push(Vec::new());
                        let r = self.block(f, &mut benv, *body)?;
                        self.assign_slot(&slot, &r)?;
                        let body_steps = self.steps.pop().unwrap_or_default();
                        self.step(Step::While { cond_steps, cond: c, body: body_steps });
                    }
                }
                Ok(slot_val(&slot))
            }
            Exp::Map { level, lambda, arrays } => {
                let arrs: Vec<HArr> =
                    arrays.iter().map(|a| self.array(env, a)).collect::<Res<_>>()?;
                let n = arrs[0].shape()[0].clone();
                let mut shape = vec![n.clone()];
                shape.extend(self.lambda_shape(env, &lambda.ret)?);
                if *level == Some(weft_hir::Level::Group) {
                    return self
                        .group_map(f, env, lambda, arrs, shape, &name, origin.as_ref())
                        .map(HVal::Arr);
                }
                let (full, _) = elem_and_rank(&lambda.ret);
                let src = PullSrc::Map {
                    func: f,
                    lambda: lambda.clone(),
                    env: Rc::new(env.clone()),
                    arrays: arrs,
                    explicit: level.is_some(),
                };
                Ok(HVal::Arr(pull(shape.clone(), shape, full, src, origin.as_ref())))
            }
            Exp::Generate { size, lambda, .. } => {
                let n = self.host_int(env, size)?;
                let mut shape = vec![n];
                shape.extend(self.lambda_shape(env, &lambda.ret)?);
                let (full, _) = elem_and_rank(&lambda.ret);
                let src = PullSrc::Generate {
                    func: f,
                    lambda: lambda.clone(),
                    env: Rc::new(env.clone()),
                };
                Ok(HVal::Arr(pull(shape.clone(), shape, full, src, origin.as_ref())))
            }
            Exp::Reduce { lambda, neutral, array, .. } => {
                let arr = self.array(env, array)?;
                let ne = self.atom(env, neutral)?;
                self.reduce(f, lambda, ne, arr, origin.as_ref(), env)
            }
            Exp::Scan { lambda, neutral, array, .. } => {
                let arr = self.array(env, array)?;
                let ne = self.atom(env, neutral)?;
                self.scan(f, lambda, ne, arr, ty, origin.as_ref(), env).map(HVal::Arr)
            }
            Exp::Scatter { dest, indices: index_atom, values: value_atom } => {
                let dest = self.array(env, dest)?;
                let indices = self.array(env, index_atom)?;
                let values = self.array(env, value_atom)?;
                let in_place = self.in_place(f, exp);
                let indices = self.computed_first(f, exp, index_atom, indices, &dest, "indices")?;
                let values = self.computed_first(f, exp, value_atom, values, &dest, "values")?;
                let out = self.updated(&dest, in_place, "scattered")?;
                self.scatter(out, indices, values, origin.as_ref()).map(HVal::Arr)
            }
            Exp::ReduceByIndex {
                dest, lambda, indices: index_atom, values: value_atom, ..
            } => {
                let dest = self.array(env, dest)?;
                let indices = self.array(env, index_atom)?;
                let values = self.array(env, value_atom)?;
                let in_place = self.in_place(f, exp);
                let indices = self.computed_first(f, exp, index_atom, indices, &dest, "indices")?;
                let values = self.computed_first(f, exp, value_atom, values, &dest, "values")?;
                let out = self.updated(&dest, in_place, "histogram")?;
                self.reduce_by_index(f, lambda, out, indices, values, ty, origin.as_ref(), env)
                    .map(HVal::Arr)
            }
            Exp::Update { array, indices, value } => {
                let array_name = var_name(array);
                let arr = self.array(env, array)?;
                let indices = indices.iter().map(|i| self.atom(env, i)).collect::<Res<Vec<_>>>()?;
                let value = self.atom(env, value)?;
                let in_place = self.in_place(f, exp);
                self.update(arr, &array_name, &indices, &value, in_place, origin.as_ref())
                    .map(HVal::Arr)
            }
            Exp::Iota { size } => {
                let n = self.host_int(env, size)?;
                self.check_count(&n, "iota", origin.as_ref());
                let (full, _) = elem_and_rank(ty);
                let elem = match &full {
                    Type::Scalar(s) => *s,
                    _ => Elem::I64,
                };
                Ok(HVal::Arr(pull(
                    vec![n.clone()],
                    vec![n],
                    full,
                    PullSrc::Iota(elem),
                    origin.as_ref(),
                )))
            }
            Exp::Replicate { size, value } => {
                let n = self.host_int(env, size)?;
                self.check_count(&n, "replicate", origin.as_ref());
                let v = self.atom(env, value)?;
                let mut shape = vec![n];
                if let HVal::Arr(a) = &v {
                    shape.extend(a.shape());
                }
                let (full, _) = elem_and_rank(ty);
                Ok(HVal::Arr(pull(
                    shape.clone(),
                    shape,
                    full,
                    PullSrc::Replicate(v),
                    origin.as_ref(),
                )))
            }
            Exp::Zip(parts) => {
                let mut arrs = Vec::new();
                for p in parts {
                    match self.array(env, p)? {
                        HArr::Zip(inner) => arrs.extend(inner),
                        other => arrs.push(other),
                    }
                }
                Ok(HVal::Arr(HArr::Zip(arrs)))
            }
            Exp::Unzip(a) => {
                let arr = self.array(env, a)?;
                let arr = if let HArr::Zip(_) = arr { arr } else { self.materialise(&arr, &name)? };
                match arr {
                    HArr::Zip(parts) => Ok(HVal::Tuple(parts.into_iter().map(HVal::Arr).collect())),
                    _ => Err(LowerError::internal("unzip of a non-zip")),
                }
            }
            Exp::Transpose(a) => {
                let arr = self.array(env, a)?;
                Ok(HVal::Arr(self.view(&arr, &View::Transpose)?))
            }
            Exp::Reverse(a) => {
                let arr = self.array(env, a)?;
                let n = arr.shape()[0].clone();
                Ok(HVal::Arr(self.view(
                    &arr,
                    &View::Slice {
                        dim: 0,
                        start: Expr::sub(n.clone(), Expr::I64(1)),
                        len: n,
                        stride: Expr::I64(-1),
                    },
                )?))
            }
            Exp::Flatten(a) => {
                let arr = self.array(env, a)?;
                Ok(HVal::Arr(self.view(&arr, &View::Flatten)?))
            }
            Exp::Unflatten { rows, cols, array } => {
                let arr = self.array(env, array)?;
                let r = self.host_int(env, rows)?;
                let c = self.host_int(env, cols)?;
                let n = arr.shape()[0].clone();
                let ok = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Ge, r.clone(), Expr::I64(0)),
                    Expr::bin(HOp::Eq, Expr::mul(r.clone(), c.clone()), n.clone()),
                );
                let check = RuntimeCheck::Unflatten { array: &var_name(array) };
                self.check(ok, check, origin.as_ref(), vec![n, c.clone()]);
                Ok(HVal::Arr(self.view(&arr, &View::Unflatten { rows: r, cols: c })?))
            }
            Exp::Split { chunk, array } => {
                let arr = self.array(env, array)?;
                let k = self.host_int(env, chunk)?;
                let n = arr.shape()[0].clone();
                let safe_k = Expr::Select(
                    Box::new(Expr::bin(HOp::Gt, k.clone(), Expr::I64(0))),
                    Box::new(k.clone()),
                    Box::new(Expr::I64(1)),
                );
                let ok = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Gt, k.clone(), Expr::I64(0)),
                    Expr::bin(
                        HOp::Eq,
                        Expr::bin(HOp::Rem, n.clone(), safe_k.clone()),
                        Expr::I64(0),
                    ),
                );
                self.check(
                    ok,
                    RuntimeCheck::Split { array: &var_name(array) },
                    origin.as_ref(),
                    vec![n.clone(), k.clone()],
                );
                let rows = Expr::div(n, if k.as_int().is_some() { k.clone() } else { safe_k });
                Ok(HVal::Arr(self.view(&arr, &View::Unflatten { rows, cols: k })?))
            }
            Exp::Take { count, array } | Exp::Drop { count, array } => {
                let is_take = matches!(&function.exps[exp], Exp::Take { .. });
                let arr = self.array(env, array)?;
                let k = self.host_int(env, count)?;
                let n = arr.shape()[0].clone();
                let what = if is_take { "take" } else { "drop" };
                let ok = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Le, Expr::I64(0), k.clone()),
                    Expr::bin(HOp::Le, k.clone(), n.clone()),
                );
                self.check(
                    ok,
                    RuntimeCheck::Count { what, array: &var_name(array) },
                    origin.as_ref(),
                    vec![k.clone(), n.clone()],
                );
                let view = if is_take {
                    View::Slice { dim: 0, start: Expr::I64(0), len: k, stride: Expr::I64(1) }
                } else {
                    View::Slice {
                        dim: 0,
                        start: k.clone(),
                        len: Expr::sub(n, k),
                        stride: Expr::I64(1),
                    }
                };
                Ok(HVal::Arr(self.view(&arr, &view)?))
            }
            Exp::Concat(a, b) => {
                let a = self.array(env, a)?;
                let b = self.array(env, b)?;
                let mut shape = a.shape();
                shape[0] = Expr::add(shape[0].clone(), b.shape()[0].clone());
                let (full, _) = elem_and_rank(ty);
                Ok(HVal::Arr(pull(
                    shape.clone(),
                    shape,
                    full,
                    PullSrc::Concat(a, b),
                    origin.as_ref(),
                )))
            }
            Exp::Materialise { space, value } => {
                let v = self.atom(env, value)?;
                match (space, v) {
                    (weft_core::Space::Local | weft_core::Space::Private, _) => {
                        Err(LowerError::unsupported(
                            "`to_local`/`to_private` at the host level",
                            origin.as_ref(),
                        ))
                    }
                    (_, HVal::Arr(a)) => Ok(HVal::Arr(self.materialise(&a, &name)?)),
                    (_, other) => Ok(other),
                }
            }
            Exp::Coerce { value, ty: target } => {
                let v = self.atom(env, value)?;
                if let HVal::Arr(arr) = &v {
                    let shape = arr.shape();
                    let mut t = target;
                    let mut d = 0;
                    while let Type::Array { size, elem } = t {
                        if d >= shape.len() {
                            break;
                        }
                        if let Some(sv) = size.as_var()
                            && !env.contains_key(sv)
                            && self.program.functions[f].vars[*sv].kind == VarKind::Existential
                        {
                            env.insert(
                                *sv,
                                HVal::Scalar(HScalar::Host(shape[d].clone(), Elem::I64)),
                            );
                        } else {
                            let want = self.host_size(env, size)?;
                            if want != shape[d] {
                                let size = size
                                    .display(&|v: &VarId| function.vars[*v].name.to_string())
                                    .to_string();
                                let check = RuntimeCheck::Coerce {
                                    value: &var_name(value),
                                    dim: d,
                                    size: &size,
                                };
                                self.check(
                                    Expr::bin(HOp::Eq, shape[d].clone(), want.clone()),
                                    check,
                                    origin.as_ref(),
                                    vec![shape[d].clone(), want],
                                );
                            }
                        }
                        t = elem;
                        d += 1;
                    }
                }
                Ok(v)
            }
            Exp::BinOp { .. } | Exp::UnOp { .. } | Exp::Convert { .. } | Exp::Math { .. } => {
                self.scalar_kernel(f, env, exp, var)
            }
        }
    }

    /// The inner dimensions of a lambda's result type, which must be known on the host.
    fn lambda_shape(&mut self, env: &mut HEnv, ret: &Type) -> Res<Vec<Expr>> {
        let (_, rank) = elem_and_rank(ret);
        let mut out = Vec::new();
        let mut t = ret;
        for _ in 0..rank {
            let Type::Array { size, elem } = t else { break };
            out.push(self.host_size(env, size).map_err(|_| {
                LowerError::unsupported("a map whose rows have sizes computed inside the map", None)
            })?);
            t = elem;
        }
        Ok(out)
    }

    fn view(&mut self, arr: &HArr, view: &View<Expr>) -> Res<HArr> {
        if let Some(v) = arr.view(view) {
            return Ok(v);
        }
        // The layout cannot express the view (flattening a transposed array): copy.
        let copy = self.materialise_fresh(arr, "copy")?;
        copy.view(view).ok_or_else(|| LowerError::internal("a view of a fresh array"))
    }

    fn slice_bounds(
        &mut self,
        name: &str,
        n: Expr,
        start: Option<Expr>,
        end: Option<Expr>,
        stride: Expr,
        origin: Option<&Origin>,
    ) -> (Expr, Expr) {
        use crate::arr::IExpr;
        let sel = |c: Expr, a: Expr, b: Expr| Expr::Select(Box::new(c), Box::new(a), Box::new(b));
        let positive = Expr::bin(HOp::Gt, stride.clone(), Expr::I64(0));
        let s = start.unwrap_or_else(|| {
            sel(positive.clone(), Expr::I64(0), Expr::sub(n.clone(), Expr::I64(1)))
        });
        let e = end.unwrap_or_else(|| sel(positive.clone(), n.clone(), Expr::I64(-1)));
        let (sv, ev) = (self.new_var("start"), self.new_var("end"));
        self.step(Step::Let { var: sv, value: s });
        self.step(Step::Let { var: ev, value: e });
        let (s, e) = (Expr::Var(sv), Expr::Var(ev));
        let and = |a, b| Expr::bin(HOp::And, a, b);
        let ok_pos = and(
            and(
                Expr::bin(HOp::Le, Expr::I64(0), s.clone()),
                Expr::bin(HOp::Le, e.clone(), n.clone()),
            ),
            Expr::bin(HOp::Le, s.clone(), e.clone()),
        );
        let ok_neg = and(
            and(
                Expr::bin(HOp::Lt, s.clone(), n.clone()),
                Expr::bin(HOp::Ge, e.clone(), Expr::I64(-1)),
            ),
            Expr::bin(HOp::Ge, s.clone(), e.clone()),
        );
        let ok = sel(
            positive.clone(),
            ok_pos,
            and(Expr::bin(HOp::Ne, stride.clone(), Expr::I64(0)), ok_neg),
        );
        self.check(ok, RuntimeCheck::Slice { array: name }, origin, vec![s.clone(), n]);
        let safe =
            sel(Expr::bin(HOp::Eq, stride.clone(), Expr::I64(0)), Expr::I64(1), stride.clone());
        let len_pos = Expr::bin(
            HOp::Div,
            Expr::add(Expr::sub(e.clone(), s.clone()), Expr::sub(safe.clone(), Expr::I64(1))),
            safe.clone(),
        );
        let neg = Expr::Neg(Box::new(safe.clone()));
        let len_neg = Expr::bin(
            HOp::Div,
            Expr::add(Expr::sub(s.clone(), e), Expr::sub(neg.clone(), Expr::I64(1))),
            neg,
        );
        let lv = self.new_var("len");
        self.step(Step::Let { var: lv, value: sel(positive, len_pos, len_neg) });
        (s, Expr::Var(lv))
    }

    /// Runs one scalar statement in a kernel of one work-item.
    fn scalar_kernel(&mut self, f: FnId, env: &HEnv, exp: ExpId, var: VarId) -> Res<HVal> {
        let mut kb = self.kb();
        if let Some(o) = self.origin(f, exp) {
            kb.note(&o, "one work-item (a scalar computed on the device)");
        }
        let mut kenv = KEnv { vars: FxHashMap::default(), host: Some(Rc::new(env.clone())) };
        let v = kb.exp(f, &mut kenv, exp, var)?;
        if contains_array(&v) {
            // One work-item computes it, and it stores only scalars.
            return Err(LowerError::unsupported(
                "an array computed by one work-item (such as a row of an array computed on the host)",
                self.origin(f, exp).as_ref(),
            ));
        }
        let name = self.program.functions[f].vars[var].name.to_string();
        let out = self.store_scalars(&mut kb, &v, &name)?;
        // A temporary has no name (`slots[n - 1]` in the prelude's `compress`).
        let what = if name.is_empty() { "a scalar".to_owned() } else { format!("`{name}`") };
        let doc = format!(
            "computes {what} (one work-item){}",
            kb.comment(self.origin(f, exp).as_ref()).map(|p| format!(", {p}")).unwrap_or_default()
        );
        self.launch(kb, "scalar", doc, vec![Expr::I64(1)], None);
        Ok(out)
    }

    pub(crate) fn store_scalars(&mut self, kb: &mut Kb<'p>, v: &KVal, name: &str) -> Res<HVal> {
        Ok(match v {
            KVal::Scalar(e, elem) => {
                let buf = self.new_var(name);
                self.step(Step::Alloc { var: buf, elem: *elem, len: Expr::I64(1) });
                self.note_buffer(buf);
                let ptr = kb.buffer_param(buf, *elem);
                let value = if *elem == Elem::Bool {
                    CExpr::cast(Elem::Bool, e.clone())
                } else {
                    e.clone()
                };
                kb.emit(Cmd::Store { ptr, index: CExpr::Int(0), value });
                HVal::Scalar(HScalar::Device(buf, *elem))
            }
            KVal::Tuple(parts) => HVal::Tuple(
                parts.iter().map(|p| self.store_scalars(kb, p, name)).collect::<Res<_>>()?,
            ),
            KVal::Arr(_) => return Err(LowerError::internal("a scalar kernel returning an array")),
        })
    }

    /// Fresh row-major buffers for an array of `elem_ty` elements (one per leaf).
    pub(crate) fn alloc(&mut self, elem_ty: &Type, shape: Vec<Expr>, name: &str) -> Res<HArr> {
        use crate::arr::IExpr;
        let len = shape.iter().cloned().fold(Expr::I64(1), Expr::mul);
        let mut parts = Vec::new();
        for elem in leaves(elem_ty)? {
            let buf = self.new_var(name);
            self.step(Step::Alloc { var: buf, elem, len: len.clone() });
            self.note_buffer(buf);
            parts.push(HArr::Mem(Mem::fresh(buf, elem, shape.clone())));
        }
        crate::val::Nesting::of_type(elem_ty)
            .regroup(&mut parts.into_iter(), &HArr::Zip)
            .ok_or_else(|| LowerError::internal("an allocation with no leaves"))
    }

    /// The array in memory (views of memory stay views).
    pub(crate) fn materialise(&mut self, a: &HArr, name: &str) -> Res<HArr> {
        if a.is_mem() {
            return Ok(a.clone());
        }
        if let HArr::Zip(parts) = a {
            return Ok(HArr::Zip(
                parts.iter().map(|p| self.materialise(p, name)).collect::<Res<_>>()?,
            ));
        }
        self.copy_to_fresh(a, name)
    }

    /// The array in fresh row-major memory at offset 0 (copied unless it already is).
    pub(crate) fn materialise_fresh(&mut self, a: &HArr, name: &str) -> Res<HArr> {
        match a {
            HArr::Mem(m) if m.is_row_major() => Ok(a.clone()),
            HArr::Zip(parts) => Ok(HArr::Zip(
                parts.iter().map(|p| self.materialise_fresh(p, name)).collect::<Res<_>>()?,
            )),
            _ => self.copy_to_fresh(a, name),
        }
    }

    fn elem_type_of(&self, a: &HArr) -> Type {
        match a {
            HArr::Mem(m) => Type::Scalar(m.elem),
            HArr::Zip(parts) => Type::Tuple(parts.iter().map(|p| self.elem_type_of(p)).collect()),
            HArr::Pull(p) => p.elem_ty.clone(),
        }
    }

    /// A grid kernel writing every element of `a` into fresh memory. Regular nests of
    /// cheap maps use a two-dimensional NDRange (innermost dimension first, so that
    /// neighbouring work-items write neighbouring elements).
    pub(crate) fn copy_to_fresh(&mut self, a: &HArr, name: &str) -> Res<HArr> {
        let shape = a.shape();
        let elem_ty = self.elem_type_of(a);
        let out = self.alloc(&elem_ty, shape.clone(), name)?;
        if let HArr::Mem(m) = a
            && crate::tiles::is_transposed(m)
            && let HArr::Mem(dst) = &out
        {
            self.push_steps();
            self.transpose_tiled(m, dst, name)?;
            let tiled = self.pop_steps();
            self.tiled_or_plain(
                a,
                &out,
                name,
                tiled,
                "a transposition tiled through local memory",
            )?;
            return Ok(out);
        }
        if let Some(nest) = crate::matmul::matmul_nest(self.program, a) {
            self.push_steps();
            let made = self.matmul_tiled(&nest, &out, name)?;
            let tiled = self.pop_steps();
            if made {
                self.tiled_or_plain(
                    a,
                    &out,
                    name,
                    tiled,
                    "the tiled matrix-multiplication kernel",
                )?;
                return Ok(out);
            }
        }
        if let Some(rows) = crate::tiles::segmented_reduce(self.program, a)
            && let Some(len) = self.row_length(&rows)
        {
            self.rows_reduce(a, &rows, &out, len, name)?;
            return Ok(out);
        }
        self.copy_kernel(a, &out, name)?;
        Ok(out)
    }

    /// The grid kernel of [`Lowerer::copy_to_fresh`].
    /// A tiled kernel's steps against the plain grid kernel writing `a` into `out`: by
    /// predicted time per run (`tiles.rs`, `choose_cheapest`), or the tiled one alone
    /// when `Options::steer_tiling` is off.
    fn tiled_or_plain(
        &mut self,
        a: &HArr,
        out: &HArr,
        name: &str,
        tiled: Vec<Step>,
        what: &'static str,
    ) -> Res<()> {
        if !self.options.steer_tiling {
            self.steps_mut().extend(tiled);
            return Ok(());
        }
        self.push_steps();
        self.copy_kernel(a, out, name)?;
        let plain = self.pop_steps();
        self.choose_cheapest(vec![
            (what, tiled),
            ("the plain kernel, one work-item per element", plain),
        ]);
        Ok(())
    }

    pub(crate) fn copy_kernel(&mut self, a: &HArr, out: &HArr, name: &str) -> Res<()> {
        let shape = a.shape();
        let mut kb = self.kb();
        let rank = shape.len();
        let two_d = rank >= 2 && cheap_rows(self.program, a);
        if let HArr::Pull(p) = a
            && let Some(o) = &p.origin
        {
            let role = if two_d {
                "@grid: one work-item per element (2-D NDRange)"
            } else {
                "@grid: one work-item per element"
            };
            kb.note(o, role);
        }
        let src = kb.import_arr(a)?;
        let dst = kb.import_arr(out)?;
        let kshape = src.shape();
        let (global, local, kind) = if two_d {
            let i = kb.fresh_name("i");
            let j = kb.fresh_name("j");
            kb.push();
            let v = kb.index(&src, &[CExpr::Var(i.clone()), CExpr::Var(j.clone())])?;
            kb.write(&dst, &[CExpr::Var(i.clone()), CExpr::Var(j.clone())], &v)?;
            let inner = kb.pop();
            // The NDRange is the shape itself (rounded up to the work-group): covered.
            let outer = vec![Cmd::ParFor {
                level: ParLevel::GridCovered(1),
                var: i,
                bound: kshape[0].clone(),
                body: inner,
                comment: None,
            }];
            kb.emit(Cmd::ParFor {
                level: ParLevel::GridCovered(0),
                var: j,
                bound: kshape[1].clone(),
                body: outer,
                comment: None,
            });
            (
                vec![shape[1].clone(), shape[0].clone()],
                Some(vec![Expr::I64(32), Expr::I64(8)]),
                "map2d",
            )
        } else {
            let i = kb.fresh_name("i");
            kb.push();
            let v = kb.index(&src, &[CExpr::Var(i.clone())])?;
            kb.write(&dst, &[CExpr::Var(i.clone())], &v)?;
            let body = kb.pop();
            // Coarsening spreads a work-item's index arithmetic over several light
            // elements; an element that runs a long loop of its own (a chunk of a
            // column reduced) has work enough, and coarsening only takes work-items away
            // (on the H100 the chunked column sums took 215 us coarsened by 4, 75 us not).
            let c = if crate::imp::has_long_loop(&body) {
                1
            } else {
                i64::from(self.options.coarsen.max(1))
            };
            // Without coarsening the NDRange has a work-item per element: covered.
            let level = if c == 1 { ParLevel::GridCovered(0) } else { ParLevel::Grid(0) };
            kb.emit(Cmd::ParFor { level, var: i, bound: kshape[0].clone(), body, comment: None });
            use crate::arr::IExpr;
            let items = Expr::div(Expr::add(shape[0].clone(), Expr::I64(c - 1)), Expr::I64(c));
            (vec![items], Some(vec![Expr::I64(256)]), "map")
        };
        let doc = format!(
            "materialises `{name}`: {}",
            if two_d { "one work-item per element (2-D NDRange)" } else { "one work-item per row" }
        );
        self.launch(kb, kind, doc, global, local);
        Ok(())
    }

    // ---- slots: where `if` and `loop` results meet ----

    /// A slot for the values of type `ty` (of function `f`) that branches or iterations
    /// assign.
    fn make_slot(&mut self, f: FnId, ty: &Type, name: &str) -> Res<Slot> {
        Ok(match ty {
            Type::Scalar(s) => Slot::Scalar(self.new_var(name), *s),
            Type::Tuple(parts) => {
                Slot::Tuple(parts.iter().map(|p| self.make_slot(f, p, name)).collect::<Res<_>>()?)
            }
            Type::Array { .. } => {
                let (full, rank) = elem_and_rank(ty);
                let leaves = leaves(&full)?.into_iter().map(|e| (self.new_var(name), e)).collect();
                // Each dimension is named by the size the type gives it (`n`), which the
                // values assigned have: costs and regions show the source's names.
                let vars = &self.program.functions[f].vars;
                let mut names = Vec::new();
                let mut t = ty;
                while let Type::Array { size, elem } = t {
                    names.push(size.display(&|v| vars[*v].name.to_string()).to_string());
                    t = elem;
                }
                let dims = (0..rank)
                    .map(|i| self.new_var(names.get(i).map_or("dim", String::as_str)))
                    .collect();
                Slot::Arr { leaves, dims, nesting: Rc::new(crate::val::Nesting::of_type(&full)) }
            }
        })
    }

    fn assign_slot(&mut self, slot: &Slot, v: &HVal) -> Res<()> {
        let mut staged = Vec::new();
        self.stage(slot, v, &mut staged)?;
        for (target, tmp, is_buf) in staged {
            if is_buf {
                self.step(Step::Alias { var: target, from: tmp });
            } else {
                self.step(Step::Let { var: target, value: Expr::Var(tmp) });
            }
        }
        Ok(())
    }

    fn stage(&mut self, slot: &Slot, v: &HVal, out: &mut Vec<(Var, Var, bool)>) -> Res<()> {
        match (slot, v) {
            (Slot::Scalar(var, _), HVal::Scalar(_)) => {
                let (e, _) = self.host_scalar(v)?;
                let tmp = self.new_var("tmp");
                self.step(Step::Let { var: tmp, value: e });
                out.push((*var, tmp, false));
            }
            (Slot::Tuple(slots), HVal::Tuple(vals)) => {
                for (s, v) in slots.iter().zip(vals) {
                    self.stage(s, v, out)?;
                }
            }
            (Slot::Arr { leaves, dims, .. }, HVal::Arr(a)) => {
                let fresh = self.materialise_fresh(a, "merged")?;
                let mems = mem_leaves(&fresh);
                if mems.len() != leaves.len() {
                    return Err(LowerError::internal("array merged into a slot of another shape"));
                }
                for ((var, _), m) in leaves.iter().zip(&mems) {
                    let tmp = self.new_var("tmp");
                    self.step(Step::Alias { var: tmp, from: m.buf });
                    out.push((*var, tmp, true));
                }
                let shape = fresh.shape();
                for (d, e) in dims.iter().zip(shape) {
                    let tmp = self.new_var("tmp");
                    self.step(Step::Let { var: tmp, value: e });
                    out.push((*d, tmp, false));
                }
            }
            _ => return Err(LowerError::internal("value of another type than its slot")),
        }
        Ok(())
    }
}

enum Slot {
    Scalar(Var, Elem),
    /// One buffer per scalar leaf of the element type, nested as the type is.
    Arr {
        leaves: Vec<(Var, Elem)>,
        dims: Vec<Var>,
        nesting: Rc<crate::val::Nesting>,
    },
    Tuple(Vec<Slot>),
}

fn slot_val(slot: &Slot) -> HVal {
    match slot {
        Slot::Scalar(v, e) => HVal::Scalar(HScalar::Host(Expr::Var(*v), *e)),
        Slot::Tuple(parts) => HVal::Tuple(parts.iter().map(slot_val).collect()),
        Slot::Arr { leaves, dims, nesting } => {
            let shape: Vec<Expr> = dims.iter().map(|d| Expr::Var(*d)).collect();
            let mut parts =
                leaves.iter().map(|(v, e)| HArr::Mem(Mem::fresh(*v, *e, shape.clone())));
            let arr = nesting.regroup(&mut parts, &HArr::Zip);
            HVal::Arr(arr.unwrap_or_else(|| HArr::Zip(Vec::new())))
        }
    }
}

fn mem_leaves(a: &HArr) -> Vec<Mem<Expr, Var>> {
    match a {
        HArr::Mem(m) => vec![m.clone()],
        HArr::Zip(parts) => parts.iter().flat_map(mem_leaves).collect(),
        HArr::Pull(_) => Vec::new(),
    }
}

pub(crate) fn pull(
    base_shape: Vec<Expr>,
    shape: Vec<Expr>,
    elem_ty: Type,
    src: PullSrc,
    origin: Option<&Origin>,
) -> HArr {
    HArr::Pull(Rc::new(HPull {
        base_shape,
        shape,
        elem_ty,
        src,
        views: Vec::new(),
        origin: origin.cloned(),
    }))
}

/// The buffers of an array's memory leaves.
fn mem_buffers(a: &HArr, out: &mut Vec<Var>) {
    match a {
        HArr::Mem(m) => out.push(m.buf),
        HArr::Zip(parts) => parts.iter().for_each(|p| mem_buffers(p, out)),
        HArr::Pull(_) => {}
    }
}

pub(crate) fn to_i64(e: Expr, elem: Elem) -> Expr {
    if elem == Elem::I64 { e } else { Expr::Convert(Elem::I64, Box::new(e)) }
}

/// A host expression for `i64` and `bool` scalars known on the host.
fn host_known(v: &HVal) -> Option<Expr> {
    match v {
        HVal::Scalar(HScalar::Host(e, Elem::I64 | Elem::Bool)) => Some(e.clone()),
        _ => None,
    }
}

pub(crate) fn host_op(op: BinOp, elem: Elem) -> Option<HOp> {
    let cmp = match op {
        BinOp::Eq => Some(HOp::Eq),
        BinOp::Neq => Some(HOp::Ne),
        BinOp::Lt => Some(HOp::Lt),
        BinOp::Le => Some(HOp::Le),
        BinOp::Gt => Some(HOp::Gt),
        BinOp::Ge => Some(HOp::Ge),
        _ => None,
    };
    match elem {
        Elem::I64 => cmp.or(match op {
            BinOp::Add => Some(HOp::Add),
            BinOp::Sub => Some(HOp::Sub),
            BinOp::Mul => Some(HOp::Mul),
            BinOp::Div => Some(HOp::Div),
            BinOp::Rem => Some(HOp::Rem),
            _ => None,
        }),
        Elem::Bool => match op {
            BinOp::Eq => Some(HOp::Eq),
            BinOp::Neq => Some(HOp::Ne),
            BinOp::BitAnd => Some(HOp::And),
            BinOp::BitOr => Some(HOp::Or),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn bind_sizes(env: &mut HEnv, ty: &Type, val: &HVal) {
    match (ty, val) {
        (Type::Array { .. }, HVal::Arr(arr)) => {
            let shape = arr.shape();
            let mut t = ty;
            for dim in shape {
                let Type::Array { size, elem } = t else { break };
                if let Some(v) = size.as_var()
                    && !env.contains_key(v)
                {
                    env.insert(*v, HVal::Scalar(HScalar::Host(dim, Elem::I64)));
                }
                t = elem;
            }
        }
        (Type::Tuple(tys), HVal::Tuple(vals)) => {
            for (t, v) in tys.iter().zip(vals) {
                bind_sizes(env, t, v);
            }
        }
        _ => {}
    }
}

fn sanitize_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// Whether each row of the array is cheap to recompute per element, so that a
/// two-dimensional NDRange may evaluate the row's code once per element.
fn cheap_rows(program: &Program, a: &HArr) -> bool {
    match a {
        HArr::Mem(_) => true,
        HArr::Zip(parts) => parts.iter().all(|p| cheap_rows(program, p)),
        HArr::Pull(p) => match &p.src {
            PullSrc::Map { func, lambda, arrays, .. } => {
                arrays.iter().all(|a| cheap_rows(program, a))
                    && light_block(program, *func, lambda.body)
            }
            PullSrc::Generate { func, lambda, .. } => light_block(program, *func, lambda.body),
            PullSrc::Iota(_) | PullSrc::Replicate(_) | PullSrc::Lit(_) => true,
            PullSrc::Concat(a, b) => cheap_rows(program, a) && cheap_rows(program, b),
        },
    }
}

fn light_block(program: &Program, f: FnId, block: BlockId) -> bool {
    let function = &program.functions[f];
    function.blocks[block].stmts.iter().all(|s| {
        !matches!(
            function.exps[s.exp],
            Exp::Reduce { .. }
                | Exp::Scan { .. }
                | Exp::Loop { .. }
                | Exp::If { .. }
                | Exp::Scatter { .. }
                | Exp::ReduceByIndex { .. }
                | Exp::Update { .. }
                | Exp::Call { .. }
        )
    })
}

fn count_block(
    function: &weft_core::Function,
    block: BlockId,
    weight: u32,
    counts: &mut FxHashMap<VarId, u32>,
) {
    let b = &function.blocks[block];
    let add = |a: &Atom, w: u32, counts: &mut FxHashMap<VarId, u32>| {
        if let Atom::Var(v) = a {
            *counts.entry(*v).or_default() += w;
        }
    };
    for stmt in &b.stmts {
        let exp = &function.exps[stmt.exp];
        for a in exp.operands() {
            add(&a, weight, counts);
        }
        for (blk, inner) in exp_blocks(exp) {
            count_block(function, blk, if inner { weight.max(2) } else { weight }, counts);
        }
    }
    if let Some(a) = &b.result {
        add(a, weight, counts);
    }
}

/// Nested blocks of an expression; `true` for those that run once per element or
/// iteration (all but an `if`'s branches).
pub(crate) fn exp_blocks(exp: &Exp) -> Vec<(BlockId, bool)> {
    let repeated = !matches!(exp, Exp::If { .. });
    exp.nested_blocks().into_iter().map(|block| (block, repeated)).collect()
}

/// Whether a kernel value holds an array anywhere.
fn contains_array(v: &KVal) -> bool {
    match v {
        KVal::Scalar(..) => false,
        KVal::Tuple(parts) => parts.iter().any(contains_array),
        KVal::Arr(_) => true,
    }
}
