//! The strategies of SegOps (MIDDLE.md, "Code generation"):
//!
//! - `segmap@grid`: one work-item per point of the space (flattened, row-major), each
//!   writing its values at its point of the results (nothing for an array the memory
//!   IR built in place, short-circuited).
//! - `segred@grid` over one dimension: two stages, as `soac.rs`'s reduction: `G`
//!   work-groups each fold their share (interleaved elements for a commutative
//!   operator, contiguous shares otherwise) and combine in a tree in local memory;
//!   one group combines the `G` partial results. Over several dimensions (segments):
//!   one work-item per segment folds it in order (the middle end splits segmented
//!   reductions of few, long segments into chunks first, `split_reduction.rs`).
//! - `segscan@grid` over one dimension: three stages over `T` work-items each owning a
//!   contiguous share: each folds its share, one group scans the `T` totals, each
//!   scans its share again from its prefix. Segmented: one work-item per segment.
//! - `seghist@grid`: the destination (copied unless in place), then one work-item per
//!   point updates its bin with an atomic when the operator is a built-in one with an
//!   atomic for its type, else one work-item per bin folds the points of that bin.
//! - `segscatter@grid`: the destination (copied unless in place), then one work-item
//!   per point writes its value at its index when the index is in range.
//! - `segmap@group`: one work-group per point; its body runs on every work-item of the
//!   group, its `thread` SegOps spread over the group's work-items (`segmap@thread`: a
//!   loop over the points in steps of the group size; `segred@thread` and
//!   `segscan@thread`: shares in private memory, combined in local memory), with a
//!   barrier after each.

use weft_core::{Atom, Origin, VarId};
use weft_mem::Storage;
use weft_opt::{ExpId, SegBinOp, SegKind, SegLevel, SegOp, Stmt};
use weft_plan::{Elem, Expr};

use super::host::unflatten_index;
use super::kernel::{CPU_RUN, KVal, Kern, LANES, in_range, rebuild};
use super::{HScalar, HVal, Res, Tr, eceil_div, ediv, emax, emin, emul};
use crate::LowerError;
use crate::imp::{AtomicOp, CExpr, COp, Cmd, ParLevel};

/// Rows at most this long (of a row-major matrix) are staged through local memory.
const STAGED_ROW_MAX: i64 = 32;

/// On a CPU, the fewest elements a work-item of a reduction's first stage folds.
const CPU_SHARE: i64 = 256;

/// On a CPU, the accumulators a work-item of a reduction's first stage folds its share
/// into in turn (one vector register of `f32` with AVX2).
const CPU_LANES: i64 = 8;

/// The most bins a work-group keeps as a sub-histogram in local memory (16 KiB of
/// 32-bit bins, a third of the 48 KiB that OpenCL devices commonly offer a group).
const LOCAL_HISTOGRAM_BINS: i64 = 4096;

