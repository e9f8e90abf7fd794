//! `weft check` on hostile files (deep nesting, megabyte lines, NUL bytes, invalid
//! UTF-8, unterminated strings) exits 0 or 1 with diagnostics, never a crash (a
//! signal, or the exit code 101 of a panic).

#![expect(clippy::unwrap_used, reason = "test setup fails loudly")]

use std::path::{Path, PathBuf};

mod common;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `weft check` on `file` in `dir`; returns the exit code and stdout.
fn weft_check(dir: &Path, file: &str) -> (i32, String) {
    let output = common::weft()
        .current_dir(dir)
        .args(["check", file])
        .output()
        .expect("the weft binary runs");
    let code = output.status.code();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(code.is_some(), "{file}: killed by a signal ({:?}); stderr: {stderr}", output.status);
    let code = code.unwrap();
    assert!(code == 0 || code == 1, "{file}: exit code {code}; stderr: {stderr}");
    (code, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn hostile_files_exit_0_or_1() {
    const DEPTH: usize = 100_000;
    const MB: usize = 1 << 20;
    let dir = temp_dir("robustness");
    let cases: Vec<(&str, Vec<u8>, i32)> = vec![
        (
            "parens.weft",
            format!("def x : i32 = {}1{}\n", "(".repeat(DEPTH), ")".repeat(DEPTH)).into(),
            0,
        ),
        ("lets.weft", format!("def x : i32 = {}x\n", "let x = 1 in ".repeat(DEPTH)).into(), 0),
        (
            "lambdas.weft",
            format!("def x : i32 = ({}x){}\n", "\\x -> ".repeat(DEPTH - 1), " 1".repeat(DEPTH - 1))
                .into(),
            0,
        ),
        (
            "too_deep.weft",
            format!("def x : i32 = {}1{}\n", "(".repeat(DEPTH + 1), ")".repeat(DEPTH + 1)).into(),
            1,
        ),
        ("long_sum.weft", format!("def x : i32 = 1{}\n", " + 1".repeat(DEPTH - 1)).into(), 0),
        // A left-nested chain nests as deep as its length for every later phase: 2.5
        // million terms once overflowed the stack after 13 s and 6 GB.
        ("long_chain.weft", format!("def x : i32 = 1{}\n", " + 1".repeat(2_500_000)).into(), 1),
        ("long_index.weft", format!("def x = [1][0]{}\n", "[0]".repeat(DEPTH + 1)).into(), 1),
        ("long_garbage.weft", "+*)([\\".repeat(MB / 6).into(), 1),
        ("nul.weft", b"def x : i32 = 1\0\0\ndef y : i32 = 2\n".to_vec(), 1),
        ("invalid_utf8.weft", b"def x : i32 = \xff\xfe 1\n".to_vec(), 1),
        ("unterminated.weft", b"import \"lib\ndef x : i32 = \"abc".to_vec(), 1),
    ];
    for (name, bytes, expected) in cases {
        std::fs::write(dir.join(name), bytes).unwrap();
        let (code, stdout) = weft_check(&dir, name);
        assert_eq!(code, expected, "{name}:\n{}", stdout.chars().take(2000).collect::<String>());
        if expected == 1 {
            assert!(stdout.contains("error"), "{name} prints its diagnostics:\n{stdout}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Under `ulimit -v 5000000` every command panicked: each analysis thread asked for a
/// 4 GiB stack. Threads now take the largest stack the system grants.
#[test]
#[expect(clippy::disallowed_methods, reason = "the test runs the real binary under a limit")]
fn commands_run_with_limited_address_space() {
    let dir = temp_dir("ulimit");
    std::fs::write(dir.join("a.weft"), "entry e (x: i32) : i32 = x + 1\n").unwrap();
    for (args, stdin) in
        [("check a.weft", ""), ("run --backend interp a.weft", "1i32"), ("fmt --check a.weft", "")]
    {
        let script = format!("ulimit -v 5000000 && echo '{stdin}' | \"$0\" {args}");
        let output = std::process::Command::new("sh")
            .current_dir(&dir)
            .args(["-c", &script, env!("CARGO_BIN_EXE_weft")])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A Latin-1 byte was an error for `check`, accepted by `run` and an I/O error for
/// `fmt`: every command now reports the invalid UTF-8 at the same position.
#[test]
fn invalid_utf8_is_the_same_error_for_every_command() {
    let dir = temp_dir("latin1");
    std::fs::write(dir.join("latin.weft"), b"entry e (x: i32) : i32 = x + 1 -- caf\xe9\n").unwrap();
    let weft = |args: &[&str]| {
        let output = common::weft()
            .current_dir(&dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.code(), text)
    };
    let (code, text) = weft(&["check", "latin.weft"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("error[invalid-utf8]") && text.contains("latin.weft:1:38"), "{text}");
    let expected = "latin.weft:1:38: the file is not valid UTF-8 (see `weft check`)";
    for args in [
        &["run", "--backend", "interp", "latin.weft", "--input", "1i32"][..],
        &["test", "latin.weft"],
        &["fmt", "--check", "latin.weft"],
        &["fmt", "latin.weft"],
    ] {
        let (code, text) = weft(args);
        assert!(code == Some(1) || code == Some(2), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
    }
    // `fmt` left it alone.
    let bytes = std::fs::read(dir.join("latin.weft")).unwrap();
    assert!(bytes.ends_with(b"caf\xe9\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}
