"""schedlab from Python: run the simulator and analyse its results as pandas DataFrames.

    >>> import schedlab
    >>> r = schedlab.run(machine="skl-2s", command="hackbench -g 2 -l 100")
    >>> r.perf_stat            # one row per run
    >>> r.migrations           # migrations by reason, one row per run and reason

Every function takes what the command line takes (``schedlab run`` / ``schedlab compare``)
and calls the same library code, so ``Result.json`` is the document ``--json`` writes for
the same inputs (apart from the wall-clock fields ``wall_time_s`` and ``sim_s_per_wall_s``).
Bad input raises :class:`InputError` with the one-line message the CLI prints after
``schedlab: error:``. A run releases the GIL and stops on Ctrl-C (``KeyboardInterrupt``).
"""

from __future__ import annotations

import json as _json
import math
import os
import shlex
import sqlite3
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

import pandas as pd

from . import _schedlab
from ._schedlab import InputError

__all__ = [
    "InputError",
    "Result",
    "CompareResult",
    "run",
    "compare",
    "machines",
    "profiles",
    "features",
    "topology",
    "sweep_results",
    "validate",
    "results_schema",
    "__version__",
]

__version__ = _schedlab.version()


def results_schema() -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the results document: `Result.json` and the CLI's
    `run --json` follow it (the repository keeps the same text in docs/results.schema.json)."""
    return _json.loads(_schedlab.results_schema_json())

Pairs = Union[Mapping[str, Any], Iterable[str], None]

# Columns of the frames, so that a frame without data still has them.
PERF_COLUMNS = ["run", "seed", "task_clock_ms", "context_switches", "cpu_migrations",
                "cpus_utilized", "elapsed_s", "sim_time_ns", "events", "wall_time_s"]
TASK_COLUMNS = ["run", "seed", "pid", "comm", "cpu", "policy", "sum_exec_runtime_ns",
                "wait_sum_ns", "wait_count", "nr_switches", "nr_voluntary_switches",
                "nr_involuntary_switches", "nr_wakeups", "nr_wakeups_sync",
                "nr_wakeups_migrate", "nr_wakeups_local", "nr_wakeups_remote",
                "nr_migrations", "numa_pages_local_pct"]
MIGRATION_COLUMNS = ["run", "seed", "reason", "count"]
MIGRATION_EVENT_COLUMNS = ["run", "seed", "ts_ns", "pid", "from", "to", "reason"]
LATENCY_COLUMNS = ["run", "seed", "metric", "lower_ns", "count"]
PERCENTILE_COLUMNS = ["run", "seed", "metric", "samples", "p50", "p90", "p99", "p99.9",
                      "max", "mean"]
SCHEDSTAT_COLUMNS = ["run", "seed", "kind", "name"]
TIMELINE_COLUMNS = ["run", "seed", "cpu", "bucket", "start_ns", "busy_ns",
                    "busy_fraction", "top_pid"]
NUMA_COLUMNS = ["run", "seed", "sample", "time_ns", "node", "pages"]
CPU_COLUMNS = ["run", "seed", "cpu", "busy_ns", "nr_switches"]
# /proc/schedstat version 17 (kernel/sched/stats.c: show_schedstat()).
SCHEDSTAT_CPU_FIELDS = ["yld_count", "legacy", "sched_count", "sched_goidle", "ttwu_count",
                        "ttwu_local", "rq_cpu_time", "run_delay", "pcount"]
SCHEDSTAT_LB_FIELDS = ["lb_count", "lb_balanced", "lb_failed", "lb_imbalance_load",
                       "lb_imbalance_util", "lb_imbalance_task", "lb_imbalance_misfit",
                       "lb_gained", "lb_hot_gained", "lb_nobusyq", "lb_nobusyg"]
SCHEDSTAT_IDLE_TYPES = ["not_idle", "idle", "newly_idle"]  # the v6.10+ enum order
SCHEDSTAT_DOMAIN_FIELDS = ["alb_count", "alb_failed", "alb_pushed", "sbe_count",
                           "sbe_balanced", "sbe_pushed", "sbf_count", "sbf_balanced",
                           "sbf_pushed", "ttwu_wake_remote", "ttwu_move_affine",
                           "ttwu_move_balance"]
SCHEDSTAT_CPU_COLUMNS = ["run", "seed", "cpu"] + [f for f in SCHEDSTAT_CPU_FIELDS
                                                  if f != "legacy"]
SCHEDSTAT_DOMAIN_COLUMNS = (["run", "seed", "cpu", "domain", "level", "span", "idle_type"]
                            + SCHEDSTAT_LB_FIELDS + SCHEDSTAT_DOMAIN_FIELDS)
SUMMARY_COLUMNS = ["metric", "n", "mean", "stdev", "cv_pct", "min", "max", "p90"]

# Two-sided 95 % Student t quantiles by degrees of freedom (1..30); 1.96 beyond.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
        2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
        2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def _frame(rows: List[Dict[str, Any]], columns: List[str]) -> pd.DataFrame:
    """A frame of `rows` with `columns` first (and present even without rows)."""
    frame = pd.DataFrame(rows)
    for c in columns:
        if c not in frame.columns:
            frame[c] = pd.Series(dtype="object")
    rest = [c for c in frame.columns if c not in columns]
    return frame[columns + rest]


def _pairs(value: Pairs, option: str, bool_words=("on", "off")) -> List[str]:
    """`{"NAME": VALUE}` or `["NAME=VALUE", ...]` as the CLI's NAME=VALUE words."""
    if value is None:
        return []
    if isinstance(value, str):
        raise InputError(f"{option}: {value!r}: accepted: a dict {{NAME: VALUE}} or a list of "
                         "'NAME=VALUE' strings")
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            if isinstance(v, bool):
                v = bool_words[0] if v else bool_words[1]
            out.append(f"{k}={v}")
        return out
    return [str(v) for v in value]


