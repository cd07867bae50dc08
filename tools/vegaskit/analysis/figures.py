"""The papers' figures against ours: metrics of a run, repeated, and a verdict.

A scenario's [paper] lists what its paper reports (docs/DESIGN.md §7.1):

    [[paper.figures]]                  # a number the paper printed
    id = "Table 3: Vegas / NewReno"    # where, in the paper's words
    run = "vegas"                      # our run that stands for it
    metric = "ratio:{cc}/reno"         # what we measure (below)
    value = 0.497                      # the paper's figure

    [[paper.claims]]                   # an ordering or direction the paper states
    id = "Table 3: Vegas-A gets more than Vegas"
    left = { run = "vegas_a", metric = "ratio:{cc}/reno" }
    op = ">"                           # > or <
    right = { run = "vegas", metric = "ratio:{cc}/reno" }  # or: right = 1.0

Metrics, from one run's summary.json; throughputs are each flow's average
over its lifetime, the statistic of the papers' tables:

    throughput:S1        flow S1's lifetime average, bit/s
    ratio:A/B            mean lifetime share of cc A over that of cc B
    jain                 Jain's index of the lifetime averages
    std                  sample standard deviation of the lifetime averages
    queue_mean, queue_p95, delay_p95_ms   on the link where the queue is deepest
    egress_queue         the flows' own egress links (R2-Di): their mean queues, averaged
                         over the flows, packets (a flow held up by its egress link
                         queues there, not at the bottleneck)
    retransmits          all flows
    completion:S1        a file transfer's completion time, s
    cwnd:S1              the sender's window, median over the flow's second half, kB
    utilisation          of the bottleneck

A figure is *reproduced* when the paper's value lies inside the 95% interval
of our median over the repetitions; a claim when it holds in every
repetition (pairing the runs' repetitions by number). Otherwise *differs*,
or *too few runs* while fewer than MIN_RUNS repetitions exist.

A repetition in which a flow's window rose above any its path lets a
controller grow (runner.impossible_windows: the kernel defect of
docs/DESIGN.md §10.2) is set aside: its figures are not the controller's.
Each row says how many were; they count towards no interval.
"""
from __future__ import annotations

import statistics
from typing import Sequence

from . import metrics, stats

LEVEL = 0.95
MIN_RUNS = 5    # [min, max] of 5 covers the median at 93.75%; 6 reach 96.9%


class FigureError(ValueError):
    pass


def _flow(summary: dict, label: str) -> dict:
    for fl in summary["flows"]:
        if fl["label"] == label or fl["label"].split(" ")[0] == label:
            return fl
    raise FigureError(f"{summary['run']}: no flow {label!r}")


def metric(summary: dict, name: str, subst: dict | None = None) -> float | None:
    """One number of one run (see the module's list); None when it has none."""
    name = name.format(**(subst or {}))
    kind, _, arg = name.partition(":")
    flows = summary["flows"]
    lifetime = [fl["avg_bps"] for fl in flows]
    deep = summary.get("links", {}).get(summary.get("deepest_queue_link", "bottleneck"), {})
    if kind == "throughput":
        return float(_flow(summary, arg)["avg_bps"])
    if kind == "completion":
        return _flow(summary, arg)["completion_s"]
    if kind == "cwnd":
        return _flow(summary, arg)["cwnd_median_kb"]
    if kind == "ratio":
        a, _, b = arg.partition("/")
        by_cc: dict[str, list[float]] = {}
        for fl in flows:
            by_cc.setdefault(fl["cc"], []).append(fl["avg_bps"])
        if a not in by_cc or b not in by_cc:
            raise FigureError(f"{summary['run']}: ratio {arg}: no flows of {a if a not in by_cc else b}")
        return metrics.inter_protocol_ratio(by_cc, a, b)
    if kind == "jain":
        return metrics.jain_index(lifetime) if any(lifetime) else None
    if kind == "std":
        return statistics.stdev(lifetime) if len(lifetime) > 1 else None
    if kind == "queue_mean":
        return deep.get("queue_mean_pkts", summary["queue_mean_pkts"])
    if kind == "queue_p95":
        return deep.get("queue_p95_pkts", summary["queue_p95_pkts"])
    if kind == "delay_p95_ms":
        return deep.get("queue_delay_p95_ms", summary.get("queue_delay_p95_ms"))
    if kind == "egress_queue":
        links = summary.get("links", {})
        qs = [links.get(f"d{fl.get('flow')}", {}).get("queue_mean_pkts") for fl in flows]
        return statistics.fmean(qs) if None not in qs else None   # direct edges: none
    if kind == "retransmits":
        return float(summary["retransmits"])
    if kind == "utilisation":
        return summary["utilisation"]
    raise FigureError(f"unknown metric {name!r}")


def summarise(values: Sequence[float]) -> dict:
    """Median and its distribution-free interval (analysis/stats.py)."""
    vals = [v for v in values if v is not None]
    if not vals:
        return {"n": 0, "median": None, "low": None, "high": None, "coverage": None}
    low, high, cov = stats.median_interval(vals, LEVEL)
    return {"n": len(vals), "median": statistics.median(vals), "low": low, "high": high,
            "coverage": cov, "values": vals}


def set_aside(summaries: list[dict]) -> tuple[list[dict], list[dict]]:
    """(kept, set aside): set aside are the repetitions with a flow whose window rose
    above its path's ceiling (runner.impossible_windows)."""
    aside = [sm for sm in summaries if sm.get("impossible_windows")]
    return [sm for sm in summaries if not sm.get("impossible_windows")], aside


