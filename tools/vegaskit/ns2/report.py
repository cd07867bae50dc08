"""results/ns2/report.md: each paper figure in the paper, in ns-2 (per variant) and on Linux.

A cell is the median over the repetitions with its 95% interval, computed by
analysis/figures.py from ns-2's summaries exactly as from the testbed's; a
check mark says the paper's figure lies inside it. A claim's cell is how many
repetitions it holds in.
"""
from __future__ import annotations

import json
from pathlib import Path

from vegaskit.analysis import figures, metrics
from vegaskit.testbed.report import interval, num, ratio_cell

from .script import VARIANTS


def _cell(row: dict) -> str:
    if row["verdict"] == "not run":
        return "-"
    mark = " ✓" if row["verdict"] == "reproduced" else ""
    if row["kind"] == "figure":
        return interval(row["ours"]) + mark
    return f"{row['holds']}/{row['of']}{mark}"


def _linux_rows(scenario, linux_dir: Path) -> dict[str, dict]:
    path = linux_dir / "summaries.json"
    if not path.exists():
        return {}
    rows = figures.evaluate(scenario.paper, json.loads(path.read_text()), scenario.doc["runs"])
    return {r["id"]: r for r in rows}


def _replayed_ids(scenario, runs: set[str]) -> list[str]:
    """The figures and claims whose every run was replayed."""
    paper = scenario.paper
    ids = [f["id"] for f in paper.get("figures", []) if f["run"] in runs]
    for c in paper.get("claims", []):
        sides = [c["left"]] + ([c["right"]] if isinstance(c["right"], dict) else [])
        if all(s["run"] in runs for s in sides):
            ids.append(c["id"])
    return ids


def section(scenario, summaries: list[dict], unmapped: dict[str, str], linux_dir: Path,
            variants: list[str], pending: list[str] = (), rerun: str = "") -> list[str]:
    runs = {sm["run"] for sm in summaries}
    all_variants = variants
    # a diagnostic variant replays only the runs it changes: no paper figure rests on it
    variants = [v for v in variants if not VARIANTS[v].diagnostic]
    by_variant = {v: {r["id"]: r for r in figures.evaluate(
        scenario.paper, [sm for sm in summaries if sm["variant"] == v], scenario.doc["runs"])}
        for v in variants}
    linux = _linux_rows(scenario, linux_dir)
    src = f"Source: {scenario.source}. " if scenario.source else ""
    linux_link = f"../{linux_dir.parent.name}/{linux_dir.name}/report.md"
    out = [f"## {scenario.name}: {scenario.title}", "",
           f"{src}Linux: [results/{scenario.name}/{linux_dir.name}]({linux_link}).", ""]
    ids = _replayed_ids(scenario, runs)
    if ids:
        out += ["| figure or claim | paper | " + " | ".join(f"ns-2 {v}" for v in variants)
                + " | Linux |",
                "|---|---|" + "---|" * len(variants) + "---|"]
        for i in ids:
            first = by_variant[variants[0]][i]
            paper = num(first["paper"]) if first["kind"] == "figure" else "(claim)"
            cells = [_cell(by_variant[v][i]) for v in variants]
            out.append(f"| {i} | {paper} | " + " | ".join(cells)
                       + f" | {_cell(linux[i]) if i in linux else '-'} |")
        out.append("")
    else:
        out += ["No figure of the paper rests only on runs ns-2 can replay.", ""]
    out += ["| run | variant | queue mean (pkts) | bottleneck drops | loss at bottleneck | "
            "retransmitted | utilisation | completion (s) | inter-protocol ratio, lifetime |",
            "|---|---|---|---|---|---|---|---|---|"]
    for run in sorted(runs):
        for v in all_variants:
            sms = [sm for sm in summaries if sm["run"] == run and sm["variant"] == v]
            if not sms:         # a diagnostic variant replays only the runs it changes
                continue
            comp = [fl["completion_s"] for sm in sms for fl in sm["flows"][:1]]
            out.append(
                f"| {run} | {v} | {interval(figures.summarise([sm['queue_mean_pkts'] for sm in sms]))} | "
                f"{interval(figures.summarise([sm['bottleneck_drops'] for sm in sms]))} | "
                f"{_loss(sms)} | "
                f"{interval(figures.summarise([sm['retransmits'] for sm in sms]))} | "
                f"{interval(figures.summarise([sm['utilisation'] for sm in sms]))} | "
                f"{interval(figures.summarise(comp)) if any(c is not None for c in comp) else '-'} | "
                f"{ratio_cell([metrics.inter_protocol_ratios(sm['flows'], 'avg_bps', None) for sm in sms])} |")
    out.append("")
    out += _windows(summaries, all_variants)
    out += _decisions(summaries, all_variants)
    out += _per_rep(summaries, all_variants, scenario.doc.get("report", {}).get("per_rep", []))
    if pending:
        out += [f"**Not replayed yet**, though their agents exist: {', '.join(f'`{r}`' for r in pending)}"
                f" (`{rerun}` replays them); the figures above leave them out.", ""]
    if unmapped:
        out += ["Not replayed (no ns-2 agent):", ""]
        out += [f"- `{r}`: {why}" for r, why in sorted(unmapped.items())]
        out.append("")
    return out


