"""Scenario files (TOML): a dumbbell, its flows, scheduled link changes, runs and profiles.

    name = "rerouting"                      # results/<name>/
    title = "..."; source = "seed 000, section VI.A, Table 1"
    duration = 200                          # seconds (full profile)
    [links]                                 # rate: bits/s (k/M/G), rtt_ms, buffer (pkts), loss,
                                            # spare_retx (true: loss spares retransmissions)
    bottleneck = { rate = "1M", rtt_ms = 10, buffer = 50 }
    access = { rate = "1M", rtt_ms = 20 }   # default Si-R1; a flow may override it
    egress = { rate = "1M", rtt_ms = 10 }   # default R2-Di
    [[flows]]                               # one sender/receiver pair each
    cc = "{cc}"                             # {placeholders} filled by each run
    start = 0                               # seconds, or "{placeholder}"; duration = ...; bytes = ...; mss = ...
    acks = "delayed"                        # the receiver's ACKs: "delayed" (Linux) or
                                            # "every" packet (ns-2's TCPSink)
    sysctl = { tcp_limit_output_bytes = 3000 }  # net.ipv4 knobs of the sender's namespace
    [[schedule]]
    at = 20; link = "s1"; rtt_ms = 200      # link: bottleneck | sN | dN
    [runs]                                  # one run per entry: placeholder values
    vegas = { cc = "bpf_vegas" }
    [controllers]                           # custom instances the runs need
    vk_samios = "vegas --preset samios"
    [profiles.ci]                           # times (duration, start, at, flow
    time_scale = 0.1                        # durations) multiplied; bytes too;
    runs = ["vegas"]                        # optional: a subset of the runs
    reps = 6                                # repetitions of each run (default 1)
    start_jitter_s = 0.5                    # each flow starts up to this much later
    diagnostic = "..."                      # optional: an experiment about the full runs,
                                            # reported with this text, not against the paper
    [paper]                                 # the paper's numbers, for the report
    ...
    [report]                                # notes = "..." (the reading of the difference;
                                            # its figures are a report's, docs/DESIGN.md §6.5);
    per_rep = ["vegas_a"]                   # runs listed repetition by repetition

Times scale together, so a CI run is the full one played faster: same
topology and rates (docs/DESIGN.md §7), fewer seconds.
"""
from __future__ import annotations

import math
import random
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from vegaskit import intf
from vegaskit.analysis import figures

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
    spare_retx: bool = False    # the loss spares TCP retransmissions (docs/DESIGN.md §6.2)

    def params(self) -> LinkParams:
        return LinkParams(rate_bps=self.rate_bps, delay_us=self.rtt_us // 2,
                          limit_pkts=self.buffer_pkts, loss=self.loss,
                          spare_retx=self.spare_retx)


def parse_rate(v) -> int:
    """'800k', '1.5M', 1000000 -> bits per second."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if not math.isfinite(v):
            raise ScenarioError(f"bad rate {v!r}")
        return int(v)
    m = _RATE_RE.match(str(v))
    if not m:
        raise ScenarioError(f"bad rate {v!r} (e.g. 800k, 1.5M, 10G)")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()])


def default_label(i: int, cc: str, nbytes: int | None) -> str:
    """S<i> <cc>, and for a file transfer its size in this profile (scaled)."""
    return f"S{i} {cc}" + (f" {nbytes / 1e6:g} MB" if nbytes else "")


# ------------------------------------------------------------ validation
# Everything a scenario file says is checked before anything runs, so a bad
# file is one line naming the key, never a traceback or a half-made lab.

# Runs at once load their own instances, NAME.jL (runner.instance_names), L a
# job slot's one-character label: as many slots as the host hands out, and a
# [controllers] name leaves room for the suffix within TCP_CA_NAME_MAX.
SLOT_LABELS = "123456789abcdefghijklmnopqrstuvwxyz"


def job_suffix(job: int) -> str:
    """What job N > 0's instance of a controller adds to its name."""
    return f".j{SLOT_LABELS[job - 1]}"


CONTROLLER_NAME_MAX = intf.NAME_MAX - 1 - len(job_suffix(1))

TOP_KEYS = {"name", "title", "source", "duration", "trace", "links", "flows", "schedule",
            "runs", "controllers", "profiles", "paper", "report"}
