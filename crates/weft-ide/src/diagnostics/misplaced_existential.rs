//! The `misplaced-existential` diagnostic.

// Diagnostic: misplaced-existential
//
// Shown on `?[k].t` (version 1.1) anywhere but a def's or a local function's return
// type.
pub(super) fn words() -> super::Words {
    super::Words {
        help: Some("name the size with a parameter (`[n]t`), or write `[]t`".to_owned()),
        ..super::Words::message(
            "`?[k].` (sizes the value determines) is allowed only in a return type".to_owned(),
        )
    }
}
