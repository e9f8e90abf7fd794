//! The `unresolved-name` diagnostic.

use weft_hir::{Db, Name, SourceFile};

// Diagnostic: unresolved-name
//
// Shown on a name that is not in scope, with a hint where one exists: the Weft
// spelling of another language's name (`np.sum`), or a name in scope with a similar
// spelling.
pub(super) fn words(db: &dyn Db, file: SourceFile, name: &Name) -> super::Words {
    super::Words {
        help: weft_hir::did_you_mean(db, file, name.as_str()),
        ..super::Words::message(format!("cannot find `{name}` in this scope"))
    }
}
