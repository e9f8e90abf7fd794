//! Hover: the type (with sizes) of the name or expression under the cursor, in a
//! markdown ```` ```weft ```` block; for defs their scheme and doc comment, for
//! built-ins their scheme and one-line description.

use weft_hir::{DefId, DefKind, RootDatabase, def_scheme, infer, pretty_scheme, signature};
use weft_syntax::TextRange;

use crate::FilePosition;
use crate::classify::{Definition, classify_at, enclosing_def};

/// What to show, and the range it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverResult {
    pub range: TextRange,
    pub markdown: String,
}

pub(crate) fn hover(db: &RootDatabase, position: &FilePosition) -> Option<HoverResult> {
    let file = db.file(&position.path)?;
    if let Some((token, definition)) = classify_at(db, file, position.offset) {
        let markdown = describe(db, &definition)?;
        return Some(HoverResult { range: token.text_range(), markdown });
    }
    // Any other expression: its type.
    let data = enclosing_def(db, file, position.offset)?;
    let expr = data.source_map.expr_at(TextRange::empty(position.offset))?;
    let range = data.source_map.expr_range(expr)?;
    let ty = infer(db, data.id(db)).expr_ty(expr);
    if ty.is_error() {
        return None;
    }
    Some(HoverResult { range, markdown: code_block(&ty.to_string()) })
}

fn describe(db: &RootDatabase, definition: &Definition) -> Option<String> {
    match definition {
        Definition::Local { def, pat } => {
            let id = DefId::new(db, def.clone());
            let (body, _) = weft_hir::body_with_source_map(db, id);
            let weft_hir::Pat::Bind { name } = &body.pats[*pat] else { return None };
            let ty = infer(db, id).pat_ty(*pat);
            Some(code_block(&format!("{name} : {ty}")))
        }
        Definition::SizeParam { name, .. } => {
            Some(format!("{}\n\nsize parameter", code_block(&format!("{name} : i64"))))
        }
        Definition::Def(loc) => {
            let id = DefId::new(db, loc.clone());
            let scheme = def_scheme(db, id);
            let sig = signature(db, id);
            let header = match loc.kind {
                DefKind::TypeAlias => match &sig.alias {
                    Some(_) => format!("type {} = {}", loc.name, scheme.ret),
                    None => format!("type {}", loc.name),
                },
                DefKind::Def => format!("def {}", pretty_scheme(loc.name.as_str(), scheme)),
                DefKind::Entry => format!("entry {}", pretty_scheme(loc.name.as_str(), scheme)),
            };
            let mut out = code_block(&header);
            if let Some(doc) = &sig.doc {
                out.push_str("\n\n");
                out.push_str(doc.trim());
            }
            Some(out)
        }
        Definition::Builtin(builtin) => Some(format!(
            "{}\n\n{}",
            code_block(&pretty_scheme(&builtin.name(), &builtin.scheme())),
            builtin.description()
        )),
    }
}

fn code_block(code: &str) -> String {
    format!("```weft\n{code}\n```")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let actual = match fixture.analysis.hover(&fixture.position).unwrap() {
            Some(hover) => format!(
                "{}\n{}\n",
                fixture.show(&fixture.position.path, hover.range),
                hover.markdown
            ),
            None => "no hover\n".to_owned(),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn local_shows_type_with_sizes() {
        check(
            r#"
def f [n] (xs: [n]f32) : [n]f32 =
  let ys = map (\x -> x * 2f32) xs
  in y$0s
"#,
            expect![[r#"
                main.weft:74..76 "ys"
                ```weft
                ys : [n]f32
                ```
            "#]],
        );
    }

    #[test]
    fn def_shows_scheme_and_doc() {
        check(
            r#"
-- | Doubles every element.
def double [n] (xs: [n]f32) = map (\x -> x * 2f32) xs
entry main (xs: [3]f32) : [3]f32 = dou$0ble xs
"#,
            expect![[r#"
                main.weft:117..123 "double"
                ```weft
                def double : [n]f32 -> [n]f32
                ```

                Doubles every element.
            "#]],
        );
    }

    #[test]
    fn builtin_shows_scheme_and_description() {
        check(
            r#"
entry main (xs: [3]f32) : f32 = red$0uce (+) 0f32 xs
"#,
            expect![[r#"
                main.weft:32..38 "reduce"
                ```weft
                reduce : (a -> a -> a) -> a -> [n]a -> a
                ```

                combines all elements with an associative operator and its neutral element
            "#]],
        );
    }

    #[test]
    fn expression_shows_its_type() {
        check(
            r#"
entry main (xs: [3]f32) : [3]f32 = map (\x -> x $0+ 1f32) xs
"#,
            expect![[r#"
                main.weft:46..54 "x + 1f32"
                ```weft
                f32
                ```
            "#]],
        );
    }

    #[test]
    fn works_with_type_errors_elsewhere() {
        check(
            r#"
def broken (x: i32) : i32 = x + true
def ok (x: i64) : i64 = let y = x * 2 in y$0
def also_broken = let in
"#,
            expect![[r#"
                main.weft:78..79 "y"
                ```weft
                y : i64
                ```
            "#]],
        );
    }

    #[test]
    fn non_ascii_text_before_cursor() {
        check(
            r#"
-- | Größe: ∑ 😀
def sum (xs: [n]f32) : f32 = reduce (+) 0f32 x$0s
"#,
            expect![[r#"
                main.weft:68..70 "xs"
                ```weft
                xs : [n]f32
                ```
            "#]],
        );
    }
}
