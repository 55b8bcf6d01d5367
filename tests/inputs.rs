//! Inputs you can trust (issue 11): one typed configuration for a benchmark's command-line
//! and key forms, one error wording, and named limits that refuse oversized work before it
//! is allocated. Every case asserts the exact behaviour: exit code 2 and a message naming the
//! origin and the key, or a run that really changed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `schedlab ARGS` in the repository.
fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn schedlab(args: &[&str]) -> std::process::Output {
    command(args).output().expect("schedlab runs")
}

/// stdout of a successful run.
fn ok(args: &[&str]) -> String {
    let out = schedlab(args);
    assert!(
        out.status.success(),
        "schedlab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The one error line of a run that must fail with exit code 2.
fn bad(args: &[&str]) -> String {
    let out = schedlab(args);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "schedlab {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// This test run's scratch directory (made on first use).
fn tmp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tmp(name: &str, text: &str) -> PathBuf {
    let p = tmp_dir().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The one error line of `run scenarios/SCENARIO.toml --set SET` (exit code 2).
fn bad_set(scenario: &str, set: &str) -> String {
    bad(&["run", &format!("scenarios/{scenario}.toml"), "--set", set])
}

/// The one error line of `run FILE` (exit code 2).
fn bad_run(f: &Path) -> String {
    bad(&["run", f.to_str().unwrap()])
}

/// An rt-app scenario on skl-2s: `NAME.json` holding `json`, and `NAME.toml` running it.
fn rtapp_scenario(name: &str, json: &str) -> PathBuf {
    let json = tmp(&format!("{name}.json"), json);
    tmp(
        &format!("{name}.toml"),
        &format!(
            "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"rtapp\"\nfile = \"{}\"\n",
            json.display()
        ),
    )
}

/// `run scenarios/spin.toml` for 10 ms, then `extra`.
fn short_spin<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "scenarios/spin.toml", "--set", "run.duration_s=0.01"];
    args.extend(extra);
    args
}

#[test]
fn set_changes_a_command_form_benchmark() {
    // hackbench.toml runs `hackbench -g 10 -l 500`; the key form's groups is the same field.
    let out = ok(&[
        "run",
        "scenarios/hackbench.toml",
        "--set",
        "workload.groups=2",
        "--set",
        "workload.loops=20",
    ]);
    // The first line names the setup; the benchmark's own report follows.
    let native = out.split_once('\n').map_or("", |(_, rest)| rest);
    assert!(
        native.starts_with(
            "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\n\
             Each sender will pass 20 messages of 100 bytes\n"
        ),
        "{out}"
    );
    // schbench: -m 2 -t 16 from the command, -t 4 from --set (the last option wins).
    let out = ok(&[
        "run",
        "scenarios/schbench.toml",
        "--set",
        "workload.workers_per_message_thread=4",
        "--set",
        "workload.runtime_s=1",
        "--json",
        "-",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["scenario"]["workload"]["workers_per_message_thread"], 4);
    // 1 main + 2 message threads + 2 x 4 workers forked.
    assert!(
        v["runs"][0]["migrations"]["by_reason"]["fork"]
            .as_u64()
            .unwrap()
            <= 11,
        "{}",
        v["runs"][0]["migrations"]
    );
}

#[test]
fn compare_variant_on_a_command_key_really_differs() {
    let out = ok(&[
        "compare",
        "scenarios/hackbench.toml",
        "--variant",
        "g2:workload.groups=2,workload.loops=50",
        "--runs",
        "1",
    ]);
    // Messages = groups x 20 senders x 20 receivers x loops: 10 x 400 x 500 for the base,
    // 2 x 400 x 50 for the variant.
    let block = out
        .split("Metric        : workload.messages")
        .nth(1)
        .expect("a messages table");
    let row = |name: &str| {
        block
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} row in {block}"))
            .to_string()
    };
    assert!(row("baseline").contains(" 2000000 "), "{}", row("baseline"));
    assert!(row("g2 ").contains(" 40000 "), "{}", row("g2 "));
}

#[test]
fn unknown_workload_key_is_an_error_with_a_suggestion() {
    let e = bad_set("hackbench", "workload.mem_intensity_pc=0");
    assert!(
        e.starts_with(
            "schedlab: error: --set: workload.mem_intensity_pc: unknown key (did you mean \
             mem_intensity_pct?); accepted: variant, groups,"
        ),
        "{e}"
    );
    let e = bad_set("schbench", "workload.thread=4");
    assert!(e.contains("--set: workload.thread: unknown key"), "{e}");
}

#[test]
fn key_errors_name_the_key_not_the_flag() {
    let e = bad_set("schbench", "workload.message_threads=0");
    assert!(
        e.starts_with("schedlab: error: --set: workload.message_threads: "),
        "{e}"
    );
    let f = tmp(
        "m0.toml",
        "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"schbench\"\nmessage_threads = 0\n",
    );
    let e = bad_run(&f);
    assert!(e.contains("m0.toml: workload.message_threads: "), "{e}");
}

#[test]
fn one_wording_for_type_errors() {
    for (set, key, got) in [
        (
            "workload.groups=\"x\"",
            "workload.groups",
            "got string \"x\"",
        ),
        ("run.runs=true", "run.runs", "got boolean true"),
        ("workload.ipc=3", "workload.ipc", "got integer 3"),
    ] {
        let e = bad_set("hackbench", set);
        assert!(
            e.contains(&format!("--set: {key}: {got}; accepted: ")),
            "{set}: {e}"
        );
    }
    let e = bad_set("hackbench", "workload.mode=fork");
    assert!(
        e.contains("workload.mode: unknown value 'fork'; accepted: process, thread"),
        "{e}"
    );
}

#[test]
fn a_wrong_type_names_the_keys_own_range() {
    // Not the machine type's range (0 to 2^63-1 for a u64): the range the key accepts, the
    // same for a wrong type, a negative number and a value out of range.
    let cases = [
        (
            "spin",
            "workload.tasks=\"twelve\"",
            "workload.tasks: got string \"twelve\"",
            "1 to 100000",
        ),
        (
            "spin",
            "workload.tasks=-3",
            "workload.tasks: got integer -3",
            "1 to 100000",
        ),
        (
            "spin",
            "workload.tasks=0",
            "workload.tasks: got integer 0",
            "1 to 100000",
        ),
        (
            "pingpong",
            "workload.pairs=2.5",
            "workload.pairs: got float 2.5",
            "1 to 100000",
        ),
        (
            "hackbench",
            "workload.groups=\"x\"",
            "workload.groups: got string \"x\"",
            "1 to 4294967295",
        ),
        (
            "hackbench",
            "run.runs=\"x\"",
            "run.runs: got string \"x\"",
            "1 to 100000",
        ),
        (
            "hackbench",
            "run.noise_irq_rate_hz=-1",
            "run.noise_irq_rate_hz: got integer -1",
            "0 to 100000",
        ),
    ];
    for (kind, set, got, range) in cases {
        let kind_set = format!("workload.kind={kind}");
        let e = bad(&["run", "-m", "skl-2s", "--set", &kind_set, "--set", set]);
        let want = format!("{got}; accepted: an integer from {range}");
        assert!(e.contains(&want), "{set}: {e}");
    }
}

#[test]
fn command_and_keys_in_the_same_place_conflict() {
    let f = tmp(
        "both.toml",
        "[machine]\npreset = \"skl-2s\"\n[workload]\ncommand = \"hackbench -g 2\"\ngroups = 4\n",
    );
    let e = bad_run(&f);
    assert!(
        e.contains("both.toml: workload.groups: cannot be combined with workload.command"),
        "{e}"
    );
    let f = tmp(
        "kind.toml",
        "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"schbench\"\ncommand = \"hackbench -g 2\"\n",
    );
    let e = bad_run(&f);
    assert!(
        e.contains("kind.toml: workload.kind: cannot be combined with workload.command"),
        "{e}"
    );
}

#[test]
fn warmup_must_leave_time_to_measure() {
    let e = bad_set("spin", "run.warmup_s=3");
    assert!(
        e.contains("--set: run.warmup_s: warm-up of 3 s leaves nothing to measure"),
        "{e}"
    );
}

#[test]
fn task_limit_is_checked_before_allocating() {
    let e = bad(&[
        "run",
        "-m",
        "skl-2s",
        "--",
        "hackbench",
        "-g",
        "100000",
        "-l",
        "1",
    ]);
    assert!(
        e.contains("hackbench would create 4000001 tasks, above run.max_tasks = 174762"),
        "{e}"
    );
    let e = bad(&[
        "run", "-m", "skl-2s", "--", "schbench", "-m", "10", "-t", "100000",
    ]);
    assert!(e.contains("schbench would create 1000011 tasks"), "{e}");
    // The budget can be raised, and lowered.
    let e = bad_set("hackbench", "run.max_tasks=100");
    assert!(
        e.contains("hackbench would create 401 tasks, above run.max_tasks = 100"),
        "{e}"
    );
    let e = bad_set("hackbench", "run.max_tasks=0");
    assert!(
        e.contains("run.max_tasks: got integer 0; accepted: an integer from 1 to"),
        "{e}"
    );
}

#[test]
fn duration_limits() {
    let e = bad_set("spin", "run.duration_s=1e12");
    assert!(
        e.contains(
            "--set: run.duration_s: 1000000000000 s is above the limit run.max_duration_s = 86400 s"
        ),
        "{e}"
    );
    let e = bad(&["run", "-m", "skl-2s", "--", "schbench", "-r", "100000000"]);
    assert!(
        e.contains(
            "schbench runs for 110000005 s of simulated time, above run.max_duration_s = 86400 s"
        ),
        "{e}"
    );
    // The largest -r does not overflow the length computation.
    let e = bad(&[
        "run",
        "-m",
        "skl-2s",
        "--",
        "schbench",
        "-r",
        "99999999999999",
    ]);
    assert!(e.contains("schbench runs for 4724464029 s"), "{e}");
}

#[test]
fn oversized_inputs_are_refused() {
    let e = bad(&["run", "/dev/zero"]);
    assert_eq!(
        e,
        "schedlab: error: /dev/zero: file is larger than the input limit of 16 MiB (accepted: a regular text file)\n"
    );
    let f = tmp(
        "zero.toml",
        "[machine]\nhwloc = \"/dev/zero\"\n[workload]\nkind = \"spin\"\n",
    );
    let e = bad_run(&f);
    assert!(e.contains("larger than the input limit of 16 MiB"), "{e}");
    let f = tmp(
        "rt.toml",
        "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"rtapp\"\nfile = \"/dev/zero\"\n",
    );
    let e = bad_run(&f);
    assert!(e.contains("larger than the input limit of 16 MiB"), "{e}");
}

#[test]
fn sized_counts_have_limits() {
    let e = bad(&["run", "-m", "skl-2s", "--", "tbench", "1000000"]);
    assert!(
        e.contains("bad client count '1000000' (accepted: 1 to 100000)"),
        "{e}"
    );
    let f = rtapp_scenario(
        "many",
        r#"{"tasks": {"t": {"instance": 1000000, "loop": 1, "run": 10}}}"#,
    );
    let e = bad_run(&f);
    assert!(e.contains("tasks.t.instance"), "{e}");
    assert!(e.contains("above the limit of 100000"), "{e}");
    let e = bad_set("spin", "run.runs=100001");
    assert!(
        e.contains("--set: run.runs: got integer 100001; accepted: an integer from 1 to 100000"),
        "{e}"
    );
}

/// clap reports flag values; a negative `--seed` gets a real message, not clap's `-- -1` tip
/// (which would turn it into the benchmark command).
#[test]
fn seed_and_runs_flags_say_what_is_accepted() {
    for (flag, value, accepted) in [
        (
            "--seed",
            "-1",
            "accepted: an integer from 0 to 18446744073709551615",
        ),
        ("--runs", "-1", "accepted: an integer from 1 to 100000"),
        ("--runs", "100001", "accepted: an integer from 1 to 100000"),
    ] {
        let out = schedlab(&["run", "scenarios/spin.toml", flag, value]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with(&format!("error: invalid value '{value}' for '{flag} ")),
            "{err}"
        );
        assert!(err.contains(accepted), "{err}");
        assert!(!err.contains("-- -1"), "{err}");
    }
}

#[test]
fn program_errors_name_the_program_once_and_bench_names_its_flag() {
    let out = schedlab(&[
        "run",
        "-m",
        "skl-2s",
        "--",
        "taskset",
        "-x",
        "1",
        "hackbench",
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(
            "schedlab: error: command line: workload.command: taskset: invalid option -- 'x'\n"
        ),
        "{err}"
    );
    let out = schedlab(&["run", "-m", "skl-2s", "--", "hackbench", "-x"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "schedlab: error: command line: workload.command: hackbench: invalid option -- 'x'\n"
    );
    // `--sim-s` is checked as clap parses it (clap's own error layout, exit 2).
    let out = schedlab(&["bench", "--sim-s", "nan"]);
    let e = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.lines()
            .next()
            .unwrap()
            .contains("invalid value 'nan' for '--sim-s <SIM_S>': out of range; accepted: seconds"),
        "{e}"
    );
    assert!(!e.contains("TOML"), "{e}");
    assert!(out.stdout.is_empty(), "no table header before the error");
}

#[test]
fn long_names_are_clipped_in_messages() {
    let long = "x".repeat(100_000);
    let e = bad_set("hackbench", &format!("kernel.profile={long}"));
    assert!(e.len() < 2_000, "{} bytes", e.len());
}

#[test]
fn variant_without_a_colon_is_an_error() {
    let e = bad(&[
        "compare",
        "scenarios/hackbench.toml",
        "--variant",
        "nodelay",
    ]);
    assert!(
        e.starts_with("schedlab: error: --variant: nodelay: a variant without a colon changes nothing; accepted: NAME:"),
        "{e}"
    );
}

#[test]
fn machine_flag_over_a_scenario_machine_warns() {
    let out = schedlab(&short_spin(&["-m", "skl-2s"]));
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.lines().next(),
        Some("schedlab: warning: -m skl-2s replaces the scenario's machine.preset = \"hybrid-10\"")
    );
    let out = ok(&short_spin(&["-m", "skl-2s"]));
    // The run used skl-2s: 80 CPUs, 12 hogs all running at once.
    assert!(out.contains("spin: 12 tasks"), "{out}");
}

#[test]
fn schbench_own_json_flag_is_refused() {
    let e = bad(&[
        "run", "-m", "skl-2s", "--", "schbench", "-r", "1", "--json", "x.json",
    ]);
    assert!(
        e.contains(
            "workload.command: schbench: --json x.json: schbench's own JSON file is not written"
        ),
        "{e}"
    );
}

fn rtapp_err(task: &str) -> String {
    let f = rtapp_scenario(
        &format!("t{}", task.len()),
        &format!(r#"{{"global": {{"duration": 1}}, "tasks": {{"t": {task}}}}}"#),
    );
    bad_run(&f)
}

#[test]
fn rtapp_semantic_checks() {
    let e = rtapp_err(r#"{"policy": "SCHED_DEADLINE", "run": 10}"#);
    assert!(
        e.contains("tasks.t.policy: SCHED_DEADLINE is not modelled"),
        "{e}"
    );
    let e = rtapp_err(r#"{"policy": "SCHED_FIFO", "priority": 500, "run": 10}"#);
    assert!(
        e.contains(
            "tasks.t.priority: 500 is out of range for SCHED_FIFO; accepted: an RT priority from 1 to 99"
        ),
        "{e}"
    );
    let e = rtapp_err(r#"{"priority": 25, "run": 10}"#);
    assert!(e.contains("accepted: a nice value from -20 to 19"), "{e}");
    let e = rtapp_err(r#"{"run": 10, "timer": {"ref": "t", "period": 0}}"#);
    assert!(e.contains("timer.period: 0: a timer needs a period"), "{e}");
}

/// rt-app's top-level `resources` section: each named resource's `type` must be one that
/// rt-app's `string_to_resource()` knows (mutex, signal, wait, broadcast, sync, sleep, run,
/// timer; a missing `type` is a mutex) — rt-app stops with "Invalid type of resource" on any
/// other, `barrier` included. The error names the file, the key and the accepted types, with a
/// did-you-mean. Valid sections (and a non-object section, which rt-app skips) still parse.
#[test]
fn rtapp_resource_types_are_the_ones_rt_app_accepts() {
    use schedlab::workload::rtapp::parse_str;
    let doc = |res: &str| {
        format!(
            r#"{{"resources": {res}, "tasks": {{"t": {{"lock": "m", "run": 10, "unlock": "m"}}}}}}"#
        )
    };
    for ok in [
        r#"{"m": {"type": "mutex"}, "c": {"type": "wait"}, "t": {"type": "timer"}}"#,
        r#"{"m": {}}"#,
        r#"{"s": {"type": "signal"}, "b": {"type": "broadcast"}, "y": {"type": "sync"}, "z": {"type": "sleep"}, "r": {"type": "run"}}"#,
        "3",
    ] {
        parse_str(&doc(ok), "r.json", 8).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let e = parse_str(&doc(r#"{"m": {"type": "mutx"}}"#), "r.json", 8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("r.json"), "{e}");
    assert!(e.contains("resources.m.type"), "{e}");
    assert!(
        e.contains("Invalid type of resource 'mutx' (did you mean mutex?)"),
        "{e}"
    );
    assert!(
        e.contains("accepted: mutex, signal, wait, broadcast, sync, sleep, run, timer"),
        "{e}"
    );
    let e = parse_str(&doc(r#"{"b": {"type": "barrier"}}"#), "r.json", 8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Invalid type of resource 'barrier'"), "{e}");
    let e = parse_str(&doc(r#"{"m": {"type": 1}}"#), "r.json", 8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("resources.m.type"), "{e}");
}

/// An unknown key in a task or phase (not an event prefix rt-app recognises) is an error
/// naming the file and key, with a did-you-mean over the keys and event names.
#[test]
fn rtapp_unknown_event_keys_name_the_key_and_suggest() {
    use schedlab::workload::rtapp::parse_str;
    let e = parse_str(r#"{"tasks": {"t": {"slep": 10, "run": 5}}}"#, "r.json", 8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("r.json"), "{e}");
    assert!(e.contains("tasks.t.slep"), "{e}");
    assert!(e.contains("(did you mean sleep?)"), "{e}");
    assert!(e.contains("events (run, runtime, sleep"), "{e}");
    let e = parse_str(
        r#"{"tasks": {"t": {"instanse": 2, "phases": {"p": {"run": 5}}}}}"#,
        "r.json",
        8,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("tasks.t.instanse"), "{e}");
    assert!(e.contains("(did you mean instance?)"), "{e}");
}

/// Config-layer messages that echo a user-given name (profile, feature, tunable, key) write
/// control characters as escapes, so the error stays one line.
#[test]
fn control_characters_in_echoed_names_are_escaped() {
    for set in [
        "kernel.profile=v6\n18",
        "kernel.features.TTWU\nQUEUE=true",
        "workload.gr\noups=4",
    ] {
        let e = bad_set("hackbench", set);
        assert_eq!(e.trim_end().lines().count(), 1, "{set:?}: {e}");
        assert!(e.contains("\\n"), "{set:?}: {e}");
    }
}

/// A key rt-app accepts without effect (an unknown `global` key) runs, as with rt-app, but is
/// named in one warning on stderr, so a typo is not a silent no-op; a clean file gets none.
#[test]
fn rtapp_ignored_keys_are_warned_about() {
    let run = |name: &str, global: &str| {
        let f = rtapp_scenario(
            name,
            &format!(
                r#"{{"global": {{"duration": 1{global}}}, "tasks": {{"t": {{"run": 1000}}}}}}"#
            ),
        );
        let out = schedlab(&["run", f.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let err = run("ignored", r#", "calibrationx": 90"#);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("global.calibrationx") && warnings[0].contains("ignored"),
        "{err}"
    );
    let clean = run("clean", "");
    assert!(!clean.contains("ignored"), "{clean}");
}

/// A variant name heads a compare column and names runs: a control character (a newline
/// would split the table and every one-line message) or more than 64 characters is refused,
/// on the command line and in a scenario's `[[variant]]`, with one error line.
#[test]
fn variant_names_must_be_printable_and_bounded() {
    let e = bad(&[
        "compare",
        "scenarios/hackbench.toml",
        "--runs",
        "1",
        "--variant",
        "a\nb:NO_DELAY_DEQUEUE",
    ]);
    assert!(e.contains("control character"), "{e}");
    let long = format!("{}:NO_DELAY_DEQUEUE", "v".repeat(65));
    let e = bad(&[
        "compare",
        "scenarios/hackbench.toml",
        "--runs",
        "1",
        "--variant",
        &long,
    ]);
    assert!(e.contains("longer than 64"), "{e}");
    let f = tmp(
        "variant-nl.toml",
        "[machine]\npreset = \"skl-2s\"\n[workload]\ncommand = \"hackbench -g 1 -l 10\"\n\
         [[variant]]\nname = \"x\\ny\"\nkernel.features = { DELAY_DEQUEUE = false }\n",
    );
    let e = bad(&["compare", f.to_str().unwrap(), "--runs", "1"]);
    assert!(
        e.contains("variant[0].name") && e.contains("control character"),
        "{e}"
    );
}

/// A 100 KB name is clipped once, and the quotes and punctuation around it stay, so the
/// message still reads as a sentence.
#[test]
fn clipped_names_keep_the_sentence_around_them() {
    let long = "x".repeat(100_000);
    let e = bad(&[
        "run",
        "scenarios/spin.toml",
        "--feature",
        &format!("{long}=on"),
    ]);
    assert!(
        e.contains("unknown scheduler feature 'xxxx") && e.contains("... (100000 bytes)';"),
        "{e}"
    );
    assert!(!e.contains("(68 bytes)"), "clipped twice: {e}");
    let e = bad(&["run", "-m", &long, "--", "hackbench"]);
    assert!(
        e.contains("... (100000 bytes)'; accepted: a preset name"),
        "{e}"
    );
}

/// Every command's stdout output, not only `run`'s report, turns a full stdout into one
/// error line naming stdout with exit code 2 (never a panic, never "internal error").
#[test]
fn a_full_stdout_is_an_error_for_every_command() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let grid = tmp(
        "full-grid.toml",
        "[base]\nmachine = \"hybrid-10\"\ncommand = \"hackbench -g 1 -l 30\"\n[axes]\nseeds = 2\n",
    );
    let sweep_dir = tmp_dir().join("full-sweep");
    let _ = std::fs::remove_dir_all(&sweep_dir);
    let (grid, sweep_dir) = (grid.to_str().unwrap(), sweep_dir.to_str().unwrap());
    for args in [
        &["list", "machines"][..],
        &["list", "features"],
        &["topo", "skl-2s"],
        &["--help"],
        &["run", "--help"],
        &["--version"],
        // `sweep plan` writes its manifest, then fails on its summary line; `status` reads it.
        &["sweep", "plan", grid, "-o", sweep_dir, "--no-calibrate"],
        &["sweep", "status", sweep_dir],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = command(args).stdout(full).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("schedlab: error: stdout: cannot write")
                && err.contains("No space left on device")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// An output naming a device (here through a symlink, so a regression replaces only the
/// link) is written in place: renaming a temporary file over it would replace the device
/// node (as root, `--json /dev/full` turned /dev/full into a regular file). Writing to
/// /dev/full is the usual one-line error; /dev/null discards the results.
#[test]
fn a_device_output_is_written_in_place_never_replaced() {
    let dir = tmp_dir();
    let full = dir.join("full.json");
    let null = dir.join("null.json");
    for (link, dev) in [(&full, "/dev/full"), (&null, "/dev/null")] {
        let _ = std::fs::remove_file(link);
        std::os::unix::fs::symlink(dev, link).unwrap();
    }
    let e = bad(&short_spin(&["--json", full.to_str().unwrap()]));
    assert!(
        e.contains("--json") && e.contains("cannot write: No space left on device"),
        "{e}"
    );
    let null = null.to_str().unwrap();
    ok(&short_spin(&["--json", null, "--schedstat", null]));
    for link in [full.as_path(), Path::new(null)] {
        let m = std::fs::symlink_metadata(link).unwrap();
        assert!(m.file_type().is_symlink(), "{link:?} was replaced");
    }
}

/// `schedlab report` reads its inputs with bounds: a results file above its named limit
/// and a trace with an endless line (`/dev/zero`) are errors, not reads until memory runs
/// out.
#[test]
fn report_inputs_are_bounded() {
    let dir = tmp_dir();
    let zero_json = dir.join("zero.json");
    let zero_txt = dir.join("zero.txt");
    for link in [&zero_json, &zero_txt] {
        let _ = std::fs::remove_file(link);
        std::os::unix::fs::symlink("/dev/zero", link).unwrap();
    }
    let html = dir.join("r.html");
    let e = bad(&[
        "report",
        zero_json.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(
        e.contains("zero.json: file is larger than the input limit of 1024 MiB"),
        "{e}"
    );
    let results = dir.join("spin.json");
    ok(&short_spin(&["--json", results.to_str().unwrap()]));
    let e = bad(&[
        "report",
        results.to_str().unwrap(),
        "--trace",
        zero_txt.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(
        e.contains("--trace") && e.contains("a line is longer than 4096 bytes"),
        "{e}"
    );
    assert!(!html.exists());
}

/// A task without its own policy takes rt-app's `global.default_policy`; when that is
/// SCHED_DEADLINE (not modelled) the error names the key the user wrote, not the task's.
#[test]
fn rtapp_default_policy_errors_name_the_global_key() {
    let f = rtapp_scenario(
        "default-dl",
        r#"{"global": {"duration": 1, "default_policy": "SCHED_DEADLINE"}, "tasks": {"t": {"run": 10}}}"#,
    );
    let e = bad_run(&f);
    assert!(
        e.contains("default-dl.json: global.default_policy: SCHED_DEADLINE is not modelled"),
        "{e}"
    );
}

/// A section misspelt on the command line is blamed on `--set`, not on the scenario file
/// that does not contain it.
#[test]
fn an_unknown_section_from_set_names_set() {
    let e = bad_set("spin", "runn.duration_s=1");
    assert!(
        e.starts_with("schedlab: error: --set: runn: unknown section (did you mean run?)"),
        "{e}"
    );
}
