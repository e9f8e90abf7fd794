//! Running an entry for the editor's "Run": spawns `weft run FILE --entry NAME` (the
//! current executable) with the test block's input on stdin and a time limit. The
//! only module of the server that starts processes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The result of a run, in the shape the editor clients expect (editors/README.md).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunResult {
    pub(crate) ok: bool,
    pub(crate) entry: String,
    pub(crate) values: Vec<String>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) message: String,
    pub(crate) time_ms: u64,
}

/// Runs `entry` of the file at `file`; never panics, errors become `ok: false`.
pub(crate) fn run_entry(
    exe: &Path,
    file: &Path,
    entry: &str,
    input: Option<&str>,
    timeout: Duration,
) -> RunResult {
    let start = Instant::now();
    let mut result = RunResult {
        ok: false,
        entry: entry.to_owned(),
        values: Vec::new(),
        stdout: String::new(),
        stderr: String::new(),
        message: String::new(),
        time_ms: 0,
    };
    let child = spawn(exe, file, entry);
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            result.message = format!("cannot start `{} run`: {error}", exe.display());
            return result;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.unwrap_or("").to_owned();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let stdout = child.stdout.take().map(read_in_background);
    let stderr = child.stderr.take().map(read_in_background);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => {
                result.message = format!("waiting for `weft run` failed: {error}");
                let _ = child.kill();
                break None;
            }
        }
    };
    result.time_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    result.stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    result.stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    match status {
        Some(status) if status.success() => {
            result.ok = true;
            result.values = result.stdout.lines().map(str::to_owned).collect();
            result.message = format!("`{entry}` finished in {} ms", result.time_ms);
        }
        Some(status) => {
            let first_line = result.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            result.message = format!("`weft run` failed ({status}): {first_line}");
        }
        None if result.message.is_empty() => {
            result.message = format!("`{entry}` was stopped after {} s", timeout.as_secs());
        }
        None => {}
    }
    result
}

#[expect(clippy::disallowed_methods, reason = "the runner module is the one that spawns processes")]
fn spawn(exe: &Path, file: &Path, entry: &str) -> std::io::Result<std::process::Child> {
    std::process::Command::new(exe)
        .arg("run")
        .arg(file)
        .arg("--entry")
        .arg(entry)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The `weft` executable to run: this process's own.
pub(crate) fn current_exe() -> Option<PathBuf> {
    std::env::current_exe().ok()
}
