//! `schedlab report`: one self-contained HTML page of pictures from a run's or a comparison's
//! results JSON (ARCHITECTURE.md §3): the machine drawn as its topology, per-CPU utilisation
//! over time, a per-CPU timeline of the tasks that ran with migrations marked by reason,
//! latency percentile plots (variants overlaid), migrations by reason and over time,
//! ping-pong pairs, newly-idle balance passes, NUMA page placement, and for a comparison the
//! LKML table with confidence intervals and a chart of paired deltas.
//!
//! This is the experiment layer: it reads typed results ([`RunResult`], [`Comparison`]), never
//! the engine. Charts are drawn with `plotters`' SVG backend and inlined; the page has no
//! script and loads nothing, so it reads the same in a mail client, offline, or without
//! JavaScript.
//!
//! The time-series sections need the run's [`crate::stats::timeline::Timeline`], which a run
//! records only when asked (`schedlab run --report`, `schedlab compare --report`); given
//! results without one, those sections say how to get it, and the run's trace (ftrace text
//! or Perfetto protobuf, as `run --trace` writes them) rebuilds it
//! ([`render_file_with_trace`]). Latency CDFs come from the results' compact histograms
//! (`runs[].latency_hist`), NUMA pages per node over time from `runs[].numa.pages_series`;
//! results written before those keys existed get the percentile plots and the end-of-run
//! placement only.

pub mod charts;
pub mod html;
pub mod pages;
pub mod palette;

use serde_json::Value;

use crate::error::{InputError, InputResult};
use crate::stats::compare::Comparison;
use crate::stats::report::RunResult;
use crate::topology::Machine;

/// One scenario's results: the baseline or a variant of a comparison, or a plain run.
#[derive(Debug, Clone)]
pub struct VariantResults {
    pub name: String,
    /// What the variant changes against the baseline (empty for a plain run).
    pub changes: String,
    /// The scenario as the results JSON echoes it (`scenario`).
    pub scenario: Value,
    pub runs: Vec<RunResult>,
}

/// What a report is drawn from.
#[derive(Debug, Clone)]
pub struct ReportDoc {
    /// Where the results came from (a file name, or the command that produced them).
    pub source: String,
    pub schedlab_version: String,
    /// One entry for a run; baseline first for a comparison.
    pub variants: Vec<VariantResults>,
    /// Rebuilt from the runs for a comparison (the same arithmetic `compare` printed).
    pub comparison: Option<Comparison>,
}

fn bad(source: &str, key: &str, what: &str) -> InputError {
    InputError::with_key(source, key, what.to_string())
}

fn runs_of(source: &str, key: &str, results: &Value) -> InputResult<Vec<RunResult>> {
    let runs = results
        .get("runs")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            bad(
                source,
                key,
                "missing; accepted: the results of schedlab run/compare --json",
            )
        })?;
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::from_value(r.clone()).map_err(|e| {
                bad(
                    source,
                    &format!("{key}[{i}]"),
                    &format!("not a run's results ({e}); accepted: schedlab run --json output"),
                )
            })
        })
        .collect()
}

impl ReportDoc {
    /// Read the results of `schedlab run --json` (`runs`) or `schedlab compare --json`
    /// (`variants`). Errors name `source` and the key.
    pub fn from_json(source: &str, doc: &Value) -> InputResult<ReportDoc> {
        let version = doc
            .get("schedlab_version")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let mut variants = Vec::new();
        let compare = doc.get("variants").is_some();
        if let Some(vs) = doc.get("variants") {
            let vs = vs.as_array().ok_or_else(|| {
                bad(
                    source,
                    "variants",
                    "not an array; accepted: schedlab compare --json output",
                )
            })?;
            for (i, v) in vs.iter().enumerate() {
                let key = format!("variants[{i}]");
                let results = v
                    .get("results")
                    .ok_or_else(|| bad(source, &format!("{key}.results"), "missing"))?;
                variants.push(VariantResults {
                    name: v
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string(),
                    changes: v
                        .get("changes")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    scenario: results.get("scenario").cloned().unwrap_or(Value::Null),
                    runs: runs_of(source, &format!("{key}.results.runs"), results)?,
                });
            }
        } else if doc.get("runs").is_some() {
            variants.push(VariantResults {
                name: "run".to_string(),
                changes: String::new(),
                scenario: doc.get("scenario").cloned().unwrap_or(Value::Null),
                runs: runs_of(source, "runs", doc)?,
            });
        } else {
            return Err(InputError::new(
                source,
                "neither `runs` nor `variants` at the top level; accepted: the JSON written by \
                 `schedlab run --json` or `schedlab compare --json`",
            ));
        }
        if variants.iter().all(|v| v.runs.is_empty()) {
            return Err(bad(
                source,
                "runs",
                "no finished run in these results; nothing to draw",
            ));
        }
        let comparison = compare.then(|| comparison_of(&variants));
        Ok(ReportDoc {
            source: source.to_string(),
            schedlab_version: version,
            variants,
            comparison,
        })
    }

