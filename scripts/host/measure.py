#!/usr/bin/env python3
"""Real benchmark runs on this machine beside simulated runs of the same command line.

Not run by CI. Documentation and results: docs/host-benchmarks.md.

usage:
  scripts/host/measure.py real BENCH N      # N real runs under perf stat
  scripts/host/measure.py lat BENCH         # one real run under perf sched record:
                                            #   sched_waking -> switch-in delay percentiles
  scripts/host/measure.py sim BENCH N [schedlab args...]   # N simulated runs (seeds 1..N)
BENCH: hackbench | schbench | stress-ng | sched-pipe | sched-pipe-pinned | sched-pipe-threads.

Real runs execute in a new session (setsid: a fresh autogroup) whose autogroup nice is -20
(needs root), so that other sessions' tasks on this shared machine get ~1 % of a CPU. Every
real run records the 1-minute load average and the steal time (/proc/stat) during the run.

Environment: SCHBENCH (default /tmp/schbench/schbench), STRESS_NG (default
/tmp/sng/root/usr/bin/stress-ng, libraries beside it), SCHEDLAB (default
./target/release/schedlab), ISOLATE=0 to run without the autogroup nice.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

SCHBENCH = os.environ.get("SCHBENCH", "/tmp/schbench/schbench")
STRESS_NG = os.environ.get("STRESS_NG", "/tmp/sng/root/usr/bin/stress-ng")
SCHEDLAB = os.environ.get("SCHEDLAB", "./target/release/schedlab")
ISOLATE = os.environ.get("ISOLATE", "1") != "0"

BENCH = {
    # name: (simulated command line, real argv prefix, comm prefix of the benchmark's tasks)
    "hackbench": ("perf bench sched messaging -g 4 -l 1000",
                  ["perf", "bench", "sched", "messaging", "-g", "4", "-l", "1000"],
                  "sched-messaging"),
    "schbench": ("schbench -m 1 -t 2 -r 10",
                 [SCHBENCH, "-m", "1", "-t", "2", "-r", "10"],
                 "schbench"),
    "stress-ng": ("stress-ng --cpu 2 -l 50 --cpu-ops 2000 --metrics-brief",
                  [STRESS_NG, "--cpu", "2", "-l", "50", "--cpu-ops", "2000", "--metrics-brief"],
                  "stress-ng"),
    "sched-pipe": ("perf bench sched pipe -l 100000",
                   ["perf", "bench", "sched", "pipe", "-l", "100000"],
                   "perf"),
    "sched-pipe-pinned": ("taskset -c 0 perf bench sched pipe -l 100000",
                          ["taskset", "-c", "0", "perf", "bench", "sched", "pipe", "-l", "100000"],
                          "perf"),
    "sched-pipe-threads": ("perf bench sched pipe -l 100000 -T",
                           ["perf", "bench", "sched", "pipe", "-l", "100000", "-T"],
                           "perf"),
}
# The simulated default: the host kernel's HZ and preemption model (docs/host-benchmarks.md).
SIM_ARGS = ["-m", "host", "-k", "v6.18", "--sysctl", "hz=250", "--sysctl", "preempt=none"]


def env():
    e = dict(os.environ)
    libdir = os.path.join(os.path.dirname(os.path.dirname(STRESS_NG)), "lib", "x86_64-linux-gnu")
    e["LD_LIBRARY_PATH"] = libdir
    return e


def isolated(argv):
    """argv run in a new session whose autogroup has nice -20."""
    if not ISOLATE:
        return ["setsid", "-w"] + argv
    return ["setsid", "-w", "sh", "-c", 'echo -20 > /proc/self/autogroup && exec "$@"', "sh"] + argv


def steal_ticks():
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]), sum(int(x) for x in fields[1:])


def parse_native(bench, text):
    """The benchmark's own numbers from its output (same parser for real and simulated)."""
    out = {}
    if bench == "hackbench":
        m = re.search(r"Total time: ([0-9.]+)", text)
        out["time_s"] = float(m.group(1))
        out["ops"] = 4 * 20 * 20 * 1000
    elif bench == "schbench":
        out["rps"] = float(re.findall(r"average rps: ([0-9.]+)", text)[-1])
        lines = text.splitlines()
        for block, key in (("Wakeup Latencies", "wakeup"), ("Request Latencies", "request")):
            start = max(i for i, line in enumerate(lines) if line.startswith(block))
            for line in lines[start + 1:start + 5]:
                m = re.match(r"\s*\*?\s*([0-9.]+)th: ([0-9]+)", line)
                if m:
                    out[f"{key}_p{m.group(1).removesuffix('.0')}"] = float(m.group(2))
        req = [line for line in lines if line.startswith("Request Latencies")][-1]
        out["ops"] = float(re.search(r"\(([0-9]+) total samples\)", req).group(1))
    elif bench.startswith("sched-pipe"):
        out["time_s"] = float(re.search(r"Total time: ([0-9.]+)", text).group(1))
        out["usecs_per_op"] = float(re.search(r"([0-9.]+) usecs/op", text).group(1))
        out["ops"] = 100000
    elif bench == "stress-ng":
        m = re.search(r"cpu\s+([0-9]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", text)
        out["bogo_ops_per_s"] = float(m.group(5))
        out["ops"] = float(m.group(1))
    return out


