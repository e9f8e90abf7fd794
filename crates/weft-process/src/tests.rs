use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::{Ended, Spawn, spawn_with_timeout};

#[expect(clippy::disallowed_methods, reason = "the tests start shell commands")]
fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    command
}

/// Whether a process with this id exists (and is not a zombie).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|rest| rest.starts_with('Z')))
}

#[test]
fn output_status_and_input() {
    let done = spawn_with_timeout(
        &mut sh("cat; echo err >&2; exit 3"),
        Spawn { stdin: b"in", ..Spawn::limited(Duration::MAX) },
    )
    .expect("sh starts");
    assert_eq!(done.ended, Ended::Exited(3));
    assert_eq!(done.stdout_text(), "in");
    assert_eq!(done.stderr_text(), "err\n");
    let killed = spawn_with_timeout(&mut sh("kill -9 $$"), Spawn::limited(Duration::MAX))
        .expect("sh starts");
    assert_eq!(killed.ended, Ended::Signalled(9));
}

/// A grandchild that holds the pipes once kept the caller past the time limit.
#[test]
fn the_time_limit_kills_the_group_and_its_pipe_holders() {
    let start = Instant::now();
    let done = spawn_with_timeout(
        &mut sh("sleep 1000 & echo $!; wait"),
        Spawn::limited(Duration::from_millis(300)),
    )
    .expect("sh starts");
    assert_eq!(done.ended, Ended::TimedOut);
    assert!(start.elapsed() < Duration::from_secs(100), "the caller waited for the grandchild");
    let grandchild = done.stdout_text();
    assert!(!grandchild.trim().is_empty());
    // The kill is asynchronous: allow the kernel a moment to reap.
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        !alive(&grandchild)
    });
    assert!(gone, "the grandchild {grandchild} survived");
}

#[test]
fn a_grandchild_left_behind_is_killed_when_the_command_ends() {
    let done = spawn_with_timeout(
        &mut sh("sleep 1000 >/dev/null 2>&1 </dev/null & echo $!"),
        Spawn::limited(Duration::MAX),
    )
    .expect("sh starts");
    assert_eq!(done.ended, Ended::Exited(0));
    let grandchild = done.stdout_text();
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        !alive(&grandchild)
    });
    assert!(gone, "the grandchild {grandchild} survived");
}

#[test]
fn cancelling_kills_the_group() {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let done = spawn_with_timeout(
        &mut sh("sleep 1000"),
        Spawn { cancel: Some(&cancel), ..Spawn::limited(Duration::MAX) },
    )
    .expect("sh starts");
    canceller.join().expect("the canceller ends");
    assert_eq!(done.ended, Ended::Cancelled);
}

/// `weft calibrate` shows the runner's progress lines as they come: its stderr is not
/// collected, and its stdout still is.
#[test]
fn shown_stderr_is_not_collected() {
    let done = spawn_with_timeout(
        &mut sh("echo out; echo progress >&2"),
        Spawn { show_stderr: true, ..Spawn::limited(Duration::MAX) },
    )
    .expect("sh starts");
    assert_eq!(done.ended, Ended::Exited(0));
    assert_eq!(done.stdout_text(), "out\n");
    assert_eq!(done.stderr_text(), "");
}

#[test]
fn the_configured_runner_comes_first() {
    let configured = std::path::Path::new("/opt/weft/bin/weft-runner");
    assert_eq!(super::runner_path(Some(configured)), configured);
}

#[test]
fn a_line_session_answers_requests_in_order_and_dies_when_late() {
    use super::{LineSession, NoAnswer};
    let mut session =
        LineSession::start(&mut sh("while read x; do echo \"got $x\"; done")).expect("sh starts");
    assert_eq!(session.request("a", Duration::from_secs(20)), Ok("got a".to_owned()));
    assert_eq!(session.request("b", Duration::from_secs(20)), Ok("got b".to_owned()));
    let mut slow = LineSession::start(&mut sh("read x; echo $$; sleep 1000")).expect("sh starts");
    let pid = slow.request("x", Duration::from_secs(20)).expect("the pid comes first");
    assert_eq!(slow.request("y", Duration::from_millis(200)), Err(NoAnswer::TimedOut));
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        !alive(&pid)
    });
    assert!(gone, "the late child {pid} survived");
    let mut ended = LineSession::start(&mut sh("echo oops >&2")).expect("sh starts");
    assert_eq!(
        ended.request("x", Duration::from_secs(20)),
        Err(NoAnswer::Ended("oops\n".to_owned()))
    );
}
