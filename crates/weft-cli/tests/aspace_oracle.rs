//! An external oracle for address-space inference (seed 000's digest, test idea 10):
//! every example's OpenCL, generated for OpenCL C 1.2 (clones per address space) and
//! for 2.0 (generic pointers), is type-checked by clang with the matching `-cl-std`,
//! which rejects any pointer passed into a parameter of another address space. And
//! code with a generic pointer (a function called with local and global arrays, as a
//! 2.0 program may have) is rejected as 1.2, so the check can fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn clang() -> Option<PathBuf> {
    ["clang-15", "clang-16", "clang-17", "clang-18", "clang"].into_iter().find_map(|name| {
        let ok = command(name).arg("--version").output().is_ok_and(|o| o.status.success());
        ok.then(|| PathBuf::from(name))
    })
}

#[expect(clippy::disallowed_methods, reason = "the test runs the compiler and clang")]
fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

fn build(file: &Path, out: &Path, version: &str) {
    let output = common::weft()
        .args(["build", "--opencl", version, "-o"])
        .arg(out)
        .arg(file)
        .output()
        .expect("weft runs");
    // Entries the back end does not support are reported and skipped; what matters
    // here is that everything written type-checks.
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "weft build {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// clang's errors for `cl` as OpenCL C `version`, or `None` when it type-checks.
fn clang_errors(clang: &Path, cl: &Path, version: &str) -> Option<String> {
    let output = command(clang)
        .args(["-x", "cl", &format!("-cl-std=CL{version}"), "-Xclang", "-finclude-default-header"])
        .args(["-fsyntax-only", "-Wno-everything"])
        .arg(cl)
        .output()
        .expect("clang runs");
    (!output.status.success()).then(|| String::from_utf8_lossy(&output.stderr).into_owned())
}

fn cl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "cl"));
    files.sort();
    files
}

#[test]
fn every_example_type_checks_with_clang_in_both_opencl_versions() {
    let Some(clang) = clang() else {
        eprintln!("skipped: no clang found (Debian: apt-get install clang-15)");
        return;
    };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let tmp = std::env::temp_dir().join(format!("weft-aspace-oracle-{}", std::process::id()));
    let mut checked = 0;
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("examples/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "weft"))
        .collect();
    files.sort();
    for file in &files {
        for version in ["1.2", "2.0"] {
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("x");
            let out = tmp.join(format!("{stem}-{version}"));
            build(file, &out, version);
            for cl in cl_files(&out) {
                checked += 1;
                if let Some(errors) = clang_errors(&clang, &cl, version) {
                    failures.push(format!("{} (OpenCL C {version}):\n{errors}", cl.display()));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(checked > 100, "only {checked} OpenCL files were generated");
    assert!(failures.is_empty(), "clang rejected:\n{}", failures.join("\n"));
}

#[test]
fn generic_code_is_rejected_as_opencl_1_2_so_the_oracle_can_fail() {
    let Some(clang) = clang() else {
        eprintln!("skipped: no clang found (Debian: apt-get install clang-15)");
        return;
    };
    let tmp = std::env::temp_dir().join(format!("weft-aspace-negative-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    // A function whose parameter is a generic pointer, called with a local and a global
    // array: valid OpenCL C 2.0, rejected as 1.2 (where an unqualified pointer is
    // private). The compiler inlines every call (docs/architecture.md), so it writes
    // no such function itself; this is the code the check must reject if it did.
    let cl = tmp.join("generic.cl");
    std::fs::write(
        &cl,
        "float first(const float* xs) { return xs[0]; }\n\
         __kernel void k(__global float* out, __global const float* g, __local float* l) {\n\
         \x20 l[0] = g[1];\n\
         \x20 out[0] = first(g) + first(l);\n\
         }\n",
    )
    .expect("write");
    assert!(clang_errors(&clang, &cl, "2.0").is_none());
    let errors = clang_errors(&clang, &cl, "1.2").expect("1.2 rejects generic pointers");
    assert!(errors.contains("address space"), "{errors}");
    // The compiler's own program for such a def (inlined at both address spaces)
    // type-checks as 1.2.
    let file = tmp.join("rows.weft");
    std::fs::write(
        &file,
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = loop acc = 0f32 for i < n do acc + xs[i] * ys[i]\n\
         entry rows (a: [n][m]f32) (v: [m]f32) : [n]f32 =\n  \
         map@group (\\row -> let t = to_local row in dot t v + dot row v) a\n",
    )
    .expect("write");
    let out12 = tmp.join("v12");
    build(&file, &out12, "1.2");
    let cl = cl_files(&out12).pop().expect("one .cl file");
    assert!(clang_errors(&clang, &cl, "1.2").is_none());
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn the_runner_recognises_opencl_2_0_programs() {
    // POCL (the CI device) has no generic address space: the runner must say so
    // instead of building the program as 1.2.
    let _ = common::runner();
    let tmp = std::env::temp_dir().join(format!("weft-aspace-runner-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let file = tmp.join("rows.weft");
    std::fs::write(
        &file,
        // Any program: `--opencl 2.0` marks the OpenCL text as 2.0.
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = loop acc = 0f32 for i < n do acc + xs[i] * ys[i]\n\
         entry rows (a: [n][m]f32) (v: [m]f32) : [n]f32 = map (\\row -> dot row v) a\n",
    )
    .expect("write");
    let mut child = common::weft()
        .args(["run", "--opencl", "2.0", "--device", "cpu"])
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("weft runs");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(b"[[1f32, 2f32]] [3f32, 4f32]\n").expect("write inputs");
    }
    let output = child.wait_with_output().expect("weft ends");
    let _ = std::fs::remove_dir_all(&tmp);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Either the device supports the generic address space and computes the
    // result, or the runner names the version problem.
    assert!(
        stdout.contains("11") || stderr.contains("compile with `--opencl 1.2`"),
        "unexpected: {stdout} {stderr}"
    );
}
