//! The `illegal-level` diagnostic.

// Diagnostic: illegal-level
//
// Shown on a written level that the levels around it forbid (LANGUAGE.md §6: a
// `@grid` inside a `@group` body, say), with the levels legal there.
pub(super) fn words(found: &str, context: &str, legal: &str) -> super::Words {
    super::Words::message(format!("`{found}` is not allowed {context}; legal here: {legal}"))
}
