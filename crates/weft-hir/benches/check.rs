//! Checking the generated 20,000-line workspace: from a fresh database, and again
//! after a one-def edit (only the edited file, and every file).

#[path = "support/workspace.rs"]
#[allow(dead_code, reason = "shared by several targets, each using a part")]
mod workspace;

use criterion::{Criterion, criterion_group, criterion_main};

// The allocator the `weft` binary uses, so the figures are the product's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use weft_hir::{RootDatabase, file_diagnostics};

fn load(files: &[workspace::GeneratedFile]) -> RootDatabase {
    let mut db = RootDatabase::default();
    for file in files {
        db.set_file(&file.path, &file.text);
    }
    db
}

/// What `weft check` does: compute on every core, then read.
fn check_all(db: &RootDatabase) -> usize {
    let files = db.files();
    weft_hir::for_each_file_in_parallel(db, &files, |db, file| {
        file_diagnostics(db, file);
    });
    files.into_iter().map(|file| file_diagnostics(db, file).len()).sum()
}

fn benches(c: &mut Criterion) {
    let files = workspace::standard();
    let edited = &files[files.len() / 2];

    c.bench_function("full check, fresh database", |b| {
        b.iter_with_large_drop(|| {
            let db = load(&files);
            assert_eq!(check_all(&db), 0);
            db
        });
    });

    let mut db = load(&files);
    assert_eq!(check_all(&db), 0);
    let mut variant = 0;
    c.bench_function("re-check edited file after a one-def edit", |b| {
        b.iter(|| {
            variant += 1;
            let file = db.set_file(&edited.path, &workspace::edit_literal(&edited.text, variant));
            file_diagnostics(&db, file).len()
        });
    });
    c.bench_function("re-check all files after a one-def edit", |b| {
        b.iter(|| {
            variant += 1;
            db.set_file(&edited.path, &workspace::edit_literal(&edited.text, variant));
            check_all(&db)
        });
    });
}

criterion_group!(check, benches);
criterion_main!(check);
