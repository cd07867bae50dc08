"""Stage: how exactly linkemu delays each packet, how fast it can go, and what
that costs (docs/DESIGN.md §6.2, §9.1).

Delay error: numbered, timestamped UDP datagrams (testbed/udpprobe) cross a
link of 20 ms at 10, 100 and 1,000 Mbit/s with room in its queue, sent at a
fifth of the rate; each datagram's one-way delay (one CLOCK_MONOTONIC for every
namespace) against a perfect link's is its error: the perfect link serializes
the datagrams in order at its rate (so the sender's catch-up bursts queue there
too) and adds the configured 20 ms. Arrival is when the receiving stack got the
datagram (its SO_TIMESTAMPNS), so the receiving process's own wake-up, which is
not the emulator's, stays out; the error at the application, wake-up included,
is reported beside it. The same datagrams over a plain veth give the host
stacks' own share. Per round: p50, p99 and max; the figure is their median with
its interval over rounds.
Every scheduling policy (decision 42): each round measures every rate under
the testbed's policy (fifo_priority(), fifo_poll_pct()) and under the others the
host allows: the ordinary policy, SCHED_FIFO with an ordinary busy-poll and
SCHED_FIFO with its busy-poll under it on a budget (linkemu --fifo-poll), back to
back in an order alternated by round, so drift in the host falls on all.
Of that error, the read: linkemu stamps each packet just after its own read() off the
sending side's TUN (its queue log's enq), so that stamp less the datagram's send time
is how long the packet waited for the emulator to wake and read it, which the release,
timed from that stamp, then carries.
Maximum rate: cubic through an unlimited link; CPU per Gbit/s is linkemu's own
process time (/proc/PID/stat) over what it carried.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import iperf
from vegaskit.testbed.linkemu import (FIFO_PRIORITY, LinkParams, fifo_allowed, fifo_poll_pct,
                                      fifo_priority, read_qlog)
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.probes import probe_recv, probe_result, probe_send
from vegaskit.testbed.topology import two_hosts, veth_pair

RATES = (10_000_000, 100_000_000, 1_000_000_000)
DELAY_US = 20_000
PAYLOAD = 1000                   # UDP payload bytes
IP_BYTES = PAYLOAD + 8 + 20
LOAD = 0.2                       # of the link's rate
PORT = 9300
POLL_PCT = 10                    # the --fifo-poll budget measured where the testbed has none



def _pctl(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def one_way(lab: Lab, p, pps: float, seconds: float) -> dict:
    count = max(50, int(pps * seconds))
    rx = probe_recv(lab, p.b, PORT, idle=1.0, max_wait=seconds + 30)
    tx = probe_send(lab, p.a, p.addr_b, PORT, count, pps, PAYLOAD)
    probe_result(tx, seconds + 30)
    got = probe_result(rx, seconds + 35)
    if None in got["kernel_ns"]:
        raise RuntimeError(f"{got['kernel_ns'].count(None)} of {len(got['seq'])} datagrams "
                           "came without the kernel's arrival time (SO_TIMESTAMPNS)")
    return got


def emulator_error_us(r: dict, rate: int, arrival: str = "kernel_ns") -> list[float]:
    """Each datagram's arrival against what a perfect link would give: it waits for
    the ones sent before it to be serialized (the sender's bursts queue, by design),
    then its own serialization, then the delay. The rest is linkemu's error (and the
    stacks': see the veth figures)."""
    ser_ns = IP_BYTES * 8 / rate * 1e9
    order = sorted(range(len(r["seq"])), key=lambda i: r["seq"][i])
    free_ns, out = 0.0, []
    for i in order:
        done = max(r["send_ns"][i], free_ns) + ser_ns
        free_ns = done
        out.append((r[arrival][i] - done - DELAY_US * 1000) / 1000)
    return out


def read_wait_us(r: dict, qlog: Path) -> list[float] | None:
    """How long each datagram waited before linkemu read it: its enq stamp in the queue
    log against its send time. None when the log's a->b arrivals are not exactly the
    datagrams (something else crossed the link), which would misalign the two."""
    enq = [e.t_us for e in read_qlog(qlog) if e.dir == "ab" and e.event == "enq"]
    sent = [r["send_ns"][i] for i in sorted(range(len(r["seq"])), key=lambda i: r["seq"][i])]
    if len(enq) != len(sent) or sorted(r["seq"]) != list(range(len(sent))):
        return None
    return [t - s / 1000 for t, s in zip(enq, sent)]


def cpu_ticks(pid: int) -> int:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])      # utime + stime


def _quantiles() -> dict[str, list[float]]:
    return {"p50": [], "p99": [], "max": []}


def _add(out: dict[str, list[float]], xs: list[float]) -> None:
    out["p50"].append(_pctl(xs, 0.5))
    out["p99"].append(_pctl(xs, 0.99))
    out["max"].append(max(xs))


