"""Building a scenario: the simulator, its nodes, links, routers, monitors, sessions,
receivers and flows, every protocol's part through the protocol registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from castlab import streams
from castlab.scenario.schema import _RED_KEYS, ScenarioError, _flow_kinds, _kinds


def capture_file(c: dict) -> str:
    """The file name of a ``[[captures]]`` entry's pcap in the run's folder."""
    return f"capture_{c['name']}.pcap"


def kinds_of(se: dict) -> dict:
    """The registered session kind of a session."""
    return _kinds()[0][se["kind"]]


def _packet_size(se: dict, spec: Optional[dict]) -> Optional[int]:
    """The size of the session's data packets: its own key, else its config's."""
    from castlab._native import config_defaults

    for k in ("packet_size", "packet_bytes"):
        if k in se:
            return se[k]
    if spec is not None and spec["config"] is not None:
        defaults = config_defaults(spec["config"])
        if "packet_bytes" in defaults:
            return se.get("config", {}).get("packet_bytes", defaults["packet_bytes"])
    return None


def _takes(reader: str, param: str) -> bool:
    from castlab._registry import readers

    return any(n == param for n, _, _ in readers()[reader]["params"])


def _group_count(spec: dict, se: dict) -> int:
    """How many groups a registered session kind needs."""
    from castlab._native import config_defaults

    g = spec["groups"]
    if g == "one":
        return 1
    if g == "none":
        return 0
    if g == "per_config_layer":
        return int(se["config"].get("layers", config_defaults(spec["layers_from"])["layers"]))
    return len(se["rates"])  # per_rate_and_control: the control group is made apart


# scenario keys passed under another name to a role without a parameter of theirs: the unit
# the parameter carries, a flow's source node, the port a flow sends to
_PARAM_OF = {"rates": "rates_bps", "rate": "rate_bps", "src": "node", "port": "dst_port"}


def _role_args(role: str, entry: dict, info: dict, exclude: set[str]) -> dict:
    """A registered role's arguments from a scenario entry: the session's groups, control
    group and source agent where the role takes them, the entry's keys by name."""
    from castlab._registry import roles

    names = [n for n, _, _ in roles()[role]["params"]]
    vals = {k if k in names else _PARAM_OF.get(k, k): v
            for k, v in entry.items() if k not in ("config", "name", "kind", "protocol", "session", *exclude)}
    vals["source"] = info.get("source")
    groups = info.get("groups", [])
    for n in ("groups", "data_groups"):
        vals[n] = groups
    if groups:
        vals["group"] = groups[0]
    if "control" in info:
        vals["control_group"] = info["control"]
    return {n: vals[n] for n in names if n in vals and not (n == "source" and "source" in exclude)}


def _role_takes(role: str, param: str) -> bool:
    from castlab._registry import roles

    return any(n == param for n, _, _ in roles()[role]["params"])


def _schedule_of_level(keys: list[dict], entry: dict, start: float, args: dict) -> None:
    """A receiver's subscription levels as its role's `schedule`: a fixed level is joined at the
    receiver's `start` (drawn for this seed), or the schedule as written."""
    level = next((k["name"] for k in keys if k["kind"] == "level"), None)
    sched = next((k["name"] for k in keys if k["kind"] == "schedule"), None)
    if level is None or sched is None:
        return
    args.pop(level, None)
    if entry[level] is not None:
        args[sched] = [(start, entry[level])]
    else:
        args[sched] = [(t, lv) for t, lv in entry[sched]]


