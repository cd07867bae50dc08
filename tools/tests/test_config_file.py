"""vegasctl's configuration file against Python's own TOML parser (tomllib).

The file is a strict subset of TOML (docs/DESIGN.md §4.7): whatever vegasctl
accepts must mean what any TOML parser reads, and whatever it cannot read
must be refused in one line, never misread. Documents are generated from
three kinds of pieces: ones in the subset, valid TOML outside it, and invalid
TOML. `vegasctl apply --check --json` (no root, no kernel) is compared with
tomllib on each.
"""
from __future__ import annotations

import json
import subprocess
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from vegaskit import paths
from vegaskit.testing import reliability

EXAMPLES = 300
SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, deadline=None,
                    suppress_health_check=list(HealthCheck))


def check(tmp_path, text: str | bytes):
    f = tmp_path / "vk.toml"
    f.write_bytes(text.encode() if isinstance(text, str) else text)
    return subprocess.run([str(paths.VEGASCTL), "apply", "--check", "--json", str(f)],
                          capture_output=True, text=True, timeout=20)


def refused(r) -> bool:
    """One line, as Python counts lines too (U+2028, U+0085 and friends end one)."""
    return r.returncode == 1 and r.stdout == "" and r.stderr.startswith("vegasctl: ") and \
        r.stderr.count("\n") == 1 and len(r.stderr.splitlines()) == 1


# --- pieces of the subset: (text, what tomllib must read) -------------------------

def bare_or_quoted(name: str) -> st.SearchStrategy[str]:
    """A table key as TOML may spell it: bare (if it can be), "basic" (with
    escapes) or 'literal'."""
    basic = '"' + "".join({"_": "\\u005f", "a": "\\u0061"}.get(c, c) for c in name) + '"'
    bare = [name] if name.replace("_", "").replace("-", "").isalnum() and name.isascii() else []
    return st.sampled_from(bare + [f'"{name}"', f"'{name}'", basic])


def blank() -> st.SearchStrategy[str]:
    return st.sampled_from(["", " ", "\t", "  "])


def comment() -> st.SearchStrategy[str]:
    return st.sampled_from(["", " # a comment", "# é, ü and 中", "\t# [not a table] = 1"])


def integer(n: int) -> st.SearchStrategy[str]:
    s = str(n)
    forms = [s]
    if len(s) > 3:
        forms.append(s[:-3] + "_" + s[-3:])
    if n:
        forms.append("+" + s)
    return st.sampled_from(forms)


@st.composite
def controller(draw, name: str):
    variant = draw(st.sampled_from(["vegas", "vegas_a", "pipe", "vegas_fr"]))
    lines, want = [f'variant = "{variant}"'], {"variant": variant, "params": {}}
    if variant in ("vegas", "vegas_a", "pipe"):
        alpha = draw(st.integers(1, 9))
        beta = draw(st.integers(alpha, 2000))
        lines += [f"alpha = {draw(integer(alpha))}", f"beta{draw(blank())}={draw(blank())}{draw(integer(beta))}"]
        want["params"].update(alpha=alpha, beta=beta)
    else:
        ref = draw(st.integers(725, 200_000))
        gain = draw(st.sampled_from(["0.5", "1.0", "0.125", "1", "0.001"]))
        lines += [f"ref_bytes = {draw(integer(ref))}", f"gain = {gain}"]
        want["params"].update(ref_bytes=ref, gain=float(gain))
        half = draw(st.sampled_from(["true", "false", "0", "1"]))
        lines.append(f"half_packet = {half}")
        want["params"]["half_packet"] = int(half in ("true", "1"))
    sem = draw(st.sampled_from([None, '"paper"', "'exact'"]))
    if sem:
        lines.append(f"semantics = {sem}")
        want["params"]["semantics"] = sem.strip("'\"")
    unr = draw(st.sampled_from([None, "true", "false"]))
    if unr:
        lines.append(f"unrestricted = {unr}")
    want["unrestricted"] = unr == "true"
    draw(st.randoms()).shuffle(lines)
    head = f"[{draw(blank())}controller{draw(blank())}.{draw(blank())}{draw(bare_or_quoted(name))}{draw(blank())}]"
    return "\n".join([head + draw(comment())] + [draw(blank()) + l + draw(comment()) for l in lines]), want


