"""Stage: sender CPU per GB of each of our controllers against the kernel's reno
and cubic, one full-speed flow each over a veth with offloads off, every
controller once a round, the order reversed every other round (docs/DESIGN.md
§9.1). CPU per GB counts everything the host did (user, system, softirq) while
the flow ran, so it mixes a controller's code with its window behaviour; the
per-call stage (opcost) has the code alone, and the arm CODE_ONLY here separates
the two in CPU per GB: bpf_vegas's code with thresholds no diff reaches, so that
its window grows as Reno's does (+1 a round, halved on a loss). Ratios to reno and
cubic are taken within each round; every figure is a median with its interval over
rounds."""
from __future__ import annotations

from vegaskit import intf
from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import leftovers
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair

from . import instances
from .flows import one_flow

KERNEL = ["reno", "cubic"]
# bpf_vegas's code, Reno's window: diff never exceeds alpha, beta nor gamma, so every
# decision is +1 and slow start ends only at a loss, as Reno's does
CODE_ONLY = "vk_vegas_aimd"
HUGE = 1 << 30
CODE_ONLY_SPEC = ["vegas", f"alpha={HUGE}", f"beta={HUGE}", f"gamma={HUGE}"]


def run(rounds: int, seconds: float, ours: list[str] | None = None) -> dict:
    with instances.loaded(leftovers.new_owner(), {CODE_ONLY: CODE_ONLY_SPEC}) as extra:
        ccs = KERNEL + (ours or list(intf.CONTROLLERS)) + extra
        cpu = {cc: [] for cc in ccs}
        rate = {cc: [] for cc in ccs}
        vs = {k: {cc: [] for cc in ccs} for k in KERNEL}
        with Lab() as lab:
            p = veth_pair(lab)
            port = 6000
            for rnd in range(rounds):
                this = {}
                for cc in (ccs if rnd % 2 == 0 else list(reversed(ccs))):
                    port += 1
                    f = one_flow(lab, p, cc, port, seconds)
                    this[cc] = f.cpu_s_per_gb
                    cpu[cc].append(f.cpu_s_per_gb)
                    rate[cc].append(f.bytes_per_s * 8 / 1e9)
                for k in KERNEL:
                    for cc in ccs:
                        vs[k][cc].append(this[cc] / this[k])
    return {"rounds": rounds, "seconds": seconds, "code_only": CODE_ONLY,
            "cpu_s_per_gb": {cc: summary(v) for cc, v in cpu.items()},
            "gbit_s": {cc: summary(v) for cc, v in rate.items()},
            "ratio_to_reno": {cc: summary(v) for cc, v in vs["reno"].items()},
            "ratio_to_cubic": {cc: summary(v) for cc, v in vs["cubic"].items()}}
