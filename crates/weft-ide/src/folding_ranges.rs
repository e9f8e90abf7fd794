//! Folding ranges: declarations and expressions that span several lines, runs of
//! comment lines (test blocks among them) and runs of imports.

use weft_hir::RootDatabase;
use weft_syntax::{SyntaxKind, TextRange};

/// What a fold hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    Comment,
    Imports,
    Region,
}

/// A foldable range (byte offsets; the editor folds whole lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    pub range: TextRange,
    pub kind: FoldKind,
}

pub(crate) fn folding_ranges(db: &RootDatabase, path: &str) -> Vec<Fold> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let text = file.text(db);
    let spans_lines = |range: TextRange| {
        text.get(std::ops::Range::<usize>::from(range)).is_some_and(|t| t.trim_end().contains('\n'))
    };
    let root = weft_hir::parse(db, file).syntax_node();
    let mut out = Vec::new();
    for node in root.descendants() {
        let foldable = matches!(
            node.kind(),
            SyntaxKind::DEF
                | SyntaxKind::TYPE_ALIAS
                | SyntaxKind::LET_EXPR
                | SyntaxKind::IF_EXPR
                | SyntaxKind::LOOP_EXPR
                | SyntaxKind::LAMBDA_EXPR
                | SyntaxKind::ARRAY_EXPR
                | SyntaxKind::PAREN_EXPR
                | SyntaxKind::TUPLE_EXPR
        );
        // A def's range starts at its leading comments; fold from the keyword.
        let range = match node.kind() {
            SyntaxKind::DEF | SyntaxKind::TYPE_ALIAS => node
                .children_with_tokens()
                .find(|e| !e.kind().is_trivia())
                .map_or(node.text_range(), |first| {
                    TextRange::new(first.text_range().start(), node.text_range().end())
                }),
            _ => node.text_range(),
        };
        if foldable && spans_lines(range) {
            out.push(Fold { range: trim_end(text, range), kind: FoldKind::Region });
        }
    }
    // Runs of comment lines and of imports.
    let mut comment_run: Option<TextRange> = None;
    let mut import_run: Option<TextRange> = None;
    let flush = |run: &mut Option<TextRange>, kind, out: &mut Vec<Fold>| {
        if let Some(range) = run.take()
            && spans_lines(range)
        {
            out.push(Fold { range, kind });
        }
    };
    for element in root.descendants_with_tokens() {
        match element.kind() {
            SyntaxKind::COMMENT => {
                let range = element.text_range();
                comment_run = Some(comment_run.map_or(range, |run| run.cover(range)));
            }
            SyntaxKind::WHITESPACE => {
                let blank_line =
                    element.as_token().is_some_and(|t| t.text().matches('\n').count() > 1);
                if blank_line {
                    flush(&mut comment_run, FoldKind::Comment, &mut out);
                }
            }
            SyntaxKind::IMPORT => {
                let range = element.text_range();
                import_run = Some(import_run.map_or(range, |run| run.cover(range)));
            }
            SyntaxKind::DEF | SyntaxKind::TYPE_ALIAS => {
                flush(&mut import_run, FoldKind::Imports, &mut out);
            }
            kind if kind.is_token() => flush(&mut comment_run, FoldKind::Comment, &mut out),
            _ => {}
        }
    }
    flush(&mut comment_run, FoldKind::Comment, &mut out);
    flush(&mut import_run, FoldKind::Imports, &mut out);
    out.sort_by_key(|fold| (fold.range.start(), std::cmp::Reverse(fold.range.end())));
    out
}

fn trim_end(text: &str, range: TextRange) -> TextRange {
    let slice = text.get(std::ops::Range::<usize>::from(range)).unwrap_or("");
    let trimmed = slice.trim_end();
    let len = weft_syntax::TextSize::try_from(trimmed.len()).unwrap_or(range.len());
    TextRange::at(range.start(), len)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn folds_multiline_defs_comment_runs_and_imports() {
        let fixture = fixture(
            r#"
import "a"
import "b"

-- ==
-- input { 1i32 }
-- output { 2i32 }
entry main (x: i32) : i32 =
  let y = x + 1
  in y
def one (x: i32) : i32 = x
--- /a.weft
--- /b.weft
"#,
        );
        let mut actual = String::new();
        for fold in fixture.analysis.folding_ranges("main.weft").unwrap() {
            let _ = writeln!(actual, "{:?} {}", fold.kind, fixture.show("main.weft", fold.range));
        }
        expect![[r#"
            Imports main.weft:0..21 "import \"a\"\nimport \"b\""
            Comment main.weft:23..65 "-- ==\n-- input { 1i32 }\n-- output { 2i32 }"
            Region main.weft:66..116 "entry main (x: i32) : i32 =\n  let y = x + 1\n  in y"
            Region main.weft:96..116 "let y = x + 1\n  in y"
        "#]]
        .assert_eq(&actual);
    }
}
