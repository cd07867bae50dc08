"""`make bench`'s command line: bad input is one line and exit 2, before anything
is loaded or measured (the stages themselves: netns-tests/tests/test_bench_stages.py)."""
import json
import os

import pytest

from vegaskit import paths
from vegaskit.cli import bench


@pytest.mark.parametrize("argv", [["--rounds", "1"], ["--rounds", "x"], ["--seconds", "0"],
                                  ["--stage", "nope"], ["--rerender", "--stage", "swap"]])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bench: error:")


def test_a_stage_alone_needs_the_others_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench.json").write_text(json.dumps({"swap": {}, "flows": {}}))
    assert bench.main(["--stage", "swap"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run every stage first" in err[0]
    assert not (tmp_path / "bench" / "report.md").exists()


def test_rerender_rewrites_the_report_from_bench_json_and_refuses_an_incomplete_one(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    out = tmp_path / "bench"
    out.mkdir()
    assert bench.main(["--rerender"]) == 2                       # no bench.json
    assert "needs a readable" in capsys.readouterr().err
    (out / "bench.json").write_text(json.dumps({"swap": {}}))
    assert bench.main(["--rerender"]) == 2                       # stages missing
    assert "lacks a stage" in capsys.readouterr().err
    assert not (out / "report.md").exists()
    (out / "bench.json").write_text(json.dumps(synthetic()))
    assert bench.main(["--rerender"]) == 0
    assert (out / "report.md").read_text() == bench.report(synthetic())
    assert sorted(p.name for p in out.glob("*.png")) == sorted(f"{n}.png" for n in bench.STAGES)


def test_the_report_says_when_each_stage_was_measured():
    r = {"opcost": {"measured": {"date": "2026-11-24 18:00", "commit": "abc"}},
         "swap": {"measured": {"date": "2026-11-24 19:00", "commit": "def+",
                               "host": "6.18.44, Intel(R) Xeon(R) Processor"}}, "flows": None}
    assert bench.measured_line(r) == ("Measured: opcost 2026-11-24 18:00 (abc); "
                                      "swap 2026-11-24 19:00 (def+; 6.18.44, Intel(R) Xeon(R) "
                                      "Processor).")
    assert bench.host().startswith(os.uname().release + ", ")
    assert bench.measured_line({"swap": {}}) == "Measured: before stages recorded it."


def _s(m: float) -> dict:
    return {"median": m, "low": m * 0.9, "high": m * 1.1, "coverage": 0.969, "n": 6}


def synthetic() -> dict:
    """A bench.json of every stage in the shapes the stages return (bench/*.py)."""
    ccs = ["bpf_vegas", "bpf_vegas_a", "vk_reno_min", "vk_reno_rtt"]
    per_ack = {cc: _s(40 + 20 * i) for i, cc in enumerate(ccs)}
    oc = {"per_call_ns": {cc: {"cong_avoid": _s(30), "pkts_acked": _s(20)} for cc in ccs},
          "calls_per_ack": {cc: {"cong_avoid": _s(0.5), "pkts_acked": _s(1.0)} for cc in ccs},
          "per_ack_ns": per_ack, "decisions_per_ack": {cc: _s(0.25) for cc in ccs[:2]},
          "per_ack_ratio_to_floor": {cc: _s(1.5) for cc in ccs},
          "per_ack_ratio_to_rtt_floor": {cc: _s(1.2) for cc in ccs}}
    trace = {"gbit_s": {m: _s(5) for m in ("off", "decisions", "all")},
             "cost": {m: _s(0.05) for m in ("decisions", "all")},
             "cpu_cost": {m: _s(0.04) for m in ("decisions", "all")},
             "direct_cost": {m: _s(0.01) for m in ("decisions", "all")},
             "bpf_ns_per_ack": {m: _s(100) for m in ("off", "decisions", "all")},
             "records_per_run": {"decisions": 1e3, "all": 6e4},
             "window_ratio": {m: _s(0.8) for m in ("decisions", "all")},
             "srtt_us": {m: _s(40) for m in ("off", "decisions", "all")},
             "lost_total": {"decisions": 0, "all": 0}}
    rates = ["10000000", "100000000"]
    err = {r: {q: _s(50) for q in ("p50", "p99", "max")} for r in rates}
    return {
        "opcost": {"floor": "vk_reno_min", "rtt_floor": "vk_reno_rtt",
                   "one_floor": "vk_reno_one", "one_floor_refused": None, "rounds": 6, "seconds": 4,
                   **oc, "path": {"delay_ms": 2, **oc},
                   "ack_ns_above_rtt_floor": {cc: _s(20) for cc in ccs[:2]},
                   "decision_ns": {cc: _s(150) for cc in ccs[:2]},
                   "rtt_floor_path_shift": _s(0.03),
                   "decision_cost": {"ns_per_decision": {"bpf_vegas": _s(400)},
                                     "clock_read_ns": {"bpf_vegas": _s(20)}}},
        "overhead": {"rounds": 6, "seconds": 4, "cpu_s_per_gb": {"bpf_vegas": _s(0.3)},
                     "gbit_s": {"bpf_vegas": _s(6)}, "ratio_to_reno": {"bpf_vegas": _s(1.01)},
                     "ratio_to_cubic": {"bpf_vegas": _s(1.0)}},
        "tracing": {"rounds": 6, "seconds": 4, "offloads_off": trace, "offloads_default": trace,
                    "code_only": "vk_vegas_aimd", "code_only_off": trace},
        "linkemu": {"rounds": 6, "seconds": 4, "delay_ms": 20, "load": 0.2, "payload": 1000,
                    "error_us": err, "app_error_us": err, "veth_us": err, "fifo": 10,
                    "fifo_poll": 0,
                    "read_wait_us": err,
                    "other_policies": [{"fifo": 0, "fifo_poll": 0, "error_us": err,
                                        "app_error_us": err},
                                       {"fifo": 10, "fifo_poll": 10, "error_us": err,
                                        "app_error_us": err}],
                    "max_gbit_s": _s(1.7), "cpu_s_per_gbit": _s(0.5)},
        "swap": {"pair": ["bpf_vegas", "bpf_vegas_a"], "rounds": 6,
                 "sizes": [{"connections": n, "swaps": 12, "move_ms": _s(n / 400),
                            "moved_min": n, "failed": 0, "vegasctl_max_rss_kb": 20000,
                            "slab_kb_per_connection": 7.5} for n in (200, 10_000)]},
        "flows": {"rounds": 6, "seconds": 4, "counts": [1, 10],
                  "cpu_s_per_gb": {cc: {"1": _s(0.3), "10": _s(0.32)} for cc in ("bpf_vegas", "reno")},
                  "cpu_growth_vs_1_flow": {cc: {"1": _s(1), "10": _s(1.07)}
                                           for cc in ("bpf_vegas", "reno")},
                  "bpf_ns_per_ack": {"1": _s(100), "10": _s(104)}},
    }


def test_the_report_and_a_figure_per_stage_render_from_every_stage(tmp_path):
    from vegaskit.bench import plots
    r = synthetic()
    text = bench.report(r)
    for name in bench.STAGES:
        assert f"![{name}]({name}.png)" in text
    # every policy, the testbed's first (decision 42)
    assert "| 10 Mbit/s | SCHED_FIFO 10, polling ordinary | 50 [45, 55] |" in text
    # the wait to be read, where the stage measured it; "-" where it did not
    row = "| 10 Mbit/s | SCHED_FIFO 10, polling ordinary |" + " 50 [45, 55] |" * 6
    assert row in text
    assert "| 10 Mbit/s | ordinary |" + " 50 [45, 55] |" * 3 + " - | - |" in text
    assert text.index("| 10 Mbit/s | SCHED_FIFO 10, polling ordinary |") \
        < text.index("| 10 Mbit/s | ordinary |") \
        < text.index("| 10 Mbit/s | SCHED_FIFO 10, polling under it up to 10% of a core |")
    assert "| bpf_vegas | 20 [18, 22] | 150 [135, 165] |" in text     # the split of per ACK
    assert "costs +3.0 [+2.7, +3.3]% per ACK on the emulated path" in text   # its check
    assert "| 4.0 [3.6, 4.4] |" in text                              # ACKs per decision
    assert "| bpf_vegas | 400 [360, 440] | - | - | 20 [18, 22] | - |" in text   # a decision
    assert "| bpf_vegas | 0.500 [0.450, 0.550] | 1.000 [0.900, 1.100] |" in text  # calls
    assert "| off | 100 [90, 110] | 100 [90, 110] | 100 [90, 110] | 1.00% [0.90%, 1.10%] |" \
        in text                                                      # tracing, directly
    assert "| off | 0.80 [0.72, 0.88] | 0.80 [0.72, 0.88] | 40 [36, 44] |" in text  # its window
    assert "| off, code only | 0.80 [0.72, 0.88] | 0.80 [0.72, 0.88] |" in text  # Reno's window
    assert "code only trace vk_vegas_aimd, the overhead stage's code-only arm" in text
    written = plots.write(r, tmp_path)
    assert sorted(p.name for p in written) == sorted(f"{n}.png" for n in bench.STAGES)
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_a_tracing_stage_from_before_the_direct_measure_still_renders():
    r = synthetic()
    del r["tracing"]["code_only"], r["tracing"]["code_only_off"]    # later still
    for key in ("offloads_off", "offloads_default"):
        r["tracing"][key] = {k: v for k, v in r["tracing"][key].items()
                             if k not in ("direct_cost", "bpf_ns_per_ack", "window_ratio",
                                          "srtt_us")}
    text = bench.report(r)
    assert "## Tracing from inside the controller" in text and "added CPU" not in text
    assert "code only" not in text
    assert "traced over untraced" not in text


def test_an_opcost_stage_from_before_the_call_counts_still_renders():
    r = synthetic()
    for c in (r["opcost"], r["opcost"]["path"]):
        del c["calls_per_ack"]
    text = bench.report(r)
    assert "## Cost per call" in text and "Calls per ACK" not in text


def test_a_stage_named_twice_runs_once_in_the_benchs_order():
    assert bench.parse(["--stage", "swap", "--stage", "opcost", "--stage", "swap"]).stages == \
        ["opcost", "swap"]


def test_the_split_is_per_call_of_the_deciding_op():
    """opcost.split on two paths whose calls per ACK differ (0.3 and 0.9): per call the
    floor costs the same on both, so its check holds, and a + b x recovers the made-up
    costs (a = 20 ns a call, b = 150 ns a decision) whatever the ACKs did."""
    from vegaskit.bench import opcost

    def path(dec_per_call, floor_ns):
        ours = [floor_ns + 20 + 150 * d for d in dec_per_call]
        return {"per_call_of_deciding": {opcost.RTT_FLOOR: [floor_ns] * 2, "bpf_vegas": ours},
                "dec_per_call_of_deciding": {"bpf_vegas": dec_per_call}}
    out = opcost.split(path([0.7, 0.6], 120.0), path([0.02, 0.01], 120.0))
    assert out["split_unit"] == "call" and out["rtt_floor_path_shift"]["median"] == 0
    assert out["ack_ns_above_rtt_floor"]["bpf_vegas"]["median"] == pytest.approx(20)
    assert out["decision_ns"]["bpf_vegas"]["median"] == pytest.approx(150)
    r = synthetic()
    r["opcost"]["split_unit"] = "call"
    text = bench.report(r)
    assert "ns per call above the RTT floor, without a decision" in text
    assert "costs +3.0 [+2.7, +3.3]% per call on the emulated path" in text


def test_the_split_is_withheld_when_the_floor_moves_between_paths():
    r = synthetic()
    r["opcost"]["rtt_floor_path_shift"] = _s(1.33)
    text = bench.report(r)
    assert "costs +133.0 [+119.7, +146.3]% per ACK on the emulated path" in text
    assert "cannot be told apart from these two paths" in text
    assert "| bpf_vegas | 20 [18, 22] | 150 [135, 165] |" not in text


def test_a_decision_that_reads_as_costing_less_than_nothing_withholds_its_row():
    """A negative b says a decision costs differently on the two paths (measured on
    2026-12-01: -138 ns for bpf_vegas_a): that row is withheld, the others stand."""
    r = synthetic()
    r["opcost"]["decision_ns"]["bpf_vegas_a"] = {"median": -138.0, "low": -157.0,
                                                 "high": -34.0, "coverage": 0.969, "n": 6}
    text = bench.report(r)
    assert "| bpf_vegas | 20 [18, 22] | 150 [135, 165] |" in text
    assert "| bpf_vegas_a | not given: the fit fails | not given: the fit fails |" in text
    assert "for bpf_vegas_a (-138 [-157, -34] ns) it returned a decision costing less" in text


def test_the_split_is_withheld_where_a_timed_decision_costs_differently_on_the_paths():
    """Measured on 2026-12-01: a decision 162 ns over the veth, 1,432 ns on the 2 ms
    path; the split, which assumes one cost, is then not given, and the timed
    decision's share of an ACK on the path is."""
    r = synthetic()
    c = r["opcost"]
    c["decision_cost"] = {"ns_per_decision": {"bpf_vegas": _s(162)},
                          "clock_read_ns": {"bpf_vegas": _s(37)}}
    c["path"] = {**c["path"], "decision_cost": {"ns_per_decision": {"bpf_vegas": _s(1432)},
                                                "record_ns": {"bpf_vegas": _s(900)},
                                                "clock_read_ns": {"bpf_vegas": _s(36)}}}
    text = bench.report(r)
    assert "| bpf_vegas | 20 [18, 22] | 150 [135, 165] |" not in text
    assert "timed directly, bpf_vegas 162 ns over the veth and 1432 on the path" in text
    assert "| bpf_vegas | 162 [146, 178] | 1432 [1289, 1575] | 900 [810, 990] | 37 [33, 41] | " \
        "358 |" in text
    c["path"]["decision_cost"]["ns_per_decision"]["bpf_vegas"] = _s(170)   # alike: split stays
    assert "| bpf_vegas | 20 [18, 22] | 150 [135, 165] |" in bench.report(r)


def test_a_stopped_runs_finished_stages_count_as_figures(tmp_path, monkeypatch, capsys):
    """bench.json holds only some stages, bench.partial.json the others: a --stage run
    of what neither holds gets past the check (and then needs root, refused here)."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench.json").write_text(json.dumps({"swap": {"x": 1}}))
    (tmp_path / "bench" / "bench.partial.json").write_text(json.dumps(
        {k: {"x": 1} for k in ("opcost", "overhead", "tracing", "linkemu")}))
    monkeypatch.setattr(bench, "OURS", ["bpf_vegas"])
    monkeypatch.setattr(bench.Path, "read_text", lambda self: (
        "reno bpf_vegas" if "tcp_available" in str(self) else open(self).read()))
    assert bench.main(["--stage", "flows"]) == 1       # past the check: refused as busy
    assert "already loaded" in capsys.readouterr().err


def test_an_older_emulator_stage_with_one_other_policy_still_renders(tmp_path):
    """bench.json written before the --fifo-poll variant held other_policy, one dict."""
    from vegaskit.bench import plots
    r = synthetic()
    e = r["linkemu"]
    e["other_policy"] = e.pop("other_policies")[0]
    del e["fifo_poll"], e["other_policy"]["fifo_poll"]
    text = bench.report(r)
    assert text.index("| 10 Mbit/s | SCHED_FIFO 10 |") < text.index("| 10 Mbit/s | ordinary |")
    assert "polling" not in text
    plots.write(r, tmp_path)
    assert (tmp_path / "linkemu.png").stat().st_size > 0


def test_the_one_call_floor_is_described_or_its_refusal_given():
    r = synthetic()
    assert "vk_reno_one does vk_reno_rtt's work in one call per ACK" in bench.report(r)
    r["opcost"].update(one_floor=None, one_floor_refused="libbpf: failed to load: -22")
    text = bench.report(r)
    assert "The one-call floor was not registered: libbpf: failed to load: -22." in text
    assert "vk_reno_one does" not in text
    # a bench.json from before the one-call floor says neither
    del r["opcost"]["one_floor"], r["opcost"]["one_floor_refused"]
    assert "one-call floor" not in bench.report(r) and "vk_reno_one" not in bench.report(r)


@pytest.mark.parametrize("stray", ["vk_vegas_aimd", "vk1_vegas"])
def test_a_stages_own_extra_instance_already_loaded_is_refused_up_front(stray, monkeypatch,
                                                                         capsys):
    """The overhead stage's code-only arm and opcost's calls=1 set are loaded by name: one
    already loaded would fail their load mid-bench, so the bench refuses it first, in one line."""
    monkeypatch.setattr(bench.Path, "read_text", lambda self: (
        f"reno {stray}" if "tcp_available" in str(self) else open(self).read()))
    assert bench.main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bench: {stray} already loaded"), err


def test_rerender_of_a_bench_json_of_the_wrong_shape_is_one_line_and_changes_nothing(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.json").write_text(json.dumps({k: {"x": 1} for k in bench.STAGES}))
    assert bench.main(["--rerender"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not the bench's" in err[0], err
    assert sorted(p.name for p in out.iterdir()) == ["bench.json"]


def test_rerender_of_a_bench_json_that_is_not_an_object_is_one_line(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench.json").write_text("[1]")
    assert bench.main(["--rerender"]) == 2
    assert "lacks a stage" in capsys.readouterr().err
