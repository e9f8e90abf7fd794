//! A file's entries in the core IR (weft-core), shared by the memory layout
//! ([`crate::memory`]) and the compiled kernels ([`crate::kernels`]).
//!
//! [`file_program`] is a salsa query that reads only position-independent queries:
//! the error check goes through [`checked_entries`], which compares equal whenever the
//! same entries are free of errors, and elaboration reads bodies, not source maps. So
//! an edit that moves text re-runs nothing downstream, and an edit inside a def re-runs
//! it once for the file. The program holds the entries whose definitions (the entry and
//! the defs it uses) have no errors: an error in one def leaves the other entries their
//! kernels, costs and memory ([`blocked_entries`] says what stops the others).

use std::sync::Arc;

use rustc_hash::FxHashMap;
use weft_core::{BlockedEntry, CheckedEntries, FnId, FnKey, Program};
use weft_hir::{Db, DefId, DefLoc, SourceFile};

/// The core program of `file`'s entries free of errors; `None` when errors stop them all or
/// elaboration does not support one. In debug builds (tests) the IR is validated, and
/// one that fails gives `None`: an internal bug then leaves the features that need it
/// silent rather than wrong, and never panics (STYLE.md §5 validates in tests and
/// debug builds only).
#[salsa::tracked(returns(ref))]
pub(crate) fn file_program(db: &dyn Db, file: SourceFile) -> Option<Arc<Program>> {
    if crate::apl::is_apl(file.path(db)) {
        return crate::apl::core_program(db, file).map(Arc::new);
    }
    let checked = checked_entries(db, file).as_ref()?;
    let program = weft_core::lower_entries(db, checked).ok()?;
    if cfg!(debug_assertions) && !weft_core::validate(&program).is_empty() {
        return None;
    }
    Some(Arc::new(program))
}

/// The program of one entry: the entry and the functions it calls, elaborated from the
/// memoized functions (`weft_core::lower_entry`; for an `.apl` file, the part of its
/// program the entry runs, [`Program::restricted_to_entry`]), and the entry's function
/// in it; `None` when errors stop the entry or elaboration does not support it. It
/// compares equal unless a def the entry runs changed, so what is compiled from it
/// (`kernels::entry_backend`) stays. Kept for the last 64 entries read.
#[salsa::tracked(returns(ref), lru = 64)]
pub(crate) fn entry_program<'db>(
    db: &'db dyn Db,
    entry: DefId<'db>,
) -> Option<(Arc<Program>, FnId)> {
    let (program, id) = lower_one_entry(db, entry.loc(db))?;
    Some((Arc::new(program), id))
}

/// The program of one entry ([`entry_program`], not memoized) and the entry's function
/// in it.
pub(crate) fn lower_one_entry(db: &dyn Db, loc: &DefLoc) -> Option<(Program, FnId)> {
    if crate::apl::is_apl(loc.file.path(db)) {
        let program = file_program(db, loc.file).as_ref()?;
        let id = program.entries.iter().copied().find(|&id| program.functions[id].def == *loc)?;
        return Some(program.restricted_to_entry(id));
    }
    let checked = checked_entries(db, loc.file).as_ref()?;
    let program = weft_core::lower_entry(db, checked, loc)?.ok()?;
    if cfg!(debug_assertions) && !weft_core::validate(&program).is_empty() {
        return None;
    }
    let id = *program.entries.first()?;
    Some((program, id))
}

/// The entry of `file` named `name` (for an `.apl` file, of its program).
pub(crate) fn entry_named(db: &dyn Db, file: SourceFile, name: &str) -> Option<DefLoc> {
    if crate::apl::is_apl(file.path(db)) {
        let program = file_program(db, file).as_ref()?;
        let id = program.entries.iter().find(|&&id| program.functions[id].name.as_str() == name)?;
        return Some(program.functions[*id].def.clone());
    }
    weft_hir::item_tree(db, file)
        .defs
        .iter()
        .find(|loc| {
            loc.kind == weft_hir::DefKind::Entry && loc.dup == 0 && loc.name.as_str() == name
        })
        .cloned()
}

/// Whether some entry of `file` can have a program: the file's entries are not all
/// stopped by errors.
pub(crate) fn has_entry_programs(db: &dyn Db, file: SourceFile) -> bool {
    if crate::apl::is_apl(file.path(db)) {
        return file_program(db, file).is_some();
    }
    checked_entries(db, file).is_some()
}

