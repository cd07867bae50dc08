"""Stage: what each struct_ops call of our controllers costs, measured by the
kernel (docs/DESIGN.md §9.1).

The kernel's BPF statistics (bpfstats) give each program's run time and call
count: the cost of the BPF code itself, free of the window behaviour that CPU
per GB mixes in. Each round runs one full-speed flow per controller over a
veth, in an order reversed every other round, and reads the counters of that
controller's programs around it. Per call: run time over calls, per op. Per
ACK: the run time of all its ops over the ACKs the sender received (Tcp
InSegs of its namespace). The floor is vk_reno_min, a BPF controller that is
Reno through the kernel's kfuncs and nothing else; the second floor,
vk_reno_rtt, adds the per-ACK minimum RTT (pkts_acked) that every delay-based
controller needs, so that a hook's fixed cost is told from our code's; the
third, vk_reno_one, does vk_reno_rtt's work in one call per ACK (cong_control,
with PRR and the pacing rate the kernel then leaves to it), to show what a
one-call controller could reach. They are registered with bpftool for the stage
(vk_reno_one where the kernel takes it); ratios to the first two are taken round
by round, then summarised. Where the kernel takes the one-call form, each
variant is measured in it as well (`calls=1`, instances named vk1_VARIANT),
beside its usual two calls per ACK. Every figure is a median with its interval over the
rounds.

On a veth the RTT is tens of microseconds, so our controllers decide every few
ACKs: the worst case. The same is measured again over an emulated 2 ms path,
where decisions are rarer (measured: one in 8 to 20 ACKs), as on a live host's
paths; the two paths alternate within each round. ACKs per decision come from
each instance's own counters, and each op's calls per ACK; from the two paths,
round by round, the cost per call of the op that decides (DECIDING_OPS) above the
RTT floor's = a + b x (decisions per such call) gives a call's cost above that floor
without a decision (a) and a decision's (b). Per call, not per ACK: the kernel calls
that op 0.3 times per ACK over a veth and 0.9 times on the path. The floor's own
shift between the paths checks the fit's assumption that a call without a decision
costs the same on both.

A decision's own cost is also timed inside the controller (`vegasctl trace --cost`,
which reads the clock around each decision and around its flows record, and takes the
reads' own cost out): one more
flow per variant on each path in each round, apart from the flows above, whose BPF
statistics the timing would inflate.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time

from vegaskit import intf, paths
from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import leftovers
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.linkemu import LinkParams
from vegaskit.testbed.topology import two_hosts, veth_pair

from . import bpfstats, instances
from .flows import one_flow

FLOOR = "vk_reno_min"
RTT_FLOOR = "vk_reno_rtt"
# RTT_FLOOR's work in one call per ACK: cong_control's four-argument form, Linux >= 6.10;
# left out, with the kernel's reason, where the kernel refuses it
ONE_FLOOR = "vk_reno_one"
FLOORS = (FLOOR, RTT_FLOOR, ONE_FLOOR)
RATIO_FLOORS = (FLOOR, RTT_FLOOR)
PATH = LinkParams(rate_bps=0, delay_us=2000, limit_pkts=10_000)
# the op the kernel calls for each ACK that lets the window grow, where a decision is
# taken: the split counts per call of it (docs/DESIGN.md §9.1), as the kernel calls it
# 0.3 times per ACK over a veth and 0.9 times on the emulated path
DECIDING_OPS = ("cong_avoid", "cong_control")
# each variant again in one call per ACK (calls=1), where the kernel takes it
ONE_CALL_PREFIX = "vk1_"


def one_call_name(cc: str) -> str:
    """bpf_vegas -> vk1_vegas (controller names stop at 15 characters)."""
    return ONE_CALL_PREFIX + cc.removeprefix("bpf_")


@contextlib.contextmanager
def one_call_loaded(owner: str, ccs: list[str]):
    """calls=1 instances of the variants of ccs for the with-block (instances.loaded);
    yields their names, none where `vegasctl features` finds no cong_control_ack."""
    feats = subprocess.run([str(paths.VEGASCTL), "--json", "features"], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    ok = json.loads(feats)["features"].get("cong_control_ack")
    specs = {one_call_name(cc): [cc.removeprefix("bpf_"), "calls=1"] for cc in ccs} if ok else {}
    with instances.loaded(owner, specs) as names:
        yield names


@contextlib.contextmanager
def floor_registered(owner: str):
    """The floors registered for the with-block: their links pinned under the owner's
    mark (leftovers.BENCH_PIN_DIR), so a SIGKILLed bench is swept like any run. Yields
    the floors registered and, for ONE_FLOOR where the kernel refused it, its reason."""
    pins = leftovers.BENCH_PIN_DIR / owner
    pins.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(leftovers.BENCH_PIN_DIR, 0o700)
    registered, refused = [], {}
    try:
        for floor in FLOORS:
            r = subprocess.run(["bpftool", "struct_ops", "register",
                                str(paths.BUILD / "bench" / f"{floor}.bpf.o"), str(pins)],
                               check=floor != ONE_FLOOR, capture_output=True, text=True,
                               timeout=60)
            if r.returncode == 0:
                registered.append(floor)
            else:
                lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
                refused[floor] = lines[-1] if lines else f"bpftool exit {r.returncode}"
        yield registered, refused
    finally:
        leftovers.unpin_bench(pins)



def decisions(cc: str) -> int:
    """The instance's per-RTT decisions so far (its vk_stats, via vegasctl metrics)."""
    out = subprocess.run([str(paths.VEGASCTL), "metrics"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return sum(int(line.rsplit(" ", 1)[1]) for line in out.splitlines()
               if line.startswith(f'vegaskit_decisions_total{{controller="{cc}",'))


def timed_flow(lab, p, cc: str, port: int, seconds: float) -> dict:
    """One flow of cc with its decisions timed (`vegasctl trace --cost`): the tracer's
    line for cc. It is given a duration, so it ends by itself even if the bench dies."""
    tracer = subprocess.Popen([str(paths.VEGASCTL), "--json", "trace", "--cost",
                               "--controller", cc, "--duration", f"{seconds + 1:g}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.2)                 # registered before the flow's first decision
        one_flow(lab, p, cc, port, seconds)
        out, err = tracer.communicate(timeout=seconds + 30)
    finally:
        if tracer.poll() is None:
            tracer.kill()
            tracer.wait()
    if tracer.returncode != 0:
        raise RuntimeError(f"vegasctl trace --cost on {cc}: {err.strip() or tracer.returncode}")
    return json.loads(out)


def cost_round(cost: dict, lab, p, ccs: list[str], rnd: int, seconds: float, port: int) -> int:
    """A timed flow of each of ccs on path p, order reversed every other round, into
    cost: ns per decision, the flows record's share of it and a clock read's. The next
    free port."""
    for cc in (ccs if rnd % 2 == 0 else list(reversed(ccs))):
        port += 1
        line = timed_flow(lab, p, cc, port, seconds)
        if line["decisions_timed"]:
            cost["ns"][cc].append(line["ns_per_decision"])
            cost["record"][cc].append(line["record_ns_per_decision"])
            cost["clock"][cc].append(line["clock_read_ns"])
    return port


def cost_summary(cost: dict) -> dict:
    return {"ns_per_decision": {cc: summary(v) for cc, v in cost["ns"].items() if v},
            "record_ns": {cc: summary(v) for cc, v in cost["record"].items() if v},
            "clock_read_ns": {cc: summary(v) for cc, v in cost["clock"].items() if v}}


def measurement(ccs: list[str]) -> dict:
    """Empty lists, filled one value per round by measure_round."""
    return {"per_call": {cc: {} for cc in ccs}, "calls": {cc: {} for cc in ccs},
            "per_ack": {cc: [] for cc in ccs}, "per_call_of_deciding": {cc: [] for cc in ccs},
            "dec_per_ack": {cc: [] for cc in ccs if cc not in FLOORS},
            "dec_per_call_of_deciding": {cc: [] for cc in ccs if cc not in FLOORS},
            "ratio": {f: {cc: [] for cc in ccs} for f in RATIO_FLOORS}}


def measure_round(m: dict, lab, p, ccs: list[str], rnd: int, seconds: float, port: int) -> int:
    """One round on path p, into m: per call, per ACK, ACKs per decision and ratios to
    the floors; the order of ccs reversed every other round. The next free port."""
    progs = {cc: bpfstats.ops_programs(cc) for cc in ccs}
    this_round = {}
    for cc in (ccs if rnd % 2 == 0 else list(reversed(ccs))):
        port += 1
        before = bpfstats.run_stats(progs[cc])
        d0 = decisions(cc) if cc in m["dec_per_ack"] else 0
        flow = one_flow(lab, p, cc, port, seconds)
        after = bpfstats.run_stats(progs[cc])
        total_ns = 0
        for op, (ns1, n1) in after.items():
            ns0, n0 = before[op]
            total_ns += ns1 - ns0
            if n1 > n0:
                m["per_call"][cc].setdefault(op, []).append((ns1 - ns0) / (n1 - n0))
                m["calls"][cc].setdefault(op, []).append((n1 - n0) / max(flow.acks, 1))
        this_round[cc] = total_ns / max(flow.acks, 1)
        m["per_ack"][cc].append(this_round[cc])
        deciding = max((after[op][1] - before[op][1] for op in DECIDING_OPS if op in after),
                       default=0)
        m["per_call_of_deciding"][cc].append(total_ns / max(deciding, 1))
        if cc in m["dec_per_ack"]:
            made = decisions(cc) - d0
            m["dec_per_ack"][cc].append(made / max(flow.acks, 1))
            m["dec_per_call_of_deciding"][cc].append(made / max(deciding, 1))
    for f in RATIO_FLOORS:
        for cc in ccs:
            m["ratio"][f][cc].append(this_round[cc] / this_round[f])
    return port


def summarised(m: dict) -> dict:
    return {"per_call_ns": {cc: {op: summary(v) for op, v in ops.items()}
                            for cc, ops in m["per_call"].items()},
            # how often the kernel calls each op, per ACK: per ACK = sum of per call x this
            "calls_per_ack": {cc: {op: summary(v) for op, v in ops.items()}
                              for cc, ops in m["calls"].items()},
            "per_ack_ns": {cc: summary(v) for cc, v in m["per_ack"].items()},
            "decisions_per_ack": {cc: summary(v) for cc, v in m["dec_per_ack"].items()},
            "per_ack_ratio_to_floor": {cc: summary(v) for cc, v in m["ratio"][FLOOR].items()},
            "per_ack_ratio_to_rtt_floor": {cc: summary(v)
                                           for cc, v in m["ratio"][RTT_FLOOR].items()}}


def split(veth: dict, path: dict) -> dict:
    """All ops' run time per call of the deciding op (DECIDING_OPS), above the RTT floor's,
    = a + b x decisions per such call, solved round by round from the two paths
    (measured in the same round), whose decisions per call differ many times over: a,
    a call's cost above the floor without a decision; b, a decision's. Per call, not per
    ACK: how often the kernel calls the op per ACK differs between the paths, and would
    move the floor itself. Taken above the floor of the same round and path, so what the
    path changes for every controller alike (the floor's own shift, reported as the
    check of the fit's assumption) stays out of b."""
    ack, dec = {}, {}
    y, x = "per_call_of_deciding", "dec_per_call_of_deciding"
    fv, fp = veth[y][RTT_FLOOR], path[y][RTT_FLOOR]
    for cc in veth[x]:
        a_s, b_s = [], []
        for y1, x1, f1, y2, x2, f2 in zip(veth[y][cc], veth[x][cc], fv,
                                          path[y][cc], path[x][cc], fp):
            if abs(x1 - x2) < 1e-9:
                continue
            b = ((y1 - f1) - (y2 - f2)) / (x1 - x2)
            a_s.append(y1 - f1 - b * x1)
            b_s.append(b)
        if a_s:
            ack[cc], dec[cc] = summary(a_s), summary(b_s)
    shift = summary([b / a - 1 for a, b in zip(fv, fp)]) if fv and fp else None
    return {"split_unit": "call", "ack_ns_above_rtt_floor": ack, "decision_ns": dec,
            "rtt_floor_path_shift": shift}


def run(rounds: int, seconds: float, controllers: list[str] | None = None) -> dict:
    owner = leftovers.new_owner()
    ours = controllers or list(intf.CONTROLLERS)
    with floor_registered(owner) as (floors, refused), one_call_loaded(owner, ours) as ones, \
            bpfstats.enabled():
        ccs = floors + ours + ones
        veth, path = measurement(ccs), measurement(ccs)
        # a decision's code is the same in one call and in two: the two-call forms
        cost_v, cost_p = ({k: {cc: [] for cc in ours} for k in ("ns", "record", "clock")}
                          for _ in range(2))
        with Lab() as lv, Lab() as lp:
            pv, pp = veth_pair(lv), two_hosts(lp, PATH)
            port_v, port_p = 6400, 6600
            # the two paths alternate within each round, so the split pairs measurements
            # minutes apart at most; on the emulated 2 ms path, unlimited rate, one
            # decision per RTT is rarer per ACK, as on a live host's paths
            for rnd in range(rounds):
                port_v = measure_round(veth, lv, pv, ccs, rnd, seconds, port_v)
                port_p = measure_round(path, lp, pp, ccs, rnd, seconds, port_p)
                port_v = cost_round(cost_v, lv, pv, ours, rnd, seconds, port_v)
                port_p = cost_round(cost_p, lp, pp, ours, rnd, seconds, port_p)
    return {"floor": FLOOR, "rtt_floor": RTT_FLOOR,
            "one_floor": ONE_FLOOR if ONE_FLOOR in floors else None,
            "one_floor_refused": refused.get(ONE_FLOOR), "one_call": ones,
            "rounds": rounds, "seconds": seconds,
            **summarised(veth), "decision_cost": cost_summary(cost_v),
            "path": {"delay_ms": PATH.delay_us / 1000, **summarised(path),
                     "decision_cost": cost_summary(cost_p)},
            **split(veth, path)}
