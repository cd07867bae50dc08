"""Extra vegasctl instances a bench stage loads for itself, swept like a run's if the
bench is SIGKILLed: each is noted in the stage owner's ledger before it is loaded."""
from __future__ import annotations

import contextlib
import subprocess

from vegaskit import paths
from vegaskit.testbed import leftovers


@contextlib.contextmanager
def loaded(owner: str, specs: dict[str, list[str]]):
    """name -> [variant, KEY=VALUE...] registered for the with-block; yields the names.
    owner: a stage's own (leftovers.new_owner()), as its ledger goes at the end."""
    names = []
    try:
        for name, (variant, *params) in specs.items():
            leftovers.record_loaded(owner, name)
            done = subprocess.run([str(paths.VEGASCTL), "load", variant, "--name", name,
                                   *params], capture_output=True, text=True, timeout=60)
            if done.returncode:                 # vegasctl's own one line, not a traceback
                raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                                   else f"vegasctl load {variant} --name {name} failed")
            names.append(name)
        yield names
    finally:
        for name in names:
            subprocess.run([str(paths.VEGASCTL), "unload", name], capture_output=True,
                           timeout=60)
        leftovers.forget_loaded(owner)
