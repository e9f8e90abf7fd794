//! Explicit work-group strategies (LANGUAGE.md §6): the body of a `map@group` runs on
//! every work-item of one work-group; inside it `map@thread` spreads iterations over
//! the group's work-items, `reduce@group` and `scan@group` cooperate through local
//! memory, and `to_local` copies into local memory cooperatively. Every cooperative
//! phase ends with a barrier, in uniform control flow. The levels are kept as written
//! (DPIA's strategy preservation): nothing here re-levels a combinator.
//!
//! Arrays that cross work-items (the result of `map@thread`, `to_local`,
//! `scan@group`) live in local memory; their sizes must be known on the host, since
//! local buffers are kernel arguments sized at launch (hoisted allocations, not
//! multiplied by the number of groups).

use rustc_hash::FxHashMap;
use weft_core::{Atom, CoreSize, FnId, Lambda, Origin, Type};
use weft_plan::{Elem, Expr};

use crate::LowerError;
use crate::arr::{IExpr, Mem};
use crate::host::Lowerer;
use crate::imp::{CExpr, COp, Cmd, ParLevel};
use crate::kernel::{KEnv, Kb, elem_and_rank, leaves};
use crate::val::{HArr, HVal, KArr, KVal, Res, rebuild, scalar_leaves};

