//! Named, asserted numeric conversions (issue 29): the one place where a lossy `as` cast
//! happens, after an assertion that it loses nothing the caller did not ask to lose.
//!
//! `engine`, `policy` and `stats` deny `clippy::cast_possible_truncation` and
//! `clippy::cast_sign_loss`; they convert with `try_from` (with an `expect` that says why the
//! value fits) or with a helper of this module, one per meaning, that documents the rounding.
//! This module is outside those lints on purpose: its casts are the asserted ones.
//! Every float helper asserts that its value is finite, non-negative and below the target's
//! range, so a NaN or a negative time stops the run instead of turning silently into 0.

use crate::cpumask::NR_CPUS_MAX;

// schedlab runs on 64-bit hosts: `u64` counts and indices convert to `usize` losslessly.
const _: () = assert!(
    usize::BITS == 64,
    "schedlab needs a 64-bit host (usize = u64)"
);

/// A CPU number (an index into the machine's CPUs) as the `u32` that events and records keep.
/// Fits: CPU numbers are below [`NR_CPUS_MAX`] (1024), which every topology is checked against.
#[inline]
pub fn cpu_u32(cpu: usize) -> u32 {
    assert!(cpu < NR_CPUS_MAX, "CPU {cpu} exceeds NR_CPUS_MAX");
    u32::try_from(cpu).expect("below NR_CPUS_MAX")
}

/// A number of CPUs (a mask's weight, a group's or an LLC's size) as a `u32`. Fits: at most
/// [`NR_CPUS_MAX`] (1024).
#[inline]
pub fn cpu_count_u32(n: usize) -> u32 {
    assert!(n <= NR_CPUS_MAX, "{n} CPUs exceed NR_CPUS_MAX");
    u32::try_from(n).expect("at most NR_CPUS_MAX")
}

/// A NUMA node id as the `u16` the memory model keeps per page group. Fits: the kernel
/// allows at most 1024 nodes (`NODES_SHIFT` <= 10); a machine with more is refused here.
#[inline]
pub fn node_u16(nid: usize) -> u16 {
    u16::try_from(nid).expect("NUMA node id above u16::MAX")
}

/// A `u64` count, index or length as a `usize`: lossless, `usize` is 64 bits (asserted above
/// at compile time).
#[inline]
pub fn usize_from_u64(x: u64) -> usize {
    usize::try_from(x).expect("usize is 64 bits")
}

/// A time or an amount of work in ns computed in `u128` (to keep an intermediate product
/// exact), back in `u64`: saturates at `u64::MAX` ns (584 years, past the end of any run),
/// where a bare `as` would wrap to a small, wrong value.
#[inline]
pub fn ns_saturating(ns: u128) -> u64 {
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// `x` (already rounded by the caller's helper) as `u64`, after checking that it is finite,
/// non-negative and below 2^64; `what` names the quantity in the panic message.
#[inline]
fn f64_to_u64(x: f64, what: &str) -> u64 {
    assert!(
        (0.0..18_446_744_073_709_551_616.0).contains(&x),
        "{what} {x} is not a finite non-negative value below 2^64"
    );
    // The assertion leaves only values that `as` converts exactly once their fraction is
    // dropped (the callers round first, and say how in their names).
    x as u64
}

/// A time in nanoseconds computed in floating point (an exponential sample, a scaled
/// duration) as whole nanoseconds, truncated toward zero: the sub-nanosecond part is dropped.
#[inline]
pub fn ns_trunc(ns: f64) -> u64 {
    f64_to_u64(ns.trunc(), "time (ns)")
}

/// A ratio or factor expressed in parts per million (the caller multiplies by 1e6), rounded
/// to the nearest ppm, halves away from zero (`f64::round`).
#[inline]
pub fn ppm_round(ppm: f64) -> u64 {
    f64_to_u64(ppm.round(), "ppm value")
}

/// A count (events, accesses, a mean number of events) computed in floating point, rounded
/// to the nearest, halves away from zero (`f64::round`).
#[inline]
pub fn count_round(x: f64) -> u64 {
    f64_to_u64(x.round(), "count")
}

/// A count computed in floating point, rounded down (the fraction is carried by the caller or
/// dropped).
#[inline]
pub fn count_floor(x: f64) -> u64 {
    f64_to_u64(x.floor(), "count")
}

/// A count computed in floating point that must not fall short (a rank, a number of digits),
/// rounded up, as a `usize`.
#[inline]
pub fn count_ceil(x: f64) -> usize {
    usize_from_u64(f64_to_u64(x.ceil(), "count"))
}

/// The decimal exponent of `v` (`floor(log10(|v|))`: 2 for 123.4, -3 for 0.0012), for
/// choosing how many decimals to print. `v` must be finite and non-zero.
#[inline]
pub fn decimal_exponent(v: f64) -> i32 {
    assert!(v.is_finite() && v != 0.0, "decimal exponent of {v}");
    // |log10| of a finite non-zero f64 is below 324: the cast is exact.
    v.abs().log10().floor() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_helpers_round_as_documented() {
        assert_eq!(ns_trunc(2.9), 2);
        assert_eq!(ns_trunc(0.0), 0);
        assert_eq!(ppm_round(2.5), 3);
        assert_eq!(ppm_round(1_732_050.4), 1_732_050);
        assert_eq!(count_round(0.49), 0);
        assert_eq!(count_floor(3.99), 3);
        assert_eq!(count_ceil(3.01), 4);
        assert_eq!(decimal_exponent(123.4), 2);
        assert_eq!(decimal_exponent(-0.0012), -3);
        assert_eq!(decimal_exponent(1.0), 0);
    }

    #[test]
    #[should_panic(expected = "not a finite non-negative")]
    fn negative_time_panics() {
        ns_trunc(-1.0);
    }

    #[test]
    #[should_panic(expected = "not a finite non-negative")]
    fn nan_count_panics() {
        count_round(f64::NAN);
    }

    #[test]
    fn integer_helpers() {
        assert_eq!(cpu_u32(1023), 1023);
        assert_eq!(usize_from_u64(1 << 40), 1 << 40);
    }
}
