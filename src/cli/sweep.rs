//! `schedlab sweep plan|run|status|slurm|merge|table` (docs/sweep.md): a grid of
//! configurations run locally or on Slurm, resumable, merged into SQLite.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Subcommand;

use super::signals::{self, Signals};
use crate::error::{InputError, InputResult};
use crate::experiment::RunContext;
use crate::experiment::sweep::{self, Manifest, db, exec, grid::Grid, query, slurm};

/// Arguments of `schedlab sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: SweepCommand,
}

#[derive(Subcommand, Debug)]
pub enum SweepCommand {
    /// Expand a grid file into a sweep directory (manifest of content-addressed runs); print
    /// the run count and a cost estimate.
    Plan(PlanArgs),
    /// Execute the runs of a sweep directory that have no result yet.
    Run(RunArgs),
    /// Count finished and missing runs of a sweep directory.
    Status(DirArgs),
    /// Write an sbatch job array (one task per shard) and a dependent merge job.
    Slurm(SlurmArgs),
    /// Merge every finished run into an SQLite database (idempotent).
    Merge(MergeArgs),
    /// Pivot one metric of a sweep database: rows x columns of axis values, mean ± 95% CI.
    Table(TableArgs),
}

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The grid file (TOML; see docs/sweep.md).
    pub grid: PathBuf,
    /// The sweep directory to create.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Skip the calibration (a few runs timed, and kept as finished results).
    #[arg(long)]
    pub no_calibrate: bool,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The sweep directory.
    pub dir: PathBuf,
    /// Only shard K of N (runs with index % N == K; K from 0, as $SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "K/N", value_parser = exec::Selection::parse_shard, conflicts_with = "index")]
    pub shard: Option<exec::Selection>,
    /// Only run I.
    #[arg(long, value_name = "I")]
    pub index: Option<usize>,
    /// Runs in parallel (default: all cores).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub quiet: super::args::QuietArgs,
}