def _command(command: Union[str, Iterable[str], None]) -> List[str]:
    if command is None:
        return []
    if isinstance(command, str):
        return shlex.split(command)
    return [str(w) for w in command]


def _options(scenario, machine, offline, kernel, features, sysctls, sets, command, runs,
             seed) -> Dict[str, Any]:
    return {
        "scenario": os.fspath(scenario) if scenario is not None else None,
        "machine": machine,
        "offline": offline,
        "kernel": kernel,
        "features": _pairs(features, "features"),
        "sysctls": _pairs(sysctls, "sysctls"),
        "sets": _pairs(sets, "sets", ("true", "false")),
        "command": _command(command),
        "runs": _check_int(runs, "runs", 1),
        "seed": _check_int(seed, "seed", 0),
    }


def _check_int(value, name: str, low: int) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"--{name}: {value!r}: accepted: an integer from {low}")
    return value


class Result:
    """The results of one `run`: the JSON document and DataFrames built from it.

    Frames (one row per run and item, with `run` (0-based) and `seed` columns):
    `perf_stat`, `tasks`, `cpus`, `migrations` (by reason), `migration_events` (each
    migration sampled by the timeline: time, task, from, to, reason; needs
    `timeline=True`), `latency` (histogram buckets as rows), `latency_percentiles`,
    `schedstat` (load-balancer counters in total, by domain level and by idle type),
    `schedstat_cpus` and `schedstat_domains` (/proc/schedstat per CPU, and per CPU, domain
    level and idle type),
    `timeline` (per-CPU busy time per bucket; needs `timeline=True`), `numa` (pages per
    node over time, when the workload declares memory), `workload` (benchmark-native
    metrics) and `summary` (statistics over runs).
    """

    def __init__(self, json_text: str, text: str = "", schedstat_texts: Optional[List[str]] = None):
        self.json: str = json_text
        self.text: str = text
        #: Every run's /proc/schedstat (version 17) at its end, as `run --schedstat` writes it.
        self.schedstat_texts: List[str] = list(schedstat_texts or [])
        self.doc: Dict[str, Any] = _json.loads(json_text)
        self._frames: Dict[str, pd.DataFrame] = {}

    def __repr__(self) -> str:
        scn = self.doc.get("scenario", {})
        return (f"<schedlab.Result {len(self.runs)} run(s) machine="
                f"{scn.get('machine', {}).get('preset')!r} complete={self.doc.get('complete')}>")

    @property
    def runs(self) -> List[Dict[str, Any]]:
        return self.doc.get("runs", [])

    def _cached(self, name: str, build) -> pd.DataFrame:
        if name not in self._frames:
            self._frames[name] = build()
        return self._frames[name]

    def _rows(self, each) -> List[Dict[str, Any]]:
        rows: List[Dict[str, Any]] = []
        for i, r in enumerate(self.runs):
            for row in each(r):
                rows.append({"run": i, "seed": r.get("seed"), **row})
        return rows

    @property
    def perf_stat(self) -> pd.DataFrame:
        def each(r):
            yield {**r.get("perf_stat", {}), "sim_time_ns": r.get("sim_time_ns"),
                   "events": r.get("events"), "wall_time_s": r.get("wall_time_s")}
        return self._cached("perf_stat", lambda: _frame(self._rows(each), PERF_COLUMNS))

    @property
    def tasks(self) -> pd.DataFrame:
        def each(r):
            for t in r.get("tasks", []):
                t = dict(t)
                for reason, n in t.pop("migrations_by_reason", {}).items():
                    t[f"migrations_{reason}"] = n
                yield t
        return self._cached("tasks", lambda: _frame(self._rows(each), TASK_COLUMNS))

    @property
    def cpus(self) -> pd.DataFrame:
        return self._cached("cpus", lambda: _frame(
            self._rows(lambda r: r.get("cpus", [])), CPU_COLUMNS))

    @property
    def migrations(self) -> pd.DataFrame:
        def each(r):
            for reason, n in r.get("migrations", {}).get("by_reason", {}).items():
                yield {"reason": reason, "count": n}
        return self._cached("migrations", lambda: _frame(self._rows(each), MIGRATION_COLUMNS))

    @property
    def migration_events(self) -> pd.DataFrame:
        def each(r):
            yield from (r.get("timeline") or {}).get("migration_marks", [])
        return self._cached("migration_events", lambda: _frame(
            self._rows(each), MIGRATION_EVENT_COLUMNS))

    @property
    def latency(self) -> pd.DataFrame:
        def each(r):
            for metric, buckets in r.get("latency_hist", {}).items():
                for lower, count in buckets:
                    yield {"metric": metric, "lower_ns": lower, "count": count}
        return self._cached("latency", lambda: _frame(self._rows(each), LATENCY_COLUMNS))

    @property
    def latency_percentiles(self) -> pd.DataFrame:
        def each(r):
            for metric, p in r.get("latency_us", {}).items():
                yield {"metric": metric, **p}
        return self._cached("latency_percentiles", lambda: _frame(
            self._rows(each), PERCENTILE_COLUMNS))

    @property
    def schedstat(self) -> pd.DataFrame:
        def each(r):
            s = r.get("schedstat") or {}
            if s.get("totals"):
                yield {"kind": "total", "name": "all", **s["totals"]}
            for kind, group in (("level", "by_level"), ("idle_type", "by_idle_type")):
                for name, counters in (s.get(group) or {}).items():
                    yield {"kind": kind, "name": name, **counters}
        return self._cached("schedstat", lambda: _frame(self._rows(each), SCHEDSTAT_COLUMNS))

    def _schedstat_lines(self):
        for i, (r, text) in enumerate(zip(self.runs, self.schedstat_texts)):
            cpu = None
            for line in text.splitlines():
                words = line.split()
                if words and words[0].startswith("cpu"):
                    cpu = int(words[0][3:])
                yield i, r.get("seed"), cpu, words

    @property
    def schedstat_cpus(self) -> pd.DataFrame:
        """/proc/schedstat's per-CPU lines of every run: one row per run and CPU."""
        def build():
            rows = []
            for run, seed, cpu, words in self._schedstat_lines():
                if words and words[0].startswith("cpu"):
                    row = dict(zip(SCHEDSTAT_CPU_FIELDS, map(int, words[1:])))
                    row.pop("legacy", None)
                    rows.append({"run": run, "seed": seed, "cpu": cpu, **row})
            return _frame(rows, SCHEDSTAT_CPU_COLUMNS)
        return self._cached("schedstat_cpus", build)

    @property
    def schedstat_domains(self) -> pd.DataFrame:
        """/proc/schedstat's domain lines of every run: one row per run, CPU, domain level
        and idle type (`not_idle`, `idle`, `newly_idle`), with the load-balance counters and
        the domain's active-balance and wakeup counters."""
        def build():
            rows = []
            n = len(SCHEDSTAT_LB_FIELDS)
            for run, seed, cpu, words in self._schedstat_lines():
                if not (words and words[0].startswith("domain")):
                    continue
                nums = list(map(int, words[3:]))
                tail = dict(zip(SCHEDSTAT_DOMAIN_FIELDS, nums[3 * n:]))
                for k, idle in enumerate(SCHEDSTAT_IDLE_TYPES):
                    lb = dict(zip(SCHEDSTAT_LB_FIELDS, nums[k * n:(k + 1) * n]))
                    rows.append({"run": run, "seed": seed, "cpu": cpu,
                                 "domain": int(words[0][6:]), "level": words[1],
                                 "span": words[2], "idle_type": idle, **lb, **tail})
            return _frame(rows, SCHEDSTAT_DOMAIN_COLUMNS)
        return self._cached("schedstat_domains", build)

    @property
    def timeline(self) -> pd.DataFrame:
        def each(r):
            tl = r.get("timeline")
            if not tl:
                return
            width, end = tl["bucket_ns"], tl["end_ns"]
            for cpu, (busy, top) in enumerate(zip(tl["cpu_busy_ns"], tl["cpu_top_pid"])):
                for b, (ns, pid) in enumerate(zip(busy, top)):
                    span = max(1, min(width, end - b * width))
                    yield {"cpu": cpu, "bucket": b, "start_ns": b * width, "busy_ns": ns,
                           "busy_fraction": min(1.0, ns / span), "top_pid": pid}
        return self._cached("timeline", lambda: _frame(self._rows(each), TIMELINE_COLUMNS))

    @property
    def numa(self) -> pd.DataFrame:
        def each(r):
            series = (r.get("numa") or {}).get("pages_series")
            if not series:
                return
            for node, pages in enumerate(series.get("pages_per_node", [])):
                for i, (t, p) in enumerate(zip(series.get("time_ns", []), pages)):
                    yield {"sample": i, "time_ns": t, "node": node, "pages": p}
        return self._cached("numa", lambda: _frame(self._rows(each), NUMA_COLUMNS))

    @property
    def workload(self) -> pd.DataFrame:
        def each(r):
            yield pd.json_normalize(r.get("workload", {}), sep=".").to_dict("records")[0]
        return self._cached("workload", lambda: _frame(self._rows(each), ["run", "seed"]))

    @property
    def summary(self) -> pd.DataFrame:
        rows = [{"metric": k, **v} for k, v in self.doc.get("summary", {}).items()]
        return self._cached("summary", lambda: _frame(rows, SUMMARY_COLUMNS))

    def report(self, path: Union[str, os.PathLike], source: str = "schedlab run") -> str:
        """Write the HTML report `schedlab report` draws from these results to `path`."""
        html = _schedlab.report_html(source, self.json)
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        return os.fspath(path)


