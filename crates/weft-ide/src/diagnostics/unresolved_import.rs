//! The `unresolved-import` diagnostic.

// Diagnostic: unresolved-import
//
// Shown on an `import "path"` whose file does not exist, with the path it was
// resolved to (relative to the importing file).
pub(super) fn words(target: &str, path: &str) -> super::Words {
    super::Words::message(format!("cannot find `{target}` for `import \"{path}\"`"))
}
