//! The `size-mismatch` diagnostic.

use weft_hir::{ExprId, Site, SizeVar, TySize};

use super::sites::Sites;

// Diagnostic: size-mismatch
//
// Shown on an array whose size differs from the size its place requires, naming the
// expression that fixed the required size where another one did (and pointing at it),
// with help when a size is unknown (known only at run time).
pub(super) fn words(
    sites: &Sites<'_>,
    site: &Site,
    expected: &TySize,
    found: &TySize,
    origin: Option<ExprId>,
) -> super::Words {
    let mut related = Vec::new();
    let origin_site = origin.map(Site::Expr);
    let message = match origin_site.as_ref().filter(|o| sites.quote(o).is_some() && *o != site) {
        Some(origin_site) => {
            related.push(sites.related(
                origin_site,
                format!("{} fixes the {} here", sites.subject(origin_site), show_size(expected)),
            ));
            format!(
                "size mismatch: {} has {} but {} has {}",
                sites.subject(origin_site),
                show_size(expected),
                sites.subject(site),
                show_size(found)
            )
        }
        // Two unknown sizes: each comes from its own run-time value.
        None if show_size(expected) == show_size(found) => format!(
            "size mismatch: {} has an unknown size, known only at run time, and so has the array it must match; they may differ",
            sites.subject(site),
        ),
        None => format!(
            "size mismatch: expected {}, but {} has {}",
            show_size(expected),
            sites.subject(site),
            show_size(found)
        ),
    };
    let help = if size_is_unknown(expected) && size_is_unknown(found) {
        Some(
            "name one size and coerce the other to it: `let k = length a in map2 f a (b :> [k]t)` (checked at run time)"
                .to_owned(),
        )
    } else if size_is_unknown(expected) || size_is_unknown(found) {
        Some(
            "an unknown size cannot be used where a known one is required: bind the size with a `let`, or coerce with `:>`"
                .to_owned(),
        )
    } else {
        None
    };
    super::Words { message, related, help }
}

fn size_is_unknown(size: &TySize) -> bool {
    size.vars().iter().any(|v| matches!(v, SizeVar::Unknown(_)))
}

fn show_size(size: &TySize) -> String {
    if size_is_unknown(size) && size.as_var().is_some() {
        "an unknown size".to_owned()
    } else {
        format!("size {size}")
    }
}
