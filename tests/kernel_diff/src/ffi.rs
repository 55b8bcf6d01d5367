//! The kernel functions compiled by `build.rs`, wrapped by `shim/*_wrap.c`. A block is
//! linked only when its unit was built (`cfg(kdiff_<unit>_<version>)`); otherwise each
//! function is a stub that panics, never called: the tests check [`crate::available`]
//! first and print SKIPPED.

use std::ffi::c_ulong;

/// Declares the functions of one unit: the C symbols when the unit was built, stubs
/// otherwise (so the crate builds without a kernel tree).
macro_rules! kernel_fns {
    ($cfg:meta; $(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;)*) => {
        #[cfg($cfg)]
        unsafe extern "C" {
            $(pub fn $name($($arg: $ty),*) -> $ret;)*
        }
        $(
            #[cfg(not($cfg))]
            #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
            pub unsafe fn $name($($arg: $ty),*) -> $ret {
                $(let _ = $arg;)*
                unreachable!(concat!(stringify!($name), ": its kernel unit was not built"))
            }
        )*
    };
}

/// `shim/pelt_wrap.c`'s flat copy of `struct sched_avg`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdSchedAvg {
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub period_contrib: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    pub util_est: u64,
}

kernel_fns! {
    kdiff_pelt_6_12;
    fn kd612_decay_load(val: u64, n: u64) -> u64;
    fn kd612_accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32;
    fn kd612_update_load(
        now: u64,
        sa: *mut KdSchedAvg,
        load: c_ulong,
        runnable: c_ulong,
        running: i32,
        avg_load: c_ulong,
    ) -> i32;
    fn kd612_update_load_se(
        now: u64,
        sa: *mut KdSchedAvg,
        weight: c_ulong,
        on_rq: i32,
        runnable: i32,
        running: i32,
        util_est_feat: i32,
    ) -> i32;
    fn kd612_util_est_update(
        util_avg: u64,
        runnable_avg: u64,
        util_est: u32,
        task_sleep: i32,
        cpu_capacity: c_ulong,
    ) -> u32;
}

kernel_fns! {
    kdiff_menu_6_12;
    fn kd612_get_typical_interval(intervals: *const u32) -> u32;
    fn kd612_menu_select(
        m: *mut KdMenu,
        states: *const [u64; 3],
        n: i32,
        inp: *const KdIdleIn,
        stop_tick: *mut i32,
    ) -> i32;
}

kernel_fns! {
    kdiff_teo_6_12;
    fn kd612_teo_select(
        c: *mut KdTeo,
        states: *const [u64; 3],
        n: i32,
        inp: *const KdTeoIn,
        stop_tick: *mut i32,
    ) -> i32;
    fn kd612_teo_reflect(c: *mut KdTeo, inp: *const KdTeoIn, state: i32) -> ();
}

/// `shim/teo_wrap.c`'s teo_cpu (bins: intercepts, hits; every field widened to 64 bits).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdTeo {
    pub time_span_ns: i64,
    pub sleep_length_ns: i64,
    pub bins: [[u64; 2]; 10],
    pub total: u64,
    pub tick_hits: u64,
}

/// `shim/teo_wrap.c`'s per-call inputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdTeoIn {
    pub tick_nsec: u64,
    pub tick_stopped: u64,
    pub sleep_length_ns: u64,
    pub delta_tick_ns: u64,
    pub latency_req_ns: i64,
    pub last_state_idx: i64,
    pub last_residency_ns: u64,
    pub now_ns: u64,
    pub got_tick: u64,
}

/// `shim/menu_wrap.c`'s menu_device (every field widened to u64).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdMenu {
    pub needs_update: u64,
    pub tick_wakeup: u64,
    pub next_timer_ns: u64,
    pub bucket: u64,
    pub correction_factor: [u64; 6],
    pub intervals: [u64; 8],
    pub interval_ptr: u64,
}

/// `shim/menu_wrap.c`'s per-call inputs (nohz, PM QoS, the device's last state).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdIdleIn {
    pub tick_nsec: u64,
    pub tick_stopped: u64,
    pub sleep_length_ns: u64,
    pub delta_tick_ns: u64,
    pub latency_req_ns: i64,
    pub last_state_idx: i64,
    pub last_residency_ns: u64,
}

