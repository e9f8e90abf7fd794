//! The memory layout of the functions of a file's entries (weft-mem, seed 004), for the
//! memory section of hovers and the forced-copy diagnostics.
//!
//! [`function_memory`] is a salsa query: it annotates one function of the core IR
//! (`weft_core::elab_function`) with memory and expands it, given the memory of its
//! callees' results, as `weft dump --ir mem` lays out the whole program. It reads only
//! position-independent queries, so an edit that moves text re-runs nothing here, and
//! an edit inside a def lays out that def's functions again (and their callers only when
//! what they return is laid out differently). A file with errors in every entry has no
//! memory layout.
//!
//! [`memory_of_pat`] finds the core variables a HIR binding became: the core IR keeps
//! the HIR expression each statement came from (`Origin`), not the pattern, so a
//! binding is found through its binding site: a def parameter by position, a `let` by
//! the statement that computes its value, a lambda parameter through the SOAC call that
//! takes the lambda, a loop parameter through its loop; tuple patterns follow the
//! projections of the bound value.

use std::sync::Arc;

use la_arena::ArenaMap;
use weft_core::{Atom, BlockId, Exp, FnId, FnKey, Function, Origin, VarId};
use weft_hir::{Body, Db, DefId, DefLoc, Expr, ExprId, Name, Pat, PatId, Resolution};
use weft_mem::{BindingMemory, CopyInfo, ExpandOptions, MemFunction, MemInfo};

use crate::program::file_functions;

/// One function's memory, annotated and expanded on its own.
#[derive(Debug, PartialEq)]
pub(crate) struct FunctionMemory {
    /// After memory expansion (as `weft dump --ir mem` prints it).
    pub(crate) memory: MemFunction,
    /// The memory of its result as its callers see it (`MemFunction::result` of the
    /// annotation, before expansion, as `weft_mem::annotate` gives callers).
    result: MemInfo,
}

/// The memory layout of one function (weft-mem, seed 004): annotated given the memory of
/// its callees' results ([`function_result`]) and expanded, as `weft_mem::annotate`
/// and `weft_mem::expand` lay out the whole program. Kept for the last 256 functions
/// read: the file's forced copies ([`function_copies`]) and its callers need only small
/// parts of it, and a hover lays out the functions of the hovered def. `None` when
/// elaboration does not support the function, or, in debug builds (tests), when a memory
/// IR does not validate: an internal bug then leaves the hover and the diagnostics
/// silent rather than wrong, and never panics (STYLE.md §5 validates in tests and debug
/// builds only; release builds skip it, a fifth of the cost).
#[salsa::tracked(returns(ref), lru = 256)]
pub(crate) fn function_memory<'db>(
    db: &'db dyn Db,
    key: FnKey<'db>,
) -> Option<Arc<FunctionMemory>> {
    let elaborated = weft_core::elab_function(db, key).as_ref().ok()?;
    let f = &elaborated.function;
    let callee_result = |callee: FnId| {
        let key = *elaborated.callees.get(callee.into_raw().into_u32() as usize)?;
        function_result(db, key).as_deref().cloned()
    };
    let validate = cfg!(debug_assertions);
    let annotated = weft_mem::annotate_function(f, &callee_result);
    if validate && !weft_mem::validate_one(f, &annotated).is_empty() {
        return None;
    }
    let memory = weft_mem::expand_one(f, &annotated, ExpandOptions::default());
    if validate && !weft_mem::validate_one(f, &memory).is_empty() {
        return None;
    }
    Some(Arc::new(FunctionMemory { memory, result: annotated.result }))
}

/// The memory of a function's result as its callers see it: equal after an edit that
/// lays its function out differently but returns the same, so its callers are not laid
/// out again.
#[salsa::tracked(returns(ref))]
fn function_result<'db>(db: &'db dyn Db, key: FnKey<'db>) -> Option<Arc<MemInfo>> {
    function_memory(db, key).as_ref().map(|m| Arc::new(m.result.clone()))
}

/// The forced copies of one function, for the file's `forced-copy` diagnostics: kept
/// (they are few) while the layout they come from may be evicted.
#[salsa::tracked(returns(ref))]
pub(crate) fn function_copies<'db>(db: &'db dyn Db, key: FnKey<'db>) -> Arc<[CopyInfo]> {
    let (Some(memory), Ok(elaborated)) =
        (function_memory(db, key), weft_core::elab_function(db, key))
    else {
        return Arc::from([]);
    };
    let copies = weft_mem::function_forced_copies(
        FnId::from_raw(0u32.into()),
        &elaborated.function,
        &memory.memory,
    );
    copies.into()
}

