//! The SCHED_FEAT registry: every scheduler feature bit the simulator knows, and a
//! [`Features`] set that the model queries the way the kernel calls `sched_feat(X)`.
//!
//! Mirrors `kernel/sched/features.h` (the `SCHED_FEAT(NAME, default)` list, toggled at run
//! time through `/sys/kernel/debug/sched/features`). Three kinds of entries:
//!
//! - [`FeatureKind::Kernel`]: a `SCHED_FEAT` of the v6.18 `features.h` (the newest kernel a
//!   profile models), with that file's default;
//! - [`FeatureKind::OtherKernel`]: a `SCHED_FEAT` of older (or later) kernels only — the CFS
//!   ones removed with EEVDF in v6.6, `SIS_PROP`, `HZ_BW`, ... — needed so that the old
//!   profiles can be described, and so a v6.x run can switch an old behaviour back on;
//! - [`FeatureKind::Model`]: a switch the simulator adds for a behaviour that the kernel
//!   changed by a commit without a feature bit (e.g. the whole-core check in
//!   `should_we_balance()`, v6.6), or that was proposed but not merged (`TTWU_QUEUE_DELAYED`).
//!
//! The value of a feature in a profile is the *behaviour* of that kernel: for a bit that did
//! not exist yet or any more, the value says whether the behaviour it gates was there (e.g.
//! `HZ_BW` is "on" after its removal in v6.12 because the removal made the behaviour
//! unconditional). Each entry's `history` records this and the profiles are derived from it.
//!
//! NUMA balancing: the v3.13–v4.2 `SCHED_FEAT`s `NUMA_FAVOUR_HIGHER` / `NUMA_RESIST_LOWER`
//! (other-kernel entries) and five model switches for the variants of issue 13
//! (`NUMA_MIGRATE_PREFERRED_BUSY`, `NUMA_HAS_CAPACITY`, `NUMA_HAS_CAPACITY_PCT`,
//! `NUMA_CLASSIFY`, `NUMA_LOCALITY_TRISTATE`); the release-keyed NUMA details without a
//! switch are in `sched::numa::features::NumaVariant`. The plain `NUMA` / `NUMA_FAVOUR_*`
//! bits of v3.8–v3.12 are not listed (schedlab has no profile before v3.16).
//!
//! Left out: debugging bits with no scheduling effect the simulator could show (`ARCH_POWER`
//! / `ARCH_CAPACITY`, `FORCE_SD_OVERLAP`, `SIS_AVG_CPU`).

use std::fmt;

use super::version::{KernelVersion, v};
use crate::error::{InputError, InputResult};

/// Which kind of switch a feature is; see the module doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureKind {
    /// A `SCHED_FEAT` in the v6.18 `kernel/sched/features.h`.
    Kernel,
    /// A `SCHED_FEAT` of other kernel versions only.
    OtherKernel,
    /// A simulator switch for a kernel behaviour that has no feature bit.
    Model,
}

impl FeatureKind {
    pub fn label(self) -> &'static str {
        match self {
            FeatureKind::Kernel => "kernel",
            FeatureKind::OtherKernel => "old/new kernel",
            FeatureKind::Model => "model",
        }
    }
}

/// Which fair-class implementation a feature acts in (the kernel's CFS before v6.6, EEVDF
/// from v6.6). A feature that does not apply to a run's mode is ignored by the model, and
/// setting it produces a note in the resolved kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppliesTo {
    Both,
    CfsOnly,
    EevdfOnly,
}

macro_rules! features {
    ($($name:ident),* $(,)?) => {
        /// A scheduler feature, named exactly as in `kernel/sched/features.h` (or, for model
        /// switches, named in the same style). See [`Feature::info`] for the documentation.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum Feature { $($name),* }

        impl Feature {
            /// Every feature, in registry order (the v6.18 `features.h` order, then the
            /// features of other kernels, then the model switches).
            pub const ALL: &'static [Feature] = &[$(Feature::$name),*];
        }
    };
}

features!(
    PLACE_LAG,
    PLACE_DEADLINE_INITIAL,
    PLACE_REL_DEADLINE,
    RUN_TO_PARITY,
    PREEMPT_SHORT,
    NEXT_BUDDY,
    PICK_BUDDY,
    CACHE_HOT_BUDDY,
    DELAY_DEQUEUE,
    DELAY_ZERO,
    WAKEUP_PREEMPTION,
    HRTICK,
    HRTICK_DL,
    NONTASK_CAPACITY,
    TTWU_QUEUE,
    SIS_UTIL,
    WARN_DOUBLE_CLOCK,
    RT_PUSH_IPI,
    RT_RUNTIME_SHARE,
    LB_MIN,
    ATTACH_AGE_LOAD,
    WA_IDLE,
    WA_WEIGHT,
    WA_BIAS,
    UTIL_EST,
    LATENCY_WARN,
    NI_RANDOM,
    // Other kernels' SCHED_FEATs.
    GENTLE_FAIR_SLEEPERS,
    START_DEBIT,
    LAST_BUDDY,
    LB_BIAS,
    SIS_PROP,
    ALT_PERIOD,
    BASE_SLICE,
    UTIL_EST_FASTUP,
    HZ_BW,
    DOUBLE_TICK,
    NI_RATE,
    // Model switches.
    SHOULD_WE_BALANCE_IDLE_CORE,
    GROUP_SMT_BALANCE,
    SMT_VS_NONSMT_SPARE,
    FULLY_BUSY_TIE_LATER,
    PICK_BUSIEST_TIE_FIRST,
    SIBLING_IMBALANCE,
    NEWIDLE_MIGRATION_COST_GATE,
    NEWIDLE_FAIL_BUMP,
    LB_SKIP_DELAYED,
    LB_SKIP_INELIGIBLE,
    REWEIGHT_PLACE,
    TTWU_QUEUE_ON_CPU,
    TTWU_QUEUE_DELAYED,
    TTWU_QUEUE_DEFAULT,
    TTWU_QUEUE_L2C,
    DL_SERVER,
    DL_SERVER_LAZY_STOP,
    RT_DEFAULT_BANDWIDTH,
    WAKEUP_STATS_ALLOWED,
    PIPE_WAKE_ON_FREE,
    // NUMA balancing (src/sched/numa; docs/numa.md).
    NUMA_FAVOUR_HIGHER,
    NUMA_RESIST_LOWER,
    NUMA_MIGRATE_PREFERRED_BUSY,
    NUMA_HAS_CAPACITY,
    NUMA_HAS_CAPACITY_PCT,
    NUMA_CLASSIFY,
    NUMA_LOCALITY_TRISTATE,
);

/// Number of features in the registry.
pub const NR_FEATURES: usize = Feature::ALL.len();

