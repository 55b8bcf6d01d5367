//! The scenario resolved once per command (`experiment::scenario`, issue 29): every variant
//! of a `compare` is checked before the first run starts, and a machine import (a sysfs
//! snapshot, an hwloc file) is read once per command however many seeds and variants run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use schedlab::config::scenario::Scenario;
use schedlab::experiment::{self, RunContext};

/// `shared/fixtures`, found by walking up from the crate root.
fn fixtures() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let candidate = dir.join("shared/fixtures");
        if candidate.is_dir() {
            return candidate;
        }
        assert!(dir.pop(), "no shared/fixtures above the crate");
    }
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "schedlab-resolve-{}-{}-{tag}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The binary, with the import-read counter printed at exit (stdin closed, stderr a pipe:
/// progress comes as lines).
fn schedlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(dir)
        .env("SCHEDLAB_TEST_IMPORT_READS", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs the binary")
}

/// The count the binary printed as it exited.
fn import_reads(out: &Output) -> u64 {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("schedlab: test: machine imports read: "))
        .unwrap_or_else(|| panic!("no import count in stderr:\n{err}"));
    line.trim().parse().unwrap()
}

const BAD_THIRD_VARIANT: &str = r#"
[machine]
preset = "skl-2s"

[workload]
command = "hackbench -g 2 -l 400"

[[variant]]
name = "noq"
kernel.features.TTWU_QUEUE = false

[[variant]]
name = "nodelay"
kernel.features.DELAY_DEQUEUE = false

[[variant]]
name = "bigger"
workload.groupz = 4
"#;

#[test]
fn compare_reports_a_bad_key_in_the_third_variant_before_any_run() {
    let tmp = TempDir::new("bad-variant");
    std::fs::write(tmp.0.join("bad3.toml"), BAD_THIRD_VARIANT).unwrap();
    let out = schedlab(
        &tmp.0,
        &["compare", "bad3.toml", "--runs", "4", "--json", "out.json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    // File, variant, key, and what is accepted.
    assert!(
        err.contains("schedlab: error: bad3.toml [variant bigger]: workload.groupz: unknown key"),
        "{err}"
    );
    assert!(err.contains("did you mean groups?"), "{err}");
    assert!(
        err.contains("accepted: variant, groups, fds, loops"),
        "{err}"
    );
    // Nothing ran: no progress line, no report, no results file.
    assert!(
        !err.contains("runs finished"),
        "a run finished first:\n{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!tmp.0.join("out.json").exists());
}

#[test]
fn every_variant_is_resolved_before_the_pool_starts() {
    let base = Scenario::parse(BAD_THIRD_VARIANT, "bad3.toml").unwrap();
    let variants: Vec<Scenario> = (base.variants.iter())
        .map(|v| base.with_variant(v).unwrap())
        .collect();
    let scns: Vec<&Scenario> = std::iter::once(&base).chain(&variants).collect();
    let mut ctx = RunContext::default();
    ctx.quiet = true;
    let e = experiment::run_variants_in(&ctx, &scns, &[1, 2, 3], "compare").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload.groupz"), "{e}");
    // No engine advanced simulated time: the error came before any run started.
    assert_eq!(ctx.shared.progress_ns.load(Ordering::Relaxed), 0);
}

/// Unpack `topology/sysfs/NAME.tar.bz2`; returns the directory holding `sys/`.
fn sysfs_snapshot(name: &str, tmp: &TempDir) -> PathBuf {
    let tarball = fixtures().join(format!("topology/sysfs/{name}.tar.bz2"));
    let status = Command::new("tar")
        .arg("xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&tmp.0)
        .status()
        .expect("tar (with bzip2) must be installed to unpack sysfs fixtures");
    assert!(status.success(), "tar xjf {} failed", tarball.display());
    let root = tmp.0.join(name);
    if root.is_dir() { root } else { tmp.0.clone() }
}

#[test]
fn a_sysfs_snapshot_is_read_once_per_command() {
    let tmp = TempDir::new("sysfs-once");
    let root = sysfs_snapshot("8em64t-2s4c-asymcaches", &tmp);
    let root = root.to_str().unwrap();
    let bench = ["--", "hackbench", "-g", "1", "-l", "20"];
    // Several seeds.
    let mut args = vec!["run", "-m", root, "--runs", "3", "-q"];
    args.extend(bench);
    let out = schedlab(&tmp.0, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(import_reads(&out), 1);
    // Several variants of several seeds.
    let mut args = vec!["compare", "-m", root, "--runs", "2", "-q"];
    args.extend([
        "--variant",
        "noq:NO_TTWU_QUEUE",
        "--variant",
        "nd:NO_DELAY_DEQUEUE",
    ]);
    args.extend(bench);
    let out = schedlab(&tmp.0, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(import_reads(&out), 1);
    // A scenario file whose variant changes the machine's costs and CPUs, not its source.
    let scenario = format!(
        "[machine]\nsysfs_root = {root:?}\n[workload]\ncommand = \"hackbench -g 1 -l 20\"\n\
         [[variant]]\nname = \"slowipi\"\nmachine.cost.ipi_latency_ns = 9000\n\
         [[variant]]\nname = \"fewer\"\nmachine.offline = \"4-7\"\n"
    );
    std::fs::write(tmp.0.join("snap.toml"), scenario).unwrap();
    let out = schedlab(&tmp.0, &["compare", "snap.toml", "--runs", "2", "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(import_reads(&out), 1);
}

#[test]
fn an_hwloc_file_is_read_once_per_command() {
    let tmp = TempDir::new("hwloc-once");
    let xml = fixtures().join("topology/hwloc-xml/16em64t-4s2c2t.xml");
    let xml = xml.to_str().unwrap();
    let out = schedlab(
        &tmp.0,
        &[
            "run",
            "-m",
            xml,
            "--runs",
            "3",
            "-q",
            "--",
            "hackbench",
            "-g",
            "1",
            "-l",
            "20",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(import_reads(&out), 1);
}
