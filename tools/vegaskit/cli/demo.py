"""`make demo`: three controllers share a namespace dumbbell; print what happened.

bpf_vegas starts alone, bpf_vegas_a joins at 5 s and reno at 10 s on a
10 Mbit/s, 40 ms, 50-packet bottleneck (netns-tests/scenarios/demo.toml), 40 s in all.
The controllers are loaded for the run and unloaded after it; the plots and
CSVs go to build/demo/.
"""
from __future__ import annotations

import sys

from vegaskit import paths
from vegaskit.cli import guarded, testbed_ready
from vegaskit.cliargs import OneLineParser, parse
from vegaskit.proc import sigterm_unwinds
from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario, ScenarioError


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.demo", description=__doc__.split("\n")[0])
    if parse(ap, argv) is None:
        return 2
    if rc := testbed_ready("demo"):
        return rc
    try:
        s = Scenario.load(paths.SCENARIOS / "demo.toml")
        run = s.run("demo", "demo")
    except ScenarioError as e:
        print(f"demo: {e}", file=sys.stderr)
        return 2
    out = paths.BUILD / "demo"
    print(f"{s.title}; {run.duration:.0f} s, flows join at 0, 5 and 10 s\n", flush=True)
    sigterm_unwinds()                   # make killed: the lab is removed as on Ctrl-C
    sm, rc = guarded("demo", lambda: runner.execute(run, out))
    if rc:
        return rc
    print(f"{'flow':<16} {'Mbit/s (2nd half)':>18} {'Mbit/s (mean)':>14} {'retx':>6} {'RTT p95 ms':>11}")
    for fl in sm["flows"]:
        print(f"{fl['label']:<16} {fl['second_half_bps'] / 1e6:18.3f} {fl['avg_bps'] / 1e6:14.3f} "
              f"{fl['retransmits']:6d} {fl['rtt_p95_ms']:11.1f}")
    ratios = ", ".join(f"{k} {v:.2f}" for k, v in sm["inter_protocol_ratio"].items())
    print(f"\nJain's index {sm['jain']:.3f}; inter-protocol ratios: {ratios}")
    print(f"bottleneck queue: mean {sm['queue_mean_pkts']:.1f} packets, p95 {sm['queue_p95_pkts']}, "
          f"drops {sm['bottleneck_drops']}; utilisation {sm['utilisation']:.1%}")
    print(f"\nplots and CSVs: {out}/ (throughput.png, queue.png, trace.png)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
