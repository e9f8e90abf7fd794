//! The code generator from the GPU IR (MIDDLE.md, "Code generation"): one translation
//! of a [`GpuProgram`] with its memory ([`GpuMemProgram`], weft-mem) into kernels of
//! the imperative IR and host steps.
//!
//! Nothing is decided here that the middle end or the memory layer decides: each SegOp
//! becomes the kernels of its kind and level (`seg.rs`), each version a run-time
//! branch on its threshold, and every array's block, layout and allocation are read
//! from the memory IR: this module evaluates LMADs (their components as host or
//! kernel expressions) and indexes through them, and has no layout algebra. What is
//! its own are the strategies' temporaries (a reduction's partial results, a scan's
//! carries) and the schedule of each kernel (work-group size, elements per work-item),
//! from [`Options`].
//!
//! - `host.rs`: host code: scalars as host expressions (the plan computes `i64` and
//!   `bool` arithmetic; other scalars are computed by a kernel of one work-item and
//!   stay on the device), views, allocations, `if`, versions and loops, fresh arrays
//!   written by fill kernels.
//! - `kernel.rs`: a kernel under construction and the sequential code of SegOp bodies.
//! - `seg.rs`: the strategies of SegOps.
//!
//! A construct the generator does not handle yet is a [`LowerError`] marked
//! unsupported, with its source position.

mod host;
mod kernel;
mod lookback;
mod product;
mod seg;

use rustc_hash::FxHashMap;
use weft_core::{Atom, CoreSize, FnId, Origin, Type, VarId};
use weft_mem::{
    ArrayMem, ExistId, GpuMemFunction, GpuMemProgram, MemBlockId, MemInfo, MemSize, MemVar,
};
use weft_opt::{GpuFunction, GpuProgram, ThresholdId};
use weft_plan::{BinOp as HOp, Elem, ErrorSite, Expr, Input, Output, Step, Var};
use weft_values::RuntimeCheck;

use crate::LowerError;
use crate::imp::KernelImp;
use crate::lowered::{Lowered, Options};

pub(crate) type Res<T> = Result<T, LowerError>;

/// The evaluated LMAD of an array: element `[i0, .., ik]` is at `offset + Σ ij·strides[j]`
/// of its buffer. Made only by evaluating the memory IR's LMADs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout<E> {
    pub(crate) offset: E,
    pub(crate) strides: Vec<E>,
    pub(crate) shape: Vec<E>,
}

