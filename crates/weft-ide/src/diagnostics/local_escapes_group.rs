//! The `local-escapes-group` diagnostic.

use weft_hir::Site;

use super::aspace_explanation::{Step, explain};
use super::sites::Sites;

// Diagnostic: local-escapes-group
//
// Shown on a `to_local` whose array becomes the result of its `map@group` body: local
// memory ends with its work-group, and a `map@group` result lives in global memory.
// Address-space inference explains it: the `local` label of the `to_local`, the
// bindings it flows through, and the `map@group` result that cannot hold it, each at
// its place.
pub(super) fn words(sites: &Sites<'_>, site: &Site, via: &[Site], group: &Site) -> super::Words {
    let mut steps = vec![Step {
        site: site.clone(),
        name: "to_local".to_owned(),
        reason: "local: materialised by `to_local` for the work-items of one work-group".to_owned(),
    }];
    for use_ in via.iter().rev() {
        steps.push(Step {
            site: use_.clone(),
            name: sites.quote(use_).unwrap_or_else(|| "it".to_owned()),
            reason: format!("flows through {}", sites.subject(use_)),
        });
    }
    let sink = (
        group.clone(),
        "a `map@group` result lives in global memory, after its work-group has ended: only {global}".to_owned(),
    );
    let (explained, chain) =
        explain(&steps, sink, weft_aspace::SpaceSet::single(weft_aspace::Space::Global));
    super::Words {
        message: format!("this local array escapes its work-group: {explained}"),
        related: chain.into_iter().map(|(at, text)| sites.related(&at, text)).collect(),
        help: Some("return a value computed from the local array (say, a `reduce@group` over it), or drop the `to_local`".to_owned()),
    }
}
