//! Document symbols: a file's imports, defs, entries and type aliases, with their
//! schemes as details and their parameters as children.

use weft_hir::{DefKind, Pat, RootDatabase, def_scheme};
use weft_syntax::TextRange;
use weft_syntax::ast::{self, AstNode};

use crate::classify::file_defs;

/// What kind of symbol a [`StructureNode`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Function,
    Entry,
    TypeAlias,
    Parameter,
    Import,
}

/// A symbol of a file's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructureNode {
    pub name: String,
    pub kind: SymbolKind,
    pub detail: Option<String>,
    pub full_range: TextRange,
    pub focus_range: TextRange,
    pub children: Vec<StructureNode>,
}

pub(crate) fn document_symbols(db: &RootDatabase, path: &str) -> Vec<StructureNode> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let mut out = Vec::new();
    for item in weft_hir::parse(db, file).tree().items() {
        if let ast::Item::Import(import) = item
            && let Some(target) = import.path()
        {
            let range = import.syntax().text_range();
            out.push(StructureNode {
                name: format!("import \"{target}\""),
                kind: SymbolKind::Import,
                detail: None,
                full_range: range,
                focus_range: range,
                children: Vec::new(),
            });
        }
    }
    for data in file_defs(db, file) {
        let (Some(full_range), Some(focus_range)) =
            (data.source_map.def_range(), data.source_map.name_range())
        else {
            continue;
        };
        let scheme = def_scheme(db, data.id(db));
        let (kind, detail) = match data.loc.kind {
            DefKind::Def => (SymbolKind::Function, scheme.to_string()),
            DefKind::Entry => (SymbolKind::Entry, scheme.to_string()),
            DefKind::TypeAlias => (SymbolKind::TypeAlias, scheme.ret.to_string()),
        };
        let result = weft_hir::infer(db, data.id(db));
        let children = data
            .body
            .params
            .iter()
            .filter_map(|&pat| {
                let Pat::Bind { name } = &data.body.pats[pat] else { return None };
                let range = data.source_map.pat_range(pat)?;
                Some(StructureNode {
                    name: name.as_str().to_owned(),
                    kind: SymbolKind::Parameter,
                    detail: Some(result.pat_ty(pat).to_string()),
                    full_range: range,
                    focus_range: range,
                    children: Vec::new(),
                })
            })
            .collect();
        out.push(StructureNode {
            name: data.loc.name.as_str().to_owned(),
            kind,
            detail: Some(detail),
            full_range,
            focus_range,
            children,
        });
    }
    out.sort_by_key(|node| node.full_range.start());
    out
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn lists_items_with_details() {
        let fixture = fixture(
            r#"
import "lib"
type vec = [3]f32
def add (a: vec) (b: vec) : vec = map2 (+) a b
entry main (xs: [n]f32) : f32 = reduce (+) 0f32 xs
def broken = (
--- /lib.weft
"#,
        );
        let mut actual = String::new();
        for node in fixture.analysis.document_symbols("main.weft").unwrap() {
            let _ = writeln!(
                actual,
                "{:?} {} {:?} {:?}",
                node.kind, node.name, node.detail, node.focus_range
            );
            for child in node.children {
                let _ = writeln!(actual, "  {:?} {} {:?}", child.kind, child.name, child.detail);
            }
        }
        expect![[r#"
            Import import "lib" None 0..12
            TypeAlias vec Some("[3]f32") 18..21
            Function add Some("[3]f32 -> [3]f32 -> [3]f32") 35..38
              Parameter a Some("[3]f32")
              Parameter b Some("[3]f32")
            Entry main Some("[n]f32 -> f32") 84..88
              Parameter xs Some("[n]f32")
            Function broken Some("{unknown}") 133..139
        "#]]
        .assert_eq(&actual);
    }
}
