"""The Samios-Vernon throughput model of a TCP Vegas bulk transfer.

C. Samios and M. Vernon, "Modeling the Throughput of TCP Vegas", SIGMETRICS 2003
(seed 001), section 3. Each equation is one small function below, named after what it
computes and citing its number. Units: p is a probability per packet, times are in
seconds, windows in packets, throughput in packets per second (bytes per second as well
when an MSS is given). ``log`` is base 2: in the paper it counts slow-start rounds.

Branches (the names are part of the interface, see ``BRANCHES``):

=========================================  ============  ===============================
branch                                      equation      auto-selected when
=========================================  ============  ===============================
no-loss                                     (3)-(4)       p == 0
full                                        (32)          p > 0, (12) and (26) hold
timeout, stable backlog not reachable       (27), (30)-(31) p > 0, (12) or (26) fails
no-timeout, stable backlog reachable        (11)          never; only when forced
no-timeout, stable backlog not reachable    (14)          never; only when forced
single-timeout                              (23)-(25)     never; only when forced
=========================================  ============  ===============================

Default ("auto"): the full model (32), because section 3.4 calls (4) and (32) "a complete
throughput model ... given that constraints (12) and (26) are met". Where either fails,
section 3.3.4 gives (27): the SS2SS period of (15) with the loss-free periods of section
3.2.3 (window W' of (13) at a loss) and the slow start ending at W'/2. We evaluate (27)
with the time-out series of (30)-(31) in place of the single time-out, as (32) does for
(23), so that the auto throughput is one model with time-outs on both sides of the
boundary (docs/DESIGN.md §8). Where (12) holds and only (26) fails, loss-free periods
reach stable backlog and (27)'s periods are (32)'s. Section 4.1 finds (23) indistinguishable from (32); ask for
it with ``branch="single-timeout"`` (CLI: ``--branch single-timeout``). The no-time-out
models (11) and (14) of section 3.2 are kept as forced branches: they are what a flow
that never times out would do. A forced branch is computed whatever the conditions say;
the result still reports both conditions so the caller can see when they fail.

Where (12) fails, (14) and (27) bill a loss-free period two rounds short of the paper's own
process (see ROUNDS_COUNTED); ``extra_rounds`` bills them, as an attribution of the error, and
defaults to 0, the paper as printed.

The auto throughput is piecewise: it can jump at the boundary of (12) and (26), where W0
gives way to W'. Monotonicity in p and R is a property of each branch on its own, where
its conditions hold (tested for W0 >= 2 and T0 >= R; with T0 much smaller than R, (23) and
(32) can rise with p, since the packets of a time-out series then cost almost no time),
not of the piecewise function.

Limits: as p -> 0 every loss branch that holds tends to W0/R = (alpha+beta)/2/(R -
baseRTT) from (5), which is (4) only when alpha == beta (the assumption of section 3.1);
p == 0 itself uses (4). For W0 in [8/7, 4], (12) holds for every p, so (14) is never
auto-selected there.

CLI (``vegaskit-model --help``, or ``python -m vegaskit.analysis.model``)::

    python -m vegaskit.analysis.model --p 0.01 --rtt 0.1 --base-rtt 0.08 --alpha 2 --beta 4 \\
        --wmax 1000 --t0 1.0 [--mss 1448] [--branch auto|NAME] [--json]

Bad input: one line on stderr, exit status 2, nothing on stdout.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, dataclass

from ..cliargs import OneLineParser, parse

NO_LOSS = "no-loss"
TO_NOT_STABLE = "timeout, stable backlog not reachable"
NO_TO_STABLE = "no-timeout, stable backlog reachable"
NO_TO_NOT_STABLE = "no-timeout, stable backlog not reachable"
SINGLE_TO = "single-timeout"
FULL = "full"
BRANCHES = (NO_LOSS, NO_TO_STABLE, NO_TO_NOT_STABLE, SINGLE_TO, FULL, TO_NOT_STABLE)
AUTO = "auto"


@dataclass(frozen=True)
class ModelInputs:
    """The model inputs of section 3 (Table 1), validated on construction.

    p: loss-episode rate (inverse of packets between loss episodes), in [0, 1).
    rtt: R, the average round-trip time (s), >= base_rtt.
    base_rtt: the minimum round-trip time (s), > 0.
    alpha, beta: Vegas thresholds (packets), 0 <= alpha <= beta, beta > 0.
    wmax: the receiver's maximum window (packets), > 0.
    t0: the average duration of the first time-out of a series (s), > 0.
    """

    p: float
    rtt: float
    base_rtt: float
    alpha: float
    beta: float
    wmax: float
    t0: float

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value!r}")
        if not 0 <= self.p < 1:
            raise ValueError(f"p must be in [0, 1), got {self.p!r}")
        if not self.base_rtt > 0:
            raise ValueError(f"base_rtt must be > 0, got {self.base_rtt!r}")
        if not self.rtt >= self.base_rtt:
            raise ValueError(f"rtt (R) must be >= base_rtt, got rtt={self.rtt!r} "
                             f"< base_rtt={self.base_rtt!r}")
        if not 0 <= self.alpha <= self.beta:
            raise ValueError(f"need 0 <= alpha <= beta, got alpha={self.alpha!r}, beta={self.beta!r}")
        # beta == 0 (hence alpha == 0) would make W0 = 0 in (3) and (5) and every loss
        # formula divide by zero; a Vegas flow with no target backlog is not modelled.
        if not self.beta > 0:
            raise ValueError(f"beta must be > 0, got {self.beta!r}")
        if not self.wmax > 0:
            raise ValueError(f"wmax must be > 0, got {self.wmax!r}")
        if not self.t0 > 0:
            raise ValueError(f"t0 must be > 0, got {self.t0!r}")


@dataclass(frozen=True)
class Condition:
    """One side-by-side check ``lhs <= rhs``: lhs is p, rhs the bound (inf = always holds)."""

    lhs: float
    rhs: float
    holds: bool


@dataclass(frozen=True)
class ModelResult:
    """What ``predict`` returns."""

    branch: str
    forced: bool  # True when the caller chose the branch, False when "auto" did
    throughput_pps: float  # packets per second
    throughput_bytes_per_s: float | None  # throughput_pps * mss, or None without an mss
    condition_12: Condition  # stable backlog attainable between loss episodes
    condition_26: Condition  # stable backlog regained after a time-out
    w0: float  # equation (5)
    w0_no_loss: float  # equation (3)


# --- windows --------------------------------------------------------------------------

def _rtt_ratio(rtt: float, base_rtt: float) -> float:
    """R / (R - baseRTT); infinite when R == baseRTT (no queueing: the window is Wmax)."""
    return math.inf if rtt == base_rtt else rtt / (rtt - base_rtt)


def w0_no_loss(beta: float, rtt: float, base_rtt: float, wmax: float) -> float:
    """Equation (3): expected window without loss, min(beta * R / (R - baseRTT), Wmax)."""
    return min(beta * _rtt_ratio(rtt, base_rtt), wmax)


def w0_stable(alpha: float, beta: float, rtt: float, base_rtt: float, wmax: float) -> float:
    """Equation (5): window in the stable-backlog state, min((alpha+beta)/2 * R/(R-baseRTT), Wmax)."""
    return min((alpha + beta) / 2 * _rtt_ratio(rtt, base_rtt), wmax)


def slow_start_log(w0: float) -> float:
    """The paper's ``log W0`` (base 2) in (17), (24)-(26): slow-start rounds count.

    Choice (section 3.3.1): W0 is an expectation, so the log is the real log2, not a
    rounded round count; hence 2**log(W0) == W0. It is clamped below at 2: slow start
    begins at a window of 2 and ends at ssthresh = W0/2, so for W0 <= 4 there is no slow
    start, and without the clamp (17) would give negative packets (W0 - 4) and a negative
    duration (2(log W0 - 2) R).
    """
    return max(math.log2(w0), 2.0)


# --- model 1: no loss (section 3.1) --------------------------------------------------

def throughput_no_loss(w0_nl: float, rtt: float) -> float:
    """Equation (4): beta / (R - baseRTT) packets/s.

    Choice (section 3.1): (4) is W0_no-loss / R with W0_no-loss from (3) uncapped; we
    return W0_no-loss / R, which is (4) when the window is below Wmax and Wmax / R when
    it is capped (the paper states (4) only for the uncapped case).
    """
    return w0_nl / rtt


# --- model 2: no time-outs (section 3.2) ---------------------------------------------

def throughput_no_timeout_stable(p: float, w0: float, rtt: float) -> float:
    """Equation (11): ((1-p)/p + W0) / (((1-p)/(p W0) + W0/32 + 9/8) R)."""
    return ((1 - p) / p + w0) / (((1 - p) / (p * w0) + w0 / 32 + 9 / 8) * rtt)


def condition_12_bound(w0: float) -> float:
    """Equation (12): the largest p for which stable backlog is reached, 32/(7W0^2 - 36W0 + 32).

    Choice (section 3.2.2): (12) comes from P_DE <= 1/p + W0 - 1; when 7W0^2 - 36W0 + 32
    <= 0 (8/7 <= W0 <= 4) that inequality holds for every p, so the bound is +inf rather
    than the negative number the printed fraction would give.
    """
    denominator = 7 * w0 * w0 - 36 * w0 + 32
    return 32 / denominator if denominator > 0 else math.inf


def w_prime(p: float) -> float:
    """Equation (13): window at a loss when stable backlog is not reached, (2 + 2 sqrt(56/p - 55)) / 7.

    Not capped (section 3.2.3 does not): where (12) fails, 7W'^2 - 4W' = 32/p - 32
    < 7W0^2 - 36W0 < 7W0^2 - 4W0, so W' < W0 <= Wmax. Where (12) holds, (27) uses the
    stable periods instead (``throughput_timeout_not_stable``).
    """
    return (2 + 2 * math.sqrt(56 / p - 55)) / 7


# Rounds that (14) leaves unbilled in a loss-free period of section 3.2.3 (docs/DESIGN.md §8).
# The sum behind (13) runs over the windows 3W'/4 .. W', which is W'/4 + 1 rounds, but (14)
# divides by W'/4; and the duplicate ACK that reveals the loss returns one round after the
# loss round. So (14) sends 7W'/8 + 7/2 packets a round where the windows hold 7W'/8.
# ROUNDS_AS_PRINTED (0) is the paper and every default; ROUNDS_COUNTED bills both rounds,
# as the model's own process (model_sim.py) does: an attribution, not the paper's model.
ROUNDS_AS_PRINTED = 0.0
ROUNDS_COUNTED = 2.0


def throughput_no_timeout_not_stable(p: float, rtt: float, extra_rounds: float = 0.0) -> float:
    """Equation (14): ((1-p)/p + W') / ((W'/4) R), the Reno-like branch (proportional to 1/R);
    ``extra_rounds`` are added to the period's W'/4 rounds (see ROUNDS_COUNTED)."""
    wp = w_prime(p)
    return ((1 - p) / p + wp) / ((wp / 4 + extra_rounds) * rtt)


# --- model 3: single time-outs (section 3.3) -----------------------------------------

def p_timeout(p: float, w0: float) -> float:
    """Equation (21): fraction of loss episodes ended by a time-out.

    min(1, (p + p(1-p)(1 - (1-p)^(W0-1))) / (1 - (1-p)^W0)). Choice (section 3.3.2): W0 is
    a real number here, so the closed form on the right of (21) is used, not the sum over
    integer i; 1 - (1-p)^k is computed as -expm1(k log1p(-p)) to stay accurate as p -> 0.
    """
    def one_minus_q_to(k: float) -> float:
        return -math.expm1(k * math.log1p(-p))

    return min(1.0, (p + p * (1 - p) * one_minus_q_to(w0 - 1)) / one_minus_q_to(w0))


def n_loss_free_periods(p_to: float) -> float:
    """Equation (20): expected number of LFPs per SS2SS period, n = (1 - p_TO) / p_TO."""
    return (1 - p_to) / p_to


def n_ss2to(p: float, w0: float, n: float) -> float:
    """Equations (24)-(25): duration of an SS2SS period before its time-out, in rounds.

    N = 2 log W0 + (n+1)(1-p)/(p W0) + (1 + n/4) W0/8 + 9n/8 - 11/4 + (4 - 2^log W0)/W0,
    with log from ``slow_start_log``. (32) prints this times R as "N_SS2TOR".
    """
    lg = slow_start_log(w0)
    return (2 * lg + (n + 1) * (1 - p) / (p * w0) + (1 + n / 4) * w0 / 8
            + 9 * n / 8 - 11 / 4 + (4 - 2 ** lg) / w0)


def throughput_single_timeout(p: float, w0: float, n: float, rtt: float, t0: float) -> float:
    """Equation (23): (n+1)((1-p)/p + W0) / (N_SS2TO R + T0)."""
    return (n + 1) * ((1 - p) / p + w0) / (n_ss2to(p, w0, n) * rtt + t0)


def condition_26_bound(w0: float) -> float:
    """Equation (26): the largest p for which stable backlog is regained after a time-out.

    8 / (3W0^2 - 10W0 + 16 log W0 + 8), as printed, with log from ``slow_start_log``.
    Note (section 3.3.4): deriving P_AC <= 1/p + W0 - 1 from (17)-(18) gives
    8 / (3W0^2 - 2W0 - 24) instead; we follow the printed equation (the project design
    names (26)). A non-positive denominator means the inequality always holds (+inf);
    with the clamped log it cannot happen, the guard only keeps the function total.
    """
    denominator = 3 * w0 * w0 - 10 * w0 + 16 * slow_start_log(w0) + 8
    return 8 / denominator if denominator > 0 else math.inf


# --- model 4: series of time-outs (section 3.4) --------------------------------------

def prob_timeout_series_length(p: float, k: int) -> float:
    """Equation (28): P[M = k] = (2p - p^2)^(k-1) (1-p)^2, k >= 1 consecutive time-outs."""
    return (2 * p - p * p) ** (k - 1) * (1 - p) ** 2


def expected_timeouts(p: float) -> float:
    """Equation (29): E[M] = 1 / (1-p)^2."""
    return 1 / (1 - p) ** 2


def packets_in_timeout_series(p: float) -> float:
    """Equation (30): P_TO-series = 2(E[M] - 1) = 2p(2-p) / (1-p)^2."""
    return 2 * p * (2 - p) / (1 - p) ** 2


def timeout_series_duration_factor(p: float) -> float:
    """Equation (31): d(p), with D_TO-series = d(p) T0.

    d(p) = 64/(1-p)^2 - 321 + (1-p)^2 sum_{k=1..6} (2^k - 64k + 320)(2p - p^2)^(k-1).
    """
    x = 2 * p - p * p
    tail = sum((2 ** k - 64 * k + 320) * x ** (k - 1) for k in range(1, 7))
    return 64 / (1 - p) ** 2 - 321 + (1 - p) ** 2 * tail


def throughput_full(p: float, w0: float, n: float, rtt: float, t0: float) -> float:
    """Equation (32): ((n+1)((1-p)/p + W0) + 2p(2-p)/(1-p)^2) / (N_SS2TO R + d(p) T0)."""
    packets = (n + 1) * ((1 - p) / p + w0) + packets_in_timeout_series(p)
    return packets / (n_ss2to(p, w0, n) * rtt + timeout_series_duration_factor(p) * t0)


# --- stable backlog not attainable, with time-outs (section 3.3.4) --------------------

def n_ss2to_not_stable(p: float, wp: float, n: float, extra_rounds: float = 0.0) -> float:
    """(27)'s denominator before its time-outs, in rounds: D'_SSP + D'_TP + n D'_LFP.

    D'_SSP and D'_TP are (17) and (19) with W' for W0 (section 3.3.4: "the transition
    between the two phases taking place when the window size is W'/2"); D'_LFP = W'/4
    rounds from (14). (19)'s stage C-D, P_AD - P_SSP - P_BC, is negative with W' (about
    -5W'^2/32 + W'/8 + 4 packets): the TP's ramp from W'/2 carries more than one loss-free
    period. We keep the paper's recipe literally; the negative stage only shortens D'_TP,
    which stays positive (W'/8 + 1/4 + (1-p)/(pW') + 4/W' rounds). Together: 2 log W' - 11/4 + W'/8 + (1-p)/(p W') + (4 - 2^log W')/W'
    + n W'/4, with log from ``slow_start_log``. ``extra_rounds`` are added to each of the
    n + 1 periods that end in a loss (the n LFPs and the TP; see ROUNDS_COUNTED).
    """
    lg = slow_start_log(wp)
    return (2 * lg - 11 / 4 + wp / 8 + (1 - p) / (p * wp) + (4 - 2 ** lg) / wp
            + n * wp / 4 + (n + 1) * extra_rounds)


def throughput_timeout_not_stable(p: float, w0: float, rtt: float, t0: float,
                                  extra_rounds: float = 0.0) -> float:
    """Equation (27) with the time-out series of (30)-(31):

    ((n'+1)((1-p)/p + W') + 2p(2-p)/(1-p)^2) / (N' R + d(p) T0), where P'_SSP + P'_TP =
    1/p + W' - 1 as in (16), P'_LFP = (1-p)/p + W' as in (14), n' from (20)-(21) at the
    window W' a loss finds, and N' from ``n_ss2to_not_stable``.

    Choice (section 3.3.4): (27) applies when (12) *or* (26) fails. Where (12) holds and
    only (26) fails, loss-free periods reach stable backlog (that is what (12) says), so
    they are those of (6) and (10), not of (13)-(14), and the periods are (32)'s. Billing
    a period of 1/p packets as W'/4 rounds there exceeded the ceiling W0/R (+39% against
    a simulation of the model's own process at p = 8e-4) or rose with p. ``extra_rounds``
    (see ROUNDS_COUNTED) applies only where (12) fails, to the W' periods.
    """
    if p <= condition_12_bound(w0):
        return throughput_full(p, w0, n_loss_free_periods(p_timeout(p, w0)), rtt, t0)
    wp = w_prime(p)
    n = n_loss_free_periods(p_timeout(p, wp))
    packets = (n + 1) * ((1 - p) / p + wp) + packets_in_timeout_series(p)
    return packets / (n_ss2to_not_stable(p, wp, n, extra_rounds) * rtt
                      + timeout_series_duration_factor(p) * t0)


# --- putting it together -------------------------------------------------------------

def select_branch(p: float, c12: Condition, c26: Condition) -> str:
    """The "auto" choice between the branches by conditions (12) and (26) (see module doc)."""
    if p == 0:
        return NO_LOSS
    return FULL if c12.holds and c26.holds else TO_NOT_STABLE


def _branch_throughput(branch: str, i: ModelInputs, w0: float, w0_nl: float,
                       extra_rounds: float) -> float:
    """Packets/s by the equations of one branch."""
    if branch == NO_LOSS:
        return throughput_no_loss(w0_nl, i.rtt)
    if branch == NO_TO_STABLE:
        return throughput_no_timeout_stable(i.p, w0, i.rtt)
    if branch == NO_TO_NOT_STABLE:
        return throughput_no_timeout_not_stable(i.p, i.rtt, extra_rounds)
    if branch == TO_NOT_STABLE:
        return throughput_timeout_not_stable(i.p, w0, i.rtt, i.t0, extra_rounds)
    n = n_loss_free_periods(p_timeout(i.p, w0))
    model = throughput_full if branch == FULL else throughput_single_timeout
    return model(i.p, w0, n, i.rtt, i.t0)


def predict(inputs: ModelInputs, branch: str = AUTO, mss: float | None = None,
            extra_rounds: float = ROUNDS_AS_PRINTED) -> ModelResult:
    """Predicted throughput of a Vegas bulk transfer; ``branch`` is "auto" or one of BRANCHES;
    ``extra_rounds`` (ROUNDS_COUNTED) bills the rounds (14) leaves out, where (12) fails."""
    if branch != AUTO and branch not in BRANCHES:
        raise ValueError(f"unknown branch {branch!r}; choose auto or one of: {', '.join(BRANCHES)}")
    if mss is not None and (isinstance(mss, bool) or not isinstance(mss, (int, float))
                            or not math.isfinite(mss) or not mss > 0):
        raise ValueError(f"mss must be a number > 0, got {mss!r}")
    if (isinstance(extra_rounds, bool) or not isinstance(extra_rounds, (int, float))
            or not math.isfinite(extra_rounds) or not 0 <= extra_rounds <= 100):
        raise ValueError(f"extra_rounds must be a number from 0 to 100, got {extra_rounds!r}")
    i = inputs
    w0 = w0_stable(i.alpha, i.beta, i.rtt, i.base_rtt, i.wmax)
    w0_nl = w0_no_loss(i.beta, i.rtt, i.base_rtt, i.wmax)
    b12, b26 = condition_12_bound(w0), condition_26_bound(w0)
    c12, c26 = Condition(i.p, b12, i.p <= b12), Condition(i.p, b26, i.p <= b26)
    chosen = select_branch(i.p, c12, c26) if branch == AUTO else branch
    if chosen != NO_LOSS and i.p == 0:
        raise ValueError(f"branch {chosen!r} needs p > 0 (with p = 0 use no-loss)")

    try:
        pps = _branch_throughput(chosen, i, w0, w0_nl, extra_rounds)
    except (ZeroDivisionError, OverflowError):
        pps = math.nan
    bps = None if mss is None else pps * mss
    if not (math.isfinite(pps) and (bps is None or math.isfinite(bps))):
        # e.g. a subnormal p: 1/p overflows to inf and the ratios become inf/inf
        raise ValueError(f"branch {chosen!r} overflows floating point for these inputs")
    return ModelResult(chosen, branch != AUTO, pps, bps, c12, c26, w0, w0_nl)


# --- CLI -----------------------------------------------------------------------------

def _build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="python -m vegaskit.analysis.model",
        description="Samios-Vernon TCP Vegas throughput model (SIGMETRICS 2003, section 3).",
        epilog="Default --branch auto: no-loss if p == 0; else the full model (32) when "
               "conditions (12) and (26) hold; else (27) with time-out series. "
               "A named --branch is computed even when its conditions fail.")
    parser.add_argument("--p", type=float, required=True, help="loss-episode rate, in [0, 1)")
    parser.add_argument("--rtt", type=float, required=True, help="R, average RTT (s)")
    parser.add_argument("--base-rtt", type=float, required=True, help="baseRTT, minimum RTT (s)")
    parser.add_argument("--alpha", type=float, required=True, help="Vegas alpha (packets)")
    parser.add_argument("--beta", type=float, required=True, help="Vegas beta (packets)")
    parser.add_argument("--wmax", type=float, required=True, help="maximum window (packets)")
    parser.add_argument("--t0", type=float, required=True, help="first time-out duration (s)")
    parser.add_argument("--mss", type=float, help="bytes per packet, to also report bytes/s")
    parser.add_argument("--branch", default=AUTO, choices=(AUTO,) + BRANCHES, metavar="NAME",
                        help="auto (default) or one of: " + "; ".join(f"'{b}'" for b in BRANCHES))
    parser.add_argument("--extra-rounds", type=float, default=ROUNDS_AS_PRINTED, metavar="N",
                        help="rounds added to each loss-free period of (14), and of (27) where "
                        "(12) fails; 0 (the "
                        f"default) is the paper as printed, {ROUNDS_COUNTED:g} bills the loss "
                        "and detection rounds that (14) leaves out (docs/DESIGN.md §8)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None  # strict JSON has no Infinity


def _to_json(inputs: ModelInputs, r: ModelResult, mss: float | None,
             extra_rounds: float = ROUNDS_AS_PRINTED) -> str:
    def cond(c: Condition) -> dict:
        return {"p": c.lhs, "bound": _finite_or_none(c.rhs), "holds": c.holds}

    return json.dumps({
        "branch": r.branch, "forced": r.forced,
        "throughput_pps": r.throughput_pps, "throughput_bytes_per_s": r.throughput_bytes_per_s,
        "condition_12": cond(r.condition_12), "condition_26": cond(r.condition_26),
        "w0": r.w0, "w0_no_loss": r.w0_no_loss,
        "inputs": {**asdict(inputs), "mss": mss, "extra_rounds": extra_rounds},
    }, allow_nan=False)


def _to_text(r: ModelResult, extra_rounds: float = ROUNDS_AS_PRINTED) -> str:
    def cond(c: Condition) -> str:
        return f"p = {c.lhs:.6g} <= {c.rhs:.6g}: {'holds' if c.holds else 'fails'}"

    rate = f"{r.throughput_pps:.6g} packets/s"
    if r.throughput_bytes_per_s is not None:
        rate += f" ({r.throughput_bytes_per_s:.6g} bytes/s)"
    return "\n".join([
        f"branch:         {r.branch}{' (forced)' if r.forced else ''}",
        f"throughput:     {rate}",
        f"condition (12): {cond(r.condition_12)}",
        f"condition (26): {cond(r.condition_26)}",
        f"W0 (5):         {r.w0:.6g} packets",
    ] + ([f"extra rounds:   {extra_rounds:g} a period where (12) fails (not the paper's)"]
         if extra_rounds else []))


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0, or 2 for bad input)."""
    if (args := parse(_build_parser(), argv)) is None:
        return 2
    try:
        inputs = ModelInputs(p=args.p, rtt=args.rtt, base_rtt=args.base_rtt, alpha=args.alpha,
                             beta=args.beta, wmax=args.wmax, t0=args.t0)
        result = predict(inputs, branch=args.branch, mss=args.mss, extra_rounds=args.extra_rounds)
    except ValueError as e:
        print(f"model: error: {e}", file=sys.stderr)
        return 2
    print(_to_json(inputs, result, args.mss, args.extra_rounds) if args.json
          else _to_text(result, args.extra_rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
