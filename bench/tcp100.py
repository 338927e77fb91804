"""100 NewReno flows on the 10 Mb/s dumbbell through castlab's Python API, as a whole process
(import included), beside tests/ns2/dumbbell100.tcl in bench/compare.py.

    python bench/tcp100.py FLOWS QUEUE SECONDS

Access links 100 Mb/s 1 ms, bottleneck 10 Mb/s 20 ms DropTail QUEUE, flow i starting at
i * 5 / FLOWS s (as dumbbell100.tcl with STARTS_FILE "-"). Prints one line:
"events E forwarded F goodput_mbps G".
"""

import sys


def main() -> None:
    flows, queue, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    from castlab import Simulator

    sim = Simulator(seed=1)
    sim.add_node("r1")
    sim.add_node("r2")
    sim.add_link("r1", "r2", 10e6, 0.020, queue_limit_pkts=queue)
    senders = []
    for i in range(flows):
        sim.add_node(f"s{i}")
        sim.add_node(f"d{i}")
        sim.add_link(f"s{i}", "r1", 100e6, 0.001, queue_limit_pkts=10_000)
        sim.add_link("r2", f"d{i}", 100e6, 0.001, queue_limit_pkts=10_000)
        senders.append(sim.add_tcp_flow(f"s{i}", f"d{i}", variant="newreno", start=5.0 * i / flows))
    sim.run(secs)
    st = sim.engine_stats()
    good = sum(sim.tcp_stats(a)["snd_una"] for a in senders) * 8 / secs / 1e6
    print(f"events {st['events']} forwarded {st['forwarded']} goodput_mbps {good:.3f}")


if __name__ == "__main__":
    main()
