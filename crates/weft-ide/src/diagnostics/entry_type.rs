//! The `entry-type` diagnostic.

use weft_hir::Ty;

// Diagnostic: entry-type
//
// Shown on an entry point's parameter or result type that is not a scalar, an array
// of scalars or a tuple of those: values of other types cannot be given in or read
// back.
pub(super) fn words(ty: &Ty) -> super::Words {
    super::Words::message(format!(
        "an entry point takes and returns scalars, arrays of scalars or tuples of those, not `{ty}`"
    ))
}
