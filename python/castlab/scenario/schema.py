"""Reading and checking a scenario: the schema, its errors with the key and the file's line,
and the canonical form every other part reads (`normalise`)."""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any, Optional, Union

from castlab.seeds import parse_seeds
from castlab.units import UnitError, parse_rate, parse_time

# Every session, receiver, router and flow kind comes from the protocol registry
# (castlab._registry): this module names none of them.


def _kinds():
    from castlab._registry import scenario_kinds

    return scenario_kinds()


def _flow_kinds() -> dict[str, dict]:
    """The registered flow tables (``[[tcp]]``, ``[[cbr]]``), by table, in the registry's order."""
    from castlab._registry import flow_kinds

    return flow_kinds()


def _receivers_of(kind: str) -> tuple[str, ...]:
    """The receiver protocols a session kind accepts; the first is the default."""
    _, receivers, _ = _kinds()
    return tuple(p for p, r in receivers.items() if kind in r["sessions"])


def _session_kinds() -> list[str]:
    """The registered session kinds; the first is the kind of a session that names none."""
    sessions, _, _ = _kinds()
    return list(sessions)


def _tables() -> tuple[str, ...]:
    """The scenario's arrays of tables, the registered flow tables after the receivers."""
    return ("links", "sessions", "receivers", *_flow_kinds(), "routers", "monitors", "events", "captures")


def _top_keys() -> set[str]:
    return {"name", "description", "duration", "seeds", "windows", "simulator", "nodes", *_tables()}


class ScenarioError(ValueError):
    """A scenario that cannot be built: the message names the key (and the file and line)."""


# ----------------------------------------------------------------------------- line finding


class _Lines:
    """Where a key sits in the TOML text, found by scanning it (tomllib keeps no positions)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        # (line index, header name, is array-of-tables)
        self.headers: list[tuple[int, str, bool]] = []
        for i, ln in enumerate(self.lines):
            m = self._HEADER.match(ln)
            if m:
                self.headers.append((i, m.group(2).replace(" ", ""), m.group(1) == "[["))

    def _key_line(self, lo: int, hi: int, key: str, stop_at_header: bool = True) -> Optional[int]:
        pat = re.compile(rf"^\s*(\"{re.escape(key)}\"|'{re.escape(key)}'|{re.escape(key)})\s*=")
        for i in range(lo, hi):
            if stop_at_header and any(h[0] == i for h in self.headers):
                return None
            if pat.match(self.lines[i]):
                return i
        return None

    def _inline(self, i: int, keys: list[str]) -> int:
        """The line of the innermost of `keys` written in the inline table that opens on line i."""
        line = i
        for k in keys:
            pat = re.compile(rf"[{{,]\s*{re.escape(k)}\s*=")
            for j in range(line, min(line + 20, len(self.lines))):
                if pat.search(self.lines[j]) or (j > line and re.match(rf"^\s*{re.escape(k)}\s*=", self.lines[j])):
                    line = j
                    break
            else:
                break
        return line

    def find(self, path: tuple) -> Optional[int]:
        """1-based line of `path` (("links", 2, "delay"), ("duration",), ...) or None."""
        if not path:
            return None
        first_header = self.headers[0][0] if self.headers else len(self.lines)
        head = path[0]
        if len(path) >= 2 and isinstance(path[1], int):
            items = [h for h in self.headers if h[1] == head and h[2]]
            if path[1] >= len(items):
                # written as an inline array (links = [{...}]): the key's own line
                i = self._key_line(0, first_header, head)
                return None if i is None else i + 1
            start = items[path[1]][0]
            nxt = [h[0] for h in self.headers if h[0] > start and not h[1].startswith(head + ".")]
            end = nxt[0] if nxt else len(self.lines)
            rest = [p for p in path[2:]]
            if not rest:
                return start + 1
            # a sub-table header [head.key] inside the item
            sub = [h for h in self.headers if start < h[0] < end and h[1] == f"{head}.{rest[0]}"]
            if sub:
                s0 = sub[0][0]
                if len(rest) == 1:
                    return s0 + 1
                i = self._key_line(s0 + 1, end, str(rest[1]))
                return (i if i is not None else s0) + 1
            i = self._key_line(start + 1, end, str(rest[0]))
            if i is None:
                return start + 1
            return self._inline(i, [str(k) for k in rest[1:] if not isinstance(k, int)]) + 1
        tables = [h for h in self.headers if h[1] == head and not h[2]]
        if tables:
            start = tables[0][0]
            nxt = [h[0] for h in self.headers if h[0] > start]
            end = nxt[0] if nxt else len(self.lines)
            if len(path) == 1:
                return start + 1
            i = self._key_line(start + 1, end, str(path[1]))
            return (i if i is not None else start) + 1
        i = self._key_line(0, first_header, head)
        if i is None:
            return None
        return self._inline(i, [str(k) for k in path[1:] if not isinstance(k, int)]) + 1


# ----------------------------------------------------------------------------- validation


class BareNumberWarning(UserWarning):
    """A time or rate written in a scenario file without a unit (``delay = "5"``): read in SI
    (seconds, bit/s), which is rarely what a bare 5 meant."""


def did_you_mean(word: str, choices) -> str:
    """" did you mean 'queue_limit'?" when `word` is close to one of `choices`, else ""."""
    import difflib

    close = difflib.get_close_matches(str(word), sorted(map(str, choices)), n=1, cutoff=0.6)
    return f" did you mean {close[0]!r}?" if close else ""


def written_at(lines: Optional["_Lines"], line: Optional[int], path: tuple) -> bool:
    """Whether the file's `line` writes the key `path` ends with (``delay = ...``, or inside
    an inline table): a default filled in by the reader has no line of its own."""
    if lines is None or line is None or not path or not 1 <= line <= len(lines.lines):
        return False
    key = next((str(p) for p in reversed(path) if not isinstance(p, int)), "")
    return re.search(rf"(^|[\s{{,]){re.escape(key)}\s*=", lines.lines[line - 1]) is not None


def warn_bare_quantity(value: Any, key: str, line: Optional[int], source: Optional[str], si_unit: str) -> None:
    """Warn (BareNumberWarning) when a file's time or rate has no unit; 0 needs none."""
    from castlab.units import _NUMBER

    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return
    if isinstance(value, str):
        m = _NUMBER.match(value)
        if not m or m.group(2):
            return
        number = float(m.group(1))
    else:
        number = float(value)
    if number == 0:
        return
    at = f" (line {line})" if line is not None else ""
    examples = '"5ms" or "5s"' if si_unit == "s" else '"5Mbps" or "5kbps"'
    warnings.warn(f"{source + ': ' if source else ''}{key!r}{at}: {value!r} has no unit and is read as "
                  f"{number:g} {si_unit}; write the unit ({examples}) to say which", BareNumberWarning, stacklevel=4)


