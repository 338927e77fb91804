"""The experiments' own random draws come from the named streams of
castlab.streams, in one place, with layouts frozen so that outputs keep their bytes."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from castlab.experiments.streams import STREAMS, Stream, rng
from castlab.streams import SEED_KIND_INDEX

EXPERIMENTS = Path(__file__).resolve().parents[2] / "python" / "castlab" / "experiments"


def test_no_experiment_seeds_numpy_by_itself():
    found = [f"{p.relative_to(EXPERIMENTS)}:{i}" for p in EXPERIMENTS.rglob("*.py") if p.name != "streams.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"default_rng|np\.random\.seed|RandomState", line)]
    assert not found, f"draw through castlab.streams.rng instead: {found}"


def test_frozen_layouts_give_the_recorded_entropy():
    # the entropy each experiment used when its outputs were recorded: changing it changes CSVs
    a = rng(7, "rlm-starts").uniform(size=4)
    assert np.array_equal(a, np.random.default_rng([7, 0x524C4D]).uniform(size=4))
    b = rng(7, "nlm-fig13-starts", 20).uniform(size=4)
    assert np.array_equal(b, np.random.default_rng([7, 20, 0x4E4C4D]).uniform(size=4))
    c = rng(7, "rainbow-file").integers(0, 256, 8)
    assert np.array_equal(c, np.random.default_rng(7).integers(0, 256, 8))


def test_streams_are_reproducible_and_indexed_ones_distinct():
    s = Stream("t", 99, SEED_KIND_INDEX, "test")
    e = [s.entropy(3, (i,)) for i in range(3)]
    assert e == [[3, 99, 0], [3, 99, 1], [3, 99, 2]]
    x1 = rng(5, "nlm-fig13-starts", 1).uniform(size=3)
    assert np.array_equal(x1, rng(5, "nlm-fig13-starts", 1).uniform(size=3))
    assert not np.array_equal(x1, rng(5, "nlm-fig13-starts", 2).uniform(size=3))
    assert len({st.kind for st in STREAMS.values()}) == len(STREAMS)


def test_unknown_stream_or_index_is_refused():
    with pytest.raises(ValueError, match="unknown random stream"):
        rng(1, "no-such-stream")
    with pytest.raises(ValueError, match="takes no index"):
        rng(1, "rlm-starts", 3)


def test_no_python_module_draws_outside_the_streams():
    """Every random draw in Python comes from castlab.streams: no other module seeds numpy's or
    the standard library's generators itself."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "python" / "castlab"
    bad = []
    for f in root.rglob("*.py"):
        if f.name == "streams.py":
            continue
        for k, line in enumerate(f.read_text().splitlines(), 1):
            if re.search(r"default_rng\(|np\.random\.(seed|rand|uniform|normal|choice)|^\s*import random\b|"
                         r"random\.Random\(", line):
                bad.append(f"{f.relative_to(root)}:{k}: {line.strip()}")
    assert not bad, bad
