"""vegasctl: load, unload, set, show, list, and every refusal leaving the system unchanged."""
import contextlib
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from conftest import PIN_ROOT, available_cc, loaded, vegasctl, vegasctl_json
from vegaskit import intf
from vegaskit.bench.bpfstats import ops_programs
from vegaskit.testing import reliability

pytestmark = pytest.mark.kernel
ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def snapshot():
    """What a refused command must not change: registrations and our pins."""
    pins = sorted(os.path.relpath(os.path.join(d, f), PIN_ROOT)
                  for d, _, fs in os.walk(PIN_ROOT) for f in fs) if PIN_ROOT.exists() else []
    params = {i["name"]: i["params"] for i in vegasctl_json("list")["instances"]}
    return available_cc(), pins, params


def refused(*args, user=None, wrap=None, expect=""):
    """Run a command that must fail: one stderr line, non-zero exit, nothing changed."""
    reliability.case()
    before = snapshot()
    r = vegasctl(*args, check=False, user=user, wrap=wrap)
    assert r.returncode != 0, f"{args} succeeded: {r.stdout}"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vegasctl: "), r.stderr
    assert expect in lines[0], lines[0]
    assert r.stdout == ""
    assert snapshot() == before
    return lines[0]


def test_load_registers_and_outlives_the_command_then_unload_removes_all(kernel_features):
    # the registration: a pinned link, or where the kernel has none the map itself
    how = "link" if kernel_features["struct_ops_link"] else "map"
    vegasctl("load", "vegas")
    try:
        assert "bpf_vegas" in available_cc()
        assert (PIN_ROOT / "cc" / "bpf_vegas" / {"link": "link", "map": "ops"}[how]).exists()
        inst = vegasctl_json("show", "bpf_vegas")
        assert inst["state"] == "registered" and inst["variant"] == "vegas"
        assert inst["registration"] == how
        assert inst["params"] == {"alpha": 2, "beta": 4, "gamma": 1, "ss_every_other_rtt": 0,
                                  "loss_cut": "1/2", "semantics": "exact", "keep_base_rtt": 1,
                                  "idle_relearn": 1, "calls": 2}
        assert inst["restricted"] is True
    finally:
        vegasctl("unload", "bpf_vegas")
    assert "bpf_vegas" not in available_cc()
    assert not PIN_ROOT.exists()


def test_two_instances_with_different_names_and_parameters():
    with loaded("vegas", "--name", "vk_a", "--preset", "brakmo") as a, \
         loaded("vegas", "--name", "vk.b", "--alpha", "5", "beta=9") as b:
        cc = available_cc()
        assert a in cc and b in cc
        listed = {i["name"]: i for i in vegasctl_json("list")["instances"]}
        assert listed[a]["params"]["alpha"] == 1 and listed[a]["params"]["beta"] == 3
        assert listed[b]["params"]["alpha"] == 5 and listed[b]["params"]["beta"] == 9
        assert vegasctl_json("show", a)["map_id"] != vegasctl_json("show", b)["map_id"]


def test_presets_and_options():
    with loaded("vegas", "--preset", "original") as name:
        p = vegasctl_json("show", name)["params"]
        assert p == {"alpha": 1, "beta": 3, "gamma": 1, "ss_every_other_rtt": 1, "loss_cut": "1/4",
                     "semantics": "exact", "keep_base_rtt": 1, "idle_relearn": 1, "calls": 2}
    with loaded("vegas", "--preset", "ns2") as name:
        p = vegasctl_json("show", name)["params"]
        assert (p["alpha"], p["beta"], p["semantics"]) == (1, 3, "paper")
    for variant in ("vegas_a", "pipe", "vegas_fr"):    # the papers' own: their arithmetic
        with loaded(variant) as name:
            assert vegasctl_json("show", name)["params"]["semantics"] == "paper"
    with loaded("vegas", "--preset", "samios", "--unrestricted") as name:
        inst = vegasctl_json("show", name)
        assert (inst["params"]["alpha"], inst["params"]["beta"]) == (6, 6)
        assert inst["restricted"] is False


