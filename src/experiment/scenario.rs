//! The scenario resolved once per command: a parsed [`Scenario`] (file, `--set`, the
//! quick-form options, a variant) turned into a [`ResolvedScenario`] — its machine (imports
//! read once per command, through [`Imports`]), its cost model, its workload checked against
//! the machine, and on `host` the running kernel's settings — before any run starts. Each run
//! then only instantiates it for its seed ([`ResolvedScenario::instantiate`]: the plan, the
//! policy, the engine settings).
//!
//! So every error a scenario can give (a bad key in any `compare` variant, a workload that
//! does not fit the machine) is reported before the first run, and a sysfs snapshot or an
//! hwloc file is read once per command however many seeds and variants run on it.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use crate::config::scenario::Scenario;
use crate::cost::CostModel;
use crate::engine::EngineConfig;
use crate::error::{InputError, InputResult};
use crate::kconfig::host::HostKernel;
use crate::policy::SchedPolicy;
use crate::topology::Machine;
use crate::workload::background::BackgroundParams;

use super::workloads::{self, ResolvedWorkload, WorkloadSetup};

/// Where an imported machine comes from: `[machine]`'s `preset`, `sysfs_root` and `hwloc`.
type MachineSource = (Option<String>, Option<String>, Option<String>);

/// What the scenarios of one command read from outside once: the machines they import (by
/// source, before `offline`) and, on `host`, the running kernel's settings and idle states.
#[derive(Debug, Default)]
pub struct Imports {
    machines: Mutex<BTreeMap<MachineSource, Machine>>,
    host: OnceLock<HostKernel>,
    host_idle: OnceLock<String>,
}

impl Imports {
    /// The machine of `source`, imported on first use (`import`), a copy after that.
    fn machine(
        &self,
        source: MachineSource,
        import: impl FnOnce() -> InputResult<Machine>,
    ) -> InputResult<Machine> {
        let mut machines = self.machines.lock().expect("imports lock");
        if let Some(m) = machines.get(&source) {
            return Ok(m.clone());
        }
        let m = import()?;
        machines.insert(source, m.clone());
        Ok(m)
    }

    /// The running kernel's settings (`-m host`), read once.
    pub fn host_kernel(&self) -> &HostKernel {
        self.host.get_or_init(super::read_host)
    }

    /// The one line saying which idle states and governor the cpuidle model took from sysfs
    /// (`-m host`), read once.
    fn host_idle_summary(&self) -> &str {
        self.host_idle.get_or_init(|| {
            crate::cpuidle::states::host_summary(std::path::Path::new("/sys/devices/system/cpu"))
        })
    }
}

/// Resolve `[machine]` with the imports of `imports` (see [`super::resolve_machine`]).
pub fn resolve_machine_in(scn: &Scenario, imports: &Imports) -> InputResult<Machine> {
    let spec = &scn.machine;
    if spec.topology.is_some() {
        return super::resolve_machine(scn);
    }
    let source = (
        spec.preset.clone(),
        spec.sysfs_root.clone(),
        spec.hwloc.clone(),
    );
    let mut machine = imports.machine(source, || super::import_machine(scn))?;
    super::apply_offline(scn, &mut machine)?;
    Ok(machine)
}

/// A scenario ready to run: everything that does not depend on the seed, resolved and
/// checked. Shared by the runs of all its seeds (it is `Sync`).
#[derive(Debug)]
pub struct ResolvedScenario {
    /// The scenario as run: on `host`, with HZ and the preemption model read from the
    /// running kernel where the scenario did not set them.
    pub scenario: Scenario,
    /// The running kernel's settings, on `host`.
    pub host_kernel: Option<HostKernel>,
    /// The cpuidle model's line about the host's idle states, on `host`.
    pub host_idle_summary: Option<String>,
    pub machine: Machine,
    pub cost: CostModel,
    pub workload: WorkloadSetup,
    /// The workloads after the first, when several run together.
    pub more_workloads: Vec<WorkloadSetup>,
    /// The machine's background tasks (`crate::workload::background`).
    pub background: BackgroundParams,
    /// The plan of the first seed, made to check it before any run (`(seed, workload)`),
    /// until the run of that seed takes it.
    checked: Mutex<Option<(u64, ResolvedWorkload)>>,
}

/// What one run of a [`ResolvedScenario`] starts from: the workload's plan for its seed,
/// the engine settings and the policy.
pub struct Instance {
    pub workload: ResolvedWorkload,
    pub cfg: EngineConfig,
    pub policy: Box<dyn SchedPolicy>,
}

