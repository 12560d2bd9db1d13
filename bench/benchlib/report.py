# SPDX-License-Identifier: GPL-2.0-only
"""Statistics, tables, chart and reproducibility check of bench/bench.py results.

Input: the results dict written by bench/bench.py (results.json):
  {"config": {...}, "boots": [{"rep", "topology", "model", "driver", "runs": [
      {"workload", "ok", "metrics": {...}, ...raw...}]}]}
Groups are keyed (topology, model, workload, driver); every metric's values
over the repeats give median, min, max, quartiles and the relative spread
(max - min) / median. Stock vs ours: ratio of medians and an exact
Mann-Whitney U test (two-sided) on the repeats.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict

# metric key -> (label, format, which workloads: "rr", "stream" or "all")
METRICS = {
    "tps": ("transactions/s", ".0f", "rr"),
    "mbps": ("throughput Mbit/s", ".1f", "stream"),
    "pkts_per_s": ("packets/s", ".0f", "stream"),
    "perf_per_qemu_cpu": ("perf per QEMU CPU-s", ".1f", "all"),
    "p50_us": ("p50 latency us", ".1f", "rr"),
    "p99_us": ("p99 latency us", ".1f", "rr"),
    "kicks_per_txpkt": ("TX kicks / TX pkt", ".3f", "all"),
    "kicks_rx_per_rxpkt": ("RX kicks / RX pkt", ".3f", "all"),
    "irqs_per_pkt": ("device irqs / pkt", ".3f", "all"),
    "irqs_tx_per_txpkt": ("TX irqs / TX pkt", ".3f", "all"),
    "irqs_rx_per_rxpkt": ("RX irqs / RX pkt", ".3f", "all"),
    "kicks_per_unit": ("kicks / U", ".3f", "all"),
    "irqs_per_unit": ("device irqs / U", ".3f", "all"),
    "timer_arms_per_unit": ("timer arms / U", ".3f", "all"),
    "timer_irqs_per_unit": ("timer irqs (LOC) / U", ".3f", "all"),
    "ipis_per_unit": ("IPIs (RES+CAL) / U", ".3f", "all"),
    "hlts_per_unit": ("HLTs (idle exits) / U", ".3f", "all"),
    "irq_on_plan_pct": ("irq on planned CPU %", ".1f", "all"),
    "irq_on_plan_min_pct": ("worst vector on plan %", ".1f", "all"),
    "exits_per_unit": ("EXITS / U", ".3f", "all"),
    "cost_us_per_unit": ("cost us / U", ".2f", "all"),
    "qemu_cpu_s": ("QEMU host CPU s", ".1f", "all"),
    "host_foreign_cpu": ("foreign host load CPUs", ".2f", "all"),
}
# the NIC's queue interrupts taken by each vCPU, per unit
for _i in range(8):
    METRICS[f"dev_irqs_cpu{_i}_per_unit"] = (f"queue irqs CPU {_i} / U", ".3f", "all")
CPU_METRICS = tuple(k for k in METRICS if k.startswith("dev_irqs_cpu"))
# our driver's own counters (ethtool -S, all queues), per packet of their direction
DRIVER_COUNTERS = ("tx_kicks", "tx_kicks_held", "tx_kicks_suppressed", "tx_timer_flushes",
                   "tx_poll_flushes", "tx_batch_kicks", "tx_forced_kicks",
                   "tx_flush_timer_arms", "tx_reclaim_batches", "tx_reclaim_deadlines",
                   "tx_interrupts", "tx_napi_polls", "rx_interrupts", "rx_napi_polls",
                   "rx_irq_rearms", "rx_deferrals", "rx_deferral_arms")
for _c in DRIVER_COUNTERS:
    METRICS[f"drv_{_c}_per_pkt"] = (f"ours: {_c} / {_c[:2].upper()} pkt", ".3f", "all")
# the short table on stdout
KEY_METRICS = ("tps", "mbps", "perf_per_qemu_cpu", "p99_us", "kicks_per_txpkt", "irqs_per_pkt",
               "ipis_per_unit", "irq_on_plan_pct", "exits_per_unit", "cost_us_per_unit")
# what --check-repro compares
REPRO_METRICS = ("tps", "mbps", "perf_per_qemu_cpu", "p50_us", "p99_us", "kicks_per_txpkt",
                 "irqs_per_pkt", "exits_per_unit", "cost_us_per_unit")
NOISY = 0.15   # relative spread above which a group is called noisy


def unit_name(workload: str, workloads_meta: dict) -> str:
    return "tx" if workloads_meta.get(workload, {}).get("kind") == "rr" else "pkt"


def applies(metric: str, kind: str) -> bool:
    want = METRICS[metric][2]
    return want == "all" or want == kind


# --- statistics -----------------------------------------------------------------------------
def describe(vals: list[float]) -> dict | None:
    vals = sorted(v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v)))
    if not vals:
        return None
    med = statistics.median(vals)
    d = {"n": len(vals), "median": med, "min": vals[0], "max": vals[-1], "values": vals}
    if len(vals) >= 2:
        q1, _, q3 = statistics.quantiles(vals, n=4, method="inclusive")
        d.update(q1=q1, q3=q3)
    else:
        d.update(q1=med, q3=med)
    d["rel_spread"] = (vals[-1] - vals[0]) / abs(med) if med else (0.0 if vals[-1] == vals[0] else math.inf)
    d["rel_iqr"] = (d["q3"] - d["q1"]) / abs(med) if med else 0.0
    return d


def mann_whitney_p(a: list[float], b: list[float]) -> float | None:
    """Two-sided p of the Mann-Whitney U test: exact (all assignments of the
    pooled ranks, ties as mid-ranks) for small samples, normal otherwise."""
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return None
    pooled = sorted(a + b)
    ranks = {}
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1] == pooled[i]:
            j += 1
        ranks[pooled[i]] = (i + j) / 2 + 1
        i = j + 1
    r = [ranks[x] for x in a + b]
    mean_u = n1 * n2 / 2

    def u_of(idx) -> float:
        return sum(r[k] for k in idx) - n1 * (n1 + 1) / 2

    u_obs = u_of(range(n1))
    dev = abs(u_obs - mean_u)
    if math.comb(n1 + n2, n1) <= 20000:
        total = extreme = 0
        for idx in itertools.combinations(range(n1 + n2), n1):
            total += 1
            if abs(u_of(idx) - mean_u) >= dev - 1e-9:
                extreme += 1
        return extreme / total
    n = n1 + n2
    ties = sum(c ** 3 - c for c in _tie_counts(pooled))
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = max(dev - 0.5, 0) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


def _u_null_cdf(m: int, n: int) -> list[float]:
    """P(U <= u) for u = 0..m*n: U counts pairs (x of m, y of n) with x > y
    when both samples come from one continuous distribution."""
    # ways[i][j][u]: arrangements of i x's and j y's with u such pairs
    ways = [[None] * (n + 1) for _ in range(m + 1)]
    for i in range(m + 1):
        for j in range(n + 1):
            if i == 0 or j == 0:
                ways[i][j] = [1]
                continue
            # the largest value is an x (it beats all j y's) or a y
            a, b = ways[i - 1][j], ways[i][j - 1]
            size = i * j + 1
            w = [0] * size
            for u, c in enumerate(a):
                w[u + j] += c
            for u, c in enumerate(b):
                w[u] += c
            ways[i][j] = w
    total = math.comb(m + n, m)
    cdf, acc = [], 0
    for c in ways[m][n]:
        acc += c
        cdf.append(acc / total)
    return cdf


def ratio_interval(a: list[float], b: list[float], level: float = 0.95):
    """Distribution-free interval for the ratio a / b of two positive samples
    (e.g. ours' runs over stock's): the Hodges-Lehmann (Moses) interval of
    the shift of log(a) against log(b), from the exact null distribution of
    the Mann-Whitney U, so it assumes only that the runs of a side are alike
    and that the change scales the metric.  -> {"lo", "hi", "level", "est"}:
    est is the median of all pairwise ratios; level is the coverage the
    interval has (at least `level` when the runs allow it; with 4 runs a
    side the widest, min..max of the pairwise ratios, covers 97.1%, with 3
    only 90%).  None without two positive runs a side."""
    a = [x for x in a if x is not None and x > 0]
    b = [x for x in b if x is not None and x > 0]
    m, n = len(a), len(b)
    if m < 2 or n < 2:
        return None
    d = sorted(math.log(x) - math.log(y) for x in a for y in b)
    cdf = _u_null_cdf(m, n)
    half = (1 - level) / 2
    # the k-th smallest and k-th largest difference bound the interval;
    # its coverage is 1 - 2 P(U <= k - 1); take the largest k that keeps it
    k = 1
    while k < len(cdf) and k <= m * n // 2 and cdf[k] <= half:
        k += 1
    return {"lo": math.exp(d[k - 1]), "hi": math.exp(d[m * n - k]),
            "level": 1 - 2 * cdf[k - 1], "est": math.exp(statistics.median(d))}


def _signed_rank_cdf(n: int) -> list[float]:
    """P(T <= t) for t = 0..n(n+1)/2: T the sum of the ranks 1..n that
    carry a plus sign, each sign a fair coin (no differences tied at 0)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for r in range(1, n + 1):
        for t in range(len(counts) - 1, r - 1, -1):
            counts[t] += counts[t - r]
    cdf, acc = [], 0
    for c in counts:
        acc += c
        cdf.append(acc / 2 ** n)
    return cdf


