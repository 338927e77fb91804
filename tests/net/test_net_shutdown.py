"""A role stopped by a signal leaves its session the protocol's way (the agents' shutdown step),
on the testbed with a user-space router:

* a TFMCC receiver that is the CLR, killed with SIGTERM, sends its receiver_leave report (RFC
  4654 §3.3 case 3): the sender counts a CLR leave and takes the other receiver as its CLR;
* an RLM receiver killed with SIGTERM leaves its groups itself, and the router's membership
  for them on its link goes within a second or two, not after the 260 s membership interval;
* the router, stopped by SIGTERM, says what it drained and withdrew.

Each test builds its own testbed (namespaces ``cl-<name>-*``, the pid in the name) and removes
it on success, failure and interrupt; traffic stays inside; groups are in 239.0.0.0/8 with a
TTL of the hop count plus one. Skips with the reason where root, ``ip`` or ``tc`` are missing.
"""

from __future__ import annotations

import ipaddress
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from castlab.testbed import Link, Testbed, Topology, available

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")


def _name(kind: str) -> str:
    return f"{kind}{os.getpid() % 100000}"


class Proc:
    """A role on a testbed node whose output is read as it comes."""

    def __init__(self, tb: Testbed, node: str, argv: list):
        self.p = tb.spawn(node, [sys.executable, "-m", "castlab", "net", *argv], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.p.stdout:
            self.lines.append(line.decode(errors="replace"))

    @property
    def out(self) -> str:
        return "".join(self.lines)

    def status_lines(self) -> list[str]:
        return [x for x in self.lines if " t=" in x]

    def wait(self, timeout: float) -> int:
        self.p.wait(timeout=timeout)
        return self.p.returncode


def _until(what: str, cond, timeout: float, step: float = 0.05) -> float:
    """Poll `cond` until true; the seconds it took (fails with `what` after `timeout`)."""
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"not within {timeout} s: {what}"
        time.sleep(step)
    return time.monotonic() - t0


def _is_clr(p: Proc, lines: int = 3) -> bool:
    """The receiver's last `lines` status lines all say it is the CLR."""
    s = p.status_lines()
    return len(s) >= lines and all("clr=true" in x for x in s[-lines:])


def test_a_tfmcc_clr_stopped_by_sigterm_sends_its_leave_report_and_the_sender_takes_the_other(tmp_path):
    # rcv1 sits behind a 200 kb/s bottleneck, rcv2 behind a fast link: rcv1 receives less and
    # becomes the CLR; SIGTERM to it must bring the receiver_leave report to the sender
    topo = Topology("tfstop", "a TFMCC CLR behind a bottleneck, another receiver beside it", ["src", "rcv1", "rcv2"],
                    ["r1"], [Link("src", "r1"), Link("r1", "rcv1", 200e3, 10), Link("r1", "rcv2")])
    with Testbed(topo, _name("f"), routers="user") as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        sess = ["--source-addr", tb.addr("src"), "--ttl", ttl, "--session", 91]
        rx = {h: Proc(tb, h, ["tfmcc-receiver", "--addr", tb.addr(h), "--node", tb.node_id(h), "--iface-addr",
                              tb.addr(h), "--duration", 60, "--status-interval", 0.25, "--out", tmp_path / h, *sess])
              for h in ("rcv1", "rcv2")}
        time.sleep(1.0)
        src = Proc(tb, "src", ["tfmcc-source", "--duration", 40, "--iface-addr", tb.addr("src"), "--out",
                               tmp_path / "src", *sess])
        try:
            _until(f"rcv1 the CLR: {rx['rcv1'].out[-600:]}", lambda: _is_clr(rx["rcv1"]), 25)
            rx["rcv1"].p.send_signal(signal.SIGTERM)
            t_kill = time.monotonic()
            assert rx["rcv1"].wait(10) == 0, rx["rcv1"].out
            exited = time.monotonic() - t_kill
            took = _until(f"rcv2 the CLR: {rx['rcv2'].out[-600:]}", lambda: _is_clr(rx["rcv2"], 1), 15)
        finally:
            # the sender first, and gone before rcv2 stops: rcv2, the CLR by then, would send a
            # leave report of its own on stopping, and the sender would count a second CLR leave
            codes = []
            for p in (src, rx["rcv2"], rx["rcv1"]):
                if p.p.poll() is None:
                    p.p.send_signal(signal.SIGTERM)
                codes.append(p.wait(15))
            codes = codes[:2]
    print(f"rcv1 exited {exited:.2f} s after SIGTERM; rcv2 said it was the CLR {took:.2f} s after rcv1's exit")
    assert codes == [0, 0], src.out[-2000:] + rx["rcv2"].out[-2000:]
    assert "stopped by SIGTERM" in rx["rcv1"].out
    left = json.loads((tmp_path / "rcv1" / "tfmcc_receiver_counts.json").read_text())
    assert left["leave_reported"] and left["left_s"] is not None, left
    st = json.loads((tmp_path / "rcv1" / "net_stats.json").read_text())
    assert st["stopped_by"] == "SIGTERM"
    s = st["stats"]
    # the one datagram of the step was the leave report, sent; the agent left its group itself
    assert (s["shutdown_agents"], s["shutdown_sent"], s["shutdown_unsent"], s["shutdown_left_groups"]) == (1, 1, 0, 0), s
    counts = json.loads((tmp_path / "src" / "tfmcc_counts.json").read_text())
    assert counts["clr_leaves"] == 1 and counts["leave_reports"] >= 1, counts
    nodes = counts["receivers"]
    clr = pd.read_csv(tmp_path / "src" / "tfmcc_clr.csv")
    chosen = [nodes[i] for i in clr["receiver"]]
    want1, want2 = (f"node {tb.node_id(h)}" for h in ("rcv1", "rcv2"))
    names = [str(x) for x in chosen]
    # rcv1 was the CLR, then (after its leave) rcv2; rcv1 never again
    assert want1 in names and names[-1] == want2, (names, nodes)
    after = names.index(want2, names.index(want1))
    assert want1 not in names[after:], names


def _groups_on(stats: dict, port: str, base: str, n: int) -> int:
    """How many groups of `base` .. `base`+n-1 the router has members of on `port`: from its
    group table where the stats carry one, else its count of groups there (a router that
    writes counts while it runs; the only host on `port` is the receiver)."""
    lo = ipaddress.IPv4Address(base)
    want = {str(lo + k) for k in range(n)}
    for p in stats.get("ports", []):
        if p["name"] == port:
            if "groups" in p:
                return sum(1 for g in p["groups"] if g[0] in want)
            return int(p.get("igmp_groups", 0))
    return 0


def test_an_rlm_receiver_stopped_by_sigterm_leaves_its_groups_and_the_router_prunes_at_once(tmp_path):
    topo = Topology("rlmstop", "an RLM receiver behind a user router", ["src", "rcv1"], ["r1"],
                    [Link("src", "r1"), Link("r1", "rcv1")])
    base, layers = "239.255.92.0", 3
    with Testbed(topo, _name("m"), routers="user") as tb:
        ttl = tb.topo.hops("src", "rcv1") + 1
        sess = ["--source-addr", tb.addr("src"), "--ttl", ttl, "--session", 92, "--group-base", base,
                "--layers", layers]
        src = Proc(tb, "src", ["source", "--base-rate", 32000, "--duration", 40, "--iface-addr", tb.addr("src"),
                               *sess])
        rlm = Proc(tb, "rcv1", ["rlm-receiver", "--addr", tb.addr("rcv1"), "--node", tb.node_id("rcv1"),
                                "--iface-addr", tb.addr("rcv1"), "--duration", 60, "--out", tmp_path / "rlm", *sess])
        port = tb.iface("r1", "rcv1")
        try:
            # the base layer and the control group (layers + 1 groups from the base)
            _until("the router lists rcv1's groups",
                   lambda: _groups_on(tb.router_stats("r1"), port, base, layers + 1) >= 2, 20)
            time.sleep(1.0)
            held = _groups_on(tb.router_stats("r1"), port, base, layers + 1)
            rlm.p.send_signal(signal.SIGTERM)
            pruned = _until("the router pruned rcv1's groups",
                            lambda: not _groups_on(tb.router_stats("r1"), port, base, layers + 1), 10)
            assert rlm.wait(10) == 0, rlm.out
        finally:
            for p in (rlm, src):
                if p.p.poll() is None:
                    p.p.send_signal(signal.SIGTERM)
            src.wait(15)
    print(f"router held {held} groups for rcv1; gone {pruned:.2f} s after SIGTERM (its stats are written every 0.5 s)")
    # the router's table is read every 0.5 s: a leave within ~1 s, against a 260 s membership interval
    assert pruned < 2.5, pruned
    st = json.loads((tmp_path / "rlm" / "net_stats.json").read_text())
    assert st["stopped_by"] == "SIGTERM"
    s = st["stats"]
    # the receiver left every group itself (the driver had none left to leave for it)
    assert (s["shutdown_agents"], s["shutdown_left_groups"], s["join_errors"]) == (1, 0, 0), s
    levels = pd.read_csv(tmp_path / "rlm" / "levels.csv")
    assert levels["level"].iloc[-1] == 0 and levels["level"].max() >= 1, levels.tail()
    # the router's own way out, stopped by the testbed's SIGTERM
    final = tb.final_router_stats["r1"]
    assert final["stopped_by"] == "SIGTERM"
    assert set(final["shutdown"]) >= {"queued", "forwarded", "left", "withdrawn", "took_ns", "timed_out"}
    assert final["shutdown"]["left"] == 0 and final["shutdown"]["timed_out"] == 0, final["shutdown"]
