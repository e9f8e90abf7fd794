//! Semantic tokens: every token of a file classified by what it is, with names
//! classified by name resolution (a local, a parameter, a def, a built-in, a size).
//!
//! One pass over each def body records what every path expression resolves to, then
//! one pass over the tokens reads it: linear in the file, not in files times names.

use rustc_hash::FxHashMap;
use weft_hir::{Resolution, RootDatabase, ScalarTy};
use weft_syntax::{SyntaxKind, SyntaxToken, TextRange};

use crate::classify::file_defs;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HighlightTag {
    Keyword,
    Number,
    String,
    Comment,
    Operator,
    Function,
    Variable,
    Parameter,
    Type,
    TypeParameter,
    Namespace,
    EnumMember,
    /// A record field (version 1.1).
    Property,
}

/// Extra facts about a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HighlightModifier {
    Declaration,
    Documentation,
    DefaultLibrary,
}

/// A classified token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HighlightedRange {
    pub range: TextRange,
    pub tag: HighlightTag,
    pub modifiers: Vec<HighlightModifier>,
}

pub(crate) fn semantic_tokens(db: &RootDatabase, path: &str) -> Vec<HighlightedRange> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let mut paths: FxHashMap<TextRange, (HighlightTag, Vec<HighlightModifier>)> =
        FxHashMap::default();
    for data in file_defs(db, file) {
        for (expr, e) in data.body.exprs.iter() {
            let weft_hir::Expr::Path { res, .. } = e else { continue };
            let Some(range) = data.source_map.expr_range(expr) else { continue };
            let class = match res {
                Resolution::Local(pat) if data.body.params.contains(pat) => {
                    (HighlightTag::Parameter, Vec::new())
                }
                Resolution::Local(_) => (HighlightTag::Variable, Vec::new()),
                Resolution::SizeParam(_) => (HighlightTag::TypeParameter, Vec::new()),
                Resolution::Def(_) => (HighlightTag::Function, Vec::new()),
                Resolution::Builtin(_) => {
                    (HighlightTag::Function, vec![HighlightModifier::DefaultLibrary])
                }
                Resolution::Unresolved => continue,
            };
            paths.insert(range, class);
        }
    }
    let root = weft_hir::parse(db, file).syntax_node();
    let mut out = Vec::new();
    for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
        if let Some((tag, modifiers)) = classify_token(&token, &paths) {
            out.push(HighlightedRange { range: token.text_range(), tag, modifiers });
        }
    }
    out
}

fn classify_token(
    token: &SyntaxToken,
    paths: &FxHashMap<TextRange, (HighlightTag, Vec<HighlightModifier>)>,
) -> Option<(HighlightTag, Vec<HighlightModifier>)> {
    use HighlightModifier::{Declaration, DefaultLibrary, Documentation};
    let kind = token.kind();
    let plain = |tag| Some((tag, Vec::new()));
    match kind {
        SyntaxKind::WHITESPACE | SyntaxKind::ERROR_TOKEN | SyntaxKind::EOF => None,
        SyntaxKind::COMMENT => {
            let doc = token.text().starts_with("-- |");
            Some((HighlightTag::Comment, if doc { vec![Documentation] } else { Vec::new() }))
        }
        SyntaxKind::INT_NUMBER | SyntaxKind::FLOAT_NUMBER => plain(HighlightTag::Number),
        SyntaxKind::STRING => plain(HighlightTag::String),
        SyntaxKind::TRUE_KW | SyntaxKind::FALSE_KW => plain(HighlightTag::Keyword),
        _ if kind.is_keyword() => plain(HighlightTag::Keyword),
        SyntaxKind::IDENT => classify_ident(token, paths),
        _ if kind.fixed_text().is_some() && is_operator(kind) => plain(HighlightTag::Operator),
        _ => None,
    }
    .map(|(tag, mut modifiers)| {
        if kind == SyntaxKind::IDENT
            && token.parent().is_some_and(|p| p.kind() == SyntaxKind::NAME)
            && !modifiers.contains(&Declaration)
        {
            modifiers.push(Declaration);
        }
        if tag == HighlightTag::Type && ScalarTy::from_name(token.text()).is_some() {
            modifiers.push(DefaultLibrary);
        }
        (tag, modifiers)
    })
}

fn is_operator(kind: SyntaxKind) -> bool {
    use SyntaxKind::*;
    matches!(
        kind,
        PIPE2
            | AMP2
            | EQ2
            | NEQ
            | LT
            | LTEQ
            | GT
            | GTEQ
            | PIPE
            | CARET
            | AMP
            | SHL
            | SHR
            | PLUS
            | PLUS2
            | MINUS
            | STAR
            | SLASH
            | PERCENT
            | STAR2
            | BANG
            | PIPE_GT
            | LT_PIPE
            | ARROW
            | COLON_GT
            | BACKSLASH
    )
}

