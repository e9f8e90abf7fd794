//! The memory IR's printer, used by `weft dump --ir mem` and snapshots: the core
//! printer (`weft_core::pretty_annotated`) with memory as its decoration.
//!
//! It prints the core statements with memory: every array type is followed by its
//! block and LMAD as Futhark prints them,
//! `[n_0][m_1]f32 @ mem_3 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}`, and
//! every allocation is a statement `let mem_3: mem = alloc BYTES` before the statement
//! it serves (sizes in bytes). An array of tuples prints as a tuple of arrays. Loop
//! parameters print their types (their memory may differ from the initial value's);
//! array literals leave out their element type (the binding shows it).
//! Names are numbered per function in order of appearance: core variables as in the
//! core printer (`xs_1`, `t_2`, `?3`), blocks `mem_N` (existential blocks `?mem_N`),
//! existential LMAD components `?ex_N`, and the iteration index of a `map` or
//! `generate` `gtid_N`, printed right after the SOAC's keyword.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;
use weft_core::{Annotate, ExpId, Program, Type, VarId, VarNames};

use crate::ir::{
    BlockBinding, CopyReason, ExistId, Layout, MemBlockId, MemFunction, MemInfo, MemLmad,
    MemProgram, MemSize, MemVar, NotExpandedReason, Provenance,
};
use crate::lower::{ValueShape, value_shape};

/// The whole program with memory.
pub fn pretty_mem(program: &Program, mem: &MemProgram) -> String {
    let empty = MemFunction::default();
    weft_core::pretty_annotated(program, |id| {
        let mem = mem.functions.get(id).unwrap_or(&empty);
        Memory {
            mem,
            names: MemNames::new(&mem.blocks),
            allocs: allocs_before(mem),
            entry_copies: loops_with_entry_copies(&program.functions[id]),
        }
    })
}

fn allocs_before(mem: &MemFunction) -> FxHashMap<VarId, Vec<MemBlockId>> {
    let mut map: FxHashMap<VarId, Vec<MemBlockId>> = FxHashMap::default();
    for (id, block) in mem.blocks.iter() {
        if let BlockBinding::Alloc { before, .. } = &block.binding {
            map.entry(*before).or_default().push(id);
        }
    }
    map
}

/// The variables bound by loops that update their parameter in place: the loop starts
/// from a copy of its initial value in memory of its own (as the code generator does),
/// except a loop in host code whose initial value is an array made just for it (read
/// by nothing else), whose memory the loop takes.
fn loops_with_entry_copies(f: &weft_core::Function) -> rustc_hash::FxHashSet<VarId> {
    let reuse = weft_core::update_reuse(f);
    let reads = weft_opt::use_counts(f);
    let host = host_blocks(f);
    let mut out = rustc_hash::FxHashSet::default();
    for (id, block) in f.blocks.iter() {
        for stmt in &block.stmts {
            if let weft_core::Exp::Loop { param, body, init, .. } = &f.exps[stmt.exp]
                && weft_core::loop_updates_in_place(f, &reuse, *param, *body)
            {
                let made_for_it = match init {
                    weft_core::Atom::Var(v) => {
                        host.contains(&id)
                            && reads.get(v) == Some(&1)
                            && block.stmts.iter().any(|s| s.var == *v && fresh(&f.exps[s.exp]))
                    }
                    weft_core::Atom::Const(_) => false,
                };
                if !made_for_it {
                    out.insert(stmt.var);
                }
            }
        }
    }
    out
}

/// Whether an expression makes an array in memory of its own.
fn fresh(exp: &weft_core::Exp) -> bool {
    use weft_core::Exp as E;
    matches!(
        exp,
        E::Map { .. }
            | E::Generate { .. }
            | E::Scan { .. }
            | E::Iota { .. }
            | E::Replicate { .. }
            | E::ArrayLit { .. }
            | E::Concat(..)
    )
}

/// The blocks of host code: the body and the branches and loop bodies in it, not the
/// lambdas of combinators (which run in kernels).
fn host_blocks(f: &weft_core::Function) -> rustc_hash::FxHashSet<weft_core::BlockId> {
    let mut out = rustc_hash::FxHashSet::default();
    let mut stack = vec![f.body];
    while let Some(block) = stack.pop() {
        if !out.insert(block) {
            continue;
        }
        for stmt in &f.blocks[block].stmts {
            let exp = &f.exps[stmt.exp];
            if matches!(exp, weft_core::Exp::If { .. } | weft_core::Exp::Loop { .. }) {
                stack.extend(exp.nested_blocks());
            }
        }
    }
    out
}