kernel_fns! {
    kdiff_weights_6_12;
    fn kd612_calc_delta(
        delta_exec: u64,
        weight: c_ulong,
        lw_weight: c_ulong,
        inv_weight: *mut u32,
    ) -> u64;
    fn kd612_prio_to_weight(i: i32) -> i32;
    fn kd612_prio_to_wmult(i: i32) -> u32;
}

/// `shim/eevdf_wrap.c`'s entity.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdSe {
    pub weight: u64,
    pub vruntime: u64,
    pub deadline: u64,
    pub slice: u64,
    pub vlag: i64,
    pub inv_weight: u32,
    pub queued: u8,
    pub rel_deadline: u8,
    pub custom_slice: u8,
    pub pad: u8,
}

/// `shim/eevdf_wrap.c`'s runqueue description.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdRq {
    pub v0: u64,
    pub curr: i64,
    pub features: u64,
    pub base_slice: u64,
    pub tick_nsec: u64,
}

/// `shim/eevdf_wrap.c`'s outputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdOut {
    pub avg_vruntime: u64,
    pub pick: i64,
    pub eligible: u64,
    pub ret: i64,
    pub avg_sum: i64,
    pub avg_load: u64,
    pub nr_running: u64,
}

/// `shim/shim.h`'s sched_feat() bits.
pub mod feat {
    pub const UTIL_EST: u64 = 1 << 0;
    pub const PLACE_LAG: u64 = 1 << 1;
    pub const PLACE_DEADLINE_INITIAL: u64 = 1 << 2;
    pub const PLACE_REL_DEADLINE: u64 = 1 << 3;
    pub const RUN_TO_PARITY: u64 = 1 << 4;
    pub const PREEMPT_SHORT: u64 = 1 << 5;
    pub const GENTLE_FAIR_SLEEPERS: u64 = 1 << 6;
    pub const START_DEBIT: u64 = 1 << 7;
    pub const WAKEUP_PREEMPTION: u64 = 1 << 8;
    pub const DELAY_DEQUEUE: u64 = 1 << 9;
    pub const ALT_PERIOD: u64 = 1 << 10;
    pub const BASE_SLICE: u64 = 1 << 11;
}

/// `shim/eevdf_wrap.c`'s operations.
pub mod op {
    pub const QUERY: i32 = 0;
    pub const LAG: i32 = 1;
    pub const DEADLINE: i32 = 2;
    pub const PLACE: i32 = 3;
    pub const REWEIGHT: i32 = 4;
}

kernel_fns! {
    kdiff_eevdf_6_12;
    fn kd612_eevdf_op(
        rq: *const KdRq,
        ses: *mut KdSe,
        n: i32,
        op: i32,
        id: i32,
        arg: u64,
        out: *mut KdOut,
    ) -> i32;
}

/// `shim/cfs_wrap.c`'s entity.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdCfsSe {
    pub weight: u64,
    pub vruntime: u64,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub inv_weight: u32,
    pub queued: u8,
    pub idle: u8,
    pub pad: [u8; 2],
}

/// `shim/cfs_wrap.c`'s runqueue and tunables.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdCfsRq {
    pub min_vruntime: u64,
    pub clock_task: u64,
    pub features: u64,
    pub latency: u64,
    pub min_gran: u64,
    pub idle_min_gran: u64,
    pub wakeup_gran: u64,
    pub nr_latency: u64,
    pub curr: i64,
}

/// `shim/cfs_wrap.c`'s operations.
pub mod cfs_op {
    pub const SLICE: i32 = 0;
    pub const PLACE: i32 = 1;
    pub const TICK: i32 = 2;
    pub const WAKEUP_PREEMPT: i32 = 3;
}

kernel_fns! {
    kdiff_cfs_6_1;
    fn kd61_cfs_op(
        rq: *const KdCfsRq,
        ses: *const KdCfsSe,
        n: i32,
        op: i32,
        id: i32,
        arg: u64,
    ) -> i64;
}

/// `shim/balance_wrap.c`'s group statistics.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSgs {
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub group_misfit_task_load: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub group_weight: u32,
    pub group_asym_packing: u32,
    pub group_smt_balance: u32,
    pub nr_numa_running: u32,
    pub nr_preferred_running: u32,
    pub sg_imbalanced: u32,
}

