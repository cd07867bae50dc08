"""Running other programs: the one subprocess helper every part uses, and
SIGTERM unwinding like Ctrl-C so that what a command started is cleaned up."""
from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from vegaskit import paths


def sh(argv: list[str], check: bool = True, timeout: float = 30) -> str:
    """Run a command, return stdout; raise RuntimeError with its stderr on failure,
    or saying why it could not start (a program not built: `make all`)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except OSError as e:
        # a program of ours that is not built: say how to build it
        ours = isinstance(e, FileNotFoundError) and Path(argv[0]).parent == paths.BUILD
        hint = " (make all builds it)" if ours else ""
        raise RuntimeError(f"{argv[0]}: cannot run: {e.strerror or e}{hint}") from None
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.returncode}")
    return r.stdout


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def sigterm_unwinds() -> None:
    """SIGTERM (make killed, a CI timeout) raises KeyboardInterrupt, so the
    finally blocks that kill guests and remove namespaces run."""
    signal.signal(signal.SIGTERM, _interrupted)
