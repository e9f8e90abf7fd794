//! The editor's "Materialise `xs` in local memory" code action, applied to a fixture
//! file, keeps its test blocks passing on the interpreter and on POCL
//! (`tests/fixtures/materialise.weft`; docs/costs.md, "Costs in the editor").

use std::path::Path;
use std::process::Stdio;

use weft_ide::{AnalysisHost, Change, FileRange, TextRange, TextSize};

mod common;

const ACTION: &str = "materialise_in_local_memory";

/// Applies the action at the first occurrence of `at` (plus `shift` bytes) in `text`:
/// its label and the edited text.
fn apply(text: &str, at: &str, shift: usize) -> (String, String) {
    let mut host = AnalysisHost::new();
    let mut change = Change::default();
    change.set_file("materialise.weft", text);
    host.apply_change(change);
    let offset = text.find(at).unwrap_or_else(|| panic!("`{at}` in the fixture")) + shift;
    let range = FileRange {
        path: "materialise.weft".to_owned(),
        range: TextRange::empty(TextSize::try_from(offset).expect("a small file")),
    };
    let assists = host.analysis().assists(&range).expect("not cancelled");
    let assist = assists
        .iter()
        .find(|a| a.id == ACTION)
        .unwrap_or_else(|| panic!("the action is offered at `{at}`: {assists:?}"));
    let mut edited = text.to_owned();
    for edit in assist.edit.edits["materialise.weft"].iter().rev() {
        edited.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.insert);
    }
    (assist.label.clone(), edited)
}

/// `weft test ARGS FILE` in the workspace root, with the runner and a POCL cache under
/// the target directory: (stdout and stderr, exit code).
fn weft_test(args: &[&str], file: &Path) -> (String, i32) {
    let output = common::weft_with_runner()
        .arg("test")
        .args(args)
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("the weft binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (text, output.status.code().unwrap_or(-1))
}

#[test]
fn materialised_fixture_passes_its_tests_on_the_interpreter_and_pocl() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/materialise.weft");
    let original = std::fs::read_to_string(&fixture).expect("the fixture");
    // The row that `reduce@seq` reads whole in every work-item, then the captured
    // weights.
    let (first, text) = apply(&original, "y) row", 3);
    let (second, text) = apply(&text, "0f32 w)", 5);
    assert_eq!(
        (first.as_str(), second.as_str()),
        ("Materialise `row` in local memory", "Materialise `w` in local memory")
    );
    assert!(text.contains("      let row = to_local row\n      in map@thread"), "{text}");
    assert!(text.contains("      let w = to_local w\n      in map@thread"), "{text}");
    // Under the target directory, beside the binary.
    let dir = common::profile_dir().join(format!("materialise-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory under target/");
    let edited = dir.join("materialise.weft");
    std::fs::write(&edited, &text).expect("the edited file");
    for args in [&[][..], &["--backend", "opencl", "--device", "cpu"][..]] {
        let (out, code) = weft_test(args, &edited);
        let last = out.lines().last().unwrap_or_default();
        assert_eq!((last, code), ("4 passed, 0 failed", 0), "weft test {args:?}:\n{out}\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