REQUIRED = ("name", "duration", "links", "flows", "runs", "profiles")
LINK_KEYS = {"rate", "rtt_ms", "buffer", "loss", "spare_retx"}
FLOW_KEYS = {"cc", "start", "duration", "bytes", "mss", "label", "access", "egress", "acks",
             "sysctl"}
# net.ipv4 knobs a flow may set in its sender's namespace (each is per namespace), with
# the largest value that means something (ip-sysctl.rst; the kernel refuses a pacing ratio
# above 1000): TSQ's budget, F-RTO, timestamps, the restart after idle, and the pacing
# rate's ratios to cwnd/srtt, which also size TCP's GSO frames.
SENDER_SYSCTLS = {"tcp_limit_output_bytes": 2**31 - 1, "tcp_frto": 2, "tcp_timestamps": 2,
                  "tcp_slow_start_after_idle": 1, "tcp_pacing_ca_ratio": 1000,
                  "tcp_pacing_ss_ratio": 1000}
ACKS = ("delayed", "every")
EDGES = ("emulated", "direct")     # [links] edges: Si-R1, R2-Di as linkemu links or plain veths
# diagnostic: the profile is an experiment of ours about the full runs, not a
# reproduction; its report gives this text in place of the paper's verdicts and notes.
PROFILE_KEYS = {"time_scale", "runs", "duration", "reps", "start_jitter_s", "diagnostic"}
MAX_REPS = 100
# A name is a directory under --out: no separators, no "..", nothing hidden.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_SECONDS = 86400.0
MAX_BYTES = 1 << 40
MAX_BUFFER = 1_000_000
MSS_RANGE = (88, 65495)      # Linux's TCP_MAXSEG bounds for IPv4
# A placeholder is {name} and nothing else: str.format would also take
# {cc.__class__}, {cc[0]} and {cc:>99999999}, attribute access and unbounded padding.
_PLACEHOLDER_RE = re.compile(r"\{([^{}]*)\}")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def placeholders(v: str, what: str) -> list[str]:
    """The names of v's {placeholders}; anything but {name}, or a stray brace, is refused."""
    names = _PLACEHOLDER_RE.findall(v)
    bad = [n for n in names if not _IDENT_RE.match(n)]
    if bad:
        raise ScenarioError(f"{what}: bad placeholder {{{bad[0]}}} in {v!r}: write {{name}}, "
                            "a run's key, with nothing else inside the braces")
    rest = _PLACEHOLDER_RE.sub("", v)
    if "{" in rest or "}" in rest:
        raise ScenarioError(f"{what}: unmatched brace in {v!r}")
    return names


def fill_placeholders(v: str, values: dict[str, str]) -> str:
    """v with each {name} replaced by values[name]."""
    for n in placeholders(v, "placeholder"):
        if n not in values:
            raise ScenarioError(f"no value for {n!r}")
    return _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], v)


