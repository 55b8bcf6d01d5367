//! Load weights: the nice → weight table, its inverse, and the fixed-point
//! conversion of wall time into virtual time.
//!
//! Mirrors `kernel/sched/core.c` (`sched_prio_to_weight`, `sched_prio_to_wmult`),
//! `kernel/sched/fair.c` (`__update_inv_weight`, `__calc_delta`, `calc_delta_fair`) and
//! `kernel/sched/sched.h` (`NICE_0_LOAD`, `WEIGHT_IDLEPRIO`, `WMULT_IDLEPRIO`).
//!
//! **Scale.** On 64-bit kernels `se->load.weight` carries `SCHED_FIXEDPOINT_SHIFT` (10)
//! extra bits of resolution (`scale_load(w) = w << 10`, so the kernel's internal
//! `NICE_0_LOAD` is 1 << 20), and every place that matters here strips them again with
//! `scale_load_down()` before computing: `__calc_delta` (via `__update_inv_weight` and the
//! `fact` operand), `avg_vruntime_add/sub` (`avg_load`), PELT (`se_weight`), and lag
//! placement. We therefore store weights already scaled down (nice 0 = 1024), which is
//! exactly the value all of those computations see; the only kernel expression that
//! uses the full-resolution weight is the `vlag`/relative-deadline rescale in
//! `reweight_entity`, a ratio of two weights, where the extra bits cancel exactly.
//!
//! Left out: `SCHED_FIXEDPOINT_SHIFT` on 32-bit kernels (no extra resolution there, and
//! identical results for task weights).

/// `NICE_0_LOAD` as seen by every computation here (`scale_load_down(NICE_0_LOAD)`).
pub const NICE_0_LOAD: u64 = 1024;

/// `SCHED_FIXEDPOINT_SHIFT`: the extra resolution 64-bit kernels keep in `load.weight`
/// (documentation only; see the module doc for why we store scaled-down weights).
pub const SCHED_FIXEDPOINT_SHIFT: u32 = 10;

/// `WEIGHT_IDLEPRIO`: the weight of a `SCHED_IDLE` task.
pub const WEIGHT_IDLEPRIO: u64 = 3;

/// `WMULT_IDLEPRIO`: the inverse weight of a `SCHED_IDLE` task (2^32 / 3).
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;

/// `WMULT_CONST`: `~0U`, the numerator of computed inverse weights.
pub const WMULT_CONST: u64 = 0xffff_ffff;

/// `WMULT_SHIFT`.
pub const WMULT_SHIFT: u32 = 32;

/// `sched_prio_to_weight[]`, indexed by `nice + 20`. Each step is ~1.25x, so one nice
/// level changes the CPU share of two competing tasks by ~10%.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15,
];

/// `sched_prio_to_wmult[]`: precomputed `2^32 / weight` (each entry within 1 of the exact
/// quotient), indexed by `nice + 20`. Task weights use these table values as their
/// `inv_weight`, so `calc_delta_fair` results match the kernel bit for bit.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    /* -20 */ 48388, 59856, 76040, 92818, 118348, //
    /* -15 */ 147320, 184698, 229616, 287308, 360437, //
    /* -10 */ 449829, 563644, 704093, 875809, 1099582, //
    /*  -5 */ 1376151, 1717300, 2157191, 2708050, 3363326, //
    /*   0 */ 4194304, 5237765, 6557202, 8165337, 10153587, //
    /*   5 */ 12820798, 15790321, 19976592, 24970740, 31350126, //
    /*  10 */ 39045157, 49367440, 61356676, 76695844, 95443717, //
    /*  15 */ 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// Lowest nice value (`MIN_NICE`).
pub const MIN_NICE: i32 = -20;
/// Highest nice value (`MAX_NICE`).
pub const MAX_NICE: i32 = 19;

/// `struct load_weight`: a (scaled-down) weight and its 32-bit inverse.
///
/// `inv_weight == 0` never occurs here: the kernel lazily computes it
/// (`__update_inv_weight`) and we compute it eagerly in [`LoadWeight::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LoadWeight {
    /// `scale_load_down(load.weight)`: 1024 at nice 0.
    pub weight: u64,
    /// `load.inv_weight` ≈ 2^32 / weight.
    pub inv_weight: u32,
}

impl LoadWeight {
    /// A weight with its inverse computed as `__update_inv_weight` does
    /// (`WMULT_CONST / w`, 1 for huge weights, `WMULT_CONST` for 0). Used for runqueue
    /// loads and any weight that does not come from the nice table.
    pub fn new(weight: u64) -> Self {
        let inv_weight = if weight >= WMULT_CONST {
            1
        } else {
            // A zero weight gets WMULT_CONST, as in the kernel.
            u32::try_from(WMULT_CONST.checked_div(weight).unwrap_or(WMULT_CONST))
                .expect("at most WMULT_CONST = u32::MAX")
        };
        LoadWeight { weight, inv_weight }
    }

    /// `set_load_weight()` for a normal/batch task: table weight and table inverse.
    /// `nice` is clamped to [-20, 19] (callers validate user input before this).
    pub fn from_nice(nice: i32) -> Self {
        let idx = usize::try_from(nice.clamp(MIN_NICE, MAX_NICE) - MIN_NICE)
            .expect("clamped nice - MIN_NICE is in 0..=39");
        LoadWeight {
            weight: SCHED_PRIO_TO_WEIGHT[idx] as u64,
            inv_weight: SCHED_PRIO_TO_WMULT[idx],
        }
    }

