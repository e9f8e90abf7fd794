//! The `test-block` warning.

// Diagnostic: test-block
//
// Shown (as a warning) on a malformed line of an entry's test block, with the
// test-block parser's words; `weft test` skips what it cannot read.
pub(super) fn words(message: &str) -> super::Words {
    super::Words::message(message.to_owned())
}
