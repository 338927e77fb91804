"""One place per protocol: no protocol is named by more than LIMIT code files outside its own
places (tests/protocol_names.py says what those are), and every registered protocol is
measured."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import castlab._native as native

_spec = importlib.util.spec_from_file_location("protocol_names", Path(__file__).parents[1] / "protocol_names.py")
protocol_names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(protocol_names)


def test_no_protocol_is_named_outside_its_places_by_more_than_the_limit():
    over = {name: files for name, files in protocol_names.naming_files().items()
            if len(files) > protocol_names.LIMIT}
    assert not over, f"more than {protocol_names.LIMIT} files name these protocols: {over}"


def test_every_registered_protocol_is_measured():
    # TCP is every experiment's baseline and its name is a common word in the drivers; the CBR
    # sources and the measuring sink are every scenario's traffic and meter, registered for their
    # roles: none of them is measured.
    measured = {pat for pat, _ in protocol_names.PROTOCOLS.values()}
    for p in native.protocols():
        if p["name"] in ("tcp", "cbr", "sink"):
            continue
        assert any(re.fullmatch(pat, p["name"]) for pat in measured), p["name"]


def test_the_places_left_out_are_the_documented_ones():
    out = protocol_names.excluded
    for path in ["tests/protocols/test_rlm.py", "crates/castlab-sim/tests/rlm.rs", "crates/castlab-proto/src/tests/mod.rs",
                 "crates/castlab-sim/src/engine/tests.rs", "crates/castlab-sim/benches/protocols.rs",
                 "bench/soak_testbed.py", "docs/x.py", "examples/x.py", "python/castlab/experiments/rlm/topology.py",
                 "python/castlab/_registered.pyi", "python/castlab/functions.pyi"]:
        assert out(path), path
    for path in ["crates/castlab-core/src/headers.rs", "crates/castlab-net/src/router/mod.rs", "python/castlab/cli.py",
                 "python/castlab/testbed/topology.py", "crates/castlab-sim/src/engine/mod.rs",
                 "crates/castlab-proto/src/registry/mod.rs", "python/castlab/tests_helper.py",
                 "python/castlab/_registry.py", "python/castlab/net.pyi"]:
        assert not out(path), path
