"""Run one script in ns-2 and read its RESULT line into a summary.

The summary has the keys analysis/figures.py reads from the testbed's
summary.json (flows with avg_bps and completion_s, queue_mean_pkts, links,
deepest_queue_link, retransmits, utilisation), so the papers' figures are
computed from ns-2 exactly as from Linux.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from vegaskit import paths
from vegaskit.analysis import metrics
from vegaskit.testbed.scenario import Run

from . import script

NS = "ns"
# ns-2.35 rebuilt from Debian's source with our agents (tools/ns2agent/build.sh)
BUILT = paths.BUILD / "ns2" / "ns"


def available() -> str | None:
    """Debian's ns binary, or None (make deps installs Debian's ns2)."""
    return shutil.which(NS)


def binary(ours: bool) -> str:
    """The ns a run needs: ours when it has one of our agents or its variant needs
    our knobs (Variant.needs_our_ns), else Debian's."""
    if ours:
        if not BUILT.exists():
            raise RuntimeError(f"{BUILT} is not built: make ns2 builds it")
        return str(BUILT)
    ns = available()
    if ns is None:
        raise RuntimeError("ns-2 is not installed: run make deps")
    return ns


def simulate(run: Run, variant: script.Variant, timeout: float = 600,
             ns: str | None = None) -> dict:
    """One run in ns-2 (in `ns` if given, else the one its agents need): its summary.
    RuntimeError if ns fails or prints no result."""
    text = script.build(run, variant)
    ns = ns or binary(any(ag.ours for ag in script.agents(run)) or variant.needs_our_ns)
    with tempfile.TemporaryDirectory(prefix="vegaskit-ns2-") as d:
        path = Path(d) / f"{run.name}.tcl"
        path.write_text(text)
        # ns writes nothing else; its cwd is the temporary directory. setpriv's
        # pdeathsig: if the worker dies (Ctrl-C, SIGKILL of the command), ns goes with it.
        p = subprocess.run(["setpriv", "--pdeathsig", "KILL", "--", ns, str(path)],
                           capture_output=True, text=True, cwd=d, timeout=timeout)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode != 0 or not lines:
        err = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0]
        raise RuntimeError(f"ns-2 {run.scenario.name}/{run.name}: {err}")
    return summarise(run, variant, json.loads(lines[-1][len("RESULT "):]))


def summarise(run: Run, variant: script.Variant, res: dict) -> dict:
    t_end = float(res["t_end"])
    flows = []
    for f, m, got in zip(run.flows, res["meta"]["flows"], res["flows"]):
        done = float(got["done"]) if got["done"] >= 0 else None
        acked = int(got["ack"]) + 1                 # ack_ names the last packet, from 0
        nbytes = min(acked * m["size"], f.bytes) if f.bytes else acked * m["size"]
        end = done if done is not None else (m["stop"] if m["stop"] else t_end)
        end = min(end, t_end)
        # the window over the second half of the flow's life, as the testbed's cwnd_median_kb
        half = f.start + (end - f.start) / 2
        samples = [(c, d, o) for t, c, d, o in got["cwnd"] if half <= t <= end]
        cw = [c for c, _, _ in samples]
        # outside fast recovery: no duplicate ACK outstanding, so no inflation in cwnd_
        cw_open = [c for c, d, _ in samples if d == 0]
        outstanding = [o for _, _, o in samples]
        flows.append({"flow": f.index, "label": f.label, "cc": f.cc, "start_s": f.start,
                      "cwnd_median_kb": round(metrics.percentile(cw, 50) * m["size"] / 1000, 1)
                      if cw else None,
                      "cwnd_open_median_kb": round(metrics.percentile(cw_open, 50) * m["size"]
                                                   / 1000, 1) if cw_open else None,
                      "outstanding_median_pkts": metrics.percentile(outstanding, 50)
                      if outstanding else None,
                      "end_s": round(end, 3), "bytes": nbytes,
                      "avg_bps": round(nbytes * 8 / max(end - f.start, 1e-9)),
                      "retransmits": int(got["retx"]), "data_packets": int(got["data"]),
                      **({"decisions": got["decisions"]} if "decisions" in got else {}),
                      "completion_s": round(done - f.start, 3) if done is not None else None})
    links = {}
    for name, q in res["links"].items():
        samples = q["samples"] or [0]
        links[name] = {"queue_mean_pkts": round(q["sum"] / t_end, 2) if t_end > 0 else 0.0,
                       "queue_p95_pkts": metrics.percentile(samples, 95),
                       "drops": int(q["drops"]), "departed_bytes": int(q["dep_bytes"])}
        if "arrivals" in q:     # packets that reached the queue, the dropped ones included
            links[name]["arrivals"] = int(q["arrivals"])
    deepest = max(links, key=lambda n: (links[n]["queue_mean_pkts"], n == "bottleneck"))
    first = min(f.start for f in run.flows)
    span = t_end - first
    util = links["bottleneck"]["departed_bytes"] * 8 / span / run.bottleneck.rate_bps \
        if span > 0 and run.bottleneck.rate_bps else None
    return {"scenario": run.scenario.name, "run": run.name, "profile": run.profile,
            "rep": run.rep, "seed": run.seed, "variant": variant.name,
            "duration_s": round(t_end, 3), "flows": flows,
            "queue_mean_pkts": links["bottleneck"]["queue_mean_pkts"],
            "queue_p95_pkts": links["bottleneck"]["queue_p95_pkts"],
            "links": links, "deepest_queue_link": deepest,
            "bottleneck_drops": links["bottleneck"]["drops"],
            # as the testbed's: the share of the packets reaching the bottleneck it dropped
            "bottleneck_loss_rate": round(links["bottleneck"]["drops"]
                                          / links["bottleneck"]["arrivals"], 6)
            if links["bottleneck"].get("arrivals") else None,
            "retransmits": sum(fl["retransmits"] for fl in flows),
            "utilisation": round(util, 4) if util is not None else None}
