"""Scenario files are checked whole before anything runs: every bad value is one
line naming the key (never a traceback, a hang or a write outside --out)."""
import subprocess
import sys

import pytest

from vegaskit import paths
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.testing import reliability

GOOD = '''
name = "t"
duration = 10
[links]
bottleneck = { rate = "1M", rtt_ms = 40, buffer = 50 }
[[flows]]
cc = "{cc}"
[runs]
vegas = { cc = "bpf_vegas" }
[profiles.ci]
time_scale = 0.5
'''


def with_(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


BAD = [
    (with_('name = "t"', 'name = "../../../tmp/x"'), "names a directory"),
    (with_('name = "t"', 'name = ".hidden"'), "names a directory"),
    (with_('name = "t"', 'name = 7'), "names a directory"),
    (with_('duration = 10', 'duration = 10\nstrat = 1'), "unknown key strat"),
    (with_('duration = 10', 'duration = -1'), "duration must be a number"),
    (with_('duration = 10', 'duration = nan'), "duration must be a number"),
    (with_('duration = 10', 'duration = "ten"'), "duration must be a number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nbytes = -100'), "bytes must be a whole number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nbytes = 1.5'), "bytes must be a whole number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nacks = "sometimes"'), "acks must be one of delayed, every"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = { tcp_rmem = 1 }'), "unknown key tcp_rmem in flow 1.sysctl"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = { tcp_frto = -1 }'), "flow 1.sysctl.tcp_frto must be a whole number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = { tcp_frto = "0" }'), "flow 1.sysctl.tcp_frto must be a whole number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = 3'), "flow 1.sysctl must be a table"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = { tcp_pacing_ca_ratio = 1001 }'),
     "flow 1.sysctl.tcp_pacing_ca_ratio must be a whole number in [0, 1000]"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nsysctl = { tcp_frto = 3 }'),
     "flow 1.sysctl.tcp_frto must be a whole number in [0, 2]"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nstart = 99'), "not before the end"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nmss = 1'), "mss must be a whole number"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\nduration = 5\nbytes = 10'), "not both"),
    (with_('cc = "{cc}"', 'cc = "{cc}"\ncolour = "red"'), "unknown key colour in flow 1"),
    (with_('cc = "{cc}"', 'label = "x"'), "needs cc"),
    (with_('rate = "1M"', 'rate = inf'), "bad rate"),
    (with_('rate = "1M"', 'rate = "fast"'), "bad rate"),
    (with_('rate = "1M"', 'rate = 0'), "rate must be above 0"),
    (with_('rtt_ms = 40', 'rtt_ms = -5'), "rtt_ms must be a number"),
    (with_('buffer = 50', 'buffer = 0'), "buffer must be a whole number"),
    (with_('buffer = 50', 'buffer = 50, loss = 1.0'), "loss must be below 1"),
    (with_('buffer = 50', 'buffer = 50, jitter = 3'), "unknown key jitter"),
    (with_('buffer = 50', 'buffer = 50, spare_retx = 2'), "spare_retx must be true, false, 0 or 1"),
    (with_('buffer = 50', 'buffer = 50, spare_retx = "yes"'), "spare_retx must be true, false, 0 or 1"),
    (with_('bottleneck = ', 'access = { rate = "1M" }\nbottlenek = '), "unknown key bottlenek"),
    (with_('[runs]', '[[schedule]]\nat = 1\nlink = "s9"\nrate = "1M"\n[runs]'), "sN or dN"),
    (with_('[runs]', '[[schedule]]\nat = 99\nlink = "s1"\n[runs]'), "at must be a number"),
    (with_('vegas = { cc = "bpf_vegas" }', ''), "at least one run"),
    (with_('time_scale = 0.5', 'time_scale = 0'), "time_scale must be a number"),
    (with_('time_scale = 0.5', 'runs = ["nope"]'), "unknown run 'nope'"),
    (with_('time_scale = 0.5', 'speed = 2'), "unknown key speed in profile ci"),
    (GOOD.replace('[profiles.ci]\ntime_scale = 0.5', ''), "missing 'profiles'"),
    (with_('time_scale = 0.5', 'reps = 0'), "reps must be a whole number"),
    (with_('time_scale = 0.5', 'reps = 2.5'), "reps must be a whole number"),
    (with_('time_scale = 0.5', 'start_jitter_s = -1'), "start_jitter_s must be a number"),
    # run and profile names are directories too (results.py removes them before a rerun)
    (with_('vegas = { cc', '"../../../../tmp/evil" = { cc'), "run name '../../../../tmp/evil'"),
    (with_('[profiles.ci]', '[profiles."../.."]'), "profile name '../..'"),
    (with_('bottleneck = ', 'access = '), "[links] needs a bottleneck"),
    (with_('[[flows]]', 'edges = "veth"\n[[flows]]'), "links.edges must be one of emulated, direct"),
    (with_('[[flows]]', 'edges = 1\n[[flows]]'), "links.edges must be one of emulated, direct"),
    (with_('bottleneck = ', 'edges = "direct"\naccess = { rate = "1G" }\nbottleneck = '),
     'links.edges = "direct" has no access or egress link to set'),
    (with_('[[flows]]', 'edges = "direct"\n[[flows]]\negress = { rate = "1G" }'),
     'flow 1.egress: links.edges = "direct" has no egress link'),
    (with_('[[flows]]', 'edges = "direct"\n[[flows]]').replace(
        '[runs]', '[[schedule]]\nat = 1\nlink = "s1"\nrate = "1M"\n[runs]'),
     'link must be bottleneck: links.edges = "direct" has no other link'),
    # placeholders are {name}: str.format's conversions, specs and attributes are refused
    (with_('cc = "{cc}"', 'cc = "{cc!r:>99999999999}"'), "bad placeholder {cc!r:>99999999999}"),
    (with_('cc = "{cc}"', 'cc = "{cc.__class__}"'), "bad placeholder {cc.__class__}"),
    (with_('cc = "{cc}"', 'cc = "{cc[0]}"'), "bad placeholder {cc[0]}"),
    (with_('cc = "{cc}"', 'cc = "{cc}}"'), "unmatched brace"),
    (with_('[runs]', '[controllers]\nvk = "vegas --name \'x"\n[runs]'),
     "controllers.vk: No closing quotation"),
    (with_('[runs]', '[controllers]\nvk = " "\n[runs]'), "controllers.vk is empty"),
    # vk_va_keepbase.j1 would pass the kernel's 15 characters at --jobs 2 or more
    (with_('[runs]', '[controllers]\nvk_va_keepbase = "vegas_a"\n[runs]'),
     "controllers.vk_va_keepbase: a name of at most 12 characters"),
    (GOOD + '[[paper.figures]]\nid = "x"\nrun = "nope"\nmetric = "jain"\nvalue = 1\n',
     "unknown run 'nope'"),
    (GOOD + '[[paper.figures]]\nid = "x"\nrun = "vegas"\nmetric = "speed"\nvalue = 1\n',
     "is not one of"),
    (GOOD + '[report]\nper_rep = ["nope"]\n', "[report].per_rep names unknown run 'nope'"),
    (GOOD + '[report]\nper_rep = "vegas"\n', "[report].per_rep must be a list of run names"),
]


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("text,expect", BAD)
def test_a_bad_scenario_is_one_line_naming_the_key(text, expect):
    with pytest.raises(ScenarioError) as e:
        Scenario.parse(text, "x.toml")
    msg = str(e.value)
    assert expect in msg and "\n" not in msg and msg.startswith("x.toml: ")