class _Checker:
    """Normalises a raw scenario dict, raising ScenarioError that names the key and line."""

    def __init__(self, source: Optional[str], lines: Optional[_Lines], strict: bool):
        self._names: dict = {}  # (table, index) -> the entry's name, set by _name_items
        self.source = source
        self.lines = lines
        self.strict = strict
        # the node list last checked against, as a set: a scenario's links, sessions and
        # receivers each name nodes, and a list search per name is quadratic in the nodes
        self._nodes_of: Optional[list] = None
        self._node_set: frozenset = frozenset()

    def where(self, path: tuple) -> tuple[str, Optional[int]]:
        """The dotted key of `path` (items by name) and its line when known."""
        line = self.lines.find(path) if self.lines is not None else None
        return self.dotted(path), line

    def dotted(self, path: tuple) -> str:
        parts: list[str] = []
        for p in path:
            if isinstance(p, int) and parts:
                parts.append(self._names.get((parts[-1], p), str(p)))
            else:
                parts.append(str(p))
        return ".".join(parts)

    def fail(self, path: tuple, msg: str) -> "ScenarioError":
        key, line = self.where(path)
        prefix = f"{self.source}: " if self.source else ""
        at = f" (line {line})" if line is not None else ""
        return ScenarioError(f"{prefix}{key!r}{at}: {msg}")

    def unit(self, fn, value, path: tuple, **kw) -> float:
        key, line = self.where(path)
        try:
            v = fn(value, key=key, line=line, strict=self.strict, **kw)
        except UnitError as e:
            raise ScenarioError((f"{self.source}: " if self.source else "") + str(e)) from None
        if written_at(self.lines, line, path):  # in a file: a bare 5 is easily meant as 5 ms or 5 Mb/s
            warn_bare_quantity(value, key, line, self.source, "s" if fn is parse_time else "bit/s")
        return v

    def rate(self, value, path: tuple) -> float:
        return self.unit(parse_rate, value, path)

    def time(self, value, path: tuple, max_s: Optional[float] = None, allow_zero: bool = True) -> float:
        return self.unit(parse_time, value, path, max_s=max_s, allow_zero=allow_zero)

    def keys(self, d: Any, allowed: set[str], path: tuple, required: tuple = ()) -> dict:
        if not isinstance(d, dict):
            raise self.fail(path, f"expected a table, got {d!r}")
        for k in d:
            if k not in allowed:
                raise self.fail(path + (k,), f"unknown key;{did_you_mean(k, allowed)} allowed here: "
                                f"{', '.join(sorted(allowed))}")
        for k in required:
            if k not in d:
                raise self.fail(path, f"missing required key {k!r}")
        return d

    def typed(self, v: Any, types, path: tuple, what: str) -> Any:
        if isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.fail(path, f"expected {what}, got {v!r}")
        if not isinstance(v, types):
            raise self.fail(path, f"expected {what}, got {v!r}")
        return v

    def int_(self, v: Any, path: tuple, lo: int = 0, hi: int = 2**32 - 1) -> int:
        self.typed(v, int, path, "an integer")
        if not lo <= v <= hi:
            raise self.fail(path, f"{v} is out of range {lo}..{hi}")
        return v

    def prob(self, v: Any, path: tuple) -> float:
        self.typed(v, (int, float), path, "a probability")
        if not 0.0 <= float(v) <= 1.0:
            raise self.fail(path, f"{v} is not a probability in [0, 1]")
        return float(v)

    def node(self, v: Any, path: tuple, nodes: list[str]) -> str:
        self.typed(v, str, path, "a node name")
        if self._nodes_of is not nodes:
            self._nodes_of, self._node_set = nodes, frozenset(nodes)
        if v not in self._node_set:
            raise self.fail(path, f"no node named {v!r} (nodes: {', '.join(nodes)})")
        return v

    def config(self, d: Any, table: str, path: tuple) -> dict:
        """Overrides of a config table (``config_defaults(table)``): names checked against
        Rust's Default; strings on duration fields read with units ("5s"), on *_bps fields as
        rates."""
        from castlab._native import config_defaults

        defaults = config_defaults(table)
        self.keys(d, set(defaults), path)
        out = {}
        for k, v in d.items():
            dv = defaults[k]
            if isinstance(v, str) and isinstance(dv, float) and not isinstance(dv, bool):
                v = self.rate(v, path + (k,)) if k.endswith("_bps") else self.time(v, path + (k,))
            out[k] = v
        return out


