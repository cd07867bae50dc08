"""The dumbbell of the papers (seed 000, Fig. 1): senders S1..Sn -> R1 -> R2 -> D1..Dn.

Every link is one linkemu process (testbed/linkemu.py): rate, one-way delay,
drop-tail buffer in packets and loss, in both directions, so ACKs cross the
reverse path too. Why userspace for rate and queue as well as delay: this
kernel has no netem, and a single process per link gives ns-2 link semantics
(queue -> serializer -> propagation) with an exact per-packet queue log, which
HTB + pfifo on a veth could only give by polling.

Addresses (198.18.0.0/15, DESIGN section 6): Si is 198.18.1.i, Di is 198.18.2.i;
R1 and R2 route host routes over the point-to-point TUN devices.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .linkemu import Link, LinkParams
from .netns import Lab, Netns


@dataclass(frozen=True)
class LinkSpec:
    """A link as a scenario gives it: the round-trip delay is split evenly."""
    rate_bps: int
    rtt_us: int
    buffer_pkts: int = 50
    loss: float = 0.0

    def params(self) -> LinkParams:
        return LinkParams(rate_bps=self.rate_bps, delay_us=self.rtt_us // 2,
                          limit_pkts=self.buffer_pkts, loss=self.loss)


def sender_addr(i: int) -> str:
    return f"198.18.1.{i}"


def receiver_addr(i: int) -> str:
    return f"198.18.2.{i}"


@dataclass
class Dumbbell:
    senders: list[Netns]
    receivers: list[Netns]
    r1: Netns
    r2: Netns
    bottleneck: Link
    access: list[Link]                  # Si - R1
    egress: list[Link]                  # R2 - Di
    links: dict[str, Link] = field(default_factory=dict)   # by name: bottleneck, s1.., d1..


def _host(ns: Netns, dev: str, addr: str) -> None:
    ns.run(["ip", "addr", "add", f"{addr}/32", "dev", dev])
    ns.run(["ip", "route", "add", "default", "dev", dev, "src", addr])


def _router(ns: Netns) -> None:
    ns.sysctl("net.ipv4.ip_forward", 1)
    ns.sysctl("net.ipv4.conf.all.rp_filter", 0)
    ns.sysctl("net.ipv4.conf.default.rp_filter", 0)


def build(lab: Lab, access: list[LinkSpec], bottleneck: LinkSpec, egress: list[LinkSpec],
          qlog: str | None = None) -> Dumbbell:
    """n = len(access) = len(egress) flows' worth of hosts; the bottleneck's queue log
    (both directions) goes to `qlog`. Spinning is off: up to 2n+1 emulators share two
    cores, and at the papers' rates a packet time is far above timer latency."""
    n = len(access)
    if n != len(egress) or not 1 <= n <= 200:
        raise ValueError("one access and one egress link per sender, 1..200 senders")
    r1, r2 = lab.netns("r1"), lab.netns("r2")
    for r in (r1, r2):
        _router(r)
    senders = [lab.netns(f"s{i}") for i in range(1, n + 1)]
    receivers = [lab.netns(f"d{i}") for i in range(1, n + 1)]
    for ns in senders + receivers + [r1, r2]:
        ns.sysctl("net.ipv6.conf.all.disable_ipv6", 1)

    bn = Link.start(lab, r1, "r1-r2", r2, "r2-r1", bottleneck.params(), qlog=qlog, max_spin_us=0)
    acc, egr = [], []
    for i in range(1, n + 1):
        a = Link.start(lab, senders[i - 1], "s-r1", r1, f"r1-s{i}", access[i - 1].params(),
                       max_spin_us=0)
        e = Link.start(lab, r2, f"r2-d{i}", receivers[i - 1], "d-r2", egress[i - 1].params(),
                       max_spin_us=0)
        _host(senders[i - 1], "s-r1", sender_addr(i))
        _host(receivers[i - 1], "d-r2", receiver_addr(i))
        r1.run(["ip", "route", "add", f"{sender_addr(i)}/32", "dev", f"r1-s{i}"])
        r1.run(["ip", "route", "add", f"{receiver_addr(i)}/32", "dev", "r1-r2"])
        r2.run(["ip", "route", "add", f"{receiver_addr(i)}/32", "dev", f"r2-d{i}"])
        r2.run(["ip", "route", "add", f"{sender_addr(i)}/32", "dev", "r2-r1"])
        acc.append(a)
        egr.append(e)
    links = {"bottleneck": bn}
    links.update({f"s{i + 1}": l for i, l in enumerate(acc)})
    links.update({f"d{i + 1}": l for i, l in enumerate(egr)})
    return Dumbbell(senders, receivers, r1, r2, bn, acc, egr, links)
