//! The report page: a static HTML document with inline CSS and inline SVG charts, no script.
//!
//! Every section is a `<section class="report-section" id=... data-status="ok|empty">`; every
//! chart is a `<figure class="plot" data-plot=...>` holding one `<svg>`. A section is `empty`
//! only when the results lack what it draws, and then says why (the browser test checks this).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::charts::{self, DeltaBar, RowLayout};
use super::palette::{css, viridis};
use super::{ReportDoc, VariantResults};
use crate::stats::compare::{MetricTable, lkml_cell};
use crate::stats::report::RunResult;
use crate::stats::summary::Summary;
use crate::stats::timeline::Timeline;
use crate::topology::Machine;

/// HTML-escape text.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub const STYLE: &str = "body{font-family:sans-serif;margin:16px 24px;color:#111;max-width:1400px}\
h1{font-size:22px}h2{font-size:18px;border-bottom:2px solid #0072b2;padding-bottom:2px;margin-top:28px}\
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #bbb;padding:2px 6px;text-align:left}\
th{background:#eef}td.num{text-align:right;font-family:monospace}figure.plot{display:inline-block;margin:4px 8px 8px 0}\
figcaption{font-size:12px;color:#444;max-width:900px}.note{color:#555;font-style:italic}\
.topo{display:flex;flex-wrap:wrap;gap:6px}.box{border:1px solid #555;border-radius:4px;padding:3px;margin:2px;display:flex;flex-wrap:wrap;gap:3px;align-content:flex-start}\
.box>.lbl{width:100%;font-size:11px;color:#333}.pkg{border-width:2px;background:#f7f7f7}.node{background:#fff;border-style:dashed}.llc{background:#f0f4fa}\
.core{border-color:#999;padding:1px;gap:1px}.cpu{font-size:9px;min-width:22px;text-align:center;padding:1px;border-radius:2px}\
.legend{display:inline-block;width:220px;height:12px;background:linear-gradient(to right,#440154,#3b518b,#21908d,#5cc863,#fde725);vertical-align:middle}\
nav a{margin-right:10px;font-size:13px}";

/// The whole page.
pub fn page(doc: &ReportDoc, machine: Option<&Machine>) -> String {
    let first = &doc.variants[0];
    let rows = row_layout(machine, &first.runs[0]);
    let title = format!(
        "schedlab {}: {} on {}",
        if doc.is_compare() { "compare" } else { "run" },
        workload_line(&first.scenario),
        machine.map_or("?".to_string(), |m| m.name.clone())
    );
    let mut sections = vec![
        ("header", "Run", header(doc, machine)),
        ("utilisation", "CPU utilisation", utilisation(doc, &rows)),
        ("timeline", "Per-CPU task timeline", timeline(doc, &rows)),
        ("latency", "Latency", latency(doc)),
        ("migrations", "Migrations", migrations(doc)),
        ("balance", "Newly-idle balance", balance(doc)),
        ("numa", "NUMA pages", numa(doc, machine)),
    ];
    if doc.is_compare() {
        sections.push(("compare", "Comparison", compare(doc)));
    }
    let mut out = page_start(&title);
    out.push_str("<nav>");
    for (id, name, _) in &sections {
        let _ = write!(out, "<a href=\"#{id}\">{}</a>", esc(name));
    }
    out.push_str("</nav>\n");
    for (id, name, (status, body)) in sections {
        // A section is drawn when it holds a chart (the header: the machine).
        let status = status && (id == "header" || body.contains("<figure"));
        push_section(&mut out, id, name, status, &body);
    }
    page_end(&mut out, &doc.schedlab_version, &doc.source);
    out
}

/// A page's start: the document head (title, style) and the heading.
pub fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
        t = esc(title)
    )
}

/// One section of a page, marked `ok` when `drawn`, else `empty`.
pub fn push_section(out: &mut String, id: &str, name: &str, drawn: bool, body: &str) {
    let _ = write!(
        out,
        "<section class=\"report-section\" id=\"{id}\" data-status=\"{}\"><h2>{}</h2>\n{body}</section>\n",
        if drawn { "ok" } else { "empty" },
        esc(name)
    );
}

/// A page's end: the note naming the schedlab version and the source.
pub fn page_end(out: &mut String, version: &str, source: &str) {
    let _ = write!(
        out,
        "<p class=\"note\">schedlab {} — from {}. No scripts; charts are inline SVG.</p>\n</body></html>\n",
        esc(version),
        esc(source)
    );
}

/// The mean of `v`, 0 for none.
fn mean_or_zero(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// A chart with its caption; a chart that had nothing to draw (a note, not an SVG) stays a
/// note, so every figure on the page holds a drawing.
pub fn figure(name: &str, svg: String, caption: &str) -> String {
    if !svg.starts_with("<svg") {
        return format!(
            "<p class=\"note\" data-empty-plot=\"{}\">{}: {}</p>\n",
            esc(name),
            esc(caption),
            svg.trim_start_matches("<p class=\"note\">")
                .trim_end_matches("</p>")
        );
    }
    format!(
        "<figure class=\"plot\" data-plot=\"{}\">{svg}<figcaption>{}</figcaption></figure>\n",
        esc(name),
        esc(caption)
    )
}

pub fn note(text: &str) -> String {
    format!("<p class=\"note\">{}</p>\n", esc(text))
}

fn workload_line(scn: &Value) -> String {
    let w = &scn["workload"];
    w["command"]
        .as_str()
        .or(w["kind"].as_str())
        .unwrap_or("workload")
        .to_string()
}

/// CPUs sorted by package, node, LLC, core; boundaries where the LLC changes.
pub fn row_layout(machine: Option<&Machine>, run: &RunResult) -> RowLayout {
    let online: Vec<usize> = run.cpus.iter().map(|c| c.cpu).collect();
    let Some(m) = machine.filter(|m| online.iter().all(|&c| c < m.nr_cpus())) else {
        return RowLayout {
            cpus: online,
            boundaries: Vec::new(),
        };
    };
    let mut cpus = online;
    cpus.sort_by_key(|&c| {
        let t = &m.cpus[c];
        (t.package, t.node, t.llc, t.core, c)
    });
    let mut boundaries = Vec::new();
    for (r, w) in cpus.windows(2).enumerate() {
        let (a, b) = (&m.cpus[w[0]], &m.cpus[w[1]]);
        if a.package != b.package || a.node != b.node {
            boundaries.push((r + 1, true));
        } else if a.llc != b.llc {
            boundaries.push((r + 1, false));
        }
    }
    RowLayout { cpus, boundaries }
}

/// The first run (of each variant) that recorded a timeline.
fn timelines(doc: &ReportDoc) -> Vec<(&VariantResults, &RunResult, &Timeline)> {
    doc.variants
        .iter()
        .filter_map(|v| {
            v.runs
                .iter()
                .find_map(|r| r.timeline.as_ref().map(|t| (v, r, t)))
        })
        .collect()
}

const NO_TIMELINE: &str = "These results carry no time series: record one with `schedlab run \
     --report FILE` (or `compare --report FILE`, or `--json` together with `--report`).";

type Section = (bool, String);

fn header(doc: &ReportDoc, machine: Option<&Machine>) -> Section {
    let mut out = String::from(
        "<table><tr><th>variant</th><th>kernel</th><th>changes</th><th>workload</th><th>seeds</th><th>simulated</th></tr>\n",
    );
    for v in &doc.variants {
        let k = &v.scenario["kernel"];
        let map_line = |key: &str, fmt: &dyn Fn(&str, &Value) -> String| -> String {
            k[key].as_object().map_or(String::new(), |m| {
                m.iter()
                    .map(|(n, v)| fmt(n, v))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        let feats = map_line("feature_overrides", &|n, v| {
            if v.as_bool() == Some(false) {
                format!("NO_{n}")
            } else {
                n.to_string()
            }
        });
        let sysctls = map_line("sysctl_overrides", &|n, v| format!("{n}={v}"));
        let seeds: Vec<String> = v.runs.iter().map(|r| r.seed.to_string()).collect();
        let sim_s = v.runs.first().map_or(0.0, |r| r.sim_time_ns as f64 / 1e9);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{} ({}, policy {}){}</td><td>{}</td><td>{}</td><td>{}</td><td>{sim_s:.3} s × {} run(s)</td></tr>",
            esc(&v.name),
            esc(k["profile"].as_str().unwrap_or("?")),
            esc(k["mode"].as_str().unwrap_or("?")),
            esc(k["policy"].as_str().unwrap_or("?")),
            esc(&[feats, sysctls]
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| format!("; {s}"))
                .collect::<String>()),
            esc(&v.changes),
            esc(&workload_line(&v.scenario)),
            esc(&seeds.join(" ")),
            v.runs.len()
        );
    }
    out.push_str("</table>\n");
    out.push_str(&topology(machine, &doc.variants[0].runs[0]));
    (true, out)
}

/// The machine as nested boxes: package > node > LLC > core > CPU, each CPU coloured by its
/// mean utilisation over the first run.
fn topology(machine: Option<&Machine>, run: &RunResult) -> String {
    let sim_ns = run.sim_time_ns.max(1) as f64;
    let util: BTreeMap<usize, f64> = (run.cpus.iter())
        .map(|c| (c.cpu, c.counters.busy_ns as f64 / sim_ns))
        .collect();
    let Some(m) = machine else {
        return note(
            "The machine could not be resolved again from the scenario (a file that moved?); CPUs are drawn in id order.",
        );
    };
    let mut out = format!(
        "<p><b>{}</b>: {} — {} CPUs, {} node(s), arch {}. CPU colour = utilisation over the \
         first run: <span class=\"legend\"></span> 0 → 100%; grey = offline.</p>\n<div class=\"topo\" data-plot=\"topology\">",
        esc(&m.name),
        esc(&m.description),
        m.nr_cpus(),
        m.nr_nodes(),
        m.arch.name()
    );
    let mut cpus: Vec<usize> = (0..m.nr_cpus()).collect();
    cpus.sort_by_key(|&c| {
        let t = &m.cpus[c];
        (t.package, t.node, t.llc, t.core, c)
    });
    let key = |c: usize| {
        let t = &m.cpus[c];
        [t.package, t.node, t.llc, t.core]
    };
    let names = ["package", "node", "LLC", "core"];
    let classes = ["pkg", "node", "llc", "core"];
    let mut open: Option<[usize; 4]> = None;
    for &c in &cpus {
        let k = key(c);
        let depth = open.map_or(0, |o| (0..4).find(|&i| o[i] != k[i]).unwrap_or(4));
        if open.is_some() {
            for _ in depth..4 {
                out.push_str("</div>");
            }
        }
        for (i, name) in names.iter().enumerate().skip(depth) {
            let _ = write!(
                out,
                "<div class=\"box {}\"><span class=\"lbl\">{name} {}</span>",
                classes[i], k[i]
            );
        }
        open = Some(k);
        let (bg, fg, tip) = match util.get(&c) {
            Some(&u) => (
                css(viridis(u)),
                if u > 0.6 { "#000" } else { "#fff" },
                format!("cpu {c}: {:.0}% busy", u * 100.0),
            ),
            None => ("#ccc".to_string(), "#000", format!("cpu {c}: offline")),
        };
        let _ = write!(
            out,
            "<span class=\"cpu\" style=\"background:{bg};color:{fg}\" title=\"{tip}\">{c}</span>"
        );
    }
    for _ in 0..4 {
        out.push_str("</div>");
    }
    out.push_str("</div>\n");
    out
}

fn utilisation(doc: &ReportDoc, rows: &RowLayout) -> Section {
    let tls = timelines(doc);
    if tls.is_empty() {
        return (false, note(NO_TIMELINE));
    }
    let mut out = String::new();
    for (v, r, tl) in tls {
        let svg = charts::heatmap(tl, rows);
        let cap = format!(
            "{} (seed {}): rows are CPUs in topology order (package, node, LLC, core); black lines \
             separate packages/nodes, white lines LLCs. Colour = busy fraction (viridis, dark = idle).",
            v.name, r.seed
        );
        out.push_str(&figure(&format!("heatmap-{}", v.name), svg, &cap));
    }
    (true, out)
}

/// Migration reasons that occurred, in the kernel's order of [`crate::sched::types::MigrationReason`].
fn reasons_in(tl: &Timeline) -> Vec<String> {
    crate::sched::types::MigrationReason::ALL
        .iter()
        .map(|r| r.name().to_string())
        .filter(|n| {
            tl.migrations_by_reason
                .get(n)
                .is_some_and(|v| v.iter().any(|&x| x > 0))
        })
        .collect()
}

fn timeline(doc: &ReportDoc, rows: &RowLayout) -> Section {
    let tls = timelines(doc);
    if tls.is_empty() {
        return (false, note(NO_TIMELINE));
    }
    let mut out = String::new();
    for (v, r, tl) in tls {
        let reasons = reasons_in(tl);
        let svg = charts::task_timeline(tl, rows, &reasons);
        let cap = format!(
            "{} (seed {}): colour = the task (pid) that ran longest in each interval (colours \
             cycle through 8); white = idle. Triangles mark migrations onto a CPU, by reason \
             ({} shown of {} migrations; dense runs are thinned).",
            v.name,
            r.seed,
            tl.migration_marks.len().min(charts::MARKS_DRAWN_MAX),
            tl.migration_marks.len() as u64 + tl.migration_marks_dropped
        );
        out.push_str(&figure(&format!("tasks-{}", v.name), svg, &cap));
    }
    (true, out)
}

/// Mean of `f` over runs.
fn mean_over(runs: &[RunResult], f: impl Fn(&RunResult) -> f64) -> f64 {
    Summary::of(&runs.iter().map(f).collect::<Vec<_>>()).mean
}

/// Per-task mean schedule delay (run-queue wait per wait), percentiles across tasks, µs.
fn schedule_delay(run: &RunResult) -> Option<[f64; 5]> {
    let mut waits: Vec<f64> = run
        .tasks
        .iter()
        .filter(|t| t.counters.wait_count > 0)
        .map(|t| t.counters.wait_sum_ns as f64 / t.counters.wait_count as f64 / 1e3)
        .collect();
    if waits.is_empty() {
        return None;
    }
    waits.sort_by(f64::total_cmp);
    let at = |p: f64| {
        waits[(((p / 100.0) * waits.len() as f64).ceil() as usize).clamp(1, waits.len()) - 1]
    };
    Some([at(50.0), at(90.0), at(99.0), at(99.9), at(100.0)])
}

fn latency(doc: &ReportDoc) -> Section {
    let mut names: Vec<String> = doc
        .variants
        .iter()
        .flat_map(|v| v.runs.iter().flat_map(|r| r.latency_us.keys().cloned()))
        .collect();
    names.sort();
    names.dedup();
    let mut out = String::new();
    let mut any = false;
    for name in &names {
        let lines: Vec<(String, [f64; 5])> = doc
            .variants
            .iter()
            .filter(|v| v.runs.iter().all(|r| r.latency_us.contains_key(name)))
            .map(|v| {
                let l = |f: fn(&crate::stats::report::LatencyUs) -> f64| {
                    mean_over(&v.runs, |r| f(&r.latency_us[name]))
                };
                (
                    v.name.clone(),
                    [
                        l(|x| x.p50),
                        l(|x| x.p90),
                        l(|x| x.p99),
                        l(|x| x.p99_9),
                        l(|x| x.max),
                    ],
                )
            })
            .collect();
        if lines.iter().all(|(_, v)| v.iter().all(|x| *x <= 0.0)) {
            continue;
        }
        any = true;
        let cap = format!("`{name}`: the results' percentiles, mean over each variant's runs.");
        out.push_str(&figure(
            &format!("latency-{name}"),
            charts::percentiles(name, &lines),
            &cap,
        ));
        out.push_str(&latency_cdf(doc, name));
    }
    let delays: Vec<(String, [f64; 5])> = doc
        .variants
        .iter()
        .filter_map(|v| {
            let per: Vec<[f64; 5]> = v.runs.iter().filter_map(schedule_delay).collect();
            (!per.is_empty()).then(|| {
                let m = |i: usize| per.iter().map(|p| p[i]).sum::<f64>() / per.len() as f64;
                (v.name.clone(), [m(0), m(1), m(2), m(3), m(4)])
            })
        })
        .collect();
    if !delays.is_empty() {
        any = true;
        let cap = "schedule delay: each task's mean run-queue wait (wait_sum / wait_count, as \
                   /proc/PID/sched gives it), percentiles across tasks.";
        out.push_str(&figure(
            "latency-schedule-delay",
            charts::percentiles("schedule delay", &delays),
            cap,
        ));
        out.push_str(&schedule_delay_cdf(doc));
    }
    if !any {
        return (false, note("No latency samples in these results."));
    }
    (true, out)
}

/// Fewest samples (runs summed) a latency needs for its CDF to be drawn (hackbench's `time`,
/// one sample per run, keeps only its percentile plot).
pub const LATENCY_CDF_SAMPLES_MIN: u64 = 20;

/// The CDF of latency `name` of every variant whose runs all carry its histogram
/// (`latency_hist`) with at least [`LATENCY_CDF_SAMPLES_MIN`] samples, the runs' buckets
/// summed; `""` when none does.
fn latency_cdf(doc: &ReportDoc, name: &str) -> String {
    let lines: Vec<charts::CdfLine> = doc
        .variants
        .iter()
        .filter_map(|v| {
            let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
            for r in &v.runs {
                for [lo, n] in r.latency_hist.get(name)? {
                    let c = sum.entry(*lo).or_default();
                    // Saturating: a results file is input, its counts may be anything.
                    *c = c.saturating_add(*n);
                }
            }
            let total: u64 = sum.values().fold(0u64, |a, n| a.saturating_add(*n));
            (total >= LATENCY_CDF_SAMPLES_MIN).then(|| {
                let mut seen = 0;
                let pts = sum
                    .iter()
                    .map(|(lo, n)| {
                        seen = n.saturating_add(seen);
                        ((*lo).max(1) as f64 / 1e3, seen as f64 / total as f64)
                    })
                    .collect();
                (v.name.clone(), pts)
            })
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let cap = format!(
        "`{name}`: the whole distribution (CDF) from the results' histogram (runs summed; \
         x = the lower bound of each bucket, buckets ≤ 0.8 % wide unless coarsened to fit \
         {} per run).",
        crate::stats::report::LATENCY_HIST_BUCKETS_MAX
    );
    figure(
        &format!("cdf-{name}"),
        charts::cdf(
            &format!("{name} latency CDF"),
            "latency (µs, log scale)",
            &lines,
        ),
        &cap,
    )
}

/// The CDF across tasks (all runs) of each task's mean schedule delay, per variant.
fn schedule_delay_cdf(doc: &ReportDoc) -> String {
    let lines: Vec<charts::CdfLine> = doc
        .variants
        .iter()
        .filter_map(|v| {
            let mut waits: Vec<f64> = v
                .runs
                .iter()
                .flat_map(|r| r.tasks.iter())
                .filter(|t| t.counters.wait_count > 0)
                .map(|t| t.counters.wait_sum_ns as f64 / t.counters.wait_count as f64 / 1e3)
                .collect();
            waits.sort_by(f64::total_cmp);
            let n = waits.len() as f64;
            (!waits.is_empty()).then(|| {
                let pts = waits
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (w.max(1e-3), (i + 1) as f64 / n))
                    .collect();
                (v.name.clone(), pts)
            })
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    figure(
        "cdf-schedule-delay",
        charts::cdf(
            "schedule delay CDF (across tasks)",
            "mean run-queue wait per task (µs, log scale)",
            &lines,
        ),
        "schedule delay: the CDF across the tasks of every run of each task's mean \
         run-queue wait (the results keep per-task sums, not a histogram of waits).",
    )
}

/// `(category, per-variant mean per run)`, dropping categories zero in every variant.
fn bars_of(
    doc: &ReportDoc,
    keys: &[String],
    f: impl Fn(&RunResult, &str) -> f64,
) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let vals: Vec<Vec<f64>> = doc
        .variants
        .iter()
        .map(|v| {
            keys.iter()
                .map(|k| mean_over(&v.runs, |r| f(r, k)))
                .collect()
        })
        .collect();
    let keep: Vec<usize> = (0..keys.len())
        .filter(|&i| vals.iter().any(|v| v[i] > 0.0))
        .collect();
    let cats = keep.iter().map(|&i| keys[i].clone()).collect();
    let bars = doc
        .variants
        .iter()
        .zip(&vals)
        .map(|(v, vals)| (v.name.clone(), keep.iter().map(|&i| vals[i]).collect()))
        .collect();
    (cats, bars)
}

fn migrations(doc: &ReportDoc) -> Section {
    let reasons: Vec<String> = crate::sched::types::MigrationReason::ALL
        .iter()
        .map(|r| r.name().to_string())
        .collect();
    let (cats, bars) = bars_of(doc, &reasons, |r, k| {
        r.migrations.by_reason.get(k).copied().unwrap_or(0) as f64
    });
    let mut out = figure(
        "migrations-by-reason",
        charts::hbars(
            "Migrations by reason",
            "migrations per run (mean)",
            &cats,
            &bars,
        ),
        "Every set_task_cpu() by the mechanism that moved the task, mean over runs.",
    );
    let mut pairs: Vec<String> = doc
        .variants
        .iter()
        .flat_map(|v| {
            v.runs
                .iter()
                .flat_map(|r| r.migrations.ping_pong_by_pair.keys().cloned())
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    let (pcats, pbars) = bars_of(doc, &pairs, |r, k| {
        r.migrations.ping_pong_by_pair.get(k).copied().unwrap_or(0) as f64
    });
    if pcats.is_empty() {
        out.push_str(&note(
            "No ping-pong: no task went back to the CPU it left within the window.",
        ));
    } else {
        out.push_str(&figure(
            "ping-pong-pairs",
            charts::hbars("Ping-pong pairs (first move → move back)", "ping-pongs per run (mean)", &pcats, &pbars),
            "A ping-pong is a task moved back to the CPU it left within run.pingpong_window_ms, by mechanism pair.",
        ));
    }
    for (v, r, tl) in timelines(doc) {
        let step_ms = tl.bucket_ns as f64 / 1e6;
        let lines: Vec<(String, Vec<f64>)> = reasons_in(tl)
            .into_iter()
            .map(|name| {
                let per_s: Vec<f64> = tl.migrations_by_reason[&name]
                    .iter()
                    .map(|&n| n as f64 / (step_ms / 1e3))
                    .collect();
                (name, per_s)
            })
            .collect();
        let cap = format!(
            "{} (seed {}): migrations per second of simulated time, by reason, per {step_ms:.3} ms.",
            v.name, r.seed
        );
        out.push_str(&figure(
            &format!("migrations-over-time-{}", v.name),
            charts::lines_over_time("Migrations over time", "migrations / s", step_ms, &lines),
            &cap,
        ));
    }
    (true, out)
}

fn balance(doc: &ReportDoc) -> Section {
    if doc
        .variants
        .iter()
        .all(|v| v.runs.iter().all(|r| r.schedstat.is_none()))
    {
        return (
            false,
            note("The policy keeps no schedstats (kernel.policy = \"linux-fair\" does)."),
        );
    }
    let mut out = newidle_figure(doc);
    out.push_str(&levels_figure(doc));
    out.push_str(&kernel_work_figure(doc));
    (true, out)
}

/// The newly-idle balance passes by outcome (schedstat `newly_idle`); separate as the first
/// chart of [`balance`].
fn newidle_figure(doc: &ReportDoc) -> String {
    let counters: Vec<String> = [
        "lb_count",
        "lb_balanced",
        "lb_failed",
        "lb_gained",
        "lb_nobusyg",
        "lb_nobusyq",
        "lb_hot_gained",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let newidle = |r: &RunResult, k: &str| {
        r.schedstat
            .as_ref()
            .map_or(0.0, |s| s.idle_type("newly_idle", k) as f64)
    };
    let (cats, bars) = bars_of(doc, &counters, newidle);
    figure(
        "newidle-passes",
        charts::hbars(
            "Newly-idle balance passes by outcome",
            "per run (mean, schedstat newly_idle)",
            &cats,
            &bars,
        ),
        "sched_balance_newidle() passes (lb_count) and their outcomes as /proc/schedstat counts them.",
    )
}

/// The balance passes per sched-domain level, over the levels any run has; separate as the
/// second chart of [`balance`].
fn levels_figure(doc: &ReportDoc) -> String {
    let mut levels: Vec<String> = doc
        .variants
        .iter()
        .flat_map(|v| {
            v.runs
                .iter()
                .filter_map(|r| r.schedstat.as_ref())
                .flat_map(|s| s.by_level.keys().cloned())
        })
        .collect();
    levels.sort();
    levels.dedup();
    let by_level = |r: &RunResult, k: &str| {
        r.schedstat
            .as_ref()
            .and_then(|s| s.by_level.get(k))
            .and_then(|m| m.get("lb_count"))
            .copied()
            .unwrap_or(0) as f64
    };
    let (lcats, lbars) = bars_of(doc, &levels, by_level);
    figure(
        "balance-by-level",
        charts::hbars(
            "Balance passes by domain level (all idle types)",
            "lb_count per run (mean)",
            &lcats,
            &lbars,
        ),
        "Where the balancer looked: passes per sched-domain level.",
    )
}

/// The kernel work charged over all CPUs (the cost side of balancing); separate as the
/// third chart of [`balance`].
fn kernel_work_figure(doc: &ReportDoc) -> String {
    let work = |r: &RunResult, _: &str| {
        r.cpus
            .iter()
            .map(|c| c.counters.kernel_work_ns as f64)
            .sum::<f64>()
            / 1e6
    };
    let (wcats, wbars) = bars_of(doc, &["all CPUs".to_string()], work);
    figure(
        "kernel-work",
        charts::hbars(
            "Kernel work charged (scans, switches, IPIs, balancing)",
            "ms per run (mean)",
            &wcats,
            &wbars,
        ),
        "The cost side: the model's kernel work, balancing included (the results do not split out the newly-idle pass cost).",
    )
}

fn numa(doc: &ReportDoc, machine: Option<&Machine>) -> Section {
    let nodes = machine.map_or(1, Machine::nr_nodes);
    let has = doc.variants.iter().any(|v| {
        v.runs
            .iter()
            .any(|r| r.tasks.iter().any(|t| t.numa_pages_pct.is_some()))
    });
    if nodes < 2 || !has {
        return (
            false,
            note("Single-node machine, or no task memory placement in these results."),
        );
    }
    let keys: Vec<String> = (0..nodes).map(|n| format!("node {n}")).collect();
    let share = |r: &RunResult, k: &str| {
        let n: usize = k[5..].parse().unwrap_or(0);
        let v: Vec<f64> = r
            .tasks
            .iter()
            .filter_map(|t| t.numa_pages_pct.as_ref()?.get(n).copied())
            .collect();
        mean_or_zero(&v)
    };
    let (cats, bars) = bars_of(doc, &keys, share);
    let mut out = figure(
        "numa-pages",
        charts::hbars(
            "Task pages per node at the end of the run",
            "% of a task's pages (mean over tasks)",
            &cats,
            &bars,
        ),
        "Where the tasks' memory is, per node.",
    );
    let local: Vec<String> = vec!["local".to_string()];
    let loc = |r: &RunResult, _: &str| {
        let v: Vec<f64> = r
            .tasks
            .iter()
            .filter_map(|t| t.numa_pages_local_pct)
            .collect();
        mean_or_zero(&v)
    };
    let (lc, lb) = bars_of(doc, &local, loc);
    out.push_str(&figure(
        "numa-local",
        charts::hbars(
            "Pages on the task's own node",
            "% (mean over tasks)",
            &lc,
            &lb,
        ),
        "NUMA locality at the end of the run.",
    ));
    out.push_str(&numa_over_time(doc));
    (true, out)
}

/// Processes drawn one by one in the pages-over-time chart (the largest at the end).
pub const NUMA_SERIES_MMS_DRAWN: usize = 4;

/// `[i][sample]` of a `pages_series` column of pages, as MiB.
fn mib_rows(v: &Value) -> Vec<Vec<f64>> {
    let page_mib = crate::memory::PAGE_BYTES as f64 / (1u64 << 20) as f64;
    v.as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r.as_array().map_or(Vec::new(), |xs| {
                        xs.iter()
                            .map(|x| x.as_f64().unwrap_or(0.0) * page_mib)
                            .collect()
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `[[sample, value], ...]` change points (per row) back to `[value per sample]` rows.
pub fn expand_changes(rows: &Value, samples: usize) -> Value {
    let expand = |pts: &Value| -> Vec<Value> {
        let mut out = vec![Value::from(0u64); samples];
        let pts = pts.as_array().map_or(&[][..], Vec::as_slice);
        for (k, p) in pts.iter().enumerate() {
            let from = p[0].as_u64().unwrap_or(0) as usize;
            let to = pts
                .get(k + 1)
                .and_then(|q| q[0].as_u64())
                .map_or(samples, |t| t as usize);
            for o in out.iter_mut().take(to.min(samples)).skip(from) {
                *o = p[1].clone();
            }
        }
        out
    };
    Value::Array(rows.as_array().map_or(Vec::new(), |r| {
        r.iter().map(|x| Value::Array(expand(x))).collect()
    }))
}

/// MiB that changed node over a process's series (sum over nodes and samples of the
/// increases), after its first touch.
fn mm_moved_mib(mm: &[Vec<f64>]) -> f64 {
    let total = |i: usize| mm.iter().map(|n| n[i]).sum::<f64>();
    let samples = mm.first().map_or(0, Vec::len);
    (1..samples)
        .filter(|&i| total(i) == total(i - 1))
        .map(|i| mm.iter().map(|n| (n[i] - n[i - 1]).max(0.0)).sum::<f64>())
        .sum()
}

/// NUMA pages per node over time (`runs[].numa.pages_series`) of the first run of each
/// variant that has one: all processes per node, the largest processes per node, and the
/// cumulative NUMA vmstat counters.
fn numa_over_time(doc: &ReportDoc) -> String {
    let mut out = String::new();
    for v in &doc.variants {
        let Some((r, ps)) = v.runs.iter().find_map(|r| {
            let ps = r.numa.as_ref()?.get("pages_series")?;
            Some((r, ps))
        }) else {
            continue;
        };
        let time_s: Vec<f64> = ps["time_ns"].as_array().map_or(Vec::new(), |t| {
            t.iter().map(|x| x.as_f64().unwrap_or(0.0) / 1e9).collect()
        });
        let nodes: Vec<(String, Vec<f64>)> = mib_rows(&ps["pages_per_node"])
            .into_iter()
            .enumerate()
            .map(|(n, v)| (format!("node {n}"), v))
            .collect();
        let cap = format!(
            "{} (seed {}): resident memory of all processes with a working set, per node, \
             sampled every {:.0} ms of simulated time (warm-up included).",
            v.name,
            r.seed,
            ps["step_ns"].as_f64().unwrap_or(0.0) / 1e6
        );
        out.push_str(&figure(
            &format!("numa-pages-over-time-{}", v.name),
            charts::lines_at("Pages per node over time", "MiB", &time_s, &nodes),
            &cap,
        ));
        out.push_str(&mm_pages_figure(&v.name, ps, &time_s));
        out.push_str(&numa_vmstat_figure(&v.name, ps, &time_s));
    }
    out
}

/// Variant `name`'s processes whose pages moved most between nodes (then the largest),
/// their MiB per node over time; separate as one chart section of [`numa_over_time`].
fn mm_pages_figure(name: &str, ps: &Value, time_s: &[f64]) -> String {
    let mms: Vec<Vec<Vec<f64>>> = ps["mm_pages_per_node"].as_array().map_or(Vec::new(), |a| {
        a.iter()
            .map(|mm| mib_rows(&expand_changes(mm, time_s.len())))
            .collect()
    });
    let mut order: Vec<usize> = (0..mms.len()).collect();
    let (moved, size) = (mm_moved_mib, |mm: &[Vec<f64>]| {
        mm.iter().filter_map(|n| n.last()).sum::<f64>()
    });
    order.sort_by(|&a, &b| {
        (moved(&mms[b]).total_cmp(&moved(&mms[a])))
            .then(size(&mms[b]).total_cmp(&size(&mms[a])))
            .then(a.cmp(&b))
    });
    let lines: Vec<(String, Vec<f64>)> = order
        .iter()
        .take(NUMA_SERIES_MMS_DRAWN)
        .flat_map(|&mm| {
            mms[mm]
                .iter()
                .enumerate()
                .filter(|(_, v)| v.iter().any(|x| *x > 0.0))
                .map(move |(n, v)| (format!("mm {mm} node {n}"), v.clone()))
        })
        .collect();
    let cap = format!(
        "{}: the {} processes (mm, as numa.tasks[].mm names them) of {} whose pages \
         moved most between nodes (then the largest), their resident MiB on each node \
         over time (nodes where they have none are left out).",
        name,
        order.len().min(NUMA_SERIES_MMS_DRAWN),
        mms.len()
    );
    figure(
        &format!("numa-mm-pages-over-time-{name}"),
        charts::lines_at("Process pages per node over time", "MiB", time_s, &lines),
        &cap,
    )
}

/// Variant `name`'s cumulative NUMA vmstat counters over time (those ever non-zero);
/// separate as one chart section of [`numa_over_time`].
fn numa_vmstat_figure(name: &str, ps: &Value, time_s: &[f64]) -> String {
    let vm: Vec<(String, Vec<f64>)> = ps["vmstat"].as_object().map_or(Vec::new(), |m| {
        m.iter()
            .map(|(k, xs)| {
                let xs = xs.as_array().map_or(Vec::new(), |a| {
                    a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect()
                });
                (k.clone(), xs)
            })
            .filter(|(_, xs)| xs.iter().any(|x| *x > 0.0))
            .collect()
    });
    figure(
        &format!("numa-vmstat-over-time-{name}"),
        charts::lines_at(
            "NUMA vmstat counters (cumulative)",
            "count since the run's start",
            time_s,
            &vm,
        ),
        &format!("{name}: /proc/vmstat's NUMA-balancing counters over time, cumulative."),
    )
}

/// Half-width of the 95% confidence interval of a mean of `n` values with sample stdev `sd`.
pub fn ci95(sd: f64, n: usize) -> f64 {
    if n < 2 {
        f64::NAN
    } else {
        crate::stats::summary::t975(n - 1) * sd / (n as f64).sqrt()
    }
}

fn fmt_pm(mean: f64, half: f64) -> String {
    let d = crate::stats::compare::decimals_for(mean);
    if half.is_finite() {
        format!("{mean:.d$} ± {half:.d$}")
    } else {
        format!("{mean:.d$}")
    }
}

fn compare_table(t: &MetricTable) -> String {
    let base = t
        .rows
        .first()
        .and_then(|r| r.summary)
        .map_or(0.0, |s| s.mean);
    let mut out = format!(
        "<tr><th colspan=\"4\">{} — {} ({}; {})</th></tr>\n",
        esc(&t.metric),
        esc(&t.test),
        esc(&t.units),
        esc(t.interpretation.interpretation())
    );
    for r in &t.rows {
        let Some(s) = r.summary else { continue };
        let delta = r.paired_delta.map_or("—".to_string(), |p| {
            let half = ci95(p.stdev, p.n);
            let half_pct = if half.is_finite() && base != 0.0 {
                100.0 * half / base.abs()
            } else {
                0.0
            };
            format!(
                "{} ({:+.2}% ± {half_pct:.2}%)",
                fmt_pm(p.mean, half),
                p.pct_of_baseline
            )
        });
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&r.variant),
            esc(&fmt_pm(s.mean, ci95(s.stdev, s.n))),
            esc(&lkml_cell(r.normalized, r.pct_imp, s.cv_pct)),
            esc(&delta)
        );
    }
    out
}

/// Headline metrics for the delta chart: the benchmark's own, latencies, perf counters,
/// migration totals (schedstat detail stays in the table).
fn chart_metric(m: &str) -> bool {
    m.starts_with("workload.")
        || (m.starts_with("latency_us.") && !m.ends_with(".samples"))
        || m.starts_with("perf_stat.")
        || m == "migrations.total"
        || m == "migrations.ping_pong"
}

fn compare(doc: &ReportDoc) -> Section {
    let Some(c) = doc.comparison.as_ref() else {
        return (false, note("Not a comparison."));
    };
    let mut out = String::from(
        "<p>LKML layout: mean ± 95% CI over runs; <code>normalized [pct imp] (CV)</code>; paired \
         delta over the same seeds ± 95% CI (t-distribution; none with one run).</p>\n<table>\
         <tr><th>variant</th><th>mean ± CI</th><th>norm [pct imp] (CV)</th><th>paired delta ± CI (% of baseline)</th></tr>\n",
    );
    for t in &c.metrics {
        out.push_str(&compare_table(t));
    }
    out.push_str("</table>\n");
    let mut metrics = Vec::new();
    let mut bars = Vec::new();
    for t in c.metrics.iter().filter(|t| chart_metric(&t.metric)) {
        let base = t
            .rows
            .first()
            .and_then(|r| r.summary)
            .map_or(0.0, |s| s.mean);
        if base == 0.0 {
            continue;
        }
        let mut used = false;
        for (v, r) in t.rows.iter().enumerate().skip(1) {
            let Some(p) = r.paired_delta else { continue };
            let half = ci95(p.stdev, p.n);
            let half_pct = if half.is_finite() {
                100.0 * half / base.abs()
            } else {
                0.0
            };
            bars.push(DeltaBar {
                metric: t.metric.clone(),
                variant: v - 1,
                mean_pct: p.pct_of_baseline,
                lo_pct: p.pct_of_baseline - half_pct,
                hi_pct: p.pct_of_baseline + half_pct,
            });
            used = true;
        }
        if used {
            metrics.push(t.metric.clone());
        }
    }
    let names: Vec<String> = c.variants.iter().skip(1).cloned().collect();
    out.push_str(&figure(
        "paired-deltas",
        charts::deltas(&metrics, &names, &bars),
        "Per metric: the variant's mean paired change against the baseline on the same seeds, as % of the baseline mean, with its 95% CI.",
    ));
    (true, out)
}
