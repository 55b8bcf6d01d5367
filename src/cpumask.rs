//! CPU sets, as the kernel's `struct cpumask`, and their cpulist text form.
//!
//! A [`CpuMask`] is a fixed-size bitmap of [`NR_CPUS_MAX`] bits: `Copy`, no heap, so masks
//! can be built and combined inside the event loop without allocating. Every CPU set that
//! crosses the user boundary (scenario keys, `topo` output, JSON) is written as a kernel
//! cpulist string — `"0-17,24,25"` — exactly as `/sys/devices/system/cpu/online` prints it.

use std::fmt;

/// Largest CPU count the simulator models. The largest preset (`turin-dense-2s`) has 768
/// CPUs; 1024 is the next power of two and keeps a mask at 128 bytes.
pub const NR_CPUS_MAX: usize = 1024;

const WORDS: usize = NR_CPUS_MAX / 64;

/// A set of CPU ids below [`NR_CPUS_MAX`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuMask {
    words: [u64; WORDS],
}

impl Default for CpuMask {
    fn default() -> Self {
        Self::new()
    }
}

/// Why a cpulist string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("'{0}' is not a CPU number or range (accepted: a cpulist like \"0-17,24,25\")")]
    BadItem(String),
    #[error("range '{0}' runs backwards (accepted: low-high with low <= high)")]
    Backwards(String),
    #[error("CPU {0} is beyond the simulator's limit of {max} CPUs", max = NR_CPUS_MAX)]
    TooLarge(usize),
}

impl CpuMask {
    /// The empty set.
    pub const fn new() -> Self {
        Self { words: [0; WORDS] }
    }

    /// CPUs `0..n`.
    pub fn first_n(n: usize) -> Self {
        assert!(n <= NR_CPUS_MAX, "mask of {n} CPUs exceeds NR_CPUS_MAX");
        let mut m = Self::new();
        for cpu in 0..n {
            m.set(cpu);
        }
        m
    }

    /// The set holding just `cpu`.
    pub fn single(cpu: usize) -> Self {
        let mut m = Self::new();
        m.set(cpu);
        m
    }

    pub fn set(&mut self, cpu: usize) {
        assert!(cpu < NR_CPUS_MAX, "CPU {cpu} exceeds NR_CPUS_MAX");
        self.words[cpu / 64] |= 1u64 << (cpu % 64);
    }

    pub fn clear(&mut self, cpu: usize) {
        assert!(cpu < NR_CPUS_MAX, "CPU {cpu} exceeds NR_CPUS_MAX");
        self.words[cpu / 64] &= !(1u64 << (cpu % 64));
    }

    pub fn test(&self, cpu: usize) -> bool {
        cpu < NR_CPUS_MAX && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// `cpumask_weight()`.
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// `cpumask_first()`: the lowest CPU, if any.
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// The lowest CPU `>= from`, if any (`cpumask_next(from - 1)`).
    pub fn next_from(&self, from: usize) -> Option<usize> {
        if from >= NR_CPUS_MAX {
            return None;
        }
        let mut word_index = from / 64;
        let mut word = self.words[word_index] & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(word_index * 64 + word.trailing_zeros() as usize);
            }
            word_index += 1;
            if word_index == WORDS {
                return None;
            }
            word = self.words[word_index];
        }
    }

    /// Lowest CPU `>= from`, wrapping around to the start: the order of
    /// `for_each_cpu_wrap()`.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let start = start.min(NR_CPUS_MAX);
        self.iter()
            .skip_while(move |&c| c < start)
            .chain(self.iter().take_while(move |&c| c < start))
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> CpuMaskIter<'_> {
        CpuMaskIter {
            mask: self,
            next: 0,
        }
    }

    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words.iter()) {
            *a &= *b;
        }
        out
    }

    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words.iter()) {
            *a |= *b;
        }
        out
    }

    /// `cpumask_andnot()`: CPUs of `self` not in `other`.
    pub fn andnot(&self, other: &CpuMask) -> CpuMask {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words.iter()) {
            *a &= !*b;
        }
        out
    }

    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .any(|(a, b)| a & b != 0)
    }

    /// `cpumask_subset(self, other)`.
    pub fn is_subset_of(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .all(|(a, b)| a & !b == 0)
    }

    /// Parse a kernel cpulist (`"0-17,24,25"`, `"0-7:2"` strides as in
    /// `bitmap_parselist()`, empty string = empty set; whitespace and a trailing newline
    /// are tolerated as sysfs prints one).
    pub fn parse(text: &str) -> Result<CpuMask, CpuListError> {
        let mut mask = CpuMask::new();
        let text = text.trim();
        if text.is_empty() {
            return Ok(mask);
        }
        for item in text.split(',') {
            let item = item.trim();
            let (range, stride) = match item.split_once(':') {
                Some((range, stride)) => {
                    let stride: usize = stride
                        .parse()
                        .map_err(|_| CpuListError::BadItem(item.to_string()))?;
                    if stride == 0 {
                        return Err(CpuListError::BadItem(item.to_string()));
                    }
                    (range, stride)
                }
                None => (item, 1),
            };
            let (low, high) = match range.split_once('-') {
                Some((low, high)) => (parse_cpu(low, item)?, parse_cpu(high, item)?),
                None => {
                    let cpu = parse_cpu(range, item)?;
                    (cpu, cpu)
                }
            };
            if low > high {
                return Err(CpuListError::Backwards(item.to_string()));
            }
            if high >= NR_CPUS_MAX {
                return Err(CpuListError::TooLarge(high));
            }
            for cpu in (low..=high).step_by(stride) {
                mask.set(cpu);
            }
        }
        Ok(mask)
    }
}