kernel_fns! {
    kdiff_balance_6_12;
    fn kd612_group_classify(sgs: *const KdSgs, imbalance_pct: u32) -> u32;
}

kernel_fns! {
    kdiff_wakeup_6_1;
    fn kd61_wakeup_set_cpu(
        cpu: i32,
        nr_running: u32,
        h_nr_queued: u32,
        h_nr_runnable: u32,
        load: u64,
        capacity: u64,
        idle: i32,
        llc: i32,
    ) -> i32;
    fn kd61_wakeup_set_idle(cpu: i32, has_state: i32, exit_latency: u32, idle_stamp: u64, sched_idle: i32) -> i32;
    fn kd61_find_dst_group_cpu(span: *const u64, group_weight: u32, allowed: *const u64, this_cpu: i32) -> i32;
    fn kd61_sis_set_smt(cpu: i32, smt: *const u64) -> i32;
    fn kd61_select_idle(inp: *const KdSisIn, out: *mut KdSisOut) -> i32;
    fn kd61_sis_set_ids(cpu: i32, llc: i32, share: i32) -> i32;
    fn kd61_select_idle_sibling(
        inp: *const KdSisIn,
        prev: i32,
        recent: i32,
        smt_active: i32,
        out: *mut KdSiblingOut,
    ) -> i32;
}

kernel_fns! {
    kdiff_balance_6_1;
    fn kd61_lb_set_cpu(cpu: i32, idle: i32, prio: i32, capacity: u64, smt: *const u64) -> i32;
    fn kd61_should_we_balance(inp: *const KdSwbIn) -> i32;
    fn kd61_update_sd_pick_busiest(inp: *const KdPickIn) -> i32;
    fn kd61_can_migrate_task(inp: *const KdCmtIn, out: *mut KdCmtOut) -> i32;
    fn kd61_detach_tasks(inp: *const KdDtIn, t: *mut KdDtTask, out: *mut KdDtOut) -> i32;
}

/// `shim/numa_wrap.c`'s node statistics.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdNs {
    pub load: u64,
    pub runnable: u64,
    pub util: u64,
    pub compute_capacity: u64,
    pub nr_running: u32,
    pub weight: u32,
}

kernel_fns! {
    kdiff_numa_6_12;
    fn kd612_numa_classify(imbalance_pct: u32, ns: *const KdNs) -> u32;
    fn kd612_load_too_imbalanced(src_load: i64, dst_load: i64, src: *const KdNs, dst: *const KdNs) -> i32;
}

kernel_fns! {
    kdiff_wakeup_6_12;
    fn kd612_wakeup_set_cpu(
        cpu: i32,
        nr_running: u32,
        h_nr_queued: u32,
        h_nr_runnable: u32,
        load: u64,
        capacity: u64,
        idle: i32,
        llc: i32,
    ) -> i32;
    fn kd612_wake_affine_idle(this_cpu: i32, prev_cpu: i32, sync: i32) -> i32;
    fn kd612_wake_affine_weight(
        imbalance_pct: u32,
        p_load: u64,
        current_load: u64,
        this_cpu: i32,
        prev_cpu: i32,
        sync: i32,
        wa_bias: i32,
    ) -> i32;
}

/// `shim/balance_wrap.c`'s full group statistics.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSgsFull {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_misfit_task_load: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: u32,
}

/// `shim/balance_wrap.c`'s calculate_imbalance() inputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdImbIn {
    pub busiest: KdSgsFull,
    pub local: KdSgsFull,
    pub total_load: u64,
    pub total_capacity: u64,
    pub busiest_cores: u32,
    pub local_cores: u32,
    pub prefer_sibling: u32,
    pub sd_flags: u32,
    pub imb_numa_nr: u32,
    pub idle: u32,
    pub avg_load: u64,
}

/// `shim/balance_wrap.c`'s calculate_imbalance() outputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdImbOut {
    pub imbalance: i64,
    pub local_avg_load: u64,
    pub sds_avg_load: u64,
    pub migration_type: u32,
}

