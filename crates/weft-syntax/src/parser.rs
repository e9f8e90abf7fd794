//! The parser's machinery: a cursor over non-trivia tokens that records *events*.
//!
//! Grammar functions (`grammar.rs`) call `start`/`bump`/`complete` and never build
//! trees themselves. The events become a rowan tree in `event.rs`, where trivia are
//! put back. This is rust-analyzer's design (`crates/parser/src/event.rs`):
//!
//! ```text
//!   tokens ──► grammar ──► [Start BIN_EXPR, Token, Token, Finish, ...] ──► GreenNode
//! ```
//!
//! `Marker::precede` lets a completed node become the child of a node started later
//! (for left-recursive forms like `a + b` or `f x`) without re-parsing: the event
//! records a `forward_parent` link instead.

use std::cell::Cell;

use text_size::{TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::lexer::Token;

/// How deeply expressions, types and patterns may nest. LANGUAGE.md accepts 100,000
/// levels; deeper input gets one diagnostic instead of exhausting the stack.
pub const MAX_NESTING: u32 = 100_000;

#[derive(Debug)]
pub(crate) enum Event {
    Start {
        kind: SyntaxKind,
        forward_parent: Option<u32>,
    },
    Finish,
    Token {
        kind: SyntaxKind,
    },
    Error {
        message: String,
    },
    /// A node that was started and then abandoned; ignored when building.
    Tombstone,
}

/// A parse error at a range of the source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SyntaxError {
    pub range: TextRange,
    pub message: String,
}

pub(crate) struct Parser<'t> {
    /// Non-trivia tokens with their start offsets; the last is `EOF`.
    tokens: Vec<(SyntaxKind, TextRange)>,
    /// How many of `tokens` are parsed. The one after them, if it is not `EOF`, is the
    /// next declaration's keyword: the parser sees it (errors name it, as when the whole
    /// file is parsed) but never consumes it, and stops there as at the end of the file.
    n_parsed: usize,
    /// Whether whitespace or a comment precedes each non-trivia token.
    preceded_by_trivia: Vec<bool>,
    text: &'t str,
    pos: usize,
    pub(crate) events: Vec<Event>,
    pub(crate) depth: u32,
    /// Set once the nesting limit was reported, so it is reported once per declaration.
    pub(crate) too_deep_reported: bool,
    /// Set while unwinding from too-deep input, until the next declaration starts.
    pub(crate) skipping_too_deep: bool,
    steps: Cell<u32>,
    last_error_pos: Option<usize>,
}

impl<'t> Parser<'t> {
    /// A parser of the tokens `raw[..n_parsed]`; the first non-trivia token after them
    /// is the lookahead the parser stops at (see `Parser::n_parsed`).
    pub(crate) fn new(text: &'t str, raw: &[Token], n_parsed: usize) -> Parser<'t> {
        let mut tokens = Vec::new();
        let mut preceded_by_trivia = Vec::new();
        let mut offset = TextSize::from(0);
        let mut trivia_before = false;
        let mut parsed_non_trivia = None;
        for (idx, token) in raw.iter().enumerate() {
            if idx == n_parsed {
                parsed_non_trivia = Some(tokens.len());
            }
            let range = TextRange::at(offset, token.len);
            offset += token.len;
            if token.kind.is_trivia() {
                trivia_before = true;
                continue;
            }
            tokens.push((token.kind, range));
            preceded_by_trivia.push(trivia_before);
            trivia_before = false;
            if parsed_non_trivia.is_some() {
                break;
            }
        }
        let n_parsed = parsed_non_trivia.unwrap_or(tokens.len());
        tokens.push((EOF, TextRange::empty(offset)));
        preceded_by_trivia.push(trivia_before);
        Parser {
            tokens,
            n_parsed,
            preceded_by_trivia,
            text,
            pos: 0,
            events: Vec::new(),
            depth: 0,
            too_deep_reported: false,
            skipping_too_deep: false,
            steps: Cell::new(0),
            last_error_pos: None,
        }
    }

    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        // A parser that looks without moving for too long has a bug; stop it loudly in
        // tests rather than hang the editor.
        let steps = self.steps.get();
        assert!(steps < 10_000_000, "invariant: the parser is stuck");
        self.steps.set(steps + 1);
        self.tokens.get(self.pos + n).map_or(EOF, |t| t.0)
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn at_eof(&self) -> bool {
        self.pos >= self.n_parsed
    }

    pub(crate) fn nth_text(&self, n: usize) -> &'t str {
        self.tokens.get(self.pos + n).map_or("", |t| &self.text[t.1])
    }

