//! Rendering run-time errors with source positions: the [`Origin`] of the failing
//! expression goes through the HIR source map to a range, and a line index to
//! `path:line:col` (1-based; columns in characters). Positions are computed only
//! here, never stored in the IR (STYLE.md §3).

use weft_hir::{Db, DefId};
use weft_syntax::line_index::LineIndex;

use crate::interp::RuntimeError;
use crate::ir::Origin;

/// `path:line:col` of an origin, if its def and expression still exist.
pub fn origin_position(db: &dyn Db, origin: &Origin) -> Option<String> {
    let def = DefId::new(db, origin.def.clone());
    let range = weft_hir::source_map(db, def).expr_range(origin.expr)?;
    let text = origin.def.file.text(db);
    let line_col = LineIndex::new(text).to_chars(text, range.start());
    Some(format!("{}:{}:{}", origin.def.file.path(db), line_col.line + 1, line_col.col + 1))
}

/// The message of a run-time error, after `path:line:col: ` when known: as compiled
/// code reports it (`weft_plan::ErrorSite::render`), so both back ends print one line.
pub fn render_error(db: &dyn Db, error: &RuntimeError) -> String {
    match error.origin.as_ref().and_then(|o| origin_position(db, o)) {
        Some(position) => format!("{position}: {}", error.message),
        None => error.message.clone(),
    }
}