def paired_ratio_interval(pairs: list[tuple[float, float]], level: float = 0.95):
    """The paired counterpart of ratio_interval(): for (a, b) pairs measured
    together (a repeat's boot of ours and the stock boot beside it, which
    share the host's state), the Hodges-Lehmann interval of the median of
    log(a / b) from the exact signed-rank distribution, and Wilcoxon's
    two-sided p.  The pairs take the host's drift between repeats out of
    the comparison, so the interval is narrower than the unpaired one when
    that drift is most of the spread; but it needs more repeats: its
    coverage is at most 1 - 2^(1 - n) (87.5% with 4 pairs, 96.9% with 6).
    -> {"lo", "hi", "level", "est", "p", "n"}; None with fewer than 2."""
    d = [math.log(a) - math.log(b) for a, b in pairs
         if a is not None and b is not None and a > 0 and b > 0]
    n = len(d)
    if n < 2:
        return None
    cdf = _signed_rank_cdf(n)
    walsh = sorted((x + y) / 2 for x, y in itertools.combinations_with_replacement(d, 2))
    half = (1 - level) / 2
    # drop the k - 1 smallest and largest Walsh averages: coverage
    # 1 - 2 P(T <= k - 1); the largest k that keeps it at least level
    k = 1
    while k < len(cdf) and k <= len(walsh) // 2 and cdf[k] <= half:
        k += 1
    nz = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(d[nz[j + 1]]) == abs(d[nz[i]]):
            j += 1
        for m in range(i, j + 1):
            ranks[nz[m]] = (i + j) / 2 + 1
        i = j + 1
    t_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    t = min(t_plus, n * (n + 1) / 2 - t_plus)
    p = min(1.0, 2 * cdf[min(int(math.floor(t + 1e-9)), len(cdf) - 1)])
    return {"lo": math.exp(walsh[k - 1]), "hi": math.exp(walsh[len(walsh) - k]),
            "level": 1 - 2 * cdf[k - 1], "est": math.exp(statistics.median(walsh)),
            "p": p, "n": n}