/// Everything known about one feature.
#[derive(Debug)]
pub struct FeatureInfo {
    pub feature: Feature,
    /// Default in the newest modelled kernel (v6.18): the `features.h` default for
    /// [`FeatureKind::Kernel`] entries, the v6.18 behaviour for the others.
    pub default: bool,
    pub kind: FeatureKind,
    pub applies_to: AppliesTo,
    /// One line: what turning it on changes.
    pub doc: &'static str,
    /// Behaviour over time: from each listed release on, the behaviour is on (`true`) or off.
    /// Before the first entry it is off. Releases before v3.16 are written as v3.0.
    pub history: &'static [(KernelVersion, bool)],
    /// Where the history comes from (commits), and what is uncertain.
    pub provenance: &'static str,
}

const K: FeatureKind = FeatureKind::Kernel;
const O: FeatureKind = FeatureKind::OtherKernel;
const M: FeatureKind = FeatureKind::Model;
const BOTH: AppliesTo = AppliesTo::Both;
const CFS: AppliesTo = AppliesTo::CfsOnly;
const EEVDF: AppliesTo = AppliesTo::EevdfOnly;

const fn fi(
    feature: Feature,
    default: bool,
    kind: FeatureKind,
    applies_to: AppliesTo,
    doc: &'static str,
    history: &'static [(KernelVersion, bool)],
    provenance: &'static str,
) -> FeatureInfo {
    FeatureInfo {
        feature,
        default,
        kind,
        applies_to,
        doc,
        history,
        provenance,
    }
}

/// From this release pipe writers wait exclusively (0ddad21d3e99, "pipe: use exclusive waits
/// when reading or writing") and `pipe_read()` wakes one writer: the rule PIPE_WAKE_ON_FREE
/// narrows. Before it a freed page wakes every waiter and the switch has nothing to act on.
pub const PIPE_EXCLUSIVE_WAITS_SINCE: KernelVersion = v(5, 5);

const ALWAYS: &[(KernelVersion, bool)] = &[(v(3, 0), true)];
const NEVER: &[(KernelVersion, bool)] = &[];

use Feature::*;

