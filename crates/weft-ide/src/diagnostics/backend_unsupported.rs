//! The `backend-unsupported` warning: an entry the reference interpreter runs but the
//! OpenCL back end cannot compile yet, at the construct it lacks. Without it, `weft
//! check` passed such a program and only `weft run` said no.

use weft_hir::{Db, DefId, Severity, SourceFile};

use crate::kernels::CompileError;

// Diagnostic: backend-unsupported
//
// Shown (as a warning) on the expression of an entry that the OpenCL back end does not
// support yet (an array-valued `if` inside a kernel whose size is known only inside it,
// a scan whose elements are arrays, ...): `weft run --backend interp` runs it,
// `weft run` on a device says the same thing with the same position. A construct in an
// imported def is reported on the entry's name.

/// The warnings of `file`'s entries: `error_of` says why an entry cannot be compiled, if
/// it cannot (and `None` for an entry not to check).
pub(crate) fn backend_unsupported(
    db: &dyn Db,
    file: SourceFile,
    error_of: &dyn Fn(DefId<'_>) -> Option<CompileError>,
) -> Vec<crate::Diagnostic> {
    let mut out: Vec<crate::Diagnostic> = Vec::new();
    for def in &crate::program::unblocked_entries(db, file) {
        if def.file != file {
            continue;
        }
        let entry_id = DefId::new(db, def.clone());
        let Some(error) = error_of(entry_id) else { continue };
        if !error.unsupported {
            continue;
        }
        let at_expr = error.origin.as_ref().filter(|o| o.def.file == file).and_then(|origin| {
            let id = DefId::new(db, origin.def.clone());
            weft_hir::source_map(db, id).expr_range(origin.expr)
        });
        let range = at_expr.or(weft_hir::source_map(db, entry_id).name_range());
        let Some(range) = range else { continue };
        let name = &def.name;
        let message = format!("entry `{name}`: {}", error.message);
        if out.iter().any(|d| d.range == range && d.message == message) {
            continue;
        }
        out.push(crate::Diagnostic {
            code: "backend-unsupported",
            severity: Severity::Warning,
            message,
            file,
            range,
            related: Vec::new(),
            help: Some(
                "`weft run --backend interp` runs it with the reference interpreter".to_owned(),
            ),
        });
    }
    out
}
