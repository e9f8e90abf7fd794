//! The kernels of a file's entries (weft-lower, printed by weft-opencl), for the kernel
//! lines of hovers, "Show generated kernel", "Run on GPU" and "Make strategy explicit".
//!
//! [`entry_kernels`] is a salsa query: it compiles one entry of a file without errors
//! ([`file_program`]) and keeps, per kernel, its name and the source expressions it
//! computes with their roles (`KernelImp::origins`: `Origin`s, no ranges); [`def_users`]
//! says which entries of a file use each def, and how large each entry is once the back
//! end has inlined its calls. Both work without source positions, so like
//! [`file_program`] they are position-independent: moving text re-runs nothing, and an
//! edit in a body re-runs them once. They run only when one of the features above asks,
//! never for diagnostics, so typing never waits for the back end.
//! [`kernels_computing`] compiles only the entries that use a def, smallest first,
//! within a [`Budget`]: the back end cannot be interrupted, and an edit waits for the
//! reads that hold a snapshot.
//!
//! The OpenCL text, whose comments name source lines, and the host plan, whose error
//! messages name positions, are compiled again with positions by [`compile_entry`], for
//! the explicit requests that show or run them.
//!
//! The back end is called under `catch_unwind`: a bug in it leaves these features
//! silent (or says the entry cannot be compiled) instead of killing the request.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use la_arena::ArenaMap;
use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{FnId, FnKey, Origin, Program};
use weft_hir::{
    Body, Builtin, Db, DefId, DefLoc, Expr, ExprId, Level, Resolution, RootDatabase, SourceFile,
};
use weft_opencl::Compiled;

use crate::classify::{Definition, search_scope};
use crate::program::fn_summary;
use crate::program::{entry_program, file_program};

/// What the kernels of one entry compute, or why the entry cannot be compiled.
pub(crate) type EntryKernels = Result<Vec<KernelSummary>, CompileError>;

/// What a kernel computes, without its code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct KernelSummary {
    pub(crate) name: String,
    /// The source expressions it computes, each with its strategy in words.
    pub(crate) origins: Vec<(Origin, String)>,
    /// The source expressions whose values it materialises in its own memory, each
    /// with the address space inferred for it and why (`local` — materialised by
    /// `to_local` inside a `map@group` body (line 12)).
    pub(crate) spaces: Vec<(Origin, String)>,
}

/// Why the back end refused an entry (a construct it lacks, or an internal error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompileError {
    pub(crate) message: String,
    pub(crate) origin: Option<Origin>,
    /// A construct the back end does not support yet (else a compiler bug).
    pub(crate) unsupported: bool,
}

/// What the editor keeps of one entry compiled by the back end, from one compilation:
/// its kernels (or why it cannot be compiled), its costs and its regions. `None`s when
/// its file has no core program (errors), `entry` is not one of its entries, or (costs
/// and regions) the back end refused it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct EntryBackend {
    pub(crate) kernels: Option<Arc<EntryKernels>>,
    pub(crate) costs: Option<Arc<crate::costs::EntryCosts>>,
    pub(crate) regions: Option<Arc<weft_lower::regions::Regions>>,
    /// The source expressions computed inside the middle end's versions
    /// (`weft_opt::versioned_origins`).
    pub(crate) versioned: FxHashSet<Origin>,
}

/// Compiles one entry ([`EntryBackend`]: the middle end, then the back end) and keeps
/// it for the last 64 entries read (salsa's `lru`): hovers over many entries do not keep
/// every compiled one (an evicted result is still verified from its dependencies, and
/// recomputed only when read again). The hovers, lenses and performance diagnostics of
/// an entry read one compilation, made again only when the entry's program changes
/// (`program::entry_program`): an edit recompiles only the entries that run the edited
/// def.
#[salsa::tracked(returns(ref), lru = 64)]
pub(crate) fn entry_backend<'db>(db: &'db dyn Db, entry: DefId<'db>) -> EntryBackend {
    let Some((program, id)) = entry_program(db, entry).as_ref() else {
        return EntryBackend::default();
    };
    let (compiled, versioned) = compile_quietly(program, *id, &|_| None);
    let kernels = compiled.as_ref().map(kernel_summaries).map_err(CompileError::clone);
    let (costs, regions) = match compiled {
        Ok(Compiled { plan, kernels, costs, regions, .. }) => {
            let costs = crate::costs::entry_costs_of(plan, &kernels, costs);
            (Some(Arc::new(costs)), Some(Arc::new(regions)))
        }
        Err(_) => (None, None),
    };
    EntryBackend { kernels: Some(Arc::new(kernels)), costs, regions, versioned }
}

