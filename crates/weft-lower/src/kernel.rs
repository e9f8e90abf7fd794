//! The kernel builder: emits the imperative IR for core IR code running inside one
//! work-item (DPIA's translation of sequential and per-thread code), with host values
//! imported as kernel parameters on demand.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{
    Atom, BinOp, BlockId, CoreSize, Exp, ExpId, FnId, IndexItem, LoopForm, Origin, Program, Type,
    VarId,
};
use weft_plan::{Arg, Elem, ErrorSite, Expr, ParamKind, Var};
use weft_values::RuntimeCheck;

use crate::LowerError;
use crate::arr::{Mem, View};
use crate::imp::{CExpr, COp, Cmd, KernelImp, Sharing};
use crate::scalar::{convert, literal, math, round_f16, unop};
use crate::val::{HArr, HEnv, HScalar, HVal, KArr, KVal, PullFn, PullSrc, Res, RowFn};

/// State shared by the host lowering and every kernel builder of one entry.
pub(crate) struct Shared {
    pub(crate) errors: Vec<ErrorSite>,
    /// Names of host variables, for readable kernel parameters.
    pub(crate) var_names: FxHashMap<Var, String>,
    pub(crate) checks: bool,
    /// Element counts of the entry's array inputs whose sizes are constants in their
    /// types (candidates for `constant` memory).
    pub(crate) static_lens: FxHashMap<Var, i64>,
    /// Functions generated from user defs (`func.rs`), shared by the entry's kernels.
    pub(crate) functions: Vec<crate::imp::FuncImp>,
    /// Which function serves a def called with arguments of one shape (`None`: the
    /// def could not be a function and is inlined).
    pub(crate) fn_index: FxHashMap<(FnId, String), Option<u32>>,
    /// The last call-site number handed out.
    pub(crate) next_site: u32,
    /// Where each call site is in the source (`file:line`), for explanations.
    pub(crate) site_positions: FxHashMap<u32, String>,
    /// weft-core's update decisions per function (`update_plan`), computed on use.
    pub(crate) update_plans: FxHashMap<FnId, Rc<weft_core::UpdatePlan>>,
}

impl Shared {
    /// weft-core's decisions for the updates of `f`: which write in place.
    pub(crate) fn update_plan(&mut self, program: &Program, f: FnId) -> Rc<weft_core::UpdatePlan> {
        self.update_plans
            .entry(f)
            .or_insert_with(|| Rc::new(weft_core::update_plan(&program.functions[f])))
            .clone()
    }
}

/// A kernel-level environment: the variables bound in the kernel, then (for code that
/// came from the host level) the host environment whose values are imported on use.
#[derive(Clone, Default)]
pub(crate) struct KEnv {
    pub(crate) vars: FxHashMap<VarId, KVal>,
    pub(crate) host: Option<Rc<HEnv>>,
}

pub(crate) struct Kb<'p> {
    pub(crate) program: &'p Program,
    pub(crate) position: &'p dyn Fn(&Origin) -> Option<String>,
    pub(crate) shared: Rc<RefCell<Shared>>,
    pub(crate) params: Vec<(String, ParamKind)>,
    param_notes: Vec<(String, String)>,
    buffer_lens: Vec<(String, i64)>,
    /// The source expression each allocated array materialises.
    pub(crate) ptr_origins: Vec<(String, Origin)>,
    pub(crate) args: Vec<Arg>,
    buffers: FxHashMap<Var, Rc<str>>,
    scalars: Vec<(Expr, Elem, CExpr)>,
    cmds: Vec<Vec<Cmd>>,
    fresh: u32,
    /// Whether a failing work-item may return at once (no barriers in the kernel).
    pub(crate) can_return: bool,
    /// Source expressions this kernel computes, with how.
    origins: Vec<(Origin, String)>,
    /// The source expression being translated (the innermost core expression with an
    /// origin): what the commands emitted now compute.
    at: Option<Origin>,
    /// The source expression each variable (private scalar, loop index, vector lane)
    /// was introduced for, in order; `named` holds the names recorded.
    var_origins: Vec<(String, Origin)>,
    named: FxHashSet<Rc<str>>,
    /// Inside the body of a `map@group`: code runs on every work-item of the group
    /// alike, and `@thread`/`@group` combinators cooperate (`group.rs`).
    pub(crate) in_group: bool,
    /// The work-group size of cooperative code.
    pub(crate) work_group: i64,
    /// Set while generating a function from a user def: its result type (a failed
    /// check returns a zero of it instead of ending the work-item).
    pub(crate) fn_ret: Option<Elem>,
    /// Buffers holding every work-item's copy of an array (memory expansion), which
    /// the launch allocates once it knows how many work-items there are.
    pub(crate) expansions: Vec<Expansion>,
}

/// What [`Kb::finish_function`] returns.
pub(crate) struct FunctionBody {
    pub(crate) body: Vec<Cmd>,
    pub(crate) var_origins: Vec<(String, Origin)>,
}

/// A kernel buffer that `Builder::launch` allocates: `per_item` elements for each
/// work-item of the launch, passed as argument `arg`.
pub(crate) struct Expansion {
    pub(crate) arg: usize,
    pub(crate) elem: Elem,
    pub(crate) per_item: Expr,
}

/// Whether every leaf of an array is memory (no pull array).
fn is_memory(a: &KArr) -> bool {
    match a {
        KArr::Mem(_) => true,
        KArr::Zip(parts) => parts.iter().all(is_memory),
        KArr::Pull { .. } => false,
    }
}

/// Whether two arrays are the same memory with the same layout.
fn same_memory(a: &KArr, b: &KArr) -> bool {
    match (a, b) {
        (KArr::Mem(x), KArr::Mem(y)) => x == y,
        (KArr::Zip(xs), KArr::Zip(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_memory(x, y))
        }
        _ => false,
    }
}

/// The scalar leaves of a full-depth element type, in order.
pub(crate) fn leaves(ty: &Type) -> Res<Vec<Elem>> {
    match ty {
        Type::Scalar(s) => Ok(vec![*s]),
        Type::Tuple(parts) => {
            let mut out = Vec::new();
            for part in parts {
                out.extend(leaves(part)?);
            }
            Ok(out)
        }
        Type::Array { .. } => {
            Err(LowerError::unsupported("arrays of tuples that contain arrays", None))
        }
    }
}

/// The element type at full depth and the rank of an array type.
pub(crate) fn elem_and_rank(ty: &Type) -> (Type, usize) {
    match ty {
        Type::Array { elem, .. } => {
            let (e, r) = elem_and_rank(elem);
            (e, r + 1)
        }
        other => (other.clone(), 0),
    }
}

pub(crate) fn sanitize(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    out
}

