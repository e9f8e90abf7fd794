//! `.apl` files through the real binary: run, test, check and dump (docs/apl.md).

use std::path::{Path, PathBuf};
use std::process::Stdio;

mod common;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `weft ARGS` in the workspace root: (stdout, stderr, exit code).
fn weft(args: &[&str]) -> (String, String, i32) {
    let output = common::weft_with_runner()
        .current_dir(workspace_root())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the weft binary runs");
    (
        String::from_utf8(output.stdout).expect("utf-8 stdout"),
        String::from_utf8(output.stderr).expect("utf-8 stderr"),
        output.status.code().unwrap_or(-1),
    )
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("weft-apl-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file written");
    path.to_string_lossy().into_owned()
}

#[test]
fn worked_examples_and_benchmarks_pass_on_the_interpreter() {
    let (stdout, _, code) = weft(&["test", "examples/apl", "bench/apl"]);
    assert_eq!(stdout.lines().last(), Some("29 passed, 0 failed"), "{stdout}");
    assert_eq!(code, 0);
}

#[test]
fn worked_examples_pass_on_pocl() {
    let (stdout, stderr, code) =
        weft(&["test", "--backend", "opencl", "--device", "cpu", "examples/apl"]);
    assert_eq!(stdout.lines().last(), Some("21 passed, 0 failed"), "{stdout}{stderr}");
    assert_eq!(code, 0);
}

#[test]
fn run_prints_outputs_then_the_value_in_apl_display() {
    let (stdout, stderr, code) =
        weft(&["run", "--backend", "interp", "examples/apl/inner_product.apl"]);
    assert_eq!(stdout, " 5 11  7\n11 25 19\n 7 19 26\n65780\n", "{stderr}");
    assert_eq!(code, 0);
    let (stdout, stderr, code) = weft(&["run", "--device", "cpu", "examples/apl/signal.apl"]);
    assert_eq!((stdout.as_str(), code), ("¯27.870466\n", 0), "{stderr}");
}

#[test]
fn dump_tail_prints_the_typed_optimised_program() {
    let (stdout, _, code) = weft(&["dump", "--ir", "tail", "examples/apl/inner_product.apl"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("let v7:<int>3 = [3,3,2] in"), "{stdout}");
    assert!(stdout.contains("transp2([2,1,3],v8)"), "{stdout}");
    let (_, stderr, code) = weft(&["dump", "--ir", "hir", "examples/apl/signal.apl"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("its front-end stage is `--ir tail`"), "{stderr}");
    let (_, stderr, code) = weft(&["dump", "--ir", "tail", "examples/sum.weft"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is not an APL file"), "{stderr}");
    let (stdout, _, code) = weft(&["dump", "--ir", "core", "examples/apl/signal.apl"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("entry main"), "{stdout}");
}

#[test]
fn check_reports_errors_with_positions_and_fails() {
    let file = temp_file("bad.apl", "x ← 1 2 3 + 4 5\ny ← (1\n");
    let (stdout, _, code) = weft(&["check", &file]);
    assert_eq!(code, 1);
    assert!(stdout.contains("error[apl-error]: LENGTH ERROR"), "{stdout}");
    assert!(stdout.contains("bad.apl:1:11\n"), "{stdout}");
    assert!(stdout.contains("error[apl-error]: expected `)`"), "{stdout}");
    assert!(stdout.contains("bad.apl:2:7\n"), "{stdout}");
    let (stdout, stderr, code) = weft(&["run", "--backend", "interp", &file]);
    assert_eq!((stdout.as_str(), code), ("", 1));
    assert!(stderr.contains("LENGTH ERROR"), "{stderr}");
}

#[test]
fn bench_times_apl_programs_with_a_bench_line() {
    let (stdout, stderr, code) = weft(&[
        "bench",
        "--device",
        "cpu",
        "--json",
        "--reps",
        "2",
        "--warmup",
        "1",
        "bench/apl/easter.apl",
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("\"entry\":\"main\""), "{stdout}");
    let file = temp_file("nobench.apl", "+/⍳10\n");
    let (_, stderr, code) = weft(&["bench", "--device", "cpu", &file]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no entry to benchmark"), "{stderr}");
}
