"""Named methods made from the protocol registry (``castlab._native.protocols()``).

Each protocol describes its roles (``add_..``/``attach_..``), readers (records, status) and
functions (offline models) once, beside its code in Rust; the native module takes them by
name (``add_role``, ``read``, ``call_function``). This module gives each one its own method
with the registered signature and documentation, on :class:`castlab.Simulator` and on the
real-network driver, and each function its own module function in :mod:`castlab.functions`,
so nothing in Python lists a protocol.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from castlab import _native

_P = inspect.Parameter


def protocols() -> list[dict]:
    """The registry as plain data (cached)."""
    global _TABLE
    try:
        return _TABLE
    except NameError:
        _TABLE = _native.protocols()
        return _TABLE


def _signature(params: list, prefix: list[str], config: bool, method: bool = True) -> inspect.Signature:
    ps = [_P("self", _P.POSITIONAL_OR_KEYWORD)] if method else []
    ps += [_P(n, _P.POSITIONAL_OR_KEYWORD) for n in prefix]
    for name, default, required in params:
        ps.append(_P(name, _P.POSITIONAL_OR_KEYWORD, default=_P.empty if required else default))
    if config:
        ps.append(_P("config", _P.VAR_KEYWORD))
    return inspect.Signature(ps)


def _role_method(name: str, doc: str, params: list, config: bool, prefix: list[str]) -> Callable:
    sig = _signature(params, prefix, config)

    def method(self, *args, **kwargs):
        b = sig.bind(self, *args, **kwargs)
        b.apply_defaults()
        a = dict(b.arguments)
        a.pop("self")
        cfg = a.pop("config", {}) if config else {}
        head = [a.pop(n) for n in prefix]
        return self.add_role(name, *head, a, cfg)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__signature__ = sig  # type: ignore[attr-defined]
    return method


def _reader_method(name: str, doc: str, target: str, params: list) -> Callable:
    sig = _signature(params, [target], False)

    def method(self, *args, **kwargs):
        b = sig.bind(self, *args, **kwargs)
        b.apply_defaults()
        a = dict(b.arguments)
        a.pop("self")
        t = a.pop(target)
        return self.read(name, t, a)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__signature__ = sig  # type: ignore[attr-defined]
    return method


def _function(name: str, doc: str, params: list, config: bool) -> Callable:
    sig = _signature(params, [], config, method=False)

    def function(*args, **kwargs):
        b = sig.bind(*args, **kwargs)
        b.apply_defaults()
        a = dict(b.arguments)
        cfg = a.pop("config", {}) if config else {}
        return _native.call_function(name, a, cfg)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = sig  # type: ignore[attr-defined]
    return function


def functions() -> dict[str, Callable]:
    """Every registered function by name, as a Python function with the registered signature."""
    return {f["name"]: _function(f["name"], f["doc"], f["params"], f["config"] is not None)
            for p in protocols() for f in p["functions"]}


# What the real network's roles take instead of the simulator's `node` (and `start`, `port`).
_NET_DOC = ("\n\nOn the real network: `agent_id`, `node`, `port`: the agent's id in this driver (unique, "
            ">= 0), the node id it speaks as and its UDP port (base + `port`); it starts at once.")


def install(cls: type, net: bool) -> None:
    """Give `cls` a method per registered role and reader (for the real-network driver,
    only those that run there, with ``agent_id, node, port`` first). A method `cls` defines
    itself is kept: it wraps the registry's (through ``read``/``add_role``) and takes its
    documentation."""

    def put(name: str, method: Callable) -> None:
        own = cls.__dict__.get(name)
        if own is None:
            setattr(cls, name, method)
        elif own.__doc__ is None:
            own.__doc__ = method.__doc__

    for p in protocols():
        for r in p["roles"]:
            if (net and not r["net"]) or (not net and not r["sim"]):
                continue
            params = r["net_params"] if net else r["params"]
            prefix = ["agent_id", "node", "port"] if net else []
            doc = r["doc"] + _NET_DOC if net else r["doc"]
            put(r["name"], _role_method(r["name"], doc, params, r["config"] is not None, prefix))
        for r in p["readers"]:
            if (net and not r["net"]) or (not net and not r["sim"]):
                continue
            put(r["name"], _reader_method(r["name"], r["doc"], r["target"], r["params"]))


def roles() -> dict[str, dict]:
    """Every registered role by name."""
    return {r["name"]: r for p in protocols() for r in p["roles"]}


def readers() -> dict[str, dict]:
    """Every registered reader by name."""
    return {r["name"]: r for p in protocols() for r in p["readers"]}


def scenario_kinds() -> tuple[dict[str, dict], dict[str, dict], dict[str, dict]]:
    """The scenario's registered session, receiver and router kinds, by kind."""
    sessions: dict[str, Any] = {}
    receivers: dict[str, Any] = {}
    routers: dict[str, Any] = {}
    for p in protocols():
        for s in p["sessions"]:
            sessions[s["kind"]] = s
        for r in p["receivers"]:
            receivers[r["protocol"]] = r
        for r in p["routers"]:
            routers[r["kind"]] = r
    return sessions, receivers, routers


def flow_kinds() -> dict[str, dict]:
    """The scenario's registered flow tables (``[[tcp]]``, ``[[cbr]]``), by table."""
    return {f["table"]: f for p in protocols() for f in p["flows"]}