impl Tr<'_> {
    pub(crate) fn seg(&mut self, stmt: &Stmt, seg: &SegOp) -> Res<()> {
        self.alloc_expanded(stmt.exp)?;
        let origin = self.origin(stmt.exp).or_else(|| seg.origins.first().cloned());
        match (seg.level, &seg.kind) {
            (SegLevel::Group, SegKind::Map) => self.group_map(stmt, seg, origin.as_ref())?,
            (SegLevel::Group, _) => {
                return Err(LowerError::unsupported(
                    "a work-group reduction, scan or histogram in host code",
                    origin.as_ref(),
                ));
            }
            (SegLevel::Thread, _) => {
                return Err(LowerError::internal("a thread SegOp in host code"));
            }
            (SegLevel::Grid, SegKind::Map) => self.grid_map(stmt, seg, origin.as_ref())?,
            (SegLevel::Grid, SegKind::Red(ops)) => {
                if seg.space.len() == 1 {
                    self.grid_reduce(stmt, seg, ops, origin.as_ref())?;
                    return Ok(());
                }
                self.segmented(stmt, seg, ops, false, origin.as_ref())?;
            }
            (SegLevel::Grid, SegKind::Scan(ops)) => {
                if seg.space.len() == 1 {
                    self.grid_scan(stmt, seg, ops, origin.as_ref())?;
                } else {
                    self.segmented(stmt, seg, ops, true, origin.as_ref())?;
                }
            }
            (SegLevel::Grid, SegKind::Hist { dest, op }) => {
                self.grid_hist(stmt, seg, dest, op, origin.as_ref())?;
            }
            (SegLevel::Grid, SegKind::Scatter { dest }) => {
                self.grid_scatter(stmt, seg, dest, origin.as_ref())?;
            }
        }
        for &var in &stmt.vars {
            if !self.env.contains_key(&var) {
                let v = self.binding(var)?;
                self.env.insert(var, v);
            }
        }
        Ok(())
    }

    /// Allocates the blocks the memory IR expands over the work-items of the SegOp
    /// `seg` and of the SegOps in its body.
    fn alloc_expanded(&mut self, seg: ExpId) -> Res<()> {
        let mem = self.mem;
        let mut segs = vec![seg];
        let mut stack = self.f.exps[seg].nested_blocks();
        while let Some(block) = stack.pop() {
            for stmt in &self.f.blocks[block].stmts {
                let exp = &self.f.exps[stmt.exp];
                if matches!(exp, weft_opt::Exp::Seg(_)) {
                    segs.push(stmt.exp);
                }
                stack.extend(exp.nested_blocks());
            }
        }
        for largest in &mem.largest {
            if segs.contains(&largest.seg) && !self.exists.contains_key(&largest.exist) {
                let value = self.largest_size(largest)?;
                self.exists.insert(largest.exist, value);
            }
        }
        for (block, data) in mem.blocks.iter() {
            let Some(Storage::Expanded { seg: s, threads, .. }) = mem.storage.get(block) else {
                continue;
            };
            if !segs.contains(s) || self.blocks.contains_key(&block) {
                continue;
            }
            let weft_mem::BlockBinding::Alloc { elems, .. } = &data.binding else { continue };
            let len = emul(self.mem_size(elems)?, self.mem_size(threads)?);
            let buf = self.alloc_buffer("expanded", data.elem, len);
            self.blocks.insert(block, buf);
        }
        Ok(())
    }

    /// The largest size over a SegOp's points of an array each of its work-items
    /// allocates: a kernel runs the statements of the body the size needs (scalars
    /// only) at every point and keeps the maximum with a 32-bit atomic (a work-item's
    /// array of 2^31 elements or more is not supported), read back to the host.
    fn largest_size(&mut self, largest: &weft_mem::Largest) -> Res<Expr> {
        let f = self.f;
        let weft_opt::Exp::Seg(seg) = &f.exps[largest.seg] else {
            return Err(LowerError::internal("a largest size of something not a SegOp"));
        };
        let unsupported = |tr: &Self| {
            LowerError::unsupported(
                "an array whose size each work-item computes from arrays it builds",
                tr.current_origin.as_ref(),
            )
        };
        // The statements of the body the size needs, in order.
        let mut needed: Vec<VarId> = largest
            .elems
            .vars()
            .into_iter()
            .filter_map(|v| match v {
                weft_mem::MemVar::Core(v) => Some(v),
                _ => None,
            })
            .collect();
        let mut slice = Vec::new();
        for stmt in f.blocks[seg.body].stmts.iter().rev() {
            if !stmt.vars.iter().any(|v| needed.contains(v)) {
                continue;
            }
            if !stmt.vars.iter().all(|v| matches!(f.vars[*v].ty, weft_core::Type::Scalar(_))) {
                return Err(unsupported(self));
            }
            let mut reads = Vec::new();
            weft_opt::reads_in(f, stmt, &mut reads);
            needed.extend(reads);
            slice.push(stmt.clone());
        }
        slice.reverse();
        let dims = self.space_dims(seg)?;
        let points = dims.iter().cloned().fold(Expr::I64(1), emul);
        let points = self.let_var("points", points);
        let wg = self.group_size();
        let most = self.alloc_buffer("largest", Elem::I32, Expr::I64(1));
        // The maximum starts at 0.
        let mut k = Kern::new(self);
        let ptr = k.buffer_param(most, Elem::I32);
        k.emit(Cmd::Store { ptr, index: CExpr::Int(0), value: CExpr::lit("0") });
        let name = k.tr.kernel_name("largest_init");
        let (kernel, args) = k.finish(name, "largest size: starts at 0".to_owned(), None);
        self.launch(kernel, args, vec![Expr::I64(1)], None);
        let groups = emax(
            Expr::I64(1),
            emin(
                eceil_div(points.clone(), Expr::I64(wg)),
                Expr::I64(i64::from(self.options.reduce_groups)),
            ),
        );
        let global = self.let_var("items", emul(groups, Expr::I64(wg)));
        let mut k = Kern::new(self);
        let kdims: Vec<CExpr> = dims.iter().map(|d| k.import_index(d)).collect();
        let kpoints = k.import_index(&points);
        let ptr = k.buffer_param(most, Elem::I32);
        let best = k.decl("best", Elem::I64, Some(CExpr::Int(0)));
        let gid = k.fresh_name("gid");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &kdims);
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        for stmt in &slice {
            k.stmt(stmt)?;
        }
        let elems = k.size(&largest.elems)?;
        let CExpr::Var(best_name) = &best else {
            return Err(LowerError::internal("a declared variable that is not a name"));
        };
        k.emit(Cmd::Assign {
            name: best_name.clone(),
            value: CExpr::call("max", vec![best.clone(), elems]),
        });
        let body = k.pop();
        k.emit(Cmd::ParFor {
            level: ParLevel::Grid(0),
            var: gid,
            bound: kpoints,
            body,
            comment: None,
        });
        let clamped =
            CExpr::cast(Elem::I32, CExpr::call("min", vec![best, CExpr::Int(i64::from(i32::MAX))]));
        k.emit(Cmd::Atomic {
            op: AtomicOp::Max,
            elem: Elem::I32,
            ptr,
            index: CExpr::Int(0),
            value: clamped,
            fetch: None,
        });
        let name = k.tr.kernel_name("largest");
        let doc =
            "largest size of a work-item's array: each work-item's largest, then an atomic maximum"
                .to_owned();
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
        let read = self.new_var("largest");
        self.step(weft_plan::Step::Read {
            var: read,
            buf: most,
            elem: Elem::I32,
            index: Expr::I64(0),
        });
        Ok(Expr::Convert(Elem::I64, Box::new(Expr::Var(read))))
    }

    /// The space's bounds as host expressions.
    fn space_dims(&mut self, seg: &SegOp) -> Res<Vec<Expr>> {
        seg.space.iter().map(|(_, bound)| self.int_atom(bound)).collect()
    }

    fn group_size(&self) -> i64 {
        i64::from(self.options.work_group)
    }

    /// `segmap@grid`: one work-item per point.
    fn grid_map(&mut self, stmt: &Stmt, seg: &SegOp, origin: Option<&Origin>) -> Res<()> {
        if !self.options.cpu_device()
            && let Some((row, x, m)) = self.staged_row(seg)?
        {
            // Short rows: staged through local memory (coalesced reads) when they are at
            // most `STAGED_ROW_MAX` long, read where they are otherwise.
            self.push_steps();
            self.staged_rows_map(stmt, seg, &row, &x, &m, origin)?;
            let staged = self.pop_steps();
            self.push_steps();
            self.plain_grid_map(stmt, seg, origin)?;
            let plain = self.pop_steps();
            let short = Expr::bin(weft_plan::BinOp::Le, m, Expr::I64(STAGED_ROW_MAX));
            self.step(weft_plan::Step::If { cond: short, then_steps: staged, else_steps: plain });
            return Ok(());
        }
        self.plain_grid_map(stmt, seg, origin)
    }

    /// The statement `row = X[i]` of a one-dimensional `segmap@grid`'s body that reads
    /// the point's row of a dense row-major matrix bound outside, the matrix and its
    /// row length; `None` when there is none.
    fn staged_row(&mut self, seg: &SegOp) -> Res<Option<(Stmt, super::HArr, Expr)>> {
        let [(i, _)] = seg.space[..] else { return Ok(None) };
        let f = self.f;
        for stmt in &f.blocks[seg.body].stmts {
            let weft_opt::Exp::Basic(weft_core::Exp::Index { array: Atom::Var(x), items }) =
                &f.exps[stmt.exp]
            else {
                continue;
            };
            let [weft_core::IndexItem::Fix(Atom::Var(index))] = items[..] else { continue };
            if index != i || !self.env.contains_key(x) {
                continue;
            }
            // A row read only at constant indices (`r[0]`) is not worth staging: the
            // copy would read the whole row for one element.
            let [row] = stmt.vars[..] else { continue };
            if !traverses(f, seg.body, row) {
                continue;
            }
            let super::HVal::Arr(a) = self.lookup(*x)? else { continue };
            let dense = a.layout.shape.len() == 2
                && a.layout.strides[1] == Expr::I64(1)
                && a.layout.strides[0] == a.layout.shape[1]
                && a.elem != Elem::Bool;
            if dense {
                let m = a.layout.shape[1].clone();
                return Ok(Some((stmt.clone(), a, m)));
            }
        }
        Ok(None)
    }

    /// A one-dimensional `segmap@grid` whose body reads the point's row `row` of `x`:
    /// each work-group copies its rows into local memory with coalesced reads (padded
    /// by one element against bank conflicts), then each work-item runs the body with
    /// its row read from there (the staged translator's staged rows, as a strategy of
    /// any SegMap that reads rows).
    fn staged_rows_map(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        row: &Stmt,
        x: &super::HArr,
        m: &Expr,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let n = self.int_atom(&seg.space[0].1)?;
        let wg = self.group_size();
        let groups = self.let_var("groups", eceil_div(n.clone(), Expr::I64(wg)));
        let local_len = emul(Expr::I64(wg), super::eadd(m.clone(), Expr::I64(1)));
        let mut k = Kern::new(self);
        k.can_return = false;
        note_all(
            &mut k,
            seg,
            "@grid: short rows staged through local memory (coalesced reads), one row per work-item",
        );
        let src = k.import_arr(x);
        let kn = k.import_index(&n);
        let km = k.import_index(m);
        let local = k.local_param("rows", x.elem, local_len, "the work-group's rows, staged");
        let t = k.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let row0 = k.tmp(
            "row0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(wg)),
        );
        let here = k.tmp(
            "rows_here",
            Elem::I64,
            CExpr::call("min", vec![CExpr::Int(wg), CExpr::sub(kn, row0.clone())]),
        );
        let count = k.tmp("count", Elem::I64, CExpr::mul(here.clone(), km.clone()));
        let base = k.tmp("base", Elem::I64, src.address(&[row0.clone(), CExpr::Int(0)]));
        let padded = CExpr::add(km.clone(), CExpr::Int(1));
        let steps =
            CExpr::bin(COp::Div, CExpr::add(count.clone(), CExpr::Int(wg - 1)), CExpr::Int(wg));
        let (local2, padded2) = (local.clone(), padded.clone());
        k.for_loop("f", steps, None, &mut |k, f| {
            let e = k.tmp("e", Elem::I64, CExpr::add(CExpr::mul(f, CExpr::Int(wg)), t.clone()));
            let r = CExpr::bin(COp::Div, e.clone(), km.clone());
            let c = CExpr::bin(COp::Rem, e.clone(), km.clone());
            let store = Cmd::Store {
                ptr: local2.clone(),
                index: CExpr::add(CExpr::mul(r, padded2.clone()), c),
                value: CExpr::load(&src.ptr, CExpr::add(base.clone(), e.clone())),
            };
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, e, count.clone()),
                then_cmds: vec![store],
                else_cmds: vec![],
            });
            Ok(())
        })?;
        k.emit(Cmd::Barrier);
        k.push();
        let i = k.tmp("i", Elem::I64, CExpr::add(row0, t.clone()));
        k.bind(seg.space[0].0, KVal::Scalar(i.clone(), Elem::I64));
        let staged = KVal::Arr(super::kernel::KArr {
            ptr: local,
            elem: x.elem,
            layout: super::Layout {
                offset: CExpr::mul(t.clone(), padded),
                strides: vec![CExpr::Int(1)],
                shape: vec![km],
            },
        });
        let mut given = rustc_hash::FxHashMap::default();
        given.insert(row.vars[0], staged);
        let value = k.block_given(seg.body, &given, &[])?;
        let values = match (value, stmt.vars.len()) {
            (v, 1) => vec![v],
            (KVal::Tuple(vs), _) => vs,
            (v, _) => vec![v],
        };
        write_results(&mut k, stmt, seg, &values, std::slice::from_ref(&i))?;
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond: CExpr::bin(COp::Lt, t, here), then_cmds, else_cmds: vec![] });
        let doc = format!(
            "segmap@grid: short rows staged through local memory, one row per work-item{}",
            at(&k, origin)
        );
        let name = k.tr.kernel_name("rows_staged");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![emul(groups, Expr::I64(wg))], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    fn plain_grid_map(&mut self, stmt: &Stmt, seg: &SegOp, origin: Option<&Origin>) -> Res<()> {
        let dims = self.space_dims(seg)?;
        let wg = self.group_size();
        if dims.len() == 1 && light_body(self.f, seg.body) {
            if self.options.cpu_device() {
                return self.cpu_runs_map(stmt, seg, &dims[0], origin);
            }
            // The body is written twice (whole runs and the last one): arrays it makes
            // would be declared in one branch and used in the other.
            if !makes_arrays(self.f, seg.body) {
                return self.vector_runs_map(stmt, seg, &dims[0], origin);
            }
        }
        let schedule = Schedule::of(dims.len(), self.options.cpu_device(), wg);
        let mut k = Kern::new(self);
        let role = if seg.space.len() == 1 {
            "@grid: one work-item per element"
        } else {
            "@grid: one work-item per point of the map"
        };
        note_all(&mut k, seg, role);
        let kdims: Vec<CExpr> = dims.iter().map(|d| k.import_index(d)).collect();
        let comment = k.comment(origin);
        let mut global = Vec::new();
        for group in &schedule.ndrange {
            global.push(group.iter().map(|&d| dims[d].clone()).fold(Expr::I64(1), emul));
        }
        let global: Vec<Expr> = global.into_iter().map(|g| self_let(&mut k, g)).collect();
        // The work-item's indices: each NDRange dimension's id, split into the space
        // dimensions merged into it; then loops over the innermost ones.
        let mut idx = vec![CExpr::Int(0); dims.len()];
        let mut levels = Vec::new();
        for (d, group) in schedule.ndrange.iter().enumerate().rev() {
            let var = k.fresh_name("gid");
            let bound = k.import_index(&global[d]);
            k.push();
            let parts: Vec<CExpr> = group.iter().map(|&i| kdims[i].clone()).collect();
            let split = unflatten_index(&mut k, &CExpr::Var(var.clone()), &parts);
            for (&i, e) in group.iter().zip(split) {
                idx[i] = e;
            }
            levels.push((ParLevel::GridCovered(d as u32), var, bound));
        }
        for &i in &schedule.looped {
            let var = k.fresh_name("i");
            k.push();
            idx[i] = CExpr::Var(var.clone());
            levels.push((ParLevel::Thread, var, kdims[i].clone()));
        }
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let values = k.block(seg.body)?;
        write_results(&mut k, stmt, seg, &values, &idx)?;
        for (level, var, bound) in levels.into_iter().rev() {
            let body = k.pop();
            let cmd = match level {
                // A sequential loop over an innermost dimension.
                ParLevel::Thread => Cmd::For { var, bound, body, comment: comment.clone() },
                level => Cmd::ParFor { level, var, bound, body, comment: comment.clone() },
            };
            k.emit(cmd);
        }
        let doc = format!("segmap@grid: {}{}", schedule.describe(), at(&k, origin));
        let name = k.tr.kernel_name("map");
        let local = schedule.local.clone();
        let local_size = local.iter().product::<i64>() as u32;
        let (kernel, args) = k.finish(name, doc, Some(local_size));
        self.launch(kernel, args, global, Some(local.into_iter().map(Expr::I64).collect()));
        Ok(())
    }

    /// A one-dimensional `segmap@grid` on a CPU: a work-item per run of `CPU_RUN`
    /// points, a loop over them (which the compiler can vectorise when the body allows).
    fn cpu_runs_map(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        n: &Expr,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = self.group_size();
        let mut k = Kern::new(self);
        note_all(&mut k, seg, &format!("@grid: one work-item per run of {CPU_RUN} elements"));
        let kn = k.import_index(n);
        let comment = k.comment(origin);
        let index = seg.space[0].0;
        k.runs_loop(&kn, comment, &mut |k, i| {
            k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
            let values = k.block(seg.body)?;
            write_results(k, stmt, seg, &values, &[i])
        })?;
        let doc =
            format!("segmap@grid: one work-item per run of {CPU_RUN} points{}", at(&k, origin));
        let name = k.tr.kernel_name("map");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        let global = self.let_var("items", eceil_div(n.clone(), Expr::I64(CPU_RUN)));
        self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// A one-dimensional `segmap@grid` of a light body on a GPU: a work-item per run of
    /// `LANES` neighbouring points, the arrays it reads at its points read as vectors
    /// ([`Kern::vector_lanes`]); the last `n % LANES` points one each by the first
    /// work-items.
    fn vector_runs_map(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        n: &Expr,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = self.group_size();
        let mut k = Kern::new(self);
        note_all(&mut k, seg, &format!("@grid: one work-item per run of {LANES} elements"));
        let kn = k.import_index(n);
        let comment = k.comment(origin);
        let index = seg.space[0].0;
        let item = k.fresh_name("item");
        k.push();
        let base =
            k.tmp("base", Elem::I64, CExpr::mul(CExpr::Var(item.clone()), CExpr::Int(LANES)));
        // A whole run: `item < n / LANES`.
        k.push();
        k.vector_lanes(&base, &kn, &mut |k, i| {
            // The index itself, not a temporary: the cost model sees the run's stores
            // at `base + lane` together as contiguous.
            k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
            let values = k.block(seg.body)?;
            write_results(k, stmt, seg, &values, &[i])
        })?;
        let whole = k.pop();
        let runs = k.tmp("runs", Elem::I64, CExpr::bin(COp::Div, kn.clone(), CExpr::Int(LANES)));
        let full = CExpr::bin(COp::Lt, CExpr::Var(item.clone()), runs.clone());
        k.emit(Cmd::If { cond: full, then_cmds: whole, else_cmds: Vec::new() });
        // The last `n % LANES` points, one each for the first work-items (neighbours
        // read neighbours; no loop whose count depends on the work-item).
        let tail = k.tmp(
            "tail",
            Elem::I64,
            CExpr::add(CExpr::mul(runs, CExpr::Int(LANES)), CExpr::Var(item.clone())),
        );
        k.push();
        k.in_range.push((tail.clone(), kn.clone()));
        k.bind(index, KVal::Scalar(tail.clone(), Elem::I64));
        let values = k.block(seg.body)?;
        write_results(&mut k, stmt, seg, &values, std::slice::from_ref(&tail))?;
        let then_cmds = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Lt, tail, kn.clone()),
            then_cmds,
            else_cmds: vec![],
        });
        let body = k.pop();
        // Work-items for the whole runs and for the last points, `max(n / 4, n % 4)`.
        let items = CExpr::call(
            "max",
            vec![
                CExpr::bin(COp::Div, kn.clone(), CExpr::Int(LANES)),
                CExpr::bin(COp::Rem, kn, CExpr::Int(LANES)),
            ],
        );
        k.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: item,
            bound: items,
            body,
            comment,
        });
        let doc = format!("segmap@grid: one work-item per run of {LANES} points{}", at(&k, origin));
        let name = k.tr.kernel_name("map");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        let lanes = Expr::I64(LANES);
        let items = emax(
            ediv(n.clone(), lanes.clone()),
            Expr::bin(weft_plan::BinOp::Rem, n.clone(), lanes),
        );
        let global = self.let_var("items", items);
        self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// `segred@grid` over one dimension: partial results per work-group, then one group.
    fn grid_reduce(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        ops: &[SegBinOp],
        origin: Option<&Origin>,
    ) -> Res<()> {
        let n = self.int_atom(&seg.space[0].1)?;
        let wg = self.group_size();
        let commutative = ops.iter().all(|op| op.commutative);
        // On a CPU each work-item folds a contiguous share of at least
        // `CPU_SHARE` elements (see `reduce_stage`); on a GPU one element each at least.
        let per_group = if commutative && self.options.cpu_device() { wg * CPU_SHARE } else { wg };
        let groups = emax(
            Expr::I64(1),
            emin(
                eceil_div(n.clone(), Expr::I64(per_group)),
                Expr::I64(i64::from(self.options.reduce_groups)),
            ),
        );
        let groups = self.let_var("groups", groups);
        let elems = self.operator_elems(ops)?;
        let partials: Vec<weft_plan::Var> =
            elems.iter().map(|e| self.alloc_buffer("partial", *e, groups.clone())).collect();
        // Stage one: each group folds its share of the body's values.
        let index = seg.space[0].0;
        self.reduce_stage(
            ops,
            &n,
            &groups,
            commutative,
            &partials,
            &mut |k, i| {
                k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
                let vals = k.block(seg.body)?;
                Ok(KVal::Tuple(vals))
            },
            seg,
            origin,
            "reduce_partials",
        )?;
        // Stage two: one group folds the partial results.
        let totals: Vec<weft_plan::Var> =
            elems.iter().map(|e| self.alloc_buffer("total", *e, Expr::I64(1))).collect();
        let parts: Vec<(weft_plan::Var, Elem)> =
            partials.iter().copied().zip(elems.iter().copied()).collect();
        let shape = self.operator_template(ops)?;
        self.reduce_stage(
            ops,
            &groups,
            &Expr::I64(1),
            commutative,
            &totals,
            &mut |k, i| {
                let leaves: Vec<(CExpr, Elem)> = parts
                    .iter()
                    .map(|(buf, elem)| {
                        let ptr = k.buffer_param(*buf, *elem);
                        (CExpr::load(&ptr, i.clone()), *elem)
                    })
                    .collect();
                Ok(rebuild(&shape, &mut leaves.into_iter()))
            },
            seg,
            origin,
            "reduce_total",
        )?;
        let mut leaves =
            totals.iter().zip(&elems).map(|(b, e)| HVal::Scalar(HScalar::Device(*b, *e)));
        for var in &stmt.vars {
            let value = device_value(&self.f.vars[*var].ty, &mut leaves)?;
            self.env.insert(*var, value);
        }
        Ok(())
    }

    /// The scalar leaves' types of the values an operator list combines.
    fn operator_elems(&mut self, ops: &[SegBinOp]) -> Res<Vec<Elem>> {
        fn leaves(v: &HVal, out: &mut Vec<Elem>) -> bool {
            match v {
                HVal::Scalar(HScalar::Host(_, e) | HScalar::Device(_, e)) => {
                    out.push(*e);
                    true
                }
                HVal::Tuple(parts) => parts.iter().all(|p| leaves(p, out)),
                HVal::Arr(_) => false,
            }
        }
        let mut elems = Vec::new();
        for op in ops {
            for ne in &op.neutral {
                let value = self.atom(ne)?;
                if !leaves(&value, &mut elems) {
                    return Err(LowerError::unsupported(
                        "a reduction or scan whose elements are arrays",
                        self.current_origin.as_ref(),
                    ));
                }
            }
        }
        Ok(elems)
    }

    /// A kernel value shaped like the operators' values (one entry per neutral element,
    /// tuples as tuples), for rebuilding values from scalar leaves.
    fn operator_template(&mut self, ops: &[SegBinOp]) -> Res<KVal> {
        fn template(v: &HVal) -> KVal {
            match v {
                HVal::Scalar(HScalar::Host(_, e) | HScalar::Device(_, e)) => {
                    KVal::Scalar(CExpr::Int(0), *e)
                }
                HVal::Tuple(parts) => KVal::Tuple(parts.iter().map(template).collect()),
                HVal::Arr(_) => KVal::Tuple(Vec::new()),
            }
        }
        let ne = self.neutral_host(ops)?;
        Ok(template(&ne))
    }

    /// One stage of a reduction: `groups` work-groups fold `element(i)` for `i < n` and
    /// write one partial result each into `out`.
    #[expect(clippy::too_many_arguments, reason = "one stage's whole description")]
    fn reduce_stage(
        &mut self,
        ops: &[SegBinOp],
        n: &Expr,
        groups: &Expr,
        commutative: bool,
        out: &[weft_plan::Var],
        element: &mut dyn FnMut(&mut Kern<'_, '_>, &CExpr) -> Res<KVal>,
        seg: &SegOp,
        origin: Option<&Origin>,
        kind: &str,
    ) -> Res<()> {
        let wg = self.group_size();
        let elems = self.operator_elems(ops)?;
        let ne = self.neutral_host(ops)?;
        let mut k = Kern::new(self);
        k.can_return = false;
        let role = if *groups == Expr::I64(1) {
            "@grid: multi-stage reduction (second stage)"
        } else {
            "@grid: multi-stage reduction (work-group trees in local memory, then one group)"
        };
        note_all(&mut k, seg, role);
        let kn = k.import_index(n);
        let ne = k.import_val(&ne);
        let locals: Vec<std::rc::Rc<str>> = elems
            .iter()
            .map(|e| {
                k.local_param(
                    "red",
                    *e,
                    Expr::I64(wg),
                    "the work-group's tree of partial results of a reduction",
                )
            })
            .collect();
        let t = k.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = k.tmp("g", Elem::I64, CExpr::work_item("get_group_id", 0));
        let acc = k.declare_like(&ne, "acc")?;
        k.assign(&acc, &ne)?;
        let comment = k.comment(origin);
        let cpu_shares = commutative && k.tr.options.cpu_device() && *groups != Expr::I64(1);
        if cpu_shares {
            // On a CPU: a contiguous share per work-item, read in order (a core streams
            // it through its cache; interleaved runs jump by the whole grid between a
            // work-item's reads), folded into `CPU_LANES` accumulators in turn, which
            // the compiler can keep in one vector register: the operator is
            // commutative, so the order of the combination is free.
            let (start, end) = k.contiguous_share(
                &kn,
                CExpr::work_item("get_global_id", 0),
                CExpr::work_item("get_global_size", 0),
            );
            let count =
                CExpr::call("max", vec![CExpr::sub(end.clone(), start.clone()), CExpr::Int(0)]);
            let runs = k.tmp("runs", Elem::I64, CExpr::bin(COp::Div, count, CExpr::Int(CPU_LANES)));
            let mut lanes = vec![acc.clone()];
            for _ in 1..CPU_LANES {
                let lane = k.declare_like(&ne, "acc")?;
                k.assign(&lane, &ne)?;
                lanes.push(lane);
            }
            let r = k.fresh_name("r");
            k.push();
            let base = k.tmp(
                "base",
                Elem::I64,
                CExpr::add(start.clone(), CExpr::mul(CExpr::Var(r.clone()), CExpr::Int(CPU_LANES))),
            );
            let mut xs = Vec::new();
            for lane in 0..CPU_LANES {
                // `base + lane < start + CPU_LANES * runs <= end <= n`.
                let index = CExpr::add(base.clone(), CExpr::Int(lane));
                let known = k.in_range.len();
                k.in_range.push((index.clone(), kn.clone()));
                let x = element(&mut k, &index);
                k.in_range.truncate(known);
                xs.push(k.bind_loaded("x", x?));
            }
            for (lane, x) in lanes.iter().zip(xs) {
                let r = apply_ops(&mut k, ops, lane, &x)?;
                k.assign_staged(lane, &r)?;
            }
            let body = k.pop();
            k.emit(Cmd::For { var: r, bound: runs.clone(), body, comment: comment.clone() });
            // The share's last `count % CPU_LANES` elements.
            let rest = k.tmp(
                "rest",
                Elem::I64,
                CExpr::add(start.clone(), CExpr::mul(runs, CExpr::Int(CPU_LANES))),
            );
            let acc2 = acc.clone();
            k.for_loop("j", CExpr::sub(end, rest.clone()), None, &mut |k, j| {
                let i = k.tmp("i", Elem::I64, CExpr::add(rest.clone(), j));
                let known = k.in_range.len();
                k.in_range.push((i.clone(), kn.clone()));
                let x = element(k, &i);
                k.in_range.truncate(known);
                let r = apply_ops(k, ops, &acc2, &x?)?;
                k.assign_staged(&acc2, &r)
            })?;
            for lane in &lanes[1..] {
                let r = apply_ops(&mut k, ops, &acc, lane)?;
                k.assign_staged(&acc, &r)?;
            }
        } else if commutative {
            // Interleaved: neighbouring work-items read neighbouring runs of four
            // elements, computed before they are combined (independent loads, which
            // the compiler may merge into one vector load); the last `n % 4` go to the
            // first work-items.
            let q = k.fresh_name("q");
            let quads =
                k.tmp("quads", Elem::I64, CExpr::bin(COp::Div, kn.clone(), CExpr::Int(LANES)));
            k.push();
            let base =
                k.tmp("base", Elem::I64, CExpr::mul(CExpr::Var(q.clone()), CExpr::Int(LANES)));
            // Arrays read at `4q + lane` are read as vectors of four.
            // `4q + lane < 4 (n / 4) <= n`.
            let xs = k.vector_lanes(&base, &kn, &mut |k, index| {
                let x = element(k, &index)?;
                Ok(k.bind_loaded("x", x))
            })?;
            for x in xs {
                let r = apply_ops(&mut k, ops, &acc, &x)?;
                k.assign_staged(&acc, &r)?;
            }
            let body = k.pop();
            k.emit(Cmd::ParFor {
                level: ParLevel::Grid(0),
                var: q,
                bound: quads.clone(),
                body,
                comment,
            });
            let tail = k.tmp(
                "tail",
                Elem::I64,
                CExpr::add(
                    CExpr::mul(quads, CExpr::Int(LANES)),
                    CExpr::work_item("get_global_id", 0),
                ),
            );
            k.push();
            let known = k.in_range.len();
            k.in_range.push((tail.clone(), kn.clone()));
            let x = element(&mut k, &tail);
            k.in_range.truncate(known);
            let x = x?;
            let r = apply_ops(&mut k, ops, &acc, &x)?;
            k.assign_staged(&acc, &r)?;
            let then_cmds = k.pop();
            k.emit(Cmd::If { cond: CExpr::bin(COp::Lt, tail, kn), then_cmds, else_cmds: vec![] });
        } else {
            let (start, end) = k.contiguous_share(
                &kn,
                CExpr::work_item("get_global_id", 0),
                CExpr::work_item("get_global_size", 0),
            );
            let bound = CExpr::sub(end, start.clone());
            let acc2 = acc.clone();
            k.for_loop("j", bound, comment, &mut |k, j| {
                let i = k.tmp("i", Elem::I64, CExpr::add(start.clone(), j));
                let x = element(k, &i)?;
                let r = apply_ops(k, ops, &acc2, &x)?;
                k.assign_staged(&acc2, &r)
            })?;
        }
        let total = tree(&mut k, ops, &acc, &locals, &elems, &t, wg, commutative)?;
        let mut leaves = Vec::new();
        total.scalars(&mut leaves);
        k.push();
        for ((buf, (v, _)), elem) in out.iter().zip(leaves).zip(&elems) {
            let ptr = k.buffer_param(*buf, *elem);
            let v = if *elem == Elem::Bool { CExpr::cast(Elem::Bool, v) } else { v };
            k.emit(Cmd::Store { ptr, index: g.clone(), value: v });
        }
        let then_cmds = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, t, CExpr::Int(0)),
            then_cmds,
            else_cmds: vec![],
        });
        let doc = format!(
            "{}: work-groups of {wg} fold {} and combine in local memory{}",
            kind.replace('_', " "),
            if cpu_shares {
                "contiguous shares in 8 accumulators (commutative operator, a CPU)"
            } else if commutative {
                "interleaved elements (commutative operator)"
            } else {
                "contiguous shares in order"
            },
            at(&k, origin)
        );
        let name = k.tr.kernel_name(kind);
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        let global = vec![emul(groups.clone(), Expr::I64(wg))];
        self.launch(kernel, args, global, Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// The operators' neutral elements, as one host value (a tuple of their leaves).
    fn neutral_host(&mut self, ops: &[SegBinOp]) -> Res<HVal> {
        let mut leaves = Vec::new();
        for op in ops {
            for ne in &op.neutral {
                leaves.push(self.atom(ne)?);
            }
        }
        Ok(HVal::Tuple(leaves))
    }

    /// A segmented reduction or scan: one work-item per segment (the outer points),
    /// folding (or scanning) its segment in order.
    fn segmented(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        ops: &[SegBinOp],
        scan: bool,
        origin: Option<&Origin>,
    ) -> Res<()> {
        if !scan
            && stmt.vars.len() == 1
            && let [op] = ops
            && weft_opt::is_tiled_product(self.f, seg)
            && let Some(reads) = weft_opt::product_reads(self.f, seg)
        {
            return self.tiled_product(stmt, seg, op, &reads, origin);
        }
        let dims = self.space_dims(seg)?;
        let (outer, inner) = dims.split_at(dims.len() - 1);
        let segments = outer.iter().cloned().fold(Expr::I64(1), emul);
        let segments = self.let_var("segments", segments);
        let ne = self.neutral_host(ops)?;
        let _ = self.operator_elems(ops)?;
        let wg = self.group_size();
        let mut k = Kern::new(self);
        let role = if scan {
            "@grid: one work-item per segment scans it in order"
        } else {
            "@grid: one work-item per segment folds it in order"
        };
        note_all(&mut k, seg, role);
        let ksegs = k.import_index(&segments);
        let kouter: Vec<CExpr> = outer.iter().map(|d| k.import_index(d)).collect();
        let kinner = k.import_index(&inner[0]);
        let ne = k.import_val(&ne);
        let gid = k.fresh_name("segment");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &kouter);
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let acc = k.declare_like(&ne, "acc")?;
        k.assign(&acc, &ne)?;
        let inner_index = seg.space[seg.space.len() - 1].0;
        let results: Vec<KVal> = stmt
            .vars
            .iter()
            .map(|&v| {
                let info = k.memory(v);
                let hint = k.tr.f.vars[v].name.to_string();
                k.value_of(&info, &hint)
            })
            .collect::<Res<_>>()?;
        let acc2 = acc.clone();
        let comment = k.comment(origin);
        let idx2 = idx.clone();
        k.for_loop("j", kinner, comment, &mut |k, j| {
            k.bind(inner_index, KVal::Scalar(j.clone(), Elem::I64));
            let vals = k.block(seg.body)?;
            let r = apply_ops(k, ops, &acc2, &KVal::Tuple(vals))?;
            k.assign_staged(&acc2, &r)?;
            if scan {
                let mut at = idx2.clone();
                at.push(j);
                store_leaves(k, &results, &at, &acc2)?;
            }
            Ok(())
        })?;
        if !scan {
            store_leaves(&mut k, &results, &idx, &acc)?;
        }
        let cmds = k.pop();
        k.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: gid,
            bound: ksegs,
            body: cmds,
            comment: None,
        });
        let what = if scan { "segscan" } else { "segred" };
        let doc = format!("{what}@grid: one work-item per segment{}", at(&k, origin));
        let name = k.tr.kernel_name(if scan { "segscan" } else { "segred" });
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![segments], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// `segscan@grid` over one dimension: three stages over `T` work-items, each
    /// owning a contiguous share.
    fn grid_scan(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        ops: &[SegBinOp],
        origin: Option<&Origin>,
    ) -> Res<()> {
        let elems = self.operator_elems(ops)?;
        if let ([op], [elem @ (Elem::I32 | Elem::U32 | Elem::F32)]) = (ops, elems.as_slice())
            && self.options.forward_progress()
        {
            return self.lookback_scan(stmt, seg, op, *elem, origin);
        }
        let n = self.int_atom(&seg.space[0].1)?;
        let wg = self.group_size();
        let groups = emax(
            Expr::I64(1),
            emin(
                eceil_div(n.clone(), Expr::I64(wg)),
                Expr::I64(i64::from(self.options.reduce_groups)),
            ),
        );
        let groups = self.let_var("groups", groups);
        let index = seg.space[0].0;
        if !self.options.cpu_device() {
            // A GPU: each group scans a contiguous chunk in tiles of its work-items
            // (neighbouring work-items, neighbouring elements), after the chunks'
            // totals have been scanned.
            let chunk =
                emul(eceil_div(eceil_div(n.clone(), groups.clone()), Expr::I64(wg)), Expr::I64(wg));
            let chunk = self.let_var("chunk", chunk);
            let totals: Vec<weft_plan::Var> =
                elems.iter().map(|e| self.alloc_buffer("totals", *e, groups.clone())).collect();
            self.scan_tiles(stmt, seg, ops, &n, &groups, &chunk, &totals, false, index, origin)?;
            self.scan_totals(ops, &groups, &totals, &elems, seg, origin)?;
            self.scan_tiles(stmt, seg, ops, &n, &groups, &chunk, &totals, true, index, origin)?;
            return Ok(());
        }
        let items = self.let_var("items", emul(groups.clone(), Expr::I64(wg)));
        let share = self.let_var("share", eceil_div(n.clone(), items.clone()));
        let totals: Vec<weft_plan::Var> =
            elems.iter().map(|e| self.alloc_buffer("totals", *e, items.clone())).collect();
        // Stage one: each work-item folds its share.
        self.scan_pass(stmt, seg, ops, &n, &share, &totals, None, index, origin, "scan_totals")?;
        // Stage two: one group turns the totals into exclusive prefixes.
        self.scan_totals(ops, &items, &totals, &elems, seg, origin)?;
        // Stage three: each work-item scans its share from its prefix.
        self.scan_pass(
            stmt,
            seg,
            ops,
            &n,
            &share,
            &totals,
            Some(()),
            index,
            origin,
            "scan_shares",
        )?;
        Ok(())
    }

    /// A pass of a GPU scan over `groups` chunks of `chunk` elements, each group's in
    /// tiles of its work-items scanned in local memory (Hillis and Steele: in order, for
    /// any associative operator): without `write`, each chunk's total goes to `totals`;
    /// with it, each chunk is scanned from its prefix in `totals` and written.
    #[expect(clippy::too_many_arguments, reason = "one pass's whole description")]
    fn scan_tiles(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        ops: &[SegBinOp],
        n: &Expr,
        groups: &Expr,
        chunk: &Expr,
        totals: &[weft_plan::Var],
        write: bool,
        index: VarId,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = self.group_size();
        let elems = self.operator_elems(ops)?;
        let ne = self.neutral_host(ops)?;
        let mut k = Kern::new(self);
        k.can_return = false;
        note_all(
            &mut k,
            seg,
            "@grid: three-stage scan (chunks per work-group in tiles of its work-items)",
        );
        let kn = k.import_index(n);
        let kchunk = k.import_index(chunk);
        let ne = k.import_val(&ne);
        let ptrs: Vec<std::rc::Rc<str>> =
            totals.iter().zip(&elems).map(|(b, e)| k.buffer_param(*b, *e)).collect();
        let locals: Vec<std::rc::Rc<str>> = elems
            .iter()
            .map(|e| {
                k.local_param(
                    "tile",
                    *e,
                    Expr::I64(wg),
                    "a tile of a scan, scanned in local memory",
                )
            })
            .collect();
        let results: Vec<KVal> = if write {
            stmt.vars
                .iter()
                .map(|&v| {
                    let info = k.memory(v);
                    let hint = k.tr.f.vars[v].name.to_string();
                    k.value_of(&info, &hint)
                })
                .collect::<Res<_>>()?
        } else {
            Vec::new()
        };
        let t = k.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = k.tmp("g", Elem::I64, CExpr::work_item("get_group_id", 0));
        let start = k.tmp("start", Elem::I64, CExpr::mul(g.clone(), kchunk.clone()));
        let end = k.tmp(
            "end",
            Elem::I64,
            CExpr::call("min", vec![CExpr::add(start.clone(), kchunk.clone()), kn]),
        );
        let load_at = |at: CExpr| -> KVal {
            let leaves: Vec<(CExpr, Elem)> =
                locals.iter().zip(&elems).map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            rebuild(&ne, &mut leaves.into_iter())
        };
        let carry = k.declare_like(&ne, "carry")?;
        if write {
            let prefix: Vec<(CExpr, Elem)> =
                ptrs.iter().zip(&elems).map(|(p, e)| (CExpr::load(p, g.clone()), *e)).collect();
            let prefix = rebuild(&ne, &mut prefix.into_iter());
            k.assign(&carry, &prefix)?;
        } else {
            k.assign(&carry, &ne)?;
        }
        let tiles = CExpr::bin(COp::Div, kchunk, CExpr::Int(wg));
        let comment = k.comment(origin);
        let carry2 = carry.clone();
        let results2 = results.clone();
        k.for_loop("tile", tiles, comment, &mut |k, tile| {
            let i = k.tmp(
                "i",
                Elem::I64,
                CExpr::add(CExpr::add(start.clone(), CExpr::mul(tile, CExpr::Int(wg))), t.clone()),
            );
            // The work-item's element, or the neutral element past the chunk.
            let x = k.declare_like(&ne, "x")?;
            k.assign(&x, &ne)?;
            k.push();
            k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
            let vals = k.block(seg.body)?;
            k.assign(&x, &KVal::Tuple(vals))?;
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, i.clone(), end.clone()),
                then_cmds,
                else_cmds: vec![],
            });
            store_scalars(k, &locals, &t, &x);
            k.emit(Cmd::Barrier);
            let mut step = 1;
            while step < wg {
                k.push();
                let a = load_at(CExpr::sub(t.clone(), CExpr::Int(step)));
                let a = k.bind_loaded("a", a);
                let b = load_at(t.clone());
                let b = k.bind_loaded("b", b);
                let r = apply_ops(k, ops, &a, &b)?;
                let r = k.bind_loaded("r", r);
                let then_cmds = k.pop();
                let v = k.declare_like(&ne, "v")?;
                k.cmds_push(then_cmds);
                k.assign(&v, &r)?;
                let then_cmds = k.pop();
                let own = load_at(t.clone());
                k.push();
                k.assign(&v, &own)?;
                let else_cmds = k.pop();
                k.emit(Cmd::If {
                    cond: CExpr::bin(COp::Ge, t.clone(), CExpr::Int(step)),
                    then_cmds,
                    else_cmds,
                });
                k.emit(Cmd::Barrier);
                store_scalars(k, &locals, &t, &v);
                k.emit(Cmd::Barrier);
                step *= 2;
            }
            if write {
                k.push();
                let mine = load_at(t.clone());
                let out = apply_ops(k, ops, &carry2, &mine)?;
                store_leaves(k, &results2, std::slice::from_ref(&i), &out)?;
                let then_cmds = k.pop();
                k.emit(Cmd::If {
                    cond: CExpr::bin(COp::Lt, i.clone(), end.clone()),
                    then_cmds,
                    else_cmds: vec![],
                });
            }
            let total = load_at(CExpr::Int(wg - 1));
            let next = apply_ops(k, ops, &carry2, &total)?;
            k.assign_staged(&carry2, &next)?;
            k.emit(Cmd::Barrier);
            Ok(())
        })?;
        if !write {
            k.push();
            let mut leaves = Vec::new();
            carry.scalars(&mut leaves);
            for ((ptr, (v, _)), elem) in ptrs.iter().zip(leaves).zip(&elems) {
                let v = if *elem == Elem::Bool { CExpr::cast(Elem::Bool, v) } else { v };
                k.emit(Cmd::Store { ptr: ptr.clone(), index: g.clone(), value: v });
            }
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Eq, t, CExpr::Int(0)),
                then_cmds,
                else_cmds: vec![],
            });
        }
        let kind = if write { "scan_tiles" } else { "scan_chunk_totals" };
        let doc = format!(
            "{}: chunks per work-group in tiles of {wg}{}",
            kind.replace('_', " "),
            at(&k, origin)
        );
        let name = k.tr.kernel_name(kind);
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(
            kernel,
            args,
            vec![emul(groups.clone(), Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(())
    }

    /// A pass over the shares of a scan: without `write`, each work-item's total goes to
    /// `totals`; with it, each work-item scans its share from `totals` (its prefix) and
    /// writes the results.
    #[expect(clippy::too_many_arguments, reason = "one pass's whole description")]
    fn scan_pass(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        ops: &[SegBinOp],
        n: &Expr,
        share: &Expr,
        totals: &[weft_plan::Var],
        write: Option<()>,
        index: VarId,
        origin: Option<&Origin>,
        kind: &str,
    ) -> Res<()> {
        let wg = self.group_size();
        let elems = self.operator_elems(ops)?;
        let ne = self.neutral_host(ops)?;
        let items = emul(
            emax(
                Expr::I64(1),
                emin(
                    eceil_div(n.clone(), Expr::I64(wg)),
                    Expr::I64(i64::from(self.options.reduce_groups)),
                ),
            ),
            Expr::I64(wg),
        );
        let mut k = Kern::new(self);
        note_all(&mut k, seg, "@grid: three-stage scan (shares per work-item, then their totals)");
        let kn = k.import_index(n);
        let kshare = k.import_index(share);
        let ne = k.import_val(&ne);
        let me = k.tmp("me", Elem::I64, CExpr::work_item("get_global_id", 0));
        let start = k.tmp("start", Elem::I64, CExpr::mul(me.clone(), kshare.clone()));
        let end = k.tmp(
            "end",
            Elem::I64,
            CExpr::call("min", vec![CExpr::add(start.clone(), kshare), kn]),
        );
        let acc = k.declare_like(&ne, "acc")?;
        let ptrs: Vec<std::rc::Rc<str>> =
            totals.iter().zip(&elems).map(|(b, e)| k.buffer_param(*b, *e)).collect();
        match write {
            None => k.assign(&acc, &ne)?,
            Some(()) => {
                let prefix: Vec<(CExpr, Elem)> = ptrs
                    .iter()
                    .zip(&elems)
                    .map(|(p, e)| (CExpr::load(p, me.clone()), *e))
                    .collect();
                let prefix = rebuild(&ne, &mut prefix.into_iter());
                k.assign(&acc, &prefix)?;
            }
        }
        let results: Vec<KVal> = match write {
            Some(()) => stmt
                .vars
                .iter()
                .map(|&v| {
                    let info = k.memory(v);
                    let hint = k.tr.f.vars[v].name.to_string();
                    k.value_of(&info, &hint)
                })
                .collect::<Res<_>>()?,
            None => Vec::new(),
        };
        let acc2 = acc.clone();
        let comment = k.comment(origin);
        k.for_loop("j", CExpr::sub(end, start.clone()), comment, &mut |k, j| {
            let i = k.tmp("i", Elem::I64, CExpr::add(start.clone(), j));
            k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
            let vals = k.block(seg.body)?;
            let r = apply_ops(k, ops, &acc2, &KVal::Tuple(vals))?;
            k.assign_staged(&acc2, &r)?;
            if write.is_some() {
                store_leaves(k, &results, &[i], &acc2)?;
            }
            Ok(())
        })?;
        if write.is_none() {
            let mut leaves = Vec::new();
            acc.scalars(&mut leaves);
            for ((ptr, (v, _)), elem) in ptrs.iter().zip(leaves).zip(&elems) {
                let v = if *elem == Elem::Bool { CExpr::cast(Elem::Bool, v) } else { v };
                k.emit(Cmd::Store { ptr: ptr.clone(), index: me.clone(), value: v });
            }
        }
        let doc = format!(
            "{}: each work-item's contiguous share{}",
            kind.replace('_', " "),
            at(&k, origin)
        );
        let name = k.tr.kernel_name(kind);
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![items], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// The second stage of a scan: one group replaces `items` totals by their exclusive
    /// prefixes (each work-item a contiguous run of them, then one work-item over the
    /// runs' totals).
    fn scan_totals(
        &mut self,
        ops: &[SegBinOp],
        items: &Expr,
        totals: &[weft_plan::Var],
        elems: &[Elem],
        seg: &SegOp,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = self.group_size();
        let ne = self.neutral_host(ops)?;
        let mut k = Kern::new(self);
        k.can_return = false;
        note_all(&mut k, seg, "@grid: three-stage scan (the totals' prefixes, one work-group)");
        let kitems = k.import_index(items);
        let ne = k.import_val(&ne);
        let ptrs: Vec<std::rc::Rc<str>> =
            totals.iter().zip(elems).map(|(b, e)| k.buffer_param(*b, *e)).collect();
        let locals: Vec<std::rc::Rc<str>> = elems
            .iter()
            .map(|e| {
                k.local_param("run", *e, Expr::I64(wg), "each work-item's run total of a scan")
            })
            .collect();
        let t = k.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let run = k.tmp(
            "run",
            Elem::I64,
            CExpr::bin(COp::Div, CExpr::add(kitems.clone(), CExpr::Int(wg - 1)), CExpr::Int(wg)),
        );
        let start = k.tmp("start", Elem::I64, CExpr::mul(t.clone(), run.clone()));
        let end = k.tmp(
            "end",
            Elem::I64,
            CExpr::call("min", vec![CExpr::add(start.clone(), run), kitems]),
        );
        let load_at = |ptrs: &[std::rc::Rc<str>], i: &CExpr| -> KVal {
            let leaves: Vec<(CExpr, Elem)> =
                ptrs.iter().zip(elems).map(|(p, e)| (CExpr::load(p, i.clone()), *e)).collect();
            rebuild(&ne, &mut leaves.into_iter())
        };
        // The run's total.
        let acc = k.declare_like(&ne, "acc")?;
        k.assign(&acc, &ne)?;
        let acc2 = acc.clone();
        let ptrs2 = ptrs.clone();
        k.for_loop("j", CExpr::sub(end.clone(), start.clone()), None, &mut |k, j| {
            let i = CExpr::add(start.clone(), j);
            let x = load_at(&ptrs2, &i);
            let r = apply_ops(k, ops, &acc2, &x)?;
            k.assign_staged(&acc2, &r)
        })?;
        store_scalars(&mut k, &locals, &t, &acc);
        k.emit(Cmd::Barrier);
        // One work-item: the runs' exclusive prefixes, in local memory.
        k.push();
        let carry = k.declare_like(&ne, "carry")?;
        k.assign(&carry, &ne)?;
        let carry2 = carry.clone();
        let locals2 = locals.clone();
        k.for_loop("r", CExpr::Int(wg), None, &mut |k, r| {
            let x = load_at(&locals2, &r);
            let x = k.bind_loaded("x", x);
            store_scalars(k, &locals2, &r, &carry2);
            let next = apply_ops(k, ops, &carry2, &x)?;
            k.assign_staged(&carry2, &next)
        })?;
        let then_cmds = k.pop();
        k.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0)),
            then_cmds,
            else_cmds: vec![],
        });
        k.emit(Cmd::Barrier);
        // Each run from its prefix: exclusive prefixes of the totals.
        let prefix = load_at(&locals, &t);
        k.assign(&acc, &prefix)?;
        let acc3 = acc.clone();
        k.for_loop("j", CExpr::sub(end, start.clone()), None, &mut |k, j| {
            let i = k.tmp("i", Elem::I64, CExpr::add(start.clone(), j));
            let x = load_at(&ptrs, &i);
            let x = k.bind_loaded("x", x);
            store_scalars(k, &ptrs, &i, &acc3);
            let next = apply_ops(k, ops, &acc3, &x)?;
            k.assign_staged(&acc3, &next)
        })?;
        let doc = format!("scan totals: one work-group's exclusive prefixes{}", at(&k, origin));
        let name = k.tr.kernel_name("scan_prefixes");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![Expr::I64(wg)], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// `seghist@grid`.
    fn grid_hist(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        dest: &Atom,
        op: &SegBinOp,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let var = stmt.vars[0];
        let src = self.atom(dest)?;
        let out = self.binding(var)?;
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        if !info.leaves().iter().all(|a| a.how == weft_mem::Provenance::InPlace) {
            self.copy_value(&src, &out, "hist_dest")?;
        }
        let dims = self.space_dims(seg)?;
        let (outer, inner) = dims.split_at(dims.len() - 1);
        let shape = super::host::shape_of(&out).unwrap_or_default();
        let bins = shape.last().cloned().unwrap_or(Expr::I64(0));
        let elems = self.operator_elems(std::slice::from_ref(op))?;
        let atomic = match (op.scalar_operator(self.f), elems.as_slice()) {
            (Some(cop), [elem]) => {
                let aop = match cop {
                    weft_core::CommutativeOp::Add => Some(AtomicOp::Add),
                    weft_core::CommutativeOp::Min => Some(AtomicOp::Min),
                    weft_core::CommutativeOp::Max => Some(AtomicOp::Max),
                    _ => None,
                };
                aop.filter(|a| a.supports(*elem)).map(|a| (a, *elem))
            }
            _ => None,
        };
        if let (Some((aop, elem)), HVal::Arr(dest)) = (atomic, &out) {
            let one_dimensional = outer.is_empty();
            let local_atomics = matches!(elem, Elem::I32 | Elem::U32 | Elem::F32);
            if one_dimensional && local_atomics {
                // 32-bit bins have atomics in local memory (a float addition is a
                // compare-and-swap loop there as in global memory): with few bins, each
                // work-group fills its own sub-histogram there, then adds it into the
                // bins (far fewer updates of global memory contend: k-means' 170 float
                // bins took 732 ms on the H100 with every update global).
                self.push_steps();
                self.atomic_hist(seg, &dims, dest, &bins, aop, elem, true, origin)?;
                let local = self.pop_steps();
                self.push_steps();
                self.atomic_hist(seg, &dims, dest, &bins, aop, elem, false, origin)?;
                let global = self.pop_steps();
                let few =
                    Expr::bin(weft_plan::BinOp::Le, bins.clone(), Expr::I64(LOCAL_HISTOGRAM_BINS));
                self.step(weft_plan::Step::If { cond: few, then_steps: local, else_steps: global });
            } else {
                self.atomic_hist(seg, &dims, dest, &bins, aop, elem, false, origin)?;
            }
            self.env.insert(var, out);
            return Ok(());
        }
        let wg = self.group_size();
        let outer_total = outer.iter().cloned().fold(Expr::I64(1), emul);
        let mut k = Kern::new(self);
        let kbins = k.import_index(&bins);
        let kout = match &out {
            HVal::Arr(a) => KVal::Arr(k.import_arr(a)),
            other => k.import_val(other),
        };
        let comment = k.comment(origin);
        // One work-item per bin of each segment folds the values of that bin.
        note_all(&mut k, seg, "@grid: one work-item per bin folds the values of its bin");
        let kouter: Vec<CExpr> = outer.iter().map(|d| k.import_index(d)).collect();
        let kinner = k.import_index(&inner[0]);
        let cells = emul(outer_total, bins);
        let kcells = k.import_index(&cells);
        let gid = k.fresh_name("cell");
        k.push();
        let mut cell_dims = kouter.clone();
        cell_dims.push(kbins.clone());
        let cell = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &cell_dims);
        let (cell_outer, my_bin) = cell.split_at(cell.len() - 1);
        for ((index, _), i) in seg.space.iter().zip(cell_outer) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let acc = k.load(&kout, &cell)?;
        let acc = k.declare_like(&acc, "acc")?;
        let current = k.load(&kout, &cell)?;
        k.assign(&acc, &current)?;
        let inner_index = seg.space[seg.space.len() - 1].0;
        let acc2 = acc.clone();
        let my_bin = my_bin[0].clone();
        k.for_loop("j", kinner, None, &mut |k, j| {
            k.bind(inner_index, KVal::Scalar(j, Elem::I64));
            let vals = k.block(seg.body)?;
            let (bin, value) = bin_and_value(k, &vals)?;
            k.push();
            let r = k.apply(&op.lambda, &[acc2.clone(), value])?;
            k.assign_staged(&acc2, &r)?;
            let then_cmds = k.pop();
            k.emit(Cmd::If {
                cond: CExpr::bin(COp::Eq, bin, my_bin.clone()),
                then_cmds,
                else_cmds: vec![],
            });
            Ok(())
        })?;
        k.store(&kout, &cell, &acc)?;
        let cmds = k.pop();
        k.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: gid,
            bound: kcells,
            body: cmds,
            comment,
        });
        let doc = format!("seghist@grid: one work-item per bin{}", at(&k, origin));
        let name = k.tr.kernel_name("hist");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        let global = self.let_var("items", cells);
        self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
        self.env.insert(var, out);
        Ok(())
    }

    /// A histogram whose operator is an atomic update of the bins: one work-item per
    /// point updates its bin in global memory, or (`sub_histograms`) in its work-group's
    /// copy of the bins in local memory, which the group then adds into the bins
    /// (Futhark's SegHist with local sub-histograms).
    #[expect(clippy::too_many_arguments, reason = "the histogram's whole description")]
    fn atomic_hist(
        &mut self,
        seg: &SegOp,
        dims: &[Expr],
        dest: &super::HArr,
        bins: &Expr,
        op: AtomicOp,
        elem: Elem,
        sub_histograms: bool,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let wg = self.group_size();
        let points = dims.iter().cloned().fold(Expr::I64(1), emul);
        let points = self.let_var("points", points);
        let groups = emax(
            Expr::I64(1),
            emin(
                eceil_div(points.clone(), Expr::I64(wg)),
                Expr::I64(i64::from(self.options.reduce_groups)),
            ),
        );
        let how = if sub_histograms {
            format!(
                "one work-item per value, an atomic {} into its work-group's bins in local memory, then into the bins",
                op.name()
            )
        } else {
            format!("one work-item per value, an atomic {} into its bin", op.name())
        };
        let mut k = Kern::new(self);
        note_all(&mut k, seg, &format!("@grid: {how}"));
        let kdims: Vec<CExpr> = dims.iter().map(|d| k.import_index(d)).collect();
        let kbins = k.import_index(bins);
        let kpoints = k.import_index(&points);
        let out = k.import_arr(dest);
        let identity = CExpr::cast(elem, CExpr::Int(op.identity_32(elem)));
        let sub = if sub_histograms {
            k.can_return = false;
            let sub = k.local_param("bins", elem, bins.clone(), "the work-group's sub-histogram");
            let b = k.fresh_name("b");
            let fill = vec![Cmd::Store {
                ptr: sub.clone(),
                index: CExpr::Var(b.clone()),
                value: identity.clone(),
            }];
            k.emit(Cmd::ParFor {
                level: ParLevel::Thread,
                var: b,
                bound: kbins.clone(),
                body: fill,
                comment: None,
            });
            k.emit(Cmd::Barrier);
            Some(sub)
        } else {
            None
        };
        let gid = k.fresh_name("gid");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &kdims);
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let vals = k.block(seg.body)?;
        let (bin, value) = bin_and_value(&mut k, &vals)?;
        let KVal::Scalar(v, _) = value else {
            return Err(LowerError::internal("a histogram value that is not a scalar"));
        };
        let (ptr, index) = match &sub {
            Some(sub) => (sub.clone(), bin.clone()),
            None => {
                let mut at = idx[..idx.len() - 1].to_vec();
                at.push(bin.clone());
                (out.ptr.clone(), out.address(&at))
            }
        };
        let update = Cmd::Atomic { op, elem, ptr, index, value: v, fetch: None };
        k.emit(Cmd::If {
            cond: in_range(bin, kbins.clone()),
            then_cmds: vec![update],
            else_cmds: vec![],
        });
        let cmds = k.pop();
        let comment = k.comment(origin);
        let level = if sub.is_some() { ParLevel::Grid(0) } else { ParLevel::GridCovered(0) };
        k.emit(Cmd::ParFor { level, var: gid, bound: kpoints, body: cmds, comment });
        let global = if let Some(sub) = sub {
            k.emit(Cmd::Barrier);
            // Bins the group never touched hold the identity: no update needed.
            let b = k.fresh_name("b");
            let count = CExpr::load(&sub, CExpr::Var(b.clone()));
            let add = Cmd::Atomic {
                op,
                elem,
                ptr: out.ptr.clone(),
                index: out.address(&[CExpr::Var(b.clone())]),
                value: count.clone(),
                fetch: None,
            };
            let merge = vec![Cmd::If {
                cond: CExpr::bin(COp::Ne, count, identity),
                then_cmds: vec![add],
                else_cmds: vec![],
            }];
            k.emit(Cmd::ParFor {
                level: ParLevel::Thread,
                var: b,
                bound: kbins,
                body: merge,
                comment: None,
            });
            emul(groups, Expr::I64(wg))
        } else {
            points
        };
        let doc = format!("seghist@grid: {how}{}", at(&k, origin));
        let name = k.tr.kernel_name("hist");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        let global = self.let_var("items", global);
        self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// `segscatter@grid`.
    fn grid_scatter(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        dest: &Atom,
        origin: Option<&Origin>,
    ) -> Res<()> {
        let var = stmt.vars[0];
        let src = self.atom(dest)?;
        let out = self.binding(var)?;
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        if !info.leaves().iter().all(|a| a.how == weft_mem::Provenance::InPlace) {
            self.copy_value(&src, &out, "scatter_dest")?;
        }
        let dims = self.space_dims(seg)?;
        let points = dims.iter().cloned().fold(Expr::I64(1), emul);
        let points = self.let_var("points", points);
        let n =
            super::host::shape_of(&out).and_then(|s| s.first().cloned()).unwrap_or(Expr::I64(0));
        let wg = self.group_size();
        let mut k = Kern::new(self);
        note_all(&mut k, seg, "@grid: one work-item per value writes it at its index");
        let kdims: Vec<CExpr> = dims.iter().map(|d| k.import_index(d)).collect();
        let kn = k.import_index(&n);
        let kpoints = k.import_index(&points);
        let kout = k.import_val(&out);
        let gid = k.fresh_name("gid");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &kdims);
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let vals = k.block(seg.body)?;
        let (at_index, value) = bin_and_value(&mut k, &vals)?;
        k.push();
        k.store(&kout, std::slice::from_ref(&at_index), &value)?;
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond: in_range(at_index, kn), then_cmds, else_cmds: vec![] });
        let cmds = k.pop();
        let comment = k.comment(origin);
        k.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: gid,
            bound: kpoints,
            body: cmds,
            comment,
        });
        let doc = format!("segscatter@grid: one work-item per value{}", at(&k, origin));
        let name = k.tr.kernel_name("scatter");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![points], Some(vec![Expr::I64(wg)]));
        self.env.insert(var, out);
        Ok(())
    }

    /// `segmap@group`: one work-group per point.
    fn group_map(&mut self, stmt: &Stmt, seg: &SegOp, origin: Option<&Origin>) -> Res<()> {
        let dims = self.space_dims(seg)?;
        let total = dims.iter().cloned().fold(Expr::I64(1), emul);
        let total = self.let_var("groups", total);
        let wg = self.group_size();
        let mut k = Kern::new(self);
        k.can_return = false;
        note_all(
            &mut k,
            seg,
            "@group: one work-group per point, its inner combinators over the group's work-items",
        );
        let n = k.import_index(&total);
        let kdims: Vec<CExpr> = dims.iter().map(|d| k.import_index(d)).collect();
        let gid = k.fresh_name("group");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &kdims);
        for ((index, _), i) in seg.space.iter().zip(&idx) {
            k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
        }
        let values = k.block(seg.body)?;
        // The values per point: arrays by the group's work-items, scalars by one.
        let f = k.tr.f;
        for ((&var, value), result) in
            stmt.vars.iter().zip(&values).zip(&f.blocks[seg.body].results)
        {
            if short_circuited(&k, var, result) {
                continue;
            }
            let info = k.memory(var);
            let hint = f.vars[var].name.to_string();
            let dest = k.value_of(&info, &hint)?;
            match value.shape() {
                Some(shape) => {
                    let t = k.fresh_name("t");
                    k.push();
                    let mut at = idx.clone();
                    at.push(CExpr::Var(t.clone()));
                    let row = k.row(value, &CExpr::Var(t.clone()))?;
                    k.store(&dest, &at, &row)?;
                    let body = k.pop();
                    k.emit(Cmd::ParFor {
                        level: ParLevel::Thread,
                        var: t,
                        bound: shape[0].clone(),
                        body,
                        comment: None,
                    });
                }
                None => {
                    k.push();
                    k.store(&dest, &idx, value)?;
                    let then_cmds = k.pop();
                    let first =
                        CExpr::bin(COp::Eq, CExpr::work_item("get_local_id", 0), CExpr::Int(0));
                    k.emit(Cmd::If { cond: first, then_cmds, else_cmds: vec![] });
                }
            }
        }
        k.emit(Cmd::Barrier);
        let cmds = k.pop();
        let comment = k.comment(origin);
        k.emit(Cmd::ParFor { level: ParLevel::Group, var: gid, bound: n, body: cmds, comment });
        let doc = format!("segmap@group: one work-group of {wg} per point{}", at(&k, origin));
        let name = k.tr.kernel_name("group");
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![emul(total, Expr::I64(wg))], Some(vec![Expr::I64(wg)]));
        Ok(())
    }
}