def _name_items(raw: dict, chk: _Checker) -> None:
    """Give every table item a name (its own, or a default) and check the names are unique;
    receivers and the flow tables' entries share one namespace (they are the rows of the flow
    table)."""
    names: dict = {}
    flows: dict[str, tuple] = {}
    chk._names = names
    rows = ("receivers", *_flow_kinds())
    for t in _tables():
        items = raw.get(t, [])
        if not isinstance(items, list):
            raise chk.fail((t,), f"expected an array of tables ([[{t}]]), got {items!r}")
        seen: set[str] = set()
        for i, it in enumerate(items):
            if not isinstance(it, dict):
                raise chk.fail((t, i), f"expected a table, got {it!r}")
            n = it.get("name")
            if n is None:
                n = _default_name(t, i, it)
            elif not isinstance(n, str) or not n or "." in n:
                raise chk.fail((t, i, "name"), f"a name is a non-empty string without dots, got {n!r}")
            names[(t, i)] = n
            if n in seen:
                raise chk.fail((t, i, "name"), f"{n!r} names two {t} entries")
            if t in rows:
                if n in flows:
                    raise chk.fail((t, i, "name"), f"{n!r} is also {flows[n][0]} entry {flows[n][1]}'s name "
                                   f"({', '.join(rows[:-1])} and {rows[-1]} flows share names)")
                flows[n] = (t, i)
            seen.add(n)
            names[(t, i)] = n


def _default_name(table: str, i: int, it: dict) -> str:
    if table == "links" and isinstance(it.get("a"), str) and isinstance(it.get("b"), str):
        return f"{it['a']}-{it['b']}"
    return {"links": "link", "sessions": "session", "receivers": "rx", "routers": "router", "monitors": "monitor",
            "events": "event", "captures": "capture"}.get(table, table) + str(i + 1)


