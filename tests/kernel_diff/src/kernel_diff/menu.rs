//! cpuidle menu governor (drivers/cpuidle/governors/menu.c of linux 6.12) against
//! src/cpuidle/menu.rs.

use crate::{assert_no_mismatch, available, cases, compare};
use proptest::prelude::*;
use schedlab::cpuidle::menu::{INTERVALS, MenuDevice, get_typical_interval};

const V: &str = "6.12";

/// Eight recent idle intervals (µs) as `menu_update_intervals()` stores them (unsigned
/// int): regular patterns with small noise (where a typical interval is found), patterns
/// with outliers (the threshold loop), zeros, and anything up to UINT_MAX (above INT_MAX
/// a value is never kept).
pub(crate) fn intervals() -> impl Strategy<Value = [u32; INTERVALS]> {
    let noisy = (1u32..5_000_000, 0u32..64).prop_flat_map(|(base, noise)| {
        proptest::array::uniform8(prop_oneof![
            6 => (0..=2 * noise).prop_map(move |n| (base + n).saturating_sub(noise)),
            1 => any::<u32>(),
            1 => 0u32..100,
        ])
    });
    prop_oneof![
        4 => noisy,
        1 => proptest::array::uniform8(0u32..1000),
        1 => proptest::array::uniform8(any::<u32>()),
        1 => proptest::array::uniform8(prop_oneof![Just(0u32), Just(i32::MAX as u32), Just(u32::MAX), Just(i32::MAX as u32 + 1)]),
    ]
}

pub(crate) fn rust_typical(iv: &[u32; INTERVALS]) -> u64 {
    let mut d = MenuDevice::new();
    d.intervals = iv.map(u64::from);
    get_typical_interval(&d)
}

#[test]
fn get_typical_interval_matches() {
    if !available("menu", V) {
        return;
    }
    assert_no_mismatch(
        "menu::get_typical_interval",
        V,
        cases(5000),
        intervals(),
        |iv| {
            // SAFETY: reads eight u32.
            let k = unsafe { crate::ffi::kd612_get_typical_interval(iv.as_ptr()) };
            compare("get_typical_interval", &u64::from(k), &rust_typical(iv))
        },
    );
}
