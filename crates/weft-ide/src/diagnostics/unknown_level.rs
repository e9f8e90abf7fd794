//! The `unknown-level` diagnostic.

use weft_hir::Name;

// Diagnostic: unknown-level
//
// Shown on `map@name` where `name` is not one of the four levels (LANGUAGE.md §6).
pub(super) fn words(level: &Name) -> super::Words {
    super::Words::message(format!(
        "unknown level `@{level}`; the levels are `@grid`, `@group`, `@thread` and `@seq`"
    ))
}
