//! The `not-a-record` diagnostic.

use weft_hir::{Name, Site, Ty};

use super::sites::Sites;

// Diagnostic: not-a-record
//
// Shown on `e.x` (version 1.1) where `e` is not a record, or where its type is not
// known yet at that point (then a type annotation helps).
pub(super) fn words(sites: &Sites<'_>, site: &Site, ty: &Ty, field: &Name) -> super::Words {
    super::Words::message(if matches!(ty, Ty::Param(name) if name.as_str().starts_with('\'')) {
        format!(
            "the type of {} must be known to take its field `{field}`; add a type annotation",
            sites.subject(site)
        )
    } else {
        format!("{} has no fields (it has type `{ty}`), so no `.{field}`", sites.subject(site))
    })
}
