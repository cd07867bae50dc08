"""results/README.md: one row per paper figure or claim, over every scenario.

Built from each scenario's summaries.json of a profile (what `make results`
wrote), so it can be rebuilt without running anything:

    python -m vegaskit.cli.results --index [--profile full]
"""
from __future__ import annotations

import json
from pathlib import Path

from vegaskit.analysis import figures

from .report import aside_note, interval, num


def rows_of(scenario, base: Path) -> tuple[list[dict], str]:
    """The scenario's verdict rows and its table verdict; 'not run' without results."""
    path = base / "summaries.json"
    if not path.exists():
        return [], "not run"
    summaries = json.loads(path.read_text())
    if not summaries or "rep" not in summaries[0]:
        return [], "not run (its report is from the single-run pipeline before §7.1)"
    rows = figures.evaluate(scenario.paper, summaries, scenario.doc["runs"])
    return rows, figures.table_verdict(rows)


def render(scenarios: list, out: Path, profile: str, command: str) -> str:
    lines = ["# Results: the papers' tables on Linux", "",
             f"Produced by `{command}`; do not edit by hand. One row per figure or claim of a "
             "paper that a scenario reproduces; ours is the median over the repetitions with "
             "its 95% interval (runs in brackets), throughputs being each flow's lifetime "
             "average as in the papers' tables. *reproduced*: the paper's figure lies inside "
             "our interval, or its claim holds in every repetition. *differs*: the report "
             "says what we found and which experiment shows why, or that the cause is not yet "
             "shown. A repetition in which a flow's window rose above any its path lets a "
             "controller grow (a kernel defect, docs/DESIGN.md §10.2) is set aside, and the "
             "row says how many were.", "",
             "| scenario | paper's table or figure | ours | paper | verdict | report |",
             "|---|---|---|---|---|---|"]
    summary = []
    for s in scenarios:
        if not s.paper.get("figures") and not s.paper.get("claims"):
            continue
        base = out / s.name / profile
        rows, verdict = rows_of(s, base)
        link = f"[{s.name}]({s.name}/{profile}/report.md)"
        summary.append(f"| {s.name} | {s.source} | {verdict} | {link} |")
        if not rows:
            lines.append(f"| {s.name} | {s.source} | - | - | {verdict} | {link} |")
        for r in rows:
            if r["verdict"] == "not run":
                ours, paper = "-", num(r.get("paper"))
            elif r["kind"] == "figure":
                ours, paper = interval(r["ours"]) + aside_note(r), num(r["paper"])
            else:
                ours = (f"{interval(r['left'])} {r['op']} {interval(r['right'])}: "
                        f"{r['holds']}/{r['of']}{aside_note(r)}")
                paper = "claim"
            lines.append(f"| {s.name} | {r['id']} | {ours} | {paper} | {r['verdict']} | {link} |")
    lines += ["", "## Per table", "", "| scenario | source | verdict | report |",
              "|---|---|---|---|", *summary, ""]
    return "\n".join(lines)


def write(scenarios: list, out: Path, profile: str, command: str) -> Path:
    path = out / "README.md"
    path.write_text(render(scenarios, out, profile, command))
    return path
