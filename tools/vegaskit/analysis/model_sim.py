"""A Monte-Carlo simulation of the process the Samios-Vernon model assumes (seed 001, section 3).

``model.py`` gives the paper's closed forms; this module simulates, round by round, the
process those closed forms approximate, so that the error of a closed form against its
own assumptions can be told apart from the error of those assumptions against Linux.
Nothing beyond section 3 is modelled: no queue, no RTT variation, no Linux recovery.

The process, with where each rule comes from:

- Rounds (section 3): a window of packets is sent per round; every round lasts R,
  whatever its size. Time-outs last T0, 2T0, 4T0, ... up to 64 T0 (section 3.4, D_k).
- Windows: W0 of (5) (``model.w0_stable``). Congestion avoidance adds one packet per
  round up to W0 and then holds W0 (sections 3.1-3.2.1, stages D-E-F of Figure 2(a)).
  With p == 0 the window is W0_no-loss of (3) (section 3.1, model 1).
- Loss (section 3): a loss episode begins at each packet with probability p; the
  packets after it in the same round are lost too. Choice: drawn as the number of
  packets before the next episode, a geometric variable (the same process, one draw per
  episode instead of one per packet). Its count restarts with the first round after the
  loss is detected: (6) counts 1/p packets to the first loss, then W0 - 1 more.
- Recovery round (sections 3.2.1 and 3.3.2): the k packets of the loss round that got
  through are acknowledged, and their ACKs clock out k new packets in the next round,
  before the loss is detected; these are (6)'s "packets transmitted between the time
  the first lost packet is sent and the time the sender identifies the loss" (the rest
  of the loss round plus these k: W - 1 in all). The round lasts R, as every round.
  With correlated loss they are all lost with probability p (C(i, 0) of (21)), else
  all delivered. Choice (the paper is silent): no new loss episode starts inside them.
- Detection (equation (21), both of its cases): a time-out when no duplicate ACK can
  come back, i.e. k = 0 or the k recovery packets are all lost; otherwise the first
  duplicate ACK detects the loss, the window is cut by 25% to 3W/4 (sections 2.1, 3.2)
  and congestion avoidance continues from the next round. Choice: the window is never
  below 2, Vegas' initial and post-time-out window (section 2.1).
- Time-out series (section 3.4): after T0 of idling (choice: it starts when the last
  round with packets ends, as (15) adds D_TO to the rounds) a round of two packets:
  (A) both arrive: the series ends and this round is the first of slow start (it lasts
  R, as (17) counts it); (C) the first is lost, so both are; (B) only the second is
  lost, which the paper assumes always leads to a further time-out. In B and C the next
  time-out, of twice the duration (at most 64 T0), starts as the two packets leave, so
  the round takes no time of its own and (31) counts time-outs only; both packets count
  as sent, as in (30). Choice: in B the one packet the paper assumes is clocked out and
  lost is not sent, since (30) does not count it.
- Slow start (sections 2.1, 3.3.1): from a window of 2, each window is held two rounds
  and then doubled; the doubling that would reach ssthresh sets the window to ssthresh
  and ends slow start (for ssthresh = W0/2 a power of two this is exactly (17): 2, 2,
  4, 4, ..., W0/4, W0/4, then W0/2). ssthresh = (window at the loss that began the
  series)/2 (footnote 3: W0/2, W'/2 in section 3.3.4). Then +1 per round up to W0 (the
  TP of (18)-(19)). A loss in slow start is handled as anywhere else.
- Windows are real numbers in the paper. Choice: a round sends floor(w + c) packets,
  where c carries the fraction left over from earlier rounds (error diffusion), so a
  held window W0 sends W0 packets per round on average, as (8) assumes, integer or not.
- Start (choice): the flow starts in congestion avoidance at W0; the paper ignores the
  initial slow start (section 3.2) and so do we, there is no warm-up to discard.

Counting. Sent packets include lost ones and retransmissions (every packet of every
round counts), which is what the paper's P terms count: throughput_pps is the paper's
Lambda. Delivered packets per second are reported too. A "round" of the budget is one
step of the process: a round of packets or one time-out. Loss episodes, the window at a
loss and the fraction ended by a time-out (p_TO of (21)) are counted over the episodes
outside time-out series, the ones (20)-(21) count (the series are (28)-(31)).

The 95% interval of throughput is by batch means: the rounds are cut into ``batches``
consecutive batches and the ratio estimator's standard error is taken from the batch
sums, with Student's t for batches - 1 degrees of freedom.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
from dataclasses import asdict, dataclass

from vegaskit.analysis import model
from vegaskit.cliargs import OneLineParser, parse

DEFAULT_ROUNDS = 1_000_000
DEFAULT_BATCHES = 30
MAX_BACKOFF = 64  # section 3.4: time-outs double up to 64 T0

_CA, _SS, _RECOVERY, _TIMEOUT, _PROBE = range(5)


@dataclass(frozen=True)
class SimResult:
    """What ``simulate`` returns. Rates are per second of simulated time."""

    inputs: model.ModelInputs
    rounds: int
    seed: int
    w0: float  # the window the flow holds: (5), or (3) when p == 0
    packets_sent: int
    packets_delivered: int
    duration_s: float
    throughput_pps: float  # packets sent per second: the paper's Lambda
    throughput_ci95: tuple[float, float]
    delivered_pps: float
    timeout_time_fraction: float  # of the time spent idle in time-outs
    loss_episodes: int  # outside time-out series
    timeout_fraction: float  # of those loss episodes ended by a time-out: p_TO of (21)
    mean_window_at_loss: float  # compare with W0 (5) or W' (13)
    mean_timeouts_per_series: float  # compare with E[M] of (29)


@dataclass(frozen=True)
class Comparison:
    """The simulated throughput beside the closed forms, from ``compare``."""

    sim: SimResult
    auto: model.ModelResult
    branches: dict[str, model.ModelResult]  # every loss branch that could be computed

    def error(self, branch: str) -> float:
        """(closed form - simulated) / simulated, for "auto" or a branch name."""
        r = self.auto if branch == model.AUTO else self.branches[branch]
        return (r.throughput_pps - self.sim.throughput_pps) / self.sim.throughput_pps


# --- the process ---------------------------------------------------------------------

def _draw_gap(rng: random.Random, log_q: float) -> int:
    """Packets before the next loss episode: geometric, P(j) = (1-p)^j p (section 3)."""
    if log_q == 0.0:
        return sys.maxsize  # p == 0 (or below double precision): never
    gap = math.log(1.0 - rng.random()) / log_q
    return sys.maxsize if gap >= sys.maxsize else int(gap)  # a subnormal p: inf


class _Flow:
    """The flow's state and counters; ``step`` runs one round or one time-out."""

    def __init__(self, i: model.ModelInputs, target: float, rng: random.Random) -> None:
        self.p, self.rtt, self.t0, self.target, self.rng = i.p, i.rtt, i.t0, target, rng
        self.log_q = math.log1p(-i.p)
        self.gap = _draw_gap(rng, self.log_q)
        self.phase, self.w, self.carry = _CA, target, 0.0
        self.ssthresh, self.rounds_at_w, self.backoff, self.acked = 0.0, 0, 0, 0
        self.steps = self.sent = self.delivered = 0
        self.time = self.timeout_time = 0.0
        self.episodes = self.series = self.timeouts = 0
        self.window_sum = 0.0

    def step(self) -> None:
        self.steps += 1
        if self.phase in (_CA, _SS):
            self._window_round()
        elif self.phase == _RECOVERY:
            self._recovery_round()
        elif self.phase == _TIMEOUT:
            self._timeout()
        else:
            self._probe_round()

    def _packets(self) -> int:
        # error diffusion: a real window w sends w packets per round on average
        n = int(self.w + self.carry)
        self.carry += self.w - n
        return n

    def _window_round(self) -> None:
        n = self._packets()
        self.time += self.rtt
        self.sent += n
        if self.gap >= n:
            self.gap -= n
            self.delivered += n
            self._grow()
            return
        k, self.gap = self.gap, _draw_gap(self.rng, self.log_q)
        self.delivered += k
        self.episodes += 1
        self.window_sum += self.w
        self.ssthresh = self.w / 2  # used only if this episode ends in a time-out
        if k == 0:  # (21) case 1: no packet got through, no duplicate ACK
            self._start_timeout()
        else:
            self.acked, self.phase = k, _RECOVERY

    def _recovery_round(self) -> None:
        self.time += self.rtt
        self.sent += self.acked
        if self.rng.random() < self.p:  # (21) case 2: first lost, so all are (C(i, 0) = p)
            self._start_timeout()
            return
        self.delivered += self.acked
        self._cut()

    def _grow(self) -> None:
        if self.phase == _CA:
            self.w = min(self.w + 1, self.target)
            return
        self.rounds_at_w += 1  # slow start: each window twice, then doubled
        if self.rounds_at_w < 2:
            return
        self.rounds_at_w = 0
        if 2 * self.w >= self.ssthresh:
            self.w, self.phase = min(max(self.ssthresh, 2.0), self.target), _CA
        else:
            self.w *= 2

    def _cut(self) -> None:
        self.w, self.phase = max(0.75 * self.w, 2.0), _CA

    def _start_timeout(self) -> None:
        self.series += 1
        self.backoff, self.phase = 0, _TIMEOUT

    def _timeout(self) -> None:
        d = self.t0 * min(2 ** self.backoff, MAX_BACKOFF)
        self.time += d
        self.timeout_time += d
        self.timeouts += 1
        self.backoff += 1
        self.phase = _PROBE

    def _probe_round(self) -> None:
        self.sent += 2
        if self.rng.random() < self.p:  # C: both lost
            self.phase = _TIMEOUT
        elif self.rng.random() < self.p:  # B: assumed to time out again (section 3.4)
            self.delivered += 1
            self.phase = _TIMEOUT
        else:  # A: the first round of slow start
            self.delivered += 2
            self.time += self.rtt
            self.w, self.rounds_at_w, self.phase = 2.0, 0, _SS
            self._grow()


