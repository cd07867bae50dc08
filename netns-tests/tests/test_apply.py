"""`vegasctl apply`, `export` and `reset` on the live kernel (docs/DESIGN.md §4.7).

The files declare two controllers, the default of a namespace of the test's
own and, where connections run, a move of that namespace's cubic connections.
The host's own default is never touched. Each test checks the state through
the kernel (`list`, `show`, the namespace's sysctl, ss), not through apply's
own words.
"""
from __future__ import annotations

import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from conftest import available_cc, vegasctl, vegasctl_json
from livecheck import allow_cubic, check_complete, socket_ccs, spawn_checkstream, wait_for  # noqa: F401 (fixture)
from vegaskit.testbed.netns import Lab, Netns
from vegaskit.testing import reliability
from vegaskit.testbed.topology import htb_path, receiver_addr, veth_pair

pytestmark = pytest.mark.kernel
PORT = 7200
NAMES = ("vkap_a", "vkap_v")


def config(netns: str, *, alpha: int = 1, move: bool = False) -> str:
    text = f"""
[controller.vkap_a]
variant = "vegas_a"
preset = "paper"
unrestricted = true
alpha = {alpha}

[controller.vkap_v]
variant = "vegas"
alpha = 1
beta = 3

[netns.{netns}]
default = "vkap_a"
"""
    if move:
        text += f'\n[[move]]\nto = "vkap_a"\nnetns = "{netns}"\nfrom = ["cubic"]\nport = {PORT}\n'
    return text


def state(ns: Netns) -> dict:
    """What the kernel says: our instances and their parameters, the namespace's default."""
    out = {"default": ns.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip()}
    for inst in vegasctl_json("list")["instances"]:
        if inst["name"] in NAMES:
            out[inst["name"]] = (inst["state"], inst["variant"], inst["params"])
    return out


def apply(path: Path, *args: str, env: dict | None = None, check: bool = True):
    return vegasctl("apply", str(path), *args, env=env, check=check)


@pytest.fixture
def lab_ns():
    """A namespace of the test's own; every controller of NAMES unloaded afterwards."""
    try:
        with Lab() as lab:
            yield lab, lab.netns("ap")
    finally:
        for name in NAMES:
            if name in available_cc() or Path(f"/sys/fs/bpf/vegaskit/cc/{name}").exists():
                vegasctl("unload", name, check=False)


def test_apply_twice_changes_nothing_the_second_time(lab_ns, tmp_path):
    _, ns = lab_ns
    f = tmp_path / "vk.toml"
    f.write_text(config(ns.name))
    plan = apply(f, "--dry-run").stdout
    assert state(ns) == {"default": state(ns)["default"]}, "a dry run changed something"
    assert plan.count("+ load") == 2 and "~ default netns" in plan, plan
    first = apply(f).stdout
    assert "applied: 3 changes" in first, first
    st = state(ns)
    assert st["default"] == "vkap_a"
    assert st["vkap_a"][:2] == ("registered", "vegas_a") and st["vkap_a"][2]["alpha"] == 1
    assert st["vkap_v"][:2] == ("registered", "vegas") and st["vkap_v"][2]["beta"] == 3
    gen = vegasctl_json("show", "vkap_a")["generation"]
    second = apply(f)
    assert second.stdout.startswith("nothing to change"), second.stdout
    assert state(ns) == st and vegasctl_json("show", "vkap_a")["generation"] == gen

    # export writes a file TOML reads and apply finds nothing to change in
    exported = vegasctl("export").stdout
    doc = tomllib.loads(exported)
    assert doc["controller"]["vkap_a"]["variant"] == "vegas_a"
    assert doc["controller"]["vkap_a"]["unrestricted"] is True
    assert doc["netns"][ns.name]["default"] == "vkap_a"
    (tmp_path / "exported.toml").write_text(exported)
    assert apply(tmp_path / "exported.toml", "--dry-run").stdout.startswith("nothing to change")


def test_apply_after_drift_restores_the_declared_state(lab_ns, tmp_path):
    _, ns = lab_ns
    f = tmp_path / "vk.toml"
    f.write_text(config(ns.name))
    apply(f)
    declared = state(ns)
    # three kinds of drift, by hand
    vegasctl("unload", "vkap_v")
    vegasctl("set", "vkap_a", "alpha=3")
    ns.run(["sysctl", "-q", "-w", "net.ipv4.tcp_congestion_control=reno"])
    plan = apply(f, "--dry-run").stdout
    assert "+ load vkap_v" in plan and "~ set vkap_a: alpha 3 -> 1" in plan, plan
    assert "~ default netns " + ns.name + ": reno -> vkap_a" in plan, plan
    assert "applied: 3 changes" in apply(f).stdout
    assert state(ns) == declared


