"""The testbed's topologies, and the one address plan they all use.

Addresses come from the benchmarking range 198.18.0.0/15 (docs/DESIGN.md §6):
sender i is 198.18.1.i, receiver i is 198.18.2.i, and a router's interface
toward either side is .254 of that side. So a flow's addresses say which end is
which, whatever topology carried it.

- dumbbell(): the papers' topology (seed 000, Fig. 1): senders S1..Sn -> R1 ->
  R2 -> receivers D1..Dn, every link a linkemu in both directions, so ACKs
  cross the reverse path too (or, with direct edges, the bottleneck only). Why userspace for rate and queue as well as
  delay: no netem on the kernels we target, and one process per link gives ns-2
  link semantics (queue -> serializer -> propagation) with an exact per-packet
  queue log.
- two_hosts(): sender 1 and receiver 1 joined by one linkemu link (calibration).
- veth_pair(): sender 1 and receiver 1 on a plain veth (full-speed benchmarks).
- htb_path(): sender -> router -> receiver over veths, the bottleneck an HTB +
  pfifo on the router's egress. The queue sits on the router, not on the
  sender: on the sender's own device TCP Small Queues would cap it (skbs
  there still count against the socket).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .linkemu import Link, LinkParams
from .netns import Lab, Netns
from .shaping import shape


def sender_addr(i: int = 1) -> str:
    return f"198.18.1.{i}"


def receiver_addr(i: int = 1) -> str:
    return f"198.18.2.{i}"


SENDER_SIDE_ROUTER = "198.18.1.254"
RECEIVER_SIDE_ROUTER = "198.18.2.254"


def _no_ipv6(*nss: Netns) -> None:
    """Nothing but the run's own traffic (no router solicitations, no MLD) on its links."""
    for ns in nss:
        ns.sysctl("net.ipv6.conf.all.disable_ipv6", 1)
        ns.sysctl("net.ipv6.conf.default.disable_ipv6", 1)


def _router(ns: Netns) -> None:
    ns.sysctl("net.ipv4.ip_forward", 1)
    ns.sysctl("net.ipv4.conf.all.rp_filter", 0)
    ns.sysctl("net.ipv4.conf.default.rp_filter", 0)


def _direct(lab: Lab, host: Netns, host_dev: str, router: Netns, router_dev: str) -> None:
    """A host joined to a router by a veth (offloads off, so segments cross it as
    they would a TUN). The host's routes name the device, not a gateway, as on
    a TUN: the router answers ARP for every address behind it (proxy ARP)."""
    lab.veth(host, host_dev, router, router_dev)
    router.sysctl(f"net.ipv4.conf.{router_dev}.proxy_arp", 1)


def _point_to_point(ns: Netns, dev: str, addr: str, peer: str) -> None:
    ns.run(["ip", "addr", "add", addr, "peer", f"{peer}/32", "dev", dev])


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


def dumbbell(lab: Lab, access: list[LinkParams], bottleneck: LinkParams,
             egress: list[LinkParams], qlogs: dict[str, str] | None = None,
             seed: int = 1, ack_every: list[bool] | None = None,
             direct_edges: bool = False) -> Dumbbell:
    """n = len(access) = len(egress) flows' worth of hosts; each link named in
    `qlogs` (bottleneck, sN, dN) logs its queue, both directions, to that file.
    Every link draws its random losses from `seed` (and its own index). Spinning
    is off: up to 2n+1 emulators share two cores, and at the papers' rates a
    packet time is far above timer latency. A receiver i with ack_every[i-1]
    acknowledges every segment (its route carries `quickack 1`: no delayed
    ACKs), as ns-2's TCPSink does.

    direct_edges: Si-R1 and R2-Di are plain veths (access and egress ignored)
    and the bottleneck, the one emulator left, spins (docs/DESIGN.md §6.3)."""
    qlogs = qlogs or {}
    n = len(access)
    if n != len(egress) or not 1 <= n <= 200:
        raise ValueError("one access and one egress link per sender, 1..200 senders")
    r1, r2 = lab.netns("r1"), lab.netns("r2")
    senders = [lab.netns(f"s{i}") for i in range(1, n + 1)]
    receivers = [lab.netns(f"d{i}") for i in range(1, n + 1)]
    _no_ipv6(*senders, *receivers, r1, r2)
    for r in (r1, r2):
        _router(r)

    bn = Link.start(lab, r1, "r1-r2", r2, "r2-r1", bottleneck, qlog=qlogs.get("bottleneck"),
                    seed=seed, max_spin_us=None if direct_edges else 0)
    acc, egr = [], []
    for i in range(1, n + 1):
        s, d = senders[i - 1], receivers[i - 1]
        if direct_edges:
            _direct(lab, s, "s-r1", r1, f"r1-s{i}")
            _direct(lab, d, "d-r2", r2, f"r2-d{i}")
        else:
            acc.append(Link.start(lab, s, "s-r1", r1, f"r1-s{i}", access[i - 1],
                                  qlog=qlogs.get(f"s{i}"), seed=seed + 1000 * i, max_spin_us=0))
            egr.append(Link.start(lab, r2, f"r2-d{i}", d, "d-r2", egress[i - 1],
                                  qlog=qlogs.get(f"d{i}"), seed=seed + 1000 * i + 500,
                                  max_spin_us=0))
        for ns, dev, addr in ((s, "s-r1", sender_addr(i)), (d, "d-r2", receiver_addr(i))):
            ns.run(["ip", "addr", "add", f"{addr}/32", "dev", dev])
            quick = ["quickack", "1"] if ns is d and ack_every and ack_every[i - 1] else []
            ns.run(["ip", "route", "add", "default", "dev", dev, "src", addr, *quick])
        r1.run(["ip", "route", "add", f"{sender_addr(i)}/32", "dev", f"r1-s{i}"])
        r1.run(["ip", "route", "add", f"{receiver_addr(i)}/32", "dev", "r1-r2"])
        r2.run(["ip", "route", "add", f"{receiver_addr(i)}/32", "dev", f"r2-d{i}"])
        r2.run(["ip", "route", "add", f"{sender_addr(i)}/32", "dev", "r2-r1"])
    links = {"bottleneck": bn}
    links.update({f"s{i + 1}": l for i, l in enumerate(acc)})
    links.update({f"d{i + 1}": l for i, l in enumerate(egr)})
    return Dumbbell(senders, receivers, r1, r2, bn, acc, egr, links)