kernel_fns! {
    kdiff_balance_6_12;
    fn kd612_calculate_imbalance(inp: *const KdImbIn, out: *mut KdImbOut) -> i32;
    fn kd612_find_src_group(inp: *const KdFbgIn, out: *mut KdImbOut) -> i32;
    fn kd612_detach_tasks(inp: *const KdDtIn, t: *mut KdDtTask, out: *mut KdDtOut) -> i32;
}

/// `shim/balance_wrap.c`'s detach_tasks() task.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdDtTask {
    pub h_load: u64,
    pub util: u64,
    pub fits: u32,
    pub pinned: u32,
    pub detached: u32,
    pub failed_hot: u32,
}

/// `shim/balance_wrap.c`'s detach_tasks() input.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdDtIn {
    pub grpmask: KdMask,
    pub cpus: KdMask,
    pub onlysrc: KdMask,
    pub imbalance: i64,
    pub src_cpu: u32,
    pub dst_cpu: u32,
    pub idle: u32,
    pub flags: u32,
    pub nr_balance_failed: u32,
    pub sd_flags: u32,
    pub src_nr_running: u32,
    pub migration_type: u32,
    pub loop_max: u32,
    pub loop_break: u32,
    pub lb_min: u32,
    pub n: u32,
}

/// `shim/balance_wrap.c`'s detach_tasks() output.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdDtOut {
    pub imbalance: i64,
    pub detached: u32,
    pub flags: u32,
    pub loop_: u32,
    pub loop_break: u32,
    pub src_nr_running: u32,
    pub new_dst_cpu: u32,
    pub order: [u32; 64],
}

/// `shim/balance_wrap.c`'s sched_balance_find_src_group() input.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdFbgIn {
    pub imb: KdImbIn,
    pub has_busiest: u32,
    pub busiest_flags: u32,
    pub local_flags: u32,
    pub imbalance_pct: u32,
}

/// `shim/cpumask.h`'s mask: 512 bits.
pub type KdMask = [u64; 8];

/// `shim/balance_wrap.c`'s should_we_balance() inputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSwbIn {
    pub balance_mask: KdMask,
    pub cpus: KdMask,
    pub dst_cpu: u32,
    pub idle: u32,
    pub sd_flags: u32,
    pub nr_running: u32,
    pub ttwu_pending: u32,
}

/// `shim/balance_wrap.c`'s group for update_sd_pick_busiest().
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSg {
    pub min_capacity: u64,
    pub max_capacity: u64,
    pub asym_prefer_cpu: i32,
    pub flags: i32,
}

/// `shim/balance_wrap.c`'s update_sd_pick_busiest() inputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdPickIn {
    pub sgs: KdSgsFull,
    pub busiest_stat: KdSgsFull,
    pub sg: KdSg,
    pub busiest: KdSg,
    pub has_busiest: u32,
    pub local_group_type: u32,
    pub sd_flags: u32,
    pub dst_cpu: u32,
    pub dst_core_idle: u32,
}

kernel_fns! {
    kdiff_balance_6_12;
    fn kd612_lb_set_cpu(cpu: i32, idle: i32, prio: i32, capacity: u64, smt: *const u64) -> i32;
    fn kd612_should_we_balance(inp: *const KdSwbIn) -> i32;
    fn kd612_update_sd_pick_busiest(inp: *const KdPickIn) -> i32;
}

kernel_fns! {
    kdiff_wakeup_6_12;
    fn kd612_wakeup_set_idle(
        cpu: i32,
        has_state: i32,
        exit_latency: u32,
        idle_stamp: u64,
        sched_idle: i32,
    ) -> i32;
    fn kd612_find_dst_group_cpu(
        span: *const u64,
        group_weight: u32,
        allowed: *const u64,
        this_cpu: i32,
    ) -> i32;
}

/// `shim/numa_wrap.c`'s task, mm, group and sysctls for the scan-period functions.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdScan {
    pub rss: u64,
    pub priv_faults: u64,
    pub shared_faults: u64,
    pub locality: [u64; 3],
    pub scan_size: u32,
    pub period_min: u32,
    pub period_max: u32,
    pub refcount: u32,
    pub has_group: u32,
    pub numa_scan_period: u32,
    pub numa_scan_period_max: u32,
}

