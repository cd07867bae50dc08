"""`make bench`: the speed figures, as medians over interleaved repeated runs.

0. Per-call cost of each struct_ops op, from the kernel's BPF statistics,
   against a minimal BPF reno (vegaskit.bench.opcost).
1. Controller overhead: CPU (all cores, /proc/stat busy jiffies) per GB sent
   over a plain veth at full speed, each of our controllers against the
   kernel's reno and cubic, ratios within rounds (vegaskit.bench.overhead).
2. Tracing: bpf_vegas throughput at full veth speed untraced, decisions traced
   and everything traced, offloads off and default, and the code-only arm of 1
   with offloads off (vegaskit.bench.tracing).
3. Link emulator: per-packet delay error at 10, 100 and 1,000 Mbit/s, the
   highest TCP rate and linkemu's CPU per Gbit/s (vegaskit.bench.emulator).
4. Hot swap: time to move 200 to 100,000 established connections between
   controllers (vegaskit.bench.swapscale).
5. Flow count: CPU per GB and BPF time per ACK at 1, 10, 100 and 1,000 flows,
   bpf_vegas against reno (vegaskit.bench.flowscale).

Writes results/bench/report.md and results/bench/bench.json. With --stage (make
bench STAGES="swap flows") only those stages run; their figures replace the same
stages' in bench.json (or those a stopped run left in bench.partial.json) and the
report says when and at which commit each stage was measured.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from vegaskit import intf, paths
from vegaskit.hostinfo import host
from vegaskit.bench import (emulator, flowscale, instances, opcost, overhead, plots,
                            swapscale, tracing)
from vegaskit.analysis.plots import made_aside
from vegaskit.cli import testbed_ready
from vegaskit.cli.results import source_commit
from vegaskit.testbed import leftovers
from vegaskit.cliargs import NOT_OURS, OneLineParser

OURS = list(intf.CONTROLLERS)
STAGES = ("opcost", "overhead", "tracing", "linkemu", "swap", "flows")


def interval(x: dict, fmt: str = ".0f") -> str:
    return f"{x['median']:{fmt}} [{x['low']:{fmt}}, {x['high']:{fmt}}]"


def percent(x: dict) -> str:
    """A summarised fraction as signed percent: +3.0 [+2.7, +3.3]%."""
    return interval({k: 100 * x[k] for k in ("median", "low", "high")}, "+.1f") + "%"


def opcost_table(c: dict) -> list[str]:
    """Per ACK, ratios, ACKs per decision and per call, one row per controller."""
    ops = sorted({op for per in c["per_call_ns"].values() for op in per})
    dec = c.get("decisions_per_ack", {})
    lines = ["| controller | ns per ACK | per ACK vs floor | vs RTT floor | ACKs per decision | " +
             " | ".join(ops) + " |", "|---|---|---|---|---|" + "---|" * len(ops)]
    for cc, per in c["per_call_ns"].items():
        cells = [interval(per[op]) if op in per else "-" for op in ops]
        d = dec.get(cc)
        per_dec = (f"{1 / d['median']:.1f} [{1 / d['high']:.1f}, {1 / d['low']:.1f}]"
                   if d and d["low"] > 0 else "-")
        lines.append(f"| {cc} | {interval(c['per_ack_ns'][cc])} | "
                     f"{interval(c['per_ack_ratio_to_floor'][cc], '.2f')} | "
                     f"{interval(c['per_ack_ratio_to_rtt_floor'][cc], '.2f')} | {per_dec} | " +
                     " | ".join(cells) + " |")
    return lines


def opcost_calls_table(c: dict) -> list[str]:
    """Calls per ACK of each op, one row per controller (runs before 2026-12-01 kept
    none: no table)."""
    calls = c.get("calls_per_ack")
    if not calls:
        return []
    ops = sorted({op for per in calls.values() for op in per})
    lines = ["Calls per ACK (an op's calls over the ACKs; per ACK is the sum over the ops "
             "of ns per call times this):", "",
             "| controller | " + " | ".join(ops) + " |", "|---|" + "---|" * len(ops)]
    for cc, per in calls.items():
        lines.append(f"| {cc} | " + " | ".join(interval(per[op], ".3f") if op in per else "-"
                                              for op in ops) + " |")
    return lines + [""]


def opcost_section(c: dict) -> list[str]:
    lines = ["## Cost per call (kernel BPF statistics)", "",
             f"Method: {c['rounds']} rounds of one {c['seconds']:g} s full-speed flow per "
             "controller, order reversed every other round; run_time_ns / run_cnt of each "
             "struct_ops program around the flow (BPF_ENABLE_STATS, on only during the stage). "
             f"The floor is {c['floor']}, Reno through the kernel's kfuncs; {c['rtt_floor']} "
             "adds the per-ACK minimum RTT (pkts_acked) every delay-based controller needs, "
             "so the second ratio leaves out the fixed cost of that second call per ACK. " +
             (f"{c['one_floor']} does {c['rtt_floor']}'s work in one call per ACK "
              "(cong_control: the ACK's RTT sample comes in the rate sample; PRR, the end of "
              "a reduction and the pacing rate, which the kernel then leaves to the "
              "controller, are its own): what a delay-based controller built as one call "
              "could reach. " if c.get("one_floor") else
              f"The one-call floor was not registered: {c['one_floor_refused']}. "
              if c.get("one_floor_refused") else "") +
             ("vk1_VARIANT is the variant loaded with calls=1, the same controller in one "
              "call per ACK with that ACK-path work done by the code the one-call floor "
              "uses (docs/DESIGN.md §3.12). " if c.get("one_call") else "") +
             "Per ACK: all ops' run time over the ACKs the sender received; ACKs per decision "
             "from each instance's counters; the ratios are taken within each round. Median "
             "[95% interval of the median; with few rounds, min and max].", "",
             "Over a veth (RTT of tens of microseconds: a decision every few ACKs, the worst "
             "case):", "", *opcost_table(c), "", *opcost_calls_table(c)]
    if "path" in c:
        lines += [f"Over an emulated {c['path']['delay_ms']:g} ms path, unlimited rate "
                  "(decisions rarer, as on a live host's paths):", "",
                  *opcost_table(c["path"]), "", *opcost_calls_table(c["path"])]
    if c.get("decision_ns") and not (moved := decision_cost_moved(c)):
        lines += split_section(c)
    if c.get("decision_cost"):
        lines += decision_cost_section(c)
        if c.get("decision_ns") and moved:
            lines += [f"The split of a call's cost into a call without a decision and a "
                      f"decision's, from the two paths, assumes a decision costs the same "
                      f"on both; timed directly, {moved}, so it is not given (bench.json "
                      "keeps what the fit returned).", ""]
    return lines + ["![opcost](opcost.png)", ""]


# How far a decision's timed cost may differ between the paths for the split to stand
SPLIT_DECISION_RATIO_MAX = 1.5


def decision_cost_moved(c: dict) -> str:
    """Where a decision timed directly costs more than SPLIT_DECISION_RATIO_MAX times as
    much on one path as on the other, which ones and by how much; "" where none does."""
    v = c.get("decision_cost", {}).get("ns_per_decision", {})
    p = c.get("path", {}).get("decision_cost", {}).get("ns_per_decision", {})
    moved = [(cc, v[cc]["median"], p[cc]["median"]) for cc in v if cc in p and
             max(v[cc]["median"], p[cc]["median"]) >
             SPLIT_DECISION_RATIO_MAX * max(min(v[cc]["median"], p[cc]["median"]), 1e-9)]
    return "; ".join(f"{cc} {a:.0f} ns over the veth and {b:.0f} on the path" for cc, a, b in moved)


def decision_cost_section(c: dict) -> list[str]:
    """A decision's cost timed inside the controller (`vegasctl trace --cost`), on each
    path, in flows of their own (since 2026-12-01)."""
    v, p = c["decision_cost"], c.get("path", {}).get("decision_cost", {})
    lines = ["A decision, timed inside the controller (`vegasctl trace --cost`: the clock "
             "read around each decision and around its flows record, the reads' own cost, "
             "timed beside each decision, taken out), "
             "in one more flow per variant on each path each round, apart from the flows "
             "above; the code of a decision is the same in one call and in two. Median "
             "[interval] over the rounds of each round's mean.", "",
             "| controller | ns per decision, veth | ns per decision, "
             f"{c.get('path', {}).get('delay_ms', 2):g} ms path | of it the flows record, "
             "path | a clock read (ns), veth | decisions' ns per ACK on the path |",
             "|---|---|---|---|---|---|"]
    per_ack = c.get("path", {}).get("decisions_per_ack", {})
    for cc, ns in v["ns_per_decision"].items():
        on_path = p.get("ns_per_decision", {}).get(cc)
        share = (f"{on_path['median'] * per_ack[cc]['median']:.0f}"
                 if on_path and cc in per_ack else "-")
        record = p.get("record_ns", {}).get(cc)      # since the record was timed
        lines.append(f"| {cc} | {interval(ns)} | {interval(on_path) if on_path else '-'} | "
                     f"{interval(record) if record else '-'} | "
                     f"{interval(v['clock_read_ns'][cc])} | {share} |")
    return lines + ["", "The last column is the product of two medians, the timed decision's and "
                    "the decisions per ACK of the flows above: what decisions add to each "
                    "ACK's cost on that path.", ""]


# How far the floor's cost may move between the two paths for the split to stand: beyond
# it, what the path does to every call swamps a decision's
SPLIT_SHIFT_MAX = 0.10


def split_section(c: dict) -> list[str]:
    """The split, a + b x (decisions per unit), where its assumption holds; where the
    floor's own cost moved between the paths, the check that says it does not. The unit
    is a call of the deciding op (split_unit "call", since 2026-12-01), or an ACK in
    older runs."""
    unit = ("call of the op that decides (cong_avoid, or cong_control in one call)"
            if c.get("split_unit") == "call" else "ACK")
    short = "call" if c.get("split_unit") == "call" else "ACK"
    shift = c.get("rtt_floor_path_shift")
    check = (f"The split assumes a {short} without a decision costs the same on both paths. "
             f"The check: {c['rtt_floor']}, which never decides, costs {percent(shift)} per "
             f"{short} on the emulated path against the veth." if shift else "")
    if shift and abs(shift["median"]) > SPLIT_SHIFT_MAX:
        return [check + f" That is beyond {SPLIT_SHIFT_MAX:.0%}, so a and b of per {short} "
                f"= a + b x (decisions per {short}) cannot be told apart from these two "
                "paths, and are not given (bench.json keeps what the fit returned).", ""]
    lines = [f"From the two paths, round by round, all ops' run time per {unit}, above the "
             f"RTT floor's, = a + b x (decisions per {short}): a, a {short} without a "
             "decision; b, one decision.",
             "", f"| controller | ns per {short} above the RTT floor, without a decision | "
             "ns per decision |", "|---|---|---|"]
    failed = []
    for cc, b in c["decision_ns"].items():
        if b["median"] < 0:
            failed.append(f"{cc} ({interval(b)} ns)")
            lines.append(f"| {cc} | not given: the fit fails | not given: the fit fails |")
        else:
            lines.append(f"| {cc} | {interval(c['ack_ns_above_rtt_floor'][cc])} | "
                         f"{interval(b)} |")
    # a decision cannot cost less than nothing: where the fit says so, a decision costs
    # more per decision on one path than on the other, the fit's other assumption
    fails = ("The fit also assumes a decision costs the same on both paths; for "
             + ", ".join(failed) + " it returned a decision costing less than nothing, so "
             "for them that assumption fails and a and b are not given (bench.json keeps "
             "what the fit returned)." if failed else "")
    return lines + [x for t in (check, fails) if t for x in ("", t)] + [""]


def measured_line(r: dict) -> str:
    """When, from which commit and where each stage's figures come (stages rerun alone
    differ); where from predates stages recording it."""
    when = [f"{k} {v['measured']['date']} ({v['measured']['commit']}"
            + (f"; {v['measured']['host']}" if v["measured"].get("host") else "") + ")"
            for k, v in r.items() if v and "measured" in v]
    return "Measured: " + ("; ".join(when) if when else "before stages recorded it") + "."


def report(r: dict) -> str:
    o = r["overhead"]
    lines = ["# vegaskit benchmarks", "",
             "Produced by `sudo make bench` on this machine (2 cores); do not edit by hand "
             "(BENCH_ROUNDS and BENCH_SECONDS set the rounds and the flow length; "
             "STAGES=\"swap flows\" reruns only those stages). Each stage "
             "states its method; an interval is the distribution-free 95% interval of the "
             "median over rounds, and with 8 rounds or fewer it is the min and max, at the "
             "coverage it reaches.", "",
             measured_line(r), ""]
    lines += opcost_section(r["opcost"])
    lines += ["## Controller overhead (veth, full speed)", "",
              f"Method: {o['rounds']} rounds, one {o['seconds']:g} s flow per controller each, "
              "order reversed every other round; CPU per GB is all the host did while the flow "
              "ran; ratios are taken within a round. Median [interval].", "",
              "| controller | Gbit/s | CPU s per GB | vs reno | vs cubic |", "|---|---|---|---|---|"]
    for cc, c in o["cpu_s_per_gb"].items():
        lines.append(f"| {cc} | {interval(o['gbit_s'][cc], '.2f')} | {interval(c, '.3f')} | "
                     f"{interval(o['ratio_to_reno'][cc], '.3f')} | "
                     f"{interval(o['ratio_to_cubic'][cc], '.3f')} |")
    lines += ["", "CPU per GB mixes a controller's code with its behaviour: on a veth whose "
              "RTT is tens of microseconds, a controller that holds a smaller window (Linux's "
              "diff divides by that tiny baseRTT) sends fewer bytes per ACK and pays more "
              "per byte. The per-call table above has the BPF code alone."]
    if o.get("code_only"):
        lines += ["", f"{o['code_only']} separates the two here: bpf_vegas's code, every op "
                  "and every decision, with alpha, beta and gamma set beyond any diff, so "
                  "that each decision adds one packet and slow start ends only at a loss: "
                  "Reno's window with Vegas's code. Its ratio to reno is what the code costs "
                  "per GB; bpf_vegas's ratio over it, what Vegas's window does."]
    lines += ["",
              "![overhead](overhead.png)", ""]
    lines += tracing_section(r["tracing"])
    lines += emulator_section(r["linkemu"])
    lines += swap_section(r["swap"])
    lines += flows_section(r["flows"])
    return "\n".join(lines)


def flows_section(f: dict) -> list[str]:
    lines = ["## Cost against the number of flows", "",
             f"Method: {f['rounds']} rounds; each runs bpf_vegas and reno with "
             f"{', '.join(str(n) for n in f['counts'])} iperf3 streams at once for "
             f"{f['seconds']:g} s over one veth, order reversed every other round. CPU per GB "
             "is the host's; BPF per ACK is bpf_vegas's run time over its senders' ACKs. "
             "Growth is CPU per GB at N flows over that at 1, within a round.", "",
             "| flows | bpf_vegas CPU s/GB | reno CPU s/GB | bpf_vegas growth | reno growth | "
             "bpf_vegas BPF ns per ACK |", "|---|---|---|---|---|---|"]
    for n in f["counts"]:
        k = str(n) if str(n) in f["cpu_s_per_gb"]["bpf_vegas"] else n
        lines.append(f"| {n} | {interval(f['cpu_s_per_gb']['bpf_vegas'][k], '.3f')} | "
                     f"{interval(f['cpu_s_per_gb']['reno'][k], '.3f')} | "
                     f"{interval(f['cpu_growth_vs_1_flow']['bpf_vegas'][k], '.2f')} | "
                     f"{interval(f['cpu_growth_vs_1_flow']['reno'][k], '.2f')} | "
                     f"{interval(f['bpf_ns_per_ack'][k])} |")
    return lines + ["![flows](flows.png)", ""]


def tracing_section(t: dict) -> list[str]:
    lines = ["## Tracing from inside the controller (bpf_vegas)", "",
             f"Method: {t['rounds']} rounds of {t['seconds']:g} s full-speed veth flows, untraced, "
             "decisions traced and every ACK and decision traced, order reversed every other "
             "round; cost = 1 - traced / untraced throughput within a round; CPU cost = the "
             "host's CPU per GB traced / untraced - 1, the tracer's own work included. The "
             "kernel's BPF statistics are on in every mode (for the direct measure below), as "
             "they were not in runs before 2026-11-27. Median [interval]." +
             (" bpf_vegas's window answers the RTT, which work on the ACK path lengthens, "
              "so its cost mixes tracing's work with the window's answer; the rows named "
              f"code only trace {t['code_only']}, the overhead stage's code-only arm "
              "(bpf_vegas's code and records, Reno's window, offloads off), whose "
              "throughput answers to the CPU alone." if t.get("code_only_off") else ""),
             "", "| offloads | untraced Gbit/s | decisions: cost | all: cost | decisions: CPU cost "
             "| all: CPU cost | records per run (all) | lost (all, in all) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, o in offload_sets(t, "gbit_s"):
        cpu = o.get("cpu_cost", {})
        lines.append(f"| {name} | {interval(o['gbit_s']['off'], '.2f')} | "
                     f"{interval(o['cost']['decisions'], '.1%')} | {interval(o['cost']['all'], '.1%')} | "
                     f"{interval(cpu['decisions'], '.1%') if cpu else '-'} | "
                     f"{interval(cpu['all'], '.1%') if cpu else '-'} | "
                     f"{o['records_per_run']['all']:.0f} | {o['lost_total']['all']} |")
    lines += [""] + tracing_direct_table(t) + tracing_window_table(t)
    return lines + ["![tracing](tracing.png)", ""]


def offload_sets(t: dict, needs: str) -> list[tuple[str, dict]]:
    """The tracing stage's settings, named as the tables name them, that hold `needs`
    (a run before the code-only setting existed has only the first two)."""
    return [(name, t[key]) for key, name in tracing.SETTINGS if t.get(key, {}).get(needs)]


def tracing_direct_table(t: dict) -> list[str]:
    """The cost measured as the work tracing adds (bench/tracing.py), if this run has it."""
    sets = offload_sets(t, "direct_cost")
    if not sets:
        return []
    lines = ["Directly, in the same flows: the added BPF run time per ACK (the kernel's BPF "
             "statistics, on in every mode) times the ACKs, plus the tracer's own CPU time "
             "(`vegasctl trace`, user and system), over the untraced flow's CPU for the same "
             "bytes, within a round. Not counted: what the added work does to the caches of "
             "the rest, and the wake-up when the ring is a quarter full.", "",
             "| offloads | BPF ns per ACK: untraced | decisions | all | decisions: added CPU "
             "| all: added CPU |", "|---|---|---|---|---|---|"]
    for name, o in sets:
        ns, d = o["bpf_ns_per_ack"], o["direct_cost"]
        lines.append(f"| {name} | {interval(ns['off'])} | {interval(ns['decisions'])} | "
                     f"{interval(ns['all'])} | {interval(d['decisions'], '.2%')} | "
                     f"{interval(d['all'], '.2%')} |")
    return lines + [""]


def tracing_window_table(t: dict) -> list[str]:
    """What tracing does to bpf_vegas's window (bench/tracing.py), if this run has it."""
    sets = offload_sets(t, "window_ratio")
    if not sets:
        return []
    lines = ["The controller's answer, in the same flows: the sender's mean window (tcp_info, "
             "iperf3's intervals) traced over untraced within a round, and its mean smoothed "
             "RTT. A delay-based window answers to the RTT it measures, which work added to "
             "the ACK path can lengthen: on a veth whose RTT is tens of microseconds a few "
             "hundred nanoseconds are a large part of it. These columns show whether the "
             "window moved with tracing; they do not by themselves explain a cost.", "",
             "| offloads | window: decisions / untraced | all / untraced | srtt us: untraced "
             "| decisions | all |", "|---|---|---|---|---|---|"]
    for name, o in sets:
        w, r = o["window_ratio"], o["srtt_us"]
        lines.append(f"| {name} | {interval(w['decisions'], '.2f')} | {interval(w['all'], '.2f')} | "
                     f"{interval(r['off'])} | {interval(r['decisions'])} | {interval(r['all'])} |")
    return lines + [""]