/// The costs of one entry compiled for a CPU device (the committed POCL profile's shape:
/// no work-group versions, runs of points per work-item), for the prediction of a CPU
/// beside a GPU (`CostConfig::alternative`). Computed only when asked for, and kept for
/// the last 16 entries.
#[salsa::tracked(returns(ref), lru = 16)]
pub(crate) fn entry_cpu_costs<'db>(
    db: &'db dyn Db,
    entry: DefId<'db>,
) -> Option<Arc<crate::costs::EntryCosts>> {
    let (program, id) = entry_program(db, entry).as_ref()?;
    let cpu = weft_cost::profile::builtin_profiles().iter().find(|p| p.device.kind == "cpu")?;
    let settings = weft_opt::Settings {
        device: Some(weft_opencl::device_shape(cpu)),
        ..weft_opt::Settings::default()
    };
    let options = weft_lower::Options { profile: Some(cpu), ..weft_lower::Options::default() };
    let compiled = compile_with(program, *id, &|_| None, &settings, options).0.ok()?;
    let Compiled { plan, kernels, costs, .. } = compiled;
    Some(Arc::new(crate::costs::entry_costs_of(plan, &kernels, costs)))
}

/// The kernels of one entry (in launch-site order), from [`entry_backend`].
pub(crate) fn entry_kernels<'db>(
    db: &'db dyn Db,
    entry: DefId<'db>,
) -> &'db Option<Arc<EntryKernels>> {
    &entry_backend(db, entry).kernels
}

/// Per kernel of a compiled entry: its name, the source expressions it computes and
/// the address spaces of what it materialises.
fn kernel_summaries(compiled: &Compiled) -> Vec<KernelSummary> {
    let spaces = &compiled.spaces;
    compiled
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let ptrs = spaces.kernels.get(i);
            let spaces = k
                .ptr_origins
                .iter()
                .filter_map(|(ptr, origin)| {
                    let ptrs = ptrs?;
                    let space = match ptrs.spaces.get(ptr)? {
                        weft_lower::aspace::Resolved::Space(s) => s.name().to_owned(),
                        weft_lower::aspace::Resolved::Generic(set) => format!("generic {set}"),
                    };
                    let why = ptrs.why.get(ptr).map(|w| w.join("; ")).unwrap_or_default();
                    Some((origin.clone(), format!("`{space}` (`{ptr}`) — {why}")))
                })
                .collect();
            KernelSummary { name: k.name.clone(), origins: k.origins.clone(), spaces }
        })
        .collect()
}

/// Why the back end cannot compile `entry`, if it cannot. `None` when it compiles, its
/// file has no core program or `entry` is not one of its entries. For the
/// `backend-unsupported` warning, which `weft check` computes for every entry of a
/// file: the entry's program and its code are made here and dropped (only the error is
/// kept), so checking a file of many entries does not keep every entry's code.
#[salsa::tracked(returns(ref))]
pub(crate) fn entry_compile_error<'db>(db: &'db dyn Db, entry: DefId<'db>) -> Option<CompileError> {
    let (program, id) = crate::program::lower_one_entry(db, entry.loc(db))?;
    check_quietly(&program, id).err()
}

