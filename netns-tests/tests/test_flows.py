"""vegasctl flows: live connections on our controllers, from per-socket storage.

Two walks read that storage: one pass over the sk_storage map (every namespace
at once), which some kernels refuse with EPERM, and an iter/tcp walk started
once per network namespace. `flows` uses the first the kernel accepts; both
must list the same connections, so a host that refuses the first loses nothing
(docs/DESIGN.md §10).

The traffic: a forward flow whose sender is in the sender namespace and a
reverse one (iperf3 -R) whose sender is in the receiver namespace, both on one
of our controllers: connections in two namespaces.
"""
from __future__ import annotations

import json
import os
import time

import pytest

from conftest import loaded, vegasctl, vegasctl_json
from vegaskit.testbed import iperf
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import htb_path, receiver_addr, sender_addr

pytestmark = pytest.mark.kernel
SENDER, RECEIVER = sender_addr(), receiver_addr()

WALKS = {"sk_storage": "iter_sk_storage_map", "tcp": "iter_tcp_sk_storage"}
# vegasctl acts as if the kernel refused this feature with EPERM (loader/fault.c)
REFUSE_SK = {"VEGASCTL_REFUSE": "iter_sk_storage_map"}
FLOW_SECONDS = 120


def ident(flows: list[dict]) -> set[tuple]:
    return {(f["netns"], f["saddr"], f["sport"], f["daddr"], f["dport"], f["ca"]) for f in flows}


def netns_inode(name: str) -> int:
    return os.stat(f"/var/run/netns/{name}").st_ino


@pytest.fixture(scope="module")
def snapshots(kernel_features):
    """Every walk the kernel accepts, plus the default and a --netns filter,
    taken while the same connections are live (the ones that are in every
    snapshot; a connection whose first decision falls between two snapshots
    would differ for a reason that is not the walk's)."""
    walks = [v for v, feat in WALKS.items() if kernel_features[feat]]
    if "tcp" not in walks:      # every test here compares against the per-namespace walk
        pytest.skip("this kernel lacks iter_tcp_sk_storage (see: vegasctl features)")
    with loaded("vegas", "--name", "vk_flows") as cc, Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5201)
        iperf.server(lab, path.receiver, 5202)
        # Long enough for every snapshot even in an emulated guest (vm-test: each
        # `flows` verifies an iterator, a second or more under TCG); stopped after.
        fwd = iperf.client(lab, path.sender, RECEIVER, 5201, cc, FLOW_SECONDS)
        rev = lab.spawn(path.sender, ["iperf3", "-c", RECEIVER, "-p", "5202", "-C", cc,
                                      "-t", str(FLOW_SECONDS), "-R"])
        for _ in range(30):                     # both data connections deciding
            time.sleep(0.2)
            now = vegasctl_json("flows")
            if any(f["dport"] == 5201 for f in now) and any(f["sport"] == 5202 for f in now):
                break
        for _ in range(5):                      # a stable set across all snapshots
            snap = {via: ident(vegasctl_json("flows", "--via", via)) for via in walks}
            snap["auto"] = ident(vegasctl_json("flows"))
            # as on a kernel that refuses the single-pass walk
            snap["refused"] = ident(json.loads(vegasctl("flows", "--json", env=REFUSE_SK).stdout))
            snap["refused_via"] = vegasctl("flows", "--via", "sk_storage", check=False,
                                           env=REFUSE_SK)
            snap["auto_again"] = ident(vegasctl_json("flows"))
            if snap["auto"] == snap["auto_again"]:
                break
        snap["receiver_only"] = ident(vegasctl_json("flows", "--via", "tcp", "--netns",
                                                    path.receiver.name)) \
            if "tcp" in walks else None
        inodes = {"sender": netns_inode(path.sender.name),
                  "receiver": netns_inode(path.receiver.name)}
        alive = fwd.poll() is None and rev.poll() is None
        for p in (fwd, rev):
            p.terminate()
            p.wait(timeout=30)
        assert alive, "a flow ended before the snapshots were taken: they compared nothing live"
    return snap, inodes, cc