#[derive(clap::Args, Debug)]
pub struct DirArgs {
    /// The sweep directory.
    pub dir: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct SlurmArgs {
    /// The sweep directory (on a file system the nodes share).
    pub dir: PathBuf,
    /// Slurm partition.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Array tasks (shards); default: one per run, at most 100.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub array_size: Option<u32>,
    /// Time limit of each array task (Slurm format, e.g. 01:00:00).
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// CPUs per array task.
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub cpus_per_task: u32,
    /// Submit with sbatch (the merge job depends on the array: afterany).
    #[arg(long)]
    pub submit: bool,
}

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The sweep directory.
    pub dir: PathBuf,
    /// The SQLite database to create or update.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: PathBuf,
    /// Also write every table as DIR/TABLE.csv.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Also write one JSON object per run (configuration, axes, metrics) to FILE.
    #[arg(long, value_name = "FILE")]
    pub jsonl: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct TableArgs {
    /// The database written by `sweep merge`.
    pub db: PathBuf,
    /// The axis whose values are the rows (e.g. machine).
    #[arg(long, value_name = "AXIS")]
    pub rows: String,
    /// The axis whose values are the columns (e.g. profile).
    #[arg(long, value_name = "AXIS")]
    pub cols: String,
    /// The metric (e.g. workload.time_s, perf_stat.context_switches, latency_us.wakeup.p99).
    #[arg(long, value_name = "M")]
    pub metric: String,
    /// Only runs matching AXIS=VALUE[,AXIS=VALUE...].
    #[arg(long = "where", value_name = "AXIS=VALUE,...")]
    pub filter: Option<String>,
    /// Also write the table as an HTML page to FILE, with a chart of one line per column
    /// value over the rows, each point with its 95% CI (see docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub incomplete: super::args::IncompleteArgs,
}

/// Run `schedlab sweep ...`; returns the exit status.
pub fn run(args: &SweepArgs) -> anyhow::Result<i32> {
    match &args.command {
        SweepCommand::Plan(a) => plan(a),
        SweepCommand::Run(a) => run_sweep(a),
        SweepCommand::Status(a) => status(a),
        SweepCommand::Slurm(a) => slurm_cmd(a),
        SweepCommand::Merge(a) => merge(a),
        SweepCommand::Table(a) => table(a),
    }
}

fn create_dir(dir: &Path, option: &str) -> InputResult<()> {
    std::fs::create_dir_all(dir.join(sweep::RESULTS)).map_err(|e| {
        InputError::with_key(
            option,
            dir.display().to_string(),
            format!("cannot create: {e}"),
        )
    })
}

fn plan(a: &PlanArgs) -> anyhow::Result<i32> {
    let grid = Grid::load(&a.grid)?;
    let manifest = sweep::plan(&grid)?;
    let path = a.out.join(sweep::MANIFEST);
    if path.exists() {
        let old = Manifest::load(&a.out)?;
        if old.runs != manifest.runs {
            return Err(InputError::with_key(
                "-o",
                a.out.display().to_string(),
                format!(
                    "already holds another sweep ({} runs, from {}); accepted: a new directory \
                     (finished results are kept by run id, so a directory is planned once)",
                    old.runs.len(),
                    old.grid
                ),
            )
            .into());
        }
    }
    create_dir(&a.out, "-o")?;
    let mut text = serde_json::to_string_pretty(&manifest)?;
    text.push('\n');
    crate::output::AtomicFile::create("-o", &path)?.write_commit(text.as_bytes())?;
    let axes: Vec<String> = grid
        .axes
        .iter()
        .map(|x| format!("{} {}", x.values.len(), x.name))
        .collect();
    say(format!(
        "schedlab sweep: {} runs ({}) planned in {}",
        manifest.runs.len(),
        axes.join(" x "),
        a.out.display()
    ))?;
    if !a.no_calibrate {
        calibrate(&a.out, &manifest)?;
    }
    Ok(0)
}

/// Time a few runs (first, middle, last; kept as results) and extrapolate.
fn calibrate(dir: &Path, m: &Manifest) -> InputResult<()> {
    let n = m.runs.len();
    if n == 0 {
        return Ok(());
    }
    let mut sample: Vec<usize> = vec![0, n / 2, n - 1];
    sample.dedup();
    let mut ctx = RunContext::default();
    ctx.skip_schedstat_text = true;
    let started = Instant::now();
    let mut timed = 0usize;
    for &i in &sample {
        if sweep::finished(dir, &m.runs[i].id) {
            continue;
        }
        let rep = exec::run(&ctx, dir, m, exec::Selection::Index(i), 1, &|_| {})?;
        if let Some((_, e)) = rep.failed.first() {
            return Err(InputError::new(format!("{} (run {i})", m.grid), e.clone()));
        }
        timed += rep.ran;
    }
    if timed == 0 {
        say("calibration: skipped (the sampled runs had finished already)")?;
        return Ok(());
    }
    let per_run_s = started.elapsed().as_secs_f64() / timed as f64;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    say(format!(
        "calibration: {timed} run(s) took {per_run_s:.2} s each (kept as results); estimate \
         {:.0} core-seconds, about {:.0} s here on {cores} cores",
        per_run_s * n as f64,
        per_run_s * n as f64 / cores as f64
    ))?;
    Ok(())
}

/// A progress bar of runs when stderr is a terminal (off one, progress lines:
/// [`crate::experiment::with_progress_lines`]).
fn bar(ctx: &RunContext, total: u64) -> Option<indicatif::ProgressBar> {
    if !ctx.progress || ctx.quiet || total == 0 {
        return None;
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "sweep [{bar:30}] {pos}/{len} runs, {elapsed} (eta {eta})",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    Some(b)
}

fn run_sweep(a: &RunArgs) -> anyhow::Result<i32> {
    let m = Manifest::load(&a.dir)?;
    let sel = match (a.shard, a.index) {
        (Some(s), _) => s,
        (None, Some(i)) => exec::Selection::Index(i),
        (None, None) => exec::Selection::All,
    };
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |c| c.get()),
        usize::from,
    );
    let mut ctx = RunContext::for_terminal();
    ctx.skip_schedstat_text = true;
    ctx.quiet = a.quiet.quiet;
    ctx.lines &= !ctx.quiet;
    let signals = Signals::install(&ctx);
    let pending = m
        .runs
        .iter()
        .filter(|r| sel.contains(r.index) && !sweep::finished(&a.dir, &r.id))
        .count();
    let pb = bar(&ctx, pending as u64);
    let started = Instant::now();
    let rep = crate::experiment::with_progress_lines(&ctx, "sweep", pending, || {
        exec::run(&ctx, &a.dir, &m, sel, jobs, &|r| {
            if let Some(b) = &pb {
                b.set_position((r.ran + r.failed.len()) as u64);
            }
        })
    })?;
    if let Some(b) = &pb {
        b.finish_and_clear();
    }
    for (i, e) in &rep.failed {
        eprintln!("schedlab: run {i} failed: {e}");
    }
    say(run_summary(&rep, started.elapsed().as_secs_f64()))?;
    if ctx.stopped() {
        let reason = signals.reason().unwrap_or("SIGINT");
        eprintln!("schedlab: stopped by {reason}; rerun the same command to finish the sweep");
        return Ok(signals::exit_code(reason));
    }
    Ok(if rep.failed.is_empty() { 0 } else { 1 })
}