def _by_run(summaries: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for sm in sorted(summaries, key=lambda s: s.get("rep", 0)):
        out.setdefault(sm["run"], []).append(sm)
    return out


def _values(by_run: dict, spec: dict, runs_doc: dict, aside: dict) -> dict[int, float | None]:
    """The metric of each kept repetition of the spec's run, by repetition number."""
    run = spec["run"]
    if run not in by_run and run not in aside:
        raise FigureError(f"no measured run {run!r}")
    subst = {k: str(v) for k, v in runs_doc.get(run, {}).items()}
    return {sm.get("rep", 0): metric(sm, spec["metric"], subst) for sm in by_run.get(run, [])}


def evaluate(paper: dict, summaries: list[dict], runs_doc: dict) -> list[dict]:
    """One row per figure and claim: ours, the paper's, the verdict, and how many of
    its runs' repetitions were set aside."""
    kept, aside_sms = set_aside(summaries)
    by_run, aside = _by_run(kept), _by_run(aside_sms)
    rows = []
    for f in paper.get("figures", []):
        try:
            s = summarise(list(_values(by_run, f, runs_doc, aside).values()))
        except FigureError as e:
            rows.append({"id": f["id"], "kind": "figure", "paper": f["value"], "verdict": "not run",
                         "why": str(e)})
            continue
        inside = s["n"] > 0 and s["low"] <= f["value"] <= s["high"]
        rows.append({"id": f["id"], "kind": "figure", "run": f["run"], "metric": f["metric"],
                     "paper": f["value"], "ours": s, "set_aside": len(aside.get(f["run"], [])),
                     "verdict": "too few runs" if s["n"] < MIN_RUNS else
                     "reproduced" if inside else "differs"})
    for c in paper.get("claims", []):
        try:
            left = _values(by_run, c["left"], runs_doc, aside)
            right = (_values(by_run, c["right"], runs_doc, aside) if isinstance(c["right"], dict)
                     else dict.fromkeys(left, float(c["right"])))
        except FigureError as e:
            rows.append({"id": c["id"], "kind": "claim", "verdict": "not run", "why": str(e)})
            continue
        pairs = [(left[k], right[k]) for k in sorted(left.keys() & right.keys())
                 if left[k] is not None and right[k] is not None]
        holds = [a > b if c["op"] == ">" else a < b for a, b in pairs]
        runs = {side["run"] for side in (c["left"], c["right"]) if isinstance(side, dict)}
        rows.append({"id": c["id"], "kind": "claim", "op": c["op"],
                     "left": summarise(list(left.values())),
                     "right": summarise(list(right.values())), "holds": sum(holds),
                     "of": len(pairs), "set_aside": sum(len(aside.get(r, [])) for r in runs),
                     "verdict": "too few runs" if len(pairs) < MIN_RUNS else
                     "reproduced" if all(holds) else "differs"})
    return rows


def validate(paper: dict) -> None:
    """Refuse a malformed [paper] before anything runs (scenario.validate calls it)."""
    for k in ("figures", "claims"):
        if not isinstance(paper.get(k, []), list):
            raise FigureError(f"paper.{k} must be a list of tables ([[paper.{k}]])")
    for i, f in enumerate(paper.get("figures", []), 1):
        what = f"paper.figures {i}"
        if not isinstance(f, dict) or set(f) - {"id", "run", "metric", "value", "note"} \
                or not {"id", "run", "metric", "value"} <= set(f):
            raise FigureError(f"{what} needs id, run, metric and value (and may have a note)")
        if isinstance(f["value"], bool) or not isinstance(f["value"], (int, float)):
            raise FigureError(f"{what}.value must be a number")
        if not isinstance(f["id"], str) or not isinstance(f["run"], str):
            raise FigureError(f"{what}: id and run must be strings")
        _check_metric(f["metric"], what)
    for i, c in enumerate(paper.get("claims", []), 1):
        what = f"paper.claims {i}"
        if not isinstance(c, dict) or set(c) - {"id", "left", "op", "right", "note"} \
                or not {"id", "left", "op", "right"} <= set(c):
            raise FigureError(f"{what} needs id, left, op and right (and may have a note)")
        if not isinstance(c["id"], str):
            raise FigureError(f"{what}.id must be a string")
        if c["op"] not in (">", "<"):
            raise FigureError(f"{what}.op must be > or <")
        for side in ("left", "right"):
            v = c[side]
            if isinstance(v, dict):
                if set(v) != {"run", "metric"} or not isinstance(v["run"], str):
                    raise FigureError(f"{what}.{side} must be {{ run = ..., metric = ... }}")
                _check_metric(v["metric"], f"{what}.{side}")
            elif side == "left" or isinstance(v, bool) or not isinstance(v, (int, float)):
                raise FigureError(f"{what}.{side} must be {{ run, metric }}"
                                  + (" or a number" if side == "right" else ""))


KINDS = {"throughput", "completion", "cwnd", "ratio", "jain", "std", "queue_mean", "queue_p95",
         "delay_p95_ms", "egress_queue", "retransmits", "utilisation"}


def _check_metric(name, what: str) -> None:
    if not isinstance(name, str) or name.partition(":")[0] not in KINDS:
        raise FigureError(f"{what}.metric {name!r} is not one of {', '.join(sorted(KINDS))}")


def table_verdict(rows: list[dict]) -> str:
    """reproduced (every row), partly, differs (no row), or not run."""
    done = [r for r in rows if r["verdict"] not in ("not run", "too few runs")]
    if not done:
        return "not run"
    good = sum(r["verdict"] == "reproduced" for r in done)
    return "reproduced" if good == len(done) else "differs" if good == 0 else "partly"
