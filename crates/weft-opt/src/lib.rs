//! Weft's middle end (MIDDLE.md): simplification of the core IR, and its translation
//! to the GPU IR of segmented operations.
//!
//! ```text
//! core IR ─► simplify ─► inline ─► flatten (versions) ─► fuse ─► coalesce ─► GPU IR
//! ```
//!
//! Each step is a function with a printer for its output (`weft dump --ir opt` prints
//! the simplified core IR, `weft dump --ir gpu` the GPU IR), and a validator that the
//! tests run after every pass.

mod ir;
pub mod passes;
mod pretty;
mod sizes;
#[cfg(test)]
mod tests;
mod to_core;
mod validate;
mod work;

pub use crate::ir::{
    Block, BlockId, Exp, ExpId, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind,
    SegLevel, SegOp, SeqSoac, Stmt, Threshold, ThresholdId, ThresholdKind,
};
pub use crate::passes::array_reductions::chunk_reductions_of_arrays;
pub use crate::passes::coalesce::coalesce;
pub use crate::passes::collapse::collapse_outer_dimensions;
pub use crate::passes::facts::use_counts;
pub use crate::passes::flatten::{
    DEFAULT_SUFF_INTRA_PAR, DEFAULT_SUFF_OUTER_PAR, DeviceShape, flatten, threshold_default,
};
pub use crate::passes::fuse::{fuse, reads_in};
pub use crate::passes::fuse_seq::fuse_sequential;
pub use crate::passes::inline::{inline_all_calls, inline_parallel_calls};
pub use crate::passes::interchange::interchange;
pub use crate::passes::local_memory::guard_local_memory;
pub use crate::passes::products::{
    ProductReads, is_tiled_product, prefer_tiled_products, product_reads,
};
pub use crate::passes::rows::read_rows;
pub use crate::passes::simplify::simplify;
pub use crate::passes::simplify_gpu::simplify_gpu;
pub use crate::passes::split_reduction::split_segmented_reductions;
pub use crate::pretty::{GpuAnnotate, pretty_gpu, pretty_gpu_annotated};
pub use crate::to_core::to_core;

/// What the middle end needs to know of where the program will run: the device's shape
/// (thresholds' defaults, and whether to coalesce) and the thresholds a tuning file fixes
/// (`weft tune`). The default is an unknown GPU with no tuning file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub device: Option<DeviceShape>,
    pub tuning: std::collections::BTreeMap<String, i64>,
}

impl Settings {
    /// A GPU unless the device is known to be a CPU.
    pub fn target(&self) -> Target {
        match self.device {
            Some(shape) if !shape.gpu => Target::Cpu,
            _ => Target::Gpu,
        }
    }

    /// A threshold's value: the tuning file's, else the rule for the device.
    pub fn value(&self, threshold: &Threshold) -> i64 {
        match self.tuning.get(&threshold.name) {
            Some(&value) => value,
            None => threshold_default(threshold.kind, self.device.as_ref()),
        }
    }
}

pub use crate::validate::{GpuInvariantError, validate_gpu};
pub use crate::work::static_work;

/// The core IR the GPU IR is made from: simplified, calls to functions with
/// combinators inlined, simplified, reductions and scans over rows interchanged
/// ([`interchange`]), the remaining reductions of arrays in host code split into
/// chunks ([`chunk_reductions_of_arrays`]), simplified again (`weft dump --ir opt`).
pub fn optimise_core(program: &weft_core::Program) -> weft_core::Program {
    simplify(&chunk_reductions_of_arrays(&interchange(&simplify(&inline_parallel_calls(
        &simplify(program),
    )))))
}

/// The kind of device the middle end compiles for. Its passes are the same for both
/// except coalescing by transposition ([`coalesce`]), which only a GPU's memory system
/// pays for: a CPU core running a work-item reads that work-item's row sequentially
/// through its own cache, so the transposed copy is pure extra traffic (on POCL it made
/// a row softmax, a layer norm and a k-means assignment 2-3x slower; docs/middle.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gpu,
    Cpu,
}

