//! Tokens of value text and random specs: brackets, parentheses, commas, `..`, a
//! lone `-` (before `f32.inf`), numbers and words.
//!
//! A number token is `-`? then digits (`0x` hex, or decimal with an optional fraction
//! and exponent, `_` allowed between digits), then an optional suffix of letters and
//! digits; the token records where the suffix starts. Words are identifiers with at
//! most one `.`-joined part (`f32.nan`). Whitespace and `--` comments are skipped.
//! The lexer is pull-based, so huge inputs need no token buffer.

use crate::text::ParseErrorKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    LBracket,
    RBracket,
    LParen,
    RParen,
    Comma,
    DotDot,
    Minus,
    /// A numeric literal, sign included.
    Number,
    Word,
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// For numbers, where the suffix starts (`end` when there is none).
    pub(crate) suffix_start: usize,
}

pub(crate) struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, pos: 0 }
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.text.as_bytes().get(self.pos + ahead).copied()
    }

    fn eat_while(&mut self, pred: impl Fn(u8) -> bool) {
        while self.peek_byte(0).is_some_and(&pred) {
            self.pos += 1;
        }
    }

    fn skip_trivia(&mut self) {
        loop {
            let rest = &self.text[self.pos..];
            if rest.starts_with("--") {
                self.pos += rest.find('\n').unwrap_or(rest.len());
                continue;
            }
            match rest.chars().next() {
                Some(ch) if ch.is_whitespace() => self.pos += ch.len_utf8(),
                _ => return,
            }
        }
    }

    /// The next token, or the offset and kind of a lexical error.
    pub(crate) fn next_token(&mut self) -> Result<Token, (usize, ParseErrorKind)> {
        self.skip_trivia();
        let start = self.pos;
        let Some(first) = self.text[start..].chars().next() else {
            return Ok(self.token(TokenKind::Eof, start));
        };
        let kind = match first {
            '[' => self.single(TokenKind::LBracket),
            ']' => self.single(TokenKind::RBracket),
            '(' => self.single(TokenKind::LParen),
            ')' => self.single(TokenKind::RParen),
            ',' => self.single(TokenKind::Comma),
            '.' if self.peek_byte(1) == Some(b'.') => {
                self.pos += 2;
                TokenKind::DotDot
            }
            '-' if self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) => {
                self.pos += 1;
                return Ok(self.number(start));
            }
            '-' => self.single(TokenKind::Minus),
            '0'..='9' => return Ok(self.number(start)),
            'a'..='z' | 'A'..='Z' | '_' => {
                self.word_part();
                if self.peek_byte(0) == Some(b'.')
                    && self.peek_byte(1).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                {
                    self.pos += 1;
                    self.word_part();
                }
                TokenKind::Word
            }
            other => return Err((start, ParseErrorKind::UnexpectedChar(other))),
        };
        Ok(self.token(kind, start))
    }

    fn single(&mut self, kind: TokenKind) -> TokenKind {
        self.pos += 1;
        kind
    }

    fn word_part(&mut self) {
        self.eat_while(|b| b.is_ascii_alphanumeric() || b == b'_');
    }

    fn token(&self, kind: TokenKind, start: usize) -> Token {
        Token { kind, start, end: self.pos, suffix_start: self.pos }
    }

    /// Lexes a number whose digits start at `self.pos` (after any `-`).
    fn number(&mut self, start: usize) -> Token {
        let is_hex =
            self.peek_byte(0) == Some(b'0') && matches!(self.peek_byte(1), Some(b'x' | b'X'));
        if is_hex {
            self.pos += 2;
            self.eat_while(|b| b.is_ascii_hexdigit() || b == b'_');
        } else {
            self.eat_while(|b| b.is_ascii_digit() || b == b'_');
            if self.peek_byte(0) == Some(b'.')
                && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit())
            {
                self.pos += 1;
                self.eat_while(|b| b.is_ascii_digit() || b == b'_');
            }
            if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
                let digits_at = match self.peek_byte(1) {
                    Some(b'+' | b'-') => 2,
                    _ => 1,
                };
                if self.peek_byte(digits_at).is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += digits_at;
                    self.eat_while(|b| b.is_ascii_digit() || b == b'_');
                }
            }
        }
        let suffix_start = self.pos;
        self.word_part();
        Token { kind: TokenKind::Number, start, end: self.pos, suffix_start }
    }
}
