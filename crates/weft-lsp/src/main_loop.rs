//! The owner thread: holds the `AnalysisHost` and the open documents, applies
//! edits in arrival order, snapshots the database for reads, and publishes
//! diagnostics once edits have settled.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use lsp_types::{TextDocumentContentChangeEvent, Uri};
use rustc_hash::FxHashMap;
use tower_lsp_server::Client;
use weft_ide::{Analysis, AnalysisHost, Change};
use weft_syntax::line_index::LineIndex;

use crate::later_diagnostics::{LaterDiagnostics, move_through};
use crate::pool::Pool;
use crate::{Config, from_proto};

/// A read: runs on a pool thread with a fresh snapshot.
pub(crate) type ReadJob = Box<dyn FnOnce(Analysis) + Send>;

/// What the owner thread is asked to do, in arrival order.
pub(crate) enum Task {
    Configure {
        root: Option<PathBuf>,
        options: Option<serde_json::Value>,
    },
    Open {
        uri: Uri,
        text: String,
        version: i32,
    },
    Change {
        uri: Uri,
        changes: Vec<TextDocumentContentChangeEvent>,
        version: i32,
    },
    Close {
        uri: Uri,
    },
    /// Files changed on disk: reload them unless they are open.
    DiskChanged {
        uris: Vec<Uri>,
    },
    /// `weft-runner devices` answered which device runs use (or why none).
    DeviceFound(crate::runner::Detected),
    Read(ReadJob),
}

struct Document {
    uri: Uri,
    text: String,
    version: i32,
}

struct Owner {
    host: AnalysisHost,
    documents: FxHashMap<String, Document>,
    config: Config,
    /// The `weft.json` of each folder with open documents.
    projects: crate::project::ProjectConfigs,
    /// The workspace's root folder, whose `weft.json` sets the profile of hovers.
    root: Option<PathBuf>,
    pool: Pool,
    client: Client,
    runtime: tokio::runtime::Handle,
    /// Bumped by every edit; diagnostics computed for an older one are dropped.
    generation: Arc<AtomicU64>,
    /// The diagnostics computed after the front end's, carried by every publication.
    later: Arc<LaterDiagnostics>,
    /// When to publish diagnostics, and the documents edited since the last time.
    diagnostics_due: Option<Instant>,
    edited: Vec<String>,
}

/// Starts the owner thread; the returned sender is how handlers reach it.
pub(crate) fn start(client: Client, runtime: tokio::runtime::Handle) -> Sender<Task> {
    let (sender, receiver) = crossbeam_channel::unbounded();
    let n_threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4);
    let owner = Owner {
        host: AnalysisHost::new(),
        documents: FxHashMap::default(),
        config: Config::default(),
        projects: crate::project::ProjectConfigs::default(),
        root: None,
        pool: Pool::new(n_threads),
        client,
        runtime,
        generation: Arc::new(AtomicU64::new(0)),
        later: Arc::default(),
        diagnostics_due: None,
        edited: Vec::new(),
    };
    weft_syntax::spawn_with_large_stack("weft-lsp-owner", move || owner.run(&receiver))
        .expect("invariant: the OS can start the owner thread");
    sender
}

