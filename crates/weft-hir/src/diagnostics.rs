//! User diagnostics of a file as plain data: syntax, names, imports, types, sizes and
//! levels, each with its stable code, its severity and its smallest range. weft-ide
//! words them (one file per code under its `diagnostics/`), and `weft check` and the
//! language server show exactly those words.
//!
//! Phases return diagnostics keyed by ids; this module is the only place that turns
//! them into ranges (through the source maps) and keeps one mistake to one error.

use weft_syntax::TextRange;
use weft_syntax::test_block::test_block;

use crate::expr_store::{BodyDiagnostic, body_with_source_map};
use crate::inference::{InferDiagnostic, infer};
use crate::items::{
    DefId, DefKind, DefLoc, ItemDeclaration, file_items, item_declarations, item_tree, parse_item,
};
use crate::name::Name;
use crate::scope::file_scope;
use crate::ty::ScalarTy;
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

/// A problem the front end found, as data: where it is and what the phase that found
/// it knows. weft-ide words it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HirDiagnostic {
    pub file: SourceFile,
    /// The smallest range that shows the mistake.
    pub range: TextRange,
    pub kind: HirDiagnosticKind,
}

/// What a [`HirDiagnostic`] is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HirDiagnosticKind {
    /// The parser's message.
    Syntax {
        message: String,
    },
    /// `import "path"` names no file; `target` is the path it was resolved to.
    UnresolvedImport {
        target: String,
        path: String,
    },
    /// The files of an import cycle, from this one back to it.
    ImportCycle {
        chain: Vec<String>,
    },
    DuplicateDefinition {
        name: Name,
    },
    /// `def ns.name` where `ns` is not a scalar type.
    BadNamespace {
        name: Name,
        namespace: String,
    },
    /// A malformed test block of an entry (a warning), with the test-block parser's
    /// message.
    TestBlock {
        message: String,
    },
    /// A problem found while lowering a body.
    Body(BodyDiagnostic),
    /// A type, size or level error of the def `def` (its sites are in the def's
    /// source map: `BodySourceMap::site_range`).
    Infer {
        def: DefLoc,
        diagnostic: InferDiagnostic,
    },
}

impl HirDiagnostic {
    /// Stable, kebab-case (`size-mismatch`).
    pub fn code(&self) -> &'static str {
        match &self.kind {
            HirDiagnosticKind::Syntax { .. } => "syntax-error",
            HirDiagnosticKind::UnresolvedImport { .. } => "unresolved-import",
            HirDiagnosticKind::ImportCycle { .. } => "import-cycle",
            HirDiagnosticKind::DuplicateDefinition { .. } => "duplicate-definition",
            HirDiagnosticKind::BadNamespace { .. } => "bad-namespace",
            HirDiagnosticKind::TestBlock { .. } => "test-block",
            HirDiagnosticKind::Body(diagnostic) => diagnostic.code(),
            HirDiagnosticKind::Infer { diagnostic, .. } => diagnostic.code(),
        }
    }

    pub fn severity(&self) -> Severity {
        match &self.kind {
            HirDiagnosticKind::TestBlock { .. } => Severity::Warning,
            HirDiagnosticKind::Syntax { .. }
            | HirDiagnosticKind::UnresolvedImport { .. }
            | HirDiagnosticKind::ImportCycle { .. }
            | HirDiagnosticKind::DuplicateDefinition { .. }
            | HirDiagnosticKind::BadNamespace { .. }
            | HirDiagnosticKind::Body(_)
            | HirDiagnosticKind::Infer { .. } => Severity::Error,
        }
    }
}

/// Every diagnostic of `file`, sorted by position: [`file_level_diagnostics`] and each
/// declaration's [`def_diagnostics`] moved to where it is now, with one error per range
/// ([`sort_and_merge`]).
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<HirDiagnostic> {
    let mut out = file_level_diagnostics(db, file);
    for def in item_tree(db, file).defs.iter() {
        let offset = crate::items::def_offset(db, def).unwrap_or_default();
        out.extend(def_diagnostics(db, DefId::new(db, def.clone())).iter().map(|d| {
            HirDiagnostic { file: d.file, range: d.range + offset, kind: d.kind.clone() }
        }));
    }
    sort_and_merge(&mut out, |d| (d.range, d.severity(), d.code()));
    out
}

