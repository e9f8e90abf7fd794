//! Bodies: a def's expressions and patterns in arenas, with names resolved.
//!
//! A [`Body`] holds no text ranges; the [`BodySourceMap`] beside it maps ids back to
//! the syntax. Two queries read them: [`body_with_source_map`] (position-dependent) and
//! [`body`], which projects out the body alone, so it compares equal after an edit
//! that only moved the def and its dependents stay valid (rust-analyzer's
//! `expr_store.rs`).
//!
//! Name resolution happens while lowering: a scope stack of local bindings, then the
//! def's size parameters (usable as `i64` values), then the file scope (defs and
//! imports), then built-ins.

use std::sync::Arc;

use la_arena::{Arena, ArenaMap, Idx};
use weft_syntax::ast::{self, AstNode, BinOp, LiteralKind, PrefixOp};
use weft_syntax::{TextRange, TextSize};

use crate::builtins::Builtin;
use crate::items::{DefId, DefLoc, def_item_ast};
use crate::scope::file_scope;
use crate::signatures::signature;
use crate::ty::ScalarTy;
use crate::type_ref::TypeRef;
use crate::{Db, Name};

pub type ExprId = Idx<Expr>;
pub type PatId = Idx<Pat>;

/// A strategy level (LANGUAGE.md section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Grid,
    Group,
    Thread,
    Seq,
}

impl Level {
    pub fn from_name(name: &str) -> Option<Level> {
        Some(match name {
            "grid" => Level::Grid,
            "group" => Level::Group,
            "thread" => Level::Thread,
            "seq" => Level::Seq,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Grid => "grid",
            Level::Group => "group",
            Level::Thread => "thread",
            Level::Seq => "seq",
        }
    }
}

/// What a name refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resolution {
    /// A binding in a pattern of this body (parameters included).
    Local(PatId),
    /// A size parameter of the def, used as an `i64` value.
    SizeParam(Name),
    Def(DefLoc),
    Builtin(Builtin),
    /// Reported when lowering; its type is the error type.
    Unresolved,
}

/// A literal. Integer magnitudes are kept wide and checked against their type after
/// inference (an out-of-range literal is a compile error); a `-` directly applied to
/// a literal is folded into it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Literal {
    /// `hex`: written `0x..`, which can only be an integer (LANGUAGE.md section 1).
    Int {
        value: i128,
        suffix: Option<ScalarTy>,
        hex: bool,
    },
    /// The digits as written without `_` and suffix, and the sign.
    Float {
        text: String,
        negative: bool,
        suffix: Option<ScalarTy>,
    },
    Bool(bool),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexItem {
    Index(ExprId),
    Slice { start: Option<ExprId>, end: Option<ExprId>, stride: Option<ExprId> },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LoopForm {
    For { var: PatId, bound: ExprId },
    While { cond: ExprId },
}

/// An expression. Evaluation order and scoping follow LANGUAGE.md section 4.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Missing or malformed syntax (already reported).
    Missing,
    Literal(Literal),
    Path {
        name: Name,
        res: Resolution,
        level: Option<Level>,
    },
    Tuple(Vec<ExprId>),
    Array(Vec<ExprId>),
    Call {
        callee: ExprId,
        args: Vec<ExprId>,
    },
    Binary {
        op: BinOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Unary {
        op: PrefixOp,
        operand: ExprId,
    },
    Lambda {
        params: Vec<PatId>,
        body: ExprId,
    },
    /// `(+)`
    OpSection(BinOp),
    /// `(e +)`: `\y -> e + y`.
    LeftSection {
        op: BinOp,
        lhs: ExprId,
    },
    /// `(+ e)`: `\x -> x + e`.
    RightSection {
        op: BinOp,
        rhs: ExprId,
    },
    Let {
        pat: PatId,
        ty: Option<TypeRef>,
        value: ExprId,
        body: ExprId,
    },
    If {
        cond: ExprId,
        then_branch: ExprId,
        else_branch: ExprId,
    },
    Loop {
        pat: PatId,
        init: ExprId,
        form: LoopForm,
        body: ExprId,
    },
    Index {
        base: ExprId,
        items: Vec<IndexItem>,
    },
    Proj {
        base: ExprId,
        index: u32,
    },
    /// `{x = e, y = e'}` (version 1.1): fields as written, in evaluation order.
    Record(Vec<(Name, ExprId)>),
    /// `e.x` (version 1.1): a record's field.
    Field {
        base: ExprId,
        field: Name,
    },
    /// `r with x.y = v` (version 1.1): `r` with the field at `path` replaced.
    RecordUpdate {
        base: ExprId,
        path: Vec<Name>,
        value: ExprId,
    },
    Ascribe {
        expr: ExprId,
        ty: TypeRef,
    },
    Coerce {
        expr: ExprId,
        ty: TypeRef,
    },
    /// `base with [i, j] = value` (version 1.1): a copy of `base` with one element or row
    /// replaced. A slice written among the indices is reported and lowered as `Missing`.
    Update {
        base: ExprId,
        indices: Vec<ExprId>,
        value: ExprId,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Pat {
    Missing,
    Bind {
        name: Name,
    },
    Wild,
    Tuple(Vec<PatId>),
    Ascribed {
        pat: PatId,
        ty: TypeRef,
    },
    /// `{x, y = p}` (version 1.1): every field of the record, as written.
    Record(Vec<(Name, PatId)>),
}

/// Problems found while lowering, keyed by ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BodyDiagnostic {
    UnresolvedName {
        expr: ExprId,
        name: Name,
    },
    UnknownLevel {
        expr: ExprId,
        level: Name,
    },
    LevelNotAllowed {
        expr: ExprId,
    },
    BadLiteral {
        expr: ExprId,
        message: String,
    },
    BadProjection {
        expr: ExprId,
    },
    /// `xs with [a:b] = v`: an update takes indices, not slices.
    SliceInUpdate {
        expr: ExprId,
    },
    /// A field named twice in one record expression, pattern or type (version 1.1).
    DuplicateField {
        range: TextRange,
        name: Name,
    },
}

impl BodyDiagnostic {
    /// The diagnostic's stable code (`unresolved-name`).
    pub fn code(&self) -> &'static str {
        match self {
            BodyDiagnostic::UnresolvedName { .. } => "unresolved-name",
            BodyDiagnostic::UnknownLevel { .. } => "unknown-level",
            BodyDiagnostic::LevelNotAllowed { .. } => "level-not-allowed",
            BodyDiagnostic::BadLiteral { .. } => "bad-literal",
            BodyDiagnostic::BadProjection { .. } => "bad-projection",
            BodyDiagnostic::SliceInUpdate { .. } => "slice-in-update",
            BodyDiagnostic::DuplicateField { .. } => "duplicate-field",
        }
    }

    /// Where the diagnostic is in the current text.
    pub fn range(&self, source_map: &BodySourceMap) -> TextRange {
        match self {
            BodyDiagnostic::UnresolvedName { expr, .. }
            | BodyDiagnostic::UnknownLevel { expr, .. }
            | BodyDiagnostic::LevelNotAllowed { expr }
            | BodyDiagnostic::BadLiteral { expr, .. }
            | BodyDiagnostic::BadProjection { expr }
            | BodyDiagnostic::SliceInUpdate { expr } => {
                source_map.expr_range(*expr).unwrap_or_default()
            }
            BodyDiagnostic::DuplicateField { range, .. } => *range,
        }
    }
}

/// A lowered def body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Body {
    pub exprs: Arena<Expr>,
    pub pats: Arena<Pat>,
    /// One pattern per declared parameter, in order.
    pub params: Vec<PatId>,
    pub root: Option<ExprId>,
    pub diagnostics: Vec<BodyDiagnostic>,
}

