//! The `forced-copy` information diagnostic: where the memory layer had to copy an
//! array because its layout is not one LMAD of the operand's memory, or because an
//! entry result must be row-major, with the reason and the size of the copy.

use weft_hir::{Db, DefId, Severity, SourceFile};

use weft_hir::DefLoc;
use weft_mem::CopyInfo;

// Diagnostic: forced-copy
//
// Shown (as information) where an array is copied although the program asks for no
// copy: `flatten` of a layout whose outer dimensions do not merge (a transposed array),
// a slice with a variable stride and no start, or an entry result that is not
// row-major at offset 0. The message gives the reason and the size of the copy in
// bytes, symbolic in the sizes (`4*n*m bytes`). Each file reports the copies in its own
// code, as its own entries use it; a copy inside an imported def is not reported.
///
/// `copies`: the forced copies of the file's functions, each with the def of the function
/// that holds it.
pub(super) fn forced_copies<'a>(
    db: &dyn Db,
    file: SourceFile,
    copies: impl Iterator<Item = (&'a DefLoc, &'a CopyInfo)>,
) -> Vec<crate::Diagnostic> {
    let mut out: Vec<crate::Diagnostic> = Vec::new();
    for (function_def, copy) in copies {
        let (def, range) = match &copy.origin {
            Some(origin) => {
                let id = DefId::new(db, origin.def.clone());
                (&origin.def, weft_hir::source_map(db, id).expr_range(origin.expr))
            }
            None => {
                let id = DefId::new(db, function_def.clone());
                (function_def, weft_hir::source_map(db, id).name_range())
            }
        };
        let Some(range) = range else { continue };
        if def.file != file {
            continue;
        }
        let message = match &copy.bytes {
            Some(bytes) => format!("{} ({bytes} bytes)", copy.reason.message()),
            None => format!("{} (its size is known at run time)", copy.reason.message()),
        };
        // A def inlined or specialised several times copies at each use: one message.
        if out.iter().any(|d| d.range == range && d.message == message) {
            continue;
        }
        out.push(crate::Diagnostic {
            code: "forced-copy",
            severity: Severity::Info,
            message,
            file,
            range,
            related: Vec::new(),
            help: None,
        });
    }
    out
}
