//! Test blocks of `.apl` files: the comment form of Weft's `-- ==` block.
//!
//! ```text
//! ⍝ ==
//! ⍝ output { 1060i64 }
//! ```
//!
//! `output` holds the program's value (Weft's textual value syntax); `⍝ error:
//! TEXT` expects a run-time error whose message contains TEXT. Several blocks may
//! follow one another; APL programs take no inputs.

/// One expected outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum TestCase {
    Output { text: String, line: usize },
    Error { text: String, line: usize },
}

/// The test cases of a file, in order.
pub fn tests_of(text: &str) -> Vec<TestCase> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(String, usize)> = None;
    for (k, line) in text.lines().enumerate() {
        let Some(comment) = line.trim_start().strip_prefix('⍝') else {
            in_block = false;
            continue;
        };
        let c = comment.trim();
        if c == "==" {
            in_block = true;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some((mut acc, start)) = pending.take() {
            acc.push(' ');
            acc.push_str(c);
            finish(acc, start, &mut pending, &mut out);
            continue;
        }
        if let Some(rest) = c.strip_prefix("output") {
            finish(rest.trim().to_owned(), k + 1, &mut pending, &mut out);
        } else if let Some(rest) = c.strip_prefix("error:") {
            out.push(TestCase::Error { text: rest.trim().to_owned(), line: k + 1 });
        }
    }
    out
}

/// Completes an `output { … }` that may span lines.
fn finish(
    acc: String,
    line: usize,
    pending: &mut Option<(String, usize)>,
    out: &mut Vec<TestCase>,
) {
    let opens = acc.matches('{').count();
    let closes = acc.matches('}').count();
    if opens > closes {
        *pending = Some((acc, line));
        return;
    }
    let inner = acc.trim().trim_start_matches('{').trim_end_matches('}').trim().to_owned();
    out.push(TestCase::Output { text: inner, line });
}
