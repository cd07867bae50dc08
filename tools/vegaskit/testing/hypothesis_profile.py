"""The suite's Hypothesis profile, loaded for every test run (pytest.ini): no per-example
deadline and no too_slow health check. Both time the machine, not the code: under TCG
(`make vm-test`) one draw took 2.7 s and failed a pure core test, and a loaded CI host
can trip a 200 ms deadline the same way. What the tests assert is the rule's output;
speed lives in `make bench` (docs/DESIGN.md §9)."""
from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("vegaskit", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vegaskit")