/// A value of host code.
#[derive(Debug, Clone)]
pub(crate) enum HVal {
    Scalar(HScalar),
    Arr(HArr),
    /// A tuple, or an array of tuples (a tuple of arrays).
    Tuple(Vec<HVal>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HScalar {
    /// Known to the host: an expression over host variables.
    Host(Expr, Elem),
    /// Element 0 of a device buffer (a scalar a kernel computed).
    Device(Var, Elem),
}

/// An array of host code: a buffer (a host variable) and its layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HArr {
    pub(crate) buf: Var,
    pub(crate) elem: Elem,
    pub(crate) layout: Layout<Expr>,
}

/// Compiles one entry of `program` (the middle end's output with every call inlined,
/// `weft_opt::pipeline_inlined`) with its memory `mem`; `threshold` gives each
/// version's threshold value.
pub fn lower_gpu_entry(
    program: &GpuProgram,
    mem: &GpuMemProgram,
    threshold: &dyn Fn(ThresholdId) -> i64,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Lowered, LowerError> {
    let (mut tr, inputs, input_names, outputs) =
        translate(program, mem, threshold, entry, position, options)?;
    let steps = tr.steps.pop().unwrap_or_default();
    let functions = Vec::new();
    let spaces = crate::aspace::infer_spaces(
        &tr.kernels,
        &functions,
        &FxHashMap::default(),
        tr.options.target,
    );
    let mut regions = crate::regions::analyse(&crate::regions::PlanView {
        steps: &steps,
        inputs: &inputs,
        input_names: &input_names,
        outputs: &outputs,
        kernels: &tr.kernels,
        var_names: &tr.var_names,
        buffer_origins: &tr.buffer_origins,
    });
    regions.entry = tr.entry_name.clone();
    let costs = crate::cost::entry_costs(
        &tr.entry_name,
        &tr.kernels,
        &functions,
        &spaces.kernels,
        &steps,
        &inputs,
        &outputs,
        &tr.var_names,
    );
    Ok(Lowered {
        costs,
        entry: tr.entry_name,
        kernels: tr.kernels,
        functions,
        spaces,
        inputs,
        input_names,
        steps,
        outputs,
        errors: tr.errors,
        n_vars: tr.var_names.len() as u32,
        var_names: tr.var_names,
        regions,
    })
}

/// Whether the code generator compiles an entry, without the analyses of
/// [`lower_gpu_entry`] (address spaces, regions, costs) or the OpenCL text: what
/// `weft check`'s `backend-unsupported` warning needs.
pub fn check_gpu_entry(
    program: &GpuProgram,
    mem: &GpuMemProgram,
    threshold: &dyn Fn(ThresholdId) -> i64,
    entry: FnId,
    options: Options,
) -> Result<(), LowerError> {
    translate(program, mem, threshold, entry, &|_| None, options).map(drop)
}

type Translated<'p> = (Tr<'p>, Vec<Input>, Vec<String>, Vec<Output>);

/// The entry's host steps and kernels ([`Tr`]), its inputs with their names, and its
/// outputs.
fn translate<'p>(
    program: &'p GpuProgram,
    mem: &'p GpuMemProgram,
    threshold: &'p dyn Fn(ThresholdId) -> i64,
    entry: FnId,
    position: &'p dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Translated<'p>, LowerError> {
    let f = &program.functions[entry];
    let fmem = mem
        .functions
        .get(entry)
        .ok_or_else(|| LowerError::internal("the entry has no memory annotation"))?;
    let mut tr = Tr {
        f,
        mem: fmem,
        threshold,
        position,
        options,
        steps: vec![Vec::new()],
        var_names: Vec::new(),
        errors: Vec::new(),
        kernels: Vec::new(),
        env: FxHashMap::default(),
        blocks: FxHashMap::default(),
        exists: FxHashMap::default(),
        static_lens: FxHashMap::default(),
        buffer_origins: FxHashMap::default(),
        current_origin: None,
        entry_name: f.name.to_string(),
    };
    let (inputs, input_names) = tr.inputs()?;
    let results = tr.block(f.body)?;
    let result = match results.as_slice() {
        [single] => single.clone(),
        _ => HVal::Tuple(results),
    };
    let result = tr.result_copy(result)?;
    let mut outputs = Vec::new();
    tr.outputs(&result, &mut outputs)?;
    Ok((tr, inputs, input_names, outputs))
}

/// The translation of one entry: host steps, kernels, and the host values of its
/// variables.
pub(crate) struct Tr<'p> {
    pub(crate) f: &'p GpuFunction,
    pub(crate) mem: &'p GpuMemFunction,
    pub(crate) threshold: &'p dyn Fn(ThresholdId) -> i64,
    pub(crate) position: &'p dyn Fn(&Origin) -> Option<String>,
    pub(crate) options: Options,
    steps: Vec<Vec<Step>>,
    /// Each host variable's name, indexed by [`Var`].
    pub(crate) var_names: Vec<String>,
    pub(crate) errors: Vec<ErrorSite>,
    pub(crate) kernels: Vec<KernelImp>,
    pub(crate) env: FxHashMap<VarId, HVal>,
    /// The buffer of each block allocated (or bound) so far.
    pub(crate) blocks: FxHashMap<MemBlockId, Var>,
    /// The host value of each existential LMAD component bound so far.
    pub(crate) exists: FxHashMap<ExistId, Expr>,
    /// Element counts of inputs whose sizes are constants (candidates for constant
    /// memory).
    pub(crate) static_lens: FxHashMap<Var, i64>,
    buffer_origins: FxHashMap<Var, Origin>,
    /// The source of the statement being translated.
    pub(crate) current_origin: Option<Origin>,
    entry_name: String,
}

