//! The `too-many-indices` diagnostic.

use weft_hir::Ty;

// Diagnostic: too-many-indices
//
// Shown on an indexing with more indices than the array has dimensions.
pub(super) fn words(ty: &Ty, n_indices: usize) -> super::Words {
    let n_dims = ty.dims().0.len();
    super::Words::message(format!(
        "{n_indices} indices into a value of type `{ty}`, which has {n_dims} dimension{}",
        if n_dims == 1 { "" } else { "s" }
    ))
}