impl<'p> Kb<'p> {
    pub(crate) fn new(
        program: &'p Program,
        position: &'p dyn Fn(&Origin) -> Option<String>,
        shared: Rc<RefCell<Shared>>,
    ) -> Kb<'p> {
        Kb {
            program,
            position,
            shared,
            params: Vec::new(),
            param_notes: Vec::new(),
            buffer_lens: Vec::new(),
            ptr_origins: Vec::new(),
            args: Vec::new(),
            buffers: FxHashMap::default(),
            scalars: Vec::new(),
            cmds: vec![Vec::new()],
            fresh: 0,
            can_return: true,
            origins: Vec::new(),
            at: None,
            var_origins: Vec::new(),
            named: FxHashSet::default(),
            in_group: false,
            work_group: 256,
            fn_ret: None,
            expansions: Vec::new(),
        }
    }

    pub(crate) fn finish(
        mut self,
        name: String,
        doc: String,
        local_size: Option<u32>,
    ) -> (KernelImp, Vec<Arg>) {
        let mut body = self.cmds.pop().unwrap_or_default();
        crate::proven::drop_proven_bounds_checks(&mut body);
        (
            KernelImp {
                name,
                params: self.params,
                param_notes: self.param_notes,
                buffer_lens: self.buffer_lens,
                ptr_origins: self.ptr_origins,
                body,
                local_size,
                doc,
                origins: self.origins,
                var_origins: self.var_origins,
            },
            self.args,
        )
    }

    /// The body of a function generated from a user def, and its variables' origins
    /// (the caller checks that it asked for no kernel parameter).
    pub(crate) fn finish_function(mut self) -> FunctionBody {
        let mut body = self.cmds.pop().unwrap_or_default();
        crate::proven::drop_proven_bounds_checks(&mut body);
        FunctionBody { body, var_origins: self.var_origins }
    }

    // ---- emission helpers ----

    /// Sets the source expression the commands emitted from now on compute.
    pub(crate) fn computing(&mut self, origin: Option<Origin>) {
        self.at = origin;
    }

    /// Records that this kernel computes the source expression `origin`, and how; a
    /// kernel built outside any expression (a materialisation after its statement) then
    /// computes it.
    pub(crate) fn note(&mut self, origin: &Origin, role: &str) {
        if self.at.is_none() {
            self.at = Some(origin.clone());
        }
        if !self.origins.iter().any(|(o, _)| o == origin) {
            self.origins.push((origin.clone(), role.to_owned()));
        }
    }

    pub(crate) fn emit(&mut self, cmd: Cmd) {
        if let Some(at) = self.at.clone() {
            self.record_names(&cmd, &at);
        }
        if let Some(top) = self.cmds.last_mut() {
            top.push(cmd);
        }
    }

    fn record_names(&mut self, cmd: &Cmd, at: &Origin) {
        crate::imp::record_var_origins(cmd, at, &mut self.named, &mut self.var_origins);
    }

    pub(crate) fn push(&mut self) {
        self.cmds.push(Vec::new());
    }

    pub(crate) fn pop(&mut self) -> Vec<Cmd> {
        self.cmds.pop().unwrap_or_default()
    }

    pub(crate) fn fresh_name(&mut self, hint: &str) -> Rc<str> {
        self.fresh += 1;
        Rc::from(format!("{}_{}", sanitize(hint), self.fresh))
    }

    /// Binds a value to a fresh private variable unless it is trivial.
    pub(crate) fn tmp(&mut self, hint: &str, elem: Elem, value: CExpr) -> CExpr {
        if value.is_trivial() {
            return value;
        }
        let name = self.fresh_name(hint);
        self.emit(Cmd::Decl { name: name.clone(), elem, init: Some(value) });
        CExpr::Var(name)
    }

    /// A declared, uninitialised private variable.
    pub(crate) fn decl(&mut self, hint: &str, elem: Elem, init: Option<CExpr>) -> CExpr {
        let name = self.fresh_name(hint);
        self.emit(Cmd::Decl { name: name.clone(), elem, init });
        CExpr::Var(name)
    }

    /// Registers a run-time error and returns its code.
    pub(crate) fn error_site(&mut self, check: RuntimeCheck<'_>, origin: Option<&Origin>) -> u32 {
        let position = origin.and_then(|o| (self.position)(o));
        let mut shared = self.shared.borrow_mut();
        shared.errors.push(ErrorSite { message: check.template(), position });
        shared.errors.len() as u32
    }

    pub(crate) fn checks(&self) -> bool {
        self.shared.borrow().checks
    }

    /// Fails with `code` unless `ok`; a work-item that may return does so.
    pub(crate) fn check(&mut self, ok: CExpr, code: u32, a: CExpr, b: CExpr) {
        if ok.as_int().is_some_and(|v| v != 0) {
            // Holds whatever the inputs: nothing to check.
            return;
        }
        let mut then_cmds = vec![Cmd::Fail { code, a, b }];
        if let Some(ret) = self.fn_ret {
            then_cmds.push(Cmd::Return(CExpr::cast(ret, CExpr::Int(0))));
        } else if self.can_return {
            then_cmds.push(Cmd::Exit);
        }
        self.emit(Cmd::If { cond: CExpr::not(ok), then_cmds, else_cmds: Vec::new() });
    }

    /// Fails when `n`, the size given to `iota` or `replicate`, is negative (the
    /// interpreter's error); unchecked, a negative size made wrong results.
    fn check_count(&mut self, n: &CExpr, what: &str, origin: Option<&Origin>) {
        if self.checks() {
            let code = self.error_site(RuntimeCheck::NegativeSize { what }, origin);
            let ok = CExpr::bin(COp::Ge, n.clone(), CExpr::Int(0));
            self.check(ok, code, n.clone(), CExpr::Int(0));
        }
    }

    // ---- parameters ----

    pub(crate) fn buffer_param(&mut self, buf: Var, elem: Elem) -> Rc<str> {
        if let Some(name) = self.buffers.get(&buf) {
            return name.clone();
        }
        let hint =
            self.shared.borrow().var_names.get(&buf).cloned().unwrap_or_else(|| "buf".to_owned());
        let name = self.fresh_name(&hint);
        self.params.push((name.to_string(), ParamKind::Buffer(elem)));
        let what = if hint.is_empty() {
            "a buffer the host allocates, passed to the kernel".to_owned()
        } else {
            format!("a buffer the host allocates for `{hint}`, passed to the kernel")
        };
        self.param_notes.push((name.to_string(), what));
        if let Some(len) = self.shared.borrow().static_lens.get(&buf) {
            self.buffer_lens.push((name.to_string(), *len));
        }
        self.args.push(Arg::Buffer(buf));
        self.buffers.insert(buf, name.clone());
        name
    }

    /// A global buffer with `per_item` elements for every work-item of the launch,
    /// which the launch allocates (memory expansion, as Futhark does for arrays a
    /// thread needs whose size is known only at run time).
    fn expanded_param(&mut self, elem: Elem, per_item: Expr) -> Rc<str> {
        let name = self.fresh_name("expanded");
        self.params.push((name.to_string(), ParamKind::Buffer(elem)));
        self.param_notes.push((
            name.to_string(),
            "every work-item's copy of an array-valued `if`, loop or reduction, allocated at launch (memory expansion)".to_owned(),
        ));
        self.expansions.push(Expansion { arg: self.args.len(), elem, per_item });
        // Replaced by the buffer when the launch allocates it.
        self.args.push(Arg::Scalar { value: Expr::I64(0), elem: Elem::I64 });
        name
    }

    /// A work-group array sized at launch (a `__local` kernel argument); `why` says
    /// what it holds, for address-space explanations.
    pub(crate) fn local_param(&mut self, hint: &str, elem: Elem, len: Expr, why: &str) -> Rc<str> {
        let name = self.fresh_name(hint);
        self.params.push((name.to_string(), ParamKind::Local(elem)));
        self.param_notes.push((name.to_string(), why.to_owned()));
        self.args.push(Arg::Local { elem, len });
        name
    }

    pub(crate) fn import_expr(&mut self, e: &Expr, elem: Elem) -> CExpr {
        match e {
            Expr::I64(v) if elem == Elem::I64 => return CExpr::Int(*v),
            Expr::Bool(b) => return CExpr::lit(if *b { "1" } else { "0" }),
            Expr::Lit { elem: e, bits } if *e == elem => return literal(weft_plan::lit(*e, *bits)),
            _ => {}
        }
        if let Some((_, _, c)) = self.scalars.iter().find(|(x, el, _)| x == e && *el == elem) {
            return c.clone();
        }
        let hint = match e {
            Expr::Var(v) => {
                self.shared.borrow().var_names.get(v).cloned().unwrap_or_else(|| "s".to_owned())
            }
            _ => "s".to_owned(),
        };
        let name = self.fresh_name(&hint);
        self.params.push((name.to_string(), ParamKind::Scalar(elem)));
        self.args.push(Arg::Scalar { value: e.clone(), elem });
        let c = CExpr::Var(name);
        self.scalars.push((e.clone(), elem, c.clone()));
        c
    }

    pub(crate) fn import_index(&mut self, e: &Expr) -> CExpr {
        self.import_expr(e, Elem::I64)
    }

    pub(crate) fn import_val(&mut self, v: &HVal) -> Res<KVal> {
        Ok(match v {
            HVal::Scalar(HScalar::Host(e, elem)) => KVal::Scalar(self.import_expr(e, *elem), *elem),
            HVal::Scalar(HScalar::Device(buf, elem)) => {
                let ptr = self.buffer_param(*buf, *elem);
                KVal::Scalar(CExpr::load(&ptr, CExpr::Int(0)), *elem)
            }
            HVal::Arr(a) => KVal::Arr(self.import_arr(a)?),
            HVal::Tuple(parts) => {
                KVal::Tuple(parts.iter().map(|p| self.import_val(p)).collect::<Res<_>>()?)
            }
        })
    }

    pub(crate) fn import_arr(&mut self, a: &HArr) -> Res<KArr> {
        Ok(match a {
            HArr::Mem(m) => {
                let buf = self.buffer_param(m.buf, m.elem);
                KArr::Mem(Mem {
                    buf,
                    elem: m.elem,
                    offset: self.import_index(&m.offset),
                    strides: m.strides.iter().map(|s| self.import_index(s)).collect(),
                    shape: m.shape.iter().map(|s| self.import_index(s)).collect(),
                })
            }
            HArr::Zip(parts) => {
                KArr::Zip(parts.iter().map(|p| self.import_arr(p)).collect::<Res<_>>()?)
            }
            HArr::Pull(p) => {
                if let Some(o) = &p.origin {
                    self.note(o, "fused into this kernel (a pull array: no memory)");
                }
                let shape: Vec<CExpr> = p.base_shape.iter().map(|s| self.import_index(s)).collect();
                let mut arr = self.import_pull(&p.src, shape)?;
                for view in &p.views {
                    let view = self.import_view(view);
                    arr = self.view(&arr, &view);
                }
                arr
            }
        })
    }

    fn import_view(&mut self, v: &View<Expr>) -> View<CExpr> {
        match v {
            View::Fix { dim, index } => View::Fix { dim: *dim, index: self.import_index(index) },
            View::Slice { dim, start, len, stride } => View::Slice {
                dim: *dim,
                start: self.import_index(start),
                len: self.import_index(len),
                stride: self.import_index(stride),
            },
            View::Transpose => View::Transpose,
            View::Unflatten { rows, cols } => {
                View::Unflatten { rows: self.import_index(rows), cols: self.import_index(cols) }
            }
            View::Flatten => View::Flatten,
        }
    }

    fn import_pull(&mut self, src: &PullSrc, shape: Vec<CExpr>) -> Res<KArr> {
        let f: PullFn = match src {
            PullSrc::Map { func, lambda, env, arrays, .. } => {
                let arrays: Vec<KArr> =
                    arrays.iter().map(|a| self.import_arr(a)).collect::<Res<_>>()?;
                let env = KEnv { vars: FxHashMap::default(), host: Some(env.clone()) };
                return Ok(map_array(*func, lambda.clone(), env, arrays, shape));
            }
            PullSrc::Generate { func, lambda, env } => {
                let env = KEnv { vars: FxHashMap::default(), host: Some(env.clone()) };
                let indices = vec![iota(shape[0].clone(), Elem::I64)];
                return Ok(map_array(*func, lambda.clone(), env, indices, shape));
            }
            PullSrc::Iota(elem) => return Ok(iota(shape[0].clone(), *elem)),
            PullSrc::Replicate(value) => {
                let value = self.import_val(value)?;
                Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| kb.index_val(&value, &idx[1..]))
            }
            PullSrc::Lit(elems) => {
                let elems: Vec<KVal> =
                    elems.iter().map(|e| self.import_val(e)).collect::<Res<_>>()?;
                literal_pull(elems)
            }
            PullSrc::Concat(a, b) => {
                let a = self.import_arr(a)?;
                let b = self.import_arr(b)?;
                return Ok(concat(a, b));
            }
        };
        Ok(KArr::Pull { shape, f, row: None })
    }

    // ---- arrays ----

    /// A view of a kernel array; memory layouts that cannot express it read through a
    /// pull array instead (no copy either way).
    pub(crate) fn view(&mut self, arr: &KArr, view: &View<CExpr>) -> KArr {
        if let Some(v) = arr.view(view) {
            return v;
        }
        let pulled = mem_as_pull(arr);
        pulled.view(view).unwrap_or(pulled)
    }

    /// The element (or sub-array) at an index prefix.
    pub(crate) fn index(&mut self, arr: &KArr, idx: &[CExpr]) -> Res<KVal> {
        let rank = arr.shape().len();
        if idx.len() < rank {
            if let (KArr::Pull { row: Some(row), .. }, Some((outer, rest))) =
                (arr, idx.split_first())
            {
                let row = row.clone();
                let value = row(self, outer)?;
                return self.index_val(&value, rest);
            }
            let mut a = arr.clone();
            for i in idx {
                a = self.view(&a, &View::Fix { dim: 0, index: i.clone() });
            }
            return Ok(KVal::Arr(a));
        }
        match arr {
            KArr::Mem(m) => {
                let addr = m.address(idx);
                Ok(KVal::Scalar(CExpr::load(&m.buf, addr), m.elem))
            }
            KArr::Zip(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.index(p, idx)).collect::<Res<_>>()?))
            }
            KArr::Pull { f, .. } => {
                let f = f.clone();
                f(self, idx)
            }
        }
    }

    pub(crate) fn index_val(&mut self, v: &KVal, idx: &[CExpr]) -> Res<KVal> {
        if idx.is_empty() {
            return Ok(v.clone());
        }
        match v {
            KVal::Arr(a) => self.index(a, idx),
            KVal::Tuple(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.index_val(p, idx)).collect::<Res<_>>()?))
            }
            KVal::Scalar(..) => Err(LowerError::internal("indexing a scalar")),
        }
    }

    /// Stores `value` (a scalar, tuple or array) at `dest[prefix..]`.
    pub(crate) fn write(&mut self, dest: &KArr, prefix: &[CExpr], value: &KVal) -> Res<()> {
        match value {
            KVal::Scalar(v, _) => match dest {
                KArr::Mem(m) => {
                    let addr = m.address(prefix);
                    let v = if m.elem == Elem::Bool {
                        CExpr::cast(Elem::Bool, v.clone())
                    } else {
                        v.clone()
                    };
                    self.emit(Cmd::Store { ptr: m.buf.clone(), index: addr, value: v });
                    Ok(())
                }
                _ => Err(LowerError::internal("scalar stored into a non-memory array")),
            },
            KVal::Tuple(parts) => match dest {
                KArr::Zip(dests) if dests.len() == parts.len() => {
                    for (d, p) in dests.iter().zip(parts) {
                        self.write(d, prefix, p)?;
                    }
                    Ok(())
                }
                _ => Err(LowerError::internal("tuple stored into a non-zip array")),
            },
            KVal::Arr(src) => {
                let shape = src.shape();
                let Some(n) = shape.first().cloned() else {
                    return Err(LowerError::internal("rank-0 array"));
                };
                let i = self.fresh_name("i");
                self.push();
                let elem = self.index(src, &[CExpr::Var(i.clone())])?;
                let mut prefix2 = prefix.to_vec();
                prefix2.push(CExpr::Var(i.clone()));
                self.write(dest, &prefix2, &elem)?;
                let body = self.pop();
                self.emit(Cmd::For { var: i, bound: n, body, comment: None });
                Ok(())
            }
        }
    }

    /// Runs one of two computations into fresh variables (an `if` whose branches both
    /// produce scalars).
    pub(crate) fn branch(
        &mut self,
        cond: CExpr,
        then_f: &mut dyn FnMut(&mut Kb<'_>) -> Res<KVal>,
        else_f: &mut dyn FnMut(&mut Kb<'_>) -> Res<KVal>,
    ) -> Res<KVal> {
        self.push();
        let t = then_f(self)?;
        let then_cmds = self.pop();
        self.push();
        let e = else_f(self)?;
        let else_cmds = self.pop();
        let result = self.declare_like(&t)?;
        self.cmds.push(then_cmds);
        self.assign(&result, &t)?;
        let then_cmds = self.pop();
        self.cmds.push(else_cmds);
        self.assign(&result, &e)?;
        let else_cmds = self.pop();
        self.emit(Cmd::If { cond, then_cmds, else_cmds });
        Ok(result)
    }

    /// Fresh variables shaped like a scalar or tuple value.
    pub(crate) fn declare_like(&mut self, v: &KVal) -> Res<KVal> {
        Ok(match v {
            KVal::Scalar(_, elem) => KVal::Scalar(self.decl("r", *elem, None), *elem),
            KVal::Tuple(parts) => {
                KVal::Tuple(parts.iter().map(|p| self.declare_like(p)).collect::<Res<_>>()?)
            }
            KVal::Arr(a) => KVal::Arr(self.storage(a)?),
        })
    }

    /// The element types of an array's leaves (a pull array is indexed once, in a
    /// scope that is thrown away, to learn them).
    fn leaf_elems(&mut self, a: &KArr) -> Res<Vec<Elem>> {
        let zeros = vec![CExpr::Int(0); a.shape().len()];
        self.push();
        let v = self.index(a, &zeros);
        let _ = self.pop();
        let mut out = Vec::new();
        fn walk(v: &KVal, out: &mut Vec<Elem>) {
            match v {
                KVal::Scalar(_, e) => out.push(*e),
                KVal::Tuple(parts) => parts.iter().for_each(|p| walk(p, out)),
                KVal::Arr(_) => {}
            }
        }
        walk(&v?, &mut out);
        Ok(out)
    }

    /// The host expression a kernel expression stands for, when it is built from
    /// constants and scalar parameters.
    pub(crate) fn host_of(&self, e: &CExpr) -> Option<Expr> {
        use crate::arr::IExpr;
        match e {
            CExpr::Int(v) => Some(Expr::I64(*v)),
            CExpr::Var(_) => self
                .scalars
                .iter()
                .find(|(_, el, c)| c == e && *el == Elem::I64)
                .map(|(x, _, _)| x.clone()),
            CExpr::Bin(COp::Add, a, b) => Some(Expr::add(self.host_of(a)?, self.host_of(b)?)),
            CExpr::Bin(COp::Sub, a, b) => Some(Expr::sub(self.host_of(a)?, self.host_of(b)?)),
            CExpr::Bin(COp::Mul, a, b) => Some(Expr::mul(self.host_of(a)?, self.host_of(b)?)),
            CExpr::Bin(COp::Div, a, b) => Some(Expr::div(self.host_of(a)?, self.host_of(b)?)),
            _ => None,
        }
    }

    /// Memory for an array value that a loop carries or a branch yields: in a
    /// work-group's code, local memory sized at launch (the group shares it); else
    /// private arrays, when the size is a small constant.
    pub(crate) fn storage(&mut self, a: &KArr) -> Res<KArr> {
        let shape = a.shape();
        let elems = self.leaf_elems(a)?;
        let nesting = crate::val::Nesting::of_karr(a);
        let total: Option<i64> = shape.iter().map(CExpr::as_int).product();
        let mut parts = Vec::new();
        // In a work-group's code the array is shared by the group: local memory.
        match total {
            Some(len) if len <= 4096 && !self.in_group => {
                for elem in elems {
                    let name = self.fresh_name("arr");
                    self.emit(Cmd::Array {
                        name: name.clone(),
                        elem,
                        sharing: Sharing::WorkItem,
                        len: len.max(1),
                        why: Rc::from(
                            "one work-item's copy of an array-valued `if`, loop or reduction",
                        ),
                    });
                    parts.push(KArr::Mem(Mem::fresh(name, elem, shape.clone())));
                }
            }
            _ => {
                let len = shape.iter().map(|d| self.host_of(d)).collect::<Option<Vec<_>>>();
                let Some(len) = len else {
                    return Err(LowerError::unsupported(
                        "an array-valued `if`, loop or reduction inside a kernel whose size is not known at launch",
                        None,
                    ));
                };
                use crate::arr::IExpr;
                let len = len.into_iter().fold(Expr::I64(1), Expr::mul);
                if !self.in_group {
                    // Every work-item's copy in one global buffer, element `i` of
                    // work-item `w` at `i * items + w`: neighbouring work-items touch
                    // neighbouring elements (coalesced).
                    let dim = |f: &str, d: i64| CExpr::work_item(f, d);
                    let items = CExpr::mul(
                        CExpr::mul(dim("get_global_size", 0), dim("get_global_size", 1)),
                        dim("get_global_size", 2),
                    );
                    let item = CExpr::add(
                        dim("get_global_id", 0),
                        CExpr::mul(
                            dim("get_global_size", 0),
                            CExpr::add(
                                dim("get_global_id", 1),
                                CExpr::mul(dim("get_global_size", 1), dim("get_global_id", 2)),
                            ),
                        ),
                    );
                    let items = self.tmp("items", Elem::I64, items);
                    let item = self.tmp("item", Elem::I64, item);
                    let strides: Vec<CExpr> = crate::arr::row_major(&shape)
                        .into_iter()
                        .map(|s| CExpr::mul(s, items.clone()))
                        .collect();
                    for elem in elems {
                        let name = self.expanded_param(elem, len.clone());
                        parts.push(KArr::Mem(Mem {
                            buf: name,
                            elem,
                            offset: item.clone(),
                            strides: strides.clone(),
                            shape: shape.clone(),
                        }));
                    }
                    return nesting
                        .regroup(&mut parts.into_iter(), &KArr::Zip)
                        .ok_or_else(|| LowerError::internal("storage with no leaves"));
                }
                for elem in elems {
                    let name = self.local_param(
                        "arr",
                        elem,
                        len.clone(),
                        "the work-group's copy of an array-valued `if`, loop or reduction in a `map@group` body",
                    );
                    parts.push(KArr::Mem(Mem::fresh(name, elem, shape.clone())));
                }
            }
        }
        nesting
            .regroup(&mut parts.into_iter(), &KArr::Zip)
            .ok_or_else(|| LowerError::internal("storage with no leaves"))
    }

    /// Copies an array into memory: cooperatively (with a barrier) in a work-group's
    /// code, else by the work-item alone.
    pub(crate) fn copy_array(&mut self, dst: &KArr, src: &KArr) -> Res<()> {
        if self.in_group {
            let n = src.shape()[0].clone();
            let i = self.fresh_name("i");
            self.push();
            let v = self.index(src, &[CExpr::Var(i.clone())])?;
            self.write(dst, &[CExpr::Var(i.clone())], &v)?;
            let body = self.pop();
            self.emit(Cmd::ParFor {
                level: crate::imp::ParLevel::Thread,
                var: i,
                bound: n,
                body,
                comment: None,
            });
            self.emit(Cmd::Barrier);
            Ok(())
        } else {
            self.write(dst, &[], &KVal::Arr(src.clone()))
        }
    }

    /// Assigns `value` to variables from [`Kb::declare_like`], through temporaries so
    /// that a value reading the variables sees their old contents.
    pub(crate) fn assign(&mut self, vars: &KVal, value: &KVal) -> Res<()> {
        let staged = self.stage_for(vars, value)?;
        self.copy_into(vars, &staged)
    }

    /// [`Kb::stage`], except for arrays that are the variables' own memory already (a
    /// loop's array updated in place): they need no temporary and no copy.
    fn stage_for(&mut self, vars: &KVal, value: &KVal) -> Res<KVal> {
        match (vars, value) {
            (KVal::Arr(dst), KVal::Arr(src)) if same_memory(dst, src) => Ok(value.clone()),
            (KVal::Tuple(vs), KVal::Tuple(xs)) if vs.len() == xs.len() => Ok(KVal::Tuple(
                vs.iter().zip(xs).map(|(v, x)| self.stage_for(v, x)).collect::<Res<_>>()?,
            )),
            _ => self.stage(value),
        }
    }

    fn copy_into(&mut self, vars: &KVal, value: &KVal) -> Res<()> {
        match (vars, value) {
            // An array updated in place is already where it goes.
            (KVal::Arr(dst), KVal::Arr(src)) if same_memory(dst, src) => Ok(()),
            (KVal::Arr(dst), KVal::Arr(src)) => self.copy_array(dst, src),
            (KVal::Tuple(vs), KVal::Tuple(xs)) if vs.len() == xs.len() => {
                for (v, x) in vs.iter().zip(xs) {
                    self.copy_into(v, x)?;
                }
                Ok(())
            }
            _ => {
                let mut cmds = Vec::new();
                assign_into(&mut cmds, vars, value)?;
                for c in cmds {
                    self.emit(c);
                }
                Ok(())
            }
        }
    }

    pub(crate) fn stage(&mut self, v: &KVal) -> Res<KVal> {
        Ok(match v {
            KVal::Scalar(e, elem) => {
                if matches!(e, CExpr::Int(_) | CExpr::Lit(_)) {
                    v.clone()
                } else {
                    KVal::Scalar(self.decl("n", *elem, Some(e.clone())), *elem)
                }
            }
            KVal::Tuple(parts) => {
                KVal::Tuple(parts.iter().map(|p| self.stage(p)).collect::<Res<_>>()?)
            }
            KVal::Arr(a) => {
                let tmp = self.storage(a)?;
                self.copy_array(&tmp, a)?;
                KVal::Arr(tmp)
            }
        })
    }

    // ---- core IR ----

    pub(crate) fn lookup(&mut self, env: &mut KEnv, var: VarId) -> Res<KVal> {
        if let Some(v) = env.vars.get(&var) {
            return Ok(v.clone());
        }
        if let Some(host) = env.host.clone()
            && let Some(hv) = host.get(&var)
        {
            let kv = self.import_val(hv)?;
            env.vars.insert(var, kv.clone());
            return Ok(kv);
        }
        Err(LowerError::internal(format!("variable {var:?} is not bound in the kernel")))
    }

    pub(crate) fn atom(&mut self, f: FnId, env: &mut KEnv, atom: &Atom) -> Res<KVal> {
        let _ = f;
        match atom {
            Atom::Var(v) => self.lookup(env, *v),
            Atom::Const(s) => Ok(KVal::Scalar(literal(*s), s.ty())),
        }
    }

    pub(crate) fn scalar(&mut self, f: FnId, env: &mut KEnv, atom: &Atom) -> Res<(CExpr, Elem)> {
        match self.atom(f, env, atom)? {
            KVal::Scalar(e, elem) => Ok((e, elem)),
            _ => Err(LowerError::internal("expected a scalar")),
        }
    }

    /// An integer atom as a `long`.
    fn int(&mut self, f: FnId, env: &mut KEnv, atom: &Atom) -> Res<CExpr> {
        let (e, elem) = self.scalar(f, env, atom)?;
        Ok(if elem == Elem::I64 { e } else { CExpr::cast(Elem::I64, e) })
    }

    pub(crate) fn array(&mut self, f: FnId, env: &mut KEnv, atom: &Atom) -> Res<KArr> {
        match self.atom(f, env, atom)? {
            KVal::Arr(a) => Ok(a),
            _ => Err(LowerError::internal("expected an array")),
        }
    }

    pub(crate) fn size(&mut self, env: &mut KEnv, size: &CoreSize) -> Res<CExpr> {
        let mut total = CExpr::Int(0);
        for term in size.terms() {
            let mut prod = CExpr::Int(term.coeff());
            for atom in term.monomial().atoms() {
                let factor = match atom {
                    weft_size::Atom::Var(v) => match self.lookup(env, *v)? {
                        KVal::Scalar(e, Elem::I64) => e,
                        KVal::Scalar(e, _) => CExpr::cast(Elem::I64, e),
                        _ => return Err(LowerError::internal("a size that is not a scalar")),
                    },
                    weft_size::Atom::Div(p, q) => {
                        let p = self.size(env, p)?;
                        let q = self.size(env, q)?;
                        CExpr::bin(COp::Div, p, q)
                    }
                };
                prod = CExpr::mul(prod, factor);
            }
            total = CExpr::add(total, prod);
        }
        Ok(total)
    }

    /// Binds size variables of `ty` not yet bound from the shape of `val`.
    pub(crate) fn bind_sizes(&mut self, env: &mut KEnv, ty: &Type, val: &KVal) {
        match (ty, val) {
            (Type::Array { .. }, KVal::Arr(arr)) => {
                let shape = arr.shape();
                let mut t = ty;
                for dim in shape {
                    let Type::Array { size, elem } = t else { break };
                    if let Some(v) = size.as_var()
                        && !env.vars.contains_key(v)
                        && !env.host.as_ref().is_some_and(|h| h.contains_key(v))
                    {
                        env.vars.insert(*v, KVal::Scalar(dim.clone(), Elem::I64));
                    }
                    t = elem;
                }
            }
            (Type::Tuple(tys), KVal::Tuple(vals)) => {
                for (t, v) in tys.iter().zip(vals) {
                    self.bind_sizes(env, t, v);
                }
            }
            _ => {}
        }
    }

    pub(crate) fn block(&mut self, f: FnId, env: &mut KEnv, block: BlockId) -> Res<KVal> {
        let function = &self.program.functions[f];
        let b = &function.blocks[block];
        for stmt in &b.stmts {
            let val = self.exp(f, env, stmt.exp, stmt.var)?;
            let ty = &self.program.functions[f].vars[stmt.var].ty;
            self.bind_sizes(env, ty, &val);
            env.vars.insert(stmt.var, val);
        }
        match &b.result {
            Some(atom) => self.atom(f, env, atom),
            None => Ok(KVal::Tuple(Vec::new())),
        }
    }

    fn origin(&self, f: FnId, exp: ExpId) -> Option<Origin> {
        self.program.functions[f].origins.get(exp).cloned()
    }

    fn var_name(&self, f: FnId, atom: &Atom) -> String {
        self.program.functions[f].atom_name(*atom)
    }

    /// Emits one expression; `var` is the variable it binds (for names and types).
    /// Translates one expression; an error without a position gets this expression's.
    pub(crate) fn exp(&mut self, f: FnId, env: &mut KEnv, exp: ExpId, var: VarId) -> Res<KVal> {
        // The commands emitted for it compute this expression, unless a part of it with
        // an origin of its own is translated meanwhile.
        let outer = match self.origin(f, exp) {
            Some(origin) => self.at.replace(origin),
            None => self.at.clone(),
        };
        let result = self.exp_unplaced(f, env, exp, var);
        self.at = outer;
        result.map_err(|error| error.placed(self.origin(f, exp)))
    }

    fn exp_unplaced(&mut self, f: FnId, env: &mut KEnv, exp: ExpId, var: VarId) -> Res<KVal> {
        let program = self.program;
        let function = &program.functions[f];
        let hint = function.vars[var].name.to_string();
        let ty = &function.vars[var].ty;
        let origin = self.origin(f, exp);
        if let Some(o) = &origin {
            let role = match &function.exps[exp] {
                Exp::Map { .. }
                | Exp::Generate { .. }
                | Exp::Reduce { .. }
                | Exp::Scan { .. }
                | Exp::ReduceByIndex { .. }
                | Exp::Loop { .. } => "@seq: a sequential loop in each work-item",
                _ => "computed in each work-item",
            };
            self.note(o, role);
        }
        match &function.exps[exp] {
            Exp::Atom(a) => self.atom(f, env, a),
            Exp::Size(s) => Ok(KVal::Scalar(self.size(env, s)?, Elem::I64)),
            Exp::BinOp { op, ty: sty, lhs, rhs } => {
                let (a, _) = self.scalar(f, env, lhs)?;
                let (b, _) = self.scalar(f, env, rhs)?;
                let elem = *sty;
                let (value, out) = self.binop(*op, elem, a, b, origin.as_ref());
                let value = if out == Elem::F16 { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, out, value), out))
            }
            Exp::UnOp { op, ty: sty, operand } => {
                let (a, _) = self.scalar(f, env, operand)?;
                let elem = *sty;
                let value = unop(*op, elem, a);
                let value = if elem == Elem::F16 { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, elem, value), elem))
            }
            Exp::Convert { from, to, operand } => {
                let (a, _) = self.scalar(f, env, operand)?;
                let value = convert(*from, *to, a);
                Ok(KVal::Scalar(self.tmp(&hint, *to, value), *to))
            }
            Exp::Math { ty: sty, func, args } => {
                let mut cargs = Vec::new();
                for a in args {
                    cargs.push(self.scalar(f, env, a)?.0);
                }
                let (value, out) = math(*sty, *func, cargs);
                let value =
                    if out == Elem::F16 && !func.is_constant() { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, out, value), out))
            }
            Exp::Tuple(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.atom(f, env, p)).collect::<Res<_>>()?))
            }
            Exp::Proj { tuple, index } => match self.atom(f, env, tuple)? {
                KVal::Tuple(parts) => parts
                    .get(*index as usize)
                    .cloned()
                    .ok_or_else(|| LowerError::internal("projection out of range")),
                KVal::Arr(KArr::Zip(parts)) => parts
                    .get(*index as usize)
                    .cloned()
                    .map(KVal::Arr)
                    .ok_or_else(|| LowerError::internal("projection out of range")),
                _ => Err(LowerError::internal("projection of a non-tuple")),
            },
            Exp::ArrayLit { elems, elem_ty } => {
                let vals: Vec<KVal> =
                    elems.iter().map(|e| self.atom(f, env, e)).collect::<Res<_>>()?;
                let mut shape = vec![CExpr::Int(vals.len() as i64)];
                if let Some(KVal::Arr(first)) = vals.first() {
                    shape.extend(first.shape());
                } else if let Type::Array { .. } = elem_ty {
                    return Err(LowerError::unsupported(
                        "an empty array literal of arrays in a kernel",
                        origin.as_ref(),
                    ));
                }
                let f = literal_pull(vals);
                Ok(KVal::Arr(KArr::Pull { shape, f, row: None }))
            }
            Exp::Index { array, items } => {
                let name = self.var_name(f, array);
                let mut arr = self.array(f, env, array)?;
                let mut dim = 0;
                for item in items {
                    let shape = arr.shape();
                    let n = shape[dim].clone();
                    match item {
                        IndexItem::Fix(i) => {
                            let i = self.int(f, env, i)?;
                            let i = self.tmp("i", Elem::I64, i);
                            if self.checks() {
                                let code = self.error_site(
                                    RuntimeCheck::Index { array: &name },
                                    origin.as_ref(),
                                );
                                let ok = CExpr::bin(
                                    COp::And,
                                    CExpr::bin(COp::Le, CExpr::Int(0), i.clone()),
                                    CExpr::bin(COp::Lt, i.clone(), n.clone()),
                                );
                                self.check(ok, code, i.clone(), n.clone());
                            }
                            arr = self.view(&arr, &View::Fix { dim, index: i });
                        }
                        IndexItem::Slice { start, end, stride } => {
                            let stride = match stride {
                                Some(s) => self.int(f, env, s)?,
                                None => CExpr::Int(1),
                            };
                            let stride = self.tmp("stride", Elem::I64, stride);
                            let start = match start {
                                Some(s) => Some(self.int(f, env, s)?),
                                None => None,
                            };
                            let end = match end {
                                Some(e) => Some(self.int(f, env, e)?),
                                None => None,
                            };
                            let (s, len) = self.slice_bounds(
                                &name,
                                n,
                                start,
                                end,
                                stride.clone(),
                                origin.as_ref(),
                            );
                            arr = self.view(&arr, &View::Slice { dim, start: s, len, stride });
                            dim += 1;
                        }
                    }
                }
                if arr.shape().is_empty() {
                    let v = self.index(&arr, &[])?;
                    return Ok(self.bind_loaded(&hint, v));
                }
                Ok(KVal::Arr(arr))
            }
            Exp::Dim { array, dim } => {
                let arr = self.array(f, env, array)?;
                Ok(KVal::Scalar(arr.shape()[*dim as usize].clone(), Elem::I64))
            }
            Exp::Call { func, args } => {
                let callee = &program.functions[*func];
                let vals: Vec<KVal> =
                    args.iter().map(|a| self.atom(f, env, a)).collect::<Res<_>>()?;
                if let Some(v) = self.call_function(*func, &vals, origin.as_ref())? {
                    return Ok(v);
                }
                let mut cenv = KEnv::default();
                for (param, v) in callee.params.iter().zip(vals) {
                    cenv.vars.insert(*param, v);
                }
                for param in &callee.params {
                    let v = cenv.vars[param].clone();
                    self.bind_sizes(&mut cenv, &callee.vars[*param].ty, &v);
                }
                self.block(*func, &mut cenv, callee.body)
            }
            Exp::If { cond, then_branch, else_branch } => {
                let (c, _) = self.scalar(f, env, cond)?;
                let (tb, eb) = (*then_branch, *else_branch);
                let mut env_t = env.clone();
                let mut env_e = env.clone();
                self.branch(
                    c,
                    &mut |kb: &mut Kb<'_>| kb.block(f, &mut env_t, tb),
                    &mut |kb: &mut Kb<'_>| kb.block(f, &mut env_e, eb),
                )
            }
            Exp::Loop { param, init, form, body } => {
                let init = self.atom(f, env, init)?;
                let vars = self.declare_like(&init)?;
                // The variables are fresh: the initial value cannot read them, so it is
                // written into them directly (no staging copy).
                self.copy_into(&vars, &init)?;
                let mut benv = env.clone();
                benv.vars.insert(*param, vars.clone());
                match form {
                    LoopForm::For { index, bound } => {
                        let (bound, belem) = self.scalar(f, env, bound)?;
                        let i = self.fresh_name(function.vars[*index].name.as_str());
                        benv.vars.insert(*index, KVal::Scalar(CExpr::Var(i.clone()), belem));
                        self.push();
                        let r = self.block(f, &mut benv, *body)?;
                        self.assign(&vars, &r)?;
                        let cmds = self.pop();
                        let bound =
                            if belem == Elem::I64 { bound } else { CExpr::cast(Elem::I64, bound) };
                        self.emit(Cmd::For {
                            var: i,
                            bound,
                            body: cmds,
                            comment: self.comment(origin.as_ref()),
                        });
                    }
                    LoopForm::While { cond } => {
                        let mut cenv = benv.clone();
                        self.push();
                        let c = self.block(f, &mut cenv, *cond)?;
                        let cond_cmds = self.pop();
                        let KVal::Scalar(c, _) = c else {
                            return Err(LowerError::internal("loop condition"));
                        };
                        self.push();
                        let r = self.block(f, &mut benv, *body)?;
                        self.assign(&vars, &r)?;
                        let cmds = self.pop();
                        self.emit(Cmd::While { cond_cmds, cond: c, body: cmds });
                    }
                }
                Ok(vars)
            }
            Exp::Map { level: Some(weft_hir::Level::Thread), lambda, arrays } if self.in_group => {
                let arrays: Vec<KArr> =
                    arrays.iter().map(|a| self.array(f, env, a)).collect::<Res<_>>()?;
                self.thread_map(f, env, lambda, arrays, ty, &hint, origin.as_ref())
            }
            Exp::Generate { level: Some(weft_hir::Level::Thread), size, lambda }
                if self.in_group =>
            {
                let n = self.int(f, env, size)?;
                let arrays = vec![iota(n, Elem::I64)];
                self.thread_map(f, env, lambda, arrays, ty, &hint, origin.as_ref())
            }
            Exp::Reduce { level: Some(weft_hir::Level::Group), lambda, neutral, array }
                if self.in_group =>
            {
                self.group_reduce(f, env, lambda, neutral, array, origin.as_ref())
            }
            Exp::Scan { level: Some(weft_hir::Level::Group), lambda, neutral, array }
                if self.in_group =>
            {
                self.group_scan(f, env, lambda, neutral, array, ty, &hint, origin.as_ref())
            }
            Exp::Materialise { space: weft_core::Space::Local, value } if self.in_group => {
                let v = self.atom(f, env, value)?;
                match v {
                    KVal::Arr(arr) => {
                        Ok(KVal::Arr(self.to_local(env, arr, ty, &hint, origin.as_ref())?))
                    }
                    other => Ok(other),
                }
            }
            Exp::Map { lambda, arrays, .. } => {
                let arrays: Vec<KArr> =
                    arrays.iter().map(|a| self.array(f, env, a)).collect::<Res<_>>()?;
                let mut shape = vec![arrays[0].shape()[0].clone()];
                let (_, rank) = elem_and_rank(&lambda.ret);
                let ret_shape = self.type_shape(env, &lambda.ret, rank)?;
                shape.extend(ret_shape);
                Ok(KVal::Arr(map_array(f, lambda.clone(), env.clone(), arrays, shape)))
            }
            Exp::Generate { size, lambda, .. } => {
                let n = self.int(f, env, size)?;
                let (_, rank) = elem_and_rank(&lambda.ret);
                let mut shape = vec![n.clone()];
                shape.extend(self.type_shape(env, &lambda.ret, rank)?);
                let indices = vec![iota(n, Elem::I64)];
                Ok(KVal::Arr(map_array(f, lambda.clone(), env.clone(), indices, shape)))
            }
            Exp::Reduce { lambda, neutral, array, .. } => {
                let arr = self.array(f, env, array)?;
                let ne = self.atom(f, env, neutral)?;
                let acc = self.declare_like(&ne)?;
                self.assign(&acc, &ne)?;
                let n = arr.shape()[0].clone();
                let i = self.fresh_name("i");
                self.push();
                let x = self.index(&arr, &[CExpr::Var(i.clone())])?;
                let mut lenv = env.clone();
                lenv.vars.insert(lambda.params[0], acc.clone());
                lenv.vars.insert(lambda.params[1], x);
                let r = self.block(f, &mut lenv, lambda.body)?;
                self.assign(&acc, &r)?;
                let body = self.pop();
                self.emit(Cmd::For {
                    var: i,
                    bound: n,
                    body,
                    comment: self.comment(origin.as_ref()),
                });
                Ok(acc)
            }
            Exp::Scan { lambda, neutral, array, .. } => {
                let arr = self.array(f, env, array)?;
                let neutral_atom = *neutral;
                let n = arr.shape()[0].clone();
                let Some(len) = n.as_int().filter(|&l| l <= 4096) else {
                    // No private memory of a size known in advance: element i is the fold of
                    // elements 0..=i, recomputed where it is read (quadratic, but correct).
                    if let Some(o) = &origin {
                        self.note(o, "@seq scan without memory: each element is recomputed as a fold (its size is not a small constant)");
                    }
                    let lambda = lambda.clone();
                    let env2 = env.clone();
                    let pf: PullFn = Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
                        let mut env = env2.clone();
                        let ne = kb.atom(f, &mut env, &neutral_atom)?;
                        let acc = kb.declare_like(&ne)?;
                        kb.assign(&acc, &ne)?;
                        let k = kb.fresh_name("k");
                        kb.push();
                        let x = kb.index(&arr, &[CExpr::Var(k.clone())])?;
                        let mut lenv = env.clone();
                        lenv.vars.insert(lambda.params[0], acc.clone());
                        lenv.vars.insert(lambda.params[1], x);
                        let r = kb.block(f, &mut lenv, lambda.body)?;
                        kb.assign(&acc, &r)?;
                        let body = kb.pop();
                        kb.emit(Cmd::For {
                            var: k,
                            bound: CExpr::add(idx[0].clone(), CExpr::Int(1)),
                            body,
                            comment: None,
                        });
                        kb.index_val(&acc, &idx[1..])
                    });
                    return Ok(KVal::Arr(KArr::Pull { shape: vec![n], f: pf, row: None }));
                };
                let (elem_ty, _) = elem_and_rank(ty);
                let why = self.because(
                    "a sequential `scan`'s result, computed by one work-item",
                    origin.as_ref(),
                );
                let out = self.private_array(&hint, &elem_ty, len, &why)?;
                self.record_origin(&out, origin.as_ref());
                let ne = self.atom(f, env, neutral)?;
                let acc = self.declare_like(&ne)?;
                self.assign(&acc, &ne)?;
                let i = self.fresh_name("i");
                self.push();
                let x = self.index(&arr, &[CExpr::Var(i.clone())])?;
                let mut lenv = env.clone();
                lenv.vars.insert(lambda.params[0], acc.clone());
                lenv.vars.insert(lambda.params[1], x);
                let r = self.block(f, &mut lenv, lambda.body)?;
                self.assign(&acc, &r)?;
                self.write(&out, &[CExpr::Var(i.clone())], &acc)?;
                let body = self.pop();
                self.emit(Cmd::For {
                    var: i,
                    bound: n,
                    body,
                    comment: self.comment(origin.as_ref()),
                });
                Ok(KVal::Arr(out))
            }
            Exp::Scatter { .. } => {
                Err(LowerError::unsupported("`scatter` inside a kernel", origin.as_ref()))
            }
            Exp::ReduceByIndex { dest, lambda, indices, values, .. } => {
                let dest = self.array(f, env, dest)?;
                let indices = self.array(f, env, indices)?;
                let values = self.array(f, env, values)?;
                self.seq_reduce_by_index(
                    f,
                    env,
                    lambda,
                    dest,
                    indices,
                    values,
                    ty,
                    &hint,
                    origin.as_ref(),
                )
            }
            Exp::Update { array, indices, value } => {
                let name = self.var_name(f, array);
                let arr = self.array(f, env, array)?;
                let shape = arr.shape();
                let mut at = Vec::new();
                for (dim, index) in indices.iter().enumerate() {
                    let i = self.int(f, env, index)?;
                    let i = self.tmp("i", Elem::I64, i);
                    if self.checks() {
                        let code =
                            self.error_site(RuntimeCheck::Index { array: &name }, origin.as_ref());
                        let ok = CExpr::bin(
                            COp::And,
                            CExpr::bin(COp::Le, CExpr::Int(0), i.clone()),
                            CExpr::bin(COp::Lt, i.clone(), shape[dim].clone()),
                        );
                        self.check(ok, code, i.clone(), shape[dim].clone());
                    }
                    at.push(i);
                }
                let value = self.atom(f, env, value)?;
                let in_place = !self.in_group
                    && self.shared.borrow_mut().update_plan(program, f).reuse.get(&exp)
                        == Some(&weft_core::UpdateReuse::InPlace);
                if in_place {
                    // weft-core's `update_reuse`: the array is the work-item's own (a
                    // loop's parameter, or an earlier update's result) and dead
                    // afterwards, so one store replaces the element. An array that is
                    // not in memory yet (an earlier update that copied: a pull array)
                    // is written into the work-item's storage first, that update's copy.
                    let arr = if is_memory(&arr) {
                        arr
                    } else {
                        let storage = self.storage(&arr)?;
                        self.copy_array(&storage, &arr)?;
                        storage
                    };
                    if let Some(o) = &origin {
                        self.note(o, "in place: one store into the work-item's array");
                    }
                    self.write(&arr, &at, &value)?;
                    return Ok(KVal::Arr(arr));
                }
                // A pull array: an element is the new value's where the index matches,
                // the old array's elsewhere, so no work-item needs a copy in memory.
                let pf: PullFn = Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
                    let hit = at
                        .iter()
                        .zip(idx)
                        .map(|(i, k)| CExpr::bin(COp::Eq, k.clone(), i.clone()))
                        .reduce(|a, b| CExpr::bin(COp::And, a, b))
                        .unwrap_or(CExpr::Int(1));
                    let (rest, whole) = (idx[at.len()..].to_vec(), idx.to_vec());
                    let (value, arr) = (value.clone(), arr.clone());
                    kb.branch(
                        hit,
                        &mut |kb: &mut Kb<'_>| kb.index_val(&value, &rest),
                        &mut |kb: &mut Kb<'_>| kb.index(&arr, &whole),
                    )
                });
                Ok(KVal::Arr(KArr::Pull { shape, f: pf, row: None }))
            }
            Exp::Iota { size } => {
                let n = self.int(f, env, size)?;
                self.check_count(&n, "iota", origin.as_ref());
                let (elem_ty, _) = elem_and_rank(ty);
                let elem = match elem_ty {
                    Type::Scalar(s) => s,
                    _ => Elem::I64,
                };
                Ok(KVal::Arr(iota(n, elem)))
            }
            Exp::Replicate { size, value } => {
                let n = self.int(f, env, size)?;
                self.check_count(&n, "replicate", origin.as_ref());
                let v = self.atom(f, env, value)?;
                let mut shape = vec![n];
                if let KVal::Arr(a) = &v {
                    shape.extend(a.shape());
                }
                let pf: PullFn =
                    Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| kb.index_val(&v, &idx[1..]));
                Ok(KVal::Arr(KArr::Pull { shape, f: pf, row: None }))
            }
            Exp::Zip(parts) => {
                let mut arrs = Vec::new();
                for p in parts {
                    match self.array(f, env, p)? {
                        KArr::Zip(inner) => arrs.extend(inner),
                        other => arrs.push(other),
                    }
                }
                Ok(KVal::Arr(KArr::Zip(arrs)))
            }
            Exp::Unzip(a) => {
                let arr = self.array(f, env, a)?;
                let Type::Tuple(parts) = ty else { return Err(LowerError::internal("unzip type")) };
                self.unzip(arr, parts.len())
            }
            Exp::Transpose(a) => {
                let arr = self.array(f, env, a)?;
                Ok(KVal::Arr(self.view(&arr, &View::Transpose)))
            }
            Exp::Reverse(a) => {
                let arr = self.array(f, env, a)?;
                let n = arr.shape()[0].clone();
                let view = View::Slice {
                    dim: 0,
                    start: CExpr::sub(n.clone(), CExpr::Int(1)),
                    len: n,
                    stride: CExpr::Int(-1),
                };
                Ok(KVal::Arr(self.view(&arr, &view)))
            }
            Exp::Flatten(a) => {
                let arr = self.array(f, env, a)?;
                Ok(KVal::Arr(self.view(&arr, &View::Flatten)))
            }
            Exp::Unflatten { rows, cols, array } => {
                let name = self.var_name(f, array);
                let arr = self.array(f, env, array)?;
                let r = self.int(f, env, rows)?;
                let c = self.int(f, env, cols)?;
                let n = arr.shape()[0].clone();
                if self.checks() {
                    let code =
                        self.error_site(RuntimeCheck::Unflatten { array: &name }, origin.as_ref());
                    let ok = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Ge, r.clone(), CExpr::Int(0)),
                        CExpr::bin(COp::Eq, CExpr::mul(r.clone(), c.clone()), n.clone()),
                    );
                    self.check(ok, code, n, c.clone());
                }
                Ok(KVal::Arr(self.view(&arr, &View::Unflatten { rows: r, cols: c })))
            }
            Exp::Split { chunk, array } => {
                let name = self.var_name(f, array);
                let arr = self.array(f, env, array)?;
                let k = self.int(f, env, chunk)?;
                let n = arr.shape()[0].clone();
                if self.checks() {
                    let code =
                        self.error_site(RuntimeCheck::Split { array: &name }, origin.as_ref());
                    let ok = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Gt, k.clone(), CExpr::Int(0)),
                        CExpr::bin(
                            COp::Eq,
                            CExpr::bin(
                                COp::Rem,
                                n.clone(),
                                CExpr::select(
                                    CExpr::bin(COp::Gt, k.clone(), CExpr::Int(0)),
                                    k.clone(),
                                    CExpr::Int(1),
                                ),
                            ),
                            CExpr::Int(0),
                        ),
                    );
                    self.check(ok, code, n.clone(), k.clone());
                }
                let rows = CExpr::bin(
                    COp::Div,
                    n,
                    CExpr::select(
                        CExpr::bin(COp::Gt, k.clone(), CExpr::Int(0)),
                        k.clone(),
                        CExpr::Int(1),
                    ),
                );
                Ok(KVal::Arr(self.view(&arr, &View::Unflatten { rows, cols: k })))
            }
            Exp::Take { count, array } | Exp::Drop { count, array } => {
                let is_take = matches!(&function.exps[exp], Exp::Take { .. });
                let name = self.var_name(f, array);
                let arr = self.array(f, env, array)?;
                let k = self.int(f, env, count)?;
                let k = self.tmp("k", Elem::I64, k);
                let n = arr.shape()[0].clone();
                if self.checks() {
                    let what = if is_take { "take" } else { "drop" };
                    let code = self
                        .error_site(RuntimeCheck::Count { what, array: &name }, origin.as_ref());
                    let ok = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Le, CExpr::Int(0), k.clone()),
                        CExpr::bin(COp::Le, k.clone(), n.clone()),
                    );
                    self.check(ok, code, k.clone(), n.clone());
                }
                let view = if is_take {
                    View::Slice { dim: 0, start: CExpr::Int(0), len: k, stride: CExpr::Int(1) }
                } else {
                    View::Slice {
                        dim: 0,
                        start: k.clone(),
                        len: CExpr::sub(n, k),
                        stride: CExpr::Int(1),
                    }
                };
                Ok(KVal::Arr(self.view(&arr, &view)))
            }
            Exp::Concat(a, b) => {
                let a = self.array(f, env, a)?;
                let b = self.array(f, env, b)?;
                Ok(KVal::Arr(concat(a, b)))
            }
            Exp::Materialise { space, value } => {
                let v = self.atom(f, env, value)?;
                match (space, &v) {
                    (weft_core::Space::Private, KVal::Arr(arr)) => {
                        // The type may know a constant size that the value's shape
                        // (an input's dimension, checked at launch) does not.
                        let (_, rank) = elem_and_rank(ty);
                        let typed = self.type_shape(env, ty, rank)?;
                        let shape = if typed.iter().all(|d| d.as_int().is_some()) {
                            typed
                        } else {
                            arr.shape()
                        };
                        let total: Option<i64> = shape.iter().map(CExpr::as_int).product();
                        match total {
                            Some(len) if len <= 4096 => {
                                let (elem_ty, _) = elem_and_rank(ty);
                                let why =
                                    self.because("materialised by `to_private`", origin.as_ref());
                                let out =
                                    self.private_array_shaped(&hint, &elem_ty, shape, &why)?;
                                self.record_origin(&out, origin.as_ref());
                                self.write(&out, &[], &v)?;
                                Ok(KVal::Arr(out))
                            }
                            _ => Err(LowerError::unsupported(
                                "`to_private` of an array whose size is not a small constant",
                                origin.as_ref(),
                            )),
                        }
                    }
                    _ => Ok(v),
                }
            }
            Exp::Coerce { value, ty: target } => {
                let name = self.var_name(f, value);
                let v = self.atom(f, env, value)?;
                if let KVal::Arr(arr) = &v {
                    let shape = arr.shape();
                    let mut t = target;
                    let mut d = 0;
                    while let Type::Array { size, elem } = t {
                        if d >= shape.len() {
                            break;
                        }
                        let want = self.size(env, size)?;
                        if want != shape[d] && self.checks() {
                            let vars = &self.program.functions[f].vars;
                            let size =
                                size.display(&|v: &VarId| vars[*v].name.to_string()).to_string();
                            let check = RuntimeCheck::Coerce { value: &name, dim: d, size: &size };
                            let code = self.error_site(check, origin.as_ref());
                            self.check(
                                CExpr::bin(COp::Eq, shape[d].clone(), want.clone()),
                                code,
                                shape[d].clone(),
                                want,
                            );
                        }
                        t = elem;
                        d += 1;
                    }
                }
                Ok(v)
            }
        }
    }

    fn bind_loaded(&mut self, hint: &str, v: KVal) -> KVal {
        match v {
            KVal::Scalar(e, elem) => KVal::Scalar(self.tmp(hint, elem, e), elem),
            KVal::Tuple(parts) => {
                KVal::Tuple(parts.into_iter().map(|p| self.bind_loaded(hint, p)).collect())
            }
            other => other,
        }
    }

    /// `file:line` of a source expression, for comments in generated code. No column:
    /// writing a strategy annotation into the source (the editor's "Make strategy
    /// explicit") moves columns but not lines, and must not change the kernels.
    /// Records that the memory of `arr` holds the value of the source expression
    /// `origin` (hovers show its address space there).
    pub(crate) fn record_origin(&mut self, arr: &KArr, origin: Option<&Origin>) {
        let Some(origin) = origin else { return };
        match arr {
            KArr::Mem(m) => self.ptr_origins.push((m.buf.to_string(), origin.clone())),
            KArr::Zip(parts) => parts.iter().for_each(|p| self.record_origin(p, Some(origin))),
            KArr::Pull { .. } => {}
        }
    }

    /// `what` with the source line it comes from, for address-space explanations.
    pub(crate) fn because(&self, what: &str, origin: Option<&Origin>) -> String {
        match self.comment(origin) {
            Some(at) => format!("{what} ({at})"),
            None => what.to_owned(),
        }
    }

    pub(crate) fn comment(&self, origin: Option<&Origin>) -> Option<String> {
        origin.and_then(|o| (self.position)(o)).map(|p| strip_column(&p))
    }

    /// The inner dimensions of a lambda's result type, evaluated in `env`.
    pub(crate) fn type_shape(&mut self, env: &mut KEnv, ty: &Type, rank: usize) -> Res<Vec<CExpr>> {
        let mut out = Vec::new();
        let mut t = ty;
        for _ in 0..rank {
            let Type::Array { size, elem } = t else { break };
            out.push(self.size(env, size)?);
            t = elem;
        }
        Ok(out)
    }

    fn unzip(&mut self, arr: KArr, n: usize) -> Res<KVal> {
        match arr {
            KArr::Zip(parts) => Ok(KVal::Tuple(parts.into_iter().map(KVal::Arr).collect())),
            KArr::Pull { shape, f, .. } => {
                let mut out = Vec::new();
                for k in 0..n {
                    let f = f.clone();
                    let pf: PullFn =
                        Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| match f(kb, idx)? {
                            KVal::Tuple(parts) => {
                                parts.get(k).cloned().ok_or_else(|| LowerError::internal("unzip"))
                            }
                            _ => Err(LowerError::internal("unzip of a non-tuple")),
                        });
                    out.push(KVal::Arr(KArr::Pull { shape: shape.clone(), f: pf, row: None }));
                }
                Ok(KVal::Tuple(out))
            }
            KArr::Mem(_) => Err(LowerError::internal("unzip of a scalar array")),
        }
    }

    /// `reduce_by_index` in one work-item: into a private copy of the bins when their
    /// shape is a small constant, else as a pull array whose element folds every value
    /// of its bin where it is read (bins times values work, but no memory).
    #[expect(clippy::too_many_arguments, reason = "the combinator's whole description")]
    fn seq_reduce_by_index(
        &mut self,
        f: FnId,
        env: &KEnv,
        lambda: &weft_core::Lambda,
        dest: KArr,
        indices: KArr,
        values: KArr,
        ty: &Type,
        hint: &str,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        let shape = dest.shape();
        let n = indices.shape()[0].clone();
        let bins = shape[0].clone();
        let total: Option<i64> = shape.iter().map(CExpr::as_int).product();
        if total.is_some_and(|t| t <= 4096) {
            let (elem_ty, _) = elem_and_rank(ty);
            let why = self.because(
                "a sequential `reduce_by_index`'s bins, computed by one work-item",
                origin,
            );
            let out = self.private_array_shaped(hint, &elem_ty, shape.clone(), &why)?;
            self.record_origin(&out, origin);
            self.write(&out, &[], &KVal::Arr(dest))?;
            let i = self.fresh_name("i");
            self.push();
            let KVal::Scalar(j, jelem) = self.index(&indices, &[CExpr::Var(i.clone())])? else {
                return Err(LowerError::internal("reduce_by_index index"));
            };
            let j = if jelem == Elem::I64 { j } else { CExpr::cast(Elem::I64, j) };
            let j = self.tmp("j", Elem::I64, j);
            self.push();
            let current = self.index(&out, std::slice::from_ref(&j))?;
            let x = self.index(&values, &[CExpr::Var(i.clone())])?;
            let combined = self.apply(f, env, lambda, current, x)?;
            // Staged first: the operator's result may read the bin it replaces.
            let combined = self.stage(&combined)?;
            self.write(&out, std::slice::from_ref(&j), &combined)?;
            let then_cmds = self.pop();
            let in_range = CExpr::bin(
                COp::And,
                CExpr::bin(COp::Le, CExpr::Int(0), j.clone()),
                CExpr::bin(COp::Lt, j, bins),
            );
            self.emit(Cmd::If { cond: in_range, then_cmds, else_cmds: Vec::new() });
            let body = self.pop();
            self.emit(Cmd::For { var: i, bound: n, body, comment: self.comment(origin) });
            return Ok(KVal::Arr(out));
        }
        if let Some(o) = origin {
            self.note(o, "@seq reduce_by_index without memory: each bin folds every value where it is read (its size is not a small constant)");
        }
        let (lambda, env) = (lambda.clone(), env.clone());
        let pf: PullFn = Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
            let bin = idx[0].clone();
            let init = kb.index(&dest, std::slice::from_ref(&bin))?;
            let acc = kb.declare_like(&init)?;
            kb.assign(&acc, &init)?;
            let i = kb.fresh_name("i");
            kb.push();
            let KVal::Scalar(j, jelem) = kb.index(&indices, &[CExpr::Var(i.clone())])? else {
                return Err(LowerError::internal("reduce_by_index index"));
            };
            let j = if jelem == Elem::I64 { j } else { CExpr::cast(Elem::I64, j) };
            kb.push();
            let x = kb.index(&values, &[CExpr::Var(i.clone())])?;
            let combined = kb.apply(f, &env, &lambda, acc.clone(), x)?;
            kb.assign(&acc, &combined)?;
            let then_cmds = kb.pop();
            kb.emit(Cmd::If {
                cond: CExpr::bin(COp::Eq, j, bin),
                then_cmds,
                else_cmds: Vec::new(),
            });
            let body = kb.pop();
            kb.emit(Cmd::For { var: i, bound: n.clone(), body, comment: None });
            kb.index_val(&acc, &idx[1..])
        });
        Ok(KVal::Arr(KArr::Pull { shape, f: pf, row: None }))
    }

    fn private_array(&mut self, hint: &str, elem_ty: &Type, len: i64, why: &str) -> Res<KArr> {
        self.private_array_shaped(hint, elem_ty, vec![CExpr::Int(len)], why)
    }

    /// A work-item's own array of a constant size; `why` says what it holds.
    pub(crate) fn private_array_shaped(
        &mut self,
        hint: &str,
        elem_ty: &Type,
        shape: Vec<CExpr>,
        why: &str,
    ) -> Res<KArr> {
        let total: i64 = shape.iter().map(|s| s.as_int().unwrap_or(1)).product();
        let mut parts = Vec::new();
        for elem in leaves(elem_ty)? {
            let name = self.fresh_name(hint);
            self.emit(Cmd::Array {
                name: name.clone(),
                elem,
                sharing: Sharing::WorkItem,
                len: total.max(1),
                why: Rc::from(why),
            });
            parts.push(KArr::Mem(Mem::fresh(name, elem, shape.clone())));
        }
        crate::val::Nesting::of_type(elem_ty)
            .regroup(&mut parts.into_iter(), &KArr::Zip)
            .ok_or_else(|| LowerError::internal("a private array with no leaves"))
    }

    /// Start and length of a slice, with its bounds check (the interpreter's rules).
    fn slice_bounds(
        &mut self,
        name: &str,
        n: CExpr,
        start: Option<CExpr>,
        end: Option<CExpr>,
        stride: CExpr,
        origin: Option<&Origin>,
    ) -> (CExpr, CExpr) {
        let positive = CExpr::bin(COp::Gt, stride.clone(), CExpr::Int(0));
        let pos_const = stride.as_int().map(|s| s > 0);
        let s_default = match pos_const {
            Some(true) => CExpr::Int(0),
            Some(false) => CExpr::sub(n.clone(), CExpr::Int(1)),
            None => {
                CExpr::select(positive.clone(), CExpr::Int(0), CExpr::sub(n.clone(), CExpr::Int(1)))
            }
        };
        let e_default = match pos_const {
            Some(true) => n.clone(),
            Some(false) => CExpr::Int(-1),
            None => CExpr::select(positive.clone(), n.clone(), CExpr::Int(-1)),
        };
        let s = self.tmp("start", Elem::I64, start.unwrap_or(s_default));
        let e = self.tmp("end", Elem::I64, end.unwrap_or(e_default));
        let ok_pos = CExpr::bin(
            COp::And,
            CExpr::bin(
                COp::And,
                CExpr::bin(COp::Le, CExpr::Int(0), s.clone()),
                CExpr::bin(COp::Le, e.clone(), n.clone()),
            ),
            CExpr::bin(COp::Le, s.clone(), e.clone()),
        );
        let ok_neg = CExpr::bin(
            COp::And,
            CExpr::bin(
                COp::And,
                CExpr::bin(COp::Lt, s.clone(), n.clone()),
                CExpr::bin(COp::Ge, e.clone(), CExpr::Int(-1)),
            ),
            CExpr::bin(COp::Ge, s.clone(), e.clone()),
        );
        let ok = match pos_const {
            Some(true) => ok_pos,
            Some(false) => ok_neg,
            None => CExpr::select(
                positive.clone(),
                ok_pos,
                CExpr::bin(COp::And, CExpr::bin(COp::Ne, stride.clone(), CExpr::Int(0)), ok_neg),
            ),
        };
        if self.checks() {
            let code = self.error_site(RuntimeCheck::Slice { array: name }, origin);
            self.check(ok, code, s.clone(), n);
        }
        // len = ceil(|e - s| / |stride|)
        let span_pos = CExpr::sub(e.clone(), s.clone());
        let len_pos = CExpr::bin(
            COp::Div,
            CExpr::add(span_pos, CExpr::sub(stride.clone(), CExpr::Int(1))),
            stride.clone(),
        );
        let span_neg = CExpr::sub(s.clone(), e);
        let neg_stride = CExpr::neg(stride.clone());
        let len_neg = CExpr::bin(
            COp::Div,
            CExpr::add(span_neg, CExpr::sub(neg_stride.clone(), CExpr::Int(1))),
            neg_stride,
        );
        let len = match pos_const {
            Some(true) => len_pos,
            Some(false) => len_neg,
            None => CExpr::select(
                positive,
                len_pos,
                CExpr::select(CExpr::bin(COp::Ne, stride, CExpr::Int(0)), len_neg, CExpr::Int(0)),
            ),
        };
        let len = self.tmp("len", Elem::I64, len);
        (s, len)
    }

    pub(crate) fn binop(
        &mut self,
        op: BinOp,
        elem: Elem,
        a: CExpr,
        b: CExpr,
        origin: Option<&Origin>,
    ) -> (CExpr, Elem) {
        crate::scalar::binop(op, elem, a, b, &mut |check| self.error_site(check, origin))
    }
}