/// `shim/numa_wrap.c`'s scan-period outputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdScanOut {
    pub numa_next_scan: u64,
    pub locality: [u64; 3],
    pub scan_min: u32,
    pub scan_start: u32,
    pub scan_max: u32,
    pub numa_scan_period: u32,
}

kernel_fns! {
    kdiff_numa_6_12;
    fn kd612_scan_period(inp: *const KdScan, shared: u64, private: u64, out: *mut KdScanOut) -> i32;
}

/// A [`schedlab::cpumask::CpuMask`] as the shim's 512-bit mask (CPUs ≥ 512 dropped).
pub fn kd_mask(m: &schedlab::cpumask::CpuMask) -> KdMask {
    let mut out = [0u64; 8];
    for cpu in m.iter().take_while(|&c| c < 512) {
        out[cpu / 64] |= 1 << (cpu % 64);
    }
    out
}

/// `shim/balance_wrap.c`'s can_migrate_task() inputs.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdCmtIn {
    pub grpmask: KdMask,
    pub cpus: KdMask,
    pub allowed: KdMask,
    pub clock_task: u64,
    pub exec_start: u64,
    pub migration_cost: u32,
    pub src_cpu: u32,
    pub dst_cpu: u32,
    pub idle: u32,
    pub flags: u32,
    pub nr_balance_failed: u32,
    pub cache_nice_tries: u32,
    pub sd_flags: u32,
    pub dst_nr_running: u32,
    pub running: u32,
    pub idle_policy: u32,
    pub next_buddy: u32,
    pub cache_hot_buddy: u32,
    pub mdl: i32,
}

/// `shim/balance_wrap.c`'s can_migrate_task() outputs: the schedstats, the answer,
/// `env->flags`, `env->new_dst_cpu`, `p->sched_task_hot`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdCmtOut {
    pub affine: u64,
    pub running: u64,
    pub hot: u64,
    pub forced: u64,
    pub ret: u32,
    pub flags: u32,
    pub new_dst_cpu: u32,
    pub sched_task_hot: u32,
}

kernel_fns! {
    kdiff_balance_6_12;
    fn kd612_can_migrate_task(inp: *const KdCmtIn, out: *mut KdCmtOut) -> i32;
}

/// `shim/numa_wrap.c`'s node-score inputs: the task's and group's fault arrays
/// (`task_faults_idx()` layout, 8 nodes), totals, the distance table, four `dist` limits.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KdNwIn {
    pub task_faults: [u64; 64],
    pub group_faults: [u64; 64],
    pub total_numa_faults: u64,
    pub group_total_faults: u64,
    pub dist: [[i32; 8]; 8],
    pub lim: [i32; 4],
    pub nr_nodes: u32,
    pub has_faults: u32,
    pub has_group: u32,
}

/// `shim/numa_wrap.c`'s node scores per node and limit, and the topology type.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdNwOut {
    pub task_weight: [[u64; 4]; 8],
    pub group_weight: [[u64; 4]; 8],
    pub topology_type: u32,
}

kernel_fns! {
    kdiff_numa_6_12;
    fn kd612_numa_weights(inp: *const KdNwIn, out: *mut KdNwOut) -> i32;
}

/// `shim/numa_wrap.c`'s task for `task_numa_find_cpu()`: faults (`task_faults_idx()` layout,
/// 4 nodes), total, `task_h_load()`, affinity (bit per CPU), preferred node (-1: none), group
/// (-1: none), PF_EXITING, whether `numa_faults` is allocated.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KdNcTask {
    pub faults: [u64; 32],
    pub total_faults: u64,
    pub h_load: u64,
    pub cpus: u64,
    pub preferred_nid: i32,
    pub group: i32,
    pub exiting: i32,
    pub has_faults: i32,
}

/// `shim/numa_wrap.c`'s `struct numa_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdNcStats {
    pub ns: KdNs,
    pub node_type: u32,
    pub idle_cpu: i32,
}