def emulator_section(e: dict) -> list[str]:
    sets = emulator.measured(e)
    both = ("; each round measured every scheduling policy (decision 42), back to back, "
            f"the testbed's ({emulator.policy_name(e)}) first" if len(sets) > 1 else "")
    lines = ["## Link emulator", "",
             f"Method: {e['rounds']} rounds; UDP datagrams of {e['payload']} bytes at "
             f"{e['load']:.0%} of the rate through a {e['delay_ms']:g} ms link; error = one-way "
             "delay minus the configured delay and the datagram's serialization, arriving when "
             "the receiving stack stamps the datagram (SO_TIMESTAMPNS); at the application, "
             "the receiving process's wake-up is added; the same datagrams over a plain veth "
             "give the host stacks' own one-way delay" + both + ". Waiting to be read: "
             "from the datagram's send to linkemu's stamp just after it read it off the "
             "sending side's TUN (its queue log), a part of the error the release then "
             "carries. Median [interval] over rounds of each round's p50, p99 and max, in "
             "microseconds.", "",
             "| rate | emulator's policy | error p50 | error p99 | error max | waiting to be "
             "read: p50 | p99 | at the application: p99 | veth p50 | veth p99 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for rate, v in e["veth_us"].items():
        for x in sets:
            d = x["error_us"][rate]
            a = x["app_error_us"][rate] if "app_error_us" in x else None
            w = x.get("read_wait_us", {}).get(rate)
            lines.append(f"| {int(rate) / 1e6:g} Mbit/s | {emulator.policy_name(x)} | "
                         f"{interval(d['p50'])} | {interval(d['p99'])} | {interval(d['max'])} | "
                         f"{interval(w['p50']) if w else '-'} | "
                         f"{interval(w['p99']) if w else '-'} | "
                         f"{interval(a['p99']) if a else '-'} | {interval(v['p50'])} | "
                         f"{interval(v['p99'])} |")
    lines += ["", f"Highest rate (cubic, unlimited link, the {emulator.policy_name(e)} "
              f"policy): {interval(e['max_gbit_s'], '.2f')} Gbit/s; linkemu's CPU: "
              f"{interval(e['cpu_s_per_gbit'], '.3f')} CPU-seconds per gigabit carried (cores "
              "busy per Gbit/s).", ""]
    return lines + ["![linkemu](linkemu.png)", ""]


def swap_section(w: dict) -> list[str]:
    lines = ["## Hot swap at scale", "",
             f"Method: idle established connections between two namespaces, moved by "
             f"`vegasctl swap --established-only` between {w['pair'][0]} and {w['pair'][1]}, "
             f"{w['rounds']} rounds of both directions per size; move_ms is swap's own timing "
             "of the iterator walk. Median [interval].", "",
             "| connections | move (ms) | moved at least | failed | vegasctl peak RSS (MB) | "
             "kernel slab per connection (kB, both ends) |", "|---|---|---|---|---|---|"]
    for z in w["sizes"]:
        lines.append(f"| {z['connections']:,} | {interval(z['move_ms'], '.1f')} | "
                     f"{z['moved_min']:,} | {z['failed']} | {z['vegasctl_max_rss_kb'] / 1024:.1f} | "
                     f"{z['slab_kb_per_connection']:.1f} |")
    return lines + ["![swap](swap.png)", ""]


def parse(argv: list[str]) -> argparse.Namespace:
    ap = OneLineParser(prog="python -m vegaskit.cli.bench",
                       description="make bench: the speed figures, interleaved rounds.")
    ap.add_argument("--rounds", type=int, default=6,      # 6: a 95% interval of the median
                    help="interleaved rounds per stage (default 6)")
    ap.add_argument("--seconds", type=float, default=4.0,
                    help="length of each measured flow (default 4)")
    ap.add_argument("--stage", action="append", choices=STAGES, dest="stages",
                    help="run only this stage (repeatable); the others keep their figures")
    ap.add_argument("--rerender", action="store_true",
                    help="measure nothing: rewrite report.md and the plots from bench.json")
    a = ap.parse_args(argv)
    if a.rerender and a.stages:
        ap.error("--rerender measures nothing: it takes no --stage")
    if a.rounds < 2 or not 0.5 <= a.seconds <= 600:
        ap.error("--rounds must be at least 2 and --seconds between 0.5 and 600")
    if a.stages:                        # each once, in the bench's own order
        a.stages = [k for k in STAGES if k in a.stages]
    return a


def stage_fns(rounds: int, seconds: float) -> dict:
    return {"opcost": lambda: opcost.run(rounds, seconds),
            "overhead": lambda: overhead.run(rounds, seconds),
            "tracing": lambda: tracing.run(rounds, seconds),
            "linkemu": lambda: emulator.run(rounds, seconds),
            "swap": lambda: swapscale.run(rounds),
            "flows": lambda: flowscale.run(rounds, seconds)}


def main(argv: list[str] | None = None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    out = paths.RESULTS / "bench"
    if a.rerender:
        return rerender(out)
    earlier: dict = {}
    if a.stages:
        # the figures to keep: bench.json's, and those of the stages a stopped run finished
        # (bench.partial.json: each stage written whole, with when and where measured)
        for name in ("bench.json", "bench.partial.json"):
            try:
                earlier.update({k: v for k, v in json.loads((out / name).read_text()).items()
                                if v})
            except (OSError, ValueError):
                pass
        if any(k not in earlier for k in STAGES if k not in a.stages):
            print("bench: --stage reruns stages of a complete results/bench/bench.json (or "
                  "of bench.partial.json's finished ones); the others' figures are missing, "
                  "so run every stage first", file=sys.stderr)
            return 2
    have = set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
    # and the stages' own extra instances, whose load would otherwise fail mid-bench
    mine = {*OURS, *map(opcost.one_call_name, OURS), overhead.CODE_ONLY}
    busy = sorted(mine & have)
    if busy:
        # the per-call figures count every socket on an instance: someone else's would
        # be counted as ours
        print(f"bench: {', '.join(busy)} already loaded: the bench measures instances of its "
              "own on a quiet host; unload them first", file=sys.stderr)
        return 1
    if rc := testbed_ready("bench"):        # after the checks of its input and of the host
        return rc
    owner = leftovers.new_owner()
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "bench.partial.json"
    fns, commit = stage_fns(a.rounds, a.seconds), source_commit()
    r: dict = {}
    # a SIGKILLed bench is swept like a run: instances.loaded notes them first
    try:
        with instances.loaded(owner, {cc: [cc.removeprefix("bpf_")] for cc in OURS}):
            for name in a.stages or STAGES:
                print(f"== {name}", flush=True)
                r[name] = fns[name]()
                r[name]["measured"] = {"date": time.strftime("%Y-%m-%d %H:%M"),
                                       "commit": commit, "host": host()}
                print(json.dumps(r[name], indent=1), flush=True)
                # a stage that fails later loses nothing done before it
                partial.write_text(json.dumps({**earlier, **r}, indent=1) + "\n")
    except KeyboardInterrupt:
        print("bench: interrupted; what it loaded was unloaded", file=sys.stderr)
        return 130
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        # a stage's tool refused or died: its reason in one line; finished stages are kept
        print(f"bench: {e}", file=sys.stderr)
        return 1
    r = {k: r.get(k, earlier.get(k)) for k in STAGES}
    (out / "bench.json").write_text(json.dumps(r, indent=1) + "\n")
    partial.unlink(missing_ok=True)
    write_report(r, out)
    print(report(r))
    return 0


def write_report(r: dict, out: Path) -> None:
    (out / "report.md").write_text(report(r))      # before the figures: a plot's failure
    plots.write(r, out)                             # must not lose the report


def rerender(out: Path) -> int:
    """The report and plots of the figures bench.json holds, after a change to how they read.
    Everything is made before anything is written: a bench.json of another shape changes
    nothing."""
    try:
        r = json.loads((out / "bench.json").read_text())
    except (OSError, ValueError) as e:
        print(f"bench: --rerender needs a readable {out / 'bench.json'}: {e}", file=sys.stderr)
        return 2
    if not isinstance(r, dict) or any(not r.get(k) for k in STAGES):
        print(f"bench: --rerender: {out / 'bench.json'} lacks a stage (a complete bench writes "
              "every one)", file=sys.stderr)
        return 2
    try:
        with made_aside(out) as tmp:
            text = report(r)
            plots.write(r, tmp)
    except (*NOT_OURS, ValueError) as e:
        print(f"bench: --rerender: {out / 'bench.json'} is not the bench's (a field missing "
              f"or of the wrong kind: {e!r})", file=sys.stderr)
        return 2
    (out / "report.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
