"""The native A/B's analysis (vegaskit.nativeab.analyse) on synthetic raw runs: the
report must call a real shift a difference and equal arms the same. The runs
themselves are real only under `make native-ab`; this checks the arithmetic."""
import csv
import json
import random

from vegaskit.nativeab import analyse
from vegaskit.testbed.scenario import Scenario

SCEN = Scenario.parse('''
name = "syn"
duration = 20
[links]
bottleneck = { rate = "10M", rtt_ms = 40, buffer = 50 }
[[flows]]
cc = "{cc}"
[runs]
native = { cc = "vegas" }
bpf = { cc = "bpf_vegas" }
[profiles.ab]
[report]
notes = "synthetic"
''')


def make_run(d, rng, cwnd_mean, rtt_ms):
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({
        "flows": [{"flow": 1, "start_s": 0.0, "end_s": 20.0, "second_half_bps": 9.6e6 + rng.gauss(0, 1e4)}],
        "jain": 1.0, "queue_mean_pkts": 3 + rng.gauss(0, 0.1), "queue_p95_pkts": 5,
        "retransmits": rng.randint(0, 3)}))
    with open(d / "probe.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "flow", "snd_cwnd", "ssthresh", "srtt_us"])
        for i in range(400):
            w.writerow([i * 0.05, 1, round(cwnd_mean + rng.gauss(0, 1)), 2147483647,
                        int((rtt_ms + rng.gauss(0, 0.3)) * 1000)])


def raw_dir(tmp_path, shift):
    rng = random.Random(1)
    raw = tmp_path / "raw"
    for rep in range(6):
        make_run(raw / "syn" / f"native-{rep}", rng, 36, 43)
        make_run(raw / "syn" / f"bpf-{rep}", rng, 36 + shift, 43 + shift / 10)
    (raw / "setup.json").write_text(json.dumps({
        "kernel": "test", "tcp_vegas": {"alpha": 2, "beta": 4, "gamma": 1},
        "bpf_vegas": {"params": {"alpha": 2, "beta": 4, "gamma": 1}}, "reps": 6}))
    return raw


def rows_by_key(result):
    return {r["key"]: r for r in result["rows"]}


def test_a_shifted_window_is_reported_as_a_difference(tmp_path):
    rows = rows_by_key(analyse.compare(raw_dir(tmp_path, 5), "syn"))
    assert rows["cwnd_median_pkts"]["differs"]
    assert rows["cwnd_median_pkts"]["bpf"]["median"] - rows["cwnd_median_pkts"]["native"]["median"] == 5
    assert rows["srtt_median_ms"]["differs"]
    assert not rows["throughput_mbps"]["differs"]


def test_equal_arms_are_reported_the_same(tmp_path):
    rows = rows_by_key(analyse.compare(raw_dir(tmp_path, 0), "syn"))
    assert not any(r["differs"] for r in rows.values())
    assert "jain" not in rows          # one flow: no fairness to compare


def test_write_produces_the_report_json_and_figure(tmp_path):
    out = tmp_path / "out"
    path = analyse.write(raw_dir(tmp_path, 5), out, [SCEN], "make native-ab")
    text = path.read_text()
    assert "| cwnd per ACK, steady median (pkts) | 36.0 [" in text
    assert "**differs**" in text and "synthetic" in text
    assert (out / "syn.png").stat().st_size > 0
    data = json.loads((out / "ab.json").read_text())
    assert len(data["scenarios"][0]["runs"]["bpf"]) == 6
