//! Test helpers: fixtures with `--- /path` file headers and a `$0` cursor, and one
//! `check_*` function per feature that renders its result as text for `expect!`.

use std::fmt::Write as _;

use expect_test::Expect;

use crate::{Analysis, AnalysisHost, Change, FilePosition, FileRange, TextRange, TextSize};

/// A parsed fixture: the host, the cursor (if any) and each file's text.
pub(crate) struct Fixture {
    pub(crate) analysis: Analysis,
    pub(crate) position: FilePosition,
    pub(crate) files: Vec<(String, String)>,
}

impl Fixture {
    pub(crate) fn text(&self, path: &str) -> &str {
        if path == weft_hir::PRELUDE_PATH {
            return weft_hir::PRELUDE_TEXT;
        }
        self.files.iter().find(|(p, _)| p == path).map_or("", |(_, t)| t.as_str())
    }

    /// `path:start..end 'text'` for a range.
    pub(crate) fn show(&self, path: &str, range: TextRange) -> String {
        let text = self.text(path);
        let snippet = text.get(std::ops::Range::<usize>::from(range)).unwrap_or("?");
        format!("{path}:{range:?} {snippet:?}")
    }
}

pub(crate) fn fixture(text: &str) -> Fixture {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in text.trim_start_matches('\n').split_inclusive('\n') {
        if let Some(path) = line.strip_prefix("--- /") {
            if let Some(file) = current.take() {
                files.push(file);
            }
            current = Some((path.trim().to_owned(), String::new()));
            continue;
        }
        current.get_or_insert_with(|| ("main.weft".to_owned(), String::new())).1.push_str(line);
    }
    files.extend(current);
    let mut position = FilePosition { path: files[0].0.clone(), offset: TextSize::from(0) };
    for (path, text) in &mut files {
        if let Some(idx) = text.find("$0") {
            text.replace_range(idx..idx + 2, "");
            position =
                FilePosition { path: path.clone(), offset: TextSize::try_from(idx).unwrap() };
        }
    }
    let mut host = AnalysisHost::new();
    let mut change = Change::default();
    for (path, text) in &files {
        change.set_file(path.clone(), text.as_str());
    }
    host.apply_change(change);
    Fixture { analysis: host.analysis(), position, files }
}

pub(crate) fn check_diagnostics(text: &str, expect: Expect) {
    let fixture = fixture(text);
    let path = fixture.position.path.clone();
    let mut out = String::new();
    for d in fixture.analysis.diagnostics(&path).unwrap() {
        let _ = writeln!(out, "{:?} {}[{}]: {}", d.range, d.severity.as_str(), d.code, d.message);
    }
    expect.assert_eq(&out);
}

pub(crate) fn show_file_ranges(fixture: &Fixture, ranges: &[FileRange]) -> String {
    let mut out = String::new();
    for r in ranges {
        let _ = writeln!(out, "{}", fixture.show(&r.path, r.range));
    }
    out
}

/// Applies the assist `id` offered at the cursor and shows its label and the edited
/// files; nothing when it is not offered.
pub(crate) fn check_assist(text: &str, id: &str, expect: Expect) {
    let fixture = fixture(text);
    let range = FileRange {
        path: fixture.position.path.clone(),
        range: TextRange::empty(fixture.position.offset),
    };
    let mut actual = String::new();
    for assist in fixture.analysis.assists(&range).unwrap() {
        if assist.id != id {
            continue;
        }
        for (path, edits) in &assist.edit.edits {
            let mut text = fixture.text(path).to_owned();
            for edit in edits.iter().rev() {
                text.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.insert);
            }
            let _ = write!(actual, "{}\n{text}", assist.label);
        }
    }
    expect.assert_eq(&actual);
}
