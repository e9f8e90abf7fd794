//! `weft run` and `weft test` through the real binary.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

mod common;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `weft ARGS` in the workspace root with `stdin`: (stdout, stderr, exit code).
fn weft(args: &[&str], stdin: &str) -> (String, String, i32) {
    let mut child = common::weft_with_runner()
        .current_dir(workspace_root())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the weft binary runs");
    child.stdin.take().expect("piped stdin").write_all(stdin.as_bytes()).expect("stdin written");
    let output = child.wait_with_output().expect("the weft binary ends");
    (
        String::from_utf8(output.stdout).expect("utf-8 stdout"),
        String::from_utf8(output.stderr).expect("utf-8 stderr"),
        output.status.code().unwrap_or(-1),
    )
}

/// A file under the target directory's temp space with `text`.
fn temp_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("weft-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temp file written");
    path.to_string_lossy().into_owned()
}

#[test]
fn all_examples_pass_their_test_blocks() {
    let (stdout, _, code) = weft(&["test", "examples/"], "");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{stdout}");
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn run_reads_stdin_and_prints_results() {
    let (stdout, stderr, code) =
        weft(&["run", "examples/sum.weft", "--entry", "sum_i32"], "[1i32, 2i32, 3i32]");
    // stderr may carry the OpenCL compiler's own chatter on a cold kernel cache.
    assert_eq!((stdout.as_str(), code), ("6i32\n", 0), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn run_prints_a_tuple_result_one_value_per_line() {
    let (stdout, _, code) =
        weft(&["run", "examples/views.weft", "--entry", "append"], "[1i32] [2i32]");
    assert_eq!((stdout.as_str(), code), ("[1i32, 2i32]\n2i64\n", 0));
}

#[test]
fn run_time_error_exits_1_with_message_and_position() {
    let (stdout, stderr, code) = weft(
        &["run", "--backend", "interp", "examples/views.weft", "--entry", "rotate"],
        "6i64 [1i32, 2i32]",
    );
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: examples/views.weft:13:47: drop 6 out of bounds for array `xs` of size 2\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn opencl_run_time_error_exits_1_with_message_and_position() {
    let (stdout, stderr, code) =
        weft(&["run", "examples/views.weft", "--entry", "rotate"], "6i64 [1i32, 2i32]");
    assert_eq!(stdout, "");
    assert!(
        stderr.ends_with(
            "error: examples/views.weft:13:47: drop 6 out of bounds for array `xs` of size 2\n"
        ),
        "{stderr}"
    );
    assert_eq!(code, 1);
}

#[test]
fn opencl_kernel_bounds_error_names_the_array_index_and_position() {
    let (stdout, stderr, code) =
        weft(&["run", "examples/tuples.weft", "--entry", "argmax"], "empty([0]f32)");
    assert_eq!(stdout, "");
    assert!(stderr.contains("out of bounds for array `xs` of size 0"), "{stderr}");
    assert!(stderr.contains("examples/tuples.weft:"), "{stderr}");
    assert_eq!(code, 1);
}

#[test]
fn opencl_run_prints_results_and_timings() {
    let (stdout, stderr, code) = weft(
        &["run", "examples/matmul.weft", "--timing"],
        "[[1f32, 2f32], [3f32, 4f32]] [[5f32, 6f32], [7f32, 8f32]]",
    );
    assert_eq!(
        (stdout.as_str(), code),
        ("[[19.0f32, 22.0f32], [43.0f32, 50.0f32]]\n", 0),
        "{stderr}"
    );
    assert!(stderr.contains("matmul"), "{stderr}");
}

#[test]
fn run_without_entry_lists_the_entries() {
    let (_, stderr, code) = weft(&["run", "examples/sum.weft"], "");
    assert_eq!(
        stderr,
        "error: choose an entry point with `--entry NAME`; entries: `sum_i32`, `sum_f64`, `sum_u64`\n"
    );
    assert_eq!(code, 2);
}

#[test]
fn run_names_the_parameter_of_a_wrong_input() {
    let (_, stderr, code) =
        weft(&["run", "--backend", "interp", "examples/sum.weft", "--entry", "sum_i32"], "[1f32]");
    assert_eq!(
        stderr,
        "error: entry `sum_i32`: parameter `xs` expects a value of type []i32, got a value of type [1]f32\n"
    );
    assert_eq!(code, 1);
}

#[test]
fn run_with_random_inputs() {
    let (stdout, _, code) =
        weft(&["run", "examples/sum.weft", "--entry", "sum_u64", "--random", "[3]u64 in 1..2"], "");
    assert_eq!((stdout.as_str(), code), ("3u64\n", 0));
}

#[test]
fn opencl_wrong_input_is_refused_clearly() {
    let (_, stderr, code) = weft(&["run", "examples/sum.weft", "--entry", "sum_i32"], "[1f32]");
    assert!(stderr.contains("must be a value of type []i32"), "{stderr}");
    assert_eq!(code, 1);
}

#[test]
fn test_reports_each_failure_and_the_summary() {
    let path = temp_file(
        "failing.weft",
        "-- ==\n-- input { 1i32 }\n-- output { 3i32 }\n-- input { 5i32 }\n-- output { 3i32 }\n-- input { 0i32 }\n-- error: bounds\nentry inc (x: i32) : i32 = 10 / x + 1\n",
    );
    let (stdout, _, code) = weft(&["test", &path], "");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("FAIL ")
            && lines[0].ends_with(":2: `inc`: value #0: expected 3i32, got 11i32"),
        "{stdout}"
    );
    assert!(
        lines[1].ends_with(&format!(
            ":6: `inc`: expected an error matching `bounds`, got: {path}:8:28: integer division by zero"
        )),
        "{stdout}"
    );
    assert_eq!(lines[2], "1 passed, 2 failed");
    assert_eq!(code, 1);
}

/// A negative size for `replicate` or `iota` is the interpreter's error on both back
/// ends: compiled code once returned wrong results (`[2.0]`, sums of 0, NaNs) or an
/// internal error about the host plan.
#[test]
fn negative_sizes_are_errors_on_both_backends() {
    let file = temp_file(
        "negative_sizes.weft",
        "entry concat (k: i64) (xs: [n]f32) : f32 = reduce (+) 0 (replicate (k-1) 0 ++ xs)\n\
         entry result (k: i64) : [k-1]i64 = iota (k-1)\n\
         entry inner (k: i64) (xs: [n]i64) : [n]i64 = map (\\x -> reduce (+) 0 (iota (x-k))) xs\n",
    );
    let cases = [
        ("concat", "0i64 [2f32]", "`replicate` with negative size -1", ":1:58"),
        ("result", "0i64", "`iota` with negative size -1", ":2:36"),
        ("inner", "3i64 [1i64, 5i64]", "`iota` with negative size -2", ":3:71"),
    ];
    for (entry, input, message, position) in cases {
        for backend in ["interp", "opencl"] {
            let (stdout, stderr, code) =
                weft(&["run", "--backend", backend, &file, "--entry", entry], input);
            assert_eq!((stdout.as_str(), code), ("", 1), "{entry} on {backend}: {stderr}");
            assert!(stderr.contains(message), "{entry} on {backend}: {stderr}");
            assert!(stderr.contains(position), "{entry} on {backend}: {stderr}");
        }
    }
    // Sizes of 0 are fine.
    for backend in ["interp", "opencl"] {
        let (stdout, stderr, code) =
            weft(&["run", "--backend", backend, &file, "--entry", "concat"], "1i64 [2f32]");
        assert_eq!((stdout.as_str(), code), ("2.0f32\n", 0), "{backend}: {stderr}");
    }
}

/// Every run-time check (`weft_values::RuntimeCheck`) fails with the same words in
/// the interpreter and on a device, on the host and in kernels: the back ends once
/// worded slices, `unflatten` and `:>` each their own way.
#[test]
fn every_run_time_check_is_worded_alike_on_both_backends() {
    let file = temp_file(
        "checks.weft",
        "entry index (xs: [n]i32) (i: i64) : i32 = xs[i]\n\
         entry gather (xs: [n]i32) (is: [m]i64) : [m]i32 = map (\\i -> xs[i]) is\n\
         entry take_k (xs: [n]i32) (k: i64) : [k]i32 = take k xs\n\
         entry slice (xs: [n]i32) (a: i64) (b: i64) : [b-a]i32 = xs[a:b]\n\
         entry halves (xs: [n]i32) : [n/2][2]i32 = split 2 xs\n\
         entry grid (xs: [n]i32) (c: i64) : [n/c][c]i32 = unflatten (n/c) c xs\n\
         entry fit (m: i64) (xs: [n]i32) : [m]i32 = xs :> [m]i32\n\
         entry divide (x: i32) (y: i32) : i32 = x / y\n\
         entry divide_all (xs: [n]i32) (y: i32) : [n]i32 = map (\\x -> x / y) xs\n\
         entry count (k: i64) : [k]i64 = iota k\n",
    );
    let cases = [
        ("index", "[1i32, 2i32, 3i32] 3i64", "index 3 out of bounds for array `xs` of size 3"),
        ("gather", "[1i32, 2i32] [0i64, 5i64]", "index 5 out of bounds for array `xs` of size 2"),
        ("take_k", "[1i32, 2i32] 3i64", "take 3 out of bounds for array `xs` of size 2"),
        (
            "slice",
            "[1i32, 2i32] 1i64 3i64",
            "slice out of bounds for array `xs` of size 2 (start 1)",
        ),
        ("halves", "[1i32, 2i32, 3i32]", "cannot split array `xs`: size 3 is not divisible by 2"),
        ("grid", "[1i32, 2i32, 3i32] 2i64", "cannot unflatten array `xs` of size 3 into rows of 2"),
        (
            "fit",
            "2i64 [1i32, 2i32, 3i32]",
            "size coercion of `xs` failed: expected size 2 (`m`) in dimension 0, got 3",
        ),
        ("divide", "1i32 0i32", "integer division by zero"),
        ("divide_all", "[1i32] 0i32", "integer division by zero"),
        ("count", "-1i64", "`iota` with negative size -1"),
    ];
    for (entry, input, message) in cases {
        let mut lines = Vec::new();
        for backend in ["interp", "opencl"] {
            let (stdout, stderr, code) =
                weft(&["run", "--backend", backend, &file, "--entry", entry], input);
            assert_eq!((stdout.as_str(), code), ("", 1), "{entry} on {backend}: {stderr}");
            assert!(stderr.contains(message), "{entry} on {backend}: {stderr}");
            lines.push(stderr.lines().last().unwrap_or_default().to_owned());
        }
        // The whole line, position included.
        assert_eq!(lines[0], lines[1], "{entry}");
    }
}

/// Runs `weft run` on the OpenCL back end with a stand-in runner script.
fn run_with_runner(name: &str, script: &str) -> (String, String, i32) {
    let runner = temp_file(name, script);
    let mut permissions = std::fs::metadata(&runner).expect("script written").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&runner, permissions).expect("script made executable");
    let output = common::weft()
        .current_dir(workspace_root())
        .env("WEFT_RUNNER", &runner)
        .args(["run", "examples/sum.weft", "--entry", "sum_i32", "--input", "[1i32]"])
        .output()
        .expect("the weft binary runs");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

/// A runner killed mid-run made `weft run` exit 2 silently, and output that is not
/// values was printed as a result with exit 0.
#[test]
fn a_killed_or_broken_runner_is_an_error_that_says_so() {
    let (stdout, stderr, code) = run_with_runner("killed.sh", "#!/bin/sh\nkill -9 $$\n");
    assert_eq!((stdout.as_str(), code), ("", 2), "{stderr}");
    assert_eq!(stderr, "error: the OpenCL runner was killed by signal 9 before it finished\n");
    let (stdout, stderr, code) =
        run_with_runner("garbage.sh", "#!/bin/sh\necho '{\"not\": values'\n");
    assert_eq!((stdout.as_str(), code), ("", 2), "{stderr}");
    assert!(stderr.starts_with("error: the OpenCL runner printed something that is not values"));
    let (stdout, stderr, code) = run_with_runner("exit7.sh", "#!/bin/sh\nexit 7\n");
    assert_eq!((stdout.as_str(), code), ("", 2), "{stderr}");
    assert_eq!(stderr, "error: the OpenCL runner exited with status 7 before it finished\n");
}

/// A random input larger than memory aborted with a backtrace (host allocation).
#[test]
fn a_random_input_larger_than_memory_is_an_error() {
    for backend in ["interp", "opencl"] {
        let (stdout, stderr, code) = weft(
            &[
                "run",
                "--backend",
                backend,
                "examples/sum.weft",
                "--entry",
                "sum_i32",
                "--random",
                "[1000000000000000]i32",
            ],
            "",
        );
        assert_eq!((stdout.as_str(), code), ("", 2), "{backend}: {stderr}");
        assert!(
            stderr.ends_with("error: cannot allocate 4000000000000000 bytes for a random input\n"),
            "{backend}: {stderr}"
        );
    }
}

/// The back ends counted "too many inputs" differently ("takes 1 inputs, but 1 more
/// were given" against "takes 1 input, but 2 were given").
#[test]
fn both_backends_count_inputs_alike() {
    for (input, count) in [("[1i32] [2i32]", "2 were given"), ("", "0 were given")] {
        let mut messages = Vec::new();
        for backend in ["interp", "opencl"] {
            let (stdout, stderr, code) = weft(
                &["run", "--backend", backend, "examples/sum.weft", "--entry", "sum_i32"],
                input,
            );
            assert_eq!((stdout.as_str(), code), ("", 1), "{backend}: {stderr}");
            messages.push(stderr.lines().last().unwrap_or_default().to_owned());
        }
        assert_eq!(messages[0], messages[1]);
        assert_eq!(messages[0], format!("error: entry `sum_i32` takes 1 input, but {count}"));
    }
}

/// The single-pass scan with decoupled look-back that an NVIDIA GPU gets
/// (`WEFT_PROFILE` steers the compiler with the H100's profile) gives the
/// interpreter's answers on the machine's device (POCL on CI, which runs a started
/// work-group to its end too), on sizes around its tiles of 8192.
#[test]
fn the_look_back_scan_agrees_with_the_interpreter() {
    let path = temp_file(
        "lookback.weft",
        "-- ==\n-- random input { [0]i32 }\n-- random input { [1]i32 }\n-- random input { [8191]i32 }\n\
         -- random input { [8193]i32 }\n-- random input { [100003]i32 }\n\
         entry running_max (xs: [n]i32) : [n]i32 = scan i32.max (-2147483648) xs\n\
         -- ==\n-- random input { [4096]u32 }\n-- random input { [70001]u32 }\n\
         entry running_sum (xs: [n]u32) : [n]u32 = scan (+) 0 xs\n\
         -- ==\n-- random input { [70001]f32 }\n\
         entry running_fsum (xs: [n]f32) : [n]f32 = scan (+) 0 xs\n",
    );
    let profile = workspace_root().join("crates/weft-cost/profiles/nvidia-h100.json");
    let mut command = common::weft_with_runner();
    command.env("WEFT_PROFILE", &profile);
    let kernels = command.args(["dump", "--ir", "kernels", &path]).output().expect("runs");
    let kernels = String::from_utf8_lossy(&kernels.stdout);
    assert_eq!(kernels.matches("single pass").count(), 3, "{kernels}");
    let mut command = common::weft_with_runner();
    command.env("WEFT_PROFILE", &profile);
    let output = command.args(["test", "--backend", "opencl", &path]).output().expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("8 passed, 0 failed"), "{stdout}");
}

/// `--device auto` predicts each device with a profile (POCL's CPU here) and says which
/// it chose and why before the results.
#[test]
fn device_auto_says_where_it_runs_and_why() {
    let (stdout, stderr, code) = weft(
        &[
            "run",
            "--device",
            "auto",
            "--entry",
            "total",
            "--random",
            "[1000]f32",
            "bench/programs/sum.weft",
        ],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.trim().ends_with("f32"), "{stdout}");
    assert!(stderr.starts_with("note: running on "), "{stderr}");
    assert!(stderr.contains("(kernels "), "{stderr}");
    assert!(stderr.contains(", transfers "), "{stderr}");
    // The same from values on stdin.
    let (stdout, stderr, code) = weft(
        &["run", "--device", "auto", "--entry", "total", "bench/programs/sum.weft"],
        "[1f32, 2f32]",
    );
    assert_eq!((code, stdout.trim()), (0, "3.0f32"), "{stderr}");
}

/// `--device-profile FILE` predicts its device with that measured profile instead of the
/// committed one nearest it, and says so; without `--device auto` it is refused.
#[test]
fn device_auto_takes_a_profile_measured_on_the_device() {
    let profile = temp_file("cpu-profile.json", "");
    let (_, stderr, code) =
        weft(&["calibrate", "--device", "cpu", "--quick", "--reps", "2", "-o", &profile], "");
    assert_eq!(code, 0, "{stderr}");
    let args = ["run", "--device", "auto", "--device-profile", &profile, "--entry", "total"];
    let (stdout, stderr, code) =
        weft(&[&args[..], &["bench/programs/sum.weft"]].concat(), "[1f32, 2f32]");
    assert_eq!((code, stdout.trim()), (0, "3.0f32"), "{stderr}");
    assert!(stderr.contains("; its own profile)"), "{stderr}");
    let (_, stderr, code) = weft(
        &["run", "--device-profile", &profile, "--entry", "total", "bench/programs/sum.weft"],
        "[1f32]",
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("give it with `--device auto`"), "{stderr}");
}