    /// Whether this is a comparison of variants.
    pub fn is_compare(&self) -> bool {
        self.comparison.is_some()
    }
}

/// The comparison `schedlab compare` printed, rebuilt from the variants' runs (runs paired by
/// position, i.e. by seed; a variant with fewer runs is cut to the common length).
fn comparison_of(variants: &[VariantResults]) -> Comparison {
    let n = variants.iter().map(|v| v.runs.len()).min().unwrap_or(0);
    let names: Vec<String> = variants.iter().map(|v| v.name.clone()).collect();
    let seeds: Vec<u64> = variants[0].runs[..n].iter().map(|r| r.seed).collect();
    let runs: Vec<Vec<&RunResult>> = variants
        .iter()
        .map(|v| v.runs[..n].iter().collect())
        .collect();
    let perfs: Vec<Vec<_>> = variants
        .iter()
        .map(|v| v.runs[..n].iter().map(|r| r.perf_stat).collect())
        .collect();
    let kind = variants[0]
        .runs
        .first()
        .and_then(|r| r.workload.kind())
        .unwrap_or("workload")
        .to_string();
    let mut c = Comparison::build(&names, &seeds, &runs, &perfs, &kind);
    // As `compare` marks them: runs whose benchmark did not finish.
    let finished = |w: &crate::stats::report::WorkloadMetrics| {
        w.0.get("complete").and_then(serde_json::Value::as_bool) != Some(false)
    };
    let cut: Vec<usize> = (runs.iter())
        .map(|rs| rs.iter().filter(|r| !finished(&r.workload)).count())
        .collect();
    c.mark_unfinished(&cut);
    c
}

/// The machine of a results' scenario, resolved again from what the scenario names (a preset,
/// a topology file, a snapshot, `host`) with its offline CPUs; `None` when it cannot be (a
/// file that moved, a table the echo does not carry): the page then lays CPUs out flat.
pub fn machine_of(scenario: &Value) -> Option<Machine> {
    let m = scenario.get("machine")?;
    let s = |k: &str| m.get(k).and_then(Value::as_str);
    let mut machine = if let Some(table) = m.get("topology").filter(|t| !t.is_null()) {
        let table: toml::Table = serde_json::from_value(table.clone()).ok()?;
        crate::topology::file::from_table(&table, "results", "machine.topology", "custom").ok()?
    } else {
        crate::topology::resolve_machine_with(
            s("preset")
                .or(Some("host"))
                .filter(|_| s("sysfs_root").is_none() && s("hwloc").is_none()),
            s("sysfs_root").map(std::path::Path::new),
            s("hwloc").map(std::path::Path::new),
        )
        .ok()?
    };
    if let Some(list) = s("offline") {
        machine.set_offline(list).ok()?;
    }
    Some(machine)
}

/// Render the page for `doc`.
pub fn render(doc: &ReportDoc) -> String {
    let machine = doc.variants.first().and_then(|v| machine_of(&v.scenario));
    html::page(doc, machine.as_ref())
}

/// Read a results file and render its page. Errors name the file.
pub fn render_file(path: &std::path::Path) -> InputResult<String> {
    render_file_with_trace(path, None)
}

