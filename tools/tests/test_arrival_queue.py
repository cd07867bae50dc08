"""The queue as arriving packets met it, beside the time average (runner.link_queues,
report._arrival_rows): what a delay-based sender's RTT samples measure."""
from types import SimpleNamespace

import pytest

from vegaskit.testbed import lateness, report, runner


def _run(rate_bps=10_000_000):
    return SimpleNamespace(bottleneck=SimpleNamespace(rate_bps=rate_bps), flows=[])


def test_each_link_gets_the_queue_its_packets_met_in_packet_times():
    # a 1500-byte packet takes 1.2 ms at 10 Mbit/s. A into an idle link; B and C
    # together 0.1 ms later; B starts at 1.2 ms, C at 2.4 ms: waits 0, 1.1, 2.3 ms
    # = 3.4 / 3 ms = 0.944 packet times; ahead 0, 0, 1 -> 0.333
    q = [(0.0, 1, "enq"), (0.0, 0, "deq"), (0.0001, 1, "enq"), (0.0001, 2, "enq"),
         (0.0012, 1, "deq"), (0.0024, 0, "deq")]
    out = runner.link_queues(_run(), {"bottleneck": q}, 0.0036)["bottleneck"]
    assert out["arrival_ahead_pkts"] == 0.333
    assert out["arrival_wait_pkts"] == pytest.approx(0.944, abs=0.001)
    assert out["queue_mean_pkts"] == round((2 * 0.0011 + 1 * 0.0012) / 0.0036, 2)


def test_an_unlimited_link_or_an_empty_log_gets_none():
    q = [(0.0, 1, "enq"), (0.0, 0, "deq")]
    assert "arrival_wait_pkts" not in runner.link_queues(_run(0), {"bottleneck": q}, 1.0)["bottleneck"]
    assert "arrival_wait_pkts" not in runner.link_queues(_run(), {"bottleneck": [(0.0, 0, "drop")]},
                                                         1.0)["bottleneck"]


def _sm(run, wait=None, above_ms=None, late=None):
    link = {"queue_mean_pkts": 1.3}
    if wait is not None:
        link |= {"arrival_ahead_pkts": 1.5, "arrival_wait_pkts": wait}
    flows = [{"flow": 1, "decisions": {} if above_ms is None else {"rtt_above_base_ms": above_ms}},
             {"flow": 2}]       # a reno flow: no decisions
    sm = {"run": run, "links": {"bottleneck": link}, "flows": flows,
          "bottleneck": {"rate_bps": 10_000_000}}
    if late is not None:        # us: the bottleneck, flow 1's links, and flow 2's (not its path)
        sm["emulator_release_late_us"] = {"bottleneck": {"ab": late, "ba": late},
                                          "s1": {"ab": late, "ba": 0.0}, "d1": {"ab": 0.0, "ba": late},
                                          "s2": {"ab": 9999.0, "ba": 9999.0}}
    return sm


def test_the_report_lists_only_runs_whose_every_repetition_measured_it():
    by_run = {"fr": [_sm("fr", 2.0, 1.8, 120.0), _sm("fr", 2.2, 2.04, 150.0)],
              "untraced": [_sm("untraced", 2.0), _sm("untraced", 2.0)],
              "old": [_sm("old", 2.0), _sm("old")]}
    rows = report._arrival_rows(by_run)
    # 1.8 and 2.04 ms over a 1.2 ms packet time: 1.5 and 1.7 packet times; lateness
    # 4 x 120 and 4 x 150 us on flow 1's path (s2 is flow 2's): 0.4 and 0.5
    assert rows[-2] == ("| fr | 1.3 [1.3, 1.3] (2, 50%) | 1.5 [1.5, 1.5] (2, 50%) | "
                        "2.1 [2, 2.2] (2, 50%) | 1.6 [1.5, 1.7] (2, 50%) | 0.45 [0.4, 0.5] (2, 50%) |")
    assert rows[-1].startswith("| untraced |") and rows[-1].endswith("| - | - |")
    assert not any(r.startswith("| old") for r in rows)
    assert report._arrival_rows({"old": [_sm("old")]}) == []


def test_a_flows_decisions_give_the_rtt_they_read_above_base_rtt_over_its_second_half():
    # flow active 0-10 s: decisions at 2 s (first half, left out), 6 s and 9 s read
    # 1.0 and 3.0 ms above a baseRTT of 40 ms -> 2.0 ms
    t0 = 100.0
    fl = {"flow": 1, "start_s": 0.0, "end_s": 10.0}
    recs = [{"type": "decision", "dport": runner.BASE_PORT + 1, "time_s": t0 + t, "rule": "hold",
             "alpha": 1, "rtt_us": 40000 + ex, "base_rtt_us": 40000}
            for t, ex in ((2.0, 9000), (6.0, 1000), (9.0, 3000))]
    runner.decisions_per_flow([fl], recs, t0)
    assert fl["decisions"]["rtt_above_base_ms"] == 2.0


def test_each_link_gives_its_mean_release_lateness_both_ways():
    final = {"bottleneck": {"ab": {"late_mean_us": 40.5}, "ba": {"late_mean_us": 12.0}},
             "s1": {"ab": {"late_max_us": 3.0}, "ba": {}},        # an emulator that did not count it
             "d1": {"ab": {"late_mean_us": 7.0}, "ba": {"late_mean_us": 1.5}}}
    assert lateness.release_late_means(final) == {"bottleneck": {"ab": 40.5, "ba": 12.0},
                                                  "d1": {"ab": 7.0, "ba": 1.5}}
