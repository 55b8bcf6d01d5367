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

/// Why a cpulist string could not be read: the three errors of the kernel's
/// `bitmap_parselist()`, each naming the offending item and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// `-EINVAL`: bad region syntax, an invalid character, a backwards range, a zero group
    /// size or more used bits than the group holds.
    #[error(
        "'{item}' is not a valid cpulist item: {reason} (accepted: comma-separated N, N-M, \
         N-M:used/group, 'N' for the last CPU, 'all'; e.g. \"0-17,24,25\")"
    )]
    Invalid { item: String, reason: &'static str },
    /// `-ERANGE`: a CPU at or beyond the mask's width.
    #[error("'{item}' names CPU {cpu}, beyond the last CPU {last} (accepted: CPUs 0-{last})", last = nbits.saturating_sub(1))]
    Range {
        item: String,
        cpu: u32,
        nbits: usize,
    },
    /// `-EOVERFLOW`: a number that does not fit in 32 bits.
    #[error("'{item}' holds a number too large (accepted: CPU numbers below 2^32)")]
    Overflow { item: String },
}

impl CpuListError {
    /// The kernel's errno for this error (`-EINVAL`, `-ERANGE`, `-EOVERFLOW`), as
    /// `bitmap_parselist()` returns it.
    pub fn errno(&self) -> &'static str {
        match self {
            CpuListError::Invalid { .. } => "EINVAL",
            CpuListError::Range { .. } => "ERANGE",
            CpuListError::Overflow { .. } => "EOVERFLOW",
        }
    }
}