impl Kern<'_, '_> {
    /// A `thread` SegOp in a group body.
    pub(crate) fn thread_seg(
        &mut self,
        stmt: &Stmt,
        seg: &SegOp,
        origin: Option<&Origin>,
    ) -> Res<()> {
        if seg.level != SegLevel::Thread {
            return Err(LowerError::internal("a grid or group SegOp inside a kernel"));
        }
        let dims: Vec<CExpr> = seg.space.iter().map(|(_, b)| self.int(b)).collect::<Res<_>>()?;
        let wg = self.group_size;
        match &seg.kind {
            SegKind::Map => {
                let total = dims.iter().cloned().fold(CExpr::Int(1), CExpr::mul);
                let results: Vec<KVal> = stmt
                    .vars
                    .iter()
                    .map(|&v| {
                        let info = self.memory(v);
                        let hint = self.tr.f.vars[v].name.to_string();
                        self.value_of(&info, &hint)
                    })
                    .collect::<Res<_>>()?;
                let t = self.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
                let results2 = results.clone();
                self.share_loop(&total, &t, wg, true, origin, &mut |k, point| {
                    let idx = unflatten_index(k, &point, &dims);
                    for ((index, _), i) in seg.space.iter().zip(&idx) {
                        k.bind(*index, KVal::Scalar(i.clone(), Elem::I64));
                    }
                    let values = k.block(seg.body)?;
                    for (dest, value) in results2.iter().zip(&values) {
                        k.store(dest, &idx, value)?;
                    }
                    Ok(())
                })?;
                self.emit(Cmd::Barrier);
                for (&var, value) in stmt.vars.iter().zip(results) {
                    self.bind(var, value);
                }
                Ok(())
            }
            SegKind::Red(ops) if seg.space.len() == 1 => {
                let ne = self.neutral(ops)?;
                let elems = leaf_elems(&ne);
                let locals: Vec<std::rc::Rc<str>> = elems
                    .iter()
                    .map(|e| {
                        self.local_param(
                            "red",
                            *e,
                            Expr::I64(wg),
                            "the work-group's tree of partial results of a reduction",
                        )
                    })
                    .collect();
                let commutative = ops.iter().all(|op| op.commutative);
                let acc = self.declare_like(&ne, "acc")?;
                self.assign(&acc, &ne)?;
                let t = self.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
                let index = seg.space[0].0;
                let acc2 = acc.clone();
                self.share_loop(&dims[0], &t, wg, commutative, origin, &mut |k, i| {
                    k.bind(index, KVal::Scalar(i, Elem::I64));
                    let vals = k.block(seg.body)?;
                    let r = apply_ops(k, ops, &acc2, &KVal::Tuple(vals))?;
                    k.assign_staged(&acc2, &r)
                })?;
                let total = tree(self, ops, &acc, &locals, &elems, &t, wg, commutative)?;
                // Every work-item takes the total, then the tree may be reused.
                let total = self.bind_copy(&total)?;
                self.emit(Cmd::Barrier);
                let KVal::Tuple(parts) = total else {
                    return Err(LowerError::internal("a reduction total that is not a tuple"));
                };
                for (&var, v) in stmt.vars.iter().zip(parts) {
                    self.bind(var, v);
                }
                Ok(())
            }
            SegKind::Scan(ops) if seg.space.len() == 1 => {
                let ne = self.neutral(ops)?;
                let elems = leaf_elems(&ne);
                let locals: Vec<std::rc::Rc<str>> = elems
                    .iter()
                    .map(|e| {
                        self.local_param(
                            "run",
                            *e,
                            Expr::I64(wg),
                            "each work-item's run total of a scan",
                        )
                    })
                    .collect();
                let results: Vec<KVal> = stmt
                    .vars
                    .iter()
                    .map(|&v| {
                        let info = self.memory(v);
                        let hint = self.tr.f.vars[v].name.to_string();
                        self.value_of(&info, &hint)
                    })
                    .collect::<Res<_>>()?;
                let t = self.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
                let index = seg.space[0].0;
                let acc = self.declare_like(&ne, "acc")?;
                for pass in 0..2 {
                    let start = if pass == 0 {
                        ne.clone()
                    } else {
                        let leaves: Vec<(CExpr, Elem)> = locals
                            .iter()
                            .zip(&elems)
                            .map(|(l, e)| (CExpr::load(l, t.clone()), *e))
                            .collect();
                        rebuild(&ne, &mut leaves.into_iter())
                    };
                    self.assign(&acc, &start)?;
                    let acc2 = acc.clone();
                    let results2 = results.clone();
                    self.share_loop(&dims[0], &t, wg, false, origin, &mut |k, i| {
                        k.bind(index, KVal::Scalar(i.clone(), Elem::I64));
                        let vals = k.block(seg.body)?;
                        let r = apply_ops(k, ops, &acc2, &KVal::Tuple(vals))?;
                        k.assign_staged(&acc2, &r)?;
                        if pass == 1 {
                            store_leaves(k, &results2, &[i], &acc2)?;
                        }
                        Ok(())
                    })?;
                    if pass == 0 {
                        store_scalars(self, &locals, &t, &acc);
                        self.emit(Cmd::Barrier);
                        self.push();
                        let carry = self.declare_like(&ne, "carry")?;
                        self.assign(&carry, &ne)?;
                        let carry2 = carry.clone();
                        let locals2 = locals.clone();
                        let ne2 = ne.clone();
                        let elems2 = elems.clone();
                        self.for_loop("r", CExpr::Int(wg), None, &mut |k, r| {
                            let leaves: Vec<(CExpr, Elem)> = locals2
                                .iter()
                                .zip(&elems2)
                                .map(|(l, e)| (CExpr::load(l, r.clone()), *e))
                                .collect();
                            let x = rebuild(&ne2, &mut leaves.into_iter());
                            let x = k.bind_loaded("x", x);
                            store_scalars(k, &locals2, &r, &carry2);
                            let next = apply_ops(k, ops, &carry2, &x)?;
                            k.assign_staged(&carry2, &next)
                        })?;
                        let then_cmds = self.pop();
                        self.emit(Cmd::If {
                            cond: CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0)),
                            then_cmds,
                            else_cmds: vec![],
                        });
                        self.emit(Cmd::Barrier);
                    }
                }
                self.emit(Cmd::Barrier);
                for (&var, value) in stmt.vars.iter().zip(results) {
                    self.bind(var, value);
                }
                Ok(())
            }
            _ => Err(LowerError::unsupported(
                "a segmented reduction, scan or histogram over a work-group's threads",
                origin,
            )),
        }
    }

    /// The operators' neutral elements as one kernel value.
    fn neutral(&mut self, ops: &[SegBinOp]) -> Res<KVal> {
        let mut leaves = Vec::new();
        for op in ops {
            for ne in &op.neutral {
                leaves.push(self.atom(ne)?);
            }
        }
        Ok(KVal::Tuple(leaves))
    }

    /// A copy of a scalar value in fresh variables (read from local memory before the
    /// memory is reused).
    fn bind_copy(&mut self, v: &KVal) -> Res<KVal> {
        let vars = self.declare_like(v, "total")?;
        self.assign(&vars, v)?;
        Ok(vars)
    }

    /// The loop over a work-item's share of `0..n` in a group: interleaved (`t`,
    /// `t + wg`, ...) or, for an operator that is not commutative, a contiguous run.
    fn share_loop(
        &mut self,
        n: &CExpr,
        t: &CExpr,
        wg: i64,
        interleaved: bool,
        origin: Option<&Origin>,
        body: &mut dyn FnMut(&mut Self, CExpr) -> Res<()>,
    ) -> Res<()> {
        let comment = self.comment(origin);
        if interleaved {
            // `t`, `t + wg`, ...: a loop whose stride the compiler knows (it unrolls it
            // and keeps several loads in flight; a stride of `get_local_size` it does not).
            let count = CExpr::call(
                "max",
                vec![
                    CExpr::Int(0),
                    CExpr::bin(
                        COp::Div,
                        CExpr::add(CExpr::sub(n.clone(), t.clone()), CExpr::Int(wg - 1)),
                        CExpr::Int(wg),
                    ),
                ],
            );
            let t = t.clone();
            return self.for_loop("k", count, comment, &mut |k, step| {
                let i =
                    k.tmp("i", Elem::I64, CExpr::add(t.clone(), CExpr::mul(step, CExpr::Int(wg))));
                body(k, i)
            });
        }
        let (start, end) = self.contiguous_share(n, t.clone(), CExpr::Int(wg));
        self.for_loop("j", CExpr::sub(end, start.clone()), comment, &mut |k, j| {
            let i = k.tmp("i", Elem::I64, CExpr::add(start.clone(), j));
            body(k, i)
        })
    }
}