/// The entries of `file` that errors do not stop, in order (of an `.apl` file, its
/// program's).
pub(crate) fn unblocked_entries(db: &dyn Db, file: SourceFile) -> Vec<DefLoc> {
    if crate::apl::is_apl(file.path(db)) {
        let Some(program) = file_program(db, file) else { return Vec::new() };
        return program.entries.iter().map(|&id| program.functions[id].def.clone()).collect();
    }
    checked_entries(db, file).as_ref().map_or_else(Vec::new, |c| c.entries().to_vec())
}

/// The entries of `file` whose definitions have no errors; `None` when there are none.
/// Equal across edits that keep the same entries clean, whatever moved.
#[salsa::tracked(returns(ref))]
pub(crate) fn checked_entries(db: &dyn Db, file: SourceFile) -> Option<CheckedEntries> {
    let (checked, blocked) = entry_checks(db, file);
    // A file without entries has an (empty) program: its defs are "not laid out".
    (!checked.entries().is_empty() || blocked.is_empty()).then(|| checked.clone())
}

/// Whether an error stops some entry of `file`.
pub(crate) fn has_blocked_entries(db: &dyn Db, file: SourceFile) -> bool {
    !entry_checks(db, file).1.is_empty()
}

/// The entries of `file` whose definitions have no errors, and what stops the others.
#[salsa::tracked(returns(ref))]
fn entry_checks(db: &dyn Db, file: SourceFile) -> (CheckedEntries, Vec<BlockedEntry>) {
    CheckedEntries::new(db, file)
}

/// Why `entry` has no program: the first error in its definitions, as a sentence
/// (`` `helper` (line 12) has an error: ... ``); `None` when nothing stops it.
pub(crate) fn blocked_entry(db: &dyn Db, entry: &DefLoc) -> Option<String> {
    let (_, blocked) = entry_checks(db, entry.file);
    let b: &BlockedEntry = blocked.iter().find(|b| b.entry == *entry)?;
    let message = crate::diagnostics::render(db, &b.error).message;
    let text = b.error.file.text(db);
    let line = text
        .get(..usize::from(b.error.range.start()))
        .map_or(0, |before| before.matches('\n').count())
        + 1;
    let place = if b.error.file == entry.file {
        format!("line {line}")
    } else {
        format!("{}:{line}", b.error.file.path(db))
    };
    Some(match &b.def {
        Some(def) if def == entry => {
            format!("`{}` has an error ({place}): {message}", entry.name)
        }
        Some(def) => {
            format!("`{}` uses `{}`, which has an error ({place}): {message}", entry.name, def.name)
        }
        None => format!("the file has an error outside any def ({place}): {message}"),
    })
}

/// What the editor needs of one function without its code (`kernels::def_users`, [`file_functions`]): its size, the functions it calls (with how
/// many calls to each) and the defs whose code it holds (its own, and inlined ones').
/// Equal after an edit that changes none of these, which most edits inside a body are.
#[derive(Debug, PartialEq, Eq, salsa::SalsaValue)]
pub(crate) struct FnSummary<'db> {
    pub(crate) size: u64,
    pub(crate) calls: Vec<(FnKey<'db>, u64)>,
    pub(crate) defs: Vec<DefLoc>,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn fn_summary<'db>(db: &'db dyn Db, key: FnKey<'db>) -> Option<FnSummary<'db>> {
    let elaborated = weft_core::elab_function(db, key).as_ref().ok()?;
    let f = &elaborated.function;
    let mut counts = vec![0u64; elaborated.callees.len()];
    for (_, exp) in f.exps.iter() {
        if let weft_core::Exp::Call { func, .. } = exp
            && let Some(count) = counts.get_mut(func.into_raw().into_u32() as usize)
        {
            *count += 1;
        }
    }
    let calls = elaborated.callees.iter().copied().zip(counts).collect();
    let mut defs = vec![f.def.clone()];
    for (_, origin) in f.origins.iter() {
        if !defs.contains(&origin.def) {
            defs.push(origin.def.clone());
        }
    }
    let size = u64::try_from(f.exps.len()).unwrap_or(u64::MAX);
    Some(FnSummary { size, calls, defs })
}

/// The functions of `file`'s entries that errors do not stop, callees first, in the
/// order `weft_core::lower_entries` places them (`weft_core::callees_first`), and for
/// each def the functions holding its code (its own, and those it is inlined into).
/// Made from the functions' summaries ([`fn_summary`]), so it stays equal after an
/// edit inside a body. `None` when errors stop every entry (and for an `.apl` file).
#[derive(Debug, PartialEq, Eq, salsa::SalsaValue)]
pub(crate) struct FileFunctions<'db> {
    pub(crate) order: Vec<FnKey<'db>>,
    /// Indices into `order`, in order.
    pub(crate) by_def: FxHashMap<DefLoc, Vec<u32>>,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn file_functions(db: &dyn Db, file: SourceFile) -> Option<FileFunctions<'_>> {
    if crate::apl::is_apl(file.path(db)) {
        return None;
    }
    let checked = checked_entries(db, file).as_ref()?;
    let roots: Vec<FnKey<'_>> =
        checked.entries().iter().map(|loc| FnKey::new(db, loc.clone(), Vec::new())).collect();
    let order = weft_core::callees_first(&roots, |key| {
        fn_summary(db, key)
            .as_ref()
            .map(|s| s.calls.iter().map(|&(c, _)| c).collect())
            .unwrap_or_default()
    });
    let mut by_def: FxHashMap<DefLoc, Vec<u32>> = FxHashMap::default();
    for (idx, &key) in order.iter().enumerate() {
        let (Some(summary), Ok(idx)) = (fn_summary(db, key), u32::try_from(idx)) else { continue };
        for def in &summary.defs {
            by_def.entry(def.clone()).or_default().push(idx);
        }
    }
    Some(FileFunctions { order, by_def })
}

