"""`make vm-systemd`: vegaskit.service on a real systemd boot, twice, under qemu.

A Debian kernel (KERNEL=, default bookworm-backports' 6.12, as `make vm-test`) boots
with systemd as PID 1 and the host's root, vegaskit installed and enabled in a
stage the guest sees over /etc and /usr/local (vegaskit.vm.systemd_boot). Boot 1:
the example configuration applied at boot, a connection opened on its default,
`systemctl reload` of a file apply refuses (state kept) and of a retuned file,
`systemctl stop` (the connection moved
to the kernel's controller and still carrying data), `systemctl start`, power off.
Boot 2: the controllers are back. Writes results/systemd/report.md; exit 1 if any
expectation failed, the guest did not finish, or the time limit ran out.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.proc import sigterm_unwinds
from vegaskit.vm.kernels import Kernel, resolve
from vegaskit.vm.systemd_boot import Boot, boot_twice
from vegaskit.cliargs import OneLineParser, positive_seconds

OURS = ("vegas_a", "vegas_lowq")        # the example configuration's controllers
KERNELS_OWN = ("reno", "cubic")


def _has(available: str, names) -> bool:
    return all(n in available.split(",") for n in names)


def _none(available: str, names) -> bool:
    return not any(n in available.split(",") for n in names)


def expectations(boots: list[Boot]) -> list[tuple[str, bool]]:
    """(what, held) for each claim; a missing key fails its claim."""
    b1 = boots[0].found
    b2 = boots[1].found if len(boots) > 1 else {}
    g1, g2 = b1.get, b2.get
    return [
        ("boot 1: systemd is PID 1", g1("pid1") == "systemd"),
        ("boot 1: vegaskit.service active", g1("boot.active") == "active"),
        ("boot 1: the configuration's controllers registered", _has(g1("boot.available", ""), OURS)),
        ("boot 1: the host default is the configured vegas_a", g1("boot.default") == "vegas_a"),
        ("boot 1: a new connection runs on it and carries data",
         g1("conn.cc_at_boot") == "vegas_a" and g1("conn.carries_at_boot") == "True"),
        ("reload of a file apply refuses: fails, the unit and the running state stay",
         g1("reload_bad.rc") not in (None, "0") and g1("reload_bad.active") == "active"
         and _has(g1("reload_bad.available", ""), OURS) and g1("reload_bad.default") == "vegas_a"),
        ("reload of a retuned file: exit 0, vegas_lowq's alpha,beta 1,3 -> 2,4",
         g1("reload.rc") == "0" and g1("reload.lowq") == "2,4"
         and g1("reload.default") == "vegas_a"),
        ("stop: exit 0, unit inactive, our controllers unregistered",
         g1("stop.rc") == "0" and g1("stop.active") == "inactive"
         and _has(g1("stop.available", ""), ["reno"]) and _none(g1("stop.available", ""), OURS)),
        ("stop: the default back on a kernel controller", g1("stop.default") in KERNELS_OWN),
        ("stop: the open connection moved to a kernel controller, still carrying data",
         g1("conn.cc_after_stop") in KERNELS_OWN and g1("conn.carries_after_stop") == "True"),
        ("start: exit 0, controllers back as the file now says",
         g1("start.rc") == "0" and _has(g1("start.available", ""), OURS)
         and g1("start.default") == "vegas_a" and g1("start.lowq") == "2,4"
         and g1("conn.carries_after_start") == "True"),
        ("boot 1: no error in the check", "error" not in b1 and g1("done") == "1"),
        ("boot 2 (after a power cycle): vegaskit.service active",
         g2("pid1") == "systemd" and g2("boot.active") == "active"),
        ("boot 2: the controllers came back, with the file's default",
         _has(g2("boot.available", ""), OURS) and g2("boot.default") == "vegas_a"),
        ("boot 2: no error in the check", "error" not in b2 and g2("done") == "2"),
    ]


def write_report(out: Path, k: Kernel, boots: list[Boot], held: list[tuple[str, bool]],
                 command: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# vegaskit.service on a real systemd boot",
        "",
        f"Produced by `{command}` on this machine; do not edit by hand. Kernel "
        f"{k.release} ({k.package} {k.version}) under qemu (TCG), systemd as PID 1, the "
        "host's root with vegaskit installed by `make install DESTDIR=` and enabled by "
        "`systemctl --root= enable` in a stage the guest sees over /etc and /usr/local; "
        "the configuration is the installed example. Nothing persists between the boots "
        "but that stage: boot 2's controllers were brought back by the enabled unit.",
        "",
        "| claim | held |",
        "|---|---|",
        *[f"| {what} | {'yes' if ok else '**no**'} |" for what, ok in held],
        "",
    ]
    for b in boots:
        status = "killed at the time limit" if b.rc is None else f"vng exit {b.rc}"
        lines += [f"## Boot {b.number} ({b.wall_s:.0f} s wall, {status})", "",
                  "What the guest reported (`VK-SD` lines from vegaskit.vm.systemd_check):", "",
                  "```", *[f"{key}={value}" for key, value in b.found.items()], "```", ""]
    p = out / "report.md"
    p.write_text("\n".join(lines))
    return p


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.vm_systemd",
                       description=__doc__.split("\n")[0])
    ap.add_argument("--kernel", default=os.environ.get("KERNEL") or "backports")
    ap.add_argument("--timeout", type=positive_seconds, default=1500, help="seconds per boot")
    ap.add_argument("--out", type=Path, default=paths.RESULTS / "systemd")
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("vm-systemd: must run as root (apt-get, unshare, qemu)", file=sys.stderr)
        return 2
    if a.kernel == "host":
        print("vm-systemd: give a Debian kernel to boot (the running one has no image here)",
              file=sys.stderr)
        return 2
    sigterm_unwinds()
    try:
        k = resolve(a.kernel)
        boots = boot_twice(k, a.timeout)
    except KeyboardInterrupt:
        print("vm-systemd: interrupted; the guest was killed", file=sys.stderr)
        return 130
    except (ValueError, LookupError, OSError, subprocess.SubprocessError) as e:
        print(f"vm-systemd: {e}", file=sys.stderr)
        return 1
    held = expectations(boots)
    command = "sudo make vm-systemd" + (f" KERNEL={a.kernel}" if a.kernel != "backports" else "")
    print(f"vm-systemd: {write_report(a.out, k, boots, held, command)}")
    for what, ok in held:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}")
    return 0 if all(ok for _, ok in held) else 1


if __name__ == "__main__":
    sys.exit(main())
