//! The machine cost model (ARCHITECTURE.md §5): what things cost in virtual time.
//!
//! Every overhead the scheduler or the hardware imposes is a parameter here, charged in
//! virtual time to the CPU that pays it, so that effects (a TTWU_QUEUE win, an expensive
//! newidle balance, an SMT-sibling slowdown) emerge from mechanisms rather than from curve
//! fitting. Defaults are starting points taken from public measurements (cited per field);
//! every field can be overridden in a scenario's `[machine.cost]` table.
//!
//! Approximations, each with its reason:
//! - Cache refill after a migration is charged as extra work proportional to the task's
//!   footprint and to how far it moved, not as a gradual speed ramp: what matters to the
//!   scheduler is the total delay, and a lump keeps progress accounting exact.
//! - Idle states and the tick are decided by the cpuidle governors (`crate::cpuidle`), from
//!   the machine's own idle-state table (`crate::cpuidle::states::table_for`).
//! - Memory locality ([`mem_time_scale_ppm`]): a task's memory-stall share of run time
//!   stretches by the SLIT distance to the nodes holding its pages, weighted by their page
//!   shares. Why a linear distance ratio: SLIT distances are meant as relative latencies
//!   (ACPI: 10 = local), and a stall-bound share scales with latency. Not modelled: memory
//!   bandwidth saturation (no per-node queueing), caches hiding remote latency, and page
//!   migration (NUMA balancing will add it).
//! - Machine speed (`speed_pct`): one factor for every task's progress relative to the
//!   reference CPU the workloads' work is written for; the scheduler's own costs (switches,
//!   IPIs, scans) are absolute and not scaled by it, since they are set per machine anyway.

use serde::{Deserialize, Serialize};

use crate::topology::Machine;

use crate::cpuidle::IdleState;
use crate::input::shape::{Key, Shape, ShapeError};