def loss_verdict(ours: list[float], stock: list[float], higher_better: bool,
                 tol: float = 0.05) -> dict | None:
    """Did ours lose against stock in this cell, by the interval above?
    "loss": the whole interval is on the worse side of 1 (a loss is shown);
    "ok": it excludes a loss of more than tol (throughput above 1 - tol, or
    a latency below 1 / (1 - tol)); "open": neither, the runs cannot tell.
    Also the runs a side that would likely decide (runs_to_decide)."""
    ci = ratio_interval(ours, stock)
    if ci is None:
        return None
    worse_lo, worse_hi = (ci["lo"], ci["hi"]) if higher_better else (1 / ci["hi"], 1 / ci["lo"])
    # worse_*: the interval as "ours' fraction of stock's performance"
    if worse_hi < 1:
        verdict = "loss"
    elif worse_lo >= 1 - tol:
        verdict = "ok"
    else:
        verdict = "open"
    frac = ci["est"] if higher_better else 1 / ci["est"]
    return {**ci, "verdict": verdict, "runs_needed": runs_to_decide(ours, stock, frac, tol)}


def runs_to_decide(a: list[float], b: list[float], frac: float, tol: float = 0.05) -> int | None:
    """Runs a side after which the loss check would most likely (80%) reach
    a verdict, if the true ratio were the one measured: frac is ours'
    fraction of stock's performance (the ratio, or its inverse for a
    latency).  Of the two verdicts, "ok" (the interval above 1 - tol) and
    "loss" (below 1), the one whose bound the estimate lies further beyond
    sets the margin.  Normal theory on the log values,
    n = 2 (z_0.975 + z_0.8)^2 s^2 / margin^2 with s their pooled standard
    deviation, plus 5% for the rank interval.  At frac between 1 - tol and
    1 the margin is small and the runs many: such a cell needs a long
    series, not the matrix's repeats."""
    la = [math.log(x) for x in a if x is not None and x > 0]
    lb = [math.log(x) for x in b if x is not None and x > 0]
    if len(la) < 2 or len(lb) < 2 or frac <= 0:
        return None
    var = ((len(la) - 1) * statistics.variance(la) + (len(lb) - 1) * statistics.variance(lb)) / \
        (len(la) + len(lb) - 2)
    margin = max(math.log(frac) - math.log(1 - tol), -math.log(frac))
    if margin <= 0:
        return None
    z = 1.959964 + 0.841621
    # the rank interval reaches 95% coverage only from 4 runs a side
    return max(4, math.ceil(1.05 * 2 * z * z * var / margin ** 2))


