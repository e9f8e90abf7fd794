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
//! caller keeps its text; [`format_items`] formats its declarations without errors); the output parses to the same tree with the same
//! non-whitespace tokens; and formatting is idempotent (proptests in `tests.rs`).

use std::fmt;

use crate::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, WalkEvent};

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

/// A file formatted as far as it parses: [`format_items`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartlyFormatted {
    pub text: String,
    /// The declarations left as written, with the first syntax error in each.
    pub left: Vec<(TextRange, String)>,
}

/// Formats what parses: a file without syntax errors as [`format`] does; in one with
/// syntax errors, each top-level declaration without an error is formatted on its own,
/// and the declarations with errors and the text between declarations are kept as
/// written. `Err` only when nothing could be formatted.
pub fn format_items(text: &str) -> Result<PartlyFormatted, FormatError> {
    let parse = crate::parse(text);
    if parse.errors().is_empty() {
        return format(text).map(|text| PartlyFormatted { text, left: Vec::new() });
    }
    let root = parse.syntax_node();
    let mut out = String::new();
    let mut left = Vec::new();
    let mut formatted = 0;
    let mut at = 0usize;
    for item in root.children() {
        let range = item.text_range();
        let (start, end) = (usize::from(range.start()), usize::from(range.end()));
        out.push_str(&text[at..start]);
        at = end;
        let error = parse
            .errors()
            .iter()
            .find(|e| e.range.start() <= range.end() && e.range.end() >= range.start());
        let item_text = &text[start..end];
        match error {
            Some(error) => {
                left.push((range, error.message.clone()));
                out.push_str(item_text);
            }
            None => match format(item_text) {
                Ok(done) => {
                    formatted += 1;
                    out.push_str(done.trim_end_matches('\n'));
                }
                Err(error) => {
                    left.push((range, error.message));
                    out.push_str(item_text);
                }
            },
        }
    }
    out.push_str(&text[at..]);
    if formatted == 0 {
        let first = parse.errors().first().map_or(String::new(), |e| e.message.clone());
        return Err(FormatError {
            message: format!(
                "not formatted: every declaration has a syntax error (first: {first})"
            ),
        });
    }
    Ok(PartlyFormatted { text: out, left })
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
            WalkEvent::Leave(rowan::NodeOrToken::Node(_)) => {
                out.push((SyntaxKind::EOF, String::new()))
            }
            WalkEvent::Leave(rowan::NodeOrToken::Token(_)) => {}
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
    let in_exist_binder = |t: &SyntaxToken| {
        t.parent().is_some_and(|p| {
            p.kind() == SIZE_PARAM && p.parent().is_some_and(|q| q.kind() == EXIST_TYPE)
        })
    };
    let want = match (prev.kind(), next.kind()) {
        // `?[k][m].t`: an existential binder is written solid.
        (QUESTION, _) => false,
        (R_BRACK, _) if in_exist_binder(prev) => false,
        (DOT, _) if parent_kind(prev) == Some(EXIST_TYPE) => false,
        // After something that cannot end an atom, `[` starts an array or a type.
        (L_PAREN | L_BRACK, L_BRACK) => false,
        (kind, L_BRACK) if !ends_atom(kind) => true,
        // Significant or unusual spacing is kept as written.
        (_, L_BRACK) | (_, DOT) | (DOT, _) | (_, AT) | (AT, _) => had_space,
        (_, COMMENT) => true,
        (_, COMMA) => false,
        (COMMA, _) => true,
        (L_PAREN | L_BRACK | L_BRACE, _) | (_, R_PAREN | R_BRACK | R_BRACE) => false,
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

fn ends_atom(kind: SyntaxKind) -> bool {
    use SyntaxKind::*;
    matches!(kind, IDENT | INT_NUMBER | FLOAT_NUMBER | TRUE_KW | FALSE_KW | R_PAREN | R_BRACK)
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

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use proptest::prelude::*;

    use super::format;

    /// The non-whitespace tokens of a text (comments trimmed at the end).
    fn tokens(text: &str) -> Vec<String> {
        let parse = crate::parse(text);
        parse
            .syntax_node()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| t.kind() != crate::SyntaxKind::WHITESPACE)
            .map(|t| t.text().trim_end().to_owned())
            .collect()
    }

    #[test]
    fn normalises_spacing_and_keeps_comments_and_test_blocks() {
        let input = "\n\n-- | Dot product.  \n-- ==\n-- input { [1f32] [2f32] }\n-- output { 2f32 }\nentry dot (xs:[n]f32)   (ys : [n]f32):f32 =\n\treduce (+) 0f32 (map2 (*) xs ys)\n\n\n\ndef neg (x: i32) : i32 = - x   -- trailing\ndef idx [n] (xs: [n]i32) (k:i64) : ( i32 , i32 ) = ( xs[k] , xs[0] )\n";
        expect![[r#"
            -- | Dot product.
            -- ==
            -- input { [1f32] [2f32] }
            -- output { 2f32 }
            entry dot (xs: [n]f32) (ys: [n]f32) : f32 =
              reduce (+) 0f32 (map2 (*) xs ys)

            def neg (x: i32) : i32 = -x -- trailing
            def idx [n] (xs: [n]i32) (k: i64) : (i32, i32) = (xs[k], xs[0])
        "#]]
        .assert_eq(&format(input).unwrap());
    }

    #[test]
    fn writes_existential_and_anonymous_sizes_solid() {
        let input =
            "def f (xs: [ ]i32) : ? [k] [m] . ([k]i32, [ m ]i32) = partition (\\x -> x > 0) xs\n";
        expect![[r#"
            def f (xs: []i32) : ?[k][m].([k]i32, [m]i32) = partition (\x -> x > 0) xs
        "#]]
        .assert_eq(&format(input).unwrap());
    }

    #[test]
    fn refuses_files_with_syntax_errors() {
        let error = format("def f (x: i32) : i32 = (x +\n").unwrap_err();
        assert!(error.message.starts_with("not formatted: the file has syntax errors"), "{error}");
    }

    /// Formatting a file with a syntax error once silently did nothing.
    #[test]
    fn formats_the_declarations_that_parse_and_lists_the_others() {
        let input =
            "def  a (x:i32) : i32 =x+1\n\ndef b (x: i32) : i32 = (x +\n\ndef c (y:i32):i32=  y\n";
        let done = super::format_items(input).unwrap();
        expect![[r#"
            def a (x: i32) : i32 = x + 1

            def b (x: i32) : i32 = (x +

            def c (y: i32) : i32 = y
        "#]]
        .assert_eq(&done.text);
        let left: Vec<String> = done
            .left
            .iter()
            .map(|(r, why)| format!("{r:?} {}: {why}", &input[r.start().into()..r.end().into()]))
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].contains("def b"), "{left:?}");
        let none = super::format_items("def b (x: i32) : i32 = (x +\n").unwrap_err();
        assert!(none.message.starts_with("not formatted: every declaration has a syntax error"));
        assert_eq!(super::format_items("def  a : i32 = 1\n").unwrap().text, "def a : i32 = 1\n");
    }

    #[test]
    fn examples_are_formatted_idempotently() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "weft") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(once) = format(&text) else { continue };
            assert_eq!(format(&once).unwrap(), once, "{}", path.display());
            assert_eq!(tokens(&once), tokens(&text), "{}", path.display());
        }
    }

    const PIECES: &[&str] = &[
        "def", "entry", "let", "in", "if", "then", "else", "loop", "for", "do", "x", "xs", "f",
        "n", "i32", "f32", "map", "reduce", "1", "2f32", "(", ")", "[", "]", ",", ":", ":>", "=",
        "->", "\\", ".", "0", "@", "group", "with", "+", "-", "*", "**", "<", "==", "!", "-- c\n",
        "'", "|>", "<|", "_", "{", "}",
    ];

    fn program() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(PIECES);
        let gap = prop::sample::select(&["", " ", "  ", "\n", "\n\n\n  ", "\t"][..]);
        prop::collection::vec((piece, gap), 0..60).prop_map(|parts| {
            let mut text = String::new();
            for (piece, gap) in parts {
                text.push_str(piece);
                text.push_str(if gap.is_empty() { " " } else { gap });
            }
            text
        })
    }

    /// Well-formed programs with random whitespace between tokens.
    fn spaced_program() -> impl Strategy<Value = String> {
        let templates = prop::sample::select(
            &[
                "def f (x: i32) : i32 = let y = x + 1 in y * -y",
                "entry e [n] (xs: [n]f32) : f32 = reduce (+) 0f32 (map (\\x -> x * 2f32) xs)",
                "def g (t: (i32, f32)) : f32 = t.1 + f32.sqrt 2f32",
                "def h [n] (xs: [n]i32) : [n]i32 = map@group (\\i -> xs[i % 2]) (iota n :> [n]i64)",
                "def k (a: bool) : i32 = if !a then loop s = 0 for i < 10 do s + i else 1",
                "def u [n] (xs: [n]i32) : [n]i32 = xs with [0] = 1 with [n - 1] = xs[0] + 2",
                "type pt = {x: f32, y: f32}\ndef q ({x, y = b}: pt) : pt = let r = {x = b, y = x} in {x = r.x + (id r).y, y} with x = 1",
                "def p (d: f32, _: i64) : f32 = let sq x = x * x in loop a = d for y in [d] do a + (y |> sq) + (sq <| y)",
                "type v = [3]f32\ndef m (x: v) : v = x -- c\n-- ==\n-- input { 1 }\nentry z (x: i32) : i32 = x",
            ][..],
        );
        (
            templates,
            prop::collection::vec(prop::sample::select(&["", " ", "\n  ", "\n\n"][..]), 200),
        )
            .prop_map(|(template, gaps)| {
                let mut out = String::new();
                let (tokens, _) = crate::tokenize(template);
                let mut pos = 0usize;
                for (idx, token) in tokens.iter().enumerate() {
                    let text = &template[pos..pos + usize::from(token.len)];
                    pos += usize::from(token.len);
                    if token.kind == crate::SyntaxKind::WHITESPACE && !text.contains('\n') {
                        out.push(' ');
                        out.push_str(gaps[idx % gaps.len()]);
                    } else {
                        out.push_str(text);
                    }
                }
                out
            })
    }

    proptest! {
        #[test]
        fn formatting_is_idempotent_and_keeps_tokens(text in program()) {
            if let Ok(once) = format(&text) {
                prop_assert_eq!(format(&once), Ok(once.clone()));
                prop_assert_eq!(tokens(&once), tokens(&text));
            }
        }

        #[test]
        fn well_formed_programs_format_idempotently(text in spaced_program()) {
            let once = format(&text);
            prop_assert!(once.is_ok() || !crate::parse(&text).errors().is_empty(), "{:?}", once);
            if let Ok(once) = once {
                prop_assert_eq!(format(&once), Ok(once.clone()));
                prop_assert_eq!(tokens(&once), tokens(&text));
            }
        }
    }
}