/// Costs of one machine, in nanoseconds unless named otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostModel {
    /// Direct cost of `__schedule()` switching tasks: `context_switch()` (`switch_mm`,
    /// `switch_to`, `finish_task_switch()`) and the rest of `__schedule()` not costed
    /// separately. lmbench `lat_ctx` with a tiny footprint gives 1–3 µs per switch on
    /// current x86 servers for the whole block → wake → switch cycle; the model's 1.5 µs
    /// cycle is split into this 1.0 µs plus [`CostModel::dequeue_task_ns`],
    /// [`CostModel::enqueue_task_ns`], [`CostModel::put_prev_entity_ns`] and
    /// [`CostModel::set_next_entity_ns`] (200 + 200 + 50 + 50 ns), so a plain cycle costs
    /// what it did and the parts fall on the CPU and in the lock window where the kernel
    /// does them.
    pub context_switch_ns: u64,
    /// `enqueue_task()` of one task at one sched_entity level (the model has one: no
    /// cgroup hierarchy): core's `enqueue_task()` bookkeeping (sched_info, psi) and
    /// `enqueue_task_fair()`: `update_curr()`, `update_load_avg()`, `place_entity()`,
    /// `account_entity_enqueue()`, `avg_vruntime_add()`, the rbtree insert. Also the
    /// `ENQUEUE_DELAYED` requeue of a `sched_delayed` task (`requeue_delayed_entity()`:
    /// `update_load_avg()`, `clear_delayed()`, the re-place), which does most of the same
    /// work. Charged to the CPU doing the enqueue, inside the target's runqueue-lock window.
    /// Split out of the 1.5 µs lmbench `lat_ctx` cycle (see [`CostModel::context_switch_ns`]).
    pub enqueue_task_ns: u64,
    /// `dequeue_task()` of one task at one level: `dequeue_task_fair()` →
    /// `dequeue_entities()`: `update_curr()`, `update_load_avg()`, `update_entity_lag()`,
    /// `avg_vruntime_sub()`, the rbtree erase, `account_entity_dequeue()`, util_est. Paid by
    /// the blocking CPU inside `__schedule()` (a delayed dequeue does the same bookkeeping up
    /// to `set_delayed()`), again by the CPU that completes a `DEQUEUE_DELAYED` dequeue (at a
    /// pick that lands on the delayed entity, or at a TTWU_QUEUE_DELAYED wakeup), and by a
    /// balancer detaching a task.
    pub dequeue_task_ns: u64,
    /// `put_prev_entity()` (`update_curr()`, the rbtree insert of a still-queued prev,
    /// `update_load_avg()`) on a switch away from a task.
    pub put_prev_entity_ns: u64,
    /// `set_next_entity()` (the rbtree erase of next, `update_load_avg()`, the protection
    /// window) on a switch to a task.
    pub set_next_entity_ns: u64,
    /// `hrtimer_start_range_ns()` of a sleep (`nanosleep`/`usleep`, `clock_nanosleep`, a
    /// futex or poll timeout): timerqueue insert and, for the earliest timer, the
    /// clockevent reprogram (`tick_program_event()`: a TSC-deadline MSR or LAPIC write).
    /// Charged to the CPU arming it, before the task blocks.
    pub hrtimer_start_ns: u64,
    /// The expiry side: `hrtimer_interrupt()` (interrupt entry/exit, `__hrtimer_run_queues()`,
    /// the next reprogram) before `hrtimer_wakeup()` runs the wakeup, on the timer's CPU.
    pub hrtimer_expire_ns: u64,
    /// One cache-line transfer (a read miss served by another CPU's cache, or the
    /// invalidation of a reader's copy) between CPUs sharing an LLC: what polling a remote
    /// CPU's `p->on_cpu` pays per transfer (`smp_cond_load_acquire()`).
    pub cacheline_llc_ns: u64,
    /// The same between LLCs of one node.
    pub cacheline_cross_llc_ns: u64,
    /// The same across nodes (sockets): the socket interconnect's round trip.
    pub cacheline_cross_node_ns: u64,
    /// Cost on the sending CPU of an IPI (`smp_call_function_single` queueing + APIC write).
    pub ipi_send_ns: u64,
    /// Delivery latency of an IPI between CPUs sharing an LLC (1–2 µs bare metal,
    /// kernel-wakeup digest §1.5).
    pub ipi_latency_ns: u64,
    /// Extra IPI latency per unit of NUMA distance above local (cross-socket IPIs cost more).
    pub ipi_latency_per_distance_ns: u64,
    /// Interrupt entry/exit plus handler work on the receiving CPU.
    pub ipi_handle_ns: u64,
    /// Taking a remote runqueue lock and touching its cache lines, same LLC.
    pub remote_lock_llc_ns: u64,
    /// The same across LLCs of one node.
    pub remote_lock_cross_llc_ns: u64,
    /// The same across nodes.
    pub remote_lock_cross_node_ns: u64,
    /// How long a remote activation holds a runqueue lock besides the work it does under it
    /// (lock hand-over, `ttwu_do_wakeup()`, `wakeup_preempt()`): a second locker waits this
    /// long plus the charged enqueue work ([`CostModel::enqueue_task_ns`]).
    pub rq_lock_hold_ns: u64,
    /// Per CPU examined by an idle-CPU scan (`select_idle_cpu`, `select_idle_core`): one
    /// remote runqueue cache line.
    pub idle_scan_step_ns: u64,
    /// Fixed cost of one load-balance pass at one domain.
    pub balance_pass_ns: u64,
    /// Per CPU whose statistics a balance pass reads (`update_sg_lb_stats`).
    pub balance_per_cpu_ns: u64,
    /// Per task examined by `detach_tasks()`.
    pub balance_per_task_ns: u64,
    /// Idle states, shallowest first, as the machine's cpuidle driver registers them
    /// (default: [`crate::cpuidle::states::table_for`]).
    pub idle_states: Vec<IdleState>,
    /// The cpuidle governor (`menu`, `teo`, `haltpoll`; kernel default menu).
    pub cpuidle_governor: crate::cpuidle::Governor,
    /// The haltpoll governor's module parameters (`[machine.cost.haltpoll]`; the module
    /// defaults, or this machine's `/sys/module/haltpoll/parameters` on `host`).
    pub haltpoll: crate::cpuidle::HaltpollParams,
    /// Per-thread throughput with k SMT siblings busy (index k-1), in percent of running
    /// alone. SMT2 Intel/AMD: ~1.25x core throughput → 62 % per thread.
    pub smt_speed_pct: Vec<u32>,
    /// Cache refill after a migration, per KiB of footprint, by distance moved.
    pub refill_ns_per_kib_cluster: u64,
    pub refill_ns_per_kib_llc: u64,
    pub refill_ns_per_kib_cross_llc: u64,
    pub refill_ns_per_kib_cross_node: u64,
    /// `dl_server_start()` on a CPU's fair queue going 0 → 1: DL entity bookkeeping and an
    /// hrtimer start (an estimate: a timer-base update plus, often, a clockevent reprogram).
    pub dl_server_start_ns: u64,
    /// `dl_server_stop()` on 1 → 0 (before v6.17): DL dequeue and an hrtimer cancel.
    pub dl_server_stop_ns: u64,
    /// Speed of this machine's CPUs relative to the reference CPU in which workloads express
    /// their work (`Op::Run { work_ns }` = time on the reference CPU), in percent: 50 = every
    /// task progresses at half the reference speed (before capacity, SMT and memory effects).
    /// Default 100 for every preset: their absolute per-thread speeds are not modelled, so
    /// absolute throughput across machines is comparable only once this is set per machine
    /// (e.g. from a timed loop of the benchmark's kernel on both).
    pub speed_pct: u32,
    /// Work of one AF_UNIX socket message (hackbench's `sendmsg()`/`recvmsg()` on a
    /// `SOCK_STREAM` pair: skb allocation, queueing, the copy, the wakeup), in percent of the
    /// reference CPU's at [`CostModel::speed_pct`]: 100 = socket syscalls scale like the
    /// compute `speed_pct` was measured on; a machine whose kernel paths are slower than its
    /// compute (a VM's exits, speculation mitigations, a different cache hierarchy) has more.
    /// Default 100; `schedlab calibrate` fits it on `-m host` from one CPU's hackbench over
    /// sockets (docs/host-benchmarks.md, "Calibration").
    pub af_unix_cost_pct: u32,
    /// `sched_setaffinity()` on the calling CPU: copying the mask in, the cpuset
    /// intersection, task/runqueue locking, `__set_cpus_allowed_ptr_locked()` (an estimate:
    /// ~1 µs, a system call of moderate work). A move additionally costs a switch to the
    /// migration stopper (`context_switch_ns`).
    pub sched_setaffinity_ns: u64,
    /// IRQ and steal time per CPU, in percent of the CPU (cpulist → percent, 0..=90; CPUs not
    /// listed: 0). A virtual machine's vCPU loses steal time to the host, and a CPU that
    /// takes a device's interrupts loses IRQ time. Both slow its tasks by that share, and —
    /// as `scale_rt_capacity()` does with `avg_irq` (steal included under
    /// CONFIG_PARAVIRT_TIME_ACCOUNTING; NONTASK_CAPACITY) — lower its `capacity_of()` to
    /// `(capacity − avg_rt) · (100 − pct) / 100`, which `wake_affine_weight()`, the load
    /// balancer's group capacities and `select_idle_capacity()` read.
    pub nontask_pct: std::collections::BTreeMap<String, u32>,
    /// [`CostModel::nontask_pct`] resolved per CPU (filled by [`CostModel::resolve_nontask`]).
    #[serde(skip)]
    pub nontask_pct_by_cpu: Vec<u32>,
    /// Memory bandwidth of one NUMA node (MiB/s) for the page-group memory model's
    /// congestion (`memory::bandwidth`): a STREAM-triad-like sustained figure per socket of
    /// the preset's family (see [`CostModel::default_for`]; docs/fidelity.md).
    pub mem_bw_mib_s_per_node: u64,
    /// Last-level cache per CPU (KiB): the LLC size divided by the CPUs sharing it. The
    /// memory model derives a task's memory-stall share from its working set against it.
    pub llc_kib_per_cpu: u64,
    /// Load-to-use latency of a cache line from the local node's DRAM (ns); a node at SLIT
    /// distance d costs d/10 times as much (`memory::traffic`). Default 90 ns (a current
    /// server's idle latency, an estimate), per preset family in [`mem_latency_local_ns_for`].
    pub mem_latency_local_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            context_switch_ns: 1_000,
            enqueue_task_ns: 200,
            dequeue_task_ns: 200,
            put_prev_entity_ns: 50,
            set_next_entity_ns: 50,
            hrtimer_start_ns: 500,
            hrtimer_expire_ns: 1_000,
            cacheline_llc_ns: 60,
            cacheline_cross_llc_ns: 120,
            cacheline_cross_node_ns: 300,
            ipi_send_ns: 300,
            ipi_latency_ns: 1_500,
            ipi_latency_per_distance_ns: 50,
            ipi_handle_ns: 800,
            remote_lock_llc_ns: 200,
            remote_lock_cross_llc_ns: 450,
            remote_lock_cross_node_ns: 900,
            rq_lock_hold_ns: 250,
            idle_scan_step_ns: 40,
            balance_pass_ns: 800,
            balance_per_cpu_ns: 60,
            balance_per_task_ns: 120,
            idle_states: crate::cpuidle::states::skx(),
            cpuidle_governor: crate::cpuidle::Governor::Menu,
            haltpoll: crate::cpuidle::HaltpollParams::default(),
            smt_speed_pct: vec![100, 62],
            refill_ns_per_kib_cluster: 10,
            refill_ns_per_kib_llc: 25,
            refill_ns_per_kib_cross_llc: 60,
            refill_ns_per_kib_cross_node: 110,
            speed_pct: 100,
            af_unix_cost_pct: 100,
            dl_server_start_ns: 600,
            dl_server_stop_ns: 400,
            sched_setaffinity_ns: 1_000,
            nontask_pct: std::collections::BTreeMap::new(),
            nontask_pct_by_cpu: Vec::new(),
            mem_bw_mib_s_per_node: 20_000,
            llc_kib_per_cpu: 1024,
            mem_latency_local_ns: 90,
        }
    }
}

