//! Robustness of the whole checker (parser, lowering, inference, levels, diagnostics):
//! any text gives diagnostics, never a panic or a stack overflow; programs nested
//! 100,000 levels deep check without error, and one level more gives exactly one
//! `syntax-error`. Everything runs on the analysis thread ([`on_large_stack`]), the
//! database's drop included, as in the CLI and the language server.

use proptest::prelude::*;
use weft_hir::{RootDatabase, file_diagnostics};
use weft_syntax::{MAX_NESTING, on_large_stack};

/// The diagnostic codes of `text` checked as `main.weft`, beside a small library.
fn codes(text: &str) -> Vec<&'static str> {
    let text = text.to_owned();
    on_large_stack(move || {
        let mut db = RootDatabase::default();
        db.set_file("lib.weft", "def helper (x: i32) : i32 = x + 1\n");
        let file = db.set_file("main.weft", &text);
        let codes = file_diagnostics(&db, file).iter().map(|d| d.code()).collect();
        drop(db);
        codes
    })
}

/// Checks `text`. (Speed is measured by the benchmarks, never asserted in tests; a
/// quadratic regression shows here as a test that takes minutes.)
fn timed_codes(_what: &str, text: &str) -> Vec<&'static str> {
    codes(text)
}

fn nested_parens(depth: usize) -> String {
    format!("def x : i32 = {}1{}\n", "(".repeat(depth), ")".repeat(depth))
}

fn nested_lets(depth: usize) -> String {
    format!("def x : i32 = {}x\n", "let x = 1 in ".repeat(depth))
}

/// `\x -> \x -> ... x` applied to as many arguments: a well-typed `i32`.
fn nested_lambdas(depth: usize) -> String {
    format!("def x : i32 = ({}x){}\n", "\\x -> ".repeat(depth), " 1".repeat(depth))
}

#[test]
fn nesting_100_000_levels_checks_without_error() {
    let depth = MAX_NESTING as usize;
    // The parentheses around the lambda chain are one more level.
    for (what, text) in [
        ("parentheses", nested_parens(depth)),
        ("lets", nested_lets(depth)),
        ("lambdas", nested_lambdas(depth - 1)),
    ] {
        assert_eq!(timed_codes(what, &text), Vec::<&str>::new(), "{what}");
    }
}

#[test]
fn nesting_100_001_levels_is_one_syntax_error() {
    let depth = MAX_NESTING as usize + 1;
    for (what, text) in [
        ("parentheses", nested_parens(depth)),
        ("lets", nested_lets(depth)),
        ("lambdas", nested_lambdas(depth)),
    ] {
        assert_eq!(timed_codes(what, &text), ["syntax-error"], "{what}");
    }
}

#[test]
fn megabyte_lines_check() {
    const MB: usize = 1 << 20;
    // Each `+` of a left-nested chain is a level of nesting for the phases after
    // parsing: a sum within the limit checks, a megabyte one is one syntax error.
    let sum = format!("def x : i32 = 1{}\n", " + 1".repeat(MAX_NESTING as usize - 1));
    assert_eq!(timed_codes("a long sum", &sum), Vec::<&str>::new());
    let sum = format!("def x : i32 = 1{}\n", " + 1".repeat(MB / 4));
    assert_eq!(timed_codes("a megabyte sum", &sum), ["syntax-error"]);
    let array = format!("def x : [262145]i32 = [1{}]\n", ", 1".repeat(MB / 4));
    assert_eq!(timed_codes("a long array", &array), Vec::<&str>::new());
    let name = format!("def {} : i32 = 1\n", "a".repeat(MB));
    assert_eq!(timed_codes("a long name", &name), Vec::<&str>::new());
    let comment = format!("def x : i32 = 1 -- {}", "c".repeat(MB));
    assert_eq!(timed_codes("a long comment", &comment), Vec::<&str>::new());
    let garbage = "+*)([\\".repeat(MB / 6);
    assert!(!timed_codes("a long line of operators", &garbage).is_empty());
}