def test_set_changes_live_parameters_and_show_reports_them():
    with loaded("vegas") as name:
        r = vegasctl("set", name, "alpha=3", "beta=6")
        assert "alpha=3 beta=6" in r.stdout
        inst = vegasctl_json("show", name)
        assert (inst["params"]["alpha"], inst["params"]["beta"]) == (3, 6)
        assert inst["generation"] == 1


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", [
    (["alpha=7"], "must not exceed beta"),            # 7 > beta 4
    (["alpha=3", "beta=2"], "must not exceed beta"),
    (["alpha=-1"], "not a non-negative integer"),
    (["beta=four"], "not a non-negative integer"),
    (["gamma="], "not a non-negative integer"),
    (["delta=1"], "unknown parameter"),
    (["alpha"], "expected key=value"),
    (["loss_cut=1/3"], "1/2 or 1/4"),
    (["ss_every_other_rtt=2"], "0 or 1"),
    (["alpha=0x0.8"], "not a non-negative integer"),
    (["alpha=" + "1" * 171], "not a non-negative integer"),     # not truncated to another value
    (["alpha=3", "alpha=2"], "given twice"),                    # not "the last one wins"
    (["beta=5", "--beta", "6"], "unknown option"),
    (["semantics=ns2"], "must be exact or paper"),
    (["semantics="], "must be exact or paper"),
    (["half_packet=1"], "unknown parameter 'half_packet' for variant vegas"),
    (["calls=1"], "calls is fixed when the controller is registered: give calls=1 to load --replace"),
])
def test_invalid_set_changes_nothing(args, expect):
    with loaded("vegas") as name:
        refused("set", name, *args, expect=expect)
        assert vegasctl_json("show", name)["generation"] == 0


BAD_LOADS = [
    (["reno"], "unknown variant"),
    (["vegas", "--preset", "fast"], "unknown preset"),
    (["vegas", "alpha=5", "beta=3"], "must not exceed beta"),
    (["vegas", "--alpha", "-2"], "not a non-negative integer"),
    (["vegas", "gamma=1.5"], "not a non-negative integer"),
    (["vegas", "--name", "a_name_far_too_long"], "1 to 15 characters"),
    (["vegas", "--name", "bad/name"], "may contain only"),
    (["vegas", "--name", "bad name"], "may contain only"),
    (["vegas", "--name", "cubic"], "already registered"),
    (["vegas", "--name", "x1", "--name", "x2"], "--name is given twice"),
    (["vegas", "--preset", "linux", "--preset", "brakmo"], "--preset is given twice"),
    (["vegas", "alpha=1", "--alpha", "2"], "given twice"),
    (["vegas_fr", "ref_bytes=4294967295"], "at most 16777216"),   # cwnd would grow by 1.5M an RTT
    (["vegas_fr", "half_packet=2"], "0 or 1"),
    (["vegas_a", "semantics=PAPER"], "must be exact or paper"),
    (["vegas_a", "th_tie=1.5"], "th_tie: '1.5' must be a number in [0, 1]"),
    (["pipe", "th_tie= 0.5"], "must be a number in [0, 1]"),        # strtod would skip the blank
    (["pipe", "th_tie=-0"], "must be a number in [0, 1]"),
    (["vegas", "th_tie=0.5"], "unknown parameter 'th_tie' for variant vegas"),
    (["vegas_fr", "gain=1e-1"], "must be a number in (0, 1]"),      # digits and one point only
    (["vegas_fr", "gain=0x0.8"], "must be a number in (0, 1]"),
    # kv[160] cut these to "alpha=000...0": they loaded alpha=0
    (["vegas", "alpha=" + "0" * 170 + "x"], "not a non-negative integer"),
    (["vegas", "--alpha", "0" * 170 + "x"], "not a non-negative integer"),
    (["vegas", "alpha" * 40 + "=1"], "unknown parameter 'alphaalpha"),
    # rounded silently to 0.001 and 0.123 before
    (["vegas_fr", "gain=0.0005"], "gain: '0.0005' is finer than the resolution 0.001"),
    (["vegas_a", "th_tie=0.1234"], "th_tie: '0.1234' is finer than the resolution 0.001"),
    (["vegas_fr", "gain=."], "must be a number in (0, 1]"),
    (["vegas_plus", "compete_ss=3"], "compete_ss must be 0, 1 or 2 (got 3)"),
    (["vegas", "compete_ss=2"], "unknown parameter 'compete_ss' for variant vegas"),
    (["vegas_plus", "rate_epoch=7"], "rate_epoch must be 8 to 4096 rounds (got 7)"),
    (["vegas_plus", "rate_epoch=4097"], "rate_epoch must be 8 to 4096 rounds (got 4097)"),
    (["vegas_a", "rate_epoch=64"], "unknown parameter 'rate_epoch' for variant vegas_a"),
    (["vegas_plus", "rise=1001"], "rise must be 0 (off) to 1000 percent (got 1001)"),
    (["vegas_a", "rise=25"], "unknown parameter 'rise' for variant vegas_a"),
    (["vegas", "calls=3"], "calls must be 1 or 2 (got 3)"),
    (["vegas_fr", "calls=0"], "calls must be 1 or 2 (got 0)"),
]


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", BAD_LOADS)
def test_bad_load_is_refused(args, expect):
    refused("load", *args, expect=expect)


