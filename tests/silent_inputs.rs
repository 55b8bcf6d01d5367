//! The silent inputs of issue 32 item 5: each now gives an error or a warning naming the file
//! and what is accepted (docs/inputs.md lists them with these tests).

use std::path::{Path, PathBuf};
use std::process::Command;

fn schedlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("schedlab runs")
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmpdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-silent-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The sysfs fixture (16 CPUs, 8 nodes) unpacked into `dir`; returns its root.
fn sysfs_fixture(dir: &Path) -> PathBuf {
    let tarball = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/topology/sysfs/16amd64-8n2c.tar.bz2");
    let ok = Command::new("tar")
        .arg("-xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "unpack {}", tarball.display());
    dir.join("16amd64-8n2c")
}

fn topo(root: &Path) -> std::process::Output {
    schedlab(&["topo", "--sysfs-root", root.to_str().unwrap()])
}

#[test]
fn a_negative_package_id_other_than_unknown_is_refused() {
    let root = sysfs_fixture(&tmpdir("pkg"));
    let f = root.join("sys/devices/system/cpu/cpu3/topology/physical_package_id");
    std::fs::write(&f, "-7\n").unwrap();
    let o = topo(&root);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("cpu3/topology/physical_package_id"), "{e}");
    assert!(
        e.contains("accepted: an integer >= 0, or -1 (unknown)"),
        "{e}"
    );
    // -1 is the kernel's "unknown" and stays accepted.
    std::fs::write(&f, "-1\n").unwrap();
    assert_eq!(topo(&root).status.code(), Some(0));
}

#[test]
fn an_online_cpu_without_topology_is_warned_about() {
    let root = sysfs_fixture(&tmpdir("topo"));
    std::fs::remove_dir_all(root.join("sys/devices/system/cpu/cpu5/topology")).unwrap();
    let o = topo(&root);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "cpu5/topology missing: online CPU 5 has no topology/; its core is the CPUs \
             sharing its L1 and its package that of a CPU sharing its LLC, else its own"
        ),
        "{e}"
    );
}

/// The audit of issue 32: a `physical_package_id` of -1 (the kernel's "unknown") next to CPUs
/// with ids warns naming the file, and the CPU takes the package of a CPU sharing its LLC:
/// the topology is the snapshot's (5 LLCs), not split by a package 0 (6 LLCs). -1 on every
/// CPU is one package, without a warning.
#[test]
fn an_unknown_package_id_next_to_known_ones_is_warned_about() {
    let dir = tmpdir("pkg-unknown");
    let tarball = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/topology/sysfs/8em64t-2s4c-asymcaches.tar.bz2");
    let ok = Command::new("tar")
        .arg("-xjf")
        .arg(&tarball)
        .arg("-C")
        .arg(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "unpack {}", tarball.display());
    let root = dir.join("8em64t-2s4c-heterogeneous");
    let first_line = |o: &std::process::Output| {
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines().next().unwrap_or_default().to_string()
    };
    let before = topo(&root);
    assert!(
        first_line(&before).contains("2 packages, 8 cores, 5 LLCs"),
        "{}",
        first_line(&before)
    );
    let pkg = |cpu: usize| {
        root.join(format!(
            "sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"
        ))
    };
    std::fs::write(pkg(5), "-1\n").unwrap();
    let o = topo(&root);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        first_line(&before),
        "the topology is unchanged"
    );
    let e = stderr(&o);
    assert!(
        e.contains(
            "warning: sys/devices/system/cpu/cpu5/topology/physical_package_id: -1 (unknown) \
             while other CPUs have package ids; CPU 5's package is that of a CPU sharing its \
             LLC, else its own"
        ),
        "{e}"
    );
    for cpu in 0..8 {
        std::fs::write(pkg(cpu), "-1\n").unwrap();
    }
    let o = topo(&root);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).contains("1 packages"), "{}", first_line(&o));
    assert!(
        !stderr(&o).contains("physical_package_id"),
        "{}",
        stderr(&o)
    );
}

