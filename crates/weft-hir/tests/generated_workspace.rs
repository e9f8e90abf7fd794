//! The generated benchmark workspace checks without diagnostics, and its edit helper
//! changes exactly one def.

#[path = "../benches/support/workspace.rs"]
#[allow(dead_code, reason = "shared by several targets, each using a part")]
mod workspace;

use weft_hir::{RootDatabase, file_diagnostics};

#[test]
fn generated_workspace_checks_without_diagnostics() {
    let files = workspace::standard();
    let lines: usize = files.iter().map(|f| f.text.lines().count()).sum();
    assert!((19_000..=22_000).contains(&lines), "{lines} lines");
    assert_eq!(files.len(), 40);
    let rendered = weft_syntax::on_large_stack(move || {
        let mut db = RootDatabase::default();
        for file in &files {
            db.set_file(&file.path, &file.text);
        }
        let mut out = String::new();
        for file in db.files() {
            for d in file_diagnostics(&db, file) {
                let text = file.text(&db);
                let line = text[..usize::from(d.range.start())].lines().count();
                out.push_str(&format!("{}:{line}: {} {:?}\n", file.path(&db), d.code(), d.kind));
            }
        }
        out
    });
    assert_eq!(rendered, "");
}

#[test]
fn generated_workspace_reports_an_injected_error() {
    let mut files = workspace::generate(3, 60);
    files[2].text.push_str("def bad (x: i32) : f32 = x + 0.125\n");
    let codes = weft_syntax::on_large_stack(move || {
        let mut db = RootDatabase::default();
        for file in &files {
            db.set_file(&file.path, &file.text);
        }
        db.files()
            .into_iter()
            .flat_map(|file| {
                file_diagnostics(&db, file).iter().map(|d| d.code()).collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    });
    assert!(!codes.is_empty());
    assert!(codes.iter().all(|&code| code == "type-mismatch"), "{codes:?}");
}

#[test]
fn edit_literal_changes_one_def_body() {
    let file = &workspace::generate(2, 100)[1];
    let edited = workspace::edit_literal(&file.text, 7);
    assert_ne!(edited, file.text);
    assert_eq!(edited.len(), file.text.len());
    assert_eq!(edited.matches(workspace::MARKER).count(), 0);
    assert_eq!(file.text.matches(workspace::MARKER).count(), 1);
}