def _loss(sms: list[dict]) -> str:
    """The bottleneck's loss rate (drops over arrivals), median over the repetitions;
    '-' for summaries from before arrivals were counted (2026-12-07)."""
    rates = [sm.get("bottleneck_loss_rate") for sm in sms]
    return "-" if None in rates else num(figures.summarise(rates)["median"])


def _windows(summaries: list[dict], variants: list[str]) -> list[str]:
    """The first flow's window three ways (sim.summarise, docs/DESIGN.md §7.2), where the
    summaries carry them: over every sample, outside fast recovery, and what it had
    outstanding; its median over the repetitions, with intervals."""
    rows = []
    for run in sorted({sm["run"] for sm in summaries}):
        for v in variants:
            sms = [sm for sm in summaries if sm["run"] == run and sm["variant"] == v
                   and sm["flows"][0].get("outstanding_median_pkts") is not None]
            if not sms:
                continue
            cells = [interval(figures.summarise([sm["flows"][0][k] for sm in sms]))
                     for k in ("cwnd_median_kb", "cwnd_open_median_kb", "outstanding_median_pkts")]
            egress = [figures.metric(sm, "egress_queue") for sm in sms]
            cells.append("-" if None in egress else interval(figures.summarise(egress)))
            rows.append(f"| {run} | {v} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    return ["The first flow's window over the second half of its life (medians over the "
            "repetitions, with intervals): cwnd_ over every sample, over the samples with no "
            "duplicate ACK outstanding (outside fast recovery, where the agents inflate it), "
            "and what it had outstanding (maxseq_ less ack_); beside them, the flows' egress "
            "links' mean queues, averaged over the flows (a flow held up by its own egress "
            "link keeps its packets there, not at the bottleneck; Linux's report has the same "
            "column):", "",
            "| run | variant | window (kB) | outside fast recovery (kB) | outstanding (pkts) | "
            "flows' egress queues, mean (pkts) |",
            "|---|---|---|---|---|---|", *rows, ""]


def _decisions(summaries: list[dict], variants: list[str]) -> list[str]:
    """Our agents' decisions (tools/ns2agent): per run and variant, each rule's count a
    flow and alpha's time-weighted mean, medians over the flows of every repetition."""
    rows = []
    for run in sorted({sm["run"] for sm in summaries}):
        for v in variants:
            ds = [fl["decisions"] for sm in summaries if sm["run"] == run and sm["variant"] == v
                  for fl in sm["flows"] if "decisions" in fl]
            if not ds:
                continue
            cells = [interval(figures.summarise([d[k] for d in ds]))
                     for k in ("hold", "inc", "inc_adapt", "dec_adapt", "alpha_mean")]
            rows.append(f"| {run} | {v} | {len(ds)} | " + " | ".join(cells)
                        + f" | {max(d['alpha_peak'] for d in ds)} |")
    if not rows:
        return []
    return ["Our Vegas-A and PIPE agents' decisions in congestion avoidance, a flow's count "
            "of each rule and alpha's time-weighted mean (medians over every flow of every "
            "repetition, with intervals), and the largest alpha any flow reached:", "",
            "| run | variant | flows | hold | inc | inc_adapt | dec_adapt | alpha mean | "
            "alpha peak |", "|---|---|---|---|---|---|---|---|---|", *rows, ""]