def real(bench, n):
    rows = []
    for _ in range(n):
        with tempfile.NamedTemporaryFile(suffix=".perf", delete=False) as f:
            perf_out = f.name
        s0, t0 = steal_ticks()
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
        argv = ["perf", "stat", "-x,", "-o", perf_out,
                "-e", "task-clock,context-switches,cpu-migrations", "--"] + BENCH[bench][1]
        p = subprocess.run(isolated(argv), capture_output=True, text=True, env=env())
        s1, t1 = steal_ticks()
        text = p.stdout + p.stderr
        row = parse_native(bench, text)
        with open(perf_out) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) > 2 and parts[2] in ("context-switches", "cpu-migrations",
                                                   "task-clock"):
                    row[parts[2]] = float(parts[0])
        os.unlink(perf_out)
        row["steal_pct"] = 100.0 * (s1 - s0) / max(1, t1 - t0)
        row["load1"] = load
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def sim(bench, n, extra):
    cmd = [SCHEDLAB, "run"] + SIM_ARGS + extra + ["--runs", str(n), "--json", "-", "--",
                                                   *BENCH[bench][0].split()]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"schedlab failed ({p.returncode}): {p.stderr.strip()}")
    d = json.loads(p.stdout)
    rows = []
    for r in d["runs"]:
        row = {"seed": r["seed"]}
        w = r["workload"]
        if bench == "hackbench":
            row.update(time_s=w["time_s"], ops=w["messages"])
        elif bench.startswith("sched-pipe"):
            row.update(time_s=w["time_s"], usecs_per_op=w["usecs_per_op"], ops=w["ops"])
        elif bench == "schbench":
            row.update(rps=w["rps_avg"], ops=w["loop_count"])
            for key in ("wakeup", "request"):
                for pct, val in w[f"{key}_latency_us"].items():
                    row[f"{key}_{pct}"] = val
        else:
            row.update(bogo_ops_per_s=w["bogo_ops_per_s"], ops=w["bogo_ops"])
        ps = r["perf_stat"]
        row["context-switches"] = ps["context_switches"]
        row["cpu-migrations"] = ps["cpu_migrations"]
        row["task-clock"] = ps["task_clock_ms"]
        for pct, val in r["latency_us"]["wakeup"].items():
            row[f"sched_wakeup_{pct}"] = val
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def lat(bench):
    """sched_waking -> switch-in delay of the benchmark's tasks, in µs, from one traced run.

    "all": every wakeup. "clean": only wakeups during whose wait no task of another session
    (the machine is shared) ran on the CPU the wakee finally ran on. Also prints the share of
    CPU time other tasks got during the run, the benchmark's migrations by thread name, and its
    switches by kind (voluntary/involuntary) and by what ran next (benchmark, idle, other).
    """
    data = tempfile.mktemp(suffix=".data")
    argv = ["perf", "sched", "record", "-o", data, "--"] + BENCH[bench][1]
    p = subprocess.run(isolated(argv), capture_output=True, text=True, env=env())
    print(json.dumps(parse_native(bench, p.stdout + p.stderr)), flush=True)
    script = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time,event,trace"],
                            capture_output=True, text=True)
    os.unlink(data)
    comm = BENCH[bench][2]
    waking = {}                       # pid -> waking time
    cur = {}                          # cpu -> (is_foreign, since)
    foreign_end = {}                  # cpu -> last time a foreign task stopped running
    foreign_ns = 0.0
    t_first = t_last = None
    all_d, clean_d = [], []
    migrations = {}
    switches = {}
    for line in script.stdout.splitlines():
        m = re.match(r"\s*\[(\d+)\]\s+([0-9.]+):\s+sched:(\w+):\s+(.*)", line)
        if not m:
            continue
        cpu, t, ev, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        t_first = t if t_first is None else t_first
        t_last = t
        if ev == "sched_waking":
            w = re.search(r"comm=(.*) pid=(\d+) prio", rest)
            if w and w.group(1).startswith(comm):
                waking.setdefault(int(w.group(2)), t)
        elif ev == "sched_migrate_task":
            w = re.search(r"comm=(.*) pid=(\d+) prio", rest)
            if w and w.group(1).startswith(comm):
                migrations[w.group(1)] = migrations.get(w.group(1), 0) + 1
        elif ev == "sched_switch":
            s = re.search(r"next_comm=(.*) next_pid=(\d+) next_prio", rest)
            ncomm, npid = s.group(1), int(s.group(2))
            pr = re.search(r"prev_comm=(.*) prev_pid=\d+ prev_prio=\d+ prev_state=(\S+)", rest)
            if pr and pr.group(1).startswith(comm):
                # R (+ = preempted) is involuntary; S, D and exits (Z, X) are voluntary.
                kind = "involuntary" if pr.group(2).startswith("R") else "voluntary"
                to = ("bench" if ncomm.startswith(comm) else
                      "idle" if npid == 0 else "other")
                key = f"{kind}_to_{to}"
                switches[key] = switches.get(key, 0) + 1
            was_foreign, since = cur.get(cpu, (False, t))
            if was_foreign:
                foreign_end[cpu] = t
                foreign_ns += t - since
            # Foreign: neither idle, nor the benchmark, nor perf itself.
            cur[cpu] = (npid != 0 and not ncomm.startswith(comm) and ncomm != "perf", t)
            if npid in waking:
                t0 = waking.pop(npid)
                d = (t - t0) * 1e6
                all_d.append(d)
                if foreign_end.get(cpu, 0.0) <= t0:
                    clean_d.append(d)

    def pct(v):
        v = sorted(v)
        out = {f"p{k}": round(v[min(len(v) - 1, int(len(v) * k / 100))], 1)
               for k in (50, 90, 99, 99.9)}
        return {"samples": len(v), **out, "max": round(v[-1], 1)}

    span = max(1e-9, (t_last or 0) - (t_first or 0))
    print(json.dumps({"all": pct(all_d), "clean": pct(clean_d),
                      "foreign_cpu_pct": round(100 * foreign_ns / (span * os.cpu_count()), 1),
                      "migrations": migrations, "switches": dict(sorted(switches.items()))}))


def summarize(rows):
    keys = [k for k in rows[0] if k not in ("seed",)]
    for k in keys:
        vals = [r[k] for r in rows if k in r]
        mean = statistics.mean(vals)
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        print(f"  {k:24s} {mean:14.4g} ± {sd:.3g}")
    for k in ("context-switches", "cpu-migrations"):
        per_op = [r[k] / r["ops"] for r in rows if r.get("ops")]
        if per_op:
            sd = statistics.stdev(per_op) if len(per_op) > 1 else 0.0
            print(f"  {k + '/op':24s} {statistics.mean(per_op):14.4g} ± {sd:.3g}")


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in BENCH:
        sys.exit(__doc__)
    mode, bench = sys.argv[1], sys.argv[2]
    if mode == "real":
        summarize(real(bench, int(sys.argv[3])))
    elif mode == "sim":
        summarize(sim(bench, int(sys.argv[3]), sys.argv[4:]))
    elif mode == "lat":
        lat(bench)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
