//! Core IR snapshots of every example: `examples/NAME.weft` is elaborated and printed
//! to `tests/snapshots/NAME.core` (update with `UPDATE_EXPECT=1`).

use std::path::Path;

use weft_hir::RootDatabase;

fn add_dir(db: &mut RootDatabase, root: &Path, dir: &Path) -> std::io::Result<()> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        entries.push(entry?.path());
    }
    entries.sort();
    for path in entries {
        if path.is_dir() {
            add_dir(db, root, &path)?;
        } else if path.extension().is_some_and(|e| e == "weft") {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            db.set_file(&rel, &std::fs::read_to_string(&path)?);
        }
    }
    Ok(())
}

#[test]
fn examples_core_snapshots() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut db = RootDatabase::default();
    add_dir(&mut db, &root, &root.join("examples")).unwrap();
    let mut n_files = 0;
    for file in db.files() {
        let path = file.path(&db).clone();
        if path.starts_with("examples/lib/") {
            continue;
        }
        let name = Path::new(&path).file_stem().unwrap().to_string_lossy().into_owned();
        // A file with errors is `weft check`'s business (and the examples' CI).
        let Some(checked) = weft_core::CheckedFile::new(&db, file) else { continue };
        let program = weft_core::lower_file(&db, checked).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(weft_core::validate(&program), Vec::new(), "{path}");
        expect_test::expect_file![format!("snapshots/{name}.core")]
            .assert_eq(&weft_core::pretty_program(&program));
        n_files += 1;
    }
    assert!(n_files >= 30, "only {n_files} examples found");
}