@pytest.mark.reliability("bad_input")
def test_long_parameter_values_are_read_whole():
    # a value past the old kv[160] is judged whole, not cut: 0...03 is 3
    for args in (["alpha=" + "0" * 170 + "3"], ["--alpha", "0" * 170 + "3"]):
        with loaded("vegas", *args) as name:
            assert vegasctl_json("show", name)["params"]["alpha"] == 3


def test_reals_at_their_resolution_are_taken():
    with loaded("vegas_fr", "gain=0.2500") as name:      # trailing zeros are not finer
        assert vegasctl_json("show", name)["params"]["gain"] == 0.25
    with loaded("vegas_a", "th_tie=.125") as name:
        assert vegasctl_json("show", name)["params"]["th_tie"] == 0.125


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args", [["unload", "bpf_vegas"], ["set", "bpf_vegas", "alpha=1"],
                                  ["export"], ["metrics"]])
def test_json_is_refused_where_the_output_has_one_form(args):
    """--json, before the command or among its options, is never silently ignored."""
    refused("--json", *args, expect=f"{args[0]}: --json does not apply")
    refused(*args, "--json", expect=f"{args[0]}: --json does not apply")


@pytest.mark.reliability("bad_input")
def test_duplicate_and_unknown_names():
    with loaded("vegas") as name:
        refused("load", "vegas", expect="already registered")
        refused("load", "vegas", "--name", name, expect="already registered")
    refused("unload", "bpf_vegas", expect="no controller named")
    refused("set", "nosuch", "alpha=1", expect="no controller named")
    refused("show", "nosuch", expect="no controller named")


@pytest.mark.reliability("bad_input")
def test_not_root():
    refused("load", "vegas", user=65534, expect="must be run as root")
    refused("list", user=65534, expect="must be run as root")


@pytest.mark.reliability("bad_input")
def test_no_bpffs():
    # A private mount namespace where /sys/fs/bpf is not mounted (host untouched).
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'umount -l /sys/fs/bpf 2>/dev/null; exec "$@"', "sh"]
    refused("load", "vegas", wrap=wrap, expect="mount -t bpf bpf /sys/fs/bpf")


