"""vegas_plus's rule (vk_plus_decide in bpf/vk_core.h; docs/DESIGN.md §3.11),
driven through build/libvkcore.so: the delay-mode band, the foreign-queue
detector, the probe, and the whole mode cycle on a fluid model of one
bottleneck."""
from __future__ import annotations

from vegaskit import intf
from vkcore import MODE, RULE, Plus, cbrt, params, plus, plus_cubic_cnt, plus_loss, sample

BASE = 20_000          # us
P = params("VEGAS_PLUS", alpha=3, beta=3)
SSTHRESH_INF = 0x7fffffff  # the kernel's TCP_INFINITE_SSTHRESH


def decide(st: Plus, p=P, **kw):
    kw.setdefault("base_rtt", BASE)
    kw.setdefault("ssthresh", 2)        # congestion avoidance unless a test says otherwise
    return plus(p, sample(**kw), st)


def test_delay_band_on_own_backlog_exactly():
    """Delay mode compares cwnd*(rtt-base)/rtt with alpha and beta exactly."""
    # backlog 33 * 2000/22000 = 3.0 exactly: the band (alpha = beta = 3) holds
    assert decide(Plus(), cwnd=33, rtt=22_000).rule == RULE["HOLD"]
    # 2.73 packets: below alpha
    assert decide(Plus(), cwnd=30, rtt=22_000).rule == RULE["INC"]
    d = decide(Plus(), cwnd=34, rtt=22_000)      # 3.09: above beta
    assert (d.rule, d.cwnd, d.mode) == (RULE["DEC"], 33, MODE["DELAY"])


def test_the_record_carries_the_band_it_decided_with():
    """The trace shows alpha and beta for every decision, a Reno round's too (they were
    zeroed by the round's start before the fix)."""
    d = decide(Plus(), cwnd=34, rtt=22_000)
    assert (d.alpha, d.beta) == (3, 3)
    d = decide(Plus(), cwnd=34, rtt=22_000, cnt_rtt=2)      # too few samples: Reno
    assert d.rule == RULE["RENO"] and (d.alpha, d.beta) == (3, 3)


def test_slow_start_is_the_familys():
    d = decide(Plus(), cwnd=10, rtt=BASE + 100, ssthresh=1000)
    assert d.rule == RULE["SS_GROW"]
    d = decide(Plus(), cwnd=40, rtt=BASE + 10_000, ssthresh=1000)   # backlog 13 > gamma
    assert d.rule == RULE["SS_EXIT"] and d.cwnd == 40 * BASE // (BASE + 10_000) + 1