impl Kb<'_> {
    /// A size as a host expression, when every variable in it is known on the host.
    fn host_size(&self, env: &KEnv, size: &CoreSize) -> Option<Expr> {
        let mut total = Expr::I64(0);
        for term in size.terms() {
            let mut prod = Expr::I64(term.coeff());
            for atom in term.monomial().atoms() {
                let factor = match atom {
                    weft_size::Atom::Var(v) => match env.host.as_ref()?.get(v)? {
                        HVal::Scalar(crate::val::HScalar::Host(e, Elem::I64)) => e.clone(),
                        _ => return None,
                    },
                    weft_size::Atom::Div(p, q) => {
                        Expr::div(self.host_size(env, p)?, self.host_size(env, q)?)
                    }
                };
                prod = Expr::mul(prod, factor);
            }
            total = Expr::add(total, prod);
        }
        Some(total)
    }

    /// Local buffers for an array of type `ty` (one per leaf), row-major.
    fn local_array(
        &mut self,
        env: &KEnv,
        ty: &Type,
        shape: Vec<CExpr>,
        hint: &str,
        origin: Option<&Origin>,
        why: &str,
    ) -> Res<KArr> {
        let (elem_ty, rank) = elem_and_rank(ty);
        let mut len = Expr::I64(1);
        let mut t = ty;
        for _ in 0..rank {
            let Type::Array { size, elem } = t else { break };
            let Some(h) = self.host_size(env, size) else {
                return Err(LowerError::unsupported(
                    "an array in local memory whose size is not known when the kernel is launched",
                    origin,
                ));
            };
            len = Expr::mul(len, h);
            t = elem;
        }
        let mut parts = Vec::new();
        for elem in leaves(&elem_ty)? {
            let name = self.local_param(hint, elem, len.clone(), why);
            parts.push(KArr::Mem(Mem::fresh(name, elem, shape.clone())));
        }
        let arr = crate::val::Nesting::of_type(&elem_ty)
            .regroup(&mut parts.into_iter(), &KArr::Zip)
            .ok_or_else(|| LowerError::internal("a local array with no leaves"))?;
        self.record_origin(&arr, origin);
        Ok(arr)
    }

    /// Every work-item writes its share of `src` into `dst`; then a barrier.
    fn cooperative_write(
        &mut self,
        dst: &KArr,
        prefix: &[CExpr],
        src: &KArr,
        comment: Option<String>,
    ) -> Res<()> {
        let n = src.shape()[0].clone();
        let i = self.fresh_name("i");
        self.push();
        let v = self.index(src, &[CExpr::Var(i.clone())])?;
        let mut at = prefix.to_vec();
        at.push(CExpr::Var(i.clone()));
        self.write(dst, &at, &v)?;
        let body = self.pop();
        self.emit(Cmd::ParFor { level: ParLevel::Thread, var: i, bound: n, body, comment });
        self.emit(Cmd::Barrier);
        Ok(())
    }

    #[expect(clippy::wrong_self_convention, reason = "`to_local` is the source construct's name")]
    pub(crate) fn to_local(
        &mut self,
        env: &KEnv,
        arr: KArr,
        ty: &Type,
        hint: &str,
        origin: Option<&Origin>,
    ) -> Res<KArr> {
        if let Some(o) = origin {
            self.note(o, "to_local: copied into local memory by the work-group's work-items");
        }
        let why = self.because("materialised by `to_local` inside a `map@group` body", origin);
        let dst = self.local_array(env, ty, arr.shape(), hint, origin, &why)?;
        let comment = self.comment(origin);
        self.cooperative_write(&dst, &[], &arr, comment)?;
        Ok(dst)
    }

    /// `map@thread` (and `generate@thread`) in a group: each work-item computes its
    /// iterations into local memory. When the size is not known at launch (a def's own
    /// size parameter), the results stay a pull array: each element is computed where it
    /// is read (pure, so correct; the read may be on another work-item).
    #[expect(clippy::too_many_arguments, reason = "the combinator's parts")]
    pub(crate) fn thread_map(
        &mut self,
        f: FnId,
        env: &mut KEnv,
        lambda: &Lambda,
        arrays: Vec<KArr>,
        ty: &Type,
        hint: &str,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        let n = arrays[0].shape()[0].clone();
        let (_, rank) = elem_and_rank(&lambda.ret);
        let mut shape = vec![n.clone()];
        shape.extend(self.type_shape(env, &lambda.ret, rank)?);
        let why = self.because(
            "the results of a `map@thread`, written by the work-items of one work-group",
            origin,
        );
        let dst = match self.local_array(env, ty, shape.clone(), hint, origin, &why) {
            Ok(dst) => dst,
            Err(e) if e.unsupported => {
                if let Some(o) = origin {
                    self.note(o, "@thread: computed where each element is read (its size is not known at launch, so no local memory)");
                }
                let lambda = lambda.clone();
                let env2 = env.clone();
                let pf: crate::val::PullFn =
                    std::rc::Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
                        let mut lenv = env2.clone();
                        for (p, a) in lambda.params.iter().zip(&arrays) {
                            let v = kb.index(a, &idx[..1])?;
                            lenv.vars.insert(*p, v);
                        }
                        let was = std::mem::replace(&mut kb.in_group, false);
                        let r = kb.block(f, &mut lenv, lambda.body);
                        kb.in_group = was;
                        kb.index_val(&r?, &idx[1..])
                    });
                return Ok(KVal::Arr(KArr::Pull { shape, f: pf, row: None }));
            }
            Err(e) => return Err(e),
        };
        if let Some(o) = origin {
            self.note(
                o,
                "@thread: one iteration per work-item of the group, results in local memory",
            );
        }
        let i = self.fresh_name("i");
        self.push();
        let mut lenv = env.clone();
        for (p, a) in lambda.params.iter().zip(&arrays) {
            let v = self.index(a, &[CExpr::Var(i.clone())])?;
            lenv.vars.insert(*p, v);
        }
        // Inside one iteration the work-item is on its own.
        let was = std::mem::replace(&mut self.in_group, false);
        let r = self.block(f, &mut lenv, lambda.body);
        self.in_group = was;
        let r = r?;
        self.write(&dst, &[CExpr::Var(i.clone())], &r)?;
        let body = self.pop();
        let comment = self.comment(origin);
        self.emit(Cmd::ParFor { level: ParLevel::Thread, var: i, bound: n, body, comment });
        self.emit(Cmd::Barrier);
        Ok(KVal::Arr(dst))
    }

    /// Applies a binary operator lambda to two values.
    pub(crate) fn apply(
        &mut self,
        f: FnId,
        env: &KEnv,
        lambda: &Lambda,
        a: KVal,
        b: KVal,
    ) -> Res<KVal> {
        let mut lenv = env.clone();
        lenv.vars.insert(lambda.params[0], a);
        lenv.vars.insert(lambda.params[1], b);
        self.block(f, &mut lenv, lambda.body)
    }

    fn scratch(&mut self, like: &KVal, hint: &str, why: &str) -> Vec<(std::rc::Rc<str>, Elem)> {
        let mut ls = Vec::new();
        scalar_leaves(like, &mut ls);
        let wg = self.work_group;
        ls.into_iter().map(|(_, e)| (self.local_param(hint, e, Expr::I64(wg), why), e)).collect()
    }

    /// `reduce@group`: each work-item folds a share, then a tree in local memory;
    /// every work-item gets the result. A commutative operator (weft-core's rule) folds
    /// an interleaved share (work-item `t` reads `t`, `t + WG`, ...: neighbouring
    /// work-items read neighbouring elements, coalesced) and the tree halves the active
    /// work-items each step; any other associative operator folds a contiguous share and
    /// combines neighbours in order.
    pub(crate) fn group_reduce(
        &mut self,
        f: FnId,
        env: &mut KEnv,
        lambda: &Lambda,
        neutral: &Atom,
        array: &Atom,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        let interleaved = crate::soac::commutative(self.program, f, lambda);
        if let Some(o) = origin {
            let how = if interleaved {
                "@group: the work-group's work-items fold interleaved shares (the operator is \
                 commutative), then a tree in local memory"
            } else {
                "@group: the work-group's work-items fold contiguous shares, then a tree in \
                 local memory"
            };
            self.note(o, how);
        }
        let arr = self.array(f, env, array)?;
        let ne = self.atom(f, env, neutral)?;
        let wg = self.work_group;
        let n = arr.shape()[0].clone();
        let t = self.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let acc = self.declare_like(&ne)?;
        self.assign(&acc, &ne)?;
        let k = self.fresh_name("k");
        let (i_of_k, bound) = if interleaved {
            // k runs over this work-item's elements t, t + WG, ...: ceil((n - t) / WG).
            let count = CExpr::bin(
                COp::Div,
                CExpr::add(CExpr::sub(n.clone(), t.clone()), CExpr::Int(wg - 1)),
                CExpr::Int(wg),
            );
            let i = CExpr::add(t.clone(), CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(wg)));
            (i, CExpr::call("max", vec![CExpr::Int(0), count]))
        } else {
            let per = self.tmp(
                "per",
                Elem::I64,
                CExpr::bin(COp::Div, CExpr::add(n.clone(), CExpr::Int(wg - 1)), CExpr::Int(wg)),
            );
            let start = self.tmp("start", Elem::I64, CExpr::mul(t.clone(), per.clone()));
            let end = self.tmp(
                "end",
                Elem::I64,
                CExpr::call("min", vec![CExpr::add(start.clone(), per), n]),
            );
            let i = CExpr::add(start.clone(), CExpr::Var(k.clone()));
            (i, CExpr::call("max", vec![CExpr::Int(0), CExpr::sub(end, start)]))
        };
        self.push();
        let i = self.tmp("i", Elem::I64, i_of_k);
        let x = self.index(&arr, &[i])?;
        let r = self.apply(f, env, lambda, acc.clone(), x)?;
        self.assign(&acc, &r)?;
        let body = self.pop();
        let comment = self.comment(origin);
        self.emit(Cmd::For { var: k, bound, body, comment });
        let locals = self.scratch(&ne, "red", "a `reduce@group`'s tree of partial results");
        let mut al = Vec::new();
        scalar_leaves(&acc, &mut al);
        for ((l, _), (v, _)) in locals.iter().zip(&al) {
            self.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v.clone() });
        }
        self.emit(Cmd::Barrier);
        let load = |at: CExpr| -> KVal {
            let ls: Vec<(CExpr, Elem)> =
                locals.iter().map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            rebuild(&ne, &mut ls.into_iter())
        };
        // Steps of the tree: (the partner's distance, whether this work-item combines).
        let steps: Vec<(i64, CExpr)> = if interleaved {
            // Sequential addressing: the first half combines with the second half, so
            // active work-items stay contiguous (whole warps retire together).
            let mut s = (wg as u64).next_power_of_two() as i64 / 2;
            let mut steps = Vec::new();
            while s >= 1 {
                let first_half = CExpr::bin(COp::Lt, t.clone(), CExpr::Int(s));
                // With a work-group size that is not a power of two, some partners are
                // missing.
                let active = if wg.count_ones() == 1 {
                    first_half
                } else {
                    let partner = CExpr::add(t.clone(), CExpr::Int(s));
                    CExpr::bin(COp::And, first_half, CExpr::bin(COp::Lt, partner, CExpr::Int(wg)))
                };
                steps.push((s, active));
                s /= 2;
            }
            steps
        } else {
            let mut s = 1;
            let mut steps = Vec::new();
            while s < wg {
                let active = CExpr::bin(
                    COp::Eq,
                    CExpr::bin(COp::Rem, t.clone(), CExpr::Int(2 * s)),
                    CExpr::Int(0),
                );
                steps.push((s, active));
                s *= 2;
            }
            steps
        };
        for (s, cond) in steps {
            self.push();
            let r = self.apply(
                f,
                env,
                lambda,
                load(t.clone()),
                load(CExpr::add(t.clone(), CExpr::Int(s))),
            )?;
            let mut rl = Vec::new();
            scalar_leaves(&r, &mut rl);
            for ((l, _), (v, _)) in locals.iter().zip(rl) {
                self.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v });
            }
            let then_cmds = self.pop();
            self.emit(Cmd::If { cond, then_cmds, else_cmds: vec![] });
            self.emit(Cmd::Barrier);
        }
        let result = self.declare_like(&ne)?;
        self.assign(&result, &load(CExpr::Int(0)))?;
        // The scratch is reused by the next cooperative phase.
        self.emit(Cmd::Barrier);
        Ok(result)
    }

    /// `scan@group`: tiles of one element per work-item, a scan in local memory, and a
    /// carry between tiles; the result is in local memory.
    #[expect(clippy::too_many_arguments, reason = "the scan's parts")]
    pub(crate) fn group_scan(
        &mut self,
        f: FnId,
        env: &mut KEnv,
        lambda: &Lambda,
        neutral: &Atom,
        array: &Atom,
        ty: &Type,
        hint: &str,
        origin: Option<&Origin>,
    ) -> Res<KVal> {
        if let Some(o) = origin {
            self.note(o, "@group: a scan in local memory, in tiles of one element per work-item");
        }
        let arr = self.array(f, env, array)?;
        let ne = self.atom(f, env, neutral)?;
        let wg = self.work_group;
        let n = arr.shape()[0].clone();
        let why = self.because("the result of a `scan@group`", origin);
        let dst = self.local_array(env, ty, vec![n.clone()], hint, origin, &why)?;
        let locals = self.scratch(&ne, "tile", "a `scan@group`'s tile of partial results");
        let t = self.tmp("t", Elem::I64, CExpr::work_item("get_local_id", 0));
        let carry = self.declare_like(&ne)?;
        self.assign(&carry, &ne)?;
        let load = |at: CExpr| -> KVal {
            let ls: Vec<(CExpr, Elem)> =
                locals.iter().map(|(l, e)| (CExpr::load(l, at.clone()), *e)).collect();
            rebuild(&ne, &mut ls.into_iter())
        };
        let k = self.fresh_name("tile");
        self.push();
        let i = self.tmp(
            "i",
            Elem::I64,
            CExpr::add(CExpr::mul(CExpr::Var(k.clone()), CExpr::Int(wg)), t.clone()),
        );
        let in_range = CExpr::bin(COp::Lt, i.clone(), n.clone());
        let (arr2, i2, ne2) = (arr.clone(), i.clone(), ne.clone());
        let x = self.branch(
            in_range.clone(),
            &mut |kb: &mut Kb<'_>| kb.index(&arr2, std::slice::from_ref(&i2)),
            &mut |_kb: &mut Kb<'_>| Ok(ne2.clone()),
        )?;
        let mut xl = Vec::new();
        scalar_leaves(&x, &mut xl);
        for ((l, _), (v, _)) in locals.iter().zip(&xl) {
            self.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: v.clone() });
        }
        self.emit(Cmd::Barrier);
        let mut s = 1;
        while s < wg {
            let earlier = load(CExpr::select(
                CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                CExpr::sub(t.clone(), CExpr::Int(s)),
                CExpr::Int(0),
            ));
            let v = self.declare_like(&earlier)?;
            self.assign(&v, &earlier)?;
            self.emit(Cmd::Barrier);
            self.push();
            let r = self.apply(f, env, lambda, v, load(t.clone()))?;
            let mut rl = Vec::new();
            scalar_leaves(&r, &mut rl);
            for ((l, _), (val, _)) in locals.iter().zip(rl) {
                self.emit(Cmd::Store { ptr: l.clone(), index: t.clone(), value: val });
            }
            let then_cmds = self.pop();
            self.emit(Cmd::If {
                cond: CExpr::bin(COp::Ge, t.clone(), CExpr::Int(s)),
                then_cmds,
                else_cmds: vec![],
            });
            self.emit(Cmd::Barrier);
            s *= 2;
        }
        self.push();
        let y = self.apply(f, env, lambda, carry.clone(), load(t.clone()))?;
        self.write(&dst, std::slice::from_ref(&i), &y)?;
        let then_cmds = self.pop();
        self.emit(Cmd::If { cond: in_range, then_cmds, else_cmds: vec![] });
        let last = load(CExpr::Int(wg - 1));
        let last = {
            let v = self.declare_like(&last)?;
            self.assign(&v, &last)?;
            v
        };
        let nc = self.apply(f, env, lambda, carry.clone(), last)?;
        self.assign(&carry, &nc)?;
        self.emit(Cmd::Barrier);
        let body = self.pop();
        let tiles = CExpr::bin(COp::Div, CExpr::add(n, CExpr::Int(wg - 1)), CExpr::Int(wg));
        let comment = self.comment(origin);
        self.emit(Cmd::For { var: k, bound: tiles, body, comment });
        Ok(KVal::Arr(dst))
    }
}

