//! The editor's view of memory: [`memory_of_binding`] answers "where does the value of
//! this expression live" as plain data keyed by the core [`Origin`] (the HIR expression),
//! for a hover that shows the block, the LMAD, and whether the binding is a free view
//! or a fresh allocation with its size in bytes (digest §10).
//!
//! Sizes and LMADs are rendered with source names (`n`, `m`; `gtid` for a thread index,
//! `?` for a value known at run time), because a hover shows source, not IR, names.
//! Several results come back when the expression was specialised or inlined more than
//! once, or when elaboration bound more than one statement to it.

use weft_core::{FnId, Origin, Program, VarKind};

use crate::ir::{BlockBinding, CopyReason, Layout, MemProgram, MemSize, MemVar, Provenance};
use crate::lower::idx;

/// The memory of one binding of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingMemory {
    /// The core function that holds the binding.
    pub function: FnId,
    /// The bound variable's source name (empty for a temporary).
    pub name: String,
    /// One entry per array leaf (an array of tuples has one per component); empty for a
    /// scalar.
    pub leaves: Vec<LeafMemory>,
}

/// One array in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafMemory {
    /// `mem_N`, numbered by the block's index in its function.
    pub block: String,
    /// `{offset: 0; strides: [m, 1]; shape: [n, m]}`.
    pub lmad: String,
    /// How the binding got its memory.
    pub kind: LeafKind,
    /// The allocation's size in bytes, for a fresh allocation or a copy.
    pub bytes: Option<String>,
    /// Why a copy was needed.
    pub copy_reason: Option<&'static str>,
    /// For an expanded allocation: `interleaved over gtid < n` (innermost first).
    pub expanded: Vec<String>,
}

/// Whether a binding allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafKind {
    /// A free view of another array's memory.
    View,
    /// A new allocation written by a constructor.
    Fresh,
    /// A copy that the compiler inserted.
    Copy,
    /// Memory chosen at run time (branch, loop, call).
    Existential,
}

/// The memory of every binding whose core expression came from `origin`.
pub fn memory_of_binding(
    program: &Program,
    mem: &MemProgram,
    origin: &Origin,
) -> Vec<BindingMemory> {
    let mut out = Vec::new();
    for (fn_id, f) in program.functions.iter() {
        let Some(mem_f) = mem.functions.get(fn_id) else { continue };
        for (_, block) in f.blocks.iter() {
            for stmt in &block.stmts {
                if f.origins.get(stmt.exp) != Some(origin) {
                    continue;
                }
                let Some(info) = mem_f.bindings.get(stmt.var) else { continue };
                let name_of = |v: &MemVar| match v {
                    MemVar::Core(c) => match f.vars[*c].kind {
                        VarKind::Existential => "?".to_owned(),
                        VarKind::Bound => f.vars[*c].name.to_string(),
                    },
                    MemVar::Thread(_) => "gtid".to_owned(),
                    MemVar::Exist(_) => "?".to_owned(),
                };
                let size = |s: &MemSize| s.display(&name_of).to_string();
                let leaves = info
                    .leaves()
                    .into_iter()
                    .map(|leaf| {
                        let block_data = &mem_f.blocks[leaf.block];
                        let (kind, copy_reason) = match &leaf.how {
                            Provenance::View => (LeafKind::View, None),
                            Provenance::Fresh => (LeafKind::Fresh, None),
                            Provenance::Copy(reason) => {
                                (LeafKind::Copy, Some(CopyReason::message(reason)))
                            }
                            Provenance::Existential => (LeafKind::Existential, None),
                        };
                        let bytes = match kind {
                            LeafKind::Fresh | LeafKind::Copy => {
                                block_data.bytes().map(|b| size(&b))
                            }
                            LeafKind::View | LeafKind::Existential => None,
                        };
                        let expanded = match &block_data.binding {
                            BlockBinding::Alloc { expansions, .. } => expansions
                                .iter()
                                .map(|e| {
                                    let layout = match e.layout {
                                        Layout::Interleaved => "interleaved",
                                        Layout::Chunked => "chunked",
                                    };
                                    format!("{layout} over gtid < {}", size(&e.n_threads))
                                })
                                .collect(),
                            BlockBinding::ResultAlloc { .. }
                            | BlockBinding::Param { .. }
                            | BlockBinding::Existential { .. } => Vec::new(),
                        };
                        LeafMemory {
                            block: format!("mem_{}", idx(leaf.block)),
                            lmad: leaf.lmad.display(&name_of).to_string(),
                            kind,
                            bytes,
                            copy_reason,
                            expanded,
                        }
                    })
                    .collect();
                out.push(BindingMemory {
                    function: fn_id,
                    name: f.vars[stmt.var].name.to_string(),
                    leaves,
                });
            }
        }
    }
    out
}