/// Where each id came from in the def's stretch of text (`def_item_ast`): positions
/// are from the stretch's start, so the map compares equal after edits elsewhere in
/// the file. [`source_map`] gives them in the file's positions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BodySourceMap {
    pub expr_ranges: ArenaMap<ExprId, TextRange>,
    pub pat_ranges: ArenaMap<PatId, TextRange>,
    /// The range of each parameter's type annotation.
    pub param_ty_ranges: Vec<TextRange>,
    pub ret_ty_range: Option<TextRange>,
    pub name_range: Option<TextRange>,
    /// The whole declaration.
    pub def_range: Option<TextRange>,
}

impl BodySourceMap {
    pub fn expr_range(&self, expr: ExprId) -> Option<TextRange> {
        self.expr_ranges.get(expr).copied()
    }

    pub fn pat_range(&self, pat: PatId) -> Option<TextRange> {
        self.pat_ranges.get(pat).copied()
    }

    /// The innermost expression whose range contains `range`.
    pub fn expr_at(&self, range: TextRange) -> Option<ExprId> {
        self.expr_ranges
            .iter()
            .filter(|(_, r)| r.contains_range(range))
            .min_by_key(|(_, r)| r.len())
            .map(|(id, _)| id)
    }

    /// Where a site of an inference diagnostic is: its own range, or the def's name
    /// where it has none (or an empty one).
    pub fn site_range(&self, site: &crate::inference::Site) -> TextRange {
        use crate::inference::Site;
        let fallback = self.name_range.unwrap_or_default();
        match site {
            Site::Expr(expr) => self.expr_range(*expr),
            Site::Pat(pat) => self.pat_range(*pat),
            Site::Param(idx) => self.param_ty_ranges.get(*idx).copied(),
            Site::Ret => self.ret_ty_range,
            Site::Name => self.name_range,
        }
        .filter(|r| !r.is_empty())
        .unwrap_or(fallback)
    }

    pub fn pat_at(&self, range: TextRange) -> Option<PatId> {
        self.pat_ranges
            .iter()
            .filter(|(_, r)| r.contains_range(range))
            .min_by_key(|(_, r)| r.len())
            .map(|(id, _)| id)
    }
}

