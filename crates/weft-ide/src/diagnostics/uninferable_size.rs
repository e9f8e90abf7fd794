//! The `uninferable-size` diagnostic.

use weft_hir::Name;

// Diagnostic: uninferable-size
//
// Shown on a parameter whose size names something a call cannot learn from its
// arguments.
pub(super) fn words(name: &Name) -> super::Words {
    super::Words::message(format!(
        "this parameter's size uses `{name}`, which is neither an earlier `i64` parameter nor a whole dimension of an earlier parameter, so it cannot be inferred from the argument"
    ))
}