@st.composite
def document(draw):
    """A valid document in the subset, and the state it declares."""
    names = draw(st.lists(st.sampled_from(["vk1", "vk_a", "Vk2", "a.b"]), min_size=1,
                          max_size=3, unique=True))
    parts, want = [], {"controllers": {}, "defaults": set(), "moves": []}
    for n in names:
        text, w = draw(controller(n))
        parts.append(text)
        want["controllers"][n] = w
    if draw(st.booleans()):
        parts.append(f'[host]\ndefault = "{names[0]}"')
        want["defaults"].add(("", names[0]))
    for ns in draw(st.lists(st.sampled_from(["blue", "ns-1", "é", "a b"]), max_size=2, unique=True)):
        parts.append(f"[netns.{draw(bare_or_quoted(ns))}]\ndefault = '{names[-1]}'")
        want["defaults"].add((ns, names[-1]))
    for _ in range(draw(st.integers(0, 2))):
        frm = draw(st.sampled_from([None, '"cubic"', '["cubic", "reno"]', "['cubic',]"]))
        port = draw(st.sampled_from([None, 443, 65535, 0]))
        lines = [f'to = "{names[0]}"']
        m = {"to": names[0], "from": [], "port": -1}
        if frm is not None:
            lines.append(f"from = {frm}")
            m["from"] = tomllib.loads(f"x = {frm}")["x"]
            m["from"] = [m["from"]] if isinstance(m["from"], str) else m["from"]
        if port is not None:
            lines.append(f"port = {port}")
            m["port"] = port
        parts.append("[[move]]\n" + "\n".join(lines))
        want["moves"].append(m)
    sep = draw(st.sampled_from(["\n", "\n\n", "\r\n", "\n# between\n"]))
    return sep.join(p.replace("\n", sep) if sep == "\r\n" else p for p in parts) + "\n", want


def read_back(out: dict) -> dict:
    got = {"controllers": {}, "defaults": {(d["netns"], d["cc"]) for d in out["defaults"]},
           "moves": [{"to": m["to"], "from": m["from"], "port": m["port"]} for m in out["moves"]]}
    for c in out["controllers"]:
        got["controllers"][c["name"]] = c
    return got


@SETTINGS
@given(doc=document())
def test_every_document_in_the_subset_reads_as_tomllib_reads_it(tmp_path_factory, doc):
    text, want = doc
    tomllib.loads(text)                 # the generator writes valid TOML
    r = check(tmp_path_factory.mktemp("c"), text)
    assert r.returncode == 0, (text, r.stderr)
    got = read_back(json.loads(r.stdout))
    assert set(got["controllers"]) == set(want["controllers"])
    for name, w in want["controllers"].items():
        g = got["controllers"][name]
        assert g["variant"] == w["variant"] and g["unrestricted"] == w["unrestricted"], (text, g)
        for k, v in w["params"].items():
            assert (float(g["params"][k]) == v) if isinstance(v, float) else g["params"][k] == v, \
                (text, k, g["params"])
    assert got["defaults"] == want["defaults"]
    assert got["moves"] == want["moves"]


# --- outside the subset, and not TOML at all ---------------------------------------

