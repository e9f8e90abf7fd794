//! Helpers shared by the CLI tests: the `weft` command, in an environment of the
//! tests' own, and the `weft-runner` binary that `weft run`, `weft test --backend
//! opencl` and `weft bench` spawn.
//!
//! Cargo builds other packages' binaries only for their own tests (a dev-dependency
//! does not build them), so `cargo test --workspace` has built it by now but
//! `cargo test -p weft-cli` may not have: [`runner`] looks for it beside `weft` and,
//! when it is missing, builds it with `cargo build -p weft-runtime --bin weft-runner`
//! in the same profile.

#![allow(dead_code, reason = "each test file uses part of the helpers")]

use std::path::{Path, PathBuf};

/// The `weft` binary, without any `WEFT_*` variable of the shell that runs the tests
/// (a developer's `WEFT_STRATEGY` or `WEFT_DEVICE` must not change what they see), and
/// without colours.
#[expect(clippy::disallowed_methods, reason = "the tests run the real binary")]
pub(crate) fn weft() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_weft"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("WEFT_") {
            command.env_remove(name);
        }
    }
    command.env("NO_COLOR", "1");
    command
}

/// [`weft`] with the runner beside it and POCL's kernel cache in `target/` (or where
/// `POCL_CACHE_DIR` says), for commands that run OpenCL.
pub(crate) fn weft_with_runner() -> std::process::Command {
    let pocl_cache = std::env::var_os("POCL_CACHE_DIR")
        .map_or_else(|| profile_dir().join("../pocl-cache"), PathBuf::from);
    let mut command = weft();
    command.env("WEFT_RUNNER", runner()).env("POCL_CACHE_DIR", pocl_cache);
    command
}

/// `target/<profile>`, where Cargo put `weft`.
pub(crate) fn profile_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_weft")).parent().expect("the binary is in a directory").into()
}

/// The `weft-runner` binary beside `weft`, built first when missing.
#[expect(clippy::disallowed_methods, reason = "the test builds the runner binary")]
pub(crate) fn runner() -> PathBuf {
    let dir = profile_dir();
    let runner = dir.join(format!("weft-runner{}", std::env::consts::EXE_SUFFIX));
    if !runner.exists() {
        let profile = match dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev".to_owned(),
            Some(other) => other.to_owned(),
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "-p", "weft-runtime", "--bin", "weft-runner", "--profile", &profile])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "`cargo build -p weft-runtime` failed");
    }
    assert!(runner.exists(), "no `{}` after building it", runner.display());
    runner
}
