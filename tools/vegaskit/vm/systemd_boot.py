"""Boot a kernel under qemu with systemd as PID 1 and vegaskit installed and enabled
the way an operator does it, twice: the controllers must come back on the second
boot with nothing but the enabled unit to bring them (docs/DESIGN.md §4.8).

The host is never changed:
- `make install DESTDIR=<stage>` writes the binary, unit and files into a stage
  directory; the example configuration becomes /etc/vegaskit/vegaskit.toml and
  `systemctl --root=<stage> enable` enables the unit there, as it would on a host;
- virtme-ng (`vng --systemd`) runs in a mount namespace of its own (unshare) in
  which /etc and /usr/local are read-only overlays of the stage over the host's,
  so the guest, whose root is the host's, sees them installed, and a small init
  (GUEST_INIT) covers systemd's binary to mount the guest's own /proc, /sys, /dev
  and tmpfs before it execs systemd. The namespaces (mount and pid) end with the
  last process in them; they are tied to this process, so a SIGKILL of it ends
  qemu and every mount too;
- a oneshot unit (vegaskit-vmcheck.service, after vegaskit.service) runs
  vegaskit.vm.systemd_check, whose `VK-SD key=value` lines reach the serial
  console; boot 1 exercises reload, stop and start and powers off; the host then
  boots the same stage again, and boot 2 only reports and powers off.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import guest
from .kernels import CACHE, Kernel, unpacked

CHECK_UNIT = """\
[Unit]
Description=vegaskit VM check: what vegaskit.service did at this boot
After=vegaskit.service multi-user.target
Wants=vegaskit.service

[Service]
Type=oneshot
StandardOutput=journal+console
StandardError=journal+console
WorkingDirectory={repo}
ExecStart={python} -m vegaskit.vm.systemd_check

[Install]
WantedBy=default.target
"""

# The guest's PID 1 until systemd: the guest's root is the host's through 9p, and 9p
# crosses the host's mounts, so until they are mounted in the guest /proc, /sys and /dev
# are the host's (systemd then reads the host's /proc/self and hangs, silently); /tmp and
# /var/tmp are writable only as tmpfs (PrivateTmp=). bpffs too: systemd mounts it at boot on
# a real host, but here it sees this machine's /.dockerenv through 9p, believes it runs in a
# container and skips it.
GUEST_INIT = """#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t bpf bpf /sys/fs/bpf
mount -t devtmpfs devtmpfs /dev
for d in /run /tmp /var/tmp; do mount -t tmpfs tmpfs "$d"; done
exec {stage}/systemd "$@"
"""
SYSTEMD = "/usr/lib/systemd/systemd"     # what the guest's /sbin/init resolves to

# Namespace glue: the stage's /etc and /usr/local over the host's, read-only; systemd's
# binary reachable in the stage, and the guest init over it.
OVERLAY_SH = ('mount -t overlay vk-etc -o "lowerdir=$1/etc:/etc" /etc && '
              'mount -t overlay vk-local -o "lowerdir=$1/usr/local:/usr/local" /usr/local && '
              f'mount --bind {SYSTEMD} "$1/systemd" && mount --bind "$1/init" {SYSTEMD} && '
              'shift && exec "$@"')


@dataclass
class Boot:
    number: int
    rc: int | None                      # vng's exit status; None: killed at the time limit
    wall_s: float
    found: dict[str, str] = field(default_factory=dict)    # the guest's VK-SD lines


def stage(dest: Path) -> None:
    """Install into dest as an operator would into /, and enable the units."""
    repo = guest.REPO
    subprocess.run(["make", "-s", "-C", str(repo), "install", f"DESTDIR={dest}"], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
    share = dest / "usr/local/share/vegaskit"
    conf = dest / "etc/vegaskit/vegaskit.toml"
    conf.write_text((share / "vegaskit.toml.example").read_text())
    unit = dest / "etc/systemd/system/vegaskit-vmcheck.service"
    unit.parent.mkdir(parents=True, exist_ok=True)
    unit.write_text(CHECK_UNIT.format(repo=repo, python=guest.VENV_BIN / "python"))
    subprocess.run(["systemctl", f"--root={dest}", "enable", "vegaskit.service",
                    "vegaskit-vmcheck.service"], check=True, capture_output=True, timeout=60)
    (dest / "systemd").touch()                # a mount point for the real binary
    init = dest / "init"
    init.write_text(GUEST_INIT.format(stage=dest))
    init.chmod(0o755)


def boot(k: Kernel, st: Path, number: int, timeout: float) -> Boot:
    # setpriv: unshare dies with us, SIGKILL included; --kill-child then takes the pid
    # namespace's first process, and with it everything in the namespace (vng, qemu)
    argv = ["setpriv", "--pdeathsig", "KILL", "--",
            "unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
            "--propagation", "private", "--", "sh", "-c", OVERLAY_SH, "sh", str(st),
            *guest.vng_argv(k), "--systemd",
            "--append", f"vegaskit_boot={number} systemd.show_status=1"]
    print(f"systemd-boot: boot {number}: {shlex.join(argv)}", flush=True)
    t0 = time.monotonic()
    rc, seen = guest.run_streaming(argv, CACHE / k.release / f"systemd-boot{number}.log",
                                   timeout, f"boot {number}", env=guest.vng_env())
    b = Boot(number, rc, time.monotonic() - t0)
    for _, line in seen:
        i = line.find("VK-SD ")
        if i >= 0 and "=" in line[i:]:
            key, _, value = line[i + 6:].strip().partition("=")
            b.found[key] = value
    return b


def boot_twice(k: Kernel, timeout: float) -> list[Boot]:
    unpacked(k)
    for old in (CACHE / k.release).glob("systemd-stage-*-*"):  # a killed run's stage
        pid = old.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    # not under /tmp: the guest's init mounts a tmpfs there before it execs from the stage
    with tempfile.TemporaryDirectory(prefix=f"systemd-stage-{os.getpid()}-",
                                     dir=CACHE / k.release) as d:
        st = Path(d)
        stage(st)
        first = boot(k, st, 1, timeout)
        if "done" not in first.found:
            return [first]
        return [first, boot(k, st, 2, timeout)]