/// Sorts diagnostics by position, and keeps one error per range: two errors on the same
/// text are one mistake seen twice (`for x in k` with `k` not an array is both indexed
/// and measured by the loop it stands for), and the first is kept. `key` gives a
/// diagnostic's range, severity and code; weft-ide merges its worded diagnostics so.
pub fn sort_and_merge<T>(
    diagnostics: &mut Vec<T>,
    key: impl Fn(&T) -> (TextRange, Severity, &'static str),
) {
    diagnostics.sort_by_key(|d| {
        let (range, _, code) = key(d);
        (range.start(), range.end(), code)
    });
    diagnostics.dedup_by(|later, first| {
        let (later, first) = (key(later), key(first));
        later.0 == first.0 && later.1 == Severity::Error && first.1 == Severity::Error
    });
}

/// The diagnostics of `file` that belong to no one declaration's names and types: syntax
/// errors and import errors, in the file's positions.
pub fn file_level_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<HirDiagnostic> {
    let mut out = Vec::new();
    let at = |range, kind| HirDiagnostic { file, range, kind };
    // From each stretch's own parse: the file's joined tree is not needed here.
    let mut imports = Vec::new();
    for item in &file_items(db, file).items {
        for syntax_error in parse_item(db, item.text).errors() {
            out.push(at(
                syntax_error.range + item.start,
                HirDiagnosticKind::Syntax { message: syntax_error.message.clone() },
            ));
        }
        for decl in item_declarations(db, item.text).iter() {
            if let ItemDeclaration::Import { path, range } = decl {
                imports.push((path, *range + item.start));
            }
        }
    }
    let scope = file_scope(db, file);
    for (idx, (path, range)) in imports.into_iter().enumerate() {
        if scope.imports.get(idx).is_some_and(Option::is_none) {
            let target = crate::scope::resolve_import_path(file.path(db), path);
            out.push(at(range, HirDiagnosticKind::UnresolvedImport { target, path: path.clone() }));
        }
        if let Some((_, cycle)) = scope.import_cycles.iter().find(|(i, _)| *i == idx) {
            let mut chain = vec![file.path(db).clone()];
            chain.extend(cycle.iter().cloned());
            out.push(at(range, HirDiagnosticKind::ImportCycle { chain }));
        }
    }
    out
}

/// The diagnostics of one declaration (duplicates, names, types, sizes, levels, its
/// test block), with positions from the start of its stretch of text
/// (`crate::def_offset` moves them into the file): position-independent, so an edit
/// re-runs this only for the declaration it touched.
#[salsa::tracked(returns(ref))]
pub fn def_diagnostics<'db>(db: &'db dyn Db, id: DefId<'db>) -> Vec<HirDiagnostic> {
    let def = id.loc(db);
    let file = def.file;
    let mut out = Vec::new();
    let at = |range, kind| HirDiagnostic { file, range, kind };
    let (body, source_map) = body_with_source_map(db, id);
    let name_range = source_map.name_range.unwrap_or_default();
    if def.dup > 0 {
        out.push(at(name_range, HirDiagnosticKind::DuplicateDefinition { name: def.name.clone() }));
    }
    // In a declaration with syntax errors, name and type errors are mostly echoes of the
    // syntax error: one mistake gives one error.
    // An error at a declaration's first keyword ("expected `)`, found `def`") belongs to
    // the declaration before it.
    let def_range = source_map.def_range.unwrap_or_default();
    let after_name = name_range.start();
    let syntax_errors = crate::items::def_item(db, id)
        .map_or(&[][..], |item| crate::items::parse_item(db, item).errors());
    if syntax_errors
        .iter()
        .any(|e| def_range.contains_range(e.range) && e.range.start() > after_name)
    {
        return out;
    }
    // `def f32.sum` (version 1.1) adds to a scalar type's namespace; nothing else has one.
    if let Some((namespace, _)) = def.name.as_str().split_once('.')
        && ScalarTy::from_name(namespace).is_none()
    {
        out.push(at(
            name_range,
            HirDiagnosticKind::BadNamespace {
                name: def.name.clone(),
                namespace: namespace.to_owned(),
            },
        ));
    }
    for diagnostic in &body.diagnostics {
        out.push(at(diagnostic.range(source_map), HirDiagnosticKind::Body(diagnostic.clone())));
    }
    for diagnostic in &infer(db, id).diagnostics {
        // A diagnostic about a type that contains an error type (printed `{unknown}`) is
        // a cascade of one already given: one mistake, one error.
        if diagnostic.mentions_error_type() {
            continue;
        }
        out.push(at(
            source_map.site_range(&diagnostic.site()),
            HirDiagnosticKind::Infer { def: def.clone(), diagnostic: diagnostic.clone() },
        ));
    }
    if def.kind == DefKind::Entry
        && let Some(weft_syntax::ast::Item::Def(node)) = crate::items::def_item_ast(db, def)
    {
        for test_error in test_block(&node).1 {
            out.push(at(
                test_error.range,
                HirDiagnosticKind::TestBlock { message: test_error.message },
            ));
        }
    }
    out
}
