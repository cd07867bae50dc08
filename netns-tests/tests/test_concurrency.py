"""vegasctl against other users of the host: concurrent commands and a pin tree
someone else made. Commands that change state hold one lock (/run/vegaskit.lock),
so nothing is lost; a pin root that is not root's own, 0700, is refused."""
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import PIN_ROOT, VEGASCTL, available_cc, loaded, vegasctl, vegasctl_json
from vegaskit.testing import reliability

pytestmark = pytest.mark.kernel
ROUNDS = int(os.environ.get("VK_RACE_ROUNDS", 20))


def run(*args):
    return subprocess.run([str(VEGASCTL), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.reliability("race")
def test_parallel_sets_of_different_keys_lose_no_update():
    with loaded("vegas") as name, ThreadPoolExecutor(6) as pool:
        for r in range(ROUNDS):
            reliability.case()
            want = {"alpha": 1 + r % 2, "beta": 5 + r % 2, "gamma": 1 + r % 3,
                    "ss_every_other_rtt": r % 2, "keep_base_rtt": (r + 1) % 2,
                    "loss_cut": "1/4" if r % 2 else "1/2",
                    "semantics": "paper" if r % 2 else "exact"}
            done = list(pool.map(lambda kv: run("set", name, f"{kv[0]}={kv[1]}"), want.items()))
            assert all(d.returncode == 0 for d in done), [d.stderr for d in done]
            got = vegasctl_json("show", name)["params"]
            assert {k: got[k] for k in want} == want, f"round {r}: an update was lost"


def _stopped(pid: int, timeout: float = 10) -> bool:
    """Whether process `pid` reaches the stopped state (T) within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        time.sleep(0.01)
    return False


def _shared_pins_kept(label: str) -> None:
    assert (PIN_ROOT / "shared").is_dir() and any((PIN_ROOT / "shared").iterdir()), \
        f"{label}: the shared pins went with the unload"


@pytest.mark.reliability("race")
def test_a_load_inside_the_last_unloads_pruning_waits_for_it():
    """The window itself, opened on purpose: the last unload is stopped (SIGSTOP,
    VEGASCTL_PAUSE_AT) after it found no instance left and before it removes the
    shared pins. A load started then must wait for the lock; without the lock it
    would reuse those pins and the unload, continued, would remove them under it."""
    vegasctl("load", "vegas", "--name", "vk_race_a")
    unload = load = None
    try:
        reliability.case()
        unload = subprocess.Popen([str(VEGASCTL), "unload", "vk_race_a"], text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env={**os.environ, "VEGASCTL_PAUSE_AT": "unload:pruning"})
        assert _stopped(unload.pid), "unload never reached its pruning step"
        load = subprocess.Popen([str(VEGASCTL), "load", "vegas", "--name", "vk_race_b"],
                                text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1)
        assert load.poll() is None, f"load did not wait for the unload: {load.communicate()}"
        os.kill(unload.pid, signal.SIGCONT)
        assert unload.wait(30) == 0 and load.wait(30) == 0, (unload.stderr.read(), load.stderr.read())
        assert "vk_race_b" in available_cc()
        names = [i["name"] for i in vegasctl_json("list")["instances"]]
        assert names == ["vk_race_b"], f"list shows {names}"
        _shared_pins_kept("the paused unload")
    finally:
        for p in (unload, load):
            if p and p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.wait(30)
        for n in ("vk_race_a", "vk_race_b"):
            vegasctl("unload", n, check=False)


@pytest.mark.reliability("race")
def test_load_racing_the_last_unload_leaves_a_working_controller():
    """The same race left to the scheduler, many rounds."""
    vegasctl("load", "vegas", "--name", "vk_race_a")
    try:
        for r in range(ROUNDS):
            reliability.case()
            old, new = ("vk_race_a", "vk_race_b") if r % 2 == 0 else ("vk_race_b", "vk_race_a")
            with ThreadPoolExecutor(2) as pool:
                u = pool.submit(run, "unload", old)
                ld = pool.submit(run, "load", "vegas", "--name", new)
                assert u.result().returncode == 0 and ld.result().returncode == 0
            assert new in available_cc()
            names = [i["name"] for i in vegasctl_json("list")["instances"]]
            assert names == [new], f"round {r}: list shows {names}"
            _shared_pins_kept(f"round {r}")
    finally:
        for n in ("vk_race_a", "vk_race_b"):
            vegasctl("unload", n, check=False)


@pytest.fixture
def foreign_root():
    """PIN_ROOT made by someone else; removed afterwards whatever happens."""
    assert not PIN_ROOT.exists(), "a controller is loaded: this test needs the tree absent"
    yield PIN_ROOT
    if PIN_ROOT.is_symlink():
        PIN_ROOT.unlink()
    elif PIN_ROOT.exists():
        os.rmdir(PIN_ROOT)


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("how,expect", [
    ("other_owner", "belongs to uid 65534"),
    ("open_mode", "lets others in"),
    ("symlink", "not a directory"),
])
def test_a_pin_root_made_by_someone_else_is_refused(foreign_root, how, expect):
    if how == "symlink":
        foreign_root.symlink_to("/tmp")
    else:
        foreign_root.mkdir(mode=0o700)
        if how == "other_owner":
            os.chown(foreign_root, 65534, 65534)
        else:
            os.chmod(foreign_root, 0o777)
    before = available_cc()
    for args in (["load", "vegas"], ["list"], ["set", "bpf_vegas", "alpha=1"]):
        reliability.case()
        r = run(*args)
        assert r.returncode != 0 and r.stdout == ""
        assert r.stderr.count("\n") == 1 and expect in r.stderr, r.stderr
    assert available_cc() == before
    if how != "symlink":
        assert not (foreign_root / "cc").exists(), "vegasctl built its tree in the foreign root"


@pytest.mark.reliability("race")
def test_a_trace_switching_on_and_off_does_not_undo_a_concurrent_set():
    """`trace` writes its bits into the params (a read-modify-write, like `set`):
    under the lock, a `set` racing it keeps its value."""
    with loaded("vegas") as name, ThreadPoolExecutor(2) as pool:
        for r in range(ROUNDS // 2):
            reliability.case()
            alpha, beta = 1 + r % 3, 6 + r % 2
            tr = pool.submit(run, "trace", "--decisions", "--duration", "0.2")
            st = pool.submit(run, "set", name, f"alpha={alpha}", f"beta={beta}")
            assert st.result().returncode == 0 and tr.result().returncode == 0
            got = vegasctl_json("show", name)
            assert (got["params"]["alpha"], got["params"]["beta"]) == (alpha, beta), \
                f"round {r}: the trace undid the set"
            assert got["tracing"] == "off"
