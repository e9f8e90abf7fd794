//! Type and size inference for one def (LANGUAGE.md sections 2, 4 and 5).
//!
//! Hindley-Milner over a def body, bidirectional where it helps: a call to a known
//! function (a def or a built-in) checks its non-function arguments first and then
//! its lambdas against the instantiated parameter types, so `map (\r -> r[0]) m`
//! knows `r` is a row. Only declared `'a` parameters are generalised; unsuffixed
//! literals and overloaded operators default per def (`i32`, `f32`).
//!
//! Sizes are [`TySize`] polynomials. A size parameter of a callee is a flexible
//! variable solved by unification; an `i64` parameter named in later types is
//! *dependent*: the argument's size expression (`iota (n * m) : [n*m]i64`) or else a
//! fresh unknown size. Unknown sizes are rigid. `if` branches and loop iterations
//! whose sizes differ get a fresh unknown size, not an error.
//!
//! The result holds no text ranges: types and diagnostics are keyed by ids.

mod expr;
mod unify;

use std::sync::Arc;

use la_arena::ArenaMap;
use rustc_hash::FxHashSet;

use crate::expr_store::{Body, ExprId, PatId, Resolution, body};
use crate::items::{DefId, DefKind, DefLoc};
use crate::scope::file_scope;
use crate::signatures::{Signature, signature};
use crate::ty::{ScalarTy, Scheme, SchemeParam, SizeVar, Ty, TySize};
use crate::type_ref::{SizeRef, TypeRef};
use crate::{Db, Name};

pub(crate) use self::unify::Class;

/// Where a problem is: an expression, a pattern, or part of the signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Site {
    Expr(ExprId),
    Pat(PatId),
    Param(usize),
    Ret,
    Name,
}

/// A type error, keyed by ids; `diagnostics.rs` places it, weft-ide words it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InferDiagnostic {
    TypeMismatch {
        site: Site,
        expected: Ty,
        found: Ty,
    },
    /// `what` names the thing found (`xs`), `origin` the expression that fixed the
    /// expected size, if another one did.
    SizeMismatch {
        site: Site,
        expected: TySize,
        found: TySize,
        origin: Option<ExprId>,
    },
    /// `expected_side`: the type outside the class is the one required there (a
    /// function, say) and the expression is of the class (a number).
    ClassMismatch {
        site: Site,
        class: &'static str,
        found: Ty,
        expected_side: bool,
    },
    /// The array made local inside a `map@group` body is that body's result:
    /// `site` is the `to_local`, `via` the bindings it flows through, `group` the
    /// `map@group` whose result it becomes (the reason chain of address-space
    /// inference: local label, flows, the global result that cannot hold it).
    LocalEscapesGroup {
        site: Site,
        via: Vec<Site>,
        group: Site,
    },
    EntryWithoutReturnType,
    /// A parameter's size cannot be inferred from the argument: `name` is not an
    /// earlier `i64` parameter.
    UninferableParamSize {
        site: Site,
        name: Name,
    },
    /// An explicit size parameter `[k]` that no parameter's type names: a call
    /// cannot learn it from its arguments (LANGUAGE.md section 2).
    UnboundSizeParam {
        name: Name,
    },
    NotAFunction {
        site: Site,
        ty: Ty,
    },
    NotAnArray {
        site: Site,
        ty: Ty,
    },
    TooManyIndices {
        site: Site,
        ty: Ty,
        n_indices: usize,
    },
    NotATuple {
        site: Site,
        ty: Ty,
    },
    /// `e.x` (version 1.1) where `e` is not a record, or its type is not known yet.
    NotARecord {
        site: Site,
        ty: Ty,
        field: Name,
    },
    NoSuchField {
        site: Site,
        ty: Ty,
        field: Name,
    },
    /// A record type that names a field twice (version 1.1).
    DuplicateField {
        site: Site,
        name: Name,
    },
    ProjectionOutOfRange {
        site: Site,
        ty: Ty,
        index: u32,
    },
    CannotInfer {
        site: Site,
    },
    UnknownType {
        site: Site,
        name: Name,
    },
    UnknownSize {
        site: Site,
        name: Name,
    },
    LiteralOutOfRange {
        site: Site,
        ty: ScalarTy,
    },
    FunctionNotAllowed {
        site: Site,
        context: &'static str,
    },
    EntryType {
        site: Site,
        ty: Ty,
    },
    RecursionCycle {
        cycle: Vec<Name>,
    },
    AliasTypeParams,
    /// `?[k].t` (version 1.1) other than as a def's or a local function's return type.
    ExistentialOutsideReturn {
        site: Site,
    },
    IllegalLevel {
        site: Site,
        found: String,
        context: &'static str,
        legal: &'static str,
    },
    /// `to_local` where no work-group shares the array: `context` is the innermost
    /// enclosing annotated combinator (`None`: the host level of an entry, or a
    /// def's body outside any combinator).
    ToLocalOutsideGroup {
        site: Site,
        context: Option<(Site, String)>,
    },
}

