//! Weft's semantic core: a salsa database over file texts, with queries for parsing,
//! item trees, imports, name resolution, and type and size inference.
//!
//! The pipeline (one salsa query per arrow, ARCHITECTURE.md):
//!
//! ```text
//! SourceFile text ─► parse ─► item_tree ─► file_scope ─► body ─► infer ─► diagnostics
//!                                          (imports)     (names)  (types, sizes)
//! ```
//!
//! Incrementality rests on two rust-analyzer ideas. Items have position-independent
//! ids ([`DefLoc`]: file, name and the index among same-named items), so typing above
//! a def does not change its id. And bodies and inference results hold no text ranges:
//! ranges live in source maps ([`BodySourceMap`]) that only diagnostics rendering
//! reads. After an edit inside one def, the other defs' bodies are re-lowered (their
//! text moved) but compare equal, so their inference is not re-executed.
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
pub use crate::diagnostics::{HirDiagnostic, HirDiagnosticKind, Severity, file_diagnostics};
pub use crate::expr_store::{
    Body, BodyDiagnostic, BodySourceMap, Expr, ExprId, IndexItem, Level, Literal, LoopForm, Pat,
    PatId, Resolution, body, body_with_source_map,
};
pub use crate::inference::{InferDiagnostic, InferenceResult, Site, def_scheme, infer};
pub use crate::items::{DefId, DefKind, DefLoc, ItemTree, def_ast, item_tree};
pub use crate::levels::LevelContext;
pub use crate::name::Name;
pub use crate::parallel::for_each_file_in_parallel;
pub use crate::pretty::{pretty_file, pretty_scheme};
pub use crate::scope::{FileScope, file_scope, resolve_import_path};
pub use crate::signatures::{Signature, signature};
pub use crate::ty::{ScalarTy, Scheme, SizeVar, Ty, TySize};
pub use crate::type_ref::{SizeRef, TypeRef};
pub use weft_syntax::{Parse, TextRange, TextSize};

/// Parses a file (a salsa query: re-runs only when the file's text changes).
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parse {
    weft_syntax::parse(file.text(db))
}