/// The registry, indexed by `Feature as usize`.
static INFO: [FeatureInfo; NR_FEATURES] = [
    fi(
        PLACE_LAG,
        true,
        K,
        EEVDF,
        "keep a task's EEVDF lag across sleep/wake and migration (place_entity); also the \
         'ineligible task' filter of can_migrate_task",
        &[(v(6, 6), true)],
        "86bfbb7ce4f6 'sched/fair: Add lag based placement' (v6.6)",
    ),
    fi(
        PLACE_DEADLINE_INITIAL,
        true,
        K,
        EEVDF,
        "a new task starts with half a slice of virtual deadline (place_entity, ENQUEUE_INITIAL)",
        &[(v(6, 6), true)],
        "EEVDF placement series (v6.6)",
    ),
    fi(
        PLACE_REL_DEADLINE,
        true,
        K,
        EEVDF,
        "keep the relative virtual deadline when a task migrates (dequeue without sleep)",
        &[(v(6, 12), true)],
        "82e9d0456e06 'sched/fair: Avoid re-setting virtual deadline on migrations' (v6.12)",
    ),
    fi(
        RUN_TO_PARITY,
        true,
        K,
        EEVDF,
        "no wakeup preemption until current reaches 0-lag or its slice ends (slice protection)",
        &[(v(6, 6), true)],
        "63304558ba5d 'sched/eevdf: Curb wakeup-preemption' (v6.6); v6.17 bounds the protection \
         by the smallest queued slice (vprot)",
    ),
    fi(
        PREEMPT_SHORT,
        true,
        K,
        EEVDF,
        "a waking task with a shorter slice may cancel current's run-to-parity protection",
        &[(v(6, 12), true)],
        "85e511df3cec 'sched/eevdf: Allow shorter slices to wakeup-preempt' (v6.12)",
    ),
    fi(
        NEXT_BUDDY,
        false,
        K,
        BOTH,
        "on wakeup without preemption, make the wakee cfs_rq->next (next buddy)",
        &[(v(6, 19), true)],
        "off since v2.6.x; aceccac58ad7 'sched/fair: Enable scheduler feature NEXT_BUDDY' turns \
         it on in v6.19 (after every modelled profile)",
    ),
    fi(
        PICK_BUDDY,
        true,
        K,
        BOTH,
        "pick_next_entity may return cfs_rq->next when it is eligible",
        &[(v(3, 0), true), (v(6, 6), false), (v(6, 14), true)],
        "CFS picked the next buddy unconditionally; v6.6-v6.13 EEVDF gated the pick by \
         NEXT_BUDDY (off); 2a77e4be12cb 'sched/fair: Untangle NEXT_BUDDY and pick_next_task()' \
         (v6.14) adds PICK_BUDDY",
    ),
    fi(
        CACHE_HOT_BUDDY,
        true,
        K,
        BOTH,
        "task_hot() treats the next buddy as cache hot when the destination is busy",
        ALWAYS,
        "present since v2.6.x",
    ),
    fi(
        DELAY_DEQUEUE,
        true,
        K,
        EEVDF,
        "a task that sleeps while ineligible stays queued (sched_delayed) until picked or woken",
        &[(v(6, 12), true)],
        "152e11f6df29 'sched/fair: Implement delayed dequeue' (v6.12)",
    ),
    fi(
        DELAY_ZERO,
        true,
        K,
        EEVDF,
        "clip positive lag to 0 when a delayed task is finally dequeued or woken",
        &[(v(6, 12), true)],
        "54a58a787791 'sched/fair: Implement DELAY_ZERO' (v6.12)",
    ),
    fi(
        WAKEUP_PREEMPTION,
        true,
        K,
        BOTH,
        "allow a waking task to preempt the running one at all (check_preempt_wakeup_fair)",
        ALWAYS,
        "present since v2.6.x",
    ),
    fi(
        HRTICK,
        false,
        K,
        BOTH,
        "end fair slices with an hrtimer instead of the periodic tick",
        NEVER,
        "off by default in every release",
    ),
    fi(
        HRTICK_DL,
        false,
        K,
        BOTH,
        "hrtick for SCHED_DEADLINE tasks (no effect on the fair model)",
        NEVER,
        "off by default in every release",
    ),
    fi(
        NONTASK_CAPACITY,
        true,
        K,
        BOTH,
        "subtract IRQ/steal time ([machine.cost] nontask_pct) from CPU capacity (scale_rt_capacity)",
        ALWAYS,
        "named NONTASK_POWER before v3.18",
    ),
    fi(
        TTWU_QUEUE,
        true,
        K,
        BOTH,
        "queue remote wakeups on the target CPU's wake list and send an IPI instead of taking \
         the remote rq lock (ttwu_queue_cond)",
        ALWAYS,
        "on since v3.0 (off only with PREEMPT_RT); the cross-LLC / idle-target conditions \
         changed over time and are modelled per version",
    ),
    fi(
        SIS_UTIL,
        true,
        K,
        BOTH,
        "limit select_idle_cpu's LLC scan by the LLC's utilisation (nr_idle_scan)",
        &[(v(6, 0), true)],
        "70fb5ccf2ebb 'sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of \
         util_avg' (v6.0)",
    ),
    fi(
        WARN_DOUBLE_CLOCK,
        false,
        K,
        BOTH,
        "debug warning on double update_rq_clock() (no scheduling effect)",
        NEVER,
        "debug only",
    ),
    fi(
        RT_PUSH_IPI,
        true,
        K,
        BOTH,
        "push RT tasks by IPI (no effect on the fair model)",
        &[(v(4, 1), true)],
        "b6366f048e0c 'sched/rt: Use IPI to trigger RT task push migration' (v4.1)",
    ),
    fi(
        RT_RUNTIME_SHARE,
        false,
        K,
        BOTH,
        "RT runtime borrowing between CPUs (no effect on the fair model)",
        &[(v(3, 0), true), (v(5, 16), false)],
        "2586af1ac187 'sched/rt: Disable RT_RUNTIME_SHARE by default' (release uncertain: \
         v5.16 assumed)",
    ),
    fi(
        LB_MIN,
        false,
        K,
        BOTH,
        "detach_tasks skips tasks with load < 16 while nr_balance_failed == 0",
        NEVER,
        "off by default in every release",
    ),
    fi(
        ATTACH_AGE_LOAD,
        true,
        K,
        BOTH,
        "age a task's PELT load when it is attached to a new cfs_rq after a migration",
        &[(v(4, 8), true)],
        "added with the 2016 PELT attach/detach rework; v4.8 assumed (between v4.2 and v4.12)",
    ),
    fi(
        WA_IDLE,
        true,
        K,
        BOTH,
        "wake_affine: pick this or prev CPU when one of them is idle (wake_affine_idle)",
        &[(v(4, 13), true)],
        "wake_affine rewrite (Peter Zijlstra, v4.13); before it wake_affine had no idle test",
    ),
    fi(
        WA_WEIGHT,
        true,
        K,
        BOTH,
        "wake_affine: compare this and prev CPU load (wake_affine_weight)",
        ALWAYS,
        "a feature from v4.13; before it the load comparison was unconditional",
    ),
    fi(
        WA_BIAS,
        true,
        K,
        BOTH,
        "wake_affine_weight biases the comparison by imbalance_pct toward prev CPU",
        ALWAYS,
        "a feature from v4.13; before it the imbalance_pct bias was unconditional",
    ),
    fi(
        UTIL_EST,
        true,
        K,
        BOTH,
        "use estimated utilisation (util_est) in cpu_util / task_util_est",
        &[(v(4, 17), true)],
        "7f65ea42eb00 'sched/fair: Add util_est on top of PELT' (v4.17)",
    ),
    fi(
        LATENCY_WARN,
        false,
        K,
        BOTH,
        "warn when need_resched stays pending too long (no scheduling effect)",
        NEVER,
        "debug only (v5.19)",
    ),
    fi(
        NI_RANDOM,
        true,
        K,
        BOTH,
        "run each domain's newidle balance only with probability = its recent success ratio",
        &[(v(6, 18), true)],
        "33cf66d88306 'sched/fair: Proportional newidle balance' (mainline v6.19, backported \
         to 6.18.5 and 6.12.y stable); modelled from v6.18",
    ),
    // ---- SCHED_FEATs of other kernels ----
    fi(
        GENTLE_FAIR_SLEEPERS,
        false,
        O,
        CFS,
        "CFS: a waking sleeper's vruntime credit is half a sched_latency instead of a whole one",
        &[(v(3, 0), true), (v(6, 6), false)],
        "removed by 5e963f2bd465 'sched/fair: Commit to EEVDF' (v6.6)",
    ),
    fi(
        START_DEBIT,
        false,
        O,
        CFS,
        "CFS: a new task starts one vslice after min_vruntime",
        &[(v(3, 0), true), (v(6, 6), false)],
        "removed by 5e963f2bd465 (v6.6)",
    ),
    fi(
        LAST_BUDDY,
        false,
        O,
        CFS,
        "CFS: prefer to run the task that a wakeup preempted (cfs_rq->last)",
        &[(v(3, 0), true), (v(6, 6), false)],
        "removed by 5e963f2bd465 (v6.6)",
    ),
    fi(
        LB_BIAS,
        false,
        O,
        BOTH,
        "balancing uses biased source_load/target_load (rq->cpu_load[] history)",
        &[(v(3, 0), true), (v(4, 20), false)],
        "fdf5f315d5cf 'sched/fair: Disable LB_BIAS by default' (v4.20), removed with \
         cpu_load[] in v5.x",
    ),
    fi(
        SIS_PROP,
        false,
        O,
        BOTH,
        "limit select_idle_cpu's scan by avg_idle / avg_scan_cost (proportional scan)",
        &[(v(4, 13), true), (v(6, 0), false)],
        "1ad3aaf3fcd2 'sched/core: Implement new approach to scale select_idle_cpu()' (v4.13); \
         off from v6.0 (SIS_UTIL), removed in v6.7/v6.8",
    ),
    fi(
        ALT_PERIOD,
        false,
        O,
        CFS,
        "CFS sched_slice: use h_nr_running for the period (alternative sched_slice)",
        &[(v(5, 13), true), (v(6, 6), false)],
        "0c2de3f054a5 'sched,fair: Alternative sched_slice()' (v5.13), removed v6.6",
    ),
    fi(
        BASE_SLICE,
        false,
        O,
        CFS,
        "CFS sched_slice: never below sched_min_granularity",
        &[(v(5, 13), true), (v(6, 6), false)],
        "0c2de3f054a5 (v5.13), removed v6.6",
    ),
    fi(
        UTIL_EST_FASTUP,
        true,
        O,
        BOTH,
        "util_est jumps up to util_avg immediately when utilisation increases",
        &[(v(5, 7), true)],
        "b8c96361402a (v5.7, release uncertain); the bit was removed in v6.9 making the \
         behaviour permanent",
    ),
    fi(
        HZ_BW,
        true,
        O,
        BOTH,
        "keep the tick on for a CPU running a bandwidth-constrained task (nohz_full)",
        &[(v(6, 6), true)],
        "88c56cfeaec4 (v6.6); the bit was removed by a58501fb8320 (v6.12), behaviour kept",
    ),
    fi(
        DOUBLE_TICK,
        false,
        O,
        BOTH,
        "let the periodic tick preempt while an hrtick is armed",
        NEVER,
        "off in every release; removed by e31488c9df27 (v6.13)",
    ),
    fi(
        NI_RATE,
        false,
        O,
        BOTH,
        "NI_RANDOM's success ratio also rises with a low newidle rate",
        &[(v(7, 0), true)],
        "9fe89f022c05 'sched/fair: More complex proportional newidle balance' (tip, Feb 2026; \
         after every modelled profile)",
    ),
    // ---- model switches ----
    fi(
        SHOULD_WE_BALANCE_IDLE_CORE,
        true,
        M,
        BOTH,
        "should_we_balance() prefers an idle CPU on a fully idle core over an idle SMT sibling \
         of a busy core",
        &[(v(6, 6), true)],
        "b1bfeab9b002 'sched/fair: Consider the idle state of the whole core for load balance' \
         (v6.6)",
    ),
    fi(
        GROUP_SMT_BALANCE,
        true,
        M,
        BOTH,
        "group_smt_balance: an idle CPU pulls one task off a non-local SMT group running more \
         than one task (smt_balance(), and the force_balance of such a group into a non-SMT \
         local group)",
        &[(v(6, 6), true)],
        "fee1759e4f04 'sched/fair: Determine active load balance for SMT sched groups' (v6.6)",
    ),
    fi(
        SMT_VS_NONSMT_SPARE,
        true,
        M,
        BOTH,
        "update_sd_pick_busiest(): between an SMT and a non-SMT has_spare group, never pick \
         the SMT group running at most one task",
        &[(v(6, 6), true)],
        "fee1759e4f04 'sched/fair: Determine active load balance for SMT sched groups' (v6.6)",
    ),
    fi(
        FULLY_BUSY_TIE_LATER,
        true,
        M,
        BOTH,
        "update_sd_pick_busiest(): of two fully_busy groups with equal avg_load (always 0 for \
         them) the later is picked unless the busiest is an SMT group. Off: the first stays",
        &[(v(6, 5), true)],
        "5fd6d7f43958 'sched/fair: Keep a fully_busy SMT sched group as busiest' (v6.5)",
    ),
    fi(
        PICK_BUSIEST_TIE_FIRST,
        true,
        M,
        BOTH,
        "update_sd_pick_busiest(): of two group_misfit_task groups with equal misfit load, or \
         two group_asym_packing groups whose preferred CPUs have equal priority, the first \
         stays. Off: the later is picked",
        &[(v(6, 9), true)],
        "7f1a7229718d 'sched/fair: Do strict inequality check for busiest misfit task group', \
         7e9f7d17fe6c 'sched/fair: Simplify the update_sd_pick_busiest() logic' (v6.9)",
    ),
    fi(
        SIBLING_IMBALANCE,
        true,
        M,
        BOTH,
        "prefer-sibling spreading evens tasks per core (sibling_imbalance()) instead of the \
         plain difference of nr_running",
        &[(v(6, 6), true)],
        "7ff1693236f5 'sched/fair: Implement prefer sibling imbalance calculation between \
         asymmetric groups' (v6.6)",
    ),
    fi(
        NEWIDLE_MIGRATION_COST_GATE,
        false,
        M,
        BOTH,
        "skip newidle balancing entirely when avg_idle < sysctl_sched_migration_cost",
        &[(v(3, 0), true), (v(5, 16), false)],
        "removed by c5b0a7eefc70 'sched/fair: Remove sysctl_sched_migration_cost condition' \
         (v5.16)",
    ),
    fi(
        NEWIDLE_FAIL_BUMP,
        false,
        M,
        BOTH,
        "a newidle balance that pulls nothing charges 1.5 x max_newidle_lb_cost (capped at \
         migration_cost + 200 ns)",
        &[(v(6, 17), true), (v(6, 18), false)],
        "155213a2aed4 'sched/fair: bump sd->max_newidle_lb_cost when newidle balance fails' \
         (v6.17); reverted by d206fbad9328 (v6.19, backported to 6.18.5)",
    ),
    fi(
        LB_SKIP_DELAYED,
        true,
        M,
        EEVDF,
        "can_migrate_task() refuses a delayed-dequeue (sleeping, still queued) task unless the \
         pass migrates load",
        &[(v(6, 14), true)],
        "61b82dfb6b7e 'sched/fair: Do not try to migrate delayed dequeue task' (v6.14); \
         not in 6.12.y (6.12.118 has no such test)",
    ),
    fi(
        LB_SKIP_INELIGIBLE,
        true,
        M,
        EEVDF,
        "can_migrate_task() refuses a task that is not eligible (negative lag) while the \
         destination has queued tasks, until the domain's balancing has failed once \
         (task_is_ineligible_on_dst_cpu(), with PLACE_LAG)",
        &[(v(6, 14), true)],
        "873199d27bb2 'sched/core: Prioritize migrating eligible tasks in sched_balance_rq()' \
         (v6.14); not in 6.12.y",
    ),
    fi(
        REWEIGHT_PLACE,
        true,
        M,
        EEVDF,
        "reweight_entity() takes a queued entity's clamped lag and relative deadline, scales \
         both by old/new weight (also a dequeued entity's relative deadline) and re-places it \
         with place_entity(); off: reweight_eevdf() scales vruntime and deadline around V \
         (v6.7-v6.12)",
        &[(v(6, 13), true)],
        "6d71a9c61604 'sched/fair: Fix EEVDF entity placement bug causing scheduling lag' \
         (sched_urgent_for_v6.13, v6.13); dropped from 6.12.11-rc2 (stable review, Jan 2025), \
         so 6.12.y keeps reweight_eevdf() (6.12.118 has it); reverted upstream by \
         101f3498b4bd (v7.0, after every modelled profile)",
    ),
    fi(
        TTWU_QUEUE_ON_CPU,
        true,
        M,
        BOTH,
        "a wakeup of a task still switching out on its CPU (p->on_cpu) is queued to that CPU",
        &[(v(5, 8), true)],
        "c6e7bd7afaeb 'sched/core: Optimize ttwu() spinning on p->on_cpu' (v5.8); a feature \
         bit only in the unmerged 2025 'ttwu_queue controls' patch",
    ),
    fi(
        TTWU_QUEUE_DELAYED,
        false,
        M,
        EEVDF,
        "wake a delayed-dequeued task through its CPU's wake list and re-select its CPU there",
        NEVER,
        "proposed in 'sched: Add ttwu_queue support for delayed tasks' (Peter Zijlstra, 2025); \
         not in mainline",
    ),
    fi(
        TTWU_QUEUE_DEFAULT,
        false,
        M,
        BOTH,
        "queue every same-LLC wakeup to a busy CPU via IPI (ttwu_queue_cond's final default)",
        NEVER,
        "proposed in 'sched: Add ttwu_queue controls' (2025), default off; not in mainline",
    ),
    fi(
        TTWU_QUEUE_L2C,
        false,
        M,
        BOTH,
        "queue every wakeup to a CPU that shares no L2 (cluster) with the waker, not only \
         cross-LLC ones, instead of taking the remote runqueue lock",
        NEVER,
        "proposed in 'sched: Skip queued wakeups only when L2 is shared' (Mathieu Desnoyers, \
         RFC v3, 2023-08-22, <20230822113133.643238-1-mathieu.desnoyers@efficios.com>): \
         ttwu_queue_cond() tests cpus_share_l2c() (the cluster mask) where mainline tests \
         cpus_share_cache(); not in mainline",
    ),
    fi(
        DL_SERVER,
        true,
        M,
        BOTH,
        "the per-CPU fair deadline server (50 ms / 1 s, defer mode) starts/stops with fair \
         activity",
        &[(v(6, 12), true)],
        "557a6bfc662c 'sched/fair: Add trivial fair server' and 5f6bd380c7bd 'sched/rt: \
         Remove default bandwidth control' (v6.12)",
    ),
    fi(
        DL_SERVER_LAZY_STOP,
        true,
        M,
        BOTH,
        "the dl_server stops only after a whole period without fair activity, not on every \
         1->0 transition",
        &[(v(6, 17), true)],
        "cccb45d7c429 'sched/deadline: Less agressive dl_server handling' (v6.17)",
    ),
    fi(
        RT_DEFAULT_BANDWIDTH,
        false,
        M,
        BOTH,
        "RT throttling of every CPU's root rt_rq: RT tasks get sched_rt_runtime_us per \
         sched_rt_period_us, fair tasks the rest",
        &[(v(3, 0), true), (v(6, 12), false)],
        "present since v2.6.25; 5f6bd380c7bd 'sched/rt: Remove default bandwidth control' \
         (v6.12) leaves it to RT_GROUP_SCHED, relying on the fair dl_server instead",
    ),
    fi(
        WAKEUP_STATS_ALLOWED,
        false,
        M,
        BOTH,
        "the slow path's group statistics (update_sg_wakeup_stats()) add up only the group's \
         CPUs the task may run on; off: every CPU of the group (the group's capacity is \
         sgc->capacity either way)",
        &[(v(6, 19), true)],
        "82d6e01a0699 'sched/fair: Only update stats for allowed CPUs when looking for dst \
         group' (v6.19); backported to the stable trees in July 2026 (6.12.y: Debian's \
         6.12.118 has it, 6.1.y: 6.1.192), after the v6.18 profile's 6.18.5",
    ),
    fi(
        PIPE_WAKE_ON_FREE,
        true,
        M,
        BOTH,
        "a pipe read that began with the pipe full wakes a waiting writer only once it freed \
         a slot (the pipe is no longer full); off: whether or not it freed one (the v5.5 rule)",
        &[(v(6, 14), true)],
        "aaec5a95d596 'pipe_read: don't wake up the writer if the pipe is still full' (Oleg \
         Nesterov, v6.14); not a scheduler feature: the engine's pipe wakeup rule \
         (Op::UpPage), a switch so that a revert can be compared on one kernel",
    ),
    // NUMA balancing switches; only read when NUMA balancing runs (kernel.numa_balancing and
    // more than one node). Sources and the release-keyed rest: src/sched/numa/features.rs.
    fi(
        NUMA_FAVOUR_HIGHER,
        false,
        O,
        BOTH,
        "can_migrate_task migrates a task even if cache hot when the move improves its NUMA \
         locality (migrate_improves_locality)",
        &[(v(3, 0), true), (v(4, 3), false)],
        "SCHED_FEAT(NUMA_FAVOUR_HIGHER, true), v3.13 (3a7053b3224f 'sched/numa: Favour moving \
         tasks towards the preferred node'); folded into the tri-state \
         migrate_degrades_locality in v4.3 (see NUMA_LOCALITY_TRISTATE)",
    ),
    fi(
        NUMA_RESIST_LOWER,
        false,
        O,
        BOTH,
        "can_migrate_task treats a move that degrades NUMA locality as cache hot",
        NEVER,
        "SCHED_FEAT(NUMA_RESIST_LOWER, false), v3.13-v4.2 ('potential to prevent a task ever \
         migrating to a new node due to CPU overload')",
    ),
    fi(
        NUMA_MIGRATE_PREFERRED_BUSY,
        true,
        M,
        BOTH,
        "task_numa_migrate searches the preferred node even when it has no free capacity \
         (off: the v3.16 rule, preferred node only if nr_running < task_capacity)",
        &[(v(3, 17), true)],
        "a43455a1d572 'sched/numa: Ensure task_numa_migrate() checks the preferred node' (Rik \
         van Riel, v3.17)",
    ),
    fi(
        NUMA_HAS_CAPACITY,
        false,
        M,
        BOTH,
        "numa_has_capacity(): a destination node is searched only if the source is more \
         loaded per unit of compute capacity (and not src has free capacity while dst has none)",
        &[(v(4, 2), true), (v(4, 19), false)],
        "6f9aad0bc372 [M] 'sched/numa: Only consider less busy nodes as numa balancing \
         destinations' (Rik van Riel, 2015, v4.2); removed with task_capacity in Srikar \
         Dronamraju's 2018 series (v4.19 [M])",
    ),
    fi(
        NUMA_HAS_CAPACITY_PCT,
        false,
        M,
        BOTH,
        "numa_has_capacity() compares loads with imbalance_pct slack (dst may be up to ~12% \
         busier per capacity)",
        &[(v(4, 3), true), (v(4, 19), false)],
        "'sched/numa: Consider imbalance_pct when comparing loads in numa_has_capacity()' \
         (Srikar Dronamraju, v4.3 [M]); every indexed 4.x tree has this form",
    ),
    fi(
        NUMA_CLASSIFY,
        true,
        M,
        BOTH,
        "numa_classify() node types: with spare capacity, move only if the load balancer's \
         imbalance allowance accepts it, straight to the cached idle CPU, and no swaps within \
         a group / between ungrouped tasks",
        &[(v(5, 7), true)],
        "Mel Gorman's 'sched/numa: Reconcile NUMA balancing decisions with the load balancer' \
         series, v5.7 (fb86f5b21192 [M])",
    ),
    fi(
        NUMA_LOCALITY_TRISTATE,
        true,
        M,
        BOTH,
        "migrate_degrades_locality() returns degrade / improve / don't care and overrides \
         task_hot(); resists pulling a task off its preferred node while the source rq has \
         worse-placed tasks",
        &[(v(4, 3), true)],
        "'sched/numa: Prefer NUMA hotness over cache hotness' (Srikar Dronamraju, v4.3 [M]); \
         the CPU_IDLE override as in v6.11-6.12",
    ),
];