    /// Whether the `n`th token is glued to the one before it (no trivia between).
    pub(crate) fn nth_is_glued(&self, n: usize) -> bool {
        !self.preceded_by_trivia.get(self.pos + n).copied().unwrap_or(true)
    }

    pub(crate) fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Start { kind: ERROR, forward_parent: None });
        Marker { pos, completed: false }
    }

    pub(crate) fn bump_any(&mut self) {
        if self.at_eof() {
            return;
        }
        let kind = self.current();
        self.steps.set(0);
        self.pos += 1;
        self.events.push(Event::Token { kind });
    }

    pub(crate) fn bump(&mut self, kind: SyntaxKind) {
        assert!(self.eat(kind), "invariant: bump of {kind:?} at {:?}", self.current());
    }

    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if !self.at(kind) || self.at_eof() {
            return false;
        }
        self.bump_any();
        true
    }

    pub(crate) fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.eat(kind) {
            return true;
        }
        self.error(format!("expected {}", describe_expected(kind)));
        false
    }

    /// Records an error at the current token. One mistake gives one error: a second
    /// error at the same token (typically from an enclosing rule that sees the same
    /// unexpected token) is dropped.
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        // The lexer already reported unknown characters, and after input nested too
        // deeply the enclosing rules' complaints until the next declaration are noise.
        if self.last_error_pos == Some(self.pos)
            || self.current() == ERROR_TOKEN
            || self.skipping_too_deep
        {
            return;
        }
        self.last_error_pos = Some(self.pos);
        let message = message.into();
        let found = self.current();
        let message = if found == EOF {
            format!("{message}, found end of file")
        } else {
            format!("{message}, found `{}`", self.nth_text(0).escape_debug())
        };
        self.events.push(Event::Error { message });
    }

    /// Reports an error and wraps the current token in an `ERROR` node, unless it is
    /// in `recovery` or starts a declaration (then it is left for an enclosing rule:
    /// no rule consumes a declaration's keyword inside another, which `split.rs` relies
    /// on).
    pub(crate) fn err_recover(&mut self, message: &str, recovery: &[SyntaxKind]) {
        let current = self.current();
        if self.at_eof()
            || recovery.contains(&current)
            || matches!(current, DEF_KW | ENTRY_KW | TYPE_KW | IMPORT_KW)
        {
            self.error(message);
            return;
        }
        let m = self.start();
        self.error(message);
        self.bump_any();
        m.complete(self, ERROR);
    }
}

fn describe_expected(kind: SyntaxKind) -> String {
    match kind.fixed_text() {
        Some(text) => format!("`{text}`"),
        None => kind.describe().to_owned(),
    }
}

/// A node under construction. It must be completed or abandoned.
pub(crate) struct Marker {
    pos: u32,
    completed: bool,
}

impl Marker {
    pub(crate) fn complete(mut self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        self.completed = true;
        match &mut p.events[self.pos as usize] {
            Event::Start { kind: slot, .. } => *slot = kind,
            _ => unreachable!("invariant: a marker points at a Start event"),
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos }
    }

    pub(crate) fn abandon(mut self, p: &mut Parser<'_>) {
        self.completed = true;
        let idx = self.pos as usize;
        if idx == p.events.len() - 1 {
            p.events.pop();
        } else {
            p.events[idx] = Event::Tombstone;
        }
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        if !self.completed && !std::thread::panicking() {
            panic!("invariant: a marker was neither completed nor abandoned");
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
}

impl CompletedMarker {
    /// Starts a node that will become this node's parent.
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        let new = p.start();
        match &mut p.events[self.pos as usize] {
            Event::Start { forward_parent, .. } => *forward_parent = Some(new.pos - self.pos),
            _ => unreachable!("invariant: a completed marker points at a Start event"),
        }
        new
    }
}
