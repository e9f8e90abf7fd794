//! The database: file texts and the workspace are inputs; everything else is derived.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use salsa::Setter;

/// A source file: its workspace-relative path (with `/` separators, e.g.
/// `examples/dot.weft`) and its text. Invalid UTF-8 was replaced by the loader, which
/// reports it; the text here is what the parser sees.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(deref)]
    pub text: Arc<str>,
}

/// The set of files: how `import "path"` finds its target.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(ref)]
    pub files: BTreeMap<String, SourceFile>,
}

/// The database trait every query takes.
#[salsa::db]
pub trait Db: salsa::Database {
    fn workspace(&self) -> Workspace;
    /// The prelude (version 1.1): a file every other file sees, not in the workspace.
    fn prelude(&self) -> SourceFile;
}

/// Where the prelude's declarations say they are: not a path in any workspace (an
/// editor opens a copy written to disk by the language server).
pub const PRELUDE_PATH: &str = "<weft>/prelude.weft";

/// The prelude's text, shipped inside the compiler.
pub const PRELUDE_TEXT: &str = include_str!("prelude.weft");

/// The concrete database used by the CLI, the language server and tests.
#[salsa::db]
#[derive(Clone)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
    /// Always `Some` after construction; an input id can only be made with a database.
    workspace: Option<Workspace>,
    /// Always `Some` after construction, like `workspace`.
    prelude: Option<SourceFile>,
    /// Names of queries that executed, when logging is on (incrementality tests).
    log: Arc<Mutex<Option<Vec<String>>>>,
}

impl Default for RootDatabase {
    fn default() -> Self {
        let log: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
        let callback_log = Arc::clone(&log);
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut guard) = callback_log.lock()
                && let Some(entries) = guard.as_mut()
            {
                entries.push(format!("{database_key:?}"));
            }
        })));
        let mut db = RootDatabase { storage, workspace: None, prelude: None, log };
        db.workspace = Some(Workspace::new(&db, BTreeMap::new()));
        db.prelude = Some(SourceFile::new(&db, PRELUDE_PATH.to_owned(), Arc::from(PRELUDE_TEXT)));
        db
    }
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

#[salsa::db]
impl Db for RootDatabase {
    fn workspace(&self) -> Workspace {
        self.workspace.expect("invariant: the workspace input is created with the database")
    }

    fn prelude(&self) -> SourceFile {
        self.prelude.expect("invariant: the prelude input is created with the database")
    }
}

impl RootDatabase {
    /// Adds a file or replaces its text. Returns its input id.
    pub fn set_file(&mut self, path: &str, text: &str) -> SourceFile {
        let mut files = self.workspace().files(self).clone();
        if let Some(file) = files.get(path).copied() {
            if file.text(self) != text {
                file.set_text(self).to(Arc::from(text));
            }
            return file;
        }
        let file = SourceFile::new(self, path.to_owned(), Arc::from(text));
        files.insert(path.to_owned(), file);
        self.workspace().set_files(self).to(files);
        file
    }

    pub fn remove_file(&mut self, path: &str) {
        let mut files = self.workspace().files(self).clone();
        if files.remove(path).is_some() {
            self.workspace().set_files(self).to(files);
        }
    }

    /// The file at `path`: a workspace file, or the prelude at [`PRELUDE_PATH`].
    pub fn file(&self, path: &str) -> Option<SourceFile> {
        if path == PRELUDE_PATH {
            return Some(self.prelude());
        }
        self.workspace().files(self).get(path).copied()
    }

    pub fn files(&self) -> Vec<SourceFile> {
        self.workspace().files(self).values().copied().collect()
    }

    /// Starts recording executed queries (see [`RootDatabase::take_log`]).
    pub fn enable_log(&self) {
        if let Ok(mut guard) = self.log.lock() {
            *guard = Some(Vec::new());
        }
    }

    /// The queries executed since logging started or the last call.
    pub fn take_log(&self) -> Vec<String> {
        self.log
            .lock()
            .ok()
            .and_then(|mut guard| guard.as_mut().map(std::mem::take))
            .unwrap_or_default()
    }
}
