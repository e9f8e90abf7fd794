//! Child processes that never outlive their purpose. [`run`] starts a command as the
//! leader of its own process group, feeds it its input, collects its output, and kills
//! the whole group (the command and anything it started) when the time limit passes,
//! when the caller cancels, and when the command ends (a grandchild that still holds the
//! output pipes would otherwise keep the caller waiting). A child that calls
//! [`die_with_parent`] first thing is killed by the kernel when the process that
//! started it through [`run`] dies, even by `kill -9`.
//!
//! Every Weft process that starts another (`weft run` starting `weft-runner`, the
//! language server starting runs) goes through this crate.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The environment variable through which [`run`] tells a child its parent's process id.
const PARENT_PID_VAR: &str = "WEFT_PARENT_PID";

/// How a process run by [`run`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (not one this crate sent).
    Signalled(i32),
    /// It ran past the time limit; its group was killed.
    TimedOut,
    /// The caller cancelled it; its group was killed.
    Cancelled,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exited(code) => write!(f, "exited with status {code}"),
            Ended::Signalled(signal) => write!(f, "was killed by signal {signal}"),
            Ended::TimedOut => f.write_str("ran past its time limit and was stopped"),
            Ended::Cancelled => f.write_str("was cancelled"),
        }
    }
}

/// What a process run by [`run`] did.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

impl Finished {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs `command` with `stdin` as its input until it ends, `limit` passes or `cancel`
/// becomes true, and kills its process group in every case. Its stdin, stdout and
/// stderr are replaced by pipes. An error only when it cannot be started.
pub fn run(
    command: &mut Command,
    stdin: Vec<u8>,
    limit: Duration,
    cancel: Option<&AtomicBool>,
) -> std::io::Result<Finished> {
    use std::os::unix::process::ExitStatusExt as _;
    let start = Instant::now();
    let mut child = own_group(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let writer = child.stdin.take().map(|mut pipe| {
        std::thread::spawn(move || {
            // A child that does not read its input must not block the caller.
            let _ = pipe.write_all(&stdin);
        })
    });
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(read_all);
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                break match (status.code(), status.signal()) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(signal)) => Ended::Signalled(signal),
                    (None, None) => Ended::Signalled(0),
                };
            }
            Ok(None) if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) => {
                break Ended::Cancelled;
            }
            Ok(None) if start.elapsed() >= limit => break Ended::TimedOut,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break Ended::Cancelled,
        }
    };
    // Whatever ended the run, nothing the child started may go on (or keep the pipes
    // open, which would block the readers below).
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let stdout = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(Finished { ended, stdout, stderr, elapsed: start.elapsed() })
}

/// Makes `command` start as the leader of its own process group, told its parent's
/// process id (for [`die_with_parent`]). [`run`] does this; a caller that must stream a
/// child's output itself does it, and calls [`kill_group`] with the child's id when it
/// is done with it.
pub fn own_group(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0).env(PARENT_PID_VAR, std::process::id().to_string())
}

/// Kills the process group that the child `pid`, started through [`own_group`], leads.
pub fn kill_group(pid: u32) {
    // The child leads its own group: the group's id is its process id.
    if let Some(group) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Asks the kernel to kill this process when the process that started it through
/// [`run`] dies (Linux), and exits at once if that process has already gone. Does
/// nothing in a process not started through [`run`].
pub fn die_with_parent() {
    let Some(parent) = std::env::var(PARENT_PID_VAR).ok().and_then(|p| p.parse::<i32>().ok())
    else {
        return;
    };
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    // The parent may have died before the request above: then this process has a new
    // parent, and nobody waits for its result.
    if rustix::process::getppid().map(rustix::process::Pid::as_raw_nonzero).map(|p| p.get())
        != Some(parent)
    {
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests;
