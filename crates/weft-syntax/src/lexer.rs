//! The lexer: source text to a flat list of tokens with lengths, plus errors.
//!
//! Hand-written so that every byte of any input becomes part of some token (the tree
//! is lossless) and so that the literal rules of LANGUAGE.md section 1 are in one place.
//! The lexer never fails: unknown characters become `ERROR_TOKEN`s with an error.
//!
//! One context rule lives here instead of the parser: digits directly after a `.`
//! lex as an integer with no fraction, so `t.0.1` is `t . 0 . 1` (tuple projections)
//! and never `t . 0.1`. A `.` can only be followed by digits in projection position.

use text_size::{TextRange, TextSize};

use crate::SyntaxKind::{self, *};

/// A token: its kind and length in bytes. Positions are prefix sums of lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub len: TextSize,
}

/// A lexical error with the range of the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub range: TextRange,
    pub message: String,
}

/// Splits `text` into tokens. The lengths sum to `text.len()`.
pub fn tokenize(text: &str) -> (Vec<Token>, Vec<LexError>) {
    let mut tokens = Vec::new();
    let errors = lex(text, |token| tokens.push(token));
    (tokens, errors)
}

/// Gives each token of `text` to `emit`, in order, without keeping them (a file's
/// declarations are found on every edit: `split.rs`); returns the errors.
pub(crate) fn lex(text: &str, emit: impl FnMut(Token)) -> Vec<LexError> {
    let mut lexer = Lexer { text, pos: 0, previous: None, emit, errors: Vec::new() };
    lexer.run();
    lexer.errors
}

struct Lexer<'a, F: FnMut(Token)> {
    text: &'a str,
    pos: usize,
    /// The kind of the last token emitted.
    previous: Option<SyntaxKind>,
    emit: F,
    errors: Vec<LexError>,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

impl<F: FnMut(Token)> Lexer<'_, F> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn push(&mut self, kind: SyntaxKind, len: usize) {
        let len = TextSize::try_from(len).expect("invariant: source length fits in u32");
        (self.emit)(Token { kind, len });
        self.previous = Some(kind);
        self.pos += usize::from(len);
    }

    fn error(&mut self, start: usize, end: usize, message: impl Into<String>) {
        let range = TextRange::new(to_size(start), to_size(end));
        self.errors.push(LexError { range, message: message.into() });
    }

    fn previous_is_adjacent_dot(&self) -> bool {
        self.previous == Some(DOT)
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                c if c.is_whitespace() => {
                    let len =
                        self.rest().find(|c: char| !c.is_whitespace()).unwrap_or(self.rest().len());
                    self.push(WHITESPACE, len);
                }
                '-' if self.rest().starts_with("--") => {
                    let len = self.rest().find('\n').unwrap_or(self.rest().len());
                    self.push(COMMENT, len);
                }
                c if is_ident_start(c) => {
                    let len = self
                        .rest()
                        .find(|c: char| !is_ident_continue(c))
                        .unwrap_or(self.rest().len());
                    let kind = SyntaxKind::from_keyword(&self.rest()[..len]).unwrap_or(IDENT);
                    self.push(kind, len);
                }
                '0'..='9' => self.number(),
                '"' => self.string(),
                _ => {
                    if let Some((kind, len)) = self.punct() {
                        self.push(kind, len);
                    } else {
                        // A run of unknown characters is one token with one error.
                        let len = self
                            .rest()
                            .find(|c: char| {
                                c.is_whitespace()
                                    || c.is_ascii_alphanumeric()
                                    || "()[]{},:=\\.@'\"-+*/%<>!&|^_".contains(c)
                            })
                            .unwrap_or(self.rest().len())
                            .max(c.len_utf8());
                        let run = &self.rest()[..len];
                        let message = if run.contains('\0') {
                            "unexpected NUL character".to_owned()
                        } else if run.chars().count() == 1 {
                            format!("unexpected character `{}`", run.escape_debug())
                        } else {
                            format!("unexpected characters `{}`", run.escape_debug())
                        };
                        self.push(ERROR_TOKEN, len);
                        self.error(start, start + len, message);
                    }
                }
            }
        }
    }

    fn punct(&self) -> Option<(SyntaxKind, usize)> {
        let rest = self.rest();
        const TWO: &[(&str, SyntaxKind)] = &[
            (":>", COLON_GT),
            ("->", ARROW),
            ("|>", PIPE_GT),
            ("<|", LT_PIPE),
            ("||", PIPE2),
            ("&&", AMP2),
            ("==", EQ2),
            ("!=", NEQ),
            ("<=", LTEQ),
            (">=", GTEQ),
            ("<<", SHL),
            (">>", SHR),
            ("**", STAR2),
            ("++", PLUS2),
        ];
        for (text, kind) in TWO {
            if rest.starts_with(text) {
                return Some((*kind, 2));
            }
        }
        let kind = match rest.chars().next()? {
            '(' => L_PAREN,
            ')' => R_PAREN,
            '[' => L_BRACK,
            '{' => L_BRACE,
            '}' => R_BRACE,
            ']' => R_BRACK,
            ',' => COMMA,
            ':' => COLON,
            '=' => EQ,
            '\\' => BACKSLASH,
            '.' => DOT,
            '@' => AT,
            '\'' => QUOTE,
            '<' => LT,
            '>' => GT,
            '|' => PIPE,
            '^' => CARET,
            '&' => AMP,
            '+' => PLUS,
            '-' => MINUS,
            '*' => STAR,
            '/' => SLASH,
            '%' => PERCENT,
            '!' => BANG,
            '?' => QUESTION,
            _ => return None,
        };
        Some((kind, 1))
    }

    fn string(&mut self) {
        let start = self.pos;
        let mut escaped = false;
        for (idx, c) in self.rest().char_indices().skip(1) {
            match c {
                '\n' => break,
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    self.push(STRING, idx + 1);
                    return;
                }
                _ => escaped = false,
            }
        }
        let len = self.rest().find('\n').unwrap_or(self.rest().len());
        self.push(STRING, len);
        self.error(start, start + len, "unterminated string literal");
    }

    /// Numbers: decimal or hex digits with `_`, an optional fraction and exponent,
    /// then any identifier-like suffix. Whether the suffix is valid is checked when
    /// the literal's value is computed (`literal.rs`), so `12abc` is one token with
    /// one clear error instead of two confusing tokens.
    fn number(&mut self) {
        let bytes = self.rest().as_bytes();
        let mut len = 0;
        let digits = |bytes: &[u8], mut i: usize, hex: bool| {
            while i < bytes.len()
                && (bytes[i].is_ascii_digit()
                    || bytes[i] == b'_'
                    || (hex && bytes[i].is_ascii_hexdigit()))
            {
                i += 1;
            }
            i
        };
        let mut is_float = false;
        if bytes.starts_with(b"0x") || bytes.starts_with(b"0X") {
            len = digits(bytes, 2, true);
        } else {
            len = digits(bytes, len, false);
            if !self.previous_is_adjacent_dot() {
                if bytes.get(len) == Some(&b'.')
                    && bytes.get(len + 1).is_some_and(u8::is_ascii_digit)
                {
                    is_float = true;
                    len = digits(bytes, len + 1, false);
                }
                if matches!(bytes.get(len), Some(b'e' | b'E')) {
                    let mut exp = len + 1;
                    if matches!(bytes.get(exp), Some(b'+' | b'-')) {
                        exp += 1;
                    }
                    if bytes.get(exp).is_some_and(u8::is_ascii_digit) {
                        is_float = true;
                        len = digits(bytes, exp, false);
                    }
                }
            }
        }
        let suffix_start = len;
        if !self.previous_is_adjacent_dot() {
            while len < bytes.len() && (bytes[len].is_ascii_alphanumeric() || bytes[len] == b'_') {
                len += 1;
            }
        }
        let suffix = &self.rest()[suffix_start..len];
        if suffix.starts_with('f') && !self.rest().starts_with("0x") {
            is_float = true;
        }
        self.push(if is_float { FLOAT_NUMBER } else { INT_NUMBER }, len);
    }
}

