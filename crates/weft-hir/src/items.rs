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
use weft_syntax::{NodeOrToken, Parse, TextRange, TextSize};

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

/// One declaration's stretch of a file's text with its lookahead (`weft_syntax::ItemSpan`),
/// interned by its text: a stretch an edit did not touch keeps its id, so its parse and
/// everything lowered from it stay memoized.
#[salsa::interned(debug)]
pub struct ItemText {
    /// The stretch, then the text up to the end of the next declaration's keyword.
    #[returns(deref)]
    pub text: Box<str>,
    /// The length of the stretch itself.
    #[returns(copy)]
    pub len: TextSize,
}

/// A stretch's declarations, parsed on their own with positions from the stretch's start
/// (`weft_syntax::parse_items`).
#[salsa::tracked(returns(ref))]
pub fn parse_item<'db>(db: &'db dyn Db, item: ItemText<'db>) -> Parse {
    weft_syntax::parse_items(item.text(db), item.len(db))
}

/// A file as its declarations' stretches, in order, where each starts in the current
/// text, and the declaration each holds. Position-dependent (it changes whenever the
/// file's text does); every query that must not be reads one stretch, through
/// [`def_item`].
#[derive(Debug, PartialEq, Eq, salsa::SalsaValue)]
pub struct FileItems<'db> {
    pub items: Vec<FileItem<'db>>,
    /// The index in `items` of each named declaration, by [`DeclKey`].
    by_key: FxHashMap<DeclKey, u32>,
}

/// One stretch of [`FileItems`].
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct FileItem<'db> {
    pub text: ItemText<'db>,
    /// Where the stretch starts in the file.
    pub start: TextSize,
}

/// A declaration's name, index among same-named ones and namespace (`true` for type
/// aliases): what finds it in a file.
type DeclKey = (Name, u32, bool);

fn decl_key(loc: &DefLoc) -> DeclKey {
    (loc.name.clone(), loc.dup, loc.kind == DefKind::TypeAlias)
}

impl<'db> FileItems<'db> {
    /// The stretch holding a declaration of the file.
    pub fn of(&self, loc: &DefLoc) -> Option<&FileItem<'db>> {
        let idx = *self.by_key.get(&decl_key(loc))?;
        self.items.get(usize::try_from(idx).ok()?)
    }

    /// The stretch holding `offset` (the end of the file in the last one).
    pub fn at_offset(&self, offset: TextSize) -> Option<&FileItem<'db>> {
        let idx = self.items.partition_point(|item| item.start <= offset).checked_sub(1)?;
        self.items.get(idx)
    }
}

/// Re-runs after every edit of the file and never compares equal to its last value
/// (`no_eq`: it holds positions, so it always changes).
#[salsa::tracked(returns(ref), no_eq)]
pub fn file_items(db: &dyn Db, file: SourceFile) -> FileItems<'_> {
    let text = file.text(db);
    let items: Vec<FileItem<'_>> = weft_syntax::split_items(text)
        .into_iter()
        .map(|span| FileItem {
            text: ItemText::new(db, span.text(text), span.range.len()),
            start: span.range.start(),
        })
        .collect();
    let mut by_key = FxHashMap::default();
    for_each_declaration(db, file, &items, |idx, decl| {
        if let (Declaration::Def(loc), Ok(idx)) = (decl, u32::try_from(idx)) {
            by_key.insert(decl_key(&loc), idx);
        }
    });
    FileItems { items, by_key }
}

/// What a stretch of text declares, with positions from its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ItemDeclaration {
    /// `import "path"`, the path as written, and the import's range.
    Import { path: String, range: TextRange },
    /// A named `def`, `entry` or `type`.
    Def { name: Name, kind: DefKind },
}

/// What a stretch of text declares: memoized per stretch, so the file's item tree after
/// an edit reads the declarations again without walking the syntax of every stretch.
#[salsa::tracked(returns(ref))]
pub(crate) fn item_declarations<'db>(
    db: &'db dyn Db,
    item: ItemText<'db>,
) -> Arc<[ItemDeclaration]> {
    let mut out = Vec::new();
    for decl in parse_item(db, item).tree().items() {
        let (name, kind) = match decl {
            ast::Item::Import(import) => {
                if let Some(path) = import.path() {
                    out.push(ItemDeclaration::Import { path, range: import.syntax().text_range() });
                }
                continue;
            }
            ast::Item::Def(def) => {
                (def.name(), if def.is_entry() { DefKind::Entry } else { DefKind::Def })
            }
            ast::Item::TypeAlias(alias) => (alias.name(), DefKind::TypeAlias),
        };
        if let Some(name) = name {
            out.push(ItemDeclaration::Def { name: Name::new(&name.text()), kind });
        }
    }
    out.into()
}

