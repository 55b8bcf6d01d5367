"""The Python package against the library and the CLI: runs, comparisons, errors,
determinism, interruption, listings and sweep stores."""

import _thread
import json
import threading
import time

import pandas as pd
import pytest

import schedlab
from conftest import ROOT, load_stripped

HACKBENCH = "hackbench -g 2 -l 100"


@pytest.fixture(scope="module")
def hack():
    return schedlab.run(machine="skl-2s", command=HACKBENCH, runs=2, progress=False)


def test_run_frames_follow_the_document(hack):
    doc = hack.doc
    assert doc["complete"] is True
    assert len(doc["runs"]) == 2
    perf = hack.perf_stat
    assert list(perf["run"]) == [0, 1]
    assert list(perf["seed"]) == [r["seed"] for r in doc["runs"]]
    assert list(perf["context_switches"]) == [
        r["perf_stat"]["context_switches"] for r in doc["runs"]]
    # hackbench -g 2: 2 groups of 20 senders and 20 receivers, in each of the 2 runs.
    tasks = hack.tasks
    assert len(tasks) == sum(len(r["tasks"]) for r in doc["runs"])
    assert len(tasks[tasks.run == 0]) >= 80
    assert {"pid", "comm", "nr_migrations", "sum_exec_runtime_ns"} <= set(tasks.columns)
    m = hack.migrations
    for i, r in enumerate(doc["runs"]):
        assert m[m.run == i]["count"].sum() == r["migrations"]["total"]
        assert (m[(m.run == i) & (m.reason == "wakeup")]["count"].item()
                == r["migrations"]["by_reason"]["wakeup"])


def test_latency_schedstat_and_summary(hack):
    lat = hack.latency
    assert set(lat.metric) >= {"wakeup"}
    wake = lat[(lat.run == 0) & (lat.metric == "wakeup")]
    assert wake["count"].sum() == hack.doc["runs"][0]["latency_us"]["wakeup"]["samples"]
    assert wake["lower_ns"].is_monotonic_increasing
    pct = hack.latency_percentiles
    assert (pct["p50"] <= pct["p99"]).all()
    ss = hack.schedstat
    levels = set(ss[ss.kind == "level"]["name"])
    assert levels == set(hack.doc["runs"][0]["schedstat"]["by_level"])
    assert {"SMT", "MC"} <= levels
    assert "lb_count" in ss.columns
    assert hack.summary.set_index("metric").loc["perf_stat.context_switches", "n"] == 2
    assert "time_s" in hack.workload.columns


def test_schedstat_per_cpu_and_domain_sums_to_the_document(hack, cli, tmp_path):
    dom = hack.schedstat_domains
    nr_cpus = len(hack.doc["runs"][0]["cpus"])
    assert dom[dom.run == 0]["cpu"].nunique() == nr_cpus
    assert set(dom.idle_type) == {"not_idle", "idle", "newly_idle"}
    for i, r in enumerate(hack.doc["runs"]):
        by_level = dom[dom.run == i].groupby("level")[["lb_count", "lb_gained"]].sum()
        for level, counters in r["schedstat"]["by_level"].items():
            assert by_level.loc[level, "lb_count"] == counters["lb_count"], level
            assert by_level.loc[level, "lb_gained"] == counters["lb_gained"], level
        by_idle = dom[dom.run == i].groupby("idle_type")["lb_count"].sum()
        for idle, counters in r["schedstat"]["by_idle_type"].items():
            assert by_idle.loc[idle] == counters["lb_count"], idle
    cpus = hack.schedstat_cpus
    assert len(cpus) == 2 * nr_cpus and (cpus["sched_count"] > 0).any()
    # The text is what `schedlab run --schedstat` writes (its first run), timestamp aside.
    out = tmp_path / "schedstat"
    cli("run", "-m", "skl-2s", "--runs", "2", "--schedstat", str(out), "--",
        *HACKBENCH.split())
    strip = lambda t: [l for l in t.splitlines() if not l.startswith("timestamp")]
    assert strip(out.read_text()) == strip(hack.schedstat_texts[0])


def test_frames_without_data_are_empty_with_columns(hack):
    assert hack.timeline.empty
    assert list(hack.timeline.columns)[:4] == ["run", "seed", "cpu", "bucket"]
    assert hack.numa.empty and "pages" in hack.numa.columns
    assert hack.migration_events.empty and "reason" in hack.migration_events.columns


def test_timeline_and_report(tmp_path):
    r = schedlab.run(machine="skl-2s", command=HACKBENCH, timeline=True, progress=False)
    tl = r.timeline
    assert not tl.empty
    assert tl["busy_fraction"].between(0, 1).all()
    assert tl["cpu"].nunique() == len(r.doc["runs"][0]["cpus"])
    ev = r.migration_events
    assert not ev.empty and set(ev.reason) <= set(r.doc["runs"][0]["migrations"]["by_reason"])
    path = r.report(tmp_path / "r.html")
    html = open(path, encoding="utf-8").read()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "skl-2s" in html