impl InferDiagnostic {
    /// The diagnostic's stable code (`type-mismatch`).
    pub fn code(&self) -> &'static str {
        self.row().0
    }

    /// The site the diagnostic is shown at (the def's name for those about the whole
    /// def).
    pub fn site(&self) -> Site {
        self.row().1
    }

    /// Whether the diagnostic names a type that contains the error type (printed
    /// `{unknown}`): a cascade of a diagnostic already given, so it is dropped (one
    /// mistake gives one error).
    pub fn mentions_error_type(&self) -> bool {
        self.row().2.iter().any(|ty| ty.contains_error())
    }

    /// One row per kind: its code, its site, and the types its message names.
    fn row(&self) -> (&'static str, Site, Vec<&Ty>) {
        match self {
            Self::TypeMismatch { site, expected, found } => {
                ("type-mismatch", site.clone(), vec![expected, found])
            }
            Self::ClassMismatch { site, found, .. } => ("type-mismatch", site.clone(), vec![found]),
            Self::SizeMismatch { site, .. } => ("size-mismatch", site.clone(), vec![]),
            Self::LocalEscapesGroup { site, .. } => ("local-escapes-group", site.clone(), vec![]),
            Self::EntryWithoutReturnType => ("missing-return-type", Site::Name, vec![]),
            Self::UninferableParamSize { site, .. } => ("uninferable-size", site.clone(), vec![]),
            Self::UnboundSizeParam { .. } => ("unbound-size-param", Site::Name, vec![]),
            Self::NotAFunction { site, ty } => ("not-a-function", site.clone(), vec![ty]),
            Self::NotAnArray { site, ty } => ("not-an-array", site.clone(), vec![ty]),
            Self::TooManyIndices { site, ty, .. } => ("too-many-indices", site.clone(), vec![ty]),
            Self::NotATuple { site, ty } => ("not-a-tuple", site.clone(), vec![ty]),
            Self::NotARecord { site, ty, .. } => ("not-a-record", site.clone(), vec![ty]),
            Self::NoSuchField { site, ty, .. } => ("no-such-field", site.clone(), vec![ty]),
            Self::DuplicateField { site, .. } => ("duplicate-field", site.clone(), vec![]),
            Self::ProjectionOutOfRange { site, ty, .. } => {
                ("projection-out-of-range", site.clone(), vec![ty])
            }
            Self::CannotInfer { site } => ("cannot-infer", site.clone(), vec![]),
            Self::UnknownType { site, .. } => ("unknown-type", site.clone(), vec![]),
            Self::UnknownSize { site, .. } => ("unknown-size", site.clone(), vec![]),
            Self::LiteralOutOfRange { site, .. } => ("literal-out-of-range", site.clone(), vec![]),
            Self::FunctionNotAllowed { site, .. } => ("function-not-allowed", site.clone(), vec![]),
            Self::EntryType { site, ty } => ("entry-type", site.clone(), vec![ty]),
            Self::RecursionCycle { .. } => ("recursion-cycle", Site::Name, vec![]),
            Self::AliasTypeParams => ("alias-type-params", Site::Name, vec![]),
            Self::ExistentialOutsideReturn { site } => {
                ("misplaced-existential", site.clone(), vec![])
            }
            Self::IllegalLevel { site, .. } => ("illegal-level", site.clone(), vec![]),
            Self::ToLocalOutsideGroup { site, .. } => {
                ("to-local-outside-group", site.clone(), vec![])
            }
        }
    }
}

/// Types of every expression and pattern of a def, its scheme, and its diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InferenceResult {
    pub expr_tys: ArenaMap<ExprId, Ty>,
    pub pat_tys: ArenaMap<PatId, Ty>,
    pub scheme: Option<Scheme>,
    pub diagnostics: Vec<InferDiagnostic>,
}

impl InferenceResult {
    pub fn expr_ty(&self, expr: ExprId) -> Ty {
        self.expr_tys.get(expr).cloned().unwrap_or(Ty::Error)
    }

    pub fn pat_ty(&self, pat: PatId) -> Ty {
        self.pat_tys.get(pat).cloned().unwrap_or(Ty::Error)
    }
}

/// The defs a body refers to, for recursion checks (backdates when unchanged).
#[salsa::tracked(returns(ref))]
pub(crate) fn def_refs<'db>(db: &'db dyn Db, def: DefId<'db>) -> Arc<[DefLoc]> {
    let body = body(db, def);
    let mut refs: Vec<DefLoc> = body
        .exprs
        .iter()
        .filter_map(|(_, e)| match e {
            crate::Expr::Path { res: Resolution::Def(loc), .. } => Some(loc.clone()),
            _ => None,
        })
        .collect();
    let mut seen = FxHashSet::default();
    refs.retain(|loc| seen.insert(loc.clone()));
    refs.into()
}

