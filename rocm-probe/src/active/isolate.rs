//! Each library of the active probe in a process of its own. ROCr and HIP are C++ libraries that
//! abort on an internal assertion (Debian's ROCr 5.2 is built with them enabled) and can crash on
//! a broken machine: run in the probe's own process, that would end the report exactly when it
//! is needed. So the probe starts itself again with [`CHILD_ARG`] and one [`Stage`]; the child
//! loads the library, answers with one line of JSON on stdout (after [`MARK`], so that anything
//! the library prints is ignored) and exits. The parent waits a bounded time and turns a signal,
//! an exit without an answer or a timeout into a [`Crash`], with the end of the child's stderr
//! (where an assertion says what failed).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::thunk::ThunkLibrary;
use super::{ActiveOptions, Crash, DispatchResult, HipResult, RocrResult, ThunkResult};

/// The first argument that makes the `rocm-probe` binary run one stage and nothing else.
pub const CHILD_ARG: &str = "__rocm-probe-active-stage";
/// What precedes the answer on the child's stdout.
pub const MARK: &str = "ROCM-PROBE-STAGE-RESULT:";
/// How much of the child's stdout is read (its answer is a few KiB; a library may print more).
const MAX_STDOUT: u64 = 4 << 20;
/// How much of the end of the child's stderr is kept as evidence.
const STDERR_TAIL: usize = 2048;
/// How long a stage may take before its process is killed: ROCr's init on a machine with many
/// GPUs takes seconds, a dispatch at most its own timeout per GPU.
pub const STAGE_LIMIT: Duration = Duration::from_secs(120);

/// One library to load and ask, in the child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// libhsakmt at `path`, shown as `shown`.
    Thunk {
        /// What to load.
        path: PathBuf,
        /// What to call it.
        shown: String,
    },
    /// ROCr at `path`, with the dispatch options.
    Rocr {
        /// What to load.
        path: PathBuf,
        /// Whether to dispatch a barrier packet per GPU.
        dispatch: bool,
        /// How long a dispatch may take.
        dispatch_timeout_ms: Option<u64>,
    },
    /// HIP at `path`.
    Hip {
        /// What to load.
        path: PathBuf,
    },
}

/// What a stage answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    /// libhsakmt's.
    Thunk(ThunkResult),
    /// ROCr's, and the dispatches'.
    Rocr(RocrResult, Option<Vec<DispatchResult>>),
    /// HIP's.
    Hip(HipResult),
}

/// Runs a stage in this process (what the child does, and what a caller without a binary to
/// start does).
pub fn run_here(stage: Stage) -> Answer {
    match stage {
        Stage::Thunk { path, shown } => {
            Answer::Thunk(super::thunk::probe(ThunkLibrary::Load { path, shown }))
        }
        Stage::Rocr {
            path,
            dispatch,
            dispatch_timeout_ms,
        } => {
            let options = ActiveOptions {
                dispatch,
                dispatch_timeout_ms,
                ..ActiveOptions::default()
            };
            let (r, d) = super::rocr::probe(Ok(path), &options);
            Answer::Rocr(r, d)
        }
        Stage::Hip { path } => Answer::Hip(super::hip::probe(Ok(path))),
    }
}

/// The child's whole work: the stage from its argument, the answer as one marked line. Returns
/// the process's exit status.
pub fn child_main(stage_json: &str, out: &mut impl std::io::Write) -> u8 {
    let Ok(stage) = serde_json::from_str::<Stage>(stage_json) else {
        return 2;
    };
    let answer = run_here(stage);
    match serde_json::to_string(&answer) {
        Ok(json)
            if writeln!(out, "{MARK}{json}")
                .and_then(|()| out.flush())
                .is_ok() =>
        {
            0
        }
        _ => 2,
    }
}

/// Runs a stage in a child process started from `exe` (the `rocm-probe` binary).
pub fn run_in_child(exe: &Path, stage: &Stage) -> Result<Answer, Crash> {
    run_in_child_within(exe, stage, STAGE_LIMIT)
}