class _FixedWindowFlow(_Flow):
    """The same loss rounds at a window that never changes and time-outs that cost
    nothing: isolates p_TO of (21) at one window (section 3.3.2 evaluates it at W0)."""

    def _grow(self) -> None:
        pass

    def _cut(self) -> None:
        self.phase = _CA

    def _start_timeout(self) -> None:
        self.series += 1
        self.phase = _CA


# --- running it ----------------------------------------------------------------------

def _check_count(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an int >= {least}, got {value!r}")


_T975_SMALL_DF = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306)  # df = 1..8


def _t_quantile_975(df: int) -> float:
    """Student's t 97.5% quantile: a table to df = 8, then the Cornish-Fisher expansion in
    1/df (within 1e-3 from df = 9 on)."""
    if df <= len(_T975_SMALL_DF):
        return _T975_SMALL_DF[df - 1]
    z = statistics.NormalDist().inv_cdf(0.975)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))


def _ci95(ratio: float, sums: list[tuple[int, float]]) -> tuple[float, float]:
    """Batch-means interval of the ratio estimator sum(sent) / sum(time)."""
    b = len(sums)
    if b < 2:
        return math.nan, math.nan
    mean_t = sum(t for _, t in sums) / b
    resid = [s - ratio * t for s, t in sums]
    se = math.sqrt(sum(e * e for e in resid) / (b - 1) / b) / mean_t
    half = _t_quantile_975(b - 1) * se
    return ratio - half, ratio + half


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def simulate(inputs: model.ModelInputs, rounds: int = DEFAULT_ROUNDS, seed: int = 0,
             batches: int = DEFAULT_BATCHES) -> SimResult:
    """Simulate ``rounds`` steps of the section-3 process (see the module doc).

    The interval is (nan, nan) with a single round. The default budget keeps the 95%
    interval within about +-0.6% of throughput for W0 up to ~200 and p in [5e-4, 0.05],
    and runs in about half a second."""
    i = model.ModelInputs(**asdict(inputs))  # the model's own validation
    _check_count("rounds", rounds, 1)
    _check_count("batches", batches, 2)
    batches = min(batches, rounds)  # a batch is at least one round; one batch: no interval
    target = (model.w0_no_loss(i.beta, i.rtt, i.base_rtt, i.wmax) if i.p == 0
              else model.w0_stable(i.alpha, i.beta, i.rtt, i.base_rtt, i.wmax))
    flow = _Flow(i, target, random.Random(seed))
    sums, last_sent, last_time = [], 0, 0.0
    for b in range(1, batches + 1):
        end = rounds * b // batches
        while flow.steps < end:
            flow.step()
        sums.append((flow.sent - last_sent, flow.time - last_time))
        last_sent, last_time = flow.sent, flow.time
    pps = flow.sent / flow.time
    return SimResult(
        inputs=i, rounds=rounds, seed=seed, w0=target,
        packets_sent=flow.sent, packets_delivered=flow.delivered, duration_s=flow.time,
        throughput_pps=pps, throughput_ci95=_ci95(pps, sums),
        delivered_pps=flow.delivered / flow.time,
        timeout_time_fraction=flow.timeout_time / flow.time,
        loss_episodes=flow.episodes,
        timeout_fraction=_ratio(flow.series, flow.episodes),
        mean_window_at_loss=_ratio(flow.window_sum, flow.episodes),
        mean_timeouts_per_series=_ratio(flow.timeouts, flow.series))


