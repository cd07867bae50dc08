"""The A/B comparison: per-run metrics, exact tests between the arms, the report.

A run is the unit of comparison (vegaskit.analysis.stats): each metric is one
number per run, and the arms' numbers are compared with the exact two-sided
permutation test of the difference of means, Holm-adjusted across the metrics
of a scenario, at alpha = 0.05. The per-ACK distributions (cwnd and srtt from
tcp:tcp_probe, steady state: the second half of each flow, as in the runner's
metrics) are pooled per arm and shown as CDFs with their Kolmogorov-Smirnov
distance, a description only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vegaskit.analysis import metrics, stats
from vegaskit.analysis.records import read_csv

from .guest import ARMS

ALPHA = 0.05
LABEL = {"native": "tcp_vegas (kernel)", "bpf": "bpf_vegas"}


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    fmt: str


# Throughput and queue from the runner (testbed/runner.py), the rest from tcp_probe.
METRICS = [
    Metric("throughput_mbps", "throughput, 2nd half (Mbit/s, all flows)", "{:.3f}"),
    Metric("jain", "Jain index, 2nd half", "{:.4f}"),
    Metric("queue_mean_pkts", "bottleneck queue, mean (pkts)", "{:.2f}"),
    Metric("queue_p95_pkts", "bottleneck queue, p95 (pkts)", "{:.1f}"),
    Metric("retransmits", "retransmissions (all flows)", "{:.0f}"),
    Metric("cwnd_median_pkts", "cwnd per ACK, steady median (pkts)", "{:.1f}"),
    Metric("cwnd_p95_pkts", "cwnd per ACK, steady p95 (pkts)", "{:.1f}"),
    Metric("cwnd_peak_pkts", "cwnd peak, whole run (pkts)", "{:.0f}"),
    Metric("srtt_min_ms", "srtt, smallest after the first 10 ACKs (ms)", "{:.2f}"),
    Metric("srtt_median_ms", "srtt per ACK, steady median (ms)", "{:.2f}"),
    Metric("srtt_p95_ms", "srtt per ACK, steady p95 (ms)", "{:.2f}"),
]


def steady(probe: list[dict], summary: dict) -> list[dict]:
    """Records in the second half of their own flow (start to end as the runner saw it)."""
    half = {fl["flow"]: (fl["start_s"] + fl["end_s"]) / 2 for fl in summary["flows"]}
    return [r for r in probe if float(r["t_s"]) >= half.get(int(r["flow"]), float("inf"))]


def run_metrics(rundir: Path) -> tuple[dict, list[float], list[float]]:
    """(metrics, steady cwnd samples, steady srtt samples in ms) of one run."""
    sm = json.loads((rundir / "summary.json").read_text())
    probe = read_csv(rundir / "probe.csv")
    st = steady(probe, sm)
    cwnd = [float(r["snd_cwnd"]) for r in st]
    srtt = [float(r["srtt_us"]) / 1000 for r in st]
    if not cwnd:
        raise ValueError(f"{rundir}: no tcp_probe records in the second half")
    m = {
        "throughput_mbps": sum(f["second_half_bps"] for f in sm["flows"]) / 1e6,
        "jain": sm["jain"] if len(sm["flows"]) > 1 else None,
        "queue_mean_pkts": sm["queue_mean_pkts"],
        "queue_p95_pkts": sm["queue_p95_pkts"],
        "retransmits": sm["retransmits"],
        "cwnd_median_pkts": metrics.percentile(cwnd, 50),
        "cwnd_p95_pkts": metrics.percentile(cwnd, 95),
        "cwnd_peak_pkts": max(float(r["snd_cwnd"]) for r in probe),
        "srtt_min_ms": min(float(r["srtt_us"]) for r in probe[10:]) / 1000 if len(probe) > 10 else None,
        "srtt_median_ms": metrics.percentile(srtt, 50),
        "srtt_p95_ms": metrics.percentile(srtt, 95),
        "acks": len(probe),
    }
    return m, cwnd, srtt


def compare(raw: Path, scenario: str) -> dict:
    """Everything the report says of one scenario, from raw/<scenario>/<arm>-<rep>/."""
    per_arm = {arm: [] for arm in ARMS}
    pooled = {arm: {"cwnd": [], "srtt": []} for arm in ARMS}
    for arm in ARMS:
        for d in sorted((raw / scenario).glob(f"{arm}-*"), key=lambda p: int(p.name.split("-")[1])):
            m, cwnd, srtt = run_metrics(d)
            m["rep"] = int(d.name.split("-")[1])
            per_arm[arm].append(m)
            pooled[arm]["cwnd"] += cwnd
            pooled[arm]["srtt"] += srtt
    if not all(per_arm.values()):
        raise ValueError(f"{raw / scenario}: runs of both arms are needed")
    rows = []
    for mt in METRICS:
        vals = {arm: [m[mt.key] for m in per_arm[arm] if m[mt.key] is not None] for arm in ARMS}
        if not all(vals.values()):
            continue
        row = {"key": mt.key, "title": mt.title, "fmt": mt.fmt, "values": vals}
        for arm in ARMS:
            lo, hi, cov = stats.median_interval(vals[arm])
            row[arm] = {"median": stats.median(vals[arm]), "low": lo, "high": hi, "coverage": cov}
        row["p"] = stats.permutation_p(vals["bpf"], vals["native"])
        rows.append(row)
    for row in stats.add_holm(rows):
        row["differs"] = row["p_holm"] < ALPHA
    ks = {k: stats.ks_distance(pooled["bpf"][k], pooled["native"][k]) for k in ("cwnd", "srtt")}
    return {"scenario": scenario, "runs": per_arm, "rows": rows, "ks": ks,
            "min_p": stats.min_p(len(per_arm["bpf"]), len(per_arm["native"])),
            "pooled_sizes": {arm: len(pooled[arm]["cwnd"]) for arm in ARMS}, "_pooled": pooled}


def plot_cdfs(result: dict, out: Path) -> None:
    from vegaskit.analysis import plots      # matplotlib only when plotting
    fig, axes = plots.plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, key, unit in ((axes[0], "cwnd", "cwnd (packets)"), (axes[1], "srtt", "srtt (ms)")):
        for arm, style in (("native", "-"), ("bpf", "--")):
            xs = sorted(result["_pooled"][arm][key])
            n = len(xs)
            ax.plot(xs, [(i + 1) / n for i in range(n)], style, label=LABEL[arm])
        ax.set_xlabel(unit)
        ax.set_ylabel("CDF, per ACK (steady state, pooled)")
        ax.set_title(f"{result['scenario']}: {key}, KS D = {result['ks'][key]:.3f}")
        ax.legend(loc="lower right")
    plots.save(fig, out)


def _cell(row: dict, arm: str) -> str:
    c, f = row[arm], row["fmt"]
    return f"{f.format(c['median'])} [{f.format(c['low'])}, {f.format(c['high'])}]"


def _delta(row: dict) -> str:
    a, b = row["bpf"]["median"], row["native"]["median"]
    d = row["fmt"].format(a - b)
    return d if b == 0 else f"{d} ({(a - b) / abs(b) * 100:+.1f}%)"


def render(results: list[dict], setup: dict, command: str, notes: dict[str, str]) -> str:
    reps = setup["reps"]
    cov = results[0]["rows"][0]["native"]["coverage"] if results and results[0]["rows"] else 0
    md = ["# bpf_vegas against the kernel's tcp_vegas", "",
          f"Produced by `{command}`; do not edit by hand. Raw runs (per-ACK tcp_probe records,",
          "the runner's files) stay in build/vm/<kernel>/out/ab/; `python -m "
          "vegaskit.cli.native_ab --analyse build/vm/<kernel>/out/ab` re-renders this report "
          "from them.", "",
          f"Kernel: {setup['kernel']}, booted under qemu (TCG, 2 vCPUs) by virtme-ng. "
          f"tcp_vegas's module parameters: "
          + ", ".join(f"{k} = {v}" for k, v in setup["tcp_vegas"].items())
          + "; bpf_vegas loaded with the same values (`vegasctl show`: "
          + ", ".join(f"{k} = {setup['bpf_vegas']['params'].get(k)}" for k in setup["tcp_vegas"])
          + ").", "",
          f"{reps} runs per arm and scenario, interleaved (native first in even repetitions, "
          "bpf first in odd ones). Nothing but tcp:tcp_probe watches the flows.", "",
          "How to read it: each cell is the median over runs and, in brackets, the "
          f"order-statistic interval of the median (coverage {cov * 100:.1f}% with "
          f"{reps} runs). Each metric is one number per run; the test is the exact two-sided "
          "permutation test of the difference of means between the arms, Holm-adjusted "
          f"across the metrics of a scenario; \"differs\" means adjusted p < {ALPHA}. Steady "
          "state is the second half of each flow. KS D is the largest distance between the "
          "two arms' pooled per-ACK CDFs: a description, not a test (per-ACK samples are "
          "not independent).", ""]
    for r in results:
        md += [f"## {r['scenario']}", "",
               f"Smallest p the test can give with these runs: {r['min_p']:.2g}. Per-ACK "
               f"records in steady state: tcp_vegas {r['pooled_sizes']['native']}, bpf_vegas "
               f"{r['pooled_sizes']['bpf']}. KS D: cwnd {r['ks']['cwnd']:.3f}, srtt "
               f"{r['ks']['srtt']:.3f}.", "",
               f"![CDFs]({r['scenario']}.png)", "",
               f"| metric | {LABEL['native']} | {LABEL['bpf']} | bpf − native | p | p (Holm) | |",
               "|---|---|---|---|---|---|---|"]
        for row in r["rows"]:
            md.append(f"| {row['title']} | {_cell(row, 'native')} | {_cell(row, 'bpf')} | "
                      f"{_delta(row)} | {row['p']:.3g} | {row['p_holm']:.3g} | "
                      f"{'**differs**' if row['differs'] else 'same'} |")
        md += ["", "Per run (repetition r ran both arms back to back):", "",
               "| arm | r | " + " | ".join(row["title"] for row in r["rows"]) + " |",
               "|---|---|" + "---|" * len(r["rows"])]
        for arm in ARMS:
            for m in r["runs"][arm]:
                md.append(f"| {arm} | {m['rep']} | " + " | ".join(
                    row["fmt"].format(m[row["key"]]) for row in r["rows"]) + " |")
        if notes.get(r["scenario"]):
            md += ["", "### What the difference is, and why", "", notes[r["scenario"]].strip()]
        md.append("")
    return "\n".join(md).rstrip() + "\n"


def write(raw: Path, outdir: Path, scenarios: list, command: str) -> Path:
    """results/native-ab/: report.md, ab.json (every per-run metric and test) and a CDF
    figure per scenario. `scenarios` are Scenario objects (their [report] notes)."""
    setup = json.loads((raw / "setup.json").read_text())
    results = [compare(raw, s.name) for s in scenarios]
    outdir.mkdir(parents=True, exist_ok=True)
    for r in results:
        plot_cdfs(r, outdir / f"{r['scenario']}.png")
    notes = {s.name: s.doc.get("report", {}).get("notes", "") for s in scenarios}
    (outdir / "report.md").write_text(render(results, setup, command, notes))
    public = [{k: v for k, v in r.items() if not k.startswith("_")} for r in results]
    (outdir / "ab.json").write_text(json.dumps({"setup": setup, "scenarios": public}, indent=1)
                                    + "\n")
    return outdir / "report.md"