impl Tr<'_> {
    pub(crate) fn new_var(&mut self, name: &str) -> Var {
        let v = Var(self.var_names.len() as u32);
        self.var_names.push(name.to_owned());
        v
    }

    pub(crate) fn step(&mut self, step: Step) {
        if let Some(top) = self.steps.last_mut() {
            top.push(step);
        }
    }

    pub(crate) fn push_steps(&mut self) {
        self.steps.push(Vec::new());
    }

    pub(crate) fn pop_steps(&mut self) -> Vec<Step> {
        self.steps.pop().unwrap_or_default()
    }

    /// `var = value`, as a fresh host variable.
    pub(crate) fn let_var(&mut self, name: &str, value: Expr) -> Expr {
        if matches!(value, Expr::I64(_) | Expr::Bool(_) | Expr::Var(_)) {
            return value;
        }
        let v = self.new_var(name);
        self.step(Step::Let { var: v, value });
        Expr::Var(v)
    }

    pub(crate) fn error_site(&mut self, check: RuntimeCheck<'_>, origin: Option<&Origin>) -> u32 {
        let position = origin.and_then(|o| (self.position)(o));
        self.errors.push(ErrorSite { message: check.template(), position });
        self.errors.len() as u32
    }

    /// Fails with `check` (payload `a`, `b`) unless `cond` holds, in host code.
    pub(crate) fn host_check(&mut self, cond: Expr, check: RuntimeCheck<'_>, a: Expr, b: Expr) {
        if cond == Expr::Bool(true) {
            return;
        }
        let origin = self.current_origin.clone();
        let error = self.error_site(check, origin.as_ref());
        self.step(Step::Check { cond, error, payload: vec![a, b] });
    }

    pub(crate) fn origin(&self, exp: weft_opt::ExpId) -> Option<Origin> {
        self.f.origins.get(exp).cloned()
    }

    pub(crate) fn var_name(&self, atom: Atom) -> String {
        match atom {
            Atom::Var(v) => self.f.vars[v].name.to_string(),
            Atom::Const(_) => "constant".to_owned(),
        }
    }

    /// Adds a kernel and its launch over `global` work-items (in groups of `local`).
    pub(crate) fn launch(
        &mut self,
        kernel: KernelImp,
        args: Vec<weft_plan::Arg>,
        global: Vec<Expr>,
        local: Option<Vec<Expr>>,
    ) {
        let index = self.kernels.len() as u32;
        self.kernels.push(kernel);
        self.step(Step::Launch { kernel: index, global, local, args });
    }

    /// A kernel name: `ENTRY_KIND_N`.
    pub(crate) fn kernel_name(&self, kind: &str) -> String {
        let entry: String = self
            .entry_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
            .collect();
        format!("{entry}_{kind}_{}", self.kernels.len())
    }

    /// A fresh device buffer of `len` elements.
    pub(crate) fn alloc_buffer(&mut self, name: &str, elem: Elem, len: Expr) -> Var {
        let buf = self.new_var(name);
        self.step(Step::Alloc { var: buf, elem, len });
        if let Some(origin) = &self.current_origin {
            self.buffer_origins.insert(buf, origin.clone());
        }
        buf
    }

    // ---- sizes ----

    /// A host `i64` value: a device scalar is read to the host first.
    pub(crate) fn host_int(&mut self, v: &HScalar) -> Expr {
        match v {
            HScalar::Host(e, Elem::I64) => e.clone(),
            HScalar::Host(e, _) => Expr::Convert(Elem::I64, Box::new(e.clone())),
            HScalar::Device(buf, elem) => {
                let var = self.new_var("read");
                self.step(Step::Read { var, buf: *buf, elem: *elem, index: Expr::I64(0) });
                if *elem == Elem::I64 {
                    Expr::Var(var)
                } else {
                    Expr::Convert(Elem::I64, Box::new(Expr::Var(var)))
                }
            }
        }
    }

    /// A host scalar value (a device scalar is read to the host).
    pub(crate) fn host_scalar(&mut self, v: &HScalar) -> (Expr, Elem) {
        match v {
            HScalar::Host(e, elem) => (e.clone(), *elem),
            HScalar::Device(buf, elem) => {
                let var = self.new_var("read");
                self.step(Step::Read { var, buf: *buf, elem: *elem, index: Expr::I64(0) });
                (Expr::Var(var), *elem)
            }
        }
    }

    pub(crate) fn lookup(&self, var: VarId) -> Res<HVal> {
        self.env.get(&var).cloned().ok_or_else(|| {
            LowerError::internal(format!("`{}` is not bound in host code", self.f.vars[var].name))
        })
    }

    pub(crate) fn atom(&mut self, atom: &Atom) -> Res<HVal> {
        match atom {
            Atom::Var(v) => self.lookup(*v),
            Atom::Const(s) => Ok(HVal::Scalar(HScalar::Host(weft_plan::lit_of(*s), s.ty()))),
        }
    }

    pub(crate) fn scalar_atom(&mut self, atom: &Atom) -> Res<HScalar> {
        match self.atom(atom)? {
            HVal::Scalar(s) => Ok(s),
            _ => Err(LowerError::internal("expected a scalar in host code")),
        }
    }

    pub(crate) fn int_atom(&mut self, atom: &Atom) -> Res<Expr> {
        match atom {
            Atom::Const(s) => Ok(Expr::I64(match s.convert(Elem::I64) {
                weft_values::Scalar::I64(x) => x,
                _ => 0,
            })),
            Atom::Var(_) => {
                let s = self.scalar_atom(atom)?;
                Ok(self.host_int(&s))
            }
        }
    }

    /// A memory size as a host expression.
    pub(crate) fn mem_size(&mut self, size: &MemSize) -> Res<Expr> {
        let mut total = Expr::I64(0);
        for term in size.terms() {
            let mut product = Expr::I64(term.coeff());
            for atom in term.monomial().atoms() {
                let factor = match atom {
                    weft_size::Atom::Var(MemVar::Core(v)) => {
                        let s = match self.lookup(*v)? {
                            HVal::Scalar(s) => s,
                            _ => return Err(LowerError::internal("a size that is not a scalar")),
                        };
                        let e = self.host_int(&s);
                        // Read once: later uses see the host value.
                        if let HScalar::Device(..) = s {
                            self.env.insert(*v, HVal::Scalar(HScalar::Host(e.clone(), Elem::I64)));
                        }
                        e
                    }
                    weft_size::Atom::Var(MemVar::Exist(x)) => {
                        self.exists.get(x).cloned().ok_or_else(|| {
                            LowerError::internal("an existential component with no host value")
                        })?
                    }
                    weft_size::Atom::Var(MemVar::Thread(_)) => {
                        return Err(LowerError::internal("a thread index in host code"));
                    }
                    weft_size::Atom::Div(p, q) => {
                        let p = self.mem_size(p)?;
                        let q = self.mem_size(q)?;
                        ediv(p, q)
                    }
                };
                product = emul(product, factor);
            }
            total = eadd(total, product);
        }
        Ok(total)
    }

    pub(crate) fn core_size(&mut self, size: &CoreSize) -> Res<Expr> {
        self.mem_size(&weft_mem::mem_size(size))
    }

    /// An array's value from its memory: its block's buffer and its LMAD, evaluated.
    pub(crate) fn array_of(&mut self, info: &ArrayMem) -> Res<HArr> {
        let buf = *self.blocks.get(&info.block).ok_or_else(|| {
            LowerError::internal("an array whose block has no buffer in host code")
        })?;
        let elem = self.mem.blocks[info.block].elem;
        Ok(HArr { buf, elem, layout: self.layout(&info.lmad)? })
    }

    pub(crate) fn layout(&mut self, lmad: &weft_mem::MemLmad) -> Res<Layout<Expr>> {
        let offset = self.mem_size(&lmad.offset)?;
        let mut strides = Vec::new();
        let mut shape = Vec::new();
        for dim in &lmad.dims {
            strides.push(self.mem_size(&dim.stride)?);
            shape.push(self.mem_size(&dim.shape)?);
        }
        Ok(Layout { offset, strides, shape })
    }

    /// The value of `var` from its memory, for a binding whose arrays are where the
    /// memory IR says (scalars come from `scalars`, in order).
    pub(crate) fn value_of(&mut self, info: &MemInfo, ty: &Type) -> Res<HVal> {
        match (info, ty) {
            (MemInfo::Array(a), _) => Ok(HVal::Arr(self.array_of(a)?)),
            (MemInfo::Tuple(items), Type::Tuple(tys)) => Ok(HVal::Tuple(
                items.iter().zip(tys).map(|(i, t)| self.value_of(i, t)).collect::<Res<_>>()?,
            )),
            (MemInfo::Tuple(items), Type::Array { .. }) => {
                // An array of tuples: a tuple of arrays, one per leaf.
                let shape = weft_mem::value_shape(ty);
                let weft_mem::ValueShape::Tuple(parts) = shape else {
                    return Err(LowerError::internal("an array of tuples without tuple memory"));
                };
                let mut out = Vec::new();
                for (item, part) in items.iter().zip(parts) {
                    out.push(self.value_of(item, &shape_type(&part))?);
                }
                Ok(HVal::Tuple(out))
            }
            _ => Err(LowerError::internal("a value whose memory does not match its type")),
        }
    }

    // ---- inputs and outputs ----

    fn inputs(&mut self) -> Res<(Vec<Input>, Vec<String>)> {
        let f = self.f;
        let mut inputs = Vec::new();
        let mut names = Vec::new();
        let mut deferred: Vec<(Var, CoreSize)> = Vec::new();
        for &param in &f.params {
            let name = f.vars[param].name.to_string();
            let ty = f.vars[param].ty.clone();
            let info = self.mem.bindings.get(param).cloned().unwrap_or_default();
            let val = self.input(&ty, &info, &name, &mut inputs, &mut deferred)?;
            names.resize(inputs.len(), name);
            self.env.insert(param, val);
        }
        for (dim, size) in deferred {
            let want = self.core_size(&size)?;
            let code = self.error_site(RuntimeCheck::InputSize, None);
            self.step(Step::Check {
                cond: Expr::bin(HOp::Eq, Expr::Var(dim), want.clone()),
                error: code,
                payload: vec![Expr::Var(dim), want],
            });
        }
        Ok((inputs, names))
    }

    fn input(
        &mut self,
        ty: &Type,
        info: &MemInfo,
        name: &str,
        inputs: &mut Vec<Input>,
        deferred: &mut Vec<(Var, CoreSize)>,
    ) -> Res<HVal> {
        let f = self.f;
        Ok(match (ty, info) {
            (Type::Scalar(s), _) => {
                let var = self.new_var(name);
                inputs.push(Input::Scalar { var, elem: *s });
                HVal::Scalar(HScalar::Host(Expr::Var(var), *s))
            }
            (Type::Tuple(parts), MemInfo::Tuple(infos)) => {
                let mut vals = Vec::new();
                for (p, i) in parts.iter().zip(infos) {
                    vals.push(self.input(p, i, name, inputs, deferred)?);
                }
                HVal::Tuple(vals)
            }
            (Type::Tuple(parts), _) => {
                let mut vals = Vec::new();
                for p in parts {
                    vals.push(self.input(p, &MemInfo::Scalar, name, inputs, deferred)?);
                }
                HVal::Tuple(vals)
            }
            (Type::Array { .. }, MemInfo::Array(array)) => {
                let elem = self.mem.blocks[array.block].elem;
                let mut dims = Vec::new();
                let mut t = ty;
                let mut static_len = Some(1i64);
                while let Type::Array { size, elem: inner } = t {
                    static_len = static_len
                        .zip(size.as_constant())
                        .and_then(|(a, b)| a.checked_mul(b.max(0)));
                    let var = match size.as_var() {
                        Some(sv) if f.size_params.contains(sv) => match self.env.get(sv) {
                            Some(HVal::Scalar(HScalar::Host(Expr::Var(v), _))) => *v,
                            _ => {
                                let v = self.new_var(f.vars[*sv].name.as_str());
                                self.env.insert(
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
                                &size.display(&|sv| f.vars[*sv].name.to_string()).to_string(),
                            );
                            deferred.push((v, size.clone()));
                            v
                        }
                    };
                    dims.push(var);
                    t = inner;
                }
                let buf = self.new_var(name);
                if let Some(len) = static_len {
                    self.static_lens.insert(buf, len);
                }
                self.blocks.insert(array.block, buf);
                inputs.push(Input::Array { buf, elem, dims: dims.clone() });
                let shape: Vec<Expr> = dims.into_iter().map(Expr::Var).collect();
                let strides = row_major(&shape);
                HVal::Arr(HArr {
                    buf,
                    elem,
                    layout: Layout { offset: Expr::I64(0), strides, shape },
                })
            }
            (Type::Array { .. }, _) => {
                return Err(LowerError::unsupported(
                    "entry parameters that are arrays of tuples",
                    None,
                ));
            }
        })
    }

    /// The entry's result as the memory IR wants it: where its result memory is a copy
    /// (an array not dense and row-major at offset 0), the copy.
    fn result_copy(&mut self, result: HVal) -> Res<HVal> {
        let info = self.mem.result.clone();
        self.copy_to_result(result, &info)
    }

    fn copy_to_result(&mut self, value: HVal, info: &MemInfo) -> Res<HVal> {
        match (value, info) {
            (HVal::Tuple(parts), MemInfo::Tuple(infos)) if parts.len() == infos.len() => {
                let mut out = Vec::new();
                for (p, i) in parts.into_iter().zip(infos) {
                    out.push(self.copy_to_result(p, i)?);
                }
                Ok(HVal::Tuple(out))
            }
            (HVal::Arr(arr), MemInfo::Array(dest))
                if matches!(
                    self.mem.blocks[dest.block].binding,
                    weft_mem::BlockBinding::ResultAlloc { .. }
                ) =>
            {
                let len = self.mem_size(&dest.lmad.n_elements())?;
                let buf = self.alloc_buffer("result", arr.elem, len);
                self.blocks.insert(dest.block, buf);
                let out = self.array_of(dest)?;
                self.copy_array(&arr, &out, "result_copy")?;
                Ok(HVal::Arr(out))
            }
            (value, _) => Ok(value),
        }
    }

    fn outputs(&mut self, v: &HVal, out: &mut Vec<Output>) -> Res<()> {
        match v {
            HVal::Tuple(parts) => {
                for p in parts {
                    self.outputs(p, out)?;
                }
            }
            HVal::Scalar(HScalar::Host(e, elem)) => {
                out.push(Output::Host { value: e.clone(), elem: *elem });
            }
            HVal::Scalar(HScalar::Device(buf, elem)) => out.push(Output::Array {
                buf: *buf,
                elem: *elem,
                offset: Expr::I64(0),
                strides: Vec::new(),
                shape: Vec::new(),
            }),
            HVal::Arr(a) => out.push(Output::Array {
                buf: a.buf,
                elem: a.elem,
                offset: a.layout.offset.clone(),
                strides: a.layout.strides.clone(),
                shape: a.layout.shape.clone(),
            }),
        }
        Ok(())
    }
}

