//! Elaboration of checked HIR into the core IR (ARCHITECTURE.md, "core").
//!
//! Input: a file whose diagnostics are empty ([`CheckedFile`]). Output: a [`Program`]
//! with one function per entry, plus one per instance of each def that is called as a
//! function.
//!
//! - **First-order**: function values exist only during elaboration ([`FnVal`]): a lambda
//!   or section passed to a SOAC becomes a [`Lambda`] with explicit parameters; a lambda
//!   applied directly is inlined; a def with function parameters (or instantiated at a
//!   type that holds an array) is specialised by inlining its body at each call with the
//!   function arguments it gets.
//! - **Monomorphic**: other defs become one [`Function`] per instance of their type
//!   parameters, and stay size-polymorphic (their size parameters are bound from the
//!   argument shapes at each call).
//! - **A-normal form**: every operand is an atom; `&&` and `||` become `if`, so they
//!   short-circuit.
//! - **Sizes**: types are computed bottom-up from the operands, so a view's size is the
//!   symbolic expression of its operands (`take k xs : [k]t`, `split k xs : [n/k][k]t`);
//!   sizes the checker could not name become existential variables. Lambda and loop
//!   parameters take the checker's types.
//! - **Origins**: each expression records the HIR expression (and def) it came from.

use std::rc::Rc;
use std::sync::Arc;

use la_arena::{Arena, ArenaMap};
use rustc_hash::FxHashMap;
use weft_hir::{
    Body, Builtin, Db, DefId, DefKind, DefLoc, Expr, ExprId, InferenceResult, Level, Literal, Name,
    Pat, PatId, Resolution, ScalarTy, SizeVar, SourceFile, Ty, TySize,
};
use weft_syntax::ast::{BinOp as AstBinOp, PrefixOp};
use weft_values::Scalar;

use crate::ir::{
    Atom, BinOp, Block, BlockId, CoreSize, Exp, FnId, Function, IndexItem, Lambda, LoopForm,
    Origin, Program, Space, Stmt, Type, UnOp, Var, VarId, VarKind,
};

/// Proof that a file (with its imports) has no error diagnostics: only such files are
/// elaborated (STYLE.md §5).
#[derive(Debug, Clone, Copy)]
pub struct CheckedFile {
    file: SourceFile,
}

impl CheckedFile {
    /// `Some` when `file` has no error diagnostics.
    pub fn new(db: &dyn Db, file: SourceFile) -> Option<CheckedFile> {
        let has_errors = weft_hir::file_diagnostics(db, file)
            .iter()
            .any(|d| d.severity() == weft_hir::Severity::Error);
        if has_errors { None } else { Some(CheckedFile { file }) }
    }

    pub fn file(self) -> SourceFile {
        self.file
    }
}

/// Proof that some entries of a file have no error diagnostics in their definitions:
/// the entry and every def it refers to, transitively, across files. An error in
/// another def of the file does not stop them (the editor keeps their kernels); an
/// error outside every def and entry (an import, a type alias, text between
/// declarations) stops them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedEntries {
    file: SourceFile,
    entries: Vec<DefLoc>,
}

/// An entry that is not elaborated, and the first error that stops it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedEntry {
    pub entry: DefLoc,
    /// The def holding the error (the entry itself, or a def it uses); `None` for an
    /// error outside every def.
    pub def: Option<DefLoc>,
    pub error: weft_hir::HirDiagnostic,
}

impl CheckedEntries {
    /// The entries of `file` whose definitions have no errors, and why each other entry
    /// is stopped.
    pub fn new(db: &dyn Db, file: SourceFile) -> (CheckedEntries, Vec<BlockedEntry>) {
        let entries: Vec<DefLoc> = weft_hir::item_tree(db, file)
            .defs
            .iter()
            .filter(|d| d.kind == DefKind::Entry && d.dup == 0)
            .cloned()
            .collect();
        // Without errors in the file, every entry is elaborated (as `CheckedFile`).
        if CheckedFile::new(db, file).is_some() {
            return (CheckedEntries { file, entries }, Vec::new());
        }
        let (owned, loose) = errors_by_def(db, file);
        if let Some(error) = loose {
            let blocked = entries
                .into_iter()
                .map(|entry| BlockedEntry { entry, def: None, error: error.clone() })
                .collect();
            return (CheckedEntries { file, entries: Vec::new() }, blocked);
        }
        let mut walk = ErrorWalk { db, errors: FxHashMap::default(), first: FxHashMap::default() };
        walk.errors.insert(file, owned);
        let mut checked = CheckedEntries { file, entries: Vec::new() };
        let mut blocked = Vec::new();
        for entry in entries {
            match walk.first_error(&entry) {
                None => checked.entries.push(entry),
                Some((def, error)) => blocked.push(BlockedEntry { entry, def: Some(def), error }),
            }
        }
        (checked, blocked)
    }

    pub fn file(&self) -> SourceFile {
        self.file
    }

    pub fn entries(&self) -> &[DefLoc] {
        &self.entries
    }
}

/// Each def's first error diagnostic in `file`, and the first error outside every def
/// and entry (a type alias's, an import's, text between declarations). An error at a
/// declaration's first keyword may come from the one before it: both get it.
fn errors_by_def(
    db: &dyn Db,
    file: SourceFile,
) -> (FxHashMap<DefLoc, weft_hir::HirDiagnostic>, Option<weft_hir::HirDiagnostic>) {
    let ranges: Vec<(DefLoc, weft_syntax::TextRange)> = weft_hir::item_tree(db, file)
        .defs
        .iter()
        .filter(|d| d.kind != DefKind::TypeAlias)
        .filter_map(|d| {
            let id = DefId::new(db, d.clone());
            weft_hir::source_map(db, id).def_range().map(|r| (d.clone(), r))
        })
        .collect();
    let mut owned: FxHashMap<DefLoc, weft_hir::HirDiagnostic> = FxHashMap::default();
    let mut loose = None;
    for error in weft_hir::file_diagnostics(db, file) {
        if error.severity() != weft_hir::Severity::Error {
            continue;
        }
        let mut holders = Vec::new();
        for (idx, (def, range)) in ranges.iter().enumerate() {
            if range.contains_range(error.range) {
                holders.push(def);
                if error.range.start() == range.start() && idx > 0 {
                    holders.push(&ranges[idx - 1].0);
                }
            }
        }
        if holders.is_empty() {
            loose.get_or_insert_with(|| error.clone());
        }
        for def in holders {
            owned.entry(def.clone()).or_insert_with(|| error.clone());
        }
    }
    (owned, loose)
}

/// The first error in a def or the defs it refers to, transitively (across files),
/// memoised per def: call chains can be thousands of defs deep.
struct ErrorWalk<'db> {
    db: &'db dyn Db,
    /// Per file, each def's own first error.
    errors: FxHashMap<SourceFile, FxHashMap<DefLoc, weft_hir::HirDiagnostic>>,
    /// Per def visited: the first error it depends on.
    first: FxHashMap<DefLoc, Option<(DefLoc, weft_hir::HirDiagnostic)>>,
}

impl ErrorWalk<'_> {
    fn own_error(&mut self, def: &DefLoc) -> Option<weft_hir::HirDiagnostic> {
        let db = self.db;
        self.errors
            .entry(def.file)
            .or_insert_with(|| errors_by_def(db, def.file).0)
            .get(def)
            .cloned()
    }

    fn refers_to(&self, def: &DefLoc) -> Vec<DefLoc> {
        let id = DefId::new(self.db, def.clone());
        let body = &weft_hir::body_with_source_map(self.db, id).0;
        let mut out: Vec<DefLoc> = Vec::new();
        for (_, expr) in body.exprs.iter() {
            if let Expr::Path { res: Resolution::Def(loc), .. } = expr
                && !out.contains(loc)
            {
                out.push(loc.clone());
            }
        }
        out
    }

    fn first_error(&mut self, root: &DefLoc) -> Option<(DefLoc, weft_hir::HirDiagnostic)> {
        // Post-order with an explicit stack; a def on the stack counts as clean (a cycle
        // is recursion, an error of its own).
        let mut stack: Vec<(DefLoc, bool)> = vec![(root.clone(), false)];
        while let Some((def, expanded)) = stack.pop() {
            if self.first.contains_key(&def) && !expanded {
                continue;
            }
            if !expanded {
                self.first.insert(def.clone(), None);
                stack.push((def.clone(), true));
                for callee in self.refers_to(&def) {
                    if !self.first.contains_key(&callee) {
                        stack.push((callee, false));
                    }
                }
                continue;
            }
            let found = match self.own_error(&def) {
                Some(error) => Some((def.clone(), error)),
                None => self
                    .refers_to(&def)
                    .iter()
                    .find_map(|callee| self.first.get(callee).cloned().flatten()),
            };
            self.first.insert(def, found);
        }
        self.first.get(root).cloned().flatten()
    }
}

/// A construct that elaboration does not support (a compiler limitation, not a user
/// error the checker should have caught), with where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, salsa::SalsaValue)]
#[error("{message}")]
pub struct ElabError {
    pub message: String,
    pub origin: Option<Origin>,
}

