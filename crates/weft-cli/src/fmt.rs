//! `weft fmt [--check] PATHS`: formats `.weft` files in place with
//! `weft_syntax::format`, or with `--check` lists the files that would change.
//! Files with syntax errors are left alone and reported. Exit codes: 0 all
//! formatted (or nothing to change), 1 a file would change or has syntax errors,
//! 2 usage or I/O problems.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::FmtArgs;

pub(crate) fn run(args: &FmtArgs) -> anyhow::Result<u8> {
    let mut files = Vec::new();
    for path in &args.paths {
        let path = Path::new(path);
        if path.is_dir() {
            collect(path, &mut files)
                .with_context(|| format!("cannot read directory `{}`", path.display()))?;
        } else if path.is_file() {
            files.push(path.to_path_buf());
        } else {
            bail!("no such file or directory: `{}`", path.display());
        }
    }
    files.sort();
    files.dedup();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = false;
    for file in &files {
        let bytes =
            std::fs::read(file).with_context(|| format!("cannot read `{}`", file.display()))?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                // Like a file with syntax errors: reported and left alone.
                let valid = error.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(error.as_bytes());
                let start = weft_hir::TextSize::try_from(valid).unwrap_or_default();
                let range = weft_hir::TextRange::at(start, weft_hir::TextSize::from(3));
                let path = crate::workspace::db_path(file);
                writeln!(out, "{}", crate::workspace::invalid_utf8_message(&path, &text, range))?;
                failed = true;
                continue;
            }
        };
        match weft_syntax::format::format(&text) {
            Ok(formatted) if formatted == text => {}
            Ok(_) if args.check => {
                writeln!(out, "would reformat {}", file.display())?;
                failed = true;
            }
            Ok(formatted) => {
                std::fs::write(file, formatted)
                    .with_context(|| format!("cannot write `{}`", file.display()))?;
                writeln!(out, "formatted {}", file.display())?;
            }
            Err(error) => {
                writeln!(out, "{}: {error}", file.display())?;
                failed = true;
            }
        }
    }
    Ok(u8::from(failed))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "weft") {
            out.push(path);
        }
    }
    Ok(())
}
