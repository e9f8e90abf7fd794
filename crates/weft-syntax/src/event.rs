//! Turning the parser's events into a rowan green tree, with trivia put back.
//!
//! Trivia between tokens go into whichever node is open at that point, except for
//! *leading comments* of an item: comments directly above a `def`, `entry`, `type` or
//! `import` (no blank line between) become the first children of that item's node.
//! That is how doc comments (`-- |`) and test blocks (`-- ==`) stay attached to the
//! declaration they describe, and how later phases find them by walking the item.
//!
//! The green tree is built here instead of with rowan's `GreenNodeBuilder`: its node
//! cache re-hashes whole subtrees when its table grows, which is quadratic on input
//! nested 100,000 levels deep. Tokens are still shared (a file has few distinct ones).

use rowan::{GreenNode, GreenToken, NodeOrToken};
use text_size::{TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::lexer::Token;
use crate::parser::{Event, SyntaxError};

/// The tree of `tokens[..n_own]`; the tokens after them only place errors at their end
/// (the next declaration's keyword, as when the whole file is parsed).
pub(crate) fn build_tree(
    text: &str,
    tokens: &[Token],
    n_own: usize,
    mut events: Vec<Event>,
) -> (GreenNode, Vec<SyntaxError>) {
    let mut sink = Sink {
        text,
        tokens,
        n_own,
        token_idx: 0,
        offset: TextSize::from(0),
        builder: Builder::default(),
        errors: Vec::new(),
        depth: 0,
    };
    let mut forward_parents = Vec::new();
    for idx in 0..events.len() {
        match std::mem::replace(&mut events[idx], Event::Tombstone) {
            Event::Start { kind, forward_parent } => {
                // Collect the chain of parents that precede this node, outermost last.
                forward_parents.push(kind);
                let mut link = forward_parent;
                let mut at = idx;
                while let Some(delta) = link {
                    at += delta as usize;
                    link = match std::mem::replace(&mut events[at], Event::Tombstone) {
                        Event::Start { kind, forward_parent } => {
                            forward_parents.push(kind);
                            forward_parent
                        }
                        _ => unreachable!("invariant: forward parent is a Start event"),
                    };
                }
                // A node with no tokens (a missing part that recovery stands in for) starts
                // before the trivia ahead: they belong to what comes next (the comments
                // attached to the next declaration stay with it, as when each
                // declaration is parsed on its own).
                let empty = forward_parents.len() == 1 && is_empty_node(&events[idx + 1..]);
                for kind in forward_parents.drain(..).rev() {
                    if empty {
                        sink.start_empty_node(kind);
                    } else {
                        sink.start_node(kind);
                    }
                }
            }
            Event::Finish => sink.finish_node(),
            Event::Token { kind } => sink.token(kind),
            Event::Error { message } => sink.error(message),
            Event::Tombstone => {}
        }
    }
    sink.finish()
}

struct Sink<'a> {
    text: &'a str,
    tokens: &'a [Token],
    /// How many of `tokens` go into the tree.
    n_own: usize,
    token_idx: usize,
    offset: TextSize,
    builder: Builder,
    errors: Vec<SyntaxError>,
    depth: u32,
}

