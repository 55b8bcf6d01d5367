//! `schedlab report RESULTS.json -o report.html`: the results of `run --json` or
//! `compare --json` drawn as one self-contained HTML page ([`crate::report`]).

use std::path::PathBuf;

use crate::error::InputError;
use crate::output;

/// Arguments of `schedlab report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The results JSON of `schedlab run --json` or `schedlab compare --json`.
    pub results: PathBuf,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// A trace of the run (`schedlab run --trace`): accepted for the time-series sections
    /// only when the results lack them; not read yet (record them with `run --report`).
    #[arg(long, value_name = "TRACE")]
    pub trace: Option<PathBuf>,
}

/// Run `schedlab report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    output::check_distinct(
        &[("-o", args.output.as_path())],
        &[("results", args.results.as_path())],
    )?;
    if let Some(t) = &args.trace {
        return Err(InputError::with_key(
            "--trace",
            output::echo(&t.display().to_string()),
            "reading traces is not supported yet; accepted: results recorded with \
             `schedlab run --report FILE` (their JSON carries the time series)",
        )
        .into());
    }
    let file = output::AtomicFile::create("-o", &args.output)?;
    let html = crate::report::render_file(&args.results)?;
    file.write_commit(html.as_bytes())?;
    Ok(())
}
