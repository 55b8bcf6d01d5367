//! The `perf stat` block, in the layout of perf ≥ 5.x for software events
//! (workloads digest §9): count right-aligned in 18 columns, unit in 4, event name in 32, a
//! 38-column metric, and `( +- x% )` noise over `-r N` runs (standard error of the mean).
//!
//! Thousands separators are printed as under an en_US locale (where most posted reports come
//! from); perf prints none under the C locale. page-faults is omitted: memory is not modelled.

use super::summary::Summary;
use crate::units::{count_ceil, count_floor, count_round};

/// One run's perf counters (the contract's `perf_stat` object).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(default)]
pub struct PerfStat {
    pub task_clock_ms: f64,
    pub context_switches: u64,
    pub cpu_migrations: u64,
    pub cpus_utilized: f64,
    pub elapsed_s: f64,
}

/// Group an integer's digits by thousands.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn thousands_f2(v: f64) -> String {
    let whole = count_floor(v);
    let frac = count_round((v - v.trunc()) * 100.0);
    let (whole, frac) = if frac >= 100 {
        (whole + 1, 0)
    } else {
        (whole, frac)
    };
    format!("{}.{frac:02}", thousands(whole))
}

/// A per-second rate with perf's K/M/G scaling.
fn rate(per_sec: f64) -> (f64, &'static str) {
    if per_sec >= 1e9 {
        (per_sec / 1e9, "G/sec")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, "M/sec")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, "K/sec")
    } else {
        (per_sec, "/sec")
    }
}

fn noise(s: &Summary) -> String {
    if s.n > 1 && s.noise_pct() != 0.0 {
        format!("  ( +-{:6.2}% )", s.noise_pct())
    } else {
        String::new()
    }
}

fn line(count: &str, unit: &str, event: &str, metric: &str, s: &Summary) -> String {
    format!("{count:>18} {unit:<4} {event:<32} {metric:<38}{}", noise(s))
        .trim_end()
        .to_string()
}

/// Render the block for `command` over one or more runs.
pub fn render(command: &str, runs: &[PerfStat]) -> String {
    let n = runs.len();
    let col = |f: fn(&PerfStat) -> f64| Summary::of(&runs.iter().map(f).collect::<Vec<_>>());
    let clock = col(|r| r.task_clock_ms);
    let cs = col(|r| r.context_switches as f64);
    let mig = col(|r| r.cpu_migrations as f64);
    let util = col(|r| r.cpus_utilized);
    let elapsed = col(|r| r.elapsed_s);
    let per_sec = |count: f64| {
        if clock.mean > 0.0 {
            count / (clock.mean / 1e3)
        } else {
            0.0
        }
    };
    let mut out = String::new();
    out.push('\n');
    // The command as given, its control characters escaped (`hackbench $'-g\n1'` stays on
    // the header's line), as every echo of an input is.
    let command = crate::error::escape_controls(command);
    out.push_str(&format!(" Performance counter stats for '{command}'"));
    if n > 1 {
        out.push_str(&format!(" ({n} runs)"));
    }
    out.push_str(":\n\n");
    out.push_str(&line(
        &thousands_f2(clock.mean),
        "msec",
        "task-clock",
        &format!("# {:>8.3} CPUs utilized", util.mean),
        &clock,
    ));
    out.push('\n');
    for (name, s) in [("context-switches", &cs), ("cpu-migrations", &mig)] {
        let (v, unit) = rate(per_sec(s.mean));
        out.push_str(&line(
            &thousands(count_round(s.mean)),
            "",
            name,
            &format!("# {v:>8.3} {unit}"),
            s,
        ));
        out.push('\n');
    }
    out.push('\n');
    if n > 1 {
        let se = elapsed.stderr_mean();
        let precision = if se > 1.0 || se == 0.0 {
            2
        } else {
            count_ceil(-se.log10()) + 2
        };
        out.push_str(&format!(
            " {:>17.*} +- {:.*} seconds time elapsed{}\n",
            precision,
            elapsed.mean,
            precision,
            se,
            noise(&elapsed)
        ));
    } else {
        out.push_str(&format!(" {:>17.9} seconds time elapsed\n", elapsed.mean));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_run_layout() {
        let r = PerfStat {
            task_clock_ms: 705.21,
            context_switches: 61_344,
            cpu_migrations: 3_102,
            cpus_utilized: 5.812,
            elapsed_s: 0.121339871,
        };
        let text = render("hackbench -g 10", &[r]);
        let expected = "\n Performance counter stats for 'hackbench -g 10':\n\n\
            \x20           705.21 msec task-clock                       #    5.812 CPUs utilized\n\
            \x20           61,344      context-switches                 #   86.987 K/sec\n\
            \x20            3,102      cpu-migrations                   #    4.399 K/sec\n\
            \n\
            \x20      0.121339871 seconds time elapsed\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn control_characters_of_the_command_are_escaped() {
        let r = PerfStat {
            task_clock_ms: 1.0,
            context_switches: 1,
            cpu_migrations: 0,
            cpus_utilized: 1.0,
            elapsed_s: 0.1,
        };
        let text = render("hackbench '-g\n1'", &[r]);
        assert!(
            text.contains("\n Performance counter stats for 'hackbench '-g\\n1'':\n"),
            "{text}"
        );
    }

    #[test]
    fn multi_run_noise_is_standard_error_over_mean() {
        let mk = |ms: f64, e: f64| PerfStat {
            task_clock_ms: ms,
            context_switches: 100,
            cpu_migrations: 10,
            cpus_utilized: 1.0,
            elapsed_s: e,
        };
        let text = render("x", &[mk(100.0, 0.5), mk(110.0, 0.6)]);
        // task-clock: mean 105, s = 7.0711, se = 5, noise = 4.76 %.
        assert!(text.contains("(2 runs)"), "{text}");
        assert!(text.contains("105.00 msec task-clock"), "{text}");
        assert!(text.contains("( +-  4.76% )"), "{text}");
        // elapsed: mean 0.55, se 0.05 → precision ceil(1.30)+2 = 4.
        assert!(
            text.contains("0.5500 +- 0.0500 seconds time elapsed  ( +-  9.09% )"),
            "{text}"
        );
        // identical counts across runs: no noise column.
        assert!(
            text.contains("context-switches                 #  952.381 /sec\n"),
            "{text}"
        );
    }
}
