"""Figures quoted by hand must be figures a command printed.

README.md and the scenarios' `[report] notes` quote results as `median [low, high]`,
copied from the generated reports. A rerun changes the reports and leaves such a copy
stale, silently. Every quoted interval must therefore be printed by a generated report
under results/, with the scenarios' own hand-written text cut out of the reports (notes,
the paper's notes, a diagnostic profile's text), so a note cannot vouch for itself. A
figure of an earlier run may instead cite the commit whose report printed it, "report at
<commit>" in its sentence (a note's "this report at <commit>": its own scenario's
report). A unit after the median ("202,548 bit/s [133,482, 290,368]") and a % or x on a
number are read past, as the tables print neither or all; an interval quoted in kbit/s
may be a bit/s one to the tables' three digits (254,817 [187,605, 302,402] as 255 kbit/s
[188, 302]). docs/DESIGN.md is exempt: its history quotes earlier runs on purpose.
"""
from __future__ import annotations

import functools
import re
import subprocess
import tomllib

from vegaskit import paths
from vegaskit.testbed.report import num

NUMBER = r"(?<![\d.,])-?\d[\d,]*(?:\.\d+)?[%x]?"
UNIT = r"(?: (bit/s|kbit/s|Mbit/s|Gbit/s|packets|pkts|ms|us|s|kB))?"
QUOTED = re.compile(rf"({NUMBER}){UNIT} \[({NUMBER}), ({NUMBER})\]")
CITED = re.compile(r"report at ([0-9a-f]{7,40})\b")
SCENARIOS = "netns-tests/scenarios"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _bare(x: str) -> str:
    return x.rstrip("%x")


def quoted(text: str, kbit_only: bool = False) -> list[str]:
    """Every `median [low, high]` in text, line breaks read as spaces, units and % or x
    dropped; kbit_only: only those quoted in kbit/s."""
    return [f"{_bare(m)} [{_bare(lo)}, {_bare(hi)}]"
            for m, unit, lo, hi in QUOTED.findall(_flat(text))
            if not kbit_only or unit == "kbit/s"]


def in_kbit(figure: str) -> str | None:
    """A bit/s interval to the tables' three digits in kbit/s, or None if not one."""
    m, _, lo, hi = QUOTED.fullmatch(figure).groups()
    values = [float(x.replace(",", "")) for x in (m, lo, hi)]
    if min(values) < 1000:
        return None
    return "{} [{}, {}]".format(*(num(v / 1000) for v in values))


def hand_texts(docs: list[str]) -> list[str]:
    """The hand-written text of scenario files: every string of 60 characters or more
    (notes, the paper's notes, a diagnostic profile's text), flattened."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str) and len(x) >= 60:
            out.append(_flat(x))
    for d in docs:
        walk(tomllib.loads(d))
    return sorted(out, key=len, reverse=True)


Printed = dict[str, tuple[set[str], set[str]]]


def printed_in(reports: dict[str, str], scenarios: list[str]) -> Printed:
    """Report path -> (the intervals it prints, the kbit/s forms of its bit/s ones), the
    scenarios' hand-written text cut out."""
    hand = hand_texts(scenarios)
    out = {}
    for path, text in reports.items():
        flat = _flat(text)
        for h in hand:
            flat = flat.replace(h, " ")
        found = set(quoted(flat))
        out[path] = (found, {k for f in found if (k := in_kbit(f))})
    return out


def printed() -> Printed:
    """What the project's commands wrote, report by report (paths from the checkout)."""
    return printed_in({str(p.relative_to(paths.REPO)): p.read_text()
                       for p in sorted(paths.RESULTS.rglob("*.md"))},
                      [p.read_text() for p in sorted(paths.SCENARIOS.rglob("*.toml"))])


@functools.cache
def printed_at(commit: str) -> Printed:
    """printed() of the tree as committed at commit."""
    def git(*args, stdin=None) -> bytes:
        r = subprocess.run(["git", "-C", str(paths.REPO), *args], input=stdin,
                           capture_output=True)
        assert r.returncode == 0, f"git {' '.join(args)}: {r.stderr.decode().strip()}"
        return r.stdout
    names = git("ls-tree", "-r", "--name-only", commit, "--", "results", SCENARIOS).decode()
    wanted = [n for n in names.split() if n.endswith((".md", ".toml"))]
    batch = git("cat-file", "--batch", stdin="".join(f"{commit}:{n}\n" for n in wanted).encode())
    files, at = {}, 0
    for name in wanted:                 # "<sha> blob <size>\n<content>\n" each
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        files[name] = batch[header_end + 1:header_end + 1 + size].decode()
        at = header_end + 1 + size + 1
    return printed_in({n: t for n, t in files.items() if n.endswith(".md")},
                      [t for n, t in files.items() if n.endswith(".toml")])


def sentences(text: str) -> list[str]:
    """Paragraphs, list items and table rows, each cut at its sentences' ends (". " before
    a capital, a parenthesis or a quote: "Fig. 4" and "e.g. the" stay whole)."""
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:\||[-*] |\d+\. ))", text)
    return [s for b in blocks for s in re.split(r"(?<=\.) (?=[A-Z(`*\"])", _flat(b))]


def _has(reports: Printed, figure: str, kbit: bool, under: str = "") -> bool:
    return any(figure in plain or (kbit and figure in kbits)
               for path, (plain, kbits) in reports.items() if path.startswith(under))


def unprinted(text: str, now: Printed, own: str = "") -> list[str]:
    """The figures of text that no report prints now, nor the report its sentence cites
    (own: the folder under results/ whose report a note's citation means; README's may
    cite any)."""
    out = []
    for sentence in sentences(text):
        kbit = set(quoted(sentence, kbit_only=True))
        cited = CITED.findall(sentence)
        out += [q for q in quoted(sentence) if not _has(now, q, q in kbit)
                and not any(_has(printed_at(c), q, q in kbit, own) for c in cited)]
    return out


