"""`Simulator.run` runs in slices, sees Ctrl-C between them, and slicing
does not change results."""

import hashlib
import signal
import subprocess
import sys
import time

import castlab


def _fingerprint(tree, seed, steps):
    sim = tree(seed)
    groups = [sim.add_group("s") for _ in range(4)]
    sim.add_layered_source("s", groups, [100e3, 200e3, 400e3, 800e3])
    sinks = [sim.add_sink("a", groups=groups, schedule=[(1.0, 4), (20.0, 2)], record="arrivals"),
             sim.add_sink("b", groups=groups, schedule=[(2.0, 3)], record="arrivals")]
    for t in steps:
        sim.run(t)
    h = hashlib.sha256()
    for s in sinks:
        for d in (sim.sink_arrivals(s), sim.sink_losses(s)):
            for k in sorted(d):
                h.update(d[k].tobytes())
    return h.hexdigest()


def test_results_do_not_depend_on_how_the_run_is_cut(tree):
    whole = _fingerprint(tree, 5, [40.0])
    # 1,000 calls of 40 ms each, including boundaries that fall exactly on events' times
    pieces = _fingerprint(tree, 5, [round(0.04 * i, 6) for i in range(1, 1001)])
    assert whole == pieces
    assert whole != _fingerprint(tree, 6, [40.0])


_LONG_RUN = """
import sys, castlab
sim = castlab.Simulator(seed=1)
for n in ("a", "b"):
    sim.add_node(n)
sim.add_link("a", "b", 100e6, 0.001, queue_limit_pkts=100)
sim.add_sink("b", port=9)
sim.add_cbr("a", "b", 9, 50e6, packet_size=1000, start=0.0, stop=1e6)
print("started", flush=True)
try:
    sim.run(1e6)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def test_sigint_stops_a_long_run_within_a_second():
    p = subprocess.Popen([sys.executable, "-c", _LONG_RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "started"
        time.sleep(0.5)  # well inside sim.run (the whole run would take many minutes)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 3, (out, err)
    assert out.strip() == "interrupted"
    assert took < 1.0, f"took {took:.2f} s to stop"