/// A def's source map in the file's positions: its [`BodySourceMap`] and where the def's
/// stretch starts now. Cheap to make (it copies no ranges); for features that show or
/// edit text.
#[derive(Debug, Clone)]
pub struct DefSourceMap {
    map: Arc<BodySourceMap>,
    offset: TextSize,
}

impl DefSourceMap {
    pub fn expr_range(&self, expr: ExprId) -> Option<TextRange> {
        self.map.expr_range(expr).map(|r| r + self.offset)
    }

    pub fn pat_range(&self, pat: PatId) -> Option<TextRange> {
        self.map.pat_range(pat).map(|r| r + self.offset)
    }

    /// Every expression with its range.
    pub fn expr_ranges(&self) -> impl Iterator<Item = (ExprId, TextRange)> + '_ {
        self.map.expr_ranges.iter().map(|(id, r)| (id, *r + self.offset))
    }

    /// Every pattern with its range.
    pub fn pat_ranges(&self) -> impl Iterator<Item = (PatId, TextRange)> + '_ {
        self.map.pat_ranges.iter().map(|(id, r)| (id, *r + self.offset))
    }

    /// The range of each parameter's type annotation.
    pub fn param_ty_ranges(&self) -> impl Iterator<Item = TextRange> + '_ {
        self.map.param_ty_ranges.iter().map(|r| *r + self.offset)
    }

    pub fn ret_ty_range(&self) -> Option<TextRange> {
        self.map.ret_ty_range.map(|r| r + self.offset)
    }

    pub fn name_range(&self) -> Option<TextRange> {
        self.map.name_range.map(|r| r + self.offset)
    }

    /// The whole declaration.
    pub fn def_range(&self) -> Option<TextRange> {
        self.map.def_range.map(|r| r + self.offset)
    }

    /// The innermost expression whose range contains `range`.
    pub fn expr_at(&self, range: TextRange) -> Option<ExprId> {
        self.map.expr_at(range.checked_sub(self.offset)?)
    }

    pub fn pat_at(&self, range: TextRange) -> Option<PatId> {
        self.map.pat_at(range.checked_sub(self.offset)?)
    }

    /// See [`BodySourceMap::site_range`].
    pub fn site_range(&self, site: &crate::inference::Site) -> TextRange {
        self.map.site_range(site) + self.offset
    }
}

/// `def`'s source map in the file's positions (see [`DefSourceMap`]); an empty one for a
/// def no longer in its file.
pub fn source_map(db: &dyn Db, def: DefId<'_>) -> DefSourceMap {
    let map = Arc::clone(&body_with_source_map(db, def).1);
    DefSourceMap { map, offset: crate::items::def_offset(db, def.loc(db)).unwrap_or_default() }
}

/// A def's body and source map, lowered from its stretch of text alone (so it re-runs
/// only when that stretch changes; positions are from its start, see
/// [`BodySourceMap`]).
#[salsa::tracked(returns(ref))]
pub fn body_with_source_map<'db>(
    db: &'db dyn Db,
    def: DefId<'db>,
) -> (Arc<Body>, Arc<BodySourceMap>) {
    let loc = def.loc(db).clone();
    let Some(ast::Item::Def(node)) = def_item_ast(db, &loc) else {
        let mut source_map = BodySourceMap::default();
        if let Some(item) = def_item_ast(db, &loc) {
            source_map.def_range = Some(item.syntax().text_range());
            source_map.name_range = crate::items::def_name_range(db, &loc);
        }
        return (Arc::new(Body::default()), Arc::new(source_map));
    };
    let sig = signature(db, def);
    let scope = file_scope(db, loc.file);
    let mut size_names: Vec<Name> = sig.size_params.clone();
    for ty in &sig.params {
        ty.for_each_size_name(&mut |name| {
            if !size_names.contains(name) {
                size_names.push(name.clone());
            }
        });
    }
    let mut ctx = LowerCtx {
        body: Body::default(),
        source_map: BodySourceMap::default(),
        scopes: Vec::new(),
        size_names,
        values: &scope.values,
    };
    ctx.source_map.def_range = Some(node.syntax().text_range());
    ctx.source_map.name_range = node.name().map(|n| n.syntax().text_range());
    ctx.source_map.ret_ty_range =
        node.ret_type().and_then(|r| r.ty()).map(|t| t.syntax().text_range());
    for param in node.params() {
        let pat = ctx.lower_pat(param.pat());
        ctx.body.params.push(pat);
        let range = param.ty().map_or(param.syntax().text_range(), |t| t.syntax().text_range());
        ctx.source_map.param_ty_ranges.push(range);
    }
    // Parameters are in scope in the body (and later parameters' types name earlier ones).
    let mut param_scope = Vec::new();
    for &pat in &ctx.body.params {
        ctx.bindings(pat, &mut param_scope);
    }
    ctx.scopes.push(param_scope);
    let root = ctx.lower_expr(node.body());
    ctx.body.root = Some(root);
    (Arc::new(ctx.body), Arc::new(ctx.source_map))
}