@pytest.mark.needs_kernel("cong_control_ack")
def test_a_parameter_fixed_at_load_is_applied_by_replacing(lab_ns, tmp_path):
    """calls cannot be retuned (`set` refuses it): apply replaces the instance,
    and says why."""
    _, ns = lab_ns
    f = tmp_path / "vk.toml"
    f.write_text(config(ns.name))
    apply(f)
    f.write_text(config(ns.name).replace('beta = 3\n', 'beta = 3\ncalls = 1\n'))
    plan = apply(f, "--dry-run").stdout
    assert "~ replace vkap_v: vegas -> vegas (restricted)" in plan and "calls=1" in plan, plan
    assert "applied: 1 change" in apply(f).stdout
    assert state(ns)["vkap_v"][2]["calls"] == 1
    assert apply(f).stdout.startswith("nothing to change")


@pytest.mark.reliability("kill_point")
@pytest.mark.parametrize("point", ["apply:step1", "apply:step2", "apply:step3", "load:registered"])
def test_sigkill_during_apply_then_apply_converges(lab_ns, tmp_path, point):
    """SIGKILL after each step, and inside a load: what is there is whole (no
    `incomplete` instance but the one an interrupted load leaves, which the
    next apply reloads), and the next apply reaches the declared state."""
    _, ns = lab_ns
    f = tmp_path / "vk.toml"
    f.write_text(config(ns.name))
    r = apply(f, env={"VEGASCTL_CRASH_AT": point}, check=False)
    assert r.returncode == -9, (r.returncode, r.stderr)
    st = state(ns)
    steps = int(point[-1]) if point.startswith("apply:") else 0
    assert sum(v[0] == "registered" for k, v in st.items() if k != "default") == min(steps, 2)
    assert (st["default"] == "vkap_a") == (steps == 3)
    again = apply(f).stdout
    if point == "load:registered":
        assert "~ reload vkap_a" in again, again
    assert state(ns)["default"] == "vkap_a"
    assert all(state(ns)[n][0] == "registered" for n in NAMES)
    assert apply(f).stdout.startswith("nothing to change")


@pytest.mark.reliability("kill_point")
def test_a_failed_step_undoes_the_ones_before_it(lab_ns, tmp_path):
    """Step 3 fails: the retune of vkap_a (step 1) and the load of vkap_v
    (step 2) are undone; one line on stderr says so."""
    _, ns = lab_ns
    vegasctl("load", "vegas_a", "--name", "vkap_a", "--preset", "paper", "--unrestricted",
             "alpha=2")
    before = state(ns)
    f = tmp_path / "vk.toml"
    f.write_text(config(ns.name))
    r = apply(f, env={"VEGASCTL_FAIL_AT": "apply:step3"}, check=False)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("vegasctl: apply: 'default netns") and "2 changes before it were undone" in r.stderr
    assert state(ns) == before
    assert "vkap_v" not in available_cc()


@pytest.mark.reliability("kill_point")
@pytest.mark.needs_kernel("iter_setsockopt")
def test_a_rollback_keeps_a_controller_connections_were_moved_onto(tmp_path):
    """Load, move the connections of one namespace, fail at the second move: the
    first move stays (moving back could fail the same way), so the controller it
    moved them onto stays loaded, and the error line says so; the next apply
    converges."""
    conns = 20
    try:
        with Lab() as lab:
            p = veth_pair(lab)
            srv = lab.spawn(p.b, [sys.executable, "-m", "vegaskit.testbed.holdconns", "server",
                                  "--ports", str(PORT), "--conns", str(conns)], stdin=subprocess.PIPE)
            assert srv.stdout.readline().strip() == b"listening"
            cli = lab.spawn(p.a, [sys.executable, "-m", "vegaskit.testbed.holdconns", "client",
                                  "--addr", p.addr_b, "--ports", str(PORT), "--conns", str(conns),
                                  "--cc", "reno"], stdin=subprocess.PIPE)
            for proc in (cli, srv):
                assert proc.stdout.readline().strip() == f"ready {conns}".encode()
            f = tmp_path / "vk.toml"
            f.write_text('[controller.vkap_a]\nvariant = "vegas_a"\n\n'
                         f'[[move]]\nto = "vkap_a"\nnetns = "{p.a.name}"\n\n'
                         f'[[move]]\nto = "vkap_a"\nnetns = "{p.b.name}"\n')
            r = apply(f, env={"VEGASCTL_FAIL_AT": "apply:step3"}, check=False)
            assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
            assert ("0 of the 2 changes before it undone, the connections already moved stay, "
                    "and vkap_a kept loaded") in r.stderr, r.stderr
            assert "vkap_a" in available_cc()
            assert socket_ccs_all(p.a) == ["vkap_a"] * conns
            again = apply(f).stdout
            assert "> move netns " + p.b.name + f": {conns} connections moved" in again, again
            assert apply(f).stdout.startswith("nothing to change")
    finally:
        vegasctl("unload", "vkap_a", check=False)


def socket_ccs_all(ns) -> list[str]:
    out = ns.run(["ss", "-tinH", "state", "established"])
    return [line.split()[0] for line in out.splitlines() if line.startswith(("\t", " "))]


