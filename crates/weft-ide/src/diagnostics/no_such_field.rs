//! The `no-such-field` diagnostic.

use weft_hir::{Name, Ty};

// Diagnostic: no-such-field
//
// Shown on `e.x` where `e` is a record without a field `x`.
pub(super) fn words(ty: &Ty, field: &Name) -> super::Words {
    super::Words::message(format!("no field `{field}` in a record of type `{ty}`"))
}