/// Longest item echoed in a [`CpuListError`]; longer ones are cut with "...".
const ITEM_ECHO_MAX: usize = 64;

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

    /// `cpumask_weight() > 1`, stopping at the word where the second CPU shows up (a
    /// full weight is 16 popcounts; placement asks this once per wakeup).
    pub fn more_than_one(&self) -> bool {
        let mut seen = 0;
        for &w in &self.words {
            seen += w.count_ones();
            if seen > 1 {
                return true;
            }
        }
        false
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
        self.iter_from(start)
            .chain(self.iter().take_while(move |&c| c < start))
    }

    /// In-place `cpumask_andnot(self, self, other)`: no temporary mask.
    #[inline]
    pub fn andnot_assign(&mut self, other: &CpuMask) {
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a &= !*b;
        }
    }

    /// In-place `cpumask_and(self, self, other)`: no temporary mask.
    #[inline]
    pub fn and_assign(&mut self, other: &CpuMask) {
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a &= *b;
        }
    }

    /// CPUs `>= from` in ascending order (starts at `from`'s word, not at CPU 0).
    pub fn iter_from(&self, from: usize) -> CpuMaskIter<'_> {
        if from >= NR_CPUS_MAX {
            return CpuMaskIter {
                mask: self,
                word_index: WORDS - 1,
                word: 0,
            };
        }
        CpuMaskIter {
            mask: self,
            word_index: from / 64,
            word: self.words[from / 64] & (!0u64 << (from % 64)),
        }
    }

    /// CPUs in ascending order.
    pub fn iter(&self) -> CpuMaskIter<'_> {
        CpuMaskIter {
            mask: self,
            word_index: 0,
            word: self.words[0],
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

    /// Parse a kernel cpulist over the full [`NR_CPUS_MAX`]-bit width:
    /// [`CpuMask::parse_list`] with `nbits = NR_CPUS_MAX` (so `N` and `all` mean CPU 1023).
    /// Call sites that know the machine's CPU count should use `parse_list` with it, as the
    /// kernel's `cpulist_parse()` passes `nr_cpumask_bits`.
    pub fn parse(text: &str) -> Result<CpuMask, CpuListError> {
        Self::parse_list(text, NR_CPUS_MAX)
    }

    /// `bitmap_parselist(text, mask, nbits)` (lib/bitmap-str.c), syntax and errors exactly:
    ///
    /// - regions separated by commas or whitespace (leading/trailing ones allowed); an empty
    ///   string is the empty set; the string ends at NUL or at a newline;
    /// - a region is `N`, `N-M`, or either followed by `:used/group` — from every `group`
    ///   CPUs starting at the range's start, the first `used` (`0-1023:2/256` =
    ///   0,1,256,257,512,513,768,769);
    /// - the token `N` is the last bit, `nbits - 1`; `all` (any case) is `0-N` and may also
    ///   take a `:used/group` suffix;
    /// - errors: [`CpuListError::Invalid`] (`-EINVAL`: bad syntax, start > end, group 0,
    ///   used > group), [`CpuListError::Range`] (`-ERANGE`: a CPU >= `nbits`),
    ///   [`CpuListError::Overflow`] (`-EOVERFLOW`: a number beyond `u32`).
    ///
    /// Quirks kept from the kernel: a newline directly after a region without a
    /// `:used/group` suffix ends the whole string (`"0-3\n5"` = 0-3), while after a suffix
    /// or a blank it is a separator; `"0-7:1/2N"` is two regions (0-7:1/2 and N).
    /// `nbits` is at most [`NR_CPUS_MAX`].
    pub fn parse_list(text: &str, nbits: usize) -> Result<CpuMask, CpuListError> {
        assert!(
            nbits <= NR_CPUS_MAX,
            "cpulist width {nbits} exceeds NR_CPUS_MAX"
        );
        let bytes = text.as_bytes();
        let mut mask = CpuMask::new();
        let mut pos = 0usize;
        loop {
            // bitmap_find_region(): skip commas and whitespace; stop at NUL/newline/end.
            while pos < bytes.len() && is_region_sep(bytes[pos]) {
                pos += 1;
            }
            if pos >= bytes.len() || is_end_of_str(bytes[pos]) {
                return Ok(mask);
            }
            let item_start = pos;
            let parsed = parse_region(bytes, pos, nbits);
            let item_end = match &parsed {
                Ok((_, Some(next))) => *next,
                _ => region_end(bytes, item_start),
            };
            let item = || echo_item(&text[item_start..item_end]);
            let (region, next) = parsed.map_err(|e| e.with_item(item(), nbits))?;
            region
                .check(nbits)
                .map_err(|e| e.with_item(item(), nbits))?;
            region.set(&mut mask);
            match next {
                Some(next) => pos = next,
                None => return Ok(mask),
            }
        }
    }

    /// [`CpuMask::parse_list`] over a machine of `nr_cpus` CPUs (so `N` and `all` are its
    /// last CPU), except that a CPU at or beyond `nr_cpus` is kept in the mask instead of
    /// failing with `-ERANGE`: for call sites that word their own "CPU x does not exist".
    pub fn parse_list_for_machine(text: &str, nr_cpus: usize) -> Result<CpuMask, CpuListError> {
        match Self::parse_list(text, nr_cpus.min(NR_CPUS_MAX)) {
            Err(CpuListError::Range { .. }) => Self::parse(text),
            other => other,
        }
    }

    /// util-linux's `cpulist_parse()` (lib/cpuset.c), the syntax of `taskset -c` and, as
    /// an approximation, of libnuma's cpu/node strings: comma-separated `N`, `N-M` and
    /// `N-M:stride`; no `N` token, no `all`, no `:used/group`. Every CPU must be below
    /// [`NR_CPUS_MAX`]. Empty string = empty set; surrounding whitespace is tolerated.
    pub fn parse_util_linux(text: &str) -> Result<CpuMask, CpuListError> {
        let mut mask = CpuMask::new();
        let text = text.trim();
        if text.is_empty() {
            return Ok(mask);
        }
        let invalid = |item: &str, reason| CpuListError::Invalid {
            item: echo_item(item),
            reason,
        };
        for item in text.split(',') {
            let item = item.trim();
            let (range, stride) = match item.split_once(':') {
                Some((range, stride)) => {
                    let stride: usize = stride
                        .parse()
                        .map_err(|_| invalid(item, "the stride is not a number"))?;
                    if stride == 0 {
                        return Err(invalid(item, "the stride is 0"));
                    }
                    (range, stride)
                }
                None => (item, 1),
            };
            let number = |t: &str| -> Result<usize, CpuListError> {
                t.trim()
                    .parse()
                    .map_err(|_| invalid(item, "not a CPU number or range"))
            };
            let (low, high) = match range.split_once('-') {
                Some((low, high)) => (number(low)?, number(high)?),
                None => {
                    let cpu = number(range)?;
                    (cpu, cpu)
                }
            };
            if low > high {
                return Err(invalid(item, "the range runs backwards"));
            }
            if high >= NR_CPUS_MAX {
                return Err(CpuListError::Range {
                    item: echo_item(item),
                    cpu: u32::try_from(high).unwrap_or(u32::MAX),
                    nbits: NR_CPUS_MAX,
                });
            }
            for cpu in (low..=high).step_by(stride) {
                mask.set(cpu);
            }
        }
        Ok(mask)
    }
}

