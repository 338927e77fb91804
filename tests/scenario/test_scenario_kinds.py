"""Every registered scenario kind builds from a scenario file: each session kind with each
receiver protocol it takes, each router kind, each flow table. The kinds come from the
protocol registry (castlab._registry), so a protocol registered later is covered without
editing this file."""

from __future__ import annotations

import pytest

from castlab import _registry
from castlab.scenario import Scenario

NODES = ["src", "r", "a", "b"]
LINKS = [("src", "r", "10Mb/s"), ("r", "a", "2Mb/s"), ("r", "b", "2Mb/s")]


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return repr(v)


def _required(keys: list[dict], node: str, peer: str) -> dict:
    """A value for every key the entry must have, by the key's kind; a level where the entry
    takes a level or a schedule."""
    out = {}
    for k in keys:
        kind = k["kind"]
        if kind == "level":
            out[k["name"]] = 1
        elif kind == "rates":
            out["rates"] = ["64kb/s", "128kb/s"]
        elif k["required"]:
            out[k["name"]] = {"node": node if k["name"] != "dst" else peer, "rate": "200kb/s",
                              "time": "1s", "positive_time": "1s", "bool": False,
                              "int": k["lo"], "choice": (k.get("choices") or [None])[0]}[kind]
    if "src" in out:
        out["src"], out["dst"] = node, peer
    return out


def _table(name: str, entry: dict) -> str:
    return f"[[{name}]]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in entry.items())


def _routers(kind: str) -> list[dict]:
    spec = _registry.scenario_kinds()[2][kind]
    r = {"kind": kind, **_required(spec["keys"], "r", "a")}
    return [r] if spec["many"] else [{**r, "node": n} for n in NODES]


def _file(tmp_path, body: str):
    # 5 s: a PGMCC source whose first packet goes out before the receivers' joins reach the
    # tree sends again only after its 3 s initial timer (draft-ietf-rmt-bb-pgmcc §2.7)
    text = ('name = "kinds"\nduration = "5s"\nseeds = [1]\nwindows = ["1s"]\n'
            f"nodes = {_toml_value(NODES)}\n"
            + "".join(_table("links", {"a": a, "b": b, "rate": r, "delay": "5ms"}) for a, b, r in LINKS)
            + body)
    p = tmp_path / "kinds.toml"
    p.write_text(text)
    return p


SESSIONS = list(_registry.scenario_kinds()[0].items())


@pytest.mark.parametrize("kind,spec", SESSIONS, ids=[k for k, _ in SESSIONS])
def test_every_session_kind_builds_with_each_receiver_it_takes(tmp_path, kind, spec):
    _, receivers, _ = _registry.scenario_kinds()
    takers = [p for p, r in receivers.items() if kind in r["sessions"]]
    assert takers, f"session kind {kind} has no receiver protocol"
    body = _table("sessions", {"name": "s", "kind": kind, "source": "src", **_required(spec["keys"], "src", "a")})
    for i, proto in enumerate(takers):
        body += _table("receivers", {"name": f"rx{i}", "session": "s", "protocol": proto, "node": "a",
                                     **_required(receivers[proto]["keys"], "a", "src")})
    if spec["needs_router"] is not None:
        body += "".join(_table("routers", r) for r in _routers(spec["needs_router"]))
    sc = Scenario.from_toml(_file(tmp_path, body))
    sim = sc.build(1)
    sim.run(sc.duration)
    h = sim.scenario_handles
    ids = [h.sessions["s"]["source"], *(h.receivers[f"rx{i}"] for i in range(len(takers)))]
    assert all(isinstance(a, int) for a in ids) and len(set(ids)) == len(ids)
    rows = {r["name"]: r for r in sc.flow_table(sim)}
    assert [rows[f"rx{i}"]["kind"] for i in range(len(takers))] == takers
    # every receiver heard its session within the run
    assert all(rows[f"rx{i}"]["received"] > 0 for i in range(len(takers))), rows


FLOWS = list(_registry.flow_kinds().items())


@pytest.mark.parametrize("table,spec", FLOWS, ids=[t for t, _ in FLOWS])
def test_every_flow_table_builds_and_reports_a_row(tmp_path, table, spec):
    body = _table(table, {"name": "f", **_required(spec["keys"], "src", "b")})
    sc = Scenario.from_toml(_file(tmp_path, body))
    sim = sc.build(1)
    sim.run(sc.duration)
    flows = getattr(sim.scenario_handles, table)
    assert set(flows) == {"f"}
    (row,) = sc.flow_table(sim)
    assert row["name"] == "f" and row["kind"] == table and row["node"] == "src->b"
    assert row["received"] > 0 and row["mean_rate_bps"] > 0


ROUTERS = list(_registry.scenario_kinds()[2])


@pytest.mark.parametrize("kind", ROUTERS)
def test_every_router_kind_builds(tmp_path, kind):
    sc = Scenario.from_toml(_file(tmp_path, "".join(_table("routers", r) for r in _routers(kind))))
    sim = sc.build(1)
    sim.run(sc.duration)
    spec = _registry.scenario_kinds()[2][kind]
    # the extension is on the node: its status reader answers there
    assert isinstance(getattr(sim, spec["status"])("r"), dict)


def test_the_registry_lists_the_engine_agents_as_kinds():
    """The layered CBR session, its measuring sink and the TCP and CBR flows are registered
    kinds like the protocols' own."""
    sessions, receivers, _ = _registry.scenario_kinds()
    assert next(iter(sessions)) == "layered"  # the default kind comes first
    assert "sink" in receivers and "layered" in receivers["sink"]["sessions"]
    assert list(_registry.flow_kinds()) == ["tcp", "cbr"]