impl Feature {
    /// Everything the registry knows about this feature.
    pub fn info(self) -> &'static FeatureInfo {
        &INFO[self as usize]
    }

    /// The kernel's name, e.g. `TTWU_QUEUE`.
    pub fn name(self) -> &'static str {
        NAMES[self as usize]
    }

    /// The feature with exactly this name.
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Look up a user-supplied name (case-insensitive); unknown names give an
    /// [`InputError`] listing close matches and pointing to `schedlab list features`.
    pub fn lookup(name: &str, origin: &str, key: &str) -> InputResult<Feature> {
        if let Some(f) = Feature::from_name(name) {
            return Ok(f);
        }
        if let Some(f) = Feature::ALL
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(name))
        {
            return Ok(f);
        }
        let names: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
        Err(InputError::with_key(
            origin,
            key,
            format!(
                "unknown scheduler feature '{}'{}; run `schedlab list features` for all {} \
                 names",
                crate::input::limits::clip(name),
                super::did_you_mean(name, &names),
                NR_FEATURES
            ),
        ))
    }

    /// Behaviour of this feature in kernel `version` (see [`FeatureInfo::history`]).
    pub fn value_at(self, version: KernelVersion) -> bool {
        self.info()
            .history
            .iter()
            .rev()
            .find(|(since, _)| *since <= version)
            .is_some_and(|&(_, on)| on)
    }
}