/// A `[machine.cost]` time: 0 to [`crate::input::limits::MAX_COST_NS`] (one second).
const COST_NS: Shape = Shape::Int {
    min: 0,
    max: crate::input::limits::MAX_COST_NS,
    unit: " ns (the limit MAX_COST_NS: 1 s)",
};

/// A module parameter the kernel declares `uint` (the haltpoll governor's factors).
const KERNEL_UINT: Shape = Shape::Int {
    min: 0,
    max: u32::MAX as u64,
    unit: "",
};

/// One `idle_states` entry, as [`IdleState`] reads it.
const IDLE_STATE: Shape = Shape::Table(&[
    Key {
        name: "name",
        shape: Shape::Str,
        required: true,
    },
    Key {
        name: "exit_latency_ns",
        shape: COST_NS,
        required: true,
    },
    Key {
        name: "target_residency_ns",
        shape: COST_NS,
        required: true,
    },
    Key {
        name: "polling",
        shape: Shape::Bool,
        required: false,
    },
    Key {
        name: "mwait",
        shape: Shape::Bool,
        required: false,
    },
    Key {
        name: "core_exit_latency_ns",
        shape: COST_NS,
        required: false,
    },
]);

/// `[machine.cost.haltpoll]`, as [`crate::cpuidle::HaltpollParams`] reads it.
const HALTPOLL: Shape = Shape::Table(&[
    Key {
        name: "guest_halt_poll_ns",
        shape: COST_NS,
        required: false,
    },
    Key {
        name: "grow",
        shape: KERNEL_UINT,
        required: false,
    },
    Key {
        name: "grow_start_ns",
        shape: COST_NS,
        required: false,
    },
    Key {
        name: "shrink",
        shape: KERNEL_UINT,
        required: false,
    },
    Key {
        name: "allow_shrink",
        shape: Shape::Bool,
        required: false,
    },
]);

