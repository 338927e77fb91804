"""``NAME=VALUE`` as typed on the command line: one grammar for ``--set``, ``--grid`` and
``--config``.

- NAME is the text before the first ``=``, stripped; it may not be empty.
- VALUE is read as a TOML value when it is one: ``3``, ``0.5``, ``1e6``, ``true``/``false``
  (any case), ``"text"``, ``[1, 2]``; otherwise it is the text itself, stripped (``20ms``,
  ``1.5Mbps``: units are the reader's to parse).
- ``--grid NAME=V1,V2,...`` gives several values: VALUE is split on the commas that are not
  inside brackets or quotes, and each part is read as above.

A leaf module: the command line and the real-network roles read their flags with it.
"""

from __future__ import annotations

import tomllib
from typing import Any

__all__ = ["parse_value", "parse_assignment", "parse_grid_item", "parse_grid"]


def parse_value(text: str) -> Any:
    """One VALUE: a TOML value when the text is one, else the text (stripped)."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return tomllib.loads(f"v = {t}")["v"]
    except tomllib.TOMLDecodeError:
        return t


def _name(text: str, flag: str, example: str, form: str = "NAME=VALUE") -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise ValueError(f"{flag} {text!r}: write {form}, e.g. {example}")
    return name.strip(), value


def parse_assignment(text: str, flag: str = "--set", example: str = "links.bottleneck.delay=20ms") -> tuple[str, Any]:
    """``NAME=VALUE`` -> (name, value). `flag` and `example` go into the error message."""
    name, value = _name(text, flag, example)
    return name, parse_value(value)


def _split_top(text: str) -> list[str]:
    """`text` split on the commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_grid_item(text: str, flag: str = "--grid") -> tuple[str, list]:
    """``NAME=V1,V2,...`` -> (name, [values])."""
    name, value = _name(text, flag, "delay=10ms,40ms", "NAME=V1,V2,...")
    parts = _split_top(value)
    if any(not p.strip() for p in parts):
        raise ValueError(f"{flag} {text!r}: an empty value (write NAME=V1,V2,...)")
    return name, [parse_value(p) for p in parts]


def parse_grid(items: list[str] | None, flag: str = "--grid") -> dict:
    """Every ``--grid`` item into one grid {name: [values]}; a name given twice is an error."""
    grid: dict = {}
    for item in items or []:
        name, values = parse_grid_item(item, flag)
        if name in grid:
            raise ValueError(f"{flag}: {name!r} given twice")
        grid[name] = values
    return grid
