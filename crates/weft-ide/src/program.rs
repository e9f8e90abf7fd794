//! A file's entries in the core IR (weft-core), shared by the memory layout
//! ([`crate::memory`]) and the compiled kernels ([`crate::kernels`]).
//!
//! [`file_program`] is a salsa query that reads only position-independent queries:
//! the error check goes through [`checked_file`], which compares equal whenever the
//! file has no errors, and elaboration reads bodies, not source maps. So an edit that
//! moves text re-runs nothing downstream, and an edit inside a def re-runs it once for
//! the file. A file with errors, or one elaboration does not support, has no program.

use std::sync::Arc;

use weft_core::{CheckedFile, Program};
use weft_hir::{Db, SourceFile};

/// The core program of `file`'s entries; `None` when the file has errors or
/// elaboration does not support it. In debug builds (tests) the IR is validated, and
/// one that fails gives `None`: an internal bug then leaves the features that need it
/// silent rather than wrong, and never panics (STYLE.md §5 validates in tests and
/// debug builds only).
#[salsa::tracked(returns(ref))]
pub(crate) fn file_program(db: &dyn Db, file: SourceFile) -> Option<Arc<Program>> {
    if crate::apl::is_apl(file.path(db)) {
        return crate::apl::core_program(db, file).map(Arc::new);
    }
    let checked = checked_file(db, file).as_ref()?.0;
    let program = weft_core::lower_file(db, checked).ok()?;
    if cfg!(debug_assertions) && !weft_core::validate(&program).is_empty() {
        return None;
    }
    Some(Arc::new(program))
}

/// [`CheckedFile`] compared by its file, so that the queries above depend on "the
/// file has no errors" and not on the diagnostics' ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checked(pub(crate) CheckedFile);

impl PartialEq for Checked {
    fn eq(&self, other: &Checked) -> bool {
        self.0.file() == other.0.file()
    }
}

impl Eq for Checked {}

/// `Some` when `file` has no error diagnostics.
#[salsa::tracked(returns(ref))]
pub(crate) fn checked_file(db: &dyn Db, file: SourceFile) -> Option<Checked> {
    CheckedFile::new(db, file).map(Checked)
}
