//! Test blocks: Futhark-style cases in the comments above an `entry` (LANGUAGE.md
//! section 3, "Test blocks").
//!
//! ```text
//! -- ==
//! -- input { [1f32, 2f32] [3f32, 4f32] }
//! -- output { 11f32 }
//! -- random input { [1000]f32 [1000]f32 }
//! -- input { [1i64] }
//! -- error: out of bounds
//! ```
//!
//! A `-- bench: SPECS` line (the inputs `weft bench` draws, docs/cli.md), or a named
//! size `-- bench small: SPECS`, may sit among the block's lines; it is not a case, and
//! the block skips it ([`bench_comment`] recognises one).
//!
//! The block lives in the comment tokens that the parser attaches to the declaration.
//! This module finds the cases and the source range of each value text; it does not
//! parse the values themselves (that is `weft-values`' job), so the syntax crate stays
//! free of value semantics.

use text_size::{TextRange, TextSize};

use crate::SyntaxToken;
use crate::ast;

/// A `bench:` comment: `size` is `None` for the entry's main `-- bench:` line and
/// `Some("small")` for `-- bench small:`; `specs` is the text after the colon, which
/// starts `specs_offset` bytes into the comment's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchComment<'a> {
    pub size: Option<&'a str>,
    pub specs: &'a str,
    pub specs_offset: usize,
}

/// Recognises the body of a comment (the text after `--`) as a `bench:` line: `bench:`,
/// or `bench NAME:` with a name of letters, digits, `_` and `-`.
pub fn bench_comment(body: &str) -> Option<BenchComment<'_>> {
    let trimmed = body.trim_start();
    let after = trimmed.strip_prefix("bench")?;
    let (size, rest) = match after.strip_prefix(':') {
        Some(rest) => (None, rest),
        None => {
            let named = after.strip_prefix(' ')?.trim_start();
            let colon = named.find(':')?;
            let name = &named[..colon];
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return None;
            }
            (Some(name), &named[colon + 1..])
        }
    };
    Some(BenchComment { size, specs: rest, specs_offset: body.len() - rest.len() })
}

/// All cases of one declaration's test block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestBlock {
    pub cases: Vec<TestCase>,
    /// The range of the `-- ==` line.
    pub range: Option<TextRange>,
}

/// One case: inputs and what is expected of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub input: TestInput,
    pub expected: Expected,
    /// From the `input` keyword to the end of the expectation.
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestInput {
    /// `input { values }`: the text between the braces.
    Values(SourceText),
    /// `random input { specs }`: the text between the braces.
    Random(SourceText),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// `output { values }`.
    Output(SourceText),
    /// `error: REGEX`, the regex up to the end of its line.
    Error(SourceText),
    /// Nothing: a random input compared with the interpreter, or an input that must run.
    Runs,
}

/// A piece of the block with its range in the source file. Multi-line text keeps
/// its line breaks; the comment markers of continuation lines are removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceText {
    pub text: String,
    pub range: TextRange,
}

/// A malformed test block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBlockError {
    pub range: TextRange,
    pub message: String,
}

/// Reads the test block of a declaration, if it has one.
pub fn test_block(def: &ast::Def) -> (Option<TestBlock>, Vec<TestBlockError>) {
    let comments: Vec<SyntaxToken> = def.leading_comments().collect();
    let Some(start) = comments.iter().position(|c| c.text().trim_start_matches('-').trim() == "==")
    else {
        return (None, Vec::new());
    };
    let mut text = Text::default();
    for comment in &comments[start + 1..] {
        let body = comment.text().strip_prefix("--").unwrap_or(comment.text());
        let body_start = comment.text_range().start() + TextSize::of("--");
        text.push_line(body, body_start);
    }
    let mut reader = Reader { text: &text, pos: 0, errors: Vec::new() };
    let mut block = TestBlock { cases: Vec::new(), range: Some(comments[start].text_range()) };
    reader.cases(&mut block);
    (Some(block), reader.errors)
}

/// The comment bodies joined by newlines, with a map back to source offsets.
#[derive(Default)]
struct Text {
    joined: String,
    /// (offset in `joined`, offset in the source) at the start of each line.
    lines: Vec<(usize, TextSize)>,
}

impl Text {
    fn push_line(&mut self, body: &str, source_start: TextSize) {
        if !self.joined.is_empty() {
            self.joined.push('\n');
        }
        self.lines.push((self.joined.len(), source_start));
        self.joined.push_str(body);
    }