/// What the `[machine.cost]` key `key` accepts (`None`: not a key of the cost model, as far
/// as this function can tell: the caller checks the key against the model first). Times (`*_ns`) are 0 to
/// [`crate::input::limits::MAX_COST_NS`]; `speed_pct` and `af_unix_cost_pct` 1 to 100000;
/// `smt_speed_pct` one or more percentages from 1 to 100 (a CPU with busy siblings never
/// runs faster than alone, and at 0 its tasks would never progress); `idle_states` 1 to
/// `CPUIDLE_STATE_MAX` (10) states; `nontask_pct` CPU lists to 0..=90 percent (the lists are
/// checked against the machine by [`CostModel::resolve_nontask`]); other counts 0 to 2^63-1.
pub fn override_shape(key: &str) -> Option<Shape> {
    Some(match key {
        "idle_states" => Shape::Array {
            item: &IDLE_STATE,
            min: 1,
            max: crate::cpuidle::teo::MAX_STATES,
        },
        "cpuidle_governor" => Shape::Name(&crate::cpuidle::Governor::NAMES),
        "haltpoll" => HALTPOLL,
        "smt_speed_pct" => Shape::Array {
            item: &Shape::Int {
                min: 1,
                max: 100,
                unit: " (percent of running alone)",
            },
            min: 1,
            max: usize::MAX,
        },
        "nontask_pct" => Shape::Map {
            key_about: "a CPU list",
            value: &Shape::Int {
                min: 0,
                max: 90,
                unit: " (percent)",
            },
            example: "{ \"0-3\" = 10 }",
        },
        "speed_pct" | "af_unix_cost_pct" => Shape::Int {
            min: 1,
            max: 100_000,
            unit: " (percent of the reference CPU)",
        },
        "mem_bw_mib_s_per_node" | "llc_kib_per_cpu" => Shape::Int {
            min: 0,
            max: i64::MAX as u64,
            unit: "",
        },
        // Every other key is a time, per event or per KiB (`refill_ns_per_kib_*`).
        k if k.contains("_ns") => COST_NS,
        _ => return None,
    })
}