/// Whether [`compile_quietly`] compiles `entry` of `program`, without the analyses and
/// the OpenCL text (the same translation, so the same error).
fn check_quietly(program: &Program, entry: FnId) -> Result<(), CompileError> {
    let settings = weft_opt::Settings::default();
    let gpu_code = || Arc::new(weft_opencl::GpuCode::new(program, settings.target()));
    catch_backend(|| {
        weft_opencl::check_through_middle_end(
            &settings,
            &gpu_code,
            entry,
            weft_lower::Options::default(),
        )
    })
}

/// Why the back end cannot compile `entry`, from its compilation for the editor
/// ([`entry_backend`]: the same lowering, so the same error), for the entries that
/// compiles anyway.
pub(crate) fn compiled_entry_error(db: &dyn Db, entry: DefId<'_>) -> Option<CompileError> {
    match entry_kernels(db, entry).as_deref()? {
        Ok(_) => None,
        Err(error) => Some(error.clone()),
    }
}

/// For every def (and entry) of any file, the entries of a file whose code it is part
/// of (called, or inlined, from the entry), smallest first.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct DefUsers {
    /// The file's entries, with their sizes once calls are inlined.
    entries: Vec<(DefLoc, u64)>,
    /// Indices into `entries`.
    users: FxHashMap<DefLoc, Vec<u32>>,
}

impl DefUsers {
    /// The entries using `def` with their sizes, smallest first.
    pub(crate) fn of(&self, def: &DefLoc) -> impl Iterator<Item = &(DefLoc, u64)> {
        let users = self.users.get(def).map_or(&[][..], Vec::as_slice);
        users.iter().filter_map(|&idx| self.entries.get(usize::try_from(idx).ok()?))
    }

    /// The size of an entry once its calls are inlined.
    pub(crate) fn size(&self, entry: &DefLoc) -> Option<u64> {
        self.entries.iter().find(|(loc, _)| loc == entry).map(|&(_, size)| size)
    }
}

/// The entries of `file` that use each def, from its functions (position-independent
/// like them, and from their summaries, `program::fn_summary`, so that an edit inside a def's
/// body leaves it as it was); empty when the file has errors.
#[salsa::tracked(returns(ref))]
pub(crate) fn def_users(db: &dyn Db, file: SourceFile) -> Arc<DefUsers> {
    let mut users = DefUsers::default();
    let entries: Vec<(DefLoc, u64, FxHashSet<DefLoc>)> = if crate::apl::is_apl(file.path(db)) {
        let Some(program) = file_program(db, file) else { return Arc::new(users) };
        program_entry_uses(program)
    } else {
        let Some(checked) = crate::program::checked_entries(db, file) else {
            return Arc::new(users);
        };
        function_entry_uses(db, checked.entries())
    };
    for (entry, size, defs) in entries {
        let Ok(entry_idx) = u32::try_from(users.entries.len()) else { break };
        users.entries.push((entry, size));
        for def in defs {
            users.users.entry(def).or_default().push(entry_idx);
        }
    }
    let entries = &users.entries;
    for list in users.users.values_mut() {
        list.sort_by_key(|&idx| {
            usize::try_from(idx).ok().and_then(|i| entries.get(i)).map(|e| e.1)
        });
    }
    Arc::new(users)
}

/// Per entry: its size once its calls are inlined (its core expressions plus those of
/// each call's callee, counted per call, saturating), and the defs whose code it runs;
/// from the functions' summaries.
fn function_entry_uses(db: &dyn Db, entries: &[DefLoc]) -> Vec<(DefLoc, u64, FxHashSet<DefLoc>)> {
    let mut sizes: FxHashMap<FnKey<'_>, u64> = FxHashMap::default();
    let mut out = Vec::new();
    for entry in entries {
        let root = FnKey::new(db, entry.clone(), Vec::new());
        // Sizes in post-order, with an explicit stack: call chains can be thousands deep.
        let mut stack = vec![(root, false)];
        while let Some((key, expanded)) = stack.pop() {
            if sizes.contains_key(&key) {
                continue;
            }
            let Some(summary) = fn_summary(db, key) else {
                sizes.insert(key, u64::MAX);
                continue;
            };
            if expanded {
                let size = summary.calls.iter().fold(summary.size, |sum, (callee, n)| {
                    let callee_size = sizes.get(callee).copied().unwrap_or(u64::MAX);
                    sum.saturating_add(callee_size.saturating_mul(*n))
                });
                sizes.insert(key, size);
            } else {
                stack.push((key, true));
                stack.extend(summary.calls.iter().map(|&(callee, _)| (callee, false)));
            }
        }
        // The defs whose code the entry runs.
        let mut defs: FxHashSet<DefLoc> = FxHashSet::default();
        let mut reached: FxHashSet<FnKey<'_>> = FxHashSet::from_iter([root]);
        let mut todo = vec![root];
        while let Some(key) = todo.pop() {
            let Some(summary) = fn_summary(db, key) else { continue };
            defs.extend(summary.defs.iter().cloned());
            todo.extend(
                summary.calls.iter().map(|&(callee, _)| callee).filter(|c| reached.insert(*c)),
            );
        }
        out.push((entry.clone(), sizes.get(&root).copied().unwrap_or(u64::MAX), defs));
    }
    out
}