/// One function's memory, as the core printer's decoration.
struct Memory<'a> {
    mem: &'a MemFunction,
    names: MemNames<'a>,
    allocs: FxHashMap<VarId, Vec<MemBlockId>>,
    entry_copies: rustc_hash::FxHashSet<VarId>,
}

/// How memory prints: blocks `mem_N` (`?mem_N` when existential), existential
/// components `?ex_N` and thread indices `gtid_N`, numbered in order of appearance;
/// sizes and LMADs with the program's variable names (one printer of memory for the
/// core IR's annotation and the GPU IR's, `crate::gpu_pretty`).
pub(crate) struct MemNames<'a> {
    pub(crate) blocks: &'a la_arena::Arena<crate::ir::MemBlock>,
    block_ids: FxHashMap<MemBlockId, usize>,
    exists: FxHashMap<ExistId, usize>,
    threads: FxHashMap<ExpId, usize>,
}

fn number<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, usize>, key: K) -> usize {
    let next = map.len();
    *map.entry(key).or_insert(next)
}

impl Annotate for Memory<'_> {
    fn binding_ty(&mut self, names: &mut VarNames<'_>, var: VarId) -> String {
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        self.names.shape(names, &value_shape(&names.vars()[var].ty), &info)
    }

    fn loop_param_ty(&mut self, names: &mut VarNames<'_>, param: VarId) -> Option<String> {
        Some(self.binding_ty(names, param))
    }

    fn ty(&mut self, names: &mut VarNames<'_>, ty: &Type) -> String {
        self.names.shape(names, &value_shape(ty), &MemInfo::Scalar)
    }

    fn result_ty(&mut self, names: &mut VarNames<'_>, ty: &Type) -> String {
        self.names.shape(names, &value_shape(ty), &self.mem.result.clone())
    }

    // Blocks are numbered in the order the body allocates them.
    fn result_ty_after_body(&self) -> bool {
        true
    }

    fn array_literal_elem_ty(&mut self, _: &mut VarNames<'_>, _: &Type) -> Option<String> {
        None
    }

    fn before_stmt(&mut self, names: &mut VarNames<'_>, var: VarId) -> Vec<String> {
        let mut lines = Vec::new();
        for mem_block in self.allocs.get(&var).cloned().unwrap_or_default() {
            let name = self.names.block_name(mem_block);
            let block_data = &self.mem.blocks[mem_block];
            let bytes = block_data.bytes().map(|b| self.names.size(names, &b)).unwrap_or_default();
            let mut line = format!("let {name}: mem = alloc {bytes}");
            if let BlockBinding::Alloc { expansions, .. } = &block_data.binding {
                for expansion in expansions {
                    let tid = self.names.thread(expansion.soac);
                    let threads = self.names.size(names, &expansion.n_threads);
                    let layout = match expansion.layout {
                        Layout::Interleaved => "interleaved",
                        Layout::Chunked => "chunked",
                    };
                    let _ = write!(line, " -- expanded over {tid} < {threads} ({layout})");
                }
            }
            for kept in self.mem.not_expanded.iter().filter(|k| k.block == mem_block) {
                let why = match kept.reason {
                    NotExpandedReason::VariantSize => "its size varies per thread",
                    NotExpandedReason::Nested => "inside a branch or loop of a parallel lambda",
                    NotExpandedReason::NotAMap => "inside a reduce or scan lambda",
                };
                let _ = write!(line, " -- not expanded: {why}");
            }
            lines.push(line);
        }
        if self.entry_copies.contains(&var) {
            lines.push(
                "-- loop entry: the initial value is copied into memory of the loop's own (updated in place)"
                    .to_owned(),
            );
        }
        lines
    }

    fn stmt_prefix(&mut self, var: VarId) -> String {
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        let mut prefix = String::new();
        if info.leaves().iter().any(|a| matches!(a.how, Provenance::Copy(_))) {
            prefix.push_str("copy ");
        }
        if info.leaves().iter().any(|a| a.how == Provenance::InPlace) {
            prefix.push_str("in place ");
        }
        prefix
    }

    fn soac_index(&mut self, exp: ExpId) -> Option<String> {
        Some(self.names.thread(exp))
    }

    // Result copies (digest §5.1, TransformProgram).
    fn after_function(&mut self, names: &mut VarNames<'_>) -> String {
        let mut out = String::new();
        for copy in &self.mem.forced_copies {
            if copy.reason == CopyReason::ResultNotDirect {
                let block = self.names.block_name(copy.block);
                let bytes = self.mem.blocks[copy.block]
                    .bytes()
                    .map(|b| self.names.size(names, &b))
                    .unwrap_or_default();
                let var = names.name(copy.var);
                let _ = writeln!(out, "  -- result copy: {var} into {block} (alloc {bytes} bytes)");
            }
        }
        out
    }
}

