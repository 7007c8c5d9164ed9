//! The only places the command writes to standard output and standard error. A health check's
//! exit status is its answer, so no failure to print may change it or end in a panic:
//!
//! - standard output closed early (`rocm-probe targets | head -1`, `| true`): the rest of the
//!   output is dropped and the command ends with the status it would have had;
//! - any other failure to write the output (`>/dev/full`, a full disk): exit 2 (the caller sees
//!   the error from [`Stdout`]);
//! - a diagnostic that cannot be written to standard error (`2>/dev/full`, a closed stderr) is
//!   lost, and nothing else changes.

use std::io::{self, Write};

/// Standard output that swallows `EPIPE`: once the reader is gone, every later write
/// "succeeds" without going anywhere.
pub struct Stdout<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Stdout<W> {
    /// Wraps `inner` (the locked standard output).
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            closed: false,
        }
    }

    fn absorb<T>(&mut self, r: io::Result<T>, done: T) -> io::Result<T> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(done)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Stdout<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let r = self.inner.write(buf);
        self.absorb(r, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.absorb(r, ())
    }
}

/// One diagnostic line on standard error, `rocm-probe: ` first. What it says often carries a
/// path or value from the machine, so control characters are made visible: one line stays one
/// line, and nothing reaches the terminal as an escape sequence. Errors are ignored on purpose
/// (see the module documentation).
pub fn warn(text: impl std::fmt::Display) {
    let line = rocm_probe::source::escape::text(&text.to_string());
    let _ = writeln!(io::stderr().lock(), "rocm-probe: {line}");
}

/// Progress text on standard error (no newline, no prefix); errors ignored like [`warn`]'s.
pub fn progress(text: impl std::fmt::Display) {
    let mut err = io::stderr().lock();
    let _ = write!(err, "{text}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pipe {
        accepted: usize,
        error: io::ErrorKind,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.accepted == 0 {
                return Err(self.error.into());
            }
            let n = buf.len().min(self.accepted);
            self.accepted -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_swallows_the_rest() {
        let mut out = Stdout::new(Pipe {
            accepted: 3,
            error: io::ErrorKind::BrokenPipe,
        });
        out.write_all(b"gfx90a\ngfx90a\n").unwrap();
        writeln!(out, "more").unwrap();
        out.flush().unwrap();
        assert!(out.closed);
    }

    #[test]
    fn other_errors_are_reported() {
        let mut out = Stdout::new(Pipe {
            accepted: 0,
            error: io::ErrorKind::StorageFull,
        });
        assert_eq!(
            out.write_all(b"x").unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
    }
}
