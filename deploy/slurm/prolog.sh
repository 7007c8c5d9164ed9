#!/bin/sh
# Slurm Prolog running rocm-probe before a job starts on this node (deploy/slurm/README.md).
#
# slurmd runs the Prolog as root with only Slurm's own variables (SLURMD_NODENAME, SLURM_JOB_ID,
# ...) and no PATH, so everything this script needs is in the settings below: edit them, not
# the environment.
#
# Probe exit 1 (a failure): drain this node with Reason="rocm-probe: <summary>" (unless someone
# else already drained it: an operator's reason is kept) and exit 1. Slurm then drains the node
# itself (with "Prolog error" if it was not drained yet) and requeues the job held, unless
# SchedulerParameters has nohold_on_prolog_fail. The HealthCheckProgram wrapper resumes the node
# once the probe passes again, because the reason carries the "rocm-probe:" tag.
# Probe exit 0: exit 0. Any other exit (the probe could not run, a health check holds the lock,
# the deadline passed): log it and exit 0, so a broken probe never blocks jobs.

# --- settings ---------------------------------------------------------------------------------
PROBE=/usr/local/bin/rocm-probe
# A fixture directory to read instead of this machine (`rocm-probe --root`); empty on a real node.
ROOT=
# The lock the HealthCheckProgram wrapper uses too, so the two never run at once.
LOCK=/run/rocm-probe.lock
# Seconds; a Prolog should finish well within MessageTimeout (10 s by default).
DEADLINE=8
SCONTROL=/usr/bin/scontrol
# slurmd passes its own slurm.conf as SLURM_CONF (configless nodes too); this is the fallback.
SLURM_CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
# scontrol waits forever for a slurm.conf it cannot read; bound every call.
SCONTROL_TIMEOUT=5
# ----------------------------------------------------------------------------------------------

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH SLURM_CONF
TAG=rocm-probe:
NODE=${SLURMD_NODENAME:-$(hostname -s)}

# To syslog (logger exits 0 even when no syslog daemon listens) and to stderr, which slurmd
# drops unless it is debugging.
log() {
    logger -t rocm-probe -- "prolog (job ${SLURM_JOB_ID:-?}): $*" 2>/dev/null
    echo "rocm-probe: prolog (job ${SLURM_JOB_ID:-?}): $*" >&2
}

if [ -n "$ROOT" ]; then
    summary=$("$PROBE" --root "$ROOT" --lang en report --summary --lock "$LOCK" --deadline "$DEADLINE")
else
    summary=$("$PROBE" --lang en report --summary --lock "$LOCK" --deadline "$DEADLINE")
fi
code=$?
summary=$(printf '%s' "$summary" | tr '\n' ' ' | cut -c1-200)

case $code in
0)
    exit 0
    ;;
1)
    reason=$(timeout "$SCONTROL_TIMEOUT" "$SCONTROL" show node "$NODE" 2>/dev/null | sed -n 's/^ *Reason=//p' | head -n 1)
    case $reason in
    "" | "$TAG"*)
        timeout "$SCONTROL_TIMEOUT" "$SCONTROL" update nodename="$NODE" state=drain reason="$TAG $summary" ||
            log "draining $NODE failed: $summary"
        ;;
    *) log "$NODE is drained by someone else ($reason); not changed: $summary" ;;
    esac
    log "$TAG $summary; the job is requeued"
    exit 1
    ;;
*)
    log "the probe could not run (exit $code): $summary; the job goes ahead"
    exit 0
    ;;
esac