README = paths.REPO / "README.md"


def test_quoted_reads_intervals_across_lines_with_their_units():
    text = ("ratio 0.44 [0.369,\n0.73] and 1,2 [3, 4]; 5 [6] no; 144,100 bit/s [116,020, "
            "168,051]; 2 [hm, 3]; 0.77% [0.59%, 0.92%]; 4.81x [3.89, 7.50]; 73 us [49, 131]; "
            "a.1 [2, 3]; 255 kbit/s [188, 302]")
    assert quoted(text) == ["0.44 [0.369, 0.73]", "1,2 [3, 4]", "144,100 [116,020, 168,051]",
                            "0.77 [0.59, 0.92]", "4.81 [3.89, 7.50]", "73 [49, 131]",
                            "255 [188, 302]"]
    assert quoted(text, kbit_only=True) == ["255 [188, 302]"]
    assert len(quoted(README.read_text())) > 90      # a broken pattern cannot pass as clean


def test_a_bit_rate_may_be_quoted_in_kbit_and_only_so():
    now = printed_in({"r.md": "| 254,817 [187,605, 302,402] (6) | 0.5 [0.4, 0.6] (6) |"}, [])
    assert now == {"r.md": ({"254,817 [187,605, 302,402]", "0.5 [0.4, 0.6]"},
                            {"255 [188, 302]"})}
    assert unprinted("It got 255 kbit/s [188, 302]. A 0.5 [0.4, 0.6].", now) == []
    assert unprinted("It queued 255 packets [188, 302].", now) == ["255 [188, 302]"]


def test_the_scenarios_own_text_vouches_for_nothing():
    """A figure a report holds only in the text a scenario file gave it does not count."""
    note = "x" * 70 + " 3 [2, 4]"
    scenario = f'title = "t"\n[report]\nnotes = """\n{note}\n"""\n'
    now = printed_in({"s/report.md": f"| a | 1 [0, 2] (6) |\n\n## Why\n\n{note}\n"},
                     [scenario])
    assert now == {"s/report.md": ({"1 [0, 2]"}, set())}


def test_sentences_end_at_full_stops_rows_and_items():
    text = "A 1 [0, 2] (Fig. 4, e.g. the x). B 2 [1, 3].\n| row 5 [4, 6] |\n- item\n\nC"
    assert sentences(text) == ["A 1 [0, 2] (Fig. 4, e.g. the x).", "B 2 [1, 3].",
                               "| row 5 [4, 6] |", "- item", "C"]


def test_a_cited_earlier_report_vouches_only_for_what_it_printed():
    """At 533c3d60 results/vegas_plus/report.md printed bpf_vegas against reno at 100M20
    as 0.0798 [0.0754, 0.085], never 0.0798 [0.0754, 0.086]; a sentence that cites no
    commit is held to today's reports, and a note's citation to its own scenario's."""
    text = ("Once 0.0798 [0.0754, 0.085] (the report at 533c3d60). "
            "Once 0.0798 [0.0754, 0.086] (the report at 533c3d60). Now 0.0798 [0.0754, 0.085].")
    assert unprinted(text, {}) == ["0.0798 [0.0754, 0.086]", "0.0798 [0.0754, 0.085]"]
    assert unprinted(text.split(". ")[0], {}, own="results/mixed_3v3/") == [
        "0.0798 [0.0754, 0.085]"]


def test_readme_quotes_only_printed_figures():
    missing = unprinted(README.read_text(), printed())
    assert not missing, f"README.md quotes figures no report prints: {missing}"


def test_scenario_notes_quote_only_printed_figures():
    from vegaskit.testbed.scenario import Scenario
    now = printed()
    missing = {}
    for f in sorted(paths.SCENARIOS.rglob("*.toml")):
        notes = tomllib.loads(f.read_text()).get("report", {}).get("notes", "")
        own = f"results/{Scenario.load(f).name}/" if f.parent == paths.SCENARIOS else ""
        if bad := unprinted(notes, now, own):
            missing[str(f.relative_to(paths.SCENARIOS))] = bad
    assert not missing, f"scenario notes quote figures no report prints: {missing}"


def test_reports_carry_their_scenarios_notes_as_they_stand():
    """A note edited without rerendering its report would leave the report's old copy,
    which no cut removes, vouching for the old figures: each report of a profile that
    prints notes holds the scenario's notes as they stand (`make results` or
    `--rerender` writes them)."""
    from vegaskit.testbed.scenario import Scenario
    stale = []
    for f in sorted(paths.SCENARIOS.rglob("*.toml")):
        notes = tomllib.loads(f.read_text()).get("report", {}).get("notes", "").strip()
        if not notes:
            continue
        if f.parent != paths.SCENARIOS:             # native_ab's: one report for both
            reports = [paths.RESULTS / "native-ab" / "report.md"]
        else:
            s = Scenario.load(f)
            reports = [paths.RESULTS / s.name / prof / "report.md" for prof, doc in
                       s.doc["profiles"].items() if "diagnostic" not in doc]
        stale += [str(r.relative_to(paths.REPO)) for r in reports
                  if r.exists() and _flat(notes) not in _flat(r.read_text())]
    assert not stale, f"reports not rerendered since their scenario's notes changed: {stale}"


def test_num_prints_three_digits_or_whole_thousands():
    """The reports' numbers, which quotes copy: never 1e+03 for 999.5 to 999.99."""
    assert [num(v) for v in (0.12345, 12.345, 999.4, 999.5, 999.99, 1000, 254817.4)] == [
        "0.123", "12.3", "999", "1,000", "1,000", "1,000", "254,817"]
