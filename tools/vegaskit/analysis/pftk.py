"""The Padhye-Firoiu-Towsley-Kurose (PFTK) model of a TCP Reno bulk transfer.

J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Throughput: A Simple Model
and its Empirical Validation", SIGCOMM 1998, equation (33), the approximate full model:

    B(p) = min( Wmax / R,  1 / ( R sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2) ) )

in packets per second. It is the control of the model validation (docs/DESIGN.md §8):
Linux reno through the same measurement pipeline as Vegas. If reno also misses its own
model by tens of percent, the pipeline is at fault, not the Vegas model.

p is the same quantity as the Vegas model's: loss indications (episodes) per packet sent.
b is the packets acknowledged per ACK in the window-growth rule. Linux counts acknowledged
segments (tcp_cong_avoid_ai adds the segments an ACK covers), so delayed ACKs do not slow
its growth: b = 1 is Linux's, b = 2 is the paper's delayed-ACK receiver.
"""
from __future__ import annotations

import math


def throughput(p: float, rtt: float, t0: float, wmax: float, b: float = 1.0) -> float:
    """Equation (33): packets per second sent by a Reno flow with loss-indication rate p."""
    for name, v in (("rtt", rtt), ("t0", t0), ("wmax", wmax), ("b", b)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    if not (isinstance(p, (int, float)) and 0 <= p < 1):
        raise ValueError(f"p must be in [0, 1), got {p!r}")
    if p == 0:
        return wmax / rtt
    timeouts = t0 * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p)
    return min(wmax / rtt, 1 / (rtt * math.sqrt(2 * b * p / 3) + timeouts))
