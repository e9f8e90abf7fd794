//! Weft's editor features as plain Rust data (rust-analyzer's `ide` crate).
//!
//! Architecture invariant: this crate knows nothing of LSP or JSON. Positions are byte
//! offsets ([`TextSize`]) and ranges ([`TextRange`]) in a file's text; files are named
//! by their database path. Only `weft-lsp` converts to LSP positions (UTF-16).
//!
//! [`AnalysisHost`] owns the database and applies [`Change`]s; [`Analysis`] is a
//! snapshot (a database clone) for reads. Every read returns [`Cancellable`]: a change
//! applied to the host while a read runs cancels it (salsa unwinds with `Cancelled`,
//! caught here), and the caller answers "content modified". Every feature works on
//! files with syntax or type errors elsewhere: it uses what parsed and inferred.
//!
//! One feature per file; `classify.rs` answers "what is this name" for all of them,
//! `program.rs` gives a file's core program, `memory.rs` "where does this binding live"
//! (the memory IR of the file's entries) and `kernels.rs` "which kernels compute this
//! expression, and how" (the OpenCL back end, compiled only when a feature asks).

mod annotate_type;
mod apl;
mod classify;
mod code_lens;
mod completion;
mod costs;
mod diagnostics;
mod document_symbols;
mod folding_ranges;
mod goto_definition;
mod gpu_run;
mod hover;
mod inlay_hints;
mod kernels;
mod materialise;
mod memory;
mod program;
mod references;
mod regions;
mod rename;
mod semantic_tokens;
mod show_kernel;
mod signature_help;
mod strategy;
#[cfg(test)]
mod tests;
mod workspace_symbols;

use std::collections::BTreeMap;
use std::panic::UnwindSafe;
use std::sync::Arc;

use weft_hir::RootDatabase;
use weft_syntax::line_index::LineIndex;

pub use crate::annotate_type::Assist;
pub use crate::code_lens::Runnable;
pub use crate::completion::{CompletionItem, CompletionKind};
pub use crate::costs::{CostConfig, HoverSection, perf_diagnostics};
pub use crate::diagnostics::{
    Diagnostic, RelatedInfo, backend_diagnostics, check_file, check_in_parallel,
    front_end_diagnostics, layout_diagnostics,
};
pub use crate::document_symbols::{StructureNode, SymbolKind};
pub use crate::folding_ranges::{Fold, FoldKind};
pub use crate::gpu_run::{EntryRun, GpuInput, GpuRun};
pub use crate::hover::HoverResult;
pub use crate::inlay_hints::{InlayHint, InlayKind};
pub use crate::semantic_tokens::{HighlightModifier, HighlightTag, HighlightedRange};
pub use crate::show_kernel::{KernelLink, KernelView, LineLink};
pub use crate::signature_help::SignatureHelp;
pub use crate::workspace_symbols::WorkspaceSymbol;
pub use salsa::Cancelled;
pub use weft_hir::{Severity, SourceFile};
pub use weft_syntax::format::PartlyFormatted;
pub use weft_syntax::{TextRange, TextSize};

/// The result of a read: `Err` when an edit cancelled it.
pub type Cancellable<T> = Result<T, Cancelled>;

/// A position in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePosition {
    pub path: String,
    pub offset: TextSize,
}

/// A range in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRange {
    pub path: String,
    pub range: TextRange,
}

/// Something to jump to: a declaration's whole range and its name's range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavigationTarget {
    pub path: String,
    pub name: String,
    pub full_range: TextRange,
    pub focus_range: TextRange,
}

/// A text edit: replace `range` with `insert`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub range: TextRange,
    pub insert: String,
}

/// Edits to several files, each file's edits sorted and non-overlapping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceChange {
    pub edits: BTreeMap<String, Vec<TextEdit>>,
}

/// A batch of file changes: `Some(text)` sets a file, `None` removes it.
#[derive(Debug, Clone, Default)]
pub struct Change {
    pub files: Vec<(String, Option<Arc<str>>)>,
}

impl Change {
    pub fn set_file(&mut self, path: impl Into<String>, text: impl Into<Arc<str>>) {
        self.files.push((path.into(), Some(text.into())));
    }

    pub fn remove_file(&mut self, path: impl Into<String>) {
        self.files.push((path.into(), None));
    }
}

/// Owns the database; applies changes. Applying a change cancels running reads and
/// waits until every [`Analysis`] snapshot is dropped (salsa's write lock).
#[derive(Default)]
pub struct AnalysisHost {
    db: RootDatabase,
    costs: CostConfig,
}

impl AnalysisHost {
    pub fn new() -> AnalysisHost {
        AnalysisHost::default()
    }

    pub fn apply_change(&mut self, change: Change) {
        for (path, text) in change.files {
            match text {
                Some(text) => {
                    self.db.set_file(&path, &text);
                }
                None => self.db.remove_file(&path),
            }
        }
    }

