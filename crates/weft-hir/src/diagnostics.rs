//! User diagnostics of a file: syntax, names, imports, types, sizes and levels, with
//! stable codes and ranges. `weft check` and the language server show exactly these.
//!
//! Phases return diagnostics keyed by ids; this module is the only place that turns
//! them into ranges (through the source maps) and words. Wording follows the
//! rustc-dev-guide: lowercase, no final period, code in backticks, the smallest span.

use weft_syntax::TextRange;
use weft_syntax::test_block::test_block;

use crate::expr_store::{BodyDiagnostic, BodySourceMap, ExprId, body_with_source_map};
use crate::inference::{InferDiagnostic, Site, infer};
use crate::items::{DefId, DefKind, item_tree};
use crate::scope::file_scope;
use crate::ty::{ScalarTy, SizeVar, Ty, TySize};
use crate::{Db, SourceFile};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// Another place that explains a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelatedInfo {
    pub file: SourceFile,
    pub range: TextRange,
    pub message: String,
}

/// A diagnostic ready to show.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Stable, kebab-case (`size-mismatch`).
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: SourceFile,
    pub range: TextRange,
    pub related: Vec<RelatedInfo>,
    /// A separate suggestion, shown after the message.
    pub help: Option<String>,
}

/// Every diagnostic of `file`, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let error = |code, range, message: String| Diagnostic {
        code,
        severity: Severity::Error,
        message,
        file,
        range,
        related: Vec::new(),
        help: None,
    };
    let parse = crate::parse(db, file);
    for syntax_error in parse.errors() {
        out.push(error("syntax-error", syntax_error.range, syntax_error.message.clone()));
    }
    let tree = parse.tree();
    let scope = file_scope(db, file);
    let imports: Vec<_> = tree
        .items()
        .filter_map(|item| match item {
            weft_syntax::ast::Item::Import(import) => Some(import),
            _ => None,
        })
        .filter(|import| import.path().is_some())
        .collect();
    for (idx, import) in imports.iter().enumerate() {
        use weft_syntax::ast::AstNode;
        let range = import.syntax().text_range();
        let path = import.path().unwrap_or_default();
        if scope.imports.get(idx).is_some_and(Option::is_none) {
            let target = crate::scope::resolve_import_path(file.path(db), &path);
            out.push(error(
                "unresolved-import",
                range,
                format!("cannot find `{target}` for `import \"{path}\"`"),
            ));
        }
        if let Some((_, cycle)) = scope.import_cycles.iter().find(|(i, _)| *i == idx) {
            let mut chain = vec![file.path(db).clone()];
            chain.extend(cycle.iter().cloned());
            out.push(error("import-cycle", range, format!("import cycle: {}", chain.join(" -> "))));
        }
    }
    for def in item_tree(db, file).defs.iter() {
        let id = DefId::new(db, def.clone());
        let (body, source_map) = body_with_source_map(db, id);
        let name_range = source_map.name_range.unwrap_or_default();
        if def.dup > 0 {
            out.push(error(
                "duplicate-definition",
                name_range,
                format!("`{}` is defined more than once", def.name),
            ));
        }
        // In a declaration with syntax errors, name and type errors are mostly echoes
        // of the syntax error: one mistake gives one error.
        // An error at a declaration's first keyword ("expected `)`, found `def`") belongs
        // to the declaration before it.
        let def_range = source_map.def_range.unwrap_or_default();
        let after_name = name_range.start();
        if parse
            .errors()
            .iter()
            .any(|e| def_range.contains_range(e.range) && e.range.start() > after_name)
        {
            continue;
        }
        // `def f32.sum` (version 1.1) adds to a scalar type's namespace; nothing else has one.
        if let Some((namespace, _)) = def.name.as_str().split_once('.')
            && ScalarTy::from_name(namespace).is_none()
        {
            out.push(error(
                "bad-namespace",
                name_range,
                format!(
                    "`{}`: only a scalar type's namespace takes definitions (`def f32.sum`), and `{namespace}` is not a scalar type",
                    def.name
                ),
            ));
        }
        for diagnostic in &body.diagnostics {
            let mut rendered = render_body_diagnostic(file, source_map, diagnostic);
            if let BodyDiagnostic::UnresolvedName { name, .. } = diagnostic {
                rendered.help = crate::suggest::did_you_mean(db, file, name.as_str());
            }
            out.push(rendered);
        }
        let result = infer(db, id);
        let ctx = RenderCtx { db, file, source_map, text: file.text(db) };
        for diagnostic in &result.diagnostics {
            out.push(ctx.render(diagnostic));
        }
        if def.kind == DefKind::Entry
            && let Some(weft_syntax::ast::Item::Def(node)) = crate::items::def_ast(db, def)
        {
            for test_error in test_block(&node).1 {
                out.push(Diagnostic {
                    severity: Severity::Warning,
                    ..error("test-block", test_error.range, test_error.message)
                });
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    // A message about a type that contains an error type (printed `{unknown}`) is a
    // cascade of a diagnostic already given: one mistake gives one error.
    out.retain(|d| !d.message.contains("{unknown}"));
    // Two errors on the same text are one mistake seen twice (`for x in k` with `k` not
    // an array is both indexed and measured by the loop it stands for): keep the first.
    out.dedup_by(|later, first| {
        later.range == first.range
            && later.severity == Severity::Error
            && first.severity == Severity::Error
    });
    out
}

fn render_body_diagnostic(
    file: SourceFile,
    source_map: &BodySourceMap,
    diagnostic: &BodyDiagnostic,
) -> Diagnostic {
    let range_of = |expr: ExprId| source_map.expr_range(expr).unwrap_or_default();
    let (code, range, message) = match diagnostic {
        BodyDiagnostic::DuplicateField { range, name } => {
            ("duplicate-field", *range, format!("field `{name}` is written twice in one record"))
        }
        BodyDiagnostic::UnresolvedName { expr, name } => {
            ("unresolved-name", range_of(*expr), format!("cannot find `{name}` in this scope"))
        }
        BodyDiagnostic::UnknownLevel { expr, level } => (
            "unknown-level",
            range_of(*expr),
            format!(
                "unknown level `@{level}`; the levels are `@grid`, `@group`, `@thread` and `@seq`"
            ),
        ),
        BodyDiagnostic::LevelNotAllowed { expr } => (
            "level-not-allowed",
            range_of(*expr),
            "only `map`, `map2`..`map5`, `generate`, `reduce` and `scan` take a level".to_owned(),
        ),
        BodyDiagnostic::BadLiteral { expr, message } => {
            ("bad-literal", range_of(*expr), message.clone())
        }
        BodyDiagnostic::BadProjection { expr } => {
            ("bad-projection", range_of(*expr), "a tuple projection is `.0`, `.1`, ...".to_owned())
        }
        BodyDiagnostic::SliceInUpdate { expr } => (
            "slice-in-update",
            range_of(*expr),
            "`with [...] = v` replaces one element or row: write indices, not a slice".to_owned(),
        ),
    };
    Diagnostic {
        code,
        severity: Severity::Error,
        message,
        file,
        range,
        related: Vec::new(),
        help: None,
    }
}

struct RenderCtx<'a> {
    db: &'a dyn Db,
    file: SourceFile,
    source_map: &'a BodySourceMap,
    text: &'a str,
}

/// "a numeric type" -> "a number", for "`x` is a number".
fn class_noun(class: &str) -> String {
    match class {
        "a numeric type" => "a number".to_owned(),
        "an integer type" => "an integer".to_owned(),
        "a float type" => "a float".to_owned(),
        other => format!("of {other}"),
    }
}

fn size_is_unknown(size: &TySize) -> bool {
    size.vars().iter().any(|v| matches!(v, SizeVar::Unknown(_)))
}

fn show_size(size: &TySize) -> String {
    if size_is_unknown(size) && size.as_var().is_some() {
        "an unknown size".to_owned()
    } else {
        format!("size {size}")
    }
}

impl RenderCtx<'_> {
    fn range(&self, site: &Site) -> TextRange {
        let map = self.source_map;
        let fallback = map.name_range.unwrap_or_default();
        match site {
            Site::Expr(expr) => map.expr_range(*expr),
            Site::Pat(pat) => map.pat_range(*pat),
            Site::Param(idx) => map.param_ty_ranges.get(*idx).copied(),
            Site::Ret => map.ret_ty_range,
            Site::Name => map.name_range,
        }
        .filter(|r| !r.is_empty())
        .unwrap_or(fallback)
    }

    /// The source text of a site if it is short enough to quote.
    fn quote(&self, site: &Site) -> Option<String> {
        let range = self.range(site);
        let text = self.text.get(usize::from(range.start())..usize::from(range.end()))?;
        (text.len() <= 40 && !text.contains('\n')).then(|| text.to_owned())
    }

    fn render(&self, diagnostic: &InferDiagnostic) -> Diagnostic {
        let mut related = Vec::new();
        let mut help = None;
        let subject = |site: &Site| {
            self.quote(site).map_or("this expression".to_owned(), |t| format!("`{t}`"))
        };
        let (code, site, message): (&'static str, Site, String) = match diagnostic {
            InferDiagnostic::TypeMismatch { site, expected, found } => (
                "type-mismatch",
                site.clone(),
                format!(
                    "type mismatch: expected `{expected}`, but {} has type `{found}`",
                    subject(site)
                ),
            ),
            InferDiagnostic::SizeMismatch { site, expected, found, origin } => {
                let origin_site = origin.map(Site::Expr);
                let message = match origin_site
                    .as_ref()
                    .filter(|o| self.quote(o).is_some() && *o != site)
                {
                    Some(origin_site) => {
                        related.push(RelatedInfo {
                            file: self.file,
                            range: self.range(origin_site),
                            message: format!(
                                "{} fixes the {} here",
                                subject(origin_site),
                                show_size(expected)
                            ),
                        });
                        format!(
                            "size mismatch: {} has {} but {} has {}",
                            subject(origin_site),
                            show_size(expected),
                            subject(site),
                            show_size(found)
                        )
                    }
                    // Two unknown sizes: each comes from its own run-time value.
                    None if show_size(expected) == show_size(found) => format!(
                        "size mismatch: {} has an unknown size, known only at run time, and so has the array it must match; they may differ",
                        subject(site),
                    ),
                    None => format!(
                        "size mismatch: expected {}, but {} has {}",
                        show_size(expected),
                        subject(site),
                        show_size(found)
                    ),
                };
                if size_is_unknown(expected) && size_is_unknown(found) {
                    help = Some(
                        "name one size and coerce the other to it: `let k = length a in map2 f a (b :> [k]t)` (checked at run time)"
                            .to_owned(),
                    );
                } else if size_is_unknown(expected) || size_is_unknown(found) {
                    help = Some(
                        "an unknown size cannot be used where a known one is required: bind the size with a `let`, or coerce with `:>`"
                            .to_owned(),
                    );
                }
                ("size-mismatch", site.clone(), message)
            }
            InferDiagnostic::ClassMismatch { site, class, found, expected_side: true } => (
                "type-mismatch",
                site.clone(),
                format!(
                    "type mismatch: expected `{found}`, but {} is {}",
                    subject(site),
                    class_noun(class)
                ),
            ),
            InferDiagnostic::ClassMismatch { site, class, found, expected_side: false } => (
                "type-mismatch",
                site.clone(),
                format!("expected {class}, but {} has type `{found}`", subject(site)),
            ),
            InferDiagnostic::NotAFunction { site, ty } => (
                "not-a-function",
                site.clone(),
                format!("{} is applied to arguments but has type `{ty}`", subject(site)),
            ),
            InferDiagnostic::NotAnArray { site, ty } => (
                "not-an-array",
                site.clone(),
                format!("{} is indexed but has type `{ty}`", subject(site)),
            ),
            InferDiagnostic::TooManyIndices { site, ty, n_indices } => (
                "too-many-indices",
                site.clone(),
                format!(
                    "{n_indices} indices into a value of type `{ty}`, which has {} dimension{}",
                    ty.dims().0.len(),
                    if ty.dims().0.len() == 1 { "" } else { "s" }
                ),
            ),
            InferDiagnostic::NotARecord { site, ty, field } => (
                "not-a-record",
                site.clone(),
                if matches!(ty, Ty::Param(name) if name.as_str().starts_with('\'')) {
                    format!(
                        "the type of {} must be known to take its field `{field}`; add a type annotation",
                        subject(site)
                    )
                } else {
                    format!(
                        "{} has no fields (it has type `{ty}`), so no `.{field}`",
                        subject(site)
                    )
                },
            ),
            InferDiagnostic::NoSuchField { site, ty, field } => (
                "no-such-field",
                site.clone(),
                format!("no field `{field}` in a record of type `{ty}`"),
            ),
            InferDiagnostic::DuplicateField { site, name } => (
                "duplicate-field",
                site.clone(),
                format!("field `{name}` is written twice in one record type"),
            ),
            InferDiagnostic::NotATuple { site, ty } => (
                "not-a-tuple",
                site.clone(),
                format!("{} is projected but has type `{ty}`", subject(site)),
            ),
            InferDiagnostic::ProjectionOutOfRange { site, ty, index } => (
                "projection-out-of-range",
                site.clone(),
                format!("no component `{index}` in a value of type `{ty}`"),
            ),
            InferDiagnostic::CannotInfer { site } => (
                "cannot-infer",
                site.clone(),
                format!("cannot infer the type of {}; add a type annotation", subject(site)),
            ),
            InferDiagnostic::UnknownType { site, name } => {
                ("unknown-type", site.clone(), format!("cannot find type `{name}`"))
            }
            InferDiagnostic::UnknownSize { site, name } => (
                "unknown-size",
                site.clone(),
                format!(
                    "cannot find size `{name}`; sizes are size parameters, `i64` parameters or `i64` lets in scope"
                ),
            ),
            InferDiagnostic::LiteralOutOfRange { site, ty } => (
                "literal-out-of-range",
                site.clone(),
                format!("literal {} is out of range for `{}`", subject(site), ty.name()),
            ),
            InferDiagnostic::FunctionNotAllowed { site, context } => {
                ("function-not-allowed", site.clone(), format!("a function cannot be {context}"))
            }
            InferDiagnostic::EntryType { site, ty } => (
                "entry-type",
                site.clone(),
                format!(
                    "an entry point takes and returns scalars, arrays of scalars or tuples of those, not `{ty}`"
                ),
            ),
            InferDiagnostic::RecursionCycle { cycle } => {
                let names: Vec<String> = cycle.iter().map(|n| format!("`{n}`")).collect();
                help = Some("Weft has no recursion; use `loop`".to_owned());
                ("recursion-cycle", Site::Name, format!("recursive calls: {}", names.join(" -> ")))
            }
            InferDiagnostic::ExistentialOutsideReturn { site } => {
                help = Some("name the size with a parameter (`[n]t`), or write `[]t`".to_owned());
                (
                    "misplaced-existential",
                    site.clone(),
                    "`?[k].` (sizes the value determines) is allowed only in a return type"
                        .to_owned(),
                )
            }
            InferDiagnostic::AliasTypeParams => {
                ("alias-type-params", Site::Name, "type aliases take no type parameters".to_owned())
            }
            InferDiagnostic::IllegalLevel { site, found, context, legal } => (
                "illegal-level",
                site.clone(),
                format!("`{found}` is not allowed {context}; legal here: {legal}"),
            ),
            InferDiagnostic::LocalEscapesGroup { site, via, group } => {
                // Address-space inference explains it: the `local` label of the
                // `to_local`, the bindings it flows through, and the `map@group` result
                // (stored in global memory) that cannot hold it.
                let mut steps: Vec<(Site, String, String)> = vec![(
                    site.clone(),
                    "to_local".to_owned(),
                    "local: materialised by `to_local` for the work-items of one work-group"
                        .to_owned(),
                )];
                for use_ in via.iter().rev() {
                    let name = self.quote(use_).unwrap_or_else(|| "it".to_owned());
                    steps.push((use_.clone(), name, format!("flows through {}", subject(use_))));
                }
                let sink = (
                    group.clone(),
                    "a `map@group` result lives in global memory, after its work-group has ended: only {global}".to_owned(),
                );
                let (explained, chain) = aspace_explanation(&steps, sink, aspace_global_only());
                let message = format!("this local array escapes its work-group: {explained}");
                for (at, text) in chain {
                    related.push(RelatedInfo {
                        file: self.file,
                        range: self.range(&at),
                        message: text,
                    });
                }
                help = Some("return a value computed from the local array (say, a `reduce@group` over it), or drop the `to_local`".to_owned());
                ("local-escapes-group", site.clone(), message)
            }
            InferDiagnostic::EntryWithoutReturnType => (
                "missing-return-type",
                Site::Name,
                "an entry point needs a return type (only a `def` may omit it)".to_owned(),
            ),
            InferDiagnostic::UninferableParamSize { site, name } => (
                "uninferable-size",
                site.clone(),
                format!(
                    "this parameter's size uses `{name}`, which is neither an earlier `i64` parameter nor a whole dimension of an earlier parameter, so it cannot be inferred from the argument"
                ),
            ),
            InferDiagnostic::ToLocalOutsideGroup { site, context } => {
                let steps = vec![(
                    site.clone(),
                    "to_local".to_owned(),
                    "local: `to_local` asks for memory shared by the work-items of one work-group"
                        .to_owned(),
                )];
                let sink = match context {
                    Some((ctx, name)) => (
                        ctx.clone(),
                        format!("in a `{name}` body no work-group shares memory: only {{global, private}}"),
                    ),
                    None => (
                        site.clone(),
                        "outside every combinator no work-group shares memory: only {global, private}".to_owned(),
                    ),
                };
                let (explained, chain) = aspace_explanation(&steps, sink, aspace_no_local());
                let message = format!("`to_local` outside a `map@group`: {explained}");
                for (at, text) in chain.into_iter().skip(1) {
                    related.push(RelatedInfo {
                        file: self.file,
                        range: self.range(&at),
                        message: text,
                    });
                }
                help = Some("move it into the body of a `map@group`, or use `to_private` for a work-item's own copy".to_owned());
                ("to-local-outside-group", site.clone(), message)
            }
        };
        let _ = self.db;
        Diagnostic {
            code,
            severity: Severity::Error,
            message,
            file: self.file,
            range: self.range(&site),
            related,
            help,
        }
    }
}

