"""cpustat: the one reader of /proc/stat's cpu line."""
import pytest

from vegaskit import cpustat


def test_parse_names_the_columns_and_sums_busy_and_total():
    j = cpustat.parse("cpu  10 1 20 300 4 5 6 7 99 98\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    assert (j.user, j.nice, j.system, j.idle, j.iowait, j.irq, j.softirq, j.steal) == \
        (10, 1, 20, 300, 4, 5, 6, 7)
    assert j.busy == 10 + 1 + 20 + 5 + 6
    # guest columns (99, 98) are already inside user and nice
    assert j.total == 10 + 1 + 20 + 300 + 4 + 5 + 6 + 7


def test_parse_without_steal_column_reads_zero():
    assert cpustat.parse("cpu 1 2 3 4 5 6 7\n").steal == 0


def test_parse_refuses_another_file():
    with pytest.raises(ValueError):
        cpustat.parse("MemTotal: 1 kB\n")


def test_now_reads_this_host_and_time_moves_forward():
    a = cpustat.now()
    sum(range(2_000_000))
    b = cpustat.now()
    assert b.total >= a.total and b.busy >= a.busy and a.total > 0