impl ResolvedScenario {
    /// Resolve `scn` with the imports of `imports`: the machine, the cost model and the
    /// workload, and the plan of its first seed (`run.seed`'s first run seed) checked against
    /// the machine as the engine checks it, so that no run can fail on its inputs.
    pub fn resolve(scn: &Scenario, imports: &Imports) -> InputResult<ResolvedScenario> {
        let (scenario, host_kernel) = match super::is_host(scn) {
            true => {
                let host = imports.host_kernel().clone();
                (super::host_adjusted(scn, &host), Some(host))
            }
            false => (scn.clone(), None),
        };
        let machine = resolve_machine_in(&scenario, imports)?;
        let cost = super::resolve_cost(&scenario, &machine)?;
        let workload = workloads::setup(&scenario, &scenario.workload, &machine)?;
        let more_workloads = (scenario.more_workloads.iter())
            .map(|w| workloads::setup(&scenario, w, &machine))
            .collect::<InputResult<Vec<_>>>()?;
        check_several(&scenario, &workload, &more_workloads)?;
        let background =
            (scenario.run.background).resolve(BackgroundParams::default_for(host_kernel.is_some()));
        let seed = crate::rng::run_seed(scenario.run.seed, 0);
        let first = instantiate_all(&scenario, &machine, &cost, &workload, &more_workloads, seed)?
            .with_background(crate::workload::background::plan(
                &background,
                &machine,
                seed,
            ));
        crate::engine::validate_plan(&machine, &first.plan).map_err(|e| {
            InputError::with_key(scenario.origin_of("workload"), "workload", e.to_string())
        })?;
        Ok(ResolvedScenario {
            host_idle_summary: host_kernel
                .as_ref()
                .map(|_| imports.host_idle_summary().to_string()),
            scenario,
            host_kernel,
            machine,
            cost,
            workload,
            more_workloads,
            background,
            checked: Mutex::new(Some((seed, first))),
        })
    }

    /// Resolve `scn` on its own (its imports read for it alone).
    pub fn resolve_alone(scn: &Scenario) -> InputResult<ResolvedScenario> {
        ResolvedScenario::resolve(scn, &Imports::default())
    }

    /// The run of `seed`: its workload plan, engine settings and policy.
    pub fn instantiate(&self, seed: u64) -> InputResult<Instance> {
        let checked = self.checked.lock().expect("plan lock").take();
        let workload = match checked {
            Some((s, w)) if s == seed => w,
            _ => instantiate_all(
                &self.scenario,
                &self.machine,
                &self.cost,
                &self.workload,
                &self.more_workloads,
                seed,
            )?
            .with_background(crate::workload::background::plan(
                &self.background,
                &self.machine,
                seed,
            )),
        };
        let mut cfg = super::engine_config(&self.scenario, seed, workload.default_duration_ns);
        cfg.warmup_ns = cfg.warmup_ns.max(workload.warmup_ns);
        let policy = super::make_policy(&self.scenario, &self.machine, &self.cost, seed);
        Ok(Instance {
            workload,
            cfg,
            policy,
        })
    }
}

/// The plan of every workload of the run of `seed`, joined into one when there are several.
fn instantiate_all(
    scn: &Scenario,
    machine: &Machine,
    cost: &CostModel,
    first: &WorkloadSetup,
    more: &[WorkloadSetup],
    seed: u64,
) -> InputResult<ResolvedWorkload> {
    let sections = std::iter::once(&scn.workload).chain(&scn.more_workloads);
    let mut all = std::iter::once(first)
        .chain(more)
        .map(|w| w.instantiate(machine, Some(cost), seed))
        .collect::<InputResult<Vec<_>>>()?;
    for (w, section) in all.iter_mut().zip(sections) {
        if let Some(ms) = section.start_ms {
            // A later start makes the workload's own length end later too.
            crate::workload::merge::delay(&mut w.plan, ms * 1_000_000);
            w.default_duration_ns = w.default_duration_ns.saturating_add(ms * 1_000_000);
            w.ending = w.ending.delayed(ms * 1_000_000);
        }
    }
    let first = all.remove(0);
    ResolvedWorkload::join(first, all)
        .map_err(|e| InputError::with_key(scn.origin_of("workload"), "workload", e))
}

/// Several workloads in one run: none may have a warm-up of its own (schbench `-w`). The
/// engine's warm-up restarts every statistic of the run, so one workload's warm-up would
/// erase what another measured before it ended.
fn check_several(scn: &Scenario, first: &WorkloadSetup, more: &[WorkloadSetup]) -> InputResult<()> {
    if more.is_empty() {
        return Ok(());
    }
    let all = std::iter::once(first).chain(more);
    match all.enumerate().find(|(_, w)| w.warmup_ns > 0) {
        None => Ok(()),
        Some((i, w)) => Err(InputError::with_key(
            scn.origin_of("workload"),
            format!("workload[{}]", i + 1),
            format!(
                "a warm-up of its own ({} s) in a run of several workloads: the warm-up restarts \
                 the whole run's statistics, the other workloads' too (accepted: no warm-up in \
                 each workload, e.g. schbench -w 0; [run] warmup_s applies to the whole run)",
                w.warmup_ns as f64 / 1e9
            ),
        )),
    }
}