/// The whole middle end for a GPU: [`pipeline_for`] with [`Target::Gpu`].
pub fn pipeline(program: &weft_core::Program) -> GpuProgram {
    pipeline_for(program, Target::Gpu)
}

/// The middle end's passes on the program as written (calls to defs without
/// combinators kept, sequential combinators kept as combinators): [`optimise_core`],
/// then [`flatten`], [`fuse`], [`guard_local_memory`], [`split_segmented_reductions`],
/// [`coalesce`] and [`collapse_outer_dimensions`] (on a GPU), [`read_rows`] and
/// [`simplify_gpu`]. The passes' tests read this; the code generator reads
/// [`pipeline_inlined`].
pub fn pipeline_for(program: &weft_core::Program, target: Target) -> GpuProgram {
    gpu_passes(&optimise_core(program), target, false)
}

/// [`pipeline_for`] with every call inlined first ([`inline_all_calls`]) and the
/// sequential combinators fused into loops ([`fuse_sequential`]): the input of the code
/// generator from the GPU IR (`weft-lower`'s `lower_gpu_entry`), which compiles each
/// kernel's code as one body.
pub fn pipeline_inlined(program: &weft_core::Program, target: Target) -> GpuProgram {
    gpu_passes(&optimise_core(&inline_all_calls(program)), target, true)
}

fn gpu_passes(core: &weft_core::Program, target: Target, fuse_loops: bool) -> GpuProgram {
    let fused = fuse(&flatten(core));
    // Sequential fusion comes last: coalescing recognises a row traversed repeatedly by
    // its sequential combinators.
    let rows = match target {
        Target::Gpu => {
            let guarded = guard_local_memory(&fused);
            let split = split_segmented_reductions(&guarded);
            prefer_tiled_products(&read_rows(&collapse_outer_dimensions(&coalesce(&split))))
        }
        // The code generator tiles a product on a CPU too (its 1-D outer version read
        // a column of `b` per step: 81 ms against 9.7 ms for a 512^3 product on POCL).
        Target::Cpu if fuse_loops => prefer_tiled_products(&read_rows(&fused)),
        Target::Cpu => read_rows(&fused),
    };
    if fuse_loops { simplify_gpu(&fuse_sequential(&rows)) } else { simplify_gpu(&rows) }
}

/// The source expressions computed inside a version (either branch of a `version`):
/// their strategy is picked at run time by a threshold, so no one level describes it
/// ("Make strategy explicit" leaves them alone); and the producers fused into a
/// `scatter` or `reduce_by_index`, whose strategy is the update's.
pub fn versioned_origins(program: &GpuProgram) -> rustc_hash::FxHashSet<weft_core::Origin> {
    let mut out = rustc_hash::FxHashSet::default();
    for (_, f) in program.functions.iter() {
        collect_versioned(f, f.body, false, &mut out);
    }
    out
}

fn collect_versioned(
    f: &GpuFunction,
    block: BlockId,
    inside: bool,
    out: &mut rustc_hash::FxHashSet<weft_core::Origin>,
) {
    for stmt in &f.blocks[block].stmts {
        let exp = &f.exps[stmt.exp];
        let nested_inside = inside || matches!(exp, Exp::Version { .. });
        if nested_inside {
            out.extend(f.origins.get(stmt.exp).cloned());
            if let Exp::Seg(seg) = exp {
                out.extend(seg.origins.iter().cloned());
            }
        }
        // A producer fused into a `scatter` or `reduce_by_index` (its origins after the
        // update's own) has the update's strategy; a level written on it would pin it as
        // a kernel of its own, another program ("Make strategy explicit" leaves it).
        if let Exp::Seg(seg) = exp
            && matches!(seg.kind, SegKind::Hist { .. } | SegKind::Scatter { .. })
        {
            out.extend(seg.origins.iter().skip(1).cloned());
        }
        for nested in exp.nested_blocks() {
            collect_versioned(f, nested, nested_inside, out);
        }
    }
}