def policies() -> list[tuple[int, int]]:
    """(SCHED_FIFO priority, --fifo-poll budget) of each policy measured, the testbed's
    first; (0, 0) is the ordinary policy."""
    ours = (fifo_priority(), fifo_poll_pct() if fifo_priority() else 0)
    if not ours[0] and not fifo_allowed():
        return [ours]
    prio = ours[0] or FIFO_PRIORITY
    every = [(0, 0), (prio, 0), (prio, ours[1] or POLL_PCT)]
    return [ours] + [p for p in every if p != ours]


def policy_name(x: dict) -> str:
    """A policy's name in the emulator's table (decision 42)."""
    if not x.get("fifo"):
        return "ordinary"
    poll = (f", polling under it up to {x['fifo_poll']}% of a core" if x.get("fifo_poll")
            else ", polling ordinary" if "fifo_poll" in x else "")
    return f"SCHED_FIFO {x['fifo']}{poll}"


def measured(e: dict) -> list[dict]:
    """The policies the stage measured, the testbed's first. Older runs hold one other
    (other_policy) or none: the ordinary one unless recorded."""
    return [e] + e.get("other_policies", [e["other_policy"]] if "other_policy" in e else [])


def run(rounds: int, seconds: float, rates: tuple[int, ...] = RATES) -> dict:
    pols = policies()
    err = {f: {r: _quantiles() for r in rates} for f in pols}
    app = {f: {r: _quantiles() for r in rates} for f in pols}
    read = {f: {r: _quantiles() for r in rates} for f in pols}
    base = {r: _quantiles() for r in rates}
    for rnd in range(rounds):
        for rate in (rates if rnd % 2 == 0 else tuple(reversed(rates))):
            pps = LOAD * rate / (IP_BYTES * 8)
            for pol in (pols if rnd % 2 == 0 else pols[::-1]):
                with Lab() as lab, tempfile.TemporaryDirectory() as tmp:
                    qlog = Path(tmp) / "q.csv"
                    p = two_hosts(lab, LinkParams(rate_bps=rate, delay_us=DELAY_US,
                                                  limit_pkts=10_000), fifo=pol[0],
                                  fifo_poll=pol[1], qlog=qlog)
                    got = one_way(lab, p, pps, seconds)
                    p.link.stop()                   # flushes the queue log
                    _add(err[pol][rate], emulator_error_us(got, rate))
                    _add(app[pol][rate], emulator_error_us(got, rate, "recv_ns"))
                    waits = read_wait_us(got, qlog)
                    if waits:
                        _add(read[pol][rate], waits)
            with Lab() as lab:
                r = one_way(lab, veth_pair(lab), pps, seconds)
                _add(base[rate], [(t1 - t0) / 1000 for t0, t1 in zip(r["send_ns"], r["kernel_ns"])])
    # the highest rate, and linkemu's CPU for it
    gbit, cpu_per_gbit = [], []
    for _ in range(rounds):
        with Lab() as lab:
            p = two_hosts(lab, LinkParams(rate_bps=0, delay_us=0, limit_pkts=1000))
            iperf.server(lab, p.b, 5201)
            pid = p.link.proc.pid
            c0 = cpu_ticks(pid)
            res = iperf.wait(iperf.client(lab, p.a, p.addr_b, 5201, "cubic", seconds), "cubic",
                             seconds + 60)
            cpu_s = (cpu_ticks(pid) - c0) / os.sysconf("SC_CLK_TCK")
            gbit.append(res.bps_received / 1e9)
            # CPU seconds per gigabit carried: cores busy per Gbit/s
            cpu_per_gbit.append(cpu_s / (res.bytes_received * 8 / 1e9))
    return {"rounds": rounds, "seconds": seconds, "delay_ms": DELAY_US / 1000, "load": LOAD,
            "payload": PAYLOAD, "fifo": pols[0][0], "fifo_poll": pols[0][1],
            **_errors(err[pols[0]], app[pols[0]], read[pols[0]]),
            "other_policies": [{"fifo": f, "fifo_poll": fp,
                                **_errors(err[(f, fp)], app[(f, fp)], read[(f, fp)])}
                               for f, fp in pols[1:]],
            "veth_us": _summaries(base),
            "max_gbit_s": summary(gbit), "cpu_s_per_gbit": summary(cpu_per_gbit)}


def _summaries(per_rate: dict) -> dict:
    return {r: {k: summary(v) for k, v in d.items()} for r, d in per_rate.items() if d["p50"]}


def _errors(err: dict, app: dict, read: dict) -> dict:
    return {"error_us": _summaries(err), "app_error_us": _summaries(app),
            "read_wait_us": _summaries(read)}