/// Whether the group body's result `var` was built in place in its row (the memory
/// IR's short-circuiting): its block is the result's.
fn short_circuited(k: &Kern<'_, '_>, var: VarId, result: &Atom) -> bool {
    let Atom::Var(r) = result else { return false };
    let (a, b) = (k.memory(var), k.memory(*r));
    let (a, b) = (a.leaves(), b.leaves());
    !a.is_empty() && a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.block == y.block)
}

/// Writes a `segmap@grid` point's values into the results (nothing for a value the
/// memory IR built in its row).
fn write_results(
    k: &mut Kern<'_, '_>,
    stmt: &Stmt,
    seg: &SegOp,
    values: &[KVal],
    idx: &[CExpr],
) -> Res<()> {
    let f = k.tr.f;
    for ((&var, value), result) in stmt.vars.iter().zip(values).zip(&f.blocks[seg.body].results) {
        if short_circuited(k, var, result) {
            continue;
        }
        let info = k.memory(var);
        let hint = f.vars[var].name.to_string();
        let dest = k.value_of(&info, &hint)?;
        k.store(&dest, idx, value)?;
    }
    Ok(())
}

/// Stores the scalar leaves of `value` into the arrays `results` at `at`.
fn store_leaves(k: &mut Kern<'_, '_>, results: &[KVal], at: &[CExpr], value: &KVal) -> Res<()> {
    let mut leaves = Vec::new();
    value.scalars(&mut leaves);
    let mut dests = Vec::new();
    for r in results {
        flatten_arrays(r, &mut dests);
    }
    if dests.len() != leaves.len() {
        return Err(LowerError::internal("results and values of different shapes"));
    }
    for (dest, (v, elem)) in dests.iter().zip(leaves) {
        k.store(dest, at, &KVal::Scalar(v, elem))?;
    }
    Ok(())
}