@dataclass(frozen=True)
class FixedWindowResult:
    """What ``simulate_fixed_window`` returns."""

    loss_episodes: int
    timeout_fraction: float  # of the loss episodes: p_TO of (21) at this window
    packets_sent: int
    packets_delivered: int


def simulate_fixed_window(p: float, window: int, rounds: int, seed: int = 0) -> FixedWindowResult:
    """``rounds`` rounds at a window that never changes, through the same loss and
    recovery rounds as ``simulate``; time-outs cost nothing and return to the window."""
    _check_count("rounds", rounds, 1)
    _check_count("window", window, 1)
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    i = model.ModelInputs(p=p, rtt=1.0, base_rtt=0.5, alpha=1, beta=1, wmax=window, t0=1.0)
    flow = _FixedWindowFlow(i, float(window), random.Random(seed))
    while flow.steps < rounds:
        flow.step()
    return FixedWindowResult(flow.episodes, _ratio(flow.series, flow.episodes),
                             flow.sent, flow.delivered)


def compare(inputs: model.ModelInputs, rounds: int = DEFAULT_ROUNDS, seed: int = 0) -> Comparison:
    """The simulation beside model.predict: "auto" and every loss branch, forced.

    Branches are read from model.BRANCHES when called; one that raises ValueError for
    these inputs is left out."""
    sim = simulate(inputs, rounds=rounds, seed=seed)
    branches = {}
    for name in model.BRANCHES:
        if name == model.NO_LOSS:
            continue
        try:
            branches[name] = model.predict(inputs, branch=name)
        except ValueError:
            continue
    return Comparison(sim, model.predict(inputs), branches)