/// What is known of the memory of a binding.
#[derive(Debug)]
pub(crate) enum PatMemory {
    /// The file has no memory layout (errors), or the binding's value comes from where
    /// the lookup cannot follow (an inlined def's parameter is its argument at each
    /// call).
    Unknown,
    /// No entry of the file uses the binding's def, so it has no layout (memory is laid
    /// out per use, after specialisation).
    NotReached,
    /// One result per distinct layout (a def is specialised or inlined per use).
    Found(Vec<BindingMemory>),
}

/// The memory of the binding `pat` of def `loc`: in the functions that hold the def's
/// code (`program::file_functions`), each laid out on its own.
pub(crate) fn memory_of_pat(db: &dyn Db, loc: &DefLoc, pat: PatId) -> PatMemory {
    let Some(functions) = file_functions(db, loc.file) else { return PatMemory::Unknown };
    let Some(indices) = functions.by_def.get(loc) else { return PatMemory::NotReached };
    // The functions holding the def's code, in the file's order; a lookup's `FnId` is an
    // index into this list.
    let mut held: Vec<(FnKey<'_>, &Function)> = Vec::new();
    for &idx in indices {
        let Some(&key) = usize::try_from(idx).ok().and_then(|i| functions.order.get(i)) else {
            continue;
        };
        if let Ok(elaborated) = weft_core::elab_function(db, key) {
            held.push((key, &elaborated.function));
        }
    }
    let body = weft_hir::body(db, DefId::new(db, loc.clone()));
    let functions: Vec<(FnId, &Function)> = held
        .iter()
        .enumerate()
        .filter_map(|(i, (_, f))| Some((FnId::from_raw(u32::try_from(i).ok()?.into()), *f)))
        .collect();
    let lookup = Lookup { loc, body, functions: &functions, parents: pat_parents(body) };
    let mut found: Vec<BindingMemory> = Vec::new();
    for (function, var) in lookup.vars_of_pat(pat, 0) {
        let Some((key, f)) = held.get(function.into_raw().into_u32() as usize) else { continue };
        let Some(memory) = function_memory(db, *key) else { continue };
        if let Some(memory) = weft_mem::memory_of_function_var(function, f, &memory.memory, var)
            && !found.iter().any(|m| m.leaves == memory.leaves)
        {
            found.push(memory);
        }
    }
    if found.is_empty() { PatMemory::Unknown } else { PatMemory::Found(found) }
}

/// How deep `let x = y` aliases are followed.
const MAX_ALIAS_DEPTH: u32 = 32;

struct Lookup<'a> {
    loc: &'a DefLoc,
    body: &'a Body,
    /// The functions that hold the def's code.
    functions: &'a [(FnId, &'a Function)],
    /// For a pattern inside a tuple or ascription pattern: the enclosing pattern, and
    /// the tuple index (`None` through an ascription).
    parents: ArenaMap<PatId, (PatId, Option<u32>)>,
}

/// Where the outermost pattern of a binding is bound.
enum Site {
    Param(usize),
    Let { value: ExprId },
    LambdaParam { lambda: ExprId, idx: usize },
    Loop { loop_: ExprId },
}