impl Lowerer<'_> {
    /// `map@group` at the host level: one work-group per iteration.
    #[expect(clippy::too_many_arguments, reason = "the combinator's parts")]
    pub(crate) fn group_map(
        &mut self,
        f: FnId,
        env: &crate::val::HEnv,
        lambda: &Lambda,
        arrays: Vec<HArr>,
        shape: Vec<Expr>,
        name: &str,
        origin: Option<&Origin>,
    ) -> Res<HArr> {
        let wg = i64::from(self.options.work_group);
        let (elem_ty, _) = elem_and_rank(&lambda.ret);
        let out = self.alloc(&elem_ty, shape.clone(), name)?;
        let mut kb = self.kb();
        kb.can_return = false;
        kb.work_group = wg;
        if let Some(o) = origin {
            kb.note(o, "@group: one iteration per work-group");
        }
        let arrs: Vec<KArr> = arrays.iter().map(|a| kb.import_arr(a)).collect::<Res<_>>()?;
        let dst = kb.import_arr(&out)?;
        let kn = kb.import_index(&shape[0]);
        let g = kb.fresh_name("grp");
        kb.push();
        let mut kenv =
            KEnv { vars: FxHashMap::default(), host: Some(std::rc::Rc::new(env.clone())) };
        for (p, a) in lambda.params.iter().zip(&arrs) {
            let v = kb.index(a, &[CExpr::Var(g.clone())])?;
            kenv.vars.insert(*p, v);
        }
        kb.in_group = true;
        let r = kb.block(f, &mut kenv, lambda.body)?;
        match &r {
            KVal::Arr(a) => {
                let a = a.clone();
                kb.cooperative_write(&dst, &[CExpr::Var(g.clone())], &a, None)?;
            }
            _ => {
                kb.push();
                kb.write(&dst, &[CExpr::Var(g.clone())], &r)?;
                let then_cmds = kb.pop();
                kb.emit(Cmd::If {
                    cond: CExpr::bin(COp::Eq, CExpr::work_item("get_local_id", 0), CExpr::Int(0)),
                    then_cmds,
                    else_cmds: vec![],
                });
                kb.emit(Cmd::Barrier);
            }
        }
        let body = kb.pop();
        let comment = kb.comment(origin);
        kb.emit(Cmd::ParFor { level: ParLevel::Group, var: g, bound: kn, body, comment });
        let groups = Expr::bin(
            weft_plan::BinOp::Max,
            Expr::I64(1),
            Expr::bin(weft_plan::BinOp::Min, shape[0].clone(), Expr::I64(65536)),
        );
        let doc = format!("map@group `{name}`: one iteration per work-group of {wg}");
        self.launch(
            kb,
            "group",
            doc,
            vec![Expr::mul(groups, Expr::I64(wg))],
            Some(vec![Expr::I64(wg)]),
        );
        Ok(out)
    }
}
