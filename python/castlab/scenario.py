"""Declarative scenarios (issue 15, item 1): a TOML file or a dict describes a simulation.

A scenario is data: nodes, links with their queues, sessions (a source and its multicast
groups), receivers with their protocol configs, TCP and CBR flows, router services, monitors,
the duration and the seeds. ``Scenario.from_toml(path)`` reads a file, ``Scenario.from_dict(d)``
takes the same schema built in code, ``build(seed)`` gives a :class:`castlab.Simulator` and
``run(seed, out)`` runs it, writes the outputs and returns flat summary metrics. The schema is
documented in ``docs/guide.md`` ("Scenarios"); ``examples/tree.toml`` is a worked file.

Every check names the key as a dotted path (``links.bottleneck.delay``: tables of the file are
addressed by their ``name``) and, for a file, its line. tomllib gives no line numbers, so
:class:`_Lines` finds them with a small scan of the text: good for ``key = value`` lines, keys
of inline tables written on one line and ``[[table]]`` headers.

The same dotted paths override values in :meth:`Scenario.with_params` (the sweep runner's
grid keys): ``{"links.bottleneck.delay": "20ms", "receivers.r1.config.deaf_period": 5}``.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import os
import platform
import re
import shutil
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from castlab.seeds import parse_seeds
from castlab.units import UnitError, parse_rate, parse_time

__all__ = ["Scenario", "ScenarioError", "Handles", "FLOW_COLUMNS"]


# The columns of the per-receiver / per-flow table (a FlowMonitor-like summary).
FLOW_COLUMNS = ["name", "kind", "node", "sent", "received", "lost", "loss", "mean_rate_bps",
                "final_level"]

# Which receiver protocols a session kind accepts; the first is the default.
_RECEIVERS_OF = {
    "layered": ("rlm", "sink"),
    "rlc": ("rlc",),
    "nlm": ("nlm",),
    "lesbcc": ("pgm",),
    "fountain": ("rainbow",),
    "bcf_pgm": ("bcf_pgm",),
}
# The config_defaults(...) table each protocol's `config` is checked against.
_CONFIG_OF = {"rlm": "rlm", "rlc": "rlc", "nlm": "nlm", "pgm": "pgm", "rainbow": "rainbow",
              "tcp": "tcp", "lesbcc": "lesbcc", "lmr": "nlm", "bcf": "bcf", "bcf_pgm": "bcf_pgm"}

_TABLES = ("links", "sessions", "receivers", "tcp", "cbr", "routers", "monitors")
_TOP_KEYS = {"name", "description", "duration", "seeds", "windows", "simulator", "nodes", *_TABLES}


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
        if v not in nodes:
            raise self.fail(path, f"no node named {v!r} (nodes: {', '.join(nodes)})")
        return v

    def config(self, d: Any, protocol: str, path: tuple) -> dict:
        """Overrides of a protocol's Config: names checked against Rust's Default; strings on
        duration fields read with units ("5s"), on *_bps fields as rates."""
        from castlab._native import config_defaults

        defaults = config_defaults(_CONFIG_OF[protocol])
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
    receivers, TCP and CBR flows share one namespace (they are the rows of the flow table)."""
    names: dict = {}
    flows: dict[str, tuple] = {}
    chk._names = names
    for t in _TABLES:
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
            if t in ("receivers", "tcp", "cbr"):
                if n in flows:
                    raise chk.fail((t, i, "name"), f"{n!r} is also {flows[n][0]} entry {flows[n][1]}'s name "
                                   "(receivers, tcp and cbr flows share names)")
                flows[n] = (t, i)
            seen.add(n)
            names[(t, i)] = n


def _default_name(table: str, i: int, it: dict) -> str:
    if table == "links" and isinstance(it.get("a"), str) and isinstance(it.get("b"), str):
        return f"{it['a']}-{it['b']}"
    return {"links": "link", "sessions": "session", "receivers": "rx", "tcp": "tcp", "cbr": "cbr",
            "routers": "router", "monitors": "monitor"}[table] + str(i + 1)


