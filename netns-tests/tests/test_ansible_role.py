"""The Ansible role run for real against this host (docs/DESIGN.md §4.10),
under a scratch prefix and without systemd (no PID 1 here): it installs
vegasctl, writes the configuration only after `vegasctl apply --check` passes,
applies it, and a second run changes nothing; a configuration vegasctl
refuses fails the run and changes neither the file nor the host."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import available_cc, vegasctl
from vegaskit import paths

pytestmark = pytest.mark.kernel
ANSIBLE = paths.REPO / "tools" / "ansible"
GOOD = '[controller.vk_ans]\nvariant = "vegas"\nalpha = 1\nbeta = 3\n'
BAD = '[controller.vk_ans]\nvariant = "vegas"\nalpha = 5\nbeta = 3\n'


def playbook(tmp_path: Path, config: str) -> subprocess.CompletedProcess:
    root, stage = tmp_path / "root", tmp_path / "stage"
    inv = tmp_path / "inventory"
    inv.write_text(f"[vegaskit_hosts]\nlocalhost ansible_connection=local "
                   f"ansible_python_interpreter={sys.executable}\n")
    (tmp_path / "vars.yml").write_text(
        f"vegaskit_stage: {stage}\nvegaskit_prefix: {root}/usr\n"
        f"vegaskit_sysconfdir: {root}/etc\nvegaskit_manage_service: false\n"
        "vegaskit_config: |\n" + "".join(f"  {line}\n" for line in config.splitlines()))
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "ANSIBLE_HOME": str(tmp_path / ".ansible"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".ansible-tmp"),
           "ANSIBLE_REMOTE_TEMP": str(tmp_path / ".ansible-remote")}
    return subprocess.run([str(bindir / "ansible-playbook"), "-i", str(inv), "-e",
                           f"@{tmp_path / 'vars.yml'}", "-e", "ansible_become=false",
                           str(ANSIBLE / "site.yml")], capture_output=True, text=True, env=env,
                          timeout=600)


def recap(out: str) -> str:
    return out[out.index("PLAY RECAP"):]


def test_the_role_installs_applies_and_converges(tmp_path):
    root = tmp_path / "root"
    subprocess.run(["make", "-s", "-C", str(paths.REPO), "install",
                    f"DESTDIR={tmp_path / 'stage'}", f"PREFIX={root}/usr",
                    f"SYSCONFDIR={root}/etc"], check=True, capture_output=True, timeout=300)
    try:
        r = playbook(tmp_path, GOOD)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        assert (root / "usr/sbin/vegasctl").exists()
        assert (root / "etc/vegaskit/vegaskit.toml").read_text() == GOOD
        assert "vk_ans" in available_cc()
        again = playbook(tmp_path, GOOD)
        assert again.returncode == 0 and "changed=0" in recap(again.stdout), recap(again.stdout)
        vegasctl("set", "vk_ans", "alpha=2")            # drift: the next run puts it back
        drift = playbook(tmp_path, GOOD)
        assert drift.returncode == 0 and "changed=0" not in recap(drift.stdout)
        assert "alpha=1 beta=3" in vegasctl("show", "vk_ans").stdout
        bad = playbook(tmp_path, BAD)
        assert bad.returncode != 0 and "alpha (5) must not exceed beta (3)" in bad.stdout
        assert (root / "etc/vegaskit/vegaskit.toml").read_text() == GOOD
        assert "alpha=1 beta=3" in vegasctl("show", "vk_ans").stdout
    finally:
        vegasctl("unload", "vk_ans", check=False)
