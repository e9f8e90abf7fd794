//! The item tree: a file's declarations, by name, without bodies or positions.
//!
//! Editing inside a def body leaves the item tree equal, so nothing that depends only
//! on it re-runs. A def is identified by [`DefLoc`]: its file, its name and the index
//! among declarations of the same name in that file (duplicates are an error, but
//! still get distinct ids so each is checked). This is rust-analyzer's AstId idea,
//! keyed by name instead of by position.

use std::sync::Arc;

use weft_syntax::TextRange;
use weft_syntax::ast::{self, AstNode};

use crate::{Db, Name, SourceFile};

/// Whether a declaration is a `def`, an `entry` or a `type` alias.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DefKind {
    Def,
    Entry,
    TypeAlias,
}

/// A position-independent identity of a declaration.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DefLoc {
    pub file: SourceFile,
    pub name: Name,
    /// 0 for the first declaration of this name in the file, 1 for a duplicate, ...
    pub dup: u32,
    pub kind: DefKind,
}

/// The interned form of [`DefLoc`], for use as a salsa query key.
#[salsa::interned(debug)]
pub struct DefId {
    #[returns(ref)]
    pub loc: DefLoc,
}

/// A file's declarations in source order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemTree {
    /// `import "path"` targets as written, in order.
    pub imports: Vec<String>,
    pub defs: Vec<DefLoc>,
}

impl ItemTree {
    /// The first declaration with this name (value namespace: defs and entries).
    pub fn find_value(&self, name: &str) -> Option<&DefLoc> {
        self.defs
            .iter()
            .find(|d| d.kind != DefKind::TypeAlias && d.name.as_str() == name && d.dup == 0)
    }

    pub fn find_type(&self, name: &str) -> Option<&DefLoc> {
        self.defs
            .iter()
            .find(|d| d.kind == DefKind::TypeAlias && d.name.as_str() == name && d.dup == 0)
    }
}

#[salsa::tracked(returns(ref))]
pub fn item_tree(db: &dyn Db, file: SourceFile) -> Arc<ItemTree> {
    let parse = crate::parse(db, file);
    let mut tree = ItemTree::default();
    for item in parse.tree().items() {
        match item {
            ast::Item::Import(import) => {
                if let Some(path) = import.path() {
                    tree.imports.push(path);
                }
            }
            ast::Item::Def(def) => {
                let kind = if def.is_entry() { DefKind::Entry } else { DefKind::Def };
                if let Some(name) = def.name() {
                    push_def(&mut tree, file, Name::new(&name.text()), kind);
                }
            }
            ast::Item::TypeAlias(alias) => {
                if let Some(name) = alias.name() {
                    push_def(&mut tree, file, Name::new(&name.text()), DefKind::TypeAlias);
                }
            }
        }
    }
    Arc::new(tree)
}

fn push_def(tree: &mut ItemTree, file: SourceFile, name: Name, kind: DefKind) {
    let same_namespace = |k: DefKind| (k == DefKind::TypeAlias) == (kind == DefKind::TypeAlias);
    let dup = tree.defs.iter().filter(|d| d.name == name && same_namespace(d.kind)).count();
    let dup = u32::try_from(dup).expect("invariant: fewer than 2^32 declarations");
    tree.defs.push(DefLoc { file, name, dup, kind });
}

/// The syntax of a declaration in the current text: a pointer (position-dependent,
/// so only queries whose results hold no positions may read it) and the node.
pub fn def_ast(db: &dyn Db, loc: &DefLoc) -> Option<ast::Item> {
    let parse = crate::parse(db, loc.file);
    let mut seen = 0;
    for item in parse.tree().items() {
        let (name, kind) = match &item {
            ast::Item::Def(def) => {
                (def.name(), if def.is_entry() { DefKind::Entry } else { DefKind::Def })
            }
            ast::Item::TypeAlias(alias) => (alias.name(), DefKind::TypeAlias),
            ast::Item::Import(_) => continue,
        };
        let Some(name) = name else { continue };
        let same_namespace = (kind == DefKind::TypeAlias) == (loc.kind == DefKind::TypeAlias);
        if !same_namespace || name.text() != loc.name.as_str() {
            continue;
        }
        if seen == loc.dup {
            return Some(item);
        }
        seen += 1;
    }
    None
}

/// The range of a declaration's name, for diagnostics and go-to-definition.
pub(crate) fn def_name_range(db: &dyn Db, loc: &DefLoc) -> Option<TextRange> {
    let item = def_ast(db, loc)?;
    let name = match item {
        ast::Item::Def(def) => def.name(),
        ast::Item::TypeAlias(alias) => alias.name(),
        ast::Item::Import(_) => None,
    }?;
    Some(name.syntax().text_range())
}
