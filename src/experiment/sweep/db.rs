//! The sweep database (SQLite through rusqlite's bundled library): `sweep merge` loads every
//! finished result of a sweep directory into it; `sweep table` and `compare --db` read it.
//! The schema is [`SCHEMA`] (docs/sweep.md explains it with an SQL query and a pandas
//! snippet). Merging is idempotent: a run's rows are replaced by its id, in one transaction,
//! so merging twice (or merging a rerun) gives the same database.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::Value;

use super::{Manifest, result_path};
use crate::error::{InputError, InputResult};
use crate::stats::report::{RunResult, Schedstat};

/// The tables. `runs`: one row per run with its configuration columns (`workload_complete`:
/// 0 when the benchmark did not finish, the run cut short); `axes`: the sweep's
/// axis values of each run (what `sweep table` pivots on); `metrics`: every numeric metric
/// (perf-stat, benchmark metrics, latency percentiles, and again migrations and schedstat);
/// `migrations`: by reason; `schedstat`: the load balancer's counters by scope.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  idx INTEGER NOT NULL,
  seed NOT NULL,
  machine TEXT,
  profile TEXT,
  policy TEXT,
  features TEXT,
  sysctls TEXT,
  workload TEXT,
  schedlab_version TEXT NOT NULL,
  sim_time_ns INTEGER NOT NULL,
  events INTEGER NOT NULL,
  all_tasks_exited INTEGER NOT NULL,
  invariant_violations INTEGER NOT NULL,
  wall_time_s REAL,
  sim_s_per_wall_s REAL,
  workload_complete INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS axes (
  run_id TEXT NOT NULL, axis TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_id, axis)
);
CREATE TABLE IF NOT EXISTS metrics (
  run_id TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL,
  PRIMARY KEY (run_id, metric)
);
CREATE TABLE IF NOT EXISTS migrations (
  run_id TEXT NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY (run_id, reason)
);
CREATE TABLE IF NOT EXISTS schedstat (
  run_id TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, counter TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (run_id, scope, name, counter)
);
";

/// The host-dependent columns (left out of [`dump`] with `without_wall_clock`).
pub const WALL_CLOCK_COLUMNS: &[&str] = &["wall_time_s", "sim_s_per_wall_s"];

fn db_err(path: &Path, e: impl std::fmt::Display) -> InputError {
    InputError::new(path.display().to_string(), format!("database: {e}"))
}

/// Open (creating) a database with the schema; a database merged before `runs` had its
/// `workload_complete` column gets it (1: merging again rewrites every run's row).
pub fn open(path: &Path) -> InputResult<Connection> {
    let conn = Connection::open(path).map_err(|e| db_err(path, e))?;
    conn.execute_batch(SCHEMA).map_err(|e| db_err(path, e))?;
    let cols = columns(&conn, "runs").map_err(|e| db_err(path, e))?;
    if !cols.iter().any(|c| c == "workload_complete") {
        conn.execute_batch(
            "ALTER TABLE runs ADD COLUMN workload_complete INTEGER NOT NULL DEFAULT 1",
        )
        .map_err(|e| db_err(path, e))?;
    }
    Ok(conn)
}

/// Open an existing database read-only.
pub fn open_existing(path: &Path) -> InputResult<Connection> {
    if !path.is_file() {
        return Err(InputError::new(
            path.display().to_string(),
            "no such database; accepted: a file made by `schedlab sweep merge DIR -o FILE`",
        ));
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| db_err(path, e))?;
    conn.query_row("SELECT count(*) FROM runs", [], |_| Ok(()))
        .map_err(|e| db_err(path, format!("not a sweep database ({e})")))?;
    Ok(conn)
}

/// What `sweep merge` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MergeReport {
    pub merged: usize,
    /// Of `merged`, runs whose benchmark did not finish (`workload_complete = 0`).
    pub cut: usize,
    /// Indices of planned runs without a result.
    pub missing: Vec<usize>,
    /// Indices of planned runs whose result file is damaged (not merged; `sweep run` runs
    /// them again).
    pub damaged: Vec<usize>,
}

/// Merge every finished run of sweep `dir` into the database at `out`.
pub fn merge(dir: &Path, m: &Manifest, out: &Path) -> InputResult<MergeReport> {
    let mut conn = open(out)?;
    let tx = conn.transaction().map_err(|e| db_err(out, e))?;
    let mut report = MergeReport::default();
    for run in &m.runs {
        match super::result_state(dir, &run.id) {
            super::ResultState::Missing => {
                report.missing.push(run.index);
                continue;
            }
            super::ResultState::Damaged => {
                report.damaged.push(run.index);
                continue;
            }
            super::ResultState::Cut => report.cut += 1,
            super::ResultState::Whole => {}
        }
        let path = result_path(dir, &run.id);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| InputError::new(path.display().to_string(), e.to_string()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            InputError::new(
                path.display().to_string(),
                format!("not a sweep result: {e}"),
            )
        })?;
        insert_run(&tx, m, run, &doc).map_err(|e| db_err(out, e))?;
        report.merged += 1;
    }
    tx.commit().map_err(|e| db_err(out, e))?;
    Ok(report)
}

