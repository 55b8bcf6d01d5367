//! `schedlab topo MACHINE [--offline CPULIST] [--json]`: every online CPU's sched-domain
//! hierarchy, as text shaped like the kernel's `sched_verbose` boot output
//! (`sched_domain_debug()`) or as JSON (ARCHITECTURE.md §3 "schedlab topo --json").
//!
//! MACHINE is a preset name. `host` and topology files are resolved by the topology
//! importers once they exist; until then they are rejected with a message naming the
//! accepted presets. Offline CPUs appear in the JSON `cpus` list with `"online": false`
//! and no domains; the text output names them in its header and prints no hierarchy for
//! them (the kernel prints nothing for an offline CPU either).

use serde_json::{Value, json};

use super::TopoArgs;
use crate::domains::{SchedDomains, build_sched_domains};
use crate::error::{InputError, InputResult};
use crate::topology::Machine;

/// Resolve the machine and apply `--offline`.
pub fn machine_from_args(args: &TopoArgs) -> InputResult<Machine> {
    let mut machine = crate::topology::resolve_machine_with(
        args.machine.as_deref(),
        args.sysfs_root.as_deref(),
        args.hwloc.as_deref(),
    )?;
    if let Some(list) = &args.offline {
        crate::cpumask::CpuMask::parse(list)
            .map_err(|e| InputError::with_key("--offline", list.clone(), e.to_string()))?;
        machine.set_offline(list).map_err(|e| {
            InputError::with_key(
                "--offline",
                list.clone(),
                format!(
                    "{e}; accepted: a kernel cpulist of CPUs 0-{} leaving at least one online",
                    machine.nr_cpus() - 1
                ),
            )
        })?;
    }
    Ok(machine)
}

pub fn run(args: &TopoArgs) -> anyhow::Result<()> {
    let machine = machine_from_args(args)?;
    super::print_import_warnings(&machine);
    let sds = build_sched_domains(&machine);
    let text = if args.json {
        let mut json = serde_json::to_string_pretty(&topo_json(&machine, &sds))?;
        json.push('\n');
        json
    } else {
        topo_text(&machine, &sds)
    };
    // A closed pipe (`| head`) is not an error; a full stdout is one line, exit code 2.
    Ok(crate::output::write_stdout(&text)?)
}

/// The text report: a header, any build messages, then every online CPU's hierarchy.
pub fn topo_text(machine: &Machine, sds: &SchedDomains) -> String {
    let mut out = String::new();
    let offline = crate::cpumask::CpuMask::first_n(machine.nr_cpus()).andnot(&machine.online);
    out.push_str(&format!(
        "machine: {} ({})\n",
        machine.name, machine.description
    ));
    out.push_str(&format!(
        "nr_cpus: {} online: {} offline: {}\n",
        machine.nr_cpus(),
        machine.online,
        if offline.is_empty() {
            "none".to_string()
        } else {
            offline.to_string()
        }
    ));
    for w in &sds.warnings {
        out.push_str(w);
        out.push('\n');
    }
    if let Some(e) = &sds.error {
        out.push_str(&format!("ERROR: {e}\n"));
    }
    for cpu in machine.online.iter() {
        out.push_str(&sds.sched_domain_debug(cpu));
    }
    out.push_str(&format!("root domain span: {}\n", sds.span));
    out
}

/// The JSON report (contract keys of ARCHITECTURE.md §3 plus a few extras:
/// `description`, `arch`, `offline`, `numa_distances`, per-CPU `cluster`/`online`/`llc_size`/
/// `llc_id`, per-domain `span_weight`/`imb_numa_nr`, per-group `balance_mask`/`weight`/
/// `cores`/`flags`).
pub fn topo_json(machine: &Machine, sds: &SchedDomains) -> Value {
    let all = crate::cpumask::CpuMask::first_n(machine.nr_cpus());
    let nodes: Vec<Value> = (0..machine.nr_nodes())
        .map(|n| json!({ "node": n, "cpus": machine.node_mask(n).to_string() }))
        .collect();
    let cpus: Vec<Value> = machine
        .cpus
        .iter()
        .map(|c| {
            let domains: Vec<Value> = sds
                .cpu_domains(c.cpu)
                .iter()
                .map(|&id| {
                    let d = sds.domain(id);
                    let groups: Vec<Value> = sds
                        .groups_of(id)
                        .map(|g| {
                            json!({
                                "span": g.span.to_string(),
                                "capacity": g.capacity,
                                "balance_mask": g.balance_mask.to_string(),
                                "weight": g.group_weight,
                                "cores": g.cores,
                                "flags": g.flags.names(),
                            })
                        })
                        .collect();
                    json!({
                        "level": d.name,
                        "span": d.span.to_string(),
                        "span_weight": d.span_weight,
                        "flags": d.flags.names(),
                        "imbalance_pct": d.imbalance_pct,
                        "busy_factor": d.busy_factor,
                        "min_interval": d.min_interval_ms,
                        "max_interval": d.max_interval_ms,
                        "cache_nice_tries": d.cache_nice_tries,
                        "imb_numa_nr": d.imb_numa_nr,
                        "groups": groups,
                    })
                })
                .collect();
            json!({
                "cpu": c.cpu,
                "online": machine.online.test(c.cpu),
                "core": c.core,
                "cluster": c.cluster,
                "llc": c.llc,
                "package": c.package,
                "node": c.node,
                "capacity": c.capacity,
                "llc_id": sds.llc_id(c.cpu),
                "llc_size": sds.llc_size(c.cpu),
                "domains": domains,
            })
        })
        .collect();
    json!({
        "machine": machine.name,
        "description": machine.description,
        "arch": machine.arch.name(),
        "nr_cpus": machine.nr_cpus(),
        "online": machine.online.to_string(),
        "offline": all.andnot(&machine.online).to_string(),
        "nodes": nodes,
        "distances": machine.node_distance,
        "numa_distances": sds.numa_distances,
        "cpus": cpus,
    })
}
