//! The `recursion-cycle` diagnostic.

use weft_hir::Name;

// Diagnostic: recursion-cycle
//
// Shown on the name of a def that calls itself, directly or through others, with the
// calls of the cycle.
pub(super) fn words(cycle: &[Name]) -> super::Words {
    let names: Vec<String> = cycle.iter().map(|n| format!("`{n}`")).collect();
    super::Words {
        help: Some("Weft has no recursion; use `loop`".to_owned()),
        ..super::Words::message(format!("recursive calls: {}", names.join(" -> ")))
    }
}
