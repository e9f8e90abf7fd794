use expect_test::expect;

use super::*;

fn widths(n: u32) -> VectorWidths {
    VectorWidths { char: n, short: n, int: n, long: n, float: n, double: n }
}

/// A small profile with made-up numbers (one point per curve where that suffices).
fn fixture() -> DeviceProfile {
    DeviceProfile {
        format: FORMAT,
        tool: "weft-runner 0.1.0".to_owned(),
        measured: "2026-11-23".to_owned(),
        quick: false,
        reps: 20,
        device: DeviceFacts {
            name: "Example GPU".to_owned(),
            vendor: "Example Corp".to_owned(),
            platform: "Example CL".to_owned(),
            platform_version: "OpenCL 3.0 Example".to_owned(),
            driver_version: "1.2.3".to_owned(),
            opencl_version: "OpenCL 3.0 Example".to_owned(),
            kind: "gpu".to_owned(),
            compute_units: 100,
            max_clock_mhz: 1500,
            max_work_group_size: 1024,
            simd_width: 32,
            local_mem_bytes: 49_152,
            max_constant_buffer_bytes: 65_536,
            max_constant_args: 9,
            global_mem_bytes: 1 << 34,
            max_mem_alloc_bytes: 1 << 32,
            global_mem_cache_bytes: 1 << 22,
            global_mem_cacheline_bytes: 128,
            fp64: true,
            preferred_vector_width: widths(1),
            native_vector_width: widths(1),
        },
        global: GlobalMemory {
            bytes_per_s: 1e12,
            latency_s: 2e-6,
            largest_bytes: 1 << 20,
            largest_bytes_per_s: 3e11,
            copy_curve: vec![
                Sample { bytes: 1 << 12, seconds: 2.004e-6 },
                Sample { bytes: 1 << 20, seconds: 3.5e-6 },
            ],
            strided_bytes: 1 << 20,
            strided: vec![
                StridePoint { stride: 1, bytes_per_s: 3e11, slowdown: 1.0 },
                StridePoint { stride: 32, bytes_per_s: 3e10, slowdown: 10.0 },
            ],
        },
        local: LocalMemory {
            bytes_per_s: 1e13,
            strided: vec![
                StridePoint { stride: 1, bytes_per_s: 1e13, slowdown: 1.0 },
                StridePoint { stride: 2, bytes_per_s: 5e12, slowdown: 2.0 },
            ],
        },
        compute: Compute { f32_flops: 5e13, f64_flops: Some(2.5e13) },
        launch: Launch { kernel_s: 2e-6, back_to_back_s: 3e-6, wall_s: 1e-5 },
        transfer: Transfers {
            host_to_device: Transfer {
                bytes_per_s: 2e10,
                latency_s: 5e-6,
                wall_bytes_per_s: 1.5e10,
                wall_latency_s: 1e-5,
                curve: vec![TransferSample { bytes: 4096, seconds: 5.2e-6, wall_seconds: 1e-5 }],
            },
            device_to_host: Transfer {
                bytes_per_s: 2e10,
                latency_s: 5e-6,
                wall_bytes_per_s: 1.5e10,
                wall_latency_s: 1e-5,
                curve: vec![TransferSample { bytes: 4096, seconds: 5.2e-6, wall_seconds: 1e-5 }],
            },
        },
        operations: Some(Operations {
            special: ["div", "sqrt", "exp", "log", "sin", "cos"]
                .into_iter()
                .zip([4e12, 4e12, 2e12, 2e12, 1e12, 1e12])
                .map(|(op, per_s)| SpecialRate { op: op.to_owned(), per_s })
                .collect(),
            atomics: vec![
                AtomicRate { bins: 1, per_s: 1e9 },
                AtomicRate { bins: 1 << 24, per_s: 1e11 },
            ],
            float_atomics: vec![
                AtomicRate { bins: 1, per_s: 1e8 },
                AtomicRate { bins: 1 << 24, per_s: 5e10 },
            ],
            local_atomics: vec![AtomicRate { bins: 32, per_s: 2e11 }],
            local_float_atomics: vec![AtomicRate { bins: 32, per_s: 5e10 }],
            wide_copies: vec![
                WideCopy { words: 2, bytes_per_s: 1.5e12 },
                WideCopy { words: 4, bytes_per_s: 2e12 },
            ],
            barrier_per_s: 1e11,
            cached_reads: vec![
                CachedRead { window_bytes: 16 << 10, bytes_per_s: 2e13 },
                CachedRead { window_bytes: 4 << 20, bytes_per_s: 5e12 },
            ],
            load_latency_s: 6e-7,
            cached_load_latency_s: 4e-8,
            op_latency_s: 4e-9,
            warm_launch_s: 1.5e-6,
            queued_launch_s: 1e-6,
        }),
    }
}

