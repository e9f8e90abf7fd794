//! `weft profile` end to end: the report on a fixed input, the files, and that
//! Graphviz parses the DOT (skipped with a message where `dot` is missing).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use expect_test::expect;

mod common;

fn weft_profile(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = common::weft()
        .arg("profile")
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("weft runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("weft finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[expect(clippy::disallowed_methods, reason = "the test asks Graphviz")]
fn has_dot() -> bool {
    Command::new("dot").arg("-V").output().is_ok_and(|o| o.status.success())
}

#[test]
#[expect(clippy::disallowed_methods, reason = "the test checks the DOT with Graphviz")]
fn profile_saxpy_reports_and_writes_files() {
    let dir = std::env::temp_dir().join(format!("weft-profile-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.display().to_string();
    let (code, stdout, stderr) = weft_profile(
        &["examples/saxpy.weft", "--entry", "saxpy", "--processors", "2", "--out", &out],
        "2f32 [1f32, 2f32, 3f32, 4f32] [10f32, 20f32, 30f32, 40f32]",
    );
    assert_eq!(code, 0, "{stderr}");
    // Paths and the Graphviz note vary: compare the report above them.
    let report: String = stdout
        .lines()
        .filter(|l| !l.contains("wrote") && !l.contains("note: Graphviz"))
        .map(|l| format!("{l}\n"))
        .collect();
    expect![[r#"
        profile of `saxpy` in examples/saxpy.weft
          model: P = 2 processors, greedy depth-first schedule, H = 262144 device threads, launch 0, transfer 0 + bytes/16
          work W                12   (host 0, device 9, transfers 3)
          span S                 6
          time T_2              6   (5 schedule steps)
          peak space  host   48 B (48 B) at t = 6, reached by result #0 (16 B)
                      device 48 B (48 B) at t = 2, reached by `t8` (16 B)
                      both   96 B (96 B)
          kernels     1 launches of 1 distinct kernels in 1 device boxes
          transfers   2 to device (32 B), 1 to host (16 B)
          graph       7 host nodes, 6 edges, 16 device-box nodes; 0 parallel constructs summarised
          regions     6 (3 on the device)
    "#]]
    .assert_eq(&report);
    let dot = std::fs::read_to_string(dir.join("graph.dot")).expect("graph.dot is written");
    assert!(dot.starts_with("digraph cost {"));
    assert!(dot.contains("cluster_box0"));
    let space = std::fs::read_to_string(dir.join("space.svg")).expect("space.svg is written");
    assert!(space.contains("live bytes") && space.contains("time (cost units"));
    if has_dot() {
        let check =
            Command::new("dot").arg("-Tsvg").arg(dir.join("graph.dot")).output().expect("dot runs");
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
        assert!(dir.join("graph.svg").exists(), "weft profile renders graph.svg with dot");
    } else {
        eprintln!("skipping the Graphviz check: `dot` is not installed (scripts/install-deps.sh)");
        assert!(stdout.contains("Graphviz `dot` is not installed"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_entries_and_bad_inputs_are_reported() {
    let (code, _, stderr) = weft_profile(&["examples/saxpy.weft", "--entry", "nope"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("no entry point `nope`"), "{stderr}");
    let dir = std::env::temp_dir().join(format!("weft-profile-bad-{}", std::process::id()));
    let (code, _, stderr) = weft_profile(
        &["examples/saxpy.weft", "--entry", "saxpy", "--out", &dir.display().to_string()],
        "2f32 [1f32]",
    );
    assert_eq!(code, 1);
    expect![[r#"
        error: entry `saxpy` takes 3 inputs, but 2 were given
    "#]]
    .assert_eq(&stderr);
    let _ = std::fs::remove_dir_all(&dir);
}
