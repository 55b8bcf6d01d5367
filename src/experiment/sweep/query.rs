//! Reading the sweep database: selections (`axis=value,axis=value`), the pivot table of
//! `sweep table` (mean and 95% confidence interval of one metric per cell), the two-selection
//! comparison of `compare --db`, and CSV / JSON-lines export for pandas.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;

use crate::error::{InputError, InputResult};
use crate::stats::summary::Summary;

/// Mean, half-width of the 95% confidence interval of the mean (0 for one value) and n.
pub fn mean_ci(values: &[f64]) -> (f64, f64, usize) {
    let s = Summary::of(values);
    let ci = if s.n > 1 {
        crate::stats::summary::t975(s.n - 1) * s.stdev / (s.n as f64).sqrt()
    } else {
        0.0
    };
    (s.mean, ci, s.n)
}

/// A selection: `axis=value` pairs that must all hold.
pub type Selection = Vec<(String, String)>;

/// Parse `axis=value,axis=value` (origin: the option for messages).
pub fn parse_selection(s: &str, origin: &str) -> InputResult<Selection> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(InputError::with_key(
                origin,
                crate::input::limits::clip(p).into_owned(),
                "accepted: AXIS=VALUE[,AXIS=VALUE...] (e.g. profile=v6.15,machine=skl-2s)",
            )),
        })
        .collect()
}

/// The axis names in the database.
pub fn axis_names(conn: &Connection) -> InputResult<Vec<String>> {
    strings(conn, "SELECT DISTINCT axis FROM axes ORDER BY axis", &[])
}

fn strings(conn: &Connection, sql: &str, args: &[&str]) -> InputResult<Vec<String>> {
    let mut stmt = conn.prepare(sql).map_err(sql_err)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(0))
        .map_err(sql_err)?;
    rows.collect::<Result<_, _>>().map_err(sql_err)
}

fn sql_err(e: rusqlite::Error) -> InputError {
    InputError::new("database", e.to_string())
}

