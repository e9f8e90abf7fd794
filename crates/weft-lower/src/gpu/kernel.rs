//! A kernel under construction, and the sequential code of SegOp bodies: each work-item
//! runs it for its point (DPIA's translation of sequential code). Arrays are their
//! block's pointer and their evaluated LMAD from the memory IR; values of host code are
//! imported as kernel parameters on first use.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{Atom, IndexItem, Origin, Type, VarId};
use weft_mem::{
    ArrayMem, BlockBinding, ExistId, MemBlockId, MemInfo, MemLmad, MemSize, MemVar, Storage,
};
use weft_opt::{BlockId, Exp, ExpId, LoopForm, SeqSoac, Stmt};
use weft_plan::{Arg, Elem, Expr, ParamKind, Var};
use weft_values::RuntimeCheck;

use super::{HArr, HScalar, HVal, Layout, Res, Tr};
use crate::LowerError;
use crate::imp::{CExpr, COp, Cmd, KernelImp, ParLevel, Sharing};
use crate::scalar::{convert, literal, math, round_f16, unop};

/// On a CPU, the elements a work-item of an element-wise kernel (a copy, a map whose
/// body runs no loop) computes in a loop ([`Kern::runs_loop`]).
pub(crate) const CPU_RUN: i64 = 64;

/// A value inside a kernel.
#[derive(Debug, Clone)]
pub(crate) enum KVal {
    Scalar(CExpr, Elem),
    Arr(KArr),
    /// A tuple, or an array of tuples (a tuple of arrays).
    Tuple(Vec<KVal>),
}

/// An array inside a kernel: a pointer and its layout.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KArr {
    pub(crate) ptr: Rc<str>,
    pub(crate) elem: Elem,
    pub(crate) layout: Layout<CExpr>,
}

impl KArr {
    pub(crate) fn shape(&self) -> &[CExpr] {
        &self.layout.shape
    }

    /// The address of a full index.
    pub(crate) fn address(&self, index: &[CExpr]) -> CExpr {
        let mut addr = self.layout.offset.clone();
        for (i, s) in index.iter().zip(&self.layout.strides) {
            addr = CExpr::add(addr, CExpr::mul(i.clone(), s.clone()));
        }
        addr
    }
}

impl KVal {
    /// The shape of an array (of its first leaf, for an array of tuples).
    pub(crate) fn shape(&self) -> Option<Vec<CExpr>> {
        match self {
            KVal::Arr(a) => Some(a.shape().to_vec()),
            KVal::Tuple(parts) => parts.first().and_then(KVal::shape),
            KVal::Scalar(..) => None,
        }
    }

    /// The scalar leaves in order.
    pub(crate) fn scalars(&self, out: &mut Vec<(CExpr, Elem)>) {
        match self {
            KVal::Scalar(e, elem) => out.push((e.clone(), *elem)),
            KVal::Tuple(parts) => parts.iter().for_each(|p| p.scalars(out)),
            KVal::Arr(_) => {}
        }
    }
}

/// Rebuilds a value shaped like `like` from scalar leaves.
pub(crate) fn rebuild(like: &KVal, leaves: &mut impl Iterator<Item = (CExpr, Elem)>) -> KVal {
    match like {
        KVal::Scalar(..) => {
            let (e, elem) = leaves.next().unwrap_or((CExpr::Int(0), Elem::I64));
            KVal::Scalar(e, elem)
        }
        KVal::Tuple(parts) => KVal::Tuple(parts.iter().map(|p| rebuild(p, leaves)).collect()),
        KVal::Arr(_) => like.clone(),
    }
}

/// A kernel under construction.
pub(crate) struct Kern<'t, 'p> {
    pub(crate) tr: &'t mut Tr<'p>,
    params: Vec<(String, ParamKind)>,
    param_notes: Vec<(String, String)>,
    buffer_lens: Vec<(String, i64)>,
    ptr_origins: Vec<(String, Origin)>,
    /// Indices the code being generated knows to lie in `0 ..< bound` (index, bound):
    /// their reads need no check (a reduction's runs of four elements, `4q + lane` with
    /// `q < n / 4`, which the loop-based proof of `proven.rs` does not see).
    pub(crate) in_range: Vec<(CExpr, CExpr)>,
    args: Vec<Arg>,
    cmds: Vec<Vec<Cmd>>,
    fresh: u32,
    pub(crate) env: FxHashMap<VarId, KVal>,
    exists: FxHashMap<ExistId, CExpr>,
    buffers: FxHashMap<Var, Rc<str>>,
    scalars: Vec<(Expr, Elem, CExpr)>,
    /// The pointer of each block the kernel has touched.
    blocks: FxHashMap<MemBlockId, Rc<str>>,
    /// Whether a failing work-item may return at once (no barriers in the kernel).
    pub(crate) can_return: bool,
    origins: Vec<(Origin, String)>,
    /// The work-group size of the kernel's cooperative code.
    pub(crate) group_size: i64,
    /// The source expression the commands emitted now compute, and the origin of each
    /// variable the kernel introduces (`KernelImp::var_origins`).
    at: Option<Origin>,
    named: rustc_hash::FxHashSet<Rc<str>>,
    var_origins: Vec<(String, Origin)>,
    /// While a run of neighbouring elements is computed ([`Kern::vector_lanes`]).
    vector_run: Option<VectorRun>,
}

/// A run of `LANES` neighbouring elements at `base + lane`, `base` a multiple of
/// `LANES`, computed one after the other in one block: the first read of a buffer at
/// `base` loads the whole run as one vector, and the later lanes' reads of it are
/// that vector's lanes.
struct VectorRun {
    base: Rc<str>,
    /// The depth of the block the run is computed in: reads in nested blocks (a
    /// branch) stay scalar, as the vector would not be declared where they are.
    depth: usize,
    /// Each buffer read so far, with its lanes.
    loaded: Vec<(Rc<str>, Vec<Rc<str>>)>,
    /// Temporaries holding `base + lane` (a body binds its index), with their lane.
    lane_names: Vec<(Rc<str>, i64)>,
}

