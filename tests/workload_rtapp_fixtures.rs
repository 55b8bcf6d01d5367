//! Every real rt-app file under shared/fixtures/rt-app loads, with the structure rt-app itself
//! would build from it (event order, duplicates, loops, instances, policies).

use std::path::{Path, PathBuf};

use schedlab::workload::WorkloadSpec;
use schedlab::workload::rtapp::{self, Calibration, Event, RtAppPolicy, RtAppSpec, TimerMode};

/// Walk up from the crate root until a directory containing `shared/fixtures` is found.
fn fixtures_dir() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    loop {
        let cand = dir.join("shared/fixtures");
        if cand.is_dir() {
            return cand;
        }
        assert!(
            dir.pop(),
            "no shared/fixtures above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

fn load(name: &str) -> RtAppSpec {
    let p = fixtures_dir().join("rt-app").join(name);
    rtapp::load(&p, 8).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_fixture_loads() {
    let dir = fixtures_dir().join("rt-app");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 10,
        "expected the 10 rt-app fixtures, found {}",
        names.len()
    );
    for p in &names {
        let spec = rtapp::load(p, 8).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(!spec.tasks.is_empty(), "{}", p.display());
        // The same through the command-line path.
        let cmd = format!("rt-app '{}'", p.display());
        assert!(matches!(
            WorkloadSpec::from_command(&cmd, 8).unwrap(),
            WorkloadSpec::RtApp(_)
        ));
    }
}

#[test]
fn tutorial_example1_and_template() {
    let s = load("tutorial-example1.json");
    assert_eq!(s.global.duration_s, Some(2));
    assert_eq!(s.global.calibration, Calibration::Cpu(0));
    assert_eq!(s.global.ftrace, vec!["main", "task", "loop", "event"]);
    assert!(s.global.gnuplot && !s.global.lock_pages);
    let t = &s.tasks[0];
    assert_eq!(t.name, "thread0");
    // "loop": -1 without phases: the implicit phase loops forever.
    assert_eq!((t.loop_count, t.phases[0].loop_count), (Some(1), None));
    assert_eq!(
        t.phases[0].events,
        vec![Event::Run { work_us: 20000 }, Event::Sleep { us: 80000 }]
    );

    let s = load("template.json");
    let ev = &s.tasks[0].phases[0].events;
    assert_eq!(ev.len(), 3);
    assert_eq!(ev[1], Event::Sleep { us: 0 });
    assert_eq!(
        ev[2],
        Event::Timer {
            reference: "unique".into(),
            unique: true,
            period_us: 100_000,
            mode: TimerMode::Relative
        }
    );
}

#[test]
fn tutorial_example3_phases_and_instances() {
    let s = load("tutorial-example3.json");
    assert_eq!(s.global.duration_s, None); // no global section: run until threads finish
    let t = &s.tasks[0];
    assert_eq!((t.instances, t.loop_count), (12, Some(1)));
    let names: Vec<&str> = t.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["light", "heavy"]);
    assert_eq!(t.phases[1].events[0], Event::Run { work_us: 27000 });
    assert_eq!(t.phase_iterations(), Some(20));
    assert_eq!(s.threads().len(), 12);
    assert_eq!(s.threads()[11].name, "thread0-11");
}

#[test]
fn duplicate_keys_keep_file_order() {
    // Example 5 repeats "run" in one phase and "suspend"/"run" in a task.
    let s = load("tutorial-example5.json");
    let p1 = &s.tasks[0].phases[1];
    assert_eq!(p1.loop_count, Some(8));
    assert_eq!(
        p1.events,
        vec![
            Event::Lock {
                mutex: "mutex".into()
            },
            Event::Run { work_us: 10000 },
            Event::Signal {
                cond: "queue".into()
            },
            Event::Run { work_us: 10000 },
            Event::Unlock {
                mutex: "mutex".into()
            },
            Event::Run { work_us: 100000 },
            Event::Resume {
                task: "thread1".into()
            },
            Event::Timer {
                reference: "tick".into(),
                unique: false,
                period_us: 200000,
                mode: TimerMode::Relative
            },
        ]
    );
    let t0 = &s.tasks[0];
    assert_eq!((t0.nice, t0.policy), (Some(-19), RtAppPolicy::Other));
    assert_eq!(t0.cpus.unwrap().to_string(), "0");
    let t1 = &s.tasks[1];
    assert_eq!(t1.phases[0].events.len(), 8);
    assert_eq!(t1.phases[0].loop_count, Some(3));

    // spreading-tasks repeats a phase name ("heavy1"): both phases are kept, in order.
    let s = load("spreading-tasks.json");
    let names: Vec<&str> = s.tasks[1].phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["light1", "heavy1", "light2", "heavy1"]);
    assert_eq!(
        s.tasks[1]
            .phases
            .iter()
            .map(|p| p.loop_count.unwrap())
            .sum::<u64>(),
        2400
    );
}

#[test]
fn browser_and_mp3_use_cases() {
    let s = load("browser-short.json");
    assert_eq!(s.ignored_keys, vec!["global.frag".to_string()]);
    assert_eq!(s.tasks.len(), 9);
    let main = &s.tasks[0];
    assert_eq!((main.loop_count, main.phases.len()), (Some(3), 7));
    assert_eq!(main.phases[0].events.len(), 5);
    let disp = s.tasks.iter().find(|t| t.name == "BrowserDisplay").unwrap();
    assert!(disp.phases[0].events.contains(&Event::Sync {
        cond: "queue11".into(),
        mutex: "mutex11".into()
    }));
    assert_eq!(disp.nice, Some(-6));

    let s = load("mp3-short.json");
    let tick = &s.tasks[0];
    assert_eq!(tick.phases[1].loop_count, Some(4));
    assert_eq!(tick.cpus.unwrap().to_string(), "0");
    let dec = s.tasks.iter().find(|t| t.name == "mp3.decoder").unwrap();
    assert_eq!(
        dec.phases[0].events[0],
        Event::Suspend {
            value: Some("mp3.decoder".into())
        }
    );
}

#[test]
fn barriers_and_fork() {
    let s = load("tutorial-example7.json");
    assert_eq!(
        s.tasks[0].phases[0].events[0],
        Event::Runtime { wall_us: 1000 }
    );
    assert_eq!(s.barrier_participants("FIRST"), 2);
    assert_eq!(s.barrier_participants("THIRD"), 2);

    let s = load("tutorial-example9.json");
    assert_eq!(s.tasks[1].instances, 0);
    // thread2 only runs when forked: the initial threads are thread1 and thread3.
    let names: Vec<String> = s.threads().into_iter().map(|t| t.name).collect();
    assert_eq!(names, vec!["thread1-0", "thread3-1"]);
    assert_eq!(
        s.tasks[2].phases[1].events[0],
        Event::Fork {
            task: "thread2".into()
        }
    );
    assert_eq!(s.tasks[2].loop_count, Some(1));
}

#[test]
fn toml_file_key_resolves_relative_to_scenario() {
    let dir = fixtures_dir().join("rt-app");
    let origin = dir.join("scenario.toml").display().to_string();
    let t: toml::Table = "kind = 'rtapp'\nfile = 'tutorial-example2.json'"
        .parse()
        .unwrap();
    let spec = WorkloadSpec::from_toml("rtapp", &t, &origin, 4).unwrap();
    assert_eq!(spec.kind(), "rtapp");
}