def tiny_btf(path):
    """A valid raw BTF blob holding one 'int' and nothing else: no struct_ops."""
    strings = b"\0int\0"
    int_type = struct.pack("<III", 1, 1 << 24, 4) + struct.pack("<I", 32)   # BTF_KIND_INT
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(int_type), len(int_type),
                      len(strings))
    path.write_bytes(hdr + int_type + strings)


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("content,expect", [
    (None, "CONFIG_DEBUG_INFO_BTF"),                 # BTF file unreadable as BTF
    ("tiny", "cannot run BPF TCP congestion control"),  # BTF without struct_ops
])
def test_no_btf_or_no_struct_ops(tmp_path, content, expect):
    fake = tmp_path / "vmlinux"
    if content:
        tiny_btf(fake)
    else:
        fake.write_bytes(b"")
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            f'mount --bind {fake} /sys/kernel/btf/vmlinux && exec "$@"', "sh"]
    refused("load", "vegas", wrap=wrap, expect=expect)


def test_list_json_describes_variants():
    doc = vegasctl_json("list")
    vegas = next(v for v in doc["variants"] if v["variant"] == "vegas")
    assert vegas["default_name"] == "bpf_vegas"
    assert vegas["defaults"]["alpha"] == 2 and vegas["defaults"]["beta"] == 4
    assert set(vegas["presets"]) >= {"linux", "brakmo", "samios"}
    assert doc["instances"] == []


@pytest.mark.reliability("bad_input")
def test_usage_errors_exit_2():
    reliability.case(2)
    r = vegasctl("frobnicate", check=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = vegasctl(check=False)
    assert r.returncode == 2


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", [
    (["swap", "bpf_vegas", "extra"], "swap: unexpected argument 'extra'"),   # was "unknown option"
    (["trace", "extra"], "trace: unexpected argument 'extra'"),
    (["flows", "extra"], "flows: unexpected argument 'extra'"),
    (["features", "extra"], "features: unexpected argument 'extra'"),
    (["list", "extra"], "list: unexpected argument 'extra'"),
    (["show", "bpf_vegas", "extra"], "show: unexpected argument 'extra'"),
    (["unload", "bpf_vegas", "extra"], "unload: unexpected argument 'extra'"),
    (["load", "vegas", "--frob"], "load: --frob needs a value"),           # named no option
    # abbreviations are refused: getopt_long took --repl as --replace
    (["load", "vegas", "--repl"], "load: '--repl' is short for --replace: spell it out"),
    (["load", "vegas", "--unres"], "'--unres' is short for --unrestricted"),
    (["load", "vegas", "--gam", "2"], "'--gam' is short for --gamma"),
    (["load", "vegas", "--na=x"], "'--na' is short for --name"),
    (["flows", "--contr", "bpf_vegas"], "'--contr' is short for --controller"),
    (["trace", "--dur", "1"], "'--dur' is short for --duration"),
    (["swap", "reno", "--default-o"], "'--default-o' is short for --default-only"),
    (["--jso", "list"], "'--jso' is short for --json"),
    (["list", "--verb"], "'--verb' is short for --verbose"),
])
def test_usage_messages_name_what_is_wrong(args, expect):
    with loaded("vegas"):
        line = refused(*args, expect=expect)
        assert line.endswith("(see: vegasctl --help)")
    assert vegasctl(*args, check=False).returncode == 2


COMMANDS = [
    "list", "load", "unload", "set", "show", "flows", "trace", "swap", "features",
    "apply", "export", "metrics", "reset",
]


@pytest.mark.parametrize("flag", ["-h", "--help"])
@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_command_answers_help(cmd, flag):
    r = vegasctl(cmd, flag, check=False)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(f"usage: vegasctl {cmd}"), r.stdout


def test_top_level_help_lists_every_command():
    r = vegasctl("--help")
    assert (r.returncode, r.stderr) == (0, "")
    synopses = [line.split()[0] for line in r.stdout.splitlines()[1:] if line.startswith("  ") and
                not line.startswith("   ")]
    assert synopses == COMMANDS


