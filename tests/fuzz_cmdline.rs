//! Fuzz target: benchmark and prefix command lines (`WorkloadSpec::from_command_placed`:
//! hackbench, perf bench sched messaging, schbench, stress-ng, netperf, tbench, taskset,
//! numactl), and the placement they ask for resolved against a machine. See
//! `tests/fuzz_common/mod.rs` for the driver and the long-run command.

use crate::fuzz_common;

use fuzz_common::{fuzz, mutated, token_soup, tool_error};
use proptest::prelude::*;
use schedlab::topology::presets;
use schedlab::workload::WorkloadSpec;

const COMMANDS: &[&str] = &[
    "hackbench 100 process 20000",
    "hackbench -g 4 -l 100 -s 64 --threads --pipe",
    "hackbench -p -T -g 2 -f 5 -l 50",
    "perf bench sched messaging -g 20 -l 100 -t -p",
    "perf bench sched pipe -l 1000",
    "schbench -L -m 4 -M auto -t 128 -n 0 -r 60",
    "schbench -m 2 -t 4 -r 5 -s 10000 -c 10000 -p 64 -R 100 -w 1 -i 1",
    "schbench-classic -m 2 -t 4 -r 5",
    "stress-ng --cpu 0 -l 50 --timeout 10s",
    "stress-ng --cpu 4 --cpu-method int64 --taskset 0-3 -t 5 --metrics-brief",
    "stress-ng --switch 2 --timeout 1m --sched fifo --sched-prio 10",
    "netperf -t TCP_RR -l 10 -- -r 64,64",
    "netperf -H 127.0.0.1 -t TCP_STREAM -l 5 -- -m 16384",
    "tbench 8",
    "tbench -t 10 4 127.0.0.1",
    "taskset -c 0-3 hackbench -g 2 -l 10",
    "taskset 0xf schbench -m 1 -t 2 -r 1",
    "taskset -a -c 1,3 stress-ng --cpu 2 -t 1",
    "numactl --cpunodebind=1 --membind=1 hackbench 10",
    "numactl -N 0 -m 0 -C 0-3 schbench -m 1 -t 2 -r 1",
    "numactl --interleave=all --physcpubind=+0-1 tbench 2",
    "numactl --preferred=1 -l netperf -t TCP_RR -l 1",
];

fn check(cmdline: &str, machine: &str) -> Result<(), TestCaseError> {
    let m = presets::by_name(machine).expect("preset");
    match WorkloadSpec::from_command_placed(cmdline, m.nr_cpus()) {
        Ok((_, placement)) => {
            if let Err(e) = placement.resolve(&m) {
                tool_error(&e)?;
            }
        }
        Err(e) => tool_error(&e)?,
    }
    Ok(())
}

const MACHINES: &[&str] = &["hybrid-10", "skl-2s"];

#[test]
fn fuzz_command_lines_mutated() {
    let corpus: Vec<String> = COMMANDS.iter().map(|s| s.to_string()).collect();
    fuzz(
        "cmdline-mutated",
        3000,
        (mutated(corpus, 6), proptest::sample::select(MACHINES)),
        |(cmd, machine)| check(&cmd, machine),
    );
}

const WORDS: &[&str] = &[
    "hackbench",
    "perf",
    "bench",
    "sched",
    "messaging",
    "pipe",
    "schbench",
    "stress-ng",
    "netperf",
    "tbench",
    "taskset",
    "numactl",
    "rt-app",
    "process",
    "thread",
    "--cpu",
    "--timeout",
    "--taskset",
    "-t",
    "TCP_RR",
    "--",
    "-r",
    "--cpunodebind=",
    "--membind=",
    "-C",
    "-N",
    "0-3",
    "0xff",
    "all",
    "!0",
    "+1",
    "--threads",
    "-g",
    "-l",
    "-m",
    "-M",
    "auto",
];

#[test]
fn fuzz_command_lines_arbitrary() {
    fuzz(
        "cmdline-arbitrary",
        3000,
        (
            prop_oneof![any::<String>(), token_soup(WORDS, " ")],
            proptest::sample::select(MACHINES),
        ),
        |(cmd, machine)| check(&cmd, machine),
    );
}