/// The cycle of calls through `def`, if any (LANGUAGE.md: no recursion).
#[salsa::tracked(returns(ref))]
pub(crate) fn recursion_cycle<'db>(db: &'db dyn Db, def: DefId<'db>) -> Option<Vec<Name>> {
    let loc = def.loc(db);
    file_recursion_cycles(db, loc.file).get(loc).cloned()
}

/// Every recursive def of a file with one cycle through it. Recursion never crosses
/// files: calling into another file needs an import, and a file's names are not
/// visible to the files it imports unless the imports form a cycle, which is an error
/// that hides the names (`scope.rs`). So the strongly connected components of the
/// file's call graph are all there is; Tarjan's algorithm finds them in linear time,
/// iteratively (deep call chains must not exhaust the stack).
#[salsa::tracked(returns(ref))]
fn file_recursion_cycles(
    db: &dyn Db,
    file: crate::SourceFile,
) -> Arc<rustc_hash::FxHashMap<DefLoc, Vec<Name>>> {
    let defs: Vec<DefLoc> = crate::items::item_tree(db, file)
        .defs
        .iter()
        .filter(|d| d.kind != DefKind::TypeAlias)
        .cloned()
        .collect();
    let index: rustc_hash::FxHashMap<&DefLoc, usize> =
        defs.iter().enumerate().map(|(i, d)| (d, i)).collect();
    let edges: Vec<Vec<usize>> = defs
        .iter()
        .map(|d| {
            def_refs(db, DefId::new(db, d.clone()))
                .iter()
                .filter_map(|callee| index.get(callee).copied())
                .collect()
        })
        .collect();
    let components = strongly_connected(&edges);
    let mut cycles = rustc_hash::FxHashMap::default();
    for component in components {
        let members: FxHashSet<usize> = component.iter().copied().collect();
        let recursive = component.len() > 1 || edges[component[0]].contains(&component[0]);
        if !recursive {
            continue;
        }
        for &start in &component {
            let path = shortest_cycle(&edges, &members, start);
            cycles.insert(
                defs[start].clone(),
                path.into_iter().map(|i| defs[i].name.clone()).collect(),
            );
        }
    }
    Arc::new(cycles)
}

/// Tarjan's strongly connected components, with an explicit stack.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next_index = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, next edge to visit)
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (node, ref mut edge_idx)) = work.last_mut() {
            if *edge_idx == 0 && index[node] == usize::MAX {
                index[node] = next_index;
                low[node] = next_index;
                next_index += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&next) = edges[node].get(*edge_idx) {
                *edge_idx += 1;
                if index[next] == usize::MAX {
                    work.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                component.reverse();
                components.push(component);
            }
        }
    }
    components
}

/// The shortest path `start -> ... -> start` inside one component (breadth-first).
fn shortest_cycle(edges: &[Vec<usize>], members: &FxHashSet<usize>, start: usize) -> Vec<usize> {
    let mut parent: rustc_hash::FxHashMap<usize, usize> = rustc_hash::FxHashMap::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in &edges[node] {
            if next == start {
                // Walk back from `node` to `start`, then read the path forwards.
                let mut back = Vec::new();
                let mut at = node;
                while at != start {
                    back.push(at);
                    at = *parent.get(&at).expect("invariant: every visited node has a parent");
                }
                back.reverse();
                let mut path = vec![start];
                path.extend(back);
                path.push(start);
                return path;
            }
            if members.contains(&next) && !parent.contains_key(&next) && next != start {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    vec![start, start]
}

/// The type scheme callers see: from the signature when the return type is written,
/// otherwise from inferring the body.
#[salsa::tracked(returns(ref))]
pub fn def_scheme<'db>(db: &'db dyn Db, def: DefId<'db>) -> Scheme {
    let sig = signature(db, def);
    if recursion_cycle(db, def).is_some() || sig.malformed_header {
        return error_scheme(sig);
    }
    if sig.ret.is_some() {
        let mut ctx = InferCtx::new(db, def, Arc::new(Body::default()));
        return ctx.signature_scheme();
    }
    infer(db, def).scheme.clone().unwrap_or_else(|| error_scheme(sig))
}

fn error_scheme(sig: &Signature) -> Scheme {
    Scheme {
        type_params: sig.type_params.clone(),
        size_params: Vec::new(),
        params: sig
            .params
            .iter()
            .map(|_| SchemeParam { binds_size: None, ty: Ty::Error })
            .collect(),
        ret: Ty::Error,
    }
}

/// Infers a def's body.
#[salsa::tracked(returns(ref))]
pub fn infer<'db>(db: &'db dyn Db, def: DefId<'db>) -> Arc<InferenceResult> {
    let body = Arc::clone(body(db, def));
    let mut ctx = InferCtx::new(db, def, body);
    if def.loc(db).kind == DefKind::TypeAlias {
        return Arc::new(ctx.infer_alias());
    }
    Arc::new(ctx.infer_def())
}

