//! `weft tune` and `--tuning FILE` through the real binary, on the
//! machine's OpenCL device (POCL on CI); the runner is found as in `tests/bench.rs`.

use std::path::PathBuf;
use std::process::Output;

mod common;

fn weft(args: &[&str]) -> Output {
    common::weft_with_runner().args(args).output().expect("the weft binary runs")
}

fn scratch(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-tune-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("file written");
    path.to_string_lossy().into_owned()
}

const ROW_SOFTMAX: &str = r"-- bench: [64][32]f32
-- ==
-- random input { [5][7]f32 }
entry row_softmax (xss: [n][m]f32) : [n][m]f32 =
  map (\xs ->
         let mx = reduce f32.max (-f32.inf) xs
         let es = map (\x -> f32.exp (x - mx)) xs
         let s = reduce (+) 0 es
         in map (\e -> e / s) es)
      xss
";

#[test]
fn tune_writes_every_threshold_of_a_benchmarked_entry_and_run_reads_it() {
    let program = scratch("row_softmax.weft", ROW_SOFTMAX);
    let tuning = scratch("tuning.json", "");
    let out = weft(&["tune", "--device", "cpu", "--reps", "2", "-o", &tuning, &program]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tuning).expect("tuning file"))
            .expect("JSON");
    // One section per tuned source file, under its path.
    let section = &json["files"][program.as_str()];
    let thresholds = section["thresholds"].as_object().expect("thresholds");
    // The map with inner parallelism has an outer and an intra-group threshold.
    let mut names: Vec<&str> = thresholds.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["row_softmax.suff_intra_par_0", "row_softmax.suff_outer_par_0"]);
    // The code generator's parameters were tried too; each kept value is a candidate.
    let parameters = section["parameters"].as_object().expect("parameters");
    for (name, value) in parameters {
        let value = value.as_i64().expect("an integer");
        match name.as_str() {
            "row_softmax.group_size" => assert!([64, 128, 256, 512].contains(&value)),
            "row_softmax.coarsen" => assert!([1, 2, 4, 8, 16].contains(&value)),
            other => panic!("unexpected parameter `{other}`"),
        }
    }
    let entry = &section["entries"][0];
    assert!(entry["tuned_ms"].as_f64() <= entry["default_ms"].as_f64(), "{json}");
    // The tuned program gives the interpreter's answers.
    let test =
        weft(&["test", "--tuning", &tuning, "--backend", "opencl", "--device", "cpu", &program]);
    assert!(String::from_utf8_lossy(&test.stdout).contains("1 passed, 0 failed"), "{test:?}");
}