@pytest.mark.reliability("bad_input")
def test_trace_csv_and_json_exclude_each_other():
    for args in (["--json", "trace", "--csv"], ["trace", "--csv", "--json"],
                 ["trace", "--json", "--csv", "--duration", "1"]):
        reliability.case()
        r = vegasctl(*args, check=False)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr == ("vegasctl: trace: --csv and --json exclude each other "
                            "(see: vegasctl --help)\n")
    assert "--csv" in vegasctl("trace", "--help").stdout


def test_trace_csv_always_has_its_header():
    header = "time_s,type,netns,saddr,sport,daddr,dport,ca,state,cwnd,"
    with loaded("vegas", "--name", "vk_csv") as name:
        for args in ([], ["--csv"], ["--decisions", "--csv"]):
            r = vegasctl("trace", "--controller", name, "--duration", "0.2", *args)
            assert r.stdout.startswith(header), (args, r.stdout)
            assert r.stderr == "vegasctl: 0 records, 0 lost\n"
        r = vegasctl("trace", "--controller", name, "--duration", "0.2", "--json")
        assert r.stdout == "" and r.stderr == "vegasctl: 0 records, 0 lost\n"


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", [
    (["trace", "--count", "0.5"], "whole number of records"),      # ran forever
    (["trace", "--count", "1e3"], "whole number of records"),
    (["trace", "--count", "2", "--count", "3"], "given twice"),
    (["trace", "--duration", "nan"], "--duration must be seconds"),
    (["trace", "--duration", "inf"], "--duration must be seconds"),
    (["trace", "--duration", "0x10"], "--duration must be seconds"),    # strtod took these
    (["trace", "--duration", " 5"], "--duration must be seconds"),
    (["trace", "--duration", "+5"], "--duration must be seconds"),
    (["trace", "--duration", "1e1"], "--duration must be seconds"),
    (["trace", "--duration", "5 "], "--duration must be seconds"),
    (["trace", "--port", " +80"], "not a port number"),
    (["trace", "--port", "80", "--port", "81"], "given twice"),
    (["trace", "-L", "65536"], "not a port number"),
    (["trace", "--controller", "bpf_vegas", "--controller", "bpf_vegas"], "given twice"),
    (["flows", "--netns", "-1"], "no network namespace '-1'"),
    (["flows", "--netns", "0"], "not a namespace inode number"),
    (["flows", "--netns", "99999999999"], "not a namespace inode number"),
    (["flows", "--netns", "1", "--netns", "2"], "given twice"),
    (["flows", "--addr", "198.18.1.1", "--addr", "198.18.1.2"], "given twice"),
    (["flows", "--via", "tcp", "--via", "sk_storage"], "--via is given twice"),   # last won
    (["swap", "reno", "--netns", "a", "--netns", "b"], "--netns is given twice"),
    (["trace", "--decisions", "--acks"], "--decisions and --acks exclude each other"),
    (["trace", "--cost", "--acks"], "give it without --decisions and --acks"),
    (["trace", "--decisions", "--cost"], "give it without --decisions and --acks"),
    (["trace", "--cost", "--count", "5"], "--count counts records, and --cost prints none"),
    (["trace", "--cost", "--csv"], "--cost prints a line per controller, not CSV"),
    (["flows", "--netns", "n" * 300], "longer than 255 characters"),   # cut to another path
    (["swap", "bpf_vegas", "--netns", "n" * 300], "longer than 255 characters"),
])
def test_bad_option_values_are_refused(args, expect):
    with loaded("vegas"):
        refused(*args, expect=expect)


