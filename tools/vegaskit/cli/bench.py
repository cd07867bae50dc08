"""`make bench`: the speed figures, as medians over interleaved repeated runs.

0. Per-call cost of each struct_ops op, from the kernel's BPF statistics,
   against a minimal BPF reno (vegaskit.bench.opcost).
1. Controller overhead: CPU (all cores, /proc/stat busy jiffies) per GB sent
   over a plain veth at full speed, each of our controllers against the
   kernel's reno and cubic in the same rounds; ratios of medians.
2. Tracing: bpf_vegas throughput at full veth speed with `vegasctl trace` off
   and on (every ACK and decision), and the events lost.
3. Link emulator: per-packet delay error at 10, 100 and 1,000 Mbit/s, the
   highest TCP rate and linkemu's CPU per Gbit/s (vegaskit.bench.emulator).
4. Hot swap: time to move 200 to 100,000 established connections between
   controllers (vegaskit.bench.swapscale).
5. Flow count: CPU per GB and BPF time per ACK at 1, 10, 100 and 1,000 flows,
   bpf_vegas against reno (vegaskit.bench.flowscale).

Writes results/bench/report.md and results/bench/bench.json.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from vegaskit import intf, paths
from vegaskit.bench import emulator, flowscale, opcost, swapscale
from vegaskit.bench.flows import one_flow
from vegaskit.paths import VEGASCTL
from vegaskit.testbed.leftovers import owner_env
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair
from vegaskit.testbed.vtrace import Trace

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "4"))
OURS = list(intf.CONTROLLERS)
KERNEL = ["reno", "cubic"]


def bench_overhead() -> dict:
    per_cc = {cc: [] for cc in KERNEL + OURS}
    rate = {cc: [] for cc in KERNEL + OURS}
    with Lab() as lab:
        p = veth_pair(lab)
        port = 6000
        for rnd in range(ROUNDS):
            order = (KERNEL + OURS) if rnd % 2 == 0 else list(reversed(KERNEL + OURS))
            for cc in order:
                port += 1
                f = one_flow(lab, p, cc, port, SECONDS)
                per_cc[cc].append(f.cpu_s_per_gb)
                rate[cc].append(f.bytes_per_s * 8)
    med = {cc: statistics.median(v) for cc, v in per_cc.items()}
    return {"cpu_s_per_gb": med, "gbit_s": {cc: statistics.median(v) / 1e9 for cc, v in rate.items()},
            "ratio_to_reno": {cc: med[cc] / med["reno"] for cc in med},
            "ratio_to_cubic": {cc: med[cc] / med["cubic"] for cc in med}, "rounds": ROUNDS}


def bench_tracing() -> dict:
    off, on, lost, records = [], [], [], []
    with Lab() as lab:
        p = veth_pair(lab)
        port = 7000
        for rnd in range(ROUNDS):
            for mode in (("off", "on") if rnd % 2 == 0 else ("on", "off")):
                port += 1
                if mode == "off":
                    off.append(one_flow(lab, p, "bpf_vegas", port, SECONDS).bytes_per_s * 8)
                    continue
                with Trace("--controller", "bpf_vegas", env=owner_env(lab.prefix)) as t:
                    on.append(one_flow(lab, p, "bpf_vegas", port, SECONDS).bytes_per_s * 8)
                lost.append(t.lost or 0)
                records.append(len(t.records))
    return {"gbit_s_off": statistics.median(off) / 1e9, "gbit_s_on": statistics.median(on) / 1e9,
            "cost": 1 - statistics.median(on) / statistics.median(off),
            "records_per_run": statistics.median(records), "lost_per_run": statistics.median(lost),
            "lost_total": sum(lost), "rounds": ROUNDS}


def interval(x: dict, fmt: str = ".0f") -> str:
    return f"{x['median']:{fmt}} [{x['low']:{fmt}}, {x['high']:{fmt}}]"


def opcost_section(c: dict) -> list[str]:
    ops = sorted({op for per in c["per_call_ns"].values() for op in per})
    lines = ["## Cost per call (kernel BPF statistics)", "",
             f"Method: {c['rounds']} rounds of one {c['seconds']:g} s full-speed veth flow per "
             "controller, order reversed every other round; run_time_ns / run_cnt of each "
             "struct_ops program around the flow (BPF_ENABLE_STATS, on only during the stage). "
             f"The floor is {c['floor']}, Reno through the kernel's kfuncs. Per ACK: all ops' "
             "run time over the ACKs the sender received; the ratio is taken within each "
             "round. Median [95% interval of the median; with few rounds, min and max].", "",
             "| controller | ns per ACK | per ACK vs floor | " + " | ".join(ops) + " |",
             "|---|---|---|" + "---|" * len(ops)]
    for cc, per in c["per_call_ns"].items():
        cells = [interval(per[op]) if op in per else "-" for op in ops]
        lines.append(f"| {cc} | {interval(c['per_ack_ns'][cc])} | "
                     f"{interval(c['per_ack_ratio_to_floor'][cc], '.2f')} | " + " | ".join(cells) + " |")
    return lines + [""]


def report(r: dict) -> str:
    o = r["overhead"]
    lines = ["# vegaskit benchmarks", "",
             "Produced by `sudo make bench` on this machine (2 cores); do not edit by hand. "
             f"Medians over {o['rounds']} interleaved rounds of {SECONDS:g} s flows.", ""]
    lines += opcost_section(r["opcost"])
    lines += [
             "## Controller overhead (veth, full speed)", "",
             "| controller | Gbit/s | CPU s per GB | vs reno | vs cubic |", "|---|---|---|---|---|"]
    for cc in KERNEL + OURS:
        lines.append(f"| {cc} | {o['gbit_s'][cc]:.2f} | {o['cpu_s_per_gb'][cc]:.3f} | "
                     f"{o['ratio_to_reno'][cc]:.3f} | {o['ratio_to_cubic'][cc]:.3f} |")
    lines += ["", "CPU per GB counts everything the host did (user, system, softirq) while the "
              "flow ran, so it mixes a controller's code with its behaviour: on a veth whose "
              "RTT is tens of microseconds, a controller that holds a smaller window (Linux's "
              "diff divides by that tiny baseRTT) sends fewer bytes per ACK and pays more "
              "per byte. Compare variants with the same window behaviour for the cost of "
              "the BPF code itself."]
    t = r["tracing"]
    lines += ["", "## Tracing from inside the controller (bpf_vegas, every ACK and decision)", "",
              f"Throughput {t['gbit_s_off']:.2f} Gbit/s with tracing off, {t['gbit_s_on']:.2f} "
              f"Gbit/s on (cost {t['cost']:.1%}); {t['records_per_run']:.0f} records per run, "
              f"{t['lost_per_run']:.0f} lost per run (median), {t['lost_total']} in all.", "",
              ]
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
             "Growth is the median at N flows over the median at 1.", "",
             "| flows | bpf_vegas CPU s/GB | reno CPU s/GB | bpf_vegas growth | reno growth | "
             "bpf_vegas BPF ns per ACK |", "|---|---|---|---|---|---|"]
    for n in f["counts"]:
        k = str(n) if str(n) in f["cpu_s_per_gb"]["bpf_vegas"] else n
        lines.append(f"| {n} | {interval(f['cpu_s_per_gb']['bpf_vegas'][k], '.3f')} | "
                     f"{interval(f['cpu_s_per_gb']['reno'][k], '.3f')} | "
                     f"{f['cpu_growth_vs_1_flow']['bpf_vegas'][k]:.2f} | "
                     f"{f['cpu_growth_vs_1_flow']['reno'][k]:.2f} | "
                     f"{interval(f['bpf_ns_per_ack'][k])} |")
    return lines + [""]


def emulator_section(e: dict) -> list[str]:
    lines = ["## Link emulator", "",
             f"Method: {e['rounds']} rounds; UDP datagrams of {e['payload']} bytes at "
             f"{e['load']:.0%} of the rate through a {e['delay_ms']:g} ms link; error = one-way "
             "delay minus the configured delay and the datagram's serialization; the same "
             "datagrams over a plain veth give the host stacks' own one-way delay. Median "
             "[interval] over rounds of each round's p50, p99 and max, in microseconds.", "",
             "| rate | error p50 | error p99 | error max | veth p50 | veth p99 |",
             "|---|---|---|---|---|---|"]
    for rate, d in e["error_us"].items():
        v = e["veth_us"][rate]
        lines.append(f"| {int(rate) / 1e6:g} Mbit/s | {interval(d['p50'])} | {interval(d['p99'])} | "
                     f"{interval(d['max'])} | {interval(v['p50'])} | {interval(v['p99'])} |")
    lines += ["", f"Highest rate (cubic, unlimited link): {interval(e['max_gbit_s'], '.2f')} "
              f"Gbit/s; linkemu's CPU: {interval(e['cpu_s_per_gbit'], '.3f')} CPU-seconds per "
              "gigabit carried (cores busy per Gbit/s).", ""]
    return lines


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
    return lines + [""]


def main() -> int:
    loaded = []
    try:
        have = set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())
        for cc in OURS:
            if cc not in have:
                subprocess.run([VEGASCTL, "load", cc[4:]], check=True, capture_output=True)
                loaded.append(cc)
        r = {}
        for name, fn in (("opcost", lambda: opcost.run(ROUNDS, SECONDS)),
                         ("overhead", bench_overhead), ("tracing", bench_tracing),
                         ("linkemu", lambda: emulator.run(ROUNDS, SECONDS)),
                         ("swap", lambda: swapscale.run(ROUNDS)),
                         ("flows", lambda: flowscale.run(ROUNDS, SECONDS))):
            print(f"== {name}", flush=True)
            r[name] = fn()
            print(json.dumps(r[name], indent=1), flush=True)
    finally:
        for cc in loaded:
            subprocess.run([VEGASCTL, "unload", cc], capture_output=True)
    out = paths.RESULTS / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(r, indent=1) + "\n")
    (out / "report.md").write_text(report(r))
    print(report(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
