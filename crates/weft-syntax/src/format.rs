//! The formatter behind `weft fmt` and the language server's formatting.
//!
//! Conservative by design: it keeps every token, every comment (test blocks
//! included) and the line structure the author chose, and normalises only the
//! whitespace *within* lines and between them: one space between tokens by default,
//! none inside brackets and before `,`, none after `\` and prefix operators, spaces
//! around binary operators and `=`/`->`, `x: t` in parameters and annotations,
//! tabs in indentation expanded, trailing whitespace removed, runs of blank lines
//! folded into one, and exactly one newline at the end.
//!
//! Whitespace that is significant is kept as written: `xs[i]` (indexing) versus
//! `f [i]` (an array argument), and spacing around `.` and `@`. Two tokens are
//! never glued when their concatenation would lex differently (`- -x`).
//!
//! Invariants, checked on every call: a file with syntax errors is refused (the
//! caller keeps its text); the output parses to the same tree with the same
//! non-whitespace tokens; and formatting is idempotent (proptests in `tests.rs`).

use std::fmt;

use crate::{SyntaxKind, SyntaxNode, SyntaxToken, WalkEvent};

/// Why a file was not formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// Formats a whole file; see the module doc. `Err` leaves the text to the caller.
pub fn format(text: &str) -> Result<String, FormatError> {
    let parse = crate::parse(text);
    if let Some(error) = parse.errors().first() {
        return Err(FormatError {
            message: format!(
                "not formatted: the file has syntax errors (first: {} at {:?})",
                error.message, error.range
            ),
        });
    }
    let root = parse.syntax_node();
    let output = format_tree(&root);
    let reparsed = crate::parse(&output);
    if !reparsed.errors().is_empty() || shape(&reparsed.syntax_node()) != shape(&root) {
        return Err(FormatError {
            message: "internal error: formatting would change the program; file left unchanged"
                .to_owned(),
        });
    }
    Ok(output)
}

/// The tree without whitespace: node kinds and non-whitespace tokens, in order.
fn shape(root: &SyntaxNode) -> Vec<(SyntaxKind, String)> {
    let mut out = Vec::new();
    for event in root.preorder_with_tokens() {
        match event {
            WalkEvent::Enter(element) => match element {
                rowan::NodeOrToken::Node(node) => out.push((node.kind(), String::new())),
                rowan::NodeOrToken::Token(token) if token.kind() == SyntaxKind::WHITESPACE => {}
                rowan::NodeOrToken::Token(token) => {
                    out.push((token.kind(), token.text().trim_end().to_owned()));
                }
            },
            WalkEvent::Leave(_) => out.push((SyntaxKind::EOF, String::new())),
        }
    }
    out
}

fn format_tree(root: &SyntaxNode) -> String {
    let mut out = String::new();
    let mut prev: Option<SyntaxToken> = None;
    let mut pending_ws: Option<String> = None;
    for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
        if token.kind() == SyntaxKind::WHITESPACE {
            pending_ws.get_or_insert_with(String::new).push_str(token.text());
            continue;
        }
        let ws = pending_ws.take().unwrap_or_default();
        match &prev {
            None => {
                // Leading blank lines go; the first line keeps its indentation.
                out.push_str(&indentation(&ws));
            }
            Some(prev_token) => {
                let n_newlines = ws.matches('\n').count();
                if n_newlines > 0 {
                    out.push_str(if n_newlines > 1 { "\n\n" } else { "\n" });
                    out.push_str(&indentation(&ws));
                } else if wants_space(prev_token, &token, !ws.is_empty()) {
                    out.push(' ');
                }
            }
        }
        if token.kind() == SyntaxKind::COMMENT {
            out.push_str(token.text().trim_end());
        } else {
            out.push_str(token.text());
        }
        prev = Some(token);
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The indentation after the last line break of `ws`, tabs expanded to 2 spaces.
fn indentation(ws: &str) -> String {
    let last_line = ws.rsplit('\n').next().unwrap_or("");
    last_line.replace('\r', "").replace('\t', "  ")
}

fn parent_kind(token: &SyntaxToken) -> Option<SyntaxKind> {
    token.parent().map(|p| p.kind())
}

/// Whether one space separates `prev` and `next` on a line.
fn wants_space(prev: &SyntaxToken, next: &SyntaxToken, had_space: bool) -> bool {
    use SyntaxKind::*;
    let want = match (prev.kind(), next.kind()) {
        // Significant or unusual spacing is kept as written.
        (_, L_BRACK) | (_, DOT) | (DOT, _) | (_, AT) | (AT, _) => had_space,
        (_, COMMENT) => true,
        (_, COMMA) => false,
        (COMMA, _) => true,
        (L_PAREN | L_BRACK, _) | (_, R_PAREN | R_BRACK) => false,
        (BACKSLASH, _) | (QUOTE, _) => false,
        // `[n]f32`: the element type follows the brackets directly.
        (R_BRACK, _) if parent_kind(prev) == Some(ARRAY_TYPE) => false,
        (MINUS | BANG, _) if parent_kind(prev) == Some(PREFIX_EXPR) => false,
        (MINUS, _) if parent_kind(prev) != Some(BIN_EXPR) => had_space,
        (_, _) if is_size_op(prev) || is_size_op(next) => had_space,
        (_, COLON) => matches!(parent_kind(next), Some(RET_TYPE)),
        (COLON, _) => parent_kind(prev) != Some(SLICE),
        _ => true,
    };
    let slice_colon = |t: &SyntaxToken| t.kind() == COLON && parent_kind(t) == Some(SLICE);
    if slice_colon(next) || slice_colon(prev) {
        return false;
    }
    want || !glues_safely(prev, next)
}

fn is_size_op(token: &SyntaxToken) -> bool {
    parent_kind(token) == Some(SyntaxKind::SIZE_BIN) && token.kind() != SyntaxKind::IDENT
}

/// Whether `prev` and `next` written without a space still lex as those two tokens.
fn glues_safely(prev: &SyntaxToken, next: &SyntaxToken) -> bool {
    let joined = format!("{}{}", prev.text(), next.text());
    let (tokens, errors) = crate::tokenize(&joined);
    errors.is_empty()
        && tokens.len() == 2
        && tokens[0].kind == prev.kind()
        && tokens[1].kind == next.kind()
        && usize::from(tokens[0].len) == prev.text().len()
}