/// One region of `bitmap_parselist()`: `start-end:off/group_len` (kernel `struct region`).
#[derive(Debug, Clone, Copy)]
struct Region {
    start: u32,
    end: u32,
    off: u32,
    group_len: u32,
}

/// A region error before the item text is attached.
#[derive(Debug)]
enum RegionError {
    Invalid(&'static str),
    Range(u32),
    Overflow,
}

impl RegionError {
    fn with_item(self, item: String, nbits: usize) -> CpuListError {
        match self {
            RegionError::Invalid(reason) => CpuListError::Invalid { item, reason },
            RegionError::Range(cpu) => CpuListError::Range { item, cpu, nbits },
            RegionError::Overflow => CpuListError::Overflow { item },
        }
    }
}

impl Region {
    /// `bitmap_check_region()`.
    fn check(&self, nbits: usize) -> Result<(), RegionError> {
        if self.start > self.end {
            Err(RegionError::Invalid("the range runs backwards"))
        } else if self.group_len == 0 {
            Err(RegionError::Invalid("the group size is 0"))
        } else if self.off > self.group_len {
            Err(RegionError::Invalid("more used CPUs than the group size"))
        } else if self.end as usize >= nbits {
            Err(RegionError::Range(self.end))
        } else {
            Ok(())
        }
    }

    /// `bitmap_set_region()`: from each group starting at `start`, the first `off` bits.
    fn set(&self, mask: &mut CpuMask) {
        let end = u64::from(self.end);
        let mut start = u64::from(self.start);
        while start <= end {
            let len = (end - start + 1).min(u64::from(self.off));
            for cpu in start..start + len {
                mask.set(cpu as usize);
            }
            start += u64::from(self.group_len);
        }
    }
}

fn is_space(c: u8) -> bool {
    c == b' ' || (b'\t'..=b'\r').contains(&c)
}

/// `end_of_str()`: NUL or newline.
fn is_end_of_str(c: u8) -> bool {
    c == 0 || c == b'\n'
}

/// `__end_of_region()`: whitespace or comma.
fn is_region_sep(c: u8) -> bool {
    is_space(c) || c == b','
}

/// `end_of_region()` with the end of the text counted as NUL.
fn at_end_of_region(bytes: &[u8], pos: usize) -> bool {
    bytes
        .get(pos)
        .is_none_or(|&c| is_region_sep(c) || is_end_of_str(c))
}

/// Where an item that failed to parse ends, for the error message: the next separator.
fn region_end(bytes: &[u8], from: usize) -> usize {
    (from..bytes.len())
        .find(|&i| at_end_of_region(bytes, i))
        .unwrap_or(bytes.len())
}

/// The item as echoed in an error: cut at [`ITEM_ECHO_MAX`] bytes, control characters
/// escaped (a newline inside an item must not split the one-line message).
fn echo_item(item: &str) -> String {
    let mut cut = item.len().min(ITEM_ECHO_MAX);
    while !item.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out: String = item[..cut]
        .chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect();
    if cut < item.len() {
        out.push_str("...");
    }
    out
}

/// `bitmap_getnum()`: `N` (the last bit) or a decimal number of at most 32 bits.
fn getnum(bytes: &[u8], pos: usize, lastbit: u32) -> Result<(u32, usize), RegionError> {
    if bytes.get(pos) == Some(&b'N') {
        return Ok((lastbit, pos + 1));
    }
    let digits = bytes[pos.min(bytes.len())..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return Err(RegionError::Invalid("expected a number or 'N'"));
    }
    let mut n: u64 = 0;
    let mut overflow = false;
    for &c in &bytes[pos..pos + digits] {
        match n
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
        {
            Some(v) => n = v,
            None => overflow = true,
        }
    }
    match u32::try_from(n) {
        Ok(n) if !overflow => Ok((n, pos + digits)),
        _ => Err(RegionError::Overflow),
    }
}

/// `bitmap_parse_region()`: the region at `pos` and where parsing continues (`None` when
/// the string ended with it).
fn parse_region(
    bytes: &[u8],
    pos: usize,
    nbits: usize,
) -> Result<(Region, Option<usize>), RegionError> {
    // `unsigned int lastbit = r->nbits - 1`, wrapping for nbits 0 as the kernel's does.
    let lastbit = (nbits as u32).wrapping_sub(1);
    let invalid = |reason| Err(RegionError::Invalid(reason));
    let (start, end, mut pos) =
        if bytes.len() >= pos + 3 && bytes[pos..pos + 3].eq_ignore_ascii_case(b"all") {
            (0, lastbit, pos + 3)
        } else {
            let (start, next) = getnum(bytes, pos, lastbit)?;
            if at_end_of_region(bytes, next) {
                let off = start.wrapping_add(1);
                let region = Region {
                    start,
                    end: start,
                    off,
                    group_len: off,
                };
                return Ok((region, no_pattern_next(bytes, next)));
            }
            if bytes[next] != b'-' {
                return invalid("expected '-', ',' or the end after a number");
            }
            let (end, next) = getnum(bytes, next + 1, lastbit)?;
            (start, end, next)
        };
    // check_pattern:
    if at_end_of_region(bytes, pos) {
        let off = end.wrapping_add(1);
        let region = Region {
            start,
            end,
            off,
            group_len: off,
        };
        return Ok((region, no_pattern_next(bytes, pos)));
    }
    if bytes[pos] != b':' {
        return invalid("expected ':used/group', ',' or the end after a range");
    }
    let (off, next) = getnum(bytes, pos + 1, lastbit)?;
    pos = next;
    if bytes.get(pos) != Some(&b'/') {
        return invalid("expected '/group' after ':used'");
    }
    let (group_len, next) = getnum(bytes, pos + 1, lastbit)?;
    let region = Region {
        start,
        end,
        off,
        group_len,
    };
    Ok((region, Some(next)))
}

/// `no_pattern`'s return: the end of the string (NUL, newline, end of text) stops parsing.
fn no_pattern_next(bytes: &[u8], pos: usize) -> Option<usize> {
    match bytes.get(pos) {
        None => None,
        Some(&c) if is_end_of_str(c) => None,
        Some(_) => Some(pos),
    }
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

/// Ascending iterator over a mask's CPUs: the bits of the current word not yet returned
/// (lowest first, each cleared as it is returned), then the next words.
pub struct CpuMaskIter<'a> {
    mask: &'a CpuMask,
    word_index: usize,
    /// The bits of `words[word_index]` not yet returned.
    word: u64,
}

impl Iterator for CpuMaskIter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            self.word_index += 1;
            if self.word_index == WORDS {
                return None;
            }
            self.word = self.mask.words[self.word_index];
        }
        let bit = self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(self.word_index * 64 + bit)
    }
}