/// Runs address-space inference (`weft-aspace`) on the chain of a local array: a
/// pointer declared `local` at `steps[0]`, flowing through the other steps, into a
/// slot at `sink` that allows only `allowed`. Returns the inference's message and its
/// chain of reasons, each at its source site.
fn aspace_explanation(
    steps: &[(Site, String, String)],
    sink: (Site, String),
    allowed: weft_aspace::SpaceSet,
) -> (String, Vec<(Site, String)>) {
    use weft_aspace::{Decl, Fact, Func, FuncKind, Program, Ptr, PtrId, Reason, Space, Target};
    let mut sites: Vec<Site> = steps.iter().map(|(s, _, _)| s.clone()).collect();
    sites.push(sink.0.clone());
    let reason = |i: usize, text: &str| Reason::new(text, Some(weft_aspace::Site(i as u32)));
    let mut ptrs = Vec::new();
    let mut facts = Vec::new();
    for (i, (_, name, text)) in steps.iter().enumerate() {
        let decl = if i == 0 { Decl::In(Space::Local) } else { Decl::Generic };
        ptrs.push(Ptr { name: name.clone(), decl, reason: reason(i, text) });
        if i > 0 {
            facts.push(Fact::Flow {
                from: PtrId(i as u32 - 1),
                to: PtrId(i as u32),
                reason: reason(i, text),
            });
        }
    }
    let last = PtrId(steps.len() as u32 - 1);
    facts.push(Fact::Bound { ptr: last, allowed, reason: reason(steps.len(), &sink.1) });
    let program = Program {
        funcs: vec![Func {
            name: "body".to_owned(),
            kind: FuncKind::Helper,
            params: Vec::new(),
            ret: None,
            ptrs,
            facts,
        }],
    };
    let inference = weft_aspace::infer(&program, Target::OpenCl12);
    let site_of = |r: &Reason| {
        r.site.and_then(|s| sites.get(s.0 as usize).cloned()).unwrap_or_else(|| sink.0.clone())
    };
    match inference.diagnostics().first() {
        Some(d) => {
            let mut chain: Vec<(Site, String)> = Vec::new();
            for r in &d.chain {
                let item = (site_of(r), r.text.clone());
                if !chain.contains(&item) {
                    chain.push(item);
                }
            }
            (d.message.clone(), chain)
        }
        // The engine accepts it only if the bound allows `local`: not for these callers.
        None => (sink.1.clone(), Vec::new()),
    }
}

fn aspace_global_only() -> weft_aspace::SpaceSet {
    weft_aspace::SpaceSet::single(weft_aspace::Space::Global)
}

fn aspace_no_local() -> weft_aspace::SpaceSet {
    weft_aspace::SpaceSet::single(weft_aspace::Space::Global).with(weft_aspace::Space::Private)
}

impl Ty {
    /// Whether a diagnostic about this type would be noise.
    pub fn is_unknown(&self) -> bool {
        self.contains_error()
    }
}