/// [`function_entry_uses`] of a whole program's entries (an `.apl` file's).
fn program_entry_uses(program: &Program) -> Vec<(DefLoc, u64, FxHashSet<DefLoc>)> {
    let sizes = inlined_sizes(program);
    let mut out = Vec::new();
    for &entry in &program.entries {
        let size = sizes.get(&entry).copied().unwrap_or(u64::MAX);
        let mut defs: FxHashSet<DefLoc> = FxHashSet::default();
        for id in reachable(program, entry) {
            let function = &program.functions[id];
            defs.insert(function.def.clone());
            defs.extend(function.origins.iter().map(|(_, origin)| origin.def.clone()));
        }
        out.push((program.functions[entry].def.clone(), size, defs));
    }
    out
}

/// The size of each function once the back end has inlined its calls (it inlines every
/// call): its core expressions plus those of each call's callee, counted per call
/// (saturating; calls cannot recurse). Compile time grows with it.
fn inlined_sizes(program: &Program) -> FxHashMap<FnId, u64> {
    let mut sizes: FxHashMap<FnId, u64> = FxHashMap::default();
    let callees = |id: FnId| -> Vec<FnId> {
        program.functions[id]
            .exps
            .iter()
            .filter_map(|(_, exp)| match exp {
                weft_core::Exp::Call { func, .. } => Some(*func),
                _ => None,
            })
            .collect()
    };
    for (root, _) in program.functions.iter() {
        // Post-order with an explicit stack: call chains can be thousands deep.
        let mut stack: Vec<(FnId, bool)> = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if sizes.contains_key(&id) {
                continue;
            }
            let calls = callees(id);
            if expanded {
                let own = u64::try_from(program.functions[id].exps.len()).unwrap_or(u64::MAX);
                let size = calls.iter().fold(own, |sum, callee| {
                    sum.saturating_add(sizes.get(callee).copied().unwrap_or(u64::MAX))
                });
                sizes.insert(id, size);
            } else {
                stack.push((id, true));
                // A cycle (never in a checked program) stops at the guard above only
                // once a size exists; bound the walk by the program's size instead.
                if stack.len() <= program.functions.len().saturating_mul(4) {
                    stack.extend(
                        calls.into_iter().filter(|c| !sizes.contains_key(c)).map(|c| (c, false)),
                    );
                }
            }
        }
    }
    sizes
}

/// How much compiling a feature may do: entries larger than `max_size` (core expressions
/// after inlining) are not compiled, and at most `max_entries` entries are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) max_size: u64,
    pub(crate) max_entries: usize,
}

/// For what the editor computes unasked (hovers, code actions): a few milliseconds.
pub(crate) const IMPLICIT_BUDGET: Budget = Budget { max_size: 2_000, max_entries: usize::MAX };
/// Hovers: the two smallest entries using the def will do.
pub(crate) const HOVER_BUDGET: Budget = Budget { max_entries: 2, ..IMPLICIT_BUDGET };
/// For explicit requests (show a kernel, run): up to about a second.
pub(crate) const EXPLICIT_BUDGET: Budget = Budget { max_size: 50_000, max_entries: usize::MAX };