/// The type of a value shape (an array leaf of a tuple of arrays).
fn shape_type(shape: &weft_mem::ValueShape) -> Type {
    match shape {
        weft_mem::ValueShape::Scalar(s) => Type::Scalar(*s),
        weft_mem::ValueShape::Array(dims, elem) => {
            dims.iter().rev().fold(Type::Scalar(*elem), |inner, size| Type::Array {
                size: size.clone(),
                elem: Box::new(inner),
            })
        }
        weft_mem::ValueShape::Tuple(items) => Type::Tuple(items.iter().map(shape_type).collect()),
    }
}

/// Row-major strides of a shape (an entry's inputs are dense and row-major).
fn row_major(shape: &[Expr]) -> Vec<Expr> {
    let mut strides = vec![Expr::I64(1); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = emul(strides[d + 1].clone(), shape[d + 1].clone());
    }
    strides
}

// ---- host expressions, folded ----

pub(crate) fn eadd(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) => Expr::I64(x.wrapping_add(*y)),
        (Expr::I64(0), _) => b,
        (_, Expr::I64(0)) => a,
        _ => Expr::bin(HOp::Add, a, b),
    }
}

pub(crate) fn esub(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) => Expr::I64(x.wrapping_sub(*y)),
        (_, Expr::I64(0)) => a,
        _ if a == b => Expr::I64(0),
        _ => Expr::bin(HOp::Sub, a, b),
    }
}

