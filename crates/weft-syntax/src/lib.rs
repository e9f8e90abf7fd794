//! Weft's syntax: lexer, event-based parser, lossless rowan CST and typed AST.
//!
//! Architecture invariant: this crate knows nothing of salsa, types or LSP. Parsing
//! never fails: [`parse`] returns a tree that holds every byte of the input (the tree's
//! text equals the input) plus the syntax errors, and every well-formed declaration of
//! a file with errors elsewhere is still a complete node in the tree.
//!
//! Deeply nested input (LANGUAGE.md: 100,000 levels are accepted) recurses that deep
//! in the parser; callers run analysis on a thread with a large stack
//! ([`on_large_stack`]). Deeper input gets one diagnostic, never a crash.

pub mod ast;
mod event;
pub mod format;
mod grammar;
mod lexer;
pub mod line_index;
mod parser;
mod split;
mod syntax_kind;
pub mod test_block;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use rowan::{Direction, GreenNode, NodeOrToken, TextRange, TextSize, WalkEvent};

pub use crate::lexer::{LexError, Token, tokenize};
pub use crate::parser::{MAX_NESTING, SyntaxError};
pub use crate::split::{ItemSpan, split_items};
pub use crate::syntax_kind::{PREFIX_BINDING_POWER, SyntaxKind};

/// rowan's language tag for Weft.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WeftLanguage {}

impl rowan::Language for WeftLanguage {
    type Kind = SyntaxKind;

    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        SyntaxKind::from_raw(raw.0)
    }

    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

pub type SyntaxNode = rowan::SyntaxNode<WeftLanguage>;
pub type SyntaxToken = rowan::SyntaxToken<WeftLanguage>;
pub type SyntaxElement = rowan::SyntaxElement<WeftLanguage>;
pub type SyntaxNodePtr = rowan::ast::SyntaxNodePtr<WeftLanguage>;

/// The result of parsing a file: an immutable green tree and the syntax errors
/// (lexical errors included), in source order. Cheap to clone, `Send`, and `Eq`, so a
/// salsa query can return it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Parse {
    green: GreenNode,
    errors: Arc<[SyntaxError]>,
}

impl Parse {
    pub fn green(&self) -> &GreenNode {
        &self.green
    }

    pub fn syntax_node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    pub fn tree(&self) -> ast::SourceFile {
        use ast::AstNode;
        ast::SourceFile::cast(self.syntax_node()).expect("invariant: the root is a SOURCE_FILE")
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// The parse of a file made of consecutive stretches, each parsed by
    /// [`parse_items`], given with its start: one root holding every stretch's
    /// children (shared, not copied), and their errors moved to the file's positions.
    pub fn join<'a>(parts: impl IntoIterator<Item = (TextSize, &'a Parse)>) -> Parse {
        let mut children = Vec::new();
        let mut errors = Vec::new();
        for (start, part) in parts {
            children.extend(part.green.children().map(|child| match child {
                NodeOrToken::Node(node) => NodeOrToken::Node(node.to_owned()),
                NodeOrToken::Token(token) => NodeOrToken::Token(token.to_owned()),
            }));
            errors.extend(
                part.errors
                    .iter()
                    .map(|e| SyntaxError { range: e.range + start, message: e.message.clone() }),
            );
        }
        errors.sort_by_key(|e| (e.range.start(), e.range.end()));
        let green = GreenNode::new(SyntaxKind::SOURCE_FILE.into(), children);
        Parse { green, errors: errors.into() }
    }

    /// A readable dump of the tree and errors, used by `weft dump --ir cst` and tests.
    pub fn debug_dump(&self) -> String {
        let mut out = String::new();
        let mut indent = 0usize;
        for event in self.syntax_node().preorder_with_tokens() {
            match event {
                WalkEvent::Enter(element) => {
                    let line = match &element {
                        NodeOrToken::Node(node) => {
                            format!("{:?}@{:?}", node.kind(), node.text_range())
                        }
                        NodeOrToken::Token(token) => {
                            format!(
                                "{:?}@{:?} {:?}",
                                token.kind(),
                                token.text_range(),
                                token.text()
                            )
                        }
                    };
                    out.push_str(&"  ".repeat(indent));
                    out.push_str(&line);
                    out.push('\n');
                    indent += 1;
                }
                WalkEvent::Leave(_) => indent -= 1,
            }
        }
        for error in self.errors.iter() {
            out.push_str(&format!("error {:?}: {}\n", error.range, error.message));
        }
        out
    }
}