/// Compiles one entry of `program` (before the middle end) as the editor shows it: as
/// `weft run` does (docs/middle.md), the middle end at an unknown GPU's thresholds,
/// then the code generator from the GPU IR, so the hovers, kernel view and runs show
/// the code that runs; a panic of the middle or back end becomes an error. Also gives
/// the source expressions computed inside the middle end's versions
/// (`weft_opt::versioned_origins`: a strategy picked at run time, which "Make strategy
/// explicit" leaves alone). `position` must not read the database, or a cancellation
/// would be caught here too (see [`compile_entry`]).
pub(crate) fn compile_quietly(
    program: &Program,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
) -> (Result<Compiled, CompileError>, FxHashSet<Origin>) {
    compile_with(program, entry, position, &weft_opt::Settings::default(), Default::default())
}

/// [`compile_quietly`] for a device's settings and options.
fn compile_with(
    program: &Program,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    settings: &weft_opt::Settings,
    options: weft_lower::Options,
) -> (Result<Compiled, CompileError>, FxHashSet<Origin>) {
    let gpu: std::cell::OnceCell<Arc<weft_opencl::GpuCode>> = std::cell::OnceCell::new();
    let gpu_code = || {
        Arc::clone(
            gpu.get_or_init(|| Arc::new(weft_opencl::GpuCode::new(program, settings.target()))),
        )
    };
    let compiled = catch_backend(|| {
        weft_opencl::compile_through_middle_end(settings, &gpu_code, entry, position, options)
    });
    let versioned =
        gpu.get().map(|code| weft_opt::versioned_origins(&code.gpu)).unwrap_or_default();
    (compiled, versioned)
}

/// Runs the back end; its error, or a panic of it, becomes a [`CompileError`].
fn catch_backend<T>(
    run: impl FnOnce() -> Result<T, weft_lower::LowerError>,
) -> Result<T, CompileError> {
    match std::panic::catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(CompileError {
            message: error.message,
            origin: error.origin,
            unsupported: error.unsupported,
        }),
        Err(_panic) => Err(CompileError {
            message: "internal compiler error: the OpenCL back end panicked".to_owned(),
            origin: None,
            unsupported: false,
        }),
    }
}

/// Entry `entry` of `file` compiled with source positions (comments in kernels,
/// messages of run-time errors), or why it cannot be; `None` when the file has errors
/// or no such entry.
pub(crate) fn compile_entry(
    db: &dyn Db,
    file: SourceFile,
    entry: &str,
) -> Option<Result<Compiled, String>> {
    let loc = &crate::program::entry_named(db, file, entry)?;
    crate::program::entry_program(db, DefId::new(db, loc.clone())).as_ref()?;
    let size = def_users(db, file).size(loc);
    if let Some(size) = size.filter(|&size| size > EXPLICIT_BUDGET.max_size) {
        return Some(Err(format!(
            "`{entry}` is too large to compile in the editor ({size} core expressions once \
             its calls are inlined; the limit is {}): use `weft build`",
            EXPLICIT_BUDGET.max_size
        )));
    }
    let (program, id) = entry_program(db, DefId::new(db, loc.clone())).as_ref()?;
    let (program, id) = (&**program, *id);
    // Positions read the database, so they are computed before the back end runs
    // (under `catch_unwind`, which must not swallow a salsa cancellation).
    let mut positions: FxHashMap<Origin, String> = FxHashMap::default();
    for function in reachable(program, id).map(|f| &program.functions[f]) {
        for (_, origin) in function.origins.iter() {
            if !positions.contains_key(origin)
                && let Some(position) = origin_position(db, origin)
            {
                positions.insert(origin.clone(), position);
            }
        }
    }
    let position = |origin: &Origin| positions.get(origin).cloned();
    Some(compile_quietly(program, id, &position).0.map_err(|error| render_error(db, &error)))
}

