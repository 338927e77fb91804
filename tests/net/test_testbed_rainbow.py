"""``net-rainbow`` in its quick form on a real testbed (root; skipped with the reason
elsewhere): Rainbow receivers fetch a RaptorQ-coded file through two user-space routers that
host the simulator's BCF router, beside a kernel TCP flow, and the simulated twin runs beside
it. The full run is ``castlab reproduce net-rainbow``."""

from __future__ import annotations

import pandas as pd
import pytest

from castlab.experiments.rainbow.net import run_net_rainbow


def test_net_rainbow_quick_decodes_through_bcf_routers(tmp_path):
    r = run_net_rainbow(tmp_path, 1, quick=True)
    if "skipped" in r.params:
        pytest.skip(r.params["skipped"])
    claims = {c.id: c for c in r.claims}
    assert set(claims) == {"all-decode", "overhead", "tcp-friendly", "completion-vs-sim", "share-vs-sim"}
    # the testbed's share over the twin's, from the window table both sides wrote
    w = pd.read_csv(tmp_path / "net_rainbow_window.csv").set_index("network")
    assert claims["share-vs-sim"].ours == pytest.approx(w.loc["real", "ratio"] / w.loc["sim", "ratio"], nan_ok=True)
    # every receiver decoded the very file, through the routers' breadcrumbs
    assert claims["all-decode"].holds, claims["all-decode"]
    rows = pd.read_csv(tmp_path / "net_rainbow_receivers.csv")
    assert set(rows["network"]) == {"real", "sim"} and rows["done"].all() and rows["identical"].all()
    # the routers took the replies and copied them: replies went out of r2 onto all three
    # receivers' links, while the source answered fewer requests than the receivers got symbols
    # (aggregation: one reply serves every breadcrumb of its label)
    got = int(rows.loc[rows["network"] == "real", "received"].sum())
    assert r.params["real"]["fountain"]["sent"] < got, (r.params["real"]["fountain"], got)
    assert r.params["routers"] == "user" and all(ln["delay_s"] > 0 for ln in r.params["links"])