@pytest.mark.needs_kernel("iter_tcp_sk_storage")
def test_per_namespace_walk_sees_every_namespace(snapshots):
    snap, inodes, cc = snapshots
    tcp = snap["tcp"]
    data_senders = {(n, sa) for n, sa, sp, da, dp, c in tcp if c == cc and (dp == 5201 or sp == 5202)}
    assert (inodes["sender"], SENDER) in data_senders, tcp
    assert (inodes["receiver"], RECEIVER) in data_senders, tcp
    assert tcp == snap["auto"], "the default walk and the per-namespace walk disagree"
    assert snap["receiver_only"] == {f for f in tcp if f[0] == inodes["receiver"]}
    assert snap["receiver_only"]


@pytest.mark.needs_kernel("iter_tcp_sk_storage")
def test_a_refused_single_pass_walk_falls_back_to_the_per_namespace_walk(snapshots):
    """What a kernel that refuses iter/bpf_sk_storage_map does to `flows`:
    nothing a user can see, unless they ask for that walk by name."""
    snap, _, _ = snapshots
    assert snap["refused"] == snap["auto"] and snap["refused"]
    r = snap["refused_via"]
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "vegasctl: this kernel refuses the sk_storage walk of flows: Operation not permitted\n"


@pytest.mark.needs_kernel("iter_sk_storage_map", "iter_tcp_sk_storage")
def test_both_walks_list_the_same_connections(snapshots):
    snap, _, _ = snapshots
    assert snap["sk_storage"], "no connection listed"
    assert snap["sk_storage"] == snap["tcp"]
    assert snap["sk_storage"] == snap["auto"]


def test_via_names_a_walk():
    r = vegasctl("flows", "--via", "netlink", check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("vegasctl: flows: --via takes sk_storage or tcp, not 'netlink' "
                                "(see: vegasctl --help)")


def test_features_reports_every_probe_as_a_boolean():
    """Each probe answers yes or no; the ones this project cannot run without
    on any kernel it supports must say yes here, or the suite could not run."""
    feats = vegasctl_json("features")
    assert feats["kernel"] == os.uname().release
    assert set(feats["features"]) >= set(WALKS.values()) | {"struct_ops", "btf", "iter_tcp"}
    assert all(isinstance(v, bool) for v in feats["features"].values())
    assert feats["features"]["struct_ops"] and feats["features"]["btf"]
    # each "no" says what the kernel refused or lacked: the reason a test skips with
    lacks = {k for k, v in feats["features"].items() if not v}
    assert set(feats["why"]) == lacks and all(feats["why"].values()), feats
    text = vegasctl("features").stdout.splitlines()
    assert len(text) == 2 + len(feats["features"]) + len(lacks)
    assert {ln.split(":")[0] for ln in text[2 + len(feats["features"]):]} == lacks
    refused = json.loads(vegasctl("features", "--json", env=REFUSE_SK).stdout)
    assert refused["features"] == {**feats["features"], "iter_sk_storage_map": False}
    assert "VEGASCTL_REFUSE" in refused["why"]["iter_sk_storage_map"]


def test_a_probe_of_ours_that_cannot_run_is_no_answer():
    """A probe program missing from the embedded object would otherwise load nothing,
    which reads as yes, or fail to open, which read as no and made tests skip for a
    defect of ours: it fails the command, one line a probe, and prints no table."""
    r = vegasctl("features", "--json", env={"VEGASCTL_FAIL_AT": "probe_program"}, check=False)
    assert r.returncode == 1 and r.stdout == "", r
    lines = r.stderr.splitlines()
    assert all(ln.startswith("vegasctl: features: cannot probe ") for ln in lines), r.stderr
    renamed = {ln.split()[4].rstrip(":") for ln in lines
               if ln.endswith("has no program probe_renamed")}
    assert renamed == {"iter_tcp", "iter_setsockopt", "iter_sk_storage_map",
                       "iter_tcp_sk_storage"}, r.stderr


def test_a_v6_socket_is_named_by_its_own_addresses():
    """A socket of family AF_INET6 (here to an IPv4-mapped address, so the traffic
    stays in 198.18.0.0/15) has its identity read from the v6 fields: the
    iterators' walk and the controller's trace records both give the peers and
    the ports of that connection, not another field's bytes."""
    from vegaskit.testbed.vtrace import Trace
    with loaded("vegas", "--name", "vk_flows6") as cc, Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5203)
        with Trace("--decisions", "--controller", cc) as t:
            iperf.client(lab, path.sender, f"::ffff:{RECEIVER}", 5203, cc, 30)
            for _ in range(50):
                time.sleep(0.2)
                seen = [f for f in vegasctl_json("flows", "--controller", cc) if f["dport"] == 5203]
                if seen:
                    break
            time.sleep(0.5)
        sender_ns = netns_inode(path.sender.name)
    # the data connection, and iperf3's control connection if it decided once
    assert {(f["netns"], f["saddr"], f["daddr"], f["ca"]) for f in seen} \
        == {(sender_ns, SENDER, RECEIVER, cc)}, seen
    mine = [r for r in t.records if r["dport"] == 5203]
    assert mine, t.stderr
    assert {(r["netns"], r["saddr"], r["daddr"], r["ca"]) for r in mine} \
        == {(sender_ns, SENDER, RECEIVER, cc)}, mine[:3]
    assert {r["sport"] for r in mine} <= {f["sport"] for f in seen}, (mine[:3], seen)


