//! `schedlab report RESULTS.json -o report.html`: the results of `run --json` or
//! `compare --json` drawn as one self-contained HTML page ([`crate::report`]).

use std::path::PathBuf;

use crate::output;

/// Arguments of `schedlab report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The results JSON of `schedlab run --json` or `schedlab compare --json`.
    pub results: PathBuf,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// The trace of the run (`schedlab run --trace X.pftrace` Perfetto protobuf, or `X.txt`
    /// ftrace text): gives the first run its time series (utilisation, tasks, migrations
    /// over time) when the results lack it.
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
        output::check_distinct(
            &[("-o", args.output.as_path())],
            &[("--trace", t.as_path())],
        )?;
    }
    let file = output::AtomicFile::create("-o", &args.output)?;
    let html = crate::report::render_file_with_trace(&args.results, args.trace.as_deref())?;
    file.write_commit(html.as_bytes())?;
    Ok(())
}
