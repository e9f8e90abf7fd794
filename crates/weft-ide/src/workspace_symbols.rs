//! Workspace symbols: declarations of every file whose name matches a query
//! (case-insensitive subsequence, like most editors' fuzzy search).

use weft_hir::{DefKind, RootDatabase, item_tree};

use crate::NavigationTarget;
use crate::classify::{Definition, navigation_target};
use crate::document_symbols::SymbolKind;

/// A declaration found by a workspace search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSymbol {
    pub kind: SymbolKind,
    pub target: NavigationTarget,
}

/// At most this many symbols are returned.
const LIMIT: usize = 256;

pub(crate) fn workspace_symbols(db: &RootDatabase, query: &str) -> Vec<WorkspaceSymbol> {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for file in db.files() {
        for loc in item_tree(db, file).defs.iter() {
            if !matches_query(loc.name.as_str(), &query) {
                continue;
            }
            let Some(target) = navigation_target(db, &Definition::Def(loc.clone())) else {
                continue;
            };
            let kind = match loc.kind {
                DefKind::Def => SymbolKind::Function,
                DefKind::Entry => SymbolKind::Entry,
                DefKind::TypeAlias => SymbolKind::TypeAlias,
            };
            out.push(WorkspaceSymbol { kind, target });
            if out.len() >= LIMIT {
                return out;
            }
        }
    }
    out
}

fn matches_query(name: &str, query: &str) -> bool {
    let mut chars = query.chars();
    let mut want = chars.next();
    for c in name.chars().flat_map(char::to_lowercase) {
        if want == Some(c) {
            want = chars.next();
        }
    }
    want.is_none()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn finds_defs_in_all_files_by_subsequence() {
        let fixture = fixture(
            r#"
def mat_mul (x: i32) : i32 = x
entry main (x: i32) : i32 = x
--- /lib.weft
def matrix_multiply (x: i32) : i32 = x
type mask = bool
"#,
        );
        let mut actual = String::new();
        for symbol in fixture.analysis.workspace_symbols("MMul").unwrap() {
            let _ = writeln!(
                actual,
                "{:?} {}",
                symbol.kind,
                fixture.show(&symbol.target.path, symbol.target.focus_range)
            );
        }
        expect![[r#"
            Function lib.weft:4..19 "matrix_multiply"
            Function main.weft:4..11 "mat_mul"
        "#]]
        .assert_eq(&actual);
    }
}