class CompareResult:
    """The results of `compare`: every variant's `Result`, frames with a `variant` column,
    and the paired deltas against the baseline with 95 % intervals (`deltas`)."""

    def __init__(self, json_text: str, text: str = ""):
        self.json: str = json_text
        self.text: str = text
        self.doc: Dict[str, Any] = _json.loads(json_text)
        self.baseline: str = self.doc.get("baseline", "baseline")
        self.variants: Dict[str, Result] = {
            v["name"]: Result(_json.dumps(v["results"]))
            for v in self.doc.get("variants", [])
        }
        self.changes: Dict[str, str] = {
            v["name"]: v.get("changes", "") for v in self.doc.get("variants", [])}

    def __repr__(self) -> str:
        return f"<schedlab.CompareResult variants={list(self.variants)}>"

    def __getitem__(self, name: str) -> Result:
        return self.variants[name]

    def frame(self, name: str) -> pd.DataFrame:
        """The frame `name` of every variant (e.g. "perf_stat"), with a `variant` column."""
        frames = []
        for v, r in self.variants.items():
            f = getattr(r, name).copy()
            f.insert(0, "variant", v)
            frames.append(f)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name in ("perf_stat", "tasks", "cpus", "migrations", "migration_events", "latency",
                    "latency_percentiles", "schedstat", "timeline", "numa", "workload"):
            return self.frame(name)
        raise AttributeError(name)

    @property
    def metrics(self) -> pd.DataFrame:
        """The comparison tables as rows: metric, variant, mean, stdev, normalized, pct_imp."""
        rows = []
        for table in self.doc.get("comparison", {}).get("metrics", []):
            for row in table.get("rows", []):
                s = row.get("summary") or {}
                rows.append({"metric": table.get("metric"), "units": table.get("units"),
                             "interpretation": table.get("interpretation"),
                             "variant": row.get("variant"), "n": s.get("n"),
                             "mean": s.get("mean"), "stdev": s.get("stdev"),
                             "normalized": row.get("normalized"),
                             "pct_imp": row.get("pct_imp"), "values": row.get("values")})
        return _frame(rows, ["metric", "units", "interpretation", "variant", "n", "mean",
                             "stdev", "normalized", "pct_imp", "values"])

    @property
    def deltas(self) -> pd.DataFrame:
        """Per metric and variant, the paired per-seed difference against the baseline:
        mean, stdev, n, pct_of_baseline, and the 95 % interval of the mean (Student t)."""
        rows = []
        for table in self.doc.get("comparison", {}).get("metrics", []):
            for row in table.get("rows", []):
                d = row.get("paired_delta")
                if not d:
                    continue
                n, mean, sd = d["n"], d["mean"], d["stdev"]
                half = (_T95[min(n - 1, 30) - 1] if n - 1 <= 30 else 1.96) * sd / math.sqrt(n) \
                    if n > 1 else float("nan")
                rows.append({"metric": table.get("metric"), "variant": row.get("variant"),
                             "n": n, "mean": mean, "stdev": sd,
                             "pct_of_baseline": d.get("pct_of_baseline"),
                             "ci95_low": mean - half, "ci95_high": mean + half})
        return _frame(rows, ["metric", "variant", "n", "mean", "stdev", "pct_of_baseline",
                             "ci95_low", "ci95_high"])

    def report(self, path: Union[str, os.PathLike]) -> str:
        """Write the HTML report of the comparison to `path`."""
        html = _schedlab.report_html("schedlab compare", self.json)
        with open(path, "w", encoding="utf-8") as f:
            f.write(html)
        return os.fspath(path)