impl VectorRun {
    /// The lane `index` is (`base`, `base + c` or a temporary of one), if it is one.
    fn lane_of(&self, index: &CExpr) -> Option<i64> {
        match index {
            CExpr::Var(v) if *v == self.base => Some(0),
            CExpr::Var(v) => self.lane_names.iter().find(|(n, _)| n == v).map(|(_, c)| *c),
            CExpr::Bin(COp::Add, a, b) => match (&**a, &**b) {
                (CExpr::Var(v), CExpr::Int(c)) if *v == self.base && (1..LANES).contains(c) => {
                    Some(*c)
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// The lanes of a vector load: four elements of 32 bits, 16 bytes.
pub(crate) const LANES: i64 = 4;

impl<'t, 'p> Kern<'t, 'p> {
    pub(crate) fn new(tr: &'t mut Tr<'p>) -> Self {
        let group_size = i64::from(tr.options.work_group);
        Kern {
            tr,
            params: Vec::new(),
            param_notes: Vec::new(),
            buffer_lens: Vec::new(),
            ptr_origins: Vec::new(),
            in_range: Vec::new(),
            args: Vec::new(),
            cmds: vec![Vec::new()],
            fresh: 0,
            env: FxHashMap::default(),
            exists: FxHashMap::default(),
            buffers: FxHashMap::default(),
            scalars: Vec::new(),
            blocks: FxHashMap::default(),
            can_return: true,
            origins: Vec::new(),
            group_size,
            at: None,
            named: rustc_hash::FxHashSet::default(),
            var_origins: Vec::new(),
            vector_run: None,
        }
    }

    /// The finished kernel and its launch arguments.
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

    // ---- emission ----

    /// Records that this kernel computes the source expression `origin`, and how.
    pub(crate) fn note(&mut self, origin: &Origin, role: &str) {
        if self.at.is_none() {
            self.at = Some(origin.clone());
        }
        if !self.origins.iter().any(|(o, _)| o == origin) {
            self.origins.push((origin.clone(), role.to_owned()));
        }
    }

    pub(crate) fn emit(&mut self, cmd: Cmd) {
        if let Some(at) = &self.at {
            crate::imp::record_var_origins(&cmd, at, &mut self.named, &mut self.var_origins);
        }
        if let Some(top) = self.cmds.last_mut() {
            top.push(cmd);
        }
    }

    pub(crate) fn push(&mut self) {
        self.cmds.push(Vec::new());
    }

    /// Computes `point` at each of the `LANES` indices `base + lane` in turn (`base` a
    /// variable holding a multiple of `LANES`, every index known below `n`), with the
    /// buffers read at those indices loaded as vectors ([`VectorRun`]).
    pub(crate) fn vector_lanes<T>(
        &mut self,
        base: &CExpr,
        n: &CExpr,
        point: &mut dyn FnMut(&mut Self, CExpr) -> Res<T>,
    ) -> Res<Vec<T>> {
        let outer = match base {
            CExpr::Var(name) => self.vector_run.replace(VectorRun {
                base: name.clone(),
                depth: self.cmds.len(),
                loaded: Vec::new(),
                lane_names: Vec::new(),
            }),
            _ => self.vector_run.take(),
        };
        let mut out = Vec::new();
        let mut failed = None;
        for lane in 0..LANES {
            let index = CExpr::add(base.clone(), CExpr::Int(lane));
            let known = self.in_range.len();
            self.in_range.push((index.clone(), n.clone()));
            let value = point(self, index);
            self.in_range.truncate(known);
            match value {
                Ok(value) => out.push(value),
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        self.vector_run = outer;
        failed.map_or(Ok(out), Err)
    }

    /// The lane variable of a read of `ptr` at `address` inside a vector run, loading
    /// the run's vector at its first read; `None` for a read the run does not cover.
    fn vector_lane(&mut self, ptr: &Rc<str>, elem: Elem, address: &CExpr) -> Option<Rc<str>> {
        if !matches!(elem, Elem::F32 | Elem::I32 | Elem::U32) {
            return None;
        }
        let run = self.vector_run.as_ref()?;
        if run.depth != self.cmds.len() {
            return None;
        }
        let lane = run.lane_of(address)? as usize;
        if let Some((_, lanes)) = run.loaded.iter().find(|(p, _)| p == ptr) {
            return Some(lanes[lane].clone());
        }
        // Only the first lane's read starts a vector: a run read from its middle on
        // is not one the lanes computed before can use.
        if lane != 0 {
            return None;
        }
        let base = run.base.clone();
        let lanes: Vec<Rc<str>> = (0..LANES).map(|_| self.fresh_name("x")).collect();
        let load = CExpr::load(ptr, CExpr::Var(base));
        self.emit(Cmd::VectorLoad { lanes: lanes.clone(), elem, load, aligned: true });
        self.vector_run.as_mut()?.loaded.push((ptr.clone(), lanes.clone()));
        Some(lanes[0].clone())
    }

    /// Continues emitting into `cmds` (a block popped earlier).
    pub(crate) fn cmds_push(&mut self, cmds: Vec<Cmd>) {
        self.cmds.push(cmds);
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
        // A temporary of an index known in range is in range too.
        let bounds: Vec<CExpr> =
            self.in_range.iter().filter(|(j, _)| *j == value).map(|(_, b)| b.clone()).collect();
        for bound in bounds {
            self.in_range.push((CExpr::Var(name.clone()), bound));
        }
        // A temporary of a vector run's lane index reads that lane.
        if let Some(run) = self.vector_run.as_mut()
            && let Some(lane) = run.lane_of(&value)
        {
            run.lane_names.push((name.clone(), lane));
        }
        self.emit(Cmd::Decl { name: name.clone(), elem, init: Some(value) });
        CExpr::Var(name)
    }

    pub(crate) fn decl(&mut self, hint: &str, elem: Elem, init: Option<CExpr>) -> CExpr {
        let name = self.fresh_name(hint);
        self.emit(Cmd::Decl { name: name.clone(), elem, init });
        CExpr::Var(name)
    }

    /// On a CPU: a work-item per run of [`CPU_RUN`] of `0..n` and a loop over the run,
    /// `body` written with each index (a loop the compiler vectorises where the body
    /// allows, a reversed read included; POCL's vectorisation across work-items did not
    /// vectorise a reversal). The launch's NDRange is `ceil(n / CPU_RUN)`.
    pub(crate) fn runs_loop(
        &mut self,
        n: &CExpr,
        comment: Option<String>,
        body: &mut dyn FnMut(&mut Self, CExpr) -> Res<()>,
    ) -> Res<()> {
        let item = self.fresh_name("item");
        self.push();
        let first =
            self.tmp("first", Elem::I64, CExpr::mul(CExpr::Var(item.clone()), CExpr::Int(CPU_RUN)));
        let count =
            CExpr::call("min", vec![CExpr::Int(CPU_RUN), CExpr::sub(n.clone(), first.clone())]);
        self.for_loop("j", count, comment, &mut |k, j| {
            let i = k.tmp("i", Elem::I64, CExpr::add(first.clone(), j));
            k.in_range.push((i.clone(), n.clone()));
            body(k, i)
        })?;
        let cmds = self.pop();
        let runs = CExpr::bin(
            COp::Div,
            CExpr::add(n.clone(), CExpr::Int(CPU_RUN - 1)),
            CExpr::Int(CPU_RUN),
        );
        self.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: item,
            bound: runs,
            body: cmds,
            comment: None,
        });
        Ok(())
    }

    /// The contiguous share `start..end` of `0..n` that part `who` of `parts` takes
    /// (`ceil(n / parts)` each, the last one shorter).
    pub(crate) fn contiguous_share(
        &mut self,
        n: &CExpr,
        who: CExpr,
        parts: CExpr,
    ) -> (CExpr, CExpr) {
        let per = self.tmp(
            "per",
            Elem::I64,
            CExpr::bin(
                COp::Div,
                CExpr::add(n.clone(), CExpr::sub(parts.clone(), CExpr::Int(1))),
                parts,
            ),
        );
        let start = self.tmp("start", Elem::I64, CExpr::mul(who, per.clone()));
        let end = self.tmp(
            "end",
            Elem::I64,
            CExpr::call("min", vec![CExpr::add(start.clone(), per), n.clone()]),
        );
        (start, end)
    }

    /// A `for` loop over `0..bound`, its body written by `body` with the index.
    pub(crate) fn for_loop(
        &mut self,
        hint: &str,
        bound: CExpr,
        comment: Option<String>,
        body: &mut dyn FnMut(&mut Self, CExpr) -> Res<()>,
    ) -> Res<()> {
        let var = self.fresh_name(hint);
        self.push();
        body(self, CExpr::Var(var.clone()))?;
        let cmds = self.pop();
        self.emit(Cmd::For { var, bound, body: cmds, comment });
        Ok(())
    }

    pub(crate) fn checks(&self) -> bool {
        self.tr.options.checks
    }

    pub(crate) fn error_site(&mut self, check: RuntimeCheck<'_>, origin: Option<&Origin>) -> u32 {
        self.tr.error_site(check, origin)
    }

    /// Fails with `code` unless `ok`; a work-item that may return does so.
    pub(crate) fn check(&mut self, ok: CExpr, code: u32, a: CExpr, b: CExpr) {
        if ok.as_int().is_some_and(|v| v != 0) {
            return;
        }
        let mut then_cmds = vec![Cmd::Fail { code, a, b }];
        if self.can_return {
            then_cmds.push(Cmd::Exit);
        }
        self.emit(Cmd::If { cond: CExpr::not(ok), then_cmds, else_cmds: Vec::new() });
    }

    /// `0 <= i < n`, checked (an index error names `array`); the index to read or write
    /// at. A work-item that cannot return after a failed check (a kernel with barriers)
    /// goes on at the index clamped into the array, so that it never touches memory
    /// outside it (the first failure is still the error reported).
    fn check_index(&mut self, i: &CExpr, n: &CExpr, array: &str, origin: Option<&Origin>) -> CExpr {
        if self.checks() && !self.in_range.iter().any(|(j, bound)| j == i && bound == n) {
            let code = self.error_site(RuntimeCheck::Index { array }, origin);
            let ok = in_range(i.clone(), n.clone());
            self.check(ok, code, i.clone(), n.clone());
            if !self.can_return {
                let last =
                    CExpr::call("max", vec![CExpr::sub(n.clone(), CExpr::Int(1)), CExpr::Int(0)]);
                let below = CExpr::call("min", vec![i.clone(), last]);
                let clamped = CExpr::call("max", vec![below, CExpr::Int(0)]);
                return self.tmp("i", Elem::I64, clamped);
            }
        }
        i.clone()
    }

    pub(crate) fn comment(&self, origin: Option<&Origin>) -> Option<String> {
        origin.and_then(|o| (self.tr.position)(o)).map(|p| strip_column(&p))
    }

    // ---- parameters ----

    pub(crate) fn buffer_param(&mut self, buf: Var, elem: Elem) -> Rc<str> {
        if let Some(name) = self.buffers.get(&buf) {
            return name.clone();
        }
        let hint = self.tr.var_names.get(buf.0 as usize).cloned().unwrap_or_default();
        let name = self.fresh_name(if hint.is_empty() { "buf" } else { &hint });
        self.params.push((name.to_string(), ParamKind::Buffer(elem)));
        let what = if hint.is_empty() {
            "a buffer the host allocates, passed to the kernel".to_owned()
        } else {
            format!("a buffer the host allocates for `{hint}`, passed to the kernel")
        };
        self.param_notes.push((name.to_string(), what));
        if let Some(len) = self.tr.static_lens.get(&buf) {
            self.buffer_lens.push((name.to_string(), *len));
        }
        self.args.push(Arg::Buffer(buf));
        self.buffers.insert(buf, name.clone());
        name
    }

    /// A work-group array of `len` elements (a `__local` argument); `why` says what it
    /// holds.
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
            Expr::Lit { elem: e, bits } if *e == elem => {
                return literal(weft_plan::lit(*e, *bits));
            }
            _ => {}
        }
        if let Some((_, _, c)) = self.scalars.iter().find(|(x, el, _)| x == e && *el == elem) {
            return c.clone();
        }
        let hint = match e {
            Expr::Var(v) => self.tr.var_names.get(v.0 as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        let name = self.fresh_name(if hint.is_empty() { "s" } else { &hint });
        self.params.push((name.to_string(), ParamKind::Scalar(elem)));
        self.args.push(Arg::Scalar { value: e.clone(), elem });
        let c = CExpr::Var(name);
        self.scalars.push((e.clone(), elem, c.clone()));
        c
    }

    pub(crate) fn import_index(&mut self, e: &Expr) -> CExpr {
        self.import_expr(e, Elem::I64)
    }

    pub(crate) fn import_arr(&mut self, a: &HArr) -> KArr {
        let ptr = self.buffer_param(a.buf, a.elem);
        KArr {
            ptr,
            elem: a.elem,
            layout: Layout {
                offset: self.import_index(&a.layout.offset),
                strides: a.layout.strides.iter().map(|s| self.import_index(s)).collect(),
                shape: a.layout.shape.iter().map(|s| self.import_index(s)).collect(),
            },
        }
    }

    pub(crate) fn import_val(&mut self, v: &HVal) -> KVal {
        match v {
            HVal::Scalar(HScalar::Host(e, elem)) => KVal::Scalar(self.import_expr(e, *elem), *elem),
            HVal::Scalar(HScalar::Device(buf, elem)) => {
                let ptr = self.buffer_param(*buf, *elem);
                KVal::Scalar(CExpr::load(&ptr, CExpr::Int(0)), *elem)
            }
            HVal::Arr(a) => KVal::Arr(self.import_arr(a)),
            HVal::Tuple(parts) => KVal::Tuple(parts.iter().map(|p| self.import_val(p)).collect()),
        }
    }

    // ---- values ----

    pub(crate) fn bind(&mut self, var: VarId, value: KVal) {
        self.env.insert(var, value);
    }

    pub(crate) fn lookup(&mut self, var: VarId) -> Res<KVal> {
        if let Some(v) = self.env.get(&var) {
            return Ok(v.clone());
        }
        let host = self.tr.lookup(var)?;
        let v = self.import_val(&host);
        self.env.insert(var, v.clone());
        Ok(v)
    }

    pub(crate) fn atom(&mut self, atom: &Atom) -> Res<KVal> {
        match atom {
            Atom::Var(v) => self.lookup(*v),
            Atom::Const(s) => Ok(KVal::Scalar(literal(*s), s.ty())),
        }
    }

    pub(crate) fn scalar(&mut self, atom: &Atom) -> Res<(CExpr, Elem)> {
        match self.atom(atom)? {
            KVal::Scalar(e, elem) => Ok((e, elem)),
            _ => Err(LowerError::internal("expected a scalar in a kernel")),
        }
    }

    pub(crate) fn int(&mut self, atom: &Atom) -> Res<CExpr> {
        let (e, elem) = self.scalar(atom)?;
        Ok(if elem == Elem::I64 { e } else { CExpr::cast(Elem::I64, e) })
    }

    pub(crate) fn array(&mut self, atom: &Atom) -> Res<KVal> {
        match self.atom(atom)? {
            v @ (KVal::Arr(_) | KVal::Tuple(_)) => Ok(v),
            KVal::Scalar(..) => Err(LowerError::internal("expected an array in a kernel")),
        }
    }

    /// A memory size as a kernel expression.
    pub(crate) fn size(&mut self, size: &MemSize) -> Res<CExpr> {
        let mut total = CExpr::Int(0);
        for term in size.terms() {
            let mut product = CExpr::Int(term.coeff());
            for atom in term.monomial().atoms() {
                let factor = match atom {
                    weft_size::Atom::Var(MemVar::Core(v)) => match self.lookup(*v)? {
                        KVal::Scalar(e, Elem::I64) => e,
                        KVal::Scalar(e, _) => CExpr::cast(Elem::I64, e),
                        _ => return Err(LowerError::internal("a size that is not a scalar")),
                    },
                    weft_size::Atom::Var(MemVar::Exist(x)) => self.exist(*x)?,
                    weft_size::Atom::Var(MemVar::Thread(_)) => {
                        return Err(LowerError::internal("a core thread index in the GPU IR"));
                    }
                    weft_size::Atom::Div(p, q) => {
                        let p = self.size(p)?;
                        let q = self.size(q)?;
                        CExpr::bin(COp::Div, p, q)
                    }
                };
                product = CExpr::mul(product, factor);
            }
            total = CExpr::add(total, product);
        }
        Ok(total)
    }

    fn exist(&mut self, x: ExistId) -> Res<CExpr> {
        if let Some(e) = self.exists.get(&x) {
            return Ok(e.clone());
        }
        let host = self.tr.exists.get(&x).cloned().ok_or_else(|| {
            LowerError::internal("an existential component with no value in a kernel")
        })?;
        let e = self.import_index(&host);
        self.exists.insert(x, e.clone());
        Ok(e)
    }

    pub(crate) fn core_size(&mut self, size: &weft_core::CoreSize) -> Res<CExpr> {
        self.size(&weft_mem::mem_size(size))
    }

    pub(crate) fn layout(&mut self, lmad: &MemLmad) -> Res<Layout<CExpr>> {
        let offset = self.size(&lmad.offset)?;
        let mut strides = Vec::new();
        let mut shape = Vec::new();
        for dim in &lmad.dims {
            strides.push(self.size(&dim.stride)?);
            shape.push(self.size(&dim.shape)?);
        }
        Ok(Layout { offset, strides, shape })
    }

    /// The pointer of a block: an array of the kernel's own (private or local memory),
    /// or a buffer of the host's.
    pub(crate) fn block_ptr(&mut self, block: MemBlockId, hint: &str) -> Res<Rc<str>> {
        if let Some(ptr) = self.blocks.get(&block) {
            return Ok(ptr.clone());
        }
        let mem = self.tr.mem;
        let data = &mem.blocks[block];
        let elems = match &data.binding {
            BlockBinding::Alloc { elems, .. } | BlockBinding::ResultAlloc { elems } => {
                Some(elems.clone())
            }
            BlockBinding::Param { .. } | BlockBinding::Existential { .. } => None,
        };
        let ptr = match (mem.storage.get(block), elems) {
            (Some(Storage::Private), Some(elems)) => {
                let len = elems.as_constant().ok_or_else(|| {
                    LowerError::internal("a private array whose size is not a constant")
                })?;
                let name = self.fresh_name(hint);
                self.emit(Cmd::Array {
                    name: name.clone(),
                    elem: data.elem,
                    sharing: Sharing::WorkItem,
                    len: len.max(1),
                    why: Rc::from("an array of the work-item's own (its size is a small constant)"),
                });
                name
            }
            (Some(Storage::Local { .. }), Some(elems)) => {
                let len = self.tr.mem_size(&elems)?;
                self.local_param(
                    hint,
                    data.elem,
                    len,
                    "an array the work-group computes and shares (the body of a group SegOp)",
                )
            }
            (Some(Storage::Variant { .. }), _) => {
                return Err(LowerError::unsupported(
                    "an array whose size is known only inside the kernel",
                    self.tr.current_origin.as_ref(),
                ));
            }
            _ => match self.tr.blocks.get(&block) {
                Some(&buf) => {
                    // A buffer of the host's: its origin is the host's to record.
                    let ptr = self.buffer_param(buf, data.elem);
                    self.blocks.insert(block, ptr.clone());
                    return Ok(ptr);
                }
                None => {
                    return Err(LowerError::internal(format!(
                        "block {block:?} ({:?} {}, {:?}) of `{hint}` has no storage in the kernel",
                        data.binding,
                        match &data.binding {
                            BlockBinding::Existential { var } =>
                                self.tr.f.vars[*var].name.to_string(),
                            _ => String::new(),
                        },
                        mem.storage.get(block)
                    )));
                }
            },
        };
        // The kernel's own array holds the value of the expression being computed (the
        // editor's hovers and inlay hints show its address space there).
        if let Some(origin) = &self.at {
            self.ptr_origins.push((ptr.to_string(), origin.clone()));
        }
        self.blocks.insert(block, ptr.clone());
        Ok(ptr)
    }

    /// An array's value from its memory.
    pub(crate) fn array_of(&mut self, info: &ArrayMem, hint: &str) -> Res<KArr> {
        let ptr = self.block_ptr(info.block, hint)?;
        let elem = self.tr.mem.blocks[info.block].elem;
        Ok(KArr { ptr, elem, layout: self.layout(&info.lmad)? })
    }

    /// The value of an array-typed binding from its memory (a tuple of arrays for an
    /// array of tuples).
    pub(crate) fn value_of(&mut self, info: &MemInfo, hint: &str) -> Res<KVal> {
        match info {
            MemInfo::Array(a) => Ok(KVal::Arr(self.array_of(a, hint)?)),
            MemInfo::Tuple(items) => {
                Ok(KVal::Tuple(items.iter().map(|i| self.value_of(i, hint)).collect::<Res<_>>()?))
            }
            MemInfo::Scalar => Err(LowerError::internal("a binding with no memory")),
        }
    }

    /// The memory of `var` in the memory IR.
    pub(crate) fn memory(&self, var: VarId) -> MemInfo {
        self.tr.mem.bindings.get(var).cloned().unwrap_or_default()
    }

    /// Binds an existential array (a parameter whose memory is chosen at run time) to
    /// `value`: its block is `value`'s pointer, its LMAD components `value`'s.
    pub(crate) fn bind_existential(&mut self, info: &MemInfo, value: &KVal) {
        match (info, value) {
            (MemInfo::Array(a), KVal::Arr(v)) => {
                self.blocks.entry(a.block).or_insert_with(|| v.ptr.clone());
                let bind = |size: &MemSize, e: &CExpr, exists: &mut FxHashMap<ExistId, CExpr>| {
                    if let Some(MemVar::Exist(x)) = size.as_var() {
                        exists.insert(*x, e.clone());
                    }
                };
                bind(&a.lmad.offset, &v.layout.offset, &mut self.exists);
                for (dim, s) in a.lmad.dims.iter().zip(&v.layout.strides) {
                    bind(&dim.stride, s, &mut self.exists);
                }
            }
            (MemInfo::Tuple(items), KVal::Tuple(values)) => {
                for (i, v) in items.iter().zip(values) {
                    self.bind_existential(i, v);
                }
            }
            _ => {}
        }
    }

    // ---- reading and writing memory ----

    /// The element (a scalar, or a tuple for an array of tuples) at a full index.
    pub(crate) fn load(&mut self, arr: &KVal, index: &[CExpr]) -> Res<KVal> {
        match arr {
            KVal::Arr(a) => {
                if index.len() != a.shape().len() {
                    return Err(LowerError::internal("a load with a partial index"));
                }
                let address = a.address(index);
                if let Some(lane) = self.vector_lane(&a.ptr, a.elem, &address) {
                    return Ok(KVal::Scalar(CExpr::Var(lane), a.elem));
                }
                Ok(KVal::Scalar(CExpr::load(&a.ptr, address), a.elem))
            }
            KVal::Tuple(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.load(p, index)).collect::<Res<_>>()?))
            }
            KVal::Scalar(..) => Err(LowerError::internal("indexing a scalar")),
        }
    }

    /// Stores `value` at `dest[prefix..]`: a scalar or tuple at a full index, an array
    /// element by element below `prefix`.
    pub(crate) fn store(&mut self, dest: &KVal, prefix: &[CExpr], value: &KVal) -> Res<()> {
        match (dest, value) {
            (KVal::Arr(d), KVal::Scalar(v, _)) => {
                if prefix.len() != d.shape().len() {
                    return Err(LowerError::internal("a scalar stored at a partial index"));
                }
                let v = if d.elem == Elem::Bool {
                    CExpr::cast(Elem::Bool, v.clone())
                } else {
                    v.clone()
                };
                self.emit(Cmd::Store { ptr: d.ptr.clone(), index: d.address(prefix), value: v });
                Ok(())
            }
            (KVal::Tuple(ds), KVal::Tuple(vs)) if ds.len() == vs.len() => {
                for (d, v) in ds.iter().zip(vs) {
                    self.store(d, prefix, v)?;
                }
                Ok(())
            }
            (_, KVal::Arr(_) | KVal::Tuple(_)) => {
                let Some(shape) = value.shape() else {
                    return Err(LowerError::internal("storing a tuple into a non-tuple array"));
                };
                let Some(n) = shape.first().cloned() else {
                    return Err(LowerError::internal("a rank-0 array"));
                };
                let (dest, value) = (dest.clone(), value.clone());
                let prefix = prefix.to_vec();
                self.for_loop("i", n, None, &mut |k, i| {
                    let mut at = prefix.clone();
                    at.push(i.clone());
                    let elem = k.row(&value, &i)?;
                    k.store(&dest, &at, &elem)
                })
            }
            _ => Err(LowerError::internal("a value stored into a non-array")),
        }
    }

    /// Row `i` of an array value: a scalar when the array has one dimension, else the
    /// row as an array with the same pointer (indexing the outer dimension of an
    /// evaluated LMAD: the address computation, not a layout rule).
    pub(crate) fn row(&mut self, value: &KVal, i: &CExpr) -> Res<KVal> {
        match value {
            KVal::Arr(a) if a.shape().len() == 1 => self.load(value, std::slice::from_ref(i)),
            KVal::Arr(a) => Ok(KVal::Arr(KArr {
                ptr: a.ptr.clone(),
                elem: a.elem,
                layout: Layout {
                    offset: CExpr::add(
                        a.layout.offset.clone(),
                        CExpr::mul(i.clone(), a.layout.strides[0].clone()),
                    ),
                    strides: a.layout.strides[1..].to_vec(),
                    shape: a.layout.shape[1..].to_vec(),
                },
            })),
            KVal::Tuple(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.row(p, i)).collect::<Res<_>>()?))
            }
            KVal::Scalar(..) => Err(LowerError::internal("a row of a scalar")),
        }
    }

    /// Copies the array `src` into `dest` (same shape), element by element; nothing when
    /// they are the same memory.
    pub(crate) fn copy(&mut self, dest: &KVal, src: &KVal) -> Res<()> {
        if same_memory(dest, src) {
            return Ok(());
        }
        self.store(dest, &[], src)
    }

    /// Fresh variables for a scalar or tuple value.
    pub(crate) fn declare_like(&mut self, v: &KVal, hint: &str) -> Res<KVal> {
        Ok(match v {
            KVal::Scalar(_, elem) => KVal::Scalar(self.decl(hint, *elem, None), *elem),
            KVal::Tuple(parts) => {
                KVal::Tuple(parts.iter().map(|p| self.declare_like(p, hint)).collect::<Res<_>>()?)
            }
            KVal::Arr(_) => return Err(LowerError::internal("declaring an array variable")),
        })
    }

    /// Assigns scalar leaves of `value` to the variables of `vars`.
    pub(crate) fn assign(&mut self, vars: &KVal, value: &KVal) -> Res<()> {
        match (vars, value) {
            (KVal::Scalar(CExpr::Var(name), _), KVal::Scalar(v, _)) => {
                if !matches!(v, CExpr::Var(n) if n == name) {
                    self.emit(Cmd::Assign { name: name.clone(), value: v.clone() });
                }
                Ok(())
            }
            (KVal::Tuple(vs), KVal::Tuple(xs)) if vs.len() == xs.len() => {
                for (v, x) in vs.iter().zip(xs) {
                    self.assign(v, x)?;
                }
                Ok(())
            }
            (KVal::Arr(_) | KVal::Tuple(_), KVal::Arr(_) | KVal::Tuple(_)) => {
                self.copy(vars, value)
            }
            _ => Err(LowerError::internal("assigning a value of another shape")),
        }
    }

    /// `vars := value` where both are scalars or tuples of scalars, through temporaries
    /// when `value` reads `vars` (a loop's new accumulator computed from the old).
    pub(crate) fn assign_staged(&mut self, vars: &KVal, value: &KVal) -> Res<()> {
        let mut leaves = Vec::new();
        value.scalars(&mut leaves);
        let staged: Vec<(CExpr, Elem)> =
            leaves.into_iter().map(|(e, elem)| (self.tmp("next", elem, e), elem)).collect();
        let staged = rebuild(value, &mut staged.into_iter());
        self.assign(vars, &staged)
    }

    // ---- sequential code ----

    /// Runs a block; its results.
    pub(crate) fn block(&mut self, block: BlockId) -> Res<Vec<KVal>> {
        let f = self.tr.f;
        for stmt in &f.blocks[block].stmts {
            self.stmt(stmt)?;
        }
        f.blocks[block].results.iter().map(|a| self.atom(a)).collect()
    }

    /// Runs a block with the variables of `given` already known (their statements are
    /// not run) and the statements `skip` left out; its result (a tuple for several).
    pub(crate) fn block_given(
        &mut self,
        block: BlockId,
        given: &FxHashMap<VarId, KVal>,
        skip: &[ExpId],
    ) -> Res<KVal> {
        let f = self.tr.f;
        for stmt in &f.blocks[block].stmts {
            if skip.contains(&stmt.exp) {
                continue;
            }
            match stmt.vars.as_slice() {
                [v] if given.contains_key(v) => self.bind(*v, given[v].clone()),
                _ => self.stmt(stmt)?,
            }
        }
        let mut results: Vec<KVal> =
            f.blocks[block].results.iter().map(|a| self.atom(a)).collect::<Res<_>>()?;
        Ok(if results.len() == 1 { results.remove(0) } else { KVal::Tuple(results) })
    }

    /// A block with one result.
    pub(crate) fn block1(&mut self, block: BlockId) -> Res<KVal> {
        let mut results = self.block(block)?;
        match results.len() {
            1 => Ok(results.remove(0)),
            _ => Ok(KVal::Tuple(results)),
        }
    }

    /// Applies a lambda of the GPU IR to its arguments (a sequential combinator's
    /// lambda takes two values; a SegOp's operator the scalar leaves of each).
    pub(crate) fn apply(&mut self, lambda: &weft_opt::Lambda, args: &[KVal]) -> Res<KVal> {
        if args.len() != lambda.params.len() {
            return Err(LowerError::internal("a lambda applied to the wrong number of values"));
        }
        for (&p, v) in lambda.params.iter().zip(args) {
            self.bind_param(p, v.clone());
        }
        let results = self.block(lambda.body)?;
        Ok(match results.len() {
            1 => results.into_iter().next().unwrap_or(KVal::Tuple(Vec::new())),
            _ => KVal::Tuple(results),
        })
    }

    pub(crate) fn stmt(&mut self, stmt: &Stmt) -> Res<()> {
        let f = self.tr.f;
        let origin = self.tr.origin(stmt.exp);
        if let Some(o) = &origin {
            let role = match &f.exps[stmt.exp] {
                Exp::Seq(_) | Exp::Loop { .. } => "@seq: a sequential loop in each work-item",
                _ => "computed in each work-item",
            };
            self.note(o, role);
        }
        let at = origin.clone().or_else(|| self.at.clone());
        let outer = std::mem::replace(&mut self.at, at);
        let result = self.stmt_unplaced(stmt, origin.as_ref());
        self.at = outer;
        result.map_err(|e| e.placed(origin))
    }

    fn stmt_unplaced(&mut self, stmt: &Stmt, origin: Option<&Origin>) -> Res<()> {
        let f = self.tr.f;
        match &f.exps[stmt.exp] {
            Exp::Basic(exp) => {
                let var = stmt.vars[0];
                let v = self.basic(var, stmt.exp, exp, origin)?;
                self.bind(var, v);
            }
            Exp::If { cond, then_branch, else_branch } => {
                let (c, _) = self.scalar(cond)?;
                self.if_(stmt, c, *then_branch, *else_branch)?;
            }
            Exp::Loop { param, init, form, body } => {
                self.loop_(stmt, *param, init, form, *body, origin)?;
            }
            Exp::Seq(soac) => {
                let var = stmt.vars[0];
                let v = self.seq(var, stmt.exp, soac, origin)?;
                self.bind(var, v);
            }
            Exp::Seg(seg) => self.thread_seg(stmt, seg, origin)?,
            Exp::Manifest { .. } | Exp::Version { .. } => {
                return Err(LowerError::internal("host code inside a kernel"));
            }
        }
        Ok(())
    }

    /// The array a statement binds, where the memory IR puts it.
    fn fresh(&mut self, var: VarId) -> Res<KVal> {
        let info = self.memory(var);
        let hint = self.tr.f.vars[var].name.to_string();
        self.value_of(&info, &hint)
    }

    #[expect(clippy::too_many_lines, reason = "one arm per expression kind")]
    fn basic(
        &mut self,
        var: VarId,
        _exp_id: ExpId,
        exp: &weft_core::Exp,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        use weft_core::Exp as C;
        let f = self.tr.f;
        let hint = f.vars[var].name.to_string();
        let ty = f.vars[var].ty.clone();
        match exp {
            C::Atom(a) => {
                let v = self.atom(a)?;
                self.bind_unbound_sizes(&ty, &v);
                Ok(v)
            }
            C::Size(s) => Ok(KVal::Scalar(self.core_size(s)?, Elem::I64)),
            C::BinOp { op, ty: elem, lhs, rhs } => {
                let (a, _) = self.scalar(lhs)?;
                let (b, _) = self.scalar(rhs)?;
                let (value, out) = {
                    let tr = &mut *self.tr;
                    crate::scalar::binop(*op, *elem, a, b, &mut |check| {
                        tr.error_site(check, origin)
                    })
                };
                let value = if out == Elem::F16 { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, out, value), out))
            }
            C::UnOp { op, ty: elem, operand } => {
                let (a, _) = self.scalar(operand)?;
                let value = unop(*op, *elem, a);
                let value = if *elem == Elem::F16 { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, *elem, value), *elem))
            }
            C::Convert { from, to, operand } => {
                let (a, _) = self.scalar(operand)?;
                let value = convert(*from, *to, a);
                Ok(KVal::Scalar(self.tmp(&hint, *to, value), *to))
            }
            C::Math { ty: elem, func, args } => {
                let mut cargs = Vec::new();
                for a in args {
                    cargs.push(self.scalar(a)?.0);
                }
                let (value, out) = math(*elem, *func, cargs);
                let value =
                    if out == Elem::F16 && !func.is_constant() { round_f16(value) } else { value };
                Ok(KVal::Scalar(self.tmp(&hint, out, value), out))
            }
            C::Tuple(parts) => {
                Ok(KVal::Tuple(parts.iter().map(|p| self.atom(p)).collect::<Res<_>>()?))
            }
            C::Proj { tuple, index } => match self.atom(tuple)? {
                KVal::Tuple(parts) => parts
                    .get(*index as usize)
                    .cloned()
                    .ok_or_else(|| LowerError::internal("projection out of range")),
                _ => Err(LowerError::internal("projection of a non-tuple")),
            },
            C::Flatten(a) if super::host::copied(&self.memory(var)) => {
                let src = self.array(a)?;
                let out = self.fresh(var)?;
                let shape = out.shape().unwrap_or_default();
                let dest = out.clone();
                let n = shape.iter().cloned().fold(CExpr::Int(1), CExpr::mul);
                self.for_loop("i", n, None, &mut |k, flat| {
                    let idx = super::host::unflatten_index(k, &flat, &shape);
                    let from = super::host::flatten_source(&src, &idx);
                    let v = k.load(&src, &from)?;
                    k.store(&dest, &idx, &v)
                })?;
                Ok(out)
            }
            C::Zip(_) | C::Unzip(_) | C::Transpose(_) | C::Reverse(_) | C::Flatten(_) => {
                self.fresh(var)
            }
            C::Index { array, items } => self.index(var, array, items, &ty, origin),
            C::Dim { array, dim } => {
                let a = self.array(array)?;
                let shape = a.shape().unwrap_or_default();
                shape
                    .get(*dim as usize)
                    .cloned()
                    .map(|n| KVal::Scalar(n, Elem::I64))
                    .ok_or_else(|| LowerError::internal("a dimension out of range"))
            }
            C::Iota { size } => {
                let n = self.int(size)?;
                self.check_count(&n, "iota", origin);
                let out = self.fresh(var)?;
                let elem = match &out {
                    KVal::Arr(a) => a.elem,
                    _ => Elem::I64,
                };
                let dest = out.clone();
                let comment = self.comment(origin);
                self.for_loop("i", n, comment, &mut |k, i| {
                    let value =
                        if elem == Elem::I64 { i.clone() } else { CExpr::cast(elem, i.clone()) };
                    k.store(&dest, &[i], &KVal::Scalar(value, elem))
                })?;
                Ok(out)
            }
            C::Replicate { size, value } => {
                let n = self.int(size)?;
                self.check_count(&n, "replicate", origin);
                let info = self.memory(var);
                let v = self.atom(value)?;
                if info.leaves().iter().all(|a| a.how == weft_mem::Provenance::View) {
                    return self.value_of(&info, &hint);
                }
                let out = self.value_of(&info, &hint)?;
                let dest = out.clone();
                let comment = self.comment(origin);
                self.for_loop("i", n, comment, &mut |k, i| k.store(&dest, &[i], &v))?;
                Ok(out)
            }
            C::ArrayLit { elems, .. } => {
                let out = self.fresh(var)?;
                for (k, e) in elems.iter().enumerate() {
                    let v = self.atom(e)?;
                    self.store(&out, &[CExpr::Int(k as i64)], &v)?;
                }
                Ok(out)
            }
            C::Concat(a, b) => {
                let a = self.array(a)?;
                let b = self.array(b)?;
                let out = self.fresh(var)?;
                let na = a.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                let nb = b.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                let dest = out.clone();
                self.for_loop("i", na.clone(), None, &mut |k, i| {
                    let x = k.row(&a, &i)?;
                    k.store(&dest, &[i], &x)
                })?;
                let dest = out.clone();
                self.for_loop("i", nb, None, &mut |k, i| {
                    let x = k.row(&b, &i)?;
                    let at = CExpr::add(na.clone(), i);
                    k.store(&dest, &[at], &x)
                })?;
                Ok(out)
            }
            C::Materialise { value, .. } => {
                let v = self.atom(value)?;
                if matches!(v, KVal::Scalar(..)) {
                    return Ok(v);
                }
                let out = self.fresh(var)?;
                self.copy(&out, &v)?;
                Ok(out)
            }
            C::Update { array, indices, value } => {
                let name = self.tr.var_name(*array);
                let src = self.array(array)?;
                let shape = src.shape().unwrap_or_default();
                let mut at = Vec::new();
                for (dim, index) in indices.iter().enumerate() {
                    let i = self.int(index)?;
                    let i = self.tmp("i", Elem::I64, i);
                    let n = shape.get(dim).cloned().unwrap_or(CExpr::Int(0));
                    let i = self.check_index(&i, &n, &name, origin);
                    at.push(i);
                }
                let v = self.atom(value)?;
                let out = self.fresh(var)?;
                self.copy(&out, &src)?;
                self.store(&out, &at, &v)?;
                Ok(out)
            }
            C::Coerce { value, ty: target } => {
                let name = self.tr.var_name(*value);
                let v = self.atom(value)?;
                if let Some(shape) = v.shape() {
                    let mut t = target;
                    let mut d = 0;
                    while let Type::Array { size, elem } = t {
                        if d >= shape.len() {
                            break;
                        }
                        if let Some(sv) = size.as_var()
                            && self.unbound(*sv)
                        {
                            self.bind(*sv, KVal::Scalar(shape[d].clone(), Elem::I64));
                        }
                        let want = self.core_size(size)?;
                        if want != shape[d] && self.checks() {
                            let vars = &f.vars;
                            let size =
                                size.display(&|v: &VarId| vars[*v].name.to_string()).to_string();
                            let check = RuntimeCheck::Coerce { value: &name, dim: d, size: &size };
                            let code = self.error_site(check, origin);
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
                    return self.fresh(var);
                }
                Ok(v)
            }
            C::Unflatten { rows, cols, array } => {
                let name = self.tr.var_name(*array);
                let a = self.array(array)?;
                let r = self.int(rows)?;
                let c = self.int(cols)?;
                let n = a.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                if self.checks() {
                    let code = self.error_site(RuntimeCheck::Unflatten { array: &name }, origin);
                    let ok = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Ge, r.clone(), CExpr::Int(0)),
                        CExpr::bin(COp::Eq, CExpr::mul(r, c.clone()), n.clone()),
                    );
                    self.check(ok, code, n, c);
                }
                self.fresh(var)
            }
            C::Split { chunk, array } => {
                let name = self.tr.var_name(*array);
                let a = self.array(array)?;
                let k = self.int(chunk)?;
                let n = a.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                if self.checks() {
                    let code = self.error_site(RuntimeCheck::Split { array: &name }, origin);
                    let positive = CExpr::bin(COp::Gt, k.clone(), CExpr::Int(0));
                    let divisor = CExpr::select(positive.clone(), k.clone(), CExpr::Int(1));
                    let ok = CExpr::bin(
                        COp::And,
                        positive,
                        CExpr::bin(
                            COp::Eq,
                            CExpr::bin(COp::Rem, n.clone(), divisor),
                            CExpr::Int(0),
                        ),
                    );
                    self.check(ok, code, n, k);
                }
                self.fresh(var)
            }
            C::Take { count, array } | C::Drop { count, array } => {
                let what = if matches!(exp, C::Take { .. }) { "take" } else { "drop" };
                let name = self.tr.var_name(*array);
                let a = self.array(array)?;
                let k = self.int(count)?;
                let n = a.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                if self.checks() {
                    let code = self.error_site(RuntimeCheck::Count { what, array: &name }, origin);
                    let ok = CExpr::bin(
                        COp::And,
                        CExpr::bin(COp::Le, CExpr::Int(0), k.clone()),
                        CExpr::bin(COp::Le, k.clone(), n.clone()),
                    );
                    self.check(ok, code, k, n);
                }
                self.fresh(var)
            }
            C::Call { .. } => Err(LowerError::unsupported(
                "a call the middle end did not inline (a size parameter no argument's shape binds)",
                origin,
            )),
            C::Map { .. }
            | C::Reduce { .. }
            | C::Scan { .. }
            | C::Generate { .. }
            | C::Scatter { .. }
            | C::ReduceByIndex { .. }
            | C::If { .. }
            | C::Loop { .. } => Err(LowerError::internal("nested code in a basic expression")),
        }
    }

    fn check_count(&mut self, n: &CExpr, what: &str, origin: Option<&Origin>) {
        if self.checks() {
            let code = self.error_site(RuntimeCheck::NegativeSize { what }, origin);
            let ok = CExpr::bin(COp::Ge, n.clone(), CExpr::Int(0));
            self.check(ok, code, n.clone(), CExpr::Int(0));
        }
    }

    /// Whether a size variable has no value yet (a size only a value knows).
    fn unbound(&self, var: VarId) -> bool {
        !self.env.contains_key(&var) && !self.tr.env.contains_key(&var)
    }

    /// Binds the size variables of `ty` that nothing bound yet from `value`'s shape.
    pub(crate) fn bind_unbound_sizes(&mut self, ty: &Type, value: &KVal) {
        let Some(shape) = value.shape() else { return };
        let mut t = ty;
        let mut d = 0;
        while let Type::Array { size, elem } = t {
            if let (Some(sv), Some(n)) = (size.as_var(), shape.get(d))
                && self.unbound(*sv)
            {
                self.bind(*sv, KVal::Scalar(n.clone(), Elem::I64));
            }
            t = elem;
            d += 1;
        }
    }

    /// `array[items]`: the checks, then an element (loaded) or a view (the memory IR's).
    fn index(
        &mut self,
        var: VarId,
        array: &Atom,
        items: &[IndexItem],
        ty: &Type,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        let name = self.tr.var_name(*array);
        let arr = self.array(array)?;
        let shape = arr.shape().unwrap_or_default();
        let mut fixed = Vec::new();
        let mut lens = Vec::new();
        for (dim, item) in items.iter().enumerate() {
            let n = shape.get(dim).cloned().unwrap_or(CExpr::Int(0));
            match item {
                IndexItem::Fix(i) => {
                    let i = self.int(i)?;
                    let i = self.tmp("i", Elem::I64, i);
                    let i = self.check_index(&i, &n, &name, origin);
                    fixed.push(i);
                }
                IndexItem::Slice { start, end, stride } => {
                    let stride = match stride {
                        Some(s) => self.int(s)?,
                        None => CExpr::Int(1),
                    };
                    let stride = self.tmp("stride", Elem::I64, stride);
                    let start = match start {
                        Some(s) => Some(self.int(s)?),
                        None => None,
                    };
                    let end = match end {
                        Some(e) => Some(self.int(e)?),
                        None => None,
                    };
                    let len = self.slice_len(&name, n, start, end, stride, origin);
                    lens.push(len);
                }
            }
        }
        let full = lens.is_empty() && fixed.len() == shape.len();
        if full {
            let v = self.load(&arr, &fixed)?;
            let hint = self.tr.f.vars[var].name.to_string();
            return Ok(self.bind_loaded(&hint, v));
        }
        // The result type's sizes of sliced dimensions are what the slices computed.
        let mut t = ty;
        let mut k = 0;
        while let Type::Array { size, elem } = t {
            if let (Some(sv), Some(len)) = (size.as_var(), lens.get(k))
                && self.unbound(*sv)
            {
                self.bind(*sv, KVal::Scalar(len.clone(), Elem::I64));
            }
            t = elem;
            k += 1;
        }
        self.fresh(var)
    }

    /// The value with every scalar leaf in a private variable: loads happen here, not
    /// where the value is used (after a store to the same place, say).
    pub(crate) fn bind_loaded(&mut self, hint: &str, v: KVal) -> KVal {
        match v {
            KVal::Scalar(e, elem) => KVal::Scalar(self.tmp(hint, elem, e), elem),
            KVal::Tuple(parts) => {
                KVal::Tuple(parts.into_iter().map(|p| self.bind_loaded(hint, p)).collect())
            }
            other => other,
        }
    }

    /// The length of a slice of a dimension of `n`, after checking its bounds (the
    /// interpreter's rules, `SliceBounds`).
    fn slice_len(
        &mut self,
        name: &str,
        n: CExpr,
        start: Option<CExpr>,
        end: Option<CExpr>,
        stride: CExpr,
        origin: Option<&Origin>,
    ) -> CExpr {
        let bounds = super::SliceBounds::new(&n, start, end, &stride);
        let bounds = super::SliceBounds {
            start: self.tmp("start", Elem::I64, bounds.start),
            end: self.tmp("end", Elem::I64, bounds.end),
        };
        if self.checks() {
            let code = self.error_site(RuntimeCheck::Slice { array: name }, origin);
            let ok = bounds.valid(&n, &stride);
            self.check(ok, code, bounds.start.clone(), n);
        }
        let len = bounds.len(&stride);
        self.tmp("len", Elem::I64, len)
    }

    /// An `if` in a kernel: scalars through variables assigned in each branch, arrays
    /// copied into the memory the memory IR gives the result (nothing when a branch's
    /// result is already there).
    fn if_(&mut self, stmt: &Stmt, cond: CExpr, then_b: BlockId, else_b: BlockId) -> Res<()> {
        let f = self.tr.f;
        // The results' memory exists before either branch writes it.
        let mut outs = Vec::new();
        for &var in &stmt.vars {
            let info = self.memory(var);
            let hint = f.vars[var].name.to_string();
            outs.push(if info.leaves().is_empty() {
                None
            } else {
                Some(self.value_of(&info, &hint)?)
            });
        }
        let mut branch_values = Vec::new();
        let mut bodies = Vec::new();
        for branch in [then_b, else_b] {
            self.push();
            let values = self.block(branch)?;
            bodies.push(self.pop());
            branch_values.push(values);
        }
        // Scalars: one variable per leaf, declared before the `if`.
        let mut vars: Vec<Option<KVal>> = Vec::new();
        for (k, out) in outs.iter().enumerate() {
            vars.push(match out {
                Some(_) => None,
                None => Some(
                    self.declare_like(&branch_values[0][k], f.vars[stmt.vars[k]].name.as_str())?,
                ),
            });
        }
        let mut finished = Vec::new();
        for (body, values) in bodies.into_iter().zip(&branch_values) {
            self.cmds.push(body);
            for (k, value) in values.iter().enumerate() {
                match (&outs[k], &vars[k]) {
                    (Some(out), _) => self.copy(out, value)?,
                    (None, Some(v)) => self.assign(v, value)?,
                    (None, None) => {}
                }
            }
            finished.push(self.pop());
        }
        let else_cmds = finished.pop().unwrap_or_default();
        let then_cmds = finished.pop().unwrap_or_default();
        self.emit(Cmd::If { cond, then_cmds, else_cmds });
        for (k, &var) in stmt.vars.iter().enumerate() {
            let value = match (&outs[k], &vars[k]) {
                (Some(out), _) => out.clone(),
                (None, Some(v)) => v.clone(),
                (None, None) => return Err(LowerError::internal("an if result with no value")),
            };
            self.bind(var, value);
        }
        Ok(())
    }

    fn loop_(
        &mut self,
        stmt: &Stmt,
        param: VarId,
        init: &Atom,
        form: &LoopForm,
        body: BlockId,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let f = self.tr.f;
        let init = self.atom(init)?;
        let info = self.memory(param);
        let hint = f.vars[param].name.to_string();
        // Scalars in variables; arrays in the loop's own memory, a copy of the initial
        // value (the memory IR's loop-entry copy).
        let vars = self.loop_value(&init, &info, &hint)?;
        self.bind(param, vars.clone());
        match form {
            LoopForm::For { index, bound } => {
                let (bound, belem) = self.scalar(bound)?;
                let i = self.fresh_name(f.vars[*index].name.as_str());
                self.bind(*index, KVal::Scalar(CExpr::Var(i.clone()), belem));
                self.push();
                let r = self.block1(body)?;
                self.loop_assign(&vars, &r)?;
                let cmds = self.pop();
                let bound = if belem == Elem::I64 { bound } else { CExpr::cast(Elem::I64, bound) };
                self.emit(Cmd::For { var: i, bound, body: cmds, comment: self.comment(origin) });
            }
            LoopForm::While { cond } => {
                self.push();
                let c = self.block1(*cond)?;
                let cond_cmds = self.pop();
                let KVal::Scalar(c, _) = c else {
                    return Err(LowerError::internal("a loop condition that is not a scalar"));
                };
                self.push();
                let r = self.block1(body)?;
                self.loop_assign(&vars, &r)?;
                let cmds = self.pop();
                self.emit(Cmd::While { cond_cmds, cond: c, body: cmds });
            }
        }
        self.bind(stmt.vars[0], vars);
        Ok(())
    }

    /// A loop parameter's storage, holding the initial value.
    fn loop_value(&mut self, init: &KVal, info: &MemInfo, hint: &str) -> Res<KVal> {
        match (init, info) {
            (KVal::Scalar(e, elem), _) => {
                Ok(KVal::Scalar(self.decl(hint, *elem, Some(e.clone())), *elem))
            }
            (KVal::Tuple(parts), MemInfo::Tuple(infos)) if parts.len() == infos.len() => {
                Ok(KVal::Tuple(
                    parts
                        .iter()
                        .zip(infos)
                        .map(|(p, i)| self.loop_value(p, i, hint))
                        .collect::<Res<_>>()?,
                ))
            }
            (KVal::Tuple(parts), _) => Ok(KVal::Tuple(
                parts
                    .iter()
                    .map(|p| self.loop_value(p, &MemInfo::Scalar, hint))
                    .collect::<Res<_>>()?,
            )),
            (KVal::Arr(_), MemInfo::Array(_)) => {
                let out = self.value_of(info, hint)?;
                self.copy(&out, init)?;
                Ok(out)
            }
            (KVal::Arr(_), _) => Err(LowerError::internal("a loop array with no memory")),
        }
    }

    /// The end of an iteration: the parameter takes the body's result: scalars through
    /// temporaries (the new values may read the old), arrays copied into the loop's
    /// memory (nothing when the body updated it in place). New arrays that are old ones
    /// exchanged (`loop (x, y) = ... do (y, x)`) are swapped element by element first,
    /// every old element read before any is written, then the others are copied.
    fn loop_assign(&mut self, vars: &KVal, result: &KVal) -> Res<()> {
        let mut pairs = Vec::new();
        self.stage_leaves(vars, result, &mut pairs)?;
        let targets: Vec<KArr> = pairs
            .iter()
            .filter_map(|(v, _)| match v {
                KVal::Arr(a) => Some(a.clone()),
                _ => None,
            })
            .collect();
        let mut exchanged = Vec::new();
        let mut rest = Vec::new();
        for (v, r) in pairs {
            match (&v, &r) {
                (KVal::Arr(va), KVal::Arr(ra))
                    if ra.ptr != va.ptr && targets.iter().any(|t| t.ptr == ra.ptr) =>
                {
                    // Only a whole old array in its own layout is an exchange; a view of
                    // one (reversed, a slice) would be read while it is overwritten.
                    if !targets.contains(ra) || ra.shape() != va.shape() {
                        return Err(LowerError::unsupported(
                            "a loop in a kernel whose new arrays are views of its old ones",
                            self.tr.current_origin.as_ref(),
                        ));
                    }
                    exchanged.push((va.clone(), ra.clone()));
                }
                _ => rest.push((v, r)),
            }
        }
        if let Some((first, _)) = exchanged.first() {
            let shape = first.shape().to_vec();
            if exchanged.iter().any(|(v, _)| v.shape() != shape.as_slice()) {
                return Err(LowerError::unsupported(
                    "a loop in a kernel that exchanges arrays of different shapes",
                    self.tr.current_origin.as_ref(),
                ));
            }
            self.exchange(&exchanged, &shape, &mut Vec::new())?;
        }
        for (v, r) in rest {
            self.assign(&v, &r)?;
        }
        Ok(())
    }

    /// `dest := src` for every pair at once, element by element over `shape`: each
    /// element of every source is loaded before any destination is stored.
    fn exchange(
        &mut self,
        pairs: &[(KArr, KArr)],
        shape: &[CExpr],
        index: &mut Vec<CExpr>,
    ) -> Res<()> {
        let Some((n, inner)) = shape.split_first() else {
            let loaded: Vec<CExpr> = pairs
                .iter()
                .map(|(_, src)| {
                    let value = CExpr::load(&src.ptr, src.address(index));
                    self.decl("swap", src.elem, Some(value))
                })
                .collect();
            for ((dest, _), value) in pairs.iter().zip(loaded) {
                self.store(&KVal::Arr(dest.clone()), index, &KVal::Scalar(value, dest.elem))?;
            }
            return Ok(());
        };
        self.for_loop("e", n.clone(), None, &mut |k, i| {
            index.push(i);
            k.exchange(pairs, inner, index)?;
            index.pop();
            Ok(())
        })
    }

    fn stage_leaves(&mut self, vars: &KVal, result: &KVal, out: &mut Vec<(KVal, KVal)>) -> Res<()> {
        match (vars, result) {
            (KVal::Scalar(..), KVal::Scalar(e, elem)) => {
                let staged = KVal::Scalar(self.tmp("next", *elem, e.clone()), *elem);
                out.push((vars.clone(), staged));
            }
            (KVal::Tuple(vs), KVal::Tuple(rs)) if vs.len() == rs.len() => {
                for (v, r) in vs.iter().zip(rs) {
                    self.stage_leaves(v, r, out)?;
                }
            }
            (KVal::Arr(_), KVal::Arr(_)) => out.push((vars.clone(), result.clone())),
            _ => return Err(LowerError::internal("a loop result of another shape")),
        }
        Ok(())
    }

    /// A sequential combinator: a loop in the work-item.
    fn seq(
        &mut self,
        var: VarId,
        exp_id: ExpId,
        soac: &SeqSoac,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        let index = self.tr.mem.seq_index.get(&exp_id).copied();
        let comment = self.comment(origin);
        match soac {
            SeqSoac::Map { lambda, arrays } => {
                let arrays: Vec<KVal> = arrays.iter().map(|a| self.array(a)).collect::<Res<_>>()?;
                let n = arrays
                    .first()
                    .and_then(KVal::shape)
                    .and_then(|s| s.first().cloned())
                    .unwrap_or(CExpr::Int(0));
                let out = self.fresh(var)?;
                let dest = out.clone();
                let params = lambda.params.clone();
                self.for_loop("i", n, comment, &mut |k, i| {
                    if let Some(x) = index {
                        k.exists.insert(x, i.clone());
                    }
                    for (&p, a) in params.iter().zip(&arrays) {
                        let row = k.row(a, &i)?;
                        k.bind_param(p, row);
                    }
                    let r = k.block1(lambda.body)?;
                    k.store(&dest, &[i], &r)
                })?;
                Ok(out)
            }
            SeqSoac::Generate { size, lambda } => {
                let n = self.int(size)?;
                let out = self.fresh(var)?;
                let dest = out.clone();
                let p = lambda.params[0];
                self.for_loop("i", n, comment, &mut |k, i| {
                    k.bind(p, KVal::Scalar(i.clone(), Elem::I64));
                    let r = k.block1(lambda.body)?;
                    k.store(&dest, &[i], &r)
                })?;
                Ok(out)
            }
            SeqSoac::Reduce { lambda, neutral, array } => {
                let ne = self.atom(neutral)?;
                let arr = self.array(array)?;
                let n = arr.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                if !matches!(ne, KVal::Scalar(..) | KVal::Tuple(_)) || has_arrays(&ne) {
                    return Err(LowerError::unsupported(
                        "a sequential reduction whose elements are arrays",
                        origin,
                    ));
                }
                let acc = self.declare_like(&ne, "acc")?;
                self.assign(&acc, &ne)?;
                let acc2 = acc.clone();
                self.for_loop("i", n, comment, &mut |k, i| {
                    if let Some(x) = index {
                        k.exists.insert(x, i.clone());
                    }
                    let x = k.row(&arr, &i)?;
                    let r = k.apply(lambda, &[acc2.clone(), x])?;
                    k.assign_staged(&acc2, &r)
                })?;
                Ok(acc)
            }
            SeqSoac::Scan { lambda, neutral, array } => {
                let ne = self.atom(neutral)?;
                let arr = self.array(array)?;
                let n = arr.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                if has_arrays(&ne) {
                    return Err(LowerError::unsupported(
                        "a sequential scan whose elements are arrays",
                        origin,
                    ));
                }
                let out = self.fresh(var)?;
                let acc = self.declare_like(&ne, "acc")?;
                self.assign(&acc, &ne)?;
                let dest = out.clone();
                self.for_loop("i", n, comment, &mut |k, i| {
                    if let Some(x) = index {
                        k.exists.insert(x, i.clone());
                    }
                    let x = k.row(&arr, &i)?;
                    let r = k.apply(lambda, &[acc.clone(), x])?;
                    k.assign_staged(&acc, &r)?;
                    k.store(&dest, &[i], &acc)
                })?;
                Ok(out)
            }
            SeqSoac::Hist { dest, lambda, indices, values, .. } => {
                let d = self.array(dest)?;
                let is = self.array(indices)?;
                let vs = self.array(values)?;
                let out = self.fresh(var)?;
                self.copy(&out, &d)?;
                let bins = out.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                let n = is.shape().and_then(|s| s.first().cloned()).unwrap_or(CExpr::Int(0));
                let out2 = out.clone();
                self.for_loop("i", n, comment, &mut |k, i| {
                    let KVal::Scalar(b, belem) = k.load(&is, std::slice::from_ref(&i))? else {
                        return Err(LowerError::internal("a bin that is not a scalar"));
                    };
                    let b = k.tmp(
                        "bin",
                        Elem::I64,
                        if belem == Elem::I64 { b } else { CExpr::cast(Elem::I64, b) },
                    );
                    let v = k.row(&vs, &i)?;
                    k.push();
                    let old = k.row(&out2, &b)?;
                    let r = k.apply(lambda, &[old, v])?;
                    k.store(&out2, std::slice::from_ref(&b), &r)?;
                    let then_cmds = k.pop();
                    k.emit(Cmd::If {
                        cond: in_range(b, bins.clone()),
                        then_cmds,
                        else_cmds: Vec::new(),
                    });
                    Ok(())
                })?;
                Ok(out)
            }
        }
    }

    /// Binds a lambda parameter to a row (or element) of an array.
    pub(crate) fn bind_param(&mut self, param: VarId, value: KVal) {
        let info = self.memory(param);
        self.bind_existential(&info, &value);
        let value = match (&value, &info) {
            // An array parameter is the memory IR's view (its LMAD at the loop index).
            (KVal::Arr(_) | KVal::Tuple(_), MemInfo::Array(_) | MemInfo::Tuple(_)) => {
                let hint = self.tr.f.vars[param].name.to_string();
                self.value_of(&info, &hint).unwrap_or(value)
            }
            _ => value,
        };
        self.bind(param, value);
    }
}

fn has_arrays(v: &KVal) -> bool {
    match v {
        KVal::Arr(_) => true,
        KVal::Tuple(parts) => parts.iter().any(has_arrays),
        KVal::Scalar(..) => false,
    }
}

fn same_memory(a: &KVal, b: &KVal) -> bool {
    match (a, b) {
        (KVal::Arr(x), KVal::Arr(y)) => x == y,
        (KVal::Tuple(xs), KVal::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_memory(x, y))
        }
        _ => false,
    }
}

/// `0 <= j && j < n`.
pub(crate) fn in_range(j: CExpr, n: CExpr) -> CExpr {
    CExpr::bin(COp::And, CExpr::bin(COp::Le, CExpr::Int(0), j.clone()), CExpr::bin(COp::Lt, j, n))
}

/// A C identifier made of `name`'s letters, digits and underscores.
pub(crate) fn sanitize(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    out
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
