//! Schedstat counters and the `/proc/schedstat` text, version 17 (v6.14+), as
//! `kernel/sched/stats.c: show_schedstat()` writes it.
//!
//! Layout (one block per online CPU, ascending):
//! ```text
//! version 17
//! timestamp <jiffies>
//! cpu<N> <yld_count> 0 <sched_count> <sched_goidle> <ttwu_count> <ttwu_local> <rq_cpu_time> <run_delay> <pcount>
//! domain<K> <name> <span as %*pb> <11 fields × busy, idle, newly idle> <alb_count alb_failed alb_pushed sbe_count sbe_balanced sbe_pushed sbf_count sbf_balanced sbf_pushed ttwu_wake_remote ttwu_move_affine ttwu_move_balance>
//! ```
//! The 11 per-idle-type fields are `lb_count lb_balanced lb_failed lb_imbalance_load
//! lb_imbalance_util lb_imbalance_task lb_imbalance_misfit lb_gained lb_hot_gained
//! lb_nobusyq lb_nobusyg`, idle types in the v6.10+ enum order (`__CPU_NOT_IDLE`,
//! `CPU_IDLE`, `CPU_NEWLY_IDLE`). `sbe_*`, `sbf_*` and `ttwu_move_balance` are never
//! incremented by the kernel and are always 0.
//!
//! Left out: the version 15/16 layouts (one `lb_imbalance` field, no domain name; v15's
//! idle-type order) — the simulator speaks the v6.14+ format only.

use std::fmt::Write;

use super::{LoadBalancer, MigrationType};
use crate::cpumask::CpuMask;
use crate::sched::types::RqSchedstat;

/// `/proc/schedstat` version written by [`write_schedstat`].
pub const SCHEDSTAT_VERSION: u32 = 17;

/// The per-domain schedstat counters (`struct sched_domain`, CONFIG_SCHEDSTATS), arrays
/// indexed by [`super::idle_index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SdSchedstat {
    pub lb_count: [u64; 3],
    pub lb_failed: [u64; 3],
    pub lb_balanced: [u64; 3],
    pub lb_imbalance_load: [u64; 3],
    pub lb_imbalance_util: [u64; 3],
    pub lb_imbalance_task: [u64; 3],
    pub lb_imbalance_misfit: [u64; 3],
    pub lb_gained: [u64; 3],
    pub lb_hot_gained: [u64; 3],
    pub lb_nobusyg: [u64; 3],
    pub lb_nobusyq: [u64; 3],
    pub alb_count: u64,
    pub alb_failed: u64,
    pub alb_pushed: u64,
    pub sbe_count: u64,
    pub sbe_balanced: u64,
    pub sbe_pushed: u64,
    pub sbf_count: u64,
    pub sbf_balanced: u64,
    pub sbf_pushed: u64,
    /// Remote wakeups for which this is the waker's lowest domain spanning the target
    /// (incremented by the wakeup code through [`LoadBalancer::domain_state_mut`]).
    pub ttwu_wake_remote: u64,
    /// `wake_affine()` chose the waking CPU.
    pub ttwu_move_affine: u64,
    pub ttwu_move_balance: u64,
}

impl SdSchedstat {
    /// `update_lb_imbalance_stat()`: add the pass's imbalance to the counter of its
    /// migration type.
    pub fn add_imbalance(&mut self, idle: usize, ty: MigrationType, imbalance: i64) {
        let v = u64::try_from(imbalance).unwrap_or(0);
        match ty {
            MigrationType::Load => self.lb_imbalance_load[idle] += v,
            MigrationType::Util => self.lb_imbalance_util[idle] += v,
            MigrationType::Task => self.lb_imbalance_task[idle] += v,
            MigrationType::Misfit => self.lb_imbalance_misfit[idle] += v,
        }
    }
}

