//! Turning a machine spec (`spr-2s`, `host`, `box.xml`, `snapshot/`, `box.toml`) into a
//! [`Machine`]: dispatch to a preset or to an importer ([`super::sysfs`], [`super::hwloc`],
//! [`super::file`]), which read their source into a raw machine and assemble it with
//! [`super::raw`]. Layering inside `topology`: `raw` <- importers <- `resolve`.

use std::path::Path;

use super::{Machine, file, hwloc, presets};
use crate::error::{InputError, InputResult};

pub use super::raw::REMOTE_DISTANCE;
/// What `resolve_machine` accepts besides a preset name, for error messages.
const ACCEPTED_FORMS: &str = "`host` (this machine's /sys), a hwloc XML file (`lstopo --of xml`, \
name ending .xml), a sysfs/proc snapshot directory (e.g. an unpacked hwloc-gather-topology \
tarball), or a topology file (name ending .toml)";

/// Resolve a machine spec: a preset name ([`presets::by_name`]), `host`, a path ending `.xml`
/// (hwloc), a `.toml` topology file, or a directory holding a sysfs snapshot.
pub fn resolve_machine(spec: &str) -> InputResult<Machine> {
    if let Some(machine) = presets::by_name(spec) {
        return Ok(machine);
    }
    if spec == "host" {
        return super::sysfs::host();
    }
    let path = Path::new(spec);
    let lower = spec.to_ascii_lowercase();
    if lower.ends_with(".xml") {
        return hwloc::import(path);
    }
    if lower.ends_with(".toml") {
        return file::import(path);
    }
    if path.is_dir() {
        return super::sysfs::import(path);
    }
    let presets = presets::names();
    let preset_list = if presets.is_empty() {
        "(none built in)".to_string()
    } else {
        presets.join(", ")
    };
    Err(InputError::new(
        "machine",
        format!(
            "unknown machine '{spec}'; accepted: a preset name ({preset_list}), {ACCEPTED_FORMS}"
        ),
    ))
}

/// Resolve the machine from the command line's three mutually exclusive sources: a
/// `MACHINE` spec (see [`resolve_machine`]), `--sysfs-root DIR` or `--hwloc FILE`.
pub fn resolve_machine_with(
    spec: Option<&str>,
    sysfs_root: Option<&Path>,
    hwloc_file: Option<&Path>,
) -> InputResult<Machine> {
    match (spec, sysfs_root, hwloc_file) {
        (Some(spec), None, None) => resolve_machine(spec),
        (None, Some(root), None) => super::sysfs::import(root),
        (None, None, Some(xml)) => hwloc::import(xml),
        (None, None, None) => Err(InputError::new(
            "command line",
            format!(
                "no machine given; accepted: MACHINE (a preset name, {ACCEPTED_FORMS}), \
--sysfs-root DIR or --hwloc FILE"
            ),
        )),
        _ => Err(InputError::new(
            "command line",
            "give only one of MACHINE, --sysfs-root DIR and --hwloc FILE",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_specs_list_what_is_accepted() {
        let e = resolve_machine("no-such-machine").unwrap_err();
        assert!(e.message.contains("no-such-machine"));
        assert!(e.message.contains("host"));
        assert!(e.message.contains(".toml"));
        let e = resolve_machine_with(None, None, None).unwrap_err();
        assert!(e.message.contains("--sysfs-root"));
        let e = resolve_machine_with(Some("host"), Some(Path::new("/")), None).unwrap_err();
        assert!(e.message.contains("only one"));
    }
}