/// The position of a `for_each_cpu_wrap(cpu, mask, start)` walk over a mask that may
/// lose bits while it is walked (the kernel's `select_idle_cpu()` walks `cpus` while
/// `select_idle_core()` clears a busy core's siblings from it). Each step reads the mask
/// afresh ([`CpuMask::next_from`]), so a cleared CPU not yet reached is skipped — the
/// same CPUs in the same order as walking a copy taken at the start and testing each CPU
/// against the live mask, without the 128-byte copy. Bits set during the walk are not
/// supported (none of the scans sets any).
#[derive(Clone, Copy, Debug)]
pub struct WrapCursor {
    start: usize,
    /// Next CPU id to look from.
    pos: usize,
    /// The walk has passed the last CPU and restarted at 0 (CPUs below `start` left).
    wrapped: bool,
}

impl WrapCursor {
    /// A walk starting at `start` (`start >= NR_CPUS_MAX` walks from CPU 0, as
    /// [`CpuMask::iter_wrap`]).
    pub fn new(start: usize) -> Self {
        let start = start.min(NR_CPUS_MAX);
        WrapCursor {
            start,
            pos: start,
            wrapped: false,
        }
    }

    /// The next CPU of `mask` in wrap order, `None` once the walk is back at `start`.
    /// Debug builds check the word scan against a CPU-by-CPU walk.
    #[inline]
    pub fn next(&mut self, mask: &CpuMask) -> Option<usize> {
        let before = *self;
        let next = self.next_by_words(mask);
        debug_assert_eq!(next, before.next_by_cpu(mask), "WrapCursor {before:?}");
        next
    }

    #[inline]
    fn next_by_words(&mut self, mask: &CpuMask) -> Option<usize> {
        if !self.wrapped {
            if let Some(c) = mask.next_from(self.pos) {
                self.pos = c + 1;
                return Some(c);
            }
            self.wrapped = true;
            self.pos = 0;
        }
        match mask.next_from(self.pos) {
            Some(c) if c < self.start => {
                self.pos = c + 1;
                Some(c)
            }
            _ => None,
        }
    }