@contextlib.contextmanager
def incomplete(*names):
    """Instance directories as an interrupted load leaves them (cc/NAME, no link
    pinned): `list` calls them incomplete. Needs the pin tree (something loaded)."""
    made = []
    try:
        for n in names:
            d = PIN_ROOT / "cc" / n.replace(".", intf.PIN_DOT)
            d.mkdir(mode=0o700)
            made.append(d)
        yield names
    finally:
        for d in made:
            d.rmdir()


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", [
    (["trace", "--controller", ""], "name '' must be 1 to 15 characters"),
    (["trace", "--controller", "a" * 16], "must be 1 to 15 characters"),
    (["trace", "--controller", "bad/name"], "may contain only"),
    (["flows", "--controller", ""], "name '' must be 1 to 15 characters"),
    (["swap", "bpf_vegas", "--from", ""], "name '' must be 1 to 15 characters"),
    (["swap", ""], "name '' must be 1 to 15 characters"),
    (["show", ""], "name '' must be 1 to 15 characters"),
    (["unload", ""], "name '' must be 1 to 15 characters"),
    (["set", "", "alpha=1"], "name '' must be 1 to 15 characters"),
    (["trace", "--controller", "vk_inc", "--duration", "0.2"], "'vk_inc' is incomplete"),
])
def test_every_name_is_checked_and_every_refusal_says_why(args, expect):
    # trace --controller "" read the cc/ directory itself as an instance and
    # then printed an uninitialised buffer; an incomplete one did the same
    with loaded("vegas"), incomplete("vk_inc"):
        line = refused(*args, expect=expect)
        assert line.isprintable() and len(line) > len("vegasctl: ") + 10


@pytest.mark.reliability("bad_input")
def test_trace_of_only_incomplete_instances_says_so():
    reliability.case()
    with loaded("vegas") as name:
        with incomplete("vk_inc"):
            vegasctl("unload", name)            # leaves vk_inc alone in the tree
            try:
                r = vegasctl("trace", "--duration", "0.2", check=False)
                assert r.returncode == 1 and r.stdout == ""
                assert r.stderr.startswith("vegasctl: no loaded vegaskit controller can be "
                                           "traced ('vk_inc' is incomplete"), r.stderr
            finally:
                vegasctl("load", "vegas")       # loaded() unloads it again


def test_dry_run_of_a_good_spec_changes_nothing_and_says_what_it_would_load():
    for present in (False, True):      # the pin tree absent, then present
        with contextlib.ExitStack() as stack:
            if present:
                stack.enter_context(loaded("vegas", "--name", "vk_other"))
            before = snapshot()
            tree = PIN_ROOT.exists()
            r = vegasctl("load", "vegas_a", "--name", "vk_dry", "--preset", "paper", "alpha=2",
                         "--unrestricted", "--dry-run")
            assert r.stdout.startswith("would load vk_dry (vegas_a, unrestricted): alpha=2 beta=3")
            assert r.stderr == ""
            doc = vegasctl_json("load", "vegas", "--name", "vk_dry", "--dry-run", "beta=9")
            assert doc["dry_run"] is True and doc["action"] == "load"
            assert doc["restricted"] is True and doc["params"]["beta"] == 9
            assert snapshot() == before and PIN_ROOT.exists() == tree
            assert "vk_dry" not in available_cc()


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("args,expect", BAD_LOADS)
def test_dry_run_refuses_exactly_as_the_load_would(args, expect):
    real = refused("load", *args, expect=expect)
    assert refused("load", *args, "--dry-run", expect=expect) == real


@pytest.mark.reliability("bad_input")
def test_dry_run_knows_whether_the_name_is_free(kernel_features):
    with loaded("vegas", "--name", "vk_taken") as name, incomplete("vk_inc"):
        for args in (["--name", name], ["--name", "vk_inc"], ["--name", "vk_inc", "--replace"],
                     ["--name", "cubic", "--replace"]):
            real = refused("load", "vegas", *args)
            assert refused("load", "vegas", *args, "--dry-run") == real
        replace = ["load", "vegas", "--name", name, "--replace", "alpha=3"]
        if kernel_features["link_update"]:
            r = vegasctl(*replace, "--dry-run")
            assert r.stdout.startswith(f"would replace {name} (vegas, restricted): alpha=3")
        else:
            # before struct_ops links (Linux 6.1) a replace cannot be done in place, and
            # the dry run says so exactly as the load does (make vm-test found it)
            real = refused(*replace, expect="cannot replace")
            assert refused(*replace, "--dry-run") == real
        assert vegasctl_json("show", name)["params"]["alpha"] == 2


