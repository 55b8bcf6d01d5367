//! SIGINT / SIGTERM while simulations run: the first signal sets the stop flag that every
//! running engine polls (`crate::engine::control`), so the runs stop promptly and those that
//! had finished are written, marked `"complete": false` with `"stopped_reason"`; a second
//! signal exits at once with 128 + the signal number (130 for SIGINT), writing nothing more
//! (result files are renamed into place only when complete, so none is left half-written).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};

use crate::experiment::RunContext;

/// The installed handlers: which signal arrived first.
pub struct Signals {
    sigint: Arc<AtomicBool>,
    sigterm: Arc<AtomicBool>,
}

impl Signals {
    /// Install the handlers on `ctx`'s stop flag. Failing to install them (an unusual
    /// platform) leaves the default behaviour: the process is killed by the signal.
    pub fn install(ctx: &RunContext) -> Signals {
        let sigint = Arc::new(AtomicBool::new(false));
        let sigterm = Arc::new(AtomicBool::new(false));
        let stop = &ctx.shared.stop;
        for (sig, which) in [(SIGINT, &sigint), (SIGTERM, &sigterm)] {
            // Registered first, so it sees the flag as the previous signal left it.
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, stop.clone());
            let _ = signal_hook::flag::register(sig, stop.clone());
            let _ = signal_hook::flag::register(sig, which.clone());
        }
        Signals { sigint, sigterm }
    }

    /// The signal that stopped the runs, if any.
    pub fn reason(&self) -> Option<&'static str> {
        if self.sigint.load(Ordering::Relaxed) {
            Some("SIGINT")
        } else if self.sigterm.load(Ordering::Relaxed) {
            Some("SIGTERM")
        } else {
            None
        }
    }
}

/// The exit status after a stop by `reason` (128 + the signal number, as a shell reports a
/// process killed by it).
pub fn exit_code(reason: &str) -> i32 {
    128 + if reason == "SIGTERM" { SIGTERM } else { SIGINT }
}
