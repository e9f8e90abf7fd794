//! `weft calibrate` through the real binaries, on the machine's CPU OpenCL device
//! (POCL): `--quick` measures a whole profile in seconds. `weft calibrate` spawns
//! `weft-runner` (see tests/common/mod.rs for how the test finds or builds it).

use std::path::PathBuf;
use std::process::Output;

use weft_cost::profile::{DeviceProfile, fit_latency_bandwidth};

mod common;

fn weft_calibrate(args: &[&str]) -> Output {
    common::weft_with_runner().arg("calibrate").args(args).output().expect("the weft binary runs")
}

fn in_range(what: &str, value: f64, low: f64, high: f64) {
    assert!(value >= low && value <= high, "{what} = {value:e}, expected in [{low:e}, {high:e}]");
}

#[test]
fn quick_calibration_on_the_cpu_writes_a_plausible_profile() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-calibrate-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("cpu.json");
    let _ = std::fs::remove_file(&path);
    let output =
        weft_calibrate(&["--device", "cpu", "--quick", "-o", path.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "weft calibrate failed: {stderr}");
    assert!(output.stdout.is_empty(), "with -o, nothing on stdout");
    for progress in
        ["launch: empty kernel", "global copy of 4 KiB", "local read, stride 32", "mad_f32"]
    {
        assert!(stderr.contains(progress), "no `{progress}` in the progress: {stderr}");
    }
    assert!(stderr.contains("wrote the profile of `"), "{stderr}");

    // Reading it checks the format, every field and that every number is positive.
    let profile = DeviceProfile::load(&path).unwrap_or_else(|error| panic!("{error}"));
    assert!(profile.quick);
    assert_eq!(profile.reps, 5);
    assert_eq!(profile.device.kind, "cpu");
    assert!(profile.device.compute_units >= 1);
    assert!(profile.device.local_mem_bytes >= 16 << 10);
    // Plausible for any CPU: bandwidths between 100 MB/s and 10 TB/s, rates between
    // 10 MFLOP/s and 100 TFLOP/s, a launch under 10 ms.
    in_range("global.bytes_per_s", profile.global.bytes_per_s, 1e8, 1e13);
    in_range("local.bytes_per_s", profile.local.bytes_per_s, 1e8, 1e13);
    in_range("compute.f32_flops", profile.compute.f32_flops, 1e7, 1e14);
    in_range("launch.kernel_s", profile.launch.kernel_s, 1e-9, 1e-2);
    in_range("launch.wall_s", profile.launch.wall_s, 1e-7, 1e-2);
    for transfer in [&profile.transfer.host_to_device, &profile.transfer.device_to_host] {
        in_range("transfer bytes_per_s", transfer.bytes_per_s, 1e7, 1e13);
    }
    let strides: Vec<u32> = profile.global.strided.iter().map(|point| point.stride).collect();
    assert_eq!(strides, [1, 2, 4, 8, 16, 32]);
    let strides: Vec<u32> = profile.local.strided.iter().map(|point| point.stride).collect();
    assert_eq!(strides, [1, 2, 4, 8, 16, 32]);
    let sizes: Vec<u64> = profile.global.copy_curve.iter().map(|sample| sample.bytes).collect();
    assert_eq!(sizes, [8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20], "read + written");
    // The runner's fit is weft-cost's (to the 4 digits written).
    let curve: Vec<(f64, f64)> =
        profile.global.copy_curve.iter().map(|s| (s.bytes as f64, s.seconds)).collect();
    let (latency, bandwidth) = fit_latency_bandwidth(&curve);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * a.abs().max(b.abs());
    assert!(close(latency, profile.global.latency_s), "{latency} vs {}", profile.global.latency_s);
    assert!(close(bandwidth, profile.global.bytes_per_s), "{bandwidth}");
    // The file is what `to_json_pretty` writes.
    let text = std::fs::read_to_string(&path).expect("the profile file");
    assert_eq!(profile.to_json_pretty(), text);
}

#[test]
fn a_missing_device_fails_with_the_runners_message() {
    let output = weft_calibrate(&["--device", "7:7", "--quick"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: no OpenCL platform 7"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn help_says_what_is_measured() {
    let output = common::weft_with_runner()
        .args(["calibrate", "--help"])
        .output()
        .expect("the weft binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    for topic in
        ["global memory", "local memory", "arithmetic", "launches", "transfers", "-o, --output"]
    {
        assert!(stdout.contains(topic), "no `{topic}` in --help: {stdout}");
    }
}
