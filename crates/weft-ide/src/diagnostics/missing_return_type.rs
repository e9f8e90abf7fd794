//! The `missing-return-type` diagnostic.

// Diagnostic: missing-return-type
//
// Shown on the name of an entry point written without a return type.
pub(super) fn words() -> super::Words {
    super::Words::message(
        "an entry point needs a return type (only a `def` may omit it)".to_owned(),
    )
}
