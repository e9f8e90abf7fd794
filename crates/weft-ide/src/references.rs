//! Find references: every name that refers to the same definition, the declaration
//! included, across the files that can see it.

use weft_hir::RootDatabase;

use crate::classify::{classify_at, find_references};
use crate::{FilePosition, FileRange};

pub(crate) fn references(db: &RootDatabase, position: &FilePosition) -> Option<Vec<FileRange>> {
    let file = db.file(&position.path)?;
    let (token, definition) = classify_at(db, file, position.offset)?;
    let mut out: Vec<FileRange> = find_references(db, &definition, token.text())
        .into_iter()
        .map(|(file, range)| FileRange { path: file.path(db).clone(), range })
        .collect();
    out.sort_by(|a, b| (&a.path, a.range.start()).cmp(&(&b.path, b.range.start())));
    out.dedup();
    Some(out)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{fixture, show_file_ranges};

    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let refs = fixture.analysis.references(&fixture.position).unwrap().unwrap_or_default();
        expect.assert_eq(&show_file_ranges(&fixture, &refs));
    }

    #[test]
    fn local_references_respect_shadowing() {
        check(
            r#"
def f (x: i32) : i32 =
  let y$0 = x + 1
  let z = y * y
  let y = z
  in y
"#,
            expect![[r#"
                main.weft:29..30 "y"
                main.weft:49..50 "y"
                main.weft:53..54 "y"
            "#]],
        );
    }

    #[test]
    fn def_references_across_files() {
        check(
            r#"
def sq$0r (x: f32) : f32 = x * x
entry a (x: f32) : f32 = sqr (sqr x)
--- /other.weft
import "main"
entry b (x: f32) : f32 = sqr x
--- /unrelated.weft
def sqr (x: i32) : i32 = x
entry c (x: i32) : i32 = sqr x
"#,
            expect![[r#"
                main.weft:4..7 "sqr"
                main.weft:56..59 "sqr"
                main.weft:61..64 "sqr"
                other.weft:39..42 "sqr"
            "#]],
        );
    }
}
