//! `schedlab validate`: run the corpus of published results (validation/cases) and print
//! the scoreboard; `--check` compares it with the record in docs/validation.md (exit 1 when
//! a case moved without being recorded), `--json` and `--report` write it.

use std::path::{Path, PathBuf};

use crate::error::InputError;
use crate::experiment::RunContext;
use crate::experiment::host::{compare as host_compare, table as host_table};
use crate::experiment::validate::{self, Scoreboard, cache::Cache, case, guard};
use crate::output;
use crate::report::html::esc;

/// Arguments of `schedlab validate`.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// The directory of case files.
    #[arg(long, value_name = "DIR", default_value = "validation/cases")]
    pub cases: PathBuf,
    /// Only the cases marked `quick = true` (the CI subset).
    #[arg(long)]
    pub quick: bool,
    /// Only this case (by id, the file stem; repeatable).
    #[arg(long = "case", value_name = "ID")]
    pub case_ids: Vec<String>,
    /// Write the scoreboard (every case with its provenance and result) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML page: one row per case and a scatter of simulated vs real change.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Compare with the record in FILE (docs/validation.md): exit status 1 when a case left or
    /// came within 2x, changed sign, or is not recorded.
    #[arg(long, value_name = "FILE")]
    pub check: Option<PathBuf>,
    /// Override a scenario key in both sides of every case (e.g. a machine cost:
    /// `--set machine.cost.ipi_latency_ns=5000`); results are then not cached.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    pub incomplete: super::args::IncompleteArgs,
    /// Print the record block for docs/validation.md after the scoreboard.
    #[arg(long)]
    pub print_record: bool,
    /// Where cached results live (per binary and case file).
    #[arg(long, value_name = "DIR", default_value = "target/validate-cache")]
    pub cache_dir: PathBuf,
    /// Run every case, ignoring and not writing the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Also compare `-m host` with the latest host table of this kind of machine (the default
    /// for a full run; off with --quick or --case unless given).
    #[arg(long, conflicts_with = "no_host")]
    pub host: bool,
    /// Leave the host section out.
    #[arg(long)]
    pub no_host: bool,
    /// The host table to compare with (default: the newest in validation/host/ measured on
    /// this kind of machine).
    #[arg(long, value_name = "FILE")]
    pub host_table: Option<PathBuf>,
    // -q also silences the line naming each case as it starts; results, warnings and
    // --check's verdict stay.
    #[command(flatten)]
    pub quiet: super::args::QuietArgs,
}

/// `schedlab validate`.
pub fn run(args: &ValidateArgs) -> anyhow::Result<i32> {
    let cases = select(args)?;
    let record = match &args.check {
        Some(path) => Some(read_record(path)?),
        None => None,
    };
    let cache = if args.no_cache {
        None
    } else {
        let exe = std::env::current_exe()?;
        Cache::open(&args.cache_dir, &exe).ok()
    };
    let mut ctx = RunContext::for_terminal();
    ctx.quiet = args.quiet.quiet;
    let signals = super::signals::Signals::install(&ctx);
    let opts = validate::Options {
        sets: args.sets.clone(),
        allow_incomplete: args.incomplete.allow_incomplete,
    };
    let board = validate::validate(&ctx, &cases, &opts, cache.as_ref(), &|msg| {
        if !args.quiet.quiet {
            eprintln!("schedlab: {msg}")
        }
    })?;
    output::write_stdout(&validate::render(&board))?;
    if args.print_record {
        output::write_stdout(&guard::render_record(&board))?;
    }
    let host = host_section(&ctx, args)?;
    if let Some(score) = &host {
        output::write_stdout(&format!("\n{}", host_compare::render(score)))?;
    }
    if let Some(path) = &args.json {
        let mut value = serde_json::to_value(&board)?;
        if let (Some(score), Some(obj)) = (&host, value.as_object_mut()) {
            obj.insert("host".into(), serde_json::to_value(score)?);
        }
        let text = serde_json::to_string_pretty(&value)? + "\n";
        output::write_atomic("--json", path, text.as_bytes())?;
    }
    if let Some(path) = &args.report {
        output::write_atomic("--report", path, html(&board).as_bytes())?;
    }
    if let Some(reason) = ctx.stopped().then(|| signals.reason().unwrap_or("SIGINT")) {
        eprintln!(
            "schedlab: stopped by {reason}: {} of {} cases scored; the scoreboard is incomplete",
            board.cases.len(),
            cases.len()
        );
        return Ok(130);
    }
    let Some(record) = record else {
        return Ok(0);
    };
    let moved = guard::check(&board, &record);
    if moved.is_empty() {
        eprintln!("schedlab: validate --check: every case as recorded");
        return Ok(0);
    }
    for m in &moved {
        eprintln!("schedlab: validate --check: {m}");
    }
    eprintln!(
        "schedlab: {} case(s) moved against the record: if the change is meant, update the \
         record block of {} (schedlab validate --print-record) and say why there",
        moved.len(),
        args.check.as_deref().unwrap_or(Path::new("")).display()
    );
    Ok(1)
}