def test_numa_pages_over_time():
    r = schedlab.run(machine="skl-2s", command="hackbench -g 1 -l 50",
                     sets={"run.duration_s": 0.05}, progress=False)
    # hackbench declares no memory: no NUMA series, an empty frame with its columns.
    assert list(r.numa.columns[:6]) == ["run", "seed", "sample", "time_ns", "node", "pages"]


def test_same_inputs_same_json_as_the_cli(cli, tmp_path):
    a = schedlab.run(machine="skl-2s", command=HACKBENCH, kernel="v6.6",
                     features={"TTWU_QUEUE": False}, sets={"workload.loops": 50},
                     runs=2, seed=7, progress=False)
    b = schedlab.run(machine="skl-2s", command=HACKBENCH.split(), kernel="v6.6",
                     features=["TTWU_QUEUE=off"], sets=["workload.loops=50"],
                     runs=2, seed=7, progress=False)
    assert load_stripped(a.json) == load_stripped(b.json)
    out = tmp_path / "cli.json"
    res = cli("run", "-m", "skl-2s", "-k", "v6.6", "--feature", "TTWU_QUEUE=off",
              "--set", "workload.loops=50", "--runs", "2", "--seed", "7",
              "--json", str(out), "--", *HACKBENCH.split())
    assert load_stripped(out.read_text()) == load_stripped(a.json)
    # The text report is the CLI's stdout.
    assert a.text == res.stdout


def test_scenario_file_matches_the_cli(cli):
    # The same path (the scenario's origin is part of the document).
    path = str(ROOT / "scenarios" / "hackbench.toml")
    r = schedlab.run(path, sets={"run.duration_s": 0.05}, progress=False)
    res = cli("run", path, "--set", "run.duration_s=0.05", "--json", "-")
    assert load_stripped(res.stdout) == load_stripped(r.json)


@pytest.mark.parametrize("kwargs,cli_args", [
    ({"machine": "skl-2s", "command": HACKBENCH, "sets": {"workload.grups": 4}},
     ["-m", "skl-2s", "--set", "workload.grups=4", "--", *HACKBENCH.split()]),
    ({"machine": "skl-9s", "command": HACKBENCH},
     ["-m", "skl-9s", "--", *HACKBENCH.split()]),
    ({"machine": "skl-2s", "command": HACKBENCH, "features": {"TTWU_QUEUEX": True}},
     ["-m", "skl-2s", "--feature", "TTWU_QUEUEX=on", "--", *HACKBENCH.split()]),
    ({"machine": "skl-2s", "command": "hackbench -g two"},
     ["-m", "skl-2s", "--", "hackbench", "-g", "two"]),
    ({}, []),
])
def test_bad_input_raises_input_error_with_the_cli_message(cli, kwargs, cli_args):
    with pytest.raises(schedlab.InputError) as err:
        schedlab.run(progress=False, **kwargs)
    res = cli("run", *cli_args, check=False)
    assert res.returncode == 2
    lines = [line for line in res.stderr.splitlines() if line.startswith("schedlab: error: ")]
    assert lines == [f"schedlab: error: {err.value}"]
    assert "\n" not in str(err.value)


def test_input_error_is_an_exception_of_the_package():
    assert issubclass(schedlab.InputError, Exception)
    assert schedlab.InputError.__module__ == "schedlab"
    with pytest.raises(schedlab.InputError, match="runs"):
        schedlab.run(machine="skl-2s", command=HACKBENCH, runs=0)


def test_compare_frames_and_deltas(cli, tmp_path):
    c = schedlab.compare(machine="skl-2s", command=HACKBENCH, runs=3,
                         variants={"noq": "NO_TTWU_QUEUE"}, progress=False)
    assert list(c.variants) == ["baseline", "noq"]
    perf = c.perf_stat
    assert list(perf.variant.unique()) == ["baseline", "noq"]
    assert len(perf) == 6
    d = c.deltas
    assert set(d.variant) == {"noq"}
    row = d.set_index("metric").loc["workload.time_s"]
    assert row["ci95_low"] < row["mean"] < row["ci95_high"]
    assert row["n"] == 3
    # The paired delta is the mean of per-seed differences of the runs' values.
    m = c.metrics.set_index(["metric", "variant"])
    metric = d.metric.iloc[0]
    base, var = m.loc[(metric, "baseline"), "values"], m.loc[(metric, "noq"), "values"]
    assert d.set_index("metric").loc[metric, "mean"] == pytest.approx(
        sum(v - b for v, b in zip(var, base)) / len(base))
    out = tmp_path / "cmp.json"
    res = cli("compare", "-m", "skl-2s", "--runs", "3", "--variant", "noq:NO_TTWU_QUEUE",
              "--json", str(out), "--", *HACKBENCH.split())
    assert load_stripped(out.read_text()) == load_stripped(c.json)
    assert c.text == res.stdout


