"""vegas_plus's third sign, the rise (`rise`, docs/DESIGN.md §3.11), replayed on traced
runs: where it would have fired, and where the run's own detectors did.

    python -m vegaskit.analysis.riseruns results/vegas_plus [--rise 25] [--rate-epoch 64]
                                         [--rounds 3]

The rule as vk_plus_rising and vk_plus_decide (bpf/vk_core.h) apply it, on each flow's
delay-mode rounds in the trace (the band's `inc`, `dec`, `hold`, and the round that left
delay mode, `to_compete*` or `recall`; slow start's rounds and those with too few
samples do not count, as in the controller): the low is the least round RTT of this
rate epoch and the last, an epoch being --rate-epoch such rounds; a round whose RTT
stands --rise percent or more above the low is a sign, and --rounds in a row (the
controller's VK_PLUS_DETECT_ROUNDS, 3, by default) fire. The sign is armed once a whole
epoch lies behind the low: not in a flow's first epoch, nor in the first after a
`to_delay` (a probe that passed), which starts the low afresh from its own round. The
controller counts the rise together with its other signs; here it is replayed alone, so
a firing is the rise's own.

A stretch is the rounds from the flow's start, or from a `to_delay`, to the round the run
left delay mode (or the end): past that round the run did not follow delay mode, so the
replay stops until the next `to_delay`. Each stretch fires at most once. One --rise and
--rate-epoch for every trace: what vp_rise would do on those rounds, whatever the run's
own parameters were (vp_rate_long ran with epochs of 512).

Limits: the controller also forgets the low where it resets a socket's state in delay
mode (idle_relearn, on a restart after idle), which writes no record, so the replay
cannot see it (no committed bulk run idles). A repetition whose trace lost records
(summary.json's trace_lost) is left out, with a line on stderr: a lost round would shift
the epochs.

Every trace.csv under the directory given is read, with the summary.json beside it
(the clock's origin): one row per vegas_plus flow with its delay-mode rounds, its
stretches, the stretches in which the rise fired, the first firing's time, window, RTT
and low, and when the run's own detectors left delay mode in that stretch. A firing
where the flow was alone (case `vp_alone_*`) or beside its own kind (`vp_pair_*`) is a
false alarm.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from vegaskit import intf

from ..cliargs import OneLineParser, parse
from .modes import BAND, ENTRIES
from .tracedruns import each_rep, plus_flows

DEFAULT_RISE = 25           # the ablation vp_rise's (vegasplus/cases.py)
COLUMNS = ("time_s", "type", "ca", "dport", "rule", "mode", "cwnd", "rtt_us")


@dataclass(frozen=True)
class Firing:
    t: float                # s from the run's start: the last of the rising rounds that fired
    cwnd: int               # packets, the window that round read
    rtt_us: int
    low_us: int
    own_exit: float | None  # s: when the run's own detectors left delay mode in the
                            # stretch (its entry record), or None: they did not


def replay(decisions: list[dict], rise: int, rate_epoch: int,
           detect: int = intf.PLUS_DETECT_ROUNDS) -> tuple[int, int, list[Firing]]:
    """One flow's decision records in order (time_s from the run's start) ->
    (delay-mode rounds replayed, stretches, the first firing of each stretch that fired),
    a firing being `detect` rising rounds in a row."""
    lo, epoch_rounds, streak = [0, 0], 0, 0
    rounds, stretches, pending, out = 0, 1, None, []
    following = True                        # the run is in delay mode: replay it
    for r in decisions:
        rule, rtt = r["rule"], int(r["rtt_us"])
        if rule == "to_delay":
            lo, epoch_rounds, streak = [rtt, 0], 0, 0       # unarmed for an epoch
            stretches += 1
            following = True
            continue
        if not following or not (rule in BAND and r["mode"] == "delay" or rule in ENTRIES):
            continue
        rounds += 1
        if not lo[0] or rtt < lo[0]:
            lo[0] = rtt
        epoch_rounds += 1
        if epoch_rounds >= rate_epoch:
            lo, epoch_rounds = [rtt, lo[0]], 0
        low = min(lo) if lo[1] else 0                       # armed: an epoch behind it
        rising = rise and low and rtt > low and 100 * (rtt - low) >= rise * low
        streak = streak + 1 if rising else 0
        if streak == detect and pending is None:
            pending = (float(r["time_s"]), int(r["cwnd"]), rtt, low)
        if rule in ENTRIES:                 # the run left delay mode here
            following = False
            if pending:
                out.append(Firing(*pending, own_exit=float(r["time_s"])))
            pending = None
            streak = 0
    if pending:
        out.append(Firing(*pending, own_exit=None))
    return rounds, stretches, out


def read_rep(rep: Path, rise: int, rate_epoch: int,
             detect: int = intf.PLUS_DETECT_ROUNDS) -> list[dict]:
    """Each vegas_plus flow of one traced repetition. Raises Unfit for a trace the
    replay cannot read."""
    out = []
    for flow, decisions in plus_flows(rep, COLUMNS).items():
        rounds, stretches, firings = replay(decisions, rise, rate_epoch, detect)
        out.append({"flow": flow, "rounds": rounds, "stretches": stretches,
                    "firings": firings})
    return out


def render(root: Path, rows: list[tuple[str, dict]], rise: int, rate_epoch: int,
           detect: int = intf.PLUS_DETECT_ROUNDS) -> str:
    def own(f: Firing) -> str:
        return "never" if f.own_exit is None else f"{f.own_exit:.2f}"

    lines = [f"{root}: the rise (round RTT {rise}% or more above the least of this rate "
             f"epoch and the last, epochs of {rate_epoch} delay-mode rounds, "
             f"{detect} rounds in a row) replayed alone on "
             f"{len({p for p, _ in rows})} traced repetitions", "",
             "| repetition | flow | delay-mode rounds | stretches | fired in | first at (s) | "
             "window then | RTT / low (ms) | the run's own exit from delay mode (s) |",
             "|---" * 9 + "|"]
    for path, f in rows:
        first = f["firings"][0] if f["firings"] else None
        where = (f"{first.t:.2f} | {first.cwnd} | {first.rtt_us / 1000:.1f} / "
                 f"{first.low_us / 1000:.1f} | {own(first)}") if first else "- | - | - | -"
        lines.append(f"| {path} | {f['flow']} | {f['rounds']} | {f['stretches']} | "
                     f"{len(f['firings'])} | {where} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.riseruns",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a directory holding traced runs "
                    "(results/vegas_plus, or one case's)")
    ap.add_argument("--rise", type=int, default=DEFAULT_RISE,
                    help=f"percent over the low (default {DEFAULT_RISE}, vp_rise's)")
    ap.add_argument("--rate-epoch", type=int, default=intf.PLUS_RATE_EPOCH_DEFAULT,
                    help=f"delay-mode rounds per epoch (default "
                    f"{intf.PLUS_RATE_EPOCH_DEFAULT}, the controller's)")
    ap.add_argument("--rounds", type=int, default=intf.PLUS_DETECT_ROUNDS,
                    help=f"rising rounds in a row that fire (default "
                    f"{intf.PLUS_DETECT_ROUNDS}, the controller's)")
    a = parse(ap, argv)
    if a is None:
        return 2
    if not a.root.is_dir():
        print(f"riseruns: {a.root}: no such directory", file=sys.stderr)
        return 2
    if not 1 <= a.rise <= 1000:
        print(f"riseruns: --rise {a.rise}: must be 1 to 1000 percent (the controller's "
              "range; 0 is off)", file=sys.stderr)
        return 2
    if not intf.PLUS_RATE_EPOCH_MIN <= a.rate_epoch <= intf.PLUS_RATE_EPOCH_MAX:
        print(f"riseruns: --rate-epoch {a.rate_epoch}: must be {intf.PLUS_RATE_EPOCH_MIN} "
              f"to {intf.PLUS_RATE_EPOCH_MAX} rounds", file=sys.stderr)
        return 2
    if not 1 <= a.rounds <= 255:
        print(f"riseruns: --rounds {a.rounds}: must be 1 to 255 (the controller's streak "
              "is 8 bits)", file=sys.stderr)
        return 2
    rows = each_rep(a.root, "riseruns",
                    lambda rep: read_rep(rep, a.rise, a.rate_epoch, a.rounds))
    if rows is None:
        return 1
    sys.stdout.write(render(a.root, rows, a.rise, a.rate_epoch, a.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
