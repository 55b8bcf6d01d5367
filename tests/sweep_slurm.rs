//! A sweep on a real Slurm (the single node of scripts/slurm-up, which .ci/run starts): a
//! 16-run grid as a 4-task job array; one array task is SIGKILLed (`scancel --signal=KILL
//! --full`) after its first result; the array is resubmitted (only the missing runs run);
//! the dependent merge job's database must equal the local executor's apart from the
//! wall-clock columns.
//!
//! Skipped, with a message, when no Slurm controller answers — unless
//! `SCHEDLAB_REQUIRE_SLURM=1` (set by .ci/run after scripts/slurm-up succeeded), when that
//! is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use schedlab::experiment::sweep::{Manifest, db};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// 2 profiles x 8 seeds of a hackbench of roughly 0.3 s of CPU per run.
const GRID: &str = r#"
description = "slurm test: 16 runs"
[base]
machine = "nehalem-2s"
command = "hackbench -g 4 -l 600"
[axes]
profiles = ["v6.6", "v6.15"]
seeds = 8
"#;

fn slurm_available() -> Result<(), String> {
    let ping = Command::new("scontrol")
        .arg("ping")
        .output()
        .map_err(|e| format!("no scontrol ({e})"))?;
    let text = String::from_utf8_lossy(&ping.stdout);
    if !text.contains("UP") {
        return Err(format!("slurmctld does not answer: {}", text.trim()));
    }
    Command::new("sbatch")
        .arg("--version")
        .output()
        .map_err(|e| format!("no sbatch ({e})"))?;
    Ok(())
}

fn sh(cmd: &str, args: &[&str]) -> String {
    let o = Command::new(cmd).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Cancels the test's jobs if it fails half-way.
struct Jobs(Vec<String>);

impl Drop for Jobs {
    fn drop(&mut self) {
        for j in &self.0 {
            let _ = Command::new("scancel").arg(j).status();
        }
    }
}

/// `schedlab sweep slurm DIR --array-size 4 --submit`; returns (array job, merge job).
fn submit(dir: &Path, jobs: &mut Jobs) -> (String, String) {
    let out = sh(
        BIN,
        &[
            "sweep",
            "slurm",
            dir.to_str().unwrap(),
            "--array-size",
            "4",
            "--time",
            "00:05:00",
            "--submit",
        ],
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("submitted: array job "))
        .unwrap_or_else(|| panic!("{out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let array = words[3].trim_end_matches(',').to_string();
    let merge = words[6].to_string();
    jobs.0.push(array.clone());
    jobs.0.push(merge.clone());
    (array, merge)
}

/// Wait until `squeue` no longer lists the job (finished, whatever its state).
fn wait_gone(job: &str, deadline: Instant) {
    while Instant::now() < deadline {
        let o = Command::new("squeue")
            .args(["-h", "-j", job])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&o.stdout).trim().is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("job {job} still queued: {}", sh("squeue", &[]));
}

fn results_of_shard(dir: &Path, m: &Manifest, k: usize) -> usize {
    m.runs
        .iter()
        .filter(|r| r.index % 4 == k && schedlab::experiment::sweep::finished(dir, &r.id))
        .count()
}

fn plan(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let g = dir.with_extension("toml");
    std::fs::write(&g, GRID).unwrap();
    sh(
        BIN,
        &[
            "sweep",
            "plan",
            g.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "--no-calibrate",
        ],
    );
}

#[test]
fn slurm_array_killed_task_resubmitted_equals_local() {
    if let Err(why) = slurm_available() {
        if std::env::var("SCHEDLAB_REQUIRE_SLURM").as_deref() == Ok("1") {
            panic!("Slurm is required here (SCHEDLAB_REQUIRE_SLURM=1) but: {why}");
        }
        eprintln!("SKIPPED: no Slurm on this machine ({why}); scripts/slurm-up starts one");
        return;
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(170);
    let root: PathBuf = std::env::temp_dir().join(format!("schedlab-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("cluster");
    plan(&dir);
    let m = Manifest::load(&dir).unwrap();
    assert_eq!(m.runs.len(), 16);
    let mut jobs = Jobs(Vec::new());
    let (array, merge) = submit(&dir, &mut jobs);
    // Kill array task 1 with SIGKILL once it has finished its first run (index 1).
    while results_of_shard(&dir, &m, 1) == 0 {
        assert!(Instant::now() < deadline, "task 1 never finished a run");
        std::thread::sleep(Duration::from_millis(20));
    }
    sh(
        "scancel",
        &["--signal=KILL", "--full", &format!("{array}_1")],
    );
    wait_gone(&array, deadline);
    wait_gone(&merge, deadline);
    let killed = results_of_shard(&dir, &m, 1);
    assert!(
        (1..4).contains(&killed),
        "task 1 should have lost runs: {killed} of 4"
    );
    let partial = db::open_existing(&dir.join("results.sqlite")).unwrap();
    let n: i64 = partial
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        n as usize,
        12 + killed,
        "the first merge job merged what finished"
    );
    drop(partial);
    // Resubmit: only the missing runs of task 1 run; the merge job completes the database.
    let (array2, merge2) = submit(&dir, &mut jobs);
    wait_gone(&array2, deadline);
    wait_gone(&merge2, deadline);
    let log = std::fs::read_to_string(dir.join(format!("slurm/logs/run-{array2}_1.out"))).unwrap();
    assert!(
        log.contains(&format!(
            "4 runs selected, {killed} already finished, {} ran",
            4 - killed
        )),
        "{log}"
    );
    let log0 = std::fs::read_to_string(dir.join(format!("slurm/logs/run-{array2}_0.out"))).unwrap();
    assert!(log0.contains("4 already finished, 0 ran"), "{log0}");
    // The same grid, locally.
    let local = root.join("local");
    plan(&local);
    sh(BIN, &["sweep", "run", local.to_str().unwrap()]);
    let local_db = root.join("local.sqlite");
    sh(
        BIN,
        &[
            "sweep",
            "merge",
            local.to_str().unwrap(),
            "-o",
            local_db.to_str().unwrap(),
        ],
    );
    let a = db::dump(
        &db::open_existing(&dir.join("results.sqlite")).unwrap(),
        true,
    )
    .unwrap();
    let b = db::dump(&db::open_existing(&local_db).unwrap(), true).unwrap();
    assert_eq!(
        a.lines().filter(|l| !l.starts_with("##")).count(),
        b.lines().filter(|l| !l.starts_with("##")).count()
    );
    assert!(a == b, "Slurm and local databases differ");
    jobs.0.clear();
    eprintln!(
        "slurm sweep: 16 runs, task 1 killed after {killed} run(s), resubmitted; database equals \
         the local one ({} rows); {:.1} s",
        a.lines().count(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&root);
}