def test_compare_without_variants_is_an_input_error():
    with pytest.raises(schedlab.InputError, match="nothing to compare"):
        schedlab.compare(machine="skl-2s", command=HACKBENCH, progress=False)


def test_runs_are_deterministic():
    a = schedlab.run(machine="skl-2s", command=HACKBENCH, seed=3, progress=False)
    b = schedlab.run(machine="skl-2s", command=HACKBENCH, seed=3, progress=False)
    c = schedlab.run(machine="skl-2s", command=HACKBENCH, seed=4, progress=False)
    assert load_stripped(a.json) == load_stripped(b.json)
    assert load_stripped(a.json) != load_stripped(c.json)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)


LONG = "hackbench -g 20 -l 1000000"


def test_ctrl_c_interrupts_a_long_run_and_the_gil_is_released():
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    def interrupt():
        time.sleep(1.0)
        _thread.interrupt_main()

    threading.Thread(target=ticker, daemon=True).start()
    threading.Thread(target=interrupt, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        schedlab.run(machine="skl-2s", command=LONG, progress=False)
    elapsed = time.monotonic() - start
    stop.set()
    # Stopped soon after the interrupt (the run alone would take minutes).
    assert elapsed < 10, elapsed
    # Another Python thread ran during the simulation: the GIL was released.
    assert len([t for t in ticks if start + 0.1 < t < start + 0.9]) >= 10
    # The package still works after an interrupted run.
    assert schedlab.run(machine="skl-2s", command="hackbench -g 1 -l 10",
                        progress=False).doc["complete"]


def test_listings():
    m = schedlab.machines()
    assert "skl-2s" in set(m.machine)
    p = schedlab.profiles()
    assert {"v6.6", "v6.15"} <= set(p.profile)
    f = schedlab.features()
    assert "TTWU_QUEUE" in set(f.feature)
    assert set(p.profile) <= set(f.columns)
    t = schedlab.topology("skl-2s")
    assert t.attrs["json"]["machine"] == "skl-2s"
    assert t["cpu"].nunique() == t.attrs["json"]["nr_cpus"]
    assert {"SMT", "MC", "NUMA"} <= set(t["level"])
    with pytest.raises(schedlab.InputError, match="skl-9s"):
        schedlab.topology("skl-9s")


def test_topology_matches_cli(cli):
    res = cli("topo", "hybrid-10", "--json")
    assert schedlab.topology("hybrid-10").attrs["json"] == json.loads(res.stdout)


def test_sweep_results(cli, tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        '[base]\nmachine = "skl-2s"\ncommand = "hackbench -g 1 -l 20"\n'
        '[axes]\nprofiles = ["v6.6", "v6.15"]\nseeds = 2\n')
    cli("sweep", "plan", str(grid), "-o", str(tmp_path / "sw"))
    cli("sweep", "run", str(tmp_path / "sw"))
    cli("sweep", "merge", str(tmp_path / "sw"), "-o", str(tmp_path / "sw.sqlite"))
    df = schedlab.sweep_results(tmp_path / "sw.sqlite")
    assert len(df) == 4
    assert set(df["profile"]) == {"v6.6", "v6.15"}
    assert "workload.time_s" in df.columns and df["workload.time_s"].gt(0).all()
    assert len(schedlab.sweep_results(tmp_path / "sw.sqlite", table="metrics")) > 4
    with pytest.raises(schedlab.InputError):
        schedlab.sweep_results(tmp_path / "missing.sqlite")


def test_validate_returns_the_scoreboard_as_a_frame():
    board = schedlab.validate(ROOT / "validation" / "cases", cases=["power10-swb-60-elapsed"],
                              progress=False)
    assert list(board["id"]) == ["power10-swb-60-elapsed"]
    row = board.iloc[0]
    assert row["real_change_pct"] == pytest.approx(-5.6, abs=0.01)
    assert row["sim_change_pct"] == row["sim_change_pct"]  # a number, not NaN
    assert board.attrs["totals"]["ran"] == 1
    with pytest.raises(schedlab.InputError, match="no such case"):
        schedlab.validate(ROOT / "validation" / "cases", cases=["nope"], progress=False)


def test_results_schema_ships_with_the_package_and_is_the_repositorys():
    schema = schedlab.results_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    with open(ROOT / "docs" / "results.schema.json") as f:
        assert json.load(f) == schema
    # A result's top-level keys are the schema's properties.
    r = schedlab.run(machine="skl-2s", command="hackbench -g 1 -l 10", progress=False)
    doc = json.loads(r.json)
    assert set(doc) <= set(schema["properties"])
    assert set(schema.get("required", [])) <= set(doc)