    fn source_offset(&self, pos: usize) -> TextSize {
        let line = self.lines.partition_point(|(start, _)| *start <= pos).saturating_sub(1);
        match self.lines.get(line) {
            Some((start, source)) => {
                let delta =
                    TextSize::try_from(pos - start).expect("invariant: a comment fits in u32");
                *source + delta
            }
            None => TextSize::from(0),
        }
    }

    fn range(&self, start: usize, end: usize) -> TextRange {
        TextRange::new(
            self.source_offset(start),
            self.source_offset(end).max(self.source_offset(start)),
        )
    }
}

struct Reader<'a> {
    text: &'a Text,
    pos: usize,
    errors: Vec<TestBlockError>,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text.joined[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat_word(&mut self, word: &str) -> bool {
        self.skip_space();
        let rest = self.rest();
        // `strip_prefix`, not slicing: `rest` may have a multi-byte character there.
        let followed_ok = rest.strip_prefix(word).is_some_and(|after| {
            after.chars().next().is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
        });
        if followed_ok {
            self.pos += word.len();
            return true;
        }
        false
    }

    fn error(&mut self, start: usize, end: usize, message: impl Into<String>) {
        self.errors
            .push(TestBlockError { range: self.text.range(start, end), message: message.into() });
    }

    /// Skips the rest of the current line (after an error).
    fn skip_line(&mut self) {
        let rest = self.rest();
        self.pos += rest.find('\n').map_or(rest.len(), |i| i + 1);
    }

    fn braced(&mut self, what: &str) -> Option<SourceText> {
        self.skip_space();
        let start = self.pos;
        if !self.rest().starts_with('{') {
            let end = start + self.rest().chars().next().map_or(0, char::len_utf8);
            self.error(start, end, format!("expected `{{` after `{what}`"));
            self.skip_line();
            return None;
        }
        let Some(close) = self.rest().find('}') else {
            self.error(start, start + 1, format!("unclosed `{{` in `{what}`"));
            self.pos = self.text.joined.len();
            return None;
        };
        let inner_start = start + 1;
        let inner_end = start + close;
        self.pos = inner_end + 1;
        let text = self.text.joined[inner_start..inner_end].to_owned();
        Some(SourceText { text, range: self.text.range(inner_start, inner_end) })
    }

    fn cases(&mut self, block: &mut TestBlock) {
        loop {
            self.skip_space();
            if self.rest().is_empty() {
                return;
            }
            let start = self.pos;
            if bench_comment(self.rest()).is_some() {
                self.skip_line();
                continue;
            }
            let input = if self.eat_word("random") {
                if !self.eat_word("input") {
                    self.error(start, self.pos, "expected `input` after `random`");
                    self.skip_line();
                    continue;
                }
                self.braced("random input").map(TestInput::Random)
            } else if self.eat_word("input") {
                self.braced("input").map(TestInput::Values)
            } else {
                let word_end =
                    start + self.rest().find(char::is_whitespace).unwrap_or(self.rest().len());
                let found = self.text.joined[start..word_end].to_owned();
                self.error(
                    start,
                    word_end,
                    format!("expected `input` or `random input` in a test block, found `{found}`"),
                );
                self.skip_line();
                continue;
            };
            let Some(input) = input else { continue };
            let expected = self.expected();
            block.cases.push(TestCase { input, expected, range: self.text.range(start, self.pos) });
        }
    }

    fn expected(&mut self) -> Expected {
        let save = self.pos;
        if self.eat_word("output") {
            return self.braced("output").map_or(Expected::Runs, Expected::Output);
        }
        self.skip_space();
        if self.rest().starts_with("error:") {
            self.pos += "error:".len();
            let rest = self.rest();
            let line_len = rest.find('\n').unwrap_or(rest.len());
            let raw = &rest[..line_len];
            let lead = raw.len() - raw.trim_start().len();
            let start = self.pos + lead;
            let end = self.pos + raw.trim_end().len();
            let text = self.text.joined[start..end.max(start)].to_owned();
            self.pos += line_len;
            if text.is_empty() {
                self.error(start, start, "expected a regular expression after `error:`");
            }
            return Expected::Error(SourceText {
                text,
                range: self.text.range(start, end.max(start)),
            });
        }
        self.pos = save;
        Expected::Runs
    }
}

impl TestBlock {
    /// The test block of `def`, ignoring errors.
    pub fn of(def: &ast::Def) -> Option<TestBlock> {
        test_block(def).0
    }
}

impl ast::Def {
    /// Whether the declaration has a `-- ==` block.
    pub fn has_test_block(&self) -> bool {
        self.leading_comments().any(|c| c.text().trim_start_matches('-').trim() == "==")
    }
}
