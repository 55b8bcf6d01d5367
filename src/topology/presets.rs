//! Machine presets (ARCHITECTURE.md §4), each built from public facts cited in its doc
//! comment. Placeholder until the presets land.

use super::Machine;

/// Every preset name, in the order `schedlab list machines` prints them.
pub fn names() -> &'static [&'static str] {
    &[]
}

/// The preset called `name`, if there is one.
pub fn by_name(_name: &str) -> Option<Machine> {
    None
}
