//! Records how the binary was built, for `schedlab bench`'s report (issue 14): the cargo
//! profile and whether the build was profile-guided (`scripts/build-pgo` passes
//! `-Cprofile-use`). Speed figures are only comparable between builds of the same kind.

fn main() {
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".to_string());
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let kind = if flags.split('\x1f').any(|f| f.starts_with("-Cprofile-use")) {
        "pgo"
    } else if flags
        .split('\x1f')
        .any(|f| f.starts_with("-Cprofile-generate"))
    {
        "pgo-instrumented"
    } else {
        "plain"
    };
    println!("cargo:rustc-env=SCHEDLAB_BUILD={profile}/{kind}");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
