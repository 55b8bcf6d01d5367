//! Single-table report pages: `schedlab bisect --report` (the ranked changes and their
//! effects) and `schedlab sweep table --report` (the pivot table). Same style, palette and
//! rules as the run/compare page ([`super::html`]): static HTML, inline SVG, no script.

use std::fmt::Write;

use super::charts::{self, DeltaAxes, DeltaBar};
use super::html::{esc, figure, note, page_end, page_start, push_section};
use crate::experiment::bisect::search::Attribution;
use crate::experiment::bisect::{Bisection, Difference, Estimate};
use crate::experiment::sweep::query::{Pivot, mean_ci};

/// The page frame around `sections` (`(id, heading, body)`).
fn frame(title: &str, sections: &[(&str, &str, String)], source: &str) -> String {
    let mut out = page_start(title);
    for (id, name, body) in sections {
        let drawn = *id == "header" || body.contains("<figure") || body.contains("<table");
        push_section(&mut out, id, name, drawn, body);
    }
    page_end(&mut out, crate::experiment::SCHEDLAB_VERSION, source);
    out
}

fn kv_table(rows: &[(&str, String)]) -> String {
    let mut out = String::from("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    out.push_str("</table>\n");
    out
}

fn est(e: &Estimate, dec: usize) -> String {
    if e.ci95.is_finite() {
        format!("{:+.dec$} ± {:.dec$}", e.mean, e.ci95)
    } else {
        format!("{:+.dec$} ± ∞", e.mean)
    }
}

fn machine_name(s: &crate::config::scenario::Scenario) -> String {
    let m = &s.machine;
    m.preset
        .clone()
        .or_else(|| m.sysfs_root.clone())
        .or_else(|| m.hwloc.clone())
        .unwrap_or_else(|| "host".to_string())
}

fn bisect_header(d: &Difference, b: &Bisection, dec: usize) -> String {
    let side = |name: &str, s: &crate::config::scenario::Scenario| {
        format!(
            "{name} (kernel profile {}, model code {})",
            s.kernel.profile, s.kernel.version
        )
    };
    let opt = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.dec$}"));
    let stopped = match &b.halted {
        None => "no (complete)".to_string(),
        Some((crate::experiment::bisect::Halt::Budget, stage)) => {
            format!("the --budget was reached in the {stage} stage; results are partial")
        }
        Some((_, stage)) => format!("by a signal in the {stage} stage"),
    };
    let mut out = kv_table(&[
        ("machine", machine_name(&d.good)),
        ("good", side(&d.good_name, &d.good)),
        ("bad", side(&d.bad_name, &d.bad)),
        ("metric", b.metric.clone()),
        ("good mean", opt(b.good_mean)),
        ("bad mean", opt(b.bad_mean)),
        (
            "total (bad − good)",
            b.total.as_ref().map_or("—".to_string(), |t| est(t, dec)),
        ),
        (
            "runs",
            format!(
                "{} executed of a budget of {}; {} cache hits",
                b.runs_executed, b.limits.budget_runs, b.cache_hits
            ),
        ),
        ("stopped early", stopped),
    ]);
    for n in &b.notes {
        out.push_str(&note(n));
    }
    out
}

fn bisect_table(d: &Difference, b: &Bisection, dec: usize) -> String {
    let Some(a) = &b.attribution else {
        return note(if b.differs || b.halted.is_some() {
            "No attribution (the search stopped before it)."
        } else {
            "Good and bad do not differ significantly: nothing to attribute."
        });
    };
    let base = b.good_mean.unwrap_or(0.0);
    let mut out = attribution_rows(d, a, base, dec);
    out.push_str(&selection_note(d, a));
    out.push_str(&effects_figure(d, a, b));
    out
}

/// The attribution table, one row per change in rank order; separate as the table step of
/// [`bisect_table`].
fn attribution_rows(d: &Difference, a: &Attribution, base: f64, dec: usize) -> String {
    let mut out = String::from(
        "<p>Paired on common seeds, mean ± 95% CI; effect = (alone + removed) / 2; \
         interaction = removed − alone.</p>\n<table>\n<tr><th>rank</th><th>change</th>\
         <th>introduced</th><th>switches</th><th>effect ± CI (% of good)</th>\
         <th>alone from good</th><th>removed from bad</th><th>interaction</th></tr>\n",
    );
    for (rank, r) in a.rows.iter().enumerate() {
        let c = &d.changes[r.change];
        let pct = if base != 0.0 {
            format!(" ({:+.2}%)", 100.0 * r.effect.mean / base)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr class=\"change\"><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"num\">{}{pct}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            rank + 1,
            esc(&c.name),
            esc(&c
                .introduced
                .map_or("override".to_string(), |v| v.to_string())),
            esc(&c.switches.join(", ")),
            esc(&est(&r.effect, dec)),
            esc(&est(&r.alone, dec)),
            esc(&est(&r.removed, dec)),
            esc(&est(&r.interaction, dec)),
        );
    }
    out.push_str("</table>\n");
    out
}

