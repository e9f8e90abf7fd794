//! The `duplicate-field` diagnostic.

use weft_hir::Name;

// Diagnostic: duplicate-field
//
// Shown on a field written twice in one record expression or pattern, or named twice
// in one record type (version 1.1).
pub(super) fn in_record(name: &Name) -> super::Words {
    super::Words::message(format!("field `{name}` is written twice in one record"))
}

pub(super) fn in_record_type(name: &Name) -> super::Words {
    super::Words::message(format!("field `{name}` is written twice in one record type"))
}
