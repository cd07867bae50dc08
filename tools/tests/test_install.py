"""`make install` and `make uninstall` into a scratch root (docs/DESIGN.md §4.8):
what lands where, a unit systemd accepts, a manual man renders, and an
uninstall that leaves only the operator's configuration."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from vegaskit import paths


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", "-C", str(paths.REPO), *args], capture_output=True,
                          text=True, timeout=300, check=True)


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_install_then_uninstall_with_destdir(tmp_path):
    root = tmp_path / "root"
    make("install", f"DESTDIR={root}", "PREFIX=/usr")
    got = files(root)
    for want in ("usr/sbin/vegasctl", "usr/share/man/man8/vegasctl.8",
                 "usr/lib/systemd/system/vegaskit.service", "etc/default/vegaskit",
                 "usr/share/vegaskit/vegaskit.toml.example",
                 "usr/share/vegaskit/trace/tcpcwnd.py", "usr/share/vegaskit/trace/tracecommon.py",
                 "usr/sbin/vegaskit-tcpcwnd", "usr/sbin/vegaskit-tcpcwnd-bt"):
        assert want in got, (want, sorted(got))
    assert os.access(root / "usr/sbin/vegasctl", os.X_OK)
    # the tools by name point at the installed scripts, relatively (DESTDIR-proof)
    link = root / "usr/sbin/vegaskit-tcpcwnd"
    assert not os.readlink(link).startswith("/") and link.resolve().exists()
    unit = (root / "usr/lib/systemd/system/vegaskit.service").read_text()
    assert "ExecStart=/usr/sbin/vegasctl apply /etc/vegaskit/vegaskit.toml" in unit
    assert "@SBINDIR@" not in unit and "@SYSCONFDIR@" not in unit
    # an operator's files survive both a reinstall and an uninstall
    (root / "etc/vegaskit/vegaskit.toml").write_text("# mine\n")
    (root / "etc/default/vegaskit").write_text("VEGASKIT_RESET_ARGS='--to reno'\n")
    make("install", f"DESTDIR={root}", "PREFIX=/usr")
    assert (root / "etc/default/vegaskit").read_text().startswith("VEGASKIT_RESET_ARGS")
    make("uninstall", f"DESTDIR={root}", "PREFIX=/usr")
    assert files(root) == {"etc/vegaskit/vegaskit.toml", "etc/default/vegaskit"}


def test_the_unit_verifies_and_the_manual_renders(tmp_path):
    """Installed at a real prefix, so that systemd-analyze can check that the
    commands exist; it prints what it ignores and still exits 0, so its stderr
    must be empty too (a misspelt Type= only warns)."""
    prefix = tmp_path / "usr"
    make("install", f"PREFIX={prefix}", f"SYSCONFDIR={tmp_path / 'etc'}")
    unit = prefix / "lib/systemd/system/vegaskit.service"
    env = {**os.environ, "MANPATH": str(prefix / "share/man")}
    r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    broken = tmp_path / "broken" / "vegaskit.service"
    broken.parent.mkdir()
    broken.write_text(unit.read_text().replace("Type=oneshot", "Type=oneshott"))
    r = subprocess.run(["systemd-analyze", "verify", str(broken)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert "oneshott" in r.stderr, "the check would not see a broken unit"
    man = subprocess.run(["man", "-l", str(prefix / "share/man/man8/vegasctl.8")],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "100"})
    assert man.returncode == 0 and man.stderr == "", man.stderr
    for cmd in ("apply FILE", "export", "reset [--to CC]", "[controller.NAME]", "EXIT STATUS"):
        assert cmd in man.stdout, cmd
    make("uninstall", f"PREFIX={prefix}", f"SYSCONFDIR={tmp_path / 'etc'}")
