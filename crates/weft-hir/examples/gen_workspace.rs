//! Writes the standard generated workspace (40 files, about 20,000 lines) to a
//! directory, for the language-server benchmark: `cargo run -p weft-hir --example
//! gen_workspace -- DIR [FILES LINES_PER_FILE]`.

#[path = "../benches/support/workspace.rs"]
#[allow(dead_code, reason = "shared by several targets, each using a part")]
mod workspace;

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "target/gen-workspace".to_owned()));
    let files: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);
    let lines: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    for file in workspace::generate(files, lines) {
        let path = dir.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &file.text)?;
    }
    Ok(())
}