def _normalise(raw: dict, chk: _Checker) -> dict:
    """The canonical scenario: every key present, quantities in SI (s, bit/s), items named."""
    chk.keys(raw, _TOP_KEYS, (), required=("duration", "nodes"))
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

    sim = chk.keys(raw.get("simulator", {}), {"join_latency", "leave_latency", "queue_avg_weight"}, ("simulator",))
    out["simulator"] = {
        "join_latency": chk.time(sim.get("join_latency", 0.0), ("simulator", "join_latency"), max_s=100.0),
        "leave_latency": chk.time(sim.get("leave_latency", 0.0), ("simulator", "leave_latency"), max_s=100.0),
        "queue_avg_weight": float(chk.typed(sim.get("queue_avg_weight", 0.002), (int, float),
                                            ("simulator", "queue_avg_weight"), "a number")),
    }

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
    if not any(r["kind"] == "bcf" for r in out["routers"]):
        for i, s in enumerate(out["sessions"]):
            if s["kind"] in ("fountain", "bcf_pgm"):
                raise chk.fail(("sessions", i, "kind"), f"a {s['kind']} session needs BCF routers: "
                               "add [[routers]] kind = \"bcf\"")
    out["receivers"] = [_receiver(chk, i, it, nodes, sessions) for i, it in enumerate(raw.get("receivers", []))]
    out["tcp"] = [_tcp(chk, i, it, nodes) for i, it in enumerate(raw.get("tcp", []))]
    out["cbr"] = [_cbr(chk, i, it, nodes) for i, it in enumerate(raw.get("cbr", []))]
    out["monitors"] = [_monitor(chk, i, it, links) for i, it in enumerate(raw.get("monitors", []))]
    return out


def _start(chk: _Checker, v: Any, path: tuple) -> Union[float, list[float]]:
    """A start time, or [lo, hi]: drawn uniformly per seed (RLM §4's receivers start on [30, 120] s)."""
    if isinstance(v, list):
        if len(v) != 2:
            raise chk.fail(path, f"a start range is [lo, hi], got {v!r}")
        lo, hi = (chk.time(x, path, max_s=None) for x in v)
        if hi < lo:
            raise chk.fail(path, f"start range {v!r} runs backwards")
        return [lo, hi]
    return chk.time(v, path, max_s=None)


def _stop(chk: _Checker, v: Any, path: tuple) -> Optional[float]:
    return None if v is None else chk.time(v, path, max_s=None)


_LINK_KEYS = {"name", "a", "b", "rate", "delay", "queue", "queue_limit", "loss_ab", "loss_ba", "cost",
              "red_min_th", "red_max_th", "red_max_p", "red_w_q", "red_gentle", "red_mark", "mean_pkt_bytes"}
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
    return out


