//! Every size a hover or a performance diagnostic shows is named as in the signature
//! the user is looking at: the declaration holding the cursor, or the entry the figures
//! come from when the text names it. Checked on every example, at every name; so are
//! the hovers' length (an 80x24 float with the prediction in it) and their formulas
//! (simplified, with no name of the compiler's own).

use std::collections::BTreeSet;
use std::path::Path;

use crate::{AnalysisHost, Change, FilePosition, TextSize};

/// The examples, as the workspace holds them (`examples/lib` is imported).
fn examples() -> (AnalysisHost, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut change = Change::default();
    let mut names = Vec::new();
    for dir in [root.clone(), root.join("lib")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "weft") {
                let name = format!("examples/{}", path.strip_prefix(&root).unwrap().display());
                change.set_file(name.clone(), std::fs::read_to_string(&path).unwrap());
                names.push(name);
            }
        }
    }
    names.sort();
    let mut host = AnalysisHost::new();
    host.apply_change(change);
    (host, names)
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'\''
}

fn idents(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_ident_start(b[i]) && (i == 0 || !is_ident(b[i - 1])) {
            let start = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            out.push(&text[start..i]);
        } else {
            i += 1;
        }
    }
    out
}

/// The size names a declaration's header writes (`def f [k] (t: i64) (xs: [n]f32)`): the
/// names inside its brackets, and its integer parameters, up to its `=`.
fn header_sizes(header: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for group in header.split('(').skip(1) {
        if let Some((name, ty)) = group.split_once(':')
            && let [name] = idents(name).as_slice()
            && ["i64", "i32", "u64", "u32"].iter().any(|t| ty.trim_start().starts_with(t))
        {
            out.insert((*name).to_owned());
        }
    }
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in header.char_indices() {
        match c {
            '[' => {
                depth += 1;
                start = i + 1;
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.extend(idents(&header[start..i]).into_iter().map(str::to_owned));
            }
            _ => {}
        }
    }
    out
}

/// Per top-level declaration of a file: its start offset, its name and its header's
/// size names.
fn declarations(text: &str) -> Vec<(usize, String, BTreeSet<String>)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        for keyword in ["def ", "entry "] {
            if let Some(rest) = line.strip_prefix(keyword) {
                let name = idents(rest).first().copied().unwrap_or_default().to_owned();
                let header_end = text[offset..].find(" =").map_or(text.len(), |e| offset + e);
                let mut sizes = header_sizes(&text[offset..header_end]);
                // Sizes the body binds (`let nb = n / 256`) are names the user sees too.
                let body_end = text[offset + line.len()..]
                    .find("\nentry ")
                    .into_iter()
                    .chain(text[offset + line.len()..].find("\ndef "))
                    .min()
                    .map_or(text.len(), |e| offset + line.len() + e);
                for (i, _) in text[offset..body_end].match_indices("let ") {
                    if let Some(name) = idents(&text[offset + i + 4..]).first() {
                        sizes.insert((*name).to_owned());
                    }
                }
                // So are a lambda's parameters (`\n -> ... iota n`: arrays of a size
                // read per element).
                for (i, _) in text[offset..body_end].match_indices('\\') {
                    let params = &text[offset + i + 1..body_end];
                    let params = params.split("->").next().unwrap_or_default();
                    sizes.extend(idents(params).into_iter().map(str::to_owned));
                }
                out.push((offset, name, sizes));
            }
        }
        offset += line.len();
    }
    out
}

