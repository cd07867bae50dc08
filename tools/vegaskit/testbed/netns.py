"""Network namespaces, veths and processes owned by one run, and their cleanup.

Everything a run creates is registered with its Lab; Lab.close() (also on
exceptions, SIGINT and SIGTERM) kills the processes and deletes the
namespaces, which takes their devices with them. Names and processes carry
the owner's mark (vk<pid>x<rand>, leftovers.py) so concurrent runs never
collide and a new Lab's sweep removes what a SIGKILLed run left behind.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field

from vegaskit.proc import sh

from .leftovers import delete_netns, new_owner, owner_env, sweep


@dataclass
class Netns:
    name: str

    def cmd(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def run(self, argv: list[str], check: bool = True, timeout: float = 30) -> str:
        return sh(self.cmd(argv), check=check, timeout=timeout)

    def sysctl(self, key: str, value) -> None:
        self.run(["sysctl", "-qw", f"{key}={value}"])

    def no_offloads(self, dev: str) -> None:
        """TSO/GSO/GRO off so that every queue counts real packets (docs/DESIGN.md §6)."""
        self.run(["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"], check=False)


class _Terminate(KeyboardInterrupt):
    """SIGTERM turned into an exception so that cleanup runs; a KeyboardInterrupt, so
    that every command's Ctrl-C path (one line, exit 130) ends it too, not a traceback."""


@dataclass
class Lab:
    """The owner of one run's namespaces and processes; use as a context manager."""
    prefix: str = field(default_factory=new_owner)
    namespaces: list[Netns] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __enter__(self) -> "Lab":
        sweep()                 # what a SIGKILLed run (no cleanup of its own) left behind
        self._old_term = None
        # Only where nobody handles SIGTERM yet: a batch's worker has its own
        # handler, which ignores every later signal so that the parent's repeated
        # SIGINTs cannot cut this lab's cleanup short (cli/results.py).
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            try:
                self._old_term = signal.signal(signal.SIGTERM, self._on_term)
            except ValueError:      # not the main thread: the caller handles signals
                pass
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        if self._old_term is not None:
            signal.signal(signal.SIGTERM, self._old_term)

    @staticmethod
    def _on_term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)   # one unwinding: the cleanup runs whole
        raise _Terminate()

    def netns(self, role: str) -> Netns:
        ns = Netns(f"{self.prefix}-{role}")
        sh(["ip", "netns", "add", ns.name])
        self.namespaces.append(ns)
        ns.run(["ip", "link", "set", "lo", "up"])
        return ns

    def veth(self, a: Netns, a_dev: str, b: Netns, b_dev: str, offloads: bool = False) -> None:
        """A veth pair between two namespaces, up, offloads off on both ends (or left
        as the kernel sets them: offloads=True, a live host's normal case)."""
        tmp = f"vkt{secrets.token_hex(4)}"      # created in the root ns, moved at once
        sh(["ip", "link", "add", tmp, "type", "veth", "peer", "name", tmp + "p"])
        sh(["ip", "link", "set", tmp, "netns", a.name, "name", a_dev])
        sh(["ip", "link", "set", tmp + "p", "netns", b.name, "name", b_dev])
        for ns, dev in ((a, a_dev), (b, b_dev)):
            ns.run(["ip", "link", "set", dev, "up"])
            if not offloads:
                ns.no_offloads(dev)

    def spawn(self, ns: Netns | None, argv: list[str], **kw) -> subprocess.Popen:
        """Start a process (in its own process group) that close() will kill."""
        full = ns.cmd(argv) if ns else argv
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("env", owner_env(self.prefix))
        p = subprocess.Popen(full, start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 2
        for p in self.procs:
            try:
                p.wait(timeout=max(0.05, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
            for s in (p.stdout, p.stderr):
                if s:
                    s.close()
        self.procs.clear()
        for ns in reversed(self.namespaces):
            delete_netns(ns.name)
        self.namespaces.clear()