impl Sink<'_> {
    fn start_node(&mut self, kind: SyntaxKind) {
        if self.depth == 0 {
            // The root takes no trivia before starting.
            self.builder.start_node(kind);
            self.depth += 1;
            return;
        }
        let n_attached = if is_item(kind) { self.n_attached_comments() } else { 0 };
        self.eat_trivia_except_last(n_attached);
        self.builder.start_node(kind);
        self.depth += 1;
        // The attached comments (and the whitespace between them) go inside the item.
        self.eat_n_trivia(n_attached);
    }

    /// Starts a node that will hold no token, leaving the trivia ahead for what follows.
    fn start_empty_node(&mut self, kind: SyntaxKind) {
        self.builder.start_node(kind);
        self.depth += 1;
    }

    fn finish_node(&mut self) {
        self.depth -= 1;
        if self.depth == 0 {
            // Trailing trivia of the file belong to the root.
            self.eat_all_trivia();
        }
        self.builder.finish_node();
    }

    fn token(&mut self, kind: SyntaxKind) {
        self.eat_all_trivia();
        let token = self.tokens[self.token_idx];
        debug_assert_eq!(token.kind, kind);
        self.emit(token);
    }

    fn error(&mut self, message: String) {
        // Point at the next non-trivia token, or at the end of the previous one.
        let mut idx = self.token_idx;
        let mut offset = self.offset;
        while let Some(token) = self.tokens.get(idx) {
            if !token.kind.is_trivia() {
                break;
            }
            offset += token.len;
            idx += 1;
        }
        // When the unexpected token is on a later line, the mistake is at the end of
        // the previous line ("expected `else`" after `then 1`, not at the next `def`).
        let skipped = &self.text[TextRange::new(self.offset, offset)];
        let range = match self.tokens.get(idx) {
            Some(_) if skipped.contains('\n') && self.offset > TextSize::from(0) => {
                TextRange::empty(self.offset)
            }
            Some(token) => TextRange::at(offset, token.len),
            None => TextRange::empty(self.offset),
        };
        self.errors.push(SyntaxError { range, message });
    }

    fn emit(&mut self, token: Token) {
        let range = TextRange::at(self.offset, token.len);
        self.builder.token(token.kind, &self.text[range]);
        self.offset += token.len;
        self.token_idx += 1;
    }

    fn trivia_run(&self) -> usize {
        self.tokens[self.token_idx..self.n_own].iter().take_while(|t| t.kind.is_trivia()).count()
    }

    /// How many trivia tokens at the end of the current run belong to the next item.
    fn n_attached_comments(&self) -> usize {
        let run = &self.tokens[self.token_idx..self.token_idx + self.trivia_run()];
        n_attached_comments(self.text, run, self.offset)
    }

    fn eat_trivia_except_last(&mut self, n_keep: usize) {
        let n_eat = self.trivia_run() - n_keep;
        self.eat_n_trivia(n_eat);
    }

    fn eat_n_trivia(&mut self, n: usize) {
        for _ in 0..n {
            let token = self.tokens[self.token_idx];
            self.emit(token);
        }
    }

    fn eat_all_trivia(&mut self) {
        let n = self.trivia_run();
        self.eat_n_trivia(n);
    }

    fn finish(self) -> (GreenNode, Vec<SyntaxError>) {
        debug_assert_eq!(self.token_idx, self.n_own, "every token is in the tree");
        (self.builder.finish(), self.errors)
    }
}

/// How many trivia tokens at the end of `run` (a run of trivia starting at `offset`,
/// directly before an item) belong to the item: the trailing comments with at most one
/// newline between them and the item.
/// Whether the events after a `Start` finish it before any token or other node starts.
fn is_empty_node(rest: &[Event]) -> bool {
    for event in rest {
        match event {
            Event::Finish => return true,
            Event::Token { .. } | Event::Start { .. } => return false,
            Event::Error { .. } | Event::Tombstone => {}
        }
    }
    false
}

pub(crate) fn n_attached_comments(text: &str, run: &[Token], offset: TextSize) -> usize {
    let mut offsets = Vec::with_capacity(run.len());
    let mut offset = offset;
    for token in run {
        offsets.push(offset);
        offset += token.len;
    }
    let mut n_attached = 0;
    for (idx, token) in run.iter().enumerate().rev() {
        match token.kind {
            COMMENT => n_attached = run.len() - idx,
            WHITESPACE => {
                let text = &text[TextRange::at(offsets[idx], token.len)];
                if text.matches('\n').count() > 1 {
                    break;
                }
            }
            _ => unreachable!("invariant: a trivia run holds only trivia"),
        }
    }
    n_attached
}

fn is_item(kind: SyntaxKind) -> bool {
    matches!(kind, DEF | TYPE_ALIAS | IMPORT)
}

/// A green tree builder without a node cache (see the module doc).
#[derive(Default)]
struct Builder {
    /// Open nodes: their kind and the index of their first child in `children`.
    parents: Vec<(SyntaxKind, usize)>,
    children: Vec<NodeOrToken<GreenNode, GreenToken>>,
    tokens: rustc_hash::FxHashMap<SyntaxKind, rustc_hash::FxHashMap<Box<str>, GreenToken>>,
}

impl Builder {
    fn start_node(&mut self, kind: SyntaxKind) {
        self.parents.push((kind, self.children.len()));
    }

    fn finish_node(&mut self) {
        let (kind, first_child) = self.parents.pop().expect("invariant: finish matches a start");
        let node = GreenNode::new(kind.into(), self.children.drain(first_child..));
        self.children.push(NodeOrToken::Node(node));
    }

    fn token(&mut self, kind: SyntaxKind, text: &str) {
        let same_kind = self.tokens.entry(kind).or_default();
        let token = match same_kind.get(text) {
            Some(token) => token.clone(),
            None if text.len() <= 16 => {
                let token = GreenToken::new(kind.into(), text);
                same_kind.insert(text.into(), token.clone());
                token
            }
            None => GreenToken::new(kind.into(), text),
        };
        self.children.push(NodeOrToken::Token(token));
    }

    fn finish(mut self) -> GreenNode {
        assert_eq!(self.children.len(), 1, "invariant: one root");
        match self.children.pop() {
            Some(NodeOrToken::Node(node)) => node,
            _ => unreachable!("invariant: the root is a node"),
        }
    }
}