def learn_alone(st: Plus, bdp: int = 50, p=P) -> None:
    """Rounds alone on a path of `bdp` packets per base RTT, 3 of ours queued."""
    for _ in range(5):
        decide(st, p, cwnd=bdp + 3, rtt=BASE * (bdp + 3) // bdp)


def test_a_foreign_queue_for_three_rounds_means_compete():
    """Beside a buffer-filler our rate falls while the delay stays: the queue
    our best rate implies, less our own backlog, is foreign; 3 rounds of it
    at >= foreign_max packets switch to competitive mode."""
    st = Plus()
    learn_alone(st)
    rules = []
    for _ in range(3):
        # 10 packets over 2 base RTTs: the queue is 50 packets, 5 of them ours
        d = decide(st, cwnd=10, rtt=2 * BASE, now_ms=100)
        rules.append(d.rule)
    assert rules == [RULE["DEC"], RULE["DEC"], RULE["TO_COMPETE"]]
    assert d.foreign_milli == 45_000            # 50 implied - 5 own
    assert (d.mode, st.mode) == (MODE["COMPETE"], MODE["COMPETE"])
    assert d.ssthresh == SSTHRESH_INF                   # a share found as a new flow finds it
    assert (st.w_max, st.epoch_ms, st.cnt) == (10, 0, 0)    # CUBIC's epoch at the next round


def detect(p) -> tuple:
    st = Plus()
    learn_alone(st)                             # the best rate: 50 packets per base RTT
    for _ in range(3):
        d = decide(st, p, cwnd=10, rtt=2 * BASE, now_ms=100)
    return st, d


def test_compete_ss_2_slow_starts_only_up_to_the_best_rates_window():
    st, d = detect(params("VEGAS_PLUS", alpha=3, beta=3, compete_ss=2))
    assert (d.rule, d.cwnd, d.ssthresh) == (RULE["TO_COMPETE"], 10, 50)
    # while that slow start lasts, CUBIC's epoch waits for its end
    d = decide(st, params("VEGAS_PLUS", alpha=3, beta=3, compete_ss=2), cwnd=20, ssthresh=50,
               rtt=2 * BASE, now_ms=200)
    assert (d.rule, st.epoch_ms) == (RULE["COMPETE"], 0)
    d = decide(st, params("VEGAS_PLUS", alpha=3, beta=3, compete_ss=2), cwnd=50, ssthresh=50,
               rtt=2 * BASE, now_ms=300)
    assert st.epoch_ms != 0 and st.w_start == 50


def test_compete_ss_2_never_cuts_a_window_above_the_best_rate():
    st = Plus()
    learn_alone(st, bdp=8)
    for _ in range(3):
        d = decide(st, params("VEGAS_PLUS", alpha=3, beta=3, compete_ss=2), cwnd=30,
                   rtt=8 * BASE, now_ms=100)
    assert (d.rule, d.cwnd, d.ssthresh) == (RULE["TO_COMPETE"], 30, 30)


def test_compete_ss_0_enters_cubic_without_slow_start():
    st, d = detect(params("VEGAS_PLUS", alpha=3, beta=3, compete_ss=0))
    assert (d.rule, d.cwnd, d.ssthresh) == (RULE["TO_COMPETE"], 10, 10)


def test_compete_off_never_leaves_delay_mode():
    st = Plus()
    learn_alone(st)
    for _ in range(10):
        d = decide(st, params("VEGAS_PLUS", alpha=3, beta=3, compete=0), cwnd=10, rtt=2 * BASE)
        assert d.mode == MODE["DELAY"] and d.foreign_milli == 45_000


def test_a_short_foreign_queue_is_not_competition():
    """Two rounds of foreign queue then none: the streak starts over."""
    st = Plus()
    learn_alone(st)
    decide(st, cwnd=10, rtt=2 * BASE)
    decide(st, cwnd=10, rtt=2 * BASE)
    decide(st, cwnd=53, rtt=BASE * 53 // 50)
    assert decide(st, cwnd=10, rtt=2 * BASE).mode == MODE["DELAY"]


def test_a_competitor_from_the_first_round_is_seen_by_the_standing_delay():
    """A buffer-filler there from our first round: our best rate is only our
    share, so no queue looks foreign by the rate; but the queueing delay is
    a base RTT while we hold 3 of the queue (our window is only twice our
    backlog), and 3 rounds of that switch to competitive mode."""
    st = Plus()
    ds = [decide(st, cwnd=6, rtt=2 * BASE, now_ms=100) for _ in range(3)]
    assert [d.foreign_milli for d in ds] == [0, 0, 0]
    assert ds[-1].rule == RULE["TO_COMPETE_DELAY"] and st.mode == MODE["COMPETE"]


def test_our_own_queue_is_no_standing_delay():
    """After slow start the queue is our overshoot: a delay of a base RTT with
    20 of ours queued is ours to drain, not competition."""
    st = Plus()
    ds = [decide(st, cwnd=40, rtt=2 * BASE, now_ms=100) for _ in range(5)]
    assert {d.rule for d in ds} == {RULE["DEC"]} and st.mode == MODE["DELAY"]


def test_a_quarter_base_rtt_of_queueing_is_no_standing_delay():
    st = Plus()
    ds = [decide(st, cwnd=6, rtt=BASE * 5 // 4 - 1, now_ms=100) for _ in range(5)]
    assert st.mode == MODE["DELAY"] and RULE["TO_COMPETE_DELAY"] not in {d.rule for d in ds}


def competing(now_ms: int = 100) -> Plus:
    st = Plus()
    learn_alone(st)
    for _ in range(3):
        decide(st, cwnd=10, rtt=2 * BASE, now_ms=now_ms)
    assert st.mode == MODE["COMPETE"]
    return st


def icbrt(x: int) -> int:
    r = round(x ** (1 / 3))
    while r ** 3 > x:
        r -= 1
    while (r + 1) ** 3 <= x:
        r += 1
    return r


def test_cube_root_is_the_floor_exactly():
    xs = list(range(0, 5000)) + [n ** 3 + e for n in (2, 17, 1357, 99991, 2 ** 21 - 1)
                                  for e in (-1, 0, 1)]
    xs += [2 ** k + e for k in range(12, 63) for e in (-1, 0, 1)]
    assert [cbrt(x) for x in xs] == [icbrt(x) for x in xs]


def test_a_loss_is_cubics_cut_in_compete_mode_and_the_familys_in_delay_mode():
    assert plus_loss(Plus(), 100) == 50                 # delay mode: loss_cut 2
    st = competing()
    assert plus_loss(st, 100) == 70                     # RFC 9438 4.6: beta 0.7
    assert (st.w_max, st.epoch_ms) == (100, 0)          # a new epoch at the next round
    assert plus_loss(st, 80) == 56                      # below the last W_max:
    assert st.w_max == 68                               # fast convergence, 80 * 1.7 / 2 (4.7)


def cubic_epoch(w_max: int, w_start: int, epoch_ms: int) -> Plus:
    st = competing()
    st.w_max, st.w_start, st.epoch_ms = w_max, w_start, epoch_ms
    return st


def test_compete_growth_follows_cubics_curve():
    """W_max 100 after a cut to 70: K = cbrt(30/0.4) = 4.217 s. Concave
    towards W_max, flat at it, convex past it; every round's target is
    W(t + RTT)."""
    base = 100_000              # 100 ms: Reno's estimate stays below the curve
    def cnt(cwnd, t_ms):
        st = cubic_epoch(100, 70, 1000)
        return plus_cubic_cnt(st, sample(cwnd=cwnd, base_rtt=base, rtt=base,
                                         now_ms=1000 + t_ms - base // 1000))
    # W(1 s) = 100 - 0.4 * 3.217^3 = 100 - 13.3: 87 in whole packets; cwnd 80 grows 7
    assert cnt(80, 1000) == 80 // 7
    assert cnt(99, 4217) == 99                          # W(K) = W_max: one more packet
    assert cnt(100, 4217) == 100 * 100                  # at W_max: next to no growth
    # W(6 s) = 100 + 0.4 * 1.783^3 = 102.3
    assert cnt(100, 6000) == 100 // 2
    # the growth of one round is at most half the window
    assert cnt(20, 20000) == 2


def test_compete_growth_is_at_least_renos_estimate():
    """A small W_max: the curve is nearly flat, Reno's estimate from the
    epoch's start (0.9/1.7 packets a round) is the floor (RFC 9438 4.3)."""
    st = cubic_epoch(10, 7, 1000)
    # t + RTT = 2 s at 20 ms: 100 rounds, Reno's estimate 7 + 52.9 = 59
    c = plus_cubic_cnt(st, sample(cwnd=50, base_rtt=BASE, rtt=BASE, now_ms=1000 + 1980))
    assert c == 50 // (59 - 50)


def test_the_first_compete_round_after_a_loss_begins_the_epoch():
    st = competing()
    plus_loss(st, 60)
    plus_cubic_cnt(st, sample(cwnd=42, base_rtt=BASE, rtt=BASE, now_ms=5000))
    assert (st.w_max, st.w_start, st.epoch_ms) == (60, 42, 5000 | 1)


def test_compete_rounds_grow_as_cubic_until_the_clock_says_probe():
    st = competing(now_ms=100)
    assert decide(st, cwnd=30, rtt=2 * BASE, now_ms=2000).rule == RULE["COMPETE"]
    assert st.cnt > 0
    d = decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)      # the host clock's boundary
    assert (d.rule, d.mode) == (RULE["PROBE"], MODE["PROBE"])
    assert d.cwnd == 30 * BASE // (2 * BASE) + 3            # what delay mode would hold alone
    assert d.ssthresh <= d.cwnd                             # no slow start while probing


def test_a_probe_that_still_sees_a_foreign_queue_restores_the_window():
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)          # probe: cwnd 18
    assert decide(st, cwnd=18, rtt=2 * BASE, now_ms=2100).rule == RULE["PROBE"]
    d = decide(st, cwnd=18, rtt=2 * BASE, now_ms=2150)      # the queue stayed: not ours
    assert (d.rule, d.mode, d.cwnd) == (RULE["PROBE_FAIL"], MODE["COMPETE"], 30)


def test_a_probe_whose_rounds_are_too_thin_to_judge_ends_failed():
    """Rounds of two samples or fewer (a window of 2 or 3 behind delayed ACKs) count
    toward the probe; the one that ends it fails. A probe that waited for a judgeable
    round stayed at cwnd 2 for 25.6 s beside bbr (traced, docs/DESIGN.md §3.11)."""
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)          # probe: cwnd 18
    d = decide(st, cwnd=2, rtt=2 * BASE, now_ms=2100, cnt_rtt=1)   # a loss cut it to 2
    assert (d.rule, d.mode) == (RULE["PROBE"], MODE["PROBE"])
    d = decide(st, cwnd=2, rtt=2 * BASE, now_ms=2150, cnt_rtt=1)
    assert (d.rule, d.mode, d.cwnd) == (RULE["PROBE_FAIL"], MODE["COMPETE"], 2)
    assert st.mode == MODE["COMPETE"]


def test_a_thin_round_at_the_probes_own_window_restores_the_competitive_one():
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)          # probe: cwnd 18
    decide(st, cwnd=18, rtt=2 * BASE, now_ms=2100, cnt_rtt=2)
    d = decide(st, cwnd=18, rtt=2 * BASE, now_ms=2150, cnt_rtt=2)
    assert (d.rule, d.mode, d.cwnd) == (RULE["PROBE_FAIL"], MODE["COMPETE"], 30)


def test_a_loss_during_the_probe_keeps_the_kernels_cut():
    """A probe whose window a loss has cut since does not restore the
    competitive window over the kernel's reduction."""
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)          # probe: cwnd 18
    decide(st, cwnd=9, rtt=2 * BASE, now_ms=2100)           # a loss halved it
    d = decide(st, cwnd=9, rtt=2 * BASE, now_ms=2150)
    assert (d.rule, d.mode, d.cwnd) == (RULE["PROBE_FAIL"], MODE["COMPETE"], 9)


def test_a_probe_that_drains_the_queue_returns_to_delay_mode():
    st = competing()
    decide(st, cwnd=100, rtt=2 * BASE, now_ms=2048)         # probe: cwnd 53
    decide(st, cwnd=53, rtt=2 * BASE, now_ms=2100)
    d = decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=2150)   # drained to our 3 packets
    assert (d.rule, d.mode, d.cwnd) == (RULE["TO_DELAY"], MODE["DELAY"], 53)
    assert d.ssthresh < d.cwnd                              # delay mode, not slow start