/// The line `sweep run` ends with: what ran, how many of those were cut short, what failed.
fn run_summary(rep: &exec::RunReport, secs: f64) -> String {
    format!(
        "schedlab sweep: {} runs selected, {} already finished, {} ran{}, {} failed{} ({secs:.1} s)",
        rep.selected,
        rep.skipped,
        rep.ran,
        if rep.cut > 0 {
            format!(
                " ({} cut short: the benchmark did not finish; marked in `sweep table`)",
                rep.cut
            )
        } else {
            String::new()
        },
        rep.failed.len(),
        if rep.stopped > 0 {
            format!(", {} not finished (stopped)", rep.stopped)
        } else {
            String::new()
        },
    )
}

fn status(a: &DirArgs) -> anyhow::Result<i32> {
    let m = Manifest::load(&a.dir)?;
    let states: Vec<sweep::ResultState> = m
        .runs
        .iter()
        .map(|r| sweep::result_state(&a.dir, &r.id))
        .collect();
    let count = |state: sweep::ResultState| states.iter().filter(|s| **s == state).count();
    let cut = count(sweep::ResultState::Cut);
    let done = count(sweep::ResultState::Whole) + cut;
    let damaged: Vec<&str> = m
        .runs
        .iter()
        .zip(&states)
        .filter(|(_, s)| **s == sweep::ResultState::Damaged)
        .map(|(r, _)| r.id.as_str())
        .collect();
    say(format!(
        "{}: {done} of {} runs finished{}, {} to run",
        a.dir.display(),
        m.runs.len(),
        if cut > 0 {
            format!(
                " ({cut} of them cut short: the benchmark did not finish, e.g. at \
                 run.duration_s; marked in `sweep table`)"
            )
        } else {
            String::new()
        },
        m.runs.len() - done
    ))?;
    if !damaged.is_empty() {
        say(format!(
            "{} result file(s) damaged (not a whole result; counted as to run, `sweep run` \
             runs them again): {}",
            damaged.len(),
            crate::input::limits::clip(&damaged.join(", "))
        ))?;
    }
    Ok(0)
}

fn absolute(p: &Path, option: &str) -> InputResult<PathBuf> {
    std::fs::canonicalize(p).map_err(|e| {
        InputError::with_key(
            option,
            p.display().to_string(),
            format!("cannot resolve: {e}"),
        )
    })
}

fn slurm_cmd(a: &SlurmArgs) -> anyhow::Result<i32> {
    let m = Manifest::load(&a.dir)?;
    let binary = std::env::current_exe()
        .map_err(|e| InputError::new("sweep slurm", format!("cannot find this binary: {e}")))?;
    let array_size = a
        .array_size
        .map_or(m.runs.len().min(100), |n| n as usize)
        .min(m.runs.len())
        .max(1);
    let o = slurm::SlurmOptions {
        binary,
        dir: absolute(&a.dir, "DIR")?,
        partition: a.partition.clone(),
        array_size,
        time: a.time.clone(),
        cpus_per_task: a.cpus_per_task as usize,
    };
    let (run, merge) = slurm::write_scripts(&o)?;
    say(format!(
        "schedlab sweep: wrote {} ({array_size} array tasks over {} runs) and {}",
        run.display(),
        m.runs.len(),
        merge.display()
    ))?;
    if a.submit {
        let (array, merge_job) = slurm::submit(&run, &merge)?;
        say(format!(
            "submitted: array job {array}, merge job {merge_job} (afterany:{array})"
        ))?;
    } else {
        say(format!(
            "submit: jobid=$(sbatch --parsable {}) && sbatch --dependency=afterany:$jobid {}",
            run.display(),
            merge.display()
        ))?;
    }
    Ok(0)
}

