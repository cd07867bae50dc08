"""Plots of a testbed run and of a controller trace (matplotlib, Agg backend).

    python -m vegaskit.analysis.plots trace TRACE.csv [--flow SPORT] -o OUT.png
        cwnd, RTT, diff and alpha/beta of one flow against time, from
        `vegasctl trace --decisions` output (like seed 000, Fig. 5)
    python -m vegaskit.analysis.plots run RESULT_DIR
        throughput.png, queue.png and trace.png of one run directory
"""
from __future__ import annotations

import contextlib
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..cliargs import OneLineParser  # noqa: E402
from .records import read_csv  # noqa: E402


def save(fig, out: Path, rect: tuple | None = None) -> None:
    """Every figure of the project is written the same way, then freed. rect
    keeps part of the figure out of the layout (a legend of the figure's own)."""
    fig.tight_layout(rect=rect)
    fig.savefig(out, dpi=90)
    plt.close(fig)


@contextlib.contextmanager
def made_aside(out: Path):
    """A folder beside `out` to draw figures in; the PNGs move into `out` only when the
    block ends without an error, so a rerender that fails part way changes nothing."""
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        yield Path(tmp)
        for png in Path(tmp).glob("*.png"):
            png.replace(out / png.name)


def decisions_by_flow(rows: list[dict]) -> dict[tuple, list[dict]]:
    """Decision records grouped by (netns, sport, dport)."""
    flows = defaultdict(list)
    for r in rows:
        if r["type"] == "decision":
            flows[(r["netns"], r["sport"], r["dport"])].append(r)
    return flows


def plot_trace(trace_csv: Path, out: Path, sport: int | None = None, title: str = "") -> bool:
    """One flow's cwnd, RTT, diff and alpha/beta. Picks the flow with most decisions
    (or the one with local port `sport`). False if the trace has no decision."""
    flows = decisions_by_flow(read_csv(trace_csv))
    if sport is not None:
        flows = {k: v for k, v in flows.items() if int(k[1]) == sport}
    if not flows:
        return False
    key, recs = max(flows.items(), key=lambda kv: len(kv[1]))
    t0 = float(recs[0]["time_s"])
    t = [float(r["time_s"]) - t0 for r in recs]
    fig, ax = plt.subplots(4, 1, sharex=True, figsize=(8, 8))
    ax[0].step(t, [int(r["cwnd_after"]) for r in recs], where="post")
    ax[0].set_ylabel("cwnd (pkts)")
    ax[1].plot(t, [int(r["rtt_us"]) / 1000 for r in recs], label="RTT (min over the RTT)")
    ax[1].plot(t, [int(r["base_rtt_us"]) / 1000 for r in recs], label="baseRTT")
    ax[1].set_ylabel("ms")
    ax[1].legend(loc="upper left", fontsize=8)
    ax[2].plot(t, [int(r["diff"]) for r in recs])
    ax[2].set_ylabel("diff")
    ax[3].step(t, [int(r["alpha"]) for r in recs], where="post", label="alpha")
    ax[3].step(t, [int(r["beta"]) for r in recs], where="post", label="beta")
    ax[3].set_ylabel("pkts")
    ax[3].legend(loc="upper left", fontsize=8)
    ax[3].set_xlabel("time since the flow's first decision (s)")
    fig.suptitle(title or f"{recs[0]['ca']} {recs[0]['saddr']}:{key[1]} -> :{key[2]}")
    save(fig, out)
    return True


def plot_throughput(flows_csv: Path, out: Path, summary: dict) -> None:
    series = defaultdict(list)
    for r in read_csv(flows_csv):
        series[int(r["flow"])].append(((float(r["t0_s"]) + float(r["t1_s"])) / 2, int(r["bps"])))
    labels = {fl["flow"]: fl["label"] for fl in summary["flows"]}
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, pts in sorted(series.items()):
        ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], label=labels.get(i, str(i)))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title(f"{summary['scenario']} / {summary['run']} ({summary['profile']})")
    ax.legend(fontsize=8)
    save(fig, out)


def plot_queue(queue_csv: Path, out: Path, summary: dict) -> None:
    rows = read_csv(queue_csv)
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.step([float(r["t_s"]) for r in rows], [int(r["qlen_pkts"]) for r in rows], where="post",
            linewidth=0.6)
    ax.axhline(summary["bottleneck"]["buffer_pkts"], color="grey", linestyle=":", label="buffer")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("bottleneck queue (pkts)")
    ax.legend(fontsize=8)
    save(fig, out)


def run_plots(outdir: Path, summary: dict) -> None:
    plot_throughput(outdir / "flows.csv", outdir / "throughput.png", summary)
    plot_queue(outdir / "queue.csv", outdir / "queue.png", summary)
    if (outdir / "trace.csv").exists():
        plot_trace(outdir / "trace.csv", outdir / "trace.png")


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.plots")
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace", help="cwnd/RTT/diff/alpha-beta of one flow from a trace CSV")
    t.add_argument("trace_csv", type=Path)
    t.add_argument("-o", "--out", type=Path, required=True)
    t.add_argument("--flow", type=int, help="local port of the flow (default: the longest)")
    r = sub.add_parser("run", help="re-draw the plots of a run directory")
    r.add_argument("dir", type=Path)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "trace":
            if not plot_trace(a.trace_csv, a.out, a.flow):
                print("plots: no decision records for that flow", file=sys.stderr)
                return 1
        else:
            import json
            run_plots(a.dir, json.loads((a.dir / "summary.json").read_text()))
    except (OSError, KeyError, ValueError) as e:
        print(f"plots: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