def passed_probe() -> Plus:
    """Competitive at window 100; the probe at 2048 ms passes with 53."""
    st = competing()
    decide(st, cwnd=100, rtt=2 * BASE, now_ms=2048)
    decide(st, cwnd=53, rtt=2 * BASE, now_ms=2100)
    assert decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=2150).rule == RULE["TO_DELAY"]
    return st


def test_a_competitor_back_within_64_rounds_undoes_the_probe():
    """The probe landed in a competitor's halving: when its queue is back
    within 64 rounds (at 80 ms, reno needs about 40 to refill half a BDP:
    traced), competitive mode resumes with the window the probe gave up, not
    the probe's."""
    st = passed_probe()
    for _ in range(58):
        decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=9000)
    for _ in range(3):
        d = decide(st, cwnd=12, rtt=2 * BASE, now_ms=9000)
    assert (d.rule, d.mode, d.cwnd, d.ssthresh) == (RULE["RECALL"], MODE["COMPETE"], 100, 100)


def test_the_band_shedding_a_quarter_of_the_probes_window_is_a_recall():
    """After a passed probe the rate maximum is the probe's own, perhaps a
    share, so a competitor whose queue stays below both detectors still
    makes the band give our window up: at 3/4 of the probe's window, recall."""
    st = passed_probe()                          # delay mode at 53
    rules, windows, cwnd = [], [], 53
    while st.mode == MODE["DELAY"] and cwnd > 30:
        windows.append(cwnd)
        d = decide(st, cwnd=cwnd, rtt=BASE * 5 // 4, now_ms=3000)   # 10 of ours queued
        rules.append(d.rule)
        cwnd = d.cwnd
    assert rules[-1] == RULE["RECALL"] and d.cwnd == 100
    # three rounds at or below 3/4 of 53: 39, 38, 37
    assert set(rules[:-1]) == {RULE["DEC"]} and windows[-3:] == [39, 38, 37]


def test_a_competitor_that_comes_later_starts_from_our_window():
    st = passed_probe()
    for _ in range(64):
        decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=3000)
    for _ in range(3):
        d = decide(st, cwnd=12, rtt=2 * BASE, now_ms=3000)
    assert (d.rule, d.cwnd, d.ssthresh) == (RULE["TO_COMPETE"], 12, SSTHRESH_INF)


