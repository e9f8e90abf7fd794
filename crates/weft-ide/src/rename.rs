//! Rename: locals and defs (across files). `prepare_rename` says what would be
//! renamed, or why nothing can be (built-ins, non-names).

use weft_hir::RootDatabase;
use weft_syntax::{SyntaxKind, TextRange};

use crate::classify::{Definition, classify_at, find_references};
use crate::{FilePosition, SourceChange, TextEdit};

pub(crate) fn prepare_rename(
    db: &RootDatabase,
    position: &FilePosition,
) -> Result<TextRange, String> {
    let file = db.file(&position.path).ok_or_else(|| "no such file".to_owned())?;
    let (token, definition) = classify_at(db, file, position.offset)
        .ok_or_else(|| "no name to rename here".to_owned())?;
    if let Definition::Builtin(builtin) = definition {
        return Err(format!("`{}` is a built-in and cannot be renamed", builtin.name()));
    }
    Ok(token.text_range())
}

pub(crate) fn rename(
    db: &RootDatabase,
    position: &FilePosition,
    new_name: &str,
) -> Result<SourceChange, String> {
    prepare_rename(db, position)?;
    if !is_identifier(new_name) {
        return Err(format!("`{new_name}` is not a valid name"));
    }
    let file = db.file(&position.path).ok_or_else(|| "no such file".to_owned())?;
    let (token, definition) = classify_at(db, file, position.offset)
        .ok_or_else(|| "no name to rename here".to_owned())?;
    let mut change = SourceChange::default();
    for (file, range) in find_references(db, &definition, token.text()) {
        change
            .edits
            .entry(file.path(db).clone())
            .or_default()
            .push(TextEdit { range, insert: new_name.to_owned() });
    }
    for edits in change.edits.values_mut() {
        edits.sort_by_key(|edit| edit.range.start());
        edits.dedup();
    }
    Ok(change)
}

fn is_identifier(name: &str) -> bool {
    let (tokens, errors) = weft_syntax::tokenize(name);
    errors.is_empty()
        && matches!(tokens.as_slice(), [t] if t.kind == SyntaxKind::IDENT)
        && name != "_"
        && weft_hir::Builtin::lookup(name).is_none()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, new_name: &str, expect: Expect) {
        let fixture = fixture(text);
        let mut actual = String::new();
        match fixture.analysis.rename(&fixture.position, new_name).unwrap() {
            Ok(change) => {
                for (path, edits) in &change.edits {
                    let mut text = fixture.text(path).to_owned();
                    for edit in edits.iter().rev() {
                        text.replace_range(
                            std::ops::Range::<usize>::from(edit.range),
                            &edit.insert,
                        );
                    }
                    let _ = write!(actual, "--- /{path}\n{text}");
                }
            }
            Err(error) => actual = format!("error: {error}\n"),
        }
        expect.assert_eq(&actual);
    }

    #[test]
    fn renames_local_and_its_uses() {
        check(
            r#"
def f (x: i32) : i32 = let y = x + 1 in y$0 * y
"#,
            "total",
            expect![[r#"
                --- /main.weft
                def f (x: i32) : i32 = let total = x + 1 in total * total
            "#]],
        );
    }

    #[test]
    fn renames_def_across_files() {
        check(
            r#"
--- /lib.weft
def sq$0r (x: f32) : f32 = x * x
--- /main.weft
import "lib"
entry main (x: f32) : f32 = sqr (sqr x)
"#,
            "square",
            expect![[r#"
                --- /lib.weft
                def square (x: f32) : f32 = x * x
                --- /main.weft
                import "lib"
                entry main (x: f32) : f32 = square (square x)
            "#]],
        );
    }

    #[test]
    fn refuses_builtins() {
        check(
            r#"
entry main (xs: [3]f32) : [3]f32 = ma$0p (\x -> x) xs
"#,
            "apply",
            expect![[r#"
                error: `map` is a built-in and cannot be renamed
            "#]],
        );
    }

    #[test]
    fn refuses_invalid_names() {
        check(
            r#"
def f (x: i32) : i32 = x$0
"#,
            "let",
            expect![[r#"
                error: `let` is not a valid name
            "#]],
        );
    }
}