def _normalise(raw: dict, chk: _Checker) -> dict:
    """The canonical scenario: every key present, quantities in SI (s, bit/s), items named."""
    chk.keys(raw, _top_keys(), (), required=("duration", "nodes"))
    _name_items(raw, chk)
    out: dict[str, Any] = {}
    out["name"] = chk.typed(raw.get("name", "scenario"), str, ("name",), "a string")
    out["description"] = chk.typed(raw.get("description", ""), str, ("description",), "a string")
    out["duration"] = chk.time(raw["duration"], ("duration",), max_s=None, allow_zero=False)
    seeds = raw.get("seeds", [1])
    if isinstance(seeds, str):
        try:
            seeds = parse_seeds(seeds)
        except ValueError as e:
            raise chk.fail(("seeds",), str(e)) from None
    elif isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if not isinstance(seeds, list) or not seeds:
        raise chk.fail(("seeds",), f"expected '1-3', '1,4,7', an integer or a list, got {seeds!r}")
    out["seeds"] = [chk.int_(s, ("seeds",), 0, 2**63 - 1) for s in seeds]
    windows = raw.get("windows", [1.0])
    chk.typed(windows, list, ("windows",), "a list of times")
    out["windows"] = [chk.time(w, ("windows",), max_s=None, allow_zero=False) for w in windows]

    sim = chk.keys(raw.get("simulator", {}), {"join_latency", "leave_latency", "queue_avg_weight", "phase_overhead"},
                   ("simulator",))
    out["simulator"] = {
        "join_latency": chk.time(sim.get("join_latency", 0.0), ("simulator", "join_latency"), max_s=100.0),
        "leave_latency": chk.time(sim.get("leave_latency", 0.0), ("simulator", "leave_latency"), max_s=100.0),
        "queue_avg_weight": float(chk.typed(sim.get("queue_avg_weight", 0.002), (int, float),
                                            ("simulator", "queue_avg_weight"), "a number")),
    }
    if "phase_overhead" in sim:
        # phase randomisation (castlab.Simulator); kept out of the canonical form when not given
        out["simulator"]["phase_overhead"] = chk.time(sim["phase_overhead"], ("simulator", "phase_overhead"),
                                                      max_s=1.0)

    nodes = raw["nodes"]
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) and n for n in nodes):
        raise chk.fail(("nodes",), f"expected a list of node names, got {nodes!r}")
    if len(set(nodes)) != len(nodes):
        dup = sorted({n for n in nodes if nodes.count(n) > 1})
        raise chk.fail(("nodes",), f"node {dup[0]!r} is listed twice")
    out["nodes"] = list(nodes)

    out["links"] = [_link(chk, i, it, nodes) for i, it in enumerate(raw.get("links", []))]
    if not out["links"]:
        raise chk.fail(("links",), "a scenario needs at least one [[links]] entry")
    links = {l["name"]: l for l in out["links"]}
    out["routers"] = [_router(chk, i, it, nodes) for i, it in enumerate(raw.get("routers", []))]
    out["sessions"] = [_session(chk, i, it, nodes) for i, it in enumerate(raw.get("sessions", []))]
    sessions = {s["name"]: s for s in out["sessions"]}
    for i, s in enumerate(out["sessions"]):
        need = s.pop("_needs_router", None)
        if need is not None and not any(r["kind"] == need for r in out["routers"]):
            raise chk.fail(("sessions", i, "kind"), f"a {s['kind']} session needs {need.upper()} routers: "
                           f"add [[routers]] kind = \"{need}\"")
    out["receivers"] = [_receiver(chk, i, it, nodes, sessions) for i, it in enumerate(raw.get("receivers", []))]
    for t, spec in _flow_kinds().items():
        out[t] = [_flow(chk, t, spec, i, it, nodes) for i, it in enumerate(raw.get(t, []))]
    _check_buckets(chk, out)
    out["monitors"] = [_monitor(chk, i, it, links) for i, it in enumerate(raw.get("monitors", []))]
    if "events" in raw:
        # kept out of the canonical form when not given, as phase_overhead is
        out["events"] = [_event(chk, i, it, out) for i, it in enumerate(raw["events"])]
    if "captures" in raw:
        out["captures"] = _captures(chk, raw["captures"], links)
    return out


def _start(chk: _Checker, v: Any, path: tuple) -> Union[float, list[float]]:
    """A start time, or [lo, hi]: drawn uniformly per seed (McCanne et al. §4's receivers start on [30, 120] s)."""
    if isinstance(v, list):
        if len(v) != 2:
            raise chk.fail(path, f"a start range is [lo, hi], got {v!r}")
        lo, hi = (chk.time(x, path, max_s=None) for x in v)
        if hi < lo:
            raise chk.fail(path, f"start range {v!r} runs backwards")
        return [lo, hi]
    return chk.time(v, path, max_s=None)


