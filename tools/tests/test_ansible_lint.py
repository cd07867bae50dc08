"""The Ansible role and playbooks pass ansible-lint's production profile,
offline (docs/DESIGN.md §4.10); and the check is one that can fail."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from vegaskit import paths

ANSIBLE = paths.REPO / "tools" / "ansible"


def lint(where: Path) -> subprocess.CompletedProcess:
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "ANSIBLE_HOME": str(where / ".ansible-home"), "NO_COLOR": "1"}
    return subprocess.run([os.path.join(bindir, "ansible-lint"), "--offline", "--profile",
                           "production", "site.yml", "rollback.yml", "roles/vegaskit"],
                          cwd=where, capture_output=True, text=True, env=env, timeout=300)


def test_role_and_playbooks_pass_the_production_profile(tmp_path):
    tree = tmp_path / "ansible"
    shutil.copytree(ANSIBLE, tree, ignore=shutil.ignore_patterns("stage"))
    r = lint(tree)
    assert r.returncode == 0, r.stdout + r.stderr
    # a task without a name and a bare command: the linter must say so
    tasks = tree / "roles/vegaskit/tasks/main.yml"
    tasks.write_text(tasks.read_text() + "\n- ansible.builtin.command: echo hi\n")
    r = lint(tree)
    assert r.returncode != 0 and "name[missing]" in r.stdout + r.stderr, r.stdout