impl Lookup<'_> {
    fn function(&self, id: FnId) -> Option<&Function> {
        self.functions.iter().find(|(f_id, _)| *f_id == id).map(|&(_, f)| f)
    }

    /// The core variables `pat` is bound to, in every function.
    fn vars_of_pat(&self, pat: PatId, depth: u32) -> Vec<(FnId, VarId)> {
        // Climb to the outermost pattern, recording the tuple path down to `pat`.
        let mut path = Vec::new();
        let mut top = pat;
        while let Some(&(parent, index)) = self.parents.get(top) {
            path.extend(index);
            top = parent;
        }
        path.reverse();
        let Some(site) = self.site(top) else { return Vec::new() };
        let roots = match site {
            Site::Param(idx) => self
                .functions
                .iter()
                .filter(|(_, f)| &f.def == self.loc)
                .filter_map(|&(id, f)| f.params.get(idx).map(|&var| (id, var)))
                .collect(),
            Site::Let { value } => {
                let name = match (&self.body.pats[pat], path.is_empty()) {
                    (Pat::Bind { name }, true) => Some(name),
                    _ => None,
                };
                self.vars_of_expr(value, name, depth)
            }
            Site::LambdaParam { lambda, idx } => self.lambda_params(lambda, idx),
            Site::Loop { loop_ } => self.loop_params(loop_),
        };
        roots
            .into_iter()
            .filter_map(|(function, root)| {
                let f = self.function(function)?;
                path.iter()
                    .try_fold(root, |var, &index| projection(f, var, index))
                    .map(|v| (function, v))
            })
            .collect()
    }

    fn site(&self, top: PatId) -> Option<Site> {
        if let Some(idx) = self.body.params.iter().position(|&p| p == top) {
            return Some(Site::Param(idx));
        }
        self.body.exprs.iter().find_map(|(expr, e)| match e {
            Expr::Let { pat, value, .. } if *pat == top => Some(Site::Let { value: *value }),
            Expr::Lambda { params, .. } => params
                .iter()
                .position(|&p| p == top)
                .map(|idx| Site::LambdaParam { lambda: expr, idx }),
            Expr::Loop { pat, .. } if *pat == top => Some(Site::Loop { loop_: expr }),
            Expr::Missing
            | Expr::Literal(_)
            | Expr::Path { .. }
            | Expr::Tuple(_)
            | Expr::Array(_)
            | Expr::Call { .. }
            | Expr::Binary { .. }
            | Expr::Unary { .. }
            | Expr::OpSection(_)
            | Expr::LeftSection { .. }
            | Expr::RightSection { .. }
            | Expr::Let { .. }
            | Expr::If { .. }
            | Expr::Loop { .. }
            | Expr::Index { .. }
            | Expr::Proj { .. }
            | Expr::Record(_)
            | Expr::Field { .. }
            | Expr::RecordUpdate { .. }
            | Expr::Ascribe { .. }
            | Expr::Coerce { .. }
            | Expr::Update { .. } => None,
        })
    }

    /// The variables holding the value of `expr`: an alias follows the binding it
    /// names; otherwise the value is a statement that came from `expr` in the outermost
    /// block holding such statements (nested blocks are lambda bodies and branches
    /// elaborated on the way): those that a `let` named `name` (a def inlined twice into
    /// one function gives two), else the last one.
    fn vars_of_expr(&self, expr: ExprId, name: Option<&Name>, depth: u32) -> Vec<(FnId, VarId)> {
        match &self.body.exprs[expr] {
            Expr::Path { res: Resolution::Local(pat), .. } if depth < MAX_ALIAS_DEPTH => {
                return self.vars_of_pat(*pat, depth + 1);
            }
            Expr::Let { body, .. } if depth < MAX_ALIAS_DEPTH => {
                return self.vars_of_expr(*body, name, depth + 1);
            }
            Expr::Ascribe { expr: inner, .. } if depth < MAX_ALIAS_DEPTH => {
                return self.vars_of_expr(*inner, name, depth + 1);
            }
            _ => {}
        }
        let origin = Origin { def: self.loc.clone(), expr };
        let mut out = Vec::new();
        for &(id, f) in self.functions {
            let mut outermost: Vec<VarId> = Vec::new();
            let mut outermost_depth = usize::MAX;
            walk_stmts(f, &mut |block_depth, stmt| {
                if f.origins.get(stmt.exp) != Some(&origin) || block_depth > outermost_depth {
                    return;
                }
                if block_depth < outermost_depth {
                    outermost.clear();
                    outermost_depth = block_depth;
                }
                outermost.push(stmt.var);
            });
            let named: Vec<VarId> = outermost
                .iter()
                .copied()
                .filter(|&var| name.is_some_and(|name| &f.vars[var].name == name))
                .collect();
            if named.is_empty() {
                out.extend(outermost.last().map(|&var| (id, var)));
            } else {
                out.extend(named.into_iter().map(|var| (id, var)));
            }
        }
        out
    }

    /// Parameter `idx` of the core lambdas made from the HIR lambda `lambda`: the SOACs
    /// whose call takes it as an argument.
    fn lambda_params(&self, lambda: ExprId, idx: usize) -> Vec<(FnId, VarId)> {
        let takes_lambda = |call: ExprId| match &self.body.exprs[call] {
            Expr::Call { callee, args } => {
                args.contains(&lambda)
                    || matches!(&self.body.exprs[*callee], Expr::Call { args, .. } if args.contains(&lambda))
            }
            _ => false,
        };
        let mut out = Vec::new();
        for &(id, f) in self.functions {
            walk_stmts(f, &mut |_, stmt| {
                let Some(origin) = f.origins.get(stmt.exp) else { return };
                if &origin.def != self.loc || !takes_lambda(origin.expr) {
                    return;
                }
                if let Some(core_lambda) = f.exps[stmt.exp].lambda()
                    && let Some(&var) = core_lambda.params.get(idx)
                {
                    out.push((id, var));
                }
            });
        }
        out
    }

    fn loop_params(&self, loop_: ExprId) -> Vec<(FnId, VarId)> {
        let origin = Origin { def: self.loc.clone(), expr: loop_ };
        let mut out = Vec::new();
        for &(id, f) in self.functions {
            walk_stmts(f, &mut |_, stmt| {
                if let Exp::Loop { param, .. } = &f.exps[stmt.exp]
                    && f.origins.get(stmt.exp) == Some(&origin)
                {
                    out.push((id, *param));
                }
            });
        }
        out
    }
}

