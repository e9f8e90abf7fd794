//! The ill-formed programs of `tests/ui/`: `weft check` on each must print exactly
//! the diagnostics in the `.expected` file beside it. `UPDATE_EXPECT=1` rewrites them.

use std::path::{Path, PathBuf};

mod common;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn weft_check(root: &Path, file: &str) -> (String, i32) {
    let output = common::weft()
        .current_dir(root)
        .args(["check", file])
        .output()
        .expect("the weft binary runs");
    let stdout = String::from_utf8(output.stdout).expect("utf-8 output");
    (stdout, output.status.code().unwrap_or(-1))
}

#[test]
fn ui_programs_report_their_diagnostics() {
    let root = workspace_root();
    let dir = root.join("tests/ui");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/ui exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "weft" || e == "apl"))
        .collect();
    entries.sort();
    assert!(entries.len() >= 30, "the corpus has at least 30 programs");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for path in entries {
        let relative = format!("tests/ui/{}", path.file_name().unwrap().to_string_lossy());
        let (stdout, code) = weft_check(&root, &relative);
        let actual = format!("exit code: {code}\n{stdout}");
        let expected_path = path.with_extension("expected");
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!("--- {relative}\n{actual}"));
        }
        assert_ne!(code, 0, "{relative} is ill-formed, so `weft check` must fail");
    }
    assert!(failures.is_empty(), "run with UPDATE_EXPECT=1 to accept:\n{}", failures.join("\n"));
}
