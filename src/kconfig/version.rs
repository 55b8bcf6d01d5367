//! Kernel release numbers (`v6.12`), as used by profiles and by the feature history.
//!
//! Only `major.minor` is kept: the profiles model mainline releases, and where a stable
//! backport matters (e.g. proportional newidle in 6.18.5) the profile's doc comment says so.

use std::fmt;

/// A mainline kernel release, `major.minor`. Ordered as releases are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelVersion {
    pub major: u16,
    pub minor: u16,
}

impl PartialOrd for KernelVersion {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KernelVersion {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl KernelVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        KernelVersion { major, minor }
    }

    /// `major` and `minor` in one integer that orders as the pair does. The placement and
    /// balance code tests the version on every wakeup; one comparison instead of the
    /// derived field-by-field one (issue 14).
    #[inline]
    const fn key(self) -> u32 {
        (self.major as u32) << 16 | self.minor as u32
    }

    /// Parse `v6.12`, `6.12` or `6.12.5` (the sub-level is ignored).
    pub fn parse(text: &str) -> Option<KernelVersion> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let mut parts = t.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        if let Some(sub) = parts.next() {
            sub.parse::<u16>().ok()?;
        }
        if parts.next().is_some() {
            return None;
        }
        Some(KernelVersion { major, minor })
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}", self.major, self.minor)
    }
}

impl schemars::JsonSchema for KernelVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KernelVersion".into()
    }

    /// What [`KernelVersion`] serializes to: `vMAJOR.MINOR`.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A kernel release, vMAJOR.MINOR (e.g. v6.6).",
            "type": "string",
            "pattern": "^v[0-9]+\\.[0-9]+$"
        })
    }
}

impl serde::Serialize for KernelVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Shorthand for the version constants of the feature history tables.
pub(crate) const fn v(major: u16, minor: u16) -> KernelVersion {
    KernelVersion::new(major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(KernelVersion::parse("v6.12"), Some(v(6, 12)));
        assert_eq!(KernelVersion::parse("6.9"), Some(v(6, 9)));
        assert_eq!(KernelVersion::parse("6.18.5"), Some(v(6, 18)));
        assert_eq!(KernelVersion::parse("v6"), None);
        assert_eq!(KernelVersion::parse("v6.x"), None);
        assert!(
            v(6, 9) < v(6, 12),
            "6.9 precedes 6.12 (numeric, not lexical)"
        );
        assert!(v(5, 15) < v(6, 0));
        assert_eq!(v(3, 16).to_string(), "v3.16");
    }

    #[test]
    fn order_is_the_pairs_order() {
        let vals = [0u16, 1, 9, 12, 255, 256, 1000, u16::MAX];
        for &a in &vals {
            for &b in &vals {
                for &c in &vals {
                    for &d in &vals {
                        assert_eq!(
                            v(a, b).cmp(&v(c, d)),
                            (a, b).cmp(&(c, d)),
                            "{a}.{b} vs {c}.{d}"
                        );
                    }
                }
            }
        }
    }
}
