"""The markdown report of a scenario: its repeated runs beside the paper's figures.

Every number of ours is the median over the repetitions with its 95%
interval (analysis/figures.py); the verdicts compare the paper's figures and
claims with them. The rows also feed results/README.md (index.py).
"""
from __future__ import annotations

import statistics
from pathlib import Path

from vegaskit.analysis import figures, metrics

from .lateness import EARLY_S


def num(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and v != v:
        return "nan"
    if abs(v) >= 999.5:          # .3g would print 999.5 as 1e+03
        return f"{v:,.0f}"
    return f"{v:.3g}"


def interval(s: dict | None) -> str:
    """median [low, high] (n); the n says how many repetitions it rests on."""
    if not s or not s["n"]:
        return "-"
    if s["n"] == 1:
        return f"{num(s['median'])} (1 run)"
    cov = "" if s["coverage"] >= 0.95 else f", {s['coverage']:.0%}"
    return f"{num(s['median'])} [{num(s['low'])}, {num(s['high'])}] ({s['n']}{cov})"


def aside_note(row: dict) -> str:
    """What a verdict row's figures leave out: repetitions set aside (analysis/figures.py)."""
    k = row.get("set_aside", 0)
    return f"; {k} set aside" if k else ""


def _med(values) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _verdict_rows(rows: list[dict]) -> list[str]:
    out = ["| figure or claim | ours: median [95% interval] (runs) | paper | verdict |",
           "|---|---|---|---|"]
    for r in rows:
        if r["verdict"] == "not run":
            out.append(f"| {r['id']} | - | {num(r.get('paper'))} | not run: {r['why']} |")
        elif r["kind"] == "figure":
            out.append(f"| {r['id']} | {interval(r['ours'])}{aside_note(r)} | {num(r['paper'])} | "
                       f"**{r['verdict']}** |")
        else:
            out.append(f"| {r['id']} | {interval(r['left'])} {r['op']} {interval(r['right'])}; "
                       f"holds in {r['holds']} of {r['of']}{aside_note(r)} | (claim) | "
                       f"**{r['verdict']}** |")
    return out


def _run_tables(summaries: list[dict]) -> list[str]:
    by_run: dict[str, list[dict]] = {}
    for sm in summaries:
        by_run.setdefault(sm["run"], []).append(sm)
    out = ["| run | flow | cc | start (s) | lifetime mean (bit/s) | second half (bit/s) | "
           "retx | completion (s) | RTT min (ms) | RTT p95 (ms) | window, 2nd half (kB) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for run, sms in by_run.items():
        for i, fl in enumerate(sms[0]["flows"]):
            col = lambda k: figures.summarise([sm["flows"][i][k] for sm in sms])  # noqa: E731
            known = all(sm["flows"][i].get("rtt_min_ms") is not None for sm in sms)
            rtt_min = interval(col("rtt_min_ms")) if known else "-"   # older runs: none
            out.append(f"| {run} | {fl['label']} | {fl['cc']} | {num(_med(sm['flows'][i]['start_s'] for sm in sms))} | "
                       f"{interval(col('avg_bps'))} | {interval(col('second_half_bps'))} | "
                       f"{num(_med(sm['flows'][i]['retransmits'] for sm in sms))} | "
                       f"{interval(col('completion_s')) if fl['completion_s'] is not None else '-'} | "
                       f"{rtt_min} | "
                       f"{num(_med(sm['flows'][i]['rtt_p95_ms'] for sm in sms))} | "
                       f"{interval(figures.summarise([sm['flows'][i].get('cwnd_median_kb') for sm in sms]))} |")
    out += ["", "| run | Jain, lifetime | Jain, 2nd half | inter-protocol ratio, lifetime | "
            "utilisation | deepest queue: link, mean, p95 (pkts), delay p95 (ms) | "
            "bottleneck queue mean (pkts) | flows' egress queues, mean (pkts) | loss at bottleneck |",
            "|---|---|---|---|---|---|---|---|---|"]
    for run, sms in by_run.items():
        ratio = ratio_cell([metrics.inter_protocol_ratios(sm["flows"], "avg_bps", None) for sm in sms])
        links = [sm.get("deepest_queue_link", "bottleneck") for sm in sms]
        link = max(set(links), key=links.count)
        deep = lambda k: figures.summarise([sm["links"][link][k] for sm in sms if "links" in sm])  # noqa: E731
        out.append(f"| {run} | {interval(figures.summarise([sm.get('jain_lifetime') for sm in sms]))} | "
                   f"{interval(figures.summarise([sm['jain'] for sm in sms]))} | {ratio} | "
                   f"{interval(figures.summarise([sm['utilisation'] for sm in sms]))} | "
                   f"{link}: {interval(deep('queue_mean_pkts'))}, {num(_med(deep('queue_p95_pkts').get('values', [])))}, "
                   f"{num(_med(deep('queue_delay_p95_ms').get('values', [])))} | "
                   f"{interval(figures.summarise([sm['queue_mean_pkts'] for sm in sms]))} | "
                   f"{_egress(sms)} | "
                   f"{num(_med(sm['bottleneck_loss_rate'] for sm in sms))} |")
    return out + _arrival_rows(by_run)


def _egress(sms: list[dict]) -> str:
    """The flows' egress queues (figures' egress_queue), '-' where a path has none."""
    qs = [figures.metric(sm, "egress_queue") for sm in sms]
    return "-" if None in qs else interval(figures.summarise(qs))


def _arrival_rows(by_run: dict[str, list[dict]]) -> list[str]:
    """The bottleneck's queue as its arriving packets met it beside the time average
    (runner.link_queues), for the runs whose every repetition measured it (runs
    summarised before it have none)."""
    runs = {run: sms for run, sms in by_run.items()
            if all("arrival_wait_pkts" in sm.get("links", {}).get("bottleneck", {}) for sm in sms)}
    if not runs:
        return []
    out = ["", "The bottleneck's queue as time saw it and as its arriving packets met it: "
           "packets waiting ahead of each when it came, and its wait until its "
           "serialization began in 1500-byte packet times at the link's rate (the part of "
           "one RTT sample the bottleneck's queue adds); a packet in serialization is in "
           "neither count, so a packet that arrives while the link is busy waits up to one "
           "more packet time than those ahead of it take. Beside them, for traced runs, "
           "what our controllers' decisions read as queue over their flows' second half: "
           "the round's RTT less baseRTT, in the same packet times (mean over the run's "
           "traced flows), and the delay the link emulators added to every packet by "
           "releasing it after its time: each link's mean release lateness, summed over "
           "the flow's path both ways (its access link, the bottleneck and its egress "
           "link), in the same packet times.", "",
           "| run | time average (pkts) | packets ahead at arrival | wait at arrival (packet times) "
           "| decisions' RTT above baseRTT (packet times) | emulators' release lateness, "
           "path both ways (packet times) |",
           "|---|---|---|---|---|---|"]
    for run, sms in runs.items():
        col = lambda k: interval(figures.summarise(  # noqa: E731
            [sm["links"]["bottleneck"][k] for sm in sms]))
        per_flow = lambda f: [_traced_flows_mean(sm, f) for sm in sms]  # noqa: E731
        opt = lambda xs: interval(figures.summarise(xs)) if None not in xs else "-"  # noqa: E731
        out.append(f"| {run} | {col('queue_mean_pkts')} | {col('arrival_ahead_pkts')} | "
                   f"{col('arrival_wait_pkts')} | {opt(per_flow(_rtt_above_base_ms))} | "
                   f"{opt(per_flow(_path_late_ms))} |")
    return out


def _rtt_above_base_ms(sm: dict, fl: dict) -> float:
    return fl["decisions"]["rtt_above_base_ms"]


def _path_late_ms(sm: dict, fl: dict) -> float | None:
    """A flow's path's mean release lateness, both ways (ms): its access link, the
    bottleneck and its egress link (runner's emulator_release_late_us)."""
    late = sm.get("emulator_release_late_us") or {}
    if "bottleneck" not in late:
        return None
    links = [n for n in ("bottleneck", f"s{fl['flow']}", f"d{fl['flow']}") if n in late]
    return sum(us for n in links for us in late[n].values()) / 1000


def _traced_flows_mean(sm: dict, figure) -> float | None:
    """figure(sm, flow) in ms, averaged over a repetition's traced flows (those with
    runner.decisions_per_flow's rtt_above_base_ms) and given in 1500-byte packet
    times at the bottleneck's rate; None where a flow lacks it."""
    ms = [figure(sm, fl) for fl in sm["flows"]
          if "rtt_above_base_ms" in fl.get("decisions", {})]
    rate = sm.get("bottleneck", {}).get("rate_bps")
    if not ms or None in ms or not rate:
        return None
    return round(sum(ms) / len(ms) / (1500 * 8 / rate * 1000), 3)


def _per_rep_rows(summaries: list[dict], runs: list[str]) -> list[str]:
    """Repetition by repetition, for the runs the scenario names ([report] per_rep)
    and every traced one: where a run's repetitions split, each flow's start, share
    and RTT min, and our controllers' decisions by rule and their alpha
    (runner.decisions_per_flow), say what differed between them."""
    rows = [(sm, fl) for sm in sorted(summaries, key=lambda x: (x["run"], x["rep"]))
            for fl in sm["flows"] if sm["run"] in runs or fl.get("decisions")]
    if not rows:
        return []
    out = ["", "Repetition by repetition. Decisions are those `vegasctl trace` recorded (the "
           "first repetition of a run; every one with `TRACE_ALL=1`); alpha is the "
           "threshold in force after each decision, its mean weighted by how long each value "
           "stood, and it rose at the first decision that "
           "left it above its first value, in seconds from the run's start. baseRTT: the "
           "smallest the controller held (never below the path's RTT unless a sample was "
           "early), and its time-weighted mean (above the smallest when the flow learned it "
           "behind a queue and kept it). By rule, \"at diff = beta\": those whose traced "
           "diff equalled the beta the flow's previous decision left. With the papers' "
           "arithmetic (vegas_a's and pipe's default) and Linux's (vegas) that is the tie "
           "PIPE decides down and Vegas-A holds at (docs/DESIGN.md §3.6); with "
           "`semantics=exact` the traced diff is rounded down, so it also counts diffs just "
           "above beta. Th's rise at inc_adapt: how far Th stood above Th' at each decision "
           "that raised alpha, in packets per round ((Th - Th') x RTT, the quantity the tie "
           "band `th_tie` bounds, docs/DESIGN.md §3.10): smallest, median, largest, and how "
           "many of them were under one packet.", "",
           "| run | rep | flow | start (s) | lifetime mean (bit/s) | RTT min (ms) | "
           "baseRTT min, mean (ms) | decisions | by rule | alpha first, max, last, mean | alpha rose at (s) | "
           "Th's rise at inc_adapt (packets/round) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for sm, fl in rows:
        d = fl.get("decisions") or {}
        at = d.get("at_beta", {})
        rules = ", ".join(f"{k} {v}" + (f" ({at[k]} at diff = beta)" if at.get(k) else "")
                          for k, v in sorted(d.get("rules", {}).items(),
                                             key=lambda kv: (-kv[1], kv[0]))) or "-"
        alpha = (f"{d['alpha_first']}, {d['alpha_max']}, {d['alpha_last']}, "
                 f"{num(d.get('alpha_mean'))}" if "alpha_first" in d else "-")
        out.append(f"| {sm['run']} | {sm['rep']} | {fl['label']} | {num(fl.get('start_s'))} | "
                   f"{num(fl['avg_bps'])} | {num(fl.get('rtt_min_ms'))} | "
                   f"{num(d.get('base_rtt_min_ms'))}, {num(d.get('base_rtt_mean_ms'))} | "
                   f"{num(d.get('count'))} | "
                   f"{rules} | {alpha} | {num(d.get('alpha_rise_s'))} | "
                   f"{_rises(d.get('adapt_rise'))} |")
    return out


def _rises(r: dict | None) -> str:
    if not r:
        return "-"
    return (f"{num(r['min'])}, {num(r['median'])}, {num(r['max'])}; "
            f"{r['below_1']} of {r['n']} under 1")


def _aside_rows(aside: list[dict]) -> list[str]:
    """The repetitions set aside, each flow whose window passed its path's ceiling."""
    if not aside:
        return []
    out = ["## Repetitions set aside", "",
           f"{len(aside)} repetition{'s' * (len(aside) > 1)} had a flow whose window "
           "(the sender's snd_cwnd, the largest of its samples in flows.csv, one per "
           "iperf3 interval) rose above four times "
           "what its path can hold in flight and in its buffers. No controller grew "
           "those windows: this kernel's defect, docs/DESIGN.md §10.2, left them. Every "
           "other table of this report is of the other repetitions. The defect strikes "
           "as a flow enters loss recovery, so a repetition with more recoveries was "
           "likelier to meet it: what is left can lean towards fewer losses.", "",
           "| run | rep | flow | cc | largest window (bytes) | ceiling (bytes) |",
           "|---|---|---|---|---|---|"]
    for sm in sorted(aside, key=lambda x: (x["run"], x.get("rep", 0))):
        for fl in sm["flows"]:
            if fl["label"] in sm["impossible_windows"]:
                out.append(f"| {sm['run']} | {sm.get('rep', 0)} | {fl['label']} | {fl['cc']} | "
                           f"{fl['cwnd_max_bytes']:,} | {fl['window_ceiling_bytes']:,} |")
    return out + [""]


def policy_sentence(fifo: int, runs: int) -> str:
    """Which scheduling policy the emulators of `runs` repetitions ran under,
    `fifo` of them under SCHED_FIFO (decision 42)."""
    if fifo == 0:
        return "The emulators ran under the ordinary policy (decision 42)."
    if fifo == runs:
        return "The emulators ran under SCHED_FIFO (decision 42)."
    return (f"The emulators ran under SCHED_FIFO in {fifo} of the {runs} repetitions, the "
            f"ordinary policy in the others (decision 42).")


def buffers(summaries: list[dict]) -> str:
    """The bottleneck's buffer: one size; the most runs' size and the other's runs; or,
    for a sweep of more sizes, their range (runs set `buffer` through a placeholder)."""
    by: dict[int, list[str]] = {}
    for sm in summaries:
        runs = by.setdefault(sm["bottleneck"]["buffer_pkts"], [])
        if sm["run"] not in runs:
            runs.append(sm["run"])
    if len(by) > 2:                                     # a sweep: buffer_sweep
        return f"{min(by)} to {max(by)} packets, by run"
    main, *rest = sorted(by, key=lambda n: (-len(by[n]), n))
    return f"{main} packets" + "".join(
        f"; {n} in {', '.join(sorted(by[n]))}" for n in rest)


def emulator_line(summaries: list[dict]) -> list[str]:
    """How late the link emulator released packets, and how many labs shared the host,
    over the repetitions that counted them."""
    out = []
    labs = [sm["labs_alive_max"] for sm in summaries if sm.get("labs_alive_max")]
    if labs:
        out = [f"Labs alive at once (runs, tests and benches, this run's included; the most "
               f"during a repetition): {statistics.median(labs):g} in median, {max(labs)} at "
               f"most, over {len(labs)} repetition{'s' * (len(labs) > 1)}.", ""]
    # over every repetition: those made before runs recorded it ran under the ordinary policy
    policy = policy_sentence(sum(1 for sm in summaries if sm.get("emulator_fifo")), len(summaries))
    polled = [sm for sm in summaries if sm.get("emulator_fifo") and sm.get("emulator_fifo_poll")]
    if polled:
        budgets = sorted({sm["emulator_fifo_poll"] for sm in polled})
        policy += (f" In {len(polled)} of those repetitions their busy-poll stayed under it, "
                   f"up to {' or '.join(f'{b}%' for b in budgets)} of a core (linkemu "
                   "--fifo-poll).")
    late = [sm for sm in summaries if sm.get("emulator_late_max_ms") is not None]
    if not late:
        return [policy, ""] + out
    worst = [sm["emulator_late_max_ms"] for sm in late]
    hit = [sm for sm in late if sm["emulator_late_1ms"]]
    early = [sm["emulator_late_early_max_ms"] for sm in late
             if sm.get("emulator_late_early_max_ms") is not None]
    when = (f" In the first {EARLY_S:g} s of each flow, where it takes its base RTT, the latest "
            f"was {statistics.median(early):.3g} ms in median, {max(early):.3g} ms at most "
            f"(over {len(early)})." if early else "")
    when += " " + policy
    return [f"The link emulator's timing (every link, both ways; docs/DESIGN.md §7.1): its "
            f"latest release in a repetition was {statistics.median(worst):.3g} ms late in median, "
            f"{max(worst):.3g} ms at most, over {len(late)} repetition{'s' * (len(late) > 1)}; "
            f"{len(hit)} had releases 1 ms late or more "
            f"({sum(sm['emulator_late_1ms'] for sm in late):,} in all).{when}", ""] + out


def ratio_cell(ratios: list[dict[str, float]]) -> str:
    """Each repetition's inter-protocol ratios ("ours/reno": ratio) -> every ratio's
    interval over the repetitions, or "-" when the run has none."""
    keys = sorted({k for r in ratios for k in r})
    return "; ".join(f"{k} {interval(figures.summarise([r.get(k) for r in ratios]))}"
                     for k in keys) or "-"


def render(scenario, profile: str, summaries: list[dict], command: str) -> str:
    s = scenario
    prof = s.doc["profiles"].get(profile, {})
    reps = max((sm.get("rep", 0) for sm in summaries), default=0) + 1
    out = [f"# {s.title}", "",
           f"Source: {s.source}. Profile `{profile}`. Produced by `{command}`; "
           f"do not edit by hand.", ""]
    scale = prof.get("time_scale", 1.0)
    if scale != 1.0:
        out += [f"Times (starts, durations, scheduled changes, file sizes) are the scenario's "
                f"times {scale:g} in this profile.", ""]
    out += [f"Each run was repeated {reps} time{'s' * (reps > 1)}, with the links' random "
            f"streams seeded by the repetition and each flow starting up to "
            f"{prof.get('start_jitter_s', 0):g} s later than its nominal start. Every figure "
            "of ours is the median over the repetitions with a distribution-free 95% interval "
            "(order statistics; 6 runs give [min, max] at 96.9%).", ""]
    commits: dict[str, int] = {}
    for sm in summaries:
        commits[sm.get("commit", "not recorded")] = commits.get(sm.get("commit", "not recorded"), 0) + 1
    if commits:
        out += ["Source commit of the runs: " + ", ".join(
            f"{c} ({n} repetition{'s' * (n > 1)})" for c, n in sorted(commits.items())) +
            ". A rerun of some runs (`--run`) replaces only theirs.", ""]
    out += emulator_line(summaries)
    if summaries:
        b = summaries[0]["bottleneck"]
        out += [f"Bottleneck R1-R2: {b['rate_bps'] / 1e6:g} Mbit/s, RTT {b['rtt_ms']:g} ms, "
                f"drop-tail {buffers(summaries)}. Each run lasted about "
                f"{summaries[0]['duration_s']:.0f} s.", ""]
    diagnostic = prof.get("diagnostic")
    rows = [] if diagnostic else figures.evaluate(s.paper, summaries, s.doc["runs"])
    if diagnostic:
        out += ["## What this profile is for", "",
                "Not a reproduction: no figure here is set against the paper's.", "",
                diagnostic.strip(), ""]
    if rows:
        out += [f"## Against the paper: {figures.table_verdict(rows)}", "",
                "Throughputs are each flow's average over its own lifetime, as the papers' "
                "tables give them. A figure is reproduced when the paper's value lies inside "
                "our interval; a claim when it holds in every repetition.", ""]
        out += _verdict_rows(rows)
        for x in s.paper.get("figures", []) + s.paper.get("claims", []):
            if x.get("note"):
                out += ["", f"- {x['id']}: {x['note']}"]
        out.append("")
    kept, aside = figures.set_aside(summaries)
    out += _aside_rows(aside)
    again = [sm for sm in summaries if sm.get("made_again_after")]
    if again:
        out += [f"A flow's iperf3 failed in {len(again)} repetition{'s' * (len(again) > 1)}, "
                "each made once more (what the tables hold): " + "; ".join(
                    f"{sm['run']} rep {sm.get('rep', 0)} ({sm['made_again_after']})"
                    for sm in sorted(again, key=lambda x: (x["run"], x.get("rep", 0)))) + ".", ""]
    out += ["## Our measurements (Linux, namespaces, this machine)", ""]
    out += _run_tables(kept)
    out += _per_rep_rows(kept, s.doc.get("report", {}).get("per_rep", []))
    p = {} if diagnostic else s.paper
    if p.get("rows"):
        out += ["", f"## The paper ({p.get('table', 'its table')}, ns-2)", ""]
        cols = p.get("columns", [])
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(str(x) for x in row) + " |" for row in p.get("rows", [])]
        if p.get("note"):
            out += ["", p["note"]]
    notes = None if diagnostic else s.doc.get("report", {}).get("notes")
    if notes:
        out += ["", "## Reading the difference", "", notes.strip()]
    out += ["", "The deepest queue is the forward queue with the largest mean over the run, "
            "whichever link holds it (a queue builds where a path's rate is lowest, which with "
            "equal rates can be an access link). Its delay is the p95 in packets at that "
            "link's rate. RTT min is the smallest of a flow's smoothed RTTs (the sender's "
            "tcp_info, once an interval of flows.csv) over its life: no smaller than the "
            "baseRTT a delay-based flow learned, and above the path's when the flow started "
            "behind a standing queue.",
            "", "Per run and repetition: `flows.csv`, `summary.json`, `throughput.png`, "
            "`queue.png`, and for our controllers `trace.csv` and "
            "`trace.png`, in the run's directory beside this file; the per-packet `queue.csv` "
            "is written too but not kept in git (its size).", ""]
    return "\n".join(out)


def write(scenario, profile: str, summaries: list[dict], outdir: Path, command: str) -> Path:
    path = outdir / "report.md"
    path.write_text(render(scenario, profile, summaries, command))
    return path
