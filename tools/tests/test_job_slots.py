"""Job slots: runs at once on one host, in one batch or in several, never share
a slot, so never an instance name (cli/results.py, testbed/leftovers.py)."""
import os
import subprocess
import sys
from types import SimpleNamespace

from vegaskit.testbed import leftovers, runner, scenario


def test_slots_are_distinct_skip_names_in_use_and_return_on_close(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "LEDGER_DIR", tmp_path)
    a, fa = leftovers.claim_slot(4)
    b, fb = leftovers.claim_slot(4, in_use=lambda n: n == 2)
    assert (a, b) == (1, 3)
    os.close(fa)
    c, fc = leftovers.claim_slot(4)
    assert c == 1
    for fd in (fb, fc):
        os.close(fd)


def test_a_slot_held_by_another_process_is_skipped_until_it_dies(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "LEDGER_DIR", tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, vegaskit.testbed.leftovers as l, pathlib;"
         f"l.LEDGER_DIR = pathlib.Path({str(tmp_path)!r}); print(l.claim_slot(4)[0], flush=True);"
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "1"
        n, fd = leftovers.claim_slot(4)
        assert n == 2
        os.close(fd)
    finally:
        holder.kill()
        holder.wait()
    n, fd = leftovers.claim_slot(4)     # the kernel dropped the dead holder's lock
    assert n == 1
    os.close(fd)


def test_every_slot_keeps_every_instance_name_legal_and_distinct():
    """bpf_vegas_plus.jL would be 17 characters: it runs as vegas_plus.jL."""
    run = SimpleNamespace(flows=[SimpleNamespace(cc=c) for c in runner.intf.CONTROLLERS],
                          controllers={})
    for job in range(1, len(scenario.SLOT_LABELS) + 1):
        names = runner.instance_names(run, job)
        assert all(len(n) < runner.intf.NAME_MAX for n in names.values())
        assert len(set(names.values())) == len(names)
    assert runner.instance_names(run, 1)["bpf_vegas_plus"] == "vegas_plus.j1"
    assert runner.instance_names(run, 1)["bpf_vegas"] == "bpf_vegas.j1"
