//! Options shared by the commands that simulate a scenario (`run`, `compare`, `bisect`,
//! `validate`, `sweep`):
//! one definition each, flattened into every command (`#[command(flatten)]`), so their
//! spelling, value names and help cannot drift apart.

/// The machine: `-m` and `--offline`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MachineArgs {
    /// Machine: a preset (`schedlab list machines`), `host`, an hwloc XML, a sysfs snapshot
    /// directory, or a topology `.toml` file.
    #[arg(short = 'm', long = "machine", value_name = "MACHINE")]
    pub machine: Option<String>,
    /// CPUs to take offline (kernel cpulist, e.g. 18-23,26-31).
    #[arg(long, value_name = "CPULIST")]
    pub offline: Option<String>,
}

/// Changes to the scenario: `--feature`, `--sysctl`, `--set` (with `compare`, applied to the
/// baseline and so to every variant; with `bisect`, to both sides).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TuneArgs {
    /// Switch a scheduler feature: NAME=on|off (also NAME / NO_NAME). compare: in the
    /// baseline, so in every variant; bisect: on both sides.
    #[arg(long = "feature", value_name = "NAME=on|off")]
    pub features: Vec<String>,
    /// Set a tunable: NAME=VALUE (e.g. sched_migration_cost_ns=500000); compare: in the
    /// baseline; bisect: on both sides.
    #[arg(long = "sysctl", value_name = "NAME=VALUE")]
    pub sysctls: Vec<String>,
    /// Override any scenario key by dotted path (e.g. workload.groups=4, run.duration_s=0.5);
    /// compare: in the baseline; bisect: on both sides.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// `--allow-incomplete` (`compare`, `bisect`, `validate`, `sweep table`): use runs whose
/// benchmark did not finish — cut by `run.duration_s` or the time cap before its work was
/// done or its own length had run (`workload.complete = false`). Without it they are refused
/// (`compare`, `bisect`), not scored (`validate`) or left out of the means (`sweep table`);
/// with it they are used and marked `*`.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct IncompleteArgs {
    /// Use runs whose benchmark did not finish (cut by run.duration_s or the time cap);
    /// they are refused or left out otherwise, and marked `*` where shown.
    #[arg(long)]
    pub allow_incomplete: bool,
}

/// `-q`/`--quiet` (`run`, `compare`, `bisect`, `sweep run`, `validate`): no progress bar on a terminal,
/// no progress lines off one.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct QuietArgs {
    /// Print no progress on stderr (off a terminal a line is printed for each finished run
    /// and at most every 10 s).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