@pytest.mark.needs_kernel("link_update")
def test_replace_keeps_an_unrestricted_controller_unrestricted():
    # --replace without --unrestricted made it restricted: a namespace's
    # default on it would then refuse new sockets (the allowed list lost it)
    with loaded("vegas", "--name", "vk_unr", "--unrestricted") as name:
        doc = vegasctl_json("load", "vegas", "--name", name, "--replace", "--dry-run")
        assert doc["action"] == "replace" and doc["restricted"] is False
        vegasctl("load", "vegas", "--name", name, "--replace", "alpha=3")
        inst = vegasctl_json("show", name)
        assert inst["restricted"] is False and inst["params"]["alpha"] == 3
        assert name in ALLOWED.read_text().split()
    with loaded("vegas", "--name", "vk_res") as name:
        vegasctl("load", "vegas", "--name", name, "--replace")
        assert vegasctl_json("show", name)["restricted"] is True
        assert name not in ALLOWED.read_text().split()
        vegasctl("load", "vegas", "--name", name, "--replace", "--unrestricted")
        assert vegasctl_json("show", name)["restricted"] is False
        assert name in ALLOWED.read_text().split()


@pytest.mark.needs_kernel("link_update")
def test_replace_keeps_the_instance_s_trace_ring_and_counters():
    # a reader of the instance holds its ring open across an upgrade, and old
    # sockets keep writing into it: the new code must write the same one
    # (docs/DESIGN.md §5.1); the counters likewise stay monotonic
    def pinned_ids(name: str) -> dict[str, int]:
        return {leaf: json.loads(subprocess.run(
            ["bpftool", "-j", "map", "show", "pinned", str(PIN_ROOT / "cc" / name / leaf)],
            capture_output=True, text=True, check=True).stdout)["id"]
            for leaf in ("events", "stats")}

    with loaded("vegas", "--name", "vk_ring") as name:
        before = pinned_ids(name)
        vegasctl("load", "vegas", "--name", name, "--replace", "alpha=3")
        assert vegasctl_json("show", name)["params"]["alpha"] == 3
        assert pinned_ids(name) == before


def test_the_last_unload_removes_the_shared_ring_an_older_vegasctl_pinned():
    # before each instance had its own ring, one pinned as shared/vk_events served all:
    # an upgrade that unloads the older version's last instance must not leave it
    with loaded("vegas", "--name", "vk_oldring") as name:
        old = PIN_ROOT / "shared" / "vk_events"
        subprocess.run(["bpftool", "map", "create", str(old), "type", "ringbuf", "key", "0",
                        "value", "0", "entries", "4096", "name", "vk_events"], check=True,
                       capture_output=True)
        assert old.exists()
        vegasctl("unload", name)
    assert not PIN_ROOT.exists()


def test_list_and_trace_see_more_than_256_instances():
    # 300 directories as interrupted loads leave them (no link pinned), not
    # 300 loads: every one must be listed, and trace must enumerate past them
    fakes = [f"vk_f{i:03d}" for i in range(300)]
    with loaded("vegas", "--name", "vk_real") as name, incomplete(*fakes):
        listed = {i["name"]: i["state"] for i in vegasctl_json("list")["instances"]}
        assert listed == {name: "registered", **{f: "incomplete" for f in fakes}}
        text = vegasctl("list").stdout
        assert sum(" incomplete " in line for line in text.splitlines()) == 300
        r = vegasctl("trace", "--duration", "0.2")       # the one real one, past 300 others
        assert r.stderr == "vegasctl: 0 records, 0 lost\n"
        refused("trace", "--controller", fakes[-1], "--duration", "0.2", expect="is incomplete")
        st = PIN_ROOT.stat()
        assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o700)
    assert not PIN_ROOT.exists()


