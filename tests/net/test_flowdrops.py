"""Per-flow drops at net-peers' bottleneck from packet logs on both sides (``flowdrops``), the
packet counter's packet ids (``castlab.testbed.count``) and the twin's own records in the testbed
roles' files (``twin_records``): on logs written by hand, and on a short simulated twin whose
queue counts its own drops. No root needed."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pandas as pd
import pytest

from castlab.experiments.tfmcc import flowdrops as fd
from castlab.experiments.tfmcc import peers, twin_records
from castlab.testbed.count import packet_id


def _log(path, rows):
    pd.DataFrame(rows, columns=["time_ns", "kind", "key", "bytes", "pid", "payload"]).to_csv(path, index=False)


def test_flow_table_counts_drops_bursts_and_phases_per_flow(tmp_path):
    # A paced flow on group .1: a packet every 100 ms from 0.05 s, ids 1..20; ids 5 and 12 never
    # reach rcv1. A TCP flow to port 5201: at 0.0205 s, 0.3205 s, 0.6205 s, ... an offloaded
    # packet of two 1448-byte segments (seq 1000 + 2896 k), both halves at the same instant, so
    # every second segment follows the first within 1 ms (a burst); the second segment of k = 2
    # (seq 1000 + 2896*2 + 1448) is dropped. Each delivered packet reaches rcv1 20 ms after it
    # was sent (the TCP flow's second segment 21 ms).
    s, g = [], []
    for i in range(20):
        t = 50_000_000 + i * 100_000_000
        s.append((t, "mc", "239.255.0.1", 588, i + 1, 560))
        if i + 1 not in (5, 12):
            g.append((t + 20_000_000, "mc", "239.255.0.1", 588, i + 1, 560))
    for k in range(6):
        t = 20_500_000 + k * 300_000_000
        seq = 1000 + 2896 * k
        s.append((t, "tcp", "5201", 52 + 2896, seq, 2896))
        g.append((t + 20_000_000, "tcp", "5201", 1500, seq, 1448))
        if k != 2:
            g.append((t + 21_000_000, "tcp", "5201", 1500, seq + 1448, 1448))
    _log(tmp_path / "packets_src.csv", s)
    _log(tmp_path / "packets_rcv1.csv", g)
    sent, got = fd.read_log(tmp_path / "packets_src.csv"), fd.read_log(tmp_path / "packets_rcv1.csv")
    # the offloaded packets are cut into their segments, with their own sequence numbers
    tcp = sent[sent["flow"] == "tcp:5201"]
    assert len(tcp) == 12 and set(tcp["bytes"]) == {1500}
    assert sorted(tcp["pid"]) == [1000 + 1448 * j for j in range(12)]
    t = fd.flow_table(sent, got, (0.0, 10.0), {"tcp:5201": "reno"}).set_index("flow")
    mc, reno = t.loc["mc:239.255.0.1"], t.loc["reno"]
    assert (mc["packets"], mc["drops"]) == (20, 2) and mc["drop_frac"] == pytest.approx(0.1)
    assert mc["burst_frac"] == 0 and mc["gap_p50_ms"] == pytest.approx(100.0)
    assert mc["sojourn_ms"] == pytest.approx(20.0)
    assert (reno["packets"], reno["drops"]) == (12, 1)
    # 6 of its 12 segments follow the flow's previous one at once; the dropped one is among them
    assert reno["burst_frac"] == pytest.approx(0.5)
    assert reno["drop_burst"] == pytest.approx(1 / 6) and reno["drop_alone"] == 0
    # phases: the paced flow's packets arrive 30 ms (or, after a drop, later) after rcv1's last
    # arrival; none within 1 ms
    assert mc["soon_frac"] == 0 and mc["drop_late"] == pytest.approx(0.1)
    # a span keeps only the packets sent in it; a gap counts the flow's packet just before it
    t2 = fd.flow_table(sent, got, (0.5, 1.0)).set_index("flow")
    assert t2.loc["mc:239.255.0.1", "packets"] == 5 and t2.loc["mc:239.255.0.1", "gap_p10_ms"] == pytest.approx(100.0)


def test_a_group_counts_only_while_rcv1_receives_it(tmp_path):
    # group .2 sent every 100 ms for 10 s; rcv1 is a member from 2 s to 5 s only (it received
    # the packets sent then, but the one at 3.0 s). Outside, the packets were never offered to
    # its queue: not drops.
    s = [(int(i * 1e8), "mc", "239.255.0.2", 1028, i, 1000) for i in range(100)]
    g = [(int(i * 1e8) + 10_000_000, "mc", "239.255.0.2", 1028, i, 1000) for i in range(20, 51) if i != 30]
    _log(tmp_path / "a.csv", s)
    _log(tmp_path / "b.csv", g)
    t = fd.flow_table(fd.read_log(tmp_path / "a.csv"), fd.read_log(tmp_path / "b.csv"), (0.0, 10.0))
    # the member span, widened by MEMBER_S on neither side: sent 2.0 .. 5.0 s, 31 packets
    assert list(t["packets"]) == [31] and list(t["drops"]) == [1]


def test_a_repeated_packet_is_matched_to_its_copies_in_order():
    # the same id sent three times (a TCP retransmission repeats its sequence number), received
    # twice: the first copy is the dropped one
    sent = pd.DataFrame({"t_s": [0.0, 1.0, 2.0], "flow": ["tcp:1"] * 3, "bytes": [1500] * 3, "pid": [7] * 3})
    got = pd.DataFrame({"t_s": [1.5, 2.5], "flow": ["tcp:1"] * 2, "bytes": [1500] * 2, "pid": [7] * 2})
    m = fd.match(sent, got)
    assert list(m["delivered"]) == [False, True, True]
    assert list(m["t_rx"].fillna(-1)) == [-1, 1.5, 2.5]


def test_train_frac_counts_arrivals_closer_than_half_a_serialisation():
    # 1500-byte packets at 1 Mb/s take 12 ms: arrivals 12 ms apart are a fluid link's, 1 ms
    # apart a train's
    got = pd.DataFrame({"t_s": [0.0, 0.012, 0.024, 0.025, 0.026, 0.038], "bytes": [1500] * 6})
    assert fd.train_frac(got, 1e6, (0.0, 1.0)) == pytest.approx(2 / 5)


def test_packet_id_ignores_the_ip_header_a_router_rewrites():
    udp = struct.pack("!HHHH", 40000, 47000, 8 + 20, 0) + bytes(range(20))

    def frame(ttl: int) -> bytes:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, ttl, 17, 0, bytes([10, 0, 0, 1]),
                         bytes([239, 255, 0, 1]))
        return bytes(12) + b"\x08\x00" + ip + udp

    a, b = frame(64), frame(63)
    assert packet_id(a, len(a)) == packet_id(b, len(b)) == zlib.crc32(udp)


def test_twin_captures_count_the_drops_its_queue_counts(tmp_path):
    # a 20 s twin of LE-SBCC (AIMD) against reno: every packet its queue toward rcv1 dropped is
    # one that left src for rcv1 and never left r1 toward it; the queue's own counter says how many
    tcp = ("reno",)
    t = peers.twin("lesbcc-aimd", 1, 20.0, tcp, "scheme-first", lead=2.0, records_dir=tmp_path, capture=True)
    assert t is not None
    sent, got = fd.read_pcap(tmp_path / "twin_src.pcap"), fd.read_pcap(tmp_path / "twin_rcv1.pcap")
    names = fd.twin_names(sent, tcp, "10.0.0.3")
    table = fd.flow_table(sent, got, (0.0, 1e9), names).set_index("flow")
    assert set(table.index) == {"mc:239.255.0.1", "reno"}
    # the same twin's queue counter, from a second build of the same scenario and seed
    sim = _twin_sim("lesbcc-aimd", tcp, 22.0)
    drops = sim.channel_stats(sim.channel("r1", "rcv1"))["drops_forced"]
    assert drops > 0
    # a packet still queued at the end is neither delivered nor dropped: at most a queue's worth
    assert 0 <= table["drops"].sum() - drops <= peers.QUEUE_PKTS
    # its own records, in the testbed source's files
    rtt = pd.read_csv(tmp_path / "source" / "lesbcc_rtt.csv")
    assert list(rtt.columns) == ["time_s", "time_ns", "sample_s", "srtt_s", "sigma_s", "used"]


def _twin_sim(scheme, tcp, until, lead=2.0):
    # the scenario peers.twin builds (scheme first, the TCP flows `lead` later), run to its end:
    # `until` seconds after the source's start
    from castlab.scenario import Scenario

    d = peers.twin_scenario(scheme, until - lead, tcp, "scheme-first", lead=lead)
    s = Scenario.from_dict(d)
    sim = s.build(1)
    sim.run(d["duration"])
    return sim


@pytest.mark.parametrize("scheme, files", [
    # the testbed roles' files and columns (net-peers' case directories)
    ("rlm", {"rx_rcv1/rlm_level.csv": ["time_s", "time_ns", "level"],
             "rx_rcv1/rlm_exp.csv": ["start_ns", "level", "outcome", "end_ns", "detect_ns"],
             "rx_rcv1/levels.csv": ["time_s", "time_ns", "agent", "level"]}),
    ("rlc", {"rx_rcv1/rlc_level.csv": ["time_s", "time_ns", "level"],
             "rx_rcv2/levels.csv": ["time_s", "time_ns", "agent", "level"]}),
    ("tfmcc", {"source/tfmcc_fb.csv": ["time_s", "time_ns", "receiver", "rate_bps", "loss_event_rate", "rtt_s",
                                       "round", "from_clr"],
               "source/tfmcc_rate.csv": ["time_s", "time_ns", "bps"]}),
])
def test_twin_records_are_the_testbed_roles_files(tmp_path, scheme, files):
    sim = _twin_sim(scheme, ("reno",), 15.0)
    twin_records.write_twin(sim, scheme, tmp_path)
    for f, cols in files.items():
        d = pd.read_csv(tmp_path / f)
        assert list(d.columns) == cols, f
    lv = tmp_path / "rx_rcv1" / "levels.csv"
    if lv.exists():
        # a role's driver has one agent: rcv1's levels only
        agents = set(pd.read_csv(lv)["agent"])
        assert agents == {sim.scenario_handles.receivers["rcv1"]}


def test_twin_records_refuse_a_scheme_without_roles():
    with pytest.raises(ValueError, match="no twin records"):
        twin_records.write_twin(None, "norm", None)


def test_read_pcap_refuses_what_is_not_a_capture(tmp_path):
    (tmp_path / "x.pcap").write_bytes(b"\x00" * 40)
    with pytest.raises(ValueError, match="not a nanosecond IPv4 pcap"):
        fd.read_pcap(tmp_path / "x.pcap")
    assert np.isnan(fd.train_frac(pd.DataFrame({"t_s": [], "bytes": []}), 1e6, (0, 1)))


def test_twin_hop_delay_sets_how_soon_an_ack_clocked_flow_refills_the_queue(tmp_path):
    # reno's segment answers a departure at rcv1's queue one round trip later: four link
    # crossings of hop_delay_s, the ACK's 52 bytes back at 1 Mb/s (0.416 ms) and the segment's
    # 1500 bytes at 100 Mb/s out (0.12 ms); serialised here (tbf_burst None), as the last hop's
    # token bucket would pass the ACK at once. The source starts with its receivers here (the
    # start-order ablation, source_delay_s 0), and its TCP without Linux's push ACKs (push
    # False): the set-up this median was derived for. With the testbed's order the median at hop 0
    # falls on a pair's second segment (0.66 ms); with push ACKs at 1 ms per link more of reno's
    # arrivals come right after a departure (60 % within SOON_S, against 38 %) and the median
    # falls on a pair's second segment too (0.18 ms)
    ack_and_segment = 52 * 8 / 1e6 + 1500 * 8 / 100e6
    # without hop_delay_s the twin has the testbed's delay per link, declared in its topology
    testbed = {link.delay_s for link in peers.topology().links} | {lan.delay_s for lan in peers.topology().lans}
    assert len(testbed) == 1
    for hop, given in ((0.001, {"hop_delay_s": 0.001}), (testbed.pop(), {})):
        d = tmp_path / f"hop{hop:g}"
        peers.twin("lesbcc-aimd", 1, 20.0, ("reno",), "scheme-first", lead=2.0, records_dir=d, capture=True,
                   tbf_burst=None, source_delay_s=0.0, push=False, **given)
        sent, got = fd.read_pcap(d / "twin_src.pcap"), fd.read_pcap(d / "twin_rcv1.pcap")
        t = fd.flow_table(sent, got, (5.0, 22.0), fd.twin_names(sent, ("reno",), "10.0.0.3"), hop_s=hop)
        phase = t.set_index("flow").loc["reno", "phase_p50_ms"]
        assert phase == pytest.approx((4 * hop + ack_and_segment) * 1e3, abs=0.05), (hop, phase)


def _frame(rows):
    # (t_s, flow, pid) rows as read_log's columns
    return pd.DataFrame({"t_s": [r[0] for r in rows], "flow": [r[1] for r in rows], "bytes": [1500] * len(rows),
                         "pid": [r[2] for r in rows]})


def test_a_repeated_id_is_delivered_where_the_fifo_could_deliver_it():
    # id 7 of flow z sent at 0.0 and again at 0.9, one arrival at 1.0. Packets p (sent 0.05) and
    # q (sent 0.85) of flow w left the same FIFO at 1.05 and 1.9: a copy sent at 0.9 would leave
    # after p, so the arrival at 1.0 is the copy of 0.0, and the later copy was dropped
    sent = _frame([(0.0, "z", 7), (0.05, "w", 1), (0.85, "w", 2), (0.9, "z", 7)])
    got = _frame([(1.0, "z", 7), (1.05, "w", 1), (1.9, "w", 2)])
    m = fd.match(sent, got).set_index("t_s")
    assert m.loc[0.0, "delivered"] and m.loc[0.0, "t_rx"] == 1.0
    assert not m.loc[0.9, "delivered"]
    # an arrival before any copy was sent belongs to a packet sent before the log began
    m2 = fd.match(_frame([(2.0, "z", 8)]), _frame([(1.0, "z", 8)]))
    assert not m2["delivered"].any()


def test_occupancy_rebuilds_a_drop_tail_queue_of_two():
    # A drop-tail queue of 2. x: A in 0.0 out 1.0; C at 0.2 and E at 1.6 meet it full (dropped);
    # F in 3.5 out 3.6; H at 3.9 never leaves, after the last delivered arrival (undecided).
    # y: B in 0.1 out 2.0; D and D2 at the same instant 1.5, D admitted (out 3.0), D2 dropped.
    # The queue is full over [0.1, 1.0) and [1.5, 2.0): 1.4 s of the 4 s span.
    sent = _frame([(0.0, "x", 1), (0.1, "y", 2), (0.2, "x", 3), (1.5, "y", 4), (1.5, "y", 5), (1.6, "x", 6),
                   (3.5, "x", 7), (3.9, "x", 8)])
    got = _frame([(1.0, "x", 1), (2.0, "y", 2), (3.0, "y", 4), (3.6, "x", 7)])
    occ = fd.occupancy(sent, got)
    assert list(occ["q"]) == [0, 1, 2, 1, 2, 2, 0, 0]
    assert list(occ["decided"]) == [True] * 7 + [False]
    t, link = fd.occupancy_table(occ, (0.0, 4.0), 2)
    assert link["full_time"] == pytest.approx(1.4 / 4)
    assert link["drops_seen_full"] == 1.0 and link["admitted_seen_full"] == 0.0
    # the mean length: A 1.0 s, B 1.9 s, D 1.5 s, F 0.1 s
    assert link["mean_q"] == pytest.approx((1.0 + 1.9 + 1.5 + 0.1) / 4)
    x, y = t.set_index("flow").loc["x"], t.set_index("flow").loc["y"]
    assert (x["packets"], x["drops"]) == (4, 2) and x["full_frac"] == 0.5
    assert x["full_index"] == pytest.approx(0.5 / 0.35)
    assert (x["drop_if_full"], x["drop_if_room"]) == (1.0, 0.0)
    assert (y["packets"], y["drops"], y["full_frac"]) == (3, 1, pytest.approx(1 / 3))
    # in the queue on average, and while it is full (A in the first full spell; B in both, D in the second)
    assert x["in_queue_mean"] == pytest.approx(1.1 / 4) and x["in_queue_full"] == pytest.approx(0.9 / 1.4)
    assert y["in_queue_mean"] == pytest.approx(3.4 / 4) and y["in_queue_full"] == pytest.approx(1.9 / 1.4)
    # y brought it to its limit twice (B, D), each spell lasting to the next departure (A at 1.0,
    # B at 2.0): all of F
    assert (y["fills"], x["fills"]) == (2, 0)
    assert y["fill_ms"] == pytest.approx(700.0) and y["full_part"] == pytest.approx(0.35) and x["full_part"] == 0


def test_occupancy_table_counts_how_a_flow_answers_its_own_departures():
    # z's departures at 10, 20, 30, 40 and 60 ms: 0.1 ms after the first one packet of z
    # arrives, 0.5 ms after the second two (a delayed ACK's pair), none within 2 ms of the others
    sent = _frame([(0.0, "z", 1), (0.0101, "z", 2), (0.0205, "z", 3), (0.0205, "z", 4), (0.050, "z", 5)])
    got = _frame([(0.010, "z", 1), (0.020, "z", 2), (0.030, "z", 3), (0.040, "z", 4), (0.060, "z", 5)])
    t, _ = fd.occupancy_table(fd.occupancy(sent, got), (0.0, 1.0), 50)
    z = t.set_index("flow").loc["z"]
    assert z["answer_one"] == pytest.approx(1 / 5) and z["answer_none"] == pytest.approx(3 / 5)


def test_occupancy_places_a_log_before_the_queue_by_its_delay():
    # the twin's capture at src is hop_s before the queue: a packet logged 1 ms before another's
    # departure reaches the queue after it
    sent = _frame([(0.0, "x", 1), (0.0095, "x", 2)])
    got = _frame([(0.010, "x", 1), (0.020, "x", 2)])
    assert list(fd.occupancy(sent, got)["q"]) == [0, 1]
    assert list(fd.occupancy(sent, got, hop_s=0.001)["q"]) == [0, 0]
