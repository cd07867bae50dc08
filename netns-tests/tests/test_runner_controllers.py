"""The runner's controller instances are unloaded however its run ends, including an
interrupt that lands while `vegasctl load` is still registering one."""
import subprocess

import pytest

from conftest import available_cc
from vegaskit import paths
from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario

pytestmark = pytest.mark.kernel


@pytest.mark.reliability("kill_point")
def test_an_interrupt_during_a_load_leaves_no_controller(monkeypatch):
    """Traced: a batch stopped by SIGTERM as its next run began left bpf_vegas_plus
    registered and pinned. The interrupt ended subprocess.run's wait; vegasctl finished
    the load; the instance was not yet counted as the run's, so nothing unloaded it, and
    the ledger that the next sweep reads was cleared. Here the load completes for real and
    the interrupt comes as it returns."""
    run = Scenario.load(paths.SCENARIOS / "vegas_pair.toml").run("vegas", "ci", 0)
    names = runner.instance_names(run, job=1)          # vegas.j1: nobody else's name
    real = subprocess.run

    def load_then_interrupted(argv, *a, **kw):
        r = real(argv, *a, **kw)
        if "load" in argv:
            raise KeyboardInterrupt
        return r

    before = set(available_cc())
    monkeypatch.setattr(runner.subprocess, "run", load_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        with runner.controllers(run, names):
            pass
    monkeypatch.undo()
    assert set(available_cc()) == before, f"left registered: {set(available_cc()) - before}"
    assert not any(n in runner.registered() for n in names.values())