fn merge(a: &MergeArgs) -> anyhow::Result<i32> {
    let m = Manifest::load(&a.dir)?;
    let rep = db::merge(&a.dir, &m, &a.out)?;
    let mut notes = String::new();
    if rep.cut > 0 {
        notes += &format!(
            " ({} cut short: the benchmark did not finish; runs.workload_complete = 0)",
            rep.cut
        );
    }
    if !rep.missing.is_empty() || !rep.damaged.is_empty() {
        notes += &format!(
            "; {} without a result{} (run `schedlab sweep run {}` to finish)",
            rep.missing.len() + rep.damaged.len(),
            match rep.damaged.len() {
                0 => String::new(),
                n => format!(", {n} of them damaged"),
            },
            a.dir.display()
        );
    }
    say(format!(
        "schedlab sweep: merged {} of {} runs into {}{notes}",
        rep.merged,
        m.runs.len(),
        a.out.display(),
    ))?;
    let conn = db::open_existing(&a.out)?;
    if let Some(dir) = &a.csv {
        query::export_csv(&conn, dir)?;
    }
    if let Some(file) = &a.jsonl {
        query::export_jsonl(&conn, file)?;
    }
    Ok(0)
}

fn table(a: &TableArgs) -> anyhow::Result<i32> {
    if let Some(dest) = &a.report {
        crate::output::check_distinct(&[("--report", dest.as_path())], &[("DB", a.db.as_path())])?;
    }
    let conn = db::open_existing(&a.db)?;
    query::check_axis(&conn, &a.rows, "--rows")?;
    query::check_axis(&conn, &a.cols, "--cols")?;
    query::check_metric(&conn, &a.metric, "--metric")?;
    let sel = match &a.filter {
        Some(f) => query::parse_selection(f, "--where")?,
        None => Vec::new(),
    };
    for (axis, _) in &sel {
        query::check_axis(&conn, axis, "--where")?;
    }
    let rows = query::rows(&conn, &a.metric, &sel)?;
    let p = query::pivot(&rows, &a.rows, &a.cols, a.incomplete.allow_incomplete);
    let report_file = super::open_report_output(a.report.as_deref())?;
    crate::output::write_stdout(&query::render_pivot(&p, &a.metric, &a.rows, &a.cols))?;
    if let Some(file) = report_file {
        let source = format!("schedlab sweep table {}", a.db.display());
        let page = crate::report::pages::sweep_page(&p, &a.metric, &a.rows, &a.cols, &source);
        file.write_commit(page.as_bytes())?;
    }
    Ok(0)
}

/// `schedlab compare --db DB --a SEL --b SEL --metric M`: runs whose benchmark did not
/// finish are left out unless `allow_incomplete` (a note says how many either way).
pub fn compare_db(
    db_path: &Path,
    a: &str,
    b: &str,
    metric: &str,
    allow_incomplete: bool,
) -> anyhow::Result<i32> {
    let conn = db::open_existing(db_path)?;
    query::check_metric(&conn, metric, "--metric")?;
    let sa = query::parse_selection(a, "--a")?;
    let sb = query::parse_selection(b, "--b")?;
    for (axis, _) in sa.iter().chain(&sb) {
        query::check_axis(&conn, axis, "--a/--b")?;
    }
    let mut ra = query::rows(&conn, metric, &sa)?;
    let mut rb = query::rows(&conn, metric, &sb)?;
    let cut = ra.iter().chain(&rb).filter(|r| !r.complete).count();
    if !allow_incomplete {
        ra.retain(|r| r.complete);
        rb.retain(|r| r.complete);
    }
    let hint = cut > 0 && !allow_incomplete;
    for (rows, opt) in [(&ra, "--a"), (&rb, "--b")] {
        if rows.is_empty() {
            return Err(InputError::with_key(
                opt,
                if opt == "--a" { a } else { b },
                format!(
                    "selects no {}run with metric {metric}; accepted: AXIS=VALUE pairs of the \
                     database{}",
                    if hint { "finished " } else { "" },
                    if hint {
                        " (or --allow-incomplete to use runs cut short)"
                    } else {
                        ""
                    }
                ),
            )
            .into());
        }
    }
    let mut text = format!("{metric}: A = {a}, B = {b}\n");
    text.push_str(&query::compare(&ra, &rb, &sa, &sb));
    if cut > 0 {
        text.push_str(&format!(
            "* the benchmark did not finish in {cut} of the selected runs (cut short by \
             run.duration_s or the time cap): {}\n",
            if allow_incomplete {
                "included (--allow-incomplete); their values are not the benchmark's"
            } else {
                "left out (--allow-incomplete includes them)"
            }
        ));
    }
    crate::output::write_stdout(&text)?;
    Ok(0)
}

/// Print one line on stdout through the project's stdout writer: a full stdout is one error
/// line naming stdout (exit code 2), as for `run` and `list`; a closed pipe ends quietly.
fn say(line: impl std::fmt::Display) -> InputResult<()> {
    crate::output::write_stdout(&format!("{line}\n"))
}