fn to_size(offset: usize) -> TextSize {
    TextSize::try_from(offset).expect("invariant: source length fits in u32")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    fn check(text: &str, expect: Expect) {
        let (tokens, errors) = tokenize(text);
        let mut out = String::new();
        let mut pos = 0usize;
        for token in tokens {
            let len = usize::from(token.len);
            out.push_str(&format!("{:?} {:?}\n", token.kind, &text[pos..pos + len]));
            pos += len;
        }
        for error in errors {
            out.push_str(&format!("error {:?}: {}\n", error.range, error.message));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn numbers_with_suffixes_and_projections() {
        check(
            "42 0xff 1_000i64 1.5 2e-3 3f32 t.0.1 12abc",
            expect![[r#"
                INT_NUMBER "42"
                WHITESPACE " "
                INT_NUMBER "0xff"
                WHITESPACE " "
                INT_NUMBER "1_000i64"
                WHITESPACE " "
                FLOAT_NUMBER "1.5"
                WHITESPACE " "
                FLOAT_NUMBER "2e-3"
                WHITESPACE " "
                FLOAT_NUMBER "3f32"
                WHITESPACE " "
                IDENT "t"
                DOT "."
                INT_NUMBER "0"
                DOT "."
                INT_NUMBER "1"
                WHITESPACE " "
                INT_NUMBER "12abc"
            "#]],
        );
    }

    #[test]
    fn operators_comments_and_errors() {
        check(
            "a:>b -- c\n(**) x' \"s\" \"open\n€\0",
            expect![[r#"
                IDENT "a"
                COLON_GT ":>"
                IDENT "b"
                WHITESPACE " "
                COMMENT "-- c"
                WHITESPACE "\n"
                L_PAREN "("
                STAR2 "**"
                R_PAREN ")"
                WHITESPACE " "
                IDENT "x'"
                WHITESPACE " "
                STRING "\"s\""
                WHITESPACE " "
                STRING "\"open"
                WHITESPACE "\n"
                ERROR_TOKEN "€\0"
                error 22..27: unterminated string literal
                error 28..32: unexpected NUL character
            "#]],
        );
    }
}
