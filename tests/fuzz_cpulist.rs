//! Fuzz target: kernel cpulists (`CpuMask::parse_list`, `bitmap_parselist()` syntax) and
//! util-linux cpulists (`CpuMask::parse_util_linux`, taskset -c). See
//! `tests/fuzz_common/mod.rs` for the driver and the long-run command.

use crate::fuzz_common;

use fuzz_common::{fuzz, mutated, one_line, token_soup};
use proptest::prelude::*;
use schedlab::cpumask::{CpuMask, NR_CPUS_MAX};

fn valid_lists() -> Vec<String> {
    [
        "0-17,24,25",
        "0-1023:2/256",
        "1,2,10-20,100-1000:2/25",
        "16-N",
        "all",
        "ALL:1/2",
        "0-N:3/4",
        "N",
        "0-3\n5",
        " 1 , 2 ",
        "0-7:2",
        "3",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn check(text: &str, nbits: usize) -> Result<(), TestCaseError> {
    match CpuMask::parse_list(text, nbits) {
        Ok(m) => prop_assert!(m.iter().all(|c| c < nbits), "{m} beyond {nbits} bits"),
        Err(e) => one_line(&e)?,
    }
    match CpuMask::parse_util_linux(text) {
        Ok(m) => prop_assert!(m.iter().all(|c| c < NR_CPUS_MAX)),
        Err(e) => one_line(&e)?,
    }
    Ok(())
}

#[test]
fn fuzz_cpulist_mutated() {
    fuzz(
        "cpulist-mutated",
        4000,
        (mutated(valid_lists(), 6), 1usize..=NR_CPUS_MAX),
        |(text, nbits)| check(&text, nbits),
    );
}

#[test]
fn fuzz_cpulist_arbitrary() {
    fuzz(
        "cpulist-arbitrary",
        4000,
        (
            prop_oneof![
                any::<String>(),
                token_soup(&[], ""),
                "[0-9N,:/ a-l\n-]{0,40}"
            ],
            1usize..=NR_CPUS_MAX,
        ),
        |(text, nbits)| check(&text, nbits),
    );
}

/// Valid lists parse to the set their regions describe (a model of the group rule).
#[test]
fn fuzz_cpulist_used_group_model() {
    fuzz(
        "cpulist-model",
        2000,
        (0usize..64, 0usize..64, 1usize..16, 0usize..16),
        |(start, len, group, used)| {
            let end = start + len;
            let used = used.min(group);
            let text = format!("{start}-{end}:{used}/{group}");
            let m = CpuMask::parse_list(&text, 128).unwrap();
            let want: Vec<usize> = (start..=end)
                .filter(|c| (c - start) % group < used)
                .collect();
            prop_assert_eq!(m.iter().collect::<Vec<_>>(), want, "{}", text);
            Ok(())
        },
    );
}
