//! The `bad-namespace` diagnostic.

use weft_hir::Name;

// Diagnostic: bad-namespace
//
// Shown on `def ns.name` where `ns` is not a scalar type: only a scalar type's
// namespace takes definitions (`def f32.sum`, version 1.1).
pub(super) fn words(name: &Name, namespace: &str) -> super::Words {
    super::Words::message(format!(
        "`{name}`: only a scalar type's namespace takes definitions (`def f32.sum`), and `{namespace}` is not a scalar type"
    ))
}
