"""`trace = "off"` for TCP, NLM and LE-SBCC: no per-packet rows, and the same run otherwise
(every counter, every flow-table column but the worst windows NLM computes from its bins)."""

from __future__ import annotations

import math

import pytest

from castlab import Scenario

LINKS = [{"a": "src", "b": "r1", "rate": "10Mbps", "delay": "5ms"},
         {"a": "r1", "b": "r2", "rate": "1Mbps", "delay": "20ms", "queue_limit": 20},
         {"a": "r2", "b": "h1", "rate": "10Mbps", "delay": "5ms"},
         {"a": "r2", "b": "h2", "rate": "10Mbps", "delay": "5ms"}]


def scenario(proto: str, trace: str) -> Scenario:
    cfg = {"trace": trace}
    d: dict = {"duration": "60s", "nodes": ["src", "r1", "r2", "h1", "h2"], "links": LINKS}
    hosts = [("h1", "1s"), ("h2", "2s")]
    if proto == "tcp":
        d["tcp"] = [{"name": f"tcp{i}", "src": "src", "dst": h, "start": s, "config": cfg}
                    for i, (h, s) in enumerate(hosts, 1)]
    elif proto == "nlm":
        d["sessions"] = [{"name": "s", "source": "src", "kind": "nlm", "layers": 6, "base_rate": "32kbps",
                          "config": cfg}]
        d["receivers"] = [{"name": f"rx{i}", "node": h, "session": "s", "protocol": "nlm", "start": s,
                           "config": cfg} for i, (h, s) in enumerate(hosts, 1)]
        d["routers"] = [{"kind": "lmr", "node": n, "config": cfg} for n in ("r1", "r2")]
    else:
        d["sessions"] = [{"name": "s", "source": "src", "kind": "lesbcc", "config": cfg}]
        d["receivers"] = [{"name": f"rx{i}", "node": h, "session": "s", "protocol": "pgm", "start": s}
                          for i, (h, s) in enumerate(hosts, 1)]
    return Scenario.from_dict(d)


def run(proto: str, trace: str):
    sc = scenario(proto, trace)
    sim = sc.build(seed=3)
    sim.run(sc.duration)
    return sc, sim


def rows_without_nlm_windows(sc, sim) -> list[dict]:
    # NLM's worst-window columns come from its per-bin counts, a trace
    return [{k: v for k, v in r.items() if not (r["kind"] == "nlm" and k.startswith("worst_"))}
            for r in sc.flow_table(sim)]


def plain(x):
    """Dicts and arrays as plain Python values, to compare with ==."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x.tolist() if hasattr(x, "tolist") else x


def lengths(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update({f"{k}.{kk}": n for kk, n in lengths(v).items()})
        elif hasattr(v, "__len__") and not isinstance(v, str):
            out[k] = len(v)
    return out


@pytest.mark.parametrize("proto", ["tcp", "nlm", "lesbcc"])
def test_trace_off_keeps_no_rows_and_changes_nothing_else(proto):
    sc_full, full = run(proto, "full")
    sc_off, off = run(proto, "off")
    assert repr(rows_without_nlm_windows(sc_off, off)) == repr(rows_without_nlm_windows(sc_full, full))
    assert off.conservation() == full.conservation() and off.engine_stats() == full.engine_stats()
    h = off.scenario_handles
    if proto == "tcp":
        for name, a in h.tcp.items():
            assert plain(off.tcp_stats(a)) == plain(full.tcp_stats(full.scenario_handles.tcp[name]))
            grown = lengths(full.tcp_trace(full.scenario_handles.tcp[name]))
            assert grown["ack_time_ns"] > 1000 and grown["rx_time_ns"] > 1000
            assert set(lengths(off.tcp_trace(a)).values()) == {0}
    elif proto == "nlm":
        src = h.sessions["s"]["source"]
        assert lengths(full.nlm_sender_records(src))["req_time_ns"] > 0
        assert lengths(off.nlm_sender_records(src))["req_time_ns"] == 0
        for n in ("r1", "r2"):
            f, o = lengths(full.lmr_records(n)), lengths(off.lmr_records(n))
            assert f["req_time_ns"] > 0 and o["req_time_ns"] == 0
            # the event records stay
            assert {k: v for k, v in o.items() if not k.startswith("req_")} == \
                   {k: v for k, v in f.items() if not k.startswith("req_")}
        for name, a in h.receivers.items():
            f = full.nlm_receiver_records(full.scenario_handles.receivers[name])
            o = off.nlm_receiver_records(a)
            assert len(f["received"]) >= 58 and len(o["received"]) == 0
            assert lengths(o)["over_time_ns"] == lengths(f)["over_time_ns"]
        assert all(math.isnan(r["worst_loss_1s"]) for r in sc_off.flow_table(off) if r["kind"] == "nlm")
    else:
        src = h.sessions["s"]["source"]
        assert plain(off.lesbcc_stats(src)) == plain(full.lesbcc_stats(full.scenario_handles.sessions["s"]["source"]))
        f = lengths(full.lesbcc_trace(full.scenario_handles.sessions["s"]["source"]))
        assert f["rate_time_ns"] > 10 and f["li_time_ns"] > 10
        assert set(lengths(off.lesbcc_trace(src)).values()) == {0}


def test_an_unknown_trace_value_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="trace"):
        run("tcp", "some")