/// `cond ? a : b` on scalars and tuples of scalars.
pub(crate) fn select_val(cond: &CExpr, a: &KVal, b: &KVal) -> KVal {
    match (a, b) {
        (KVal::Scalar(x, elem), KVal::Scalar(y, _)) => {
            KVal::Scalar(CExpr::select(cond.clone(), x.clone(), y.clone()), *elem)
        }
        (KVal::Tuple(xs), KVal::Tuple(ys)) => {
            KVal::Tuple(xs.iter().zip(ys).map(|(x, y)| select_val(cond, x, y)).collect())
        }
        _ => a.clone(),
    }
}

fn assign_into(cmds: &mut Vec<Cmd>, vars: &KVal, value: &KVal) -> Res<()> {
    match (vars, value) {
        (KVal::Scalar(CExpr::Var(name), _), KVal::Scalar(v, _)) => {
            cmds.push(Cmd::Assign { name: name.clone(), value: v.clone() });
            Ok(())
        }
        (KVal::Tuple(vs), KVal::Tuple(xs)) if vs.len() == xs.len() => {
            for (v, x) in vs.iter().zip(xs) {
                assign_into(cmds, v, x)?;
            }
            Ok(())
        }
        _ => Err(LowerError::internal("assignment of mismatched values")),
    }
}

