"""Quick root checks of the real-network router experiments (``castlab reproduce net-nlm``,
``net-rlm-red``, ``net-lesbcc-aggregation``): each builds its experiment's testbed with user
routers for a few seconds and checks the piece the experiment's claims rest on. The full runs
are ``castlab reproduce NAME``'s.

Each test builds its own testbed (namespaces ``cl-<name>-*``, the pid in the name) and removes
it on success, failure and interrupt; multicast goes to 239.0.0.0/8 with a TTL of the hop
count plus one. They skip with the reason where root, ``ip``, ``tc`` or iperf3 are missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest

from castlab.testbed import Testbed, available, nlm8

REASON = available()
needs_testbed = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


@needs_testbed
def test_net_nlm_lmr_signalling_reaches_the_sender_and_raises_its_level(tmp_path):
    """net-nlm's set-up: an NLM sender starting at one layer climbs only on ADD_REQs that LMR1
    originates and sends to it (§3.4), unicast to castlab port 1 at the source, from the LMR's
    own port (nlm::LMR_PORT, 65001). With the default port base (47000; castlab ports wrap onto
    UDP ports modulo 2^16) every such packet is sent (none counted as unsendable) and the
    sender's level rises."""

    topo = nlm8(receiver_hosts=1, rate_bps=1.5e6)
    name = f"q{os.getpid() % 100000}"
    with Testbed(topo, name, routers="user", extensions={"r1": ("lmr", {"add_intvl_min": 1.0}),
                                                         "r2": ("lmr", {"add_intvl_min": 1.0})},
                 session={"session": 84}) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words()]
        cfg = ["--config", "add_intvl_min=1.0"]
        rx = tb.spawn("rcv1", _castlab("net", "nlm-receiver", "--addr", tb.addr("rcv1"), "--node", tb.node_id("rcv1"),
                                       "--iface-addr", tb.addr("rcv1"), "--duration", 7, *cfg, *words),
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src = tb.spawn("src", _castlab("net", "nlm-sender", "--duration", 6, "--iface-addr", tb.addr("src"),
                                       "--out", tmp_path / "src", *cfg, *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src_out = src.communicate(timeout=40)[0].decode()
        rx.communicate(timeout=40)
        assert src.returncode == 0, src_out
    st = {r: tb.final_router_stats[r]["stats"] for r in ("r1", "r2")}
    assert st["r1"]["ext_sent"] > 0 and st["r1"]["ext_send_errors"] == 0, st
    assert st["r2"]["ext_send_errors"] == 0, st
    lv = pd.read_csv(tmp_path / "src" / "nlm_sender_level.csv")
    req = pd.read_csv(tmp_path / "src" / "nlm_sender_req.csv")
    assert (req["kind"] == 3).any(), req  # ADD_REQ (NlmHeader::ADD_REQ) heard from LMR1
    assert lv["level"].max() >= 2, (lv, src_out)


@needs_testbed
def test_net_rlm_red_bottleneck_drops_early_and_losses_are_windowed(tmp_path):
    """net-rlm-red's topology (2) with the RED bottleneck in the router: a 6-layer source
    (2 Mb/s) held at all six layers by a sink makes RED drop early (its average between the
    thresholds), and the worst-case windowed loss the experiment computes from a receiver's
    arrival and loss records lies in (0, 1] and is no smaller for the shorter window."""
    from castlab.experiments.rlm.net import _rlm2_topology, _worst_losses
    from castlab.experiments.rlm.topology import RED_PARAMS

    red = (RED_PARAMS["red_min_th"], RED_PARAMS["red_max_th"], RED_PARAMS["red_max_p"], RED_PARAMS["red_w_q"], False)
    topo = _rlm2_topology(1, red)
    name = f"w{os.getpid() % 100000}"
    with Testbed(topo, name, routers="user", session={"session": 85}) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", ttl]
        rx = tb.spawn("rcv1", _castlab("net", "sink", "--layers", 6, "--level", 6, "--addr", tb.addr("rcv1"),
                                       "--node", 1, "--iface-addr", tb.addr("rcv1"), "--duration", 6,
                                       "--out", tmp_path / "rx", *words),
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        time.sleep(0.5)
        src = tb.spawn("src", _castlab("net", "source", "--layers", 6, "--base-rate", "32k", "--duration", 5,
                                       "--iface-addr", tb.addr("src"), *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src.communicate(timeout=40)
        rx_out = rx.communicate(timeout=40)[0].decode()
        assert rx.returncode == 0, rx_out
    port = next(p for p in tb.final_router_stats["r1"]["ports"] if p["name"] == "n0r")
    assert port["drops_early"] > 0, port
    w = _worst_losses(pd.read_csv(tmp_path / "rx" / "arrivals.csv"), pd.read_csv(tmp_path / "rx" / "losses.csv"),
                      (1.0, 5.0))
    assert 0 < w["worst_5s"] <= w["worst_1s"] <= 1, w


@needs_testbed
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_net_lesbcc_aggregation_attributes_lis_to_the_receivers(tmp_path):
    """net-lesbcc-aggregation's testbed (a bottleneck per receiver behind r2, the aggregator in
    r2) for a few seconds: the source's LIs are attributed to the receiver hosts by node id,
    and they add up to the source's own LI count."""
    from castlab.experiments.lesbcc.net import _agg_real

    r = _agg_real(tmp_path, 1, 4.0, True)
    assert set(r["lis_per_receiver"]) == {"rcv1", "rcv2", "rcv3", "rcv4"}, r
    assert r["receivers_named"], r
    assert sum(r["lis_per_receiver"].values()) == r["lis"], r
    assert r["aggregator"] != {}, r
