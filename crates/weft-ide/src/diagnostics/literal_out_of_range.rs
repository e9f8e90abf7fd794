//! The `literal-out-of-range` diagnostic.

use weft_hir::{ScalarTy, Site};

use super::sites::Sites;

// Diagnostic: literal-out-of-range
//
// Shown on a literal whose value its type cannot hold (LANGUAGE.md §1).
pub(super) fn words(sites: &Sites<'_>, site: &Site, ty: ScalarTy) -> super::Words {
    super::Words::message(format!(
        "literal {} is out of range for `{}`",
        sites.subject(site),
        ty.name()
    ))
}