/// A memory array read through a pull array (for views its layout cannot express).
fn mem_as_pull(arr: &KArr) -> KArr {
    match arr {
        KArr::Zip(parts) => KArr::Zip(parts.iter().map(mem_as_pull).collect()),
        KArr::Pull { .. } => arr.clone(),
        KArr::Mem(m) => {
            let m = m.clone();
            let f: PullFn = Rc::new(move |_kb: &mut Kb<'_>, idx: &[CExpr]| {
                Ok(KVal::Scalar(CExpr::load(&m.buf, m.address(idx)), m.elem))
            });
            KArr::Pull { shape: arr.shape(), f, row: None }
        }
    }
}

/// `path:line:col` without `:col`.
pub(crate) fn strip_column(position: &str) -> String {
    match position.rsplit_once(':') {
        Some((head, col)) if col.chars().all(|c| c.is_ascii_digit()) && head.contains(':') => {
            head.to_owned()
        }
        _ => position.to_owned(),
    }
}

/// A pull array whose element `i` is `lambda` applied to element `i` of each array
/// (a `map`; a `generate` is a map over an [`iota`]), in `env`.
pub(crate) fn map_pull(
    func: FnId,
    lambda: weft_core::Lambda,
    env: KEnv,
    arrays: Vec<KArr>,
) -> PullFn {
    Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
        let row = map_row(kb, func, &lambda, &env, &arrays, &idx[0])?;
        kb.index_val(&row, &idx[1..])
    })
}

