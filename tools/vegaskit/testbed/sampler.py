"""A thread that takes a sample every `every` seconds over a with-block: the one shape
of the testbed's watchers (the queue a test polls, the labs a run shares the host with)."""
from __future__ import annotations

import threading


class Sampler:
    """Calls self.sample() at once, then every `every` seconds until the with-block ends,
    and once more then if `final`. sample() returning False ends the sampling early (what
    it watches is gone); an exception in it is the subclass's to catch."""

    final = False

    def __init__(self, every: float):
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self) -> bool | None:
        raise NotImplementedError

    def _loop(self) -> None:
        while self.sample() is not False and not self._stop.wait(self.every):
            pass

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.final:
            self.sample()