@pytest.mark.reliability("bad_input")
def test_a_bad_value_filled_in_by_a_run_is_caught_when_the_run_is_made():
    reliability.case(2)
    s = Scenario.parse(with_('buffer = 50', 'buffer = "{buf}"')
                       .replace('cc = "bpf_vegas"', 'cc = "bpf_vegas", buf = "lots"'))
    with pytest.raises(ScenarioError, match=r"t/vegas: links.bottleneck.buffer must be a number"):
        s.run("vegas", "ci")
    s = Scenario.parse(with_('cc = "{cc}"', 'cc = "{cc} {bogus}"'))
    with pytest.raises(ScenarioError, match="t/vegas: no value for 'bogus'"):
        s.run("vegas", "ci")


def test_spare_retx_reaches_linkemu_and_a_placeholder_fills_it():
    s = Scenario.parse(with_('buffer = 50', 'buffer = 50, spare_retx = true'))
    assert s.run("vegas", "ci").bottleneck.params().spec().endswith(",spare_retx=1")
    assert Scenario.parse(GOOD).run("vegas", "ci").bottleneck.params().spec().endswith(",spare_retx=0")
    s = Scenario.parse(with_('buffer = 50', 'buffer = 50, spare_retx = "{spare}"')
                       .replace('cc = "bpf_vegas"', 'cc = "bpf_vegas", spare = 0'))
    assert s.run("vegas", "ci").bottleneck.spare_retx is False


def test_a_flows_sysctl_reaches_its_run_sorted_by_key():
    s = Scenario.parse(with_('cc = "{cc}"', 'cc = "{cc}"\n'
                             'sysctl = { tcp_timestamps = 0, tcp_limit_output_bytes = 3000 }'))
    assert s.run("vegas", "ci").flows[0].sysctl == (("tcp_limit_output_bytes", 3000),
                                                     ("tcp_timestamps", 0))
    assert Scenario.parse(GOOD).run("vegas", "ci").flows[0].sysctl == ()


