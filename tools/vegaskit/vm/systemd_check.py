"""Inside a guest booted with systemd as PID 1 (vegaskit.vm.systemd_boot): what
vegaskit.service did at boot, and what reload, stop and start do.

Run by a oneshot unit ordered after vegaskit.service. Each finding is one
line `VK-SD key=value` on stdout, which the unit sends to the serial console
where the host reads it. Boot 1 (vegaskit_boot=1 on the kernel command line)
exercises the service and powers off; the host boots the same root again as
boot 2, which only reports and powers off: the controllers it finds were
brought back by the enabled unit, since nothing of boot 1's kernel state
survives. (The guest cannot tell a reboot from a first boot: its root is
read-only, so it powers off and the host counts.)

The guest's root is the host's, read-only; /etc and /usr/local are the staged
copies the host bound there (the unit and config `make install` wrote).
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

CONF = Path("/etc/vegaskit/vegaskit.toml")
RELOADED = Path("/run/vegaskit-reload.toml")
VEGASCTL = "/usr/local/sbin/vegasctl"
CHUNK = 1 << 20


def say(key: str, value) -> None:
    print(f"VK-SD {key}={value}", flush=True)


def sysctl(name: str) -> str:
    return Path("/proc/sys/net/ipv4", name).read_text().strip()


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def report_state(tag: str) -> None:
    say(f"{tag}.active", run(["systemctl", "is-active", "vegaskit.service"]).stdout.strip())
    say(f"{tag}.available", sysctl("tcp_available_congestion_control").replace(" ", ","))
    say(f"{tag}.default", sysctl("tcp_congestion_control"))


def lowq_band() -> str:
    """vegas_lowq's alpha,beta as vegasctl shows them."""
    r = run([VEGASCTL, "show", "vegas_lowq", "--json"])
    if r.returncode:
        return f"show failed: {r.stderr.strip()}"
    p = json.loads(r.stdout)["params"]
    return f"{p['alpha']},{p['beta']}"


def cc_of(s: socket.socket) -> str:
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()


def carries(a: socket.socket, b: socket.socket) -> bool:
    """CHUNK bytes from a arrive at b intact."""
    data = os.urandom(CHUNK)
    a.sendall(data)
    got = bytearray()
    b.settimeout(30)
    while len(got) < CHUNK:
        part = b.recv(CHUNK - len(got))
        if not part:
            return False
        got += part
    return bytes(got) == data


def boot1() -> None:
    report_state("boot")
    # a connection opened on the declared default: stop must move it, not drop it
    lst = socket.create_server(("127.0.0.1", 0))
    cli = socket.create_connection(lst.getsockname())
    srv, _ = lst.accept()
    say("conn.cc_at_boot", cc_of(cli))
    say("conn.carries_at_boot", carries(cli, srv))

    # reload with a file apply refuses (a restricted controller as the host's default):
    # the reload fails and the running state stays; the file is bound over the read-only one
    original = CONF.read_text()
    RELOADED.write_text(original.replace('default = "vegas_a"', 'default = "vegas_lowq"'))
    subprocess.run(["mount", "--bind", str(RELOADED), str(CONF)], check=True)
    say("reload_bad.rc", run(["systemctl", "reload", "vegaskit.service"]).returncode)
    report_state("reload_bad")
    # then a retune: vegas_lowq's alpha and beta raised in the file
    RELOADED.write_text(original.replace("alpha = 1\nbeta = 3", "alpha = 2\nbeta = 4"))
    say("reload.rc", run(["systemctl", "reload", "vegaskit.service"]).returncode)
    report_state("reload")
    say("reload.lowq", lowq_band())

    r = run(["systemctl", "stop", "vegaskit.service"])
    say("stop.rc", r.returncode)
    report_state("stop")
    say("conn.cc_after_stop", cc_of(cli))
    say("conn.carries_after_stop", carries(cli, srv))

    r = run(["systemctl", "start", "vegaskit.service"])
    say("start.rc", r.returncode)
    report_state("start")
    say("start.lowq", lowq_band())
    say("conn.carries_after_start", carries(srv, cli))
    for s in (cli, srv, lst):
        s.close()
    say("journal", run(["journalctl", "-b", "-u", "vegaskit.service", "-o", "cat",
                        "--no-pager"]).stdout.strip().replace("\n", " | "))


def main() -> int:
    args = Path("/proc/cmdline").read_text().split()
    boot = next((int(a.split("=", 1)[1]) for a in args if a.startswith("vegaskit_boot=")), 0)
    say("pid1", Path("/proc/1/comm").read_text().strip())
    say("uptime_s", Path("/proc/uptime").read_text().split()[0])
    say("kernel", os.uname().release)
    try:
        if boot == 1:
            boot1()
        else:
            report_state("boot")
            say("list", run([VEGASCTL, "list"]).stdout.strip().replace("\n", " | "))
    except Exception as e:                  # reported, then the guest still goes down
        say("error", f"{type(e).__name__}: {e}")
    say("done", boot)
    time.sleep(1)
    subprocess.run(["systemctl", "poweroff", "--no-block"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
