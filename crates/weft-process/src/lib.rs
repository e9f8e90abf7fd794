//! Child processes that never outlive their purpose. [`spawn_with_timeout`] starts a
//! command as the leader of its own process group, feeds it its input, collects its
//! output, and kills the whole group (the command and anything it started) when the
//! time limit passes, when the caller cancels, and when the command ends (a grandchild
//! that still holds the output pipes would otherwise keep the caller waiting). A child
//! that calls [`die_with_parent`] first thing is killed by the kernel when the process
//! that started it through [`spawn_with_timeout`] dies, even by `kill -9`.
//!
//! Every Weft process that starts another (`weft run` starting `weft-runner`, the
//! language server starting runs) goes through this crate, and finds `weft-runner`
//! through [`runner_path`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt as _;

/// The environment variable through which [`spawn_with_timeout`] tells a child its
/// parent's process id (a protocol between Weft's own processes, not a setting).
const PARENT_PID_VAR: &str = "WEFT_PARENT_PID";

/// How often a run that can be cancelled looks at its cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(10);

/// How a process run by [`spawn_with_timeout`] ended.
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

/// What a process run by [`spawn_with_timeout`] did.
#[derive(Debug, Clone)]
pub struct Finished {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    /// Empty when [`Spawn::show_stderr`] passed it through.
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

/// How [`spawn_with_timeout`] runs a command.
#[derive(Debug, Clone, Copy)]
pub struct Spawn<'a> {
    /// Its input.
    pub stdin: &'a [u8],
    /// How long it may run (`Duration::MAX`: no limit).
    pub limit: Duration,
    /// Set by the caller to stop it.
    pub cancel: Option<&'a AtomicBool>,
    /// Whether its stderr goes straight to this process's stderr (progress lines a user
    /// watches) instead of being collected.
    pub show_stderr: bool,
}

impl Spawn<'_> {
    /// No input, no cancellation, stderr collected.
    pub fn limited(limit: Duration) -> Spawn<'static> {
        Spawn { stdin: &[], limit, cancel: None, show_stderr: false }
    }
}

/// Runs `command` as [`Spawn`] says until it ends, the time limit passes or the caller
/// cancels, and kills its process group in every case. Its stdin and stdout (and
/// stderr unless shown) are replaced by pipes. An error only when it cannot be started.
pub fn spawn_with_timeout(command: &mut Command, how: Spawn<'_>) -> std::io::Result<Finished> {
    use std::os::unix::process::ExitStatusExt as _;
    let start = Instant::now();
    let stderr = if how.show_stderr { Stdio::inherit() } else { Stdio::piped() };
    let mut child =
        own_group(command).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(stderr).spawn()?;
    let stdin = how.stdin.to_vec();
    let writer = child.stdin.take().map(|mut pipe| {
        std::thread::spawn(move || {
            // A child that does not read its input must not block the caller.
            let _ = pipe.write_all(&stdin);
        })
    });
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(read_all);
    let cancelled = || how.cancel.is_some_and(|c| c.load(Ordering::Relaxed));
    let ended = loop {
        let left = how.limit.saturating_sub(start.elapsed());
        // Without a flag to watch, sleep until the child ends or the limit passes.
        let wait = if how.cancel.is_some() { left.min(CANCEL_POLL) } else { left };
        match child.wait_timeout(wait) {
            Ok(Some(status)) => {
                break match (status.code(), status.signal()) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(signal)) => Ended::Signalled(signal),
                    (None, None) => Ended::Signalled(0),
                };
            }
            Ok(None) if cancelled() => break Ended::Cancelled,
            Ok(None) if start.elapsed() >= how.limit => break Ended::TimedOut,
            Ok(None) => {}
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

/// A child that answers requests one line at a time (`weft-runner trials`), in its own
/// process group, killed with its group when dropped or when an answer is late.
pub struct LineSession {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
}

/// Why a [`LineSession`] gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoAnswer {
    /// The time limit passed; the session's group was killed.
    TimedOut,
    /// The child closed its output (it ended); what it wrote on stderr.
    Ended(String),
}

impl LineSession {
    /// Starts `command` with piped stdin and stdout; stderr is collected for
    /// [`NoAnswer::Ended`].
    pub fn start(command: &mut Command) -> std::io::Result<LineSession> {
        let mut child = own_group(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("invariant: stdin is piped");
        let stdout = child.stdout.take().expect("invariant: stdout is piped");
        let stderr = child.stderr.take().map(read_all);
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(LineSession { child, stdin, lines, stderr })
    }

    /// Writes `request` and a newline, and waits up to `limit` for one line of answer.
    /// After [`NoAnswer`] the session is dead (its group killed): start a new one.
    pub fn request(&mut self, request: &str, limit: Duration) -> Result<String, NoAnswer> {
        let written = self
            .stdin
            .write_all(format!("{request}\n").as_bytes())
            .and_then(|()| self.stdin.flush());
        let answer = match written {
            Ok(()) => self.lines.recv_timeout(limit),
            Err(_) => Err(std::sync::mpsc::RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(line) => Ok(line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                self.kill();
                Err(NoAnswer::TimedOut)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                self.kill();
                let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
                Err(NoAnswer::Ended(String::from_utf8_lossy(&stderr).into_owned()))
            }
        }
    }

    fn kill(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LineSession {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where `weft-runner` is: `configured` (a setting, or `WEFT_RUNNER` as the binaries
/// read it), else beside this executable, else on PATH.
pub fn runner_path(configured: Option<&Path>) -> PathBuf {
    if let Some(path) = configured {
        return path.to_owned();
    }
    let name = format!("weft-runner{}", std::env::consts::EXE_SUFFIX);
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        let candidate = dir.join(&name);
        if candidate.exists() {
            return candidate;
        }
    }
    PathBuf::from(name)
}

/// Makes `command` start as the leader of its own process group, told its parent's
/// process id (for [`die_with_parent`]).
fn own_group(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0).env(PARENT_PID_VAR, std::process::id().to_string())
}

/// Kills the process group that the child `pid`, started through [`own_group`], leads.
fn kill_group(pid: u32) {
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
/// [`spawn_with_timeout`] dies (Linux), and exits at once if that process has already
/// gone. Does nothing in a process not started through [`spawn_with_timeout`].
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