/// One override of a cost key, `prefix.key = value` (`prefix`: `machine.cost` in a scenario,
/// `cost` in a calibration file): the value normalized ([`crate::input::shape::check`]), or
/// an error naming the full key, the value and what is accepted (for an unknown key, the
/// keys of the model).
pub fn check_override(
    prefix: &str,
    key: &str,
    value: &toml::Value,
) -> Result<toml::Value, ShapeError> {
    let path = crate::input::shape::child(prefix, key);
    let keys = match toml::Value::try_from(CostModel::default()) {
        Ok(toml::Value::Table(t)) => t.keys().cloned().collect::<Vec<_>>(),
        _ => unreachable!("the cost model serializes to a table"),
    };
    match override_shape(key).filter(|_| keys.iter().any(|k| k == key)) {
        Some(shape) => crate::input::shape::check(&path, value, &shape),
        None => {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            Err(ShapeError {
                path,
                message: crate::input::keys::unknown_key(key, &keys, &[]),
            })
        }
    }
}

/// `(mem_bw_mib_s_per_node, llc_kib_per_cpu)` of a preset family: sustained per-socket
/// memory bandwidth (STREAM triad class, MiB/s) and LLC per hardware thread. Estimates from
/// the parts' channel counts and published STREAM results; one node per socket.
pub fn memory_defaults(preset: &str) -> Option<(u64, u64)> {
    Some(match preset {
        // X5570: 3 × DDR3-1333, ~17 GB/s; 8 MiB L3 / 8 threads.
        "nehalem-2s" => (16_000, 1024),
        // E5-2699 v3 / E7-8890 v3: 4 × DDR4-2133, ~55 GB/s; 45 MiB L3 / 36 threads.
        "haswell-2s" | "haswell-4s" => (52_000, 1280),
        // Skylake-SP: 6 × DDR4-2666, ~100 GB/s; 1.375 MiB L3 per core / 2 threads.
        "skl-2s" => (95_000, 704),
        // Sapphire Rapids: 8 × DDR5-4800, ~200 GB/s; 1.875 MiB per core / 2 threads.
        "spr-2s" => (190_000, 960),
        // Milan: 8 × DDR4-3200, ~150 GB/s; 32 MiB per 8-core CCX / 16 threads.
        "milan-2s" => (140_000, 2048),
        // Turin: 12 × DDR5-6000, ~400 GB/s; 32 MiB per 8-core CCD / 16 threads.
        "turin-2s" | "turin-dense-2s" => (380_000, 2048),
        // Altra: 8 × DDR4-3200, ~150 GB/s; 32 MiB SLC / 80 cores.
        "altra-2s" => (140_000, 400),
        _ => return None,
    })
}

/// [`CostModel::mem_latency_local_ns`] of a preset family, where a measurement is known.
pub fn mem_latency_local_ns_for(preset: &str) -> Option<u64> {
    Some(match preset {
        // Xeon X5570 with DDR3-1333: 81 ns (AnandTech's SiSoft Sandra latency test, 2010,
        // "AMD's 12-core Magny-Cours Opteron 6174 vs. Intel's 6-core Xeon", page 5).
        "nehalem-2s" => 81,
        _ => return None,
    })
}

/// `(cacheline_llc_ns, cacheline_cross_llc_ns, cacheline_cross_node_ns)` of a preset family:
/// core-to-core cache-line transfer latencies as published core-to-core ping-pong
/// measurements report them (one line bounced between two cores; half the round trip).
/// Intel two-socket Xeons (Skylake-SP/Cascade Lake, Sapphire Rapids): ~70 ns on the mesh,
/// ~140 ns over UPI. AMD Milan/Turin: ~25 ns inside a CCX, ~100 ns between CCXs of a
/// socket, ~200 ns across sockets. Ampere Altra 2P: ~80 ns on the mesh, ~700 ns across the
/// CCIX socket link. Other presets keep the defaults (60 / 120 / 300 ns).
pub fn cacheline_defaults(preset: &str) -> Option<(u64, u64, u64)> {
    Some(match preset {
        "skl-2s" | "spr-2s" | "haswell-2s" | "haswell-4s" => (70, 70, 140),
        "milan-2s" | "turin-2s" | "turin-dense-2s" => (25, 100, 200),
        "altra-2s" => (80, 80, 700),
        _ => return None,
    })
}