#[test]
fn unterminated_strings_and_nul_bytes_give_diagnostics() {
    for text in [
        "import \"lib",
        "import \"lib\ndef x : i32 = 1\n",
        "def x : i32 = \"abc",
        "def x : i32 = 1\0\0\ndef y : i32 = 2\n",
        "\0",
        "def \0 : i32 = 1",
        "def x : i32 = \u{FFFD}\u{FFFD}",
    ] {
        assert!(!codes(text).is_empty(), "{text:?}");
    }
    assert_eq!(
        codes("def x : i32 = 1 --"),
        Vec::<&str>::new(),
        "a comment ends at the end of file"
    );
    assert!(codes("def x : i32 = \"abc").contains(&"syntax-error"));
    assert!(codes("def x : i32 = 1\0").contains(&"syntax-error"));
}

/// Found by `tests/fuzz_corpus.rs`: the entry-type check printed `{unknown} -> i32`.
#[test]
fn entry_with_an_unknown_type_reports_only_the_unknown_type() {
    assert_eq!(codes("entry adder (x: i32) : i99 -> i32 = (+x)\n"), ["unknown-type"]);
}

/// Tokens of Weft, in the proportions of real programs, plus some broken ones.
const TOKENS: &[&str] = &[
    "def",
    "entry",
    "type",
    "import",
    "let",
    "in",
    "if",
    "then",
    "else",
    "loop",
    "for",
    "while",
    "do",
    "true",
    "false",
    "x",
    "xs",
    "f",
    "n",
    "m",
    "'a",
    "a",
    "i32",
    "i64",
    "u32",
    "u64",
    "f32",
    "f64",
    "bool",
    "map",
    "map2",
    "reduce",
    "scan",
    "iota",
    "replicate",
    "zip",
    "unzip",
    "transpose",
    "flatten",
    "unflatten",
    "split",
    "length",
    "scatter",
    "generate",
    "f32.sqrt",
    "to_local",
    "force",
    "map@group",
    "map@thread",
    "reduce@seq",
    "@grid",
    "@bogus",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    ":>",
    "=",
    "->",
    "\\",
    ".",
    ".0",
    ".1",
    "@",
    "+",
    "-",
    "*",
    "/",
    "%",
    "**",
    "<",
    "<=",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "++",
    "_",
    "0",
    "1",
    "42",
    "-1",
    "2.5",
    "0.1",
    "1e400",
    "0xff",
    "3f32",
    "1i64",
    "99999999999999999999",
    "1_000",
    "0x",
    "1.5u32",
    " ",
    " ",
    " ",
    "\n",
    "\n  ",
    "-- c\n",
    "-- ==\n",
    "-- input { 1 }\n",
    "\"s\"",
    "\"",
    "\"../lib\"",
    "\0",
    "\u{FFFD}",
    "é",
    "\t",
];

fn token_soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(TOKENS), 0..120).prop_map(|t| t.join(" "))
}

/// Structured fragments: well-formed defs with one token swapped or removed.
fn mutated_def() -> impl Strategy<Value = String> {
    let defs = vec![
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)",
        "entry scale (xs: [n]f32) (a: f32) : [n]f32 = map (\\x -> a * x + 1) xs",
        "def h [k] (cs: [k]f32) (x: f32) : f32 = loop acc = 0f32 for i < k do acc * x + cs[i]",
        "def t (a: [n][m]f32) : [m][n]f32 = transpose (map (\\r -> r[0:m]) a)",
        "def s (xs: [n]i64) : [n]i64 = let (p, q) = unzip (zip xs xs) in scan (+) 0 p",
        "entry g (xs: [n]f32) : [n/16][16]f32 = map@group (\\c -> map@thread (*2) c) (split 16 xs)",
    ];
    (proptest::sample::select(defs), any::<usize>(), proptest::sample::select(TOKENS)).prop_map(
        |(def, at, token)| {
            let words: Vec<&str> = def.split(' ').collect();
            let at = at % words.len();
            let mut out: Vec<&str> = words.clone();
            if at.is_multiple_of(2) {
                out[at] = token;
            } else {
                out.remove(at);
            }
            format!("import \"lib\"\n{}\n{def}\n", out.join(" "))
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_text_gives_diagnostics_not_panics(text in "\\PC{0,300}") {
        codes(&text);
    }

    #[test]
    fn any_bytes_as_lossy_utf8_give_diagnostics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        codes(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soups_give_diagnostics_not_panics(text in token_soup()) {
        codes(&text);
    }

    #[test]
    fn mutated_defs_give_diagnostics_not_panics(text in mutated_def()) {
        codes(&text);
    }
}