    /// The slow form of [`WrapCursor::next`] (without advancing): test every CPU id from
    /// `pos` up, then from 0 up to `start`.
    fn next_by_cpu(&self, mask: &CpuMask) -> Option<usize> {
        let rest = if self.wrapped {
            self.pos..self.start
        } else {
            self.pos..NR_CPUS_MAX
        };
        let found = rest.into_iter().find(|&c| mask.test(c));
        if found.is_some() || self.wrapped {
            return found;
        }
        (0..self.start).find(|&c| mask.test(c))
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

    /// `more_than_one()` is `weight() > 1` for empty, single, same-word and split masks.
    #[test]
    fn more_than_one_is_weight_above_one() {
        let cases: [&[usize]; 6] = [&[], &[0], &[1023], &[3, 5], &[63, 64], &[0, 700, 1023]];
        for cpus in cases {
            let mut m = CpuMask::new();
            for &c in cpus {
                m.set(c);
            }
            assert_eq!(m.more_than_one(), m.weight() > 1, "{cpus:?}");
        }
    }

    fn list(text: &str, nbits: usize) -> String {
        CpuMask::parse_list(text, nbits).unwrap().to_string()
    }

    fn errno(text: &str, nbits: usize) -> &'static str {
        CpuMask::parse_list(text, nbits).unwrap_err().errno()
    }

    #[test]
    fn parses_kernel_cpulists() {
        let m = CpuMask::parse("0-17,24,25").unwrap();
        assert_eq!(m.weight(), 20);
        assert!(m.test(17) && !m.test(18) && m.test(24) && m.test(25));
        assert_eq!(m.to_string(), "0-17,24-25");
        assert_eq!(CpuMask::parse("3\n").unwrap().to_string(), "3");
        assert!(CpuMask::parse("").unwrap().is_empty());
        assert!(CpuMask::parse(" \t, ").unwrap().is_empty());
    }

    /// The examples of bitmap_parselist()'s comment and of
    /// Documentation/admin-guide/kernel-parameters.rst ("cpu lists").
    #[test]
    fn kernel_documentation_examples() {
        // "Example: 0-1023:2/256 ==> 0,1,256,257,512,513,768,769"
        assert_eq!(list("0-1023:2/256", 1024), "0-1,256-257,512-513,768-769");
        // "isolcpus=1,2,10-20,100-2000:2/25 ... CPUs 100,101,125,126,150,151,..."
        // (our masks stop at 1024 bits, so the range ends at 1000 here)
        let m = CpuMask::parse_list("1,2,10-20,100-1000:2/25", 1024).unwrap();
        assert!(m.test(1) && m.test(2) && m.test(10) && m.test(20) && !m.test(21));
        assert!(m.test(100) && m.test(101) && !m.test(102) && m.test(125) && m.test(126));
        assert!(m.test(150) && m.test(151) && !m.test(149));
        // "foo_cpus=16-N would be equivalent to 16-31 on a 32 core system"
        assert_eq!(list("16-N", 32), "16-31");
        // "16-N becomes 16-3 and ... flagged as invalid (start > end)" on 4 CPUs
        assert_eq!(errno("16-N", 4), "EINVAL");
        // "nohz_full=all is the equivalent of nohz_full=0-N"; "case-tolerant"
        assert_eq!(list("all", 12), "0-11");
        assert_eq!(list("ALL", 12), list("0-N", 12));
        assert_eq!(list("All:1/2", 8), "0,2,4,6");
        assert_eq!(list("N", 8), "7");
    }

    #[test]
    fn used_group_pattern() {
        assert_eq!(list("0-7:2/4", 8), "0-1,4-5");
        assert_eq!(list("0-7:1/2", 8), "0,2,4,6");
        assert_eq!(list("0-9:3/4", 16), "0-2,4-6,8-9");
        assert_eq!(list("0-7:4/4", 8), "0-7");
        // used 0 selects nothing; accepted by the kernel.
        assert_eq!(list("0-7:0/4", 8), "");
        assert_eq!(list("3-3:1/1", 8), "3");
        // A single number takes no suffix: only a range or `all` does.
        assert_eq!(errno("3:1/1", 8), "EINVAL");
    }

