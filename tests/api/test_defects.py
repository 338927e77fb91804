"""The defects a stress probe of the Python API found, each driven as the probe drove it.
Every call here used to abort, hang, silently cap or mislead."""

import math

import pytest

import castlab


def _pair():
    sim = castlab.Simulator(seed=1)
    for n in ("s", "d"):
        sim.add_node(n)
    sim.add_link("s", "d", 10e6, 0.01)
    return sim


@pytest.mark.parametrize("rate", [1e15, 2e13])
def test_a_rate_faster_than_one_packet_per_ns_is_rejected_not_a_hang(rate):
    # 1,000-byte packets at 1.6e13 b/s or more rounded the interval to 0 ns: run() never returned.
    sim = _pair()
    g = sim.add_group("s")
    with pytest.raises(ValueError, match="^rates_bps"):
        sim.add_layered_source("s", [g], [rate], packet_size=1000)
    with pytest.raises(ValueError, match="^rate_bps"):
        sim.add_cbr("s", "d", 9, rate, packet_size=1000)
    with pytest.raises(ValueError, match="^rates_bps"):
        sim.add_nlm_sender("s", g, [rate])
    with pytest.raises(ValueError, match="^initial_rate_bps"):
        sim.add_lesbcc_source("s", g, initial_rate_bps=rate)
    with pytest.raises(ValueError, match="^rate_bps"):
        sim.add_bcf_pgm_source("s", g, 10, rate)
    # the fastest rate accepted still runs (and ends)
    sim.add_cbr("s", "d", 9, 8e12, packet_size=1000, stop=1e-6)
    sim.run(0.1)


def test_a_tcp_flow_to_its_own_node_is_rejected():
    sim = _pair()
    with pytest.raises(ValueError, match="^dst"):
        sim.add_tcp_flow("s", "s")


def test_bcf_routers_attach_to_all_or_none():
    sim = _pair()
    sim.add_node("x")
    sim.attach_nak_aggregator("x")
    with pytest.raises(ValueError, match="^nodes"):
        sim.add_bcf_routers(["s", "d", "s"])
    with pytest.raises(ValueError, match="^nodes"):
        sim.add_bcf_routers(["s", "x"])  # x already has an extension
    assert sim.add_bcf_routers(["s", "d"]) == 2  # the corrected retry works: nothing was attached


def test_bcf_max_entries_is_bounded_and_not_reserved_up_front():
    sim = _pair()
    with pytest.raises(ValueError, match="^max_entries"):
        sim.add_bcf_routers(max_entries=10**9)
    assert sim.add_bcf_routers(max_entries=10**7) == 2


def test_run_beyond_the_clock_is_rejected_not_capped():
    sim = _pair()
    with pytest.raises(ValueError, match="^until"):
        sim.run(1e300)
    sim.run(1.0)
    assert sim.now == pytest.approx(1.0)


def test_windowed_loss_rejects_a_zero_window_and_does_not_wrap():
    sim = _pair()
    a = sim.add_sink("d", port=9)
    with pytest.raises(ValueError, match="^window"):
        sim.sink_worst_window_loss(a, 0.0)
    got = castlab.worst_window_loss([1, 2, 3], [2**64 - 1, 5, 5], [0, 0, 2**64 - 1], 1.0)
    assert got == pytest.approx(0.5)


def test_a_sink_that_received_nothing_has_no_loss_rate():
    sim = _pair()
    a = sim.add_sink("d", port=9, windows=[1.0])  # computed online
    b = sim.add_sink("d", port=10, record="arrivals")  # computed from the (empty) records
    sim.run(1.0)
    assert math.isnan(sim.sink_worst_window_loss(a, 1.0))
    assert math.isnan(sim.sink_worst_window_loss(b, 1.0))


def test_initial_window_is_bounded():
    sim = _pair()
    with pytest.raises(ValueError, match="^initial_window_segs"):
        sim.add_tcp_flow("s", "d", initial_window_segs=10**9)


@pytest.mark.parametrize("kw, field", [
    (dict(red_w_q=2.0), "red_w_q"),
    (dict(red_max_p=-1.0), "red_max_p"),
    (dict(red_min_th=20.0, red_max_th=10.0), "red_max_th"),
])
def test_red_errors_name_the_keyword_the_caller_wrote(kw, field):
    sim = _pair()
    with pytest.raises(ValueError, match=f"^{field}:"):
        sim.add_link("s", "d", 1e6, 0.01, queue="red", **kw)


def test_a_simulator_used_from_another_thread_raises_a_clean_error():
    import threading

    sim = _pair()
    caught = []

    def use():
        try:
            sim.add_node("x")
        except BaseException as e:  # the defect was a PanicException (a BaseException)
            caught.append(e)

    t = threading.Thread(target=use)
    t.start()
    t.join(timeout=10)
    assert len(caught) == 1 and type(caught[0]) is RuntimeError, caught
    assert "thread" in str(caught[0])
    sim.add_node("y")  # the owner thread still uses it; nothing was changed by the refused call
    with pytest.raises(ValueError, match="already exists"):
        sim.add_node("y")
    sim.add_node("x")