def _tie_counts(sorted_vals):
    return [len(list(g)) for _, g in itertools.groupby(sorted_vals)]


# --- grouping --------------------------------------------------------------------------------
def group_runs(results: dict) -> dict:
    """{(topology, model, workload, driver): [metrics dict of each ok run]}"""
    groups: dict = defaultdict(list)
    for b in results.get("boots", []):
        for r in b.get("runs", []):
            if r.get("ok") and r.get("metrics"):
                model = r.get("model", b.get("model"))
                groups[(b["topology"], model, r["workload"], b["driver"])].append(r["metrics"])
    return groups


def failures(results: dict) -> dict:
    out: dict = defaultdict(int)
    for b in results.get("boots", []):
        for r in b.get("runs", []):
            if not r.get("ok"):
                out[(b["topology"], r.get("model", b.get("model")), r["workload"], b["driver"])] += 1
    return out


def summarize(results: dict) -> dict:
    """{(topo, model, workload): {"kind", "stock": {metric: describe}, "ours": ...,
    "cmp": {metric: {"ratio", "p"}}}}"""
    meta = results["config"].get("workload_meta", {})
    groups = group_runs(results)
    out: dict = {}
    keys = sorted({k[:3] for k in groups}, key=lambda k: _order(results, k))
    for key in keys:
        kind = meta.get(key[2], {}).get("kind", "stream")
        ent = {"kind": kind, "unit": "tx" if kind == "rr" else "pkt"}
        for drv in ("stock", "ours"):
            runs = groups.get(key + (drv,), [])
            ent[drv] = {m: describe([r.get(m) for r in runs]) for m in METRICS if applies(m, kind)}
            ent[drv]["_n"] = len(runs)
        ent["cmp"] = {}
        for m in METRICS:
            if not applies(m, kind):
                continue
            s, o = ent["stock"].get(m), ent["ours"].get(m)
            if s and o:
                ratio = o["median"] / s["median"] if s["median"] else None
                p = mann_whitney_p(s["values"], o["values"])
                ent["cmp"][m] = {"ratio": ratio, "p": p}
        out[key] = ent
    return out


def _order(results, key):
    cfg = results["config"]
    topo, model, wl = key
    tl = cfg.get("topologies", [])
    ml = cfg.get("models", [])
    wls = cfg.get("workloads", [])
    return (tl.index(topo) if topo in tl else 99, ml.index(model) if model in ml else 99,
            wls.index(wl) if wl in wls else 99, wl)


