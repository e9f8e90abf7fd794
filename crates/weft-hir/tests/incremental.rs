//! Incrementality: which queries re-execute after an edit (STYLE.md section 8). An edit
//! inside one def's body re-runs only that def's `infer`; whitespace or comments above
//! a def re-run parsing and lowering, but no inference.

#[path = "../benches/support/workspace.rs"]
#[allow(dead_code, reason = "shared by several targets, each using a part")]
mod workspace;

use weft_hir::{RootDatabase, file_diagnostics};

/// Loads a multi-file generated workspace and checks every file once.
fn checked_db() -> (RootDatabase, Vec<workspace::GeneratedFile>) {
    let files = workspace::generate(4, 80);
    let mut db = RootDatabase::default();
    for file in &files {
        db.set_file(&file.path, &file.text);
    }
    check_all(&db);
    (db, files)
}

fn check_all(db: &RootDatabase) {
    for file in db.files() {
        assert_eq!(file_diagnostics(db, file), &[], "{}", file.path(db));
    }
}

fn executed(log: &[String], query: &str) -> Vec<String> {
    log.iter().filter(|entry| entry.starts_with(&format!("{query}("))).cloned().collect()
}

#[test]
fn edit_inside_one_def_body_reruns_one_infer() {
    let (mut db, files) = checked_db();
    let target = &files[2];
    db.enable_log();
    db.set_file(&target.path, &workspace::edit_literal(&target.text, 3));
    check_all(&db);
    let log = db.take_log();
    assert_eq!(executed(&log, "infer").len(), 1, "{log:#?}");
    assert!(executed(&log, "def_scheme").len() <= 1, "{log:#?}");
    assert_eq!(executed(&log, "file_diagnostics").len(), 1, "{log:#?}");
}

#[test]
fn comment_and_whitespace_above_a_def_rerun_no_inference() {
    let (mut db, files) = checked_db();
    let target = &files[1];
    let first_def = target.text.find("-- | ").expect("generated files have doc comments");
    let mut text = target.text.clone();
    text.insert_str(first_def, "\n\n-- A comment added above the first def.\n   \n");
    db.enable_log();
    db.set_file(&target.path, &text);
    check_all(&db);
    let log = db.take_log();
    // The file is split and joined again, and the stretch that holds the comment (the
    // first def's: the comment is attached to its doc comment) is parsed and lowered
    // again, but backdates: its results hold no positions, so nothing that reads them
    // re-executes.
    let allowed = [
        "file_items",
        "parse_item",
        "item_declarations",
        "parse",
        "item_tree",
        "def_item",
        "signature",
        "body_with_source_map",
        "body",
        "def_diagnostics",
        "file_diagnostics",
    ];
    let unexpected: Vec<&String> = log
        .iter()
        .filter(|entry| !allowed.iter().any(|q| entry.starts_with(&format!("{q}("))))
        .collect();
    assert_eq!(unexpected, Vec::<&String>::new(), "{log:#?}");
    assert_eq!(executed(&log, "parse_item").len(), 1, "{log:#?}");
    assert_eq!(executed(&log, "body_with_source_map").len(), 1, "{log:#?}");
    assert_eq!(executed(&log, "infer"), Vec::<String>::new());
}

/// In a file of many defs, an edit inside one def's body parses, lowers, infers and
/// checks that def alone: the others' stretches of text did not change, so neither did
/// anything lowered from them, wherever they now are (the file's own joined tree and
/// its diagnostics' positions are made again, from memoized parts).
#[test]
fn edit_inside_one_def_of_a_big_file_relowers_that_def_alone() {
    let files = workspace::generate(1, 600);
    let mut db = RootDatabase::default();
    db.set_file(&files[0].path, &files[0].text);
    check_all(&db);
    let n_defs = weft_hir::item_tree(&db, db.files()[0]).defs.len();
    assert!(n_defs > 40, "{n_defs}");
    db.enable_log();
    db.set_file(&files[0].path, &workspace::edit_literal(&files[0].text, 3));
    check_all(&db);
    let log = db.take_log();
    for query in ["parse_item", "body_with_source_map", "infer", "def_diagnostics"] {
        assert_eq!(executed(&log, query).len(), 1, "{query}: {log:#?}");
    }
    assert_eq!(executed(&log, "file_diagnostics").len(), 1, "{log:#?}");
}