#[test]
fn fixture_json_has_every_field_with_its_unit() {
    expect![[r#"
        {
          "format": 2,
          "tool": "weft-runner 0.1.0",
          "measured": "2026-11-23",
          "quick": false,
          "reps": 20,
          "device": {
            "name": "Example GPU",
            "vendor": "Example Corp",
            "platform": "Example CL",
            "platform_version": "OpenCL 3.0 Example",
            "driver_version": "1.2.3",
            "opencl_version": "OpenCL 3.0 Example",
            "kind": "gpu",
            "compute_units": 100,
            "max_clock_mhz": 1500,
            "max_work_group_size": 1024,
            "simd_width": 32,
            "local_mem_bytes": 49152,
            "max_constant_buffer_bytes": 65536,
            "max_constant_args": 9,
            "global_mem_bytes": 17179869184,
            "max_mem_alloc_bytes": 4294967296,
            "global_mem_cache_bytes": 4194304,
            "global_mem_cacheline_bytes": 128,
            "fp64": true,
            "preferred_vector_width": {
              "char": 1,
              "short": 1,
              "int": 1,
              "long": 1,
              "float": 1,
              "double": 1
            },
            "native_vector_width": {
              "char": 1,
              "short": 1,
              "int": 1,
              "long": 1,
              "float": 1,
              "double": 1
            }
          },
          "global": {
            "bytes_per_s": 1000000000000.0,
            "latency_s": 2e-6,
            "largest_bytes": 1048576,
            "largest_bytes_per_s": 300000000000.0,
            "copy_curve": [
              {
                "bytes": 4096,
                "seconds": 2.004e-6
              },
              {
                "bytes": 1048576,
                "seconds": 3.5e-6
              }
            ],
            "strided_bytes": 1048576,
            "strided": [
              {
                "stride": 1,
                "bytes_per_s": 300000000000.0,
                "slowdown": 1.0
              },
              {
                "stride": 32,
                "bytes_per_s": 30000000000.0,
                "slowdown": 10.0
              }
            ]
          },
          "local": {
            "bytes_per_s": 10000000000000.0,
            "strided": [
              {
                "stride": 1,
                "bytes_per_s": 10000000000000.0,
                "slowdown": 1.0
              },
              {
                "stride": 2,
                "bytes_per_s": 5000000000000.0,
                "slowdown": 2.0
              }
            ]
          },
          "compute": {
            "f32_flops": 50000000000000.0,
            "f64_flops": 25000000000000.0
          },
          "launch": {
            "kernel_s": 2e-6,
            "back_to_back_s": 3e-6,
            "wall_s": 0.00001
          },
          "transfer": {
            "host_to_device": {
              "bytes_per_s": 20000000000.0,
              "latency_s": 5e-6,
              "wall_bytes_per_s": 15000000000.0,
              "wall_latency_s": 0.00001,
              "curve": [
                {
                  "bytes": 4096,
                  "seconds": 5.2e-6,
                  "wall_seconds": 0.00001
                }
              ]
            },
            "device_to_host": {
              "bytes_per_s": 20000000000.0,
              "latency_s": 5e-6,
              "wall_bytes_per_s": 15000000000.0,
              "wall_latency_s": 0.00001,
              "curve": [
                {
                  "bytes": 4096,
                  "seconds": 5.2e-6,
                  "wall_seconds": 0.00001
                }
              ]
            }
          },
          "operations": {
            "special": [
              {
                "op": "div",
                "per_s": 4000000000000.0
              },
              {
                "op": "sqrt",
                "per_s": 4000000000000.0
              },
              {
                "op": "exp",
                "per_s": 2000000000000.0
              },
              {
                "op": "log",
                "per_s": 2000000000000.0
              },
              {
                "op": "sin",
                "per_s": 1000000000000.0
              },
              {
                "op": "cos",
                "per_s": 1000000000000.0
              }
            ],
            "atomics": [
              {
                "bins": 1,
                "per_s": 1000000000.0
              },
              {
                "bins": 16777216,
                "per_s": 100000000000.0
              }
            ],
            "float_atomics": [
              {
                "bins": 1,
                "per_s": 100000000.0
              },
              {
                "bins": 16777216,
                "per_s": 50000000000.0
              }
            ],
            "local_atomics": [
              {
                "bins": 32,
                "per_s": 200000000000.0
              }
            ],
            "local_float_atomics": [
              {
                "bins": 32,
                "per_s": 50000000000.0
              }
            ],
            "wide_copies": [
              {
                "words": 2,
                "bytes_per_s": 1500000000000.0
              },
              {
                "words": 4,
                "bytes_per_s": 2000000000000.0
              }
            ],
            "barrier_per_s": 100000000000.0,
            "cached_reads": [
              {
                "window_bytes": 16384,
                "bytes_per_s": 20000000000000.0
              },
              {
                "window_bytes": 4194304,
                "bytes_per_s": 5000000000000.0
              }
            ],
            "load_latency_s": 6e-7,
            "cached_load_latency_s": 4e-8,
            "op_latency_s": 4e-9,
            "warm_launch_s": 1.5e-6,
            "queued_launch_s": 1e-6
          }
        }
    "#]]
    .assert_eq(&fixture().to_json_pretty());
}

#[test]
fn rounding_keeps_four_significant_digits() {
    assert_eq!(round_significant(15_680_340_350.290_195), 1.568e10);
    assert_eq!(round_significant(3.823_930_418_255_235_4e-7), 3.824e-7);
    assert_eq!(round_significant(0.999_95), 1.0);
    assert_eq!(round_significant(0.0), 0.0);
    let mut profile = fixture();
    profile.global.bytes_per_s = 1.234_567e12;
    profile.transfer.device_to_host.curve[0].wall_seconds = 1.000_049e-5;
    profile.round_measurements();
    assert_eq!(profile.global.bytes_per_s, 1.235e12);
    assert_eq!(profile.transfer.device_to_host.curve[0].wall_seconds, 1e-5);
    // Rounded profiles read back exactly.
    assert_eq!(DeviceProfile::from_json(&profile.to_json_pretty()), Ok(profile));
}

#[test]
fn json_round_trips() {
    let profile = fixture();
    assert_eq!(DeviceProfile::from_json(&profile.to_json_pretty()), Ok(profile));
}

#[test]
fn a_device_without_double_has_null_f64() {
    let mut profile = fixture();
    profile.compute.f64_flops = None;
    let text = profile.to_json_pretty();
    assert!(text.contains(r#""f64_flops": null"#), "{text}");
    assert_eq!(DeviceProfile::from_json(&text), Ok(profile));
}

fn error_of(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut json: serde_json::Value =
        serde_json::from_str(&fixture().to_json_pretty()).expect("the fixture is JSON");
    edit(&mut json);
    match DeviceProfile::from_json(&json.to_string()) {
        Ok(_) => "ok".to_owned(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn other_formats_and_fields_are_rejected() {
    expect![[r#"device profile format 3 is not supported (this weft reads formats 1 to 2); measure the device again with `weft calibrate`"#]]
        .assert_eq(&error_of(|json| json["format"] = 3.into()));
    // Format 1 has no operation rates; format 2 must have them.
    expect!["invalid device profile: format 1 has no `operations`"]
        .assert_eq(&error_of(|json| json["format"] = 1.into()));
    expect!["ok"].assert_eq(&error_of(|json| {
        json["format"] = 1.into();
        json.as_object_mut().expect("an object").remove("operations");
    }));
    expect!["invalid device profile: format 2 needs `operations`"].assert_eq(&error_of(|json| {
        json.as_object_mut().expect("an object").remove("operations");
    }));
    expect!["not a device profile: unknown field `warp`, expected one of `bytes_per_s`, `latency_s`, `largest_bytes`, `largest_bytes_per_s`, `copy_curve`, `strided_bytes`, `strided` at line 1 column 1108"]
        .assert_eq(&error_of(|json| json["global"]["warp"] = 32.into()));
    expect!["not a device profile: missing field `launch` at line 1 column 2644"].assert_eq(
        &error_of(|json| {
            json.as_object_mut().expect("an object").remove("launch");
        }),
    );
    expect![[r#"not a device profile: missing field `format` at line 1 column 2"#]]
        .assert_eq(&error_of(|json| *json = serde_json::json!({})));
    assert!(DeviceProfile::from_json("not json").is_err());
}

#[test]
fn impossible_measurements_are_rejected() {
    expect![[r#"invalid device profile: global.bytes_per_s is 0, not a positive number; launch.kernel_s is -1, not a positive number"#]]
        .assert_eq(&error_of(|json| {
            json["global"]["bytes_per_s"] = 0.into();
            json["launch"]["kernel_s"] = (-1).into();
        }));
    expect![[r#"invalid device profile: global.copy_curve[1].bytes is 4096, not above the previous size; local.strided[0].stride is 2, not 1"#]]
        .assert_eq(&error_of(|json| {
            json["global"]["copy_curve"][1]["bytes"] = 4096.into();
            json["local"]["strided"][0]["stride"] = 2.into();
        }));
    expect![[r#"invalid device profile: transfer.device_to_host.curve is empty"#]].assert_eq(
        &error_of(|json| json["transfer"]["device_to_host"]["curve"] = serde_json::json!([])),
    );
}

#[test]
fn load_reports_a_missing_file() {
    let error = DeviceProfile::load(Path::new("/nonexistent/profile.json")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot read the device profile `/nonexistent/profile.json`: "),
        "{error}"
    );
}

fn query<'a>(name: &'a str, vendor: &'a str, platform: &'a str, kind: &'a str) -> DeviceQuery<'a> {
    DeviceQuery { name, vendor, platform, kind }
}

#[test]
fn matching_needs_the_same_name_and_vendor() {
    let profile = fixture();
    let exact = query(" example gpu ", "EXAMPLE CORP", "Other CL", "gpu");
    assert_eq!(profile.matches(&exact), Some(Match::Exact));
    assert_eq!(profile.matches(&query("Example GPU 2", "Example Corp", "Example CL", "gpu")), None);
    assert_eq!(profile.matches(&query("Example GPU", "Other Corp", "Example CL", "gpu")), None);
}

#[test]
fn pocl_cpu_profiles_fit_other_pocl_cpus() {
    let mut profile = fixture();
    profile.device.platform = POCL_PLATFORM.to_owned();
    profile.device.kind = "cpu".to_owned();
    let other_cpu =
        query("pthread-skylake-avx512-Intel Xeon", "GenuineIntel", POCL_PLATFORM, "cpu");
    assert_eq!(profile.matches(&other_cpu), Some(Match::SamePoclCpu));
    let other_platform = query("pthread-skylake", "GenuineIntel", "Intel(R) OpenCL", "cpu");
    assert_eq!(profile.matches(&other_platform), None);
    // A GPU profile never fits a CPU by family.
    assert_eq!(fixture().matches(&other_cpu), None);
    assert!(Match::Exact > Match::SamePoclCpu);
}

#[test]
fn committed_profiles_read_and_are_full_measurements() {
    let profiles = builtin_profiles();
    assert_eq!(profiles.len(), BUILTIN.len());
    for (profile, (file, text)) in profiles.iter().zip(BUILTIN) {
        assert!(!profile.quick, "{file} was measured with --quick");
        assert!(profile.reps >= 10, "{file}: {} reps", profile.reps);
        // Committed in the form `to_json_pretty` writes.
        assert_eq!(&profile.to_json_pretty(), text, "{file} is not in its written form");
    }
}

/// Whether `a` and `b` agree to the precision profiles are written with.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * a.abs().max(b.abs())
}

#[test]
fn committed_fits_are_the_lines_through_their_curves() {
    for profile in builtin_profiles() {
        let name = &profile.device.name;
        let curve: Vec<(f64, f64)> =
            profile.global.copy_curve.iter().map(|s| (s.bytes as f64, s.seconds)).collect();
        let (latency, bandwidth) = fit_latency_bandwidth(&curve);
        assert!(close(latency, profile.global.latency_s), "{name}: latency {latency}");
        assert!(close(bandwidth, profile.global.bytes_per_s), "{name}: bandwidth {bandwidth}");
        let largest = profile.global.copy_curve.last().expect("a curve");
        assert_eq!(profile.global.largest_bytes, largest.bytes);
        assert!(close(profile.global.largest_bytes_per_s, largest.bytes as f64 / largest.seconds));
        for transfer in [&profile.transfer.host_to_device, &profile.transfer.device_to_host] {
            let events: Vec<(f64, f64)> =
                transfer.curve.iter().map(|s| (s.bytes as f64, s.seconds)).collect();
            let walls: Vec<(f64, f64)> =
                transfer.curve.iter().map(|s| (s.bytes as f64, s.wall_seconds)).collect();
            let (latency, bandwidth) = fit_latency_bandwidth(&events);
            assert!(close(latency, transfer.latency_s) && close(bandwidth, transfer.bytes_per_s));
            let (latency, bandwidth) = fit_latency_bandwidth(&walls);
            assert!(close(latency, transfer.wall_latency_s), "{name}: wall latency {latency}");
            assert!(close(bandwidth, transfer.wall_bytes_per_s), "{name}: wall {bandwidth}");
        }
    }
}

#[test]
fn the_fit_goes_through_the_ends() {
    let line = |x: f64| 2e-6 + x / 3e12;
    let samples = [(1e8, line(1e8)), (1e3, line(1e3)), (1e6, line(1e6) / 2.0)];
    let (latency, bandwidth) = fit_latency_bandwidth(&samples);
    assert!(close(latency, 2e-6) && close(bandwidth, 3e12), "{latency} {bandwidth}");
    assert_eq!(fit_latency_bandwidth(&[(1e3, 1e-3), (1e6, 1e-3)]), (0.0, 1e9));
    assert_eq!(fit_latency_bandwidth(&[]), (0.0, 0.0));
}

#[test]
fn default_profiles_follow_the_device() {
    let pocl = builtin_profiles()
        .iter()
        .find(|profile| profile.device.platform == POCL_PLATFORM)
        .expect("a POCL profile is committed");
    let device = &pocl.device;
    let same = query(&device.name, &device.vendor, &device.platform, &device.kind);
    assert_eq!(default_profile_for(&same), Some(pocl));
    let other_cpu = query("pthread-zen5", "AuthenticAMD", POCL_PLATFORM, "cpu");
    assert_eq!(default_profile_for(&other_cpu), Some(pocl));
    assert_eq!(default_profile_for(&query("Unknown GPU", "Nobody", "Nowhere", "gpu")), None);
    let h100 = query("NVIDIA H100 80GB HBM3", "NVIDIA Corporation", "NVIDIA CUDA", "gpu");
    let found = default_profile_for(&h100).expect("the H100's profile is committed");
    assert_eq!((found.device.name.as_str(), found.quick), ("NVIDIA H100 80GB HBM3", false));
    let a100 = query("NVIDIA A100-SXM4-80GB", "NVIDIA Corporation", "NVIDIA CUDA", "gpu");
    assert_eq!(default_profile_for(&a100), None);
}

/// What `weft-runner devices --json` prints on a machine with a GPU and POCL.
const DEVICES: &str = r#"{"platforms":[
  {"platform":0,"name":"NVIDIA CUDA","vendor":"NVIDIA Corporation","version":"OpenCL 3.0 CUDA",
   "devices":[{"device":"0:0","name":"NVIDIA H100 80GB HBM3","vendor":"NVIDIA Corporation","kind":"gpu","default":true}]},
  {"platform":1,"name":"Portable Computing Language","vendor":"The pocl project","version":"OpenCL 3.0 PoCL",
   "devices":[{"device":"1:0","name":"pthread-haswell-AMD EPYC","vendor":"AuthenticAMD","kind":"cpu","default":false}]}
]}"#;

#[test]
fn the_listed_device_is_the_one_asked_for_else_the_default() {
    let id = |spec| listed_device(DEVICES, spec).map(|d| d.id);
    assert_eq!(id(None).as_deref(), Some("0:0"));
    assert_eq!(id(Some("cpu")).as_deref(), Some("1:0"));
    assert_eq!(id(Some("gpu")).as_deref(), Some("0:0"));
    assert_eq!(id(Some("1:0")).as_deref(), Some("1:0"));
    assert_eq!(id(Some("2:0")), None);
    assert_eq!(listed_device("no OpenCL platform", None), None);
    let cpu = listed_device(DEVICES, Some("cpu")).unwrap();
    assert_eq!(cpu.platform, "Portable Computing Language");
    // Its committed profile: POCL's, for another CPU too.
    let profile = default_profile_for(&cpu.query()).expect("POCL's profile fits");
    assert_eq!(profile.device.kind, "cpu");
}