/// A group of settings that only make sense together: a mechanism, the switches that refine
/// it, and its tunables (`schedlab bisect` toggles a group as one change). Declared here,
/// next to the features, so the registry and the grouping cannot drift apart; a feature or
/// tunable in no group is a change of its own. The rule for membership: a member has no
/// effect, or no meaning, unless the group's first feature is on — or the kernel replaced
/// one member by another in a single commit.
#[derive(Debug)]
pub struct ChangeGroup {
    /// Short name used in tables (`delay_dequeue`).
    pub name: &'static str,
    pub features: &'static [Feature],
    /// Tunables of the group, by [`super::sysctl::SysctlInfo`] name.
    pub sysctls: &'static [&'static str],
    /// Why these belong together.
    pub why: &'static str,
}

/// Every declared group (a feature or tunable appears in at most one; a test checks it).
pub static CHANGE_GROUPS: &[ChangeGroup] = &[
    ChangeGroup {
        name: "delay_dequeue",
        features: &[DELAY_DEQUEUE, DELAY_ZERO],
        sysctls: &[],
        why: "DELAY_ZERO only acts on delayed-dequeued tasks (152e11f6df29, 54a58a787791)",
    },
    ChangeGroup {
        name: "fair_server",
        features: &[DL_SERVER, DL_SERVER_LAZY_STOP, RT_DEFAULT_BANDWIDTH],
        sysctls: &[
            "dl_server_runtime_ns",
            "dl_server_period_ns",
            "sched_rt_runtime_us",
            "sched_rt_period_us",
        ],
        why: "the fair dl_server replaced default RT throttling in one series (557a6bfc662c, \
              5f6bd380c7bd); lazy stop and the runtime/period knobs only act with it",
    },
    ChangeGroup {
        name: "buddy",
        features: &[NEXT_BUDDY, PICK_BUDDY],
        sysctls: &[],
        why: "PICK_BUDDY picks cfs_rq->next, which NEXT_BUDDY sets (2a77e4be12cb)",
    },
    ChangeGroup {
        name: "ttwu_queue",
        features: &[
            TTWU_QUEUE,
            TTWU_QUEUE_ON_CPU,
            TTWU_QUEUE_DELAYED,
            TTWU_QUEUE_DEFAULT,
            TTWU_QUEUE_L2C,
        ],
        sysctls: &[],
        why: "the refinements of the wake-list path act only when TTWU_QUEUE is on",
    },
    ChangeGroup {
        name: "sis_scan_limit",
        features: &[SIS_UTIL, SIS_PROP],
        sysctls: &[],
        why: "SIS_UTIL replaced SIS_PROP as select_idle_cpu's scan limit (70fb5ccf2ebb)",
    },
    ChangeGroup {
        name: "proportional_newidle",
        features: &[NI_RANDOM, NI_RATE],
        sysctls: &[],
        why: "NI_RATE refines NI_RANDOM's success ratio (9fe89f022c05)",
    },
    ChangeGroup {
        name: "util_est",
        features: &[UTIL_EST, UTIL_EST_FASTUP],
        sysctls: &[],
        why: "UTIL_EST_FASTUP only acts on util_est",
    },
    ChangeGroup {
        name: "cfs_slice",
        features: &[ALT_PERIOD, BASE_SLICE],
        sysctls: &[],
        why: "one commit (0c2de3f054a5)",
    },
    ChangeGroup {
        name: "smt_balance",
        features: &[GROUP_SMT_BALANCE, SMT_VS_NONSMT_SPARE],
        sysctls: &[],
        why: "one commit (fee1759e4f04)",
    },
    ChangeGroup {
        name: "numa_has_capacity",
        features: &[NUMA_HAS_CAPACITY, NUMA_HAS_CAPACITY_PCT],
        sysctls: &[],
        why: "the imbalance_pct slack only acts inside numa_has_capacity()",
    },
    ChangeGroup {
        name: "numa_locality",
        features: &[
            NUMA_LOCALITY_TRISTATE,
            NUMA_FAVOUR_HIGHER,
            NUMA_RESIST_LOWER,
        ],
        sysctls: &[],
        why: "the v4.3 tri-state migrate_degrades_locality() replaced the two v3.13 bits",
    },
    ChangeGroup {
        name: "numa_scan",
        features: &[],
        sysctls: &[
            "numa_balancing",
            "numa_balancing_scan_delay_ms",
            "numa_balancing_scan_period_min_ms",
            "numa_balancing_scan_period_max_ms",
            "numa_balancing_scan_size_mb",
        ],
        why: "the NUMA balancing switch and its scanner knobs",
    },
    ChangeGroup {
        name: "cfs_tunables",
        features: &[],
        sysctls: &[
            "sched_latency_ns",
            "sched_min_granularity_ns",
            "sched_wakeup_granularity_ns",
        ],
        why: "the CFS period and granularities are read together by sched_slice()",
    },
];

