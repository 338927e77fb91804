"""Router kinds of the protocol registry hosted by the user-space router
(``castlab net router --extension KIND KEY=VALUE...``): the registry's factory builds the
simulator's extension into the router, its status reader writes the extension's counters into
``router_stats.json``, and bad kinds or keys are refused with what is known.

The root tests build their own testbed (namespaces ``cl-<name>-*``, the pid in the name) and
remove it on success, failure and interrupt; multicast goes to 239.0.0.0/8 with a TTL of the
hop count plus one. They skip with the reason where root, ``ip`` or ``tc`` are missing.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr

import pytest

from castlab.router import main as router_main
from castlab.testbed import Testbed, available, lesbcc5, nlm8

REASON = available()
needs_testbed = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")


def _castlab(*args) -> list[str]:
    return [sys.executable, "-m", "castlab", *[str(a) for a in args]]


def _router_error(*words: str) -> tuple[int, str]:
    err = io.StringIO()
    with redirect_stderr(err):
        rc = router_main(["--iface", "x0,10.9.0.1/24", *words, "--duration", "1"])
    return rc, err.getvalue()


def test_unknown_kinds_and_keys_are_refused_with_what_is_known():
    rc, e = _router_error("--extension", "lmx")
    assert rc == 2 and "unknown router kind" in e and "lmr" in e and "nak_aggregator" in e, e
    rc, e = _router_error("--extension", "lmr", "qmaxx=3")
    assert rc == 2 and e.count("qmaxx:") == 1 and "qweight" in e, e
    rc, e = _router_error("--extension", "nak_aggregator", "qmax=1")
    assert rc == 2 and "known: hold" in e, e
    rc, e = _router_error("--extension", "nak_aggregator", "hold")
    assert rc == 2 and "NAME=VALUE" in e, e


@needs_testbed
def test_nak_aggregator_hosted_in_the_router_sees_and_aggregates_the_receivers_naks():
    """LE-SBCC (starting at 200 kb/s) over a 150 kb/s, 10-packet bottleneck onto a LAN of two PGM receivers: both lose
    the same packets (one copy crosses the bottleneck), so the router's aggregator forwards the
    first NAK of a loss and holds back the other's."""
    topo = lesbcc5(receiver_hosts=2, rate_bps=150e3, queue_pkts=10, delay_s=0.02)
    name = f"x{os.getpid() % 100000}"
    session = {"session": 78}
    with Testbed(topo, name, routers="user", extensions={"r1": ("nak_aggregator", {"hold": 0.5})},
                 session=session) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", ttl]
        rx = [tb.spawn(h, _castlab("net", "pgm-receiver", "--addr", tb.addr(h), "--node", tb.node_id(h),
                                   "--iface-addr", tb.addr(h), "--duration", 12, *words))
              for h in ("rcv1", "rcv2")]
        src = tb.spawn("src", _castlab("net", "lesbcc-source", "--policy", "aimd", "--duration", 9,
                                       "--iface-addr", tb.addr("src"), *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src.wait(timeout=40)
        live = tb.qdisc_stats("rcv1")  # read while the router runs
        for p in rx:
            tb.stop(p, timeout=15)
    st = tb.final_router_stats["r1"]
    assert live["final"] is False and live["port"]["name"] == "n0r", live
    assert 0 < live["user"]["drops"] <= tb.qdisc_stats("rcv1")["user"]["drops"], live
    ext = st["extension"]
    assert ext["kind"] == "nak_aggregator" and ext["options"] == {"hold": 0.5}
    s = ext["status"]
    assert st["stats"]["ext_seen"] > 100, st["stats"]
    lan = next(p for p in st["ports"] if p["name"] == "n0r")
    assert lan["drops_forced"] > 0, lan  # the bottleneck lost packets: there were NAKs to see
    assert s["naks_forwarded"] > 0, s
    assert s["naks_suppressed"] + s["naks_suppressed_after_repair"] > 0, s


@needs_testbed
def test_lmrs_on_nlm_fig8_filter_layers_at_the_congested_interface():
    """NLM's Figure 8 with LMRs on both routers, the bottleneck LMR1 -> LMR2 at 250 kb/s, and an
    NLM sender starting at 3 layers (400 kb/s): the receiver's join crosses both routers (LMR2
    relays it toward the source), LMR1's averaged queue passes qmax, it DROPs the top layer
    there and filters it (§3.3), LMR2 learns from the SESS LMR1 forwards that LMR1 is its
    upstream (§3.5), and the receiver still gets the base layer and SESS."""
    topo = nlm8(receiver_hosts=1, rate_bps=250e3)
    name = f"y{os.getpid() % 100000}"
    with Testbed(topo, name, routers="user", extensions={"r1": ("lmr", {}), "r2": ("lmr", {})},
                 session={"session": 79}) as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words()]
        out = tb.state_dir / "rcv1-out"
        rx = tb.spawn("rcv1", _castlab("net", "nlm-receiver", "--addr", tb.addr("rcv1"), "--node", tb.node_id("rcv1"),
                                       "--iface-addr", tb.addr("rcv1"), "--duration", 11, "--out", out, *words),
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src = tb.spawn("src", _castlab("net", "nlm-sender", "--duration", 10, "--iface-addr", tb.addr("src"),
                                       "--config", "initial_layers=3", *words),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        src_out = src.communicate(timeout=40)[0].decode()
        rx_out = rx.communicate(timeout=40)[0].decode()
        assert src.returncode == 0 and rx.returncode == 0, src_out + rx_out
        import json

        rec = json.loads((out / "nlm_receiver.json").read_text())
    st = tb.final_router_stats["r1"]
    ext = st["extension"]
    assert ext["kind"] == "lmr", ext
    assert tb.final_router_stats["r2"]["stats"]["igmp_relayed_joins"] > 0
    out_if = [p["name"] for p in st["ports"]].index(tb.iface("r1", "r2"))
    ifs = {i["channel"]: i for i in ext["status"]["interfaces"]}
    assert ifs[out_if]["filtered"] > 0, (ext["status"], rx_out)
    (sess,) = ext["status"]["sessions"]
    assert 1 <= sess["l_cur"][str(out_if)] < 3, sess  # JSON keys are strings
    (sess2,) = tb.final_router_stats["r2"]["extension"]["status"]["sessions"]
    assert sess2["prev"][0] == tb.node_id("r1"), sess2  # SESS as LMR1 rewrote it: LMR1 is upstream
    assert rec["total_received"] > 100 and rec["sess_received"] > 10, (rec, rx_out)
