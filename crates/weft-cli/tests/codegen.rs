//! The code generator from the GPU IR through the real binary, and the memory it reads
//! (`weft dump --ir gpu-mem`), on the machine's OpenCL device.

use std::path::PathBuf;
use std::process::Output;

mod common;

fn weft(args: &[&str]) -> Output {
    common::weft_with_runner().args(args).output().expect("the weft binary runs")
}

fn scratch(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("weft-codegen-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("file written");
    path.to_string_lossy().into_owned()
}

const ROWS: &str = r"-- ==
-- input { [[1f32, 2f32], [3f32, 5f32]] }
-- output { [[0.3333333f32, 0.6666667f32], [0.375f32, 0.625f32]] }
-- random input { [40][300]f32 in 1..2 }
entry normalise (xss: [n][m]f32) : [n][m]f32 =
  map (\xs -> let s = reduce (+) 0 xs in map (\x -> x / s) xs) xss

-- ==
-- input { [3i64, 1i64, 4i64] }
-- output { [3i64, 0i64, 6i64] }
entry triangles (ns: [k]i64) : [k]i64 = map (\n -> reduce (+) 0 (iota n)) ns
";

#[test]
fn the_gpu_ir_code_generator_passes_the_test_block() {
    let file = scratch("rows.weft", ROWS);
    let out = weft(&["test", "--backend", "opencl", "--device", "cpu", &file]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 passed, 0 failed"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    // The same run that `weft run` makes.
    let out = common::weft_with_runner()
        .args(["run", "--backend", "opencl", "--device", "cpu", "--entry", "triangles", &file])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().expect("stdin").write_all(b"[4i64, 0i64]")?;
            child.wait_with_output()
        })
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[6i64, 0i64]", "{out:?}");
}

#[test]
fn dump_gpu_mem_shows_every_arrays_block_and_where_it_lives() {
    let file = scratch("rows_mem.weft", ROWS);
    let out = weft(&["dump", "--ir", "gpu-mem", &file]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // Inputs, results allocated by the host, and per-work-item arrays.
    assert!(text.contains("(xss_"), "{text}");
    assert!(
        text.contains("@ mem_0 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}"),
        "{text}"
    );
    assert!(text.contains(": global = alloc"), "{text}");
}

#[test]
fn the_global_options_may_come_before_the_subcommand() {
    // `--tuning` and `--no-tuning` are read on either side of the subcommand; `--check`
    // takes every word after it as a path.
    let file = scratch("before.weft", ROWS);
    let out = weft(&["--no-tuning", "test", "--backend", "opencl", "--device", "cpu", &file]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 passed, 0 failed"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let out = weft(&["--no-tuning", "--check", &file, "test"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`test`"));
}