impl ChangeGroup {
    /// The group `feature` belongs to, if any.
    pub fn of_feature(feature: Feature) -> Option<&'static ChangeGroup> {
        CHANGE_GROUPS.iter().find(|g| g.features.contains(&feature))
    }

    /// The group tunable `name` belongs to, if any.
    pub fn of_sysctl(name: &str) -> Option<&'static ChangeGroup> {
        CHANGE_GROUPS.iter().find(|g| g.sysctls.contains(&name))
    }
}

/// Model code that reads the kernel release instead of a feature bit (`at_least(..)`,
/// `EevdfVersion`, `TtwuQueueRule`, `NumaVariant`): what changes in each release. Used to
/// describe the "release code" change of `schedlab bisect` (the part of a release that no
/// feature or tunable switches). Keep in step with the version checks of the model.
pub static VERSION_KEYED_CODE: &[(KernelVersion, &str)] = &[
    (v(3, 11), "select_task_rq_fair wake_affine path (wakeup)"),
    (v(3, 18), "NUMA balancing form v3.18 (numa)"),
    (v(3, 19), "find_idlest_cpu: v3.19 rules (wakeup/idlest)"),
    (v(4, 3), "select_task_rq_fair sd_flag rules (wakeup)"),
    (v(4, 9), "select_idle_sibling: idle-core scan (wakeup/sis)"),
    (v(4, 16), "select_idle_sibling recent_used_cpu (wakeup/sis)"),
    (v(4, 19), "NUMA balancing form v4.19 (numa)"),
    (v(5, 5), "find_idlest_group rewrite (wakeup/idlest)"),
    (v(5, 7), "asym-capacity select_idle_sibling; NUMA form v5.7"),
    (v(5, 8), "TtwuQueueRule: queue on p->on_cpu (engine)"),
    (v(5, 10), "asym-capacity shortcuts (wakeup/sis)"),
    (
        v(5, 12),
        "select_idle_sibling prev/target checks (wakeup/sis)",
    ),
    (v(5, 13), "recent_used_cpu unconditional (wakeup/sis)"),
    (v(5, 16), "select_idle_sibling v5.16 rules (wakeup/sis)"),
    (
        v(6, 0),
        "TtwuQueueRule: idle target in the same LLC (engine)",
    ),
    (v(6, 6), "EEVDF replaces CFS (mode)"),
    (v(6, 8), "cluster-aware select_idle_sibling (wakeup/sis)"),
    (
        v(6, 12),
        "EEVDF v6.12 code: did_preempt_short/do_preempt_short (fair)",
    ),
    (
        v(6, 14),
        "wake_affine_idle: sync wakeup ignores delayed tasks (wakeup/affine)",
    ),
    (
        v(6, 17),
        "EEVDF v6.17 code: vprot run-to-parity, resched at end of protection (fair)",
    ),
];

