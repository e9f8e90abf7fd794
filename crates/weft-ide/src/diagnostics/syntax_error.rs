//! The `syntax-error` diagnostic.

// Diagnostic: syntax-error
//
// Shown where the parser met a token it did not expect, with the parser's own words
// (`expected `)`, found `def``). The parser recovers, so the rest of the file is
// still checked; a declaration with a syntax error gets no name or type errors.
pub(super) fn words(message: &str) -> super::Words {
    super::Words::message(message.to_owned())
}
