//! `rocm-probe slurm-wrapper`: the Slurm HealthCheckProgram, written with every path baked in.
//!
//! slurmd runs the health check as root with only `SLURMD_NODENAME` in the environment (no
//! PATH, no SLURM_CONF), kills it after 60 s, and starts a new one every interval even while the
//! last one runs. So the wrapper sets its own PATH and SLURM_CONF, runs the probe with `--lock`
//! (an overlapping run exits 2 at once) and `--deadline` (well under 60 s), and:
//! - exit 1 (a failure): drains the node with `Reason="rocm-probe: <summary>"` — unless it is
//!   already drained with another reason (an operator's drain is never overwritten);
//! - exit 0: resumes the node only when its reason carries the `rocm-probe:` tag;
//! - anything else: logs (syslog through `logger`, else stderr) and changes nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

/// The reason prefix that marks a drain as the probe's own.
pub const TAG: &str = "rocm-probe:";

/// A single-quoted POSIX shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_owned())
}

/// `scontrol` on PATH now, else Debian's location.
fn find_scontrol() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("scontrol"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/bin/scontrol"))
}

/// Writes the wrapper for this binary (or `probe`).
pub fn wrapper(
    root: Option<&Path>,
    slurm_conf: &Path,
    probe: Option<&Path>,
    scontrol: Option<&Path>,
    lock: &Path,
    deadline: u64,
    out: &mut dyn Write,
) -> Result<u8> {
    let probe = match probe {
        Some(p) => absolute(p),
        None => std::env::current_exe()?,
    };
    let scontrol = scontrol.map_or_else(find_scontrol, absolute);
    let root_arg = root
        .map(|r| format!(" --root {}", quote(&absolute(r).display().to_string())))
        .unwrap_or_default();
    let q = |p: &Path| quote(&p.display().to_string());
    write!(
        out,
        r#"#!/bin/sh
# Slurm HealthCheckProgram running rocm-probe, written by `rocm-probe slurm-wrapper`
# (rocm-probe {version}). Regenerate it instead of editing: slurmd runs it with no PATH and only
# SLURMD_NODENAME in the environment, so everything it needs is written in here.
#
# Probe exit 1: drain this node with Reason="{TAG} <summary>" (an operator's drain is kept).
# The summary is English whatever the locale: reasons are matched by scripts and cut at 200 bytes.
# Probe exit 0: resume this node if, and only if, its drain reason starts with "{TAG}".
# Any other exit (the probe could not run, another run holds the lock, the deadline passed):
# log it and change nothing.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
SLURM_CONF={conf}
export SLURM_CONF
PROBE={probe}
SCONTROL={scontrol}
TAG={tag}
NODE=${{SLURMD_NODENAME:-$(hostname -s)}}

# Both syslog and stderr: logger exits 0 without /dev/log, so it cannot say when it failed.
log() {{
    logger -t rocm-probe -- "$*" 2>/dev/null
    echo "rocm-probe: $*" >&2
}}

# scontrol retries for ever when slurmctld is unreachable; a check must not hang until slurmd
# kills it (and pile up one per interval).
ctl() {{
    timeout 20 "$SCONTROL" "$@"
}}

errors=$(mktemp) || exit 0
summary=$("$PROBE"{root} --lang en report --summary --lock {lock} --deadline {deadline} 2>"$errors")
code=$?
# One line for Reason=, whatever the probe printed.
summary=$(printf '%s' "$summary" | tr '\n' ' ' | cut -c1-200)
problem=$(tr '\n' ' ' <"$errors" | cut -c1-300)
rm -f "$errors"

reason=$(ctl show node "$NODE" 2>/dev/null | sed -n 's/^ *Reason=//p' | head -n 1)
case $code in
0)
    case $reason in
    "$TAG"*) ctl update nodename="$NODE" state=resume || log "resuming $NODE failed" ;;
    esac
    ;;
1)
    case $reason in
    "" | "$TAG"*)
        ctl update nodename="$NODE" state=drain reason="$TAG $summary" ||
            log "draining $NODE failed: $summary"
        ;;
    *) log "$NODE is drained by someone else ($reason); not changed: $summary" ;;
    esac
    ;;
*)
    log "the probe could not run (exit $code): $problem $summary"
    ;;
esac
exit 0
"#,
        version = env!("CARGO_PKG_VERSION"),
        conf = q(&absolute(slurm_conf)),
        probe = q(&probe),
        scontrol = q(&scontrol),
        tag = quote(TAG),
        root = root_arg,
        lock = q(&absolute(lock)),
        deadline = deadline,
    )?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_spaces() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
