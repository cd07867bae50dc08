"""The markdown report of a scenario: our runs' figures beside the paper's table."""
from __future__ import annotations

from pathlib import Path


def _mbps(bps) -> str:
    return "-" if bps is None else f"{bps / 1e6:.3f}"


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k} {x:.3g}" for k, x in v.items()) or "-"
    return str(v)


def render(scenario, profile: str, summaries: list[dict], command: str) -> str:
    s = scenario
    out = [f"# {s.title}", "",
           f"Source: {s.source}. Profile `{profile}`. Produced by `{command}`; "
           f"do not edit by hand.", ""]
    scale = s.doc["profiles"].get(profile, {}).get("time_scale", 1.0)
    if scale != 1.0:
        out += [f"Times (starts, durations, scheduled changes, file sizes) are the scenario's "
                f"times {scale:g} in this profile.", ""]
    if summaries:
        b = summaries[0]["bottleneck"]
        out += [f"Bottleneck R1-R2: {b['rate_bps'] / 1e6:g} Mbit/s, RTT {b['rtt_ms']:g} ms, "
                f"drop-tail {b['buffer_pkts']} packets. Each run lasted about "
                f"{summaries[0]['duration_s']:.0f} s.", ""]
    out += ["## Our measurements (Linux, namespaces, this machine)", "",
            "| run | flow | cc | start (s) | throughput, 2nd half (Mbit/s) | mean (Mbit/s) | "
            "retx | completion (s) | RTT p95 (ms) | cwnd, 2nd half median (kB) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for sm in summaries:
        for fl in sm["flows"]:
            out.append(f"| {sm['run']} | {fl['label']} | {fl['cc']} | {fl['start_s']:.1f} | "
                       f"{_mbps(fl['second_half_bps'])} | {_mbps(fl['avg_bps'])} | "
                       f"{fl['retransmits']} | {_fmt(fl['completion_s'])} | {_fmt(fl['rtt_p95_ms'])} | "
                       f"{_fmt(fl.get('cwnd_median_kb'))} |")
    out += ["", "| run | Jain | inter-protocol ratio | utilisation | queue mean (pkts) | "
            "queue p95 (pkts) | loss at bottleneck | convergence (s) |",
            "|---|---|---|---|---|---|---|---|"]
    for sm in summaries:
        out.append(f"| {sm['run']} | {_fmt(sm['jain'])} | {_fmt(sm['inter_protocol_ratio'])} | "
                   f"{_fmt(sm['utilisation'])} | {sm['queue_mean_pkts']} | {sm['queue_p95_pkts']} | "
                   f"{sm['bottleneck_loss_rate']} | {_fmt(sm['convergence_s'])} |")
    p = s.paper
    if p:
        out += ["", f"## The paper ({p.get('table', 'its table')}, ns-2)", ""]
        cols = p.get("columns", [])
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(str(x) for x in row) + " |" for row in p.get("rows", [])]
        if p.get("note"):
            out += ["", p["note"]]
    notes = s.doc.get("report", {}).get("notes")
    if notes:
        out += ["", "## Reading the difference", "", notes.strip()]
    out += ["", "cwnd is the sender's tcp_info snd_cwnd in bytes (kB = 1000 bytes), the median of "
            "its samples over the second half of the flow (\"-\": no samples).",
            "", "Per run: `flows.csv`, `summary.json`, `throughput.png`, `queue.png`, and for "
            "our controllers `trace.csv` and `trace.png`, in the run's directory beside this "
            "file; the per-packet `queue.csv` is written too but not kept in git (its size).", ""]
    return "\n".join(out)


def write(scenario, profile: str, summaries: list[dict], outdir: Path, command: str) -> Path:
    path = outdir / "report.md"
    path.write_text(render(scenario, profile, summaries, command))
    return path