fn parse_cpu(text: &str, item: &str) -> Result<usize, CpuListError> {
    text.trim()
        .parse()
        .map_err(|_| CpuListError::BadItem(item.to_string()))
}

impl FromIterator<usize> for CpuMask {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut m = CpuMask::new();
        for cpu in iter {
            m.set(cpu);
        }
        m
    }
}

/// Ascending iterator over a mask's CPUs.
pub struct CpuMaskIter<'a> {
    mask: &'a CpuMask,
    next: usize,
}

impl Iterator for CpuMaskIter<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let cpu = self.mask.next_from(self.next)?;
        self.next = cpu + 1;
        Some(cpu)
    }
}

/// Kernel cpulist form (`%*pbl`): ascending ranges joined by commas, `""` when empty.
impl fmt::Display for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut iter = self.iter().peekable();
        while let Some(low) = iter.next() {
            let mut high = low;
            while iter.peek() == Some(&(high + 1)) {
                high = iter.next().expect("peeked");
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if low == high {
                write!(f, "{low}")?;
            } else {
                write!(f, "{low}-{high}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({self})")
    }
}

impl serde::Serialize for CpuMask {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CpuMask {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CpuMask::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_kernel_cpulists() {
        let m = CpuMask::parse("0-17,24,25").unwrap();
        assert_eq!(m.weight(), 20);
        assert!(m.test(17) && !m.test(18) && m.test(24) && m.test(25));
        assert_eq!(m.to_string(), "0-17,24-25");
        assert_eq!(CpuMask::parse("0-7:2").unwrap().to_string(), "0,2,4,6");
        assert_eq!(CpuMask::parse("3\n").unwrap().to_string(), "3");
        assert!(CpuMask::parse("").unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_cpulists() {
        assert!(matches!(
            CpuMask::parse("5-2"),
            Err(CpuListError::Backwards(_))
        ));
        assert!(matches!(CpuMask::parse("a"), Err(CpuListError::BadItem(_))));
        assert!(matches!(
            CpuMask::parse("0-2000"),
            Err(CpuListError::TooLarge(2000))
        ));
        assert!(matches!(
            CpuMask::parse("1,,2"),
            Err(CpuListError::BadItem(_))
        ));
    }

    #[test]
    fn wrap_iteration_starts_at_target() {
        let m = CpuMask::parse("0-3,8").unwrap();
        let order: Vec<usize> = m.iter_wrap(3).collect();
        assert_eq!(order, vec![3, 8, 0, 1, 2]);
    }

    proptest! {
        #[test]
        fn cpulist_round_trips(cpus in proptest::collection::btree_set(0usize..NR_CPUS_MAX, 0..64)) {
            let m: CpuMask = cpus.iter().copied().collect();
            let back = CpuMask::parse(&m.to_string()).unwrap();
            prop_assert_eq!(m, back);
            prop_assert_eq!(m.weight(), cpus.len());
            prop_assert_eq!(m.iter().collect::<Vec<_>>(), cpus.into_iter().collect::<Vec<_>>());
        }
    }
}