def _per_rep(summaries: list[dict], variants: list[str], runs: list[str]) -> list[str]:
    """Repetition by repetition, for the runs the scenario lists ([report] per_rep, as
    Linux's report does): each flow's lifetime mean and, for our agents, alpha's
    time-weighted mean, where the repetitions of a run split."""
    rows = []
    for run in runs:
        for v in variants:
            for sm in sorted((sm for sm in summaries if sm["run"] == run and sm["variant"] == v),
                             key=lambda x: x["rep"]):
                fls = sm["flows"]
                alpha = "; ".join(f"{fl['label'].split(' ')[0]} {num(fl['decisions']['alpha_mean'])}"
                                  for fl in fls if "decisions" in fl) or "-"
                rows.append(f"| {run} | {v} | {sm['rep']} | "
                            + "; ".join(f"{fl['label'].split(' ')[0]} {num(fl['avg_bps'])}"
                                        for fl in fls) + f" | {alpha} |")
    if not rows:
        return []
    return ["<details><summary>Repetition by repetition: " + ", ".join(
            r for r in runs if any(sm["run"] == r for sm in summaries))
            + "</summary>", "",
            "Each flow's lifetime mean, and for our agents alpha's time-weighted mean, in each "
            "repetition of the runs the scenario lists repetition by repetition:", "",
            "| run | variant | rep | lifetime mean (bit/s) | alpha's mean |",
            "|---|---|---|---|---|", *rows, "", "</details>", ""]


def render(sections: list[list[str]], variants: list[str], command: str) -> str:
    out = ["# The papers' experiments in ns-2, beside Linux", "",
           f"Produced by `{command}`; do not edit by hand.", "",
           "Seeds 000 and 002 ran their experiments in ns-2 with its stock NewReno and Vegas "
           "agents and their own modification of the Vegas agent (Vegas-A, PIPE), which the "
           "papers do not publish. Each run of a scenario whose flows all have an agent is replayed "
           "here: the stock agents in Debian's ns-2.35, and Vegas-A and PIPE as agents of "
           "ours (tools/ns2agent/: ns-2's Vegas agent with the papers' rules in congestion "
           "avoidance, our reading of them as in our controllers) in ns-2.35 rebuilt from "
           "Debian's source, which gives Debian's counters on the stock agents (make ns2 "
           "checks both before any replay). Each run has "
           "the same links, buffers, flow starts (each repetition's start jitter included) and "
           "link changes as the testbed's run, FTP over the agent to a TCPSink. The figures "
           "are computed from ns-2's counters by the same code as Linux's "
           "(analysis/figures.py): each cell is the median over the repetitions with its 95% "
           "interval, and ✓ marks a paper figure inside that interval, or a claim that holds "
           "in every repetition. Where ns-2 gives the paper's figure and Linux does not, the "
           "difference is Linux's; where ns-2 in the setup the paper states does not give it "
           "either, the paper ran something its text does not say, and the variants show "
           "which setting moves the figure (docs/DESIGN.md §7.2).", "",
           "ns-2 counts its own way: `retransmitted` is the agents' `nrexmitpack_` (NewReno's "
           "go-back after a timeout resends more packets than were dropped), the queue is the "
           "queue monitor's time integral of packets waiting (the one being sent excluded, as "
           "in the testbed's emulator), completion is the time from the flow's start until its "
           "last packet is acknowledged. Vegas's data packets carry no header bytes in ns-2 "
           "(packetSize_ is the whole packet); NewReno's carry 40 more.", "",
           "| variant | what it sets |", "|---|---|"]
    out += [f"| {v} | {VARIANTS[v].why} |" for v in variants]
    out.append("")
    for s in sections:
        out += s
    return "\n".join(out).rstrip() + "\n"
