"""A live user-space router under a flood (``castlab.testbed.flood``, short form): from one
host of the ``rlm1`` testbed, 600 valid IGMPv3 reports for fresh groups and sources, then
1,200 hostile frames of every kind (truncated, bad checksums, bad options, TTL 2, no Router
Alert, an off-link source, impossible sources, link-local and non-group addresses, random
bit flips), then 600 datagrams at the endpoints (PGM NAKs and NCFs of wrong lengths, a bad
checksum or another TSI at a PGM source; envelopes with a bad MAC, a forged epoch, another
session, no MAC or a cut header at the keyed stream's source), at 1,000 a second, while a
six-layer stream (1.008 Mb/s) crosses the router to another host. The router and both sources
keep running, the stream arrives whole, the table on the flooded link stops at its caps with
each refused join counted, and every hostile frame and datagram is counted under its kind,
where it lands. The issue's full forms are commands (see the module's text).

Builds its own testbed (namespaces ``cl-<name>-*``, the pid in the name) and removes it on
success, failure and interrupt; the flood stays on the testbed's links. Skips with the reason
without root, ``ip`` or ``tc``.
"""

from __future__ import annotations

import pytest

from castlab.testbed import available
from castlab.testbed import flood

REASON = available()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"testbed unavailable: {REASON}")

REPORTS, HOSTILE, ENDPOINT = 600, 1200, 600
# the router's defaults (IgmpConfig): groups and (S, G) memberships per interface
MAX_GROUPS, MAX_SOURCES = 256, 1024
# IGMP the hosts' kernels send of themselves while the counters run (the sink's leaves of its
# six groups as it stops, answers to the router's queries): frames counted beside the flood's
KERNEL_IGMP_SLACK = 40


def test_a_flood_of_reports_and_hostile_frames_costs_the_stream_nothing(tmp_path):
    lines: list[str] = []
    res = flood.run(REPORTS, HOSTILE, 1000.0, endpoint=ENDPOINT, seed=3, after_s=1.0, out=tmp_path,
                    say=lines.append)
    report = "\n".join(lines)
    assert res["router_alive"] and not res["router_restarts"], report
    assert res["src_exit"] == 0 and res["sink_exit"] == 0 and res["pgm_exit"] == 0, (res["sink_out"], res["pgm_out"])
    # the stream, whole
    assert res["stream_lost"] == 0 and res["stream_received"] == res["stream_sent"] > 300, report
    # every frame reached the router (none lost in its socket), and each landed in one counter
    n = REPORTS + HOSTILE
    assert res["hostile_port"]["rx_kernel_drops"] == 0, report
    # ... and the endpoint datagrams crossed it (with a few frames of the host's own: ARP, the
    # IGMP of the join that captured a genuine datagram)
    assert n + ENDPOINT <= res["hostile_port_rx"] <= n + ENDPOINT + 10, report
    assert n <= res["frames_counted"] <= n + KERNEL_IGMP_SLACK, report
    c = res["counters"]
    # the flooded link's table at its caps, every refused join counted
    assert res["hostile_port"]["igmp_groups"] == MAX_GROUPS, report
    assert res["hostile_port"]["igmp_sources"] == MAX_SOURCES, report
    assert c["igmp_groups_full"] > 0 and c["igmp_sources_full"] > 0, report
    # every membership asked for is in the table (the final stats hold it, bounded by the cap)
    # or was refused once, as groups full or as sources full
    assert res["hostile_port_groups"] == MAX_GROUPS and not res["periodic_tables"]
    held = res["hostile_port_any_source"] + MAX_SOURCES
    assert c["igmp_groups_full"] + c["igmp_sources_full"] == flood.wanted_memberships(REPORTS) - held, report
    sent = res["sent"]
    assert sent["reports"] == REPORTS and sum(sent.values()) == n + ENDPOINT
    assert all(sent.get(k, 0) > 0 for k in (*flood.HOSTILE, *flood.ENDPOINT)), sent
    # the endpoints: each datagram counted once, under its kind, by the driver it reached
    for where in ("source", "pgm"):
        got = res["endpoint_stats"][where]
        for counter, k in res["endpoint_expected"][where].items():
            assert got[counter] == k, (where, counter, report)
        rejected = sum(got[c] for c in ("malformed", "foreign_session", "unauthenticated", "bad_mac", "wrong_source",
                                        "wrong_size", "misdirected", "stale_epoch"))
        assert rejected == sum(res["endpoint_expected"][where].values()), (where, got)
    mutated = sent["mutated"]
    for counter, k in res["expected"].items():
        if counter in flood.MUTATION_COUNTERS:
            assert k <= c[counter] <= k + mutated, (counter, report)
        else:
            assert c[counter] == k, (counter, report)
    # a flipped bit lands in one of these (a header bit breaks the IP header's consistency or
    # checksum, a message bit IGMP's checksum)
    extra = sum(c.get(k, 0) - res["expected"].get(k, 0) for k in flood.MUTATION_COUNTERS)
    assert extra == mutated, report