fn hwloc(dir: &Path, pus: &str) -> PathBuf {
    let path = dir.join("m.xml");
    std::fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n\
             <object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000ffff\" \
             complete_cpuset=\"0x0000ffff\" online_cpuset=\"0x0000ffff\">\n\
             <object type=\"Package\" os_index=\"0\" cpuset=\"0x0000ffff\">\n{pus}\
             </object>\n</object>\n</topology>\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn hwloc_pus_sharing_one_id_or_no_pus_are_refused() {
    let dir = tmpdir("hwloc");
    let same: String = (0..16)
        .map(|_| "<object type=\"Core\"><object type=\"PU\" os_index=\"0\" cpuset=\"0x1\"/></object>\n")
        .collect();
    let o = schedlab(&["topo", hwloc(&dir, &same).to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("CPU 0 is named by two PU objects"),
        "{}",
        stderr(&o)
    );
    let o = schedlab(&["topo", hwloc(&dir, "").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the topology has no PU object"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_command_line_replacing_the_files_workload_is_warned_about() {
    let o = schedlab(&[
        "run",
        "scenarios/hackbench.toml",
        "-q",
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: the benchmark command line replaces the scenario's"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_run_shorter_than_a_microsecond_is_refused() {
    let o = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--set",
        "run.duration_s=1e-300",
        "--",
        "hackbench",
        "-g",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("run.duration_s") && e.contains("1e-300"), "{e}");
    assert!(e.contains("seconds >= 0.000001 (one microsecond)"), "{e}");
}

#[test]
fn an_rtapp_file_naming_a_task_twice_is_refused() {
    let dir = tmpdir("rtapp");
    let json = dir.join("dup.json");
    std::fs::write(
        &json,
        r#"{ "tasks": { "t1": { "loop": 2, "run": 1000, "sleep": 1000 },
                         "t1": { "loop": 3, "run": 2000, "sleep": 1000 } } }"#,
    )
    .unwrap();
    let scn = dir.join("s.toml");
    std::fs::write(
        &scn,
        format!(
            "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"rtapp\"\nfile = \"{}\"\n",
            json.display()
        ),
    )
    .unwrap();
    let o = schedlab(&["run", scn.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("dup.json") && e.contains("tasks.t1"), "{e}");
    assert!(e.contains("this task name appears twice"), "{e}");
}

#[test]
fn a_trace_cut_short_is_refused_by_report() {
    let dir = tmpdir("trace");
    let (json, trace, html) = (dir.join("r.json"), dir.join("t.txt"), dir.join("r.html"));
    let o = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let whole = std::fs::read(&trace).unwrap();
    let report = |t: &Path| {
        schedlab(&[
            "report",
            json.to_str().unwrap(),
            "--trace",
            t.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ])
    };
    assert_eq!(report(&trace).status.code(), Some(0));
    let half = dir.join("half.txt");
    std::fs::write(&half, &whole[..whole.len() / 2]).unwrap();
    let o = report(&half);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("half.txt") && stderr(&o).contains("cut short"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bisect_between_one_kernel_and_itself_is_refused_before_any_run() {
    let o = schedlab(&[
        "bisect",
        "-m",
        "skl-2s",
        "--good",
        "v6.6",
        "--bad",
        "v6.6",
        "--",
        "hackbench",
        "-g",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("are the same kernel"), "{e}");
    assert!(!e.contains("runs finished"), "no run may start: {e}");
}

#[test]
fn a_damaged_sweep_result_is_not_counted_as_finished() {
    let dir = tmpdir("sweep");
    let grid = dir.join("grid.toml");
    std::fs::write(
        &grid,
        "[base]\nmachine = \"skl-2s\"\ncommand = \"hackbench -g 1 -l 5\"\n[axes]\nseeds = 2\n",
    )
    .unwrap();
    let sweep = dir.join("sw");
    let plan = schedlab(&[
        "sweep",
        "plan",
        grid.to_str().unwrap(),
        "-o",
        sweep.to_str().unwrap(),
    ]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    let run = schedlab(&["sweep", "run", sweep.to_str().unwrap(), "--jobs", "1"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let results: Vec<PathBuf> = std::fs::read_dir(sweep.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(results.len(), 2);
    let text = std::fs::read(&results[0]).unwrap();
    std::fs::write(&results[0], &text[..text.len() / 3]).unwrap();
    let status = schedlab(&["sweep", "status", sweep.to_str().unwrap()]);
    let e = stderr(&status) + &String::from_utf8_lossy(&status.stdout);
    assert!(e.contains("1 of 2 runs finished, 1 to run"), "{e}");
    assert!(e.contains("1 result file(s) damaged"), "{e}");
    // `sweep run` runs it again, and then both are whole.
    let rerun = schedlab(&["sweep", "run", sweep.to_str().unwrap(), "--jobs", "1"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    let status = schedlab(&["sweep", "status", sweep.to_str().unwrap()]);
    let e = stderr(&status) + &String::from_utf8_lossy(&status.stdout);
    assert!(e.contains("2 of 2 runs finished, 0 to run"), "{e}");
}

/// Issue 32 item 7: messages name the full key, what is accepted and the value.
#[test]
fn messages_name_the_full_key_and_what_is_accepted() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "-m", "skl-2s"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "hackbench", "-g", "1", "-l", "5"]);
        let o = schedlab(&args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        stderr(&o)
    };
    let e = run(&["--set", "machine.cost.smt_speed_pct=5"]);
    assert!(
        e.contains(
            "machine.cost.smt_speed_pct: got integer 5; accepted: an array of 1 or more items, \
             each an integer from 1 to 100 (percent of running alone)"
        ),
        "{e}"
    );
    let e = run(&["--json", ""]);
    assert!(
        e.contains("--json: an empty path; accepted: a file path"),
        "{e}"
    );
    let o = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--",
        "numactl",
        "-N",
        "5",
        "hackbench",
        "-g",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("<5> is invalid; this machine has nodes 0-1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
}

/// The audit of issue 32: nested `[machine.cost]` values (arrays, tables, the governor's
/// name) are checked like the scalar keys: the error names the full key path, the value and
/// what is accepted, on one line, exit 2 (no serde text cut at `machine.cost`, no panic on
/// an empty table).
#[test]
fn nested_cost_values_name_the_full_key_the_value_and_what_is_accepted() {
    let dir = tmpdir("cost");
    for (cost, expected) in [
        (
            "smt_speed_pct = [100, -5]",
            "machine.cost.smt_speed_pct[1]: got integer -5; accepted: an integer from 1 to 100",
        ),
        (
            "smt_speed_pct = [\"a\", 62]",
            "machine.cost.smt_speed_pct[0]: got string \"a\"; accepted: an integer from 1 to 100",
        ),
        (
            "smt_speed_pct = []",
            "machine.cost.smt_speed_pct: got an array of 0 items; accepted: an array of 1 or more",
        ),
        (
            "cpuidle_governor = \"bogus\"",
            "machine.cost.cpuidle_governor: unknown value 'bogus'; accepted: menu, teo, haltpoll",
        ),
        (
            "idle_states = [{ bogus = 1 }]",
            "machine.cost.idle_states[0].bogus: unknown key; accepted: name, exit_latency_ns, \
             target_residency_ns, polling, mwait, core_exit_latency_ns",
        ),
        (
            "idle_states = [{ name = \"C1\", exit_latency_ns = 2 }]",
            "machine.cost.idle_states[0]: missing key 'target_residency_ns'; accepted: a table of",
        ),
        (
            "idle_states = []",
            "machine.cost.idle_states: got an array of 0 items; accepted: an array of 1 to 10 items",
        ),
        (
            "nontask_pct = 1e9",
            "machine.cost.nontask_pct: got float 1000000000; accepted: a table of a CPU list = \
             an integer from 0 to 90 (percent), such as { \"0-3\" = 10 }",
        ),
        (
            "nontask_pct = { \"0-3\" = 95 }",
            "machine.cost.nontask_pct.\"0-3\": got integer 95; accepted: an integer from 0 to 90",
        ),
        (
            "haltpoll = { grow = -1 }",
            "machine.cost.haltpoll.grow: got integer -1; accepted: an integer from 0 to 4294967295",
        ),
    ] {
        let f = dir.join("cost.toml");
        std::fs::write(
            &f,
            format!(
                "[machine]\npreset = \"skl-2s\"\n[machine.cost]\n{cost}\n\
                 [workload]\ncommand = \"hackbench -g 1 -l 5\"\n"
            ),
        )
        .unwrap();
        let o = schedlab(&["run", f.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cost}: {e}");
        assert_eq!(e.lines().count(), 1, "{cost}: one line: {e}");
        assert!(e.contains("cost.toml: "), "{cost}: names the file: {e}");
        assert!(e.contains(expected), "{cost}: {e}");
    }
}

/// The audit of issue 32: an integer the TOML parser cannot hold (beyond -2^63..2^63-1) is
/// named by its key with what the key accepts, not `malformed TOML ... as i128` or `u64
/// value was too large`; a seed that large points to its string form, which is accepted.
#[test]
fn integers_beyond_toml_name_the_key_and_what_it_accepts() {
    let dir = tmpdir("bigint");
    let run = |body: &str| {
        let f = dir.join("big.toml");
        std::fs::write(&f, format!("[machine]\npreset = \"skl-2s\"\n{body}")).unwrap();
        schedlab(&["run", f.to_str().unwrap()])
    };
    let beyond = "beyond the integers TOML can hold (-9223372036854775808 to 9223372036854775807)";
    for (body, expected) in [
        (
            "[workload]\nkind = \"spin\"\ntasks = 99999999999999999999999\n",
            format!(
                "big.toml: workload.tasks: got integer 99999999999999999999999, {beyond}; \
                 accepted: an integer from 1 to 100000"
            ),
        ),
        (
            "[run]\nseed = 18446744073709551615\n[workload]\ncommand = \"hackbench -g 1 -l 5\"\n",
            format!(
                "big.toml: run.seed: got integer 18446744073709551615, {beyond}; accepted: an \
                 integer from 0 to 18446744073709551615 (above 9223372036854775807 as a string, \
                 e.g. \"18446744073709551615\")"
            ),
        ),
        (
            "[machine.cost]\nsmt_speed_pct = [100, -99_999_999_999_999_999_999]\n\
             [workload]\ncommand = \"hackbench -g 1 -l 5\"\n",
            format!(
                "big.toml: machine.cost.smt_speed_pct[1]: got integer \
                 -99_999_999_999_999_999_999, {beyond}; accepted: an integer from 1 to 100"
            ),
        ),
    ] {
        let o = run(body);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{body}: {e}");
        assert_eq!(e.lines().count(), 1, "{body}: one line: {e}");
        assert!(e.contains(&expected), "{body}: {e}");
    }
    // The string form the message points to is accepted.
    let o = run(
        "[run]\nseed = \"18446744073709551615\"\n[workload]\ncommand = \"hackbench -g 1 -l 5\"\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("seed 18446744073709551615"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A topology file names the key too.
    let f = dir.join("topo.toml");
    std::fs::write(
        &f,
        "[machine.topology]\ncores_per_package = 99999999999999999999\n",
    )
    .unwrap();
    let o = schedlab(&["topo", f.to_str().unwrap()]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(
            "topo.toml: machine.topology.cores_per_package: got integer 99999999999999999999"
        ),
        "{e}"
    );
}

/// The audit of issue 32: the perf-stat header echoes the command with its control
/// characters escaped, as every other echo does (a newline in an argument no longer splits
/// the header over two lines).
#[test]
fn the_perf_stat_header_escapes_control_characters_of_the_command() {
    let o = schedlab(&["run", "-m", "skl-2s", "--", "hackbench", "-g\n1", "-l", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let header = out
        .lines()
        .find(|l| l.contains("Performance counter stats for"))
        .unwrap_or_default();
    assert_eq!(
        header, " Performance counter stats for 'hackbench '-g\\n1' -l 5':",
        "{out}"
    );
}
