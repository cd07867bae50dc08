"""The report's bottleneck line names the buffer every run had: one size, two (the runs
of the other named, alpha_beta_sweep's *_deepbuf), or a sweep's range (buffer_sweep)."""
from vegaskit.testbed import report


def runs(*pairs: tuple[str, int]) -> list[dict]:
    return [{"run": run, "bottleneck": {"buffer_pkts": n}} for run, n in pairs]


def test_one_size():
    assert report.buffers(runs(("a", 50), ("b", 50))) == "50 packets"


def test_two_sizes_name_the_fewer_runs():
    got = report.buffers(runs(("reno", 50), ("eq20", 50), ("eq20", 50),
                              ("eq40_deep", 800), ("eq20_deep", 800)))
    assert got == "50 packets; 800 in eq20_deep, eq40_deep"


def test_a_sweep_gives_its_range():
    got = report.buffers(runs(("b10", 10), ("b15", 15), ("b20", 20), ("b30", 30)))
    assert got == "10 to 30 packets, by run"