/// Elaborates every entry of a checked file.
pub fn lower_file(db: &dyn Db, checked: CheckedFile) -> Result<Program> {
    let entries: Vec<DefLoc> = weft_hir::item_tree(db, checked.file)
        .defs
        .iter()
        .filter(|d| d.kind == DefKind::Entry && d.dup == 0)
        .cloned()
        .collect();
    lower_defs(db, entries)
}

/// Elaborates the entries of a file whose definitions have no errors.
pub fn lower_entries(db: &dyn Db, checked: &CheckedEntries) -> Result<Program> {
    lower_defs(db, checked.entries.clone())
}

/// Elaborates one entry of a file whose definitions have no errors, with the functions it
/// calls: the part of [`lower_entries`]'s program that it runs, elaborated from the
/// same memoized functions ([`elab_function`]). `None` when `entry` is not one of the
/// checked entries.
pub fn lower_entry(
    db: &dyn Db,
    checked: &CheckedEntries,
    entry: &DefLoc,
) -> Option<Result<Program>> {
    checked.entries.contains(entry).then(|| lower_defs(db, vec![entry.clone()]))
}

fn lower_defs(db: &dyn Db, entries: Vec<DefLoc>) -> Result<Program> {
    let roots: Vec<FnKey<'_>> =
        entries.into_iter().map(|loc| FnKey::new(db, loc, Vec::new())).collect();
    let mut error = None;
    let order = callees_first(&roots, |key| match elab_function(db, key) {
        Ok(elaborated) => elaborated.callees.clone(),
        Err(e) => {
            error.get_or_insert_with(|| e.clone());
            Vec::new()
        }
    });
    if let Some(error) = error {
        return Err(error);
    }
    let mut program = Program::default();
    let mut placed: FxHashMap<FnKey<'_>, FnId> = FxHashMap::default();
    for key in order {
        let elaborated = elab_function(db, key).as_ref().map_err(ElabError::clone)?;
        let mut function = elaborated.function.clone();
        for (_, exp) in function.exps.iter_mut() {
            if let Exp::Call { func, .. } = exp {
                let callee = elaborated.callees[func.into_raw().into_u32() as usize];
                *func = *placed.get(&callee).expect("invariant: callees are placed first");
            }
        }
        placed.insert(key, program.functions.alloc(function));
    }
    program.entries = roots.iter().filter_map(|root| placed.get(root).copied()).collect();
    Ok(program)
}

/// The functions `roots` call, directly or not, and the roots, each once: callees
/// before their callers, in the order of their first calls (`callees` gives a
/// function's in that order); the order in which one elaboration of the whole program
/// would make them. With an explicit stack: call chains can be thousands of defs deep.
pub fn callees_first<K: Copy + Eq + std::hash::Hash>(
    roots: &[K],
    mut callees: impl FnMut(K) -> Vec<K>,
) -> Vec<K> {
    let mut order = Vec::new();
    let mut done: rustc_hash::FxHashSet<K> = rustc_hash::FxHashSet::default();
    for &root in roots {
        let mut stack = vec![(root, false)];
        while let Some((key, expanded)) = stack.pop() {
            if done.contains(&key) {
                continue;
            }
            if expanded {
                done.insert(key);
                order.push(key);
            } else {
                stack.push((key, true));
                stack.extend(callees(key).into_iter().rev().map(|callee| (callee, false)));
            }
        }
    }
    order
}

/// A function of the core IR: a def for one instance of its type parameters.
#[salsa::interned(debug)]
pub struct FnKey {
    #[returns(ref)]
    pub def: DefLoc,
    #[returns(ref)]
    pub type_args: Vec<Type>,
}

/// One function elaborated on its own ([`elab_function`]). Its calls name their callees
/// by index in `callees` (`Exp::Call`'s `func` is that index), so it is the same
/// whatever program it ends up in; [`lower_entries`] and [`lower_entry`] place it and
/// renumber the calls.
#[derive(Debug, PartialEq, salsa::SalsaValue)]
pub struct ElabFunction<'db> {
    pub function: Function,
    /// The functions it calls, in the order of their first calls.
    pub callees: Vec<FnKey<'db>>,
}

/// What a caller of a function needs: its parameters with their types, and its result
/// type. Kept apart from [`elab_function`] so that an edit inside a def's body, which
/// changes its function but not this, re-elaborates no caller.
#[derive(Debug, PartialEq)]
pub struct ElabSignature {
    pub params: Vec<(VarId, Type)>,
    pub ret: Type,
}

/// Elaborates one function (a salsa query): an edit inside a def re-elaborates its
/// functions only, and the program of an entry or a file is put together from these.
/// Kept for the last 512 functions read (an editor keeps what it needs of a function in
/// smaller queries made from it, and a caller reads its [`elab_signature`]); an evicted
/// function is elaborated again when read again.
#[salsa::tracked(returns(ref), lru = 512)]
pub fn elab_function<'db>(db: &'db dyn Db, key: FnKey<'db>) -> Result<Arc<ElabFunction<'db>>> {
    let mut elab = Elab {
        db,
        callees: Vec::new(),
        callee_ids: FxHashMap::default(),
        f: FnBuilder::default(),
        origin: None,
    };
    let function = elab.build_function(key.def(db), key.type_args(db).clone())?;
    Ok(Arc::new(ElabFunction { function, callees: elab.callees }))
}

/// [`ElabSignature`] of a function.
#[salsa::tracked(returns(ref))]
pub fn elab_signature<'db>(db: &'db dyn Db, key: FnKey<'db>) -> Result<Arc<ElabSignature>> {
    let elaborated = elab_function(db, key).as_ref().map_err(ElabError::clone)?;
    let f = &elaborated.function;
    let params = f.params.iter().map(|&p| (p, f.vars[p].ty.clone())).collect();
    Ok(Arc::new(ElabSignature { params, ret: f.ret.clone() }))
}

type Result<T> = std::result::Result<T, ElabError>;

/// A def body being elaborated, with its type instantiation.
struct BodyCtx {
    def: DefLoc,
    body: Arc<Body>,
    infer: Arc<InferenceResult>,
    type_subst: FxHashMap<Name, Type>,
}

/// What the patterns and size variables of a body stand for.
#[derive(Clone, Default)]
struct Scope {
    locals: FxHashMap<PatId, Binding>,
    sizes: FxHashMap<SizeVar, CoreSize>,
}

/// A value during elaboration: a first-order atom, or a function known statically.
#[derive(Clone)]
enum Binding {
    Val(Atom),
    Fn(FnVal),
}

#[derive(Clone)]
enum FnVal {
    Lambda {
        ctx: Rc<BodyCtx>,
        scope: Box<Scope>,
        params: Vec<PatId>,
        body: ExprId,
    },
    Builtin {
        builtin: Builtin,
        level: Option<Level>,
    },
    Def {
        loc: DefLoc,
        type_args: Vec<Type>,
    },
    Op(AstBinOp),
    /// `(op rhs)`.
    RightSection {
        op: AstBinOp,
        rhs: Atom,
    },
    Partial {
        func: Box<FnVal>,
        args: Vec<Binding>,
    },
}

#[derive(Default)]
struct FnBuilder {
    vars: Arena<Var>,
    exps: Arena<crate::ir::Exp>,
    blocks: Arena<Block>,
    origins: ArenaMap<crate::ir::ExpId, Origin>,
    /// Statements of the blocks being built, innermost last.
    open: Vec<Vec<Stmt>>,
    /// `i64` variables computed by `+`, `-` or `*` of sizes: their value as a size over
    /// the operands' sizes, so that a type names `t*t` rather than a variable bound
    /// inside a lambda, which the lambda's result type could not name.
    size_defs: FxHashMap<VarId, CoreSize>,
}

struct Elab<'db> {
    db: &'db dyn Db,
    /// The functions the function being elaborated calls, in the order of first calls;
    /// a call's `func` is an index here.
    callees: Vec<FnKey<'db>>,
    callee_ids: FxHashMap<FnKey<'db>, FnId>,
    f: FnBuilder,
    origin: Option<Origin>,
}

fn err<T>(message: impl Into<String>, origin: Option<Origin>) -> Result<T> {
    Err(ElabError { message: message.into(), origin })
}

/// Collects what each type parameter of `pattern` is in `actual`.
fn match_type_params(pattern: &Ty, actual: &Ty, out: &mut FxHashMap<Name, Ty>) {
    match (pattern, actual) {
        (Ty::Param(name), _) => {
            out.entry(name.clone()).or_insert_with(|| actual.clone());
        }
        (Ty::Array { elem: a, .. }, Ty::Array { elem: b, .. }) => match_type_params(a, b, out),
        (Ty::Tuple(a), Ty::Tuple(b)) => {
            for (a, b) in a.iter().zip(b.iter()) {
                match_type_params(a, b, out);
            }
        }
        (Ty::Record(a), Ty::Record(b)) => {
            for ((_, a), (_, b)) in a.iter().zip(b.iter()) {
                match_type_params(a, b, out);
            }
        }
        (Ty::Fn { param: p1, ret: r1 }, Ty::Fn { param: p2, ret: r2 }) => {
            match_type_params(p1, p2, out);
            match_type_params(r1, r2, out);
        }
        (
            Ty::Scalar(_)
            | Ty::Array { .. }
            | Ty::Tuple(_)
            | Ty::Record(_)
            | Ty::Fn { .. }
            | Ty::Var(_)
            | Ty::Error,
            _,
        ) => {}
    }
}

