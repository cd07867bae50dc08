"""The kernel's own per-program BPF statistics: run time and call count.

Statistics cost a little on every call, so the kernel keeps them off unless
asked. BPF_ENABLE_STATS asks through a file descriptor: they stay on while it
is open and go off when it closes, including when the process is SIGKILLed,
so a bench can never leave them on (docs/DESIGN.md §9.1).
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import re
import struct
import subprocess

_NR_BPF = {"x86_64": 321, "aarch64": 280}
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0


@contextlib.contextmanager
def enabled():
    """Run-time statistics on for the with-block."""
    nr = _NR_BPF.get(platform.machine())
    if nr is None:
        raise OSError(f"no bpf syscall number known for {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(struct.pack("I", BPF_STATS_RUN_TIME), 16)
    fd = libc.syscall(nr, BPF_ENABLE_STATS, attr, ctypes.c_uint(16))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"BPF_ENABLE_STATS: {os.strerror(err)}")
    try:
        yield
    finally:
        os.close(fd)


def _bpftool(*args: str):
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, timeout=60)
    if r.returncode:
        raise RuntimeError(f"bpftool {' '.join(args)}: {r.stderr.strip()}")
    return json.loads(r.stdout)


_PROG = re.compile(r"/prog_id:(\d+)$")


def ops_programs(controller: str) -> dict[str, int]:
    """{op: program id} of the registered struct_ops whose name is `controller`."""
    for entry in _bpftool("struct_ops", "dump"):
        ops = entry.get("bpf_struct_ops_tcp_congestion_ops")
        # an unregistered map still held by old sockets has the name too: not that one
        if ops and ops["data"].get("name") == controller and \
                ops.get("common", {}).get("state") != "BPF_STRUCT_OPS_STATE_TOBEFREE":
            return {op: int(m.group(1)) for op, v in ops["data"].items()
                    if isinstance(v, str) and (m := _PROG.search(v))}
    raise LookupError(f"no struct_ops registered as {controller!r}")


def run_stats(ids: dict[str, int]) -> dict[str, tuple[int, int]]:
    """{op: (run_time_ns, run_cnt)} now, for the programs of ops_programs()."""
    by_id = {p["id"]: p for p in _bpftool("prog", "show")}
    return {op: (by_id[i].get("run_time_ns", 0), by_id[i].get("run_cnt", 0))
            for op, i in ids.items()}


def run_ns(ids: dict[str, int], before: dict[str, tuple[int, int]]) -> int:
    """Run time (ns) of the programs of ops_programs() since run_stats() gave `before`."""
    return sum(ns - before[op][0] for op, (ns, _) in run_stats(ids).items())