# --- CLI -----------------------------------------------------------------------------

def format_comparisons(rows: list[Comparison]) -> str:
    """A markdown table: the simulation with its interval, and each closed form's error."""
    names = sorted({n for c in rows for n in c.branches}, key=list(model.BRANCHES).index)
    head = ["p", "R (s)", "W0", "sim pps (95% CI)", "p_TO sim / (21)", "W at loss",
            "auto"] + names
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows:
        s, lo_hi = c.sim, c.sim.throughput_ci95
        cells = [f"{s.inputs.p:g}", f"{s.inputs.rtt:g}", f"{s.w0:.1f}",
                 f"{s.throughput_pps:.1f} ({lo_hi[0]:.1f}-{lo_hi[1]:.1f})",
                 f"{s.timeout_fraction:.3f} / {model.p_timeout(s.inputs.p, s.w0):.3f}"
                 if s.inputs.p > 0 else "-",
                 f"{s.mean_window_at_loss:.1f}",
                 f"{c.auto.throughput_pps:.1f} ({c.error(model.AUTO):+.1%}, {c.auto.branch})"]
        cells += [f"{c.branches[n].throughput_pps:.1f} ({c.error(n):+.1%})" if n in c.branches
                  else "-" for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m vegaskit.analysis.model_sim --p P [P ...] --rtt R ... [--rounds N]``.

    Prints ``format_comparisons``; bad input: one line on stderr, exit status 2."""
    ap = OneLineParser(prog="python -m vegaskit.analysis.model_sim",
                       description="Simulate the Samios-Vernon process and compare "
                                   "with the closed forms of vegaskit.analysis.model.")
    ap.add_argument("--p", type=float, nargs="+", required=True)
    for name in ("rtt", "base-rtt", "alpha", "beta", "wmax", "t0"):
        ap.add_argument(f"--{name}", type=float, required=True)
    ap.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    ap.add_argument("--seed", type=int, default=0)
    if (a := parse(ap, argv)) is None:
        return 2
    try:
        rows = [compare(model.ModelInputs(p, a.rtt, a.base_rtt, a.alpha, a.beta, a.wmax, a.t0),
                        rounds=a.rounds, seed=a.seed) for p in a.p]
    except ValueError as e:
        print(f"model_sim: error: {e}", file=sys.stderr)
        return 2
    print(format_comparisons(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