/// What a stretch declares, in the file.
enum Declaration {
    /// `import "path"`, the path as written.
    Import(String),
    /// A named `def`, `entry` or `type`.
    Def(DefLoc),
}

/// Calls `f` with each stretch's index and what it declares, in order. A declaration's
/// index among same-named ones (`DefLoc::dup`) is one lookup per declaration, not a
/// scan of the earlier ones (which made a file of many defs quadratic).
fn for_each_declaration(
    db: &dyn Db,
    file: SourceFile,
    items: &[FileItem<'_>],
    mut f: impl FnMut(usize, Declaration),
) {
    let mut seen: FxHashMap<(Name, bool), u32> = FxHashMap::default();
    for (idx, item) in items.iter().enumerate() {
        for decl in item_declarations(db, item.text).iter() {
            match decl {
                ItemDeclaration::Import { path, .. } => f(idx, Declaration::Import(path.clone())),
                ItemDeclaration::Def { name, kind } => {
                    let count =
                        seen.entry((name.clone(), *kind == DefKind::TypeAlias)).or_insert(0);
                    let dup = *count;
                    *count += 1;
                    let loc = DefLoc { file, name: name.clone(), dup, kind: *kind };
                    f(idx, Declaration::Def(loc));
                }
            }
        }
    }
}

/// A file's declarations, without positions: equal after any edit that keeps them.
#[salsa::tracked(returns(ref))]
pub fn item_tree(db: &dyn Db, file: SourceFile) -> Arc<ItemTree> {
    let mut tree = ItemTree::default();
    for_each_declaration(db, file, &file_items(db, file).items, |_, decl| match decl {
        Declaration::Import(path) => tree.imports.push(path),
        Declaration::Def(loc) => tree.defs.push(loc),
    });
    Arc::new(tree)
}

/// The stretch of text holding a declaration. It re-runs after every edit of the file
/// but compares equal unless the declaration's own stretch changed, so what is lowered
/// from it (signature, body, inference, diagnostics) re-runs only for the edited
/// declaration: rust-analyzer's `AstId` idea, with the stretch's text as the identity.
#[salsa::tracked(returns(copy))]
pub fn def_item<'db>(db: &'db dyn Db, def: DefId<'db>) -> Option<ItemText<'db>> {
    let loc = def.loc(db);
    file_items(db, loc.file).of(loc).map(|item| item.text)
}

/// A declaration's syntax in its stretch's own tree ([`parse_item`]): positions are from
/// the stretch's start ([`def_offset`]), so queries whose results must not depend on
/// where the declaration is may read it.
pub fn def_item_ast(db: &dyn Db, loc: &DefLoc) -> Option<ast::Item> {
    let item = def_item(db, DefId::new(db, loc.clone()))?;
    let key = decl_key(loc);
    // A stretch holds one declaration, except that the first may also hold imports.
    parse_item(db, item).tree().items().find(|decl| {
        let (name, is_alias) = match decl {
            ast::Item::Def(def) => (def.name(), false),
            ast::Item::TypeAlias(alias) => (alias.name(), true),
            ast::Item::Import(_) => return false,
        };
        name.is_some_and(|n| n.text() == key.0.as_str()) && is_alias == key.2
    })
}

/// Where a declaration's stretch starts in the current text: what turns the positions of
/// [`def_item_ast`] (and of source maps and diagnostics made from it) into the file's.
pub fn def_offset(db: &dyn Db, loc: &DefLoc) -> Option<TextSize> {
    file_items(db, loc.file).of(loc).map(|item| item.start)
}

/// The syntax of a declaration in the file's tree ([`crate::parse`]), with the file's
/// positions; for features that show or edit text.
pub fn def_ast(db: &dyn Db, loc: &DefLoc) -> Option<ast::Item> {
    let range = def_item_ast(db, loc)?.syntax().text_range() + def_offset(db, loc)?;
    let root = crate::parse(db, loc.file).syntax_node();
    let element = root.covering_element(range);
    let node = match element {
        NodeOrToken::Node(node) => node,
        NodeOrToken::Token(token) => token.parent()?,
    };
    node.ancestors().find(|n| n.text_range() == range).and_then(ast::Item::cast)
}

/// The range of a declaration's name in its stretch ([`def_item_ast`]'s positions).
pub(crate) fn def_name_range(db: &dyn Db, loc: &DefLoc) -> Option<TextRange> {
    let item = def_item_ast(db, loc)?;
    let name = match item {
        ast::Item::Def(def) => def.name(),
        ast::Item::TypeAlias(alias) => alias.name(),
        ast::Item::Import(_) => None,
    }?;
    Some(name.syntax().text_range())
}
