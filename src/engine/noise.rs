//! Run-to-run variation: the machine noise that makes two real runs of one benchmark differ.
//!
//! Real runs of a deterministic program differ because the machine under it is not
//! deterministic. Three sources are modelled, each drawn from seeded streams
//! ([`crate::rng`], kind `Noise`: one stream per task and one per CPU), so the same seed gives
//! byte-identical results and different seeds give different trajectories:
//!
//! - **Per-call work variance** ([`NoiseParams::work_cv_ppm`]): every `Op::Run` amount is
//!   scaled by a factor uniform in `[1 − a, 1 + a]` with `a = cv·√3` (coefficient of variation
//!   `cv`), standing for cache, branch-predictor and frequency differences between calls of
//!   the same code. Default 1 %. (stress-ng's `--cpu-method all` mix of per-method costs is
//!   the generator's own: each call has its method's cost.)
//! - **Timer expiry jitter** ([`NoiseParams::timer_jitter_ns_max`]): an hrtimer (sleep,
//!   load-slice sleep, periodic timer) fires a delay uniform in `[0, max)` after its
//!   programmed expiry plus slack — the hrtimer interrupt latency (interrupt entry, a
//!   hypervisor's timer injection on a VM). Default 4 µs.
//! - **Housekeeping/IRQ noise** ([`NoiseParams::irq_rate_hz`], [`NoiseParams::irq_len_ns`]):
//!   at each scheduler tick of a busy CPU, with probability `rate/HZ`, kernel work of length
//!   uniform in `[len/2, 3·len/2)` is charged to the CPU (RCU callbacks, vmstat/workqueue
//!   work, device interrupts). Defaults 100/s and 5 µs. Approximation: noise is placed only on
//!   busy CPUs' ticks (idle CPUs' noise would only delay an idle exit, which is left out), and
//!   rates are the same on every CPU.
//!
//! With every parameter 0 no noise stream is drawn from and the model is exactly the
//! noise-free one (`[run] noise = false` or each `[run] noise_*` key set to 0).

use crate::rng::{RngStream, StreamKind};
use crate::units::{ns_saturating, ppm_round};

/// Noise parameters (machine cost parameters; see the module doc for the defaults' meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct NoiseParams {
    /// Coefficient of variation of each `Op::Run` amount, parts per million.
    pub work_cv_ppm: u32,
    /// Largest hrtimer expiry delay (uniform in `[0, max)`), ns.
    pub timer_jitter_ns_max: u64,
    /// Housekeeping/IRQ events per second per busy CPU.
    pub irq_rate_hz: u32,
    /// Mean length of one housekeeping/IRQ event, ns.
    pub irq_len_ns: u64,
}

impl NoiseParams {
    /// Defaults: 1 % per-call work CV, up to 4 µs timer jitter, 100 IRQ/s of 5 µs.
    pub const DEFAULT: NoiseParams = NoiseParams {
        work_cv_ppm: 10_000,
        timer_jitter_ns_max: 4_000,
        irq_rate_hz: 100,
        irq_len_ns: 5_000,
    };
    /// No noise: the deterministic-per-seed model.
    pub const OFF: NoiseParams = NoiseParams {
        work_cv_ppm: 0,
        timer_jitter_ns_max: 0,
        irq_rate_hz: 0,
        irq_len_ns: 0,
    };
}

impl Default for NoiseParams {
    fn default() -> Self {
        NoiseParams::DEFAULT
    }
}

/// The engine's noise state: the parameters and the per-task and per-CPU streams.
#[derive(Debug, Clone)]
pub struct Noise {
    params: NoiseParams,
    /// Half-width of the work factor in ppm (`cv·√3`).
    work_half_width_ppm: u64,
    tasks: Vec<RngStream>,
    cpus: Vec<RngStream>,
}

impl Noise {
    pub fn new(params: NoiseParams, seed: u64, nr_tasks: usize, nr_cpus: usize) -> Noise {
        let half = ppm_round(f64::from(params.work_cv_ppm) * 3f64.sqrt());
        assert!(half < 1_000_000, "work CV too large: factor would reach 0");
        Noise {
            params,
            work_half_width_ppm: half,
            tasks: (0..nr_tasks as u64)
                .map(|i| RngStream::new(seed, StreamKind::NoiseTask, i))
                .collect(),
            cpus: (0..nr_cpus as u64)
                .map(|i| RngStream::new(seed, StreamKind::NoiseCpu, i))
                .collect(),
        }
    }

    pub fn params(&self) -> NoiseParams {
        self.params
    }