/// Time scale of a task's work from memory locality, in ppm (1_000_000 = as fast as with all
/// pages local): `(1 − m) + m · Σ_n share_n · distance(cpu_node, n) / 10`, where `m` is the
/// task's memory-stall share of run time with local memory (`mem_intensity_permille` / 1000)
/// and `share_n` its page share on node n. `pages_distance` yields (pages on node n,
/// SLIT distance from the running node to n). With `m` = 0 or no pages the scale is exactly
/// 1_000_000, so compute-bound tasks are unaffected.
pub fn mem_time_scale_ppm(
    mem_intensity_permille: u16,
    pages_distance: impl Iterator<Item = (u32, u32)>,
) -> u64 {
    let m = u64::from(mem_intensity_permille.min(1000));
    if m == 0 {
        return 1_000_000;
    }
    let (mut total, mut weighted) = (0u64, 0u64);
    for (pages, distance) in pages_distance {
        total += u64::from(pages);
        weighted += u64::from(pages) * u64::from(distance);
    }
    if total == 0 {
        return 1_000_000;
    }
    (1000 - m) * 1000 + m * weighted * 100 / total
}

/// A speed (1/1024 units) scaled by a [`mem_time_scale_ppm`] time scale.
pub fn mem_scaled_speed(speed: u64, time_scale_ppm: u64) -> u64 {
    if time_scale_ppm == 1_000_000 {
        return speed;
    }
    speed * 1_000_000 / time_scale_ppm.max(1)
}

/// How far a task moved, for cache refill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MoveDistance {
    Same,
    SmtSibling,
    Cluster,
    Llc,
    CrossLlc,
    CrossNode,
}

impl CostModel {
    /// The inputs of this cost model fitted to published measurements, one line each naming
    /// what it was fitted to (`machine_name`: the machine it was resolved for). Read by
    /// `validate`, which lists them beside the score (validation/README.md's rule on fitted
    /// inputs). Today only the AMD presets' C2 core exit ([`crate::cpuidle::states`]).
    pub fn fitted_inputs(&self, machine_name: &str) -> Vec<String> {
        crate::cpuidle::states::fitted_inputs(machine_name, &self.idle_states)
    }

    /// Defaults for a machine: SMT4/SMT8 throughput curves where the cores are that wide
    /// (POWER10 SMT4: ~1.5x/1.9x/2.2x core throughput with 2/3/4 threads, IBM's published
    /// SMT scaling; SMT8 extended the same way).
    /// IRQ/steal share of `cpu`'s time, percent.
    pub fn nontask_pct_of(&self, cpu: usize) -> u32 {
        self.nontask_pct_by_cpu.get(cpu).copied().unwrap_or(0)
    }

    /// Resolve [`CostModel::nontask_pct`] against `nr_cpus`: each key a cpulist of existing
    /// CPUs, each value at most 90. Errors name the offending key.
    pub fn resolve_nontask(&mut self, nr_cpus: usize) -> Result<(), (String, String)> {
        let mut by_cpu = vec![0u32; nr_cpus];
        for (list, &pct) in &self.nontask_pct {
            let key = format!("machine.cost.nontask_pct.\"{list}\"");
            let mask =
                crate::cpumask::CpuMask::parse_list_for_machine(list, nr_cpus).map_err(|e| {
                    (
                        key.clone(),
                        format!("{e}; accepted: a CPU list such as \"1\" or \"0-3,8\""),
                    )
                })?;
            if pct > 90 {
                return Err((
                    key,
                    format!("{pct} is out of range; accepted: 0 to 90 (percent)"),
                ));
            }
            for cpu in mask.iter() {
                if cpu >= nr_cpus {
                    return Err((
                        key,
                        format!(
                            "CPU {cpu} does not exist; the machine has CPUs 0-{}",
                            nr_cpus - 1
                        ),
                    ));
                }
                by_cpu[cpu] = pct;
            }
        }
        self.nontask_pct_by_cpu = by_cpu;
        Ok(())
    }