/// `FILE:LINE:COL: message`, as `weft build` prints it.
pub(crate) fn render_error(db: &dyn Db, error: &CompileError) -> String {
    match error.origin.as_ref().and_then(|o| origin_position(db, o)) {
        Some(position) => format!("{position}: {}", error.message),
        None => error.message.clone(),
    }
}

/// The functions `entry` calls, directly or not, and itself.
fn reachable(program: &Program, entry: FnId) -> impl Iterator<Item = FnId> {
    let mut seen: FxHashSet<FnId> = FxHashSet::default();
    let mut order: Vec<FnId> = Vec::new();
    let mut stack = vec![entry];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        order.push(id);
        for (_, exp) in program.functions[id].exps.iter() {
            if let weft_core::Exp::Call { func, .. } = exp {
                stack.push(*func);
            }
        }
    }
    order.into_iter()
}

/// `path:line:col` (1-based, columns in characters) of a source expression, as
/// `weft_core::origin_position` writes it, through the cached line index.
fn origin_position(db: &dyn Db, origin: &Origin) -> Option<String> {
    let source_map = weft_hir::source_map(db, DefId::new(db, origin.def.clone()));
    let range = source_map.expr_range(origin.expr)?;
    let file = origin.def.file;
    let line_col = crate::line_index(db, file).to_chars(file.text(db), range.start());
    Some(format!("{}:{}:{}", file.path(db), line_col.line + 1, line_col.col + 1))
}

/// A kernel that computes a source expression, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KernelUse {
    /// The file whose entry launches the kernel.
    pub(crate) file: SourceFile,
    pub(crate) entry: String,
    /// The kernel's position in its entry's list, and its name.
    pub(crate) kernel_idx: usize,
    pub(crate) kernel: String,
    pub(crate) origin: Origin,
    pub(crate) role: String,
}

/// What [`kernels_computing`] found.
#[derive(Debug, Default)]
pub(crate) struct KernelSearch {
    pub(crate) uses: Vec<KernelUse>,
    /// Entries using the def that were too large to compile within the budget, with
    /// their size.
    pub(crate) too_large: Vec<(String, u64)>,
}

/// Every kernel that computes an expression of `def` accepted by `wanted`, in every
/// file that can use `def` (its own file first, then by path), smallest entries first.
/// Only the entries that use `def` are compiled, within `budget`.
pub(crate) fn kernels_computing(
    db: &RootDatabase,
    def: &DefLoc,
    wanted: &dyn Fn(ExprId) -> bool,
    budget: Budget,
) -> KernelSearch {
    kernel_facts(db, def, wanted, budget, &|k| &k.origins)
}

/// Like [`kernels_computing`], for the address spaces of the arrays the kernels
/// materialise: each use's `role` is the space and its reasons.
pub(crate) fn kernels_materialising(
    db: &RootDatabase,
    def: &DefLoc,
    wanted: &dyn Fn(ExprId) -> bool,
    budget: Budget,
) -> KernelSearch {
    kernel_facts(db, def, wanted, budget, &|k| &k.spaces)
}

