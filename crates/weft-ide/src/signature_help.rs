//! Signature help: inside a call to a def or built-in, its scheme with the
//! parameter under the cursor marked.

use weft_hir::{DefId, RootDatabase, Scheme, Ty, def_scheme, signature};
use weft_syntax::ast::{self, AstNode};
use weft_syntax::{SyntaxKind, SyntaxNode, TextRange, TextSize};

use crate::FilePosition;
use crate::classify::{Definition, classify};

/// The signature of the function being called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    /// `name : p1 -> p2 -> ret`.
    pub label: String,
    /// The byte range of each parameter in `label`.
    pub parameters: Vec<TextRange>,
    pub active_parameter: Option<usize>,
    pub documentation: Option<String>,
}

pub(crate) fn signature_help(db: &RootDatabase, position: &FilePosition) -> Option<SignatureHelp> {
    let file = db.file(&position.path)?;
    let root = weft_hir::parse(db, file).syntax_node();
    let offset = position.offset.min(root.text_range().end());
    let mut left = root.token_at_offset(offset).left_biased();
    while let Some(t) = &left
        && t.kind().is_trivia()
    {
        left = t.prev_token();
    }
    let left = left?;
    let text = file.text(db);
    for call in left.parent_ancestors().filter_map(ast::CallExpr::cast) {
        let range = call.syntax().text_range();
        let only_space_after = text
            .get(usize::from(range.end())..usize::from(offset.max(range.end())))
            .is_some_and(|between| between.trim().is_empty());
        if !range.contains_inclusive(offset) && !only_space_after {
            continue;
        }
        let Some(callee) = call.callee() else { continue };
        if callee.syntax().text_range().end() >= offset {
            continue;
        }
        let args: Vec<_> = call.args().collect();
        let active = args
            .iter()
            .position(|arg| arg.syntax().text_range().contains_inclusive(offset))
            .unwrap_or_else(|| {
                args.iter().filter(|arg| arg.syntax().text_range().end() < offset).count()
            });
        if let Some(help) = help_for_callee(db, file, callee.syntax(), active) {
            return Some(help);
        }
    }
    // `f |` before the first argument is parsed as a call.
    let path = left.parent()?.parent().filter(|p| p.kind() == SyntaxKind::PATH_EXPR)?;
    if path.text_range().end() < offset {
        return help_for_callee(db, file, &path, 0);
    }
    None
}

fn help_for_callee(
    db: &RootDatabase,
    file: weft_hir::SourceFile,
    callee: &SyntaxNode,
    active: usize,
) -> Option<SignatureHelp> {
    if callee.kind() != SyntaxKind::PATH_EXPR {
        return None;
    }
    let name_token =
        callee.children().filter(|c| c.kind() == SyntaxKind::NAME_REF).last()?.first_token()?;
    let (name, scheme, documentation) = match classify(db, file, &name_token)? {
        Definition::Def(loc) => {
            let id = DefId::new(db, loc.clone());
            (
                loc.name.as_str().to_owned(),
                def_scheme(db, id).clone(),
                signature(db, id).doc.clone(),
            )
        }
        Definition::Builtin(builtin) => {
            (builtin.name(), builtin.scheme(), Some(builtin.description().to_owned()))
        }
        Definition::Local { .. } | Definition::SizeParam { .. } => return None,
    };
    Some(render(&name, &scheme, active, documentation))
}

fn render(
    name: &str,
    scheme: &Scheme,
    active: usize,
    documentation: Option<String>,
) -> SignatureHelp {
    let mut label = format!("{name} : ");
    let mut parameters = Vec::new();
    for param in &scheme.params {
        let text = match &param.binds_size {
            Some(size) => format!("({size}: {})", param.ty),
            None if matches!(param.ty, Ty::Fn { .. }) => format!("({})", param.ty),
            None => param.ty.to_string(),
        };
        let start = TextSize::of(label.as_str());
        label.push_str(&text);
        parameters.push(TextRange::at(start, TextSize::of(text.as_str())));
        label.push_str(" -> ");
    }
    label.push_str(&scheme.ret.to_string());
    let active_parameter = (active < parameters.len()).then_some(active);
    SignatureHelp { label, parameters, active_parameter, documentation }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let actual = match fixture.analysis.signature_help(&fixture.position).unwrap() {
            Some(help) => {
                let active = help.active_parameter.map_or("none", |idx| {
                    &help.label[std::ops::Range::<usize>::from(help.parameters[idx])]
                });
                format!("{}\nactive: {:?} {active}\n", help.label, help.active_parameter)
            }
            None => "none\n".to_owned(),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn builtin_second_argument() {
        check(
            r#"
def f (xs: [n]f32) : f32 = reduce (+) 0$0f32 xs
"#,
            expect![[r#"
                reduce : (a -> a -> a) -> a -> [n]a -> a
                active: Some(1) a
            "#]],
        );
    }

    #[test]
    fn def_after_callee_before_arguments() {
        check(
            r#"
def add (a: i32) (b: i32) : i32 = a + b
def f (x: i32) : i32 = add $0
"#,
            expect![[r#"
                add : i32 -> i32 -> i32
                active: Some(0) i32
            "#]],
        );
    }

    #[test]
    fn nested_call_uses_innermost() {
        check(
            r#"
def add (a: i32) (b: i32) : i32 = a + b
def f (x: i32) : i32 = add (add x $0) 1
"#,
            expect![[r#"
                add : i32 -> i32 -> i32
                active: Some(1) i32
            "#]],
        );
    }
}