impl Feature {
    /// The release in `(lo, hi]` (or `(hi, lo]` when `lo > hi`) where this feature's
    /// behaviour last changed: what `schedlab bisect` tags a feature change with. `None`
    /// when its history has no entry in that range.
    pub fn changed_between(self, lo: KernelVersion, hi: KernelVersion) -> Option<KernelVersion> {
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        self.info()
            .history
            .iter()
            .filter(|(since, _)| a < *since && *since <= b)
            .map(|(since, _)| *since)
            .next_back()
    }
}

/// The kernel names, parallel to [`Feature::ALL`] (a test checks they equal the variant
/// names; `Debug` is not usable in const context).
static NAMES: [&str; NR_FEATURES] = [
    "PLACE_LAG",
    "PLACE_DEADLINE_INITIAL",
    "PLACE_REL_DEADLINE",
    "RUN_TO_PARITY",
    "PREEMPT_SHORT",
    "NEXT_BUDDY",
    "PICK_BUDDY",
    "CACHE_HOT_BUDDY",
    "DELAY_DEQUEUE",
    "DELAY_ZERO",
    "WAKEUP_PREEMPTION",
    "HRTICK",
    "HRTICK_DL",
    "NONTASK_CAPACITY",
    "TTWU_QUEUE",
    "SIS_UTIL",
    "WARN_DOUBLE_CLOCK",
    "RT_PUSH_IPI",
    "RT_RUNTIME_SHARE",
    "LB_MIN",
    "ATTACH_AGE_LOAD",
    "WA_IDLE",
    "WA_WEIGHT",
    "WA_BIAS",
    "UTIL_EST",
    "LATENCY_WARN",
    "NI_RANDOM",
    "GENTLE_FAIR_SLEEPERS",
    "START_DEBIT",
    "LAST_BUDDY",
    "LB_BIAS",
    "SIS_PROP",
    "ALT_PERIOD",
    "BASE_SLICE",
    "UTIL_EST_FASTUP",
    "HZ_BW",
    "DOUBLE_TICK",
    "NI_RATE",
    "SHOULD_WE_BALANCE_IDLE_CORE",
    "GROUP_SMT_BALANCE",
    "SMT_VS_NONSMT_SPARE",
    "FULLY_BUSY_TIE_LATER",
    "PICK_BUSIEST_TIE_FIRST",
    "SIBLING_IMBALANCE",
    "NEWIDLE_MIGRATION_COST_GATE",
    "NEWIDLE_FAIL_BUMP",
    "LB_SKIP_DELAYED",
    "LB_SKIP_INELIGIBLE",
    "REWEIGHT_PLACE",
    "TTWU_QUEUE_ON_CPU",
    "TTWU_QUEUE_DELAYED",
    "TTWU_QUEUE_DEFAULT",
    "TTWU_QUEUE_L2C",
    "DL_SERVER",
    "DL_SERVER_LAZY_STOP",
    "RT_DEFAULT_BANDWIDTH",
    "WAKEUP_STATS_ALLOWED",
    "PIPE_WAKE_ON_FREE",
    "NUMA_FAVOUR_HIGHER",
    "NUMA_RESIST_LOWER",
    "NUMA_MIGRATE_PREFERRED_BUSY",
    "NUMA_HAS_CAPACITY",
    "NUMA_HAS_CAPACITY_PCT",
    "NUMA_CLASSIFY",
    "NUMA_LOCALITY_TRISTATE",
];

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of feature values: the simulator's `sched_feat()`. Fixed-size, `Copy`, no heap.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    bits: [bool; NR_FEATURES],
}

impl Features {
    /// Every feature at its registry default (the v6.18 values).
    pub fn defaults() -> Features {
        let mut bits = [false; NR_FEATURES];
        for f in Feature::ALL {
            bits[*f as usize] = f.info().default;
        }
        Features { bits }
    }

    /// The behaviour of kernel `version`, from each feature's history.
    pub fn at_version(version: KernelVersion) -> Features {
        let mut bits = [false; NR_FEATURES];
        for f in Feature::ALL {
            bits[*f as usize] = f.value_at(version);
        }
        Features { bits }
    }

    /// `sched_feat(f)`.
    #[inline]
    pub fn on(&self, f: Feature) -> bool {
        self.bits[f as usize]
    }

    /// Set one feature (`echo [NO_]NAME > /sys/kernel/debug/sched/features`).
    #[inline]
    pub fn set(&mut self, f: Feature, on: bool) {
        self.bits[f as usize] = on;
    }

    /// Features whose value differs between `self` and `other`, in registry order.
    pub fn diff(&self, other: &Features) -> Vec<Feature> {
        Feature::ALL
            .iter()
            .copied()
            .filter(|&f| self.on(f) != other.on(f))
            .collect()
    }

    /// `(feature, value)` pairs in registry order.
    pub fn iter(&self) -> impl Iterator<Item = (Feature, bool)> + '_ {
        Feature::ALL.iter().map(|&f| (f, self.on(f)))
    }
}

impl Default for Features {
    fn default() -> Self {
        Features::defaults()
    }
}

impl fmt::Debug for Features {
    /// Like `/sys/kernel/debug/sched/features`: `NAME` when on, `NO_NAME` when off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<String> = self
            .iter()
            .map(|(feat, on)| {
                if on {
                    feat.name().to_string()
                } else {
                    format!("NO_{}", feat.name())
                }
            })
            .collect();
        f.write_str(&words.join(" "))
    }
}

impl schemars::JsonSchema for Features {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Features".into()
    }

    /// What [`Features`] serializes to: every feature by name, on or off.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Every scheduler feature (SCHED_FEAT and model switches) by name, in registry order: on (true) or off (false).",
            "type": "object",
            "additionalProperties": { "type": "boolean" }
        })
    }
}

