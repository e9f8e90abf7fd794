//! Strategies that read through local memory:
//!
//! - a transposed copy (a 2-D memory array whose inner dimension is not contiguous)
//!   goes through 32×33 tiles in local memory, so that both the reads and the writes
//!   of neighbouring work-items are neighbouring addresses (FCL's shared-memory
//!   transpose);
//! - a segmented reduction (a `map` whose body ends in a `reduce` over a row, with a
//!   commutative operator) has two kernels: one row per work-item, and one row per
//!   work-group (the work-items stride over the row, coalesced, and combine in a tree),
//!   and, for rows of at most 32 elements of a row-major matrix, a third that first
//!   stages them through local memory with coalesced reads. The host picks per run by
//!   predicted time (`choose_rows`); rows of a constant length below 256 are one row
//!   per work-item, with no choice.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{Atom, Exp, FnId, Lambda, Program};
use weft_plan::{BinOp as HOp, Elem, Expr, Step, Var};

use crate::arr::{IExpr, Mem};
use crate::host::Lowerer;
use crate::imp::{CExpr, COp, Cmd, ParLevel};
use crate::kernel::KEnv;
use crate::val::{HArr, HEnv, KVal, PullSrc, Res};

const TILE: i64 = 32;
/// Rows at least this long are reduced by a whole work-group.
const GROUP_ROW_THRESHOLD: i64 = 256;
/// Rows at most this long (of a row-major matrix) are staged through local memory.
pub(crate) const STAGED_ROW_MAX: i64 = 32;

/// A 2-D memory array read with unit stride along its outer dimension only.
pub(crate) fn is_transposed(m: &Mem<Expr, Var>) -> bool {
    m.shape.len() == 2 && m.strides[0].as_int() == Some(1) && m.strides[1].as_int() != Some(1)
}

/// The parts of a segmented reduction: a map over rows whose body ends in a reduce.
pub(crate) struct Rows {
    pub(crate) func: FnId,
    pub(crate) lambda: Lambda,
    pub(crate) env: Rc<HEnv>,
    pub(crate) arrays: Vec<HArr>,
    /// Index of the final `reduce` statement in the lambda's body.
    pub(crate) reduce_stmt: usize,
}

pub(crate) fn segmented_reduce(program: &Program, a: &HArr) -> Option<Rows> {
    let HArr::Pull(p) = a else { return None };
    if !p.views.is_empty() || p.shape.len() != 1 {
        return None;
    }
    let PullSrc::Map { func, lambda, env, arrays, explicit } = &p.src else { return None };
    // An annotated `map` keeps its level: its rows are never given to work-groups.
    if *explicit {
        return None;
    }
    let function = &program.functions[*func];
    let body = &function.blocks[lambda.body];
    let last = body.stmts.last()?;
    if body.result != Some(Atom::Var(last.var)) {
        return None;
    }
    let Exp::Reduce { lambda: op, .. } = &function.exps[last.exp] else { return None };
    if !crate::soac::commutative(program, *func, op)
        || function.vars[last.var].ty.as_scalar().is_none()
    {
        return None;
    }
    Some(Rows {
        func: *func,
        lambda: lambda.clone(),
        env: env.clone(),
        arrays: arrays.clone(),
        reduce_stmt: body.stmts.len() - 1,
    })
}

