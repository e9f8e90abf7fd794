//! The `slice-in-update` diagnostic.

// Diagnostic: slice-in-update
//
// Shown on `xs with [a:b] = v`: an update replaces one element or row, so it takes
// indices, not slices.
pub(super) fn words() -> super::Words {
    super::Words::message(
        "`with [...] = v` replaces one element or row: write indices, not a slice".to_owned(),
    )
}
