//! Text form of a CPU's hierarchy, as `kernel/sched/topology.c: sched_domain_debug()`
//! and `sched_domain_debug_one()` print it at boot with `sched_verbose`:
//!
//! ```text
//! CPU0 attaching sched-domain(s):
//!  domain-0: span=0,112 level=SMT
//!   flags=SD_BALANCE_NEWIDLE|... imbalance_pct=110 busy_factor=16 ...
//!   groups: 0:{ span=0 cap=1024 }, 112:{ span=112 cap=1024 }
//!   domain-1: span=0-55,112-167 level=MC
//! ```
//!
//! Differences from the kernel, on purpose: a `flags=` line per domain with the tunables
//! (the kernel shows those only in debugfs), and `cap=` printed for every group (the
//! kernel omits it when it equals 1024) so capacities are always visible.

use std::fmt::Write;

use super::SchedDomains;

impl SchedDomains {
    /// The kernel-style debug text for `cpu` (one line per item, `\n`-terminated).
    pub fn sched_domain_debug(&self, cpu: usize) -> String {
        let mut out = String::new();
        let chain = self.cpu_domains(cpu);
        if chain.is_empty() {
            let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
            return out;
        }
        let _ = writeln!(out, "CPU{cpu} attaching sched-domain(s):");
        for (level, &id) in chain.iter().enumerate() {
            let sd = self.domain(id);
            let pad = " ".repeat(level);
            let _ = writeln!(
                out,
                "{pad} domain-{level}: span={} level={}",
                sd.span, sd.name
            );
            let _ = writeln!(
                out,
                "{pad}  flags={} imbalance_pct={} busy_factor={} min_interval={} max_interval={} cache_nice_tries={} imb_numa_nr={}",
                sd.flags,
                sd.imbalance_pct,
                sd.busy_factor,
                sd.min_interval_ms,
                sd.max_interval_ms,
                sd.cache_nice_tries,
                sd.imb_numa_nr
            );
            let groups: Vec<String> = sd
                .groups
                .iter()
                .map(|&g| {
                    let g = self.group(g);
                    let mask = if g.balance_mask != g.span {
                        format!(" mask={}", g.balance_mask)
                    } else {
                        String::new()
                    };
                    format!(
                        "{}:{{ span={}{mask} cap={} }}",
                        g.sgc_cpu, g.span, g.capacity
                    )
                })
                .collect();
            let _ = writeln!(out, "{pad}  groups: {}", groups.join(", "));
        }
        out
    }
}
