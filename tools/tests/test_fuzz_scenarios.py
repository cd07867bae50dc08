"""Fuzz stage for scenario files (issue 12): generated documents, good and bad,
must load or be refused with one ScenarioError line, and every run a loaded
file names must be made or refused the same way. Nothing else may escape:
no KeyError, TypeError, OverflowError or ValueError from deep inside.

`make test` runs a fixed number of derandomized examples; `make fuzz` runs
many more (VK_FUZZ_EXAMPLES), still reproducible from the seed Hypothesis prints.
"""
import os
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.testing import reliability

EXAMPLES = int(os.environ.get("VK_FUZZ_EXAMPLES", "400"))
FUZZ = settings(max_examples=EXAMPLES, derandomize="VK_FUZZ_EXAMPLES" not in os.environ,
                deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values of every kind a careless or hostile file might hold.
ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from(["", "1M", "800k", "10G", "fast", "{cc}", "{nope}", "{0}", "../x", "nan",
                       "inf", "-1", "1e400", "bpf_vegas", "reno", "0x10", " 5 "]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
        st.sampled_from(["rate", "rtt_ms", "buffer", "loss", "cc", "start", "bytes", "at",
                         "link", "time_scale", "runs", "reps", "start_jitter_s", "x"]),
        kids, max_size=4),
    max_leaves=8)

# A valid document, then up to three mutations: a value anywhere replaced by
# one of ANY's, or a key dropped. Mostly-valid files reach the deep checks
# (runs, profiles, placeholders, repetitions) that a random file never would.
GOOD_LINK = st.fixed_dictionaries(
    {"rate": st.sampled_from(["1M", "800k", "10M", 250_000]), "rtt_ms": st.integers(0, 300),
     "buffer": st.integers(1, 100)}, optional={"loss": st.floats(0, 0.1)})
GOOD_FLOW = st.fixed_dictionaries({"cc": st.sampled_from(["{cc}", "reno"])}, optional={
    "start": st.floats(0, 20), "mss": st.integers(88, 9000), "label": st.text(max_size=5),
    "access": GOOD_LINK})
GOOD = st.fixed_dictionaries({
    "name": st.sampled_from(["t", "x-1", "a.b"]),
    "duration": st.floats(21, 100),
    "links": st.fixed_dictionaries({"bottleneck": GOOD_LINK}, optional={"egress": GOOD_LINK}),
    "flows": st.lists(GOOD_FLOW, min_size=1, max_size=3),
    "runs": st.fixed_dictionaries({"v": st.fixed_dictionaries(
        {"cc": st.sampled_from(["bpf_vegas", "reno", "vk_x"])}, optional={"rtt": st.integers(1, 9)})}),
    "profiles": st.fixed_dictionaries({"ci": st.fixed_dictionaries({}, optional={
        "time_scale": st.floats(0.01, 2), "reps": st.integers(1, 6),
        "start_jitter_s": st.floats(0, 5), "runs": st.just(["v"])})}),
}, optional={
    "schedule": st.lists(st.fixed_dictionaries({"at": st.floats(0, 20),
                                                "link": st.sampled_from(["bottleneck", "s1"]),
                                                "rtt_ms": st.integers(0, 300)}), max_size=2),
    "controllers": st.just({"vk_x": "vegas --preset ns2"}),
    "paper": st.fixed_dictionaries({"figures": st.lists(st.fixed_dictionaries(
        {"id": st.just("f"), "run": st.just("v"), "metric": st.sampled_from(
            ["jain", "std", "throughput:S1", "ratio:{cc}/reno"]), "value": st.floats(0, 1e6)}),
        max_size=2)}),
})
PATHS = [("name",), ("duration",), ("trace",), ("links",), ("links", "bottleneck"),
         ("links", "bottleneck", "rate"), ("links", "bottleneck", "rtt_ms"),
         ("links", "bottleneck", "buffer"), ("links", "bottleneck", "loss"), ("flows",),
         ("flows", 0), ("flows", 0, "cc"), ("flows", 0, "start"), ("flows", 0, "bytes"),
         ("flows", 0, "duration"), ("flows", 0, "mss"), ("flows", 0, "access"),
         ("flows", 0, "access", "rate"), ("runs",), ("runs", "v"), ("runs", "v", "cc"),
         ("runs", "v", "rtt"), ("profiles",), ("profiles", "ci"), ("profiles", "ci", "reps"),
         ("profiles", "ci", "time_scale"), ("profiles", "ci", "start_jitter_s"),
         ("profiles", "ci", "runs"), ("profiles", "ci", "duration"), ("schedule",),
         ("schedule", 0, "at"), ("schedule", 0, "link"), ("controllers",), ("paper",),
         ("paper", "figures"), ("paper", "figures", 0, "metric"), ("paper", "figures", 0, "run"),
         ("paper", "figures", 0, "value"), ("paper", "claims")]
DROP = object()
MUTATION = st.tuples(st.sampled_from(PATHS), ANY | st.just(DROP))


def mutate(doc: dict, path: tuple, value) -> None:
    node = doc
    for k in path[:-1]:
        if isinstance(node, dict) and k in node:
            node = node[k]
        elif isinstance(node, list) and isinstance(k, int) and k < len(node):
            node = node[k]
        else:
            return
    last = path[-1]
    if isinstance(node, dict):
        if value is DROP:
            node.pop(last, None)
        else:
            node[last] = value
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        if value is DROP:
            node.pop(last)
        else:
            node[last] = value


@st.composite
def documents(draw) -> dict:
    doc = draw(GOOD)
    for path, value in draw(st.lists(MUTATION, max_size=3)):
        mutate(doc, path, value)
    return doc


def _toml(v) -> str:
    """A TOML value for v; None (no TOML null) becomes a string that is never valid."""
    if v is None:
        return '"<none>"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v > 0 else "-inf") if v in (float("inf"), -float("inf")) \
            else repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "{" + ", ".join(f'"{k}" = {_toml(x)}' for k, x in v.items()) + "}"


def dump(doc: dict) -> str:
    return "\n".join(f'"{k}" = {_toml(v)}' if isinstance(k, str) else "" for k, v in doc.items()) + "\n"


@pytest.mark.reliability("bad_input")
@FUZZ
@given(documents())
def test_a_generated_scenario_loads_or_is_refused_in_one_line(doc):
    text = dump(doc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:      # our dump of an odd value: not what is tested
        return
    reliability.case()
    try:
        s = Scenario.parse(text, "f.toml")
    except ScenarioError as e:
        assert "\n" not in str(e) and str(e).startswith("f.toml: "), str(e)
        return
    for prof in s.profiles:
        try:
            names = s.profile_runs(prof)
        except ScenarioError as e:
            assert "\n" not in str(e)
            continue
        for r in names:
            for rep in (0, 1):
                try:
                    run = s.run(r, prof, rep)
                except ScenarioError as e:
                    assert "\n" not in str(e)
                    continue
                assert run.duration > 0 and all(f.start < run.duration for f in run.flows)