/// The body alone: equal after edits that only move it, so its dependents stay valid.
#[salsa::tracked(returns(ref))]
pub fn body<'db>(db: &'db dyn Db, def: DefId<'db>) -> Arc<Body> {
    Arc::clone(&body_with_source_map(db, def).0)
}

struct LowerCtx<'a> {
    body: Body,
    source_map: BodySourceMap,
    /// Innermost last; each scope maps names to the pattern that binds them.
    scopes: Vec<Vec<(Name, PatId)>>,
    size_names: Vec<Name>,
    values: &'a std::collections::BTreeMap<String, DefLoc>,
}

impl LowerCtx<'_> {
    fn alloc_expr(&mut self, expr: Expr, range: TextRange) -> ExprId {
        let id = self.body.exprs.alloc(expr);
        self.source_map.expr_ranges.insert(id, range);
        id
    }

    fn alloc_pat(&mut self, pat: Pat, range: TextRange) -> PatId {
        let id = self.body.pats.alloc(pat);
        self.source_map.pat_ranges.insert(id, range);
        id
    }

    fn missing(&mut self, range: TextRange) -> ExprId {
        self.alloc_expr(Expr::Missing, range)
    }

    fn bindings(&self, pat: PatId, out: &mut Vec<(Name, PatId)>) {
        match &self.body.pats[pat] {
            Pat::Bind { name } => out.push((name.clone(), pat)),
            Pat::Tuple(pats) => pats.iter().for_each(|&p| self.bindings(p, out)),
            Pat::Ascribed { pat, .. } => self.bindings(*pat, out),
            Pat::Record(fields) => fields.iter().for_each(|(_, p)| self.bindings(*p, out)),
            Pat::Wild | Pat::Missing => {}
        }
    }

    fn with_scope<T>(&mut self, pats: &[PatId], f: impl FnOnce(&mut Self) -> T) -> T {
        let mut scope = Vec::new();
        for &pat in pats {
            self.bindings(pat, &mut scope);
        }
        self.scopes.push(scope);
        let result = f(self);
        self.scopes.pop();
        result
    }

    fn resolve(&self, name: &str) -> Resolution {
        for scope in self.scopes.iter().rev() {
            if let Some((_, pat)) = scope.iter().rev().find(|(n, _)| n.as_str() == name) {
                return Resolution::Local(*pat);
            }
        }
        if self.size_names.iter().any(|n| n.as_str() == name) {
            return Resolution::SizeParam(Name::new(name));
        }
        if let Some(def) = self.values.get(name) {
            return Resolution::Def(def.clone());
        }
        Builtin::lookup(name).map_or(Resolution::Unresolved, Resolution::Builtin)
    }

    fn lower_pat(&mut self, pat: Option<ast::Pat>) -> PatId {
        let Some(pat) = pat else {
            return self.alloc_pat(Pat::Missing, TextRange::default());
        };
        let range = pat.syntax().text_range();
        let lowered = match pat {
            ast::Pat::IdentPat(p) => match p.name() {
                Some(name) => Pat::Bind { name: Name::new(&name.text()) },
                None => Pat::Missing,
            },
            ast::Pat::WildcardPat(_) => Pat::Wild,
            ast::Pat::TuplePat(p) => {
                Pat::Tuple(p.pats().map(|p| self.lower_pat(Some(p))).collect())
            }
            ast::Pat::ParenPat(p) => return self.lower_pat(p.pat()),
            ast::Pat::RecordPat(p) => {
                let mut fields = Vec::new();
                for field in p.record_pat_fields() {
                    let Some(label) = field.name_ref() else { continue };
                    let name = Name::new(&label.text());
                    let label_range = label.syntax().text_range();
                    self.check_unique_field(&fields, &name, label_range);
                    // `{x}` binds `x`; `{x = p}` matches the field against `p`.
                    let pat = match field.pat() {
                        Some(pat) => self.lower_pat(Some(pat)),
                        None => self.alloc_pat(Pat::Bind { name: name.clone() }, label_range),
                    };
                    fields.push((name, pat));
                }
                Pat::Record(fields)
            }
            ast::Pat::AscribedPat(p) => {
                let inner = self.lower_pat(p.pat());
                Pat::Ascribed { pat: inner, ty: TypeRef::lower(p.ty()) }
            }
        };
        self.alloc_pat(lowered, range)
    }

    fn lower_expr(&mut self, expr: Option<ast::Expr>) -> ExprId {
        let Some(expr) = expr else {
            return self.missing(TextRange::default());
        };
        let range = expr.syntax().text_range();
        let lowered = match expr {
            ast::Expr::Literal(lit) => return self.lower_literal(&lit, false, range),
            ast::Expr::PathExpr(path) => return self.lower_path(&path, range),
            ast::Expr::ParenExpr(paren) => return self.lower_expr(paren.expr()),
            ast::Expr::TupleExpr(tuple) => {
                Expr::Tuple(tuple.exprs().map(|e| self.lower_expr(Some(e))).collect())
            }
            ast::Expr::RecordExpr(record) => {
                let mut fields = Vec::new();
                for field in record.record_expr_fields() {
                    let Some(label) = field.name_ref() else { continue };
                    let name = Name::new(&label.text());
                    let label_range = label.syntax().text_range();
                    self.check_unique_field(&fields, &name, label_range);
                    // `{y}` is `{y = y}`.
                    let value = match field.expr() {
                        Some(expr) => self.lower_expr(Some(expr)),
                        None => self.lower_name(&name, label_range),
                    };
                    fields.push((name, value));
                }
                Expr::Record(fields)
            }
            ast::Expr::RecordUpdateExpr(update) => {
                let base = self.lower_expr(update.base());
                let path: Vec<Name> = update.name_refs().map(|n| Name::new(&n.text())).collect();
                let value = self.lower_expr(update.value());
                if path.is_empty() {
                    Expr::Missing
                } else {
                    Expr::RecordUpdate { base, path, value }
                }
            }
            ast::Expr::FieldSection(section) => {
                // `(.x)` is `\r -> r.x`, with `r` a binding no one can name.
                let Some(field) = section.name_ref() else { return self.missing(range) };
                let name = Name::new("field_section_record");
                let record = self.body.pats.alloc(Pat::Bind { name: name.clone() });
                let base = Expr::Path { name, res: Resolution::Local(record), level: None };
                let base = self.alloc_expr(base, range);
                let body = Expr::Field { base, field: Name::new(&field.text()) };
                let body = self.alloc_expr(body, range);
                Expr::Lambda { params: vec![record], body }
            }
            ast::Expr::FieldExpr(field) => {
                let base = self.lower_expr(field.expr());
                match field.name_ref() {
                    Some(name) => Expr::Field { base, field: Name::new(&name.text()) },
                    None => Expr::Missing,
                }
            }
            ast::Expr::ArrayExpr(array) => {
                Expr::Array(array.exprs().map(|e| self.lower_expr(Some(e))).collect())
            }
            ast::Expr::CallExpr(call) => {
                let callee = self.lower_expr(call.callee());
                let args = call.args().map(|a| self.lower_expr(Some(a))).collect();
                Expr::Call { callee, args }
            }
            ast::Expr::BinExpr(bin) => {
                let lhs = self.lower_expr(bin.lhs());
                let rhs = self.lower_expr(bin.rhs());
                match bin.op() {
                    Some(op) => Expr::Binary { op, lhs, rhs },
                    None => Expr::Missing,
                }
            }
            ast::Expr::PrefixExpr(prefix) => {
                // `-1`: fold the sign into the literal, so `-2147483648i32` is in range.
                if prefix.op() == Some(PrefixOp::Neg)
                    && let Some(ast::Expr::Literal(lit)) = prefix.expr()
                {
                    return self.lower_literal(&lit, true, range);
                } else {
                    let operand = self.lower_expr(prefix.expr());
                    match prefix.op() {
                        Some(op) => Expr::Unary { op, operand },
                        None => Expr::Missing,
                    }
                }
            }
            ast::Expr::LambdaExpr(lambda) => {
                let params: Vec<PatId> = lambda.pats().map(|p| self.lower_pat(Some(p))).collect();
                let body = self.with_scope(&params, |ctx| ctx.lower_expr(lambda.body()));
                Expr::Lambda { params, body }
            }
            ast::Expr::OpSection(section) => match section.op() {
                Some(op) => Expr::OpSection(op),
                None => Expr::Missing,
            },
            ast::Expr::LeftSection(section) => {
                let lhs = self.lower_expr(section.expr());
                match section.op() {
                    Some(op) => Expr::LeftSection { op, lhs },
                    None => Expr::Missing,
                }
            }
            ast::Expr::RightSection(section) => {
                let rhs = self.lower_expr(section.expr());
                match section.op() {
                    Some(op) => Expr::RightSection { op, rhs },
                    None => Expr::Missing,
                }
            }
            ast::Expr::LetExpr(let_expr) => {
                let value = self.lower_expr(let_expr.value());
                let pat = self.lower_pat(let_expr.pat());
                let ty = let_expr.ty().map(|t| TypeRef::lower(Some(t)));
                let body = self.with_scope(&[pat], |ctx| ctx.lower_expr(let_expr.body()));
                Expr::Let { pat, ty, value, body }
            }
            ast::Expr::IfExpr(if_expr) => Expr::If {
                cond: self.lower_expr(if_expr.condition()),
                then_branch: self.lower_expr(if_expr.then_branch()),
                else_branch: self.lower_expr(if_expr.else_branch()),
            },
            ast::Expr::LoopExpr(loop_expr) => {
                let init = self.lower_expr(loop_expr.init());
                let pat = self.lower_pat(loop_expr.pat());
                let (form, body) = match loop_expr.loop_form() {
                    Some(ast::LoopForm::ForForm(for_form)) => {
                        let bound = self.lower_expr(for_form.bound());
                        let var_range = for_form.name().map_or(range, |n| n.syntax().text_range());
                        let var = match for_form.name() {
                            Some(name) => self
                                .alloc_pat(Pat::Bind { name: Name::new(&name.text()) }, var_range),
                            None => self.alloc_pat(Pat::Missing, var_range),
                        };
                        let body =
                            self.with_scope(&[pat, var], |ctx| ctx.lower_expr(loop_expr.body()));
                        (LoopForm::For { var, bound }, body)
                    }
                    Some(ast::LoopForm::ForInForm(for_in)) => {
                        return self.lower_for_in(pat, init, &for_in, loop_expr.body(), range);
                    }
                    Some(ast::LoopForm::WhileForm(while_form)) => {
                        let (cond, body) = self.with_scope(&[pat], |ctx| {
                            (
                                ctx.lower_expr(while_form.condition()),
                                ctx.lower_expr(loop_expr.body()),
                            )
                        });
                        (LoopForm::While { cond }, body)
                    }
                    None => {
                        let cond = self.missing(range);
                        let body = self.with_scope(&[pat], |ctx| ctx.lower_expr(loop_expr.body()));
                        (LoopForm::While { cond }, body)
                    }
                };
                Expr::Loop { pat, init, form, body }
            }
            ast::Expr::IndexExpr(index) => {
                let base = self.lower_expr(index.base());
                let items = index
                    .index_items()
                    .map(|item| match item {
                        ast::IndexItem::Index(i) => IndexItem::Index(self.lower_expr(i.expr())),
                        ast::IndexItem::Slice(slice) => {
                            let [start, end, stride] = slice.parts();
                            IndexItem::Slice {
                                start: start.map(|e| self.lower_expr(Some(e))),
                                end: end.map(|e| self.lower_expr(Some(e))),
                                stride: stride.map(|e| self.lower_expr(Some(e))),
                            }
                        }
                    })
                    .collect();
                Expr::Index { base, items }
            }
            ast::Expr::UpdateExpr(update) => {
                let base = self.lower_expr(update.base());
                let indices = update
                    .index_items()
                    .map(|item| match item {
                        ast::IndexItem::Index(i) => self.lower_expr(i.expr()),
                        ast::IndexItem::Slice(slice) => {
                            let id = self.missing(slice.syntax().text_range());
                            self.body.diagnostics.push(BodyDiagnostic::SliceInUpdate { expr: id });
                            id
                        }
                    })
                    .collect();
                let value = self.lower_expr(update.value());
                Expr::Update { base, indices, value }
            }
            ast::Expr::ProjExpr(proj) => {
                let base = self.lower_expr(proj.expr());
                match proj.index_token().and_then(|t| t.text().parse::<u32>().ok()) {
                    Some(index) => Expr::Proj { base, index },
                    None => {
                        let id = self.alloc_expr(Expr::Missing, range);
                        self.body.diagnostics.push(BodyDiagnostic::BadProjection { expr: id });
                        return id;
                    }
                }
            }
            ast::Expr::PipeExpr(pipe) => {
                // `xs |> map f` is `map f xs`: the argument joins the call's own
                // arguments, so a built-in sees all of them at once.
                let (function, argument) = pipe.function_and_argument();
                let mut function = function;
                while let Some(ast::Expr::ParenExpr(paren)) = &function {
                    function = paren.expr();
                }
                match function {
                    Some(ast::Expr::CallExpr(call)) => {
                        let callee = self.lower_expr(call.callee());
                        let mut args: Vec<ExprId> =
                            call.args().map(|a| self.lower_expr(Some(a))).collect();
                        args.push(self.lower_expr(argument));
                        Expr::Call { callee, args }
                    }
                    function => {
                        let callee = self.lower_expr(function);
                        let arg = self.lower_expr(argument);
                        Expr::Call { callee, args: vec![arg] }
                    }
                }
            }
            ast::Expr::LetFnExpr(let_fn) => {
                // `let f x y : t = e in body` is `let f = \x y -> (e : t) in body`: a local
                // function is a let-bound lambda, monomorphic, and not in scope in `e`.
                let params: Vec<PatId> = let_fn.pats().map(|p| self.lower_pat(Some(p))).collect();
                let ret = let_fn.ret_type().map(|r| TypeRef::lower(r.ty()));
                let value = self.with_scope(&params, |ctx| {
                    let value = ctx.lower_expr(let_fn.value());
                    match ret {
                        Some(ty) => {
                            let value_range = ctx.source_map.expr_range(value).unwrap_or(range);
                            ctx.alloc_expr(Expr::Ascribe { expr: value, ty }, value_range)
                        }
                        None => value,
                    }
                });
                let value_end = self.source_map.expr_range(value).map_or(range.end(), |r| r.end());
                let lambda_start =
                    let_fn.pats().next().map_or(value_end, |p| p.syntax().text_range().start());
                let lambda_range = TextRange::new(lambda_start, value_end.max(lambda_start));
                let value = self.alloc_expr(Expr::Lambda { params, body: value }, lambda_range);
                let name_range = let_fn.name().map_or(range, |n| n.syntax().text_range());
                let pat = match let_fn.name() {
                    Some(name) => {
                        self.alloc_pat(Pat::Bind { name: Name::new(&name.text()) }, name_range)
                    }
                    None => self.alloc_pat(Pat::Missing, name_range),
                };
                let body = self.with_scope(&[pat], |ctx| ctx.lower_expr(let_fn.body()));
                Expr::Let { pat, ty: None, value, body }
            }
            ast::Expr::AscribeExpr(ascribe) => Expr::Ascribe {
                expr: self.lower_expr(ascribe.expr()),
                ty: TypeRef::lower(ascribe.ty()),
            },
            ast::Expr::CoerceExpr(coerce) => Expr::Coerce {
                expr: self.lower_expr(coerce.expr()),
                ty: TypeRef::lower(coerce.ty()),
            },
        };
        self.alloc_expr(lowered, range)
    }

    /// `loop p = init for x in xs do body` (version 1.1) is
    /// `let a = xs in loop p = init for i < length a do let x = a[i] in body`: `xs` is
    /// evaluated once, outside the loop, and `a` and `i` cannot be named by the program.
    /// The hidden expressions carry the range of `xs`, where their errors belong.
    fn lower_for_in(
        &mut self,
        pat: PatId,
        init: ExprId,
        for_in: &ast::ForInForm,
        body: Option<ast::Expr>,
        range: TextRange,
    ) -> ExprId {
        let array = self.lower_expr(for_in.array());
        let array_range = self.source_map.expr_range(array).unwrap_or(range);
        let array_name = Name::new("for_in_array");
        let index_name = Name::new("for_in_index");
        let array_var = self.body.pats.alloc(Pat::Bind { name: array_name.clone() });
        let index_var = self.body.pats.alloc(Pat::Bind { name: index_name.clone() });
        let array_ref = |ctx: &mut Self| {
            let path = Expr::Path {
                name: array_name.clone(),
                res: Resolution::Local(array_var),
                level: None,
            };
            ctx.alloc_expr(path, array_range)
        };
        let length = Expr::Path {
            name: Name::new("length"),
            res: Resolution::Builtin(Builtin::Length),
            level: None,
        };
        let length = self.alloc_expr(length, array_range);
        let length_arg = array_ref(self);
        let bound =
            self.alloc_expr(Expr::Call { callee: length, args: vec![length_arg] }, array_range);
        let elem_pat = self.lower_pat(for_in.pat());
        let body_range = body.as_ref().map_or(range, |b| b.syntax().text_range());
        let loop_body = self.with_scope(&[pat, elem_pat], |ctx| ctx.lower_expr(body));
        let index_ref =
            Expr::Path { name: index_name, res: Resolution::Local(index_var), level: None };
        let index_ref = self.alloc_expr(index_ref, array_range);
        let base = array_ref(self);
        let element = self.alloc_expr(
            Expr::Index { base, items: vec![IndexItem::Index(index_ref)] },
            array_range,
        );
        let loop_body = self.alloc_expr(
            Expr::Let { pat: elem_pat, ty: None, value: element, body: loop_body },
            body_range,
        );
        let form = LoopForm::For { var: index_var, bound };
        let loop_id = self.alloc_expr(Expr::Loop { pat, init, form, body: loop_body }, range);
        self.alloc_expr(Expr::Let { pat: array_var, ty: None, value: array, body: loop_id }, range)
    }

    fn check_unique_field<T>(&mut self, fields: &[(Name, T)], name: &Name, range: TextRange) {
        if fields.iter().any(|(n, _)| n == name) {
            self.body
                .diagnostics
                .push(BodyDiagnostic::DuplicateField { range, name: name.clone() });
        }
    }

    /// A use of a plain name (the `y` of a record field `{y}`).
    fn lower_name(&mut self, name: &Name, range: TextRange) -> ExprId {
        let res = self.resolve(name.as_str());
        let id = self
            .alloc_expr(Expr::Path { name: name.clone(), res: res.clone(), level: None }, range);
        if res == Resolution::Unresolved {
            self.body
                .diagnostics
                .push(BodyDiagnostic::UnresolvedName { expr: id, name: name.clone() });
        }
        id
    }

    fn lower_path(&mut self, path: &ast::PathExpr, range: TextRange) -> ExprId {
        let name_text = path.name_ref().map(|n| n.text()).unwrap_or_default();
        // `r.x` where `r` is a value in scope is a field (version 1.1); otherwise the
        // qualifier is a type's namespace (`f32.sqrt`).
        if let Some(qualifier) = path.qualifier()
            && matches!(self.resolve(&qualifier.text()), Resolution::Local(_) | Resolution::Def(_))
        {
            let base =
                self.lower_name(&Name::new(&qualifier.text()), qualifier.syntax().text_range());
            let field = Expr::Field { base, field: Name::new(&name_text) };
            return self.alloc_expr(field, range);
        }
        let (name, res) = match path.qualifier() {
            Some(qualifier) => {
                let namespace = qualifier.text();
                let full = format!("{namespace}.{name_text}");
                // A built-in, else a def in that namespace (the prelude's `f32.sum`).
                let res = match Builtin::lookup_qualified(&namespace, &name_text) {
                    Some(builtin) => Resolution::Builtin(builtin),
                    None => self
                        .values
                        .get(&full)
                        .cloned()
                        .map_or(Resolution::Unresolved, Resolution::Def),
                };
                (Name::new(&full), res)
            }
            None => (Name::new(&name_text), self.resolve(&name_text)),
        };
        let level_name = path.strategy().and_then(|s| s.name_ref()).map(|n| n.text());
        let level = level_name.as_deref().and_then(Level::from_name);
        let id = self.alloc_expr(Expr::Path { name: name.clone(), res: res.clone(), level }, range);
        if res == Resolution::Unresolved {
            self.body.diagnostics.push(BodyDiagnostic::UnresolvedName { expr: id, name });
        } else if let Some(level_name) = level_name {
            if level.is_none() {
                self.body
                    .diagnostics
                    .push(BodyDiagnostic::UnknownLevel { expr: id, level: Name::new(&level_name) });
            } else if !matches!(res, Resolution::Builtin(b) if b.takes_level()) {
                self.body.diagnostics.push(BodyDiagnostic::LevelNotAllowed { expr: id });
            }
        }
        id
    }

    fn lower_literal(&mut self, lit: &ast::Literal, negative: bool, range: TextRange) -> ExprId {
        let result = match lit.kind() {
            Some(LiteralKind::Int(token)) => {
                parse_int_text(token.text()).map(|(magnitude, suffix)| {
                    let value = i128::try_from(magnitude).unwrap_or(i128::MAX);
                    let hex = token.text().starts_with("0x") || token.text().starts_with("0X");
                    Literal::Int { value: if negative { -value } else { value }, suffix, hex }
                })
            }
            Some(LiteralKind::Float(token)) => parse_float_text(token.text())
                .map(|(text, suffix)| Literal::Float { text, negative, suffix }),
            Some(LiteralKind::Bool(value)) if !negative => Ok(Literal::Bool(value)),
            Some(LiteralKind::Bool(_)) => Err("cannot negate a `bool` literal; use `!`".to_owned()),
            None => return self.missing(range),
        };
        match result {
            Ok(literal) => self.alloc_expr(Expr::Literal(literal), range),
            Err(message) => {
                let id = self.missing(range);
                self.body.diagnostics.push(BodyDiagnostic::BadLiteral { expr: id, message });
                id
            }
        }
    }
}

