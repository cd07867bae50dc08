"""The entry points of make results, demo, bench, model-validation and vm-test."""

import os
import sys


def testbed_ready(prog: str) -> int:
    """0 when this process may run the testbed's labs; otherwise the exit code, after one
    line on stderr: root is needed (namespaces, BPF), and VK_LINKEMU_FIFO and
    VK_LINKEMU_FIFO_POLL, when set, must be a priority and a percentage (decision 42),
    checked before any run starts."""
    from vegaskit.testbed.linkemu import fifo_poll_pct, fifo_priority
    if os.geteuid() != 0:
        print(f"{prog}: must be run as root (namespaces, BPF): try sudo", file=sys.stderr)
        return 1
    try:
        fifo_priority()
        fifo_poll_pct()
    except ValueError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return 0


def guarded(prog: str, fn):
    """fn(), which runs labs, with Ctrl-C (SIGTERM too, after proc.sigterm_unwinds) and a
    refusal (RuntimeError: a controller or tool said no, in its own words) each turned
    into one line on stderr. (fn's result, 0), or (None, 130) or (None, 1); the labs'
    own unwinding has removed what they started either way."""
    try:
        return fn(), 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; everything it started was removed", file=sys.stderr)
        return None, 130
    except RuntimeError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return None, 1
