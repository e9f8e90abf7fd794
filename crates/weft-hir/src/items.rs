//! The item tree: a file's declarations, by name, without bodies or positions.
//!
//! Editing inside a def body leaves the item tree equal, so nothing that depends only
//! on it re-runs. A def is identified by [`DefLoc`]: its file, its name and the index
//! among declarations of the same name in that file (duplicates are an error, but
//! still get distinct ids so each is checked). This is rust-analyzer's AstId idea,
//! keyed by name instead of by position.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use weft_syntax::ast::{self, AstNode};
use weft_syntax::{SyntaxNodePtr, TextRange};

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
    /// The first declaration with this name in the value namespace (defs and entries).
    pub fn find_value(&self, name: &str) -> Option<&DefLoc> {
        self.defs
            .iter()
            .find(|d| d.kind != DefKind::TypeAlias && d.name.as_str() == name && d.dup == 0)
    }
}

#[salsa::tracked(returns(ref))]
pub fn item_tree(db: &dyn Db, file: SourceFile) -> Arc<ItemTree> {
    let parse = crate::parse(db, file);
    let mut tree = ItemTree::default();
    // Declarations seen so far per name and namespace (`true`: type aliases), so a
    // duplicate's index is one lookup, not a scan of every earlier declaration (which
    // made a file of many defs quadratic).
    let mut seen: FxHashMap<(Name, bool), u32> = FxHashMap::default();
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
                    push_def(&mut tree, &mut seen, file, Name::new(&name.text()), kind);
                }
            }
            ast::Item::TypeAlias(alias) => {
                if let Some(name) = alias.name() {
                    push_def(
                        &mut tree,
                        &mut seen,
                        file,
                        Name::new(&name.text()),
                        DefKind::TypeAlias,
                    );
                }
            }
        }
    }
    Arc::new(tree)
}

fn push_def(
    tree: &mut ItemTree,
    seen: &mut FxHashMap<(Name, bool), u32>,
    file: SourceFile,
    name: Name,
    kind: DefKind,
) {
    let count = seen.entry((name.clone(), kind == DefKind::TypeAlias)).or_insert(0);
    let dup = *count;
    *count += 1;
    tree.defs.push(DefLoc { file, name, dup, kind });
}

/// The syntax of a declaration in the current text: a pointer (position-dependent,
/// so only queries whose results hold no positions may read it) and the node.
pub fn def_ast(db: &dyn Db, loc: &DefLoc) -> Option<ast::Item> {
    let key = (loc.name.clone(), loc.dup, loc.kind == DefKind::TypeAlias);
    let ptr = def_ptrs(db, loc.file).get(&key)?;
    let root = crate::parse(db, loc.file).syntax_node();
    ast::Item::cast(ptr.to_node(&root))
}

/// Where each declaration of a file is, keyed by name, duplicate index and namespace
/// (`true` for type aliases). Position-dependent: it changes whenever the file's
/// text does, but finding a def is then one lookup instead of a walk over the file's
/// items (which made checking a file quadratic in its number of defs).
#[salsa::tracked(returns(ref))]
fn def_ptrs(db: &dyn Db, file: SourceFile) -> Arc<FxHashMap<(Name, u32, bool), SyntaxNodePtr>> {
    let parse = crate::parse(db, file);
    let mut ptrs = FxHashMap::default();
    let mut seen: FxHashMap<(Name, bool), u32> = FxHashMap::default();
    for item in parse.tree().items() {
        let (name, is_alias) = match &item {
            ast::Item::Def(def) => (def.name(), false),
            ast::Item::TypeAlias(alias) => (alias.name(), true),
            ast::Item::Import(_) => continue,
        };
        let Some(name) = name else { continue };
        let name = Name::new(&name.text());
        let dup = seen.entry((name.clone(), is_alias)).or_insert(0);
        ptrs.insert((name, *dup, is_alias), SyntaxNodePtr::new(item.syntax()));
        *dup += 1;
    }
    Arc::new(ptrs)
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