    /// `set_load_weight()` for a `SCHED_IDLE` task.
    pub fn idle() -> Self {
        LoadWeight {
            weight: WEIGHT_IDLEPRIO,
            inv_weight: WMULT_IDLEPRIO,
        }
    }
}

/// `sched_prio_to_weight[nice + 20]` (nice clamped to [-20, 19]).
pub fn weight_of_nice(nice: i32) -> u64 {
    LoadWeight::from_nice(nice).weight
}

/// `__calc_delta(delta_exec, weight, lw)`: `delta_exec * weight / lw.weight` computed as
/// the kernel does, with the 32-bit inverse weight and a shift reduced until the
/// multiplier fits in 32 bits (`mul_u64_u32_shr` is an exact 96-bit product here).
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift = WMULT_SHIFT;
    while fact >> 32 != 0 {
        fact >>= 1;
        shift -= 1;
    }
    fact *= lw.inv_weight as u64;
    while fact >> 32 != 0 {
        fact >>= 1;
        shift -= 1;
    }
    mul_u64_u32_shr(
        delta_exec,
        u32::try_from(fact).expect("reduced below 2^32 just above"),
        shift,
    )
}

/// `mul_u64_u32_shr(a, mul, shift)` (include/linux/math64.h): the exact 96-bit product
/// shifted right, returned as `u64`.
// Kernel mirror: the kernel's `(u64)(((unsigned __int128)a * mul) >> shift)` keeps the low
// 64 bits of the shifted product on purpose of its return type, and so does this.
#[allow(clippy::cast_possible_truncation)]
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((u128::from(a) * u128::from(mul)) >> shift) as u64
}

/// `calc_delta_fair(delta, se)`: wall time → virtual time for an entity of load `lw`.
/// Unchanged at nice 0; otherwise `__calc_delta(delta, NICE_0_LOAD, lw)`.
pub fn calc_delta_fair(delta: u64, lw: &LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD {
        calc_delta(delta, NICE_0_LOAD, lw)
    } else {
        delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values_are_the_kernel_ones() {
        assert_eq!(weight_of_nice(0), 1024);
        assert_eq!(weight_of_nice(5), 335);
        assert_eq!(weight_of_nice(-20), 88761);
        assert_eq!(weight_of_nice(19), 15);
        assert_eq!(SCHED_PRIO_TO_WMULT[0], 48388);
        assert_eq!(SCHED_PRIO_TO_WMULT[20], 4194304);
        assert_eq!(SCHED_PRIO_TO_WMULT[39], 286331153);
        // Out-of-range nice clamps like the syscall does.
        assert_eq!(weight_of_nice(-30), 88761);
        assert_eq!(weight_of_nice(40), 15);
    }

    #[test]
    fn wmult_is_the_inverse_of_weight() {
        for i in 0..40 {
            let exact = (1u64 << 32) as f64 / SCHED_PRIO_TO_WEIGHT[i] as f64;
            let d = (SCHED_PRIO_TO_WMULT[i] as f64 - exact).abs();
            assert!(
                d < 1.0,
                "nice {} wmult {} vs {}",
                i32::try_from(i).expect("table index below 40") - 20,
                SCHED_PRIO_TO_WMULT[i],
                exact
            );
        }
    }

    #[test]
    fn weights_step_by_about_1_25() {
        for i in 0..39 {
            let r = SCHED_PRIO_TO_WEIGHT[i] as f64 / SCHED_PRIO_TO_WEIGHT[i + 1] as f64;
            assert!((1.19..1.31).contains(&r), "step {i}: {r}");
        }
    }

    #[test]
    fn calc_delta_fair_matches_ratio() {
        assert_eq!(
            calc_delta_fair(1_000_000, &LoadWeight::from_nice(0)),
            1_000_000
        );
        for nice in MIN_NICE..=MAX_NICE {
            let lw = LoadWeight::from_nice(nice);
            for delta in [1u64, 999, 1_000_000, 3_000_000, 123_456_789, 10_000_000_000] {
                let got = calc_delta_fair(delta, &lw) as f64;
                let want = delta as f64 * 1024.0 / lw.weight as f64;
                // The 32-bit inverse carries < 1/2^32 relative error per unit weight;
                // with the shift reduction the error stays below 1e-6 relative + 1 ns.
                assert!(
                    (got - want).abs() <= want * 1e-6 + 1.0,
                    "nice {nice} delta {delta}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn calc_delta_bit_exact_examples() {
        // nice 5: fact = 1024 * 12820798 = 13128497152 (> 2^32) -> shift down to 2^32 range.
        // 13128497152 >> 2 = 3282124288, shift 30: 3_000_000 * 3282124288 >> 30 = 9170149.
        assert_eq!(
            calc_delta_fair(3_000_000, &LoadWeight::from_nice(5)),
            9_170_149
        );
        // nice -20: fact = 1024 * 48388 = 49549312, shift 32.
        assert_eq!(
            calc_delta_fair(3_000_000, &LoadWeight::from_nice(-20)),
            (3_000_000u64 * 49_549_312) >> 32
        );
        // Runqueue-style computed inverse: (2^32-1)/2048.
        let lw = LoadWeight::new(2048);
        assert_eq!(lw.inv_weight, 2_097_151);
        assert_eq!(calc_delta(24_000_000, 1024, &lw), 11_999_994);
        assert_eq!(LoadWeight::new(0).inv_weight, u32::MAX);
    }

    #[test]
    fn idle_weight() {
        let lw = LoadWeight::idle();
        assert_eq!(lw.weight, 3);
        assert_eq!(calc_delta_fair(3, &lw), 1023);
    }
}
