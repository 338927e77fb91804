"""Rainbow's `castlab net` roles (Yano and McCanne §III) as separate processes over loopback
inside a namespace the test creates and deletes (skipped, with the reason, without root):
a receiver fetches a RaptorQ-coded file from the fountain source with BCF requests, and
decodes it from the symbol bytes the replies carry. No router here: the source's replies, addressed to the
request's sender, go straight to it (the testbed's run through BCF routers is in
test_testbed_rainbow.py)."""

from __future__ import annotations

import json
import signal
import time

from test_net import netns, roles, status_lines  # noqa: F401  (fixtures)


def test_rainbow_receiver_decodes_the_file_from_the_fountain_source(netns, roles, tmp_path):  # noqa: F811
    file_words = ["--file_bytes", "20000", "--file_seed", "7"]
    rx = roles(netns, "rainbow-receiver", "--addr", "127.0.0.2", "--node", "1", "--duration", "60",
               "--out", str(tmp_path / "rx"), *file_words)
    # a receiver told another seed: the bytes it decodes are the ones the packets carried (the
    # source's file), so they are not the file it was told to expect
    other = roles(netns, "rainbow-receiver", "--addr", "127.0.0.3", "--node", "2", "--duration", "60",
                  "--out", str(tmp_path / "other"), "--file_bytes", "20000", "--file_seed", "8")
    rx.ready()
    other.ready()
    src = roles(netns, "rainbow-source", "--duration", "60", "--host", "1=127.0.0.2", "--host", "2=127.0.0.3",
                "--out", str(tmp_path / "src"), *file_words)
    src.ready()
    deadline = time.monotonic() + 30
    for r in (rx, other):
        while not any("done=" in line and "done=no" not in line for line in status_lines(r.out, "rainbow-receiver")):
            assert r.p.poll() is None and src.p.poll() is None, r.out + src.out
            assert time.monotonic() < deadline, r.out + src.out
            time.sleep(0.1)
    for r in (rx, other, src):
        r.signal(signal.SIGTERM)
    rx_out, other_out, src_out = rx.wait(30), other.wait(30), src.wait(30)
    assert rx.p.returncode == 0 and other.p.returncode == 0 and src.p.returncode == 0, rx_out + other_out + src_out
    counts = json.loads((tmp_path / "rx" / "rainbow_counts.json").read_text())
    k = -(-20000 // 416)  # RaptorQ source symbols of 416 bytes: the net roles' default symbol size
    assert counts["done"] is True and counts["matches_source"] is True, counts
    assert counts["needed"] == k and counts["without_bytes"] == 0, counts
    assert k <= counts["distinct"] <= k + 3, counts  # nothing lost on loopback: K and RaptorQ's few extra
    wrong = json.loads((tmp_path / "other" / "rainbow_counts.json").read_text())
    assert wrong["done"] is True and wrong["matches_source"] is False, wrong
    fs = json.loads((tmp_path / "src" / "fountain_stats.json").read_text())
    assert fs["requests"] >= counts["received"] + wrong["received"] and fs["block_symbols"] == k, fs