    /// The work of one `Op::Run` of task `task` with nominal `work_ns`.
    #[inline]
    pub fn run_work_ns(&mut self, task: usize, work_ns: u64) -> u64 {
        let h = self.work_half_width_ppm;
        if h == 0 || work_ns == 0 {
            return work_ns;
        }
        let ppm = 1_000_000 - h + self.tasks[task].below(2 * h + 1);
        scale_ppm(work_ns, ppm)
    }

    /// Extra delay of one hrtimer expiry of task `task`.
    pub fn timer_jitter_ns(&mut self, task: usize) -> u64 {
        match self.params.timer_jitter_ns_max {
            0 => 0,
            max => self.tasks[task].below(max),
        }
    }

    /// Housekeeping work to charge at a tick of busy CPU `cpu` with tick rate `hz` (0 = none).
    pub fn tick_irq_ns(&mut self, cpu: usize, hz: u32) -> u64 {
        let p = &self.params;
        if p.irq_rate_hz == 0 || p.irq_len_ns == 0 || hz == 0 {
            return 0;
        }
        let rng = &mut self.cpus[cpu];
        // P(event in this tick) = rate/HZ (more than one per tick when rate > HZ: the
        // whole part always happens).
        let per_tick_ppm = u64::from(p.irq_rate_hz) * 1_000_000 / u64::from(hz);
        let mut n = per_tick_ppm / 1_000_000;
        if rng.below(1_000_000) < per_tick_ppm % 1_000_000 {
            n += 1;
        }
        let mut ns = 0;
        for _ in 0..n {
            ns += p.irq_len_ns / 2 + rng.below(p.irq_len_ns.max(1));
        }
        ns
    }
}

/// `work × ppm / 10^6` (floor, at least 1). In `u64` when the product fits (every
/// realistic amount: `ppm < 2·10^6`), so the division by the constant is a multiply and
/// shift rather than the 128-bit division call it was on every `Op::Run`; the same value
/// as the `u128` formula either way (saturated at `u64::MAX`, past any run's end).
#[inline]
fn scale_ppm(work_ns: u64, ppm: u64) -> u64 {
    match work_ns.checked_mul(ppm) {
        Some(x) => (x / 1_000_000).max(1),
        None => ns_saturating((u128::from(work_ns) * u128::from(ppm)) / 1_000_000).max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The `u64` fast path gives the `u128` formula's value, small and huge amounts.
        #[test]
        fn scale_ppm_matches_u128(
            work in prop_oneof![0u64..1 << 44, any::<u64>()],
            ppm in 0u64..2_000_000,
        ) {
            let exact = (u128::from(work) * u128::from(ppm)) / 1_000_000;
            let want = u64::try_from(exact).unwrap_or(u64::MAX).max(1);
            prop_assert_eq!(scale_ppm(work, ppm), want);
        }
    }

    #[test]
    fn off_draws_nothing_and_changes_nothing() {
        let mut n = Noise::new(NoiseParams::OFF, 7, 2, 2);
        assert_eq!(n.run_work_ns(0, 1234), 1234);
        assert_eq!(n.timer_jitter_ns(1), 0);
        assert_eq!(n.tick_irq_ns(0, 250), 0);
    }

    #[test]
    fn work_factor_has_requested_cv_and_mean() {
        let mut n = Noise::new(NoiseParams::DEFAULT, 3, 1, 1);
        let xs: Vec<f64> = (0..200_000)
            .map(|_| n.run_work_ns(0, 1_000_000) as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        let cv = var.sqrt() / mean;
        assert!((mean / 1e6 - 1.0).abs() < 1e-3, "mean {mean}");
        assert!((cv - 0.01).abs() < 5e-4, "cv {cv}");
    }

    #[test]
    fn irq_rate_matches_parameter() {
        let mut n = Noise::new(NoiseParams::DEFAULT, 5, 1, 1);
        let ticks = 250_000; // 1000 s at HZ=250
        let total: u64 = (0..ticks).map(|_| n.tick_irq_ns(0, 250)).sum();
        // 100/s × 5 µs = 0.5 ms per s of busy time.
        let per_s = total as f64 / 1000.0;
        assert!((per_s / 500_000.0 - 1.0).abs() < 0.02, "{per_s} ns/s");
    }

    #[test]
    fn streams_depend_on_seed() {
        let mut a = Noise::new(NoiseParams::DEFAULT, 1, 1, 1);
        let mut b = Noise::new(NoiseParams::DEFAULT, 2, 1, 1);
        let va: Vec<u64> = (0..8).map(|_| a.run_work_ns(0, 1_000_000)).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.run_work_ns(0, 1_000_000)).collect();
        assert_ne!(va, vb);
    }
}