def test_too_few_samples_while_probing_do_not_grow_the_window():
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)
    d = decide(st, cwnd=18, rtt=2 * BASE, cnt_rtt=1, now_ms=2100)
    assert (d.rule, d.cwnd) == (RULE["PROBE"], 18)
    d = decide(Plus(), cwnd=18, rtt=2 * BASE, cnt_rtt=1)
    assert d.rule == RULE["RENO"]                           # delay mode: the family's fallback


def test_the_rate_maximum_forgets_after_two_epochs_of_delay_mode():
    """A path that got twice slower: the old rate leaves the maximum within two
    epochs of 64 rounds, so our own queue stops looking (partly) foreign."""
    st = Plus()
    learn_alone(st, bdp=100)
    ds = [decide(st, cwnd=53, rtt=BASE * 53 // 50) for _ in range(130)]
    assert ds[0].foreign_milli == 3000 and ds[-1].foreign_milli == 0
    assert all(d.mode == MODE["DELAY"] for d in ds)


def test_rate_epoch_sets_how_long_the_rate_maximum_remembers():
    """rate_epoch=512 (the ablation vp_rate_long): the path's rate our slow start
    measured outlives 130 rounds of a lower rate, so the queue our rate no longer
    accounts for still reads as foreign; it goes within two epochs of 512."""
    p = params("VEGAS_PLUS", alpha=3, beta=3, rate_epoch=512)
    st = Plus()
    learn_alone(st, bdp=100, p=p)
    ds = [decide(st, p, cwnd=53, rtt=BASE * 53 // 50) for _ in range(130)]
    assert ds[-1].foreign_milli == 3000
    ds += [decide(st, p, cwnd=53, rtt=BASE * 53 // 50) for _ in range(2 * 512 - 130)]
    assert ds[-1].foreign_milli == 0
    assert all(d.mode == MODE["DELAY"] for d in ds)
    # the default, 64, has forgotten it within the same 130 rounds
    p = params("VEGAS_PLUS", alpha=3, beta=3)
    assert p.rate_epoch == 64
    st = Plus()
    learn_alone(st, bdp=100, p=p)
    ds = [decide(st, p, cwnd=53, rtt=BASE * 53 // 50) for _ in range(130)]
    assert ds[-1].foreign_milli == 0


def test_a_much_slower_path_is_left_after_a_few_failed_probes():
    """Four times slower: our own 3 packets look like 12 at the old rate, so
    delay mode takes them for a competitor's. Each failed probe forgets an
    eighth of the old rate; once ours is 3/4 of what is left, a probe returns
    to delay mode and relearns the rate from itself."""
    st = Plus()
    learn_alone(st, bdp=200)
    for _ in range(3):
        decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=10)
    assert st.mode == MODE["COMPETE"]
    rules = []
    for k in range(1, 20):
        now = 2048 * k
        decide(st, cwnd=60, rtt=BASE * 60 // 50, now_ms=now)        # probe: 60/1.2 + 3 = 53
        decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=now + 50)
        rules.append(decide(st, cwnd=53, rtt=BASE * 53 // 50, now_ms=now + 100).rule)
        if rules[-1] == RULE["TO_DELAY"]:
            break
    assert rules[-1] == RULE["TO_DELAY"] and set(rules[:-1]) == {RULE["PROBE_FAIL"]}
    assert len(rules) <= 12                     # (7/8)^k * 200 <= 4/3 * 50: k = 9
    assert decide(st, cwnd=53, rtt=BASE * 53 // 50).foreign_milli == 0


def test_a_queue_drained_by_a_competitors_halving_is_not_the_path():
    """A probe that lands just after a Reno flow halved sees an empty queue,
    but its rate is only a share of the path's: stay competitive."""
    st = competing()
    decide(st, cwnd=30, rtt=2 * BASE, now_ms=2048)          # probe: cwnd 18
    decide(st, cwnd=18, rtt=2 * BASE, now_ms=2100)
    d = decide(st, cwnd=18, rtt=BASE + 100, now_ms=2150)    # empty queue, 18 of 50 packets
    assert (d.rule, d.mode) == (RULE["PROBE_FAIL"], MODE["COMPETE"])


def fluid(rounds: int, reno_from: int | None, reno_until: int | None,
          bdp: int = 50, buffer: int = 50) -> list[tuple[int, int, int, int]]:
    """One bottleneck, our flow and optionally a Reno flow, one step per round
    of ours: the queue is the windows' excess over the BDP, the RTT its
    drain time plus the base; an overflow cuts both windows (drop-tail,
    same RTT): Reno's by half, ours by vegas_plus's rule (vk_plus_loss).
    Returns (round, mode, our cwnd, queue) per round."""
    st, cwnd, ssthresh, reno, now, out, grown = Plus(), 10, 1 << 30, 0, 0.0, [], 0.0
    for i in range(rounds):
        if reno_from is not None and i == reno_from:
            reno = 10
        if reno_until is not None and i == reno_until:
            reno = 0
        if cwnd + reno > bdp + buffer:          # overflow: both cut, ours by its rule
            cwnd = ssthresh = plus_loss(st, cwnd)
            reno = reno // 2
        queue = max(0, cwnd + reno - bdp)
        rtt = BASE * (bdp + queue) // bdp
        now += rtt / 1000
        d = decide(st, cwnd=cwnd, rtt=rtt, ssthresh=ssthresh, cnt_rtt=max(cwnd, 3),
                   now_ms=int(now))
        if d.rule in (RULE["RENO"], RULE["COMPETE"]):
            # a round's ACKs, one per packet: slow start, else 1 per cnt (Reno's: 1 per cwnd)
            grown += cwnd if cwnd < ssthresh else cwnd / (st.cnt or cwnd)
            cwnd, grown = cwnd + int(grown), grown - int(grown)
        else:
            cwnd, ssthresh = d.cwnd, d.ssthresh
        if reno:
            reno += 1
        out.append((i, d.mode, cwnd, queue))
    return out


def test_fluid_alone_stays_in_delay_mode_with_beta_queued():
    run = fluid(400, None, None)
    assert all(m == MODE["DELAY"] for _, m, _, _ in run)
    assert all(2 <= q <= 4 for _, _, _, q in run[-100:])


def test_fluid_a_reno_flow_from_the_first_round_is_met():
    """Reno from round 0 on a 17-packet path with a 20-packet buffer (the
    testbed's 10 Mbit/s, 20 ms): competitive within Reno's first fill, and
    not starved."""
    run = fluid(1200, reno_from=0, reno_until=None, bdp=17, buffer=20)
    modes = [m for _, m, _, _ in run]
    assert next(i for i, m in enumerate(modes) if m == MODE["COMPETE"]) < 60
    share = [c for i, _, c, _ in run if i >= 600]
    assert sum(share) / len(share) > 0.35 * 17


def test_fluid_a_reno_flow_is_met_and_its_departure_seen():
    run = fluid(1200, reno_from=200, reno_until=800)
    modes = [m for _, m, _, _ in run]
    first = next(i for i, m in enumerate(modes) if m == MODE["COMPETE"])
    assert 200 < first < 260                    # while Reno fills the buffer
    share = [c for i, _, c, _ in run if 400 <= i < 800]
    assert 0.35 * 50 < sum(share) / len(share)  # not starved: Vegas alone ends near 2
    back = next(i for i in range(800, 1200) if modes[i] == MODE["DELAY"])
    took_ms = sum(BASE * (50 + q) // 50 for _, _, _, q in run[800:back]) / 1000
    assert took_ms <= 2048 + 3 * 2 * BASE / 1000   # a probe period and the probe's rounds
    assert all(q <= 4 for _, _, _, q in run[back + 5:])


P_RISE = params("VEGAS_PLUS", alpha=3, beta=3, rise=25)


def held_band(st: Plus, p, rounds: int = intf.PLUS_RATE_EPOCH_DEFAULT) -> None:
    """Delay-mode rounds holding 3 packets of ours at a round RTT of 22 ms on the 20 ms
    baseRTT the flow holds (a base learned behind another flow's queue looks the same);
    by default a whole rate epoch, which arms the rise."""
    for _ in range(rounds):
        assert decide(st, p, cwnd=33, rtt=22_000).rule == RULE["HOLD"]


def test_a_rise_of_the_round_rtt_over_its_low_means_compete():
    """rise=25: the round RTT 30% above the lowest of the rate epochs, for 3 rounds, is a
    loss-based flow's sawtooth refilling the queue. Neither other sign sees it here: the
    queueing delay is 0.43 of the base, under the standing delay's half, and our rate
    maximum (our own 30 packets per base RTT) implies 12.9 packets of queue where 9.9
    are ours."""
    st = Plus()
    held_band(st, P_RISE)
    ds = [decide(st, P_RISE, cwnd=33, rtt=28_600, now_ms=100) for _ in range(3)]
    assert [d.rule for d in ds] == [RULE["DEC"], RULE["DEC"], RULE["TO_COMPETE_RISE"]]
    assert ds[-1].foreign_milli < 8000 and st.mode == MODE["COMPETE"]
    # off (the default), the same rounds leave it in delay mode
    st = Plus()
    held_band(st, P)
    assert [decide(st, P, cwnd=33, rtt=28_600).rule for _ in range(3)] == [RULE["DEC"]] * 3
    assert st.mode == MODE["DELAY"]


def test_the_rise_is_unarmed_until_an_epoch_lies_behind_its_low():
    """Within a flow's first rate epoch another flow's slow start raises the RTT as much
    as a loss-based flow's refill (replayed on the pairs' traces: 37-41%): 60 rounds in,
    the same rise is no sign; from the epoch's turn it is."""
    st = Plus()
    held_band(st, P_RISE, rounds=intf.PLUS_RATE_EPOCH_DEFAULT - 4)
    ds = [decide(st, P_RISE, cwnd=33, rtt=28_600) for _ in range(6)]
    assert [d.rule for d in ds] == [RULE["DEC"]] * 5 + [RULE["TO_COMPETE_RISE"]]
    assert (st.rtt_lo[0], st.rtt_lo[1]) == (28_600, 22_000)   # the turn: a new epoch


def test_a_fall_or_the_bands_own_wobble_is_no_rise():
    """The RTT falling (a competitor leaving) never counts, nor does our own band moving
    the queue by a packet or two: 200 rounds between 3 and 5 packets of ours."""
    st = Plus()
    held_band(st, P_RISE, rounds=intf.PLUS_RATE_EPOCH_DEFAULT - 6)
    for _ in range(5):
        decide(st, P_RISE, cwnd=33, rtt=26_000)     # a queue, no rise yet, that drains
    ds = [decide(st, P_RISE, cwnd=33, rtt=22_000) for _ in range(5)]
    assert all(d.mode == MODE["DELAY"] for d in ds)
    st = Plus()
    ds = [decide(st, P_RISE, cwnd=33 + k % 3, rtt=(33 + k % 3) * BASE // 30)
          for k in range(200)]
    assert all(d.mode == MODE["DELAY"] for d in ds)


def test_the_rises_low_is_forgotten_with_the_rate_epochs():
    """The low is the least round RTT of this rate epoch and the last: a path that got
    slower for good (22 ms, then 25 ms: 14%, no rise) stops being the reference within
    two epochs (rate_epoch=8 here), so 28 ms is then 12% over the low, no rise, where
    the same 28 ms straight after 22 ms (27%) is one. A probe that returns to delay
    mode starts the low afresh from its own round."""
    p = params("VEGAS_PLUS", alpha=3, beta=3, rise=25, rate_epoch=8)
    fresh = Plus()
    held_band(fresh, p)
    assert [decide(fresh, p, cwnd=33, rtt=28_000).rule for _ in range(3)][-1] \
        == RULE["TO_COMPETE_RISE"]
    st = Plus()
    held_band(st, p)
    for _ in range(2 * 8):
        assert decide(st, p, cwnd=33, rtt=25_000).mode == MODE["DELAY"]
    assert st.rtt_lo[0] == st.rtt_lo[1] == 25_000
    assert all(decide(st, p, cwnd=33, rtt=28_000).mode == MODE["DELAY"] for _ in range(6))
    # a passed probe: its drained round (21.2 ms) is the new low, unarmed for an epoch
    st = passed_probe()
    assert (st.rtt_lo[0], st.rtt_lo[1]) == (BASE * 53 // 50, 0)


def test_the_rise_replay_fires_where_the_core_does():
    """vegaskit.analysis.riseruns replays the rise on traced rounds; here it reads the
    core's own records of 40 random walks of the round RTT (22-29.9 ms on a 20 ms base,
    where neither other sign can fire), each 600 rounds of 25 ms through competitive
    mode, its probes and returns to delay mode (which start the low afresh, unarmed for
    an epoch): the replay must fire exactly at the rounds the core left delay mode, by
    the rise or by a recall the rise made."""
    import random

    from vegaskit.analysis import riseruns
    name = {v: k.lower() for k, v in RULE.items()}
    mode = {v: k.lower() for k, v in MODE.items()}
    p = params("VEGAS_PLUS", alpha=3, beta=3, rise=25, rate_epoch=16, foreign_max=1000)
    seen = {"to_compete_rise": 0, "recall": 0, "to_delay": 0}
    for seed in range(40):
        rng, st, rtt, records = random.Random(seed), Plus(), 22_000, []
        for i in range(600):
            if st.mode == MODE["DELAY"]:
                rtt = min(29_900, max(22_000, rtt + rng.choice((-1500, -500, 0, 500, 1500))))
            else:               # competing: a queue; probing: drained to our own band
                rtt = 26_000 if st.mode == MODE["COMPETE"] else 22_000
            d = decide(st, p, cwnd=33, rtt=rtt, now_ms=25 * i)
            records.append({"time_s": float(i), "rule": name[d.rule], "cwnd": 33,
                            "mode": mode[d.mode], "rtt_us": rtt})
            if name[d.rule] in seen:
                seen[name[d.rule]] += 1
        entries = [r["time_s"] for r in records if r["rule"] in riseruns.ENTRIES]
        assert {r["rule"] for r in records} & {"to_compete", "to_compete_delay"} == set()
        firings = riseruns.replay(records, 25, 16)[2]
        assert [(f.t, f.own_exit) for f in firings] == [(t, t) for t in entries], seed
    assert min(seen.values()) >= 20, seen       # every path is exercised