@dataclass
class TwoHosts:
    """Sender a and receiver b, directly joined (by a linkemu link, or a veth)."""
    a: Netns
    b: Netns
    dev_a: str
    dev_b: str
    link: Link | None = None
    addr_a: str = sender_addr()
    addr_b: str = receiver_addr()


def two_hosts(lab: Lab, ab: LinkParams, ba: LinkParams | None = None, **link_kw) -> TwoHosts:
    """a's emu-a and b's emu-b joined by one linkemu link (`ba` defaults to `ab`)."""
    a, b = lab.netns("a"), lab.netns("b")
    _no_ipv6(a, b)
    link = Link.start(lab, a, "emu-a", b, "emu-b", ab, ba, **link_kw)
    path = TwoHosts(a, b, "emu-a", "emu-b", link)
    _point_to_point(a, path.dev_a, path.addr_a, path.addr_b)
    _point_to_point(b, path.dev_b, path.addr_b, path.addr_a)
    return path


def veth_pair(lab: Lab, offloads: bool = False) -> TwoHosts:
    """a and b on a plain veth, offloads off unless asked (Lab.veth)."""
    a, b = lab.netns("a"), lab.netns("b")
    lab.veth(a, "va", b, "vb", offloads=offloads)
    path = TwoHosts(a, b, "va", "vb")
    _point_to_point(a, path.dev_a, path.addr_a, path.addr_b)
    _point_to_point(b, path.dev_b, path.addr_b, path.addr_a)
    return path


@dataclass
class HtbPath:
    sender: Netns
    router: Netns
    receiver: Netns
    bottleneck_dev: str = "r-d"


def htb_path(lab: Lab, rate_bps: int, limit_pkts: int) -> HtbPath:
    """Sender -> router -> receiver; the router's egress toward the receiver is
    limited to rate_bps with a drop-tail pfifo of limit_pkts. No propagation
    delay: queueing delay alone exercises Vegas."""
    s, r, d = lab.netns("s"), lab.netns("r"), lab.netns("d")
    lab.veth(s, "s-r", r, "r-s")
    lab.veth(r, "r-d", d, "d-r")
    s.run(["ip", "addr", "add", f"{sender_addr()}/24", "dev", "s-r"])
    r.run(["ip", "addr", "add", f"{SENDER_SIDE_ROUTER}/24", "dev", "r-s"])
    r.run(["ip", "addr", "add", f"{RECEIVER_SIDE_ROUTER}/24", "dev", "r-d"])
    d.run(["ip", "addr", "add", f"{receiver_addr()}/24", "dev", "d-r"])
    s.run(["ip", "route", "add", "default", "via", SENDER_SIDE_ROUTER])
    d.run(["ip", "route", "add", "default", "via", RECEIVER_SIDE_ROUTER])
    r.sysctl("net.ipv4.ip_forward", 1)
    shape(r, "r-d", rate_bps, limit_pkts)
    return HtbPath(s, r, d)
