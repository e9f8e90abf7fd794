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

/// The report without the lines that vary between machines: the files written (their
/// paths) and the Graphviz note.
fn report_above_files(stdout: &str) -> String {
    stdout
        .lines()
        .filter(|l| !l.contains("wrote") && !l.contains("note: Graphviz"))
        .map(|l| format!("{l}\n"))
        .collect()
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
        &["examples/saxpy.weft", "--entry", "saxpy", "--processors", "2", "--units", "--out", &out],
        "2f32 [1f32, 2f32, 3f32, 4f32] [10f32, 20f32, 30f32, 40f32]",
    );
    assert_eq!(code, 0, "{stderr}");
    let report = report_above_files(&stdout);
    expect![[r#"
        profile of `saxpy` in examples/saxpy.weft
          model: abstract units; P = 2 processors, greedy depth-first schedule, H = 262144 device threads, launch 0, transfer 0 + bytes/16
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

/// Calibrated weights (the default): device boxes and transfers in time from a device
/// profile, comparable with a measurement (the property itself is tested against the
/// model in `profile::tests`).
#[test]
fn profile_saxpy_in_calibrated_time() {
    let dir = std::env::temp_dir().join(format!("weft-profile-time-{}", std::process::id()));
    let out = dir.display().to_string();
    let args = ["examples/saxpy.weft", "--entry", "saxpy", "--processors", "2", "--out", &out];
    let (code, stdout, stderr) = weft_profile(
        &[&args[..], &["--device-profile", "nvidia-h200"]].concat(),
        "2f32 [1f32, 2f32, 3f32, 4f32] [10f32, 20f32, 30f32, 40f32]",
    );
    assert_eq!(code, 0, "{stderr}");
    let report = report_above_files(&stdout);
    expect![[r#"
        profile of `saxpy` in examples/saxpy.weft
          model: weft-cost v2 calibrated on NVIDIA H200 (device boxes, transfers); host 1 ns per unit; P = 2 processors, greedy depth-first schedule
          work W            8.4 µs   (host 0 ns, device 6.4 µs, transfers 2.1 µs)
          span S            8.4 µs
          time T_2         8.4 µs   (5 schedule steps)
          compare     device W with `weft bench`'s kernel time, T_2 with `weft run --timing`'s wall time
          peak space  host   48 B (48 B) at t = 8.4 µs, reached by result #0 (16 B)
                      device 48 B (48 B) at t = 775 ns, reached by `t8` (16 B)
                      both   96 B (96 B)
          kernels     1 launches of 1 distinct kernels in 1 device boxes
          transfers   2 to device (32 B), 1 to host (16 B)
          graph       7 host nodes, 6 edges, 16 device-box nodes; 0 parallel constructs summarised
          regions     6 (3 on the device)
    "#]]
    .assert_eq(&report);
    let space = std::fs::read_to_string(dir.join("space.svg")).expect("space.svg is written");
    assert!(space.contains("time (seconds"), "the time axis is in seconds");
    let dot = std::fs::read_to_string(dir.join("graph.dot")).expect("graph.dot is written");
    assert!(dot.contains("time(D)=") && dot.contains(" µs"), "box times are times");
    let _ = std::fs::remove_dir_all(&dir);
    // Unit parameters belong to --units; an unknown profile is named.
    let (code, _, stderr) = weft_profile(&[&args[..], &["--launch", "5"]].concat(), "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--units"), "{stderr}");
    let (code, _, stderr) = weft_profile(
        &[&args[..], &["--device-profile", "nvidia-a100"]].concat(),
        "1f32 [1f32] [1f32]",
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("neither a committed device profile"), "{stderr}");
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

/// The summary the editors open is read at a glance: a few boxes, drawn at (nearly) full
/// size within a window (9 by 7 inches), where it once was 17 nodes scaled to a third.
#[test]
fn the_summary_fits_a_window_at_full_size() {
    let cases = [
        (
            "examples/kmeans.weft",
            "kmeans_step",
            "[0f32, 1f32, 0f32, 10f32, 11f32, 10f32] [0f32, 0f32, 1f32, 10f32, 10f32, 12f32] \
             [0f32, 10f32, 50f32] [0f32, 10f32, 50f32]",
        ),
        // A loop of eight iterations of small kernels: one box for six iterations alike.
        (
            "examples/histogram.weft",
            "histogram_seq",
            "4i64 [0i64, 1i64, 1i64, 3i64, 3i64, 3i64, 7i64, -1i64]",
        ),
    ];
    for (file, entry, input) in cases {
        let dir = std::env::temp_dir().join(format!("weft-summary-{entry}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (code, _, stderr) =
            weft_profile(&[file, "--entry", entry, "--out", &dir.display().to_string()], input);
        assert_eq!(code, 0, "{stderr}");
        let dot = std::fs::read_to_string(dir.join("summary.dot")).expect("summary.dot");
        let boxes = dot
            .lines()
            .filter(|l| l.trim_start().starts_with('s') && l.contains("[label="))
            .count();
        assert!((2..=8).contains(&boxes), "{entry}: {boxes} boxes:\n{dot}");
        // Weights are in the boxes: edges carry no labels.
        assert!(!dot.lines().any(|l| l.contains("->") && l.contains("label")), "{entry}:\n{dot}");
        if has_dot() {
            let svg = std::fs::read_to_string(dir.join("summary.svg")).expect("summary.svg");
            let number = |key: &str| -> f64 {
                let at = svg.find(key).unwrap_or_else(|| panic!("{key} in {svg}")) + key.len();
                let text: String =
                    svg[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
                text.parse().unwrap_or_else(|_| panic!("{key}{text}"))
            };
            let (width, height) = (number("<svg width=\""), number(" height=\""));
            assert!(width <= 720.0 && height <= 504.0, "{entry}: {width}x{height} pt");
            // Graphviz scales a drawing larger than `size` down: its text with it.
            let scale = number("transform=\"scale(");
            assert!(scale >= 0.85, "{entry}: drawn at {scale} of its size");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
