//! The `to-local-outside-group` diagnostic.

use weft_hir::Site;

use super::aspace_explanation::{Step, explain};
use super::sites::Sites;

// Diagnostic: to-local-outside-group
//
// Shown on a `to_local` where no work-group shares the array (outside every
// combinator, or in the body of a combinator other than `map@group`): local memory
// belongs to a work-group. Address-space inference explains it, with the enclosing
// combinator that allows only global and private memory as a related place.
pub(super) fn words(
    sites: &Sites<'_>,
    site: &Site,
    context: Option<&(Site, String)>,
) -> super::Words {
    let steps = vec![Step {
        site: site.clone(),
        name: "to_local".to_owned(),
        reason: "local: `to_local` asks for memory shared by the work-items of one work-group"
            .to_owned(),
    }];
    let sink = match context {
        Some((ctx, name)) => (
            ctx.clone(),
            format!("in a `{name}` body no work-group shares memory: only {{global, private}}"),
        ),
        None => (
            site.clone(),
            "outside every combinator no work-group shares memory: only {global, private}"
                .to_owned(),
        ),
    };
    let allowed =
        weft_aspace::SpaceSet::single(weft_aspace::Space::Global).with(weft_aspace::Space::Private);
    let (explained, chain) = explain(&steps, sink, allowed);
    super::Words {
        message: format!("`to_local` outside a `map@group`: {explained}"),
        related: chain.into_iter().skip(1).map(|(at, text)| sites.related(&at, text)).collect(),
        help: Some("move it into the body of a `map@group`, or use `to_private` for a work-item's own copy".to_owned()),
    }
}
