"""One iperf3 flow through the sender-router-receiver bottleneck, queue watched."""
from __future__ import annotations

import threading
from dataclasses import dataclass

from . import iperf
from .netns import Lab
from .path import RECEIVER_ADDR, bottleneck_path
from .shaping import QueueMonitor


@dataclass
class Run:
    flow: iperf.FlowResult
    queue: QueueMonitor
    drops: int


def single_flow(cc: str, rate_bps: int, limit_pkts: int, seconds: float,
                at: list[tuple[float, callable]] = ()) -> Run:
    """Run one flow; each (t, fn) in `at` is called t seconds into the flow."""
    with Lab() as lab:
        path = bottleneck_path(lab, rate_bps, limit_pkts)
        iperf.server(lab, path.receiver, 5201)
        with QueueMonitor(path.router, path.bottleneck_dev) as qm:
            p = iperf.client(lab, path.sender, RECEIVER_ADDR, 5201, cc, seconds)
            timers = [threading.Timer(t, fn) for t, fn in at]
            for t in timers:
                t.start()
            try:
                flow = iperf.wait(p, cc, timeout=seconds + 30)
            finally:
                for t in timers:
                    t.cancel()
        drops = qm.samples[-1][2] if qm.samples else 0
        return Run(flow, qm, drops)
