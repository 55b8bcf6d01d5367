//! The `schedlab` binary: see `schedlab --help`.
fn main() {
    std::process::exit(schedlab::cli::main());
}