fn run_in_child_within(exe: &Path, stage: &Stage, limit: Duration) -> Result<Answer, Crash> {
    let crash = |stderr: Option<String>| Crash {
        stderr,
        ..Crash::default()
    };
    let json = serde_json::to_string(stage).map_err(|_| crash(None))?;
    let mut child = Command::new(exe)
        .arg(CHILD_ARG)
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| crash(Some(e.to_string())))?;
    // Both pipes are drained while the child runs, so that a chatty library cannot block on a
    // full pipe; each reader is bounded.
    let stdout = child.stdout.take().map(|o| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = o.take(MAX_STDOUT).read_to_string(&mut text);
            text
        })
    });
    let stderr = child.stderr.take().map(|e| {
        std::thread::spawn(move || {
            let mut tail: Vec<u8> = Vec::new();
            let mut buf = [0u8; 4096];
            let mut e = e;
            while let Ok(n) = e.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 2 * STDERR_TAIL {
                    tail.drain(..tail.len() - STDERR_TAIL);
                }
            }
            tail
        })
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < limit => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let err = tail_text(&err);
    let Some(status) = status else {
        return Err(Crash {
            timed_out: true,
            stderr: err,
            ..Crash::default()
        });
    };
    if let Some(answer) = out
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(MARK))
        .and_then(|json| serde_json::from_str::<Answer>(json).ok())
        .filter(|_| status.success())
    {
        return Ok(answer);
    }
    use std::os::unix::process::ExitStatusExt;
    Err(Crash {
        signal: status.signal().map(signal_name),
        exit: status.code(),
        timed_out: false,
        stderr: err,
    })
}

/// `SIGABRT` for 6; the number for a signal nix does not name.
fn signal_name(n: i32) -> String {
    nix::sys::signal::Signal::try_from(n)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("signal {n}"))
}

/// The last lines of the child's stderr, as text a report can show: invalid UTF-8 replaced,
/// control characters other than newlines dropped, at most [`STDERR_TAIL`] bytes.
fn tail_text(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let clean: String = text
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect();
    let trimmed = clean.trim();
    if trimmed.is_empty() {
        return None;
    }
    let mut start = trimmed.len().saturating_sub(STDERR_TAIL);
    while !trimmed.is_char_boundary(start) {
        start += 1;
    }
    Some(trimmed[start..].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tails_are_bounded_and_clean() {
        assert_eq!(tail_text(b""), None);
        assert_eq!(tail_text(b" \n "), None);
        assert_eq!(
            tail_text(b"a\x1b[31mb\x07\nc\xff").as_deref(),
            Some("a[31mb\nc\u{fffd}")
        );
        let long = "x".repeat(10_000);
        assert_eq!(tail_text(long.as_bytes()).unwrap().len(), STDERR_TAIL);
    }

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal_name(6), "SIGABRT");
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(200), "signal 200");
    }

    #[test]
    fn a_child_that_is_not_a_prober_is_a_crash_not_an_answer() {
        // /bin/sh ignores the stage and exits 0 without the marked line.
        let stage = Stage::Hip {
            path: "/nonexistent".into(),
        };
        let c = run_in_child_within(Path::new("/bin/true"), &stage, Duration::from_secs(10))
            .unwrap_err();
        assert_eq!((c.signal, c.exit, c.timed_out), (None, Some(0), false));
        // A process that outlives its limit is killed and reported as timed out.
        let c = run_in_child_within(Path::new("/bin/sleep"), &stage, Duration::from_millis(200));
        // `sleep __rocm-probe-active-stage …` fails at once on its arguments: an exit, not a hang.
        assert!(c.is_err());
    }

    #[test]
    fn the_stage_and_answer_survive_json() {
        let stage = Stage::Rocr {
            path: "/opt/rocm/lib/libhsa-runtime64.so.1".into(),
            dispatch: true,
            dispatch_timeout_ms: Some(5000),
        };
        let json = serde_json::to_string(&stage).unwrap();
        assert_eq!(serde_json::from_str::<Stage>(&json).unwrap(), stage);
        let mut out = Vec::new();
        assert_eq!(child_main("not json", &mut out), 2);
        assert!(out.is_empty());
        // A HIP that is not there answers with its load error, marked.
        let mut out = Vec::new();
        let stage = serde_json::to_string(&Stage::Hip {
            path: "/nonexistent/libamdhip64.so.6".into(),
        })
        .unwrap();
        assert_eq!(child_main(&stage, &mut out), 0);
        let line = String::from_utf8(out).unwrap();
        let answer: Answer = serde_json::from_str(line.trim().strip_prefix(MARK).unwrap()).unwrap();
        let Answer::Hip(h) = answer else {
            panic!("{line}")
        };
        assert!(h.load_error.is_some());
    }
}