/// [`render_file`], with the first run's time series rebuilt from its trace (`schedlab run
/// --trace X.txt` or `X.pftrace`) when the results do not carry one.
pub fn render_file_with_trace(
    path: &std::path::Path,
    trace: Option<&std::path::Path>,
) -> InputResult<String> {
    let label = path.display().to_string();
    let text =
        crate::input::limits::read_text_limited(path, crate::input::limits::MAX_RESULTS_FILE_BYTES)
            .map_err(|m| InputError::new(&label, m))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        InputError::new(
            &label,
            format!("not JSON ({e}); accepted: the JSON written by schedlab run/compare --json"),
        )
    })?;
    let mut doc = ReportDoc::from_json(&label, &doc)?;
    if let Some(trace) = trace {
        attach_trace(&mut doc, trace)?;
    }
    Ok(render(&doc))
}

/// Give the first run of the first variant the time series of its trace (ftrace text or
/// Perfetto protobuf, by extension as `run --trace` chose the format), unless it has one.
fn attach_trace(doc: &mut ReportDoc, trace: &std::path::Path) -> InputResult<()> {
    use crate::stats::trace::TraceFormat;
    let label = trace.display().to_string();
    let err = |msg: String| InputError::with_key("--trace", crate::output::echo(&label), msg);
    let Some(format) = TraceFormat::from_path(trace) else {
        return Err(err(format!(
            "unknown trace format; accepted: {} (as written by `schedlab run --trace FILE`)",
            TraceFormat::ACCEPTED
        )));
    };
    let run = &mut doc.variants[0].runs[0];
    if run.timeline.is_some() {
        return Ok(());
    }
    let nr_cpus = run.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0);
    let tl = match format {
        TraceFormat::Ftrace => {
            if !ends_with_marker(trace).map_err(&err)? {
                return Err(err(format!(
                    "the trace does not end with schedlab's last line '{}': the file was cut \
                     short, or is not a whole `schedlab run --trace` file",
                    crate::stats::trace::ftrace::END_MARKER.trim_end()
                )));
            }
            let file = std::fs::File::open(trace).map_err(|e| err(format!("cannot read: {e}")))?;
            // Bounded lines: a binary file or `/dev/zero` is an error, not a line filling memory.
            let lines = crate::input::limits::BoundedLines::new(
                std::io::BufReader::new(file),
                crate::input::limits::MAX_TRACE_LINE_BYTES,
            );
            crate::stats::timeline::from_ftrace(lines, nr_cpus)
        }
        TraceFormat::Perfetto => {
            let bytes = read_bytes_limited(trace, crate::input::limits::MAX_RESULTS_FILE_BYTES)
                .map_err(err)?;
            crate::stats::trace::perfetto_reader::timeline_from_perfetto(&bytes, nr_cpus)
        }
    }
    .map_err(|e| {
        err(format!(
            "{e}; accepted: the trace `schedlab run --trace FILE` wrote for these results ({})",
            TraceFormat::ACCEPTED
        ))
    })?;
    run.timeline = Some(tl);
    Ok(())
}

/// Whether the text trace at `path` ends with [`crate::stats::trace::ftrace::END_MARKER`].
fn ends_with_marker(path: &std::path::Path) -> Result<bool, String> {
    use std::io::{Read, Seek, SeekFrom};
    let marker = crate::stats::trace::ftrace::END_MARKER.as_bytes();
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        // A device or FIFO has no end to look at: the bounded line reader judges it.
        return Ok(true);
    }
    let len = meta.len();
    if len < marker.len() as u64 {
        return Ok(false);
    }
    let mut tail = vec![0u8; marker.len()];
    file.seek(SeekFrom::End(-(marker.len() as i64)))
        .and_then(|_| file.read_exact(&mut tail))
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(tail == marker)
}

/// Reads a whole binary file, refusing one over `limit` bytes (so `/dev/zero` is an error,
/// not a read that fills memory).
fn read_bytes_limited(path: &std::path::Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than the {limit}-byte limit for a trace"));
    }
    Ok(bytes)
}