pub(crate) struct InferCtx<'db> {
    pub(crate) db: &'db dyn Db,
    def: DefId<'db>,
    loc: DefLoc,
    pub(crate) sig: Arc<Signature>,
    pub(crate) body: Arc<Body>,
    table: unify::Table,
    pub(crate) result: InferenceResult,
    /// Size names in scope, innermost last: parameters, size parameters, `i64` lets.
    size_scope: Vec<(Name, TySize)>,
    /// The size an `i64` binding stands for.
    local_sizes: ArenaMap<PatId, TySize>,
    /// What an existential or anonymous size of a return type (`?[k].[k]t`, `[]t`)
    /// becomes: an unknown size for callers, a flexible variable while the body that
    /// determines it is checked.
    existentials: Existentials,
}

/// See [`InferCtx::existentials`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Existentials {
    /// Callers' view: a rigid unknown size, fresh at each use.
    Unknown,
    /// The body's view: whatever size the body's value has.
    Flexible,
}

impl<'db> InferCtx<'db> {
    fn new(db: &'db dyn Db, def: DefId<'db>, body: Arc<Body>) -> InferCtx<'db> {
        InferCtx {
            db,
            def,
            loc: def.loc(db).clone(),
            sig: Arc::clone(signature(db, def)),
            body,
            table: unify::Table::default(),
            result: InferenceResult::default(),
            size_scope: Vec::new(),
            local_sizes: ArenaMap::default(),
            existentials: Existentials::Flexible,
        }
    }

    fn report(&mut self, diagnostic: InferDiagnostic) {
        if !self.result.diagnostics.contains(&diagnostic) {
            self.result.diagnostics.push(diagnostic);
        }
    }

    /// All size names of the signature: explicit `[n]`, `i64` parameters, and names
    /// used in parameter types (implicit size parameters).
    fn signature_size_names(&self) -> (Vec<Name>, Vec<Name>) {
        let i64_params: Vec<Name> = self
            .sig
            .params
            .iter()
            .zip(&self.sig.param_names)
            .filter(|(ty, _)| matches!(ty, TypeRef::Name(n) if n.as_str() == "i64"))
            .filter_map(|(_, name)| name.clone())
            .collect();
        let mut size_params = self.sig.size_params.clone();
        for ty in &self.sig.params {
            ty.for_each_size_name(&mut |name| {
                if !size_params.contains(name) && !i64_params.contains(name) {
                    size_params.push(name.clone());
                }
            });
        }
        (size_params, i64_params)
    }

    fn enter_signature_scope(&mut self) {
        let (size_params, i64_params) = self.signature_size_names();
        for name in size_params.iter().chain(&i64_params) {
            self.size_scope.push((name.clone(), TySize::var(SizeVar::Param(name.clone()))));
        }
    }

    /// The scheme from the signature alone (parameter and return types as written).
    fn signature_scheme(&mut self) -> Scheme {
        self.enter_signature_scope();
        let params: Vec<Ty> = self
            .sig
            .params
            .clone()
            .iter()
            .enumerate()
            .map(|(i, t)| self.lower_type_ref(t, Site::Param(i)))
            .collect();
        let ret = match self.sig.ret.clone() {
            Some(ret) => self.lower_ret_for_callers(&ret),
            None => Ty::Error,
        };
        self.make_scheme(params, ret)
    }

    /// A declared return type as callers see it: its existential and anonymous sizes
    /// are unknown sizes, which each use instantiates afresh.
    fn lower_ret_for_callers(&mut self, ret: &TypeRef) -> Ty {
        self.existentials = Existentials::Unknown;
        let ty = self.lower_type_ref(ret, Site::Ret);
        self.existentials = Existentials::Flexible;
        ty
    }

    fn make_scheme(&self, params: Vec<Ty>, ret: Ty) -> Scheme {
        let (size_params, i64_params) = self.signature_size_names();
        let mut used: Vec<Name> = Vec::new();
        for ty in params.iter().chain(std::iter::once(&ret)) {
            ty.for_each_size(&mut |size| {
                for var in size.vars() {
                    if let SizeVar::Param(name) = var
                        && !used.contains(&name)
                    {
                        used.push(name);
                    }
                }
            });
        }
        let params = params
            .into_iter()
            .zip(&self.sig.param_names)
            .map(|(ty, name)| {
                let binds_size =
                    name.clone().filter(|n| i64_params.contains(n) && used.contains(n));
                SchemeParam { binds_size, ty }
            })
            .collect();
        Scheme { type_params: self.sig.type_params.clone(), size_params, params, ret }
    }

    fn infer_alias(&mut self) -> InferenceResult {
        if !self.sig.type_params.is_empty() {
            self.report(InferDiagnostic::AliasTypeParams);
        }
        if let Some(alias) = self.sig.alias.clone() {
            let ty = self.lower_type_ref(&alias, Site::Ret);
            self.result.scheme = Some(Scheme {
                type_params: Vec::new(),
                size_params: Vec::new(),
                params: Vec::new(),
                ret: ty,
            });
        }
        std::mem::take(&mut self.result)
    }

    fn infer_def(&mut self) -> InferenceResult {
        if let Some(cycle) = recursion_cycle(self.db, self.def).clone() {
            self.report(InferDiagnostic::RecursionCycle { cycle });
        }
        self.enter_signature_scope();
        self.check_param_sizes();
        if self.sig.is_entry && self.sig.ret.is_none() {
            self.report(InferDiagnostic::EntryWithoutReturnType);
        }
        let body = Arc::clone(&self.body);
        let mut param_tys = Vec::new();
        for (idx, &pat) in body.params.iter().enumerate() {
            let ty = match self.sig.params.get(idx).cloned() {
                Some(ty_ref) => self.lower_type_ref(&ty_ref, Site::Param(idx)),
                None => Ty::Error,
            };
            self.bind_pat(pat, &ty);
            if let Some(Some(name)) = self.sig.param_names.get(idx)
                && ty == Ty::i64()
            {
                self.local_sizes.insert(pat, TySize::var(SizeVar::Param(name.clone())));
            }
            param_tys.push(ty);
        }
        let declared_ret = self.sig.ret.clone().map(|r| self.lower_type_ref(&r, Site::Ret));
        let ret = match body.root {
            Some(root) => {
                let ty = self.infer_expr(root, declared_ret.as_ref());
                if let Some(declared) = &declared_ret {
                    self.expect_ty(Site::Expr(root), declared, &ty);
                }
                declared_ret.clone().unwrap_or(ty)
            }
            None => declared_ret.clone().unwrap_or(Ty::Error),
        };
        self.table.default_vars();
        self.check_literals();
        // The body fixed the existential sizes of a declared return type; callers see
        // them unknown (the body's sizes may name its own `let`s).
        let ret = match (&self.sig.ret, body.root) {
            (Some(declared), Some(_)) if declared.has_existential() => {
                self.lower_ret_for_callers(&declared.clone())
            }
            _ => ret,
        };
        let ret = self.table.finish(&ret);
        if ret.contains_fn() && declared_ret.is_none() && self.sig.is_entry {
            self.report(InferDiagnostic::FunctionNotAllowed {
                site: Site::Ret,
                context: "an entry point's result",
            });
        }
        if self.sig.is_entry {
            self.check_entry_types(&param_tys, &ret);
        }
        crate::levels::check_levels(self);
        self.finish_tables();
        self.result.scheme = Some(self.make_scheme(param_tys, ret));
        std::mem::take(&mut self.result)
    }

    /// LANGUAGE.md section 2: in a parameter type, a size is a variable, a constant,
    /// or an expression over *earlier* `i64` parameters.
    fn check_param_sizes(&mut self) {
        let sig = Arc::clone(&self.sig);
        for name in &sig.size_params {
            let mut named = false;
            for ty in &sig.params {
                ty.for_each_size_name(&mut |n| named |= n == name);
            }
            if !named {
                self.report(InferDiagnostic::UnboundSizeParam { name: name.clone() });
            }
        }
        for (idx, ty) in sig.params.iter().enumerate() {
            let earlier: Vec<&Name> = sig.params[..idx]
                .iter()
                .zip(&sig.param_names)
                .filter(|(t, _)| matches!(t, TypeRef::Name(n) if n.as_str() == "i64"))
                .filter_map(|(_, n)| n.as_ref())
                .collect();
            let later: Vec<&Name> = sig.param_names[idx..].iter().flatten().collect();
            // A size that is a whole dimension of an earlier parameter is bound by that
            // argument (version 1.1), so a later size may be an expression over it:
            // `(xs: [n]f32) (w: [n + 1][h]f32)`; the argument is then checked, not
            // inferred.
            let mut bound_earlier: Vec<Name> = Vec::new();
            for earlier_ty in &sig.params[..idx] {
                visit_param_sizes(earlier_ty, &mut |size| {
                    if let SizeRef::Name(name) = size {
                        bound_earlier.push(name.clone());
                    }
                });
            }
            let mut offending = None;
            visit_param_sizes(ty, &mut |size| match size {
                SizeRef::Name(name) => {
                    if later.contains(&name) && !earlier.contains(&name) {
                        offending.get_or_insert(name.clone());
                    }
                }
                SizeRef::Binary(..) => size.for_each_name(&mut |name| {
                    if !earlier.contains(&name) && !bound_earlier.contains(name) {
                        offending.get_or_insert(name.clone());
                    }
                }),
                SizeRef::Literal(_) | SizeRef::Anonymous | SizeRef::Error => {}
            });
            if let Some(name) = offending {
                self.report(InferDiagnostic::UninferableParamSize { site: Site::Param(idx), name });
            }
        }
    }

    fn check_entry_types(&mut self, params: &[Ty], ret: &Ty) {
        fn allowed(ty: &Ty, in_tuple: bool) -> bool {
            match ty {
                Ty::Scalar(_) | Ty::Error => true,
                Ty::Array { .. } => matches!(ty.dims().1, Ty::Scalar(_) | Ty::Error),
                Ty::Tuple(elems) => !in_tuple && elems.iter().all(|e| allowed(e, true)),
                // A record is passed like the tuple of its fields in name order.
                Ty::Record(fields) => !in_tuple && fields.iter().all(|(_, t)| allowed(t, true)),
                Ty::Fn { .. } | Ty::Param(_) | Ty::Var(_) => false,
            }
        }
        // A type with an error in it was already reported (an unknown type name, say);
        // a second diagnostic would print `{unknown}`.
        for (idx, ty) in params.iter().enumerate() {
            if !allowed(ty, false) && !ty.contains_error() {
                self.report(InferDiagnostic::EntryType { site: Site::Param(idx), ty: ty.clone() });
            }
        }
        if !allowed(ret, false) && !ret.contains_error() {
            self.report(InferDiagnostic::EntryType { site: Site::Ret, ty: ret.clone() });
        }
    }

    /// Resolves every recorded type; variables left after defaulting are reported once.
    fn finish_tables(&mut self) {
        let mut unresolved = Vec::new();
        // Finish everything first and replace afterwards: the finisher's memo is keyed
        // by the addresses of the types it reads, which must stay alive meanwhile.
        let mut finisher = unify::Finisher::new(&self.table);
        let exprs: Vec<(ExprId, Ty)> = self
            .result
            .expr_tys
            .iter()
            .map(|(expr, raw)| {
                let (finished, flags) = finisher.finish(raw);
                if flags.unresolved && !flags.error {
                    unresolved.push(expr);
                }
                (expr, finished)
            })
            .collect();
        let pats: Vec<(PatId, Ty)> =
            self.result.pat_tys.iter().map(|(pat, raw)| (pat, finisher.finish(raw).0)).collect();
        drop(finisher);
        for (expr, ty) in exprs {
            self.result.expr_tys.insert(expr, ty);
        }
        for (pat, ty) in pats {
            self.result.pat_tys.insert(pat, ty);
        }
        // One error for the innermost unresolved expression is enough.
        if let Some(first) = unresolved.first() {
            let has_errors = !self.result.diagnostics.is_empty();
            if !has_errors {
                self.report(InferDiagnostic::CannotInfer { site: Site::Expr(*first) });
            }
        }
        let diagnostics = std::mem::take(&mut self.result.diagnostics);
        self.result.diagnostics = diagnostics
            .into_iter()
            .map(|d| match d {
                InferDiagnostic::TypeMismatch { site, expected, found } => {
                    let mut names = Vec::new();
                    InferDiagnostic::TypeMismatch {
                        site,
                        expected: self.table.finish_named(&expected, &mut names),
                        found: self.table.finish_named(&found, &mut names),
                    }
                }
                InferDiagnostic::ClassMismatch { site, class, found, expected_side } => {
                    InferDiagnostic::ClassMismatch {
                        site,
                        class,
                        found: self.table.finish(&found),
                        expected_side,
                    }
                }
                InferDiagnostic::NotAFunction { site, ty } => {
                    InferDiagnostic::NotAFunction { site, ty: self.table.finish(&ty) }
                }
                InferDiagnostic::NotAnArray { site, ty } => {
                    InferDiagnostic::NotAnArray { site, ty: self.table.finish(&ty) }
                }
                InferDiagnostic::NotATuple { site, ty } => {
                    InferDiagnostic::NotATuple { site, ty: self.table.finish(&ty) }
                }
                InferDiagnostic::NotARecord { site, ty, field } => {
                    let ty = self.table.finish_named(&ty, &mut Vec::new());
                    InferDiagnostic::NotARecord { site, ty, field }
                }
                InferDiagnostic::NoSuchField { site, ty, field } => {
                    InferDiagnostic::NoSuchField { site, ty: self.table.finish(&ty), field }
                }
                other => other,
            })
            .collect();
    }

    /// Lowers a type annotation, resolving scalar, parameter, alias and size names.
    fn lower_type_ref(&mut self, ty: &TypeRef, site: Site) -> Ty {
        self.lower_type_ref_in(ty, &site, 0)
    }

    fn lower_type_ref_in(&mut self, ty: &TypeRef, site: &Site, depth: u32) -> Ty {
        match ty {
            TypeRef::Error => Ty::Error,
            TypeRef::Name(name) => {
                if let Some(scalar) = ScalarTy::from_name(name.as_str()) {
                    return Ty::Scalar(scalar);
                }
                if self.sig.type_params.contains(name) {
                    return Ty::Param(name.clone());
                }
                let scope = file_scope(self.db, self.loc.file);
                if let Some(alias) = scope.types.get(name.as_str()).cloned()
                    && depth < 64
                {
                    let alias_id = DefId::new(self.db, alias);
                    if let Some(aliased) = signature(self.db, alias_id).alias.clone() {
                        return self.lower_type_ref_in(&aliased, site, depth + 1);
                    }
                }
                self.report(InferDiagnostic::UnknownType {
                    site: site.clone(),
                    name: name.clone(),
                });
                Ty::Error
            }
            TypeRef::Array(size, elem) => {
                let size = self.lower_size_ref(size, site);
                let elem = self.lower_type_ref_in(elem, site, depth);
                Ty::array(size, elem)
            }
            TypeRef::Tuple(elems) => {
                Ty::tuple(elems.iter().map(|e| self.lower_type_ref_in(e, site, depth)).collect())
            }
            TypeRef::Fn(param, ret) => Ty::func(
                self.lower_type_ref_in(param, site, depth),
                self.lower_type_ref_in(ret, site, depth),
            ),
            TypeRef::Exist(names, inner) => {
                if *site != Site::Ret {
                    self.report(InferDiagnostic::ExistentialOutsideReturn { site: site.clone() });
                }
                let scope_len = self.size_scope.len();
                for name in names {
                    let size = self.existential_size();
                    self.size_scope.push((name.clone(), size));
                }
                let ty = self.lower_type_ref_in(inner, site, depth);
                self.size_scope.truncate(scope_len);
                ty
            }
            TypeRef::Record(fields) => {
                let mut lowered: Vec<(Name, Ty)> = Vec::new();
                for (name, field) in fields {
                    let ty = self.lower_type_ref_in(field, site, depth);
                    if lowered.iter().any(|(n, _)| n == name) {
                        self.report(InferDiagnostic::DuplicateField {
                            site: site.clone(),
                            name: name.clone(),
                        });
                    } else {
                        lowered.push((name.clone(), ty));
                    }
                }
                Ty::record(lowered)
            }
        }
    }

    fn lower_size_ref(&mut self, size: &SizeRef, site: &Site) -> TySize {
        match size {
            SizeRef::Literal(value) => TySize::constant(*value),
            SizeRef::Name(name) => match self.size_scope.iter().rev().find(|(n, _)| n == name) {
                Some((_, size)) => size.clone(),
                None => {
                    self.report(InferDiagnostic::UnknownSize {
                        site: site.clone(),
                        name: name.clone(),
                    });
                    self.table.new_unknown()
                }
            },
            SizeRef::Binary(op, lhs, rhs) => {
                let lhs = self.lower_size_ref(lhs, site);
                let rhs = self.lower_size_ref(rhs, site);
                match op {
                    weft_syntax::ast::SizeOp::Add => lhs.add(&rhs),
                    weft_syntax::ast::SizeOp::Sub => lhs.sub(&rhs),
                    weft_syntax::ast::SizeOp::Mul => lhs.mul(&rhs),
                    weft_syntax::ast::SizeOp::Div => lhs.div_exact(&rhs),
                }
            }
            // In a return type, `[]` is existential; in an ascription or a coercion, any
            // size (parameter types name theirs: `Signature::params`).
            SizeRef::Anonymous if *site == Site::Ret => self.existential_size(),
            SizeRef::Anonymous => self.table.new_size_var(),
            SizeRef::Error => self.table.new_unknown(),
        }
    }

    fn existential_size(&mut self) -> TySize {
        match self.existentials {
            Existentials::Unknown => self.table.new_unknown(),
            Existentials::Flexible => self.table.new_size_var(),
        }
    }

    /// Instantiates a callee's scheme: fresh variables for its type and size
    /// parameters and for the unknown sizes of its result.
    fn instantiate(&mut self, scheme: &Scheme) -> (Vec<SchemeParam>, Ty) {
        let mut types: Vec<(Name, Ty)> = Vec::new();
        for name in &scheme.type_params {
            types.push((name.clone(), self.table.new_var(Class::Any)));
        }
        let mut sizes: Vec<(SizeVar, TySize)> = Vec::new();
        for name in &scheme.size_params {
            sizes.push((SizeVar::Param(name.clone()), self.table.new_size_var()));
        }
        let subst = |ty: &Ty, table: &mut unify::Table, sizes: &mut Vec<(SizeVar, TySize)>| {
            let ty = substitute_types(ty, &types);
            ty.map_sizes(&mut |size| {
                size.substitute(&mut |var| {
                    if let Some((_, s)) = sizes.iter().find(|(v, _)| v == var) {
                        return Some(s.clone());
                    }
                    if let SizeVar::Unknown(_) = var {
                        let fresh = table.new_unknown();
                        sizes.push((var.clone(), fresh.clone()));
                        return Some(fresh);
                    }
                    None
                })
            })
        };
        let params = scheme
            .params
            .iter()
            .map(|p| SchemeParam {
                binds_size: p.binds_size.clone(),
                ty: subst(&p.ty, &mut self.table, &mut sizes),
            })
            .collect();
        let ret = subst(&scheme.ret, &mut self.table, &mut sizes);
        (params, ret)
    }

    fn expect_ty(&mut self, site: Site, expected: &Ty, found: &Ty) {
        if let Err(mismatch) = self.table.unify(expected, found) {
            self.report_mismatch(site, expected, found, mismatch);
        }
    }

    fn report_mismatch(
        &mut self,
        site: Site,
        expected: &Ty,
        found: &Ty,
        mismatch: unify::Mismatch,
    ) {
        let expected = self.table.resolve(expected);
        let found = self.table.resolve(found);
        if expected.contains_error() || found.contains_error() {
            return;
        }
        let diagnostic = match mismatch {
            unify::Mismatch::Size { expected: es, found: fs, origin } => {
                InferDiagnostic::SizeMismatch { site, expected: es, found: fs, origin }
            }
            unify::Mismatch::Class { class, found: violating } => {
                let expected_side = violating == expected && violating != found;
                InferDiagnostic::ClassMismatch {
                    site,
                    class: class.describe(),
                    found: violating,
                    expected_side,
                }
            }
            unify::Mismatch::Type => InferDiagnostic::TypeMismatch { site, expected, found },
        };
        self.report(diagnostic);
    }

    /// Checks integer literals against their final types.
    fn check_literals(&mut self) {
        let body = Arc::clone(&self.body);
        for (id, expr) in body.exprs.iter() {
            if let crate::Expr::Literal(crate::Literal::Float { text, .. }) = expr {
                let ty = self.table.resolve(&self.result.expr_ty(id));
                let overflows = match ty {
                    Ty::Scalar(ScalarTy::F16) => text
                        .parse::<f64>()
                        .is_ok_and(|x| weft_values::f16_from_f64(x).is_infinite()),
                    Ty::Scalar(ScalarTy::F32) => text.parse::<f32>().is_ok_and(f32::is_infinite),
                    Ty::Scalar(ScalarTy::F64) => text.parse::<f64>().is_ok_and(f64::is_infinite),
                    _ => false,
                };
                if let (true, Ty::Scalar(scalar)) = (overflows, ty) {
                    self.report(InferDiagnostic::LiteralOutOfRange {
                        site: Site::Expr(id),
                        ty: scalar,
                    });
                }
                continue;
            }
            let crate::Expr::Literal(crate::Literal::Int { value, .. }) = expr else { continue };
            let ty = self.table.resolve(&self.result.expr_ty(id));
            let Ty::Scalar(scalar) = ty else { continue };
            let in_range = match scalar {
                ScalarTy::I8 => i8::try_from(*value).is_ok(),
                ScalarTy::I16 => i16::try_from(*value).is_ok(),
                ScalarTy::U8 => u8::try_from(*value).is_ok(),
                ScalarTy::U16 => u16::try_from(*value).is_ok(),
                ScalarTy::I32 => i32::try_from(*value).is_ok(),
                ScalarTy::I64 => i64::try_from(*value).is_ok(),
                ScalarTy::U32 => u32::try_from(*value).is_ok(),
                ScalarTy::U64 => u64::try_from(*value).is_ok(),
                ScalarTy::F16 | ScalarTy::F32 | ScalarTy::F64 | ScalarTy::Bool => true,
            };
            if !in_range {
                self.report(InferDiagnostic::LiteralOutOfRange {
                    site: Site::Expr(id),
                    ty: scalar,
                });
            }
        }
    }
}

