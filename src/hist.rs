//! A log-linear latency histogram with bounded memory (the HDR histogram idea).
//!
//! Values (ns) are bucketed by power of two, each power split into 128 linear sub-buckets,
//! so every recorded value is known within 1/128 (< 0.8 %) relative error; memory is fixed
//! (64 × 128 counters) whatever the number of samples. Percentiles are reported as the
//! highest value equivalent to the bucket, as hdrhistogram does.

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
const POWERS: usize = 64 - SUB_BITS as usize + 1;

/// Latency histogram of nanosecond values.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
    min: u64,
    sum: u128,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram({} samples)", self.total)
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let power = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = power - SUB_BITS;
    let sub = (v >> shift) as usize - SUB; // 0..SUB
    ((shift as usize + 1) << SUB_BITS) + sub
}

/// Highest value that lands in `bucket`.
fn bucket_high(bucket: usize) -> u64 {
    if bucket < SUB {
        return bucket as u64;
    }
    let shift = (bucket >> SUB_BITS) as u32 - 1;
    let sub = (bucket & (SUB - 1)) as u64 + SUB as u64;
    let low = sub << shift;
    low + ((1u64 << shift) - 1)
}

/// Lowest value that lands in `bucket`.
fn bucket_low(bucket: usize) -> u64 {
    if bucket < SUB {
        return bucket as u64;
    }
    let shift = (bucket >> SUB_BITS) as u32 - 1;
    ((bucket & (SUB - 1)) as u64 + SUB as u64) << shift
}

/// [`Histogram::compact`] always allows this many pairs: one per power of two of a `u64`,
/// the coarsest form.
pub const COMPACT_BUCKETS_MIN: usize = POWERS;

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; POWERS * SUB],
            total: 0,
            max: 0,
            min: u64::MAX,
            sum: 0,
        }
    }

    pub fn record(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.total += 1;
        self.max = self.max.max(v);
        self.min = self.min.min(v);
        self.sum += v as u128;
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn min(&self) -> u64 {
        if self.total == 0 { 0 } else { self.min }
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    /// The value at percentile `pct` (0–100): the smallest bucket value such that at least
    /// `pct` % of samples are at or below it (capped at the exact maximum).
    pub fn percentile(&self, pct: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((pct / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(bucket).min(self.max);
            }
        }
        self.max
    }

    /// The non-empty buckets as (lowest value, highest value, count), in value order: what a
    /// consumer needs to re-bucket the samples into another histogram (e.g. schbench's).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(b, &c)| {
                let high = bucket_high(b);
                (bucket_low(b), high, c)
            })
    }

    /// The non-empty buckets as `[lowest value, count]` pairs in value order, with at most
    /// `max_buckets` pairs (at least [`COMPACT_BUCKETS_MIN`] are always allowed): when the
    /// full resolution (128 sub-buckets per power of two) has more non-empty buckets than
    /// that, neighbouring sub-buckets are merged in pairs, then fours, ... (64, 32, ..., 1
    /// sub-bucket per power) until it fits. The form a results file keeps of a latency
    /// distribution (a CDF is drawn from it): every sample is counted exactly once, and a
    /// pair's value is the lowest value of the merged buckets.
    pub fn compact(&self, max_buckets: usize) -> Vec<[u64; 2]> {
        let full: Vec<(usize, u64)> = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(b, &c)| (b, c))
            .collect();
        for k in 0..=SUB_BITS {
            // Bucket b = power * SUB + sub; merging 2^k sub-buckets keys on (power, sub >> k).
            let key = |b: usize| (b >> SUB_BITS, (b & (SUB - 1)) >> k);
            let mut out: Vec<[u64; 2]> = Vec::new();
            let mut last = None;
            for &(b, c) in &full {
                if last == Some(key(b)) {
                    out.last_mut().expect("a group is open")[1] += c;
                } else {
                    last = Some(key(b));
                    out.push([bucket_low((b >> k) << k), c]);
                }
            }
            if out.len() <= max_buckets.max(COMPACT_BUCKETS_MIN) || k == SUB_BITS {
                return out;
            }
        }
        unreachable!("the coarsest level returns")
    }

    /// Sum of all recorded values (exact).
    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
        self.min = self.min.min(other.min);
        self.sum += other.sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_for_small_values_and_percentiles() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.percentile(100.0), 100);
        assert_eq!(h.max(), 100);
        assert_eq!(h.min(), 1);
    }

    #[test]
    fn compact_keeps_every_sample_within_the_bucket_bound() {
        let mut h = Histogram::new();
        // 1 µs .. ~16 ms in fine steps: thousands of non-empty full-resolution buckets.
        for i in 0..20_000u64 {
            h.record(1_000 + i * i / 25);
        }
        let full = h.compact(usize::MAX);
        assert_eq!(full.len(), h.buckets().count());
        let c = h.compact(256);
        assert!(c.len() <= 256 && c.len() > 64, "{} pairs", c.len());
        assert_eq!(c.iter().map(|p| p[1]).sum::<u64>(), h.len());
        assert!(c.windows(2).all(|w| w[0][0] < w[1][0]), "value order");
        assert!(c[0][0] <= full[0][0] && c[0][0] * 2 > full[0][0]);
        // A bound below the minimum still allows COMPACT_BUCKETS_MIN pairs, coarser ones.
        let coarse = h.compact(1);
        assert!(coarse.len() <= COMPACT_BUCKETS_MIN && coarse.len() < c.len());
        assert!(coarse.windows(2).all(|w| w[0][0] < w[1][0]), "value order");
        // The coarsest form: one pair per power of two, at the power.
        let mut wide = Histogram::new();
        for p in 7..64 {
            wide.record(1u64 << p);
            wide.record((1u64 << p) + (1u64 << (p - 1)));
        }
        let coarsest = wide.compact(1);
        assert_eq!(coarsest.len(), 57);
        assert!(coarsest.iter().all(|p| p[0].is_power_of_two() && p[1] == 2));
        assert_eq!(coarse.iter().map(|p| p[1]).sum::<u64>(), h.len());
        assert!(Histogram::new().compact(8).is_empty());
    }

    proptest! {
        #[test]
        fn bucket_error_is_below_one_percent(v in 0u64..u64::MAX / 2) {
            let b = bucket_of(v);
            let high = bucket_high(b);
            prop_assert!(high >= v);
            prop_assert!((high - v) as f64 <= v as f64 / 128.0 + 1.0);
        }
    }
}