/// The lambda's value at outer index `i`: its parameters bound to the arrays' elements
/// at `i`, its body emitted.
fn map_row(
    kb: &mut Kb<'_>,
    func: FnId,
    lambda: &weft_core::Lambda,
    env: &KEnv,
    arrays: &[KArr],
    i: &CExpr,
) -> Res<KVal> {
    let mut env = env.clone();
    for (param, arr) in lambda.params.iter().zip(arrays) {
        let elem = kb.index(arr, std::slice::from_ref(i))?;
        env.vars.insert(*param, elem);
    }
    kb.block(func, &mut env, lambda.body)
}

/// The pull array of a `map` (or `generate`) of `lambda` over `arrays`, with shape
/// `shape`: element by element, and row by row when the lambda returns an array of
/// scalars (see [`RowFn`]; a lambda returning tuples keeps the element-wise form, whose
/// values are arrays of tuples).
pub(crate) fn map_array(
    func: FnId,
    lambda: weft_core::Lambda,
    env: KEnv,
    arrays: Vec<KArr>,
    shape: Vec<CExpr>,
) -> KArr {
    let returns_rows = matches!(elem_and_rank(&lambda.ret), (Type::Scalar(_), r) if r >= 1);
    let row: Option<RowFn> = returns_rows.then(|| {
        let (lambda, env, arrays) = (lambda.clone(), env.clone(), arrays.clone());
        Rc::new(move |kb: &mut Kb<'_>, i: &CExpr| map_row(kb, func, &lambda, &env, &arrays, i))
            as RowFn
    });
    KArr::Pull { shape, f: map_pull(func, lambda, env, arrays), row }
}

/// `0, 1, .., n - 1` as `elem`s.
pub(crate) fn iota(n: CExpr, elem: Elem) -> KArr {
    let f: PullFn = Rc::new(move |_kb: &mut Kb<'_>, idx: &[CExpr]| {
        let v = if elem == Elem::I64 { idx[0].clone() } else { CExpr::cast(elem, idx[0].clone()) };
        Ok(KVal::Scalar(v, elem))
    });
    KArr::Pull { shape: vec![n], f, row: None }
}

