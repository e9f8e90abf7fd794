//! Go to definition: locals, size parameters, and defs across imports. Built-ins
//! have no source, so they give nothing.

use weft_hir::RootDatabase;

use crate::classify::{classify_at, navigation_target};
use crate::{FilePosition, NavigationTarget};

pub(crate) fn goto_definition(db: &RootDatabase, position: &FilePosition) -> Vec<NavigationTarget> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    let Some((_, definition)) = classify_at(db, file, position.offset) else { return Vec::new() };
    navigation_target(db, &definition).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let mut actual = String::new();
        for target in fixture.analysis.goto_definition(&fixture.position).unwrap() {
            let _ = writeln!(actual, "{}", fixture.show(&target.path, target.focus_range));
        }
        expect.assert_eq(&actual);
    }

    #[test]
    fn local_let_binding() {
        check(
            r#"
def f (x: i32) : i32 = let y = x + 1 in y$0 * 2
"#,
            expect![[r#"
                main.weft:27..28 "y"
            "#]],
        );
    }

    #[test]
    fn prelude_functions_open_the_prelude() {
        check(
            r#"
entry main (xs: [3]f32) : f32 = f32.su$0m (rotate 1 xs)
"#,
            expect![[r#"
                <weft>/prelude.weft:13282..13289 "f32.sum"
            "#]],
        );
        check(
            r#"
entry main (xs: [3]f32) : [3]f32 = rot$0ate 1 xs
"#,
            expect![[r#"
                <weft>/prelude.weft:407..413 "rotate"
            "#]],
        );
    }

    #[test]
    fn parameter() {
        check(
            r#"
def f (x: i32) : i32 = x$0 + 1
"#,
            expect![[r#"
                main.weft:7..8 "x"
            "#]],
        );
    }

    #[test]
    fn def_across_import() {
        check(
            r#"
import "lib"
entry main (x: f32) : f32 = sq$0r x
--- /lib.weft
def sqr (x: f32) : f32 = x * x
"#,
            expect![[r#"
                lib.weft:4..7 "sqr"
            "#]],
        );
    }

    #[test]
    fn size_parameter_in_type() {
        check(
            r#"
def f [n] (xs: [n]f32) : [n$0]f32 = xs
"#,
            expect![[r#"
                main.weft:7..8 "n"
            "#]],
        );
    }

    #[test]
    fn type_alias() {
        check(
            r#"
type vec = [3]f32
def f (v: ve$0c) : vec = v
"#,
            expect![[r#"
                main.weft:5..8 "vec"
            "#]],
        );
    }

    #[test]
    fn works_in_file_with_syntax_errors() {
        check(
            r#"
def g (a: i32) : i32 = a +
def f (x: i32) : i32 = let y = x in y$0
def h = (((
"#,
            expect![[r#"
                main.weft:54..55 "y"
            "#]],
        );
    }
}