fn flatten_arrays(v: &KVal, out: &mut Vec<KVal>) {
    match v {
        KVal::Tuple(parts) => parts.iter().for_each(|p| flatten_arrays(p, out)),
        other => out.push(other.clone()),
    }
}

/// Stores the scalar leaves of `value` at `index` of the local arrays `locals`.
fn store_scalars(k: &mut Kern<'_, '_>, locals: &[std::rc::Rc<str>], index: &CExpr, value: &KVal) {
    let mut leaves = Vec::new();
    value.scalars(&mut leaves);
    for (l, (v, elem)) in locals.iter().zip(leaves) {
        let v = if elem == Elem::Bool { CExpr::cast(Elem::Bool, v) } else { v };
        k.emit(Cmd::Store { ptr: l.clone(), index: index.clone(), value: v });
    }
}

fn leaf_elems(v: &KVal) -> Vec<Elem> {
    let mut leaves = Vec::new();
    v.scalars(&mut leaves);
    leaves.into_iter().map(|(_, e)| e).collect()
}

/// Combines accumulators with new values (each a tuple of one value per neutral
/// element): each operator its share of them, each value passed whole (a tuple-valued
/// operator's parameters are tuples).
pub(crate) fn apply_ops(k: &mut Kern<'_, '_>, ops: &[SegBinOp], acc: &KVal, x: &KVal) -> Res<KVal> {
    let parts = |v: &KVal| match v {
        KVal::Tuple(parts) => parts.clone(),
        other => vec![other.clone()],
    };
    let (acc_parts, x_parts) = (parts(acc), parts(x));
    let total: usize = ops.iter().map(SegBinOp::arity).sum();
    if acc_parts.len() != total || x_parts.len() != total {
        return Err(LowerError::internal("an operator applied to values of different shapes"));
    }
    let mut out = Vec::new();
    let mut at = 0;
    for op in ops {
        let n = op.arity();
        let args: Vec<KVal> =
            acc_parts[at..at + n].iter().chain(&x_parts[at..at + n]).cloned().collect();
        let r = k.apply(&op.lambda, &args)?;
        match (n, r) {
            (1, r) => out.push(r),
            (_, KVal::Tuple(rs)) if rs.len() == n => out.extend(rs),
            _ => return Err(LowerError::internal("an operator with the wrong number of results")),
        }
        at += n;
    }
    Ok(KVal::Tuple(out))
}