    #[test]
    fn separators_and_newlines_as_the_kernel_reads_them() {
        assert_eq!(list("1,,2", 8), "1-2");
        assert_eq!(list(",1 2\t3,", 8), "1-3");
        // A newline right after a plain region ends the string...
        assert_eq!(list("0-3\n5", 8), "0-3");
        assert_eq!(list("1\n5", 8), "1");
        // ...but after a blank or a :used/group suffix it is a separator.
        assert_eq!(list("0-3 \n5", 8), "0-3,5");
        assert_eq!(list("0-3:1/2\n5", 8), "0,2,5");
        assert_eq!(list("0-3\0garbage", 8), "0-3");
    }

    #[test]
    fn kernel_errors() {
        // -EINVAL: syntax
        for bad in [
            "0-7:2",
            "0-7:2/",
            "0-7:/4",
            "a",
            "1-",
            "-1",
            "1-2-3",
            "0x3",
            "1 - 2",
            "5-2",
            "0-7:2/0",
            "0-7:5/4",
            "1;2",
            "n",
            "allx",
            "0-7:2/4-5",
        ] {
            assert_eq!(errno(bad, 8), "EINVAL", "{bad:?}");
        }
        // -ERANGE: a bit >= nbits
        assert_eq!(errno("8", 8), "ERANGE");
        assert_eq!(errno("0-2000", 1024), "ERANGE");
        assert_eq!(errno("4-N", 4), "EINVAL");
        // -EOVERFLOW: beyond 32 bits
        assert_eq!(errno("4294967296", 8), "EOVERFLOW");
        assert_eq!(errno("0-99999999999999999999999", 8), "EOVERFLOW");
        // 2^32-1 wraps the kernel's `end + 1` group length to 0: -EINVAL, not -ERANGE.
        assert_eq!(errno("4294967295", 8), "EINVAL");
        assert_eq!(errno("4294967294", 8), "ERANGE");
    }

    #[test]
    fn errors_name_the_item_on_one_line() {
        let e = CpuMask::parse_list("0-3,0-7:2", 8).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("'0-7:2'") && msg.contains("used/group"),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
        let e = CpuMask::parse_list("1,9", 8).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'9' names CPU 9, beyond the last CPU 7 (accepted: CPUs 0-7)"
        );
        let long = "9".repeat(10_000);
        assert!(CpuMask::parse(&long).unwrap_err().to_string().len() < 200);
    }

    #[test]
    fn util_linux_syntax_for_taskset() {
        let parse = |t| CpuMask::parse_util_linux(t).map(|m| m.to_string());
        assert_eq!(parse("0-7:2").unwrap(), "0,2,4,6");
        assert_eq!(parse("1,3-4").unwrap(), "1,3-4");
        assert!(parse("0-7:2/4").is_err());
        assert!(parse("0-7:0").is_err());
        assert!(parse("N").is_err());
        assert!(parse("5-2").is_err());
        assert!(parse("1,,2").is_err());
        assert_eq!(parse("0-2000").unwrap_err().errno(), "ERANGE");
    }

    #[test]
    fn wrap_iteration_starts_at_target() {
        let m = CpuMask::parse("0-3,8").unwrap();
        let order: Vec<usize> = m.iter_wrap(3).collect();
        assert_eq!(order, vec![3, 8, 0, 1, 2]);
    }

    proptest! {
        /// Whatever the input, the parser returns (no panic) and a set within nbits.
        #[test]
        fn parse_list_stays_within_nbits(text in "[0-9N,:/ a-l\n-]{0,24}", nbits in 1usize..=64) {
            if let Ok(m) = CpuMask::parse_list(&text, nbits) {
                prop_assert!(m.iter().all(|c| c < nbits));
            }
        }

        /// `iter_wrap(start)` is `for_each_cpu_wrap()`'s order: the CPUs `>= start`
        /// ascending, then those below it (and `iter_from` the first part), for any start.
        #[test]
        fn wrap_order_matches_naive_order(
            cpus in proptest::collection::btree_set(0usize..NR_CPUS_MAX, 0..64),
            start in 0usize..NR_CPUS_MAX + 8,
        ) {
            let m: CpuMask = cpus.iter().copied().collect();
            let want_from: Vec<usize> = cpus.iter().copied().filter(|&c| c >= start).collect();
            let mut want = want_from.clone();
            want.extend(cpus.iter().copied().filter(|&c| c < start));
            prop_assert_eq!(m.iter_from(start).collect::<Vec<_>>(), want_from);
            prop_assert_eq!(m.iter_wrap(start).collect::<Vec<_>>(), want);
        }

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
