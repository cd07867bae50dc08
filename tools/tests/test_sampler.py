"""The testbed's watchers' shared shape (testbed/sampler.py): a sample at once, then
one every period until the with-block ends; False ends it early; `final` samples at the
end too."""
import time

from vegaskit.testbed.sampler import Sampler


class Count(Sampler):
    def __init__(self, every, stop_after=None, final=False):
        super().__init__(every)
        self.n, self.stop_after, self.final = 0, stop_after, final

    def sample(self):
        self.n += 1
        return self.stop_after is None or self.n < self.stop_after


def test_samples_at_once_and_then_every_period():
    with Count(0.01) as c:
        deadline = time.monotonic() + 10
        while c.n < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
    assert c.n >= 3
    n = c.n
    time.sleep(0.05)
    assert c.n == n, "sampled after the with-block ended"


def test_a_long_period_still_gives_the_first_sample_and_ends_at_once():
    t = time.monotonic()
    with Count(60) as c:
        while c.n < 1:
            time.sleep(0.001)
    assert c.n == 1 and time.monotonic() - t < 5


def test_false_ends_the_sampling_and_final_samples_once_more():
    with Count(0.001, stop_after=2) as c:
        time.sleep(0.1)
    assert c.n == 2
    with Count(60, final=True) as c:
        while c.n < 1:
            time.sleep(0.001)
    assert c.n == 2
