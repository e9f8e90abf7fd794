//! Loading files into the database: paths from the command line, directories
//! searched for `.weft`, and imported files followed on disk.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use weft_hir::{RootDatabase, SourceFile, TextRange, TextSize};

/// A file as loaded, with problems the loader found in its bytes.
pub(crate) struct Loaded {
    pub(crate) file: SourceFile,
    /// The first invalid UTF-8 byte, if any (the text has replacement characters).
    pub(crate) invalid_utf8: Option<TextRange>,
}

/// [`load_lossy`] for commands that run or transform programs: a file that is not valid
/// UTF-8 is an error here too (as `weft check` reports it), not run as repaired text.
pub(crate) fn load(paths: &[String]) -> anyhow::Result<(RootDatabase, Vec<Loaded>)> {
    let (db, files) = load_lossy(paths)?;
    for loaded in &files {
        if let Some(range) = loaded.invalid_utf8 {
            bail!("{}", invalid_utf8_message(loaded.file.path(&db), loaded.file.text(&db), range));
        }
    }
    Ok((db, files))
}

/// [`load`], with the texts of `sources` (database path to text) instead of the
/// disk's where given, and the files those texts import.
pub(crate) fn load_with_sources(
    paths: &[String],
    sources: &std::collections::BTreeMap<String, String>,
) -> anyhow::Result<(RootDatabase, Vec<Loaded>)> {
    let (mut db, files) = load(paths)?;
    for (path, text) in sources {
        db.set_file(path, text);
    }
    follow_imports(&mut db)?;
    Ok((db, files))
}

/// `PATH:LINE:COLUMN: the file is not valid UTF-8`, where `range` (in `text`) is the
/// first invalid byte; shared by every command that refuses such a file.
pub(crate) fn invalid_utf8_message(path: &str, text: &str, range: TextRange) -> String {
    let before = &text[..usize::from(range.start()).min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{path}:{line}:{column}: the file is not valid UTF-8 (see `weft check`)")
}

/// The database with every requested file (and what they import), and the requested
/// files in a stable order; files that are not UTF-8 are repaired and marked.
pub(crate) fn load_lossy(paths: &[String]) -> anyhow::Result<(RootDatabase, Vec<Loaded>)> {
    let mut db = RootDatabase::default();
    let mut requested = Vec::new();
    let mut files = Vec::new();
    for path in paths {
        let path = Path::new(path);
        if path.is_dir() {
            collect_dir(path, &mut files)
                .with_context(|| format!("cannot read directory `{}`", path.display()))?;
        } else if path.is_file() {
            files.push(path.to_path_buf());
        } else {
            bail!("no such file or directory: `{}`", path.display());
        }
    }
    files.sort();
    files.dedup();
    for path in &files {
        requested.push(load_file(&mut db, path)?);
    }
    follow_imports(&mut db)?;
    Ok((db, requested))
}

fn collect_dir(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::path);
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            collect_dir(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "weft" || e == "apl") {
            out.push(path);
        }
    }
    Ok(())
}

/// The path as the database knows it: relative as given, with `/` separators.
pub(crate) fn db_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").unwrap_or(&text).to_owned()
}

fn load_file(db: &mut RootDatabase, path: &Path) -> anyhow::Result<Loaded> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read `{}`", path.display()))?;
    let (text, invalid_utf8) = match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let valid_up_to = error.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let start = TextSize::try_from(valid_up_to).unwrap_or_default();
            // The replacement character is 3 bytes in the repaired text.
            (text, Some(TextRange::at(start, TextSize::from(3))))
        }
    };
    let file = db.set_file(&db_path(path), &text);
    Ok(Loaded { file, invalid_utf8 })
}

/// Loads files that loaded files import, transitively, when they exist on disk.
fn follow_imports(db: &mut RootDatabase) -> anyhow::Result<()> {
    loop {
        let mut missing = Vec::new();
        for file in db.files() {
            // `.apl` files have no imports (and are not Weft syntax).
            if file.path(db).ends_with(".apl") {
                continue;
            }
            for target in &weft_hir::item_tree(db, file).imports {
                let path = weft_hir::resolve_import_path(file.path(db), target);
                if db.file(&path).is_none()
                    && Path::new(&path).is_file()
                    && !missing.contains(&path)
                {
                    missing.push(path);
                }
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        for path in missing {
            load_file(db, Path::new(&path))?;
        }
    }
}
