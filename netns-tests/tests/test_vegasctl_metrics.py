"""`vegasctl metrics` (docs/DESIGN.md §4.9), scraped as Prometheus would: over
HTTP from --listen, and from a node_exporter textfile, parsed by the Prometheus
client library's own parser. The counts are checked against what the kernel
says through other doors: ss for the sockets, `flows` for the decisions."""
from __future__ import annotations

import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import VEGASCTL, loaded, vegasctl, vegasctl_json
from livecheck import check_complete, socket_ccs, spawn_checkstream, wait_for
from vegaskit.testbed.netns import Lab
from vegaskit.testing import reliability
from vegaskit.testbed.topology import htb_path, receiver_addr

pytestmark = pytest.mark.kernel
PORT = 7300
LISTEN = "127.0.0.1:19464"


def samples(text: str, name: str) -> dict[tuple, float]:
    """{labels as a sorted tuple: value} of one metric, from the exposition."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name:
                out[tuple(sorted(s.labels.items()))] = s.value
    return out


def of(text: str, name: str, controller: str) -> float:
    vals = {k: v for k, v in samples(text, name).items() if ("controller", controller) in k}
    return sum(vals.values())


def scrape(path: str = "/metrics") -> str:
    with urllib.request.urlopen(f"http://{LISTEN}{path}", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return r.read().decode()


@pytest.fixture
def server():
    p = subprocess.Popen([str(VEGASCTL), "metrics", "--listen", LISTEN], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().startswith("serving http://"), p.stderr.read()
        yield p
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 0, "SIGTERM must end the server cleanly"


@pytest.mark.needs_kernel("iter_setsockopt")
def test_metrics_count_sockets_moves_and_decisions(server, tmp_path):
    conns, seconds = 20, 12
    with loaded("vegas", "--name", "vk_met"), Lab() as lab:
        path = htb_path(lab, 20_000_000, 20_000)
        srv = spawn_checkstream(lab, path.receiver, "server", "--port", str(PORT), "--conns",
                                str(conns), "--report", str(tmp_path / "srv.json"))
        assert srv.stdout.readline().strip() == b"listening"
        cli = spawn_checkstream(lab, path.sender, "client", "--addr", receiver_addr(), "--port",
                                str(PORT), "--conns", str(conns), "--seconds", str(seconds),
                                "--cc", "vk_met", "--rate", "10e6",
                                "--report", str(tmp_path / "cli.json"))
        wait_for(lambda: socket_ccs(path.sender, PORT).count("vk_met") == conns, 15, "connections")
        time.sleep(3)
        flows_decisions = sum(f["decisions"] for f in vegasctl_json("flows") if f["ca"] == "vk_met")
        text = scrape()
        assert of(text, "vegaskit_sockets", "vk_met") == conns
        assert of(text, "vegaskit_sockets_started_total", "vk_met") == conns
        assert of(text, "vegaskit_sockets_moved_in_total", "vk_met") == 0
        # flows read first, and decisions only add up
        assert of(text, "vegaskit_decisions_total", "vk_met") >= flows_decisions > 0
        info = samples(text, "vegaskit_controller_info")
        assert any(dict(k).get("controller") == "vk_met" and dict(k)["variant"] == "vegas"
                   for k in info)
        # away and back: sockets follow, the moves are counted
        vegasctl("swap", "cubic", "--netns", path.sender.name, "--from", "vk_met",
                 "--established-only")
        text = scrape()
        assert of(text, "vegaskit_sockets", "vk_met") == 0
        vegasctl("swap", "vk_met", "--netns", path.sender.name, "--from", "cubic",
                 "--established-only")
        text = scrape()
        assert of(text, "vegaskit_sockets", "vk_met") == conns
        assert of(text, "vegaskit_sockets_moved_in_total", "vk_met") == conns
        assert of(text, "vegaskit_sockets_started_total", "vk_met") == 2 * conns
        # a retune shows as a generation
        vegasctl("set", "vk_met", "alpha=3")
        assert of(scrape(), "vegaskit_params_generation", "vk_met") == 1
        # the textfile: whole, parseable, in place
        prom = tmp_path / "vegaskit.prom"
        vegasctl("metrics", "--textfile", str(prom))
        assert of(prom.read_text(), "vegaskit_sockets", "vk_met") == conns
        assert [p.name for p in tmp_path.glob("vegaskit.prom*")] == ["vegaskit.prom"]
        cli.wait(timeout=seconds + 60)
        srv.wait(timeout=30)
        assert cli.returncode == 0 and srv.returncode == 0
        wait_for(lambda: of(scrape(), "vegaskit_sockets", "vk_met") == 0, 10, "the closes")
    check_complete(tmp_path / "srv.json", tmp_path / "cli.json", conns)


def test_the_endpoint_serves_only_metrics(server):
    for path, code in (("/", 404), ("/metrics/x", 404)):
        with pytest.raises(urllib.error.HTTPError) as e:
            scrape(path)
        assert e.value.code == code
    req = urllib.request.Request(f"http://{LISTEN}/metrics", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 405
    assert "vegaskit_trace_records_lost_total" in scrape()


@pytest.mark.reliability("bad_input")
def test_metrics_refuses_what_it_cannot_serve(tmp_path):
    cases = [("--listen", "0.0.0.0:9464"), ("--listen", "198.18.0.1:9464"),
             ("--listen", "127.0.0.1"), ("--listen", "127.0.0.1:0"), ("--listen", "[::]:9464"),
             ("--listen", "localhost:99999"), ("--textfile", str(tmp_path / "no" / "such" / "x.prom")),
             ("--textfile", "a", "--listen", LISTEN), ("--listen", LISTEN, "--listen", LISTEN)]
    for args in cases:
        reliability.case()
        r = vegasctl("metrics", *args, check=False)
        assert r.returncode in (1, 2) and r.stderr.count("\n") == 1 and \
            r.stderr.startswith("vegasctl: "), (args, r.returncode, r.stderr)
    assert not list(tmp_path.rglob("*")), "a refused textfile left something behind"
