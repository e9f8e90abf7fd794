//! The `unknown-size` diagnostic.

use weft_hir::Name;

// Diagnostic: unknown-size
//
// Shown on a size name in a type that is not a size in scope.
pub(super) fn words(name: &Name) -> super::Words {
    super::Words::message(format!(
        "cannot find size `{name}`; sizes are size parameters, `i64` parameters or `i64` lets in scope"
    ))
}