    pub fn default_for(machine: &Machine) -> CostModel {
        let mut cost = CostModel {
            idle_states: crate::cpuidle::states::table_for(machine),
            ..CostModel::default()
        };
        if machine.name == "host" {
            // `-m host`: the host's own cpuidle driver states and governor, where exposed.
            if let Some(h) =
                crate::cpuidle::states::read_host(std::path::Path::new("/sys/devices/system/cpu"))
            {
                cost.idle_states = h.states;
                if let Some(g) = h.governor {
                    cost.cpuidle_governor = g;
                }
            }
            if let Some(p) = crate::cpuidle::HaltpollParams::read_host(std::path::Path::new(
                "/sys/module/haltpoll/parameters",
            )) {
                cost.haltpoll = p;
            }
        }
        if let Some((llc, cross_llc, cross_node)) = cacheline_defaults(&machine.name) {
            cost.cacheline_llc_ns = llc;
            cost.cacheline_cross_llc_ns = cross_llc;
            cost.cacheline_cross_node_ns = cross_node;
        }
        if let Some((bw, llc)) = memory_defaults(&machine.name) {
            cost.mem_bw_mib_s_per_node = bw;
            cost.llc_kib_per_cpu = llc;
        }
        if let Some(ns) = mem_latency_local_ns_for(&machine.name) {
            cost.mem_latency_local_ns = ns;
        }
        let smt_width = (0..machine.nr_cpus())
            .map(|c| machine.smt_mask(c).weight())
            .max()
            .unwrap_or(1);
        cost.smt_speed_pct = match smt_width {
            0..=2 => vec![100, 62],
            3..=4 => vec![100, 75, 63, 55],
            _ => vec![100, 75, 63, 55, 48, 43, 39, 35],
        };
        cost
    }

    /// Classify a move from `from` to `to`.
    pub fn distance(machine: &Machine, from: usize, to: usize) -> MoveDistance {
        let (a, b) = (&machine.cpus[from], &machine.cpus[to]);
        if from == to {
            MoveDistance::Same
        } else if a.core == b.core {
            MoveDistance::SmtSibling
        } else if a.cluster == b.cluster {
            MoveDistance::Cluster
        } else if a.llc == b.llc {
            MoveDistance::Llc
        } else if a.node == b.node {
            MoveDistance::CrossLlc
        } else {
            MoveDistance::CrossNode
        }
    }

    /// Work added to a task that moved `distance` with a `footprint_kib` cache footprint.
    pub fn refill_ns(&self, distance: MoveDistance, footprint_kib: u32) -> u64 {
        let per_kib = match distance {
            MoveDistance::Same | MoveDistance::SmtSibling => 0,
            MoveDistance::Cluster => self.refill_ns_per_kib_cluster,
            MoveDistance::Llc => self.refill_ns_per_kib_llc,
            MoveDistance::CrossLlc => self.refill_ns_per_kib_cross_llc,
            MoveDistance::CrossNode => self.refill_ns_per_kib_cross_node,
        };
        per_kib * footprint_kib as u64
    }

    /// Cost to the waker of locking `to`'s runqueue from `from` (uncontended part).
    pub fn remote_lock_ns(&self, machine: &Machine, from: usize, to: usize) -> u64 {
        match Self::distance(machine, from, to) {
            MoveDistance::Same => 0,
            MoveDistance::SmtSibling | MoveDistance::Cluster | MoveDistance::Llc => {
                self.remote_lock_llc_ns
            }
            MoveDistance::CrossLlc => self.remote_lock_cross_llc_ns,
            MoveDistance::CrossNode => self.remote_lock_cross_node_ns,
        }
    }

    /// One cache-line transfer between `from` and `to` (0 on the same CPU; an SMT sibling
    /// or a CPU of the same LLC pays the LLC figure).
    pub fn cacheline_ns(&self, machine: &Machine, from: usize, to: usize) -> u64 {
        match Self::distance(machine, from, to) {
            MoveDistance::Same => 0,
            near => self.cacheline_at(near),
        }
    }

    /// One cache-line transfer between two different CPUs `distance` apart: the LLC figure
    /// up to a shared LLC, then other LLC, other node.
    fn cacheline_at(&self, distance: MoveDistance) -> u64 {
        match distance {
            MoveDistance::Same
            | MoveDistance::SmtSibling
            | MoveDistance::Cluster
            | MoveDistance::Llc => self.cacheline_llc_ns,
            MoveDistance::CrossLlc => self.cacheline_cross_llc_ns,
            MoveDistance::CrossNode => self.cacheline_cross_node_ns,
        }
    }

    /// One cache line that a task on `from` left dirty and a task on `to` then reads (the
    /// data and bookkeeping a message hand-off passes, [`crate::engine`]'s semaphore
    /// hand-off): nothing when the two share a private cache (the same CPU, SMT siblings, an
    /// L2 cluster), else one core-to-core transfer at their distance. Why the shared-L2 cases
    /// cost nothing: the line is still in the cache both read, at the latency a local hit
    /// has, which the work itself already contains.
    pub fn handoff_line_ns(&self, machine: &Machine, from: usize, to: usize) -> u64 {
        match Self::distance(machine, from, to) {
            MoveDistance::Same | MoveDistance::SmtSibling | MoveDistance::Cluster => 0,
            far => self.cacheline_at(far),
        }
    }