/// The sizes a line of hover or diagnostic text shows, in the places that print sizes:
/// formulas before `bytes`, after `work`/`span`, the element counts of regions, the
/// launches, memory's LMADs, and the `at n = 1000, m = 4` of predictions.
fn shown_sizes(line: &str) -> Vec<String> {
    let mut formulas: Vec<&str> = Vec::new();
    let spans: Vec<&str> = line.split('`').collect();
    for (i, span) in spans.iter().enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let before = spans[i - 1];
        let after = spans.get(i + 1).copied().unwrap_or_default();
        let formula = after.starts_with(" bytes")
            || after.starts_with(" × ")
            || after.starts_with(" launches")
            || before.ends_with("work ")
            || before.ends_with("span ")
            || span.contains("{offset:");
        if formula {
            formulas.push(span.split_once("->").map_or(span, |(_, lmad)| lmad));
        }
    }
    // Memory writes its allocation sizes without backticks: `: 8*n bytes`.
    let memory = line.starts_with("**Memory**") || line.starts_with("- `mem");
    for (i, _) in line.match_indices(" bytes").filter(|_| memory) {
        let start = line[..i].rfind(": ").map_or(0, |s| s + 2);
        if !line[start..i].contains('`') {
            formulas.push(&line[start..i]);
        }
    }
    let mut out: Vec<String> = Vec::new();
    for formula in formulas {
        out.extend(
            idents(formula)
                .into_iter()
                .filter(|n| {
                    !["max", "min", "gtid", "offset", "strides", "shape", "if", "then", "else"]
                        .contains(n)
                })
                .map(str::to_owned),
        );
    }
    if let Some((_, rest)) = line.split_once(" at ") {
        let list = rest.split(" (").next().unwrap_or_default();
        for pair in list.split(", ") {
            if let Some((name, value)) = pair.split_once(" = ")
                && value.parse::<i64>().is_ok()
            {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// The entries a line says its figures come from (`(entry `E`)`, `entry `E``).
fn named_entries(line: &str) -> Vec<&str> {
    line.match_indices("entry `")
        .filter_map(|(i, m)| line[i + m.len()..].split('`').next())
        .collect()
}

/// Declarations whose hovers still show a name of another signature, and why.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "examples/fcl_matmul_tiled.weft",
        "matmul_tiled_ramp",
        "the launch costs of the inlined `matmul_tiled` keep its kernels' size names \
         (`s`, `bh`): weft-lower's cost binding does not substitute them",
    ),
    (
        "examples/fcl_transpose.weft",
        "transpose_iota",
        "as above, for `transpose_tiled` (`t`, `bm`)",
    ),
    ("examples/fcl_reverse.weft", "rev_iota", "as above, for `rev_block` (`c`)"),
    ("examples/lib/linalg.weft", "matvec", "as above, for `gemv`'s kernel (`m`, `n`)"),
    ("examples/lib/linalg.weft", "identity", "as above (`k`)"),
];

#[test]
fn every_size_shown_is_named_as_in_the_signature() {
    let (host, names) = examples();
    let analysis = host.analysis();
    let mut problems = Vec::new();
    let mut checked = 0;
    // Entries are named across files (a def of `lib/` shows the costs of its users).
    let all_decls: Vec<_> =
        names.iter().flat_map(|n| declarations(&analysis.file_text(n).unwrap().unwrap())).collect();
    let entry_sizes = |entry: &str| {
        all_decls.iter().find(|(_, n, _)| n == entry).map(|(_, _, s)| s.clone()).unwrap_or_default()
    };
    for name in &names {
        let text = analysis.file_text(name).unwrap().unwrap();
        let decls = declarations(&text);
        let mut check = |at: usize, what: &str, shown: &str| {
            let Some((_, decl, sizes)) = decls.iter().rev().find(|(start, ..)| *start <= at) else {
                return;
            };
            for line in shown.lines() {
                let mut allowed = sizes.clone();
                for entry in named_entries(line) {
                    allowed.extend(entry_sizes(entry));
                }
                let excepted = EXCEPTIONS.iter().any(|(file, d, _)| file == name && d == decl);
                for size in shown_sizes(line) {
                    checked += 1;
                    if !allowed.contains(&size) && !excepted {
                        let line_no = text[..at].matches('\n').count() + 1;
                        problems.push(format!(
                            "{name}:{line_no} ({what}, in `{decl}`, sizes {allowed:?}): \
                             `{size}` in: {line}"
                        ));
                    }
                }
            }
        };
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut in_comment = false;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => in_comment = false,
                b'-' if bytes.get(i + 1) == Some(&b'-') => in_comment = true,
                _ => {}
            }
            if !in_comment && is_ident_start(bytes[i]) && (i == 0 || !is_ident(bytes[i - 1])) {
                let position =
                    FilePosition { path: name.clone(), offset: TextSize::from(i as u32) };
                if let Some(hover) = analysis.hover_details(&position).unwrap() {
                    check(i, "hover", &hover.markdown);
                }
                while i < bytes.len() && is_ident(bytes[i]) {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
        for d in analysis.perf_diagnostics(name, &crate::CostConfig::default()).unwrap() {
            check(usize::from(d.range.start()), d.code, &d.message);
        }
    }
    assert!(checked > 1000, "only {checked} sizes were checked: the extraction is broken");
    for (file, decl, why) in EXCEPTIONS {
        eprintln!("not checked: {file} `{decl}`: {why}");
    }
    assert!(problems.is_empty(), "{} sizes misnamed:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_checker_sees_misnamed_sizes() {
    assert_eq!(shown_sizes("work `7170*n*xs + 1792*n`, span `4*n`"), ["n", "xs", "n", "n"]);
    assert_eq!(
        shown_sizes("on `H100` at cx = 3, k = 6 (the test block's first `input`)"),
        ["cx", "k"]
    );
    assert_eq!(
        shown_sizes("`r1` (`c`) on the device, `4*dim` bytes (`dim` × f32)"),
        ["dim", "dim"]
    );
    assert_eq!(
        shown_sizes(
            "**Memory**: `mem_4 -> {offset: 0; strides: [1]; shape: [k]}`, fresh allocation: 8*k bytes"
        ),
        ["k", "k"]
    );
    assert_eq!(header_sizes("entry e (t: i64) (xs: [n]f32) (a: [n][m]i64) : [k]f32"), {
        ["k", "m", "n", "t"].into_iter().map(str::to_owned).collect::<BTreeSet<_>>()
    });
}

/// Every name of every example, with its short hover and its detail view (and the
/// example's text).
fn all_hovers() -> Vec<(String, String, String, std::sync::Arc<str>)> {
    let (host, names) = examples();
    let analysis = host.analysis();
    let mut out = Vec::new();
    for name in &names {
        let text = analysis.file_text(name).unwrap().unwrap();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if is_ident_start(bytes[i]) && (i == 0 || !is_ident(bytes[i - 1])) {
                let position =
                    FilePosition { path: name.clone(), offset: TextSize::from(i as u32) };
                if let Some(hover) = analysis.hover(&position).unwrap() {
                    let details = analysis.hover_details(&position).unwrap().unwrap().markdown;
                    let line = text[..i].matches('\n').count() + 1;
                    out.push((format!("{name}:{line}"), hover.markdown, details, text.clone()));
                }
                while i < bytes.len() && is_ident(bytes[i]) {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
    }
    out
}

/// The lines a hover takes in a float 80 columns wide, as Neovim shows markdown: the
/// code fences are not shown, every other line (blank ones too) wraps at 80 columns.
fn float_lines(markdown: &str) -> usize {
    markdown
        .lines()
        .filter(|l| !l.starts_with("```"))
        .map(|l| l.trim_end().chars().count().div_ceil(80).max(1))
        .sum()
}

/// What in the GPU lines of a hover (`**Label**: ...`, a memory line) is not a
/// simplified formula in the user's names: a name of the compiler's own (a host
/// variable `v12`, a temporary `t52`, a renamed size `k_v7`, an IR node `I64(2048)`) that
/// `source` does not name, or a formula with something left to compute (`(256 > 0 ? 256
/// : 1)`, `(67/64)`, `bh*s/s`).
fn unsimplified(text: &str, source: &str) -> Vec<String> {
    let user_names: BTreeSet<&str> = idents(source).into_iter().collect();
    let gpu: Vec<&str> =
        text.lines().filter(|l| l.starts_with("**") || l.starts_with("- `mem")).collect();
    // The cost model's version is no name of the compiler's.
    let text = &gpu.join("\n").replace("weft-cost v2", "weft-cost");
    let mut found = Vec::new();
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '(' || c == ':'))
        .collect();
    for word in words {
        let bare = word.trim_end_matches('(').trim_end_matches(':');
        let numbered = |prefix: &str| {
            bare.strip_prefix(prefix)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        };
        let ir = ["I64(", "Var(", "Bin(", "Lit(", "Expr::", "Select("]
            .iter()
            .any(|p| word.starts_with(p));
        let renamed = bare.rsplit_once("_v").is_some_and(|(base, n)| {
            !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        });
        if ir {
            found.push(word[..=word.find('(').unwrap_or(word.len() - 1)].to_owned());
        } else if (numbered("v") || numbered("t") || renamed) && !user_names.contains(bare) {
            found.push(bare.to_owned());
        }
    }
    // A constant condition, or a division of two constants.
    let b = text.as_bytes();
    for (i, _) in text.match_indices('(') {
        let rest = &text[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            continue;
        }
        let after = &rest[digits..];
        let constant_op = ["/", " / ", " > ", " < ", " >= ", " <= "]
            .iter()
            .find_map(|op| after.strip_prefix(op))
            .is_some_and(|r| r.bytes().next().is_some_and(|c| c.is_ascii_digit()));
        if constant_op && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            found.push(rest.chars().take(24).collect());
        }
    }
    // `x*s/s`: a product divided by one of its factors.
    for (i, _) in text.match_indices('/') {
        let before: String = text[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '*')
            .collect();
        let before: String = before.chars().rev().collect();
        let after: String =
            text[i + 1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !after.is_empty() && before.split('*').skip(1).any(|f| f == after) {
            found.push(format!("{before}/{after}"));
        }
    }
    found
}

#[test]
fn the_checker_sees_unsimplified_formulas() {
    let check = |line: &str| unsimplified(line, "entry f (v1: i32) = v1");
    assert_eq!(check("**Cost**: `1024*(n/((256 > 0 ? 256 : 1)))`"), ["256 > 0 ? 256 : 1)))`"]);
    assert_eq!(check("**Cost**: `(67/64)`"), ["67/64)`"]);
    assert_eq!(check("**Kernel**: when `(bh*s/s) >= 128`"), ["bh*s/s"]);
    assert_eq!(
        check("**Cost**: `I64(2048) * I64(128)` and v12, t52, k_v7"),
        ["I64(", "I64(", "v12", "t52", "k_v7"]
    );
    assert!(check("**Cost**: `max(256*⌈k/1024⌉, 1)` bytes of `f_map_0`, mem_1, n*m/4").is_empty());
    // The user's own `v1`, and prose (a doc comment's `(3/2)`), are not formulas of ours.
    assert!(check("**Kernel**: `v1` computed in each work-item").is_empty());
    assert!(check("The force is r/(r^2 + e^2)^(3/2).").is_empty());
}

/// Hovers were walls (up to 3.6 KB of unsimplified formulas, the prediction cut off in
/// an 80x24 float): a hover is a short summary that fits such a float, and the
/// derivation is in the detail view. Measured on every name of every example.
#[test]
fn hovers_fit_an_80x24_float_and_show_the_prediction() {
    let hovers = all_hovers();
    assert!(hovers.len() > 1000, "only {} hovers", hovers.len());
    let mut too_long = Vec::new();
    let mut derivations = Vec::new();
    let mut no_prediction = Vec::new();
    for (at, hover, details, _) in &hovers {
        if float_lines(hover) > 24 {
            too_long.push(format!("{at} ({} lines):\n{hover}", float_lines(hover)));
        }
        if hover.contains("span `") || hover.contains("**Region**") || hover.contains("work `") {
            derivations.push(at.clone());
        }
        // Where the detail view predicts a time, the hover does too.
        let predicted = details.contains("**Predicted**") || details.contains("; predicted ");
        if predicted && !hover.contains("**Predicted**") {
            no_prediction.push(format!("{at}:\n{hover}"));
        }
    }
    assert!(derivations.is_empty(), "derivations in short hovers: {derivations:?}");
    assert!(
        too_long.is_empty(),
        "{} hovers longer than 24 lines:\n{}",
        too_long.len(),
        too_long.join("\n\n")
    );
    assert!(
        no_prediction.is_empty(),
        "{} hovers without their prediction:\n{}",
        no_prediction.len(),
        no_prediction.join("\n\n")
    );
}

/// Hovers and their detail views print formulas simplified and in the source's names.
#[test]
fn hovers_show_simplified_formulas_in_the_users_names() {
    let mut problems = Vec::new();
    for (at, hover, details, source) in all_hovers() {
        for (what, text) in [("hover", &hover), ("details", &details)] {
            let found = unsimplified(text, &source);
            if !found.is_empty() {
                problems.push(format!("{at} ({what}): {found:?}"));
            }
        }
    }
    problems.dedup();
    assert!(problems.is_empty(), "{} hovers:\n{}", problems.len(), problems.join("\n"));
}
