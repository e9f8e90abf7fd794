//! A file as the stretches of text its top-level declarations occupy, each parsed on
//! its own ([`split_items`], [`crate::parse_items`]), so that an editor re-parses only
//! the declaration that changed.
//!
//! This is exact, not an approximation: the parser resynchronises on declaration
//! keywords (`def`, `entry`, `type`, `import`), which no rule consumes inside a
//! declaration (every recovery set holds them), so each keyword starts a child of the
//! file's root, and what the parser does between two of them depends only on the tokens
//! between them and on the second keyword (the errors at the end of a declaration name
//! it). The lexer restarts anywhere a token starts: its only context rule (digits after
//! a `.`) never applies to a keyword or a comment. And the comments attached to a
//! declaration (`event.rs`) belong to its stretch. So [`crate::parse`], which joins the
//! stretches' trees, gives the tree and errors of parsing the whole text at once; a test
//! checks this on random text.
//!
//! ```text
//!   import "lib"␤␤-- | Doc.␤def f = 1␤␤-- a note␤␤def g = (␤
//!   └── span 0 ─────┘└── span 1 ─────────────────┘└── span 2 ─┘
//!                    lookahead of span 0: up to the end of `def` ┘
//! ```

use text_size::{TextRange, TextSize};

use crate::SyntaxKind::*;
use crate::event::n_attached_comments;
use crate::lexer::{Token, lex};

/// One top-level declaration's stretch of a file: the declaration with the comments
/// attached to it, then the trivia and any stray tokens up to the next declaration
/// (the first stretch also holds what comes before the first declaration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ItemSpan {
    pub range: TextRange,
    /// The end of the next declaration's keyword (the end of the file for the last
    /// stretch): [`crate::parse_items`] of this stretch reads the text up to there.
    pub lookahead_end: TextSize,
}

impl ItemSpan {
    /// The text [`crate::parse_items`] parses this stretch from: the stretch and its
    /// lookahead.
    pub fn text<'a>(&self, file_text: &'a str) -> &'a str {
        &file_text[TextRange::new(self.range.start(), self.lookahead_end)]
    }
}

/// The stretches of `text`'s declarations, in order, covering all of it (one empty
/// stretch for an empty text).
pub fn split_items(text: &str) -> Vec<ItemSpan> {
    // Where each stretch starts, and the end of the keyword of each after the first.
    let mut starts = vec![TextSize::from(0)];
    let mut keyword_ends = Vec::new();
    let mut offset = TextSize::from(0);
    // The trivia since the last other token, and where they start.
    let mut run: Vec<Token> = Vec::new();
    let mut run_offset = offset;
    lex(text, |token| {
        if token.kind.is_trivia() {
            run.push(token);
            offset += token.len;
            return;
        }
        if matches!(token.kind, DEF_KW | ENTRY_KW | TYPE_KW | IMPORT_KW) {
            let n_attached = n_attached_comments(text, &run, run_offset);
            let attached: TextSize = run[run.len() - n_attached..].iter().map(|t| t.len).sum();
            let start = offset - attached;
            if start > TextSize::from(0) {
                starts.push(start);
                keyword_ends.push(offset + token.len);
            }
        }
        offset += token.len;
        run.clear();
        run_offset = offset;
    });
    let end = TextSize::of(text);
    keyword_ends.push(end);
    let mut spans = Vec::with_capacity(starts.len());
    for (idx, &start) in starts.iter().enumerate() {
        let stop = starts.get(idx + 1).copied().unwrap_or(end);
        spans.push(ItemSpan {
            range: TextRange::new(start, stop),
            lookahead_end: keyword_ends[idx],
        });
    }
    spans
}