    /// A snapshot for reads. Do not keep it across a change: the change waits for it.
    pub fn analysis(&self) -> Analysis {
        Analysis { db: self.db.clone(), costs: self.costs.clone() }
    }

    /// The profile of predictions and the silenced performance diagnostics, for the
    /// snapshots made from now on.
    pub fn set_cost_config(&mut self, config: CostConfig) {
        self.costs = config;
    }

    /// Asks running reads to stop (the next change does this too).
    pub fn request_cancellation(&mut self) {
        use salsa::Database as _;
        self.db.trigger_cancellation();
    }
}

/// A snapshot of the database for reads; cheap to make, `Send`.
pub struct Analysis {
    db: RootDatabase,
    costs: CostConfig,
}

impl Analysis {
    fn with_db<T>(&self, f: impl FnOnce(&RootDatabase) -> T + UnwindSafe) -> Cancellable<T> {
        let db = std::panic::AssertUnwindSafe(&self.db);
        Cancelled::catch(move || f(*db))
    }

    /// A feature of `.weft` files: nothing for `.apl` files, which have their own
    /// diagnostics, hovers, lenses and kernel view (docs/apl.md).
    fn weft_file<T: Default>(
        &self,
        path: &str,
        f: impl FnOnce(&RootDatabase) -> T + UnwindSafe,
    ) -> Cancellable<T> {
        if apl::is_apl(path) {
            return Ok(T::default());
        }
        self.with_db(f)
    }

    /// The paths of every file, sorted.
    pub fn files(&self) -> Cancellable<Vec<String>> {
        self.with_db(|db| db.files().iter().map(|f| f.path(db).clone()).collect())
    }

    pub fn file_text(&self, path: &str) -> Cancellable<Option<Arc<str>>> {
        self.with_db(|db| db.file(path).map(|f| Arc::from(f.text(db))))
    }

    /// The path of `file` (diagnostics name the files of their related places so).
    pub fn path(&self, file: SourceFile) -> Cancellable<String> {
        self.with_db(|db| file.path(db).clone())
    }

    pub fn line_index(&self, path: &str) -> Cancellable<Option<Arc<LineIndex>>> {
        self.with_db(|db| db.file(path).map(|f| Arc::clone(line_index(db, f))))
    }

    /// Every diagnostic of a file ([`check_file`]); none for an unknown path.
    pub fn diagnostics(&self, path: &str) -> Cancellable<Vec<Diagnostic>> {
        self.with_db(|db| db.file(path).map(|file| check_file(db, file)).unwrap_or_default())
    }

    /// The front end's diagnostics of a file ([`front_end_diagnostics`]), what the server
    /// publishes on every edit.
    pub fn front_end_diagnostics(&self, path: &str) -> Cancellable<Vec<Diagnostic>> {
        self.with_db(|db| {
            db.file(path).map(|file| front_end_diagnostics(db, file)).unwrap_or_default()
        })
    }

    /// The memory layer's diagnostics of a file ([`layout_diagnostics`]), published after
    /// the front end's.
    pub fn layout_diagnostics(&self, path: &str) -> Cancellable<Vec<Diagnostic>> {
        self.with_db(|db| {
            db.file(path).map(|file| layout_diagnostics(db, file).to_vec()).unwrap_or_default()
        })
    }

    /// The hover: a short summary unless `full_hovers` is set.
    pub fn hover(&self, position: &FilePosition) -> Cancellable<Option<HoverResult>> {
        self.with_db(|db| hover::hover(db, position, &self.costs))
    }

    /// The hover with its whole derivation (symbolic costs, regions): the detail view a
    /// short hover points to.
    pub fn hover_details(&self, position: &FilePosition) -> Cancellable<Option<HoverResult>> {
        let full = CostConfig { full_hovers: true, ..self.costs.clone() };
        self.with_db(|db| hover::hover(db, position, &full))
    }

    /// The performance diagnostics of a file (`uncoalesced-access`, `bank-conflict`,
    /// `local-memory-limit`) under `config` (the file's project settings), for its
    /// entries small enough to compile unasked (`IMPLICIT_BUDGET`); the server publishes
    /// them after the others.
    pub fn perf_diagnostics(
        &self,
        path: &str,
        config: &CostConfig,
    ) -> Cancellable<Vec<Diagnostic>> {
        self.with_db(|db| {
            let Some(file) = db.file(path) else { return Vec::new() };
            costs::perf_diagnostics_within(db, file, config, Some(kernels::IMPLICIT_BUDGET))
        })
    }

    /// Per entry of a file small enough to compile unasked: its name's range and its
    /// predicted time as a code lens says it.
    pub fn entry_predictions(&self, path: &str) -> Cancellable<Vec<(TextRange, String)>> {
        self.weft_file(path, |db| costs::predictions(db, path, &self.costs))
    }

    pub fn goto_definition(&self, position: &FilePosition) -> Cancellable<Vec<NavigationTarget>> {
        self.weft_file(&position.path, |db| goto_definition::goto_definition(db, position))
    }

