//! The `apl-error` diagnostic of `.apl` files (docs/apl.md).

use weft_hir::{Db, Severity, SourceFile};

use crate::Diagnostic;

// Diagnostic: apl-error
//
// Shown on an `.apl` file's syntax and type errors, in APL's terms (`LENGTH ERROR`,
// `RANK ERROR`, …) as the APL front end (`weft-tail`) words them: what `weft check`
// prints and the server publishes for an `.apl` file.
pub(super) fn apl_errors(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    weft_tail::compile(file.text(db))
        .diagnostics
        .into_iter()
        .map(|d| Diagnostic {
            code: "apl-error",
            severity: Severity::Error,
            message: d.message,
            file,
            range: crate::apl::range(d.span),
            related: Vec::new(),
            help: None,
        })
        .collect()
}
