//! `schedlab bench`: the simulator's own speed, measured — events per wall second and
//! simulated seconds per wall second on fixed scenarios, plus peak memory. Speed is reported
//! here, never asserted in tests (ARCHITECTURE.md §7).

use std::time::Instant;

use crate::config::ScenarioDoc;
use crate::config::scenario::Scenario;
use crate::experiment;

/// The longest `--sim-s` accepted (an hour of simulated time per scenario).
pub const MAX_SIM_S: f64 = 3600.0;

/// Arguments of `schedlab bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Simulated seconds per scenario (more than 0, at most 3600).
    #[arg(long, default_value_t = 0.5, value_parser = parse_sim_s, allow_negative_numbers = true)]
    pub sim_s: f64,
    /// Scheduling policy to measure.
    #[arg(long, default_value = "fifo", value_parser = clap::builder::PossibleValuesParser::new(crate::config::scenario::Policy::NAMES))]
    pub policy: String,
}

/// `--sim-s`: a finite number of seconds in (0, [`MAX_SIM_S`]], checked here rather than
/// by the TOML the scenarios are built from (where `nan` was a "malformed TOML" error).
fn parse_sim_s(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| "not a number; accepted: seconds, more than 0 and at most 3600".to_string())?;
    if v.is_finite() && v > 0.0 && v <= MAX_SIM_S {
        Ok(v)
    } else {
        Err("out of range; accepted: seconds, more than 0 and at most 3600".to_string())
    }
}

/// The fixed scenarios: (name, scenario TOML without [run]).
const SCENARIOS: &[(&str, &str)] = &[
    (
        "spin 448 hogs on spr-2s",
        "[machine]\npreset = \"spr-2s\"\n[workload]\nkind = \"spin\"\ntasks = 448\n",
    ),
    (
        "pingpong 64 pairs on skl-2s",
        "[machine]\npreset = \"skl-2s\"\n[workload]\nkind = \"pingpong\"\npairs = 64\n",
    ),
    (
        "pingpong 256 pairs on turin-2s",
        "[machine]\npreset = \"turin-2s\"\n[workload]\nkind = \"pingpong\"\npairs = 256\n",
    ),
];

/// Peak resident set size of this process in KiB (`VmHWM`), where /proc exists.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The fixed scenarios with the policy and simulated length of `args` (set as overrides, so
/// a bad `--sim-s` or `--policy` is reported against its flag).
fn scenarios(args: &BenchArgs) -> anyhow::Result<Vec<(&'static str, Scenario)>> {
    SCENARIOS
        .iter()
        .map(|(name, toml)| {
            let mut doc = ScenarioDoc::parse(toml, "bench")?;
            let key = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
            doc.set_path(
                &key(&["kernel", "policy"]),
                toml::Value::String(args.policy.clone()),
                "--policy",
            )?;
            doc.set_path(
                &key(&["run", "duration_s"]),
                toml::Value::Float(args.sim_s),
                "--sim-s",
            )?;
            Ok((*name, Scenario::from_doc(doc)?))
        })
        .collect()
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let scenarios = scenarios(args)?;
    crate::output::write_stdout(&format!(
        "{:<34} {:>12} {:>9} {:>14} {:>14}\n",
        "scenario", "events", "wall_s", "events/s", "sim_s/wall_s"
    ))?;
    for (name, scn) in &scenarios {
        let started = Instant::now();
        let out = experiment::run_once(scn, 1)?;
        let wall = started.elapsed().as_secs_f64();
        let events = out.result.events;
        crate::output::write_stdout(&format!(
            "{name:<34} {events:>12} {wall:>9.3} {:>14.0} {:>14.3}\n",
            events as f64 / wall,
            args.sim_s / wall
        ))?;
    }
    if let Some(kib) = peak_rss_kib() {
        crate::output::write_stdout(&format!("peak RSS: {:.1} MiB\n", kib as f64 / 1024.0))?;
    }
    Ok(())
}