@pytest.mark.reliability("bad_input")
def test_flows_last_whole_seconds_and_transfers_keep_a_byte():
    """iperf3 -t reads whole seconds (atoi): 4.7 ran 4 s and 0.5 ran until killed.
    A timed flow lasts floor(its scaled duration), and under 1 s is refused; a
    transfer scaled below one byte keeps one (0 would make it a timed flow)."""
    reliability.case(2)
    s = Scenario.parse(with_('cc = "{cc}"', 'cc = "{cc}"\nduration = 9.5'))
    assert s.run("vegas", "ci").flows[0].duration == 4.0          # 9.5 * 0.5 = 4.75
    s = Scenario.parse(with_('cc = "{cc}"', 'cc = "{cc}"\nduration = 1.5'))
    with pytest.raises(ScenarioError, match="lasts 0.75 s in profile ci: iperf3 needs at least 1 s"):
        s.run("vegas", "ci")
    s = Scenario.parse(with_('cc = "{cc}"', 'cc = "{cc}"\nbytes = 1'))
    assert s.run("vegas", "ci").flows[0].bytes == 1


def test_every_shipped_scenario_is_valid_in_every_profile():
    files = sorted(paths.SCENARIOS.glob("**/*.toml"))
    assert len(files) >= 14
    for f in files:
        s = Scenario.load(f)
        for prof in s.profiles:
            for r in s.profile_runs(prof):
                s.run(r, prof)


def test_repetitions_differ_in_seed_and_start_and_are_reproducible():
    s = Scenario.parse(with_('time_scale = 0.5', 'time_scale = 1.0\nreps = 6\nstart_jitter_s = 0.5')
                       + '')
    assert s.reps("ci") == 6
    runs = [s.run("vegas", "ci", rep) for rep in range(6)]
    starts = [r.flows[0].start for r in runs]
    assert [r.seed for r in runs] == [1, 2, 3, 4, 5, 6]
    assert all(0 <= x <= 0.5 for x in starts) and len(set(starts)) == 6
    assert starts == [s.run("vegas", "ci", rep).flows[0].start for rep in range(6)]
    # the flow ends by the run's end, in whole seconds (iperf3 -t)
    assert runs[0].flows[0].duration == 9 and starts[0] > 0


@pytest.mark.reliability("bad_input")
def test_the_results_command_refuses_a_bad_file_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(with_('name = "t"', 'name = "../../escape"'))
    r = subprocess.run([sys.executable, "-m", "vegaskit.cli.results", str(bad), "--profile", "ci",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("testbed: "), r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.reliability("bad_input")
def test_a_partial_rerun_with_other_reps_is_refused_over_the_results(tmp_path):
    """--run with a --reps other than the profile's would overwrite the kept
    repetitions of those runs in results/ with a series no report matches."""
    r = subprocess.run([sys.executable, "-m", "vegaskit.cli.results",
                        str(paths.SCENARIOS / "rerouting.toml"), "--profile", "full",
                        "--run", "vegas_a", "--reps", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "give --out DIR" in r.stderr, r.stderr


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("how", ["--index", "--rerender"])
def test_rewriting_reports_without_results_is_refused_in_one_line(tmp_path, how):
    """--index into a directory that is not there, --rerender of a scenario with no
    summaries.json: one line, exit 2, nothing written."""
    out = tmp_path / "out"
    if how == "--rerender":
        out.mkdir()
    r = subprocess.run([sys.executable, "-m", "vegaskit.cli.results", how, "--profile", "full",
                        "--out", str(out), str(paths.SCENARIOS / "newreno_1v1.toml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("testbed: "), r.stderr
    assert not out.exists() or not any(out.iterdir())


def test_a_start_placeholder_is_a_number_once_each_run_fills_it():
    """A flow's start may be a {placeholder} (runs that fix the start order,
    packet_size's late256/late1448); the value a run gives is checked as a
    start when the run is made, one line naming the flow."""
    text = with_('cc = "{cc}"', 'cc = "{cc}"\nstart = "{s1}"').replace(
        'vegas = { cc = "bpf_vegas" }',
        'vegas = { cc = "bpf_vegas", s1 = 2 }\nlate = { cc = "bpf_vegas", s1 = "soon" }\n'
        'after = { cc = "bpf_vegas", s1 = 99 }\nnone = { cc = "bpf_vegas" }')
    s = Scenario.parse(text, "x.toml")
    assert s.run("vegas", "ci").flows[0].start == 1.0           # 2 s, time scale 0.5
    for run, expect in (("late", "flow 1.start must be a number"), ("after", "after the run"),
                        ("none", "no value for 's1'")):
        with pytest.raises(ScenarioError) as e:
            s.run(run, "ci")
        assert expect in str(e.value) and "\n" not in str(e.value), str(e.value)