/// Splits an integer literal into its magnitude and suffix (`0xff`, `1_000i64`).
pub(crate) fn parse_int_text(text: &str) -> Result<(u128, Option<ScalarTy>), String> {
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(rest) => (rest, 16),
        None => (text, 10),
    };
    let split = digits.find(|c: char| !(c.is_digit(radix) || c == '_')).unwrap_or(digits.len());
    let (number, suffix) = digits.split_at(split);
    let suffix = match suffix {
        "" => None,
        other if ScalarTy::from_name(other).is_some_and(ScalarTy::is_integer) => {
            ScalarTy::from_name(other)
        }
        other if radix == 16 && ScalarTy::from_name(other).is_some_and(ScalarTy::is_float) => {
            return Err(format!("hex literals take only integer suffixes, found `{other}`"));
        }
        other => return Err(format!("invalid suffix `{other}` on integer literal `{text}`")),
    };
    let number: String = number.chars().filter(|&c| c != '_').collect();
    if number.is_empty() {
        return Err(format!("integer literal `{text}` has no digits"));
    }
    u128::from_str_radix(&number, radix)
        .map(|value| (value, suffix))
        .map_err(|_| format!("integer literal `{text}` is out of range"))
}

/// Splits a float literal into its text (without `_`) and suffix (`2e-3`, `3f32`).
pub(crate) fn parse_float_text(text: &str) -> Result<(String, Option<ScalarTy>), String> {
    let bytes = text.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        let c = bytes[end];
        let exponent_sign =
            matches!(c, b'+' | b'-') && end > 0 && matches!(bytes[end - 1], b'e' | b'E');
        let exponent = matches!(c, b'e' | b'E')
            && bytes.get(end + 1).is_some_and(|n| n.is_ascii_digit() || *n == b'+' || *n == b'-');
        if !(c.is_ascii_digit() || c == b'_' || c == b'.' || exponent_sign || exponent) {
            break;
        }
        end += 1;
    }
    let (number, suffix) = text.split_at(end);
    let suffix = match suffix {
        "" => None,
        other if ScalarTy::from_name(other).is_some_and(ScalarTy::is_float) => {
            ScalarTy::from_name(other)
        }
        other => return Err(format!("invalid suffix `{other}` on float literal `{text}`")),
    };
    let number: String = number.chars().filter(|&c| c != '_').collect();
    if number.parse::<f64>().is_err() {
        return Err(format!("malformed float literal `{text}`"));
    }
    Ok((number, suffix))
}
