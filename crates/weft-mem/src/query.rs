//! The editor's view of memory: [`memory_of_binding`] and [`memory_of_var`] answer
//! "where does the value of this expression (or variable) live" as plain data, for a
//! hover that shows the block, the LMAD, and whether the binding is a free view or a
//! fresh allocation with its size in bytes (digest §10); [`forced_copies`] lists the
//! copies the annotation inserted, for information diagnostics.
//!
//! Sizes and LMADs are rendered with source names (`n`, `m`; `gtid` for a thread index,
//! `?` for a value known at run time), because a hover shows source, not IR, names.
//! Several results come back when the expression was specialised or inlined more than
//! once, or when elaboration bound more than one statement to it.

use weft_core::{FnId, Function, Origin, Program, VarId, VarKind};

use crate::ir::{
    BlockBinding, CopyReason, ForcedCopy, Layout, MemFunction, MemProgram, MemSize, MemVar,
    Provenance,
};
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
    /// The source name of the variable the block belongs to (the parameter, the binding
    /// it is allocated for, or the value whose block is chosen at run time); `None` for
    /// a temporary. For a view, this is the array it views.
    pub owner: Option<String>,
    /// `{offset: 0; strides: [m, 1]; shape: [n, m]}`.
    pub lmad: String,
    /// How the binding got its memory.
    pub kind: LeafKind,
    /// The allocation's size in bytes, for a fresh allocation or a copy (`None` when it
    /// depends on a value without a source name).
    pub bytes: Option<String>,
    /// Why a copy was needed ([`CopyReason::message`] words it).
    pub copy_reason: Option<CopyReason>,
    /// For a `with` that copies: the later expression that still reads the array.
    pub used_later: Option<weft_core::Origin>,
    /// For an expanded allocation: `interleaved over gtid < n` (innermost first).
    pub expanded: Vec<String>,
}

/// Whether a binding allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafKind {
    /// An entry parameter's own memory: the input buffer.
    Input,
    /// A free view of another array's memory.
    View,
    /// A new allocation written by a constructor.
    Fresh,
    /// A copy that the compiler inserted.
    Copy,
    /// An update written into the updated array's own memory.
    InPlace,
    /// Memory chosen at run time (branch, loop, call).
    Existential,
}

/// A copy the annotation inserted, with its size, for an information diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyInfo {
    /// The core function that holds the copy.
    pub function: FnId,
    /// The expression that copies; for a result copy, the expression that computed the
    /// result (`None` when the result is a parameter or a constant).
    pub origin: Option<Origin>,
    pub reason: CopyReason,
    /// The size of the copy in bytes (`4*n*m`), with source names; `None` when it
    /// depends on a value without one. The leaves of a tuple are counted together.
    pub bytes: Option<String>,
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
                out.extend(var_memory(fn_id, f, mem_f, stmt.var));
            }
        }
    }
    out
}

/// The memory of one variable of a core function of `program` (a statement's, a
/// parameter, a lambda or loop parameter), or `None` if it has none.
pub fn memory_of_var(
    program: &Program,
    mem: &MemProgram,
    function: FnId,
    var: VarId,
) -> Option<BindingMemory> {
    let mem_f = mem.functions.get(function)?;
    var_memory(function, &program.functions[function], mem_f, var)
}

/// [`memory_of_var`] of a function laid out on its own (`function` names it in the
/// result).
pub fn memory_of_function_var(
    function: FnId,
    f: &Function,
    mem_f: &MemFunction,
    var: VarId,
) -> Option<BindingMemory> {
    var_memory(function, f, mem_f, var)
}

/// Every forced copy of the program, with its size in bytes and where it happens.
pub fn forced_copies(program: &Program, mem: &MemProgram) -> Vec<CopyInfo> {
    let mut out = Vec::new();
    for (fn_id, f) in program.functions.iter() {
        let Some(mem_f) = mem.functions.get(fn_id) else { continue };
        out.extend(function_forced_copies(fn_id, f, mem_f));
    }
    out
}

