//! Slurm end to end (README "Running on a cluster"), against Debian's real Slurm and munge: munged, slurmctld
//! and slurmd on 127.0.0.1 with every file in a temp dir and free ephemeral ports.
//!
//! - The HealthCheckProgram wrapper that `rocm-probe slurm-wrapper` writes drains the node with
//!   the probe's reason on a failing fixture, resumes it on a healthy one, and leaves an
//!   operator's drain alone. The fixture is switched by retargeting the symlink the wrapper's
//!   `--root` names (the wrapper is written once, as on a real node).
//! - `deploy/slurm/prolog.sh` as a real Prolog: a healthy fixture lets the job run, a failing one
//!   drains the node with the probe's reason and Slurm requeues the job held.
//! - `deploy/slurm/nhc/rocm_probe.nhc` sourced by bash with stub `die`/`log`, and the Prolog with
//!   a stub scontrol, for the cases the daemons cannot show cheaply.
//!
//! Slurm or munge absent, or not root: with `CI` set the test fails (scripts/test installs
//! `slurm-wlm munge`), else it prints `skipped: …`. Every process the test starts is stopped by
//! its pid; the polls allow three health-check intervals and assert no timing.

mod common;

use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::{fixture, probe, run};

/// The node's name in slurm.conf and slurmd's `-N`.
const NODE: &str = "probe1";
/// HealthCheckInterval, in seconds.
const INTERVAL: u64 = 5;
const FAILING: &str = "kfd-permission-denied";
const HEALTHY: &str = "rocm-6.2-mi210";
const FAIL_REASON: &str = "rocm-probe: FAIL driver.kfd-permission-denied";
const OPERATOR_REASON: &str = "operator: maintenance";
/// The PATH the daemons get (slurmd gives its scripts none).
const SBIN_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

fn deploy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("deploy/slurm")
        .join(name)
}

fn polls() -> Duration {
    Duration::from_secs(3 * INTERVAL)
}

/// A program on PATH or in the sbin directories (the daemons live in /usr/sbin).
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(std::env::split_paths(SBIN_PATH))
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Skips visibly, or fails in CI, which must run every test.
fn skip(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}: CI runs as root and scripts/test installs slurm-wlm and munge"
    );
    eprintln!("skipped: {why}");
}

fn is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

struct Tools {
    munged: PathBuf,
    slurmctld: PathBuf,
    slurmd: PathBuf,
    scontrol: PathBuf,
    sbatch: PathBuf,
}

/// Debian's Slurm and munge, or `None` after a visible skip.
fn slurm_tools() -> Option<Tools> {
    let names = ["munged", "slurmctld", "slurmd", "scontrol", "sbatch"];
    let found: Vec<Option<PathBuf>> = names.iter().map(|n| which(n)).collect();
    let missing: Vec<&str> = names
        .iter()
        .zip(&found)
        .filter(|(_, p)| p.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        skip(&format!(
            "{} not installed (Debian packages slurm-wlm, munge)",
            missing.join(", ")
        ));
        return None;
    }
    if !is_root() {
        skip("slurmd and the health check run as root");
        return None;
    }
    let mut found = found.into_iter().map(Option::unwrap);
    let mut next = || found.next().unwrap();
    Some(Tools {
        munged: next(),
        slurmctld: next(),
        slurmd: next(),
        scontrol: next(),
        sbatch: next(),
    })
}

/// Two free ports on 127.0.0.1 (the kernel's choice; released just before the daemons bind
/// them).
fn free_ports() -> (u16, u16) {
    let a = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = TcpListener::bind("127.0.0.1:0").unwrap();
    (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    )
}

fn write_executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Points `link` at `target`, atomically (a health check may be reading it).
fn retarget(link: &Path, target: &Path) {
    let tmp = link.with_extension("new");
    let _ = fs::remove_file(&tmp);
    symlink(target, &tmp).unwrap();
    fs::rename(&tmp, link).unwrap();
}

/// Processes whose command line names `dir` (health checks slurmd started), but not this one.
fn processes_naming(dir: &Path) -> Vec<u32> {
    let needle = dir.as_os_str().as_bytes();
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
        .collect()
}