/// A cpumask as the kernel's `%*pb` prints it over `nr_cpu_ids` bits: lowercase hex,
/// 32-bit chunks separated by commas, most significant first; the first chunk has
/// `ceil(bits_in_chunk / 4)` digits, the others 8, all zero-padded.
pub fn cpumask_pr_hex(mask: &CpuMask, nr_cpu_ids: usize) -> String {
    let nr_bits = nr_cpu_ids.max(1);
    let mut chunksz = nr_bits % 32;
    if chunksz == 0 {
        chunksz = 32;
    }
    let mut out = String::new();
    let mut i = nr_bits.div_ceil(32) * 32 - 32;
    let mut first = true;
    loop {
        let mut val: u32 = 0;
        for b in 0..chunksz {
            if mask.test(i + b) {
                val |= 1 << b;
            }
        }
        if !first {
            out.push(',');
        }
        first = false;
        let width = chunksz.div_ceil(4);
        let _ = write!(out, "{val:0width$x}");
        chunksz = 32;
        if i == 0 {
            break;
        }
        i -= 32;
    }
    out
}

/// Write `/proc/schedstat` version 17 for the balancer's machine. `rq_stats` is indexed by
/// CPU (missing entries print zeros); `timestamp` is in jiffies.
pub fn write_schedstat(lb: &LoadBalancer, rq_stats: &[RqSchedstat], timestamp: u64) -> String {
    let dom = &lb.domains;
    let nr_cpu_ids = dom.nr_cpus();
    let mut s = String::new();
    let _ = writeln!(s, "version {SCHEDSTAT_VERSION}");
    let _ = writeln!(s, "timestamp {timestamp}");
    for cpu in dom.span.iter() {
        let r = rq_stats.get(cpu).copied().unwrap_or_default();
        let _ = writeln!(
            s,
            "cpu{cpu} {} 0 {} {} {} {} {} {} {}",
            r.yld_count,
            r.sched_count,
            r.sched_goidle,
            r.ttwu_count,
            r.ttwu_local,
            r.rq_cpu_time,
            r.run_delay,
            r.pcount
        );
        for (k, &sd) in dom.cpu_domains(cpu).iter().enumerate() {
            let d = dom.domain(sd);
            let st = &lb.domain_state(sd).stats;
            let _ = write!(
                s,
                "domain{k} {} {}",
                d.name,
                cpumask_pr_hex(&d.span, nr_cpu_ids)
            );
            for it in 0..3 {
                let _ = write!(
                    s,
                    " {} {} {} {} {} {} {} {} {} {} {}",
                    st.lb_count[it],
                    st.lb_balanced[it],
                    st.lb_failed[it],
                    st.lb_imbalance_load[it],
                    st.lb_imbalance_util[it],
                    st.lb_imbalance_task[it],
                    st.lb_imbalance_misfit[it],
                    st.lb_gained[it],
                    st.lb_hot_gained[it],
                    st.lb_nobusyq[it],
                    st.lb_nobusyg[it]
                );
            }
            let _ = writeln!(
                s,
                " {} {} {} {} {} {} {} {} {} {} {} {}",
                st.alb_count,
                st.alb_failed,
                st.alb_pushed,
                st.sbe_count,
                st.sbe_balanced,
                st.sbe_pushed,
                st.sbf_count,
                st.sbf_balanced,
                st.sbf_pushed,
                st.ttwu_wake_remote,
                st.ttwu_move_affine,
                st.ttwu_move_balance
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pb_format_matches_kernel_examples() {
        // The digest's examples of %*pb.
        assert_eq!(cpumask_pr_hex(&CpuMask::first_n(8), 8), "ff");
        assert_eq!(cpumask_pr_hex(&CpuMask::parse("0-1").unwrap(), 8), "03");
        assert_eq!(cpumask_pr_hex(&CpuMask::first_n(16), 48), "0000,0000ffff");
        assert_eq!(
            cpumask_pr_hex(&CpuMask::first_n(64), 64),
            "ffffffff,ffffffff"
        );
        assert_eq!(cpumask_pr_hex(&CpuMask::parse("0-1").unwrap(), 10), "003");
        assert_eq!(cpumask_pr_hex(&CpuMask::parse("6-9").unwrap(), 10), "3c0");
        assert_eq!(
            cpumask_pr_hex(&CpuMask::parse("0,112").unwrap(), 224),
            "00000000,00000000,00000000,00010000,00000000,00000000,00000001"
        );
    }
}
