//! The grammar: one function per production of LANGUAGE.md, recursive descent with a
//! Pratt loop for operators (rust-analyzer's `crates/parser/src/grammar.rs`).
//!
//! Conventions: a function named `opt_x` may produce nothing; every other function
//! produces a node or reports an error. Recovery uses token sets: a rule that meets a
//! token it cannot use reports an error and leaves tokens of its recovery set for an
//! enclosing rule, so a mistake in one declaration never swallows the next (item
//! keywords cannot occur inside expressions, so every item start is a safe point).

mod expressions;
mod items;
mod patterns;
mod types;

use crate::SyntaxKind::{self, *};
use crate::parser::{MAX_NESTING, Parser};

pub(crate) use items::source_file;

/// Tokens that start a declaration: the parser always resynchronises on them.
const ITEM_START: &[SyntaxKind] = &[DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW];

/// Whether the parser is at the end of the current declaration: the end of the input
/// or the next declaration's keyword. A loop inside a declaration stops here, not at
/// the end of the input alone: a declaration parsed on its own (`split.rs`) ends at
/// that keyword, and stopping at it in the whole file too gives the same errors.
fn at_declaration_end(p: &Parser<'_>) -> bool {
    p.at_eof() || ITEM_START.contains(&p.current())
}

/// Enters one level of nesting; returns `false` (after reporting once and skipping to
/// the next declaration) when the input nests deeper than `MAX_NESTING`.
fn enter(p: &mut Parser<'_>) -> bool {
    p.depth += 1;
    // The outermost expression of a body is level 0, so 100,000 nested levels inside it
    // are accepted.
    if p.depth <= MAX_NESTING + 1 {
        return true;
    }
    if !p.too_deep_reported {
        p.too_deep_reported = true;
        p.error(format!("nesting deeper than {MAX_NESTING} levels is not supported"));
    }
    p.skipping_too_deep = true;
    // Skip flat, without recursion, to the next declaration.
    let m = p.start();
    while !at_declaration_end(p) {
        p.bump_any();
    }
    m.complete(p, ERROR);
    p.depth -= 1;
    false
}

fn leave(p: &mut Parser<'_>) {
    p.depth -= 1;
}

/// `NAME`: a binding occurrence of an identifier.
fn name(p: &mut Parser<'_>, recovery: &[SyntaxKind]) {
    if p.at(IDENT) {
        let m = p.start();
        p.bump(IDENT);
        m.complete(p, NAME);
    } else {
        p.err_recover("expected a name", recovery);
    }
}

/// `NAME_REF`: a use of an identifier.
fn name_ref(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IDENT);
    m.complete(p, NAME_REF);
}