@pytest.mark.reliability("bad_input")
def test_bad_files_change_nothing(lab_ns, tmp_path):
    _, ns = lab_ns
    before = state(ns)
    cases = {
        "not toml": "[controller.vkap_a\nvariant = 1\n",
        "unknown variant": '[controller.vkap_a]\nvariant = "vegas_b"\n',
        "alpha above beta": '[controller.vkap_a]\nvariant = "vegas"\nalpha = 5\nbeta = 3\n',
        "restricted netns default": config(ns.name).replace("unrestricted = true", ""),
        "missing netns": '[netns.vk-no-such-ns]\ndefault = "reno"\n',
        "unknown default": f'[netns.{ns.name}]\ndefault = "vk_nothing"\n',
        "kernel name taken": '[controller.reno]\nvariant = "vegas"\n',
    }
    for what, text in cases.items():
        reliability.case()
        f = tmp_path / "bad.toml"
        f.write_text(text)
        r = apply(f, check=False)
        assert r.returncode == 1 and r.stderr.startswith("vegasctl: ") and \
            r.stderr.count("\n") == 1, (what, r.returncode, r.stderr)
        assert state(ns) == before, what


def only_ours_loaded() -> None:
    """reset unloads every vegaskit instance on the host: nobody else's may be there."""
    others = [i["name"] for i in vegasctl_json("list")["instances"] if i["name"] not in NAMES]
    assert not others, f"other vegaskit instances are loaded, which reset would unload: {others}"


@pytest.mark.reliability("bad_input")
def test_reset_refuses_bad_arguments_and_changes_nothing(lab_ns):
    _, ns = lab_ns
    vegasctl("load", "vegas", "--name", "vkap_v")
    before = (state(ns), set(available_cc()))
    for args in (["--to"], ["--to", "vk_nothing"], ["--to", "vkap_v"], ["--to", "cubic", "--to", "reno"],
                 ["extra"], ["--to", "a/b"], ["--to", ""]):
        reliability.case()
        r = vegasctl("reset", *args, check=False)
        assert r.returncode in (1, 2) and r.stderr.startswith("vegasctl: ") and \
            r.stderr.count("\n") == 1, (args, r.returncode, r.stderr)
        assert (state(ns), set(available_cc())) == before, args


@pytest.mark.needs_kernel("iter_setsockopt")
def test_apply_and_reset_under_200_connections_drop_none(allow_cubic, tmp_path):
    """200 byte-checked connections on cubic: apply moves them onto vkap_a and
    makes it the namespace's default, a second file retunes it under them, and
    reset puts every connection and the default back on cubic and unloads all.
    Every connection ends with every byte and a clean close at both ends."""
    conns, seconds = 200, 20
    only_ours_loaded()
    try:
        with Lab() as lab:
            path = htb_path(lab, 50_000_000, 500)
            srv = spawn_checkstream(lab, path.receiver, "server", "--port", str(PORT),
                                    "--conns", str(conns), "--report", str(tmp_path / "srv.json"))
            assert srv.stdout.readline().strip() == b"listening"
            cli = spawn_checkstream(lab, path.sender, "client", "--addr", receiver_addr(),
                                    "--port", str(PORT), "--conns", str(conns), "--seconds",
                                    str(seconds), "--cc", "cubic", "--rate", "40e6",
                                    "--report", str(tmp_path / "cli.json"))
            wait_for(lambda: len(socket_ccs(path.sender, PORT)) == conns, 15, "200 connections")
            f = tmp_path / "vk.toml"
            f.write_text(config(path.sender.name, move=True))
            time.sleep(2)
            out = vegasctl_json("apply", str(f))
            moved = [c for c in out["changes"] if c["action"] == "move"]
            assert moved and moved[0]["moved"] == conns, out
            assert set(socket_ccs(path.sender, PORT)) == {"vkap_a"}
            time.sleep(2)
            f.write_text(config(path.sender.name, alpha=2, move=True))
            out = vegasctl_json("apply", str(f))
            assert [c["action"] for c in out["changes"]] == ["set"], out
            time.sleep(2)
            r = vegasctl_json("reset", "--to", "cubic")
            assert r["moved"] >= conns and r["failed"] == 0 and r["unloaded"] >= 2, r
            assert set(socket_ccs(path.sender, PORT)) == {"cubic"}
            assert path.sender.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip() == "cubic"
            assert not {"vkap_a", "vkap_v"} & set(available_cc())
            cli.wait(timeout=seconds + 60)
            srv.wait(timeout=30)
            assert cli.returncode == 0 and srv.returncode == 0
    finally:
        for name in NAMES:
            vegasctl("unload", name, check=False)
    check_complete(tmp_path / "srv.json", tmp_path / "cli.json", conns)


def test_reset_on_a_host_without_vegaskit_changes_nothing():
    only_ours_loaded()
    r = vegasctl("reset")
    assert "0 namespace defaults, 0 connections moved (0 failed), 0 controllers unloaded" in r.stdout, r.stdout
