//! The `unknown-type` diagnostic.

use weft_hir::Name;

// Diagnostic: unknown-type
//
// Shown on a type name that is neither a scalar type, a type alias nor a type
// parameter in scope.
pub(super) fn words(name: &Name) -> super::Words {
    super::Words::message(format!("cannot find type `{name}`"))
}
