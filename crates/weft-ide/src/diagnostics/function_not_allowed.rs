//! The `function-not-allowed` diagnostic.

// Diagnostic: function-not-allowed
//
// Shown where a function value would be stored: in a tuple, an array, a record, an
// `if` result, a loop parameter or an entry point's result (Weft is first order
// after inlining, so functions are only passed to calls).
pub(super) fn words(context: &str) -> super::Words {
    super::Words::message(format!("a function cannot be {context}"))
}