VALID_OUTSIDE = [
    '[host]\ndefault = """vk1"""\n',            # multi-line string
    "[controller.x]\nvariant = 'vegas'\nalpha = 1e0\n",
    "[controller.x]\nvariant = 'vegas'\nalpha = 0x1\n",
    "[controller.x]\nvariant = 'vegas'\nalpha = 0o1\n",
    "[controller.x]\nvariant = 'vegas'\ngain = inf\n",
    "[controller.x]\nvariant = 'vegas'\nwhen = 1979-05-27\n",
    "[host]\ndefault.x = 'vk1'\n",                # dotted key
    "[host]\nx = {a = 1}\n",                     # inline table
    "[[move]]\nto = 'vk1'\nfrom = [\n 'cubic'\n]\n",   # multi-line array
    "[[move]]\nto = 'vk1'\nfrom = [1, 2]\n",     # not strings
    "[[move]]\nto = 'vk1'\n[move.x]\n",          # table under an array of tables
    "[a.b.c.d.e]\n",                             # deeper than the subset
    # TOML, and in the subset, but not what the tables mean
    "[[controller.a]]\nvariant = 'vegas'\n[[controller.a]]\nvariant = 'vegas_a'\n",
    "[[host]]\ndefault = 'cubic'\n[[host]]\ndefault = 'reno'\n",
    "[[netns.x]]\ndefault = 'reno'\n", "[move]\nto = 'vk1'\n",
    "[[move]]\nto = 'vk1'\nfrom = []\n",         # no filter would be every connection
    "[netns.'a/b']\n",                          # no keys, and still not a namespace name
    "[host]\ndefault = \"a\\u2028b\"\n",          # refused in one line, as Python counts
    "[host]\ndefault = \"a\\u0085b\\u009bc\"\n",
]
INVALID = [
    "[host\n", "[host]]\n", "[[move]\n", "[host]\ndefault = 'vk1\n", "[host]\ndefault = vk1\n",
    "[host]\ndefault = 'a'\ndefault = 'b'\n", "[host]\n[host]\n", "[move]\n[[move]]\n",
    "[[move]]\n[move]\n", "[controller.x]\nalpha = 01\n", "[controller.x]\nalpha = 1__0\n",
    "[controller.x]\nalpha = 1.\n", "[controller.x]\nalpha = .5\n", "[controller.x]\nalpha = _1\n",
    "[host]\ndefault = 'a' 'b'\n", "[host]\ndefault = \"\\x\"\n", "[host]\n= 1\n",
    "[controller]\nx = 1\n[controller.x]\n", "[host]\ndefault = 'a\x01'\n", "x = 1\n[x]\n",
    "[host]\ndefault = \"\\ud800\"\n", "[host]\ndefault = 'cubic'\r",
]


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("text", VALID_OUTSIDE)
def test_toml_beyond_the_subset_or_the_tables_is_refused_in_one_line(tmp_path, text):
    tomllib.loads(text)
    assert refused(check(tmp_path, text)), text


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("text", INVALID)
def test_what_is_not_toml_is_refused_in_one_line(tmp_path, text):
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)
    assert refused(check(tmp_path, text)), text


@pytest.mark.reliability("bad_input")
def test_bytes_that_are_not_utf8_text_are_refused(tmp_path):
    for raw in (b"[host]\ndefault = '\xff'\n", b"# \xc3\x28\n", b"[host]\x00\n", b"\xed\xa0\x80"):
        reliability.case()
        assert refused(check(tmp_path, raw)), raw


@pytest.mark.reliability("bad_input")
@SETTINGS
@given(doc=document(), cut=st.integers(0, 400), junk=st.sampled_from(
    ["", "[", "]", "=", '"', "'", "\\", "\n[", "#", ".", ",", "{", "\x7f", "é"]))
def test_damaged_documents_are_read_right_or_refused(tmp_path_factory, doc, cut, junk):
    """A document cut and spliced anywhere: vegasctl refuses it in one line, or
    it is TOML and vegasctl reads what tomllib reads (or refuses it for what
    it declares: the cut may leave a controller without its variant)."""
    reliability.case()
    text = doc[0][:cut] + junk + doc[0][cut:]
    r = check(tmp_path_factory.mktemp("d"), text)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert refused(r), (text, r.returncode, r.stderr)
        return
    if r.returncode:
        assert refused(r), (text, r.stderr)
        return
    out = json.loads(r.stdout)
    assert {(d["netns"], d["cc"]) for d in out["defaults"]} == \
        ({("", parsed["host"]["default"])} if "default" in parsed.get("host", {}) else set()) | \
        {(ns, t["default"]) for ns, t in parsed.get("netns", {}).items() if "default" in t}, text
    assert {c["name"] for c in out["controllers"]} == set(parsed.get("controller", {})), text
    moves = parsed.get("move", [])
    assert [m["to"] for m in out["moves"]] == [m["to"] for m in moves], text
    for m, src in zip(out["moves"], moves):
        frm = src.get("from", [])
        assert m["from"] == ([frm] if isinstance(frm, str) else frm), text
        assert m["port"] == src.get("port", -1), text
    for c in out["controllers"]:
        src = parsed["controller"][c["name"]]
        assert c["variant"] == src["variant"], text
        assert c["unrestricted"] == (src.get("unrestricted") is True), text
        for k, v in src.items():
            if k in c["params"] and not isinstance(v, bool):
                assert float(c["params"][k]) == float(v) if isinstance(v, (int, float)) \
                    else c["params"][k] == v, (text, k)


def test_the_example_configuration_is_valid(tmp_path):
    example = paths.REPO / "tools" / "systemd" / "vegaskit.toml.example"
    r = check(tmp_path, example.read_text())
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [c["name"] for c in out["controllers"]] == ["vegas_a", "vegas_lowq"]
