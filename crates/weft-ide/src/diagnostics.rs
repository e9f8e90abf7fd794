//! Diagnostics of a file: exactly `weft_hir::file_diagnostics` (what `weft check`
//! prints), with file ids turned into paths.

use weft_hir::{RootDatabase, Severity};
use weft_syntax::TextRange;

/// A diagnostic ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable, kebab-case (`size-mismatch`).
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    pub related: Vec<RelatedInfo>,
    pub help: Option<String>,
}

/// Another place that explains a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedInfo {
    pub path: String,
    pub range: TextRange,
    pub message: String,
}

pub(crate) fn diagnostics(db: &RootDatabase, path: &str) -> Vec<Diagnostic> {
    let Some(file) = db.file(path) else { return Vec::new() };
    weft_hir::file_diagnostics(db, file)
        .iter()
        .map(|d| Diagnostic {
            code: d.code,
            severity: d.severity,
            message: d.message.clone(),
            range: d.range,
            related: d
                .related
                .iter()
                .map(|r| RelatedInfo {
                    path: r.file.path(db).clone(),
                    range: r.range,
                    message: r.message.clone(),
                })
                .collect(),
            help: d.help.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::check_diagnostics;

    #[test]
    fn reports_type_errors_with_codes() {
        check_diagnostics(
            r#"
def f (x: i32) : i32 = x + 1.5
def g (x: f32) : f32 = x
"#,
            expect![[r#"
                27..30 error[type-mismatch]: type mismatch: expected `i32`, but `1.5` is a float
            "#]],
        );
    }
}