def run(scenario: Union[str, os.PathLike, None] = None, machine: Optional[str] = None,
        kernel: Optional[str] = None, features: Pairs = None, sysctls: Pairs = None,
        sets: Pairs = None, command: Union[str, Iterable[str], None] = None,
        runs: Optional[int] = None, seed: Optional[int] = None, progress: bool = True,
        offline: Optional[str] = None, timeline: bool = False) -> Result:
    """Simulate, like `schedlab run`: a scenario file and/or the quick form.

    `features` ({"TTWU_QUEUE": False} or ["TTWU_QUEUE=off"]), `sysctls`
    ({"sched_migration_cost_ns": 500000}) and `sets` ({"workload.groups": 4}) are the
    repeatable `--feature`, `--sysctl` and `--set`; `command` is the benchmark command line
    (a string split as a shell would, or a list of words). `runs` and `seed` default, as on
    the command line, to the scenario's `[run]` values (1 and 1 when it has none).
    `timeline=True` also records the first run's time series (as `--report` does), which
    fills `timeline` and `migration_events` (and adds `runs[0].timeline` to the JSON).
    """
    opts = _options(scenario, machine, offline, kernel, features, sysctls, sets, command,
                    runs, seed)
    json_text, text, schedstats = _schedlab.run_json(opts, progress, timeline)
    return Result(json_text, text, schedstats)


