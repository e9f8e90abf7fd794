//! The `projection-out-of-range` diagnostic.

use weft_hir::Ty;

// Diagnostic: projection-out-of-range
//
// Shown on a projection `e.k` where the tuple has no component `k`.
pub(super) fn words(ty: &Ty, index: u32) -> super::Words {
    super::Words::message(format!("no component `{index}` in a value of type `{ty}`"))
}
