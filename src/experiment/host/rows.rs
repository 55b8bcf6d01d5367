//! The host table's rows: one benchmark command line each, run for real by `host-measure`
//! and simulated on `-m host` by the same text. Sized to take 0.3-5 s on a 2-CPU VM.

/// The number a row is judged by ("time" in the scoreboard): the run's elapsed time for a
/// fixed amount of work, or its throughput for a fixed duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primary {
    /// `perf stat`'s "seconds time elapsed" (simulated: `perf_stat.elapsed_s`).
    ElapsedS,
    /// schbench's "average rps:" (simulated: `workload.rps_avg`).
    Rps,
}

/// The external program a row needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Perf,
    Schbench,
    StressNg,
}

impl Program {
    /// The program's name in a command line.
    pub fn name(self) -> &'static str {
        match self {
            Program::Perf => "perf",
            Program::Schbench => "schbench",
            Program::StressNg => "stress-ng",
        }
    }

    /// How to get it on Debian.
    pub fn install_hint(self) -> &'static str {
        match self {
            Program::Perf => "apt-get install linux-perf",
            Program::StressNg => "apt-get install stress-ng",
            Program::Schbench => {
                "build it from git://git.kernel.org/pub/scm/linux/kernel/git/mason/schbench.git \
                 (make) and pass --schbench PATH (scripts/install-host-benchmarks does both)"
            }
        }
    }
}

/// One row of the host table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub id: &'static str,
    /// The command line, identical for the real run and the simulation (a `taskset` prefix
    /// included).
    pub command: &'static str,
    pub program: Program,
    pub primary: Primary,
    /// What the row shows about the scheduler.
    pub about: &'static str,
}

/// Every row, in table order.
pub const ROWS: &[Row] = &[
    Row {
        id: "pipe-pinned",
        command: "taskset -c 0 perf bench sched pipe -l 100000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "two tasks ping-pong on one CPU: the switch cycle (calibrates scheduler costs)",
    },
    Row {
        id: "pipe",
        command: "perf bench sched pipe -l 100000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "the same on two CPUs: cross-CPU wakeups of an idle CPU (calibrates IPI latency)",
    },
    Row {
        id: "stress-ng-cpu1",
        command: "stress-ng --cpu 1 --cpu-ops 400 --metrics-brief",
        program: Program::StressNg,
        primary: Primary::ElapsedS,
        about: "one busy instance of the cpu stressor: user-space speed (calibrates speed_pct)",
    },
    Row {
        id: "hackbench-socket-pinned",
        command: "taskset -c 0 perf bench sched messaging -g 1 -l 1000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "40 processes over AF_UNIX sockets on one CPU: the socket path's work per \
                message (calibrates af_unix_cost_pct)",
    },
    Row {
        id: "hackbench-socket-g1",
        command: "perf bench sched messaging -g 1 -l 1000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "40 processes over AF_UNIX sockets",
    },
    Row {
        id: "hackbench-pipe-g1",
        command: "perf bench sched messaging -p -g 1 -l 1000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "40 processes over pipes",
    },
    Row {
        id: "hackbench-thread-pipe-g1",
        command: "perf bench sched messaging -t -p -g 1 -l 1000",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "40 threads over pipes",
    },
    Row {
        id: "hackbench-socket-g4",
        command: "perf bench sched messaging -g 4 -l 250",
        program: Program::Perf,
        primary: Primary::ElapsedS,
        about: "160 processes over AF_UNIX sockets",
    },
    Row {
        id: "schbench-t2",
        command: "schbench -m 1 -t 2 -r 5",
        program: Program::Schbench,
        primary: Primary::Rps,
        about: "one message thread waking two workers",
    },
    Row {
        id: "schbench-t4",
        command: "schbench -m 1 -t 4 -r 5",
        program: Program::Schbench,
        primary: Primary::Rps,
        about: "one message thread waking four workers (more workers than CPUs)",
    },
    Row {
        id: "stress-ng-cpu2-l50",
        command: "stress-ng --cpu 2 -l 50 --cpu-ops 400 --metrics-brief",
        program: Program::StressNg,
        primary: Primary::ElapsedS,
        about: "two instances at a 50 % duty cycle: sleep/wake cycles",
    },
    Row {
        id: "busy-unpinned",
        command: "stress-ng --cpu 3 --cpu-ops 600 --metrics-brief",
        program: Program::StressNg,
        primary: Primary::ElapsedS,
        about: "three busy loops on two CPUs: load balancing moves them",
    },
    Row {
        id: "busy-pinned",
        command: "taskset -c 0 stress-ng --cpu 2 --cpu-ops 300 --metrics-brief",
        program: Program::StressNg,
        primary: Primary::ElapsedS,
        about: "two busy loops sharing CPU 0: time slicing (preemption by the tick)",
    },
];

/// The row named `id`.
pub fn row(id: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.id == id)
}

/// Row ids, for error messages.
pub fn ids() -> String {
    ROWS.iter().map(|r| r.id).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_commands_name_their_program() {
        for (i, r) in ROWS.iter().enumerate() {
            assert!(ROWS[..i].iter().all(|o| o.id != r.id), "duplicate {}", r.id);
            assert!(r.command.contains(r.program.name()), "{}", r.id);
        }
    }
}