impl<'a> MemNames<'a> {
    pub(crate) fn new(blocks: &'a la_arena::Arena<crate::ir::MemBlock>) -> Self {
        MemNames {
            blocks,
            block_ids: FxHashMap::default(),
            exists: FxHashMap::default(),
            threads: FxHashMap::default(),
        }
    }

    pub(crate) fn block_name(&mut self, block: MemBlockId) -> String {
        let n = number(&mut self.block_ids, block);
        match self.blocks[block].binding {
            BlockBinding::Existential { .. } => format!("?mem_{n}"),
            BlockBinding::Alloc { .. }
            | BlockBinding::ResultAlloc { .. }
            | BlockBinding::Param { .. } => {
                format!("mem_{n}")
            }
        }
    }

    pub(crate) fn thread(&mut self, exp: ExpId) -> String {
        format!("gtid_{}", number(&mut self.threads, exp))
    }

    pub(crate) fn size(&mut self, names: &mut VarNames<'_>, size: &MemSize) -> String {
        let mut vars = size.vars();
        vars.sort();
        let mut texts: FxHashMap<MemVar, String> = FxHashMap::default();
        for v in vars {
            let name = match v {
                MemVar::Core(c) => names.name(c),
                MemVar::Thread(e) => self.thread(e),
                MemVar::Exist(x) => format!("?ex_{}", number(&mut self.exists, x)),
            };
            texts.insert(v, name);
        }
        size.display(&|v: &MemVar| texts.get(v).cloned().unwrap_or_default()).to_string()
    }

    pub(crate) fn lmad(&mut self, names: &mut VarNames<'_>, lmad: &MemLmad) -> String {
        let offset = self.size(names, &lmad.offset);
        let strides: Vec<String> = lmad.dims.iter().map(|d| self.size(names, &d.stride)).collect();
        let shape: Vec<String> = lmad.dims.iter().map(|d| self.size(names, &d.shape)).collect();
        format!(
            "{{offset: {offset}; strides: [{}]; shape: [{}]}}",
            strides.join(", "),
            shape.join(", ")
        )
    }

    pub(crate) fn shape(
        &mut self,
        names: &mut VarNames<'_>,
        shape: &ValueShape,
        info: &MemInfo,
    ) -> String {
        match (shape, info) {
            (ValueShape::Scalar(s), _) => s.name().to_owned(),
            (ValueShape::Array(dims, elem), _) => {
                let mut text = String::new();
                for d in dims {
                    let d = self.size(names, &crate::lower::mem_size(d));
                    let _ = write!(text, "[{d}]");
                }
                text.push_str(elem.name());
                if let MemInfo::Array(array) = info {
                    let block = self.block_name(array.block);
                    let lmad = self.lmad(names, &array.lmad);
                    let _ = write!(text, " @ {block} -> {lmad}");
                }
                text
            }
            (ValueShape::Tuple(items), MemInfo::Tuple(infos)) if items.len() == infos.len() => {
                let parts: Vec<String> =
                    items.iter().zip(infos).map(|(s, i)| self.shape(names, s, i)).collect();
                format!("({})", parts.join(", "))
            }
            (ValueShape::Tuple(items), _) => {
                let parts: Vec<String> =
                    items.iter().map(|s| self.shape(names, s, &MemInfo::Scalar)).collect();
                format!("({})", parts.join(", "))
            }
        }
    }
}
