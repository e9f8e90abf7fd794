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
mod syntax_kind;
pub mod test_block;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub use rowan::{Direction, GreenNode, NodeOrToken, TextRange, TextSize, WalkEvent};

pub use crate::lexer::{LexError, Token, tokenize};
pub use crate::parser::{MAX_NESTING, SyntaxError};
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

/// Parses a whole file. Never fails; see [`Parse`].
pub fn parse(text: &str) -> Parse {
    let (tokens, lex_errors) = lexer::tokenize(text);
    let mut parser = parser::Parser::new(text, &tokens);
    grammar::source_file(&mut parser);
    let (green, parse_errors) = event::build_tree(text, &tokens, parser.events);
    let mut errors: Vec<SyntaxError> = lex_errors
        .into_iter()
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
