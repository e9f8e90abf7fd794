//! The memory IR's validator: internal invariants, checked after every pass in tests and
//! debug builds (STYLE.md §5; the paper's "sanity type check", digest §4.2). It checks:
//!
//! 1. every variable bound in a core function (parameters, statements, lambda and loop
//!    parameters, loop indices) has a [`MemInfo`] of its value's structure, and every
//!    array leaf has an LMAD of the array's rank whose shape equals the type's sizes
//!    (`T-MEM` well-formedness, `Γ ⊢ L : [x1]…[xn]`);
//! 2. every block and existential component named by an LMAD or binding exists;
//! 3. an `alloc` runs before a statement of the function;
//! 4. a `Fresh` or `Copy` leaf is written into an allocated block, never into a parameter
//!    or existential block (the only writes are into fresh memory);
//! 5. the function result's leaves are direct (row-major, offset 0) for entries.
//!
//! Violations are compiler bugs, returned as [`InvariantError`]s.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Function, Program, VarId};

use crate::ir::{BlockBinding, MemFunction, MemInfo, MemSize, MemVar, Provenance};
use crate::lower::{
    Quotients, ValueShape, defined_inside, idx, mem_size, resolve_sizes, size_definitions,
    value_shape,
};

/// A broken invariant of the memory IR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvariantError {
    pub function: String,
    pub message: String,
}

/// Checks every function of `mem` against `program` (see the module docs).
pub fn validate(program: &Program, mem: &crate::ir::MemProgram) -> Vec<InvariantError> {
    let mut errors = Vec::new();
    for (fn_id, f) in program.functions.iter() {
        let Some(mem_f) = mem.functions.get(fn_id) else {
            errors.push(InvariantError {
                function: f.name.to_string(),
                message: "no memory annotation".into(),
            });
            continue;
        };
        let mut messages = Vec::new();
        validate_function(f, mem_f, &mut messages);
        errors.extend(
            messages
                .into_iter()
                .map(|message| InvariantError { function: f.name.to_string(), message }),
        );
    }
    errors
}

/// [`validate`] of one function's memory.
pub fn validate_one(f: &Function, mem: &MemFunction) -> Vec<InvariantError> {
    let mut messages = Vec::new();
    validate_function(f, mem, &mut messages);
    messages
        .into_iter()
        .map(|message| InvariantError { function: f.name.to_string(), message })
        .collect()
}

fn validate_function(f: &Function, mem: &MemFunction, errors: &mut Vec<String>) {
    let mut vars: FxHashSet<VarId> = f.params.iter().copied().collect();
    let mut exps = FxHashSet::default();
    defined_inside(f, f.body, &mut vars, &mut exps);
    let stmt_vars: FxHashSet<VarId> =
        f.blocks.iter().flat_map(|(_, b)| b.stmts.iter().map(|s| s.var)).collect();
    let sizes = size_definitions(f, Quotients::AssumedExact);
    let mut sorted: Vec<VarId> = vars.into_iter().collect();
    sorted.sort_by_key(|v| idx(*v));
    for var in sorted {
        let name = f.vars[var].name.to_string();
        match mem.bindings.get(var) {
            None => errors.push(format!("`{name}` has no memory")),
            Some(info) => {
                check_info(mem, &sizes, &value_shape(&f.vars[var].ty), info, &name, errors)
            }
        }
    }
    for (id, block) in mem.blocks.iter() {
        if let BlockBinding::Alloc { before, .. } = &block.binding
            && !stmt_vars.contains(before)
        {
            errors.push(format!(
                "block {} is allocated before a variable that no statement binds",
                idx(id)
            ));
        }
    }
    if f.is_entry {
        for leaf in mem.result.leaves() {
            if !leaf.lmad.is_direct() {
                errors.push("an entry result is not direct".into());
            }
        }
    }
}

fn check_info(
    mem: &MemFunction,
    sizes: &FxHashMap<VarId, MemSize>,
    shape: &ValueShape,
    info: &MemInfo,
    name: &str,
    errors: &mut Vec<String>,
) {
    match (shape, info) {
        (ValueShape::Scalar(_), MemInfo::Scalar) => {}
        (ValueShape::Array(dims, elem), MemInfo::Array(array)) => {
            if idx(array.block) >= mem.blocks.len() {
                errors.push(format!("`{name}` names a block that does not exist"));
                return;
            }
            let block = &mem.blocks[array.block];
            if block.elem != *elem {
                errors.push(format!(
                    "`{name}` is {} but its block holds {}",
                    elem.name(),
                    block.elem.name()
                ));
            }
            if array.lmad.rank() != dims.len() {
                errors.push(format!(
                    "`{name}` has rank {} but its LMAD rank {}",
                    dims.len(),
                    array.lmad.rank()
                ));
            } else if array
                .lmad
                .dims
                .iter()
                .zip(dims)
                .any(|(d, s)| resolve_sizes(sizes, &d.shape) != resolve_sizes(sizes, &mem_size(s)))
            {
                let show = |s: &MemSize| {
                    let s = resolve_sizes(sizes, s);
                    s.display(&|v| format!("{v:?}")).to_string()
                };
                let lmad: Vec<_> = array.lmad.dims.iter().map(|d| show(&d.shape)).collect();
                let ty: Vec<_> = dims.iter().map(|d| show(&mem_size(d))).collect();
                errors.push(format!(
                    "`{name}`: the LMAD's shape [{}] is not the type's [{}]",
                    lmad.join(", "),
                    ty.join(", ")
                ));
            }
            let components = std::iter::once(&array.lmad.offset)
                .chain(array.lmad.dims.iter().flat_map(|d| [&d.stride, &d.shape]));
            for size in components {
                for v in size.vars() {
                    if let MemVar::Exist(x) = v
                        && idx(x) >= mem.exists.len()
                    {
                        errors.push(format!("`{name}` names an existential that does not exist"));
                    }
                }
            }
            let written = matches!(array.how, Provenance::Fresh | Provenance::Copy(_));
            let allocated = matches!(
                block.binding,
                BlockBinding::Alloc { .. } | BlockBinding::ResultAlloc { .. }
            );
            if written && !allocated {
                errors
                    .push(format!("`{name}` is written into a block that is not allocated for it"));
            }
            if array.how == Provenance::InPlace
                && matches!(block.binding, BlockBinding::Param { .. })
            {
                errors.push(format!("`{name}` updates a parameter's memory in place"));
            }
        }
        (ValueShape::Tuple(shapes), MemInfo::Tuple(infos)) if shapes.len() == infos.len() => {
            for (s, i) in shapes.iter().zip(infos) {
                check_info(mem, sizes, s, i, name, errors);
            }
        }
        (ValueShape::Scalar(_) | ValueShape::Array(..) | ValueShape::Tuple(_), _) => {
            errors.push(format!("`{name}`: the memory does not have the value's structure"));
        }
    }
}