/// The parent of every pattern nested in a tuple or ascription pattern.
fn pat_parents(body: &Body) -> ArenaMap<PatId, (PatId, Option<u32>)> {
    let mut parents = ArenaMap::default();
    for (id, pat) in body.pats.iter() {
        match pat {
            Pat::Tuple(items) => {
                for (idx, &item) in items.iter().enumerate() {
                    if let Ok(idx) = u32::try_from(idx) {
                        parents.insert(item, (id, Some(idx)));
                    }
                }
            }
            Pat::Ascribed { pat: inner, .. } => {
                parents.insert(*inner, (id, None));
            }
            // A record is the tuple of its fields in name order.
            Pat::Record(fields) => {
                for (name, item) in fields {
                    let idx = fields.iter().filter(|(other, _)| other < name).count();
                    if let Ok(idx) = u32::try_from(idx) {
                        parents.insert(*item, (id, Some(idx)));
                    }
                }
            }
            Pat::Missing | Pat::Bind { .. } | Pat::Wild => {}
        }
    }
    parents
}

/// The variable bound to component `index` of the tuple `var`.
fn projection(f: &Function, var: VarId, index: u32) -> Option<VarId> {
    let mut found = None;
    walk_stmts(f, &mut |_, stmt| {
        if found.is_none()
            && let Exp::Proj { tuple: Atom::Var(tuple), index: i } = &f.exps[stmt.exp]
            && *tuple == var
            && *i == index
        {
            found = Some(stmt.var);
        }
    });
    found
}

/// Visits every statement of `f` in order with the depth of its block (the body is 0),
/// with an explicit stack (bodies can nest deeply).
fn walk_stmts(f: &Function, visit: &mut impl FnMut(usize, &weft_core::Stmt)) {
    let mut stack: Vec<(BlockId, usize)> = vec![(f.body, 0)];
    while let Some((block, depth)) = stack.pop() {
        let mut inner = Vec::new();
        for stmt in &f.blocks[block].stmts {
            visit(depth, stmt);
            inner.extend(f.exps[stmt.exp].nested_blocks());
        }
        stack.extend(inner.into_iter().rev().map(|b| (b, depth + 1)));
    }
}

#[cfg(test)]
mod tests {
    use weft_hir::RootDatabase;

    const SRC: &str = r"
entry f (a: [n][m]i32) : [m*n]i32 = flatten (transpose a)
entry g (xs: [n]f32) : [n]f32 = map (\x -> x + 1f32) xs
";

    /// The memory queries that executed while `edit` ran and diagnostics were read.
    fn memory_queries_after(edit: &str) -> Vec<String> {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", SRC);
        assert_eq!(crate::check_file(&db, file).len(), 1);
        db.enable_log();
        db.set_file("main.weft", edit);
        let _ = crate::check_file(&db, file);
        db.take_log()
            .into_iter()
            .filter(|e| e.starts_with("function_memory(") || e.starts_with("memory_diagnostics("))
            .collect()
    }

    #[test]
    fn moving_text_does_not_recompute_the_memory_layout() {
        let queries = memory_queries_after(&format!("-- a comment\n{SRC}"));
        assert!(queries.iter().all(|q| !q.starts_with("function_memory(")), "{queries:?}");
        assert_eq!(queries.len(), 1, "the diagnostics' ranges are recomputed: {queries:?}");
    }

    /// Functions are laid out each on its own: an edit in `g` lays out `g` again, once,
    /// and leaves `f`'s layout (with its forced copy) as it was.
    #[test]
    fn editing_a_body_lays_out_its_function_alone() {
        let queries = memory_queries_after(&SRC.replace("x + 1f32", "x + 2f32"));
        let layouts = queries.iter().filter(|q| q.starts_with("function_memory(")).count();
        assert_eq!(layouts, 1, "{queries:?}");
    }
}
