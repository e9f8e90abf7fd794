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
use crate::items::{DefId, DefKind, DefLoc, item_tree};
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

/// Every diagnostic of `file`, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<HirDiagnostic> {
    let mut out = Vec::new();
    let at = |range, kind| HirDiagnostic { file, range, kind };
    let parse = crate::parse(db, file);
    for syntax_error in parse.errors() {
        out.push(at(
            syntax_error.range,
            HirDiagnosticKind::Syntax { message: syntax_error.message.clone() },
        ));
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
            out.push(at(range, HirDiagnosticKind::UnresolvedImport { target, path: path.clone() }));
        }
        if let Some((_, cycle)) = scope.import_cycles.iter().find(|(i, _)| *i == idx) {
            let mut chain = vec![file.path(db).clone()];
            chain.extend(cycle.iter().cloned());
            out.push(at(range, HirDiagnosticKind::ImportCycle { chain }));
        }
    }
    for def in item_tree(db, file).defs.iter() {
        let id = DefId::new(db, def.clone());
        let (body, source_map) = body_with_source_map(db, id);
        let name_range = source_map.name_range.unwrap_or_default();
        if def.dup > 0 {
            out.push(at(
                name_range,
                HirDiagnosticKind::DuplicateDefinition { name: def.name.clone() },
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
            // A diagnostic about a type that contains an error type (printed
            // `{unknown}`) is a cascade of one already given: one mistake, one error.
            if diagnostic.mentions_error_type() {
                continue;
            }
            out.push(at(
                source_map.site_range(&diagnostic.site()),
                HirDiagnosticKind::Infer { def: def.clone(), diagnostic: diagnostic.clone() },
            ));
        }
        if def.kind == DefKind::Entry
            && let Some(weft_syntax::ast::Item::Def(node)) = crate::items::def_ast(db, def)
        {
            for test_error in test_block(&node).1 {
                out.push(at(
                    test_error.range,
                    HirDiagnosticKind::TestBlock { message: test_error.message },
                ));
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code()));
    // Two errors on the same text are one mistake seen twice (`for x in k` with `k` not
    // an array is both indexed and measured by the loop it stands for): keep the first.
    out.dedup_by(|later, first| {
        later.range == first.range
            && later.severity() == Severity::Error
            && first.severity() == Severity::Error
    });
    out
}
