"""The smallest testbed: sender -- router -- receiver, bottleneck on the router.

The bottleneck sits on the router's egress toward the receiver, not on the
sender: a queue on the sender's own device would be capped by TCP Small Queues
(skbs there still count against the socket), while on the router they don't.
No propagation delay: queueing delay alone exercises Vegas (issue 2).
"""
from __future__ import annotations

from dataclasses import dataclass

from .netns import Lab, Netns
from .shaping import shape

SENDER_ADDR = "198.18.1.1"
RECEIVER_ADDR = "198.18.2.1"


@dataclass
class Path:
    sender: Netns
    router: Netns
    receiver: Netns
    bottleneck_dev: str = "r-d"


def bottleneck_path(lab: Lab, rate_bps: int, limit_pkts: int) -> Path:
    s, r, d = lab.netns("s"), lab.netns("r"), lab.netns("d")
    lab.veth(s, "s-r", r, "r-s")
    lab.veth(r, "r-d", d, "d-r")
    s.run(["ip", "addr", "add", f"{SENDER_ADDR}/24", "dev", "s-r"])
    r.run(["ip", "addr", "add", "198.18.1.254/24", "dev", "r-s"])
    r.run(["ip", "addr", "add", "198.18.2.254/24", "dev", "r-d"])
    d.run(["ip", "addr", "add", f"{RECEIVER_ADDR}/24", "dev", "d-r"])
    s.run(["ip", "route", "add", "default", "via", "198.18.1.254"])
    d.run(["ip", "route", "add", "default", "via", "198.18.2.254"])
    r.sysctl("net.ipv4.ip_forward", 1)
    shape(r, "r-d", rate_bps, limit_pkts)
    return Path(s, r, d)
