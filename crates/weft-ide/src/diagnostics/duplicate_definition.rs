//! The `duplicate-definition` diagnostic.

use weft_hir::Name;

// Diagnostic: duplicate-definition
//
// Shown on the name of every declaration after the first of the same name in a file.
pub(super) fn words(name: &Name) -> super::Words {
    super::Words::message(format!("`{name}` is defined more than once"))
}
