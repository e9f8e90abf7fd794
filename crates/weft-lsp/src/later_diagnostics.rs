//! The diagnostics published after the front end's (the memory layer's, the performance
//! and back-end warnings), kept per open document so that the publication on every edit
//! carries them, moved through the edits made since, as an editor moves its markers,
//! until they are computed again. Without this, each keystroke would blank them for the
//! time the slower computation takes.

use std::sync::Mutex;

use lsp_types::{Diagnostic, Position, TextDocumentContentChangeEvent};
use rustc_hash::FxHashMap;

/// Per document path, the last diagnostics computed after the front end's.
#[derive(Default)]
pub(crate) struct LaterDiagnostics {
    by_path: Mutex<FxHashMap<String, Vec<Diagnostic>>>,
}

impl LaterDiagnostics {
    /// Runs `f` on the map, under the lock that orders its reads and writes with edits.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut FxHashMap<String, Vec<Diagnostic>>) -> T,
    ) -> T {
        let mut guard = match self.by_path.lock() {
            Ok(guard) => guard,
            // A panic while holding the lock left a map of plain data: still usable.
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

/// Moves `diagnostics` through one content change: those before the edited range stay,
/// those after it move with the text, those overlapping it are dropped (their cause may
/// be gone). A whole-text change drops them all.
pub(crate) fn move_through(
    diagnostics: &mut Vec<Diagnostic>,
    change: &TextDocumentContentChangeEvent,
) {
    let Some(edited) = change.range else {
        diagnostics.clear();
        return;
    };
    let inserted_lines = change.text.matches('\n').count();
    let last_line = change.text.rsplit('\n').next().unwrap_or("");
    let last_len = utf16_len(last_line);
    let new_end = if inserted_lines == 0 {
        Position::new(edited.start.line, edited.start.character.saturating_add(last_len))
    } else {
        Position::new(edited.start.line.saturating_add(count(inserted_lines)), last_len)
    };
    let after = |p: Position| -> Position {
        if p.line == edited.end.line {
            Position::new(
                new_end.line,
                new_end.character.saturating_add(p.character.saturating_sub(edited.end.character)),
            )
        } else {
            Position::new(
                (i64::from(p.line) + i64::from(new_end.line) - i64::from(edited.end.line))
                    .clamp(0, i64::from(u32::MAX))
                    .try_into()
                    .unwrap_or(u32::MAX),
                p.character,
            )
        }
    };
    let key = |p: Position| (p.line, p.character);
    diagnostics.retain_mut(|d| {
        if key(d.range.end) <= key(edited.start) {
            true
        } else if key(d.range.start) >= key(edited.end) {
            d.range.start = after(d.range.start);
            d.range.end = after(d.range.end);
            true
        } else {
            false
        }
    });
}

fn utf16_len(text: &str) -> u32 {
    count(text.chars().map(char::len_utf16).sum())
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use lsp_types::{Diagnostic, Position, Range, TextDocumentContentChangeEvent};

    use super::move_through;

    fn diagnostic(l0: u32, c0: u32, l1: u32, c1: u32) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(l0, c0), Position::new(l1, c1)),
            ..Diagnostic::default()
        }
    }

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.to_owned(),
        }
    }

    fn ranges(diagnostics: &[Diagnostic]) -> Vec<(u32, u32, u32, u32)> {
        diagnostics
            .iter()
            .map(|d| {
                let r = d.range;
                (r.start.line, r.start.character, r.end.line, r.end.character)
            })
            .collect()
    }

    #[test]
    fn diagnostics_before_stay_after_move_and_overlapping_go() {
        let mut found = vec![
            diagnostic(1, 0, 1, 4),   // before the edit
            diagnostic(3, 2, 3, 9),   // overlaps it
            diagnostic(3, 12, 3, 15), // after it, on its last line
            diagnostic(7, 1, 8, 2),   // lines after it
        ];
        // `3:4..3:10` replaced by two lines, the second 2 characters long (one UTF-16
        // unit each, `é` included).
        move_through(&mut found, &change(3, 4, 3, 10, "ab\né1"));
        assert_eq!(ranges(&found), vec![(1, 0, 1, 4), (4, 4, 4, 7), (8, 1, 9, 2)]);
    }

    #[test]
    fn a_deleted_line_moves_what_follows_up() {
        let mut found = vec![diagnostic(5, 3, 5, 6), diagnostic(2, 0, 2, 1)];
        move_through(&mut found, &change(3, 0, 4, 0, ""));
        assert_eq!(ranges(&found), vec![(4, 3, 4, 6), (2, 0, 2, 1)]);
    }

    #[test]
    fn a_whole_text_change_drops_every_diagnostic() {
        let mut found = vec![diagnostic(0, 0, 0, 1)];
        let whole =
            TextDocumentContentChangeEvent { range: None, range_length: None, text: String::new() };
        move_through(&mut found, &whole);
        assert!(found.is_empty());
    }
}
