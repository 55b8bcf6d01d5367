//! Text tables for `schedlab list features` and `schedlab list profiles`.

use crate::kconfig::features::{Feature, FeatureInfo};
use crate::kconfig::profiles::PROFILES;
use crate::kconfig::sysctl::SYSCTLS;
use crate::kconfig::version::v;

/// `history` in words: `on`, `on from v6.12`, `on, off from v6.6, on from v6.14`.
fn history_text(info: &FeatureInfo) -> String {
    if info.history.is_empty() {
        return "never on".to_string();
    }
    info.history
        .iter()
        .map(|&(since, on)| {
            let state = if on { "on" } else { "off" };
            if since <= v(3, 0) {
                state.to_string()
            } else {
                format!("{state} from {since}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// One row per feature: name, default (v6.18), kind, history, what it changes.
pub fn features_table() -> String {
    let rows: Vec<[String; 5]> = Feature::ALL
        .iter()
        .map(|f| {
            let i = f.info();
            [
                f.name().to_string(),
                on_off(i.default).to_string(),
                i.kind.label().to_string(),
                history_text(i),
                i.doc.to_string(),
            ]
        })
        .collect();
    let mut out = table(
        &["FEATURE", "DEFAULT", "KIND", "HISTORY", "WHAT IT CHANGES"],
        &rows,
    );
    out.push_str(
        "\nDEFAULT: value in the newest profile (v6.18). kernel: a SCHED_FEAT of v6.18's \
         kernel/sched/features.h; old/new kernel: a SCHED_FEAT of other releases (value = \
         whether that behaviour is present); model: a simulator switch for a kernel change \
         without a feature bit.\nSet with [kernel] features = { NAME = false }, --feature \
         NAME=off, or --set kernel.features.NAME=false.\n",
    );
    out
}

/// The profiles, the features that differ between them, and the tunables.
pub fn profiles_table() -> String {
    let rows: Vec<[String; 4]> = PROFILES
        .iter()
        .map(|p| {
            [
                p.name.to_string(),
                p.mode().name().to_string(),
                match p.mode() {
                    // CFS has no base slice; its slices come from sched_latency_ns.
                    crate::kconfig::profiles::SchedMode::Cfs => "-".to_string(),
                    crate::kconfig::profiles::SchedMode::Eevdf => {
                        p.sysctls().sched_base_slice_ns.to_string()
                    }
                },
                p.summary.to_string(),
            ]
        })
        .collect();
    let mut out = table(&["PROFILE", "MODE", "BASE_SLICE_NS", "SUMMARY"], &rows);

    out.push_str("\nFeatures that differ between profiles (+ on, . off):\n");
    let mut header = vec!["FEATURE".to_string()];
    header.extend(PROFILES.iter().map(|p| p.name.to_string()));
    let mut same = Vec::new();
    let mut matrix: Vec<Vec<String>> = Vec::new();
    for f in Feature::ALL {
        let vals: Vec<bool> = PROFILES.iter().map(|p| p.feature(*f)).collect();
        if vals.iter().all(|&x| x == vals[0]) {
            same.push(format!("{}={}", f.name(), on_off(vals[0])));
            continue;
        }
        let mut row = vec![f.name().to_string()];
        row.extend(vals.iter().map(|&x| if x { "+" } else { "." }.to_string()));
        matrix.push(row);
    }
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    out.push_str(&table_dyn(&header_refs, &matrix));
    out.push_str(&format!("\nSame in every profile: {}\n", same.join(" ")));

    out.push_str("\nTunables (kernel defaults; [kernel] sysctl = { NAME = VALUE } or --sysctl):\n");
    let rows: Vec<[String; 4]> = SYSCTLS
        .iter()
        .map(|i| {
            [
                i.name.to_string(),
                (i.get)(&crate::kconfig::sysctl::Sysctls::default()).to_string(),
                i.unit.to_string(),
                i.doc.to_string(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["TUNABLE", "DEFAULT", "UNIT", "WHAT IT DOES"],
        &rows,
    ));
    out
}

fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r.to_vec()).collect();
    table_dyn(header, &rows)
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
fn table_dyn(header: &[&str], rows: &[Vec<String>]) -> String {
    let n = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            width[i] = width[i].max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == n {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = width[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_table_has_every_feature_once() {
        let t = features_table();
        for f in Feature::ALL {
            let rows = t
                .lines()
                .filter(|l| l.starts_with(&format!("{} ", f.name())));
            assert_eq!(rows.count(), 1, "{f}");
        }
        let row = t.lines().find(|l| l.starts_with("PICK_BUDDY ")).unwrap();
        assert!(row.contains("on, off from v6.6, on from v6.14"), "{row}");
        let row = t.lines().find(|l| l.starts_with("NEXT_BUDDY ")).unwrap();
        assert!(row.contains(" off "), "{row}");
    }

    #[test]
    fn profile_table_lists_profiles_and_differences() {
        let t = profiles_table();
        let row = |name: &str| -> Vec<String> {
            let line = t
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap();
            line.split_whitespace()
                .take(3)
                .map(str::to_string)
                .collect()
        };
        assert_eq!(row("v5.15"), ["v5.15", "cfs", "-"]);
        assert_eq!(row("v6.6"), ["v6.6", "eevdf", "750000"]);
        assert_eq!(row("v6.18"), ["v6.18", "eevdf", "700000"]);
        let row = t
            .lines()
            .find(|l| l.starts_with("NEWIDLE_MIGRATION_COST_GATE "))
            .unwrap();
        // v3.16 v3.17 v4.2 v5.15 on; later off.
        let marks: Vec<&str> = row.split_whitespace().skip(1).collect();
        assert_eq!(
            marks,
            ["+", "+", "+", "+", ".", ".", ".", ".", ".", ".", "."]
        );
        assert!(t.contains("TTWU_QUEUE=on"), "TTWU_QUEUE is on everywhere");
        assert!(t.contains("sched_migration_cost_ns"));
    }
}