#[test]
fn tune_without_an_output_writes_the_committed_file_beside_the_source_which_runs_use() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-tune-committed");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let program = dir.join("row_softmax.weft");
    std::fs::write(&program, ROW_SOFTMAX).expect("written");
    let program = program.to_string_lossy().into_owned();
    let out = weft(&["tune", "--device", "cpu", "--reps", "2", &program]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // DIR/weft-tuning/DEVICE.json, its section keyed by the file's name.
    let files: Vec<PathBuf> = std::fs::read_dir(dir.join("weft-tuning"))
        .expect("the committed tuning directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let [file] = files.as_slice() else { panic!("one tuning file: {files:?}") };
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("JSON");
    assert!(json["files"]["row_softmax.weft"]["thresholds"].is_object(), "{json}");
    // `weft bench` uses it and says so; `--no-tuning` does not.
    let bench = weft(&["bench", "--device", "cpu", "--reps", "1", "--warmup", "0", &program]);
    let text = String::from_utf8_lossy(&bench.stdout);
    assert!(text.contains("(tuned: "), "{text}");
    let bench = weft(&[
        "bench",
        "--no-tuning",
        "--device",
        "cpu",
        "--reps",
        "1",
        "--warmup",
        "0",
        &program,
    ]);
    let text = String::from_utf8_lossy(&bench.stdout);
    assert!(!text.contains("(tuned: "), "{text}");
}

#[test]
fn a_malformed_tuning_file_is_an_error() {
    let program = scratch("plain.weft", "entry main (x: i32) : i32 = x + 1\n");
    let tuning = scratch("bad.json", "{\"thresholds\": {\"main.suff_outer_par_0\": \"many\"}}");
    let out = weft(&["run", "--tuning", &tuning, &program]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("threshold `main.suff_outer_par_0` is not an integer"), "{stderr}");
}

#[test]
fn a_tuning_file_with_a_bad_parameter_is_an_error() {
    let program = scratch("plain2.weft", "entry main (x: i32) : i32 = x + 1\n");
    for (parameters, message) in [
        ("{\"main.group_size\": 100}", "parameter `main.group_size` has an invalid value 100"),
        ("{\"main.unroll\": 2}", "unknown parameter `main.unroll`"),
    ] {
        let tuning = scratch(
            "bad-parameter.json",
            &format!("{{\"thresholds\": {{}}, \"parameters\": {parameters}}}"),
        );
        let out = weft(&["run", "--tuning", &tuning, &program]);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{stderr}");
    }
}

#[test]
fn a_tuned_group_size_changes_the_kernels_and_keeps_the_answers() {
    let program = scratch(
        "sum_rows.weft",
        "-- ==\n-- random input { [70][300]f32 }\nentry sums (a: [n][m]f32) : f32 = reduce (+) 0 (flatten a)\n",
    );
    let tuning = scratch(
        "group64.json",
        "{\"thresholds\": {}, \"parameters\": {\"sums.group_size\": 64, \"sums.coarsen\": 2}}",
    );
    let plain = weft(&["dump", "--ir", "kernels", &program]);
    let tuned = weft(&["dump", "--ir", "kernels", "--tuning", &tuning, &program]);
    let (plain, tuned) =
        (String::from_utf8_lossy(&plain.stdout), String::from_utf8_lossy(&tuned.stdout));
    assert!(plain.contains("local [256]"), "{plain}");
    assert!(tuned.contains("local [64]") && !tuned.contains("local [256]"), "{tuned}");
    let test =
        weft(&["test", "--tuning", &tuning, "--backend", "opencl", "--device", "cpu", &program]);
    assert!(String::from_utf8_lossy(&test.stdout).contains("1 passed, 0 failed"), "{test:?}");
}

/// `--predict`: the model chooses without a device (no runner can be started), at the
/// `-- bench:` sizes, on a named committed profile; the file says the times are
/// predicted, and the compiled choice gives the interpreter's answers.
#[test]
fn tune_predict_chooses_by_the_model_without_a_device() {
    let program = scratch("row_softmax_predicted.weft", ROW_SOFTMAX);
    let tuning = scratch("predicted.json", "");
    let out = common::weft()
        .env("WEFT_RUNNER", "/nonexistent/weft-runner")
        .args(["tune", "--predict", "--profile", "nvidia-h200", "-o", &tuning, &program])
        .output()
        .expect("weft runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("predicted)"), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tuning).expect("tuning file"))
            .expect("JSON");
    assert_eq!(json["device"], "NVIDIA H200");
    let section = &json["files"][program.as_str()];
    assert_eq!(section["thresholds"].as_object().map(serde_json::Map::len), Some(2), "{json}");
    let entry = &section["entries"][0];
    assert!(entry["predicted_by"].as_str().is_some_and(|m| m.contains("NVIDIA H200")), "{json}");
    assert!(entry["tuned_ms"].as_f64() <= entry["default_ms"].as_f64(), "{json}");
    let test =
        weft(&["test", "--tuning", &tuning, "--backend", "opencl", "--device", "cpu", &program]);
    assert!(String::from_utf8_lossy(&test.stdout).contains("1 passed, 0 failed"), "{test:?}");
    // `--profile` belongs to `--predict`; an unknown profile is named.
    let out = weft(&["tune", "--profile", "nvidia-h200", "-o", &tuning, &program]);
    assert_eq!(out.status.code(), Some(2));
    let out = weft(&["tune", "--predict", "--profile", "nvidia-a100", "-o", &tuning, &program]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither a committed device profile"));
}