    /// Every reference, the declaration included, sorted by file and position.
    pub fn references(&self, position: &FilePosition) -> Cancellable<Option<Vec<FileRange>>> {
        self.weft_file(&position.path, |db| references::references(db, position))
    }

    /// The range of the name to rename, or why it cannot be renamed.
    pub fn prepare_rename(
        &self,
        position: &FilePosition,
    ) -> Cancellable<Result<TextRange, String>> {
        if apl::is_apl(&position.path) {
            return Ok(Err("renaming is not supported in APL files".to_owned()));
        }
        self.with_db(|db| rename::prepare_rename(db, position))
    }

    pub fn rename(
        &self,
        position: &FilePosition,
        new_name: &str,
    ) -> Cancellable<Result<SourceChange, String>> {
        if apl::is_apl(&position.path) {
            return Ok(Err("renaming is not supported in APL files".to_owned()));
        }
        self.with_db(|db| rename::rename(db, position, new_name))
    }

    pub fn document_symbols(&self, path: &str) -> Cancellable<Vec<StructureNode>> {
        self.weft_file(path, |db| document_symbols::document_symbols(db, path))
    }

    pub fn workspace_symbols(&self, query: &str) -> Cancellable<Vec<WorkspaceSymbol>> {
        self.with_db(|db| workspace_symbols::workspace_symbols(db, query))
    }

    pub fn semantic_tokens(&self, path: &str) -> Cancellable<Vec<HighlightedRange>> {
        self.weft_file(path, |db| semantic_tokens::semantic_tokens(db, path))
    }

    pub fn completions(&self, position: &FilePosition) -> Cancellable<Vec<CompletionItem>> {
        self.weft_file(&position.path, |db| completion::completions(db, position))
    }

    pub fn signature_help(&self, position: &FilePosition) -> Cancellable<Option<SignatureHelp>> {
        self.weft_file(&position.path, |db| signature_help::signature_help(db, position))
    }

    pub fn inlay_hints(&self, path: &str) -> Cancellable<Vec<InlayHint>> {
        self.weft_file(path, |db| inlay_hints::inlay_hints(db, path))
    }

    pub fn folding_ranges(&self, path: &str) -> Cancellable<Vec<Fold>> {
        self.weft_file(path, |db| folding_ranges::folding_ranges(db, path))
    }

    /// Code actions applicable at `range`.
    pub fn assists(&self, range: &FileRange) -> Cancellable<Vec<Assist>> {
        self.weft_file(&range.path, |db| {
            let mut out = annotate_type::assists(db, range);
            out.extend(strategy::assists(db, range));
            out.extend(materialise::assists(db, range));
            out
        })
    }

    /// The OpenCL of the kernels computing the code at `position`, or of a whole entry
    /// when it is on the entry's name; `None` where no kernel computes anything.
    pub fn show_kernel(&self, position: &FilePosition) -> Cancellable<Option<KernelView>> {
        self.with_db(|db| show_kernel::show_kernel(db, position))
    }

    /// Entry `entry` of `path` compiled for a run in `weft-runner`, with the inputs of
    /// its test block, or why it cannot run.
    pub fn gpu_run(&self, path: &str, entry: &str) -> Cancellable<Result<GpuRun, String>> {
        self.with_db(|db| gpu_run::gpu_run(db, path, entry))
    }

    /// What "Run" needs to run entry `entry` of `path` as the editor has it (inputs,
    /// expected output, the texts of the file and its imports), or why it cannot run.
    pub fn entry_run(&self, path: &str, entry: &str) -> Cancellable<Result<EntryRun, String>> {
        self.with_db(|db| gpu_run::entry_run(db, path, entry))
    }

    /// The inputs "Profile" runs entry `entry` of `path` with (as "Run on GPU"'s), or why
    /// it cannot run.
    pub fn entry_input(&self, path: &str, entry: &str) -> Cancellable<Result<GpuInput, String>> {
        self.with_db(|db| gpu_run::entry_input(db, path, entry).map(|(_, input)| input))
    }

    /// The entries of a file, for "Run" code lenses.
    pub fn runnables(&self, path: &str) -> Cancellable<Vec<Runnable>> {
        self.with_db(|db| code_lens::runnables(db, path))
    }

    /// The formatted text of a file, as far as it parses (declarations with syntax
    /// errors are kept as written and listed), or why nothing could be formatted.
    pub fn format(&self, path: &str) -> Cancellable<Option<Result<PartlyFormatted, String>>> {
        self.weft_file(path, |db| {
            db.file(path).map(|f| {
                weft_syntax::format::format_items(f.text(db)).map_err(|error| error.to_string())
            })
        })
    }
}

/// The line index of a file, cached per text.
#[salsa::tracked(returns(ref))]
fn line_index(db: &dyn weft_hir::Db, file: weft_hir::SourceFile) -> Arc<LineIndex> {
    Arc::new(LineIndex::new(file.text(db)))
}

#[cfg(test)]
mod size_names_tests;
