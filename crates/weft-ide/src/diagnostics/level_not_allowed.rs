//! The `level-not-allowed` diagnostic.

// Diagnostic: level-not-allowed
//
// Shown on a level glued to a built-in that takes none (only the parallel combinators
// take one: LANGUAGE.md §6).
pub(super) fn words() -> super::Words {
    super::Words::message(
        "only `map`, `map2`..`map5`, `generate`, `reduce` and `scan` take a level".to_owned(),
    )
}