pub(crate) fn emul(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) => Expr::I64(x.wrapping_mul(*y)),
        (Expr::I64(1), _) => b,
        (_, Expr::I64(1)) => a,
        (Expr::I64(0), _) | (_, Expr::I64(0)) => Expr::I64(0),
        _ => Expr::bin(HOp::Mul, a, b),
    }
}

pub(crate) fn ediv(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) if *y != 0 => Expr::I64(x.wrapping_div(*y)),
        (_, Expr::I64(1)) => a,
        _ => Expr::bin(HOp::Div, a, b),
    }
}

/// `ceil(a / b)` for positive `b`.
pub(crate) fn eceil_div(a: Expr, b: Expr) -> Expr {
    ediv(eadd(a, esub(b.clone(), Expr::I64(1))), b)
}

pub(crate) fn emax(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) => Expr::I64(*x.max(y)),
        _ => Expr::bin(HOp::Max, a, b),
    }
}

pub(crate) fn emin(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::I64(x), Expr::I64(y)) => Expr::I64(*x.min(y)),
        _ => Expr::bin(HOp::Min, a, b),
    }
}

/// Index arithmetic of host and kernel expressions, for the rules both apply (a
/// slice's bounds).
pub(crate) trait IndexOps: Clone + PartialEq {
    fn int(v: i64) -> Self;
    fn as_int(&self) -> Option<i64>;
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
    fn cmp(op: Cmp, a: Self, b: Self) -> Self;
    fn and(a: Self, b: Self) -> Self;
    fn select(c: Self, a: Self, b: Self) -> Self;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
}