/// Sends `signal` to one process by its pid.
fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// SIGTERM, then SIGKILL after 10 s; always reaped.
fn stop(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    if signal(child.id(), "-TERM") {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            sleep(Duration::from_millis(100));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| format!("({e})\n"));
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// What `scontrol show node` says.
#[derive(Debug)]
struct Node {
    /// `State=` (e.g. `IDLE+DRAIN`).
    state: String,
    /// `Reason=`, empty without one.
    reason: String,
    /// The two lines as printed.
    lines: String,
}

impl Node {
    fn parse(text: &str) -> Node {
        let field = |key: &str| {
            text.lines()
                .map(str::trim_start)
                .find(|l| l.starts_with(key))
                .map(|l| l.to_owned())
                .unwrap_or_default()
        };
        let state_line = field("State=");
        let reason_line = field("Reason=");
        Node {
            state: state_line
                .strip_prefix("State=")
                .and_then(|s| s.split_whitespace().next())
                .unwrap_or("")
                .to_owned(),
            reason: reason_line.strip_prefix("Reason=").unwrap_or("").to_owned(),
            lines: format!("   {state_line}\n   {reason_line}")
                .trim_end()
                .to_owned(),
        }
    }

    fn drained(&self) -> bool {
        self.state.contains("DRAIN")
    }
}

/// One Slurm cluster of one node in a temp dir: munged, slurmctld and slurmd, stopped by pid
/// (slurmd first) when dropped, before the temp dir goes.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    scontrol: PathBuf,
    sbatch: PathBuf,
    munged: PathBuf,
    slurmctld: PathBuf,
    slurmd: PathBuf,
    daemons: Vec<(&'static str, Child)>,
    _tmp: tempfile::TempDir,
}

impl Cluster {
    /// Writes the munge key and slurm.conf (`extra`, given the temp dir, adds lines); starts
    /// nothing.
    fn new(tools: &Tools, extra: impl FnOnce(&Path) -> String) -> Cluster {
        let tmp = tempfile::Builder::new()
            .prefix("rocm-probe-slurm")
            .tempdir()
            .unwrap();
        let dir = tmp.path().to_owned();
        // munged refuses a socket any of whose parent directories others cannot search.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o711)).unwrap();
        let munge = dir.join("munge");
        fs::create_dir(&munge).unwrap();
        fs::set_permissions(&munge, fs::Permissions::from_mode(0o755)).unwrap();
        for d in ["state", "spool", "log"] {
            fs::create_dir(dir.join(d)).unwrap();
        }
        let mut key = [0u8; 128];
        fs::File::open("/dev/urandom")
            .unwrap()
            .read_exact(&mut key)
            .unwrap();
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .open(munge.join("munge.key"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, &key))
            .unwrap();

        let extra = extra(&dir);
        let (ctld_port, slurmd_port) = free_ports();
        let d = dir.display();
        let conf = dir.join("slurm.conf");
        fs::write(
            &conf,
            format!(
                "\
ClusterName=rocmprobe
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldDebug=debug
SlurmdDebug=debug
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/linear
MpiDefault=none
ReturnToService=2
{extra}
NodeName={NODE} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes={NODE} Default=YES State=UP
"
            ),
        )
        .unwrap();
        Cluster {
            dir,
            conf,
            scontrol: tools.scontrol.clone(),
            sbatch: tools.sbatch.clone(),
            munged: tools.munged.clone(),
            slurmctld: tools.slurmctld.clone(),
            slurmd: tools.slurmd.clone(),
            daemons: Vec::new(),
            _tmp: tmp,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn spawn(&mut self, name: &'static str, program: &Path, args: &[&str]) {
        let out = fs::File::create(self.dir.join(format!("log/{name}.out"))).unwrap();
        let child = Command::new(program)
            .args(args)
            .env_clear()
            .env("PATH", SBIN_PATH)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        println!("started {name} (pid {})", child.id());
        self.daemons.push((name, child));
    }

    /// munged, then slurmctld, each waited for.
    fn start_controller(&mut self) {
        let d = self.dir.display().to_string();
        let munged = self.munged.clone();
        self.spawn(
            "munged",
            &munged,
            &[
                "--foreground",
                &format!("--socket={d}/munge/munge.sock"),
                &format!("--key-file={d}/munge/munge.key"),
                &format!("--log-file={d}/munge/munged.log"),
                &format!("--pid-file={d}/munge/munged.pid"),
                &format!("--seed-file={d}/munge/munged.seed"),
            ],
        );
        self.wait("munged's socket", Duration::from_secs(20), |c| {
            c.path("munge/munge.sock").exists()
        });
        let (slurmctld, conf) = (self.slurmctld.clone(), self.conf.display().to_string());
        self.spawn("slurmctld", &slurmctld, &["-D", "-f", &conf]);
        self.wait("slurmctld to answer", Duration::from_secs(30), |c| {
            c.scontrol(&["ping"]).contains("is UP")
        });
    }

    fn start_slurmd(&mut self) -> Instant {
        let (slurmd, conf) = (self.slurmd.clone(), self.conf.display().to_string());
        self.spawn("slurmd", &slurmd, &["-D", "-N", NODE, "-f", &conf]);
        Instant::now()
    }

    /// scontrol's stdout (stderr appended), bounded in time.
    fn scontrol(&self, args: &[&str]) -> String {
        let out = assert_cmd::Command::new(&self.scontrol)
            .args(args)
            .env_clear()
            .env("PATH", SBIN_PATH)
            .env("SLURM_CONF", &self.conf)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    fn node(&self) -> Node {
        Node::parse(&self.scontrol(&["show", "node", NODE]))
    }

    /// A daemon that exited fails the test with its logs.
    fn check_alive(&mut self) {
        let dead: Vec<String> = self
            .daemons
            .iter_mut()
            .filter_map(|(name, child)| match child.try_wait() {
                Ok(Some(status)) => Some(format!("{name} exited: {status}")),
                _ => None,
            })
            .collect();
        if !dead.is_empty() {
            self.fail(&dead.join("; "));
        }
    }

    fn wait(&mut self, what: &str, limit: Duration, mut ok: impl FnMut(&Cluster) -> bool) {
        let start = Instant::now();
        loop {
            self.check_alive();
            if ok(self) {
                return;
            }
            if start.elapsed() > limit {
                self.fail(&format!("no {what} within {limit:?}"));
            }
            sleep(Duration::from_millis(200));
        }
    }

    /// Polls the node until `ok` holds, failing after `limit`; returns the node and how long.
    fn wait_node(
        &mut self,
        what: &str,
        limit: Duration,
        ok: impl Fn(&Node) -> bool,
    ) -> (Node, Duration) {
        let start = Instant::now();
        loop {
            self.check_alive();
            let node = self.node();
            if ok(&node) {
                return (node, start.elapsed());
            }
            if start.elapsed() > limit {
                self.fail(&format!(
                    "{what}: not within {limit:?}; the node:\n{}",
                    node.lines
                ));
            }
            sleep(Duration::from_millis(250));
        }
    }

    /// Fails the test with what the cluster says and its logs.
    fn fail(&self, msg: &str) -> ! {
        let mut report = format!(
            "{msg}\n--- scontrol show node\n{}",
            self.scontrol(&["show", "node", NODE])
        );
        for log in [
            "log/slurmctld.log",
            "log/slurmd.log",
            "log/slurmctld.out",
            "log/slurmd.out",
            "log/munged.out",
            "munge/munged.log",
            "runs",
            "wrapper.err",
        ] {
            if self.path(log).exists() {
                report += &format!("\n--- {log}\n{}", tail(&self.path(log), 25));
            }
        }
        panic!("{report}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (name, child) in self.daemons.iter_mut().rev() {
            let pid = child.id();
            stop(child);
            println!("stopped {name} (pid {pid})");
        }
        // A health check or Prolog slurmd started may still run (the probe's deadline bounds
        // it): let it end before its temp dir goes, and stop it by pid if it does not.
        let until = Instant::now() + Duration::from_secs(30);
        while !processes_naming(&self.dir).is_empty() && Instant::now() < until {
            sleep(Duration::from_millis(200));
        }
        for pid in processes_naming(&self.dir) {
            eprintln!("stopping leftover pid {pid}");
            signal(pid, "-KILL");
        }
    }
}

/// The health-check runs that finished (the shim records each).
fn finished_runs(cluster: &Cluster) -> usize {
    fs::read_to_string(cluster.path("runs"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("exit"))
        .count()
}

#[test]
fn health_check_drains_with_the_probes_reason_resumes_its_own_drain_only() {
    let Some(tools) = slurm_tools() else {
        return;
    };
    let mut cluster = Cluster::new(&tools, |dir| {
        format!(
            "HealthCheckProgram={}\nHealthCheckInterval={INTERVAL}\nHealthCheckNodeState=ANY",
            dir.join("healthcheck").display()
        )
    });

    let current = cluster.path("current");
    symlink(fixture(FAILING), &current).unwrap();
    let wrapper = run(probe()
        .arg("slurm-wrapper")
        .arg("--slurm-conf")
        .arg(&cluster.conf)
        .arg("--root")
        .arg(&current)
        .arg("--lock")
        .arg(cluster.path("probe.lock"))
        .args(["--deadline", "20"]));
    assert_eq!(wrapper.code, 0, "{}", wrapper.stderr);
    assert!(
        wrapper.stdout.starts_with("#!/bin/sh\n"),
        "{}",
        wrapper.stdout
    );
    write_executable(&cluster.path("wrapper"), &wrapper.stdout);
    // The test's only addition: a shim that counts the runs and keeps the wrapper's stderr. It
    // passes slurmd's environment (SLURMD_NODENAME, no PATH) on unchanged.
    let d = cluster.dir.display();
    write_executable(
        &cluster.path("healthcheck"),
        &format!(
            "#!/bin/sh\necho start >>{d}/runs\n{d}/wrapper 2>>{d}/wrapper.err\ncode=$?\n\
             echo \"exit $code\" >>{d}/runs\nexit $code\n"
        ),
    );

    cluster.start_controller();
    let slurmd_started = cluster.start_slurmd();

    // (a) A failing fixture: drained with the probe's reason.
    let (node, _) = cluster.wait_node("drain with the probe's reason", polls(), |n| {
        n.drained() && n.reason.starts_with(FAIL_REASON)
    });
    println!(
        "(a) failing fixture: drained {:.1} s after slurmd started (interval {INTERVAL} s):\n{}",
        slurmd_started.elapsed().as_secs_f64(),
        node.lines
    );

    // (b) Healthy: the probe's own drain is resumed.
    retarget(&current, &fixture(HEALTHY));
    let (node, took) = cluster.wait_node("resume of the probe's drain", polls(), |n| !n.drained());
    println!(
        "(b) healthy fixture: resumed {:.1} s after the switch:\n{}",
        took.as_secs_f64(),
        node.lines
    );
    assert!(!node.reason.starts_with("rocm-probe:"), "{}", node.lines);
    // slurmctld marks a resumed node NOT_RESPONDING until it answers a ping, and runs no health
    // check on such a node: wait for that before counting health checks below.
    let (node, _) = cluster.wait_node("the resumed node responding", polls(), |n| {
        n.state == "IDLE"
    });
    println!("{}", node.lines);

    // (c) An operator's drain survives three intervals of a healthy probe, and of a failing one.
    let out = cluster.scontrol(&[
        "update",
        &format!("nodename={NODE}"),
        "state=drain",
        &format!("reason={OPERATOR_REASON}"),
    ]);
    assert!(out.trim().is_empty(), "scontrol update: {out}");
    for (target, label) in [(HEALTHY, "healthy"), (FAILING, "failing")] {
        retarget(&current, &fixture(target));
        let runs = finished_runs(&cluster);
        let start = Instant::now();
        while start.elapsed() < polls() {
            cluster.check_alive();
            let node = cluster.node();
            if !(node.drained() && node.reason.starts_with(OPERATOR_REASON)) {
                cluster.fail(&format!(
                    "the operator's drain changed under a {label} probe:\n{}",
                    node.lines
                ));
            }
            sleep(Duration::from_millis(500));
        }
        let ran = finished_runs(&cluster) - runs;
        if ran < 2 {
            cluster.fail(&format!(
                "only {ran} health checks finished in {:?}",
                polls()
            ));
        }
        println!(
            "(c) operator's drain, {label} fixture: kept through {ran} health checks:\n{}",
            cluster.node().lines
        );
    }
}

/// `deploy/slurm/prolog.sh` with its settings block pointed at this test's probe, fixture, lock
/// and (optionally) scontrol.
fn prolog_for(dir: &Path, root: &Path, scontrol: Option<&Path>) -> PathBuf {
    let text = fs::read_to_string(deploy("prolog.sh")).unwrap();
    let probe_bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let mut settings = vec![
        ("PROBE=", probe_bin),
        ("ROOT=", root.to_owned()),
        ("LOCK=", dir.join("probe.lock")),
    ];
    if let Some(s) = scontrol {
        settings.push(("SCONTROL=", s.to_owned()));
    }
    let mut out = String::new();
    for line in text.lines() {
        match settings.iter().position(|(key, _)| line.starts_with(key)) {
            Some(i) => {
                let (key, value) = settings.remove(i);
                out += &format!("{key}'{}'\n", value.display());
            }
            None => out += &format!("{line}\n"),
        }
    }
    assert!(
        settings.is_empty(),
        "prolog.sh has no setting line for {settings:?}"
    );
    let path = dir.join("prolog.sh");
    write_executable(&path, &out);
    path
}

#[test]
fn prolog_lets_a_healthy_node_run_the_job_and_drains_a_failing_one() {
    let Some(tools) = slurm_tools() else {
        return;
    };
    // PrologFlags=Alloc: the Prolog runs when the job is allocated, before any step.
    let mut cluster = Cluster::new(&tools, |dir| {
        format!(
            "Prolog={}\nPrologFlags=Alloc",
            dir.join("prolog.sh").display()
        )
    });
    let current = cluster.path("current");
    symlink(fixture(HEALTHY), &current).unwrap();
    prolog_for(&cluster.dir, &current, None);
    cluster.start_controller();
    cluster.start_slurmd();
    cluster.wait_node("the node up", Duration::from_secs(30), |n| {
        n.state.starts_with("IDLE") && !n.drained()
    });

    let submit = |cluster: &Cluster| {
        let out = Command::new(&cluster.sbatch)
            .args(["--parsable", "--output=/dev/null", "--wrap=true"])
            .arg(format!("--chdir={}", cluster.dir.display()))
            .env_clear()
            .env("PATH", SBIN_PATH)
            .env("SLURM_CONF", &cluster.conf)
            .output()
            .unwrap();
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() || id.is_empty() {
            cluster.fail(&format!("sbatch: {}", String::from_utf8_lossy(&out.stderr)));
        }
        id
    };
    let job_state = |cluster: &Cluster, id: &str| {
        cluster
            .scontrol(&["show", "job", id])
            .split_whitespace()
            .filter(|w| w.starts_with("JobState=") || w.starts_with("Reason="))
            .collect::<Vec<_>>()
            .join(" ")
    };

    let id = submit(&cluster);
    let mut state = String::new();
    cluster.wait(
        "completed job behind a healthy Prolog",
        Duration::from_secs(30),
        |c| {
            state = job_state(c, &id);
            state.contains("JobState=COMPLETED")
        },
    );
    println!("prolog, healthy fixture: job {id}: {state}");

    retarget(&current, &fixture(FAILING));
    let id = submit(&cluster);
    let (node, _) = cluster.wait_node("drain by a failing Prolog", Duration::from_secs(30), |n| {
        n.drained() && n.reason.starts_with(FAIL_REASON)
    });
    cluster.wait("the job requeued held", Duration::from_secs(30), |c| {
        state = job_state(c, &id);
        state.contains("launch_failed_requeued_held")
    });
    // Slurm's own drain for the failed Prolog keeps the reason the Prolog gave.
    let node_after = cluster.node();
    if !(node_after.drained() && node_after.reason.starts_with(FAIL_REASON)) {
        cluster.fail(&format!(
            "the Prolog's reason did not survive the requeue: before\n{}\nafter\n{}",
            node.lines, node_after.lines
        ));
    }
    println!(
        "prolog, failing fixture: job {id}: {state}; the node:\n{}",
        node_after.lines
    );
}

/// Runs the copy of prolog.sh as slurmd would (no PATH) with a stub scontrol that records its
/// arguments and shows `reason`; gives (exit code, stderr, scontrol calls).
fn run_prolog(fixture_dir: &Path, reason: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls");
    let node = dir.path().join("node");
    fs::write(&node, format!("   State=IDLE\n   Reason={reason}\n")).unwrap();
    let stub = dir.path().join("scontrol");
    write_executable(
        &stub,
        &format!(
            "#!/bin/sh\necho \"$*\" >>'{}'\n[ \"$1\" = show ] && cat '{}'\nexit 0\n",
            calls.display(),
            node.display()
        ),
    );
    let prolog = prolog_for(dir.path(), fixture_dir, Some(&stub));
    let out = Command::new("/bin/sh")
        .arg(&prolog)
        .env_clear()
        .env("SLURMD_NODENAME", NODE)
        .env("SLURM_JOB_ID", "7")
        .env("SLURM_CONF", dir.path().join("slurm.conf"))
        .output()
        .unwrap();
    (
        out.status.code().expect("exited"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        fs::read_to_string(&calls).unwrap_or_default(),
    )
}

#[test]
fn prolog_exit_codes_and_the_operators_drain() {
    let (code, stderr, calls) = run_prolog(&fixture(FAILING), "");
    assert_eq!(code, 1, "{stderr}");
    let update = format!("update nodename={NODE} state=drain reason={FAIL_REASON}");
    assert!(calls.contains(&update), "{calls}");
    assert!(
        stderr.contains(&format!("rocm-probe: prolog (job 7): {FAIL_REASON}")),
        "{stderr}"
    );

    // Already drained by an operator: the job still fails, the reason is not touched.
    let (code, stderr, calls) = run_prolog(&fixture(FAILING), "operator: maintenance [root@x]");
    assert_eq!(code, 1, "{stderr}");
    assert!(!calls.contains("update"), "{calls}");
    assert!(stderr.contains("drained by someone else"), "{stderr}");

    let (code, stderr, calls) = run_prolog(&fixture(HEALTHY), "");
    assert_eq!((code, calls.as_str()), (0, ""), "{stderr}");

    // One bad GPU of eight: the drain reason names that GPU (issue 15: fleet outputs name it).
    let (code, stderr, calls) = run_prolog(&fixture("ras-uncorrectable"), "");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        calls.contains("reason=rocm-probe: FAIL hardware.ras-uncorrectable: GPU 0 (0000:63:00.0"),
        "{calls}"
    );

    // The probe cannot run (exit 2): the job goes ahead.
    let (code, stderr, calls) = run_prolog(Path::new("/nonexistent/rocm-probe-root"), "");
    assert_eq!((code, calls.as_str()), (0, ""), "{stderr}");
    assert!(stderr.contains("could not run (exit 2)"), "{stderr}");
}

/// Sources the NHC module in bash with stub `die` and `log` (NHC's own exit; the stubs only
/// print) and calls `check_rocm_probe ARGS`; gives the stubs' lines and the return code.
fn nhc(args: &[&str]) -> String {
    let harness = format!(
        "die() {{ echo \"die $*\"; }}\nlog() {{ echo \"log $*\"; }}\nTIMEOUT=30\n\
         . '{}'\ncheck_rocm_probe \"$@\"\necho \"return $?\"\n",
        deploy("nhc/rocm_probe.nhc").display()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(harness)
        .arg("nhc")
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn nhc_check_dies_with_the_probes_summary_on_a_failure_only() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("rocm-probe");
    let lock = dir.path().join("probe.lock");
    let base = |root: &Path| {
        vec![
            "-p".to_owned(),
            bin.display().to_string(),
            "-l".to_owned(),
            lock.display().to_string(),
            "-d".to_owned(),
            "20".to_owned(),
            "-r".to_owned(),
            root.display().to_string(),
        ]
    };
    let call = |args: Vec<String>| nhc(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let out = call(base(&fixture(FAILING)));
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("die 1 {FAIL_REASON}")), "{out}");
    assert_eq!(out.lines().nth(1), Some("return 1"), "{out}");

    assert_eq!(call(base(&fixture(HEALTHY))), "return 0\n");

    let out = call(base(Path::new("/nonexistent/rocm-probe-root")));
    assert!(
        out.starts_with("log check_rocm_probe:  rocm-probe could not run (exit 2)"),
        "{out}"
    );
    assert!(out.ends_with("return 0\n"), "{out}");

    let mut late = base(&fixture(HEALTHY));
    late[5] = "30".to_owned();
    let out = call(late);
    assert!(out.contains("exceeds NHC timeout 30"), "{out}");
    assert!(out.ends_with("return 1\n"), "{out}");

    let out = nhc(&["-x"]);
    assert!(
        out.starts_with("die 1 check_rocm_probe:  Invalid option:  -x"),
        "{out}"
    );

    let out = nhc(&["-p", "/nonexistent/rocm-probe"]);
    assert!(
        out.starts_with("log check_rocm_probe:  /nonexistent/rocm-probe"),
        "{out}"
    );
    assert!(out.ends_with("return 0\n"), "{out}");
}

#[test]
fn scripts_parse() {
    let dir = tempfile::tempdir().unwrap();
    let wrapper = run(probe()
        .arg("slurm-wrapper")
        .arg("--slurm-conf")
        .arg(dir.path().join("slurm.conf"))
        .arg("--lock")
        .arg(dir.path().join("probe.lock")));
    assert_eq!(wrapper.code, 0, "{}", wrapper.stderr);
    let generated = dir.path().join("wrapper");
    fs::write(&generated, &wrapper.stdout).unwrap();
    for (shell, script) in [
        ("sh", deploy("prolog.sh")),
        ("sh", generated),
        ("bash", deploy("nhc/rocm_probe.nhc")),
    ] {
        let out = Command::new(shell).arg("-n").arg(&script).output().unwrap();
        assert!(
            out.status.success(),
            "{shell} -n {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