/// A host value of type `ty` from device scalars (a reduction's totals), in order.
fn device_value(ty: &weft_core::Type, leaves: &mut impl Iterator<Item = HVal>) -> Res<HVal> {
    match ty {
        weft_core::Type::Tuple(parts) => {
            Ok(HVal::Tuple(parts.iter().map(|p| device_value(p, leaves)).collect::<Res<_>>()?))
        }
        weft_core::Type::Scalar(_) => {
            leaves.next().ok_or_else(|| LowerError::internal("a reduction with too few totals"))
        }
        weft_core::Type::Array { .. } => {
            Err(LowerError::internal("a reduction total of an array type"))
        }
    }
}

/// The tree of a work-group's values in local memory: each work-item's `acc` is
/// stored, then halved in `log wg` steps (neighbours in order for an operator that
/// is not commutative); every work-item gets the total.
#[expect(clippy::too_many_arguments, reason = "the tree's whole description")]
fn tree(
    k: &mut Kern<'_, '_>,
    ops: &[SegBinOp],
    acc: &KVal,
    locals: &[std::rc::Rc<str>],
    elems: &[Elem],
    t: &CExpr,
    wg: i64,
    commutative: bool,
) -> Res<KVal> {
    store_scalars(k, locals, t, acc);
    k.emit(Cmd::Barrier);
    let load = |at: CExpr| -> KVal {
        let leaves: Vec<(CExpr, Elem)> =
            locals.iter().zip(elems).map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
        rebuild(acc, &mut leaves.into_iter())
    };
    let mut s = if commutative { wg / 2 } else { 1 };
    while if commutative { s > 0 } else { s < wg } {
        let cond = if commutative {
            CExpr::bin(COp::Lt, t.clone(), CExpr::Int(s))
        } else {
            CExpr::bin(
                COp::And,
                CExpr::bin(
                    COp::Eq,
                    CExpr::bin(COp::Rem, t.clone(), CExpr::Int(2 * s)),
                    CExpr::Int(0),
                ),
                CExpr::bin(COp::Lt, CExpr::add(t.clone(), CExpr::Int(s)), CExpr::Int(wg)),
            )
        };
        k.push();
        let a = load(t.clone());
        let a = k.bind_loaded("a", a);
        let b = load(CExpr::add(t.clone(), CExpr::Int(s)));
        let b = k.bind_loaded("b", b);
        let r = apply_ops(k, ops, &a, &b)?;
        store_scalars(k, locals, t, &r);
        let then_cmds = k.pop();
        k.emit(Cmd::If { cond, then_cmds, else_cmds: Vec::new() });
        k.emit(Cmd::Barrier);
        s = if commutative { s / 2 } else { s * 2 };
    }
    Ok(load(CExpr::Int(0)))
}

