//! The `cannot-infer` diagnostic.

use weft_hir::Site;

use super::sites::Sites;

// Diagnostic: cannot-infer
//
// Shown on an indexed expression whose type is not known yet at that point (so it
// cannot be checked to be an array): a type annotation fixes it.
pub(super) fn words(sites: &Sites<'_>, site: &Site) -> super::Words {
    super::Words::message(format!(
        "cannot infer the type of {}; add a type annotation",
        sites.subject(site)
    ))
}
