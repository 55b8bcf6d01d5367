//! Extracts the kernel functions under test from the installed kernel source tarballs
//! (Debian's `linux-source-X.Y` packages: `/usr/src/linux-source-X.Y.tar.xz`) with
//! `extract.py`, and compiles them with our shim (`shim/`) into a static library.
//!
//! Per kernel version and unit (`kernel-X.Y.spec`) it sets `cfg(kdiff_<unit>_<X>_<Y>)` when
//! the unit was built, and writes `OUT_DIR/units.rs`: every unit with `None` or the reason it
//! was skipped (tarball missing, definition not found, compile error). Nothing fails the
//! build: the tests print `SKIPPED: <reason>` (or fail under SCHEDLAB_REQUIRE_KERNEL_SOURCE=1).
//! `SCHEDLAB_KERNEL_SRC_DIR` replaces `/usr/src`.

use std::path::{Path, PathBuf};
use std::process::Command;

const VERSIONS: [&str; 2] = ["6.12", "6.1"];

fn units_of(spec: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(spec).expect("spec file");
    let mut units: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let unit = line.split_whitespace().next().unwrap().to_string();
        if !units.contains(&unit) {
            units.push(unit);
        }
    }
    units
}

fn tarball(src_dir: &Path, version: &str) -> Option<PathBuf> {
    ["tar.xz", "tar.bz2", "tar.gz"]
        .iter()
        .map(|ext| src_dir.join(format!("linux-source-{version}.{ext}")))
        .find(|p| p.exists())
}

/// Extracts the version's definitions; Err(reason) when that is impossible.
fn extract(manifest: &Path, src_dir: &Path, version: &str, out: &Path) -> Result<(), String> {
    let tar = tarball(src_dir, version).ok_or_else(|| {
        format!(
            "linux-source-{version} is not installed ({}/linux-source-{version}.tar.xz missing; \
             run scripts/install-kernel-source)",
            src_dir.display()
        )
    })?;
    let stamp = out.join("extracted.stamp");
    let spec = manifest.join(format!("kernel-{version}.spec"));
    let key = format!(
        "{:?}",
        (
            std::fs::metadata(&tar).and_then(|m| m.modified()).ok(),
            std::fs::read_to_string(&spec).ok(),
            std::fs::read_to_string(manifest.join("extract.py")).ok()
        )
    );
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str()) {
        return Ok(());
    }
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let res = Command::new("python3")
        .arg(manifest.join("extract.py"))
        .arg(&tar)
        .arg(out)
        .arg(&spec)
        .output()
        .map_err(|e| format!("cannot run python3 extract.py: {e}"))?;
    if !res.status.success() {
        return Err(format!(
            "extract.py failed: {}",
            String::from_utf8_lossy(&res.stderr).trim()
        ));
    }
    std::fs::write(&stamp, key).map_err(|e| e.to_string())
}

fn compile(manifest: &Path, out: &Path, version: &str, unit: &str) -> Result<(), String> {
    let tag = version.replace('.', "_");
    let tu = out.join(format!("{unit}_tu.c"));
    let body = format!(
        "#define KD(name) kd{}_##name\n#include \"shim.h\"\n#include \"{}\"\n#include \"{}\"\n",
        tag.replace('_', ""),
        out.join(format!("{unit}.kextract.c")).display(),
        manifest.join(format!("shim/{unit}_wrap.c")).display()
    );
    std::fs::write(&tu, body).map_err(|e| e.to_string())?;
    cc::Build::new()
        .file(&tu)
        .include(manifest.join("shim"))
        .std("gnu11")
        .opt_level(2)
        .warnings(false)
        .flag_if_supported("-fno-strict-aliasing")
        .flag_if_supported("-fwrapv")
        .cargo_metadata(true)
        .try_compile(&format!("kdiff_{unit}_{tag}"))
        .map_err(|e| format!("compiling {unit} of linux-source-{version} failed: {e}"))
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let src_dir = PathBuf::from(
        std::env::var("SCHEDLAB_KERNEL_SRC_DIR").unwrap_or_else(|_| "/usr/src".into()),
    );
    println!("cargo:rerun-if-env-changed=SCHEDLAB_KERNEL_SRC_DIR");
    println!("cargo:rerun-if-changed=extract.py");
    println!("cargo:rerun-if-changed=shim");
    for v in VERSIONS {
        println!("cargo:rerun-if-changed=kernel-{v}.spec");
        for ext in ["tar.xz", "tar.bz2", "tar.gz"] {
            let p = src_dir.join(format!("linux-source-{v}.{ext}"));
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    // A tarball installed later must trigger a rebuild: watch the directory too.
    if src_dir.exists() {
        println!("cargo:rerun-if-changed={}", src_dir.display());
    }
    cc::Build::new()
        .file(manifest.join("shim/common.c"))
        .include(manifest.join("shim"))
        .compile("kdiff_common");
    let mut table = String::from(
        "/// (unit, kernel version, skip reason)\npub const UNITS: &[(&str, &str, Option<&str>)] = &[\n",
    );
    for v in VERSIONS {
        let tag = v.replace('.', "_");
        let out = out_dir.join(format!("linux-{v}"));
        let extracted = extract(&manifest, &src_dir, v, &out);
        for unit in units_of(&manifest.join(format!("kernel-{v}.spec"))) {
            let cfg = format!("kdiff_{unit}_{tag}");
            println!("cargo::rustc-check-cfg=cfg({cfg})");
            let res = extracted
                .clone()
                .and_then(|()| compile(&manifest, &out, v, &unit));
            match res {
                Ok(()) => {
                    println!("cargo:rustc-cfg={cfg}");
                    table.push_str(&format!("    ({unit:?}, {v:?}, None),\n"));
                }
                Err(reason) => {
                    println!("cargo:warning=kernel_diff: {unit} ({v}) skipped: {reason}");
                    table.push_str(&format!("    ({unit:?}, {v:?}, Some({reason:?})),\n"));
                }
            }
        }
    }
    table.push_str("];\n/// (kernel version, exact release read from the tree's Makefile)\npub const RELEASES: &[(&str, &str)] = &[\n");
    for v in VERSIONS {
        let release = std::fs::read_to_string(out_dir.join(format!("linux-{v}/version.txt")))
            .unwrap_or_else(|_| "not installed".into());
        table.push_str(&format!("    ({v:?}, {:?}),\n", release.trim()));
    }
    table.push_str("];\n");
    std::fs::write(out_dir.join("units.rs"), table).unwrap();
}
