"""What every testbed run must leave behind, whichever test ran it: its files,
a window and bytes for each controller, decisions traced for ours, and a
utilisation the emulator could have delivered."""
from __future__ import annotations

from pathlib import Path


def assert_run_outputs(name: str, run_name: str, sm: dict, d: Path) -> None:
    for f in ("flows.csv", "queue.csv", "late.csv", "summary.json", "throughput.png", "queue.png"):
        assert (d / f).stat().st_size > 0, f"{name}/{run_name}: {f} missing"
    # the emulator's late releases are timed, and the flows' first seconds summarised
    assert sm["emulator_late_early_max_ms"] <= sm["emulator_late_max_ms"], (name, run_name)
    assert sm["flows"], f"{name}/{run_name}: the summary lists no flow"
    for fl in sm["flows"]:
        # tcp_info's window, sampled over the flow's second half
        assert fl["cwnd_median_kb"] and fl["cwnd_median_kb"] > 0, (name, run_name)
        # the window check ran on what the sender reported; the kernel's own loss-based
        # controllers never met the defect it looks for (docs/DESIGN.md §10.2), so
        # their windows must lie under their path's ceiling, or it is set too low
        assert 0 < fl["cwnd_max_bytes"] and fl["window_ceiling_bytes"] > 0, (name, run_name)
        if fl["cc"] in ("reno", "cubic"):
            assert fl["cwnd_max_bytes"] <= fl["window_ceiling_bytes"], (name, run_name, fl)
        if fl["bytes"] == 0:
            # Lock-out, not a broken testbed: a flow that joins a full
            # drop-tail queue can lose its SYN (no RTT sample then, so
            # Linux falls back to a 3 s RTO, and after two losses starts
            # at cwnd 1) and then its first segments; RTO backoff
            # (3 + 6 + 12 s) outlasts what a CI profile leaves a late
            # flow (mixed_3v3: S6 joins 1 Mbit/s and a 50-packet queue
            # that two reno flows keep full, with 15 s left; the full
            # run saw S6's data connection open 4.8 s late). The sender
            # must show those losses.
            assert fl["retransmits"] > 0, f"{name}/{run_name}: {fl['label']} carried nothing"
            print(f"{name}/{run_name}: {fl['label']} locked out "
                  f"({fl['retransmits']} retransmissions, nothing delivered)")
    assert isinstance(sm["impossible_windows"], list)
    for cc in {fl["cc"] for fl in sm["flows"]}:
        assert any(fl["bytes"] > 0 for fl in sm["flows"] if fl["cc"] == cc), \
            f"{name}/{run_name}: no {cc} flow carried anything"
    ours = [fl for fl in sm["flows"] if fl["cc"].startswith(("bpf_", "vk_"))]
    if ours:
        trace = (d / "trace.csv").read_text().splitlines()[1:]
        # at 250 kbit/s with a standing queue a round is ~0.7 s: few decisions in CI
        assert any(",decision," in r for r in trace), f"{name}/{run_name}: no decisions traced"
    if sm["utilisation"] is not None:
        # the emulator cannot send faster than its rate; 1% for the log's timing
        assert 0 < sm["utilisation"] <= 1.01, sm["utilisation"]