impl IndexOps for Expr {
    fn int(v: i64) -> Self {
        Expr::I64(v)
    }
    fn as_int(&self) -> Option<i64> {
        match self {
            Expr::I64(v) => Some(*v),
            _ => None,
        }
    }
    fn add(a: Self, b: Self) -> Self {
        eadd(a, b)
    }
    fn sub(a: Self, b: Self) -> Self {
        esub(a, b)
    }
    fn div(a: Self, b: Self) -> Self {
        ediv(a, b)
    }
    fn neg(a: Self) -> Self {
        esub(Expr::I64(0), a)
    }
    fn cmp(op: Cmp, a: Self, b: Self) -> Self {
        let op = match op {
            Cmp::Lt => HOp::Lt,
            Cmp::Le => HOp::Le,
            Cmp::Gt => HOp::Gt,
            Cmp::Ge => HOp::Ge,
            Cmp::Ne => HOp::Ne,
        };
        Expr::bin(op, a, b)
    }
    fn and(a: Self, b: Self) -> Self {
        Expr::bin(HOp::And, a, b)
    }
    fn select(c: Self, a: Self, b: Self) -> Self {
        if a == b {
            return a;
        }
        Expr::Select(Box::new(c), Box::new(a), Box::new(b))
    }
}

impl IndexOps for crate::imp::CExpr {
    fn int(v: i64) -> Self {
        crate::imp::CExpr::Int(v)
    }
    fn as_int(&self) -> Option<i64> {
        crate::imp::CExpr::as_int(self)
    }
    fn add(a: Self, b: Self) -> Self {
        crate::imp::CExpr::add(a, b)
    }
    fn sub(a: Self, b: Self) -> Self {
        crate::imp::CExpr::sub(a, b)
    }
    fn div(a: Self, b: Self) -> Self {
        crate::imp::CExpr::bin(crate::imp::COp::Div, a, b)
    }
    fn neg(a: Self) -> Self {
        crate::imp::CExpr::neg(a)
    }
    fn cmp(op: Cmp, a: Self, b: Self) -> Self {
        use crate::imp::COp;
        let op = match op {
            Cmp::Lt => COp::Lt,
            Cmp::Le => COp::Le,
            Cmp::Gt => COp::Gt,
            Cmp::Ge => COp::Ge,
            Cmp::Ne => COp::Ne,
        };
        crate::imp::CExpr::bin(op, a, b)
    }
    fn and(a: Self, b: Self) -> Self {
        crate::imp::CExpr::bin(crate::imp::COp::And, a, b)
    }
    fn select(c: Self, a: Self, b: Self) -> Self {
        crate::imp::CExpr::select(c, a, b)
    }
}