/// A histogram's or scatter's body values: the bin (index) as `long`, then the value.
fn bin_and_value(k: &mut Kern<'_, '_>, vals: &[KVal]) -> Res<(CExpr, KVal)> {
    let (first, rest) = vals.split_first().ok_or_else(|| LowerError::internal("no bin"))?;
    let KVal::Scalar(bin, elem) = first else {
        return Err(LowerError::internal("a bin that is not a scalar"));
    };
    let bin = if *elem == Elem::I64 { bin.clone() } else { CExpr::cast(Elem::I64, bin.clone()) };
    let bin = k.tmp("bin", Elem::I64, bin);
    let value = match rest {
        [one] => one.clone(),
        many => KVal::Tuple(many.to_vec()),
    };
    Ok((bin, value))
}

/// How a `segmap@grid`'s points map to work-items: NDRange dimensions (the first the
/// fastest), each the space dimensions merged into it, and the space dimensions each
/// work-item loops over.
struct Schedule {
    ndrange: Vec<Vec<usize>>,
    looped: Vec<usize>,
    local: Vec<i64>,
}

impl Schedule {
    /// A space of `n` dimensions: one dimension is a one-dimensional NDRange; on a CPU
    /// each work-item loops over the innermost dimension (its elements are contiguous
    /// in a core's cache, and the loop proves its reads in range), the outer ones over
    /// the NDRange (at most two, the outermost merged); on a GPU, neighbouring
    /// work-items take neighbouring points of the innermost dimension: a
    /// two-dimensional NDRange for two dimensions, all merged into one beyond.
    fn of(n: usize, cpu: bool, wg: i64) -> Schedule {
        let two_d = vec![32.min(wg), (wg / 32).max(1)];
        match n {
            0 | 1 => Schedule { ndrange: vec![vec![0]], looped: vec![], local: vec![wg] },
            _ if cpu => {
                let outer: Vec<usize> = (0..n - 1).collect();
                let (ndrange, local) = match outer.len() {
                    1 => (vec![outer], vec![wg]),
                    k => (vec![vec![k - 1], outer[..k - 1].to_vec()], two_d),
                };
                Schedule { ndrange, looped: vec![n - 1], local }
            }
            2 => Schedule { ndrange: vec![vec![1], vec![0]], looped: vec![], local: two_d },
            _ => Schedule { ndrange: vec![(0..n).collect()], looped: vec![], local: vec![wg] },
        }
    }

