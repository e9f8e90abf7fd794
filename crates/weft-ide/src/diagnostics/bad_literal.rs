//! The `bad-literal` diagnostic.

// Diagnostic: bad-literal
//
// Shown on a literal that cannot be read (a malformed number or suffix), with the
// reason found while lowering it.
pub(super) fn words(message: &str) -> super::Words {
    super::Words::message(message.to_owned())
}