@pytest.mark.needs_kernel("cong_control_ack")
@pytest.mark.parametrize("variant", ["vegas", "vegas_plus"])
def test_calls_picks_the_ops_the_kernel_calls_per_ack_and_replace_changes_it(variant):
    """calls=2 registers pkts_acked and cong_avoid, calls=1 cong_control in their
    place (docs/DESIGN.md §3.12)."""
    two = {"pkts_acked", "cong_avoid"}
    with loaded(variant, "--name", "vk_calls") as name:
        ops = set(ops_programs(name))
        assert two <= ops and "cong_control" not in ops, ops
        vegasctl("load", variant, "--name", name, "--replace", "calls=1")
        ops = set(ops_programs(name))
        assert "cong_control" in ops and not (two & ops), ops
        assert vegasctl_json("show", name)["params"]["calls"] == 1


def test_one_call_follows_the_running_kernel(kernel_features):
    """On the kernel itself, nothing simulated: where the probe finds cong_control's
    four-argument form (Linux >= 6.10) calls=1 registers cong_control; where it does
    not, the load is refused in one line and nothing changes. `make vm-test` runs this
    on 6.1, which lacks the form, and on 6.12, which has it."""
    if kernel_features["cong_control_ack"]:
        with loaded("vegas", "--name", "vk_calls1", "calls=1") as name:
            assert "cong_control" in set(ops_programs(name))
    else:
        refused("load", "vegas", "--name", "vk_calls1", "calls=1",
                expect="calls=1 needs cong_control with the ACK's flags (Linux >= 6.10)")


@pytest.mark.reliability("bad_input")
def test_one_call_is_refused_where_the_kernel_lacks_its_form():
    refused("load", "vegas", "calls=1", wrap=["env", "VEGASCTL_REFUSE=cong_control_ack"],
            expect="calls=1 needs cong_control with the ACK's flags (Linux >= 6.10)")


@pytest.mark.reliability("bad_input")
def test_a_shared_map_of_another_layout_is_named_not_blamed_on_the_kernel():
    """Instances of another vegaskit version can hold the shared pins with another
    layout (a rule added lengthens struct vk_flow): load says so, in one line, and
    changes nothing. The stand-ins: the trace-drop counter pinned 16 bytes wide, and
    an instance directory of that version. With no instance left the shared pins are
    orphans, and the first load replaces them (it once failed and pruned them, so that
    only a second load succeeded)."""
    shared, old = PIN_ROOT / "shared", PIN_ROOT / "cc" / "vk_old"
    assert not PIN_ROOT.exists(), "the test needs a host without our pins"
    for d in (PIN_ROOT, shared, PIN_ROOT / "cc", old):     # as vegasctl makes them
        d.mkdir(mode=0o700)
        os.chmod(d, 0o700)
    try:
        subprocess.run(["bpftool", "map", "create", str(shared / "vk_trace_lost"), "type",
                        "array", "key", "4", "value", "16", "entries", "1", "name",
                        "vk_trace_lost"], check=True, capture_output=True, timeout=30)
        refused("load", "vegas", expect="vk_trace_lost was pinned by another vegaskit "
                "version, with another layout: unload that version's controllers first")
        old.rmdir()
        with loaded("vegas", "--name", "vk_new") as name:
            assert name in available_cc()
        assert not PIN_ROOT.exists()
    finally:
        (shared / "vk_trace_lost").unlink(missing_ok=True)
        for d in (old, PIN_ROOT / "cc", shared, PIN_ROOT):
            with contextlib.suppress(OSError):
                d.rmdir()