/// A slice `start:end:stride` of a dimension of `n` (the interpreter's rules): its first
/// index, the condition its bounds must meet, and its length (as expressions of `start`
/// and `end`, which the caller binds first).
pub(crate) struct SliceBounds<E> {
    pub(crate) start: E,
    pub(crate) end: E,
}

impl<E: IndexOps> SliceBounds<E> {
    /// The start and end, defaults filled in by the stride's sign.
    pub(crate) fn new(n: &E, start: Option<E>, end: Option<E>, stride: &E) -> Self {
        let positive = E::cmp(Cmp::Gt, stride.clone(), E::int(0));
        let sign = stride.as_int().map(|s| s > 0);
        let last = E::sub(n.clone(), E::int(1));
        let start_default = match sign {
            Some(true) => E::int(0),
            Some(false) => last,
            None => E::select(positive.clone(), E::int(0), last),
        };
        let end_default = match sign {
            Some(true) => n.clone(),
            Some(false) => E::int(-1),
            None => E::select(positive, n.clone(), E::int(-1)),
        };
        SliceBounds { start: start.unwrap_or(start_default), end: end.unwrap_or(end_default) }
    }

    /// Whether the bounds are valid for a dimension of `n`.
    pub(crate) fn valid(&self, n: &E, stride: &E) -> E {
        let (s, e) = (self.start.clone(), self.end.clone());
        let forward = E::and(
            E::and(E::cmp(Cmp::Le, E::int(0), s.clone()), E::cmp(Cmp::Le, e.clone(), n.clone())),
            E::cmp(Cmp::Le, s.clone(), e.clone()),
        );
        let backward = E::and(
            E::and(E::cmp(Cmp::Lt, s.clone(), n.clone()), E::cmp(Cmp::Ge, e.clone(), E::int(-1))),
            E::cmp(Cmp::Ge, s, e),
        );
        match stride.as_int().map(|s| s > 0) {
            Some(true) => forward,
            Some(false) => backward,
            None => E::select(
                E::cmp(Cmp::Gt, stride.clone(), E::int(0)),
                forward,
                E::and(E::cmp(Cmp::Ne, stride.clone(), E::int(0)), backward),
            ),
        }
    }

    /// The number of indices: `ceil(|end - start| / |stride|)`.
    pub(crate) fn len(&self, stride: &E) -> E {
        let (s, e) = (self.start.clone(), self.end.clone());
        let forward = E::div(
            E::add(E::sub(e.clone(), s.clone()), E::sub(stride.clone(), E::int(1))),
            stride.clone(),
        );
        let neg = E::neg(stride.clone());
        let backward = E::div(E::add(E::sub(s, e), E::sub(neg.clone(), E::int(1))), neg);
        match stride.as_int().map(|s| s > 0) {
            Some(true) => forward,
            Some(false) => backward,
            None => E::select(
                E::cmp(Cmp::Gt, stride.clone(), E::int(0)),
                forward,
                E::select(E::cmp(Cmp::Ne, stride.clone(), E::int(0)), backward, E::int(0)),
            ),
        }
    }
}