/// The host section: `-m host` against the host table (None when not asked for, or when no
/// table of this kind of machine exists — said on stderr).
fn host_section(
    ctx: &RunContext,
    args: &ValidateArgs,
) -> anyhow::Result<Option<host_compare::HostScore>> {
    let wanted = args.host
        || args.host_table.is_some()
        || (!args.no_host && !args.quick && args.case_ids.is_empty());
    if !wanted || args.no_host {
        return Ok(None);
    }
    let this = host_table::HostId::current();
    let found = match &args.host_table {
        Some(p) => Some((p.clone(), host_table::HostTable::read(p)?)),
        None => host_table::latest_for(&host_dir(args), &this)?,
    };
    let Some((path, table)) = found else {
        eprintln!(
            "schedlab: validate: no host table of this machine ({}, {} CPUs) in {}: host \
             section left out (schedlab host-measure makes one)",
            this.cpu_model,
            this.nr_cpus,
            host_dir(args).display()
        );
        return Ok(None);
    };
    if let Some(why) = table.host.mismatch(&this) {
        eprintln!(
            "schedlab: validate: host table {} was {why}: compared anyway",
            path.display()
        );
    }
    let (cal, _) = crate::experiment::host::calibration::for_this_host()?;
    let fitted = crate::experiment::host::calibrate::fitted_rows(cal.as_ref());
    let score = host_compare::score_table(ctx, &path.display().to_string(), &table, &fitted)?;
    Ok(Some(score))
}

/// Where host tables live: `host/` beside the cases directory (validation/host).
fn host_dir(args: &ValidateArgs) -> PathBuf {
    match args.cases.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join("host"),
        _ => PathBuf::from("host"),
    }
}

/// The cases the arguments select.
fn select(args: &ValidateArgs) -> Result<Vec<case::Case>, InputError> {
    let all = case::read_corpus(&args.cases)?;
    for id in &args.case_ids {
        if !all.iter().any(|c| &c.id == id) {
            let ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
            return Err(InputError::with_key(
                "--case",
                crate::input::limits::clip(id),
                format!(
                    "no such case{}; accepted: {}",
                    crate::input::did_you_mean(id, &ids),
                    ids.join(", ")
                ),
            ));
        }
    }
    Ok(all
        .into_iter()
        .filter(|c| !args.quick || c.file.quick)
        .filter(|c| args.case_ids.is_empty() || args.case_ids.contains(&c.id))
        .collect())
}

fn read_record(path: &Path) -> Result<Vec<guard::Recorded>, InputError> {
    let origin = path.display().to_string();
    let text = crate::input::limits::read_input(path, &origin)?;
    guard::parse_record(&text).ok_or_else(|| {
        InputError::new(
            origin,
            format!(
                "no record block; accepted: a file with the lines `{}` and `{}` around the \
                 output of `schedlab validate --print-record`",
                guard::BEGIN,
                guard::END
            ),
        )
    })
}

