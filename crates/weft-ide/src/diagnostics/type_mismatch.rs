//! The `type-mismatch` diagnostic.

use weft_hir::{Site, Ty};

use super::sites::Sites;

// Diagnostic: type-mismatch
//
// Shown on an expression whose type is not the one its place requires, or not of the
// class it requires (a number, an integer, a float). Silent when either type is
// unknown (an earlier error).
pub(super) fn words(sites: &Sites<'_>, site: &Site, expected: &Ty, found: &Ty) -> super::Words {
    super::Words::message(format!(
        "type mismatch: expected `{expected}`, but {} has type `{found}`",
        sites.subject(site)
    ))
}

/// `expected_side`: the type outside the class is the one required there and the
/// expression is of the class.
pub(super) fn class_words(
    sites: &Sites<'_>,
    site: &Site,
    class: &str,
    found: &Ty,
    expected_side: bool,
) -> super::Words {
    super::Words::message(if expected_side {
        format!(
            "type mismatch: expected `{found}`, but {} is {}",
            sites.subject(site),
            class_noun(class)
        )
    } else {
        format!("expected {class}, but {} has type `{found}`", sites.subject(site))
    })
}

/// "a numeric type" -> "a number", for "`x` is a number".
fn class_noun(class: &str) -> String {
    match class {
        "a numeric type" => "a number".to_owned(),
        "an integer type" => "an integer".to_owned(),
        "a float type" => "a float".to_owned(),
        other => format!("of {other}"),
    }
}
