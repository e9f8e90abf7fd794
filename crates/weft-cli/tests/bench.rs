//! `weft bench` through the real binary, on the machine's OpenCL device (POCL on CI).
//!
//! `weft bench` spawns `weft-runner`, a binary of another package (`weft-runtime`).
//! Cargo builds other packages' binaries only for their own tests (a dev-dependency
//! does not build them), so `cargo test --workspace` has built it by now but
//! `cargo test -p weft-cli` may not have: the test looks for it beside `weft` and,
//! when it is missing, builds it with `cargo build -p weft-runtime --bin weft-runner`
//! in the same profile.

use std::path::PathBuf;
use std::process::Output;

mod common;

fn weft_bench(args: &[&str]) -> Output {
    common::weft_with_runner().arg("bench").args(args).output().expect("the weft binary runs")
}

fn program(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-bench-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("program written");
    path.to_string_lossy().into_owned()
}

const PROGRAM: &str = r"-- bench: f32 [1000]f32 [1000]f32 flops=2*1000
entry saxpy (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (\x y -> a * x + y) xs ys

entry unbenched (xs: [n]i32) : i32 = reduce (+) 0 xs

-- ==
-- input { [[1f32, 2f32]] }
-- output { [[1f32], [2f32]] }
-- bench: [32][16]f32
entry flip (a: [n][m]f32) : [m][n]f32 = transpose a
";

fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn check_stats(stats: &serde_json::Value) {
    let get = |key: &str| stats[key].as_u64().unwrap_or_else(|| panic!("no `{key}` in {stats}"));
    assert!(get("min") <= get("median") && get("median") <= get("max"), "{stats}");
}

#[test]
fn json_gives_timings_and_rates_per_entry() {
    let path = program("tiny.weft", PROGRAM);
    let output = weft_bench(&["--json", "--warmup", "1", "--reps", "3", &path]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&output);
    let [saxpy, unbenched, flip] = lines.as_slice() else { panic!("three lines: {lines:?}") };

    assert_eq!(saxpy["entry"], "saxpy");
    assert_eq!(saxpy["file"], path.as_str());
    assert_eq!(saxpy["inputs"], serde_json::json!(["f32", "[1000]f32", "[1000]f32"]));
    assert_eq!((saxpy["warmup"].as_u64(), saxpy["reps"].as_u64()), (Some(1), Some(3)));
    // Inputs: a scalar and two vectors; output: one vector.
    assert_eq!(saxpy["bytes"], 4 + 3 * 4000);
    assert_eq!(saxpy["flops"], 2000);
    assert!(saxpy["device"].as_str().is_some_and(|d| !d.is_empty()), "{saxpy}");
    check_stats(&saxpy["total_kernel_ns"]);
    check_stats(&saxpy["wall_ns"]);
    let kernels = saxpy["kernels"].as_array().expect("a list of kernels");
    assert!(!kernels.is_empty(), "{saxpy}");
    for kernel in kernels {
        assert!(kernel["kernel"].as_str().is_some_and(|k| k.starts_with("saxpy")), "{kernel}");
        assert_eq!(kernel["launches"], 1);
        check_stats(&kernel["ns"]);
    }
    let median = saxpy["total_kernel_ns"]["median"].as_f64().expect("a median");
    let gb_per_s = saxpy["gb_per_s"].as_f64().expect("a rate");
    assert!((gb_per_s - 12004.0 / median).abs() < 1e-9 * gb_per_s, "{saxpy}");
    assert!(saxpy["gflop_per_s"].as_f64().is_some(), "{saxpy}");

    assert_eq!(unbenched["entry"], "unbenched");
    assert_eq!(unbenched["skipped"], "no `-- bench:` line");

    // The `-- bench:` line after a test block; output shape [m][n] from the input's.
    assert_eq!(flip["entry"], "flip");
    assert_eq!(flip["bytes"], 2 * 32 * 16 * 4);
    assert_eq!(flip["flops"], serde_json::Value::Null);
    assert_eq!(flip["gflop_per_s"], serde_json::Value::Null);
}

#[test]
fn random_overrides_the_bench_line_of_one_entry() {
    let path = program("override.weft", PROGRAM);
    let output = weft_bench(&[
        "--json", "--warmup", "0", "--reps", "1", "--entry", "saxpy", "--random", "f32",
        "--random", "[10]f32", "--random", "[10]f32", &path,
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let lines = json_lines(&output);
    let [saxpy] = lines.as_slice() else { panic!("one line: {lines:?}") };
    assert_eq!(saxpy["bytes"], 4 + 3 * 40);
    assert_eq!(saxpy["flops"], serde_json::Value::Null);
}

#[test]
fn malformed_bench_line_fails_the_entry_with_its_position() {
    let path = program(
        "malformed.weft",
        "-- bench: [10]f32 flops=2*n\nentry f (xs: [n]f32) : [n]f32 = xs\n",
    );
    let output = weft_bench(&["--reps", "1", &path]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: {path}:1:27: entry `f`: malformed `-- bench:` line: expected an integer in `flops=`, found `n`\n"
        )
    );
}

/// `-- bench NAME:` lines give an entry more sizes: `--size NAME` runs those, `--all-sizes`
/// every one in written order, and a size an entry lacks is skipped with a note.
#[test]
fn named_sizes_run_on_request() {
    let path = program(
        "sizes.weft",
        "-- bench: [4096]f32\n-- bench small: [16]f32\n-- bench medium: [256]f32\n\
         entry twice (xs: [n]f32) : [n]f32 = map (\\x -> 2 * x) xs\n\n\
         -- bench: [8]i32\nentry same (xs: [n]i32) : [n]i32 = xs\n",
    );
    let sizes_of = |args: &[&str]| {
        let mut all = vec!["--json", "--warmup", "0", "--reps", "1"];
        all.extend_from_slice(args);
        all.push(&path);
        let output = weft_bench(&all);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        json_lines(&output)
            .iter()
            .map(|line| {
                let measured = match line["inputs"].as_array() {
                    Some(inputs) => inputs[0].as_str().unwrap_or("?").to_owned(),
                    None => format!("skipped: {}", line["skipped"].as_str().unwrap_or("?")),
                };
                format!("{} {} {measured}", line["entry"].as_str().unwrap(), line["size"])
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes_of(&[]), ["twice null [4096]f32", "same null [8]i32"]);
    assert_eq!(
        sizes_of(&["--all-sizes"]),
        [
            "twice null [4096]f32",
            "twice \"small\" [16]f32",
            "twice \"medium\" [256]f32",
            "same null [8]i32"
        ]
    );
    assert_eq!(
        sizes_of(&["--size", "medium", "--size", "main"]),
        [
            "twice \"medium\" [256]f32",
            "twice null [4096]f32",
            "same \"medium\" skipped: no `-- bench medium:` line",
            "same null [8]i32"
        ]
    );
}

/// The host plan's run-time choice between strategies compares the model's times on
/// the device that runs them: on a CPU, short rows are summed by one work-item per row
/// (a GPU's profile prefers a work-group per row, 100x slower on POCL).
#[test]
fn strategy_choice_uses_the_profile_of_the_device_that_runs() {
    let path = program(
        "row_sums.weft",
        "-- bench: [8192][32]f32\nentry row_sums (a: [n][m]f32) : [n]f32 = map (\\row -> reduce (+) 0 row) a\n",
    );
    let output = weft_bench(&["--json", "--device", "cpu", "--warmup", "0", "--reps", "1", &path]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&output);
    let kernels: Vec<&str> = lines[0]["kernels"]
        .as_array()
        .expect("a list of kernels")
        .iter()
        .filter_map(|k| k["kernel"].as_str())
        .collect();
    assert!(
        matches!(kernels.as_slice(), [k] if k.starts_with("row_sums_map")),
        "one work-item per row on a CPU: {kernels:?}"
    );
}