/// Check an axis name against the database (did-you-mean on a miss).
pub fn check_axis(conn: &Connection, name: &str, origin: &str) -> InputResult<()> {
    let names = axis_names(conn)?;
    if names.iter().any(|n| n == name) {
        return Ok(());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    Err(InputError::with_key(
        origin,
        crate::input::limits::clip(name).into_owned(),
        format!(
            "no such axis{}; accepted: {}",
            crate::input::did_you_mean(name, &refs),
            refs.join(", ")
        ),
    ))
}

/// Check a metric name against the database (did-you-mean on a miss).
pub fn check_metric(conn: &Connection, name: &str, origin: &str) -> InputResult<()> {
    let names = strings(
        conn,
        "SELECT DISTINCT metric FROM metrics ORDER BY metric",
        &[],
    )?;
    if names.iter().any(|n| n == name) {
        return Ok(());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let shown: Vec<&str> = refs
        .iter()
        .copied()
        .filter(|m| m.starts_with("perf_stat.") || m.starts_with("workload."))
        .collect();
    Err(InputError::with_key(
        origin,
        crate::input::limits::clip(name).into_owned(),
        format!(
            "no such metric{}; accepted: a name from the metrics table, e.g. {}",
            crate::input::did_you_mean(name, &refs),
            shown.join(", ")
        ),
    ))
}

/// One run's value of `metric` with all its axis values, in run index order.
pub struct Row {
    pub axes: BTreeMap<String, String>,
    pub value: f64,
    /// Whether the run's benchmark finished (`runs.workload_complete`): a cut run's value is
    /// not the benchmark's.
    pub complete: bool,
}

/// The runs that have `metric` and match `sel`, in index order (a database merged before
/// `runs.workload_complete` existed counts every run as finished).
pub fn rows(conn: &Connection, metric: &str, sel: &Selection) -> InputResult<Vec<Row>> {
    let recorded = (super::db::columns(conn, "runs").map_err(sql_err)?)
        .iter()
        .any(|c| c == "workload_complete");
    let complete = if recorded { "r.workload_complete" } else { "1" };
    let mut stmt = conn
        .prepare(&format!(
            "SELECT r.id, m.value, {complete} FROM runs r JOIN metrics m \
             ON m.run_id = r.id WHERE m.metric = ?1 ORDER BY r.idx, r.id"
        ))
        .map_err(sql_err)?;
    let found: Vec<(String, f64, bool)> = stmt
        .query_map([metric], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql_err)?
        .collect::<Result<_, _>>()
        .map_err(sql_err)?;
    let mut axes_of = conn
        .prepare("SELECT axis, value FROM axes WHERE run_id = ?1")
        .map_err(sql_err)?;
    let mut out = Vec::new();
    for (id, value, complete) in found {
        let axes: BTreeMap<String, String> = axes_of
            .query_map([&id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        if sel.iter().all(|(k, v)| axes.get(k) == Some(v)) {
            out.push(Row {
                axes,
                value,
                complete,
            });
        }
    }
    Ok(out)
}

/// A pivot table: row labels, column labels and cells of values (in first-seen order, i.e.
/// the grid's order).
#[derive(Debug, Default)]
pub struct Pivot {
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// The values each cell's mean is over: its finished runs' (and its cut runs' too with
    /// [`Pivot::with_cut`]).
    pub cells: BTreeMap<(usize, usize), Vec<f64>>,
    /// How many runs of each cell did not finish their benchmark (the cell is marked `*`).
    pub cut: BTreeMap<(usize, usize), usize>,
    /// Cut runs are in the means (`--allow-incomplete`).
    pub with_cut: bool,
}

impl Pivot {
    /// One number of decimals for the whole table, enough for its smallest mean.
    pub fn decimals(&self) -> usize {
        let smallest = self
            .cells
            .values()
            .map(|v| mean_ci(v).0.abs())
            .filter(|m| *m > 0.0)
            .fold(f64::INFINITY, f64::min);
        crate::stats::compare::decimals_for(if smallest.is_finite() { smallest } else { 0.0 })
    }

    /// Cell `(i, j)` as `mean ± ci95 (n)` with `d` decimals, `-` when it has no run; `*`
    /// after a cell with cut runs, `not finished*` when they are all it has (and are left out).
    pub fn cell_text(&self, i: usize, j: usize, d: usize) -> String {
        let mark = if self.cut.contains_key(&(i, j)) {
            "*"
        } else {
            ""
        };
        match self.cells.get(&(i, j)) {
            Some(v) => {
                let (mean, ci, n) = mean_ci(v);
                format!("{mean:.d$} ± {ci:.d$} ({n}){mark}")
            }
            None if !mark.is_empty() => "not finished*".to_string(),
            None => "-".to_string(),
        }
    }

    /// The note under a table with cut runs (`None` without): how many, and whether the
    /// means include them.
    pub fn footnote(&self) -> Option<String> {
        let cut: usize = self.cut.values().sum();
        if cut == 0 {
            return None;
        }
        let shown: usize = self.cells.values().map(Vec::len).sum();
        let total = if self.with_cut { shown } else { shown + cut };
        Some(format!(
            "* the benchmark did not finish in {cut} of {total} runs (cut short by \
             run.duration_s or the time cap): {}",
            if self.with_cut {
                "included (--allow-incomplete); their values are not the benchmark's"
            } else {
                "left out of the means (--allow-incomplete includes them)"
            }
        ))
    }
}

/// Group `rows` by the values of axes `r` and `c`; runs whose benchmark did not finish are
/// counted in [`Pivot::cut`] and left out of the cells unless `with_cut`.
pub fn pivot(rows: &[Row], r: &str, c: &str, with_cut: bool) -> Pivot {
    let mut p = Pivot {
        with_cut,
        ..Pivot::default()
    };
    let pos = |list: &mut Vec<String>, v: &str| match list.iter().position(|x| x == v) {
        Some(i) => i,
        None => {
            list.push(v.to_string());
            list.len() - 1
        }
    };
    for row in rows {
        let label = |axis: &str| match row.axes.get(axis).map(String::as_str) {
            None => "-",
            Some("") => "(none)",
            Some(v) => v,
        };
        let (rv, cv) = (label(r), label(c));
        let i = pos(&mut p.rows, rv);
        let j = pos(&mut p.cols, cv);
        if !row.complete {
            *p.cut.entry((i, j)).or_default() += 1;
        }
        if row.complete || with_cut {
            p.cells.entry((i, j)).or_default().push(row.value);
        }
    }
    p
}

/// The pivot as text: each cell `mean ± ci95 (n)`.
pub fn render_pivot(p: &Pivot, metric: &str, r: &str, c: &str) -> String {
    let d = p.decimals();
    let cell = |i: usize, j: usize| p.cell_text(i, j, d);
    let head = format!("{r} \\ {c}");
    let w0 = p
        .rows
        .iter()
        .map(String::len)
        .chain([head.len()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..p.cols.len())
        .map(|j| {
            (0..p.rows.len())
                .map(|i| cell(i, j).chars().count())
                .chain([p.cols[j].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("{metric}: mean ± 95% CI (runs)\n{head:<w0$}");
    for (j, name) in p.cols.iter().enumerate() {
        out.push_str(&format!("  {name:>w$}", w = widths[j]));
    }
    out.push('\n');
    for (i, name) in p.rows.iter().enumerate() {
        out.push_str(&format!("{name:<w0$}"));
        for (j, w) in widths.iter().enumerate() {
            let text = cell(i, j);
            let pad = w.saturating_sub(text.chars().count());
            out.push_str(&format!("  {}{text}", " ".repeat(pad)));
        }
        out.push('\n');
    }
    if let Some(note) = p.footnote() {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// `compare --db`: selections A and B of `metric`, paired on the other axes.
pub fn compare(rows_a: &[Row], rows_b: &[Row], a: &Selection, b: &Selection) -> String {
    let named: Vec<&str> = a.iter().chain(b).map(|(k, _)| k.as_str()).collect();
    let key = |r: &Row| -> String {
        r.axes
            .iter()
            .filter(|(k, _)| !named.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let b_by_key: BTreeMap<String, f64> = rows_b.iter().map(|r| (key(r), r.value)).collect();
    let deltas: Vec<f64> = rows_a
        .iter()
        .filter_map(|r| b_by_key.get(&key(r)).map(|vb| vb - r.value))
        .collect();
    let va: Vec<f64> = rows_a.iter().map(|r| r.value).collect();
    let vb: Vec<f64> = rows_b.iter().map(|r| r.value).collect();
    let (ma, ca, na) = mean_ci(&va);
    let (mb, cb, nb) = mean_ci(&vb);
    let d = crate::stats::compare::decimals_for(ma);
    let mut out =
        format!("A: {ma:.d$} ± {ca:.d$} ({na} runs)\nB: {mb:.d$} ± {cb:.d$} ({nb} runs)\n");
    if ma != 0.0 {
        out.push_str(&format!("B vs A: {:+.2}%\n", 100.0 * (mb - ma) / ma.abs()));
    }
    if deltas.is_empty() {
        out.push_str("paired: no run of B matches a run of A on the other axes\n");
    } else {
        let (md, cd, nd) = mean_ci(&deltas);
        out.push_str(&format!(
            "paired delta B - A: {md:.d$} ± {cd:.d$} (95% CI, {nd} pairs matched on the other \
             axes){}\n",
            if md.abs() > cd && nd > 1 {
                "; significant"
            } else {
                ""
            }
        ));
    }
    out
}

/// Write every table as `DIR/TABLE.csv` (header row; RFC 4180 quoting).
pub fn export_csv(conn: &Connection, dir: &Path) -> InputResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| InputError::with_key("--csv", dir.display().to_string(), e.to_string()))?;
    for (table, order) in [
        ("runs", "idx, id"),
        ("axes", "run_id, axis"),
        ("metrics", "run_id, metric"),
        ("migrations", "run_id, reason"),
        ("schedstat", "run_id, scope, name, counter"),
    ] {
        let cols = super::db::columns(conn, table).map_err(sql_err)?;
        let mut text = csv_line(&cols);
        for row in super::db::select_rows(conn, table, &cols, order).map_err(sql_err)? {
            text.push_str(&csv_line(&row));
        }
        let path = dir.join(format!("{table}.csv"));
        crate::output::AtomicFile::create("--csv", &path)?.write_commit(text.as_bytes())?;
    }
    Ok(())
}

fn csv_line(fields: &[String]) -> String {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect();
    format!("{}\n", quoted.join(","))
}

/// One JSON object per run: its `runs` columns, `axes` and `metrics` as objects.
pub fn export_jsonl(conn: &Connection, path: &Path) -> InputResult<()> {
    let cols = super::db::columns(conn, "runs").map_err(sql_err)?;
    let mut text = String::new();
    let mut axes = conn
        .prepare("SELECT axis, value FROM axes WHERE run_id = ?1")
        .map_err(sql_err)?;
    let mut metrics = conn
        .prepare("SELECT metric, value FROM metrics WHERE run_id = ?1 ORDER BY metric")
        .map_err(sql_err)?;
    for row in super::db::select_rows(conn, "runs", &cols, "idx, id").map_err(sql_err)? {
        let mut obj = serde_json::Map::new();
        for (c, v) in cols.iter().zip(&row) {
            obj.insert(c.clone(), typed(c, v));
        }
        let a: serde_json::Map<String, serde_json::Value> = axes
            .query_map([&row[0]], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?.into()))
            })
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        let m: serde_json::Map<String, serde_json::Value> = metrics
            .query_map([&row[0]], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?.into()))
            })
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        obj.insert("axes".into(), a.into());
        obj.insert("metrics".into(), m.into());
        text.push_str(&serde_json::Value::Object(obj).to_string());
        text.push('\n');
    }
    crate::output::AtomicFile::create("--jsonl", path)?.write_commit(text.as_bytes())
}

/// A `runs` cell as JSON: numbers for the numeric columns, null for NULL, else a string.
fn typed(col: &str, v: &str) -> serde_json::Value {
    const NUMERIC: &[&str] = &[
        "idx",
        "seed",
        "sim_time_ns",
        "events",
        "all_tasks_exited",
        "invariant_violations",
        "wall_time_s",
        "sim_s_per_wall_s",
        "workload_complete",
    ];
    if !NUMERIC.contains(&col) {
        return serde_json::Value::String(v.to_string());
    }
    if let Ok(n) = v.parse::<i64>() {
        return n.into();
    }
    v.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}