/// `shim/numa_wrap.c`'s `task_numa_find_cpu()` case: tasks (0 is `env->p`), groups, the
/// distance table, the CPUs' nodes, current tasks (-1: idle), `idle_cpu()`,
/// `numa_migrate_on`, and `struct task_numa_env`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KdNcIn {
    pub task: [KdNcTask; 33],
    pub group_faults: [[u64; 32]; 2],
    pub group_total_faults: [u64; 2],
    pub dist: [[i32; 8]; 8],
    pub cpu_node: [i32; 32],
    pub curr: [i32; 32],
    pub idle: [u32; 32],
    pub migrate_on: [u32; 32],
    pub src_stats: KdNcStats,
    pub dst_stats: KdNcStats,
    pub best_imp: i64,
    pub taskimp: i64,
    pub groupimp: i64,
    pub nr_nodes: i32,
    pub nr_cpus: i32,
    pub src_cpu: i32,
    pub src_nid: i32,
    pub dst_cpu: i32,
    pub dst_nid: i32,
    pub imb_numa_nr: i32,
    pub imbalance_pct: i32,
    pub dist_lim: i32,
    pub best_task: i32,
    pub best_cpu: i32,
    pub pad: i32,
}

/// The search state after `task_numa_find_cpu()`, and the CPUs whose `numa_migrate_on` is set.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdNcOut {
    pub best_imp: i64,
    pub migrate_on: u64,
    pub best_task: i32,
    pub best_cpu: i32,
    pub dst_cpu: i32,
    pub pad: i32,
}

kernel_fns! {
    kdiff_numa_6_12;
    fn kd612_numa_find_cpu(inp: *const KdNcIn, out: *mut KdNcOut) -> i32;
}

kernel_fns! {
    kdiff_numa_6_1;
    fn kd61_numa_classify(imbalance_pct: u32, ns: *const KdNs) -> u32;
    fn kd61_load_too_imbalanced(src_load: i64, dst_load: i64, src: *const KdNs, dst: *const KdNs) -> i32;
    fn kd61_scan_period(inp: *const KdScan, shared: u64, private: u64, out: *mut KdScanOut) -> i32;
    fn kd61_numa_weights(inp: *const KdNwIn, out: *mut KdNwOut) -> i32;
    fn kd61_numa_find_cpu(inp: *const KdNcIn, out: *mut KdNcOut) -> i32;
}

/// `shim/wakeup_wrap.c`'s scan inputs (op 0: select_idle_cpu, 1: select_idle_smt).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSisIn {
    pub span: KdMask,
    pub allowed: KdMask,
    pub group_span: KdMask,
    pub target: u32,
    pub has_idle_core: u32,
    pub group_flags: u32,
    pub cluster_active: u32,
    pub has_sds: u32,
    pub nr_idle_scan: u32,
    pub sis_util: u32,
    pub nr_cpu_ids: u32,
    pub has_idle_cores: u32,
    pub op: u32,
    /// 6.1's SIS_PROP: its bit, `jiffies`, the waking CPU's `wake_avg_idle` / `wake_stamp`
    /// and its LLC's `avg_scan_cost`.
    pub sis_prop: u32,
    pub pad: u32,
    pub jiffies: u64,
    pub wake_avg_idle: u64,
    pub wake_stamp: u64,
    pub avg_scan_cost: u64,
}

/// `shim/wakeup_wrap.c`'s scan result: the CPU (-1: none), has_idle_cores afterwards, SIS_PROP's
/// state afterwards.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdSisOut {
    pub cpu: i32,
    pub has_idle_cores: u32,
    /// SIS_PROP's state afterwards (the inputs unchanged where SIS_PROP did not run).
    pub wake_avg_idle: u64,
    pub wake_stamp: u64,
    pub avg_scan_cost: u64,
}

kernel_fns! {
    kdiff_wakeup_6_12;
    fn kd612_sis_set_smt(cpu: i32, smt: *const u64) -> i32;
    fn kd612_select_idle(inp: *const KdSisIn, out: *mut KdSisOut) -> i32;
    fn kd612_sis_set_ids(cpu: i32, llc: i32, share: i32) -> i32;
    fn kd612_select_idle_sibling(
        inp: *const KdSisIn,
        prev: i32,
        recent: i32,
        smt_active: i32,
        out: *mut KdSiblingOut,
    ) -> i32;
}

/// `shim/wakeup_wrap.c`'s `select_idle_sibling()` result: the CPU, the LLC's
/// `has_idle_cores` and `p->recent_used_cpu` afterwards.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdSiblingOut {
    pub cpu: i32,
    pub has_idle_cores: u32,
    pub recent_used_cpu: i32,
    pub pad: u32,
}

