//! The `weft` binary as a user runs it: output formats, exit codes, and I/O errors.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly on a broken setup")]

use std::path::PathBuf;
use std::process::Output;

use expect_test::expect;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn weft(args: &[&str], dir: &std::path::Path) -> Output {
    common::weft().current_dir(dir).args(args).output().expect("the weft binary runs")
}

fn text(output: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn temp_dir(files: &[(&str, &str)]) -> tempdir::Dir {
    let dir = tempdir::Dir::new();
    for (name, content) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

/// A unique scratch directory removed on drop (no extra crate needed).
mod tempdir {
    pub(crate) struct Dir(std::path::PathBuf);

    impl Dir {
        pub(crate) fn new() -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("weft-cli-test-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&path).unwrap();
            Dir(path)
        }

        pub(crate) fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

const ILL_TYPED: &str =
    "def f (xs: [n]f32) (ys: [m]f32) = map2 (+) xs ys\n-- é€😀\ndef g (x: i32) : i32 = x + 1.5\n";

#[test]
fn examples_check_clean() {
    let output = weft(&["check", "examples/"], &root());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains(": 0 errors, 0 warnings"));
}

#[test]
fn human_output_is_rustc_like_and_exits_1() {
    let dir = temp_dir(&[("bad.weft", ILL_TYPED)]);
    expect![[r#"
        exit 1
        --- stdout
        error[size-mismatch]: size mismatch: `xs` has size n but `ys` has size m
         --> bad.weft:1:47
          |
        1 | def f (xs: [n]f32) (ys: [m]f32) = map2 (+) xs ys
          |                                               ^^
        note: `xs` fixes the size n here
         --> bad.weft:1:44
          |
        1 | def f (xs: [n]f32) (ys: [m]f32) = map2 (+) xs ys
          |                                            ^^

        error[type-mismatch]: type mismatch: expected `i32`, but `1.5` is a float
         --> bad.weft:3:28
          |
        3 | def g (x: i32) : i32 = x + 1.5
          |                            ^^^

        --- stderr
        checked 1 file: 2 errors, 0 warnings
    "#]]
    .assert_eq(&text(&weft(&["check", "bad.weft"], dir.path())));
}

#[test]
fn json_output_has_lsp_positions() {
    let dir = temp_dir(&[("bad.weft", ILL_TYPED)]);
    let output = weft(&["check", "--format", "json", "bad.weft"], dir.path());
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    expect![[r#"[{"code":"size-mismatch","file":"bad.weft","message":"size mismatch: `xs` has size n but `ys` has size m","range":{"end":{"character":48,"line":0},"start":{"character":46,"line":0}},"related":[{"file":"bad.weft","message":"`xs` fixes the size n here","range":{"end":{"character":45,"line":0},"start":{"character":43,"line":0}}}],"severity":"error"},{"code":"type-mismatch","file":"bad.weft","message":"type mismatch: expected `i32`, but `1.5` is a float","range":{"end":{"character":30,"line":2},"start":{"character":27,"line":2}},"related":[],"severity":"error"}]"#]]
    .assert_eq(&serde_json::Value::Array(lines).to_string());
}

const FIRST_COLUMN: &str = "-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
-- output { [1f32, 3f32] }
entry first_col (a: [n][m]f32) : [n]f32 = map (\\r -> r[0]) a
";

#[test]
fn check_perf_reports_performance_diagnostics() {
    let dir = temp_dir(&[("cols.weft", FIRST_COLUMN)]);
    // Without `--perf` the back end is not run.
    let output = weft(&["check", "cols.weft"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).is_empty(), "{}", text(&output));
    expect![[r#"
        exit 1
        --- stdout
        warning[uncoalesced-access]: uncoalesced global reads of `a` in kernel `first_col_map_0`: neighbouring work-items access elements `m` apart (2 at m = 2, n = 2 (the test block's largest `input`)); `NVIDIA H100 80GB HBM3` is 1.3× slower than coalesced at that stride
         --> cols.weft:4:54
          |
        4 | entry first_col (a: [n][m]f32) : [n]f32 = map (\r -> r[0]) a
          |                                                      ^^^^
          = help: silence it with `-- weft: allow(uncoalesced-access)` in the comments above the def

        --- stderr
        checked 1 file: 0 errors, 1 warning
    "#]]
    .assert_eq(&text(&weft(&["check", "--perf", "--deny-warnings", "cols.weft"], dir.path())));
    // Another committed profile, by name.
    let output = weft(&["check", "--perf", "--cost-profile", "pocl-cpu", "cols.weft"], dir.path());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("pthread-haswell"),
        "{}",
        text(&output)
    );
    // `--allow CODE` and the comment above the def silence it.
    let output =
        weft(&["check", "--perf", "--allow", "uncoalesced-access", "cols.weft"], dir.path());
    assert!(String::from_utf8_lossy(&output.stdout).is_empty(), "{}", text(&output));
    let silenced = format!("-- weft: allow(uncoalesced-access)\n{FIRST_COLUMN}");
    let dir = temp_dir(&[("cols.weft", &silenced)]);
    let output = weft(&["check", "--perf", "--deny-warnings", "cols.weft"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
}

#[test]
fn check_flag_is_the_same_command() {
    let dir = temp_dir(&[("bad.weft", ILL_TYPED), ("good.weft", "def one : i32 = 1\n")]);
    let output = weft(&["--check", "good.weft"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let output = weft(&["--check", "good.weft", "bad.weft"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
}

#[test]
fn directories_are_searched_and_imports_followed() {
    let dir = temp_dir(&[
        ("src/main.weft", "import \"lib/util\"\ndef x : i32 = twice 2\n"),
        ("src/lib/util.weft", "def twice (x: i32) : i32 = x * 2\n"),
        ("src/notes.txt", "not weft"),
    ]);
    let output = weft(&["check", "src"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("checked 2 files"));
    // A single file finds its import on disk.
    let output = weft(&["check", "src/main.weft"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
}

#[test]
fn missing_files_and_bad_usage_exit_2() {
    let dir = temp_dir(&[]);
    expect![[r#"
        exit 2
        --- stdout
        --- stderr
        error: no such file or directory: `nope.weft`
    "#]]
    .assert_eq(&text(&weft(&["check", "nope.weft"], dir.path())));
    let output = weft(&["check", "--format", "xml", "x.weft"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let output = weft(&["check"], dir.path());
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn deny_warnings_fails_on_warnings() {
    // A malformed test block is a warning.
    let dir = temp_dir(&[("w.weft", "-- ==\n-- frobnicate\nentry f (x: i32) : i32 = x\n")]);
    let output = weft(&["check", "w.weft"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("warning[test-block]"));
    let output = weft(&["check", "--deny-warnings", "w.weft"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
}

#[test]
fn dump_prints_types_and_trees() {
    let dir = temp_dir(&[(
        "m.weft",
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)\n",
    )]);
    expect![[r#"
        exit 0
        --- stdout
        def dot : [n]f32 -> [n]f32 -> f32
          param xs : [n]f32
          param ys : [n]f32
        --- stderr
    "#]]
    .assert_eq(&text(&weft(&["dump", "--ir", "hir", "m.weft"], dir.path())));
    let output = weft(&["dump", "--ir", "cst", "m.weft"], dir.path());
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with("SOURCE_FILE@0..72\n  DEF@0..71\n")
    );
}

/// The cost analysis counts a loop whose bound depends on the work-item at the first
/// work-item: a CPU's run of 64 points per work-item (`for j < min(64, n - first)`) is
/// 64 iterations, not one, so Black-Scholes' special functions are counted per point.
#[test]
fn a_run_of_points_per_work_item_is_counted_whole() {
    let output = common::weft()
        .current_dir(root())
        .env("WEFT_PROFILE", "crates/weft-cost/profiles/pocl-cpu.json")
        .args(["dump", "--ir", "costs", "bench/apps/blackscholes.weft"])
        .output()
        .expect("weft runs");
    let costs = text(&output);
    assert!(output.status.success(), "{costs}");
    assert!(costs.contains("special exp: 3*min(64, n_1)*⌈n_1/64⌉"), "{costs}");
    assert!(!costs.contains("counted as one iteration"), "{costs}");
}
