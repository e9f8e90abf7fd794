//! Copies of GPU IR code with fresh variables (fusion inlines a producer's body into
//! every place its consumer reads an element; each copy binds its own variables).

use crate::passes::subst::Substitutes;
use rustc_hash::FxHashMap;
use weft_core::{Atom, Var, VarId};

use crate::ir::{BlockId, Exp, GpuFunction, Lambda, LoopForm, SegKind, SegOp, SeqSoac, Stmt};

/// Copies code within one function; `subst` maps variables of the original to atoms of
/// the copy (free variables not in it stay as they are).
pub(crate) struct Copier {
    pub(crate) subst: FxHashMap<VarId, Atom>,
}

impl Copier {
    /// A fresh variable standing for `v` in the copy.
    fn fresh(&mut self, f: &mut GpuFunction, v: VarId) -> VarId {
        let old = f.vars[v].clone();
        let new = f.vars.alloc(Var { name: old.name, ty: self.ty(&old.ty), kind: old.kind });
        self.subst.insert(v, Atom::Var(new));
        new
    }

    /// The statements of `block` copied (appended to `out`); returns its results.
    pub(crate) fn stmts_into(
        &mut self,
        f: &mut GpuFunction,
        block: BlockId,
        out: &mut Vec<Stmt>,
    ) -> Vec<Atom> {
        for stmt in f.blocks[block].stmts.clone() {
            let exp = self.exp(f, &f.exps[stmt.exp].clone());
            let origin = f.origins.get(stmt.exp).cloned();
            let vars = stmt.vars.iter().map(|&v| self.fresh(f, v)).collect();
            let id = f.exps.alloc(exp);
            if let Some(origin) = origin {
                f.origins.insert(id, origin);
            }
            out.push(Stmt { vars, exp: id });
        }
        f.blocks[block].results.clone().into_iter().map(|a| self.atom(a)).collect()
    }

    pub(crate) fn block(&mut self, f: &mut GpuFunction, block: BlockId) -> BlockId {
        let mut stmts = Vec::new();
        let results = self.stmts_into(f, block, &mut stmts);
        f.blocks.alloc(crate::ir::Block { stmts, results })
    }

    pub(crate) fn lambda(&mut self, f: &mut GpuFunction, lambda: &Lambda) -> Lambda {
        let params = lambda.params.iter().map(|&p| self.fresh(f, p)).collect();
        Lambda { params, body: self.block(f, lambda.body) }
    }

    fn exp(&mut self, f: &mut GpuFunction, exp: &Exp) -> Exp {
        match exp {
            Exp::Basic(basic) => {
                let mut basic = basic.clone();
                basic.operands_mut(&mut |a| *a = self.atom(*a));
                if let weft_core::Exp::Size(size) = &mut basic {
                    *size = self.size(size);
                }
                basic.types_mut(&mut |ty| *ty = self.ty(ty));
                Exp::Basic(basic)
            }
            Exp::Manifest { array } => Exp::Manifest { array: self.atom(*array) },
            Exp::If { cond, then_branch, else_branch } => Exp::If {
                cond: self.atom(*cond),
                then_branch: self.block(f, *then_branch),
                else_branch: self.block(f, *else_branch),
            },
            Exp::Version { size, threshold, then_branch, else_branch } => Exp::Version {
                size: self.size(size),
                threshold: *threshold,
                then_branch: self.block(f, *then_branch),
                else_branch: self.block(f, *else_branch),
            },
            Exp::Loop { param, init, form, body } => {
                let init = self.atom(*init);
                let param = self.fresh(f, *param);
                let form = match form {
                    LoopForm::For { index, bound } => {
                        let bound = self.atom(*bound);
                        LoopForm::For { index: self.fresh(f, *index), bound }
                    }
                    LoopForm::While { cond } => LoopForm::While { cond: self.block(f, *cond) },
                };
                Exp::Loop { param, init, form, body: self.block(f, *body) }
            }
            Exp::Seq(soac) => Exp::Seq(match soac {
                SeqSoac::Map { lambda, arrays } => {
                    let arrays = arrays.iter().map(|&a| self.atom(a)).collect();
                    SeqSoac::Map { lambda: self.lambda(f, lambda), arrays }
                }
                SeqSoac::Generate { size, lambda } => {
                    SeqSoac::Generate { size: self.atom(*size), lambda: self.lambda(f, lambda) }
                }
                SeqSoac::Reduce { lambda, neutral, array } => SeqSoac::Reduce {
                    neutral: self.atom(*neutral),
                    array: self.atom(*array),
                    lambda: self.lambda(f, lambda),
                },
                SeqSoac::Scan { lambda, neutral, array } => SeqSoac::Scan {
                    neutral: self.atom(*neutral),
                    array: self.atom(*array),
                    lambda: self.lambda(f, lambda),
                },
                SeqSoac::Hist { dest, lambda, neutral, indices, values } => SeqSoac::Hist {
                    dest: self.atom(*dest),
                    neutral: self.atom(*neutral),
                    indices: self.atom(*indices),
                    values: self.atom(*values),
                    lambda: self.lambda(f, lambda),
                },
            }),
            Exp::Seg(seg) => {
                let op = |this: &mut Self, f: &mut GpuFunction, op: &crate::ir::SegBinOp| {
                    crate::ir::SegBinOp {
                        neutral: op.neutral.iter().map(|&a| this.atom(a)).collect(),
                        lambda: this.lambda(f, &op.lambda),
                        commutative: op.commutative,
                    }
                };
                let kind = match &seg.kind {
                    SegKind::Map => SegKind::Map,
                    SegKind::Red(ops) => SegKind::Red(ops.iter().map(|o| op(self, f, o)).collect()),
                    SegKind::Scan(ops) => {
                        SegKind::Scan(ops.iter().map(|o| op(self, f, o)).collect())
                    }
                    SegKind::Scatter { dest } => SegKind::Scatter { dest: self.atom(*dest) },
                    SegKind::Hist { dest, op: o } => {
                        SegKind::Hist { dest: self.atom(*dest), op: op(self, f, o) }
                    }
                };
                let space = seg
                    .space
                    .iter()
                    .map(|&(index, bound)| {
                        let bound = self.atom(bound);
                        (self.fresh(f, index), bound)
                    })
                    .collect();
                Exp::Seg(SegOp {
                    level: seg.level,
                    pinned: seg.pinned,
                    space,
                    kind,
                    body: self.block(f, seg.body),
                    origins: seg.origins.clone(),
                })
            }
        }
    }
}

impl Substitutes for Copier {
    fn subst(&self) -> &FxHashMap<VarId, Atom> {
        &self.subst
    }
}