impl<'p> Lowerer<'p> {
    pub(crate) fn transpose_tiled(
        &mut self,
        src: &Mem<Expr, Var>,
        dst: &Mem<Expr, Var>,
        name: &str,
    ) -> Res<()> {
        let mut kb = self.kb();
        kb.can_return = false;
        let s = kb.import_arr(&HArr::Mem(src.clone()))?;
        let d = kb.import_arr(&HArr::Mem(dst.clone()))?;
        let (crate::val::KArr::Mem(s), crate::val::KArr::Mem(d)) = (s, d) else {
            return Err(crate::LowerError::internal("tiled transpose of a non-memory array"));
        };
        let tile = kb.local_param(
            "tile",
            src.elem,
            Expr::I64(TILE * (TILE + 1)),
            "a tile of the transposed array, staged by the work-group",
        );
        let (rows, cols) = (s.shape[0].clone(), s.shape[1].clone());
        let tx = kb.tmp("tx", Elem::I64, CExpr::work_item("get_local_id", 0));
        let ty = kb.tmp("ty", Elem::I64, CExpr::work_item("get_local_id", 1));
        let bc = kb.tmp(
            "col0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(TILE)),
        );
        let br = kb.tmp(
            "row0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 1), CExpr::Int(TILE)),
        );
        // Read: work-item tx reads row br+tx (contiguous in the source), columns bc+ty+k.
        let mut load = Vec::new();
        let mut store = Vec::new();
        for k in (0..TILE).step_by(8) {
            let r = CExpr::add(br.clone(), tx.clone());
            let c = CExpr::add(bc.clone(), CExpr::add(ty.clone(), CExpr::Int(k)));
            let ok = CExpr::bin(
                COp::And,
                CExpr::bin(COp::Lt, r.clone(), rows.clone()),
                CExpr::bin(COp::Lt, c.clone(), cols.clone()),
            );
            let at = CExpr::add(
                CExpr::mul(CExpr::add(ty.clone(), CExpr::Int(k)), CExpr::Int(TILE + 1)),
                tx.clone(),
            );
            load.push(Cmd::If {
                cond: ok,
                then_cmds: vec![Cmd::Store {
                    ptr: tile.clone(),
                    index: at,
                    value: CExpr::load(&s.buf, s.address(&[r, c])),
                }],
                else_cmds: vec![],
            });
            // Write: work-item tx writes column bc+tx (contiguous in the result), rows br+ty+k.
            let r = CExpr::add(br.clone(), CExpr::add(ty.clone(), CExpr::Int(k)));
            let c = CExpr::add(bc.clone(), tx.clone());
            let ok = CExpr::bin(
                COp::And,
                CExpr::bin(COp::Lt, r.clone(), rows.clone()),
                CExpr::bin(COp::Lt, c.clone(), cols.clone()),
            );
            let at = CExpr::add(
                CExpr::mul(tx.clone(), CExpr::Int(TILE + 1)),
                CExpr::add(ty.clone(), CExpr::Int(k)),
            );
            store.push(Cmd::If {
                cond: ok,
                then_cmds: vec![Cmd::Store {
                    ptr: d.buf.clone(),
                    index: d.address(&[r, c]),
                    value: CExpr::load(&tile, at),
                }],
                else_cmds: vec![],
            });
        }
        for c in load {
            kb.emit(c);
        }
        kb.emit(Cmd::Barrier);
        for c in store {
            kb.emit(c);
        }
        let round = |e: Expr, to: i64| {
            Expr::mul(Expr::div(Expr::add(e, Expr::I64(to - 1)), Expr::I64(to)), Expr::I64(to))
        };
        let rows_h = src.shape[0].clone();
        let cols_h = src.shape[1].clone();
        let global = vec![
            round(cols_h, TILE),
            Expr::div(Expr::mul(round(rows_h, TILE), Expr::I64(8)), Expr::I64(TILE)),
        ];
        let doc = format!(
            "materialises `{name}`, a transposed view: {TILE}x{TILE} tiles through local memory, coalesced reads and writes"
        );
        self.launch(kb, "transpose", doc, global, Some(vec![Expr::I64(TILE), Expr::I64(8)]));
        Ok(())
    }

    /// The length of the rows reduced, on the host, if it is known there.
    pub(crate) fn row_length(&mut self, rows: &Rows) -> Option<Expr> {
        let function = &self.program.functions[rows.func];
        let stmt = function.blocks[rows.lambda.body].stmts[rows.reduce_stmt];
        let Exp::Reduce { array, .. } = &function.exps[stmt.exp] else { return None };
        let Atom::Var(v) = array else { return None };
        let size = function.vars[*v].ty.outer_size()?.clone();
        if let Some(c) = size.as_constant() {
            // Short constant rows: one row per work-item needs no choice.
            return (c >= GROUP_ROW_THRESHOLD).then_some(Expr::I64(c));
        }
        let mut env = (*rows.env).clone();
        self.push_steps();
        let len = self.host_size(&mut env, &size).ok();
        let steps = self.pop_steps();
        // Only a size computable without device reads qualifies.
        if steps.is_empty() { len } else { None }
    }

