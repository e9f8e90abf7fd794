//! Weft's semantic core: a salsa database over file texts, with queries for parsing,
//! item trees, imports, name resolution, and type and size inference.
//!
//! The pipeline (one salsa query per arrow, ARCHITECTURE.md):
//!
//! ```text
//! text ─► file_items ─► parse_item ─► item_tree ─► file_scope ─► body ─► infer ─► diagnostics
//!         (stretches)   (per stretch)              (imports)     (names)  (types, sizes)
//! ```
//!
//! Incrementality rests on three ideas. A file is parsed as its declarations' stretches
//! of text (`weft_syntax::split_items`), each interned by its text ([`ItemText`]) and
//! parsed on its own ([`parse_item`]), so an edit re-parses the stretch it touched.
//! Items have position-independent ids ([`DefLoc`]: file, name and the index among
//! same-named items, rust-analyzer's AstId idea keyed by name), and [`def_item`] gives
//! a def's stretch: it re-runs after every edit but compares equal unless that stretch
//! changed. And bodies, source maps, inference results and a def's diagnostics
//! ([`def_diagnostics`]) are lowered from the stretch alone, with positions from its
//! start, so after an edit inside one def only that def is lowered, inferred and
//! checked again; [`def_offset`] moves positions into the file where a feature shows
//! them ([`source_map`], [`file_diagnostics`]).
//!
//! Diagnostics are return values of queries (never salsa accumulators) and are keyed
//! by ids; [`file_diagnostics`] maps them to ranges at the end, as plain data that
//! weft-ide words.

mod builtins;
mod db;
mod diagnostics;
mod expr_store;
mod inference;
mod items;
mod levels;
mod name;
mod parallel;
mod pretty;
mod scope;
mod signatures;
#[cfg(test)]
mod tests;
mod ty;
mod type_ref;

pub use crate::builtins::{Builtin, MathFn, UNQUALIFIED as UNQUALIFIED_BUILTINS};
pub use crate::db::{Db, PRELUDE_PATH, PRELUDE_TEXT, RootDatabase, SourceFile, Workspace};
pub use crate::diagnostics::{
    HirDiagnostic, HirDiagnosticKind, Severity, def_diagnostics, file_diagnostics,
    file_level_diagnostics, sort_and_merge,
};
pub use crate::expr_store::{
    Body, BodyDiagnostic, BodySourceMap, DefSourceMap, Expr, ExprId, IndexItem, Level, Literal,
    LoopForm, Pat, PatId, Resolution, body, body_with_source_map, source_map,
};
pub use crate::inference::{InferDiagnostic, InferenceResult, Site, def_scheme, infer};
pub use crate::items::{
    DefId, DefKind, DefLoc, FileItem, FileItems, ItemText, ItemTree, def_ast, def_item,
    def_item_ast, def_offset, file_items, item_tree, parse_item,
};
pub use crate::levels::LevelContext;
pub use crate::name::Name;
pub use crate::parallel::for_each_file_in_parallel;
pub use crate::pretty::{pretty_file, pretty_scheme};
pub use crate::scope::{FileScope, file_scope, resolve_import_path};
pub use crate::signatures::{Signature, signature};
pub use crate::ty::{ScalarTy, Scheme, SizeVar, Ty, TySize};
pub use crate::type_ref::{SizeRef, TypeRef};
pub use weft_syntax::{Parse, TextRange, TextSize};

/// A file's syntax tree and errors (a salsa query: re-runs when the file's text
/// changes): its declarations' trees ([`parse_item`], which re-runs only for the
/// declarations an edit touched) joined under one root, with the file's positions. For
/// features that walk the file's text; checking reads each declaration's own tree.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parse {
    let items = &file_items(db, file).items;
    Parse::join(items.iter().map(|item| (item.start, parse_item(db, item.text))))
}
