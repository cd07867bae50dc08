"""Scenario files (TOML): a dumbbell, its flows, scheduled link changes, runs and profiles.

    name = "rerouting"                      # results/<name>/
    title = "..."; source = "seed 000, section VI.A, Table 1"
    duration = 200                          # seconds (full profile)
    [links]                                 # rate: bits/s (k/M/G), rtt_ms, buffer (pkts), loss
    bottleneck = { rate = "1M", rtt_ms = 10, buffer = 50 }
    access = { rate = "1M", rtt_ms = 20 }   # default Si-R1; a flow may override it
    egress = { rate = "1M", rtt_ms = 10 }   # default R2-Di
    [[flows]]                               # one sender/receiver pair each
    cc = "{cc}"                             # {placeholders} filled by each run
    start = 0                               # seconds; duration = ...; bytes = ...; mss = ...
    [[schedule]]
    at = 20; link = "s1"; rtt_ms = 200      # link: bottleneck | sN | dN
    [runs]                                  # one run per entry: placeholder values
    vegas = { cc = "bpf_vegas" }
    [controllers]                           # custom instances the runs need
    vk_samios = "vegas --preset samios"
    [profiles.ci]                           # times (duration, start, at, flow
    time_scale = 0.1                        # durations) multiplied; bytes too;
    runs = ["vegas"]                        # optional: a subset of the runs
    [paper]                                 # the paper's numbers, for the report
    ...

Times scale together, so a CI run is the full one played faster: same
topology and rates (docs/DESIGN.md §7), fewer seconds.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .linkemu import LinkParams

DEFAULT_BUFFER = 50         # "Routers use tail-drop policy with a buffer size of 50 packets" (seed 000, V)
_RATE_RE = re.compile(r"^\s*([0-9.]+)\s*([kKmMgG]?)(bit|bps|b)?\s*$")


class ScenarioError(ValueError):
    pass


@dataclass(frozen=True)
class LinkSpec:
    """A link as a scenario gives it, the same both ways: the round-trip delay is split evenly."""
    rate_bps: int
    rtt_us: int
    buffer_pkts: int = DEFAULT_BUFFER
    loss: float = 0.0

    def params(self) -> LinkParams:
        return LinkParams(rate_bps=self.rate_bps, delay_us=self.rtt_us // 2,
                          limit_pkts=self.buffer_pkts, loss=self.loss)


def parse_rate(v) -> int:
    """'800k', '1.5M', 1000000 -> bits per second."""
    if isinstance(v, (int, float)):
        return int(v)
    m = _RATE_RE.match(str(v))
    if not m:
        raise ScenarioError(f"bad rate {v!r} (e.g. 800k, 1.5M, 10G)")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()])


def default_label(i: int, cc: str, nbytes: int | None) -> str:
    """S<i> <cc>, and for a file transfer its size in this profile (scaled)."""
    return f"S{i} {cc}" + (f" {nbytes / 1e6:g} MB" if nbytes else "")


def link_spec(d: dict, base: LinkSpec | None = None) -> LinkSpec:
    unknown = set(d) - {"rate", "rtt_ms", "buffer", "loss"}
    if unknown:
        raise ScenarioError(f"unknown link keys {sorted(unknown)}")
    b = base or LinkSpec(0, 0)
    return LinkSpec(rate_bps=parse_rate(d["rate"]) if "rate" in d else b.rate_bps,
                    rtt_us=int(float(d["rtt_ms"]) * 1000) if "rtt_ms" in d else b.rtt_us,
                    buffer_pkts=int(d.get("buffer", b.buffer_pkts)),
                    loss=float(d.get("loss", b.loss)))


@dataclass
class Flow:
    index: int                  # 1-based: sender Si, receiver Di
    cc: str
    start: float
    duration: float | None      # seconds, or
    bytes: int | None           # a file transfer (completion time)
    mss: int | None
    access: LinkSpec
    egress: LinkSpec
    label: str


@dataclass
class ScheduledChange:
    """A link change at a time of the run (linkemu applies it: linkemu.Change)."""
    at: float
    link: str
    params: dict                # rate_bps / delay_us / limit_pkts / loss, both directions


@dataclass
class Run:
    """One concrete run of a scenario (placeholders filled, profile applied)."""
    scenario: "Scenario"
    name: str
    profile: str
    duration: float
    bottleneck: LinkSpec
    flows: list[Flow]
    schedule: list[ScheduledChange]
    controllers: dict[str, str]  # instance name -> "variant args..." to load
    trace: str = "decisions"     # what `vegasctl trace` records: decisions | all | off


@dataclass
class Scenario:
    path: Path
    name: str
    title: str
    source: str
    doc: dict = field(repr=False)

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        path = Path(path)
        try:
            return cls.parse(path.read_text(), path)
        except OSError as e:
            raise ScenarioError(f"{path}: {e}") from None

    @classmethod
    def parse(cls, text: str, path: str | Path = "<string>") -> "Scenario":
        path = Path(path)
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: {e}") from None
        for key in ("name", "duration", "links", "flows", "runs", "profiles"):
            if key not in doc:
                raise ScenarioError(f"{path}: missing '{key}'")
        return cls(path, doc["name"], doc.get("title", doc["name"]), doc.get("source", ""), doc)

    @property
    def run_names(self) -> list[str]:
        return list(self.doc["runs"])

    def profile_runs(self, profile: str) -> list[str]:
        """The runs a profile makes: its `runs` list, or every run."""
        names = self.doc["profiles"].get(profile, {}).get("runs", self.run_names)
        for n in names:
            if n not in self.doc["runs"]:
                raise ScenarioError(f"{self.name}: profile {profile} names unknown run '{n}'")
        return list(names)

    @property
    def profiles(self) -> list[str]:
        return list(self.doc["profiles"])

    @property
    def paper(self) -> dict:
        return self.doc.get("paper", {})

    def run(self, run: str, profile: str) -> Run:
        if run not in self.doc["runs"]:
            raise ScenarioError(f"{self.name}: no run '{run}' (runs: {', '.join(self.run_names)})")
        if profile not in self.doc["profiles"]:
            raise ScenarioError(f"{self.name}: no profile '{profile}' ({', '.join(self.profiles)})")
        subst = {k: str(v) for k, v in self.doc["runs"][run].items()}
        prof = self.doc["profiles"][profile]
        scale = float(prof.get("time_scale", 1.0))

        def fill(v):
            if isinstance(v, str):
                try:
                    return v.format(**subst)
                except KeyError as e:
                    raise ScenarioError(f"{self.name}/{run}: no value for {e}") from None
            if isinstance(v, dict):
                return {k: fill(x) for k, x in v.items()}
            return v

        links = fill(self.doc["links"])
        bottleneck = link_spec(links["bottleneck"])
        access0 = link_spec(links.get("access", {"rate": "1G"}))
        egress0 = link_spec(links.get("egress", {"rate": "1G"}))
        duration = float(prof.get("duration", self.doc["duration"] * scale))
        flows = []
        for i, f in enumerate(self.doc["flows"], 1):
            f = fill(f)
            if "cc" not in f:
                raise ScenarioError(f"{self.name}: flow {i} has no cc")
            nbytes = int(f["bytes"] * scale) if "bytes" in f else None
            fdur = float(f["duration"]) * scale if "duration" in f else None
            start = float(f.get("start", 0)) * scale
            if nbytes is None and fdur is None:
                fdur = duration - start
            flows.append(Flow(i, f["cc"], start, fdur, nbytes, f.get("mss"),
                              link_spec(f.get("access", {}), access0),
                              link_spec(f.get("egress", {}), egress0),
                              f.get("label", default_label(i, f["cc"], nbytes))))
        schedule = []
        for c in self.doc.get("schedule", []):
            c = fill(dict(c))
            at, link = float(c.pop("at")) * scale, c.pop("link")
            spec = link_spec(c, LinkSpec(0, 0, 0, 0))
            params = {}
            if "rate" in c:
                params["rate_bps"] = spec.rate_bps
            if "rtt_ms" in c:
                params["delay_us"] = spec.rtt_us // 2
            if "buffer" in c:
                params["limit_pkts"] = spec.buffer_pkts
            if "loss" in c:
                params["loss"] = spec.loss
            schedule.append(ScheduledChange(at, link, params))
        controllers = {k: fill(v) for k, v in self.doc.get("controllers", {}).items()}
        trace = self.doc.get("trace", "decisions")
        if trace not in ("decisions", "all", "off"):
            raise ScenarioError(f"{self.name}: trace must be decisions, all or off")
        return Run(self, run, profile, duration, bottleneck, flows, schedule, controllers, trace)
