//! The `not-an-array` diagnostic.

use weft_hir::{Site, Ty};

use super::sites::Sites;

// Diagnostic: not-an-array
//
// Shown on an expression that is indexed (or measured) but is not an array.
pub(super) fn words(sites: &Sites<'_>, site: &Site, ty: &Ty) -> super::Words {
    super::Words::message(format!("{} is indexed but has type `{ty}`", sites.subject(site)))
}