    fn describe(&self) -> String {
        let dims = self.ndrange.len();
        if self.looped.is_empty() {
            format!("one work-item per point ({dims}-D NDRange)")
        } else {
            format!("one work-item per row, a loop over its innermost dimension ({dims}-D NDRange)")
        }
    }
}

/// Whether a block runs no loop (nor a sequential combinator, nor a SegOp): a point of
/// a map with such a body is a few operations, which a CPU's work-item computes for a
/// run of points; a point with a loop has work enough of its own (a row of a stencil),
/// and runs of them would leave too few work-items for the cores.
fn light_body(f: &weft_opt::GpuFunction, block: weft_opt::BlockId) -> bool {
    f.blocks[block].stmts.iter().all(|stmt| match &f.exps[stmt.exp] {
        weft_opt::Exp::Basic(_) => true,
        weft_opt::Exp::If { then_branch, else_branch, .. } => {
            light_body(f, *then_branch) && light_body(f, *else_branch)
        }
        _ => false,
    })
}

/// Whether a block (its branches included) binds an array.
fn makes_arrays(f: &weft_opt::GpuFunction, block: weft_opt::BlockId) -> bool {
    f.blocks[block].stmts.iter().any(|stmt| {
        stmt.vars.iter().any(|&v| f.vars[v].ty.has_array())
            || f.exps[stmt.exp].nested_blocks().into_iter().any(|b| makes_arrays(f, b))
    })
}

/// A host value bound to a host variable before a kernel's launch (an NDRange size).
fn self_let(k: &mut Kern<'_, '_>, value: Expr) -> Expr {
    k.tr.let_var("items", value)
}

pub(crate) fn note_all(k: &mut Kern<'_, '_>, seg: &SegOp, role: &str) {
    let role = role_in_nest(seg, role);
    for o in &seg.origins {
        k.note(o, &role);
    }
}

/// Whether the code of `block` reads `array` other than at constant indices.
fn traverses(f: &weft_opt::GpuFunction, block: weft_opt::BlockId, array: VarId) -> bool {
    let constant = |items: &[weft_core::IndexItem]| {
        items.iter().all(|item| matches!(item, weft_core::IndexItem::Fix(Atom::Const(_))))
    };
    f.blocks[block].results.contains(&Atom::Var(array))
        || f.blocks[block].stmts.iter().any(|stmt| {
            let exp = &f.exps[stmt.exp];
            match exp {
                weft_opt::Exp::Basic(weft_core::Exp::Index { array: Atom::Var(read), items })
                    if *read == array && constant(items) =>
                {
                    false
                }
                _ => {
                    exp.operands().contains(&Atom::Var(array))
                        || exp.nested_blocks().into_iter().any(|b| traverses(f, b, array))
                }
            }
        })
}

/// The role of a SegOp's source expressions: a reduction, scan or histogram over more
/// than one dimension computes a nest (the maps around the combinator are its outer
/// dimensions), which runs in one grid that no level written on the combinator alone
/// describes, so its role names no level ("Make strategy explicit" leaves it).
fn role_in_nest(seg: &SegOp, role: &str) -> String {
    match role.strip_prefix("@grid: ") {
        Some(what) if seg.space.len() > 1 && !matches!(seg.kind, SegKind::Map) => {
            format!("{what}, with the maps around it in one grid")
        }
        _ => role.to_owned(),
    }
}

fn at(k: &Kern<'_, '_>, origin: Option<&Origin>) -> String {
    k.comment(origin).map(|p| format!(", {p}")).unwrap_or_default()
}
