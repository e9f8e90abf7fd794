//! The `import-cycle` diagnostic.

// Diagnostic: import-cycle
//
// Shown on an import that leads back to the importing file, with the files of the
// cycle in order.
pub(super) fn words(chain: &[String]) -> super::Words {
    super::Words::message(format!("import cycle: {}", chain.join(" -> ")))
}
