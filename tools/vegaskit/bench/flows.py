"""One flow of a bench stage: iperf3 between two namespaces, with the host's
CPU and the sender's received segments counted around it."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from vegaskit import cpustat
from vegaskit.testbed import iperf
from vegaskit.testbed.netns import Lab, Netns
from vegaskit.testbed.topology import TwoHosts


def in_segs(ns: Netns) -> int:
    """Tcp InSegs of a namespace (/proc/net/snmp, which is per namespace)."""
    lines = [l.split() for l in ns.run(["cat", "/proc/net/snmp"]).splitlines() if l.startswith("Tcp:")]
    return int(lines[1][lines[0].index("InSegs")])


@dataclass
class Flow:
    bytes_per_s: float
    cpu_s_per_gb: float
    acks: int               # segments the sender received: its ACKs
    gb: float               # gigabytes the receiver got
    cwnd_kb: float = 0.0    # the sender's mean window over iperf3's intervals (tcp_info)
    srtt_us: float = 0.0    # and its mean smoothed RTT: what a delay-based window reacts to


def one_flow(lab: Lab, p: TwoHosts, cc: str, port: int, seconds: float) -> Flow:
    iperf.server(lab, p.b, port)
    segs0, j0, t0 = in_segs(p.a), cpustat.busy_s(), time.monotonic()
    r = iperf.wait(iperf.client(lab, p.a, p.addr_b, port, cc, seconds), cc, seconds + 30)
    cpu_s = cpustat.busy_s() - j0
    acks = in_segs(p.a) - segs0
    gb = r.bytes_received / 1e9
    ivs = r.intervals
    return Flow(r.bytes_received / max(time.monotonic() - t0, 1e-9), cpu_s / gb, acks, gb,
                statistics.fmean(iv["snd_cwnd"] for iv in ivs) / 1e3 if ivs else 0.0,
                statistics.fmean(iv["rtt_us"] for iv in ivs) if ivs else 0.0)
