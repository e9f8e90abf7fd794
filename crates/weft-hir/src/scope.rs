//! File scopes: which declarations a file sees (its own and its imports'), and
//! import errors (unresolved paths, cycles). LANGUAGE.md section 3.
//!
//! `import "path"` is relative to the importing file, without `.weft`. It makes the
//! imported file's own declarations visible, not what that file imports in turn (so
//! a file's names never change because a distant file changed its imports). A file's
//! own declarations shadow imported ones; among imports, the first wins; the prelude
//! (version 1.1) is seen by every file, below everything else.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::items::{DefKind, DefLoc, item_tree};
use crate::{Db, SourceFile};

/// What names a file can refer to at top level.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileScope {
    pub values: BTreeMap<String, DefLoc>,
    pub types: BTreeMap<String, DefLoc>,
    /// The resolved target of each import, in order (`None`: no such file).
    pub imports: Vec<Option<SourceFile>>,
    /// Imports that lead back to this file: the import's index and the cycle's paths.
    pub import_cycles: Vec<(usize, Vec<String>)>,
}

/// Resolves `import "target"` written in the file at `from`.
pub fn resolve_import_path(from: &str, target: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("{}.weft", parts.join("/"))
}

#[salsa::tracked(returns(ref))]
pub fn file_scope(db: &dyn Db, file: SourceFile) -> Arc<FileScope> {
    let files = db.workspace().files(db);
    let tree = item_tree(db, file);
    let mut scope = FileScope::default();
    for def in &tree.defs {
        let map = if def.kind == DefKind::TypeAlias { &mut scope.types } else { &mut scope.values };
        map.entry(def.name.as_str().to_owned()).or_insert_with(|| def.clone());
    }
    for (idx, target) in tree.imports.iter().enumerate() {
        let path = resolve_import_path(file.path(db), target);
        let imported = files.get(&path).copied();
        scope.imports.push(imported);
        let Some(imported) = imported else { continue };
        if let Some(cycle) = cycle_through(db, file, imported) {
            scope.import_cycles.push((idx, cycle));
            continue;
        }
        for def in &item_tree(db, imported).defs {
            if def.dup != 0 {
                continue;
            }
            let map =
                if def.kind == DefKind::TypeAlias { &mut scope.types } else { &mut scope.values };
            map.entry(def.name.as_str().to_owned()).or_insert_with(|| def.clone());
        }
    }
    // The prelude comes last: the file and its imports shadow it.
    let prelude = db.prelude();
    if file != prelude {
        for def in item_tree(db, prelude).defs.iter().filter(|d| d.dup == 0) {
            let map =
                if def.kind == DefKind::TypeAlias { &mut scope.types } else { &mut scope.values };
            map.entry(def.name.as_str().to_owned()).or_insert_with(|| def.clone());
        }
    }
    Arc::new(scope)
}

/// A path of imports from `start` back to `origin`, if one exists (breadth-first, so
/// the shortest). Iterative: an import cycle must not become a query cycle.
fn cycle_through(db: &dyn Db, origin: SourceFile, start: SourceFile) -> Option<Vec<String>> {
    let files = db.workspace().files(db);
    let mut seen = FxHashSet::default();
    let mut queue = std::collections::VecDeque::from([(start, vec![start.path(db).clone()])]);
    while let Some((file, path)) = queue.pop_front() {
        if file == origin {
            return Some(path);
        }
        if !seen.insert(file) {
            continue;
        }
        for target in &item_tree(db, file).imports {
            let next = resolve_import_path(file.path(db), target);
            if let Some(next_file) = files.get(&next).copied() {
                let mut next_path = path.clone();
                next_path.push(next_file.path(db).clone());
                queue.push_back((next_file, next_path));
            }
        }
    }
    None
}