/// Parses a whole file. Never fails; see [`Parse`]. Each declaration's stretch
/// ([`split_items`]) is parsed on its own and the trees are joined: the same tree and
/// errors as parsing the text at once, which is how an editor re-parses only the
/// declaration an edit touched (weft-hir's `parse_item` query).
pub fn parse(text: &str) -> Parse {
    let spans = split_items(text);
    let parts: Vec<Parse> =
        spans.iter().map(|span| parse_items(span.text(text), span.range.len())).collect();
    Parse::join(spans.iter().map(|span| span.range.start()).zip(&parts))
}

/// Parses the declarations in `text[..len]`, a file's stretch ([`ItemSpan`]), as a
/// `SOURCE_FILE` with positions from its start. `text[len..]` is what follows it up to
/// the next declaration's keyword ([`ItemSpan::lookahead_end`]): the parser stops there
/// as at the end of a file, but an error there names the keyword, as when the whole
/// file is parsed. With `len` the length of `text`, this parses a whole text at once.
pub fn parse_items(text: &str, len: TextSize) -> Parse {
    let (tokens, lex_errors) = lexer::tokenize(text);
    let mut n_own = 0;
    let mut end = TextSize::from(0);
    while let Some(token) = tokens.get(n_own).filter(|t| end + t.len <= len) {
        end += token.len;
        n_own += 1;
    }
    let mut parser = parser::Parser::new(text, &tokens, n_own);
    grammar::source_file(&mut parser);
    let (green, parse_errors) = event::build_tree(text, &tokens, n_own, parser.events);
    let mut errors: Vec<SyntaxError> = lex_errors
        .into_iter()
        .filter(|e| e.range.start() < end)
        .map(|e| SyntaxError { range: e.range, message: e.message })
        .collect();
    errors.extend(parse_errors);
    errors.sort_by_key(|e| (e.range.start(), e.range.end()));
    Parse { green, errors: errors.into() }
}

/// Stack size of analysis threads: enough for 100,000 levels of nesting in every
/// recursive phase, in debug builds too. Only touched pages are committed.
pub const LARGE_STACK_BYTES: usize = 4 << 30;

/// Stack sizes an analysis thread asks for, in order: where address space is limited
/// (`ulimit -v`) a 4 GiB reservation fails, and a smaller stack (less deep input before
/// an overflow) is better than no thread at all.
const STACK_BYTES_TRIED: [usize; 4] = [LARGE_STACK_BYTES, 1 << 30, 256 << 20, 64 << 20];

/// Starts a thread named `name` running `f` with the largest stack of
/// [`STACK_BYTES_TRIED`] the system grants.
pub fn spawn_with_large_stack<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    // A failed spawn drops the closure it was given: keep `f` outside it.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let mut error = None;
    for bytes in STACK_BYTES_TRIED {
        let slot = std::sync::Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name(name.to_owned())
            .stack_size(bytes)
            .spawn(move || take(&slot)());
        match spawned {
            Ok(handle) => return Ok(handle),
            Err(e) => error = Some(e),
        }
    }
    Err(error.unwrap_or_else(|| std::io::Error::other("no stack size to try")))
}

/// [`spawn_with_large_stack`] in a scope.
pub fn spawn_scoped_with_large_stack<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let mut error = None;
    for bytes in STACK_BYTES_TRIED {
        let slot = std::sync::Arc::clone(&slot);
        let spawned = std::thread::Builder::new()
            .name(name.to_owned())
            .stack_size(bytes)
            .spawn_scoped(scope, move || take(&slot)());
        match spawned {
            Ok(handle) => return Ok(handle),
            Err(e) => error = Some(e),
        }
    }
    Err(error.unwrap_or_else(|| std::io::Error::other("no stack size to try")))
}

/// The closure a spawned thread runs; it is there, since only a thread that started
/// takes it.
fn take<F>(slot: &std::sync::Mutex<Option<F>>) -> F {
    let taken = slot.lock().map_or_else(|poisoned| poisoned.into_inner().take(), |mut f| f.take());
    taken.expect("invariant: the closure is taken once, by the thread that started")
}

/// Runs `f` on a thread with a large stack (see [`spawn_with_large_stack`]) and
/// returns its result; on the calling thread if no thread can be started. Panics of `f`
/// propagate.
pub fn on_large_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let slot = std::sync::Mutex::new(Some(f));
    let result = std::thread::scope(|scope| {
        let handle =
            spawn_scoped_with_large_stack(scope, "weft-analysis", || take(&slot)()).ok()?;
        Some(match handle.join() {
            Ok(value) => value,
            Err(payload) => std::panic::resume_unwind(payload),
        })
    });
    match result {
        Some(value) => value,
        None => take(&slot)(),
    }
}
