//! `schedlab host-measure` and `schedlab calibrate`: this machine's real benchmarks into a
//! host table, and the `host` machine's inputs fitted to its microbenchmarks.

use std::path::PathBuf;

use crate::error::InputError;
use crate::experiment::RunContext;
use crate::experiment::host::{calibrate, calibration, measure, rows, table};
use crate::output;

/// Arguments of `schedlab host-measure`.
#[derive(clap::Args, Debug)]
pub struct HostMeasureArgs {
    /// Real runs per row.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,
    /// Only this row (repeatable); default: every row.
    #[arg(long = "row", value_name = "ID")]
    pub row_ids: Vec<String>,
    /// Write the table here (default: validation/host/<cpu-model>-<N>cpu.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Do not start runs in their own autogroup at nice -20 (needs root otherwise).
    #[arg(long)]
    pub no_isolate: bool,
    /// The schbench binary (default: `schbench` on PATH).
    #[arg(long, value_name = "PATH")]
    pub schbench: Option<PathBuf>,
}

/// Arguments of `schedlab calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Fit to this host table's measurements instead of measuring the calibration rows now.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Real runs per calibration row when measuring now.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub runs: usize,
    /// Write the calibration here (default: $SCHEDLAB_HOST_CALIBRATION, else
    /// ~/.config/schedlab/host-calibration.toml, which `-m host` then applies).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Do not start runs in their own autogroup at nice -20.
    #[arg(long)]
    pub no_isolate: bool,
}

fn check_runs(runs: usize) -> Result<(), InputError> {
    if (1..=measure::MAX_RUNS_PER_ROW).contains(&runs) {
        return Ok(());
    }
    Err(InputError::with_key(
        "command line",
        "--runs",
        format!(
            "{runs} is out of range; accepted: 1 to {}",
            measure::MAX_RUNS_PER_ROW
        ),
    ))
}

fn selected_rows(ids: &[String]) -> Result<Vec<&'static rows::Row>, InputError> {
    if ids.is_empty() {
        return Ok(rows::ROWS.iter().collect());
    }
    ids.iter()
        .map(|id| {
            rows::row(id).ok_or_else(|| {
                InputError::with_key(
                    "command line",
                    "--row",
                    format!(
                        "no row '{}'; accepted: {}",
                        crate::input::limits::clip(id),
                        rows::ids()
                    ),
                )
            })
        })
        .collect()
}

fn options(runs: usize, no_isolate: bool, schbench: Option<PathBuf>) -> measure::Options {
    measure::Options {
        runs,
        isolate: !no_isolate,
        schbench,
    }
}

/// `schedlab host-measure`.
pub fn host_measure(args: &HostMeasureArgs) -> anyhow::Result<i32> {
    check_runs(args.runs)?;
    let rows = selected_rows(&args.row_ids)?;
    let out = args.out.clone().unwrap_or_else(|| {
        measure::default_table_path(std::path::Path::new("."), &table::HostId::current())
    });
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError::with_key("--out", out.display().to_string(), e.to_string()))?;
    }
    let opts = options(args.runs, args.no_isolate, args.schbench.clone());
    let t = measure::measure(&rows, &opts, &mut |line| eprintln!("schedlab: {line}"));
    let text = serde_json::to_string_pretty(&t)? + "\n";
    output::write_atomic("--out", &out, text.as_bytes())?;
    let skipped = t.rows.iter().filter(|r| r.runs.is_empty()).count();
    eprintln!(
        "schedlab: host table {} ({} rows measured, {skipped} not)",
        out.display(),
        t.rows.len() - skipped
    );
    Ok(if skipped > 0 { 3 } else { 0 })
}

/// `schedlab calibrate`.
pub fn calibrate(args: &CalibrateArgs) -> anyhow::Result<i32> {
    check_runs(args.runs)?;
    let out = args
        .out
        .clone()
        .or_else(|| {
            std::env::var_os(calibration::ENV)
                .filter(|v| v != "none" && !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(calibration::default_path)
        .ok_or_else(|| {
            InputError::with_key(
                "command line",
                "--out",
                "no HOME to put the calibration in; give --out FILE",
            )
        })?;
    let t = match &args.table {
        Some(path) => table::HostTable::read(path)?,
        None => {
            let opts = options(args.runs, args.no_isolate, None);
            measure::measure(&calibrate::rows_needed(), &opts, &mut |l| {
                eprintln!("schedlab: {l}")
            })
        }
    };
    if let Some(why) = t.host.mismatch(&table::HostId::current()) {
        return Err(InputError::new(
            args.table
                .as_ref()
                .map_or("calibrate".into(), |p| p.display().to_string()),
            format!("the table was {why}: a calibration fits this machine only"),
        )
        .into());
    }
    let ctx = RunContext::for_terminal();
    let cal = calibrate::calibrate(&ctx, &t, &mut |l| eprintln!("schedlab: {l}"))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| InputError::with_key("--out", out.display().to_string(), e.to_string()))?;
    }
    output::write_atomic("--out", &out, cal.to_text().as_bytes())?;
    output::write_stdout(&cal.to_text())?;
    eprintln!(
        "schedlab: calibration written to {}; `-m host` applies it{}",
        out.display(),
        if calibration::path_in_force().as_deref() == Some(out.as_path()) {
            String::new()
        } else {
            format!(" when {}={} is set", calibration::ENV, out.display())
        }
    );
    Ok(0)
}
