//! The `unbound-size-param` diagnostic.

use weft_hir::Name;

// Diagnostic: unbound-size-param
//
// Shown on a def whose explicit size parameter `[k]` appears in no parameter's type:
// every size of a call must be inferable from its arguments (LANGUAGE.md section 2).
pub(super) fn words(name: &Name) -> super::Words {
    super::Words::message(format!(
        "the size parameter `{name}` appears in no parameter's type, so a call cannot infer it from its arguments; take it as an `i64` parameter instead (`({name}: i64)`)"
    ))
}
