//! Scenario parsing, overrides, variants, quick form and error reporting.

use proptest::prelude::*;
use schedlab::config::{QuickOptions, Scenario, ScenarioDoc, build_document, parse_variant_spec};
use schedlab::kconfig::{Feature, Policy, PreemptModel, SchedMode};

const EXAMPLE: &str = r#"
[machine]
preset = "spr-2s"
offline = "18-23,26-31"

[kernel]
profile = "v6.15"
features = { TTWU_QUEUE_DELAYED = true }
sysctl = { sched_migration_cost_ns = 500000, numa_balancing = 1 }

[workload]
kind = "schbench"
message_threads = 4
workers_per_message_thread = 128
runtime_s = 5

[run]
runs = 5
seed = 1
warmup_s = 0.5
duration_s = 10
"#;

fn parse(text: &str) -> Scenario {
    Scenario::parse(text, "test.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> schedlab::error::InputError {
    Scenario::parse(text, "test.toml").expect_err("should be rejected")
}

fn doc_with_sets(text: &str, sets: &[&str]) -> schedlab::error::InputResult<Scenario> {
    let mut doc = ScenarioDoc::parse(text, "test.toml")?;
    for s in sets {
        doc.apply_set(s)?;
    }
    Scenario::from_doc(doc)
}

const MINIMAL: &str = "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"hackbench\"\n";

#[test]
fn architecture_example_parses() {
    let s = parse(EXAMPLE);
    assert_eq!(s.machine.preset.as_deref(), Some("spr-2s"));
    assert_eq!(s.machine.offline.as_deref(), Some("18-23,26-31"));
    assert_eq!(s.kernel.profile, "v6.15");
    assert_eq!(s.kernel.mode, SchedMode::Eevdf);
    assert!(s.kernel.sched_feat(Feature::TTWU_QUEUE_DELAYED));
    assert!(s.kernel.sched_feat(Feature::TTWU_QUEUE));
    assert_eq!(s.kernel.sysctl.sched_migration_cost_ns, 500_000);
    assert_eq!(s.kernel.sysctl.sched_base_slice_ns, 700_000);
    assert_eq!(
        s.kernel.feature_overrides.get("TTWU_QUEUE_DELAYED"),
        Some(&true)
    );
    assert!(
        s.kernel.sysctl_overrides.is_empty(),
        "values equal to the profile's are not overrides"
    );
    assert_eq!(s.workload.kind.as_deref(), Some("schbench"));
    assert_eq!(
        s.workload.params.get("message_threads"),
        Some(&toml::Value::Integer(4))
    );
    assert!(!s.workload.params.contains_key("kind"));
    assert_eq!(s.run.runs, 5);
    assert_eq!(s.run.warmup_s, 0.5);
    assert_eq!(s.run.duration_s, Some(10.0));
    assert!(!s.run.invariants);
}

#[test]
fn defaults_when_sections_are_minimal() {
    let s = parse(MINIMAL);
    assert_eq!(s.kernel.profile, "v6.18", "default profile is the newest");
    assert_eq!(s.kernel.policy, Policy::LinuxFair);
    assert_eq!(s.kernel.sysctl.hz, 250);
    assert_eq!(s.kernel.sysctl.preempt, PreemptModel::Voluntary);
    assert_eq!(s.run.runs, 1);
    assert_eq!(s.run.seed, 1);
    assert_eq!(s.run.duration_s, None);
    assert!(s.kernel.sched_feat(Feature::NI_RANDOM));
    assert!(!s.kernel.sched_feat(Feature::NEWIDLE_FAIL_BUMP));
}

#[test]
fn cfs_profile_resolves_with_old_behaviour_and_notes() {
    let s = parse(&format!(
        "{MINIMAL}[kernel]\nprofile = \"v5.15\"\nfeatures = {{ DELAY_DEQUEUE = true }}\n"
    ));
    assert_eq!(s.kernel.mode, SchedMode::Cfs);
    assert!(s.kernel.sched_feat(Feature::NEWIDLE_MIGRATION_COST_GATE));
    assert!(s.kernel.sched_feat(Feature::GENTLE_FAIR_SLEEPERS));
    assert!(!s.kernel.sched_feat(Feature::SHOULD_WE_BALANCE_IDLE_CORE));
    assert_eq!(s.kernel.notes.len(), 1);
    assert!(
        s.kernel.notes[0].contains("DELAY_DEQUEUE"),
        "{:?}",
        s.kernel.notes
    );
}

#[test]
fn pipe_wake_on_free_is_noted_only_where_pipe_writers_do_not_wait_exclusively() {
    // Before v5.5 a freed page wakes every writer, so the switch has nothing to act on: said,
    // not silently ignored. From v5.5 (exclusive waits) it acts, and nothing is noted.
    let notes = |profile: &str| {
        parse(&format!(
            "{MINIMAL}[kernel]\nprofile = \"{profile}\"\nfeatures = {{ PIPE_WAKE_ON_FREE = true }}\n"
        ))
        .kernel
        .notes
    };
    let old = notes("v4.2");
    assert_eq!(old.len(), 1, "{old:?}");
    assert!(
        old[0].starts_with("PIPE_WAKE_ON_FREE has no effect before v5.5"),
        "{old:?}"
    );
    assert_eq!(notes("v5.15"), Vec::<String>::new());
    assert_eq!(notes("v6.12"), Vec::<String>::new());
}

#[test]
fn unknown_machine_key_names_file_key_and_accepted_keys() {
    let e = parse_err("[machine]\npresett = \"skl-2s\"\n[workload]\nkind = \"x\"\n");
    assert_eq!(e.origin, "test.toml");
    assert_eq!(e.key.as_deref(), Some("machine.presett"));
    assert!(e.message.contains("did you mean preset"), "{}", e.message);
    assert!(e.message.contains("sysfs_root"), "{}", e.message);
    let e = parse_err(&format!("{MINIMAL}[kernell]\nprofile = \"v6.6\"\n"));
    assert_eq!(e.key.as_deref(), Some("kernell"));
    assert!(e.message.contains("unknown section"), "{}", e.message);
    let e = parse_err(&format!("{MINIMAL}[run]\nrun = 3\n"));
    assert_eq!(e.key.as_deref(), Some("run.run"));
    assert!(e.message.contains("runs"), "{}", e.message);
}

#[test]
fn unknown_feature_and_profile() {
    let e = parse_err(&format!(
        "{MINIMAL}[kernel]\nfeatures = {{ TTWU_QUEUEE = false }}\n"
    ));
    assert_eq!(e.origin, "test.toml");
    assert_eq!(e.key.as_deref(), Some("kernel.features.TTWU_QUEUEE"));
    assert!(e.message.contains("TTWU_QUEUE"), "{}", e.message);
    assert!(
        e.message.contains("schedlab list features"),
        "{}",
        e.message
    );

    let e = parse_err(&format!("{MINIMAL}[kernel]\nprofile = \"v6.7\"\n"));
    assert_eq!(e.key.as_deref(), Some("kernel.profile"));
    assert!(e.message.contains("v6.6, v6.9"), "{}", e.message);

    let e = parse_err(&format!("{MINIMAL}[kernel]\nsysctl = {{ hz = 200 }}\n"));
    assert_eq!(e.key.as_deref(), Some("kernel.sysctl.hz"));
}

#[test]
fn malformed_toml_reports_line_and_column() {
    let e = parse_err("[machine]\npreset = \"skl-2s\"\noffline = [1,\n[run]\n");
    assert_eq!(e.origin, "test.toml");
    assert!(
        e.message.starts_with("malformed TOML at line "),
        "{}",
        e.message
    );
    let e = parse_err("[machine]\npreset = skl-2s\n");
    assert!(e.message.contains("line 2, column"), "{}", e.message);
}

#[test]
fn wrong_types() {
    let e = parse_err(&format!("{MINIMAL}[run]\nruns = \"five\"\n"));
    assert_eq!(e.key.as_deref(), Some("run.runs"));
    assert!(
        e.message
            .contains("got string \"five\"; accepted: an integer from 1 to 100000"),
        "{}",
        e.message
    );
    let e = parse_err(&format!("{MINIMAL}[run]\nruns = 0\n"));
    assert_eq!(
        e.message,
        "got integer 0; accepted: an integer from 1 to 100000"
    );
    let e = parse_err(&format!(
        "{MINIMAL}[kernel]\nfeatures = {{ TTWU_QUEUE = \"off\" }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("kernel.features.TTWU_QUEUE"));
    assert!(e.message.contains("true or false"), "{}", e.message);
    let e = parse_err("machine = 3\n[workload]\nkind = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("machine"));
    assert!(e.message.contains("accepted: a table"), "{}", e.message);
    let e = parse_err("[machine]\npreset = \"a\"\noffline = \"3-1\"\n[workload]\nkind = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("machine.offline"));
    assert!(e.message.contains("backwards"), "{}", e.message);
}

#[test]
fn machine_and_workload_are_required_and_sources_exclusive() {
    let e = parse_err("[workload]\nkind = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("machine"));
    let e = parse_err("[machine]\npreset = \"a\"\n");
    assert_eq!(e.key.as_deref(), Some("workload"));
    let e = parse_err("[machine]\npreset = \"a\"\nhwloc = \"b.xml\"\n[workload]\nkind = \"x\"\n");
    assert!(e.message.contains("exactly one of"), "{}", e.message);
}

#[test]
fn set_overrides_nested_keys_and_creates_them() {
    let s = doc_with_sets(
        EXAMPLE,
        &[
            "kernel.features.TTWU_QUEUE=false",
            "workload.groups=4",
            "kernel.sysctl.hz=1000",
            "machine.preset=skl-2s",
            "run.runs=3",
            "kernel.profile=v6.9",
        ],
    )
    .unwrap();
    assert!(!s.kernel.sched_feat(Feature::TTWU_QUEUE));
    assert!(
        s.kernel.sched_feat(Feature::TTWU_QUEUE_DELAYED),
        "file value kept"
    );
    assert_eq!(
        s.workload.params.get("groups"),
        Some(&toml::Value::Integer(4))
    );
    assert_eq!(s.kernel.sysctl.hz, 1000);
    assert_eq!(s.machine.preset.as_deref(), Some("skl-2s"));
    assert_eq!(s.run.runs, 3);
    assert_eq!(s.kernel.profile, "v6.9");
    assert_eq!(s.kernel.sysctl.sched_base_slice_ns, 750_000);
    assert_eq!(s.origin_of("kernel.features.TTWU_QUEUE"), "--set");
    assert_eq!(
        s.origin_of("kernel.features.TTWU_QUEUE_DELAYED"),
        "test.toml"
    );

    // A machine source set by --set replaces the file's.
    let s = doc_with_sets(
        "[machine]\nhwloc = \"x.xml\"\n[workload]\nkind = \"x\"\n",
        &["machine.preset=skl-2s"],
    )
    .unwrap();
    assert_eq!(s.machine.preset.as_deref(), Some("skl-2s"));
    assert_eq!(s.machine.hwloc, None);

    // Errors in --set values carry the --set origin.
    let e = doc_with_sets(MINIMAL, &["kernel.features.NOPE=true"]).unwrap_err();
    assert_eq!(e.origin, "--set");
    assert_eq!(e.key.as_deref(), Some("kernel.features.NOPE"));
    let e = doc_with_sets(MINIMAL, &["run.seed=-1"]).unwrap_err();
    assert_eq!(e.origin, "--set");
    assert_eq!(e.key.as_deref(), Some("run.seed"));
    // Through a non-table.
    let e = doc_with_sets(MINIMAL, &["machine.preset.x=1"]).unwrap_err();
    assert_eq!(e.origin, "--set");
    assert!(e.message.contains("not a table"), "{}", e.message);
    let e = doc_with_sets(MINIMAL, &["no_equals_sign"]).unwrap_err();
    assert_eq!(e.origin, "--set");
}

#[test]
fn lazy_preemption_only_from_v6_13() {
    let e = parse_err(&format!(
        "{MINIMAL}[kernel]\nprofile = \"v6.12\"\npreempt = \"lazy\"\n"
    ));
    assert_eq!(e.key.as_deref(), Some("kernel.preempt"));
    assert!(e.message.contains("v6.13"), "{}", e.message);
    let s = parse(&format!(
        "{MINIMAL}[kernel]\nprofile = \"v6.15\"\npreempt = \"lazy\"\nhz = 1000\n"
    ));
    assert_eq!(s.kernel.sysctl.preempt, PreemptModel::Lazy);
    assert_eq!(s.kernel.sysctl.hz, 1000);
    assert_eq!(
        s.kernel.sysctl_overrides.get("preempt").map(String::as_str),
        Some("lazy")
    );
    let e = parse_err(&format!("{MINIMAL}[kernel]\npolicy = \"fifoo\"\n"));
    assert!(e.message.contains("did you mean fifo"), "{}", e.message);
}

const WITH_VARIANTS: &str = r#"
[machine]
preset = "skl-2s"
[workload]
kind = "schbench"
[[variant]]
name = "base"
[[variant]]
name = "no-ttwu"
"kernel.features.TTWU_QUEUE" = false
[[variant]]
name = "old"
kernel = { profile = "v6.9", sysctl = { sched_migration_cost_ns = 250000 } }
"#;

#[test]
fn variants() {
    let s = parse(WITH_VARIANTS);
    assert_eq!(s.variant_names(), vec!["base", "no-ttwu", "old"]);
    let base = s.variant("base").unwrap();
    assert_eq!(base.kernel, s.kernel);
    let v = s.variant("no-ttwu").unwrap();
    assert!(!v.kernel.sched_feat(Feature::TTWU_QUEUE));
    assert_eq!(v.variant.as_deref(), Some("no-ttwu"));
    assert!(v.variants.is_empty());
    let old = s.variant("old").unwrap();
    assert_eq!(old.kernel.profile, "v6.9");
    assert_eq!(old.kernel.sysctl.sched_migration_cost_ns, 250_000);
    assert!(s.kernel.sched_feat(Feature::TTWU_QUEUE), "base untouched");
    let e = s.variant("nope").unwrap_err();
    assert!(e.message.contains("base, no-ttwu, old"), "{}", e.message);

    // A bad key in a variant is reported when the file is parsed, with the variant named.
    let e = parse_err(&format!(
        "{WITH_VARIANTS}[[variant]]\nname = \"bad\"\n\"kernel.features.XYZ\" = true\n"
    ));
    assert_eq!(e.origin, "test.toml [variant bad]");
    assert_eq!(e.key.as_deref(), Some("kernel.features.XYZ"));
    let e = parse_err(&format!(
        "{WITH_VARIANTS}[[variant]]\nname = \"r\"\nrun = {{ runs = 2 }}\n"
    ));
    assert!(
        e.message.contains("[kernel], [machine] or [workload]"),
        "{}",
        e.message
    );
    let e = parse_err(&format!("{WITH_VARIANTS}[[variant]]\nname = \"base\"\n"));
    assert!(e.message.contains("used twice"), "{}", e.message);
}

#[test]
fn variant_specs_from_the_command_line() {
    let v = parse_variant_spec(
        "nodelay:NO_DELAY_DEQUEUE,NEXT_BUDDY,sched_migration_cost_ns=250000,profile=v6.12",
        "--variant",
    )
    .unwrap();
    assert_eq!(v.name, "nodelay");
    let get = |k: &str| v.overrides.get(k).cloned();
    assert_eq!(
        get("kernel.features.DELAY_DEQUEUE"),
        Some(toml::Value::Boolean(false))
    );
    assert_eq!(
        get("kernel.features.NEXT_BUDDY"),
        Some(toml::Value::Boolean(true))
    );
    assert_eq!(
        get("kernel.sysctl.sched_migration_cost_ns"),
        Some(toml::Value::Integer(250_000))
    );
    assert_eq!(
        get("kernel.profile"),
        Some(toml::Value::String("v6.12".into()))
    );
    let s = parse(MINIMAL).with_variant(&v).unwrap();
    assert!(!s.kernel.sched_feat(Feature::DELAY_DEQUEUE));
    assert_eq!(s.kernel.profile, "v6.12");

    let e = parse_variant_spec("x:NOT_A_FEATURE", "--variant").unwrap_err();
    assert_eq!(e.origin, "--variant");
    let e = parse_variant_spec("x:migration_cst=1", "--variant").unwrap_err();
    assert!(e.message.contains("unknown tunable"), "{}", e.message);
    assert!(parse_variant_spec(":A", "--variant").is_err());
}

#[test]
fn quick_form_builds_the_same_document() {
    let opts = QuickOptions {
        machine: Some("skl-2s".into()),
        offline: Some("10-19".into()),
        profile: Some("v6.15".into()),
        features: vec!["TTWU_QUEUE=off".into(), "NO_DELAY_DEQUEUE".into()],
        sysctls: vec!["migration_cost_ns=250000".into(), "hz=1000".into()],
        runs: Some(3),
        seed: Some(7),
        command: ["schbench", "-L", "-m", "4", "-M", "auto", "-t", "128"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        sets: vec!["run.invariants=true".into()],
        ..QuickOptions::default()
    };
    let s = Scenario::from_doc(build_document(&opts).unwrap()).unwrap();
    assert_eq!(s.machine.preset.as_deref(), Some("skl-2s"));
    assert_eq!(s.machine.offline.as_deref(), Some("10-19"));
    assert_eq!(s.kernel.profile, "v6.15");
    assert!(!s.kernel.sched_feat(Feature::TTWU_QUEUE));
    assert!(!s.kernel.sched_feat(Feature::DELAY_DEQUEUE));
    assert_eq!(s.kernel.sysctl.sched_migration_cost_ns, 250_000);
    assert_eq!(s.kernel.sysctl.hz, 1000);
    assert_eq!((s.run.runs, s.run.seed, s.run.invariants), (3, 7, true));
    assert_eq!(
        s.workload.command.as_deref(),
        Some("schbench -L -m 4 -M auto -t 128")
    );
    assert_eq!(s.origin_of("kernel.profile"), "-k");

    let e = build_document(&QuickOptions {
        features: vec!["TTWU_QUEUE=sometimes".into()],
        ..QuickOptions::default()
    })
    .unwrap_err();
    assert_eq!(e.origin, "--feature");
    let e = build_document(&QuickOptions {
        sysctls: vec!["sched_nr_migrat=8".into()],
        ..QuickOptions::default()
    })
    .unwrap_err();
    assert_eq!(e.origin, "--sysctl");
    assert!(e.message.contains("sched_nr_migrate"), "{}", e.message);
    // No machine at all.
    let e = Scenario::from_doc(
        build_document(&QuickOptions {
            command: vec!["hackbench".into()],
            ..QuickOptions::default()
        })
        .unwrap(),
    )
    .unwrap_err();
    assert_eq!(e.key.as_deref(), Some("machine"));
    assert!(e.message.contains("-m MACHINE"), "{}", e.message);
}

#[test]
fn quick_form_on_a_base_file_and_relative_paths() {
    let dir = std::env::temp_dir().join(format!("schedlab-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "[machine]\nhwloc = \"topo.xml\"\n[workload]\nkind = \"hackbench\"\ngroups = 10\n",
    )
    .unwrap();
    let s = Scenario::load(&file, &[]).unwrap();
    assert_eq!(
        s.machine.hwloc.as_deref(),
        Some(dir.join("topo.xml").display().to_string().as_str()),
        "relative paths in a file resolve against its directory"
    );
    let opts = QuickOptions {
        base: Some(file.clone()),
        machine: Some("nehalem-2s".into()),
        command: vec!["hackbench".into(), "-g".into(), "4".into()],
        ..QuickOptions::default()
    };
    let s = Scenario::from_doc(build_document(&opts).unwrap()).unwrap();
    assert_eq!(s.machine.preset.as_deref(), Some("nehalem-2s"));
    assert_eq!(
        s.machine.hwloc, None,
        "-m replaces the file's machine source"
    );
    assert_eq!(
        s.workload.kind, None,
        "a command replaces the whole [workload]"
    );
    assert!(s.workload.params.is_empty());
    let e = Scenario::load(&dir.join("missing.toml"), &[]).unwrap_err();
    assert!(e.message.contains("cannot read"), "{}", e.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resolved_scenario_serializes_deterministically() {
    let a = parse(EXAMPLE);
    // Same content, keys in another order.
    let reordered = r#"
[run]
duration_s = 10
warmup_s = 0.5
seed = 1
runs = 5
[workload]
runtime_s = 5
workers_per_message_thread = 128
message_threads = 4
kind = "schbench"
[kernel]
sysctl = { numa_balancing = 1, sched_migration_cost_ns = 500000 }
features = { TTWU_QUEUE_DELAYED = true }
profile = "v6.15"
[machine]
offline = "18-23,26-31"
preset = "spr-2s"
"#;
    let b = parse(reordered);
    let ja = serde_json::to_string(&a).unwrap();
    let jb = serde_json::to_string(&b).unwrap();
    assert_eq!(ja, jb, "key order must not depend on the file's order");
    assert_eq!(ja, serde_json::to_string(&parse(EXAMPLE)).unwrap());

    let v: serde_json::Value = serde_json::from_str(&ja).unwrap();
    assert_eq!(v["kernel"]["profile"], "v6.15");
    assert_eq!(v["kernel"]["version"], "v6.15");
    assert_eq!(v["kernel"]["mode"], "eevdf");
    assert_eq!(v["kernel"]["policy"], "linux-fair");
    assert_eq!(v["kernel"]["features"]["TTWU_QUEUE_DELAYED"], true);
    assert_eq!(v["kernel"]["sysctl"]["sched_base_slice_ns"], 700_000);
    assert_eq!(v["kernel"]["sysctl"]["preempt"], "voluntary");
    assert_eq!(v["workload"]["kind"], "schbench");
    assert_eq!(v["workload"]["message_threads"], 4);
    assert_eq!(v["run"]["runs"], 5);
    assert_eq!(v["machine"]["preset"], "spr-2s");
    // Top-level and kernel key order as declared.
    let pos = |k: &str| ja.find(&format!("\"{k}\":")).unwrap();
    assert!(pos("source") < pos("machine"));
    assert!(pos("machine") < pos("kernel"));
    assert!(pos("kernel") < pos("workload"));
    assert!(pos("workload") < pos("run"));
    assert!(pos("PLACE_LAG") < pos("TTWU_QUEUE") && pos("TTWU_QUEUE") < pos("DL_SERVER"));
    assert!(
        pos("message_threads") < pos("runtime_s"),
        "raw tables sorted"
    );
}

proptest! {
    /// Any feature set to any value by --set resolves to that value, and only that feature
    /// differs from the profile.
    #[test]
    fn set_any_feature(idx in 0..Feature::ALL.len(), on: bool, profile in 0usize..11) {
        let f = Feature::ALL[idx];
        let p = schedlab::kconfig::profiles::PROFILES[profile].name;
        let s = doc_with_sets(
            MINIMAL,
            &[&format!("kernel.profile={p}"), &format!("kernel.features.{}={on}", f.name())],
        )
        .unwrap();
        prop_assert_eq!(s.kernel.sched_feat(f), on);
        let base = schedlab::kconfig::Profile::by_name(p).unwrap().features();
        let diff = base.diff(&s.kernel.features);
        prop_assert!(diff.is_empty() || diff == vec![f]);
        prop_assert_eq!(s.kernel.feature_overrides.len(), diff.len());
    }

    /// Integers given to --set arrive as TOML integers (not strings).
    #[test]
    fn set_integers(n in 1u32..100_000) {
        let s = doc_with_sets(MINIMAL, &[&format!("run.runs={n}")]).unwrap();
        prop_assert_eq!(s.run.runs, n);
    }
}