/// `shim/sglb_wrap.c`'s per-CPU runqueue state of update_sg_lb_stats().
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSglbCpu {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub misfit: u64,
    pub capacity: u64,
    pub arch_capacity: u64,
    pub nr_running: u32,
    pub h_nr_queued: u32,
    pub nr_numa: u32,
    pub nr_pref: u32,
    pub idle: i32,
    pub overutil: i32,
    pub prio: i32,
    pub pad: i32,
    pub smt: KdMask,
}

/// `shim/sglb_wrap.c`'s group, domain and lb_env of one update_sg_lb_stats() call.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdSglbIn {
    pub span: KdMask,
    pub cpus: KdMask,
    pub group_capacity: u64,
    pub group_weight: u32,
    pub imbalance: u32,
    pub group_flags: u32,
    pub sd_flags: u32,
    pub imbalance_pct: u32,
    pub dst_cpu: u32,
    pub idle: u32,
    pub local: u32,
    pub asym_prefer_cpu: i32,
    pub smt_active: i32,
}

/// `struct sg_lb_stats` in full and the two flags update_sg_lb_stats() raises.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdSglbOut {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub group_misfit_task_load: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: u32,
    pub group_asym_packing: u32,
    pub group_smt_balance: u32,
    pub nr_numa_running: u32,
    pub nr_preferred_running: u32,
    pub sg_overloaded: u32,
    pub sg_overutilized: u32,
    pub pad: u32,
}

kernel_fns! {
    kdiff_sglb_6_12;
    fn kd612_sglb_set_cpu(cpu: i32, c: *const KdSglbCpu) -> i32;
    fn kd612_update_sg_lb_stats(inp: *const KdSglbIn, out: *mut KdSglbOut) -> i32;
}

/// `shim/dstgroup_wrap.c`'s per-CPU runqueue (`curr`: 0 the idle task, 1 p, 2 another task).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdDgCpu {
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub capacity: u64,
    pub arch_capacity: u64,
    pub nr_running: u32,
    pub h_nr_queued: u32,
    pub ttwu_pending: u32,
    pub curr: u32,
    pub node: i32,
    pub pad: i32,
}

/// The most groups one domain may pass (`KD_DG_MAX_GROUPS`).
pub const KD_DG_MAX_GROUPS: usize = 64;

/// One group of `shim/dstgroup_wrap.c`'s domain.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct KdDgGroup {
    pub span: KdMask,
    pub capacity: u64,
    pub max_capacity: u64,
    pub group_weight: u32,
    pub imbalance: u32,
}

/// `shim/dstgroup_wrap.c`'s inputs: the domain's groups in circular order, the task.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KdDgIn {
    pub groups: [KdDgGroup; KD_DG_MAX_GROUPS],
    pub allowed: KdMask,
    pub last_update_time: u64,
    pub task_util: u64,
    pub nr_groups: u32,
    pub sd_flags: u32,
    pub imbalance_pct: u32,
    pub imb_numa_nr: u32,
    pub this_cpu: i32,
    pub task_cpu: i32,
    pub on_rq: i32,
    pub numa_preferred_nid: i32,
}

/// `update_sg_wakeup_stats()`'s result for one group (`computed`: the group has allowed CPUs).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KdDgSgs {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub group_misfit_task_load: u64,
    pub sum_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: u32,
    pub computed: u32,
    pub pad: u32,
}

/// `shim/dstgroup_wrap.c`'s outputs: every group's statistics and the chosen group.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KdDgOut {
    pub sgs: [KdDgSgs; KD_DG_MAX_GROUPS],
    pub chosen: i32,
    pub pad: u32,
}

kernel_fns! {
    kdiff_dstgroup_6_12;
    fn kd612_dstgroup_set_cpu(cpu: i32, c: *const KdDgCpu) -> i32;
    fn kd612_find_dst_group(inp: *const KdDgIn, out: *mut KdDgOut) -> i32;
}

kernel_fns! {
    kdiff_dstgroup_6_1;
    fn kd61_dstgroup_set_cpu(cpu: i32, c: *const KdDgCpu) -> i32;
    fn kd61_find_dst_group(inp: *const KdDgIn, out: *mut KdDgOut) -> i32;
}