def compare(scenario: Union[str, os.PathLike, None] = None,
            variants: Union[Mapping[str, Any], Iterable[str], None] = None,
            machine: Optional[str] = None, kernel: Optional[str] = None,
            features: Pairs = None, sysctls: Pairs = None, sets: Pairs = None,
            command: Union[str, Iterable[str], None] = None, runs: Optional[int] = None,
            seed: Optional[int] = None, progress: bool = True,
            offline: Optional[str] = None) -> CompareResult:
    """Compare kernel variants on the same seeds, like `schedlab compare`.

    `variants`: `--variant` specs ("noq:NO_TTWU_QUEUE") or a dict from a name to its
    changes, either a spec string ("NO_TTWU_QUEUE,sched_migration_cost_ns=0") or a list of
    them (["NO_TTWU_QUEUE", "kernel.profile=v6.6"]).
    """
    specs: List[str] = []
    if isinstance(variants, Mapping):
        for name, change in variants.items():
            change = change if isinstance(change, str) else ",".join(map(str, change))
            specs.append(f"{name}:{change}")
    elif variants is not None:
        specs = [variants] if isinstance(variants, str) else [str(v) for v in variants]
    opts = _options(scenario, machine, offline, kernel, features, sysctls, sets, command,
                    runs, seed)
    json_text, text = _schedlab.compare_json(opts, specs, progress)
    return CompareResult(json_text, text)


