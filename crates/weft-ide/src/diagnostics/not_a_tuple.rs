//! The `not-a-tuple` diagnostic.

use weft_hir::{Site, Ty};

use super::sites::Sites;

// Diagnostic: not-a-tuple
//
// Shown on a projection `e.0` where `e` is not a tuple.
pub(super) fn words(sites: &Sites<'_>, site: &Site, ty: &Ty) -> super::Words {
    super::Words::message(format!("{} is projected but has type `{ty}`", sites.subject(site)))
}
