//! Weft's APL front end through TAIL (seed 001, thesis ch. 3).
//!
//! Pipeline: [`syntax::parse`] (error-tolerant) → [`elab::elaborate`] (inlining,
//! scalar extension, overloading, identity items, coercions, type inference) →
//! [`opt::optimise`] → [`to_core::to_core`] (monomorphic core IR, one entry `main`).
//! [`compile`] runs them all; [`tests_of`] reads a file's `⍝ ==` test blocks.

pub mod annot;
pub mod display;
pub mod elab;
pub mod opt;
pub mod syntax;
pub mod tail;
pub mod testblock;
pub mod to_core;
pub mod ty;

#[cfg(test)]
mod tests;

pub use crate::syntax::{Diagnostic, Span};
pub use crate::testblock::{TestCase, tests_of};

/// Everything the front end produced for one file.
pub struct Compiled {
    /// Syntax and type errors, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The optimised TAIL program, when there are no errors.
    pub tail: Option<tail::Program>,
    /// The type of every named value and application, by source range.
    pub types: Vec<(Span, ty::Ty)>,
    /// How many `⎕ ←` outputs come before the program's value in the results.
    pub prints: usize,
}

/// Parses, elaborates and optimises a file's text.
pub fn compile(text: &str) -> Compiled {
    let parsed = syntax::parse(text);
    let mut elaborated = elab::elaborate(&parsed.stmts, &parsed.poisoned);
    let mut diagnostics = parsed.diagnostics;
    diagnostics.append(&mut elaborated.diagnostics);
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    // A lambda elaborated twice (to settle its type) reports its errors twice.
    diagnostics.dedup();
    // A program with syntax errors is not run: its elaboration saw skipped statements.
    let tail = if diagnostics.is_empty() { elaborated.program } else { None };
    let tail = tail.map(|mut p| {
        opt::optimise(&mut p);
        p
    });
    let prints = tail.as_ref().map_or(0, |p| p.prints.len());
    Compiled { diagnostics, tail, types: elaborated.types, prints }
}

/// `line:col` (1-based, in characters) of a byte offset.
pub fn line_col(text: &str, offset: u32) -> (usize, usize) {
    let offset = (offset as usize).min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A diagnostic as `path:line:col: error: message`.
pub fn render(path: &str, text: &str, d: &Diagnostic) -> String {
    let (line, col) = line_col(text, d.span.start);
    format!("{path}:{line}:{col}: error: {}", d.message)
}
