//! Fuzzes the formatter: on any text it formats, formatting is idempotent, keeps the
//! same tokens apart from whitespace (comments included), and a file that
//! checked without errors still does, with the same number of diagnostics of each code.
//! Run with `cargo +nightly fuzz run fmt` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_hir::{RootDatabase, file_diagnostics};
use weft_syntax::SyntaxKind;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let text = text.to_owned();
    weft_syntax::on_large_stack(move || {
        let Ok(formatted) = weft_syntax::format::format(&text) else { return };
        let again = weft_syntax::format::format(&formatted).expect("formatted text parses");
        assert_eq!(again, formatted, "formatting is not idempotent");
        assert_eq!(tokens(&text), tokens(&formatted), "formatting changed the tokens");
        assert_eq!(codes(&text), codes(&formatted), "formatting changed the diagnostics");
    });
});

/// The non-whitespace tokens with their text.
fn tokens(text: &str) -> Vec<(SyntaxKind, String)> {
    let (tokens, _) = weft_syntax::tokenize(text);
    let mut pos = 0usize;
    let mut out = Vec::new();
    for token in tokens {
        let len = usize::from(token.len);
        let piece = &text[pos..pos + len];
        pos += len;
        if token.kind != SyntaxKind::WHITESPACE {
            // A comment's trailing spaces are not part of what it says.
            out.push((token.kind, piece.trim_end().to_owned()));
        }
    }
    out
}

/// Diagnostic codes, sorted (ranges move when text is formatted).
fn codes(text: &str) -> Vec<&'static str> {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", text);
    let mut codes: Vec<&'static str> = file_diagnostics(&db, file).iter().map(|d| d.code()).collect();
    codes.sort_unstable();
    codes
}