fn classify_ident(
    token: &SyntaxToken,
    paths: &FxHashMap<TextRange, (HighlightTag, Vec<HighlightModifier>)>,
) -> Option<(HighlightTag, Vec<HighlightModifier>)> {
    let parent = token.parent()?;
    if parent.kind() == SyntaxKind::WILDCARD_PAT {
        return Some((HighlightTag::Variable, Vec::new()));
    }
    let grand = parent.parent()?;
    let tag = match (parent.kind(), grand.kind()) {
        (SyntaxKind::NAME, SyntaxKind::DEF) => HighlightTag::Function,
        (SyntaxKind::NAME, SyntaxKind::TYPE_ALIAS) => HighlightTag::Type,
        (SyntaxKind::NAME, SyntaxKind::SIZE_PARAM | SyntaxKind::TYPE_PARAM) => {
            HighlightTag::TypeParameter
        }
        (SyntaxKind::NAME, SyntaxKind::RECORD_TYPE_FIELD) => HighlightTag::Property,
        (SyntaxKind::NAME, _) => {
            let in_param = grand.ancestors().any(|a| a.kind() == SyntaxKind::PARAM);
            if in_param { HighlightTag::Parameter } else { HighlightTag::Variable }
        }
        (SyntaxKind::NAME_REF, SyntaxKind::PATH_TYPE) => HighlightTag::Type,
        (SyntaxKind::NAME_REF, SyntaxKind::SIZE_NAME) => HighlightTag::TypeParameter,
        (SyntaxKind::NAME_REF, SyntaxKind::STRATEGY) => HighlightTag::EnumMember,
        (
            SyntaxKind::NAME_REF,
            SyntaxKind::FIELD_EXPR | SyntaxKind::FIELD_SECTION | SyntaxKind::RECORD_UPDATE_EXPR,
        ) => HighlightTag::Property,
        // A field label; a label alone (`{x}`) is also a use or binding of `x`.
        (SyntaxKind::NAME_REF, SyntaxKind::RECORD_EXPR_FIELD | SyntaxKind::RECORD_PAT_FIELD) => {
            let shorthand = !grand.children().any(|c| c != parent);
            match (shorthand, grand.kind()) {
                (false, _) => HighlightTag::Property,
                (true, SyntaxKind::RECORD_EXPR_FIELD) => {
                    return paths.get(&token.text_range()).cloned();
                }
                (true, _) => {
                    return Some((HighlightTag::Variable, vec![HighlightModifier::Declaration]));
                }
            }
        }
        (SyntaxKind::NAME_REF, SyntaxKind::PATH_EXPR) => {
            let names: Vec<_> =
                grand.children().filter(|c| c.kind() == SyntaxKind::NAME_REF).collect();
            let qualified = names.len() == 2;
            // `r.x` on a value is a field access: the value is a path of its own.
            let base = names.first().and_then(|n| paths.get(&n.text_range()).cloned());
            match (qualified, names.first() == Some(&parent), base) {
                (true, true, Some(class)) => return Some(class),
                (true, true, None) => HighlightTag::Namespace,
                (true, false, Some(_)) => HighlightTag::Property,
                _ => return paths.get(&grand.text_range()).cloned(),
            }
        }
        _ => return None,
    };
    Some((tag, Vec::new()))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn small_types_are_types_and_namespaces() {
        let fixture = fixture(
            r#"
def f (p: u8) (h: f16) : i16 = i16 (u8.max p 3u8) + i16 (f16.sqrt h)
"#,
        );
        let mut actual = String::new();
        for token in fixture.analysis.semantic_tokens("main.weft").unwrap() {
            let text = &fixture.text("main.weft")[std::ops::Range::<usize>::from(token.range)];
            if ["u8", "f16", "i16"].contains(&text) {
                let _ = writeln!(actual, "{text:?} {:?} {:?}", token.tag, token.modifiers);
            }
        }
        expect![[r#"
            "u8" Type [DefaultLibrary]
            "f16" Type [DefaultLibrary]
            "i16" Type [DefaultLibrary]
            "i16" Function [DefaultLibrary]
            "u8" Namespace []
            "i16" Function [DefaultLibrary]
            "f16" Namespace []
        "#]]
        .assert_eq(&actual);
    }

    #[test]
    fn classifies_names_by_resolution() {
        let fixture = fixture(
            r#"
-- | Doc.
def scale [n] (k: f32) (xs: [n]f32) : [n]f32 =
  let ys = map@group (\x -> k * x) xs -- comment
  in map (f32.sqrt) ys
"#,
        );
        let mut actual = String::new();
        for token in fixture.analysis.semantic_tokens("main.weft").unwrap() {
            let text = &fixture.text("main.weft")[std::ops::Range::<usize>::from(token.range)];
            let _ = writeln!(actual, "{text:?} {:?} {:?}", token.tag, token.modifiers);
        }
        expect![[r#"
            "-- | Doc." Comment [Documentation]
            "def" Keyword []
            "scale" Function [Declaration]
            "n" TypeParameter [Declaration]
            "k" Parameter [Declaration]
            "f32" Type [DefaultLibrary]
            "xs" Parameter [Declaration]
            "n" TypeParameter []
            "f32" Type [DefaultLibrary]
            "n" TypeParameter []
            "f32" Type [DefaultLibrary]
            "let" Keyword []
            "ys" Variable [Declaration]
            "map" Function [DefaultLibrary]
            "group" EnumMember []
            "\\" Operator []
            "x" Variable [Declaration]
            "->" Operator []
            "k" Parameter []
            "*" Operator []
            "x" Variable []
            "xs" Parameter []
            "-- comment" Comment []
            "in" Keyword []
            "map" Function [DefaultLibrary]
            "f32" Namespace []
            "sqrt" Function [DefaultLibrary]
            "ys" Variable []
        "#]]
        .assert_eq(&actual);
    }

    #[test]
    fn pipes_local_functions_and_for_in_loops() {
        let fixture = fixture(
            r#"
def f (d: f32, _: i64) : f32 =
  let sq x = x * x
  in loop acc = d for y in [1f32] do acc |> sq <| y
"#,
        );
        let mut actual = String::new();
        for token in fixture.analysis.semantic_tokens("main.weft").unwrap() {
            let text = &fixture.text("main.weft")[std::ops::Range::<usize>::from(token.range)];
            let _ = writeln!(actual, "{text:?} {:?} {:?}", token.tag, token.modifiers);
        }
        expect![[r#"
            "def" Keyword []
            "f" Function [Declaration]
            "d" Parameter [Declaration]
            "f32" Type [DefaultLibrary]
            "_" Variable []
            "i64" Type [DefaultLibrary]
            "f32" Type [DefaultLibrary]
            "let" Keyword []
            "sq" Variable [Declaration]
            "x" Variable [Declaration]
            "x" Variable []
            "*" Operator []
            "x" Variable []
            "in" Keyword []
            "loop" Keyword []
            "acc" Variable [Declaration]
            "d" Variable []
            "for" Keyword []
            "y" Variable [Declaration]
            "in" Keyword []
            "1f32" Number []
            "do" Keyword []
            "acc" Variable []
            "|>" Operator []
            "sq" Variable []
            "<|" Operator []
            "y" Variable []
        "#]]
        .assert_eq(&actual);
    }

    #[test]
    fn existential_and_anonymous_sizes() {
        let fixture = fixture(
            r#"
def f (xs: []i32) : ?[k].[k]i32 = filter (\x -> x > 0) xs
"#,
        );
        let mut actual = String::new();
        for token in fixture.analysis.semantic_tokens("main.weft").unwrap() {
            let text = &fixture.text("main.weft")[std::ops::Range::<usize>::from(token.range)];
            let _ = writeln!(actual, "{text:?} {:?} {:?}", token.tag, token.modifiers);
        }
        expect![[r#"
            "def" Keyword []
            "f" Function [Declaration]
            "xs" Parameter [Declaration]
            "i32" Type [DefaultLibrary]
            "k" TypeParameter [Declaration]
            "k" TypeParameter []
            "i32" Type [DefaultLibrary]
            "filter" Function []
            "\\" Operator []
            "x" Variable [Declaration]
            "->" Operator []
            "x" Variable []
            ">" Operator []
            "0" Number []
            "xs" Parameter []
        "#]]
        .assert_eq(&actual);
    }

    #[test]
    fn records() {
        let fixture = fixture(
            r#"
type pt = {x: f32, y: f32}
def f ({x, y = b}: pt) : pt = let r = {x = b, y = x} in {x = r.x, y = (r).y} with y = 1
"#,
        );
        let mut actual = String::new();
        for token in fixture.analysis.semantic_tokens("main.weft").unwrap() {
            let text = &fixture.text("main.weft")[std::ops::Range::<usize>::from(token.range)];
            let _ = writeln!(actual, "{text:?} {:?} {:?}", token.tag, token.modifiers);
        }
        expect![[r#"
            "type" Keyword []
            "pt" Type [Declaration]
            "x" Property [Declaration]
            "f32" Type [DefaultLibrary]
            "y" Property [Declaration]
            "f32" Type [DefaultLibrary]
            "def" Keyword []
            "f" Function [Declaration]
            "x" Variable [Declaration]
            "y" Property []
            "b" Parameter [Declaration]
            "pt" Type []
            "pt" Type []
            "let" Keyword []
            "r" Variable [Declaration]
            "x" Property []
            "b" Variable []
            "y" Property []
            "x" Variable []
            "in" Keyword []
            "x" Property []
            "r" Variable []
            "x" Property []
            "y" Property []
            "r" Variable []
            "y" Property []
            "with" Keyword []
            "y" Property []
            "1" Number []
        "#]]
        .assert_eq(&actual);
    }
}