@dataclass
class Handles:
    """What `build` made, by the names of the scenario's entries."""

    scenario: "Scenario"
    seed: int
    channels: dict[str, tuple[int, int]] = field(default_factory=dict)  # link -> (a->b, b->a)
    sessions: dict[str, dict] = field(default_factory=dict)  # name -> groups, control, source agent
    receivers: dict[str, int] = field(default_factory=dict)  # name -> agent id
    starts: dict[str, float] = field(default_factory=dict)  # receiver name -> start drawn for this seed
    # flow table (`tcp`, `cbr`) -> name -> the agent its role returned, or (it, the sink's)
    # for a flow built with a sink; each table is also an attribute (`handles.tcp`)
    flows: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __getattr__(self, name: str):
        flows = self.__dict__.get("flows", {})
        if name in flows:
            return flows[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def build(sc, seed: int, capture_dir: Optional[Path] = None):
    """A :class:`castlab.Simulator` for this scenario and ``seed``; its ``scenario_handles``
    attribute (:class:`Handles`) maps the entries' names to agent ids and channels. With
    `capture_dir`, each ``[[captures]]`` entry writes ``capture_NAME.pcap`` there (complete when
    the simulator is dropped); without, captures are not taken."""
    from castlab import Simulator

    d = sc._data

    def at(path: str, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except ValueError as e:
            where = f"{sc.source}: " if sc.source else ""
            raise ScenarioError(f"{where}{path}: {e}") from None

    s = d["simulator"]
    sim = at("simulator", Simulator, seed=seed, join_latency=s["join_latency"],
             leave_latency=s["leave_latency"], queue_avg_weight=s["queue_avg_weight"],
             **({"phase_overhead": s["phase_overhead"]} if "phase_overhead" in s else {}))
    h = Handles(sc, seed, flows={t: {} for t in _flow_kinds()})

    for n in d["nodes"]:
        sim.add_node(n)
    for l in d["links"]:
        kw = {k: l[k] for k in (*_RED_KEYS, "tbf_burst", "tbf_overhead") if k in l}
        h.channels[l["name"]] = at(f"links.{l['name']}", sim.add_link, l["a"], l["b"], l["rate"], l["delay"],
                                   queue=l["queue"], queue_limit_pkts=l["queue_limit"], loss_ab=l["loss_ab"],
                                   loss_ba=l["loss_ba"], cost=l["cost"], **kw)
    kinds, receivers, routers = _kinds()
    for r in d["routers"]:
        spec = routers[r["kind"]]
        kw = {k: v for k, v in r.items() if k not in ("name", "kind", "config")}
        at(f"routers.{r['name']}", getattr(sim, spec["role"]), **kw, **r.get("config", {}))
    for m in d["monitors"]:
        ch = h.channels[m["link"]][0 if m["direction"] == "ab" else 1]
        p = f"monitors.{m['name']}"
        if m["kind"] == "queue":
            at(p, sim.monitor_channel, ch, m["interval"])
        else:
            link = next(l for l in d["links"] if l["name"] == m["link"])
            node = link["a"] if m["direction"] == "ab" else link["b"]
            at(p, sim.attach_loss_meter, node, ch, bin=m["bin"], layers=m["layers"])
    for se in d["sessions"]:
        p = f"sessions.{se['name']}"
        k = se["kind"]
        info: dict[str, Any] = {"kind": k}
        spec = kinds[k]
        info["groups"] = [at(p, sim.add_group, se["source"]) for _ in range(_group_count(spec, se))]
        if spec["groups"] == "per_rate_and_control":
            info["control"] = at(p, sim.add_group, se["source"])
        info["source"] = at(p, getattr(sim, spec["role"]), se["source"],
                            **_role_args(spec["role"], se, info, exclude={"source", "node"}),
                            **se.get("config", {}))
        h.sessions[se["name"]] = info
    sessions = {se["name"]: se for se in d["sessions"]}
    for i, r in enumerate(d["receivers"]):
        p = f"receivers.{r['name']}"
        se, info = sessions[r["session"]], h.sessions[r["session"]]
        start = r["start"]
        if isinstance(start, list):
            # its own stream per (seed, receiver index), so it depends on the seed only
            start = float(streams.rng(seed, "scenario-starts", i).uniform(start[0], start[1]))
        h.starts[r["name"]] = start
        spec = receivers[r["protocol"]]
        cfg = dict(r.get("config", {}))
        if spec["inherits_session_config"]:
            cfg = {**se.get("config", {}), **cfg}
        args = _role_args(spec["role"], {**r, "flow": se.get("flow")}, info, exclude=set())
        if spec["windows_in_config"]:
            # the scenario's windows are computed online, with any the receiver's own
            # config asks for
            cfg["windows"] = sorted(set(d["windows"]) | set(cfg.get("windows") or []))
        elif _role_takes(spec["role"], "windows"):
            args["windows"] = d["windows"]
        args["start"] = start
        _schedule_of_level(spec["keys"], r, start, args)
        h.receivers[r["name"]] = at(p, getattr(sim, spec["role"]), **args, **cfg)
    for t, spec in _flow_kinds().items():
        for f in d[t]:
            p = f"{t}.{f['name']}"
            sink = None
            if spec["sink"] is not None:
                # the receiving end first, on dst
                args = _role_args(spec["sink"], f, {}, exclude={"src", "dst", "node"})
                if _role_takes(spec["sink"], "windows"):
                    args["windows"] = d["windows"]
                sink = at(p, getattr(sim, spec["sink"]), f["dst"], **args)
            src = at(p, getattr(sim, spec["role"]), **_role_args(spec["role"], f, {}, exclude={"source"}),
                     **f.get("config", {}))
            h.flows[t][f["name"]] = src if sink is None else (src, sink)
    links = {l["name"]: l for l in d["links"]}
    for e in d.get("events", []):
        p = f"events.{e['name']}"
        if "link" in e:
            l = links[e["link"]]
            at(p, sim.link_down if e["state"] == "down" else sim.link_up, e["at"], l["a"], l["b"])
        else:
            at(p, sim.node_down if e["state"] == "down" else sim.node_up, e["at"], e["node"])
    if capture_dir is not None:
        for c in d.get("captures", []):
            l = links[c["link"]]
            a, b = (l["a"], l["b"]) if c["direction"] == "ab" else (l["b"], l["a"])
            at(f"captures.{c['name']}", sim.enable_pcap, a, b, Path(capture_dir) / capture_file(c), wire=c["wire"])
    object.__setattr__(sim, "scenario_handles", h)
    return sim
