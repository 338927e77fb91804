"""A link with a token bucket (`tbf_burst`, as Linux's tbf): the scenario keys, their checks,
and a packet leaving at once where a serialising link holds it for size / rate."""

import pytest

from castlab.experiments.tfmcc import flowdrops as fd
from castlab.scenario import Scenario, ScenarioError


def _scenario(**b1) -> dict:
    # 1000-byte packets 4 a second: the bucket (1600 bytes at 1 Mb/s) is full at every one
    return {"name": "tbf", "duration": 3, "nodes": ["src", "r1", "rcv"],
            "links": [{"name": "up", "a": "src", "b": "r1", "rate": 100e6, "delay": 0.0},
                      {"name": "b1", "a": "r1", "b": "rcv", "rate": 1e6, "delay": 0.0, **b1}],
            "sessions": [{"name": "m", "source": "src", "layers": 1, "base_rate": 32e3, "packet_size": 1000}],
            "receivers": [{"name": "rcv", "node": "rcv", "session": "m", "protocol": "rlm"}]}


def _hold_s(d: dict, tmp_path) -> list[float]:
    """How long each packet took from leaving src's link to leaving r1's toward rcv."""
    sim = Scenario.from_dict(d).build(1)
    sim.enable_pcap("src", "r1", tmp_path / "a.pcap")
    sim.enable_pcap("r1", "rcv", tmp_path / "b.pcap")
    sim.run(3.0)
    del sim  # its captures are complete once it is dropped
    m = fd.match(fd.read_pcap(tmp_path / "a.pcap"), fd.read_pcap(tmp_path / "b.pcap"))
    return list(m["t_rx"] - m["t_s"])


def test_a_conforming_packet_leaves_at_once_a_serialised_one_after_size_over_rate(tmp_path):
    tbf = _hold_s(_scenario(tbf_burst=1600), tmp_path)
    ser = _hold_s(_scenario(), tmp_path)
    # 3 s of 4 packets a second, less the first ones sent before the join reaches src
    assert len(tbf) == len(ser) >= 10
    assert max(abs(x) for x in tbf) < 1e-6
    # 1000 bytes at 1 Mb/s: 8 ms
    assert all(abs(x - 0.008) < 1e-6 for x in ser)


def test_a_bucket_smaller_than_the_largest_packet_is_an_error_naming_the_link():
    with pytest.raises(ScenarioError, match=r"'b1'.*1000 bytes from sessions\[0\] \(m\) plus tbf_overhead 14"):
        Scenario.from_dict(_scenario(tbf_burst=1013))
    Scenario.from_dict(_scenario(tbf_burst=1014))  # 1000 + 14 fits exactly
    with pytest.raises(ScenarioError, match="tbf_overhead 0"):
        Scenario.from_dict(_scenario(tbf_burst=999, tbf_overhead=0))


def test_tcp_segments_count_with_their_headers():
    d = _scenario(tbf_burst=1513)
    d["tcp"] = [{"name": "t", "src": "src", "dst": "rcv", "variant": "sack",
                 "config": {"mss_bytes": 1448, "header_bytes": 52}}]
    with pytest.raises(ScenarioError, match=r"1500 bytes from tcp\[0\] \(t\)"):
        Scenario.from_dict(d)
    d["links"][1]["tbf_burst"] = 1514
    Scenario.from_dict(d)


@pytest.mark.parametrize("keys, msg", [
    ({"tbf_overhead": 14}, "tbf_overhead without tbf_burst"),
    ({"tbf_burst": 0}, "out of range"),
    ({"tbf_burst": 1.5e3}, "an integer"),
    ({"tbf_burst": 1600, "tbf_overhead": -1}, "out of range"),
])
def test_bad_bucket_keys_are_errors(keys, msg):
    with pytest.raises(ScenarioError, match=msg):
        Scenario.from_dict(_scenario(**keys))


def test_a_link_without_a_bucket_keeps_its_canonical_form():
    links = Scenario.from_dict(_scenario()).to_dict()["links"]
    assert not any(k.startswith("tbf_") for l in links for k in l)
    b1 = Scenario.from_dict(_scenario(tbf_burst=1600)).to_dict()["links"][1]
    assert (b1["tbf_burst"], b1["tbf_overhead"]) == (1600, 14)


def test_the_bindings_check_the_bucket():
    import castlab

    sim = castlab.Simulator(seed=1)
    sim.add_node("a")
    sim.add_node("b")
    with pytest.raises(ValueError, match="tbf_burst"):
        sim.add_link("a", "b", 1e6, 0.0, tbf_burst=-5)
    with pytest.raises(ValueError, match="tbf_overhead"):
        sim.add_link("a", "b", 1e6, 0.0, tbf_burst=1600, tbf_overhead=-1)
