//! Work-group versions only where their local memory fits (GPU IR to GPU IR, after
//! fusion, on a GPU).
//!
//! The version of a map with one work-group per outer iteration keeps the arrays its
//! group body computes (thread SegOps, sequential combinators) in local memory. Their
//! size is known only at run time (rows of `m` floats), and a device has little local
//! memory (48 KiB per work-group on NVIDIA without opting in): srad's five rows of 4096
//! floats needed 80 KiB, and the launch failed on the H100. So each work-group version
//! whose arrays are not known to fit is guarded:
//!
//! ```text
//! version n >= threshold f.suff_intra_par_0 then
//!     version BYTES >= threshold f.local_memory_exceeded_0 then FLAT' else GROUP
//! else FLAT
//! ```
//!
//! where `FLAT'` is a copy of the fully flattened version (with its own variables) and
//! the threshold is the device's local memory plus one (a fact, which `weft tune` leaves
//! alone). It runs after fusion, which removes arrays a producer fused into its
//! reduction would otherwise have needed (n-body's accelerations need none).

use rustc_hash::FxHashMap;
use weft_core::{CoreSize, Type, Var, VarKind};
use weft_hir::Name;

use crate::ir::{
    Block, BlockId, Exp, GpuFunction, GpuProgram, SegLevel, Stmt, Threshold, ThresholdKind,
};
use crate::passes::copy::Copier;
use crate::passes::flatten::threshold_default;

/// Guards every work-group version whose local arrays may not fit (see above).
pub fn guard_local_memory(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let body = out.functions[id].body;
        guard_block(&mut out, id, body);
    }
    out
}

fn guard_block(program: &mut GpuProgram, id: weft_core::FnId, block: BlockId) {
    for stmt in program.functions[id].blocks[block].stmts.clone() {
        let exp = program.functions[id].exps[stmt.exp].clone();
        match exp {
            Exp::Version { then_branch, else_branch, threshold, size }
                if program.thresholds[threshold].kind == ThresholdKind::SuffIntraPar =>
            {
                guard_block(program, id, else_branch);
                let Some(bytes) = local_bytes(&program.functions[id], then_branch) else {
                    continue;
                };
                let limit = threshold_default(ThresholdKind::LocalMemoryExceeded, None);
                if bytes.as_constant().is_some_and(|b| b < limit) {
                    continue;
                }
                let f_name = program.functions[id].name.to_string();
                let n = program
                    .thresholds
                    .iter()
                    .filter(|(_, t)| t.kind == ThresholdKind::LocalMemoryExceeded)
                    .count();
                let kind = ThresholdKind::LocalMemoryExceeded;
                let guard = program.thresholds.alloc(Threshold {
                    name: format!("{f_name}.{}_{n}", kind.name()),
                    kind,
                    default: limit,
                });
                let f = &mut program.functions[id];
                let mut copier = Copier { subst: FxHashMap::default() };
                let flat_copy = copier.block(f, else_branch);
                let results: Vec<_> = f.blocks[then_branch].results.clone();
                let vars: Vec<_> = results
                    .iter()
                    .map(|atom| {
                        let ty = match atom {
                            weft_core::Atom::Var(v) => f.vars[*v].ty.clone(),
                            weft_core::Atom::Const(c) => Type::Scalar(c.ty()),
                        };
                        f.vars.alloc(Var { name: Name::new("fitting"), ty, kind: VarKind::Bound })
                    })
                    .collect();
                let version = Exp::Version {
                    size: bytes,
                    threshold: guard,
                    then_branch: flat_copy,
                    else_branch: then_branch,
                };
                let version_id = f.exps.alloc(version);
                if let Some(origin) = f.origins.get(stmt.exp).cloned() {
                    f.origins.insert(version_id, origin);
                }
                let results = vars.iter().map(|&v| weft_core::Atom::Var(v)).collect();
                let guarded =
                    f.blocks.alloc(Block { stmts: vec![Stmt { vars, exp: version_id }], results });
                f.exps[stmt.exp] =
                    Exp::Version { size, threshold, then_branch: guarded, else_branch };
            }
            Exp::If { then_branch, else_branch, .. }
            | Exp::Version { then_branch, else_branch, .. } => {
                guard_block(program, id, then_branch);
                guard_block(program, id, else_branch);
            }
            Exp::Loop { body, .. } => guard_block(program, id, body),
            Exp::Basic(_) | Exp::Manifest { .. } | Exp::Seq(_) | Exp::Seg(_) => {}
        }
    }
}

/// The bytes of the arrays the group SegMaps of a work-group version compute in their
/// bodies (views of global arrays take none); `None` when the block has no group
/// SegMap.
fn local_bytes(f: &GpuFunction, block: BlockId) -> Option<CoreSize> {
    fn bytes(ty: &Type, outer: &CoreSize) -> CoreSize {
        match ty {
            Type::Scalar(s) => {
                outer.mul(&CoreSize::constant(i64::try_from(s.size_in_bytes()).unwrap_or(8)))
            }
            Type::Array { size, elem } => bytes(elem, &outer.mul(size)),
            Type::Tuple(items) => {
                items.iter().fold(CoreSize::zero(), |sum, t| sum.add(&bytes(t, outer)))
            }
        }
    }
    let mut total: Option<CoreSize> = None;
    for stmt in &f.blocks[block].stmts {
        let Exp::Seg(seg) = &f.exps[stmt.exp] else { continue };
        if seg.level != SegLevel::Group {
            continue;
        }
        let mut sum = total.take().unwrap_or_else(CoreSize::zero);
        for inner in &f.blocks[seg.body].stmts {
            if !matches!(f.exps[inner.exp], Exp::Seg(_) | Exp::Seq(_)) {
                continue;
            }
            for &var in &inner.vars {
                let ty = &f.vars[var].ty;
                if matches!(ty, Type::Array { .. }) {
                    sum = sum.add(&bytes(ty, &CoreSize::one()));
                }
            }
        }
        total = Some(sum);
    }
    total
}