/// Calls `f` on each array size of a parameter type, outermost first (not inside
/// function types, whose sizes belong to the function).
fn visit_param_sizes(ty: &TypeRef, f: &mut impl FnMut(&SizeRef)) {
    match ty {
        TypeRef::Array(size, elem) => {
            f(size);
            visit_param_sizes(elem, f);
        }
        TypeRef::Tuple(elems) => elems.iter().for_each(|e| visit_param_sizes(e, f)),
        TypeRef::Record(fields) => fields.iter().for_each(|(_, t)| visit_param_sizes(t, f)),
        TypeRef::Name(_) | TypeRef::Fn(..) | TypeRef::Exist(..) | TypeRef::Error => {}
    }
}

/// Replaces type parameters by the given types.
pub(crate) fn substitute_types(ty: &Ty, types: &[(Name, Ty)]) -> Ty {
    if types.is_empty() {
        return ty.clone();
    }
    match ty {
        Ty::Param(name) => {
            types.iter().find(|(n, _)| n == name).map_or_else(|| ty.clone(), |(_, t)| t.clone())
        }
        Ty::Array { size, elem } => {
            Ty::Array { size: size.clone(), elem: Arc::new(substitute_types(elem, types)) }
        }
        Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(|e| substitute_types(e, types)).collect()),
        Ty::Record(fields) => Ty::Record(
            fields.iter().map(|(n, t)| (n.clone(), substitute_types(t, types))).collect(),
        ),
        Ty::Fn { param, ret } => {
            Ty::func(substitute_types(param, types), substitute_types(ret, types))
        }
        Ty::Scalar(_) | Ty::Var(_) | Ty::Error => ty.clone(),
    }
}
