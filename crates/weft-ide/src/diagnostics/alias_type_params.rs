//! The `alias-type-params` diagnostic.

// Diagnostic: alias-type-params
//
// Shown on the name of a type alias declared with type parameters.
pub(super) fn words() -> super::Words {
    super::Words::message("type aliases take no type parameters".to_owned())
}
