"""The CBR star through castlab's Python API, as a whole process (import included).

    python bench/star.py RECEIVERS SECONDS [--record summary|arrivals]

Same scenario as the engine bench's (c) and bench/ns2/cbr_star.tcl. Prints one line:
"events E forwarded F received R".
"""

import sys


def main() -> None:
    n, secs = int(sys.argv[1]), float(sys.argv[2])
    record = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--record" else "summary"
    from castlab import Simulator

    sim = Simulator(seed=1)
    for name in ("S", "R1", "R2"):
        sim.add_node(name)
    sim.add_link("S", "R1", 10e6, 0.010, queue_limit_pkts=20)
    sim.add_link("R1", "R2", 1.5e6, 0.010, queue_limit_pkts=20)
    g = sim.add_group("S")
    sim.add_layered_source("S", [g], [992e3], packet_size=1000)
    sinks = []
    for i in range(n):
        x = f"X{i}"
        sim.add_node(x)
        sim.add_link("R2", x, 10e6, 0.010, queue_limit_pkts=20)
        sinks.append(sim.add_sink(x, groups=[g], schedule=[(0.0, 1)], record=record))
    sim.run(secs)
    st = sim.engine_stats()
    received = sum(sim.sink_summary(a)["received"] for a in sinks)
    print(f"events {st['events']} forwarded {st['forwarded']} received {received}")


if __name__ == "__main__":
    main()