impl<'db> Elab<'db> {
    // ---- building blocks -------------------------------------------------------------

    fn new_var(&mut self, name: &str, ty: Type) -> VarId {
        self.f.vars.alloc(Var { name: Name::new(name), ty, kind: VarKind::Bound })
    }

    fn existential(&mut self) -> CoreSize {
        let var = self.f.vars.alloc(Var {
            name: Name::new("?"),
            ty: Type::Scalar(ScalarTy::I64),
            kind: VarKind::Existential,
        });
        CoreSize::var(var)
    }

    fn emit(&mut self, exp: Exp, ty: Type) -> Atom {
        let var = self.new_var("", ty);
        let exp_id = self.f.exps.alloc(exp);
        if let Some(origin) = &self.origin {
            self.f.origins.insert(exp_id, origin.clone());
        }
        let stmt = Stmt { var, exp: exp_id };
        match self.f.open.last_mut() {
            Some(stmts) => stmts.push(stmt),
            None => unreachable!("statements are emitted inside a block"),
        }
        Atom::Var(var)
    }

    fn in_block(&mut self, build: impl FnOnce(&mut Self) -> Result<Atom>) -> Result<BlockId> {
        self.f.open.push(Vec::new());
        let result = build(self);
        let stmts = self.f.open.pop().expect("invariant: the block pushed above");
        let result = result?;
        Ok(self.f.blocks.alloc(Block { stmts, result: Some(result) }))
    }

    fn atom_ty(&self, atom: Atom) -> Type {
        match atom {
            Atom::Var(v) => self.f.vars[v].ty.clone(),
            Atom::Const(s) => Type::Scalar(s.ty()),
        }
    }

