#!/usr/bin/env python3
"""Measure `schedlab run` of bench's cases the same way for several binaries (e.g. the
baseline 85414e0, whose `bench` lacks the cases): process CPU time (user+sys, via wait4) and
peak RSS of one `run --json` per case and binary, then the bare binary-heap loop of the last
binary (`bench --case bare`) right after. Prints a Markdown table for docs/performance.md.

Usage: benches/run-cpu.py [--reps N] [--full] [--case NAME]... BIN [BIN...]

With --reps N each case runs N times per binary, the binaries interleaved (A B A B ...), and
the table shows the smallest CPU time of each: on a shared machine other jobs only ever add
time, so the minimum is the least disturbed figure. With --full each case runs its own
command line to the end (no `--set run.duration_s`), as issue 14 states them; "sim s" is
then the simulated time the run reported.
"""
import json, os, subprocess, sys, tempfile

# (case, argv after `run`, simulated seconds): bench's cases at a fixed medium length.
CASES = [
    ("spr-2s", "-m spr-2s -- schbench -m 4 -t 128 -r 5", 2.0),
    ("skl-v6.9", "-m skl-2s --offline 20-39,60-79 -k v6.9 -- schbench -L -m 4 -M auto -t 128 -n 0 -r 3", 0.3),
    ("skl-hackbench", "-m skl-2s -- hackbench -g 10 -l 2000", 0.5),
    ("turin-2s", "-m turin-2s -- schbench -m 16 -t 32 -r 2", 1.0),
    ("milan-2s", "-m milan-2s -- stress-ng --cpu=256 -l 50 --cpu-load-slice=1 --timeout 3", 2.0),
    ("turin-dense-2s", "-m turin-dense-2s -- stress-ng --cpu=768 -l 50 --cpu-load-slice=1 --timeout 2", 0.5),
    ("spr-1k", "-m spr-2s -- schbench -m 4 -t 250 -r 2", 0.5),
    ("spr-20k", "-m spr-2s -- schbench -m 4 -t 5000 -r 2", 0.2),
    ("spr-50k", "-m spr-2s -- schbench -m 4 -t 12500 -r 1", 0.1),
]


def run(bin_, argv, sim_s):
    """CPU seconds, peak RSS MiB, events popped and simulated seconds of one run; the
    whole command when `sim_s` is None."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        pre, post = argv.split(" -- ")
        length = [] if sim_s is None else ["--set", f"run.duration_s={sim_s}"]
        cmd = [bin_, "run", *pre.split(), *length, "--json", f.name, "--", *post.split()]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        assert status == 0, cmd
        r = json.load(open(f.name))["runs"][0]
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, r["events"], r["sim_time_ns"] / 1e9


def bare(bin_):
    out = subprocess.run([bin_, "bench", "--case", "bare", "--json", "-"], capture_output=True, check=True)
    return json.loads(out.stdout)["bare_events_per_cpu_s"]


def main():
    args = sys.argv[1:]
    only, reps, full = [], 1, False
    while args and args[0] in ("--case", "--reps", "--full"):
        if args[0] == "--full":
            full = True
            args = args[1:]
            continue
        if args[0] == "--case":
            only.append(args[1])
        else:
            reps = int(args[1])
        args = args[2:]
    bins = args
    print("| case | sim s | binary | cpu s | events (popped) | sim s / cpu s | peak RSS MiB | bare M ev/cpu s | sim s / cpu s per bare M ev |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, argv, sim_s in CASES:
        if only and name not in only:
            continue
        best = {}
        for _ in range(reps):
            for b in bins:
                cpu, rss, ev, sim = run(b, argv, None if full else sim_s)
                if b not in best or cpu < best[b][0]:
                    best[b] = (cpu, rss, ev, sim)
        bm = max(bare(bins[-1]) for _ in range(reps)) / 1e6
        for b in bins:
            cpu, rss, ev, sim = best[b]
            print(f"| {name} | {sim:.3f} | {b} | {cpu:.3f} | {ev} | {sim/cpu:.3f} | {rss:.0f} | {bm:.1f} | {sim/cpu/bm:.4f} |", flush=True)


main()
