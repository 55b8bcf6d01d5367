//! Fuzz target: rt-app JSON (`rtapp::parse_str`, rt-app's json-c dialect). See
//! `tests/fuzz_common/mod.rs` for the driver and the long-run command.

use crate::fuzz_common;

use fuzz_common::{corpus_dir, fixtures, fuzz, mutated, one_line, token_soup};
use proptest::prelude::*;
use schedlab::workload::rtapp;

#[test]
fn fuzz_rtapp_mutated() {
    let corpus = corpus_dir(&fixtures().join("rt-app"), ".json");
    fuzz(
        "rtapp-mutated",
        1500,
        (mutated(corpus, 8), 1usize..=64),
        |(text, nr_cpus)| {
            if let Err(e) = rtapp::parse_str(&text, "fuzz.json", nr_cpus) {
                one_line(&e)?;
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_rtapp_arbitrary() {
    fuzz(
        "rtapp-arbitrary",
        1500,
        (
            prop_oneof![
                any::<String>(),
                token_soup(
                    &[
                        "\"tasks\"",
                        "\"global\"",
                        "\"run\"",
                        "\"sleep\"",
                        "\"loop\"",
                        "\"instance\"",
                        "\"phases\"",
                        "\"policy\"",
                        "\"SCHED_FIFO\"",
                        "\"cpus\"",
                        "\"timer\"",
                        "\"period\"",
                        "\"lock\"",
                        "\"unlock\"",
                        "\"barrier\""
                    ],
                    ""
                ),
            ],
            1usize..=64,
        ),
        |(text, nr_cpus)| {
            if let Err(e) = rtapp::parse_str(&text, "fuzz.json", nr_cpus) {
                one_line(&e)?;
            }
            Ok(())
        },
    );
}