#[cfg(test)]
mod tests {
    use crate::FilePosition;
    use crate::tests::fixture;

    const ONE_BAD_DEF: &str = r#"
def broken (x: f32) : f32 = x + true
entry bad (xs: [n]f32) : [n]f32 = map broken xs
-- ==
-- input { [1f32, 2f32] }
entry good (xs: [n]f32) : [n]f32 = map (\x -> x * 2f32) xs
"#;

    fn at(text: &str, needle: &str) -> FilePosition {
        let offset = text.trim_start_matches('\n').find(needle).unwrap();
        FilePosition { path: "main.weft".to_owned(), offset: u32::try_from(offset).unwrap().into() }
    }

    /// One error once blanked the GPU information of the whole file.
    #[test]
    fn an_error_in_one_def_leaves_other_entries_their_kernels() {
        let f = fixture(ONE_BAD_DEF);
        let hover = f.analysis.hover(&at(ONE_BAD_DEF, "map (\\x")).unwrap().unwrap();
        assert!(hover.markdown.contains("**Kernel**: `good_map_0`"), "{}", hover.markdown);
        let good = f.analysis.hover(&at(ONE_BAD_DEF, "good")).unwrap().unwrap();
        assert!(good.markdown.contains("**Predicted**"), "{}", good.markdown);
        let kernel = f.analysis.show_kernel(&at(ONE_BAD_DEF, "good")).unwrap().unwrap();
        assert!(kernel.text.contains("__kernel"), "{}", kernel.text);
        assert!(f.analysis.gpu_run("main.weft", "good").unwrap().is_ok());
    }

    #[test]
    fn an_entry_an_error_stops_says_which() {
        let f = fixture(ONE_BAD_DEF);
        let why = "`bad` uses `broken`, which has an error (line 1): ";
        let hover = f.analysis.hover(&at(ONE_BAD_DEF, "bad")).unwrap().unwrap();
        assert!(
            hover.markdown.contains(&format!("**Kernels**: none: {why}")),
            "{}",
            hover.markdown
        );
        let kernel = f.analysis.show_kernel(&at(ONE_BAD_DEF, "bad")).unwrap().unwrap();
        assert!(kernel.text.starts_with(&format!("// Weft: no kernels for entry `bad`: {why}")));
        let inside = f.analysis.show_kernel(&at(ONE_BAD_DEF, "map broken")).unwrap().unwrap();
        assert_eq!(inside.text, kernel.text);
        let param =
            f.analysis.hover(&at(ONE_BAD_DEF, "xs: [n]f32) : [n]f32 = map broken")).unwrap();
        let param = param.unwrap().markdown;
        assert!(param.contains(&format!("**Memory**: not laid out: {why}")), "{param}");
        let run = f.analysis.gpu_run("main.weft", "bad").unwrap().unwrap_err();
        assert!(run.starts_with(&format!("cannot run `bad`: {why}")), "{run}");
    }

    #[test]
    fn an_error_outside_every_def_stops_every_entry() {
        let text = "import \"nowhere\"\nentry e (xs: [n]f32) : [n]f32 = map (\\x -> x) xs\n";
        let f = fixture(text);
        let hover = f.analysis.hover(&at(text, "e (")).unwrap().unwrap();
        assert!(
            hover
                .markdown
                .contains("**Kernels**: none: the file has an error outside any def (line 1)"),
            "{}",
            hover.markdown
        );
    }
}
