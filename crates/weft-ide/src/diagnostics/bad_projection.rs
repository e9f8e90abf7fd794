//! The `bad-projection` diagnostic.

// Diagnostic: bad-projection
//
// Shown on a tuple projection that is not a component number (`t.x` on a tuple).
pub(super) fn words() -> super::Words {
    super::Words::message("a tuple projection is `.0`, `.1`, ...".to_owned())
}