    fn size_of_atom(&self, atom: Atom) -> CoreSize {
        match atom {
            Atom::Var(v) => self.f.size_defs.get(&v).cloned().unwrap_or_else(|| CoreSize::var(v)),
            Atom::Const(Scalar::I64(c)) => CoreSize::constant(c),
            Atom::Const(Scalar::I32(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::I8(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::I16(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::U8(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::U16(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::U32(c)) => CoreSize::constant(i64::from(c)),
            Atom::Const(Scalar::U64(c)) => CoreSize::constant(c.cast_signed()),
            Atom::Const(Scalar::F16(_) | Scalar::F32(_) | Scalar::F64(_) | Scalar::Bool(_)) => {
                CoreSize::zero()
            }
        }
    }

    fn outer(&mut self, atom: Atom) -> Result<(CoreSize, Type)> {
        match self.atom_ty(atom) {
            Type::Array { size, elem } => Ok((size, *elem)),
            Type::Tuple(elems) => {
                // An array of tuples seen through a zip: not a type here.
                err(
                    format!("expected an array, found a tuple of {} values", elems.len()),
                    self.origin.clone(),
                )
            }
            Type::Scalar(s) => {
                err(format!("expected an array, found `{}`", s.name()), self.origin.clone())
            }
        }
    }

    /// The join of two branch types: sizes that differ become existential.
    fn join(&mut self, a: &Type, b: &Type) -> Type {
        match (a, b) {
            (Type::Array { size: s1, elem: e1 }, Type::Array { size: s2, elem: e2 }) => {
                let size = if s1 == s2 { s1.clone() } else { self.existential() };
                let elem = self.join(e1, e2);
                Type::array(size, elem)
            }
            (Type::Tuple(x), Type::Tuple(y)) if x.len() == y.len() => {
                Type::Tuple(x.iter().zip(y).map(|(a, b)| self.join(a, b)).collect())
            }
            _ => a.clone(),
        }
    }

    // ---- types -----------------------------------------------------------------------

    fn lower_size(&mut self, scope: &mut Scope, size: &TySize) -> CoreSize {
        size.replace_vars(&mut |var: &SizeVar| {
            if let Some(s) = scope.sizes.get(var) {
                return s.clone();
            }
            let fresh = self.existential();
            scope.sizes.insert(var.clone(), fresh.clone());
            fresh
        })
    }

    fn lower_ty(&mut self, ctx: &BodyCtx, scope: &mut Scope, ty: &Ty) -> Result<Type> {
        Ok(match ty {
            Ty::Scalar(s) => Type::Scalar(*s),
            Ty::Array { size, elem } => {
                let size = self.lower_size(scope, size);
                Type::array(size, self.lower_ty(ctx, scope, elem)?)
            }
            Ty::Tuple(elems) => Type::Tuple(
                elems.iter().map(|e| self.lower_ty(ctx, scope, e)).collect::<Result<_>>()?,
            ),
            // A record is the tuple of its fields in name order (version 1.1), so an
            // array of records is stored as one array per field.
            Ty::Record(fields) => Type::Tuple(
                fields.iter().map(|(_, t)| self.lower_ty(ctx, scope, t)).collect::<Result<_>>()?,
            ),
            Ty::Param(name) => match ctx.type_subst.get(name) {
                Some(ty) => ty.clone(),
                None => {
                    return err(
                        format!("type parameter `{name}` is not instantiated"),
                        self.origin.clone(),
                    );
                }
            },
            Ty::Fn { .. } => {
                return err("a function type where a value was expected", self.origin.clone());
            }
            Ty::Var(_) | Ty::Error => {
                return err("an unknown type after checking", self.origin.clone());
            }
        })
    }

    // ---- functions -------------------------------------------------------------------

    /// The function of `loc` at `type_args`, elaborated into `self.f` (which is empty).
    fn build_function(&mut self, loc: &DefLoc, type_args: Vec<Type>) -> Result<Function> {
        let db = self.db;
        let def = DefId::new(db, loc.clone());
        let scheme = weft_hir::def_scheme(db, def);
        let ctx = Rc::new(BodyCtx {
            def: loc.clone(),
            body: Arc::clone(weft_hir::body(db, def)),
            infer: Arc::clone(weft_hir::infer(db, def)),
            type_subst: scheme.type_params.iter().cloned().zip(type_args).collect(),
        });
        let saved_f = std::mem::take(&mut self.f);
        let saved_origin = self.origin.take();
        self.f.open.push(Vec::new());
        let mut scope = Scope::default();
        let mut size_params = Vec::new();
        for name in &scheme.size_params {
            let var = self.new_var(name.as_str(), Type::Scalar(ScalarTy::I64));
            size_params.push(var);
            scope.sizes.insert(SizeVar::Param(name.clone()), CoreSize::var(var));
        }
        let mut params: Vec<Option<VarId>> = vec![None; ctx.body.params.len()];
        for (idx, &pat) in ctx.body.params.iter().enumerate() {
            if let Some(Some(name)) = scheme.params.get(idx).map(|p| p.binds_size.as_ref()) {
                let var = self
                    .new_var(pat_name(&ctx.body, pat).unwrap_or("n"), Type::Scalar(ScalarTy::I64));
                scope.sizes.insert(SizeVar::Param(name.clone()), CoreSize::var(var));
                params[idx] = Some(var);
            }
        }
        let result = (|| {
            let mut param_vars = Vec::new();
            for (idx, &pat) in ctx.body.params.iter().enumerate() {
                let var = match params[idx] {
                    Some(var) => var,
                    None => {
                        let ty = self.lower_ty(&ctx, &mut scope, &ctx.infer.pat_ty(pat))?;
                        self.new_var(pat_name(&ctx.body, pat).unwrap_or("p"), ty)
                    }
                };
                param_vars.push(var);
                self.bind_pat(&ctx, &mut scope, pat, Binding::Val(Atom::Var(var)))?;
                self.bind_value_param_size(&ctx, &mut scope, pat, Atom::Var(var));
            }
            let ret = self.lower_ty(&ctx, &mut scope, &scheme.ret)?;
            let Some(root) = ctx.body.root else { return err("a def without a body", None) };
            let result = self.val(&ctx, &mut scope, root)?;
            Ok((param_vars, ret, result))
        })();
        let stmts = self.f.open.pop().expect("invariant: the function's block");
        let built = std::mem::replace(&mut self.f, saved_f);
        self.origin = saved_origin;
        let (param_vars, ret, result) = result?;
        let mut built = built;
        let body = built.blocks.alloc(Block { stmts, result: Some(result) });
        let function = Function {
            name: loc.name.clone(),
            def: loc.clone(),
            is_entry: loc.kind == DefKind::Entry,
            size_params,
            params: param_vars,
            ret,
            body,
            vars: built.vars,
            exps: built.exps,
            blocks: built.blocks,
            origins: built.origins,
        };
        Ok(function)
    }

    /// The id a call in the function being elaborated gives `callee`: its index among the
    /// function's callees.
    fn callee_id(&mut self, callee: FnKey<'db>) -> FnId {
        if let Some(&id) = self.callee_ids.get(&callee) {
            return id;
        }
        let idx = u32::try_from(self.callees.len()).expect("invariant: fewer than 2^32 callees");
        let id = FnId::from_raw(idx.into());
        self.callees.push(callee);
        self.callee_ids.insert(callee, id);
        id
    }

    fn call_def(
        &mut self,
        loc: &DefLoc,
        type_args: &[Type],
        args: Vec<Binding>,
    ) -> Result<Binding> {
        let db = self.db;
        let def = DefId::new(db, loc.clone());
        let scheme = weft_hir::def_scheme(db, def);
        let higher_order =
            scheme.params.iter().any(|p| p.ty.contains_fn()) || scheme.ret.contains_fn();
        if higher_order || type_args.iter().any(Type::has_array) {
            return self.inline_def(loc, scheme, type_args, args);
        }
        let callee = FnKey::new(db, loc.clone(), type_args.to_vec());
        let signature = elab_signature(db, callee).as_ref().map_err(ElabError::clone)?;
        let func = self.callee_id(callee);
        let mut atoms = Vec::new();
        for arg in args {
            match arg {
                Binding::Val(atom) => atoms.push(atom),
                Binding::Fn(_) => {
                    return err("a function argument to a first-order def", self.origin.clone());
                }
            }
        }
        // The result type in the caller's sizes: bind the callee's size variables from
        // the argument types.
        let (callee_params, callee_ret) = (&signature.params, &signature.ret);
        let mut map: FxHashMap<VarId, CoreSize> = FxHashMap::default();
        for ((param, param_ty), &atom) in callee_params.iter().zip(&atoms) {
            if param_ty == &Type::Scalar(ScalarTy::I64) {
                map.insert(*param, self.size_of_atom(atom));
            }
            let arg_ty = self.atom_ty(atom);
            bind_dims(param_ty, &arg_ty, &mut map);
        }
        let ret = self.rename_sizes(callee_ret, &mut map);
        Ok(Binding::Val(self.emit(Exp::Call { func, args: atoms }, ret)))
    }

    /// A callee's type in the caller's sizes; unknown callee sizes become existential.
    fn rename_sizes(&mut self, ty: &Type, map: &mut FxHashMap<VarId, CoreSize>) -> Type {
        match ty {
            Type::Scalar(s) => Type::Scalar(*s),
            Type::Array { size, elem } => {
                let size = size.replace_vars(&mut |v: &VarId| {
                    if let Some(s) = map.get(v) {
                        return s.clone();
                    }
                    let fresh = self.existential();
                    map.insert(*v, fresh.clone());
                    fresh
                });
                Type::array(size, self.rename_sizes(elem, map))
            }
            Type::Tuple(elems) => {
                Type::Tuple(elems.iter().map(|e| self.rename_sizes(e, map)).collect())
            }
        }
    }

    fn inline_def(
        &mut self,
        loc: &DefLoc,
        scheme: &weft_hir::Scheme,
        type_args: &[Type],
        args: Vec<Binding>,
    ) -> Result<Binding> {
        let db = self.db;
        let def = DefId::new(db, loc.clone());
        let ctx = Rc::new(BodyCtx {
            def: loc.clone(),
            body: Arc::clone(weft_hir::body(db, def)),
            infer: Arc::clone(weft_hir::infer(db, def)),
            type_subst: scheme.type_params.iter().cloned().zip(type_args.iter().cloned()).collect(),
        });
        let mut scope = Scope::default();
        for (idx, (&pat, arg)) in ctx.body.params.iter().zip(args).enumerate() {
            if let Binding::Val(atom) = &arg {
                let param = scheme.params.get(idx);
                if let Some(Some(name)) = param.map(|p| p.binds_size.as_ref()) {
                    let size = self.size_of_atom(*atom);
                    scope.sizes.insert(SizeVar::Param(name.clone()), size);
                }
                if let Some(param) = param {
                    let arg_ty = self.atom_ty(*atom);
                    bind_size_params(&param.ty, &arg_ty, &mut scope.sizes);
                }
            }
            let value = match &arg {
                Binding::Val(atom) => Some(*atom),
                _ => None,
            };
            self.bind_pat(&ctx, &mut scope, pat, arg)?;
            if let Some(atom) = value {
                self.bind_value_param_size(&ctx, &mut scope, pat, atom);
            }
        }
        let Some(root) = ctx.body.root else { return err("a def without a body", None) };
        self.expr(&ctx, &mut scope, root)
    }

    /// The checker names a size given by an `i64` parameter (`replicate k x : [k]t`)
    /// after the parameter even when the signature uses it in no type, so the parameter's
    /// value is that size; without this a loop or `if` over such an array would get a
    /// fresh unknown size.
    fn bind_value_param_size(&mut self, ctx: &BodyCtx, scope: &mut Scope, pat: PatId, atom: Atom) {
        let Pat::Bind { name } = &ctx.body.pats[pat] else { return };
        if self.atom_ty(atom) != Type::Scalar(ScalarTy::I64) {
            return;
        }
        let size = self.size_of_atom(atom);
        scope.sizes.entry(SizeVar::Param(name.clone())).or_insert(size);
    }

    // ---- patterns --------------------------------------------------------------------

    fn bind_pat(
        &mut self,
        ctx: &BodyCtx,
        scope: &mut Scope,
        pat: PatId,
        binding: Binding,
    ) -> Result<()> {
        match &ctx.body.pats[pat] {
            Pat::Bind { name } => {
                if let Binding::Val(atom) = &binding {
                    if let Atom::Var(var) = atom
                        && self.f.vars[*var].name.as_str().is_empty()
                    {
                        self.f.vars[*var].name = name.clone();
                    }
                    if self.atom_ty(*atom) == Type::Scalar(ScalarTy::I64) {
                        let id = pat.into_raw().into_u32();
                        let size = self.size_of_atom(*atom);
                        scope.sizes.insert(SizeVar::Local { name: name.clone(), id }, size);
                    }
                    // An unknown size of the binding's type (a `filter`'s result, say)
                    // is the size its value has, so a later type that names it (`:>
                    // [length ys]t`) means that size.
                    bind_unknown_sizes(
                        &ctx.infer.pat_ty(pat),
                        &self.atom_ty(*atom),
                        &mut scope.sizes,
                    );
                }
                scope.locals.insert(pat, binding);
            }
            Pat::Wild | Pat::Missing => {}
            Pat::Ascribed { pat: inner, .. } => self.bind_pat(ctx, scope, *inner, binding)?,
            Pat::Tuple(pats) => {
                let Binding::Val(atom) = binding else {
                    return err("a function bound to a tuple pattern", self.origin.clone());
                };
                let Type::Tuple(elems) = self.atom_ty(atom) else {
                    return err("a tuple pattern bound to a non-tuple", self.origin.clone());
                };
                for (idx, (&p, ty)) in pats.iter().zip(elems).enumerate() {
                    if matches!(ctx.body.pats[p], Pat::Wild) {
                        continue;
                    }
                    let index = u32::try_from(idx).expect("invariant: small tuples");
                    let elem = self.emit(Exp::Proj { tuple: atom, index }, ty);
                    self.bind_pat(ctx, scope, p, Binding::Val(elem))?;
                }
            }
            Pat::Record(fields) => {
                let Binding::Val(atom) = binding else {
                    return err("a function bound to a record pattern", self.origin.clone());
                };
                let Ty::Record(field_tys) = ctx.infer.pat_ty(pat) else {
                    return err("a record pattern of non-record type", self.origin.clone());
                };
                let Type::Tuple(elems) = self.atom_ty(atom) else {
                    return err("a record pattern bound to a non-tuple", self.origin.clone());
                };
                for (name, p) in fields {
                    let Some(idx) = field_tys.iter().position(|(n, _)| n == name) else {
                        return err(format!("no field `{name}`"), self.origin.clone());
                    };
                    if matches!(ctx.body.pats[*p], Pat::Wild) {
                        continue;
                    }
                    let index = u32::try_from(idx).expect("invariant: small records");
                    let elem = self.emit(Exp::Proj { tuple: atom, index }, elems[idx].clone());
                    self.bind_pat(ctx, scope, *p, Binding::Val(elem))?;
                }
            }
        }
        Ok(())
    }

    // ---- expressions -----------------------------------------------------------------

    fn val(&mut self, ctx: &Rc<BodyCtx>, scope: &mut Scope, expr: ExprId) -> Result<Atom> {
        match self.expr(ctx, scope, expr)? {
            Binding::Val(atom) => Ok(atom),
            Binding::Fn(_) => err(
                "a function where a value was expected",
                Some(Origin { def: ctx.def.clone(), expr }),
            ),
        }
    }

    fn func(&mut self, ctx: &Rc<BodyCtx>, scope: &mut Scope, expr: ExprId) -> Result<FnVal> {
        match self.expr(ctx, scope, expr)? {
            Binding::Fn(f) => Ok(f),
            Binding::Val(_) => err(
                "a value where a function was expected",
                Some(Origin { def: ctx.def.clone(), expr }),
            ),
        }
    }

    fn expr(&mut self, ctx: &Rc<BodyCtx>, scope: &mut Scope, expr: ExprId) -> Result<Binding> {
        let saved = self.origin.replace(Origin { def: ctx.def.clone(), expr });
        let result = self.expr_inner(ctx, scope, expr);
        self.origin = saved;
        result
    }

    fn expr_inner(
        &mut self,
        ctx: &Rc<BodyCtx>,
        scope: &mut Scope,
        expr: ExprId,
    ) -> Result<Binding> {
        let val = Binding::Val;
        Ok(match &ctx.body.exprs[expr] {
            Expr::Missing => return err("missing expression", self.origin.clone()),
            Expr::Literal(lit) => {
                let ty = self.lower_ty(ctx, scope, &ctx.infer.expr_ty(expr))?;
                val(Atom::Const(self.literal(lit, &ty)?))
            }
            Expr::Path { name, res, level } => match res {
                Resolution::Local(pat) => match scope.locals.get(pat) {
                    Some(binding) => binding.clone(),
                    None => return err(format!("`{name}` is not bound"), self.origin.clone()),
                },
                Resolution::SizeParam(size_name) => {
                    let Some(size) = scope.sizes.get(&SizeVar::Param(size_name.clone())).cloned()
                    else {
                        return err(
                            format!("size `{size_name}` is not bound"),
                            self.origin.clone(),
                        );
                    };
                    val(self.size_atom(&size))
                }
                Resolution::Def(loc) => {
                    let def = DefId::new(self.db, loc.clone());
                    let scheme = weft_hir::def_scheme(self.db, def);
                    let mut subst = FxHashMap::default();
                    match_type_params(&scheme.as_fn_ty(), &ctx.infer.expr_ty(expr), &mut subst);
                    let mut type_args = Vec::new();
                    for param in &scheme.type_params {
                        let Some(ty) = subst.get(param) else {
                            return err(
                                format!("cannot instantiate `{param}` of `{name}`"),
                                self.origin.clone(),
                            );
                        };
                        type_args.push(self.lower_ty(ctx, scope, &ty.clone())?);
                    }
                    if scheme.params.is_empty() {
                        self.call_def(loc, &type_args, Vec::new())?
                    } else {
                        Binding::Fn(FnVal::Def { loc: loc.clone(), type_args })
                    }
                }
                Resolution::Builtin(builtin) => {
                    if let Builtin::Math(ty, func) = builtin
                        && func.arity() == 0
                    {
                        val(self.emit(
                            Exp::Math { ty: *ty, func: *func, args: Vec::new() },
                            Type::Scalar(*ty),
                        ))
                    } else {
                        Binding::Fn(FnVal::Builtin { builtin: *builtin, level: *level })
                    }
                }
                Resolution::Unresolved => {
                    return err(format!("unresolved `{name}`"), self.origin.clone());
                }
            },
            Expr::Tuple(elems) => {
                let atoms =
                    elems.iter().map(|&e| self.val(ctx, scope, e)).collect::<Result<Vec<_>>>()?;
                let ty = Type::Tuple(atoms.iter().map(|&a| self.atom_ty(a)).collect());
                val(self.emit(Exp::Tuple(atoms), ty))
            }
            Expr::Record(fields) => {
                // Fields are evaluated as written and stored in name order.
                let mut atoms: Vec<(Name, Atom)> = Vec::new();
                for (name, value) in fields {
                    let atom = self.val(ctx, scope, *value)?;
                    if !atoms.iter().any(|(n, _)| n == name) {
                        atoms.push((name.clone(), atom));
                    }
                }
                atoms.sort_by(|a, b| a.0.cmp(&b.0));
                let atoms: Vec<Atom> = atoms.into_iter().map(|(_, a)| a).collect();
                let ty = Type::Tuple(atoms.iter().map(|&a| self.atom_ty(a)).collect());
                val(self.emit(Exp::Tuple(atoms), ty))
            }
            Expr::Field { base, field } => {
                let tuple = self.val(ctx, scope, *base)?;
                let Ty::Record(field_tys) = ctx.infer.expr_ty(*base) else {
                    return err("a field of a non-record", self.origin.clone());
                };
                let Type::Tuple(elems) = self.atom_ty(tuple) else {
                    return err("a field of a non-tuple", self.origin.clone());
                };
                let Some(idx) = field_tys.iter().position(|(n, _)| n == field) else {
                    return err(format!("no field `{field}`"), self.origin.clone());
                };
                let index = u32::try_from(idx).expect("invariant: small records");
                val(self.emit(Exp::Proj { tuple, index }, elems[idx].clone()))
            }
            Expr::RecordUpdate { base, path, value } => {
                let record = self.val(ctx, scope, *base)?;
                let value = self.val(ctx, scope, *value)?;
                let ty = ctx.infer.expr_ty(*base);
                val(self.replace_field(record, &ty, path, value)?)
            }
            Expr::Array(elems) => {
                let atoms =
                    elems.iter().map(|&e| self.val(ctx, scope, e)).collect::<Result<Vec<_>>>()?;
                let elem_ty = match atoms.first() {
                    Some(&first) => self.atom_ty(first),
                    None => {
                        let ty = self.lower_ty(ctx, scope, &ctx.infer.expr_ty(expr))?;
                        match ty {
                            Type::Array { elem, .. } => *elem,
                            Type::Scalar(_) | Type::Tuple(_) => {
                                return err(
                                    "an array literal of non-array type",
                                    self.origin.clone(),
                                );
                            }
                        }
                    }
                };
                let n = i64::try_from(atoms.len()).expect("invariant: literal length fits i64");
                let ty = Type::array(CoreSize::constant(n), elem_ty.clone());
                val(self.emit(Exp::ArrayLit { elems: atoms, elem_ty }, ty))
            }
            Expr::Call { callee, args } => {
                let func = self.func(ctx, scope, *callee)?;
                let args =
                    args.iter().map(|&a| self.expr(ctx, scope, a)).collect::<Result<Vec<_>>>()?;
                self.apply(func, args)?
            }
            Expr::Binary { op, lhs, rhs } => match op {
                AstBinOp::And | AstBinOp::Or => {
                    let cond = self.val(ctx, scope, *lhs)?;
                    let is_and = *op == AstBinOp::And;
                    let mut rhs_scope = scope.clone();
                    let rhs_block = self.in_block(|this| this.val(ctx, &mut rhs_scope, *rhs))?;
                    let short = self.in_block(|_| Ok(Atom::Const(Scalar::Bool(!is_and))))?;
                    let (then_branch, else_branch) =
                        if is_and { (rhs_block, short) } else { (short, rhs_block) };
                    val(self.emit(
                        Exp::If { cond, then_branch, else_branch },
                        Type::Scalar(ScalarTy::Bool),
                    ))
                }
                AstBinOp::Eq
                | AstBinOp::Neq
                | AstBinOp::Lt
                | AstBinOp::Le
                | AstBinOp::Gt
                | AstBinOp::Ge
                | AstBinOp::BitOr
                | AstBinOp::BitXor
                | AstBinOp::BitAnd
                | AstBinOp::Shl
                | AstBinOp::Shr
                | AstBinOp::Add
                | AstBinOp::Concat
                | AstBinOp::Sub
                | AstBinOp::Mul
                | AstBinOp::Div
                | AstBinOp::Rem
                | AstBinOp::Pow => {
                    let l = self.val(ctx, scope, *lhs)?;
                    let r = self.val(ctx, scope, *rhs)?;
                    val(self.binary(*op, l, r)?)
                }
            },
            Expr::Unary { op, operand } => {
                let operand = self.val(ctx, scope, *operand)?;
                let Type::Scalar(ty) = self.atom_ty(operand) else {
                    return err("a unary operator on a non-scalar", self.origin.clone());
                };
                let op = match op {
                    PrefixOp::Neg => UnOp::Neg,
                    PrefixOp::Not => UnOp::Not,
                };
                val(self.emit(Exp::UnOp { op, ty, operand }, Type::Scalar(ty)))
            }
            Expr::Lambda { params, body } => Binding::Fn(FnVal::Lambda {
                ctx: Rc::clone(ctx),
                scope: Box::new(scope.clone()),
                params: params.clone(),
                body: *body,
            }),
            Expr::OpSection(op) => Binding::Fn(FnVal::Op(*op)),
            Expr::LeftSection { op, lhs } => {
                let lhs = self.val(ctx, scope, *lhs)?;
                Binding::Fn(FnVal::Partial { func: Box::new(FnVal::Op(*op)), args: vec![val(lhs)] })
            }
            Expr::RightSection { op, rhs } => {
                let rhs = self.val(ctx, scope, *rhs)?;
                Binding::Fn(FnVal::RightSection { op: *op, rhs })
            }
            Expr::Let { pat, value, body, .. } => {
                let value = self.expr(ctx, scope, *value)?;
                self.bind_pat(ctx, scope, *pat, value)?;
                self.expr(ctx, scope, *body)?
            }
            Expr::If { cond, then_branch, else_branch } => {
                let cond = self.val(ctx, scope, *cond)?;
                let mut then_scope = scope.clone();
                let then_block =
                    self.in_block(|this| this.val(ctx, &mut then_scope, *then_branch))?;
                let mut else_scope = scope.clone();
                let else_block =
                    self.in_block(|this| this.val(ctx, &mut else_scope, *else_branch))?;
                let t1 = self.block_ty(then_block);
                let t2 = self.block_ty(else_block);
                let ty = self.join(&t1, &t2);
                val(self
                    .emit(Exp::If { cond, then_branch: then_block, else_branch: else_block }, ty))
            }
            Expr::Loop { pat, init, form, body } => {
                let init = self.val(ctx, scope, *init)?;
                let param_ty = self.lower_ty(ctx, scope, &ctx.infer.pat_ty(*pat))?;
                let param =
                    self.new_var(pat_name(&ctx.body, *pat).unwrap_or("acc"), param_ty.clone());
                let form = match form {
                    weft_hir::LoopForm::For { var, bound } => {
                        let bound = self.val(ctx, scope, *bound)?;
                        let index_ty = self.atom_ty(bound);
                        let index =
                            self.new_var(pat_name(&ctx.body, *var).unwrap_or("i"), index_ty);
                        scope.locals.insert(*var, Binding::Val(Atom::Var(index)));
                        self.bind_pat(ctx, scope, *var, Binding::Val(Atom::Var(index)))?;
                        LoopForm::For { index, bound }
                    }
                    weft_hir::LoopForm::While { cond } => {
                        let mut cond_scope = scope.clone();
                        let cond = self.in_block(|this| {
                            this.bind_pat(
                                ctx,
                                &mut cond_scope,
                                *pat,
                                Binding::Val(Atom::Var(param)),
                            )?;
                            this.val(ctx, &mut cond_scope, *cond)
                        })?;
                        LoopForm::While { cond }
                    }
                };
                let mut body_scope = scope.clone();
                let body = self.in_block(|this| {
                    this.bind_pat(ctx, &mut body_scope, *pat, Binding::Val(Atom::Var(param)))?;
                    this.val(ctx, &mut body_scope, *body)
                })?;
                val(self.emit(Exp::Loop { param, init, form, body }, param_ty))
            }
            Expr::Index { base, items } => {
                let array = self.val(ctx, scope, *base)?;
                let mut core_items = Vec::new();
                for item in items {
                    core_items.push(match item {
                        weft_hir::IndexItem::Index(e) => IndexItem::Fix(self.val(ctx, scope, *e)?),
                        weft_hir::IndexItem::Slice { start, end, stride } => {
                            let mut opt =
                                |e: &Option<ExprId>, this: &mut Self| -> Result<Option<Atom>> {
                                    e.map(|e| this.val(ctx, scope, e)).transpose()
                                };
                            let start = opt(start, self)?;
                            let end = opt(end, self)?;
                            let stride = opt(stride, self)?;
                            IndexItem::Slice { start, end, stride }
                        }
                    });
                }
                let ty = self.index_ty(self.atom_ty(array), &core_items)?;
                val(self.emit(Exp::Index { array, items: core_items }, ty))
            }
            Expr::Update { base, indices, value } => {
                let array = self.val(ctx, scope, *base)?;
                let mut core_indices = Vec::new();
                for index in indices {
                    core_indices.push(self.val(ctx, scope, *index)?);
                }
                let value = self.val(ctx, scope, *value)?;
                let ty = self.atom_ty(array);
                val(self.emit(Exp::Update { array, indices: core_indices, value }, ty))
            }
            Expr::Proj { base, index } => {
                let tuple = self.val(ctx, scope, *base)?;
                let Type::Tuple(elems) = self.atom_ty(tuple) else {
                    return err("a projection of a non-tuple", self.origin.clone());
                };
                let Some(ty) = elems.get(*index as usize).cloned() else {
                    return err("a projection out of range", self.origin.clone());
                };
                val(self.emit(Exp::Proj { tuple, index: *index }, ty))
            }
            Expr::Ascribe { expr: inner, .. } => self.expr(ctx, scope, *inner)?,
            Expr::Coerce { expr: inner, .. } => {
                let value = self.val(ctx, scope, *inner)?;
                let ty = self.lower_ty(ctx, scope, &ctx.infer.expr_ty(expr))?;
                val(self.emit(Exp::Coerce { value, ty: ty.clone() }, ty))
            }
        })
    }

    /// `record` (of HIR type `ty`) with the field at `path` replaced by `value`: the
    /// tuple of its fields rebuilt, one projection per field kept.
    fn replace_field(&mut self, record: Atom, ty: &Ty, path: &[Name], value: Atom) -> Result<Atom> {
        let Some((field, rest)) = path.split_first() else { return Ok(value) };
        let Ty::Record(fields) = ty else {
            return err("a record update of a non-record", self.origin.clone());
        };
        let Type::Tuple(elems) = self.atom_ty(record) else {
            return err("a record update of a non-tuple", self.origin.clone());
        };
        let Some(target) = fields.iter().position(|(n, _)| n == field) else {
            return err(format!("no field `{field}`"), self.origin.clone());
        };
        let mut atoms = Vec::with_capacity(elems.len());
        for (idx, elem_ty) in elems.iter().enumerate() {
            let index = u32::try_from(idx).expect("invariant: small records");
            let old = self.emit(Exp::Proj { tuple: record, index }, elem_ty.clone());
            atoms.push(if idx == target {
                self.replace_field(old, &fields[idx].1, rest, value)?
            } else {
                old
            });
        }
        let ty = Type::Tuple(atoms.iter().map(|&a| self.atom_ty(a)).collect());
        Ok(self.emit(Exp::Tuple(atoms), ty))
    }

    fn block_ty(&self, block: BlockId) -> Type {
        match self.f.blocks[block].result {
            Some(atom) => self.atom_ty(atom),
            None => Type::Tuple(Vec::new()),
        }
    }

    fn size_atom(&mut self, size: &CoreSize) -> Atom {
        if let Some(c) = size.as_constant() {
            return Atom::Const(Scalar::I64(c));
        }
        if let Some(&var) = size.as_var() {
            return Atom::Var(var);
        }
        if size.is_zero() {
            return Atom::Const(Scalar::I64(0));
        }
        self.emit(Exp::Size(size.clone()), Type::Scalar(ScalarTy::I64))
    }

    fn literal(&self, lit: &Literal, ty: &Type) -> Result<Scalar> {
        let Type::Scalar(s) = ty else {
            return err("a literal of non-scalar type", self.origin.clone());
        };
        let out_of_range = || ElabError {
            message: "literal out of range".to_owned(),
            origin: self.origin.clone(),
        };
        Ok(match lit {
            Literal::Bool(b) => Scalar::Bool(*b),
            Literal::Int { value, .. } => match s {
                ScalarTy::I8 => Scalar::I8(i8::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::I16 => Scalar::I16(i16::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::U8 => Scalar::U8(u8::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::U16 => Scalar::U16(u16::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::F16 => Scalar::F16(weft_values::f16_from_f64(*value as f64)),
                ScalarTy::I32 => Scalar::I32(i32::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::I64 => Scalar::I64(i64::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::U32 => Scalar::U32(u32::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::U64 => Scalar::U64(u64::try_from(*value).map_err(|_| out_of_range())?),
                ScalarTy::F32 => Scalar::F32(*value as f32),
                ScalarTy::F64 => Scalar::F64(*value as f64),
                ScalarTy::Bool => return Err(out_of_range()),
            },
            Literal::Float { text, negative, .. } => match s {
                // Rounded once, from the decimal's nearest `f64`.
                ScalarTy::F16 => {
                    let x: f64 = text.parse().map_err(|_| out_of_range())?;
                    Scalar::F16(weft_values::f16_from_f64(if *negative { -x } else { x }))
                }
                ScalarTy::F32 => {
                    let x: f32 = text.parse().map_err(|_| out_of_range())?;
                    Scalar::F32(if *negative { -x } else { x })
                }
                ScalarTy::F64 => {
                    let x: f64 = text.parse().map_err(|_| out_of_range())?;
                    Scalar::F64(if *negative { -x } else { x })
                }
                ScalarTy::I8
                | ScalarTy::I16
                | ScalarTy::I32
                | ScalarTy::I64
                | ScalarTy::U8
                | ScalarTy::U16
                | ScalarTy::U32
                | ScalarTy::U64
                | ScalarTy::Bool => return Err(out_of_range()),
            },
        })
    }

    fn index_ty(&mut self, mut ty: Type, items: &[IndexItem]) -> Result<Type> {
        let mut dims = Vec::new();
        for item in items {
            let Type::Array { size, elem } = ty else {
                return err("too many indices", self.origin.clone());
            };
            if let IndexItem::Slice { start, end, stride } = item {
                let new_size = match stride {
                    None => {
                        let end = end.map_or(size.clone(), |e| self.size_of_atom(e));
                        let start = start.map_or(CoreSize::zero(), |s| self.size_of_atom(s));
                        end.sub(&start)
                    }
                    Some(Atom::Const(Scalar::I64(-1) | Scalar::I32(-1)))
                        if start.is_none() && end.is_none() =>
                    {
                        size
                    }
                    Some(_) => self.existential(),
                };
                dims.push(new_size);
            }
            ty = *elem;
        }
        Ok(dims.into_iter().rev().fold(ty, |elem, size| Type::array(size, elem)))
    }

    fn binary(&mut self, op: AstBinOp, lhs: Atom, rhs: Atom) -> Result<Atom> {
        let core_op = match op {
            AstBinOp::And | AstBinOp::Or => {
                let is_and = op == AstBinOp::And;
                let rhs_block = self.in_block(|_| Ok(rhs))?;
                let short = self.in_block(|_| Ok(Atom::Const(Scalar::Bool(!is_and))))?;
                let (then_branch, else_branch) =
                    if is_and { (rhs_block, short) } else { (short, rhs_block) };
                return Ok(self.emit(
                    Exp::If { cond: lhs, then_branch, else_branch },
                    Type::Scalar(ScalarTy::Bool),
                ));
            }
            AstBinOp::Concat => {
                let (n, elem) = self.outer(lhs)?;
                let (m, _) = self.outer(rhs)?;
                return Ok(self.emit(Exp::Concat(lhs, rhs), Type::array(n.add(&m), elem)));
            }
            AstBinOp::Eq => BinOp::Eq,
            AstBinOp::Neq => BinOp::Neq,
            AstBinOp::Lt => BinOp::Lt,
            AstBinOp::Le => BinOp::Le,
            AstBinOp::Gt => BinOp::Gt,
            AstBinOp::Ge => BinOp::Ge,
            AstBinOp::BitOr => BinOp::BitOr,
            AstBinOp::BitXor => BinOp::BitXor,
            AstBinOp::BitAnd => BinOp::BitAnd,
            AstBinOp::Shl => BinOp::Shl,
            AstBinOp::Shr => BinOp::Shr,
            AstBinOp::Add => BinOp::Add,
            AstBinOp::Sub => BinOp::Sub,
            AstBinOp::Mul => BinOp::Mul,
            AstBinOp::Div => BinOp::Div,
            AstBinOp::Rem => BinOp::Rem,
            AstBinOp::Pow => BinOp::Pow,
        };
        let Type::Scalar(ty) = self.atom_ty(lhs) else {
            return err("a binary operator on a non-scalar", self.origin.clone());
        };
        let result_ty = if core_op.is_comparison() { ScalarTy::Bool } else { ty };
        let size = match (core_op, ty) {
            (BinOp::Add, ScalarTy::I64) => {
                Some(self.size_of_atom(lhs).add(&self.size_of_atom(rhs)))
            }
            (BinOp::Sub, ScalarTy::I64) => {
                Some(self.size_of_atom(lhs).sub(&self.size_of_atom(rhs)))
            }
            (BinOp::Mul, ScalarTy::I64) => {
                Some(self.size_of_atom(lhs).mul(&self.size_of_atom(rhs)))
            }
            _ => None,
        };
        let atom = self.emit(Exp::BinOp { op: core_op, ty, lhs, rhs }, Type::Scalar(result_ty));
        if let (Some(size), Atom::Var(var)) = (size, atom) {
            self.f.size_defs.insert(var, size);
        }
        Ok(atom)
    }

    // ---- application -----------------------------------------------------------------

    #[expect(clippy::wildcard_enum_match_arm, reason = "the other built-ins are handled alike")]
    fn arity(&self, func: &FnVal) -> usize {
        match func {
            FnVal::Lambda { params, .. } => params.len(),
            FnVal::Builtin { builtin, .. } => match builtin {
                Builtin::Math(_, f) => f.arity(),
                Builtin::Convert(_) => 1,
                _ => builtin.scheme().params.len(),
            },
            FnVal::Def { loc, .. } => {
                weft_hir::def_scheme(self.db, DefId::new(self.db, loc.clone())).params.len()
            }
            FnVal::Op(_) => 2,
            FnVal::RightSection { .. } => 1,
            FnVal::Partial { func, args } => self.arity(func).saturating_sub(args.len()),
        }
    }

    fn apply(&mut self, func: FnVal, mut args: Vec<Binding>) -> Result<Binding> {
        let arity = self.arity(&func);
        if args.len() < arity {
            return Ok(Binding::Fn(FnVal::Partial { func: Box::new(func), args }));
        }
        let rest = args.split_off(arity);
        let result = match func {
            FnVal::Partial { func, args: mut first } => {
                first.extend(args);
                self.apply(*func, first)?
            }
            FnVal::Lambda { ctx, scope, params, body } => {
                let mut scope = *scope;
                for (&pat, arg) in params.iter().zip(args) {
                    self.bind_pat(&ctx, &mut scope, pat, arg)?;
                }
                self.expr(&ctx, &mut scope, body)?
            }
            FnVal::Builtin { builtin, level } => Binding::Val(self.builtin(builtin, level, args)?),
            FnVal::Def { loc, type_args } => self.call_def(&loc, &type_args, args)?,
            FnVal::Op(op) => {
                let [lhs, rhs] = self.vals::<2>(args)?;
                Binding::Val(self.binary(op, lhs, rhs)?)
            }
            FnVal::RightSection { op, rhs } => {
                let [lhs] = self.vals::<1>(args)?;
                Binding::Val(self.binary(op, lhs, rhs)?)
            }
        };
        if rest.is_empty() {
            return Ok(result);
        }
        match result {
            Binding::Fn(f) => self.apply(f, rest),
            Binding::Val(_) => err("too many arguments", self.origin.clone()),
        }
    }

    fn vals<const N: usize>(&self, args: Vec<Binding>) -> Result<[Atom; N]> {
        let atoms: Vec<Atom> = args
            .into_iter()
            .map(|a| match a {
                Binding::Val(atom) => Ok(atom),
                Binding::Fn(_) => err("a function where a value was expected", self.origin.clone()),
            })
            .collect::<Result<_>>()?;
        atoms.try_into().map_err(|_| ElabError {
            message: "wrong number of arguments".to_owned(),
            origin: self.origin.clone(),
        })
    }

    /// A function value as a SOAC's lambda with parameters of the given types.
    fn lambda(&mut self, func: &FnVal, param_tys: Vec<Type>) -> Result<Lambda> {
        let names: Vec<String> = match func {
            FnVal::Lambda { ctx, params, .. } => {
                params.iter().map(|&p| pat_name(&ctx.body, p).unwrap_or("x").to_owned()).collect()
            }
            FnVal::Builtin { .. }
            | FnVal::Def { .. }
            | FnVal::Op(_)
            | FnVal::RightSection { .. }
            | FnVal::Partial { .. } => (0..param_tys.len())
                .map(|idx| ["x", "y", "z", "w", "v"].get(idx).copied().unwrap_or("x").to_owned())
                .collect(),
        };
        let params: Vec<VarId> =
            param_tys.into_iter().zip(names).map(|(ty, name)| self.new_var(&name, ty)).collect();
        let args = params.iter().map(|&p| Binding::Val(Atom::Var(p))).collect();
        let func = func.clone();
        let body = self.in_block(|this| match this.apply(func, args)? {
            Binding::Val(atom) => Ok(atom),
            Binding::Fn(_) => err("a SOAC's function returns a function", this.origin.clone()),
        })?;
        let ret = self.block_ty(body);
        Ok(Lambda { params, body, ret })
    }

    #[expect(clippy::wildcard_enum_match_arm, reason = "the other built-ins are handled alike")]
    fn builtin(
        &mut self,
        builtin: Builtin,
        level: Option<Level>,
        args: Vec<Binding>,
    ) -> Result<Atom> {
        let mut fns = Vec::new();
        let mut atoms = Vec::new();
        for arg in args {
            match arg {
                Binding::Val(atom) => atoms.push(atom),
                Binding::Fn(f) => fns.push(f),
            }
        }
        let origin = self.origin.clone();
        let arg = |idx: usize| -> Result<Atom> {
            atoms.get(idx).copied().ok_or_else(|| ElabError {
                message: format!("`{}` needs more arguments", builtin.name()),
                origin: origin.clone(),
            })
        };
        let Some(func) = fns.first().cloned().map(Ok).or_else(|| {
            matches!(
                builtin,
                Builtin::Map(_)
                    | Builtin::Reduce
                    | Builtin::Scan
                    | Builtin::Generate
                    | Builtin::ReduceByIndex
            )
            .then(|| err("a SOAC without a function", self.origin.clone()))
        }) else {
            return self.builtin_first_order(builtin, &atoms);
        };
        let func = func?;
        Ok(match builtin {
            Builtin::Map(_) => {
                let mut elem_tys = Vec::new();
                for &a in &atoms {
                    elem_tys.push(self.outer(a)?.1);
                }
                let (n, _) = self.outer(arg(0)?)?;
                let lambda = self.lambda(&func, elem_tys)?;
                let ty = Type::array(n, lambda.ret.clone());
                self.emit(Exp::Map { level, lambda, arrays: atoms }, ty)
            }
            Builtin::Reduce | Builtin::Scan => {
                let neutral = arg(0)?;
                let array = arg(1)?;
                let ty = self.atom_ty(neutral);
                let lambda = self.lambda(&func, vec![ty.clone(), ty.clone()])?;
                if builtin == Builtin::Reduce {
                    self.emit(Exp::Reduce { level, lambda, neutral, array }, ty)
                } else {
                    let (n, _) = self.outer(array)?;
                    self.emit(Exp::Scan { level, lambda, neutral, array }, Type::array(n, ty))
                }
            }
            Builtin::ReduceByIndex => {
                let (dest, neutral, indices, values) = (arg(0)?, arg(1)?, arg(2)?, arg(3)?);
                let elem = self.atom_ty(neutral);
                let lambda = self.lambda(&func, vec![elem.clone(), elem])?;
                let ty = self.atom_ty(dest);
                self.emit(Exp::ReduceByIndex { dest, lambda, neutral, indices, values }, ty)
            }
            Builtin::Generate => {
                let size = arg(0)?;
                let lambda = self.lambda(&func, vec![Type::Scalar(ScalarTy::I64)])?;
                let ty = Type::array(self.size_of_atom(size), lambda.ret.clone());
                self.emit(Exp::Generate { level, size, lambda }, ty)
            }
            _ => {
                return err(
                    format!("a function argument to `{}`", builtin.name()),
                    self.origin.clone(),
                );
            }
        })
    }

    #[expect(clippy::wildcard_enum_match_arm, reason = "the other built-ins are handled alike")]
    fn builtin_first_order(&mut self, builtin: Builtin, atoms: &[Atom]) -> Result<Atom> {
        let origin = self.origin.clone();
        let arg = |idx: usize| -> Result<Atom> {
            atoms.get(idx).copied().ok_or_else(|| ElabError {
                message: format!("`{}` needs more arguments", builtin.name()),
                origin: origin.clone(),
            })
        };
        let (exp, ty) = match builtin {
            Builtin::Map(_)
            | Builtin::Reduce
            | Builtin::Scan
            | Builtin::Generate
            | Builtin::ReduceByIndex => {
                return err("a SOAC without a function", self.origin.clone());
            }
            Builtin::Iota => {
                let size = arg(0)?;
                (
                    Exp::Iota { size },
                    Type::array(self.size_of_atom(size), Type::Scalar(ScalarTy::I64)),
                )
            }
            Builtin::Replicate => {
                let (size, value) = (arg(0)?, arg(1)?);
                (
                    Exp::Replicate { size, value },
                    Type::array(self.size_of_atom(size), self.atom_ty(value)),
                )
            }
            Builtin::Zip | Builtin::Zip3 => {
                let (n, _) = self.outer(arg(0)?)?;
                let mut elems = Vec::new();
                for &a in atoms {
                    elems.push(self.outer(a)?.1);
                }
                (Exp::Zip(atoms.to_vec()), Type::array(n, Type::Tuple(elems)))
            }
            Builtin::Unzip | Builtin::Unzip3 => {
                let array = arg(0)?;
                let (n, elem) = self.outer(array)?;
                let Type::Tuple(elems) = elem else {
                    return err("`unzip` of a non-tuple array", self.origin.clone());
                };
                (
                    Exp::Unzip(array),
                    Type::Tuple(elems.into_iter().map(|e| Type::array(n.clone(), e)).collect()),
                )
            }
            Builtin::Scatter => {
                let (dest, indices, values) = (arg(0)?, arg(1)?, arg(2)?);
                (Exp::Scatter { dest, indices, values }, self.atom_ty(dest))
            }
            Builtin::Transpose => {
                let array = arg(0)?;
                let (n, row) = self.outer(array)?;
                let Type::Array { size: m, elem } = row else {
                    return err("`transpose` of a 1-D array", self.origin.clone());
                };
                (Exp::Transpose(array), Type::array(m, Type::array(n, *elem)))
            }
            Builtin::Reverse => {
                let array = arg(0)?;
                (Exp::Reverse(array), self.atom_ty(array))
            }
            Builtin::Flatten => {
                let array = arg(0)?;
                let (n, row) = self.outer(array)?;
                let Type::Array { size: m, elem } = row else {
                    return err("`flatten` of a 1-D array", self.origin.clone());
                };
                (Exp::Flatten(array), Type::array(n.mul(&m), *elem))
            }
            Builtin::Unflatten => {
                let (rows, cols, array) = (arg(0)?, arg(1)?, arg(2)?);
                let (_, elem) = self.outer(array)?;
                let ty = Type::array(
                    self.size_of_atom(rows),
                    Type::array(self.size_of_atom(cols), elem),
                );
                (Exp::Unflatten { rows, cols, array }, ty)
            }
            Builtin::Split => {
                let (chunk, array) = (arg(0)?, arg(1)?);
                let (n, elem) = self.outer(array)?;
                let k = self.size_of_atom(chunk);
                (Exp::Split { chunk, array }, Type::array(n.div_exact(&k), Type::array(k, elem)))
            }
            Builtin::Take => {
                let (count, array) = (arg(0)?, arg(1)?);
                let (_, elem) = self.outer(array)?;
                (Exp::Take { count, array }, Type::array(self.size_of_atom(count), elem))
            }
            Builtin::Drop => {
                let (count, array) = (arg(0)?, arg(1)?);
                let (n, elem) = self.outer(array)?;
                (Exp::Drop { count, array }, Type::array(n.sub(&self.size_of_atom(count)), elem))
            }
            Builtin::Concat => {
                let (a, b) = (arg(0)?, arg(1)?);
                let (n, elem) = self.outer(a)?;
                let (m, _) = self.outer(b)?;
                (Exp::Concat(a, b), Type::array(n.add(&m), elem))
            }
            Builtin::Length => {
                let array = arg(0)?;
                (Exp::Dim { array, dim: 0 }, Type::Scalar(ScalarTy::I64))
            }
            Builtin::ToGlobal | Builtin::ToLocal | Builtin::ToPrivate | Builtin::Force => {
                let value = arg(0)?;
                let space = match builtin {
                    Builtin::ToGlobal => Space::Global,
                    Builtin::ToLocal => Space::Local,
                    Builtin::ToPrivate => Space::Private,
                    _ => Space::Inferred,
                };
                (Exp::Materialise { space, value }, self.atom_ty(value))
            }
            Builtin::Convert(to) => {
                let operand = arg(0)?;
                let Type::Scalar(from) = self.atom_ty(operand) else {
                    return err("a conversion of a non-scalar", self.origin.clone());
                };
                (Exp::Convert { from, to, operand }, Type::Scalar(to))
            }
            Builtin::Math(ty, func) => {
                let ret = if func == weft_hir::MathFn::IsNan { ScalarTy::Bool } else { ty };
                (Exp::Math { ty, func, args: atoms.to_vec() }, Type::Scalar(ret))
            }
        };
        Ok(self.emit(exp, ty))
    }
}

/// The name a pattern binds, if it is a (possibly ascribed) name.
fn pat_name(body: &Body, pat: PatId) -> Option<&str> {
    match &body.pats[pat] {
        Pat::Bind { name } => Some(name.as_str()),
        Pat::Ascribed { pat, .. } => pat_name(body, *pat),
        Pat::Wild | Pat::Missing | Pat::Tuple(_) | Pat::Record(_) => None,
    }
}

/// Binds callee size variables that are whole dimensions of a parameter type to the
/// argument's sizes.
fn bind_dims(param: &Type, arg: &Type, map: &mut FxHashMap<VarId, CoreSize>) {
    match (param, arg) {
        (Type::Array { size, elem }, Type::Array { size: arg_size, elem: arg_elem }) => {
            if let Some(&var) = size.as_var() {
                map.entry(var).or_insert_with(|| arg_size.clone());
            }
            bind_dims(elem, arg_elem, map);
        }
        (Type::Tuple(a), Type::Tuple(b)) => {
            for (a, b) in a.iter().zip(b) {
                bind_dims(a, b, map);
            }
        }
        _ => {}
    }
}

/// Binds the unknown sizes (HIR) that are whole dimensions of a binding's type to the
/// core sizes of its value, replacing what an earlier lowering of the same type made up
/// (a fresh existential nothing else names).
fn bind_unknown_sizes(hir: &Ty, core: &Type, sizes: &mut FxHashMap<SizeVar, CoreSize>) {
    for_each_whole_dim(hir, core, &mut |var, size| {
        if let SizeVar::Unknown(_) = var {
            sizes.insert(var.clone(), size.clone());
        }
    });
}

/// Binds a def's size parameters (HIR sizes) that are whole dimensions of a parameter
/// type to the argument's core sizes.
fn bind_size_params(param: &Ty, arg: &Type, sizes: &mut FxHashMap<SizeVar, CoreSize>) {
    for_each_whole_dim(param, arg, &mut |var, size| {
        sizes.entry(var.clone()).or_insert_with(|| size.clone());
    });
}

/// Calls `f` with each HIR size variable that is a whole dimension of `hir` and the
/// core size of that dimension in `core`.
fn for_each_whole_dim(hir: &Ty, core: &Type, f: &mut impl FnMut(&SizeVar, &CoreSize)) {
    match (hir, core) {
        (Ty::Array { size, elem }, Type::Array { size: core_size, elem: core_elem }) => {
            if let Some(var) = size.as_var() {
                f(var, core_size);
            }
            for_each_whole_dim(elem, core_elem, f);
        }
        (Ty::Tuple(a), Type::Tuple(b)) => {
            for (a, b) in a.iter().zip(b) {
                for_each_whole_dim(a, b, f);
            }
        }
        (Ty::Record(a), Type::Tuple(b)) => {
            for ((_, a), b) in a.iter().zip(b) {
                for_each_whole_dim(a, b, f);
            }
        }
        _ => {}
    }
}