    /// IPI delivery latency from `from` to `to`.
    pub fn ipi_latency(&self, machine: &Machine, from: usize, to: usize) -> u64 {
        let d = machine.distance(machine.cpus[from].node, machine.cpus[to].node);
        self.ipi_latency_ns + self.ipi_latency_per_distance_ns * (d - 10) as u64
    }

    /// Per-thread speed in 1/1024 units with `busy_siblings_incl_self` threads of the core
    /// busy.
    pub fn smt_speed(&self, busy_siblings_incl_self: usize) -> u64 {
        let k = busy_siblings_incl_self.clamp(1, self.smt_speed_pct.len());
        self.smt_speed_pct[k - 1] as u64 * 1024 / 100
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::CpuTopology;

    /// Every key of the model has a shape, and every preset's defaults fit it unchanged: a
    /// new field cannot be added without saying what it accepts.
    #[test]
    fn every_cost_key_has_a_shape_that_its_defaults_fit() {
        for name in crate::topology::presets::names() {
            let machine = crate::topology::presets::by_name(name).unwrap();
            let toml::Value::Table(t) =
                toml::Value::try_from(CostModel::default_for(&machine)).unwrap()
            else {
                panic!("a table")
            };
            for (k, v) in &t {
                assert_eq!(
                    check_override("machine.cost", k, v).as_ref(),
                    Ok(v),
                    "{name}: {k}"
                );
            }
        }
        let e = check_override(
            "machine.cost",
            "context_switch_nss",
            &toml::Value::Integer(1),
        );
        assert!(
            e.unwrap_err()
                .message
                .starts_with("unknown key (did you mean context_switch_ns?)"),
        );
    }

    fn machine() -> Machine {
        // 2 nodes x 2 LLCs x 1 core x SMT2.
        let cpus = (0..8)
            .map(|cpu| CpuTopology {
                cpu,
                core: cpu / 2,
                cluster: cpu / 2,
                llc: cpu / 2,
                package: cpu / 4,
                node: cpu / 4,
                capacity: 1024,
            })
            .collect();
        Machine::new("t", "", cpus, vec![vec![10, 21], vec![21, 10]]).unwrap()
    }

    #[test]
    fn refill_grows_with_distance() {
        let m = machine();
        let c = CostModel::default_for(&m);
        let sib = c.refill_ns(CostModel::distance(&m, 0, 1), 512);
        let llc = c.refill_ns(CostModel::distance(&m, 0, 2), 512);
        let node = c.refill_ns(CostModel::distance(&m, 0, 4), 512);
        assert_eq!(sib, 0);
        assert!(llc < node, "{llc} < {node}");
        assert_eq!(CostModel::distance(&m, 0, 2), MoveDistance::CrossLlc);
    }

    #[test]
    fn smt_sibling_slows_a_thread() {
        let c = CostModel::default();
        assert_eq!(c.smt_speed(1), 1024);
        assert!(c.smt_speed(2) < 1024);
    }

    #[test]
    fn mem_time_scale_follows_the_formula() {
        // 50 % stalls, all pages on a node at distance 21: 0.5 + 0.5 · 2.1 = 1.55.
        assert_eq!(
            mem_time_scale_ppm(500, [(0, 10), (1, 21)].into_iter()),
            1_550_000
        );
        // All local: exactly 1, whatever the intensity.
        assert_eq!(
            mem_time_scale_ppm(1000, [(7, 10), (0, 21)].into_iter()),
            1_000_000
        );
        // Interleaved over both nodes: the mean distance 15.5 → 0.5 + 0.5 · 1.55 = 1.275.
        assert_eq!(
            mem_time_scale_ppm(500, [(1, 10), (1, 21)].into_iter()),
            1_275_000
        );
        // Compute-bound or never touched: no effect.
        assert_eq!(mem_time_scale_ppm(0, [(1, 21)].into_iter()), 1_000_000);
        assert_eq!(mem_time_scale_ppm(500, std::iter::empty()), 1_000_000);
        assert_eq!(mem_scaled_speed(1024, 1_000_000), 1024);
        assert_eq!(mem_scaled_speed(1024, 1_550_000), 660);
    }
}
