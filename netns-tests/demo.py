"""`make demo`: load bpf_vegas, push real traffic through a namespace bottleneck,
and print what happened beside reno in the same setup.

Partial: this is the foundation demo (issue 2); the dumbbell demo with several
variants sharing a bottleneck replaces it when the testbed runner lands.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "netns-tests"), str(ROOT / "tools")]

from testbed.single_flow import single_flow  # noqa: E402

VEGASCTL = str(ROOT / "build" / "vegasctl")
RATE, BUFFER, SECONDS = 20_000_000, 100, 8


def summarize(name: str, run) -> str:
    qs = [q for _, q in run.queue.between(2, SECONDS)]
    qs_sorted = sorted(qs)
    p95 = qs_sorted[max(0, int(0.95 * len(qs_sorted)) - 1)]
    return (f"{name:<10} {run.flow.bps_received / 1e6:8.2f} {run.flow.retransmits:7d} "
            f"{statistics.mean(qs):9.1f} {p95:8d}")


def main() -> int:
    print(f"bottleneck: {RATE / 1e6:.0f} Mbit/s, drop-tail {BUFFER} packets, "
          f"{SECONDS} s per flow, namespaces sender -> router -> receiver\n")
    subprocess.run([VEGASCTL, "load", "vegas"], check=True)
    try:
        subprocess.run([VEGASCTL, "list"], check=True)
        rows = [summarize("bpf_vegas", single_flow("bpf_vegas", RATE, BUFFER, SECONDS))]
    finally:
        subprocess.run([VEGASCTL, "unload", "bpf_vegas"], check=True)
    rows.append(summarize("reno", single_flow("reno", RATE, BUFFER, SECONDS)))
    print(f"\n{'flow':<10} {'Mbit/s':>8} {'retx':>7} {'queue':>9} {'q p95':>8}")
    print(f"{'':<10} {'':>8} {'':>7} {'mean pkt':>9} {'pkt':>8}")
    print("\n".join(rows))
    print("\nVegas keeps a queue of a few packets (alpha..beta) with no loss;"
          " reno fills the buffer until it overflows.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
