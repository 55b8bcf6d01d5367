# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A tour of schedlab from Python: hackbench on skl-2s across three kernels
#
# hackbench (the scheduler's message-passing stress test) on a two-socket Skylake
# (`skl-2s`: 2 x 20 cores x 2 threads), simulated under three kernel profiles: v3.16 (CFS,
# the 2014 wakeup path), v6.6 (the last CFS release) and v6.15 (EEVDF). Every profile runs on
# the same seeds, so per-seed differences isolate the kernel. Everything below is
# deterministic: rerunning the notebook gives the same numbers.
#
# Executed headless in CI (`scripts/python-check`); the rendered page is
# `docs/notebooks/seed-tour.html`.

# %%
import matplotlib.pyplot as plt
import pandas as pd

import schedlab

PROFILES = ["v3.16", "v6.6", "v6.15"]
COMMAND = "hackbench -g 4 -l 200"
schedlab.profiles().set_index("profile").loc[PROFILES, ["mode", "summary"]]

# %% [markdown]
# ## Run the three kernels
#
# `schedlab.compare` is `schedlab compare`: the baseline is the scenario as given (here
# `-k v3.16`), each variant changes it (here only `kernel.profile`). Three seeds each.

# %%
cmp = schedlab.compare(
    machine="skl-2s",
    kernel=PROFILES[0],
    command=COMMAND,
    variants={p: f"kernel.profile={p}" for p in PROFILES[1:]},
    runs=3,
    progress=False,
)
names = {"baseline": PROFILES[0], **{p: p for p in PROFILES[1:]}}
perf = cmp.perf_stat.assign(kernel=lambda d: d.variant.map(names))
perf.groupby("kernel", sort=False)[
    ["elapsed_s", "context_switches", "cpu_migrations", "cpus_utilized"]
].mean()

# %% [markdown]
# hackbench's own result (`Time:`) per kernel, and the paired per-seed difference against
# v3.16 with its 95 % interval:

# %%
cmp.workload.assign(kernel=lambda d: d.variant.map(names)).groupby("kernel", sort=False)[
    "time_s"
].agg(["mean", "std"])

# %%
d = cmp.deltas.assign(kernel=lambda d: d.variant.map(names))
d = d[d.metric.isin(["workload.time_s", "latency_us.wakeup.p99", "migrations.total"])]
d[["metric", "kernel", "mean", "ci95_low", "ci95_high", "pct_of_baseline"]]

# %% [markdown]
# ## Wakeup latency
#
# Every run keeps the histogram of its wakeup latencies (time from a wakeup to running);
# `latency` has its buckets as rows. The CDF of the first seed of each kernel:

# %%
lat = cmp.latency
fig, ax = plt.subplots(figsize=(7, 4))
for variant, kernel in names.items():
    h = lat[(lat.variant == variant) & (lat.run == 0) & (lat.metric == "wakeup")]
    cdf = h["count"].cumsum() / h["count"].sum()
    ax.step(h["lower_ns"] / 1000, cdf, where="post", label=kernel)
ax.set_xscale("log")
ax.set_xlabel("wakeup latency (us, log scale)")
ax.set_ylabel("fraction of wakeups")
ax.set_title(f"{COMMAND} on skl-2s: wakeup latency CDF (seed {cmp.doc['seeds'][0]})")
ax.legend()
ax.grid(alpha=0.3)
plt.show()

# %%
pct = cmp.latency_percentiles
pct[pct.metric == "wakeup"].assign(kernel=lambda d: d.variant.map(names)).groupby(
    "kernel", sort=False
)[["p50", "p90", "p99", "max"]].mean()

# %% [markdown]
# ## Migrations by reason
#
# Every migration is counted by the mechanism that made it: wakeup placement
# (`select_task_rq_fair`), periodic, newly-idle and nohz-idle load balancing, active
# balancing, NUMA. Mean over the three seeds:

# %%
mig = cmp.migrations.assign(kernel=lambda d: d.variant.map(names))
by_reason = mig.pivot_table(index="reason", columns="kernel", values="count", aggfunc="mean")
by_reason = by_reason[PROFILES].loc[lambda d: d.sum(axis=1) > 0]
ax = by_reason.plot.barh(figsize=(7, 4))
ax.set_xlabel("migrations per run (mean of 3 seeds)")
ax.set_title("Migrations by reason")
plt.tight_layout()
plt.show()
by_reason

# %% [markdown]
# ## Where the balancer worked: schedstat by domain level

# %%
ss = cmp.schedstat.assign(kernel=lambda d: d.variant.map(names))
ss[ss.kind == "level"].groupby(["kernel", "name"], sort=False)[
    ["lb_count", "lb_balanced", "lb_gained"]
].mean()