impl serde::Serialize for Features {
    /// A map `NAME -> bool` in registry order.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(NR_FEATURES))?;
        for (f, on) in self.iter() {
            map.serialize_entry(f.name(), &on)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_indexed_by_discriminant_and_names_match_variants() {
        for (i, f) in Feature::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i);
            assert_eq!(INFO[i].feature, *f, "INFO[{i}] out of order");
            assert_eq!(
                f.name(),
                format!("{f:?}"),
                "NAMES[{i}] differs from the variant"
            );
        }
    }

    #[test]
    fn every_name_round_trips() {
        for f in Feature::ALL {
            assert_eq!(Feature::from_name(f.name()), Some(*f));
            assert_eq!(
                Feature::lookup(&f.name().to_lowercase(), "t", "k").unwrap(),
                *f,
                "lookup is case-insensitive"
            );
        }
        let mut names: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NR_FEATURES, "duplicate feature name");
    }

    #[test]
    fn kernel_defaults_match_v6_18_history() {
        // For every SCHED_FEAT of the v6.18 features.h, the transcribed default must equal
        // what the history says v6.18 does; for the others, default == v6.18 behaviour too.
        for f in Feature::ALL {
            assert_eq!(
                f.value_at(v(6, 18)),
                f.info().default,
                "{f}: history at v6.18 disagrees with the registry default"
            );
        }
    }

    #[test]
    fn features_h_defaults() {
        // kernel/sched/features.h (v6.18) values, hard-coded.
        let d = Features::defaults();
        for (f, on) in [
            (TTWU_QUEUE, true),
            (NEXT_BUDDY, false),
            (PLACE_LAG, true),
            (PLACE_DEADLINE_INITIAL, true),
            (PLACE_REL_DEADLINE, true),
            (RUN_TO_PARITY, true),
            (PREEMPT_SHORT, true),
            (PICK_BUDDY, true),
            (CACHE_HOT_BUDDY, true),
            (DELAY_DEQUEUE, true),
            (DELAY_ZERO, true),
            (WAKEUP_PREEMPTION, true),
            (HRTICK, false),
            (SIS_UTIL, true),
            (LB_MIN, false),
            (WA_IDLE, true),
            (WA_WEIGHT, true),
            (WA_BIAS, true),
            (UTIL_EST, true),
            (RT_RUNTIME_SHARE, false),
            (NI_RANDOM, true),
        ] {
            assert_eq!(d.on(f), on, "{f}");
            assert_eq!(f.info().kind, FeatureKind::Kernel, "{f}");
        }
    }

    #[test]
    fn unknown_name_suggests_close_matches() {
        let e =
            Feature::lookup("TTWU_QUEU", "scenario.toml", "kernel.features.TTWU_QUEU").unwrap_err();
        assert_eq!(e.origin, "scenario.toml");
        assert_eq!(e.key.as_deref(), Some("kernel.features.TTWU_QUEU"));
        assert!(e.message.contains("TTWU_QUEUE"), "{}", e.message);
        assert!(
            e.message.contains("schedlab list features"),
            "{}",
            e.message
        );
    }

    #[test]
    fn set_and_debug_format() {
        let mut f = Features::defaults();
        assert!(f.on(TTWU_QUEUE));
        f.set(TTWU_QUEUE, false);
        assert!(!f.on(TTWU_QUEUE));
        assert_eq!(Features::defaults().diff(&f), vec![TTWU_QUEUE]);
        let text = format!("{f:?}");
        assert!(text.starts_with("PLACE_LAG PLACE_DEADLINE_INITIAL"));
        assert!(text.contains(" NO_TTWU_QUEUE "));
    }

    #[test]
    fn history_semantics() {
        // Before the first entry: off; between entries: the last one at or before.
        assert!(!DELAY_DEQUEUE.value_at(v(6, 11)));
        assert!(DELAY_DEQUEUE.value_at(v(6, 12)));
        assert!(PICK_BUDDY.value_at(v(5, 15)));
        assert!(!PICK_BUDDY.value_at(v(6, 9)));
        assert!(PICK_BUDDY.value_at(v(6, 14)));
        assert!(NEWIDLE_MIGRATION_COST_GATE.value_at(v(5, 15)));
        assert!(!NEWIDLE_MIGRATION_COST_GATE.value_at(v(5, 16)));
        assert!(NEWIDLE_FAIL_BUMP.value_at(v(6, 17)));
        assert!(!NEWIDLE_FAIL_BUMP.value_at(v(6, 18)));
    }

    #[test]
    fn change_groups_are_disjoint_and_name_real_tunables() {
        let mut seen: Vec<Feature> = Vec::new();
        let mut knobs: Vec<&str> = Vec::new();
        for g in CHANGE_GROUPS {
            for f in g.features {
                assert!(!seen.contains(f), "{f} is in two groups");
                seen.push(*f);
            }
            for n in g.sysctls {
                assert!(!knobs.contains(n), "{n} is in two groups");
                assert!(
                    crate::kconfig::sysctl::SysctlInfo::find(n).is_some(),
                    "{}: no tunable named {n}",
                    g.name
                );
                knobs.push(n);
            }
        }
        assert_eq!(
            ChangeGroup::of_feature(DELAY_ZERO).unwrap().name,
            "delay_dequeue"
        );
        assert!(ChangeGroup::of_feature(PLACE_LAG).is_none());
        assert_eq!(
            ChangeGroup::of_sysctl("dl_server_runtime_ns").unwrap().name,
            "fair_server"
        );
    }

    #[test]
    fn changed_between_tags_the_last_toggle() {
        assert_eq!(
            DELAY_DEQUEUE.changed_between(v(6, 9), v(6, 15)),
            Some(v(6, 12))
        );
        assert_eq!(
            PICK_BUDDY.changed_between(v(6, 9), v(6, 15)),
            Some(v(6, 14))
        );
        // Reverse order gives the same release.
        assert_eq!(
            PICK_BUDDY.changed_between(v(6, 15), v(6, 9)),
            Some(v(6, 14))
        );
        assert_eq!(
            NEWIDLE_FAIL_BUMP.changed_between(v(6, 15), v(6, 18)),
            Some(v(6, 18))
        );
        assert_eq!(TTWU_QUEUE.changed_between(v(6, 9), v(6, 15)), None);
        let mut last = v(0, 0);
        for (r, _) in VERSION_KEYED_CODE {
            assert!(*r > last, "VERSION_KEYED_CODE out of release order at {r}");
            last = *r;
        }
    }

    #[test]
    fn serializes_in_registry_order() {
        let json = serde_json::to_string(&Features::defaults()).unwrap();
        assert!(json.starts_with("{\"PLACE_LAG\":true,\"PLACE_DEADLINE_INITIAL\":true"));
        let pos = |n: &str| json.find(&format!("\"{n}\"")).unwrap();
        assert!(pos("NI_RANDOM") < pos("GENTLE_FAIR_SLEEPERS"));
        assert!(pos("GENTLE_FAIR_SLEEPERS") < pos("DL_SERVER"));
    }
}