_LINK_KEYS = {"name", "a", "b", "rate", "delay", "queue", "queue_limit", "loss_ab", "loss_ba", "cost",
              "red_min_th", "red_max_th", "red_max_p", "red_w_q", "red_gentle", "red_mark", "mean_pkt_bytes",
              "tbf_burst", "tbf_overhead"}
_RED_KEYS = {"red_min_th", "red_max_th", "red_max_p", "red_w_q", "red_gentle", "red_mark", "mean_pkt_bytes"}


def _link(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("links", i)
    chk.keys(it, _LINK_KEYS, p, required=("a", "b", "rate", "delay"))
    q = it.get("queue", "droptail")
    if q not in ("droptail", "red"):
        raise chk.fail(p + ("queue",), f"a queue is \"droptail\" or \"red\", got {q!r}")
    if q == "droptail":
        for k in _RED_KEYS & set(it):
            raise chk.fail(p + (k,), "a RED parameter on a droptail link (set queue = \"red\")")
    a, b = chk.node(it["a"], p + ("a",), nodes), chk.node(it["b"], p + ("b",), nodes)
    if a == b:
        raise chk.fail(p + ("b",), f"a link joins two different nodes, got {a!r} twice")
    out = {"name": chk._names[("links", i)], "a": a, "b": b,
           "rate": chk.rate(it["rate"], p + ("rate",)),
           "delay": chk.time(it["delay"], p + ("delay",), max_s=100.0),
           "queue": q, "queue_limit": chk.int_(it.get("queue_limit", 50), p + ("queue_limit",), 1),
           "loss_ab": chk.prob(it.get("loss_ab", 0.0), p + ("loss_ab",)),
           "loss_ba": chk.prob(it.get("loss_ba", 0.0), p + ("loss_ba",)),
           "cost": chk.int_(it.get("cost", 1), p + ("cost",), 1)}
    if q == "red":
        red = {"red_min_th": 5.0, "red_max_th": 15.0, "red_max_p": 0.1, "red_w_q": 0.002,
               "red_gentle": False, "red_mark": False, "mean_pkt_bytes": 1000}  # the bindings' defaults
        for k in _RED_KEYS & set(it):
            want = (bool,) if isinstance(red[k], bool) else (int,) if k == "mean_pkt_bytes" else (int, float)
            red[k] = chk.typed(it[k], want, p + (k,), "a flag" if want == (bool,) else "a number")
        out.update(red)
    if "tbf_overhead" in it and "tbf_burst" not in it:
        raise chk.fail(p + ("tbf_overhead",), "tbf_overhead without tbf_burst (the link has no token bucket)")
    if "tbf_burst" in it:
        # kept out of the canonical form when not given: a link without them serialises
        out["tbf_burst"] = chk.int_(it["tbf_burst"], p + ("tbf_burst",), 1, 2**30)
        out["tbf_overhead"] = chk.int_(it.get("tbf_overhead", TBF_OVERHEAD_BYTES), p + ("tbf_overhead",), 0, 2**30)
    return out


#: What Linux's tbf charges a packet beyond its IP size: the 14-byte Ethernet header
#: (`sch_tbf.c` charges `qdisc_pkt_len`, the frame as the device sends it).
TBF_OVERHEAD_BYTES = 14


def _largest_packet(out: dict) -> tuple[int, str]:
    """The largest packet the scenario declares (sessions' `packet_size`, TCP flows' `mss_bytes`
    plus `header_bytes`) and where; (0, "") when none is declared. Packets of sizes left at a
    protocol's default are not seen here: a token bucket drops and counts one it cannot hold."""
    best = (0, "")
    for i, s in enumerate(out.get("sessions", [])):
        for size in (s.get("packet_size"), (s.get("config") or {}).get("packet_size")):
            if isinstance(size, int) and size > best[0]:
                best = (size, f"sessions[{i}] ({s['name']})")
    for i, f in enumerate(out.get("tcp", [])):
        c = f.get("config") or {}
        if isinstance(c.get("mss_bytes"), int):
            size = c["mss_bytes"] + int(c.get("header_bytes", 0))
            if size > best[0]:
                best = (size, f"tcp[{i}] ({f['name']})")
    return best


def _check_buckets(chk: _Checker, out: dict) -> None:
    """A token bucket smaller than the largest packet (with its overhead) could never send it."""
    size, where = _largest_packet(out)
    for i, l in enumerate(out["links"]):
        if "tbf_burst" in l and l["tbf_burst"] < size + l["tbf_overhead"]:
            raise chk.fail(("links", i, "tbf_burst"),
                           f"link {l['name']!r}: a token bucket of {l['tbf_burst']} bytes cannot hold the largest "
                           f"packet, {size} bytes from {where} plus tbf_overhead {l['tbf_overhead']}")


def _router(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("routers", i)
    kind = it.get("kind")
    _, _, routers = _kinds()
    if kind not in routers:
        raise chk.fail(p + ("kind",), f"a router kind is one of {', '.join(routers)}, got {kind!r}")
    spec = routers[kind]
    where = "nodes" if spec["many"] else "node"
    chk.keys(it, {"name", "kind", where} | {k["name"] for k in spec["keys"]}, p,
             required=() if spec["many"] else ("node",))
    out = {"name": chk._names[("routers", i)], "kind": kind}
    if spec["many"]:
        ns = it.get("nodes")
        out["nodes"] = None if ns is None else [chk.node(n, p + ("nodes",), nodes) for n in ns]
    else:
        out["node"] = chk.node(it["node"], p + ("node",), nodes)
    out.update(_keys(chk, spec["keys"], spec["config"], it, p, i, nodes))
    return out


def _keys(chk: _Checker, keys: list[dict], table: Optional[str], it: dict, p: tuple, i: int, nodes: list[str],
          layers: Optional[int] = None) -> dict:
    """The registered scenario keys of an entry, checked and converted by their kind; `layers`
    bounds a level (the session's layer count)."""
    _one_of_level_and_schedule(chk, keys, it, p)
    out: dict[str, Any] = {}
    for k in keys:
        name, kind, default = k["name"], k["kind"], k["default"]
        if kind == "rates":
            out["rates"] = _rates(chk, it, p)
            continue
        if k["required"] and name not in it:
            raise chk.fail(p, f"missing required key {name!r}")
        v = it.get(name, default)
        q = p + (name,)
        if kind == "config":
            out[name] = chk.config(it.get(name, {}), table, q)
        elif kind == "flow":
            out[name] = chk.int_(it.get(name, i + 1), q)
        elif kind == "port_from":
            out[name] = chk.int_(it.get(name, k["base"] + i), q, 1, 65535)
        elif v is None:
            out[name] = None
        elif kind == "time":
            out[name] = chk.time(v, q, max_s=None)
        elif kind == "positive_time":
            out[name] = chk.time(v, q, max_s=100.0, allow_zero=False)
        elif kind == "rate":
            out[name] = chk.rate(v, q)
        elif kind == "int":
            out[name] = chk.int_(v, q, k["lo"], k["hi"])
        elif kind == "bool":
            out[name] = chk.typed(v, bool, q, "true or false")
        elif kind == "node":
            out[name] = chk.node(v, q, nodes)
        elif kind == "choice":
            if v not in k["choices"]:
                raise chk.fail(q, f"one of {', '.join(map(repr, k['choices']))}, got {v!r}")
            out[name] = v
        elif kind == "level":
            out[name] = chk.int_(v, q, 0, layers or 0)
        elif kind == "schedule":
            sched = chk.typed(v, list, q, "a list of [time, level]")
            out[name] = []
            for e in sched:
                if not isinstance(e, list) or len(e) != 2:
                    raise chk.fail(q, f"each entry is [time, level], got {e!r}")
                out[name].append([chk.time(e[0], q, max_s=None), chk.int_(e[1], q, 0, layers or 0)])
    return out


def _one_of_level_and_schedule(chk: _Checker, keys: list[dict], it: dict, p: tuple) -> None:
    """An entry with a level key and a schedule key takes exactly one of the two."""
    level = next((k["name"] for k in keys if k["kind"] == "level"), None)
    sched = next((k["name"] for k in keys if k["kind"] == "schedule"), None)
    if level is not None and sched is not None and (it.get(level) is None) == (it.get(sched) is None):
        raise chk.fail(p, f"give either {level} (fixed from the start) or {sched} = [[time, {level}], ...], "
                       "not both, not neither")


def _rates(chk: _Checker, it: dict, p: tuple) -> list[float]:
    """Layer rates: `rates = [...]`, or `layers = n` with `base_rate` doubling per layer (McCanne et al. §4's
    32·2^m kb/s)."""
    if "rates" in it:
        if "layers" in it or "base_rate" in it:
            raise chk.fail(p + ("rates",), "give either rates or layers + base_rate, not both")
        rs = chk.typed(it["rates"], list, p + ("rates",), "a list of rates")
        if not rs:
            raise chk.fail(p + ("rates",), "at least one layer")
        return [chk.rate(r, p + ("rates",)) for r in rs]
    if "layers" not in it or "base_rate" not in it:
        raise chk.fail(p, "give the layer rates: rates = [...], or layers = n and base_rate (doubling per layer)")
    n = chk.int_(it["layers"], p + ("layers",), 1, 32)
    base = chk.rate(it["base_rate"], p + ("base_rate",))
    return [base * 2**m for m in range(n)]


def _session(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("sessions", i)
    kinds, _, _ = _kinds()
    kind = it.get("kind", _session_kinds()[0])
    if kind not in kinds:
        raise chk.fail(p + ("kind",), f"a session kind is one of {', '.join(_session_kinds())}, got {kind!r}")
    spec = kinds[kind]
    allowed = {"start"} | {k["name"] for k in spec["keys"]}
    if any(k["kind"] == "rates" for k in spec["keys"]):
        allowed |= {"layers", "base_rate"}
    chk.keys(it, allowed | {"name", "kind", "source"}, p, required=("source",))
    out: dict[str, Any] = {"name": chk._names[("sessions", i)], "kind": kind,
                           "source": chk.node(it["source"], p + ("source",), nodes),
                           "start": chk.time(it.get("start", 0.0), p + ("start",), max_s=None)}
    out.update(_keys(chk, spec["keys"], spec["config"], it, p, i, nodes))
    if spec["needs_router"] is not None:
        out["_needs_router"] = spec["needs_router"]
    return out


def _receiver(chk: _Checker, i: int, it: dict, nodes: list[str], sessions: dict) -> dict:
    p = ("receivers", i)
    chk.typed(it.get("session"), str, p + ("session",), "a session name")
    if it.get("session") not in sessions:
        raise chk.fail(p + ("session",), f"no session named {it.get('session')!r} "
                       f"(sessions: {', '.join(sessions) or 'none'})")
    s = sessions[it["session"]]
    accepted = _receivers_of(s["kind"])
    proto = it.get("protocol", accepted[0])
    if proto not in accepted:
        raise chk.fail(p + ("protocol",), f"a {s['kind']} session takes receivers of protocol "
                       f"{' or '.join(accepted)}, got {proto!r}")
    _, receivers, _ = _kinds()
    spec = receivers[proto]
    chk.keys(it, {"name", "node", "session", "protocol", "start"} | {k["name"] for k in spec["keys"]}, p,
             required=("node", "session"))
    out: dict[str, Any] = {"name": chk._names[("receivers", i)], "node": chk.node(it["node"], p + ("node",), nodes),
                           "session": s["name"], "protocol": proto,
                           "start": _start(chk, it.get("start", 0.0), p + ("start",))}
    keys = _keys(chk, spec["keys"], spec["config"], it, p, i, nodes, layers=len(s.get("rates", [])))
    # a receiver's `layers` defaults to its session's
    if "layers" in keys and keys["layers"] is None:
        keys["layers"] = chk.int_(len(s["rates"]), p + ("layers",), 1, 32)
    out.update(keys)
    return out


def _flow(chk: _Checker, table: str, spec: dict, i: int, it: dict, nodes: list[str]) -> dict:
    """An entry of a registered flow table (``[[tcp]]``, ``[[cbr]]``)."""
    p = (table, i)
    chk.keys(it, {"name"} | {k["name"] for k in spec["keys"]}, p)
    out: dict[str, Any] = {"name": chk._names[p]}
    out.update(_keys(chk, spec["keys"], spec["config"], it, p, i, nodes))
    return out


def _monitor(chk: _Checker, i: int, it: dict, links: dict) -> dict:
    p = ("monitors", i)
    kind = it.get("kind", "queue")
    allowed = {"queue": {"interval"}, "loss": {"bin", "layers"}}
    if kind not in allowed:
        raise chk.fail(p + ("kind",), f"a monitor kind is \"queue\" (a channel's series) or \"loss\" "
                       f"(a loss meter), got {kind!r}")
    chk.keys(it, {"name", "kind", "link", "direction"} | allowed[kind], p, required=("link",))
    if it["link"] not in links:
        raise chk.fail(p + ("link",), f"no link named {it['link']!r} (links: {', '.join(links)})")
    d = it.get("direction", "ab")
    if d not in ("ab", "ba"):
        raise chk.fail(p + ("direction",), f"a direction is \"ab\" (a to b) or \"ba\", got {d!r}")
    out = {"name": chk._names[("monitors", i)], "kind": kind, "link": it["link"], "direction": d}
    if kind == "queue":
        out["interval"] = chk.time(it.get("interval", 0.1), p + ("interval",), max_s=100.0, allow_zero=False)
    else:
        out["bin"] = chk.time(it.get("bin", 1.0), p + ("bin",), max_s=100.0, allow_zero=False)
        out["layers"] = chk.int_(it.get("layers", 8), p + ("layers",), 1, 64)
    return out


def _event(chk: _Checker, i: int, it: dict, sc: dict) -> dict:
    """A link or node going down or up at a time (ns-2's ``rtmodel-at``)."""
    p = ("events", i)
    chk.keys(it, {"name", "at", "link", "node", "state"}, p, required=("at", "state"))
    if ("link" in it) == ("node" in it):
        raise chk.fail(p, "an event names either a link (link = \"NAME\") or a node (node = \"NAME\")")
    st = it["state"]
    if st not in ("down", "up"):
        raise chk.fail(p + ("state",), f"a state is \"down\" or \"up\", got {st!r}")
    at = chk.time(it["at"], p + ("at",), max_s=None)
    if at > sc["duration"]:
        raise chk.fail(p + ("at",), f"{at:g} s is after the end of the run (duration {sc['duration']:g} s)")
    out = {"name": chk._names[("events", i)], "at": at, "state": st}
    if "node" in it:
        out["node"] = chk.node(it["node"], p + ("node",), sc["nodes"])
        return out
    links = {l["name"]: l for l in sc["links"]}
    name = chk.typed(it["link"], str, p + ("link",), "a link name")
    if name not in links:
        raise chk.fail(p + ("link",), f"no link named {name!r}{did_you_mean(name, links)} (links: {', '.join(links)})")
    l = links[name]
    twin = next((o["name"] for o in sc["links"] if o is not l and {o["a"], o["b"]} == {l["a"], l["b"]}), None)
    if twin is not None:
        raise chk.fail(p + ("link",), f"links {name!r} and {twin!r} join the same two nodes: an event cannot "
                       "tell them apart (castlab.Simulator.link_down takes the nodes)")
    out["link"] = name
    return out


def _captures(chk: _Checker, items: list, links: dict) -> list[dict]:
    """Packet captures (ns-3's ``EnablePcap``, one direction of a link per entry): each writes
    ``capture_NAME.pcap`` in the run's folder, the packets that leave the link's `direction`
    end as the real mode sends them, castlab's envelope (``wire = "castlab"``) or PGM
    (``"pgm"``, RFC 3208: packets that are not PGM are left out). Kept out of the canonical
    form when not given."""
    out: list[dict] = []
    taken: dict[tuple[str, str], str] = {}
    for i, it in enumerate(items):
        p = ("captures", i)
        chk.keys(it, {"name", "link", "direction", "wire"}, p, required=("link",))
        name = chk.typed(it["link"], str, p + ("link",), "a link name")
        if name not in links:
            raise chk.fail(p + ("link",), f"no link named {name!r}{did_you_mean(name, links)} "
                           f"(links: {', '.join(links)})")
        d = it.get("direction", "ab")
        if d not in ("ab", "ba"):
            raise chk.fail(p + ("direction",), f"a direction is \"ab\" (packets from a to b) or \"ba\", got {d!r}")
        wire = it.get("wire", "castlab")
        if wire not in ("castlab", "pgm"):
            raise chk.fail(p + ("wire",), f"a wire format is \"castlab\" (castlab's envelope) or \"pgm\" "
                           f"(RFC 3208), got {wire!r}")
        l = links[name]
        twin = next((o for o in links.values() if o is not l and {o["a"], o["b"]} == {l["a"], l["b"]}), None)
        if twin is not None:
            raise chk.fail(p + ("link",), f"links {name!r} and {twin['name']!r} join the same two nodes: a capture "
                           "cannot tell them apart (castlab.Simulator.enable_pcap takes the nodes)")
        # one tap per direction of a link: a second would replace the first
        if (name, d) in taken:
            raise chk.fail(p + ("direction",), f"link {name!r} direction {d!r} is already captured by "
                           f"{taken[(name, d)]!r}")
        taken[(name, d)] = chk._names[p]
        out.append({"name": chk._names[p], "link": name, "direction": d, "wire": wire})
    return out
