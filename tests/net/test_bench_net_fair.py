"""The bench scripts of the testbed's full forms, on records written here by hand (no testbed):
``bench/net_fair.py``'s rerun of a selection of cases in a full run's seed table, and
``bench/tfmcc_climb.py``'s reading of TFMCC's climb from the rate floor beside RFC 4654's bound.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import net_fair  # noqa: E402
import tfmcc_climb  # noqa: E402


def _seed_table(where: Path) -> None:
    rows = [{"scheme": n, "label": n, "order": o, "duration_s": 180.0, "skipped": "", "share": s}
            for (n, o, s) in [("tfmcc", "scheme-first", 0.04), ("uftp", "scheme-first", 0.3),
                              ("tfmcc", "tcp-first", 0.03), ("uftp", "tcp-first", 0.0)]]
    pd.DataFrame(rows).to_csv(where / "peers.csv", index=False)
    wins = [{"scheme": r["scheme"], "order": r["order"], "side": "testbed", "window": k,
             "window_start_s": 30.0 * k, "share": r["share"]} for r in rows for k in range(2)]
    pd.DataFrame(wins).to_csv(where / "windows.csv", index=False)
    for r in rows:
        d = where / r["order"] / r["scheme"]
        d.mkdir(parents=True)
        (d / "case.json").write_text(f'{{"old": {r["share"]}}}')


def test_rerun_replaces_only_the_selected_cases_rows_windows_and_directories(tmp_path, monkeypatch):
    from castlab.experiments.tfmcc import peers

    where = tmp_path / "seed-2"
    where.mkdir()
    _seed_table(where)
    calls = []

    def table(out, seed, duration, schemes, tcp, tb=None, orders=peers.ORDERS, lead=peers.LEAD_S):
        calls.append((seed, duration, list(schemes), tuple(orders)))
        rows = [{"scheme": n, "label": n, "order": o, "duration_s": duration, "skipped": "", "share": 0.25,
                 "lead_s": 11.0} for o in orders for n in schemes]
        wins = [{"scheme": r["scheme"], "order": r["order"], "side": "testbed", "window": k,
                 "window_start_s": 30.0 * k, "share": 0.25} for r in rows for k in range(2)]
        for r in rows:
            (out / r["order"] / r["scheme"]).mkdir(parents=True)
            (out / r["order"] / r["scheme"] / "case.json").write_text('{"new": 1}')
        pd.DataFrame(wins).to_csv(out / "windows.csv", index=False)
        pd.DataFrame(rows).to_csv(out / "peers.csv", index=False)
        return pd.DataFrame(rows)

    monkeypatch.setattr(peers, "peers_table", table)
    net_fair._rerun("net-peers", where, 2, ["uftp"], ["tcp-first"])

    assert calls == [(2, peers.FULL_DURATION_S, ["uftp"], ("tcp-first",))]
    d = pd.read_csv(where / "peers.csv")
    # the rows keep their places; only uftp's tcp-first row is new, with the new column beside
    assert list(zip(d["scheme"], d["order"])) == [("tfmcc", "scheme-first"), ("uftp", "scheme-first"),
                                                  ("tfmcc", "tcp-first"), ("uftp", "tcp-first")]
    assert d["share"].tolist() == [0.04, 0.3, 0.03, 0.25]
    assert d["lead_s"].isna().tolist() == [True, True, True, False]
    w = pd.read_csv(where / "windows.csv")
    sel = (w["scheme"] == "uftp") & (w["order"] == "tcp-first")
    assert len(w) == 8 and sel.sum() == 2 and (w.loc[sel, "share"] == 0.25).all()
    assert (w.loc[~sel, "share"] != 0.25).all()
    assert (where / "tcp-first" / "uftp" / "case.json").read_text() == '{"new": 1}'
    assert (where / "replaced" / "tcp-first" / "uftp" / "case.json").read_text() == '{"old": 0.0}'
    assert (where / "scheme-first" / "uftp" / "case.json").read_text() == '{"old": 0.3}'
    assert not (where / "rerun").exists()


def test_rerun_needs_a_full_runs_table(tmp_path):
    with pytest.raises(SystemExit, match="no table of a full run"):
        net_fair._rerun("net-peers", tmp_path, 1, ["uftp"], ["tcp-first"])


def test_the_bound_is_the_rfcs_climb_from_the_floor():
    # X_0 = 8 * 1000 b / 8 s = 1000 b/s; R_0 = 8 s + 10 ms; R_max loses R/10 every 6 R: R_0 - t/60.
    # After 60 s R = 7.01 s and X = 1000 + 8000 * 60 * (1/7.01 - 1/8.01) = 1000 + 480000 / (7.01 * 8.01)
    # = 1000 + 480000 / 56.1501 = 9548.5 b/s.
    x = tfmcc_climb.bound(pd.Series([0.0, 60.0]).to_numpy(), 1000.0)
    assert x[0] == pytest.approx(1000.0)
    assert x[1] == pytest.approx(9548.5, abs=0.1)


def test_climb_reads_each_increase_against_8s_over_rmax(tmp_path):
    src = tmp_path / "source"
    src.mkdir()
    # a sender that falls to the floor at 10 s, then rises by 8s/R_max once per R_max: R_max is
    # 8.01 s from the round that ends at 10.5 s, 7.209 s from the one that ends at 40 s
    steps = [(0.0, 300e3), (10.0, 1000.0), (18.5, 1000.0 + 8000 / 8.01), (27.0, 1000.0 + 2 * 8000 / 8.01),
             (35.5, 1000.0 + 3 * 8000 / 8.01), (43.0, 1000.0 + 3 * 8000 / 8.01 + 8000 / 7.209)]
    pd.DataFrame({"time_s": [t for t, _ in steps], "bps": [b for _, b in steps]}).to_csv(src / "tfmcc_rate.csv",
                                                                                      index=False)
    pd.DataFrame({"time_s": [3.0, 10.5, 40.0], "rmax_s": [0.5, 8.01, 7.209]}).to_csv(src / "tfmcc_round.csv",
                                                                                   index=False)
    c = tfmcc_climb.climb(tmp_path)
    assert c["floor_s"] == 10.0 and c["increases"] == 4 and c["decreases"] == 0
    assert c["step_over_8s_rmax_median"] == pytest.approx(1.0) and c["step_over_8s_rmax_max"] == pytest.approx(1.0)
    # the gaps 8.5, 8.5, 8.5 s over R_max 8.01 s and 7.5 s over 7.209 s: median 8.5 / 8.01
    assert c["gap_over_rmax_median"] == pytest.approx(8.5 / 8.01)
    assert c["rate_end_bps"] == pytest.approx(1000.0 + 3 * 8000 / 8.01 + 8000 / 7.209)