    /// Both kernels of a segmented reduction and the host's choice between them.
    pub(crate) fn rows_reduce(
        &mut self,
        a: &HArr,
        rows: &Rows,
        out: &HArr,
        len: Expr,
        name: &str,
    ) -> Res<()> {
        let wg = i64::from(self.options.work_group);
        let n = a.shape()[0].clone();
        self.push_steps();
        let map_origin = match a {
            HArr::Pull(p) => p.origin.clone(),
            _ => None,
        };
        self.group_rows_kernel(rows, out, n.clone(), name, map_origin.as_ref())?;
        let then_steps = self.pop_steps();
        self.push_steps();
        self.copy_kernel(a, out, name)?;
        let per_item = self.pop_steps();
        let _ = wg;
        let staged = self.staged_rows_kernel(rows, out, n, &len, name)?;
        self.choose_rows(then_steps, per_item, staged, &len);
        Ok(())
    }

    /// Picks among the kernels of a segmented reduction by predicted time on the
    /// target profile (`Options::profile`): the comparison is a host condition over the
    /// sizes, evaluated per run, in femtoseconds (`weft_cost::model::Cost::time_fs`);
    /// the staged kernel only competes for rows of at most [`STAGED_ROW_MAX`]. Each
    /// kernel's hover says what was compared.
    fn choose_rows(
        &mut self,
        group: Vec<Step>,
        per_item: Vec<Step>,
        staged: Option<Vec<Step>>,
        len: &Expr,
    ) {
        let profile = self.options.profile.unwrap_or_else(crate::cost::default_profile);
        let functions = self.shared.borrow().functions.clone();
        let cost = |steps: &[Step]| crate::cost::launch_cost(&self.kernels, &functions, steps);
        let (Some(g), Some(i)) = (cost(&group), cost(&per_item)) else {
            // Not one launch each: the fixed rule (never the case for these kernels).
            self.step(Step::If {
                cond: Expr::bin(HOp::Ge, len.clone(), Expr::I64(GROUP_ROW_THRESHOLD)),
                then_steps: group,
                else_steps: per_item,
            });
            return;
        };
        let s = staged.as_deref().and_then(cost);
        let names = weft_cost::model::Names(
            self.shared.borrow().var_names.iter().map(|(v, n)| (*v, n.clone())).collect(),
        );
        let candidates: Vec<(&str, &(u32, weft_cost::model::Cost))> = [
            ("one row per work-group", Some(&g)),
            ("one row per work-item", Some(&i)),
            ("rows staged through local memory", s.as_ref()),
        ]
        .into_iter()
        .filter_map(|(what, c)| c.map(|c| (what, c)))
        .collect();
        for (what, (kernel, c)) in &candidates {
            let others: Vec<&str> =
                candidates.iter().filter(|(w, _)| w != what).map(|(w, _)| *w).collect();
            let text = format!(
                "; picked per run by predicted time on `{}` ({}) against {}: this kernel {}",
                profile.device.name,
                weft_cost::model::MODEL,
                others.join(" and "),
                crate::cost::summary(c, &names),
            );
            if let Some(k) = self.kernels.get_mut(*kernel as usize) {
                for (_, role) in &mut k.origins {
                    role.push_str(&text);
                }
            }
        }
        let tg = self.time_var(&g.1, profile, "time_group");
        let ti = self.time_var(&i.1, profile, "time_item");
        let group_or_item = Step::If {
            cond: Expr::bin(HOp::Le, tg.clone(), ti.clone()),
            then_steps: group,
            else_steps: per_item,
        };
        match (staged, s) {
            (Some(staged), Some(s)) => {
                let ts = self.time_var(&s.1, profile, "time_staged");
                let cond = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Le, len.clone(), Expr::I64(STAGED_ROW_MAX)),
                    Expr::bin(
                        HOp::And,
                        Expr::bin(HOp::Lt, ts.clone(), tg),
                        Expr::bin(HOp::Le, ts, ti),
                    ),
                );
                self.step(Step::If { cond, then_steps: staged, else_steps: vec![group_or_item] });
            }
            _ => self.step(group_or_item),
        }
    }

    /// Runs the candidate whose launch is predicted fastest on the target profile
    /// (`Options::profile`), chosen per run by host conditions over the sizes (times in
    /// femtoseconds, `Cost::time_fs`); ties go to the earlier candidate. Each kernel's
    /// hover says what was compared. A candidate that is not one launch makes the
    /// first one the fixed choice.
    pub(crate) fn choose_cheapest(&mut self, candidates: Vec<(&'static str, Vec<Step>)>) {
        let profile = self.options.profile.unwrap_or_else(crate::cost::default_profile);
        let functions = self.shared.borrow().functions.clone();
        let costs: Option<Vec<(u32, weft_cost::model::Cost)>> = candidates
            .iter()
            .map(|(_, steps)| crate::cost::launch_cost(&self.kernels, &functions, steps))
            .collect();
        let Some(costs) = costs else {
            if let Some((_, first)) = candidates.into_iter().next() {
                self.steps_mut().extend(first);
            }
            return;
        };
        let names = weft_cost::model::Names(
            self.shared.borrow().var_names.iter().map(|(v, n)| (*v, n.clone())).collect(),
        );
        for (i, (kernel, c)) in costs.iter().enumerate() {
            let others: Vec<&str> = candidates
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (w, _))| *w)
                .collect();
            let text = format!(
                "; picked per run by predicted time on `{}` ({}) against {}: this kernel {}",
                profile.device.name,
                weft_cost::model::MODEL,
                others.join(" and "),
                crate::cost::summary(c, &names),
            );
            if let Some(k) = self.kernels.get_mut(*kernel as usize) {
                for (_, role) in &mut k.origins {
                    role.push_str(&text);
                }
            }
        }
        let times: Vec<Expr> = costs
            .iter()
            .enumerate()
            .map(|(i, (_, c))| self.time_var(c, profile, &format!("time_{i}")))
            .collect();
        // From the last candidate backwards: `if t_i <= every later t then c_i else ...`.
        let mut pairs: Vec<(Vec<Step>, Expr)> =
            candidates.into_iter().map(|(_, s)| s).zip(times).collect();
        let Some((mut chosen, last_time)) = pairs.pop() else { return };
        let mut later = vec![last_time];
        while let Some((s, t)) = pairs.pop() {
            let cond = later
                .iter()
                .map(|u| Expr::bin(HOp::Le, t.clone(), u.clone()))
                .reduce(|a, b| Expr::bin(HOp::And, a, b))
                .unwrap_or(Expr::Bool(true));
            chosen = vec![Step::If { cond, then_steps: s, else_steps: chosen }];
            later.push(t);
        }
        self.steps_mut().extend(chosen);
    }

    /// A host variable holding a launch's predicted time in femtoseconds, computed by
    /// host `let`s before the choice.
    fn time_var(
        &mut self,
        cost: &weft_cost::model::Cost,
        profile: &weft_cost::profile::DeviceProfile,
        name: &str,
    ) -> Expr {
        let mut lets = Vec::new();
        let mut bind = |e: Expr| {
            if matches!(e, Expr::I64(_) | Expr::Var(_)) {
                return e;
            }
            lets.push(e);
            Expr::Var(Var(u32::MAX - lets.len() as u32))
        };
        let time = cost.time_fs(profile, &mut bind);
        // Number the temporaries as host variables, in order.
        let mut vars = Vec::new();
        for value in lets {
            let value = weft_cost::model::subst(&value, &|v| {
                (v.0 > u32::MAX - 64).then(|| Expr::Var(vars[(u32::MAX - v.0 - 1) as usize]))
            });
            let var = self.new_var("cost");
            self.step(Step::Let { var, value });
            vars.push(var);
        }
        let time = weft_cost::model::subst(&time, &|v| {
            (v.0 > u32::MAX - 64).then(|| Expr::Var(vars[(u32::MAX - v.0 - 1) as usize]))
        });
        let var = self.new_var(name);
        self.step(Step::Let { var, value: time });
        Expr::Var(var)
    }

    /// Short rows of a row-major matrix: a work-group copies its 256 rows into local
    /// memory with coalesced reads (padded, so that the column walk is free of bank
    /// conflicts), then each work-item reduces one row from local memory.
    fn staged_rows_kernel(
        &mut self,
        rows: &Rows,
        out: &HArr,
        n: Expr,
        len: &Expr,
        name: &str,
    ) -> Res<Option<Vec<Step>>> {
        let wg = i64::from(self.options.work_group);
        let program = self.program;
        let function = &program.functions[rows.func];
        let body = &function.blocks[rows.lambda.body];
        let last = body.stmts[rows.reduce_stmt];
        let Exp::Reduce { lambda: op, neutral, array, .. } = &function.exps[last.exp] else {
            return Ok(None);
        };
        let ([param], [HArr::Mem(m)], 0) =
            (rows.lambda.params.as_slice(), rows.arrays.as_slice(), rows.reduce_stmt)
        else {
            return Ok(None);
        };
        if *array != Atom::Var(*param)
            || m.shape.len() != 2
            || !m.is_row_major()
            || m.elem == Elem::Bool
        {
            return Ok(None);
        }
        let elem = m.elem;
        self.push_steps();
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = self.origin(rows.func, last.exp) {
            kb.note(&o, "@grid: short rows staged through local memory (coalesced reads), one row per work-item");
        }
        let src = kb.import_arr(&rows.arrays[0])?;
        let crate::val::KArr::Mem(src) = src else {
            let _ = self.pop_steps();
            return Ok(None);
        };
        let dst = kb.import_arr(out)?;
        let kn = kb.import_index(&n);
        let km = kb.import_index(len);
        let local = kb.local_param(
            "rows",
            elem,
            Expr::I64(wg * (STAGED_ROW_MAX + 1)),
            "the work-group's rows of a segmented reduction, staged",
        );
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let r0 = kb.tmp(
            "row0",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(wg)),
        );
        let here = kb.tmp(
            "rows_here",
            Elem::I64,
            CExpr::call("min", vec![CExpr::Int(wg), CExpr::sub(kn, r0.clone())]),
        );
        let count = kb.tmp("count", Elem::I64, CExpr::mul(here.clone(), km.clone()));
        let fi = kb.fresh_name("f");
        let f = CExpr::Var(fi.clone());
        let load = vec![Cmd::Store {
            ptr: local.clone(),
            index: CExpr::add(
                CExpr::mul(
                    CExpr::bin(COp::Div, f.clone(), km.clone()),
                    CExpr::add(km.clone(), CExpr::Int(1)),
                ),
                CExpr::bin(COp::Rem, f.clone(), km.clone()),
            ),
            value: CExpr::load(
                &src.buf,
                CExpr::add(src.offset.clone(), CExpr::add(CExpr::mul(r0.clone(), km.clone()), f)),
            ),
        }];
        kb.emit(Cmd::ParFor {
            level: ParLevel::Thread,
            var: fi,
            bound: count,
            body: load,
            comment: None,
        });
        kb.emit(Cmd::Barrier);
        kb.push();
        let mut env = KEnv { vars: FxHashMap::default(), host: Some(rows.env.clone()) };
        let ne = kb.atom(rows.func, &mut env, neutral)?;
        let acc = kb.declare_like(&ne)?;
        kb.assign(&acc, &ne)?;
        let c = kb.fresh_name("c");
        kb.push();
        let x = KVal::Scalar(
            CExpr::load(
                &local,
                CExpr::add(
                    CExpr::mul(t.clone(), CExpr::add(km.clone(), CExpr::Int(1))),
                    CExpr::Var(c.clone()),
                ),
            ),
            elem,
        );
        let mut lenv = env.clone();
        lenv.vars.insert(op.params[0], acc.clone());
        lenv.vars.insert(op.params[1], x);
        let r = kb.block(rows.func, &mut lenv, op.body)?;
        kb.assign(&acc, &r)?;
        let inner = kb.pop();
        kb.emit(Cmd::For { var: c, bound: km, body: inner, comment: None });
        kb.write(&dst, &[CExpr::add(r0.clone(), t.clone())], &acc)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: CExpr::bin(COp::Lt, t, here), then_cmds, else_cmds: vec![] });
        let groups = Expr::div(Expr::add(n, Expr::I64(wg - 1)), Expr::I64(wg));
        let doc = format!(
            "materialises `{name}`: rows of at most {STAGED_ROW_MAX} elements staged through local memory, one row per work-item"
        );
        self.launch(
            kb,
            "rows_staged",
            doc,
            vec![Expr::mul(groups, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(Some(self.pop_steps()))
    }

    fn group_rows_kernel(
        &mut self,
        rows: &Rows,
        out: &HArr,
        n: Expr,
        name: &str,
        map_origin: Option<&weft_core::Origin>,
    ) -> Res<()> {
        let wg = i64::from(self.options.work_group);
        let program = self.program;
        let function = &program.functions[rows.func];
        let body = &function.blocks[rows.lambda.body];
        let last = body.stmts[rows.reduce_stmt];
        let Exp::Reduce { lambda: op, neutral, array, .. } = &function.exps[last.exp] else {
            return Err(crate::LowerError::internal("segmented reduce"));
        };
        let mut kb = self.kb();
        kb.can_return = false;
        if let Some(o) = self.origin(rows.func, last.exp) {
            kb.note(&o, "@group: one row per work-group, a tree in local memory (long rows)");
        }
        // The map's rows go to work-groups here and to work-items in the other kernel:
        // the level is chosen per run, which no annotation can state.
        if let Some(o) = map_origin {
            kb.note(o, "@group: one row per work-group");
        }
        let arrays: Vec<_> = rows.arrays.iter().map(|a| kb.import_arr(a)).collect::<Res<_>>()?;
        let dst = kb.import_arr(out)?;
        let kn = kb.import_index(&n);
        let elem = match function.vars[last.var].ty.as_scalar() {
            Some(s) => s,
            None => return Err(crate::LowerError::internal("segmented reduce of a non-scalar")),
        };
        let local = kb.local_param(
            "red",
            elem,
            Expr::I64(wg),
            "the work-group's tree of partial results of one row's reduction",
        );
        let t = kb.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let g = kb.fresh_name("row");
        kb.push();
        let mut env = KEnv { vars: FxHashMap::default(), host: Some(rows.env.clone()) };
        for (param, arr) in rows.lambda.params.iter().zip(&arrays) {
            let v = kb.index(arr, &[CExpr::Var(g.clone())])?;
            env.vars.insert(*param, v);
        }
        for stmt in &body.stmts[..rows.reduce_stmt] {
            let v = kb.exp(rows.func, &mut env, stmt.exp, stmt.var)?;
            let ty = &function.vars[stmt.var].ty;
            kb.bind_sizes(&mut env, ty, &v);
            env.vars.insert(stmt.var, v);
        }
        let KVal::Arr(row) = kb.atom(rows.func, &mut env, array)? else {
            return Err(crate::LowerError::internal("segmented reduce input"));
        };
        let ne = kb.atom(rows.func, &mut env, neutral)?;
        let acc = kb.declare_like(&ne)?;
        kb.assign(&acc, &ne)?;
        // Four neighbouring elements per iteration (independent loads; the operator is
        // commutative), then the last `len % 4` elements.
        let len = row.shape()[0].clone();
        let quads = kb.tmp("quads", Elem::I64, CExpr::bin(COp::Div, len.clone(), CExpr::Int(4)));
        let q = kb.fresh_name("q");
        kb.push();
        let base = kb.tmp("base", Elem::I64, CExpr::mul(CExpr::Var(q.clone()), CExpr::Int(4)));
        let mut xs = Vec::new();
        for k in 0..4 {
            let x = kb.index(&row, &[CExpr::add(base.clone(), CExpr::Int(k))])?;
            let x = kb.declare_like(&x).and_then(|v| kb.assign(&v, &x).map(|()| v))?;
            xs.push(x);
        }
        for x in xs {
            let mut lenv = env.clone();
            lenv.vars.insert(op.params[0], acc.clone());
            lenv.vars.insert(op.params[1], x);
            let r = kb.block(rows.func, &mut lenv, op.body)?;
            kb.assign(&acc, &r)?;
        }
        let inner = kb.pop();
        kb.emit(Cmd::ParFor {
            level: ParLevel::Thread,
            var: q,
            bound: quads.clone(),
            body: inner,
            comment: None,
        });
        let tail =
            kb.tmp("tail", Elem::I64, CExpr::add(CExpr::mul(quads, CExpr::Int(4)), t.clone()));
        kb.push();
        let x = kb.index(&row, std::slice::from_ref(&tail))?;
        let mut lenv = env.clone();
        lenv.vars.insert(op.params[0], acc.clone());
        lenv.vars.insert(op.params[1], x);
        let r = kb.block(rows.func, &mut lenv, op.body)?;
        kb.assign(&acc, &r)?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If { cond: CExpr::bin(COp::Lt, tail, len), then_cmds, else_cmds: vec![] });
        let KVal::Scalar(accv, _) = &acc else {
            return Err(crate::LowerError::internal("accumulator"));
        };
        kb.emit(Cmd::Store { ptr: local.clone(), index: t.clone(), value: accv.clone() });
        kb.emit(Cmd::Barrier);
        let mut s = wg / 2;
        while s > 0 {
            kb.push();
            let a = KVal::Scalar(CExpr::load(&local, t.clone()), elem);
            let b = KVal::Scalar(CExpr::load(&local, CExpr::add(t.clone(), CExpr::Int(s))), elem);
            let mut oenv = env.clone();
            oenv.vars.insert(op.params[0], a);
            oenv.vars.insert(op.params[1], b);
            let r = kb.block(rows.func, &mut oenv, op.body)?;
            if let KVal::Scalar(v, _) = r {
                kb.emit(Cmd::Store { ptr: local.clone(), index: t.clone(), value: v });
            }
            let then_cmds = kb.pop();
            kb.emit(Cmd::If {
                cond: CExpr::bin(COp::Lt, t.clone(), CExpr::Int(s)),
                then_cmds,
                else_cmds: vec![],
            });
            kb.emit(Cmd::Barrier);
            s /= 2;
        }
        kb.push();
        kb.write(
            &dst,
            &[CExpr::Var(g.clone())],
            &KVal::Scalar(CExpr::load(&local, CExpr::Int(0)), elem),
        )?;
        let then_cmds = kb.pop();
        kb.emit(Cmd::If {
            cond: CExpr::bin(COp::Eq, t.clone(), CExpr::Int(0)),
            then_cmds,
            else_cmds: vec![],
        });
        kb.emit(Cmd::Barrier);
        let row_body = kb.pop();
        kb.emit(Cmd::ParFor {
            level: ParLevel::Group,
            var: g,
            bound: kn,
            body: row_body,
            comment: None,
        });
        let groups = Expr::bin(HOp::Max, Expr::I64(1), Expr::bin(HOp::Min, n, Expr::I64(65536)));
        let doc = format!(
            "materialises `{name}`: one row per work-group of {wg}, coalesced reads, a tree in local memory"
        );
        self.launch(
            kb,
            "rows",
            doc,
            vec![Expr::mul(groups, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(())
    }
}
