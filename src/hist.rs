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
                let low = if b < SUB {
                    b as u64
                } else {
                    let shift = (b >> SUB_BITS) as u32 - 1;
                    ((b & (SUB - 1)) as u64 + SUB as u64) << shift
                };
                (low, high, c)
            })
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
