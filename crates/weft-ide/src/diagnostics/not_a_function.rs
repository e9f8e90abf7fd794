//! The `not-a-function` diagnostic.

use weft_hir::{Site, Ty};

use super::sites::Sites;

// Diagnostic: not-a-function
//
// Shown on an expression applied to arguments whose type is not a function type.
pub(super) fn words(sites: &Sites<'_>, site: &Site, ty: &Ty) -> super::Words {
    super::Words::message(format!(
        "{} is applied to arguments but has type `{ty}`",
        sites.subject(site)
    ))
}
