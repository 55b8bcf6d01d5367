//! The kernel functions compiled by `build.rs`, wrapped by `shim/*_wrap.c`. Each block
//! exists only when its unit was built (`cfg(kdiff_<unit>_<version>)`).

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

#[cfg(kdiff_pelt_6_12)]
unsafe extern "C" {
    pub fn kd612_decay_load(val: u64, n: u64) -> u64;
    pub fn kd612_accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32;
    pub fn kd612_update_load(
        now: u64,
        sa: *mut KdSchedAvg,
        load: std::ffi::c_ulong,
        runnable: std::ffi::c_ulong,
        running: i32,
        avg_load: std::ffi::c_ulong,
    ) -> i32;
    pub fn kd612_update_load_se(
        now: u64,
        sa: *mut KdSchedAvg,
        weight: std::ffi::c_ulong,
        on_rq: i32,
        runnable: i32,
        running: i32,
        util_est_feat: i32,
    ) -> i32;
}

#[cfg(kdiff_menu_6_12)]
unsafe extern "C" {
    pub fn kd612_get_typical_interval(intervals: *const u32) -> u32;
}

#[cfg(kdiff_weights_6_12)]
unsafe extern "C" {
    pub fn kd612_calc_delta(
        delta_exec: u64,
        weight: std::ffi::c_ulong,
        lw_weight: std::ffi::c_ulong,
        inv_weight: *mut u32,
    ) -> u64;
    pub fn kd612_prio_to_weight(i: i32) -> i32;
    pub fn kd612_prio_to_wmult(i: i32) -> u32;
}
