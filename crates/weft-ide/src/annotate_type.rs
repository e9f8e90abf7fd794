//! Code action "Insert type annotation": on an unannotated `let`, writes the inferred
//! type after the pattern (`let ys = e` becomes `let ys: [n]f32 = e`). Offered only
//! when the type can be written: no errors and no unknown sizes in it.

use weft_hir::{Expr, RootDatabase, SizeVar, Ty};
use weft_syntax::TextRange;

use crate::classify::enclosing_def;
use crate::{FileRange, SourceChange, TextEdit};

/// A code action with its edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assist {
    /// Stable id (`insert_type_annotation`).
    pub id: &'static str,
    pub label: String,
    /// The range the action is about.
    pub target: TextRange,
    pub edit: SourceChange,
}

pub(crate) fn assists(db: &RootDatabase, range: &FileRange) -> Vec<Assist> {
    let Some(file) = db.file(&range.path) else { return Vec::new() };
    let Some(data) = enclosing_def(db, file, range.range.start()) else { return Vec::new() };
    let result = weft_hir::infer(db, data.id(db));
    let mut out = Vec::new();
    // The innermost `let` whose head (`let` to the end of the pattern) holds the cursor.
    let mut best: Option<(TextRange, TextRange, Ty)> = None;
    let root = weft_hir::parse(db, file).syntax_node();
    for (expr, e) in data.body.exprs.iter() {
        let Expr::Let { pat, ty: None, .. } = e else { continue };
        let (Some(let_range), Some(pat_range)) =
            (data.source_map.expr_range(expr), data.source_map.pat_range(*pat))
        else {
            continue;
        };
        // Only a `let p = e` as written: not a local function `let f x = e` (its type
        // goes elsewhere) nor the element binding a `for x in xs` loop stands for
        // (its pattern lies outside the body it scopes).
        if !let_range.contains_range(pat_range) || !is_plain_let(&root, let_range) {
            continue;
        }
        let head = TextRange::new(let_range.start(), pat_range.end());
        if !head.contains_range(range.range) && !head.contains_inclusive(range.range.start()) {
            continue;
        }
        if best.as_ref().is_some_and(|(h, _, _)| h.len() <= head.len()) {
            continue;
        }
        best = Some((head, pat_range, result.pat_ty(*pat)));
    }
    if let Some((head, pat_range, ty)) = best
        && is_writable(&ty)
    {
        let mut edit = SourceChange::default();
        edit.edits.insert(
            range.path.clone(),
            vec![TextEdit { range: TextRange::empty(pat_range.end()), insert: format!(": {ty}") }],
        );
        out.push(Assist {
            id: "insert_type_annotation",
            label: "Insert type annotation".to_owned(),
            target: head,
            edit,
        });
    }
    out
}

/// Whether the syntax at `range` is a `let p = e` (a `LET_EXPR`).
fn is_plain_let(root: &weft_syntax::SyntaxNode, range: TextRange) -> bool {
    let node = match root.covering_element(range) {
        weft_syntax::NodeOrToken::Node(node) => node,
        weft_syntax::NodeOrToken::Token(token) => match token.parent() {
            Some(node) => node,
            None => return false,
        },
    };
    node.ancestors()
        .take_while(|node| node.text_range() == range)
        .any(|node| node.kind() == weft_syntax::SyntaxKind::LET_EXPR)
}

/// Whether the printed type parses back as the same type.
fn is_writable(ty: &Ty) -> bool {
    if ty.contains_error() || ty.contains_fn() {
        return false;
    }
    let mut ok = true;
    ty.for_each_size(&mut |size| {
        ok &= size.vars().iter().all(|v| matches!(v, SizeVar::Param(_) | SizeVar::Local { .. }));
    });
    ok
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::check_assist;

    fn check(text: &str, expect: Expect) {
        check_assist(text, "insert_type_annotation", expect);
    }

    #[test]
    fn inserts_inferred_type_with_sizes() {
        check(
            r#"
def f [n] (xs: [n]f32) : [n]f32 =
  let y$0s = map (\x -> x + 1f32) xs
  in ys
"#,
            expect![[r#"
                Insert type annotation
                def f [n] (xs: [n]f32) : [n]f32 =
                  let ys: [n]f32 = map (\x -> x + 1f32) xs
                  in ys
            "#]],
        );
    }

    #[test]
    fn not_offered_on_annotated_let() {
        check(
            r#"
def f (x: i32) : i32 = let y$0: i32 = x in y
"#,
            expect![[""]],
        );
    }

    #[test]
    fn not_offered_for_unknown_sizes() {
        check(
            r#"
def f (xs: [n]i64) = let y$0s = iota xs[0] in ys
"#,
            expect![[""]],
        );
    }

    #[test]
    fn not_offered_on_local_functions_nor_inside_for_in_loops() {
        check(
            r#"
def f (xs: [3]f32) : f32 = let s$0q x = x * x in loop a = 0 for x in xs do a + sq x
"#,
            expect![[""]],
        );
        check(
            r#"
def f (xs: [3]f32) : f32 = loop a = 0 for x in xs do let y$0 = x in a + y
"#,
            expect![[r#"
                Insert type annotation
                def f (xs: [3]f32) : f32 = loop a = 0 for x in xs do let y: f32 = x in a + y
            "#]],
        );
    }
}
