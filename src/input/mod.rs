//! Reading user input, shared by every layer that parses something: one typed reader for
//! TOML tables with one error wording ([`keys`]), the same checks for tables handed on raw
//! ([`shape`]), one did-you-mean ([`did_you_mean`]), and the named limits on everything a
//! user can size ([`limits`]).
//!
//! This sits in the bottom layer (next to [`crate::error`]) so that the topology importers,
//! the workload parsers and the scenario parser all use the same rules.

pub mod bigint;
pub mod keys;
pub mod limits;
pub mod shape;

pub use keys::{describe, from_table};

/// `" (did you mean X?)"` for the candidates closest to `name`, or `""`: the one suggestion
/// helper for every unknown name (keys, presets, features, profiles, sysctls, workloads).
/// Closeness is the Levenshtein distance (`strsim`), case-insensitive, at most a third of the
/// name's length (at least 2), or one name containing the other.
pub fn did_you_mean(name: &str, candidates: &[&str]) -> String {
    let lower = limits::clip(name).to_ascii_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .iter()
        .filter_map(|c| {
            let cl = c.to_ascii_lowercase();
            let d = strsim::levenshtein(&lower, &cl);
            let close = d <= (lower.len() / 3).max(2)
                || (lower.len() >= 3 && (cl.contains(&lower) || lower.contains(&cl)));
            close.then_some((d, *c))
        })
        .collect();
    scored.sort();
    let best: Vec<&str> = scored.iter().take(3).map(|(_, c)| *c).collect();
    match best.len() {
        0 => String::new(),
        1 => format!(" (did you mean {}?)", best[0]),
        _ => format!(" (did you mean one of {}?)", best.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let c = ["TTWU_QUEUE", "TTWU_QUEUE_ON_CPU", "PLACE_LAG"];
        assert!(did_you_mean("TTWU_QUEU", &c).contains("TTWU_QUEUE"));
        assert!(did_you_mean("place_lag", &c).contains("PLACE_LAG"));
        assert_eq!(did_you_mean("XYZZY", &c), "");
        assert_eq!(
            did_you_mean("mem_intensity_pc", &["mem_intensity_pct", "groups"]),
            " (did you mean mem_intensity_pct?)"
        );
    }
}
