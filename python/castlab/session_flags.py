"""The settings every process of a real-network session shares, and how they are read: the
session flags (``--session``, ``--key``, ``--port-base``...), their defaults, ``--session-file``,
and the ``NAME=VALUE`` overrides of ``--config`` and ``--extension``.

A leaf module: the host roles (:mod:`castlab.net`) and the router (:mod:`castlab.router`) both
read their session flags here, so neither imports the other for them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable, Optional

from castlab._native import net_default_config
from castlab.assign import parse_assignment

__all__ = ["DEFAULTS", "SESSION_DEFAULTS", "SESSION_FLAGS", "parse_key", "parse_override",
           "resolve_session_settings"]

#: Shown in --help; the values themselves come from Rust (NetConfig::default).
DEFAULTS = net_default_config()


def parse_key(text: str) -> bytes:
    """A pre-shared key: hex digits, or the path of a file that holds them."""
    p = Path(text)
    raw = p.read_text().strip() if p.is_file() else text.strip()
    try:
        key = bytes.fromhex(raw)
    except ValueError:
        raise argparse.ArgumentTypeError("--key: hex digits, or a file holding them") from None
    if not key:
        raise argparse.ArgumentTypeError("--key: empty key")
    return key


def parse_override(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` for ``--config``, in the grammar of ``--set`` (castlab.assign)."""
    try:
        return parse_assignment(text, "--config", "rate=64000")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _key_value(v) -> Optional[bytes]:
    return None if v is None else parse_key(str(v))


#: Settings every process of a session shares: (dest, (converter, default)). The command line's
#: flags default to "not given" so that a --session-file value applies only where no flag does.
SESSION_DEFAULTS: dict[str, tuple[Callable, object]] = {
    "session": (int, DEFAULTS["session_id"]),
    "key": (_key_value, None),
    "iface_addr": (str, DEFAULTS["iface_addr"]),
    "ttl": (int, DEFAULTS["ttl"]),
    "port_base": (int, DEFAULTS["port_base"]),
    "group_base": (str, "239.255.0.1"),
    "group_port": (int, None),
    "allow_any_group": (bool, False),
    "source_addr": (str, "127.0.0.1"),
    "seed": (int, DEFAULTS["seed"]),
    "layers": (int, 6),
}

SESSION_FLAGS = [
    ("--session", "session", {"type": int}, "session id"),
    ("--key", "key", {"type": parse_key}, "pre-shared key: hex digits or a file holding them"),
    ("--iface-addr", "iface_addr", {}, "interface address for multicast"),
    ("--ttl", "ttl", {"type": int}, "multicast TTL"),
    ("--port-base", "port_base", {"type": int}, "castlab port p is UDP port (base+p) mod 65536"),
    ("--group-base", "group_base", {}, "group g is this address + g"),
    ("--group-port", "group_port", {"type": int}, "UDP port of every group (None: the port base)"),
    ("--allow-any-group", "allow_any_group", {"action": "store_true"}, "allow groups outside 239.0.0.0/8"),
    ("--source-addr", "source_addr", {}, "the source host's address"),
    ("--seed", "seed", {"type": int}, "master seed"),
]


def resolve_session_settings(args: argparse.Namespace) -> None:
    """Fill the session settings not given as flags from ``--session-file`` or the defaults.
    Unknown keys in the file are an error naming them."""
    data = {}
    if getattr(args, "session_file", None):
        try:
            data = json.loads(Path(args.session_file).read_text())
        except (OSError, ValueError) as e:
            raise ValueError(f"--session-file: {e}") from None
        if not isinstance(data, dict):
            raise ValueError("--session-file: must hold a JSON object")
        data = {k.replace("-", "_"): v for k, v in data.items()}
        unknown = sorted(set(data) - set(SESSION_DEFAULTS))
        if unknown:
            raise ValueError(f"--session-file: unknown keys {unknown} (known: {sorted(SESSION_DEFAULTS)})")
    for dest, (conv, default) in SESSION_DEFAULTS.items():
        if hasattr(args, dest):
            continue
        if dest in data:
            try:
                setattr(args, dest, None if data[dest] is None else conv(data[dest]))
            except (TypeError, ValueError, argparse.ArgumentTypeError) as e:
                raise ValueError(f"--session-file: {dest}: {e}") from None
        else:
            setattr(args, dest, default)
