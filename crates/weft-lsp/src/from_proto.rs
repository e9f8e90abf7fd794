//! LSP to weft-ide: URIs to database paths, UTF-16 positions to byte offsets.

use lsp_types::Uri;
use tower_lsp_server::UriExt as _;
use weft_syntax::line_index::{LineCol, LineIndex};
use weft_syntax::{TextRange, TextSize};

/// The database path of a document: its file path for `file:` URIs (so imports
/// resolve against the disk layout), else the URI itself.
pub(crate) fn path(uri: &Uri) -> String {
    match uri.to_file_path() {
        Some(path) => path.to_string_lossy().replace('\\', "/"),
        None => uri.as_str().to_owned(),
    }
}

/// A byte offset; positions past the end of a line or file are clamped.
pub(crate) fn offset(index: &LineIndex, text: &str, position: lsp_types::Position) -> TextSize {
    index.offset_utf16(text, LineCol { line: position.line, col: position.character })
}

pub(crate) fn range(index: &LineIndex, text: &str, range: lsp_types::Range) -> TextRange {
    let start = offset(index, text, range.start);
    let end = offset(index, text, range.end);
    TextRange::new(start.min(end), end.max(start))
}