/// The note naming the greedy smallest set of changes that explains the total; separate
/// as one block of [`bisect_table`].
fn selection_note(d: &Difference, a: &Attribution) -> String {
    let sel: Vec<&str> = a
        .selection
        .changes
        .iter()
        .map(|&c| d.changes[c].name.as_str())
        .collect();
    note(&format!(
        "Smallest set explaining the total (greedy): {}{}",
        if sel.is_empty() {
            "none".to_string()
        } else {
            sel.join(" + ")
        },
        if a.selection.explained {
            ""
        } else {
            " (does not explain it)"
        }
    ))
}

/// The chart of each change's effect on the bisected metric with its 95% CI; separate as
/// the chart section of [`bisect_table`].
fn effects_figure(d: &Difference, a: &Attribution, b: &Bisection) -> String {
    let names: Vec<String> = a
        .rows
        .iter()
        .map(|r| d.changes[r.change].name.clone())
        .collect();
    let bars: Vec<DeltaBar> = a
        .rows
        .iter()
        .zip(&names)
        .map(|(r, name)| {
            let half = if r.effect.ci95.is_finite() {
                r.effect.ci95
            } else {
                0.0
            };
            DeltaBar {
                metric: name.clone(),
                variant: 0,
                mean_pct: r.effect.mean,
                lo_pct: r.effect.mean - half,
                hi_pct: r.effect.mean + half,
            }
        })
        .collect();
    let x_desc = format!("effect on {} (bad − good, metric units)", b.metric);
    let axes = DeltaAxes {
        caption: "Effect of each change (mean over seeds, 95% CI)",
        x_desc: &x_desc,
        min_extent: 0.0,
    };
    figure(
        "bisect-effects",
        charts::deltas_on(&axes, &names, std::slice::from_ref(&b.metric), &bars),
        "Per change, ranked: its effect on the metric (mean of switching it alone on good and \
         removing it from bad), with its 95% CI; an interval crossing zero is not significant.",
    )
}

/// The `schedlab bisect --report` page.
pub fn bisect_page(d: &Difference, b: &Bisection) -> String {
    let dec = crate::stats::compare::decimals_for(b.good_mean.unwrap_or(0.0));
    let title = format!(
        "schedlab bisect: {} from {} to {} on {}",
        b.metric,
        d.good_name,
        d.bad_name,
        machine_name(&d.good)
    );
    frame(
        &title,
        &[
            ("header", "Run", bisect_header(d, b, dec)),
            (
                "changes",
                "Changes ranked by effect",
                bisect_table(d, b, dec),
            ),
        ],
        "schedlab bisect",
    )
}

/// The `schedlab sweep table --report` page: the pivot of `metric` by axes `r` × `c`.
pub fn sweep_page(p: &Pivot, metric: &str, r: &str, c: &str, source: &str) -> String {
    let d = p.decimals();
    let mut table = format!(
        "<p>{}: mean ± 95% CI (runs), rows by {}, columns by {}.</p>\n<table>\n<tr><th>{} \\ {}</th>",
        esc(metric),
        esc(r),
        esc(c),
        esc(r),
        esc(c)
    );
    for col in &p.cols {
        let _ = write!(table, "<th>{}</th>", esc(col));
    }
    table.push_str("</tr>\n");
    for (i, row) in p.rows.iter().enumerate() {
        let _ = write!(table, "<tr class=\"pivot-row\"><th>{}</th>", esc(row));
        for j in 0..p.cols.len() {
            let cell = p.cell_text(i, j, d);
            let _ = write!(table, "<td class=\"num\">{}</td>", esc(&cell));
        }
        table.push_str("</tr>\n");
    }
    table.push_str("</table>\n");
    if let Some(note) = p.footnote() {
        let _ = writeln!(table, "<p>{}</p>", esc(&note));
    }
    let lines: Vec<charts::CiLine> = p
        .cols
        .iter()
        .enumerate()
        .map(|(j, col)| {
            let pts = (0..p.rows.len())
                .map(|i| {
                    p.cells.get(&(i, j)).map(|v| {
                        let (mean, ci, _) = mean_ci(v);
                        (mean, ci)
                    })
                })
                .collect();
            (format!("{c}={col}"), pts)
        })
        .collect();
    table.push_str(&figure(
        "sweep-table",
        charts::category_lines(
            &format!("{metric} by {r}, one line per {c}"),
            r,
            metric,
            &p.rows,
            &lines,
        ),
        "Each point: the mean over the cell's runs with its 95% CI (none with one run).",
    ));
    frame(
        &format!("schedlab sweep table: {metric} by {r} × {c}"),
        &[("table", "Table", table)],
        source,
    )
}