/// Replace the rows of one run.
fn insert_run(
    tx: &rusqlite::Transaction,
    m: &Manifest,
    run: &super::PlannedRun,
    doc: &Value,
) -> rusqlite::Result<()> {
    let id = run.id.as_str();
    for table in ["runs", "axes", "metrics", "migrations", "schedstat"] {
        let col = if table == "runs" { "id" } else { "run_id" };
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE {col} = ?1"))?
            .execute([id])?;
    }
    let r: RunResult = serde_json::from_value(doc["run"].clone()).unwrap_or_default();
    let complete = super::benchmark_finished(doc["workload_complete"].as_bool(), &r);
    let scn = m.scenario(run).ok();
    let conf =
        |f: &dyn Fn(&crate::config::scenario::Scenario) -> Option<String>| scn.as_ref().and_then(f);
    tx.execute(
        "INSERT INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, \
         ?15, ?16, ?17)",
        params![
            id,
            run.index as i64,
            seed_value(run.seed),
            conf(&|s| s.machine.preset.clone().or(Some("file".into()))),
            conf(&|s| Some(s.kernel.profile.clone())),
            conf(&|s| Some(s.kernel.policy.name().to_string())),
            conf(&|s| Some(features_text(s))),
            conf(&|s| Some(sysctls_text(s))),
            conf(&|s| s.workload.command.clone().or(s.workload.kind.clone())),
            doc["schedlab_version"].as_str().unwrap_or_default(),
            r.sim_time_ns as i64,
            r.events as i64,
            r.all_tasks_exited,
            r.invariant_violations.len() as i64,
            r.wall_time_s,
            r.sim_s_per_wall_s,
            complete,
        ],
    )?;
    for (axis, value) in &run.axes {
        tx.prepare_cached("INSERT INTO axes VALUES (?1, ?2, ?3)")?
            .execute(params![id, axis, value])?;
    }
    let mut seen = BTreeMap::new();
    for (k, v) in r.metrics() {
        seen.insert(k, v);
    }
    for (k, v) in &seen {
        tx.prepare_cached("INSERT INTO metrics VALUES (?1, ?2, ?3)")?
            .execute(params![id, k, v])?;
    }
    for (reason, n) in &r.migrations.by_reason {
        tx.prepare_cached("INSERT INTO migrations VALUES (?1, ?2, ?3)")?
            .execute(params![id, reason, *n as i64])?;
    }
    if let Some(s) = &r.schedstat {
        insert_schedstat(tx, id, s)?;
    }
    Ok(())
}

/// The `schedstat` rows of one run: its totals, then its counters by level and by idle type.
fn insert_schedstat(tx: &rusqlite::Transaction, id: &str, s: &Schedstat) -> rusqlite::Result<()> {
    let mut rows: Vec<(&str, &str, &str, u64)> = Vec::new();
    rows.extend(s.totals.iter().map(|(c, &v)| ("totals", "", c.as_str(), v)));
    for (scope, maps) in [("level", &s.by_level), ("idle_type", &s.by_idle_type)] {
        for (name, counters) in maps {
            rows.extend(
                counters
                    .iter()
                    .map(|(c, &v)| (scope, name.as_str(), c.as_str(), v)),
            );
        }
    }
    for (scope, name, counter, v) in rows {
        tx.prepare_cached("INSERT INTO schedstat VALUES (?1, ?2, ?3, ?4, ?5)")?
            .execute(params![id, scope, name, counter, v as i64])?;
    }
    Ok(())
}

fn features_text(s: &crate::config::scenario::Scenario) -> String {
    s.kernel
        .feature_overrides
        .iter()
        .map(|(f, &on)| if on { f.clone() } else { format!("NO_{f}") })
        .collect::<Vec<_>>()
        .join(",")
}

fn sysctls_text(s: &crate::config::scenario::Scenario) -> String {
    s.kernel
        .sysctl_overrides
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Every table's rows as text, ordered by primary key: equal dumps mean equal databases.
/// With `without_wall_clock`, [`WALL_CLOCK_COLUMNS`] are left out.
pub fn dump(conn: &Connection, without_wall_clock: bool) -> rusqlite::Result<String> {
    let mut out = String::new();
    for (table, order) in [
        ("runs", "id"),
        ("axes", "run_id, axis"),
        ("metrics", "run_id, metric"),
        ("migrations", "run_id, reason"),
        ("schedstat", "run_id, scope, name, counter"),
    ] {
        let cols = columns(conn, table)?
            .into_iter()
            .filter(|c| !(without_wall_clock && WALL_CLOCK_COLUMNS.contains(&c.as_str())))
            .collect::<Vec<_>>();
        out.push_str(&format!("## {table}: {}\n", cols.join(", ")));
        for row in select_rows(conn, table, &cols, order)? {
            out.push_str(&row.join("\t"));
            out.push('\n');
        }
    }
    Ok(out)
}

/// The column names of a table.
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let stmt = conn.prepare(&format!("SELECT * FROM {table} LIMIT 0"))?;
    Ok(stmt.column_names().map(|s| s.to_string()).collect())
}

/// Rows of `cols` of `table` as text (numbers as SQLite prints them; NULL as empty).
pub fn select_rows(
    conn: &Connection,
    table: &str,
    cols: &[String],
    order: &str,
) -> rusqlite::Result<Vec<Vec<String>>> {
    let sql = format!("SELECT {} FROM {table} ORDER BY {order}", cols.join(", "));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], |row| {
        (0..cols.len())
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => String::new(),
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    rusqlite::types::ValueRef::Real(x) => format!("{x:?}"),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    rusqlite::types::ValueRef::Blob(_) => "<blob>".into(),
                })
            })
            .collect::<rusqlite::Result<Vec<String>>>()
    })?;
    rows.collect()
}

/// A run's seed as stored: an INTEGER up to 2^63-1 (SQLite integers are 64-bit signed), its
/// decimal TEXT above, so that every stored seed is the one `--seed` replays (the column has
/// no declared type, so SQLite keeps each value as given, and a large seed is not turned
/// into a REAL).
pub fn seed_value(seed: u64) -> rusqlite::types::Value {
    match i64::try_from(seed) {
        Ok(s) => rusqlite::types::Value::Integer(s),
        Err(_) => rusqlite::types::Value::Text(seed.to_string()),
    }
}
