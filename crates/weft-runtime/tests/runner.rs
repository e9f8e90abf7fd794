//! The `weft-runner` binary as `weft run`, `weft test` and `weft bench` spawn it:
//! output formats and exit codes.

#![expect(clippy::unwrap_used, reason = "test helpers fail loudly on a broken setup")]

mod plans;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use expect_test::{Expect, expect};
use weft_plan::Plan;

/// Writes `plan` to a JSON file under the target's temporary directory.
fn plan_file(name: &str, plan: &Plan) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-runner-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, plan.to_json()).unwrap();
    path
}

#[expect(clippy::disallowed_methods, reason = "the test runs the real binary")]
fn runner(args: &[&str], stdin: &str) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_weft-runner"));
    // The shell's `WEFT_DEVICE`, `WEFT_CL_OPTIONS` or `WEFT_CL_LOG` must not change
    // what the tests see.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WEFT_") {
            command.env_remove(name);
        }
    }
    let mut child = command
        .args(args)
        .env("POCL_CACHE_DIR", plans::pocl_cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("weft-runner starts");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().expect("weft-runner runs")
}

/// `text` with every backquoted device name replaced by `<name>`.
fn mask_device_names(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(" `") {
        out.push_str(&rest[..start + 2]);
        rest = &rest[start + 2..];
        let end = rest.find('`').unwrap_or(rest.len());
        out.push_str("<name>");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn text(output: &Output) -> String {
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn check(args: &[&str], stdin: &str, expect: Expect) {
    expect.assert_eq(&text(&runner(args, stdin)));
}

#[test]
fn run_reads_stdin_and_prints_one_value_per_line() {
    let plan = plan_file("maps", &plans::maps());
    check(
        &["run", "--plan", plan.to_str().unwrap()],
        "[1f32, 2f32] [3i64] empty([0]bool)",
        expect![[r#"
            exit 0
            --- stdout
            [3.0f32, 5.0f32]
            [9i64]
            empty([0]bool)
            --- stderr
        "#]],
    );
}

#[test]
fn run_reports_a_kernel_error_with_exit_1() {
    let plan = plan_file("gather", &plans::gather());
    check(
        &["run", "--plan", plan.to_str().unwrap()],
        "[1f32, 2f32] [0i64, -1i64]",
        expect![[r#"
            exit 1
            --- stdout
            --- stderr
            error: gather.weft:2:20: index -1 out of bounds for array of size 2
        "#]],
    );
}

#[test]
fn run_json_carries_results_and_timings_or_the_error() {
    let plan = plan_file("gather-json", &plans::gather());
    let path = plan.to_str().unwrap();
    let output = runner(&["run", "--plan", path, "--json"], "[1f32, 2f32] [1i64]");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let object: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(object["ok"], "[2.0f32]\n");
    assert_eq!(object["kernels"][0]["kernel"], "gather");
    assert!(object["kernels"][0]["ns"].is_u64());
    assert!(object["wall_ns"].is_u64());
    check(
        &["run", "--plan", path, "--json"],
        "[1f32] [1i64]",
        expect![[r#"
            exit 1
            --- stdout
            {"error":"gather.weft:2:20: index 1 out of bounds for array of size 1","exit":1}
            --- stderr
        "#]],
    );
}

#[test]
fn run_writes_npy_files_and_times_kernels() {
    let plan = plan_file("iterate-npy", &plans::iterate());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-runner-tests/npy-out");
    let _ = std::fs::remove_dir_all(&dir);
    let output = runner(
        &[
            "run",
            "--plan",
            plan.to_str().unwrap(),
            "--random",
            "[4]i64 in 0..10",
            "--random",
            "i64 in 1..2",
            "--output-dir",
            dir.to_str().unwrap(),
            "--timing",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("kernel add_one: ") && stderr.contains("(1 launch)"), "{stderr}");
    let value = weft_values::read_npy(&std::fs::read(dir.join("result_0.npy")).unwrap()).unwrap();
    assert_eq!(value.shape(), [4]);
}

#[test]
fn batch_builds_once_and_answers_every_case() {
    let plan = plan_file("gather-batch", &plans::gather());
    let cases = serde_json::json!({
        "cases": ["[1f32, 2f32] [1i64, 0i64]", "[1f32] [3i64]", "[1f32] [0i64, 0i64, 0i64]", "[1f32", "[1f32]"]
    });
    check(
        &["batch", "--plan", plan.to_str().unwrap()],
        &cases.to_string(),
        expect![[r#"
            exit 0
            --- stdout
            {"ok":"[2.0f32, 1.0f32]\n"}
            {"error":"gather.weft:2:20: index 3 out of bounds for array of size 1","exit":1}
            {"error":"gather.weft:2:5: size error: 3 indices for an array of 1 elements","exit":1}
            {"error":"cannot read the inputs: 1:6: expected `,` or `]`, found end of input","exit":2}
            {"error":"entry `gather` takes 2 inputs, but 1 was given","exit":1}
            --- stderr
        "#]],
    );
}

#[test]
fn a_build_failure_prints_the_log_and_the_source() {
    let plan = plan_file("broken", &plans::broken());
    let output = runner(&["run", "--plan", plan.to_str().unwrap()], "[1f32]");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error: cannot build the OpenCL program for `"), "{stderr}");
    assert!(stderr.contains("undeclared_thing"), "{stderr}");
    assert!(stderr.contains("> 5 |   xs[i] = undeclared_thing;"), "{stderr}");
}

#[test]
fn usage_and_device_errors_exit_2() {
    let plan = plan_file("maps-usage", &plans::maps());
    let path = plan.to_str().unwrap();
    check(
        &["run", "--plan", path, "--device", "fast"],
        "",
        expect![[r#"
            exit 2
            --- stdout
            --- stderr
            error: invalid device `fast`: expected `gpu`, `cpu` or `PLATFORM:DEVICE` (indices as `weft-runner devices` lists them, e.g. `0:1`)
        "#]],
    );
    // The list of devices is the machine's own (POCL names a CPU device after the host
    // CPU): the snapshot masks the names.
    let no_platform = text(&runner(&["run", "--plan", path, "--device", "7:0"], ""));
    expect![[r#"
        exit 2
        --- stdout
        --- stderr
        error: no OpenCL platform 7; devices: 0:0 cpu `<name>`
    "#]]
    .assert_eq(&mask_device_names(&no_platform));
    check(
        &["run", "--plan", "/nonexistent/plan.json"],
        "",
        expect![[r#"
            exit 2
            --- stdout
            --- stderr
            error: cannot read the plan `/nonexistent/plan.json`: No such file or directory (os error 2)
        "#]],
    );
    assert_eq!(runner(&["frobnicate"], "").status.code(), Some(2));
}

#[test]
fn devices_lists_indices_and_the_default() {
    let output = runner(&["devices"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("platform 0: "), "{stdout}");
    assert!(stdout.contains("  0:0  ") && stdout.contains("(default)"), "{stdout}");
}

#[test]
fn no_icd_is_a_clear_error_not_a_panic() {
    let empty = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-runner-tests/no-vendors");
    std::fs::create_dir_all(&empty).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test runs the real binary")]
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_weft-runner"))
        .arg("devices")
        .env("OCL_ICD_VENDORS", &empty)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: no OpenCL platform found"), "{stderr}");
    assert!(stderr.contains("pocl-opencl-icd ocl-icd-opencl-dev"), "{stderr}");
}

#[test]
fn bench_json_has_per_kernel_statistics() {
    let plan = plan_file("iterate-bench", &plans::iterate());
    let output = runner(
        &[
            "bench",
            "--plan",
            plan.to_str().unwrap(),
            "--random",
            "[16]i64 in 0..10",
            "--random",
            "i64 in 2..3",
            "--warmup",
            "1",
            "--reps",
            "3",
            "--json",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let object: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(object["entry"], "iterate");
    assert_eq!(object["reps"], 3);
    assert_eq!(object["kernels"][0]["kernel"], "add_one");
    assert_eq!(object["kernels"][0]["launches"], 2);
    for key in ["median", "min", "max"] {
        assert!(object["total_kernel_ns"][key].is_u64(), "{object}");
    }
}

/// `weft tune`'s trials: one answer per plan line, in order; a plan that cannot be read
/// is that line's error and the next one still runs.
#[test]
fn trials_answer_each_plan_on_the_same_inputs() {
    let plan = plan_file("iterate-trials", &plans::iterate());
    let plan = plan.to_str().unwrap();
    let output = runner(
        &["trials", "--random", "[16]i64 in 0..10", "--random", "i64 in 2..3", "--reps", "2"],
        &format!("{plan}\n/nonexistent/plan.json\n\n{plan}\n"),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["entry"], "iterate");
    assert_eq!(lines[0]["reps"], 2);
    assert!(lines[1]["error"].as_str().unwrap().contains("/nonexistent/plan.json"), "{lines:?}");
    assert_eq!(lines[1]["exit"], 2);
    assert_eq!(lines[2]["kernels"][0]["launches"], 2);
    // Without inputs on the command line, stdin would be both the plans and the inputs.
    let output = runner(&["trials"], "");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
}

#[test]
fn calibrate_prints_a_profile_and_its_progress() {
    let output = runner(&["calibrate", "--device", "cpu", "--quick", "--reps", "3"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("calibrating `"), "{stderr}");
    assert!(stderr.contains("global strided read, stride 32"), "{stderr}");
    let profile: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(profile["format"], 2);
    assert_eq!(profile["quick"], true);
    assert_eq!(profile["reps"], 3);
    assert_eq!(profile["device"]["kind"], "cpu");
    let positive = |path: &[&str]| {
        let value = path.iter().fold(&profile, |value, key| &value[*key]);
        let number = value.as_f64().unwrap_or_else(|| panic!("no number at {path:?}: {profile}"));
        assert!(number > 0.0 && number.is_finite(), "{path:?} = {number}");
    };
    positive(&["global", "bytes_per_s"]);
    positive(&["global", "largest_bytes_per_s"]);
    positive(&["local", "bytes_per_s"]);
    positive(&["compute", "f32_flops"]);
    positive(&["launch", "kernel_s"]);
    positive(&["launch", "back_to_back_s"]);
    positive(&["launch", "wall_s"]);
    positive(&["transfer", "host_to_device", "bytes_per_s"]);
    positive(&["transfer", "device_to_host", "wall_bytes_per_s"]);
    assert_eq!(profile["global"]["strided"].as_array().map(Vec::len), Some(6));
    assert_eq!(profile["local"]["strided"][5]["stride"], 32);
    // Format 2's operation rates, each benchmark checked on the host.
    for op in ["div", "sqrt", "exp", "log", "sin", "cos"] {
        assert!(stderr.contains(&format!("chain_{op}: ")), "{stderr}");
    }
    let ops = &profile["operations"];
    assert_eq!(ops["special"].as_array().map(Vec::len), Some(6));
    for table in ["atomics", "float_atomics", "local_atomics", "local_float_atomics"] {
        let points = ops[table].as_array().unwrap_or_else(|| panic!("no {table}: {ops}"));
        assert!(points.len() >= 3 && points.iter().all(|p| p["per_s"].as_f64() > Some(0.0)));
    }
    assert_eq!(ops["wide_copies"][1]["words"], 4);
    for field in
        ["barrier_per_s", "load_latency_s", "op_latency_s", "warm_launch_s", "queued_launch_s"]
    {
        positive(&["operations", field]);
    }
}

#[test]
fn calibrate_on_a_missing_device_exits_2() {
    let output = runner(&["calibrate", "--device", "5:0"], "");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(output.stdout.is_empty(), "{}", text(&output));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: no OpenCL platform 5; devices: 0:0 "), "{stderr}");
}