fn kernel_facts(
    db: &RootDatabase,
    def: &DefLoc,
    wanted: &dyn Fn(ExprId) -> bool,
    budget: Budget,
    facts: &dyn Fn(&KernelSummary) -> &[(Origin, String)],
) -> KernelSearch {
    let mut files = search_scope(db, &Definition::Def(def.clone()));
    files.sort_by_key(|&file| (file != def.file, file.path(db).clone()));
    let mut out = KernelSearch::default();
    let mut n_compiled = 0;
    for file in files {
        for (entry, size) in def_users(db, file).of(def) {
            let size = *size;
            if size > budget.max_size {
                out.too_large.push((entry.name.to_string(), size));
                continue;
            }
            if n_compiled >= budget.max_entries {
                return out;
            }
            n_compiled += 1;
            let Some(kernels) = entry_kernels(db, DefId::new(db, entry.clone())) else { continue };
            let Ok(list) = kernels.as_ref() else { continue };
            for (kernel_idx, kernel) in list.iter().enumerate() {
                for (origin, role) in facts(kernel) {
                    if origin.def == *def && wanted(origin.expr) {
                        out.uses.push(KernelUse {
                            file,
                            entry: entry.name.to_string(),
                            kernel_idx,
                            kernel: kernel.name.clone(),
                            origin: origin.clone(),
                            role: role.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// A call of a combinator that takes a level (`map`, `map2..5`, `generate`, `reduce`,
/// `scan`): the path naming it and the calls that apply it.
#[derive(Debug, Clone)]
pub(crate) struct CombinatorCall {
    pub(crate) path: ExprId,
    pub(crate) level: Option<Level>,
    /// The calls applying the path, innermost first (`(map f) xs` has two; the core IR
    /// names the saturated one as the origin).
    pub(crate) calls: Vec<ExprId>,
}

impl CombinatorCall {
    /// Whether `expr` is the path or one of the calls.
    pub(crate) fn covers(&self, expr: ExprId) -> bool {
        self.path == expr || self.calls.contains(&expr)
    }
}

/// Whether `builtin` accepts a level annotation (LANGUAGE.md §6).
pub(crate) fn takes_level(builtin: Builtin) -> bool {
    matches!(builtin, Builtin::Map(_) | Builtin::Reduce | Builtin::Scan | Builtin::Generate)
}

/// Every combinator call of a body, in arena order.
pub(crate) fn combinator_calls(body: &Body) -> Vec<CombinatorCall> {
    let callers = callers(body);
    let mut out = Vec::new();
    for (id, expr) in body.exprs.iter() {
        let Expr::Path { res: Resolution::Builtin(builtin), level, .. } = expr else { continue };
        if !takes_level(*builtin) {
            continue;
        }
        let calls = enclosing_calls(&callers, id);
        if !calls.is_empty() {
            out.push(CombinatorCall { path: id, level: *level, calls });
        }
    }
    out
}

/// `expr` and the calls that apply it, innermost first: the expressions that stand
/// for one call of a function in the origins of kernels.
pub(crate) fn call_chain(body: &Body, expr: ExprId) -> Vec<ExprId> {
    let mut chain = vec![expr];
    chain.extend(enclosing_calls(&callers(body), expr));
    chain
}

/// The call of which each expression is the callee.
fn callers(body: &Body) -> ArenaMap<ExprId, ExprId> {
    let mut caller: ArenaMap<ExprId, ExprId> = ArenaMap::default();
    for (id, expr) in body.exprs.iter() {
        if let Expr::Call { callee, .. } = expr {
            caller.insert(*callee, id);
        }
    }
    caller
}

fn enclosing_calls(callers: &ArenaMap<ExprId, ExprId>, expr: ExprId) -> Vec<ExprId> {
    let mut calls = Vec::new();
    let mut current = expr;
    while let Some(&call) = callers.get(current) {
        // A callee has one caller and calls nest outwards, so this ends; the bound
        // guards against a malformed body.
        if calls.contains(&call) {
            break;
        }
        calls.push(call);
        current = call;
    }
    calls
}

#[cfg(test)]
mod tests {
    use weft_hir::{DefId, DefKind, RootDatabase, SourceFile};

    const SRC: &str = r"
entry f (xs: [n]f32) : f32 = reduce (+) 0f32 (map (\x -> x * 2f32) xs)
entry g (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
";

    /// Asks for the kernels of every entry of `file`.
    fn all_kernels(db: &RootDatabase, file: SourceFile) {
        for loc in weft_hir::item_tree(db, file).defs.iter() {
            if loc.kind == DefKind::Entry {
                assert!(super::entry_kernels(db, DefId::new(db, loc.clone())).is_some());
            }
        }
    }

    /// The kernel queries that executed while `after` ran, after `edit`.
    fn kernel_queries(edit: &str, after: impl Fn(&RootDatabase, SourceFile)) -> Vec<String> {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", SRC);
        all_kernels(&db, file);
        db.enable_log();
        db.set_file("main.weft", edit);
        after(&db, file);
        db.take_log()
            .into_iter()
            .filter(|e| ["entry_backend(", "def_users("].iter().any(|q| e.starts_with(q)))
            .collect()
    }

    #[test]
    fn diagnostics_never_compile_kernels() {
        let edited = SRC.replace("x + 1f32", "x + 2f32");
        let queries = kernel_queries(&edited, |db, file| {
            let _ = crate::check_file(db, file);
        });
        assert!(queries.is_empty(), "{queries:?}");
    }

    #[test]
    fn moving_text_does_not_recompile_kernels() {
        let queries = kernel_queries(&format!("-- a comment\n{SRC}"), all_kernels);
        assert!(queries.is_empty(), "{queries:?}");
    }

    /// Each entry is compiled from its own part of the file's program, so an edit in
    /// `g` leaves `f`'s middle end and kernels as they were, and `g`'s run once.
    #[test]
    fn editing_a_body_recompiles_only_the_entry_using_it_once() {
        let queries = kernel_queries(&SRC.replace("x + 1f32", "x + 2f32"), |db, file| {
            all_kernels(db, file);
            all_kernels(db, file);
        });
        let compiled = queries.iter().filter(|q| q.starts_with("entry_backend(")).count();
        assert_eq!(compiled, 1, "{queries:?}");
    }

    /// Which entries use each def, and their sizes, come from the functions' summaries:
    /// an edit inside a body that changes neither leaves them as they were, without
    /// walking every entry's functions again.
    #[test]
    fn editing_a_body_keeps_the_users_of_each_def() {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", SRC);
        let users = super::def_users(&db, file).clone();
        db.enable_log();
        db.set_file("main.weft", &SRC.replace("x + 1f32", "x + 2f32"));
        assert_eq!(super::def_users(&db, file), &users);
        let log = db.take_log();
        assert!(log.iter().any(|q| q.starts_with("elab_function(")), "{log:#?}");
        assert!(log.iter().all(|q| !q.starts_with("def_users(")), "{log:#?}");
    }

    /// An entry's kernels, costs and regions (what hovers, lenses and the performance
    /// diagnostics read) come from one compilation of it.
    #[test]
    fn kernels_costs_and_regions_come_from_one_compilation() {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", SRC);
        db.enable_log();
        for loc in weft_hir::item_tree(&db, file).defs.iter() {
            let entry = DefId::new(&db, loc.clone());
            let costs = crate::costs::entry_costs(&db, entry).as_ref().unwrap();
            // The launches' costs are kept, not each kernel's over its own parameters.
            assert!(!costs.costs.launches.is_empty() && costs.costs.kernels.is_empty());
            assert!(super::entry_kernels(&db, entry).is_some());
            assert!(crate::regions::entry_regions(&db, entry).is_some());
        }
        let log = db.take_log();
        let compiled = log.iter().filter(|q| q.starts_with("entry_backend(")).count();
        assert_eq!(compiled, 2, "{log:#?}");
    }

    /// Kernels compiled for hovers are evicted: after 70 entries were read, a new
    /// revision keeps the last 64, so the first entry is compiled again when read again
    /// and the last one is not.
    #[test]
    fn only_the_last_entries_read_keep_their_kernels() {
        let src: String = (0..70)
            .map(|i| format!("entry e{i} (xs: [n]f32) : [n]f32 = map (\\x -> x + {i}f32) xs\n"))
            .collect();
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", &src);
        all_kernels(&db, file);
        db.set_file("other.weft", "def unrelated (x: i32) : i32 = x\n");
        db.enable_log();
        let entry = |name: &str| {
            let loc = weft_hir::item_tree(&db, file).find_value(name).cloned().unwrap();
            DefId::new(&db, loc)
        };
        assert!(super::entry_kernels(&db, entry("e69")).is_some());
        assert!(db.take_log().iter().all(|q| !q.starts_with("entry_backend(")));
        assert!(super::entry_kernels(&db, entry("e0")).is_some());
        let log = db.take_log();
        assert!(log.iter().any(|q| q.starts_with("entry_backend(")), "{log:?}");
    }
}