impl Owner {
    fn run(mut self, receiver: &Receiver<Task>) {
        loop {
            let task = match self.diagnostics_due {
                Some(due) => {
                    match receiver.recv_timeout(due.saturating_duration_since(Instant::now())) {
                        Ok(task) => task,
                        Err(RecvTimeoutError::Timeout) => {
                            self.publish_diagnostics();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
                None => match receiver.recv() {
                    Ok(task) => task,
                    Err(_) => return,
                },
            };
            self.handle(task);
        }
    }

    fn handle(&mut self, task: Task) {
        match task {
            Task::Read(job) => {
                let analysis = self.host.analysis();
                self.pool.spawn(move || job(analysis));
            }
            Task::Configure { root, options } => {
                if let Some(options) = options {
                    self.config.update(&options);
                }
                self.root = root.clone();
                self.set_cost_config();
                if let Some(root) = root {
                    self.load_workspace(&root);
                }
            }
            Task::DeviceFound(found) => {
                // Predictions use it; performance diagnostics keep `weft check`'s profile.
                self.config.detected = Some(found.device);
                self.config.other_device = found.other;
                self.set_cost_config();
            }
            Task::Open { uri, text, version } => {
                let path = from_proto::path(&uri);
                let mut change = Change::default();
                change.set_file(path.clone(), text.as_str());
                self.documents.insert(path.clone(), Document { uri, text, version });
                let later = Arc::clone(&self.later);
                later.with(|later| {
                    later.remove(&path);
                    self.apply(change, Some(path));
                });
            }
            Task::Change { uri, changes, version } => {
                let path = from_proto::path(&uri);
                let later = Arc::clone(&self.later);
                // Moving the carried diagnostics and bumping the generation under one
                // lock: a computation for the old text cannot store its result between.
                later.with(|later| {
                    let Some(document) = self.documents.get_mut(&path) else { return };
                    for change in changes {
                        if let Some(carried) = later.get_mut(&path) {
                            move_through(carried, &change);
                        }
                        apply_content_change(&mut document.text, change);
                    }
                    document.version = version;
                    let mut change = Change::default();
                    change.set_file(path.clone(), document.text.as_str());
                    self.apply(change, Some(path));
                });
            }
            Task::Close { uri } => {
                let path = from_proto::path(&uri);
                self.documents.remove(&path);
                self.later.with(|later| later.remove(&path));
                let mut change = Change::default();
                reload_from_disk(&path, &mut change);
                self.apply(change, None);
                let client = self.client.clone();
                self.runtime
                    .spawn(async move { client.publish_diagnostics(uri, Vec::new(), None).await });
            }
            Task::DiskChanged { uris } => {
                let mut change = Change::default();
                for uri in uris {
                    let path = from_proto::path(&uri);
                    if path.ends_with(crate::project::PROJECT_FILE) {
                        self.projects.clear();
                    }
                    if !self.documents.contains_key(&path) && path.ends_with(".weft") {
                        reload_from_disk(&path, &mut change);
                    }
                }
                self.apply(change, None);
            }
        }
    }

    /// Hovers and lenses predict with the root's project settings.
    fn set_cost_config(&mut self) {
        let config = match &self.root {
            Some(root) => {
                let root_file = root.join(crate::project::PROJECT_FILE);
                self.projects.settings(&self.config, &root_file.to_string_lossy()).cost_config()
            }
            None => self.config.cost_config(),
        };
        self.host.set_cost_config(config);
    }

    fn apply(&mut self, change: Change, edited: Option<String>) {
        // The quiet time runs from the edit, not from the end of applying it: a new
        // revision frees what the last one replaced (a big file's layout, say), which
        // takes milliseconds the user would otherwise wait twice.
        let edited_at = Instant::now();
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.host.apply_change(change);
        if let Some(path) = edited {
            self.edited.retain(|p| *p != path);
            self.edited.insert(0, path);
        }
        self.diagnostics_due = Some(edited_at + self.config.diagnostics_delay);
    }

    /// Every `.weft` file under the root; open documents win over the disk.
    fn load_workspace(&mut self, root: &Path) {
        let mut paths = Vec::new();
        collect_weft_files(root, &mut paths, 0);
        let mut change = Change::default();
        for path in paths {
            let key = path.to_string_lossy().replace('\\', "/");
            if self.documents.contains_key(&key) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(&path) {
                change.set_file(key, String::from_utf8_lossy(&bytes).as_ref());
            }
        }
        self.apply(change, None);
    }

    /// Computes and publishes diagnostics of every open document on the pool.
    fn publish_diagnostics(&mut self) {
        self.diagnostics_due = None;
        let mut order: Vec<String> = std::mem::take(&mut self.edited);
        let mut rest: Vec<String> =
            self.documents.keys().filter(|p| !order.contains(p)).cloned().collect();
        rest.sort();
        order.extend(rest);
        let targets: Vec<(String, Uri, i32)> = order
            .into_iter()
            .filter_map(|path| {
                let document = self.documents.get(&path)?;
                Some((path, document.uri.clone(), document.version))
            })
            .collect();
        let generation = Arc::clone(&self.generation);
        let expected = generation.load(Ordering::SeqCst);
        let later = Arc::clone(&self.later);
        let client = self.client.clone();
        let runtime = self.runtime.clone();
        let analysis = self.host.analysis();
        // Per document: whether and how its performance diagnostics are computed, from
        // the settings under its folder's `weft.json` (what `weft check` reads).
        let perf_settings: FxHashMap<String, weft_ide::CostConfig> = targets
            .iter()
            .filter_map(|(path, _, _)| {
                let settings = self.projects.settings(&self.config, path);
                settings
                    .perf_diagnostics
                    .then(|| (path.clone(), settings.diagnostics_cost_config()))
            })
            .collect();
        let publish = move |uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: i32| {
            let client = client.clone();
            runtime.spawn(async move {
                client.publish_diagnostics(uri, diagnostics, Some(version)).await;
            });
        };
        self.pool.spawn(move || {
            // First the front end's diagnostics of every document, with the later ones
            // last computed (moved through the edits since); then the later ones again,
            // each document republished when they changed.
            let mut published: Vec<(String, lsp_types::Uri, i32, Vec<lsp_types::Diagnostic>)> =
                Vec::new();
            for (path, uri, version) in targets {
                // A bug that panics (the default hook logs it on stderr) must not take
                // the pool's thread with it: the document keeps its last diagnostics.
                let computed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::handlers::front_end_diagnostics(&analysis, &path)
                }));
                let front_end = match computed {
                    Ok(Ok(Some(diagnostics))) => diagnostics,
                    Ok(Ok(None) | Err(_)) => return,
                    Err(_panic) => continue,
                };
                let Some(carried) = later.with(|later| {
                    (generation.load(Ordering::SeqCst) == expected)
                        .then(|| later.get(&path).cloned().unwrap_or_default())
                }) else {
                    return;
                };
                let mut diagnostics = front_end.clone();
                diagnostics.extend(carried);
                published.push((path, uri.clone(), version, front_end));
                publish(uri, diagnostics, version);
            }
            for (path, uri, version, mut diagnostics) in published {
                let computed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::handlers::later_diagnostics(&analysis, &path, perf_settings.get(&path))
                }));
                let found = match computed {
                    Ok(Ok(Some(found))) => found,
                    Ok(Ok(None) | Err(_)) => return,
                    Err(_panic) => continue,
                };
                let changed = later.with(|later| {
                    if generation.load(Ordering::SeqCst) != expected {
                        return None;
                    }
                    let before = later.insert(path.clone(), found.clone());
                    Some(before.unwrap_or_default() != found)
                });
                match changed {
                    None => return,
                    Some(false) => continue,
                    Some(true) => {
                        diagnostics.extend(found);
                        publish(uri, diagnostics, version);
                    }
                }
            }
        });
    }
}

fn reload_from_disk(path: &str, change: &mut Change) {
    match std::fs::read(path) {
        Ok(bytes) => change.set_file(path, String::from_utf8_lossy(&bytes).as_ref()),
        Err(_) => change.remove_file(path),
    }
}

fn collect_weft_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::path);
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                collect_weft_files(&path, out, depth + 1);
            }
        } else if file_type.is_file() && name.ends_with(".weft") {
            out.push(path);
        }
    }
}

/// Applies one LSP content change (a range edit, or the whole text) to `text`.
pub(crate) fn apply_content_change(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(range) => {
            let index = LineIndex::new(text);
            let range = from_proto::range(&index, text, range);
            text.replace_range(std::ops::Range::<usize>::from(range), &change.text);
        }
        None => *text = change.text,
    }
}