def _check_placeholders(v, what: str) -> None:
    """Every string in v (tables and lists included) has only {name} placeholders."""
    if isinstance(v, str):
        placeholders(v, what)
    elif isinstance(v, dict):
        for k, x in v.items():
            _check_placeholders(x, f"{what}.{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v, 1):
            _check_placeholders(x, f"{what} {i}")


def _number(v, what: str, lo: float, hi: float, lo_open: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v \
            or not (lo < v if lo_open else lo <= v) or not v <= hi:
        rng = f"({lo:g}, {hi:g}]" if lo_open else f"[{lo:g}, {hi:g}]"
        raise ScenarioError(f"{what} must be a number in {rng}, not {v!r}")
    return float(v)


def _filled_number(v, what: str, lo: float, hi: float) -> float:
    """A number, or the text a run's value put in its placeholder."""
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            raise ScenarioError(f"{what} must be a number in [{lo:g}, {hi:g}], not {v!r}") from None
    return _number(v, what, lo, hi)


def _integer(v, what: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ScenarioError(f"{what} must be a whole number in [{lo}, {hi}], not {v!r}")
    return v


def _table(v, what: str) -> dict:
    if not isinstance(v, dict):
        raise ScenarioError(f"{what} must be a table, not {type(v).__name__}")
    return v


def _keys(d: dict, allowed: set, what: str) -> None:
    unknown = sorted(set(d) - allowed)
    if unknown:
        raise ScenarioError(f"unknown key{'s' * (len(unknown) > 1)} {', '.join(unknown)} in "
                            f"{what} (known: {', '.join(sorted(allowed))})")


def sender_sysctl(v, what: str) -> tuple[tuple[str, int], ...]:
    """A flow's sysctl table, checked: known net.ipv4 knobs, whole numbers."""
    t = _table(v, what)
    _keys(t, set(SENDER_SYSCTLS), what)
    return tuple((k, _integer(x, f"{what}.{k}", 0, SENDER_SYSCTLS[k]))
                 for k, x in sorted(t.items()))


def link_value(key: str, v, what: str):
    """One link value, checked: rate in bits/s, rtt_ms, buffer (packets), loss or spare_retx."""
    if key == "spare_retx":
        # true/false or 0/1; a placeholder fills in a string ("True", "0", ...)
        spare = {"true": True, "1": True, "false": False, "0": False}.get(
            str(v).lower() if isinstance(v, (bool, int, str)) else None)
        if spare is None or isinstance(v, float):
            raise ScenarioError(f"{what}.spare_retx must be true, false, 0 or 1, not {v!r}")
        return spare
    if key == "rate":
        bps = parse_rate(v)
        if not 0 < bps <= 1e12:
            raise ScenarioError(f"{what}.rate must be above 0 and at most 1000G, not {v!r}")
        return bps
    x = v
    if isinstance(v, str):
        try:
            x = float(v)
        except ValueError:
            raise ScenarioError(f"{what}.{key} must be a number, not {v!r}") from None
    if key == "rtt_ms":
        return _number(x, f"{what}.rtt_ms", 0, 60_000)
    if key == "buffer":
        if isinstance(x, float) and x.is_integer():
            x = int(x)
        return _integer(x, f"{what}.buffer", 1, MAX_BUFFER)
    loss = _number(x, f"{what}.loss", 0, 1)
    if loss >= 1:
        raise ScenarioError(f"{what}.loss must be below 1, not {v!r}")
    return loss


def validate_link(d, what: str, filled: bool = False) -> dict:
    """The link's checked values; before a run fills them, placeholders pass."""
    d = _table(d, what)
    _keys(d, LINK_KEYS, what)
    return {k: link_value(k, v, what) for k, v in d.items()
            if filled or not (isinstance(v, str) and "{" in v)}


def _dir_name(name, what: str) -> None:
    """Scenario, run and profile names name directories under --out."""
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise ScenarioError(f"{what} {name!r} must be 1-64 letters, digits, '_', '.', '-', "
                            "starting with a letter or digit (it names a directory)")


def validate(doc: dict) -> None:
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise ScenarioError(f"missing {', '.join(repr(k) for k in missing)}")
    _keys(doc, TOP_KEYS, "the file")
    _dir_name(doc["name"], "name")
    for k in ("title", "source"):
        if k in doc and not isinstance(doc[k], str):
            raise ScenarioError(f"{k} must be a string")
    duration = _number(doc["duration"], "duration", 0, MAX_SECONDS, lo_open=True)
    if doc.get("trace", "decisions") not in ("decisions", "all", "off"):
        raise ScenarioError("trace must be decisions, all or off")
    links = _table(doc["links"], "[links]")
    _keys(links, {"bottleneck", "access", "egress", "edges"}, "[links]")
    if "bottleneck" not in links:
        raise ScenarioError("[links] needs a bottleneck")
    direct = links.get("edges", "emulated") == "direct"
    if links.get("edges", "emulated") not in EDGES:
        raise ScenarioError(f"links.edges must be one of {', '.join(EDGES)}")
    if direct and ({"access", "egress"} & links.keys()):
        raise ScenarioError("links.edges = \"direct\" has no access or egress link to set")
    for k, v in links.items():
        if k != "edges":
            validate_link(v, f"links.{k}")
    flows = doc["flows"]
    if not isinstance(flows, list) or not flows:
        raise ScenarioError("[[flows]] must list at least one flow")
    for i, f in enumerate(flows, 1):
        what = f"flow {i}"
        f = _table(f, what)
        _keys(f, FLOW_KEYS, what)
        if not isinstance(f.get("cc"), str) or not f["cc"]:
            raise ScenarioError(f"{what} needs cc, a controller name or a {{placeholder}}")
        start = f.get("start", 0)
        if not (isinstance(start, str) and "{" in start):   # a placeholder: checked filled
            start = _number(start, f"{what}.start", 0, MAX_SECONDS)
            if start >= duration:
                raise ScenarioError(f"{what} starts at {start:g} s, not before the end "
                                    f"({duration:g} s)")
        if "duration" in f:
            _number(f["duration"], f"{what}.duration", 0, MAX_SECONDS, lo_open=True)
        if "bytes" in f:
            _integer(f["bytes"], f"{what}.bytes", 1, MAX_BYTES)
        if "duration" in f and "bytes" in f:
            raise ScenarioError(f"{what}: give duration or bytes, not both")
        if "mss" in f:
            _integer(f["mss"], f"{what}.mss", *MSS_RANGE)
        if "label" in f and not isinstance(f["label"], str):
            raise ScenarioError(f"{what}.label must be a string")
        if "acks" in f and not (isinstance(f["acks"], str) and
                                (f["acks"] in ACKS or "{" in f["acks"])):
            raise ScenarioError(f"{what}.acks must be one of {', '.join(ACKS)} "
                                "or a {placeholder}")
        if "sysctl" in f:
            sender_sysctl(f["sysctl"], f"{what}.sysctl")
        for k in ("access", "egress"):
            if k in f:
                if direct:
                    raise ScenarioError(f"{what}.{k}: links.edges = \"direct\" has no {k} link")
                validate_link(f[k], f"{what}.{k}")
    links_named = {"bottleneck"} if direct else {"bottleneck"} \
        | {f"s{i}" for i in range(1, len(flows) + 1)} | {f"d{i}" for i in range(1, len(flows) + 1)}
    schedule = doc.get("schedule", [])
    if not isinstance(schedule, list):
        raise ScenarioError("[[schedule]] must be a list of changes")
    for i, c in enumerate(schedule, 1):
        what = f"schedule entry {i}"
        c = _table(c, what)
        _keys(c, LINK_KEYS | {"at", "link"}, what)
        _number(c.get("at"), f"{what}.at", 0, duration)
        if not isinstance(c.get("link"), str) or c["link"] not in links_named:
            if direct:
                raise ScenarioError(f"{what}.link must be bottleneck: links.edges = \"direct\" "
                                    f"has no other link, not {c.get('link')!r}")
            raise ScenarioError(f"{what}.link must be bottleneck, sN or dN for a flow N, "
                                f"not {c.get('link')!r}")
        validate_link({k: v for k, v in c.items() if k in LINK_KEYS}, what)
    runs = _table(doc["runs"], "[runs]")
    if not runs:
        raise ScenarioError("[runs] must name at least one run")
    for r, vals in runs.items():
        _dir_name(r, "run name")
        for k, v in _table(vals, f"run {r}").items():
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise ScenarioError(f"run {r}: {k} must be a string or a number")
    for k, v in _table(doc.get("controllers", {}), "[controllers]").items():
        if not isinstance(v, str):
            raise ScenarioError(f"controllers.{k} must be a string: 'VARIANT [KEY=VALUE...]'")
        try:
            words = shlex.split(v)
        except ValueError as e:
            raise ScenarioError(f"controllers.{k}: {e} in {v!r}") from None
        if not words:
            raise ScenarioError(f"controllers.{k} is empty: 'VARIANT [KEY=VALUE...]'")
        if len(k) > CONTROLLER_NAME_MAX:
            raise ScenarioError(f"controllers.{k}: a name of at most {CONTROLLER_NAME_MAX} "
                                f"characters, so that a job's instance, {k}.jN, fits the "
                                f"kernel's {intf.NAME_MAX - 1}")
    for k in ("links", "flows", "schedule", "controllers"):
        _check_placeholders(doc.get(k, {}), k)
    profiles = _table(doc["profiles"], "[profiles]")
    if not profiles:
        raise ScenarioError("[profiles] must name at least one profile")
    for p, prof in profiles.items():
        _dir_name(p, "profile name")
        what = f"profile {p}"
        prof = _table(prof, what)
        _keys(prof, PROFILE_KEYS, what)
        if "time_scale" in prof:
            _number(prof["time_scale"], f"{what}.time_scale", 0, 100, lo_open=True)
        if "duration" in prof:
            _number(prof["duration"], f"{what}.duration", 0, MAX_SECONDS, lo_open=True)
        if "reps" in prof:
            _integer(prof["reps"], f"{what}.reps", 1, MAX_REPS)
        if "start_jitter_s" in prof:
            _number(prof["start_jitter_s"], f"{what}.start_jitter_s", 0, 60)
        if "diagnostic" in prof and not (isinstance(prof["diagnostic"], str)
                                         and prof["diagnostic"].strip()):
            raise ScenarioError(f"{what}.diagnostic must be a non-empty string")
        names = prof.get("runs", list(runs))
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ScenarioError(f"{what}.runs must be a non-empty list of run names")
        unknown = [n for n in names if n not in runs]
        if unknown:
            raise ScenarioError(f"{what} names unknown run {unknown[0]!r}")
    for k in ("paper", "report"):
        if k in doc:
            _table(doc[k], f"[{k}]")
    try:
        figures.validate(doc.get("paper", {}))
    except figures.FigureError as e:
        raise ScenarioError(str(e)) from None
    paper = doc.get("paper", {})
    named = [(f"paper.figures {i}", f["run"]) for i, f in enumerate(paper.get("figures", []), 1)]
    named += [(f"paper.claims {i}.{side}", c[side]["run"])
              for i, c in enumerate(paper.get("claims", []), 1)
              for side in ("left", "right") if isinstance(c[side], dict)]
    for what, run in named:
        if run not in runs:
            raise ScenarioError(f"{what} names unknown run {run!r}")
    per_rep = doc.get("report", {}).get("per_rep", [])
    if not isinstance(per_rep, list) or not all(isinstance(n, str) for n in per_rep):
        raise ScenarioError("[report].per_rep must be a list of run names")
    for n in per_rep:
        if n not in runs:
            raise ScenarioError(f"[report].per_rep names unknown run {n!r}")


def link_spec(d: dict, base: LinkSpec | None = None, what: str = "link") -> LinkSpec:
    v = validate_link(d, what, filled=True)
    b = base or LinkSpec(0, 0)
    return LinkSpec(rate_bps=v.get("rate", b.rate_bps),
                    rtt_us=int(v["rtt_ms"] * 1000) if "rtt_ms" in v else b.rtt_us,
                    buffer_pkts=v.get("buffer", b.buffer_pkts), loss=v.get("loss", b.loss),
                    spare_retx=v.get("spare_retx", b.spare_retx))


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
    acks: str = "delayed"       # "every": the receiver acknowledges each segment
    sysctl: tuple[tuple[str, int], ...] = ()    # net.ipv4 knobs of the sender's namespace

@dataclass
class ScheduledChange:
    """A link change at a time of the run (linkemu applies it: linkemu.Change)."""
    at: float
    link: str
    params: dict                # rate_bps / delay_us / limit_pkts / loss / spare_retx, both ways


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
    direct_edges: bool = False   # Si-R1, R2-Di plain veths: the bottleneck is the one emulator
    rep: int = 0                 # which repetition (0-based)
    seed: int = 1                # the links' random streams (linkemu --seed)


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
            text = path.read_text()
        except OSError as e:
            raise ScenarioError(f"{path}: {e}") from None
        except UnicodeDecodeError:
            raise ScenarioError(f"{path}: not a text file (UTF-8 TOML)") from None
        return cls.parse(text, path)

    @classmethod
    def parse(cls, text: str, path: str | Path = "<string>") -> "Scenario":
        path = Path(path)
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: {e}") from None
        try:
            validate(doc)
        except ScenarioError as e:
            raise ScenarioError(f"{path}: {e}") from None
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

    def reps(self, profile: str) -> int:
        """How many times a profile repeats each run (docs/DESIGN.md §7.1)."""
        return int(self.doc["profiles"].get(profile, {}).get("reps", 1))

    @property
    def profiles(self) -> list[str]:
        return list(self.doc["profiles"])

    @property
    def paper(self) -> dict:
        return self.doc.get("paper", {})

    def run(self, run: str, profile: str, rep: int = 0) -> Run:
        if run not in self.doc["runs"]:
            raise ScenarioError(f"{self.name}: no run '{run}' (runs: {', '.join(self.run_names)})")
        if profile not in self.doc["profiles"]:
            raise ScenarioError(f"{self.name}: no profile '{profile}' ({', '.join(self.profiles)})")
        subst = {k: str(v) for k, v in self.doc["runs"][run].items()}
        prof = self.doc["profiles"][profile]
        scale = float(prof.get("time_scale", 1.0))

        def fill(v):
            if isinstance(v, str):
                return fill_placeholders(v, subst)
            if isinstance(v, dict):
                return {k: fill(x) for k, x in v.items()}
            return v

        try:
            return self._run(run, profile, fill, scale, rep)
        except ScenarioError as e:
            raise ScenarioError(f"{self.name}/{run}: {e}") from None

    def _run(self, run: str, profile: str, fill, scale: float, rep: int) -> Run:
        prof = self.doc["profiles"][profile]
        # Repetitions differ in the links' random streams and in each flow's
        # start, drawn up to start_jitter_s later from a stream named by the
        # scenario, run and repetition: reproducible, and unlike between reps.
        jitter = float(prof.get("start_jitter_s", 0.0))
        draw = random.Random(f"{self.name}/{run}/{rep}")
        links = fill(self.doc["links"])
        bottleneck = link_spec(links["bottleneck"], what="links.bottleneck")
        access0 = link_spec(links.get("access", {"rate": "1G"}), what="links.access")
        egress0 = link_spec(links.get("egress", {"rate": "1G"}), what="links.egress")
        duration = float(prof.get("duration", self.doc["duration"] * scale))
        flows = []
        for i, f in enumerate(self.doc["flows"], 1):
            f = fill(f)
            if "cc" not in f:
                raise ScenarioError(f"{self.name}: flow {i} has no cc")
            # A scaled transfer keeps at least one byte (0 would make it a timed flow).
            nbytes = max(1, int(f["bytes"] * scale)) if "bytes" in f else None
            fdur = float(f["duration"]) * scale if "duration" in f else None
            start = _filled_number(f.get("start", 0), f"flow {i}.start", 0, MAX_SECONDS) * scale
            if jitter:
                start += draw.uniform(0, min(jitter, (duration - start) / 10))
            if start >= duration:
                raise ScenarioError(f"flow {i} starts at {start:g} s, after the run's "
                                    f"{duration:g} s in profile {profile}")
            if nbytes is None and fdur is None:
                fdur = duration - start
            if fdur is not None:
                # iperf3 -t counts whole seconds (it reads the number with atoi: 4.7
                # runs 4 s, and 0.5 runs until killed), so the flow lasts floor(fdur).
                if fdur < 1:
                    raise ScenarioError(f"flow {i} lasts {fdur:g} s in profile {profile}: "
                                        "iperf3 needs at least 1 s")
                fdur = float(math.floor(fdur))
            if f.get("acks", "delayed") not in ACKS:       # a placeholder filled badly
                raise ScenarioError(f"flow {i}.acks must be one of {', '.join(ACKS)}, "
                                    f"not {f['acks']!r}")
            flows.append(Flow(i, f["cc"], start, fdur, nbytes, f.get("mss"),
                              link_spec(f.get("access", {}), access0, f"flow {i}.access"),
                              link_spec(f.get("egress", {}), egress0, f"flow {i}.egress"),
                              f.get("label", default_label(i, f["cc"], nbytes)),
                              f.get("acks", "delayed"),
                              sender_sysctl(f.get("sysctl", {}), f"flow {i}.sysctl")))
        schedule = []
        for c in self.doc.get("schedule", []):
            c = fill(dict(c))
            at, link = float(c.pop("at")) * scale, c.pop("link")
            spec = link_spec(c, LinkSpec(0, 0, 0, 0), "schedule")
            params = {}
            if "rate" in c:
                params["rate_bps"] = spec.rate_bps
            if "rtt_ms" in c:
                params["delay_us"] = spec.rtt_us // 2
            if "buffer" in c:
                params["limit_pkts"] = spec.buffer_pkts
            if "loss" in c:
                params["loss"] = spec.loss
            if "spare_retx" in c:
                params["spare_retx"] = spec.spare_retx
            schedule.append(ScheduledChange(at, link, params))
        controllers = {k: fill(v) for k, v in self.doc.get("controllers", {}).items()}
        trace = self.doc.get("trace", "decisions")
        return Run(self, run, profile, duration, bottleneck, flows, schedule, controllers, trace,
                   rep=rep, seed=1 + rep, direct_edges=links.get("edges") == "direct")