/// An array literal: element `i` selected among the (already computed) elements.
fn literal_pull(elems: Vec<KVal>) -> PullFn {
    Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
        let mut picked = Vec::new();
        for e in &elems {
            picked.push(kb.index_val(e, &idx[1..])?);
        }
        if picked.is_empty() {
            return Err(LowerError::internal("empty array literal indexed"));
        }
        Ok(select_among(&picked, 0, &idx[0]))
    })
}

/// Element `at - base` of `picked` as a balanced tree of selects: nested `?:` as deep
/// as the literal is long broke OpenCL C compilers (clang's limit of 256 nested
/// brackets), and a tree reads any element after log2(n) comparisons.
fn select_among(picked: &[KVal], base: usize, at: &CExpr) -> KVal {
    if picked.len() == 1 {
        return picked[0].clone();
    }
    let mid = picked.len() / 2;
    let cond = CExpr::bin(COp::Lt, at.clone(), CExpr::Int((base + mid) as i64));
    let low = select_among(&picked[..mid], base, at);
    let high = select_among(&picked[mid..], base + mid, at);
    select_val(&cond, &low, &high)
}

/// `a ++ b`: the element is read from one array or the other (a branch, so the other
/// array is never read out of its bounds).
fn concat(a: KArr, b: KArr) -> KArr {
    let mut shape = a.shape();
    let na = shape[0].clone();
    shape[0] = CExpr::add(na.clone(), b.shape()[0].clone());
    let f: PullFn = Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
        let cond = CExpr::bin(COp::Lt, idx[0].clone(), na.clone());
        let mut rest = idx.to_vec();
        rest[0] = CExpr::sub(idx[0].clone(), na.clone());
        let idx = idx.to_vec();
        let (a, b) = (a.clone(), b.clone());
        kb.branch(cond, &mut |kb: &mut Kb<'_>| kb.index(&a, &idx), &mut |kb: &mut Kb<'_>| {
            kb.index(&b, &rest)
        })
    });
    KArr::Pull { shape, f, row: None }
}