@pytest.mark.needs_kernel("iter_setsockopt", "iter_tcp_sk_storage")
def test_the_record_holds_decisions_back_and_release_writes_them():
    """A socket writes its flows record at its first decision and then only once
    VK_RECORD_BATCH decisions wait or VK_RECORD_AGE_US has passed (a cold sk_storage
    write at every decision was most of a cold decision's cost on one machine of this
    kind, docs/DESIGN.md §5.1). On this
    path (20 Mbit/s, queueing delay only) a batch fills in a few ms, long before the
    age, so every snapshot shows the 1st, 13th, 25th... decision, with that decision's
    own fields; and release writes the rest: once the connection is moved to reno,
    its record counts exactly the decisions, and the rules, that the trace saw, and the
    instance's counters (`vegasctl metrics`), added at the same writes, count every
    decision of its sockets (iperf3's data and control connections)."""
    from collections import Counter
    from vegaskit.bench import opcost
    from vegaskit.intf import RECORD_BATCH
    from vegaskit.testbed.vtrace import Trace
    with loaded("vegas", "--name", "vk_held") as cc, Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5204)
        snaps = []
        with Trace("--decisions", "--controller", cc) as t:
            client = iperf.client(lab, path.sender, RECEIVER, 5204, cc, 30)
            time.sleep(2)
            for _ in range(12):
                snaps.append([f for f in vegasctl_json("flows", "--controller", cc)
                              if f["dport"] == 5204])
                time.sleep(0.13)
            moved = vegasctl_json("swap", "reno", "--netns", path.sender.name, "--from", cc)
            time.sleep(0.5)
        final = [f for f in vegasctl_json("flows", "--all") if f["dport"] == 5204]
        counted = opcost.decisions(cc)
        client.terminate()
        client.wait(timeout=30)
    assert moved["moved"] >= 1, moved
    mine = [r for r in t.records if r["dport"] == 5204]
    data = Counter(r["sport"] for r in mine).most_common(1)[0][0]   # iperf3's data socket
    decided = [r for r in mine if r["sport"] == data]
    rec = next(f for f in final if f["sport"] == data)
    assert rec["ca"] == "reno", rec
    assert rec["decisions"] == len(decided) > 100, (rec["decisions"], len(decided), t.stderr)
    assert {k: v for k, v in rec["rules"].items() if v} == dict(Counter(r["rule"] for r in decided))
    # the instance's counters, added at the same writes: every socket on it has left
    assert counted == len(mine), (counted, len(mine))
    # the age cannot have fired before a snapshot's decision: every batch before it
    # filled well within VK_RECORD_AGE_US (250 ms)
    times = [r["time_s"] for r in decided]
    spans = [times[k + RECORD_BATCH] - times[k] for k in range(0, len(times) - RECORD_BATCH,
                                                                 RECORD_BATCH)]
    shown = [next(f for f in now if f["sport"] == data)["decisions"] for now in snaps]
    assert max(spans[:max(shown) // RECORD_BATCH + 1]) < 0.2, spans
    assert all(d % RECORD_BATCH == 1 for d in shown), shown
    for now in snaps:
        f = next(f for f in now if f["sport"] == data)
        r = decided[f["decisions"] - 1]
        assert (f["base_rtt_us"], f["rtt_us"], f["diff"], f["alpha"], f["beta"],
                f["decision_cwnd"]) == (r["base_rtt_us"], r["rtt_us"], r["diff"], r["alpha"],
                                        r["beta"], r["cwnd_after"]), (f, r)
