//! `schedlab sweep`: grid expansion and content-addressed ids, resumable execution (a
//! SIGKILL at the worst moment leaves nothing that looks finished; the rerun runs exactly the
//! rest), SIGINT, idempotent merge, and the pivot's numbers checked by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use schedlab::experiment::sweep::{self, Manifest, db, grid::Grid, query};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// 2 profiles x 3 seeds of a small hackbench on hybrid-10 (each run a few ms of CPU).
const SMALL: &str = r#"
[base]
machine = "hybrid-10"
command = "hackbench -g 1 -l 30"
[axes]
profiles = ["v6.6", "v6.15"]
seeds = 3
"#;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedlab-sweep-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_grid(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn schedlab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn results(dir: &Path) -> (Vec<String>, Vec<String>) {
    let mut done = Vec::new();
    let mut temp = Vec::new();
    for e in std::fs::read_dir(dir.join("results")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            temp.push(name);
        } else {
            done.push(name);
        }
    }
    done.sort();
    (done, temp)
}

#[test]
fn plan_expands_the_product_with_stable_distinct_ids() {
    let d = scratch("plan");
    let grid = r#"
[base]
command = "hackbench -g 1 -l 30"
[axes]
machines = ["hybrid-10", "nehalem-2s"]
profiles = ["v6.6", "v6.15"]
features = ["", "NO_TTWU_QUEUE"]
set = { "kernel.sysctl.sched_migration_cost_ns" = [250000, 500000] }
seeds = [7, 8, 9]
"#;
    let g = Grid::load(&write_grid(&d, "g.toml", grid)).unwrap();
    let m1 = sweep::plan(&g).unwrap();
    assert_eq!(m1.runs.len(), 2 * 2 * 2 * 2 * 3);
    assert_eq!(
        m1.axes,
        [
            "machine",
            "profile",
            "features",
            "kernel.sysctl.sched_migration_cost_ns",
            "seed"
        ]
    );
    // The seed varies fastest; index = position.
    assert_eq!(m1.runs[1].seed, 8);
    assert!(m1.runs.iter().enumerate().all(|(i, r)| r.index == i));
    let mut ids: Vec<&str> = m1.runs.iter().map(|r| r.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids.len(),
        m1.runs.len(),
        "every configuration has its own id"
    );
    // The same grid from another file (and another directory) gives the same ids.
    let d2 = scratch("plan2");
    let g2 = Grid::load(&write_grid(&d2, "other-name.toml", grid)).unwrap();
    let m2 = sweep::plan(&g2).unwrap();
    let ids1: Vec<&str> = m1.runs.iter().map(|r| r.id.as_str()).collect();
    let ids2: Vec<&str> = m2.runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids1, ids2);
    // One changed value (the benchmark's loops) changes every id.
    let g3 = Grid::load(&write_grid(&d2, "g3.toml", &grid.replace("-l 30", "-l 31"))).unwrap();
    let m3 = sweep::plan(&g3).unwrap();
    assert!(m3.runs.iter().zip(&m1.runs).all(|(a, b)| a.id != b.id));
    // A value equal to the profile default resolves to the same configuration: same id as
    // leaving it out (ids hash the resolved scenario, not the spelling).
    let m4 = sweep::plan(
        &Grid::load(&write_grid(
            &d2,
            "g4.toml",
            "[base]\nmachine = \"hybrid-10\"\ncommand = \"hackbench -g 1 -l 30\"\nprofile = \"v6.6\"\n",
        ))
        .unwrap(),
    )
    .unwrap();
    let m5 = sweep::plan(
        &Grid::load(&write_grid(
            &d2,
            "g5.toml",
            "[base]\nmachine = \"hybrid-10\"\ncommand = \"hackbench -g 1 -l 30\"\nprofile = \"v6.6\"\n\
             features = [\"TTWU_QUEUE\"]\n",
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(m4.runs[0].id, m5.runs[0].id);
    // Without a seeds axis the base scenario's seed is the one seed.
    write_grid(
        &d2,
        "base.toml",
        "[machine]\npreset = \"hybrid-10\"\n[workload]\ncommand = \"hackbench -g 1 -l 30\"\n\
         [run]\nseed = 42\nruns = 3\n",
    );
    let m6 = sweep::plan(
        &Grid::load(&write_grid(
            &d2,
            "g6.toml",
            "[base]\nscenario = \"base.toml\"\n",
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(m6.runs.len(), 1, "one run per configuration and seed");
    assert_eq!(m6.runs[0].seed, 42);
}

#[test]
fn bad_grids_are_one_line_errors_with_exit_2() {
    let d = scratch("bad");
    for (grid, expect) in [
        ("[axes]\nmachine = [\"skl-2s\"]\n", "did you mean machines"),
        (
            "[base]\ncommand = \"hackbench\"\n[axes]\nmachines = [\"skl-2s\", \"skl-2s\"]\n",
            "listed twice",
        ),
        (
            "[base]\nmachine = \"skl-2s\"\ncommand = \"hackbench\"\n[axes]\nseeds = 1001\n",
            "axes.seeds",
        ),
        (
            "[base]\ncommand = \"hackbench\"\n[axes]\nmachines = [\"host\"]\n",
            "not `host`",
        ),
        (
            "[base]\nmachine = \"skl-2s\"\ncommand = \"hackbench\"\n[axes]\nprofiles = [\"v6.99\"]\n",
            "kernel.profile",
        ),
        (
            "[base]\ncommand = \"hackbench\"\n[axes]\nmachines = [\"skl-2s\", \"skl2s\"]\n",
            "skl-2s",
        ),
        (
            "[base]\nmachine = \"skl-2s\"\n[axes]\ncommands = [\"hackbench -g 2\", \"hackbench -g x\"]\n",
            "run 1",
        ),
        (
            "[base]\nmachine = \"skl-2s\"\ncommand = \"hackbench\"\nprofile = \"v6.6\"\n[axes]\n\
             features = [\"\", \"TTWU_QUEUE\"]\n",
            "runs 0 and 1 resolve to the same configuration",
        ),
    ] {
        let g = write_grid(&d, "bad.toml", grid);
        let o = schedlab(&[
            "sweep",
            "plan",
            g.to_str().unwrap(),
            "-o",
            d.join("out").to_str().unwrap(),
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{grid}: {t}");
        assert!(t.contains(expect), "{grid}: {t}");
        assert_eq!(t.lines().count(), 1, "{t}");
        assert!(!t.contains("panicked"));
    }
    // Too many runs: 1000 x 1000 seeds... is refused before expansion.
    let many: Vec<String> = (0..1000).map(|i| format!("\"c{i}\"")).collect();
    let g = write_grid(
        &d,
        "many.toml",
        &format!(
            "[base]\nmachine = \"skl-2s\"\n[axes]\ncommands = [{}]\nseeds = 1000\n",
            many.join(",")
        ),
    );
    let t = text(&schedlab(&[
        "sweep",
        "plan",
        g.to_str().unwrap(),
        "-o",
        d.join("o2").to_str().unwrap(),
    ]));
    assert!(t.contains("exceed the limit of 100000 runs"), "{t}");
}

#[test]
fn sigkill_at_the_worst_moment_leaves_nothing_finished_and_the_rerun_does_the_rest() {
    let d = scratch("kill");
    let g = write_grid(&d, "g.toml", SMALL);
    let dir = plan_uncalibrated(&d, &g);
    let dir_s = dir.to_str().unwrap();
    // The third result (K = 2) is written to its temporary file, then the process SIGKILLs
    // itself before renaming it.
    let o = Command::new(BIN)
        .args(["sweep", "run", dir_s, "--jobs", "1"])
        .env(sweep::exec::KILL_AT_ENV, "2")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(o.status.signal(), Some(9), "{}", text(&o));
    let (done, temp) = results(&dir);
    assert_eq!(done.len(), 2, "{done:?}");
    assert_eq!(
        temp.len(),
        1,
        "the killed write stays under its temporary name: {temp:?}"
    );
    let st = text(&schedlab(&["sweep", "status", dir_s]));
    assert!(st.contains("2 of 6 runs finished, 4 to run"), "{st}");
    // A merge now sees 2 runs (the temporary file is not a result).
    let db1 = d.join("partial.sqlite");
    let t = text(&schedlab(&[
        "sweep",
        "merge",
        dir_s,
        "-o",
        db1.to_str().unwrap(),
    ]));
    assert!(
        t.contains("merged 2 of 6 runs") && t.contains("4 without a result"),
        "{t}"
    );
    // The rerun runs exactly the 4 others.
    let o = schedlab(&["sweep", "run", dir_s, "--jobs", "2"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("6 runs selected, 2 already finished, 4 ran, 0 failed"),
        "{t}"
    );
    let (done2, _) = results(&dir);
    assert_eq!(done2.len(), 6);
    assert!(done.iter().all(|f| done2.contains(f)));
    // And a third run does nothing.
    let t = text(&schedlab(&["sweep", "run", dir_s]));
    assert!(t.contains("6 already finished, 0 ran"), "{t}");
    // Each result equals what `schedlab run` prints for the same configuration and seed.
    let m = Manifest::load(&dir).unwrap();
    let r = &m.runs[4]; // v6.15, seed 2
    assert_eq!(r.axes[0], ("profile".to_string(), "v6.15".to_string()));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sweep::result_path(&dir, &r.id)).unwrap())
            .unwrap();
    let o = schedlab(&[
        "run",
        "-m",
        "hybrid-10",
        "-k",
        "v6.15",
        "--seed",
        "2",
        "--json",
        "-",
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "30",
    ]);
    let single: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["run"]["events"], single["runs"][0]["events"]);
    assert_eq!(doc["run"]["workload"], single["runs"][0]["workload"]);
    assert_eq!(doc["run"]["perf_stat"], single["runs"][0]["perf_stat"]);
}

#[test]
fn shards_partition_the_runs_and_index_runs_one() {
    let d = scratch("shard");
    let g = write_grid(&d, "g.toml", SMALL);
    let dir = d.join("sweep");
    let dir_s = dir.to_str().unwrap();
    assert!(
        schedlab(&[
            "sweep",
            "plan",
            g.to_str().unwrap(),
            "-o",
            dir_s,
            "--no-calibrate"
        ])
        .status
        .success()
    );
    let t = text(&schedlab(&["sweep", "run", dir_s, "--index", "5"]));
    assert!(
        t.contains("1 runs selected, 0 already finished, 1 ran"),
        "{t}"
    );
    let t = text(&schedlab(&["sweep", "run", dir_s, "--shard", "1/4"]));
    // Indices 1 and 5 (5 finished already).
    assert!(
        t.contains("2 runs selected, 1 already finished, 1 ran"),
        "{t}"
    );
    let o = schedlab(&["sweep", "run", dir_s, "--shard", "4/4"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = schedlab(&["sweep", "run", dir_s, "--index", "6"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("accepted: 0 to 5"));
}

/// `sweep plan GRID -o D/sweep --no-calibrate` (the plan must succeed): the sweep directory.
fn plan_uncalibrated(d: &Path, grid: &Path) -> PathBuf {
    let dir = d.join("sweep");
    let o = schedlab(&[
        "sweep",
        "plan",
        grid.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
        "--no-calibrate",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    dir
}

/// Plan and run SMALL; returns the sweep directory.
fn finished_small(name: &str) -> (PathBuf, PathBuf) {
    let d = scratch(name);
    let g = write_grid(&d, "g.toml", SMALL);
    let dir = d.join("sweep");
    let dir_s = dir.to_str().unwrap();
    assert!(
        schedlab(&["sweep", "plan", g.to_str().unwrap(), "-o", dir_s])
            .status
            .success()
    );
    assert!(schedlab(&["sweep", "run", dir_s]).status.success());
    (d, dir)
}

#[test]
fn a_seed_above_i64_max_is_stored_as_the_seed_that_replays_it() {
    // The kind of seed `run --runs N` prints (derived seeds are full u64).
    const BIG: &str = "16860738450190168606";
    let d = scratch("bigseed");
    let grid = format!(
        "[base]\nmachine = \"hybrid-10\"\ncommand = \"hackbench -g 1 -l 20\"\n[axes]\nseeds = [3, \"{BIG}\"]\n"
    );
    let g = write_grid(&d, "g.toml", &grid);
    let dir = d.join("sweep");
    let dir_s = dir.to_str().unwrap();
    let o = schedlab(&["sweep", "plan", g.to_str().unwrap(), "-o", dir_s]);
    assert!(o.status.success(), "{}", text(&o));
    let o = schedlab(&["sweep", "run", dir_s]);
    assert!(o.status.success(), "{}", text(&o));
    let dbp = d.join("r.sqlite");
    let o = schedlab(&["sweep", "merge", dir_s, "-o", dbp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let conn = db::open_existing(&dbp).unwrap();
    let seeds: Vec<String> = conn
        .prepare("SELECT CAST(seed AS TEXT) FROM runs ORDER BY idx")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        seeds,
        ["3", BIG],
        "stored exactly, neither negative nor a REAL"
    );
    // The stored seed replays the run: the sweep's time equals `run --seed BIG`'s.
    let time: f64 = conn
        .query_row(
            "SELECT m.value FROM runs r JOIN metrics m ON m.run_id = r.id \
             WHERE r.idx = 1 AND m.metric = 'workload.time_s'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let o = schedlab(&[
        "run",
        "-m",
        "hybrid-10",
        "--seed",
        BIG,
        "--json",
        "-",
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "20",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["workload"]["time_s"].as_f64().unwrap(), time);
}

#[test]
fn merge_is_idempotent_and_exports() {
    let (d, dir) = finished_small("merge");
    let dbp = d.join("r.sqlite");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            "merge",
            dir.to_str().unwrap(),
            "-o",
            dbp.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        schedlab(&a)
    };
    assert!(args(&[]).status.success());
    let first = db::dump(&db::open_existing(&dbp).unwrap(), false).unwrap();
    let csv = d.join("csv");
    let jsonl = d.join("r.jsonl");
    let o = args(&[
        "--csv",
        csv.to_str().unwrap(),
        "--jsonl",
        jsonl.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let second = db::dump(&db::open_existing(&dbp).unwrap(), false).unwrap();
    assert_eq!(first, second, "merging twice changes nothing");
    let conn = db::open_existing(&dbp).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 6);
    // Every run has its migrations by reason, and the total equals their sum.
    let bad: i64 = conn
        .query_row(
            "SELECT count(*) FROM runs r WHERE (SELECT value FROM metrics WHERE run_id = r.id \
             AND metric = 'migrations.total') != (SELECT sum(count) FROM migrations WHERE \
             run_id = r.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0);
    let runs_csv = std::fs::read_to_string(csv.join("runs.csv")).unwrap();
    assert_eq!(runs_csv.lines().count(), 7);
    assert!(runs_csv.starts_with("id,idx,seed,machine,profile"));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[3]["axes"]["profile"], "v6.15");
    assert_eq!(lines[3]["seed"], 1);
    assert!(lines[3]["metrics"]["workload.time_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn pivot_cells_are_mean_and_t_interval_by_hand() {
    // By hand: values 1, 2, 3: mean 2, sample sd 1, 95% CI half-width t(0.975, 2) / sqrt(3)
    // = 4.3027 / 1.732 = 2.484.
    let (mean, ci, n) = query::mean_ci(&[1.0, 2.0, 3.0]);
    assert_eq!((mean, n), (2.0, 3));
    assert!((ci - 4.3027 / 3f64.sqrt()).abs() < 1e-4, "{ci}");
    assert_eq!(query::mean_ci(&[5.0]), (5.0, 0.0, 1));
    assert!((schedlab::stats::summary::t975(40) - 2.0211).abs() < 1e-4);
    // The table of a real sweep: each cell is the mean of its runs' metric, read back from
    // the result files.
    let (d, dir) = finished_small("table");
    let dbp = d.join("r.sqlite");
    assert!(
        schedlab(&[
            "sweep",
            "merge",
            dir.to_str().unwrap(),
            "-o",
            dbp.to_str().unwrap()
        ])
        .status
        .success()
    );
    let o = schedlab(&[
        "sweep",
        "table",
        dbp.to_str().unwrap(),
        "--rows",
        "profile",
        "--cols",
        "seed",
        "--metric",
        "perf_stat.context_switches",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let m = Manifest::load(&dir).unwrap();
    for r in &m.runs {
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(sweep::result_path(&dir, &r.id)).unwrap(),
        )
        .unwrap();
        let cs = doc["run"]["perf_stat"]["context_switches"]
            .as_u64()
            .unwrap();
        let line = t.lines().find(|l| l.starts_with(&r.axes[0].1)).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let means: Vec<f64> = words
            .windows(2)
            .filter(|w| w[1] == "±")
            .map(|w| w[0].parse().unwrap())
            .collect();
        assert_eq!(means.len(), 3, "{line}");
        assert!(means.contains(&(cs as f64)), "{cs} in {line}");
    }
    let o = schedlab(&[
        "sweep",
        "table",
        dbp.to_str().unwrap(),
        "--rows",
        "profle",
        "--cols",
        "seed",
        "--metric",
        "perf_stat.context_switches",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("did you mean profile"), "{}", text(&o));
    // compare --db pairs the runs by seed: the paired delta is the mean of the differences.
    let o = schedlab(&[
        "compare",
        "--db",
        dbp.to_str().unwrap(),
        "--a",
        "profile=v6.6",
        "--b",
        "profile=v6.15",
        "--metric",
        "perf_stat.context_switches",
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("3 pairs matched"), "{t}");
}

#[test]
fn sigint_stops_promptly_and_keeps_finished_runs() {
    let d = scratch("sigint");
    // Runs of ~0.15 s of CPU each: 2 x 3 of them.
    let g = write_grid(
        &d,
        "g.toml",
        "[base]\nmachine = \"nehalem-2s\"\ncommand = \"hackbench -g 4 -l 400\"\n[axes]\n\
         profiles = [\"v6.6\", \"v6.15\"]\nseeds = 3\n",
    );
    let dir = d.join("sweep");
    let dir_s = dir.to_str().unwrap();
    assert!(
        schedlab(&[
            "sweep",
            "plan",
            g.to_str().unwrap(),
            "-o",
            dir_s,
            "--no-calibrate"
        ])
        .status
        .success()
    );
    let child = Command::new(BIN)
        .args(["sweep", "run", dir_s, "--jobs", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // SIGINT as soon as the first run has finished (the others are running or queued).
    let waited = std::time::Instant::now();
    while results(&dir).0.is_empty() && waited.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = std::time::Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let took = sent.elapsed().as_secs_f64();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(130), "{t}");
    assert!(took < 3.0, "stopped after {took} s");
    assert!(t.contains("stopped by SIGINT"), "{t}");
    let (done, temp) = results(&dir);
    assert!(
        !done.is_empty() && done.len() < 6 && temp.is_empty(),
        "{done:?} {temp:?}"
    );
    let o = schedlab(&["sweep", "run", dir_s]);
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "{} already finished, {} ran",
            done.len(),
            6 - done.len()
        )),
        "{t}"
    );
}

/// Issue 32 (audit, item 1): runs cut short (the benchmark did not finish) are recorded,
/// counted by `sweep run`/`status`/`merge`, marked `*` in `sweep table` with a footnote and
/// left out of its means unless `--allow-incomplete`.
#[test]
fn cut_runs_are_recorded_marked_and_left_out_of_the_means() {
    let d = scratch("cut");
    let g = write_grid(
        &d,
        "g.toml",
        r#"
[base]
machine = "hybrid-10"
command = "hackbench -g 1 -l 30"
[axes]
seeds = 2
[axes.set]
"run.duration_s" = [0.0001, 1]
"#,
    );
    let dir = plan_uncalibrated(&d, &g);
    let dir_s = dir.to_str().unwrap();
    let o = schedlab(&["sweep", "run", dir_s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("4 ran (2 cut short: the benchmark did not finish"),
        "{}",
        text(&o)
    );
    let m = Manifest::load(&dir).unwrap();
    for r in &m.runs {
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(sweep::result_path(&dir, &r.id)).unwrap(),
        )
        .unwrap();
        let cut = r.axes.iter().any(|(_, v)| v == "0.0001");
        assert_eq!(doc["workload_complete"], !cut, "{:?}", r.axes);
    }
    let o = schedlab(&["sweep", "status", dir_s]);
    assert!(
        text(&o).contains("4 of 4 runs finished (2 of them cut short"),
        "{}",
        text(&o)
    );
    let dbp = d.join("r.sqlite");
    let o = schedlab(&["sweep", "merge", dir_s, "-o", dbp.to_str().unwrap()]);
    assert!(text(&o).contains("(2 cut short"), "{}", text(&o));
    let table = |extra: &[&str]| {
        let mut args = vec!["sweep", "table", dbp.to_str().unwrap()];
        args.extend(["--rows", "run.duration_s", "--cols", "seed"]);
        args.extend(["--metric", "workload.time_s"]);
        args.extend_from_slice(extra);
        let o = schedlab(&args);
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let t = table(&[]);
    let cut_row = t.lines().find(|l| l.starts_with("0.0001")).unwrap();
    assert_eq!(
        cut_row.matches("not finished*").count(),
        2,
        "cut runs in a mean: {t}"
    );
    let whole_row = t.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert!(!whole_row.contains('*') && whole_row.contains("(1)"), "{t}");
    assert!(
        t.contains("* the benchmark did not finish in 2 of 4 runs")
            && t.contains("left out of the means (--allow-incomplete includes them)"),
        "{t}"
    );
    let t = table(&["--allow-incomplete"]);
    let cut_row = t.lines().find(|l| l.starts_with("0.0001")).unwrap();
    assert_eq!(
        cut_row.matches("0.000100 ± 0.000000 (1)*").count(),
        2,
        "{t}"
    );
    assert!(t.contains("included (--allow-incomplete)"), "{t}");
}

/// A result file that is JSON with a `run` member but not a run's results (`{"run":1}`,
/// `{"run":{"x":1}}`) is damaged: not counted as finished, not merged, run again.
#[test]
fn a_result_without_the_run_results_is_damaged_and_run_again() {
    let (d, dir) = finished_small("damaged");
    let dir_s = dir.to_str().unwrap();
    let m = Manifest::load(&dir).unwrap();
    std::fs::write(sweep::result_path(&dir, &m.runs[0].id), "{\"run\":1}\n").unwrap();
    std::fs::write(
        sweep::result_path(&dir, &m.runs[1].id),
        "{\"run\":{\"x\":1}}\n",
    )
    .unwrap();
    for r in &m.runs[..2] {
        assert_eq!(
            sweep::result_state(&dir, &r.id),
            sweep::ResultState::Damaged
        );
    }
    let o = schedlab(&["sweep", "status", dir_s]);
    assert!(
        text(&o).contains("4 of 6 runs finished, 2 to run")
            && text(&o).contains("2 result file(s) damaged"),
        "{}",
        text(&o)
    );
    let dbp = d.join("r.sqlite");
    let o = schedlab(&["sweep", "merge", dir_s, "-o", dbp.to_str().unwrap()]);
    assert!(
        text(&o).contains("merged 4 of 6 runs") && text(&o).contains("2 of them damaged"),
        "{}",
        text(&o)
    );
    let o = schedlab(&["sweep", "run", dir_s]);
    assert!(text(&o).contains("2 ran"), "{}", text(&o));
    let o = schedlab(&["sweep", "status", dir_s]);
    assert!(
        text(&o).contains("6 of 6 runs finished, 0 to run"),
        "{}",
        text(&o)
    );
}

/// Issue 32 (audit, item 4): off a terminal `sweep run` prints the progress lines `run` and
/// `compare` print; `-q` turns them off.
#[test]
fn sweep_run_prints_progress_lines_off_a_terminal_unless_quiet() {
    let d = scratch("lines");
    let g = write_grid(&d, "g.toml", SMALL);
    let dir = plan_uncalibrated(&d, &g);
    let dir_s = dir.to_str().unwrap();
    let o = schedlab(&["sweep", "run", dir_s, "--index", "0", "-q"]);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success() && !e.contains("runs finished"), "{e}");
    let o = schedlab(&["sweep", "run", dir_s, "--jobs", "1"]);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{e}");
    assert!(e.contains("schedlab: sweep: 5 of 5 runs finished"), "{e}");
}