/// The scoreboard as one self-contained HTML page: the table, then a scatter of simulated
/// against real change (log-symmetric axes would hide the sign; plain axes, clipped).
fn html(board: &Scoreboard) -> String {
    let mut rows = String::new();
    for r in &board.cases {
        let f = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:+.2}"));
        let b = |x: Option<bool>| match x {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let regime: Vec<String> = r
            .regime
            .iter()
            .map(|c| {
                let ratio = c.ratio.map_or("-".into(), |x| format!("{x:.2}x"));
                format!("{}: {ratio}", esc(&c.check.counter))
            })
            .collect();
        rows.push_str(&format!(
            "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.title),
            esc(&r.id),
            esc(&r.benchmark),
            esc(&r.machine),
            esc(&r.group),
            r.real_change_pct,
            f(r.sim_change_pct),
            r.sim_ci_pct.map_or("-".into(), |v| format!("{v:.2}")),
            b(r.sign_ok),
            b(r.within_2x),
            regime.join("<br>"),
            if r.scored { String::new() } else { esc(&r.reason) },
        ));
    }
    let t = &board.totals;
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>schedlab validate</title>\
         <style>body{{font-family:sans-serif}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}</style>\
         </head><body><h1>schedlab validate</h1><p>{} cases, {} scored and run, {} independent \
         sources: right sign {:.0} %, within 2x {:.0} %, median |log ratio| {:.2}; right sign \
         where the simulated change is outside its noise {}/{}; {} run with a fitted input, {} \
         fitted to; published counters reproduced within 2x {}/{}.</p>{}{}\
         <table><tr><th>case</th><th>benchmark</th><th>machine</th><th>source</th><th>real %</th>\
         <th>sim %</th><th>sim 95% CI</th><th>sign</th><th>2x</th><th>published counters (sim / real)</th><th>not scored because</th></tr>\n{rows}</table>\
         </body></html>\n",
        t.cases,
        t.ran,
        t.groups,
        t.sign_ok_pct,
        t.within_2x_pct,
        t.median_abs_log_ratio,
        t.decisive_sign_ok,
        t.decisive,
        t.with_fitted_input,
        t.fitted_from,
        t.regime_within_2x,
        t.regime_checks,
        fitted_inputs_html(board),
        scatter(board)
    )
}

/// The global fitted inputs the scored cases ran with, as a list (nothing when none).
fn fitted_inputs_html(board: &Scoreboard) -> String {
    let uses = validate::fitted_input_uses(&board.cases);
    if uses.is_empty() {
        return String::new();
    }
    let items: String = uses
        .iter()
        .map(|(input, n)| format!("<li>{}: {n} scored cases</li>", esc(input)))
        .collect();
    format!("<p>Fitted inputs (global per machine family):</p><ul>{items}</ul>")
}

/// Simulated against real change (%), each axis clipped to ±100 %, with the y = x line and
/// the 2x band.
fn scatter(board: &Scoreboard) -> String {
    const SIZE: f64 = 400.0;
    const LIM: f64 = 100.0;
    let px = |v: f64| SIZE / 2.0 + v.clamp(-LIM, LIM) / LIM * (SIZE / 2.0 - 10.0);
    let py = |v: f64| SIZE - px(v);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{SIZE}\" height=\"{SIZE}\">\
         <rect width=\"{SIZE}\" height=\"{SIZE}\" fill=\"white\" stroke=\"#999\"/>\
         <line x1=\"0\" y1=\"{h}\" x2=\"{SIZE}\" y2=\"{h}\" stroke=\"#ccc\"/>\
         <line x1=\"{h}\" y1=\"0\" x2=\"{h}\" y2=\"{SIZE}\" stroke=\"#ccc\"/>\
         <line x1=\"{a}\" y1=\"{b}\" x2=\"{b}\" y2=\"{a}\" stroke=\"#888\"/>\
         <text x=\"4\" y=\"14\" font-size=\"11\">sim % (y) vs real % (x), ±{LIM} %</text>",
        h = SIZE / 2.0,
        a = px(-LIM),
        b = px(LIM),
    );
    for r in &board.cases {
        let Some(sim) = r.sim_change_pct else {
            continue;
        };
        let colour = match r.within_2x {
            Some(true) => "#2a7",
            _ if r.sign_ok == Some(true) => "#e90",
            _ => "#d33",
        };
        s.push_str(&format!(
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\"><title>{}: real {:+.2} %, sim {:+.2} %</title></circle>",
            px(r.real_change_pct),
            py(sim),
            r.id,
            r.real_change_pct,
            sim
        ));
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::validate::CaseScore;

    /// The HTML page lists the fitted inputs under its totals, escaped, and nothing when no
    /// case ran with one.
    #[test]
    fn html_lists_the_fitted_inputs_the_cases_ran_with() {
        let row = |inputs: Vec<String>| CaseScore {
            id: "c".into(),
            scored: true,
            sim_change_pct: Some(-1.0),
            real_change_pct: -2.0,
            fitted_inputs: inputs,
            ..CaseScore::default()
        };
        let board = |rows: Vec<CaseScore>| Scoreboard {
            totals: Default::default(),
            cases: rows,
        };
        let with = html(&board(vec![row(vec!["m C2 exit <26 us>".into()])]));
        assert!(
            with.contains("<ul><li>m C2 exit &lt;26 us&gt;: 1 scored cases</li></ul>"),
            "{with}"
        );
        let without = html(&board(vec![row(Vec::new())]));
        assert!(!without.contains("Fitted inputs"), "{without}");
    }
}