# --- text output -----------------------------------------------------------------------------
def fmt(v, f: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return "inf"
    if abs(v) >= 10000 and f.endswith("f"):
        return f"{v:.0f}"
    return format(v, f)


def cell(d: dict | None, f: str) -> str:
    if not d:
        return "-"
    return f"{fmt(d['median'], f)} [{fmt(d['min'], f)}-{fmt(d['max'], f)}] {d['rel_spread'] * 100:.0f}%"


def model_line(results: dict, model: str) -> str:
    costs = results["config"].get("model_costs", {}).get(model)
    weights = results["config"].get("model_weights", {}).get(model)
    if costs is None:
        return f"model {model}: no plugin (timer arms not counted, no cost)"
    c = " ".join(f"{k}={v:g}" for k, v in costs.items())
    w = " ".join(f"{k}={v:g}" for k, v in (weights or {}).items())
    return f"model {model}: plugin costs us {c}; cost column weights {w}"


def topo_label(t) -> str:
    c, sep, p = str(t).partition(":")
    p = p if sep else c
    return f"{p} queue pair{'s' if p != '1' else ''} / {c} vCPU{'s' if c != '1' else ''}"


def topo_short(t) -> str:
    c, sep, p = str(t).partition(":")
    return f"{p if sep else c}q/{c}cpu"


def table(results: dict, summary: dict | None = None, metrics=KEY_METRICS) -> str:
    summary = summary if summary is not None else summarize(results)
    fails = failures(results)
    lines = []
    cur = None
    hdr = (f"{'workload':<10} {'metric':<22} {'stock median [min-max] spread':>34}  "
           f"{'ours median [min-max] spread':>34}  {'ours/stock':>10} {'p':>6}")
    for (topo, model, wl), ent in summary.items():
        if (topo, model) != cur:
            cur = (topo, model)
            lines += ["", f"== {topo_label(topo)}, {model_line(results, model)}",
                      "   (U = transaction for request/response, packet (guest rx+tx) for streams;"
                      " spread = (max-min)/median; p = Mann-Whitney, * < 0.05)", hdr]
        first = True
        for m in metrics:
            if m not in ent["stock"] and m not in ent["ours"]:
                continue
            label, f, _ = METRICS[m]
            label = label.replace("/ U", f"/ {ent['unit']}")
            if m == "perf_per_qemu_cpu":
                label = ("tps" if ent["kind"] == "rr" else "Mbit/s") + " per QEMU CPU-s"
            s, o = ent["stock"].get(m), ent["ours"].get(m)
            if not s and not o:
                continue
            c = ent["cmp"].get(m, {})
            ratio = fmt(c.get("ratio"), ".3f")
            p = c.get("p")
            ps = "-" if p is None else f"{p:.3f}" + ("*" if p < 0.05 else " ")
            name = wl if first else ""
            if first:
                n_s, n_o = ent["stock"]["_n"], ent["ours"]["_n"]
                nf = [fails.get((topo, model, wl, d), 0) for d in ("stock", "ours")]
                if any(nf):
                    name = f"{wl}"
                    lines.append(f"{wl:<10} (runs ok: stock {n_s}, ours {n_o}; failed: stock {nf[0]}, "
                                 f"ours {nf[1]})")
                    name = ""
            first = False
            lines.append(f"{name:<10} {label:<22} {cell(s, f):>34}  {cell(o, f):>34}  {ratio:>10} {ps:>6}")
    return "\n".join(lines).lstrip("\n")


def noise_report(results: dict, summary: dict | None = None, limit: float = NOISY) -> str:
    summary = summary if summary is not None else summarize(results)
    rows = []
    for (topo, model, wl), ent in summary.items():
        for drv in ("stock", "ours"):
            for m in ("tps", "mbps", "perf_per_qemu_cpu", "p99_us", "exits_per_unit",
                      "cost_us_per_unit", "kicks_per_txpkt", "irqs_per_pkt"):
                d = ent[drv].get(m)
                if d and d["rel_spread"] > limit:
                    rows.append(f"  {topo_short(topo)} {model:<9} {wl:<10} {drv:<5} {METRICS[m][0]:<22} "
                                f"spread {d['rel_spread'] * 100:5.1f}%  IQR {d['rel_iqr'] * 100:5.1f}%"
                                f"  n={d['n']}")
    if not rows:
        return f"noise: every key metric's spread is within {limit * 100:.0f}%"
    return (f"noisy groups (relative spread > {limit * 100:.0f}%):\n" + "\n".join(rows))


def markdown(results: dict, summary: dict | None = None, model: str | None = None) -> str:
    """workload x driver medians (one model) as a markdown table."""
    summary = summary if summary is not None else summarize(results)
    models = results["config"].get("models", [])
    model = model or primary_model(results)
    out = [f"Kernel {results['config'].get('release')}, {results['config'].get('runs')} runs x "
           f"{results['config'].get('seconds')} s, model `{model}`; medians, spread = (max-min)/median, "
           f"U = transaction (rr) or packet (streams).", "",
           "| topo | workload | stock perf | ours perf | ours/stock | stock exits/U | ours exits/U "
           "| ours/stock | stock cost us/U | ours cost us/U | p99 us stock / ours |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (topo, m, wl), ent in summary.items():
        if m != model:
            continue
        pm = "tps" if ent["kind"] == "rr" else "mbps"
        unit = " tps" if pm == "tps" else " Mbit/s"

        def med(drv, k, f):
            d = ent[drv].get(k)
            return "-" if not d else f"{fmt(d['median'], f)} ±{d['rel_spread'] * 100:.0f}%"

        def rat(k):
            return fmt(ent["cmp"].get(k, {}).get("ratio"), ".3f")

        p99 = "-"
        if ent["kind"] == "rr":
            p99 = f"{med('stock', 'p99_us', '.0f')} / {med('ours', 'p99_us', '.0f')}"
        out.append(f"| {topo_short(topo)} | {wl} | {med('stock', pm, '.0f')}{unit} | "
                   f"{med('ours', pm, '.0f')}{unit} | {rat(pm)} | {med('stock', 'exits_per_unit', '.2f')} | "
                   f"{med('ours', 'exits_per_unit', '.2f')} | {rat('exits_per_unit')} | "
                   f"{med('stock', 'cost_us_per_unit', '.1f')} | {med('ours', 'cost_us_per_unit', '.1f')} | "
                   f"{p99} |")
    if len(models) > 1:
        out.append("")
        out.append(f"(other models in results.json: {', '.join(x for x in models if x != model)})")
    return "\n".join(out)


def primary_model(results: dict) -> str:
    models = results["config"].get("models", [])
    for m in ("ref", "ref-noirq", "zero", "none"):
        if m in models:
            return m
    return models[0] if models else "none"


def exits_breakdown(results: dict, summary: dict | None = None) -> str:
    """Per workload: median parts of the exit sum, stock -> ours."""
    summary = summary if summary is not None else summarize(results)
    parts = ("kicks_per_unit", "irqs_per_unit", "timer_arms_per_unit", "timer_irqs_per_unit",
             "ipis_per_unit", "hlts_per_unit", "exits_per_unit", "cost_us_per_unit")
    lines = ["exits per unit, medians stock -> ours: kicks + device irqs + timer arms + timer irqs + "
             "IPIs + HLTs = EXITS; cost us"]
    cur = None
    for (topo, model, wl), ent in summary.items():
        if (topo, model) != cur:
            cur = (topo, model)
            lines.append(f"-- {topo_short(topo)}, model {model}")
        cols = []
        for p in parts:
            s, o = ent["stock"].get(p), ent["ours"].get(p)
            f = ".1f" if p == "cost_us_per_unit" else ".2f"
            cols.append(f"{fmt(s and s['median'], f)}->{fmt(o and o['median'], f)}")
        lines.append(f"  {wl:<10} /{ent['unit']:<3} " + "  ".join(cols))
    return "\n".join(lines)


def irq_cpu_breakdown(results: dict, summary: dict | None = None) -> str:
    """Per workload: median queue interrupts per unit on each vCPU, stock
    and ours, and (ours) the share on the planned CPU."""
    summary = summary if summary is not None else summarize(results)
    lines = ["NIC queue interrupts per unit on each vCPU (medians), stock | ours; "
             "ours: % on the planned CPU (all vectors, worst vector)"]
    cur = None
    for (topo, model, wl), ent in summary.items():
        if (topo, model) != cur:
            cur = (topo, model)
            lines.append(f"-- {topo_short(topo)}, model {model}")

        def row(drv):
            vals = [ent[drv].get(m) for m in CPU_METRICS]
            while vals and vals[-1] is None:
                vals.pop()
            return " ".join(fmt(v and v["median"], ".3f") for v in vals) or "-"

        on, worst = ent["ours"].get("irq_on_plan_pct"), ent["ours"].get("irq_on_plan_min_pct")
        lines.append(f"  {wl:<10} /{ent['unit']:<3} {row('stock')} | {row('ours')}"
                     f"  on plan {fmt(on and on['median'], '.1f')}% "
                     f"(worst {fmt(worst and worst['min'], '.1f')}%)")
    return "\n".join(lines)


# --- reproducibility -----------------------------------------------------------------------------
def compare_results(old: dict, new: dict, metrics=REPRO_METRICS) -> tuple[str, int, int]:
    """Is every new median within the old printed spread ((max-min)/median,
    relative to the old median)? -> (text, within, total)."""
    so, sn = summarize(old), summarize(new)
    lines = [f"{'topo':<4} {'model':<9} {'workload':<10} {'driver':<5} {'metric':<22} "
             f"{'old median':>11} {'new median':>11} {'delta':>8} {'spread':>10}  verdict"]
    within = total = 0
    for key, ent in so.items():
        if key not in sn:
            continue
        for drv in ("stock", "ours"):
            for m in metrics:
                a, b = ent[drv].get(m), sn[key][drv].get(m)
                if not a or not b:
                    continue
                total += 1
                f = METRICS[m][1]
                delta = (b["median"] - a["median"]) / abs(a["median"]) if a["median"] else 0.0
                # the old run's printed spread; the new one's if the old had one run
                src = a if a["n"] >= 2 else (b if b["n"] >= 2 else None)
                if src is None:
                    verdict = "n/a (one run each: no spread)"
                    ok = False
                    tol = 0.0
                else:
                    tol = src["rel_spread"]
                    ok = abs(delta) <= tol + 1e-12
                    in_range = a["min"] <= b["median"] <= a["max"]
                    verdict = "ok" if ok else ("OUTSIDE (within old min-max)" if in_range else "OUTSIDE")
                    if src is b:
                        verdict += " (new spread)"
                within += ok
                lines.append(f"{key[0]:<4} {key[1]:<9} {key[2]:<10} {drv:<5} {METRICS[m][0]:<22} "
                             f"{fmt(a['median'], f):>11} {fmt(b['median'], f):>11} {delta * 100:7.1f}% "
                             f"{tol * 100:9.1f}%  {verdict}")
    lines.append(f"{within} of {total} medians within the previous run's spread")
    return "\n".join(lines), within, total


# --- SVG chart --------------------------------------------------------------------------------
COLORS = {"stock": "#8c8c8c", "ours": "#1f77b4"}


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_chart(results: dict, model: str, summary: dict | None = None) -> str:
    """Grid: one row per (topology, workload), columns performance (tps or
    Mbit/s), exits per transaction/packet, cost us per transaction/packet.
    Bars = medians, whiskers = min-max, dots = single runs."""
    summary = summary if summary is not None else summarize(results)
    rows = [(k, e) for k, e in summary.items() if k[1] == model]
    cols = [("perf", "throughput (tps or Mbit/s)"), ("perf_per_qemu_cpu", "same per QEMU CPU-second"),
            ("exits_per_unit", "exits / transaction or packet"),
            ("cost_us_per_unit", "cost us / transaction or packet")]
    label_w, cell_w, row_h, top, pad = 150, 290, 46, 64, 12
    width = label_w + cell_w * len(cols) + pad
    height = top + row_h * len(rows) + 40
    cfg = results["config"]
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="8" y="18" font-size="14" font-weight="bold">virtio_net stock vs ours - kernel '
         f'{_esc(str(cfg.get("release")))}, model {_esc(model)}, {cfg.get("runs")} runs x '
         f'{cfg.get("seconds")} s</text>',
         f'<text x="8" y="34" fill="#444">bar = median, line = min-max, dots = runs; '
         f'right: ours/stock. '
         f'<tspan fill="{COLORS["stock"]}">&#9632; stock</tspan> '
         f'<tspan fill="{COLORS["ours"]}">&#9632; ours</tspan></text>']
    for ci, (_, title) in enumerate(cols):
        x = label_w + ci * cell_w
        o.append(f'<text x="{x + 4}" y="{top - 8}" font-weight="bold">{_esc(title)}</text>')
    prev_topo = None
    for ri, ((topo, _m, wl), ent) in enumerate(rows):
        y = top + ri * row_h
        if topo != prev_topo:
            o.append(f'<line x1="0" x2="{width}" y1="{y}" y2="{y}" stroke="#333"/>')
            prev_topo = topo
        else:
            o.append(f'<line x1="0" x2="{width}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        o.append(f'<text x="6" y="{y + 20}" font-weight="bold">{_esc(wl)}</text>')
        o.append(f'<text x="6" y="{y + 34}" fill="#555">{topo_short(topo)} per {ent["unit"]}</text>')
        for ci, (key, _) in enumerate(cols):
            m = key if key != "perf" else ("tps" if ent["kind"] == "rr" else "mbps")
            x0 = label_w + ci * cell_w + 4
            bar_w = cell_w - 100
            suffix = {"tps": " tps", "mbps": " Mb/s"}.get(m, "")
            if m == "perf_per_qemu_cpu":
                suffix = " tps" if ent["kind"] == "rr" else " Mb/s"
            ds = [ent[d].get(m) for d in ("stock", "ours")]
            if not any(ds):
                o.append(f'<text x="{x0}" y="{y + 26}" fill="#999">n/a</text>')
                continue
            vmax = max(d["max"] for d in ds if d) or 1.0
            scale = bar_w / (vmax * 1.05)
            for di, (drv, d) in enumerate(zip(("stock", "ours"), ds)):
                by = y + 6 + di * 18
                if not d:
                    continue
                w = max(d["median"] * scale, 0.5)
                o.append(f'<rect x="{x0}" y="{by}" width="{w:.1f}" height="14" fill="{COLORS[drv]}" '
                         f'opacity="0.85"><title>{drv} {m}: median {fmt(d["median"], ".4g")} '
                         f'min {fmt(d["min"], ".4g")} max {fmt(d["max"], ".4g")} n={d["n"]}</title></rect>')
                x1, x2 = x0 + d["min"] * scale, x0 + d["max"] * scale
                o.append(f'<line x1="{x1:.1f}" x2="{x2:.1f}" y1="{by + 7}" y2="{by + 7}" stroke="black"/>')
                for v in d["values"]:
                    o.append(f'<circle cx="{x0 + v * scale:.1f}" cy="{by + 7}" r="1.8" fill="black"/>')
                o.append(f'<text x="{x0 + max(w, d["max"] * scale) + 4:.1f}" y="{by + 11}" '
                         f'font-size="9" fill="#222">'
                         f'{fmt(d["median"], ".3g" if d["median"] < 100 else ".0f")}{suffix}</text>')
            r = ent["cmp"].get(m, {}).get("ratio")
            if r is not None:
                p = ent["cmp"][m].get("p")
                higher_better = key in ("perf", "perf_per_qemu_cpu")
                color = "#000" if p is None or p >= 0.05 else ("#080" if (r > 1) == higher_better else "#c00")
                o.append(f'<text x="{x0 + bar_w + 40}" y="{y + 26}" font-weight="bold" fill="{color}">'
                         f'x{r:.2f}</text>')
    o.append(f'<text x="8" y="{height - 12}" fill="#666">ratio in green/red: Mann-Whitney p &lt; 0.05 '
             f'(better/worse for ours), black: not significant</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"
