"""The Samios-Vernon model against our own Vegas flows (seed 001, section 4).

    python netns-tests/model_validation.py [--profile full|ci] [--out results/model-validation]
        [--from DIR]    re-analyse finished runs (DIR/<run>/) instead of running them

Runs scenarios/model_validation.toml, then for every run measures the model's
inputs the way section 4 does, from the run itself:
  p        loss episodes per packet sent: losses at the bottleneck (emulator
           drops and random losses, queue.csv) closer together than one R
           count as one episode (section 3.2: "loss episode"). With cross
           traffic (model_validation_cross.toml) the bottleneck's losses are
           shared, so the Vegas flow's own retransmissions per packet it sent
           stand in (an upper bound on its episode rate)
  R        the mean RTT: time-weighted mean of the sender's srtt (flows.csv)
  baseRTT  the smallest baseRTT the controller itself held (trace.csv)
  T0       Linux's first RTO: R + 200 ms (tcp_rto_min; the kernel's srtt +
           4 rttvar is below 200 ms on these paths)
  Wmax     the receive window in packets: 6 MB (tcp_rmem max) / 1448
and compares the model's throughput with the measured one (second half).
Writes validation.csv, model_vs_measured.png and report.md.
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path


from vegaskit import paths
from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario
from vegaskit.analysis import model, plots
from vegaskit.analysis.records import read_csv

SCENARIOS = [paths.SCENARIOS / "model_validation.toml",
             paths.SCENARIOS / "model_validation_cross.toml"]
MSS = 1448
WMAX = 6 * 1024 * 1024 / MSS
RTO_MIN = 0.2


def loss_episodes(queue: list[dict], rtt: float) -> tuple[int, int]:
    """(episodes, losses): losses within one RTT of the previous belong to its episode."""
    times = [float(r["t_s"]) for r in queue if r["event"] in ("drop", "loss")]
    episodes, last = 0, None
    for t in times:
        if last is None or t - last > rtt:
            episodes += 1
        last = t
    return episodes, len(times)


def measure(rundir: Path) -> dict:
    sm = json.loads((rundir / "summary.json").read_text())
    flows = [r for r in read_csv(rundir / "flows.csv") if r["rtt_us"]]
    half = float(flows[-1]["t1_s"]) / 2
    late = [r for r in flows if float(r["t0_s"]) >= half]
    weights = [float(r["t1_s"]) - float(r["t0_s"]) for r in late]
    R = sum(w * int(r["rtt_us"]) / 1e6 for w, r in zip(weights, late)) / sum(weights)
    trace = [r for r in read_csv(rundir / "trace.csv") if r["type"] == "decision"]
    base = min(int(r["base_rtt_us"]) for r in trace) / 1e6
    fl = sm["flows"][0]
    if len(sm["flows"]) == 1:
        queue = read_csv(rundir / "queue.csv")
        episodes, losses = loss_episodes(queue, R)
        sent = sum(1 for r in queue if r["event"] in ("enq", "drop"))
    else:
        sent = sum(int(r["bytes"]) for r in read_csv(rundir / "flows.csv")
                   if r["flow"] == "1") / MSS
        episodes = losses = fl["retransmits"]
    return {"run": f'{sm["scenario"]}/{sm["run"]}', "p": episodes / sent if sent else 0.0,
            "loss_rate": losses / sent if sent else 0.0,
            "R_s": R, "base_rtt_s": min(base, R), "t0_s": R + RTO_MIN, "packets": sent,
            "measured_pps": fl["second_half_bps"] / 8 / MSS}


def predict(m: dict, alpha: float, beta: float) -> dict:
    r = model.predict(model.ModelInputs(p=m["p"], rtt=m["R_s"], base_rtt=m["base_rtt_s"],
                                        alpha=alpha, beta=beta, wmax=WMAX, t0=m["t0_s"]))
    err = (r.throughput_pps - m["measured_pps"]) / m["measured_pps"]
    return {**m, "model_pps": r.throughput_pps, "branch": r.branch, "error": err,
            "cond12": r.condition_12.holds, "cond26": r.condition_26.holds}


def plot(rows: list[dict], out: Path) -> None:
    fig, ax = plots.plt.subplots(figsize=(7, 4))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        kind = "cross traffic" if "cross" in r["run"] else "random loss"
        groups.setdefault(f'{kind}, {r["run"].split("_")[-1]}', []).append(r)
    for g, rs in sorted(groups.items()):
        rs.sort(key=lambda r: r["p"])
        ax.plot([r["p"] for r in rs], [r["measured_pps"] for r in rs], "o", label=f"measured, {g}")
        ax.plot([r["p"] for r in rs], [r["model_pps"] for r in rs], "x--", label=f"model, {g}")
    ax.set_xscale("log")
    ax.set_xlabel("loss-episode rate p")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title("Samios-Vernon model vs Linux bpf_vegas (cf. seed 001, Fig. 5)")
    ax.legend(fontsize=8)
    plots.save(fig, out)


def report(rows: list[dict], profile: str) -> str:
    errs = [abs(r["error"]) for r in rows]
    lines = ["# The Samios-Vernon model against Linux bpf_vegas flows", "",
             f"Source: seed 001, section 4. Profile `{profile}`. Produced by "
             f"`sudo make model-validation PROFILE={profile}`; do not edit by hand. Runs: "
             "`netns-tests/scenarios/model_validation.toml` (emulator random loss) and "
             "`model_validation_cross.toml` (loss from a competing Reno flow); the "
             "controller is `vegas --preset samios loss_cut=4` (alpha = beta = 6, the 25% "
             "cut the model assumes).", "",
             "| run | p (episodes/pkt) | loss rate | R (ms) | baseRTT (ms) | measured (pkt/s) | "
             "model (pkt/s) | branch | error |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['run']} | {r['p']:.5f} | {r['loss_rate']:.5f} | {r['R_s'] * 1e3:.1f} | "
                     f"{r['base_rtt_s'] * 1e3:.1f} | {r['measured_pps']:.1f} | {r['model_pps']:.1f} | "
                     f"{r['branch']} | {r['error']:+.1%} |")
    lines += ["", "| | ours | the paper (ns-2) |", "|---|---|---|",
              f"| average absolute error | {statistics.mean(errs):.1%} | 6.8 % |",
              f"| worst | {max(errs):.1%} | near 15-25 % |", "",
              ]
    by_branch: dict[str, list[float]] = {}
    for r in rows:
        by_branch.setdefault(r["branch"], []).append(r["error"])
    lines += ["Signed error (model - measured) / measured, by the branch the model chose:", "",
              "| branch | runs | mean signed error |", "|---|---|---|"]
    lines += [f"| {b} | {len(e)} | {statistics.mean(e):+.1%} |" for b, e in sorted(by_branch.items())]
    lines += ["", "Where we differ from the paper, and the candidate reasons (not yet separated "
              "by experiment): the model describes ns-2 Vegas, with its fine-grained "
              "retransmission timer, one 25% cut per loss episode and slow start every other "
              "RTT. Our controller has the 25% cut (loss_cut=4), but in Linux the window during "
              "Recovery and CWR follows Reno and PRR, not Vegas; after a retransmission "
              "timeout Linux restarts from one packet and Vegas relearns baseRTT "
              "(tcp_vegas.c resets on TX_START); the emulator's random loss also hits "
              "retransmissions, whose loss costs a timeout; and our p groups losses less than "
              "one R apart into one episode, which may merge episodes the model counts "
              "apart. The model is closest at the lowest loss rates and in the runs where it "
              "chose the full model (32).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="model_validation")
    ap.add_argument("--profile", default="full")
    ap.add_argument("--out", type=Path, default=paths.RESULTS / "model-validation")
    ap.add_argument("--from", dest="src", type=Path, help="analyse finished runs in this directory")
    a = ap.parse_args(argv)
    alpha = beta = 6.0                  # the samios preset of both scenarios
    src = a.src or a.out / "runs" / a.profile
    rows = []
    for s in map(Scenario.load, SCENARIOS):
        for name in s.profile_runs(a.profile):
            rundir = src / s.name / name
            if not a.src:
                print(f"== {s.name} / {name}", flush=True)
                runner.execute(s.run(name, a.profile), rundir)
            if (rundir / "summary.json").exists():
                rows.append(predict(measure(rundir), alpha, beta))
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, a.out / "model_vs_measured.png")
    (a.out / "report.md").write_text(report(rows, a.profile))
    print((a.out / "report.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