def _router(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("routers", i)
    kind = it.get("kind")
    allowed = {"lmr": {"name", "kind", "node", "config"}, "bcf": {"name", "kind", "nodes", "config"},
               "nak_aggregator": {"name", "kind", "node", "hold"}}
    if kind not in allowed:
        raise chk.fail(p + ("kind",), f"a router kind is one of {', '.join(allowed)}, got {kind!r}")
    chk.keys(it, allowed[kind], p, required=("node",) if kind != "bcf" else ())
    out = {"name": chk._names[("routers", i)], "kind": kind}
    if kind == "bcf":
        ns = it.get("nodes")
        out["nodes"] = None if ns is None else [chk.node(n, p + ("nodes",), nodes) for n in ns]
        out["config"] = chk.config(it.get("config", {}), "bcf", p + ("config",))
    else:
        out["node"] = chk.node(it["node"], p + ("node",), nodes)
        if kind == "lmr":
            out["config"] = chk.config(it.get("config", {}), "lmr", p + ("config",))
        else:
            out["hold"] = chk.time(it.get("hold", 0.5), p + ("hold",), max_s=100.0, allow_zero=False)
    return out


_SESSION_KEYS = {
    "layered": {"rates", "layers", "base_rate", "packet_size", "jitter", "start", "stop"},
    "rlc": {"flow", "start", "stop", "config"},
    "nlm": {"rates", "layers", "base_rate", "packet_size", "jitter", "start", "stop", "flow", "config"},
    "lesbcc": {"flow", "start", "config"},
    "fountain": {"packet_bytes", "start"},
    "bcf_pgm": {"rate", "count", "flow", "start", "config"},
}


def _rates(chk: _Checker, it: dict, p: tuple) -> list[float]:
    """Layer rates: `rates = [...]`, or `layers = n` with `base_rate` doubling per layer (RLM §4's
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
    kind = it.get("kind", "layered")
    if kind not in _SESSION_KEYS:
        raise chk.fail(p + ("kind",), f"a session kind is one of {', '.join(_SESSION_KEYS)}, got {kind!r}")
    chk.keys(it, _SESSION_KEYS[kind] | {"name", "kind", "source"}, p, required=("source",))
    out: dict[str, Any] = {"name": chk._names[("sessions", i)], "kind": kind,
                           "source": chk.node(it["source"], p + ("source",), nodes),
                           "start": chk.time(it.get("start", 0.0), p + ("start",), max_s=None)}
    if kind in ("layered", "nlm"):
        out["rates"] = _rates(chk, it, p)
        out["packet_size"] = chk.int_(it.get("packet_size", 1000 if kind == "layered" else 1024),
                                      p + ("packet_size",), 1, 65535)
        out["jitter"] = chk.typed(it.get("jitter", True), bool, p + ("jitter",), "true or false")
    if kind in ("layered", "nlm", "rlc"):
        out["stop"] = _stop(chk, it.get("stop"), p + ("stop",))
    if kind in ("rlc", "nlm", "lesbcc"):
        out["flow"] = chk.int_(it.get("flow", i + 1), p + ("flow",))
        out["config"] = chk.config(it.get("config", {}), {"rlc": "rlc", "nlm": "nlm", "lesbcc": "lesbcc"}[kind],
                                   p + ("config",))
    if kind == "fountain":
        out["packet_bytes"] = chk.int_(it.get("packet_bytes", 512), p + ("packet_bytes",), 1, 65535)
    if kind == "bcf_pgm":
        if "rate" not in it:
            raise chk.fail(p, "missing required key 'rate' (the source's sending rate)")
        out["rate"] = chk.rate(it["rate"], p + ("rate",))
        out["count"] = chk.int_(it.get("count", 1000), p + ("count",), 1)  # packets in the transfer
        out["flow"] = chk.int_(it.get("flow", i + 1), p + ("flow",))
        out["config"] = chk.config(it.get("config", {}), "bcf_pgm", p + ("config",))
    return out


def _receiver(chk: _Checker, i: int, it: dict, nodes: list[str], sessions: dict) -> dict:
    p = ("receivers", i)
    chk.typed(it.get("session"), str, p + ("session",), "a session name")
    if it.get("session") not in sessions:
        raise chk.fail(p + ("session",), f"no session named {it.get('session')!r} "
                       f"(sessions: {', '.join(sessions) or 'none'})")
    s = sessions[it["session"]]
    accepted = _RECEIVERS_OF[s["kind"]]
    proto = it.get("protocol", accepted[0])
    if proto not in accepted:
        raise chk.fail(p + ("protocol",), f"a {s['kind']} session takes receivers of protocol "
                       f"{' or '.join(accepted)}, got {proto!r}")
    extra = {"rlm": {"config"}, "sink": {"level", "schedule"}, "rlc": {"config"},
             "nlm": {"config", "layers", "bin"}, "pgm": {"config"}, "rainbow": {"config", "needed_packets"},
             "bcf_pgm": {"config"}}[proto]
    chk.keys(it, {"name", "node", "session", "protocol", "start"} | extra, p, required=("node", "session"))
    out: dict[str, Any] = {"name": chk._names[("receivers", i)], "node": chk.node(it["node"], p + ("node",), nodes),
                           "session": s["name"], "protocol": proto,
                           "start": _start(chk, it.get("start", 0.0), p + ("start",))}
    if "config" in extra:
        out["config"] = chk.config(it.get("config", {}), proto, p + ("config",))
    if proto == "sink":
        has_level, has_schedule = it.get("level") is not None, it.get("schedule") is not None
        if has_level == has_schedule:
            raise chk.fail(p, "a sink takes either level (fixed from its start) or schedule = [[time, level], ...]")
        n = len(s["rates"])
        out["level"], out["schedule"] = None, None
        if has_level:
            out["level"] = chk.int_(it["level"], p + ("level",), 0, n)
        else:
            sched = chk.typed(it["schedule"], list, p + ("schedule",), "a list of [time, level]")
            out["schedule"] = []
            for e in sched:
                if not isinstance(e, list) or len(e) != 2:
                    raise chk.fail(p + ("schedule",), f"each entry is [time, level], got {e!r}")
                out["schedule"].append([chk.time(e[0], p + ("schedule",), max_s=None),
                                        chk.int_(e[1], p + ("schedule",), 0, n)])
    if proto == "nlm":
        out["layers"] = chk.int_(it.get("layers", len(s["rates"])), p + ("layers",), 1, 32)
        out["bin"] = chk.time(it.get("bin", 1.0), p + ("bin",), max_s=100.0, allow_zero=False)
    if proto == "rainbow":
        out["needed_packets"] = chk.int_(it.get("needed_packets", 2000), p + ("needed_packets",), 1)
    return out


def _tcp(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("tcp", i)
    chk.keys(it, {"name", "src", "dst", "variant", "start", "stop", "transfer_bytes", "config"}, p,
             required=("src", "dst"))
    v = it.get("variant", "newreno")
    if v not in ("reno", "newreno"):
        raise chk.fail(p + ("variant",), f"a TCP variant is \"reno\" or \"newreno\", got {v!r}")
    tb = it.get("transfer_bytes")
    return {"name": chk._names[("tcp", i)], "src": chk.node(it["src"], p + ("src",), nodes),
            "dst": chk.node(it["dst"], p + ("dst",), nodes), "variant": v,
            "start": chk.time(it.get("start", 0.0), p + ("start",), max_s=None),
            "stop": _stop(chk, it.get("stop"), p + ("stop",)),
            "transfer_bytes": None if tb is None else chk.int_(tb, p + ("transfer_bytes",), 1, 2**63 - 1),
            "config": chk.config(it.get("config", {}), "tcp", p + ("config",))}


def _cbr(chk: _Checker, i: int, it: dict, nodes: list[str]) -> dict:
    p = ("cbr", i)
    chk.keys(it, {"name", "src", "dst", "rate", "packet_size", "start", "stop", "jitter", "port"}, p,
             required=("src", "dst", "rate"))
    return {"name": chk._names[("cbr", i)], "src": chk.node(it["src"], p + ("src",), nodes),
            "dst": chk.node(it["dst"], p + ("dst",), nodes), "rate": chk.rate(it["rate"], p + ("rate",)),
            "packet_size": chk.int_(it.get("packet_size", 1000), p + ("packet_size",), 1, 65535),
            "start": chk.time(it.get("start", 0.0), p + ("start",), max_s=None),
            "stop": _stop(chk, it.get("stop"), p + ("stop",)),
            "jitter": chk.typed(it.get("jitter", False), bool, p + ("jitter",), "true or false"),
            "port": chk.int_(it.get("port", 6000 + i), p + ("port",), 1, 65535)}


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


# ----------------------------------------------------------------------------- the scenario


@dataclass
class Handles:
    """What `build` made, by the names of the scenario's entries."""

    scenario: "Scenario"
    seed: int
    channels: dict[str, tuple[int, int]] = field(default_factory=dict)  # link -> (a->b, b->a)
    sessions: dict[str, dict] = field(default_factory=dict)  # name -> groups, control, source agent
    receivers: dict[str, int] = field(default_factory=dict)  # name -> agent id
    starts: dict[str, float] = field(default_factory=dict)  # receiver name -> start drawn for this seed
    tcp: dict[str, int] = field(default_factory=dict)  # name -> sender agent id
    cbr: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (source, sink) agent ids


class Scenario:
    """A simulation described as data. Build one with :meth:`from_toml` or :meth:`from_dict`."""

    def __init__(self, data: dict, source: Optional[str] = None):
        # `data` is canonical (from _normalise); use the constructors.
        self._data = data
        self.source = source

    def __repr__(self) -> str:
        d = self._data
        return (f"Scenario({d['name']!r}, {len(d['nodes'])} nodes, {len(d['links'])} links, "
                f"{len(d['receivers'])} receivers, {len(d['tcp'])} tcp, {len(d['cbr'])} cbr, "
                f"{d['duration']:g} s)")

    # -- construction

    @classmethod
    def from_toml(cls, path: Union[str, Path], strict: bool = True) -> "Scenario":
        """Read a scenario file. Errors name the key and its line; with ``strict=False`` an
        implausible value (a rate under 1 kb/s, a delay over 100 s) is a warning instead."""
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11: the same parser, as the tomli package
            import tomli as tomllib

        path = Path(path)
        text = path.read_text()
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{path}: {e}") from None
        chk = _Checker(str(path), _Lines(text), strict)
        return cls(_normalise(raw, chk), source=str(path))

    @classmethod
    def from_dict(cls, d: dict, strict: bool = True) -> "Scenario":
        """The same schema as a file, built in code (values may be numbers in SI or strings
        with units)."""
        chk = _Checker(None, None, strict)
        return cls(_normalise(copy.deepcopy(d), chk))

    # -- the sweep runner's contract

    @property
    def name(self) -> str:
        return self._data["name"]

    @property
    def seeds(self) -> list[int]:
        return list(self._data["seeds"])

    @property
    def duration(self) -> float:
        return self._data["duration"]

    def to_dict(self) -> dict:
        """The canonical form: every key present, times in s and rates in bit/s, entries
        named. JSON-serialisable; ``from_dict(to_dict())`` gives the same scenario."""
        return copy.deepcopy(self._data)

    def with_params(self, params: dict[str, Any]) -> "Scenario":
        """A new scenario with dotted keys overridden: ``"duration"``, ``"links.bottleneck.delay"``,
        ``"receivers.r1.config.deaf_period"`` (entries of [[tables]] by their name). An unknown
        key is an error naming it."""
        d = self.to_dict()
        for key, value in params.items():
            parts = key.split(".")
            node: Any = d
            path: list[str] = []
            for j, part in enumerate(parts[:-1]):
                path.append(part)
                if isinstance(node, list):
                    match = [x for x in node if isinstance(x, dict) and x.get("name") == part]
                    if not match:
                        names = [x.get("name") for x in node]
                        raise ScenarioError(f"{key!r}: no {'.'.join(path[:-1])} entry named {part!r} "
                                            f"(names: {', '.join(map(str, names)) or 'none'})")
                    node = match[0]
                elif isinstance(node, dict):
                    if part not in node:
                        if part == "config" and j > 0:
                            node[part] = {}
                        else:
                            raise ScenarioError(f"{key!r}: unknown key {'.'.join(path)!r}")
                    node = node[part]
                else:
                    raise ScenarioError(f"{key!r}: {'.'.join(path[:-1])!r} is a value, not a table")
            last = parts[-1]
            if isinstance(node, list):
                raise ScenarioError(f"{key!r}: name an entry of {'.'.join(path) or last!r} and its key "
                                    f"(e.g. {key}.NAME.KEY)")
            if not isinstance(node, dict):
                raise ScenarioError(f"{key!r}: {'.'.join(path)!r} is a value, not a table")
            # a key the entry does not have yet: only config fields (checked by from_dict) and
            # the optional keys the schema allows, so a typo is caught below
            node[last] = value
        try:
            return Scenario.from_dict(d)
        except ScenarioError as e:
            raise ScenarioError(f"with_params({', '.join(params)}): {e}") from None

    # -- building and running

    def build(self, seed: int):
        """A :class:`castlab.Simulator` for this scenario and ``seed``; its ``scenario_handles``
        attribute (:class:`Handles`) maps the entries' names to agent ids and channels."""
        import numpy as np

        from castlab import Simulator

        d = self._data

        def at(path: str, fn, *args, **kw):
            try:
                return fn(*args, **kw)
            except ValueError as e:
                where = f"{self.source}: " if self.source else ""
                raise ScenarioError(f"{where}{path}: {e}") from None

        s = d["simulator"]
        sim = at("simulator", Simulator, seed=seed, join_latency=s["join_latency"],
                 leave_latency=s["leave_latency"], queue_avg_weight=s["queue_avg_weight"])
        h = Handles(self, seed)

        for n in d["nodes"]:
            sim.add_node(n)
        for l in d["links"]:
            kw = {k: l[k] for k in _RED_KEYS if k in l}
            h.channels[l["name"]] = at(f"links.{l['name']}", sim.add_link, l["a"], l["b"], l["rate"], l["delay"],
                                       queue=l["queue"], queue_limit_pkts=l["queue_limit"], loss_ab=l["loss_ab"],
                                       loss_ba=l["loss_ba"], cost=l["cost"], **kw)
        for r in d["routers"]:
            p = f"routers.{r['name']}"
            if r["kind"] == "bcf":
                at(p, sim.add_bcf_routers, r["nodes"], **r["config"])
            elif r["kind"] == "lmr":
                at(p, sim.attach_lmr, r["node"], **r["config"])
            else:
                at(p, sim.attach_nak_aggregator, r["node"], hold=r["hold"])
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
            if k == "layered":
                info["groups"] = [at(p, sim.add_group, se["source"]) for _ in se["rates"]]
                info["control"] = at(p, sim.add_group, se["source"])
                info["source"] = at(p, sim.add_layered_source, se["source"], info["groups"], se["rates"],
                                    packet_size=se["packet_size"], start=se["start"], stop=se["stop"],
                                    jitter=se["jitter"])
            elif k == "rlc":
                from castlab._native import config_defaults

                layers = se["config"].get("layers", config_defaults("rlc")["layers"])
                info["groups"] = [at(p, sim.add_group, se["source"]) for _ in range(int(layers))]
                info["source"] = at(p, sim.add_rlc_sender, se["source"], info["groups"], se["flow"],
                                    start=se["start"], stop=se["stop"], **se["config"])
            elif k == "nlm":
                info["groups"] = [at(p, sim.add_group, se["source"])]
                info["source"] = at(p, sim.add_nlm_sender, se["source"], info["groups"][0], se["rates"],
                                    packet_size=se["packet_size"], flow=se["flow"], start=se["start"],
                                    stop=se["stop"], jitter=se["jitter"], **se["config"])
            elif k == "lesbcc":
                info["groups"] = [at(p, sim.add_group, se["source"])]
                info["source"] = at(p, sim.add_lesbcc_source, se["source"], info["groups"][0], flow=se["flow"],
                                    start=se["start"], **se["config"])
            elif k == "bcf_pgm":
                info["groups"] = [at(p, sim.add_group, se["source"])]
                info["source"] = at(p, sim.add_bcf_pgm_source, se["source"], info["groups"][0], se["count"],
                                    se["rate"], start=se["start"], flow=se["flow"], **se["config"])
            else:  # fountain
                info["groups"] = []
                info["source"] = at(p, sim.add_fountain_source, se["source"], packet_bytes=se["packet_bytes"],
                                    start=se["start"])
            h.sessions[se["name"]] = info
        sessions = {se["name"]: se for se in d["sessions"]}
        for i, r in enumerate(d["receivers"]):
            p = f"receivers.{r['name']}"
            se, info = sessions[r["session"]], h.sessions[r["session"]]
            start = r["start"]
            if isinstance(start, list):
                # its own stream per (seed, receiver index), so it depends on the seed only
                start = float(np.random.default_rng([seed, 0x5343454E, i]).uniform(start[0], start[1]))
            h.starts[r["name"]] = start
            proto, cfg = r["protocol"], r.get("config", {})
            if proto == "rlm":
                # the scenario's windows are computed online (RLM receivers keep no arrivals
                # unless record="arrivals"), with any the receiver's own config asks for
                kw = {**cfg, "windows": sorted(set(d["windows"]) | set(cfg.get("windows") or []))}
                a = at(p, sim.add_rlm_receiver, r["node"], info["groups"], info["control"], start=start, **kw)
            elif proto == "sink":
                # a fixed level is joined at the receiver's start
                sched = [(start, r["level"])] if r["level"] is not None else [(t, lv) for t, lv in r["schedule"]]
                a = at(p, sim.add_sink, r["node"], groups=info["groups"], schedule=sched, start=start,
                       windows=d["windows"])
            elif proto == "rlc":
                a = at(p, sim.add_rlc_receiver, r["node"], info["groups"], se["flow"], start=start,
                       **{**se["config"], **cfg})
            elif proto == "nlm":
                a = at(p, sim.add_nlm_receiver, r["node"], info["groups"][0], layers=r["layers"], start=start,
                       bin=r["bin"], **cfg)
            elif proto == "pgm":
                a = at(p, sim.add_pgm_receiver, r["node"], info["groups"][0], flow=se["flow"], start=start, **cfg)
            elif proto == "bcf_pgm":
                a = at(p, sim.add_bcf_pgm_receiver, r["node"], info["source"], start=start, **cfg)
            else:  # rainbow
                a = at(p, sim.add_rainbow_receiver, r["node"], info["source"], start=start,
                       needed_packets=r["needed_packets"], **cfg)
            h.receivers[r["name"]] = a
        for t in d["tcp"]:
            h.tcp[t["name"]] = at(f"tcp.{t['name']}", sim.add_tcp_flow, t["src"], t["dst"], variant=t["variant"],
                                  start=t["start"], stop=t["stop"], transfer_bytes=t["transfer_bytes"], **t["config"])
        for c in d["cbr"]:
            p = f"cbr.{c['name']}"
            sink = at(p, sim.add_sink, c["dst"], port=c["port"], start=c["start"], windows=d["windows"])
            src = at(p, sim.add_cbr, c["src"], c["dst"], c["port"], c["rate"], packet_size=c["packet_size"],
                     start=c["start"], stop=c["stop"], jitter=c["jitter"])
            h.cbr[c["name"]] = (src, sink)
        object.__setattr__(sim, "scenario_handles", h)
        return sim

    def flow_table(self, sim) -> list[dict]:
        """One row per receiver and flow after a run (FlowMonitor-like): sent, received, lost,
        loss, mean rate over [start, now], worst-window loss per window, final level.

        `sent` of a multicast receiver is what it should have got on the layers it subscribed
        (received + lost); `lost` of a TCP flow is segments sent that its sink never counted
        (in flight at the end included); NaN where a protocol keeps no such record (the
        worst-window loss of RLC, PGM, Rainbow and TCP)."""
        from castlab._native import worst_window_loss

        h: Handles = sim.scenario_handles
        d = self._data
        now = sim.now
        wins = d["windows"]
        levels = sim.level_timeline()
        sessions = {se["name"]: se for se in d["sessions"]}
        nan = float("nan")

        def final_level(agent: int) -> Optional[int]:
            idx = [i for i, a in enumerate(levels["agent"]) if int(a) == agent]
            return int(levels["level"][idx[-1]]) if idx else None

        def row(name, kind, node, received, lost, bytes_, start, worst, level, sent=None):
            sent = received + lost if sent is None else sent
            r = {"name": name, "kind": kind, "node": node, "sent": int(sent), "received": int(received),
                 "lost": int(lost), "loss": (lost / sent) if sent else nan,
                 "mean_rate_bps": bytes_ * 8 / (now - start) if now > start else nan,
                 "final_level": level}
            for w, v in zip(wins, worst):
                r[f"worst_loss_{w:g}s"] = v
            return r

        rows = []
        for r in d["receivers"]:
            a, se, start = h.receivers[r["name"]], sessions[r["session"]], h.starts[r["name"]]
            p = r["protocol"]
            if p == "rlm":
                rec = sim.rlm_records(a)
                rows.append(row(r["name"], p, r["node"], rec["received"], rec["lost"],
                                rec["received"] * se["packet_size"], start,
                                [sim.rlm_worst_window_loss(a, w) for w in wins],
                                int(rec["level"][-1]) if len(rec["level"]) else None))  # None: not started
            elif p == "sink":
                s = sim.sink_summary(a)
                lv = final_level(a)
                rows.append(row(r["name"], p, r["node"], s["received"], s["lost"], s["bytes"], start,
                                [s["worst_window_loss"].get(w, nan) for w in wins],
                                lv if lv is not None else (r["level"] if r["level"] is not None
                                                           else r["schedule"][-1][1])))
            elif p == "rlc":
                rec = sim.rlc_records(a)
                rows.append(row(r["name"], p, r["node"], sum(rec["received"]), sum(rec["lost"]), rec["bytes"], start,
                                [nan] * len(wins), int(rec["level"][-1]) if rec["level"] else None))
            elif p == "nlm":
                rec = sim.nlm_receiver_records(a)
                rcv, lst = rec["received"].sum(axis=1), rec["lost"].sum(axis=1)
                t_ns = [int(round((k + 1) * rec["bin_s"] * 1e9)) for k in range(len(rcv))]
                worst = [worst_window_loss(t_ns, [int(x) for x in rcv], [int(x) for x in lst], w)
                         if len(rcv) else nan for w in wins]
                rows.append(row(r["name"], p, r["node"], rec["total_received"], rec["total_lost"],
                                rec["total_received"] * se["packet_size"], start, worst, final_level(a)))
            elif p == "pgm":
                s = sim.pgm_receiver_stats(a)
                from castlab._native import config_defaults

                pkt = se["config"].get("packet_bytes", config_defaults("lesbcc")["packet_bytes"])
                rows.append(row(r["name"], p, r["node"], s["odata"], s["gaps"], (s["odata"] + s["rdata"]) * pkt,
                                start, [nan] * len(wins), None, sent=s["lead"]))
            elif p == "bcf_pgm":
                s = sim.bcf_pgm_stats(a)
                sent = sim.bcf_pgm_stats(h.sessions[r["session"]]["source"])["data_sent"]
                from castlab._native import config_defaults

                pkt = se["config"].get("packet_bytes", config_defaults("bcf_pgm")["packet_bytes"])
                got = s["data_received"]
                end = s["done_s"] if s["done_s"] is not None else now
                rr = row(r["name"], p, r["node"], got, max(sent - got, 0), 0, start, [nan] * len(wins), None, sent=sent)
                rr["mean_rate_bps"] = ((got + s["repairs_received"]) * pkt * 8 / (end - start)) if end > start else nan
                rows.append(rr)
            else:  # rainbow
                s = sim.rainbow_records(a)
                end = s["done_s"] if s["done_s"] is not None else now
                rr = row(r["name"], p, r["node"], s["received"], 0, s["received"] * se["packet_bytes"], start,
                         [nan] * len(wins), None)
                rr["mean_rate_bps"] = s["received"] * se["packet_bytes"] * 8 / (end - start) if end > start else nan
                rows.append(rr)
        for t in d["tcp"]:
            s = sim.tcp_stats(h.tcp[t["name"]])
            sent, got = s["segments_sent"], s["sink_segments"]
            rows.append(row(t["name"], "tcp", f"{t['src']}->{t['dst']}", got, max(sent - got, 0), s["received_bytes"], t["start"],
                            [nan] * len(wins), None, sent=sent))
        for c in d["cbr"]:
            s = sim.sink_summary(h.cbr[c["name"]][1])
            rows.append(row(c["name"], "cbr", f"{c['src']}->{c['dst']}", s["received"], s["lost"], s["bytes"], c["start"],
                            [s["worst_window_loss"].get(w, nan) for w in wins], None))
        return rows

    def metrics(self, rows: list[dict], sim) -> dict[str, Any]:
        """Flat scalar metrics: ``"r1.loss"`` per row and column, plus totals."""
        out: dict[str, Any] = {}
        for r in rows:
            for k, v in r.items():
                if k in ("name", "kind", "node"):
                    continue
                # plain scalars for the results store: None (no level for TCP) becomes NaN
                out[f"{r['name']}.{k}"] = float("nan") if v is None else (float(v) if isinstance(v, float) else int(v))
        sent = sum(r["sent"] for r in rows)
        lost = sum(r["lost"] for r in rows)
        out["total.sent"] = sent
        out["total.received"] = sum(r["received"] for r in rows)
        out["total.lost"] = lost
        out["total.loss"] = lost / sent if sent else float("nan")
        cons = sim.conservation()
        out["total.queue_drops"] = int(cons["queue_drops"])
        out["total.events"] = int(sim.engine_stats()["events"])
        return out

    def run(self, seed: int, out: Optional[Path] = None) -> dict[str, Any]:
        """Build, run for the scenario's duration, and return flat summary metrics (scalars;
        per row ``"NAME.COLUMN"``, and ``"total.*"``). With ``out``, write there summary.json,
        flows.csv, levels.csv and one CSV per monitor."""
        t0 = time.perf_counter()
        sim = self.build(seed)
        from castlab import run_with_progress

        run_with_progress(sim, self.duration, label=f"{self.name} seed {seed}")
        rows = self.flow_table(sim)
        metrics = self.metrics(rows, sim)
        if out is not None:
            # Written beside `out` and moved in when complete, summary.json last, so an
            # interrupted run never leaves a summary beside another run's CSVs.
            out = Path(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            work = out.parent / f".{out.name}.partial-{os.getpid()}"
            shutil.rmtree(work, ignore_errors=True)
            try:
                self._write(work, seed, sim, rows, metrics, time.perf_counter() - t0)
                out.mkdir(exist_ok=True)
                for f in sorted(work.iterdir(), key=lambda f: f.name == "summary.json"):
                    os.replace(f, out / f.name)
                work.rmdir()
            except BaseException:
                shutil.rmtree(work, ignore_errors=True)
                raise
        return metrics

    # -- outputs

    def _write(self, out: Path, seed: int, sim, rows: list[dict], metrics: dict, wall_s: float) -> None:
        out.mkdir(parents=True, exist_ok=True)
        h: Handles = sim.scenario_handles
        files = ["flows.csv"]
        write_csv(out / "flows.csv", rows)
        names = {a: n for n, a in h.receivers.items()}
        lv = sim.level_timeline()
        write_csv(out / "levels.csv", [{"time_s": int(t) / 1e9, "agent": int(a), "name": names.get(int(a), ""),
                                        "level": int(l)} for t, a, l in zip(lv["time_ns"], lv["agent"], lv["level"])],
                  columns=["time_s", "agent", "name", "level"])
        files.append("levels.csv")
        for m in self._data["monitors"]:
            ch = h.channels[m["link"]][0 if m["direction"] == "ab" else 1]
            fname = f"{m['kind']}_{m['name']}.csv"
            if m["kind"] == "queue":
                s = sim.channel_series(ch)
                write_csv(out / fname, [{"time_s": int(s["time_ns"][i]) / 1e9, "qlen": int(s["qlen"][i]),
                                         "qavg": float(s["qavg"][i]), "bytes": int(s["bytes"][i]),
                                         "drops": int(s["drops"][i])} for i in range(len(s["time_ns"]))],
                          columns=["time_s", "qlen", "qavg", "bytes", "drops"])
            else:
                link = next(l for l in self._data["links"] if l["name"] == m["link"])
                meter = sim.loss_meter(link["a"] if m["direction"] == "ab" else link["b"])
                lrows = []
                for flow, e in sorted(meter["flows"].items()):
                    off, dr = e["passed"], e["dropped"]
                    for b in range(off.shape[0]):
                        for layer in range(off.shape[1]):
                            if off[b, layer] or dr[b, layer]:
                                lrows.append({"time_s": (b + 1) * meter["bin_s"], "flow": int(flow), "layer": layer,
                                              "passed": int(off[b, layer]), "dropped": int(dr[b, layer])})
                write_csv(out / fname, lrows, columns=["time_s", "flow", "layer", "passed", "dropped"])
            files.append(fname)
        summary = {
            "experiment": f"scenario:{self.name}", "paper": "", "figure": "", "seed": seed,
            "params": self.to_dict(), "wall_s": round(wall_s, 3),
            "machine": f"{platform.machine()} {platform.system()} python {platform.python_version()}",
            "claims": [], "metrics": metrics, "flows": rows, "files": files,
        }
        (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default, allow_nan=True) + "\n")


def _json_default(x: Any):
    if hasattr(x, "item"):
        return x.item()
    return str(x)


def write_csv(path: Path, rows: list[dict], columns: Optional[list[str]] = None) -> None:
    """Rows to CSV with the csv module (no pandas: `import castlab` stays fast)."""
    if columns is None:
        columns = list(rows[0]) if rows else list(FLOW_COLUMNS)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})


def format_table(rows: list[dict]) -> str:
    """The flow table as aligned text, for the terminal."""
    if not rows:
        return "(no receivers or flows)"
    cols = list(rows[0])

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            if math.isnan(v):
                return "-"
            return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
        return str(v)

    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths)))]
    for x in cells:
        lines.append("  ".join(v.rjust(w) if i > 2 else v.ljust(w) for i, (v, w) in enumerate(zip(x, widths))))
    return "\n".join(lines)