/// [`forced_copies`] of a function laid out on its own (`function` names it in the
/// result).
pub fn function_forced_copies(function: FnId, f: &Function, mem_f: &MemFunction) -> Vec<CopyInfo> {
    // One copy per binding: the leaves of a tuple are copied together.
    let mut merged: Vec<(VarId, &ForcedCopy, Option<MemSize>)> = Vec::new();
    for copy in &mem_f.forced_copies {
        let bytes = mem_f.blocks[copy.block].bytes();
        match merged.last_mut() {
            Some((var, first, total)) if *var == copy.var && first.reason == copy.reason => {
                *total = total.as_ref().zip(bytes.as_ref()).map(|(a, b)| a.add(b));
            }
            Some(_) | None => merged.push((copy.var, copy, bytes)),
        }
    }
    merged
        .into_iter()
        .map(|(var, copy, bytes)| CopyInfo {
            function,
            origin: copy.origin.clone().or_else(|| defining_origin(f, var)),
            reason: copy.reason.clone(),
            bytes: bytes.and_then(|b| display_bytes(f, &b)),
        })
        .collect()
}

/// The origin of the statement that binds `var`, if a statement does.
fn defining_origin(f: &Function, var: VarId) -> Option<Origin> {
    f.blocks
        .iter()
        .flat_map(|(_, block)| &block.stmts)
        .find(|stmt| stmt.var == var)
        .and_then(|stmt| f.origins.get(stmt.exp).cloned())
}

/// A memory variable's source name; `?` for a value known only at run time (an
/// unknown size, a temporary, an existential LMAD component).
fn source_name(f: &Function, v: &MemVar) -> String {
    match v {
        MemVar::Core(c) => match f.vars[*c].kind {
            VarKind::Bound if !f.vars[*c].name.as_str().is_empty() => f.vars[*c].name.to_string(),
            VarKind::Bound | VarKind::Existential => "?".to_owned(),
        },
        MemVar::Thread(_) => "gtid".to_owned(),
        MemVar::Exist(_) => "?".to_owned(),
    }
}

/// A size in bytes with source names, or `None` when it depends on a value without a
/// source name (a `?` in a byte count would read as one unknown, not several).
fn display_bytes(f: &Function, size: &MemSize) -> Option<String> {
    size.vars()
        .iter()
        .all(|v| source_name(f, v) != "?")
        .then(|| size.display(&|v| source_name(f, v)).to_string())
}

fn var_memory(fn_id: FnId, f: &Function, mem_f: &MemFunction, var: VarId) -> Option<BindingMemory> {
    let info = mem_f.bindings.get(var)?;
    let name_of = |v: &MemVar| source_name(f, v);
    let size = |s: &MemSize| s.display(&name_of).to_string();
    let var_name =
        |v: VarId| Some(f.vars[v].name.as_str()).filter(|n| !n.is_empty()).map(str::to_owned);
    let leaves = info
        .leaves()
        .into_iter()
        .map(|leaf| {
            let block_data = &mem_f.blocks[leaf.block];
            let (kind, copy_reason) = match &leaf.how {
                Provenance::View
                    if matches!(block_data.binding, BlockBinding::Param { param } if param == var) =>
                {
                    (LeafKind::Input, None)
                }
                Provenance::View => (LeafKind::View, None),
                Provenance::Fresh => (LeafKind::Fresh, None),
                Provenance::Copy(reason) => (LeafKind::Copy, Some(reason.clone())),
                Provenance::InPlace => (LeafKind::InPlace, None),
                Provenance::Existential => (LeafKind::Existential, None),
            };
            let bytes = match kind {
                LeafKind::Fresh | LeafKind::Copy => {
                    block_data.bytes().and_then(|b| display_bytes(f, &b))
                }
                LeafKind::Input | LeafKind::View | LeafKind::InPlace | LeafKind::Existential => None,
            };
            let (owner, expanded) = match &block_data.binding {
                BlockBinding::Alloc { before, expansions, .. } => (
                    var_name(*before),
                    expansions
                        .iter()
                        .map(|e| {
                            let layout = match e.layout {
                                Layout::Interleaved => "interleaved",
                                Layout::Chunked => "chunked",
                            };
                            format!("{layout} over gtid < {}", size(&e.n_threads))
                        })
                        .collect(),
                ),
                BlockBinding::Param { param: var } | BlockBinding::Existential { var } => {
                    (var_name(*var), Vec::new())
                }
                BlockBinding::ResultAlloc { .. } => (None, Vec::new()),
            };
            LeafMemory {
                block: format!("mem_{}", idx(leaf.block)),
                owner,
                lmad: leaf.lmad.display(&name_of).to_string(),
                kind,
                bytes,
                copy_reason,
                expanded,
                used_later: match &leaf.how {
                    Provenance::Copy(CopyReason::UpdateOfLiveArray { used_later: Some(e) }) => {
                        f.origins.get(*e).cloned()
                    }
                    _ => None,
                },
            }
        })
        .collect();
    Some(BindingMemory { function: fn_id, name: f.vars[var].name.to_string(), leaves })
}
