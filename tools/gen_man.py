#!/usr/bin/env python3
"""Write vegasctl(8) from vegasctl's own --help texts, so the manual and the
program cannot disagree (docs/DESIGN.md §4.8).

    python3 tools/gen_man.py build/vegasctl > build/vegasctl.8
"""
from __future__ import annotations

import re
import subprocess
import sys


def helptext(vegasctl: str, *args: str) -> str:
    return subprocess.run([vegasctl, *args, "--help"], check=True, text=True,
                          capture_output=True).stdout


def roff(text: str) -> str:
    """Literal text: backslashes doubled, lines that roff would read as requests guarded."""
    out = []
    for line in text.replace("\\", "\\e").splitlines():
        out.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(out)


def main() -> int:
    vegasctl = sys.argv[1]
    top = helptext(vegasctl)
    # the command lines of the top help: two spaces, then a lower-case word
    commands = re.findall(r"^  ([a-z]+)\b", top, flags=re.M)
    print('.TH VEGASCTL 8 "" "vegaskit" "System Administration"')
    print(".SH NAME\nvegasctl \\- load, tune, trace and swap Vegas-family TCP congestion "
          "controllers (eBPF struct_ops)")
    print(".SH SYNOPSIS\n.B vegasctl\n[\\-v] [\\-\\-json]\n.I COMMAND\n[ARGS]")
    print(".SH DESCRIPTION\nvegasctl registers the Vegas family of TCP congestion controllers "
          "(classic Vegas, Vegas-A, PIPE, byte-based Vegas) in the running kernel as eBPF "
          "struct_ops programs, retunes them live, moves established connections between "
          "controllers, traces them per ACK, and brings a host to a declared state "
          "(apply). Errors are one line on standard error.")
    print(".SH COMMANDS\n.nf\n" + roff(top) + "\n.fi")
    for cmd in commands:
        print(f".SS {cmd}\n.nf\n" + roff(helptext(vegasctl, cmd)) + "\n.fi")
    print(".SH EXIT STATUS\n0 on success, 1 when the command failed (the system unchanged), "
          "2 for a usage error.")
    print(".SH FILES\n.TP\n/etc/vegaskit/vegaskit.toml\nwhat vegaskit.service applies at boot "
          "and on reload\n.TP\n/etc/default/vegaskit\nthe service's environment "
          "(VEGASKIT_RESET_ARGS)\n.TP\n/sys/fs/bpf/vegaskit\nthe registered instances' pins\n"
          ".TP\n/run/vegaskit.lock\nheld by every command that changes state")
    print(".SH SEE ALSO\nsystemctl(1), bpftool(8), ss(8), sysctl(8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