def validate(cases_dir: Union[str, os.PathLike] = "validation/cases", quick: bool = False,
             cases: Optional[Iterable[str]] = None, progress: bool = True) -> pd.DataFrame:
    """`schedlab validate`: run the corpus of published results and return the scoreboard,
    one row per case (id, benchmark, machine, group, source, real_change_pct,
    sim_change_pct, sim_ci_pct, sign_ok, ratio, within_2x, scored, reason, ...). The totals
    (share with the right sign, within 2x, median |log ratio|) are in `attrs["totals"]`."""
    text = _schedlab.validate_json(os.fspath(cases_dir), bool(quick), list(cases or []),
                                   bool(progress))
    doc = _json.loads(text)
    frame = pd.DataFrame(doc["cases"])
    frame.attrs["totals"] = doc["totals"]
    return frame


def machines() -> pd.DataFrame:
    """The machine presets: machine, description."""
    return pd.DataFrame(_json.loads(_schedlab.machines_json()))


def profiles() -> pd.DataFrame:
    """The kernel profiles: profile, version, mode (CFS/EEVDF), summary."""
    return pd.DataFrame(_json.loads(_schedlab.profiles_json()))


def features() -> pd.DataFrame:
    """The scheduler features: feature, default (newest profile), kind, doc, and one
    column per profile with the feature's value there."""
    return pd.DataFrame(_json.loads(_schedlab.features_json()))


def topology(machine: str, offline: Optional[str] = None) -> pd.DataFrame:
    """Every CPU's sched-domain hierarchy (`schedlab topo MACHINE --json`): one row per CPU
    and domain level (cpu, core, llc, package, node, capacity, level, span, flags,
    imbalance_pct, groups...). The full document is in the frame's `attrs["json"]`."""
    doc = _json.loads(_schedlab.topology_json(machine, offline))
    rows = []
    for cpu in doc.get("cpus", []):
        base = {k: v for k, v in cpu.items() if k != "domains"}
        domains = cpu.get("domains") or [{}]
        for d in domains:
            rows.append({**base, **d})
    frame = pd.DataFrame(rows)
    frame.attrs["json"] = doc
    return frame


def sweep_results(db_path: Union[str, os.PathLike], table: Optional[str] = None) -> pd.DataFrame:
    """A sweep's SQLite store (`schedlab sweep run` / `merge`) as a frame: one row per run
    (the `runs` table), one column per axis (`axes`, prefixed `axis.`) and one per metric
    (`metrics`, by dotted path such as `workload.time_s`). `table` reads one table as it
    is instead (`runs`, `axes`, `metrics`, `migrations`, `schedstat`)."""
    path = os.fspath(db_path)
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such sweep database")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        wanted = table or "runs"
        if wanted not in tables:
            raise InputError(f"{path}: table {wanted!r} not found; accepted: "
                             f"{', '.join(tables) or 'a database written by schedlab sweep'}")
        if table is not None:
            return pd.read_sql_query(f'SELECT * FROM "{table}"', con)
        runs = pd.read_sql_query("SELECT * FROM runs ORDER BY idx, seed", con)
        for name, key, value, prefix in (("axes", "axis", "value", "axis."),
                                         ("metrics", "metric", "value", "")):
            if name not in tables:
                continue
            long = pd.read_sql_query(f"SELECT run_id, {key}, {value} FROM {name}", con)
            if long.empty:
                continue
            wide = long.pivot(index="run_id", columns=key, values=value)
            wide.columns = [f"{prefix}{c}" for c in wide.columns]
            runs = runs.merge(wide, left_on="id", right_index=True, how="left")
        return runs
    finally:
        con.close()
