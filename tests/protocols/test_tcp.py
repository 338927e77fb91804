"""TCP from Python: flows, traces, input checks, throughput against the formulas, and (where
Debian's ns2 is installed) goodput against ns-2 on the same dumbbell."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import castlab
from castlab.experiments.tcp.scenarios import formula_run
from castlab.metrics import padhye_throughput, rate_series

NS2_SCRIPT = Path(__file__).parents[1] / "ns2" / "dumbbell.tcl"


def _line(loss_ab=0.0, queue=1000, seed=1):
    """s --(10 Mb/s, 20 ms)-- d"""
    sim = castlab.Simulator(seed=seed)
    sim.add_node("s")
    sim.add_node("d")
    sim.add_link("s", "d", 10e6, 0.020, queue_limit_pkts=queue, loss_ab=loss_ab)
    return sim


def _raises(field, fn, *a, **kw):
    with pytest.raises(ValueError) as e:
        fn(*a, **kw)
    assert str(e.value).startswith(f"{field}:"), str(e.value)


def test_traces_are_readable_and_consistent():
    sim = _line(loss_ab=0.01)
    a = sim.add_tcp_flow("s", "d", variant="reno", min_rto=0.2)
    sim.run(30.0)
    tr, st = sim.tcp_trace(a), sim.tcp_stats(a)
    groups = [("cc_time_ns", "cwnd_bytes", "ssthresh_bytes"), ("rtt_time_ns", "rtt_ns", "srtt_ns", "rto_ns"),
              ("retx_time_ns", "retx_seq", "retx_kind"), ("timeout_time_ns", "timeout_rto_ns"),
              ("ack_time_ns", "acked_bytes"), ("rx_time_ns", "rx_bytes")]
    for g in groups:
        assert len({len(tr[k]) for k in g}) == 1, g
        assert np.all(np.diff(tr[g[0]].astype(np.int64)) >= 0), f"{g[0]} not sorted"
        assert isinstance(tr[g[1]], np.ndarray)
    # counters and traces tell the same story
    assert len(tr["retx_time_ns"]) == st["retransmissions"] > 0
    assert len(tr["timeout_time_ns"]) == st["timeouts"]
    assert np.sum(tr["retx_kind"] == 1) == st["fast_retransmits"] > 0
    assert set(np.unique(tr["retx_kind"])) <= {1, 3, 4}, "Reno has no partial-ACK retransmissions"
    # cumulative series end at the current state
    assert tr["acked_bytes"][-1] == st["snd_una"] and np.all(np.diff(tr["acked_bytes"].astype(np.int64)) > 0)
    assert tr["rx_bytes"][-1] == st["received_bytes"] >= st["snd_una"]
    # ssthresh was cut at least once; cwnd halves show up in the trace
    assert tr["ssthresh_bytes"].min() < 1 << 30 and tr["cwnd_bytes"].min() <= 2 * 1000
    # The smallest RTT sample is the empty path's: 2 x 20 ms propagation + 1040 B and 40 B
    # serialised at 10 Mb/s (0.832 ms + 0.032 ms) = 40.864 ms.
    assert tr["rtt_ns"].min() == pytest.approx(40_864_000, abs=2)
    assert np.all(tr["rtt_ns"] >= 40_864_000 - 2)
    # throughput over time from the acked series never exceeds the payload share of the link
    t, r = rate_series(tr["ack_time_ns"], tr["acked_bytes"], 1.0, t_end_s=30.0)
    assert len(t) == 30 and r.max() <= 10e6 * 1000 / 1040 * 1.01
    assert st["variant"] == "reno" and st["sink"] == a - 1 and st["mss_bytes"] == 1000


def test_newreno_partial_acks_and_a_fixed_transfer():
    sim = _line(loss_ab=0.03, seed=5)
    a = sim.add_tcp_flow("s", "d", variant="newreno", transfer_bytes=500_500, min_rto=0.2)
    sim.run(120.0)
    st, tr = sim.tcp_stats(a), sim.tcp_trace(a)
    assert st["received_bytes"] == 500_500 and st["snd_una"] == 500_500
    assert st["completed_at"] is not None and st["fin_at"] is not None and st["fin_at"] < st["completed_at"]
    assert st["variant"] == "newreno" and st["retransmissions"] > 0
    assert 2 in set(tr["retx_kind"]), "NewReno retransmits on partial ACKs"


def test_same_seed_same_trace_other_seed_differs():
    def run(seed):
        sim = _line(loss_ab=0.02, seed=seed)
        a = sim.add_tcp_flow("s", "d")
        sim.run(20.0)
        return sim.tcp_trace(a)
    x, y, z = run(3), run(3), run(4)
    assert all(np.array_equal(x[k], y[k]) for k in x)
    assert not np.array_equal(x["retx_seq"], z["retx_seq"])


def test_bad_input_names_the_field_and_adds_nothing():
    sim = _line()
    _raises("src", sim.add_tcp_flow, "nowhere", "d")
    _raises("dst", sim.add_tcp_flow, "s", "nowhere")
    _raises("variant", sim.add_tcp_flow, "s", "d", variant="vegas")
    _raises("mss_bytes", sim.add_tcp_flow, "s", "d", mss_bytes=0)
    _raises("mss_bytes", sim.add_tcp_flow, "s", "d", mss_bytes=-5)
    _raises("header_bytes", sim.add_tcp_flow, "s", "d", header_bytes=-1)
    _raises("start", sim.add_tcp_flow, "s", "d", start=-1.0)
    _raises("stop", sim.add_tcp_flow, "s", "d", start=5.0, stop=1.0)
    _raises("min_rto", sim.add_tcp_flow, "s", "d", min_rto=-0.1)
    _raises("initial_rto", sim.add_tcp_flow, "s", "d", initial_rto=0.0)
    _raises("max_rto", sim.add_tcp_flow, "s", "d", min_rto=2.0, max_rto=1.0)
    _raises("initial_window_segs", sim.add_tcp_flow, "s", "d", initial_window_segs=0)
    _raises("rwnd_bytes", sim.add_tcp_flow, "s", "d", rwnd_bytes=500)
    _raises("rwnd_bytes", sim.add_tcp_flow, "s", "d", rwnd_bytes=-1)
    _raises("transfer_bytes", sim.add_tcp_flow, "s", "d", transfer_bytes=0)
    _raises("port", sim.add_tcp_flow, "s", "d", port=70000)
    _raises("flow", sim.add_tcp_flow, "s", "d", flow=-1)
    _raises("initial_ssthresh_bytes", sim.add_tcp_flow, "s", "d", initial_ssthresh_bytes=0)
    _raises("dupack_threshold", sim.add_tcp_flow, "s", "d", dupack_threshold=0)
    _raises("delayed_ack_timeout", sim.add_tcp_flow, "s", "d", delayed_ack_timeout=0.0)
    # nothing was added: the first flow gets sink 0 and sender 1
    a = sim.add_tcp_flow("s", "d", port=80)
    assert a == 1 and sim.tcp_stats(a)["sink"] == 0
    _raises("port", sim.add_tcp_flow, "s", "d", port=80)  # in use: still nothing added
    sink = sim.add_sink("d", port=9)
    assert sink == 2
    _raises("agent", sim.tcp_trace, sink)  # a measuring sink is not a TCP sender
    _raises("agent", sim.tcp_stats, 0)  # nor is the TCP sink
    _raises("agent", sim.tcp_stats, 99)
    _raises("agent", sim.tcp_stats, -1)
    sim.run(5.0)
    _raises("start", sim.add_tcp_flow, "s", "d", start=1.0)
    # the run carries on
    b = sim.add_tcp_flow("s", "d", start=5.0, stop=8.0)
    sim.run(10.0)
    assert sim.tcp_stats(b)["received_bytes"] > 0 and sim.tcp_stats(a)["received_bytes"] > 0
    assert sim.conservation()["holds"]


@pytest.mark.parametrize("p", [0.005, 0.01, 0.02, 0.05])
def test_reno_throughput_within_the_padhye_band(p):
    # One Reno flow, fixed ~100 ms RTT, Bernoulli loss p on the data direction, no queue drops.
    # The band: within 20 % of Padhye's formula for p in 0.5-5 % (the reason is in
    # castlab/experiments/tcp/figures.py: Bernoulli losses end in timeouts less often than the model's
    # correlated-loss rounds, so it underestimates by ~10-15 % here).
    r = formula_run(p, seed=11, duration=500.0, warmup=20.0)
    assert r["queue_drops"] == 0
    assert r["measured_loss"] == pytest.approx(p, rel=0.15)
    assert r["rtt_s"] == pytest.approx(0.1 + 1040 * 8 / 100e6 + 40 * 8 / 100e6, rel=1e-3)
    pad = padhye_throughput(1, r["rtt_s"], p, r["t_rto_s"])
    assert abs(pad / r["send_rate_pps"] - 1) <= 0.20, (p, r)
    # the simple formula, which ignores timeouts, is never below the measured rate by more than 10 %
    assert 1.22 / (r["rtt_s"] * p**0.5) >= 0.9 * r["send_rate_pps"]


def test_reproduce_quick_writes_data_plots_and_computed_claims(tmp_path):
    for name, files in [("tcp-formula", ["formula.csv", "formula.png", "formula.svg"]),
                        ("tcp-fairness", ["fairness.csv", "fairness_runs.csv", "fairness.png", "fairness.svg"])]:
        out = tmp_path / name
        r = subprocess.run([sys.executable, "-m", "castlab", "reproduce", name, "--quick", "--out", str(out)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        s = json.loads((out / "summary.json").read_text())
        assert s["experiment"] == name and s["claims"]
        assert all(isinstance(c["holds"], bool) for c in s["claims"])
        for f in files:
            assert (out / f).stat().st_size > 100, f
    formula = json.loads((tmp_path / "tcp-formula" / "summary.json").read_text())
    assert {c["id"]: c["holds"] for c in formula["claims"]}["padhye-band"]


# ------------------------------------------------------------------------------------------
# Optional: castlab against ns-2 (Debian package ns2) on the same dumbbell.
# ------------------------------------------------------------------------------------------

def _castlab_dumbbell(variant, flows, queue, warm, end):
    sim = castlab.Simulator(seed=1)
    sim.add_node("r1")
    sim.add_node("r2")
    sim.add_link("r1", "r2", 10e6, 0.020, queue_limit_pkts=queue)
    senders = []
    for i in range(flows):
        sim.add_node(f"s{i}")
        sim.add_node(f"d{i}")
        sim.add_link(f"s{i}", "r1", 100e6, 0.001, queue_limit_pkts=10_000)
        sim.add_link("r2", f"d{i}", 100e6, 0.001, queue_limit_pkts=10_000)
        senders.append(sim.add_tcp_flow(f"s{i}", f"d{i}", variant=variant, start=0.5 * i))
    sim.run(warm)
    before = [sim.tcp_stats(a)["snd_una"] for a in senders]
    sim.run(end)
    return [(sim.tcp_stats(a)["snd_una"] - b) // 1000 for a, b in zip(senders, before)]


def _ns2_dumbbell(variant, flows, queue, warm, end):
    ns_variant = {"reno": "Reno", "newreno": "Newreno"}[variant]
    r = subprocess.run(["ns", str(NS2_SCRIPT), ns_variant, str(flows), str(queue), str(warm), str(end)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("flow ")]
    assert len(rows) == flows, r.stdout
    return [int(x[3]) - int(x[2]) for x in rows]


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install ns2); "
                    "the castlab-vs-ns-2 goodput comparison needs the `ns` command")
@pytest.mark.parametrize("variant", ["reno", "newreno"])
@pytest.mark.parametrize("flows,queue", [(2, 20), (8, 30)])
def test_goodput_matches_ns2(variant, flows, queue):
    # Same dumbbell, same TCP parameters (tests/ns2/dumbbell.tcl sets ns-2's to castlab's
    # defaults); the queue is below one bandwidth-delay product (~53 packets), so the sawtooth
    # leaves the link idle at times and the goodput depends on the TCP dynamics. Aggregate
    # goodput (segments acknowledged from 10 s to 60 s) must agree within 5 %; per-flow splits
    # are not compared (DropTail phase effects make them sensitive to timing details).
    ns = _ns2_dumbbell(variant, flows, queue, 10, 60)
    ours = _castlab_dumbbell(variant, flows, queue, 10.0, 60.0)
    assert sum(ns) > 0.8 * 50 * 10e6 / 8 / 1040, ns
    assert sum(ours) == pytest.approx(sum(ns), rel=0.05), (ours, ns)


def _castlab_dumbbell_delack(flows, queue, warm, end):
    """The dumbbell with delayed ACKs at the sinks: per flow (segments acknowledged, ACKs sent)
    over (warm, end]."""
    sim = castlab.Simulator(seed=1)
    sim.add_node("r1")
    sim.add_node("r2")
    sim.add_link("r1", "r2", 10e6, 0.020, queue_limit_pkts=queue)
    senders = []
    for i in range(flows):
        sim.add_node(f"s{i}")
        sim.add_node(f"d{i}")
        sim.add_link(f"s{i}", "r1", 100e6, 0.001, queue_limit_pkts=10_000)
        sim.add_link("r2", f"d{i}", 100e6, 0.001, queue_limit_pkts=10_000)
        senders.append(sim.add_tcp_flow(f"s{i}", f"d{i}", variant="newreno", start=0.5 * i, delayed_ack=True))
    sim.run(warm)
    before = [sim.tcp_stats(a) for a in senders]
    sim.run(end)
    after = [sim.tcp_stats(a) for a in senders]
    return [((y["snd_una"] - x["snd_una"]) // 1000, y["sink_acks_sent"] - x["sink_acks_sent"])
            for x, y in zip(before, after)]


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install ns2); "
                    "the delayed-ACK comparison needs the `ns` command")
@pytest.mark.parametrize("flows,queue", [(2, 20), (8, 30)])
def test_delayed_acks_match_ns2_delacksink(flows, queue):
    """Delayed ACKs (RFC 5681 §4.2: an ACK for at least every second full segment, at most
    200 ms late, at once for an out-of-order segment) beside ns-2's Agent/TCPSink/DelAck with
    the same 200 ms timer, NewReno senders, over (10, 60] s. Rules fixed before castlab's
    numbers were looked at: aggregate goodput within 5 % of ns-2's (as without delayed ACKs),
    and ACKs per acknowledged segment within 10 % of ns-2's (ns-2 counts the ACKs its senders
    receive; the reverse path loses none, so they are the ACKs its sinks send)."""
    r = subprocess.run(["ns", str(NS2_SCRIPT), "Newreno", str(flows), str(queue), "10", "60", "TCPSink/DelAck"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [[int(v) for v in line.split()[2:6]] for line in r.stdout.splitlines() if line.startswith("flow ")]
    assert len(rows) == flows, r.stdout
    ns_segs = sum(x[1] - x[0] for x in rows)
    ns_acks = sum(x[3] - x[2] for x in rows)
    ours = _castlab_dumbbell_delack(flows, queue, 10.0, 60.0)
    our_segs, our_acks = sum(x[0] for x in ours), sum(x[1] for x in ours)
    assert ns_segs > 0.8 * 50 * 10e6 / 8 / 1040 and ns_acks < 0.75 * ns_segs, (ns_segs, ns_acks)
    assert our_segs == pytest.approx(ns_segs, rel=0.05), (ours, rows)
    assert our_acks / our_segs == pytest.approx(ns_acks / ns_segs, rel=0.10), (our_acks, our_segs, ns_acks, ns_segs)


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install ns2); "
                    "the 100-flow comparison needs the `ns` command")
def test_100_newreno_flows_agree_with_ns2_counter_by_counter():
    """100 NewReno flows on the 10 Mb/s dumbbell with a 20-packet DropTail queue, castlab beside
    ns-2.35 (tests/ns2/tcp100_compare.py), seeds 4 and 5, counters over (20, 60] s, medians.

    The bands were fixed after the exploratory runs of the driver on seeds 1-3 (the table in
    docs/fidelity/tcp.md) and before this test's seeds were ever run:
    - goodput within 2 % of ns-2's: both should fill the link; without Limited Transmit
      castlab was 6.8 % under (8.97 against 9.62 Mb/s);
    - timeouts at most 4x ns-2's: Limited Transmit leaves castlab at about 2.5x at this queue
      (castlab takes RTT samples from timestamps where ns-2 keeps a backed-off RTO under
      Karn's rule); without it castlab had 13x;
    - segments delivered again at most 2x ns-2's + 20: go-back-N after a timeout resends what
      the sink holds, so this follows the timeouts (80 against 0 before);
    - retransmissions between 0.5x and 2x ns-2's: every retransmission repairs a drop in both,
      castlab drops about 1.5x as many (docs/fidelity/tcp.md says what is known of why); this
      band only records that the gap has not grown.
    """
    sys.path.insert(0, str(Path(__file__).parents[1] / "ns2"))
    import tcp100_compare as T

    runs = {"castlab": [], "ns-2": []}
    for seed in (4, 5):
        runs["castlab"].append(T.run_castlab("newreno", 100, 20, 20.0, 60.0, seed))
        runs["ns-2"].append(T.run_ns2("newreno", 100, 20, 20.0, 60.0, seed))
    med = {s: {k: float(np.median([r[k] for r in rs])) for k in T.COLS} for s, rs in runs.items()}
    ours, ns = med["castlab"], med["ns-2"]
    assert ns["goodput_mbps"] > 9.0, ns
    assert ours["goodput_mbps"] == pytest.approx(ns["goodput_mbps"], rel=0.02), med
    assert ours["timeouts"] <= 4 * ns["timeouts"], med
    assert ours["delivered_again"] <= 2 * ns["delivered_again"] + 20, med
    assert 0.5 * ns["retransmissions"] <= ours["retransmissions"] <= 2 * ns["retransmissions"], med


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (Debian: apt-get install ns2); "
                    "the SACK comparison needs the `ns` command")
def test_100_sack_flows_agree_with_ns2_sack1_counter_by_counter():
    """100 SACK flows (RFC 2018 blocks, RFC 6675 recovery) beside ns-2.35's Agent/TCP/Sack1 with
    TCPSink/Sack1 on the dumbbell of the NewReno comparison above (20-packet DropTail queue),
    seeds 4 and 5, counters over (20, 60] s, medians.

    The bands were fixed after exploratory runs on seeds 1-3 (docs/fidelity/tcp.md, "SACK
    against ns-2") and before this test's seeds were run:
    - goodput within 2 % of ns-2's;
    - timeouts at most 2x ns-2's: SACK recovery repairs several losses a window without the
      timer in both simulators (castlab's NewReno needs 2x ns-2's NewReno timeouts here);
    - segments delivered again at most 2x ns-2's + 20: nothing SACKed is sent again;
    - retransmissions between 0.5x and 2x ns-2's, as for NewReno (castlab drops more).
    """
    sys.path.insert(0, str(Path(__file__).parents[1] / "ns2"))
    import tcp100_compare as T

    runs = {"castlab": [], "ns-2": []}
    for seed in (4, 5):
        runs["castlab"].append(T.run_castlab("sack", 100, 20, 20.0, 60.0, seed))
        runs["ns-2"].append(T.run_ns2("sack", 100, 20, 20.0, 60.0, seed))
    med = {s: {k: float(np.median([r[k] for r in rs])) for k in T.COLS} for s, rs in runs.items()}
    ours, ns = med["castlab"], med["ns-2"]
    assert ns["goodput_mbps"] > 9.0, ns
    assert ours["goodput_mbps"] == pytest.approx(ns["goodput_mbps"], rel=0.02), med
    assert ours["timeouts"] <= 2 * ns["timeouts"], med
    assert ours["delivered_again"] <= 2 * ns["delivered_again"] + 20, med
    assert 0.5 * ns["retransmissions"] <= ours["retransmissions"] <= 2 * ns["retransmissions"], med
