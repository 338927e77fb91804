"""Quantities with units for scenario files: rates (``"1.5Mbps"``) and times (``"10ms"``).

A bare number stays SI (bits per second, seconds). Errors name the key (and the line when the
caller knows it), so a unit slip in a scenario file points at the line to fix. Values that
parse but are implausible (a rate under 1 kb/s, a delay over 100 s: probably a unit slip)
raise ``UnitError`` too unless ``strict=False``, which turns them into a warning.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Optional, Union

__all__ = ["UnitError", "UnitWarning", "parse_rate", "parse_time"]

# Decimal prefixes, as in networking (1 Mbps = 10^6 bit/s). Byte rates are multiplied by 8.
_RATE_UNITS = {
    "bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9,
    "b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9,
}
_BYTE_RATE_UNITS = {"Bps": 8.0, "kBps": 8e3, "KBps": 8e3, "MBps": 8e6, "GBps": 8e9}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}

# Plausibility bounds (our choice, from typical unit slips: kb/s for b/s, ms for s).
MIN_RATE_BPS = 1e3
MAX_DELAY_S = 100.0

_NUMBER = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\s\d].*?)?\s*$")


class UnitError(ValueError):
    """A quantity that does not parse, has the wrong unit or is implausible."""


class UnitWarning(UserWarning):
    """An implausible quantity accepted because ``strict=False``."""


def _where(key: str, line: Optional[int]) -> str:
    return f"{key!r}" + (f" (line {line})" if line is not None else "")


def _split(value: Union[str, int, float], key: str, line: Optional[int]) -> tuple[float, Optional[str]]:
    if isinstance(value, bool):
        raise UnitError(f"{_where(key, line)}: expected a number or a string with a unit, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value), None
    if not isinstance(value, str):
        raise UnitError(f"{_where(key, line)}: expected a number or a string with a unit, got {value!r}")
    m = _NUMBER.match(value)
    if not m:
        raise UnitError(f"{_where(key, line)}: cannot read {value!r} as a number with a unit")
    return float(m.group(1)), m.group(2)


def _implausible(msg: str, strict: bool) -> None:
    if strict:
        raise UnitError(msg)
    warnings.warn(msg, UnitWarning, stacklevel=3)


def parse_rate(value: Union[str, int, float], key: str = "rate", line: Optional[int] = None,
               strict: bool = True) -> float:
    """A rate in bits per second: ``"1.5Mbps"``, ``"64 kb/s"``, ``"1MBps"`` (bytes) or a bare number."""
    number, unit = _split(value, key, line)
    if unit is None:
        scale = 1.0
    elif unit in _BYTE_RATE_UNITS:
        scale = _BYTE_RATE_UNITS[unit]
    elif unit.lower() in _RATE_UNITS:
        scale = _RATE_UNITS[unit.lower()]
    else:
        raise UnitError(f"{_where(key, line)}: unknown rate unit {unit!r} in {value!r} "
                        f"(use bps, kbps, Mbps, Gbps or a bare number in bit/s)")
    bps = number * scale
    if not math.isfinite(bps) or bps <= 0:
        raise UnitError(f"{_where(key, line)}: a rate must be positive and finite, got {value!r}")
    if bps < MIN_RATE_BPS:
        _implausible(f"{_where(key, line)}: {value!r} is {bps:g} bit/s, under 1 kb/s; "
                     f"a unit slip? (bare numbers are bit/s)", strict)
    return bps


def parse_time(value: Union[str, int, float], key: str = "delay", line: Optional[int] = None,
               strict: bool = True, allow_zero: bool = True,
               max_s: Optional[float] = MAX_DELAY_S) -> float:
    """A duration in seconds: ``"10ms"``, ``"2.5 s"``, ``"1min"`` or a bare number of seconds.

    ``max_s`` is the plausibility bound (100 s for a link delay); ``None`` for a run's duration.
    """
    number, unit = _split(value, key, line)
    if unit is None:
        scale = 1.0
    elif unit in _TIME_UNITS:
        scale = _TIME_UNITS[unit]
    else:
        raise UnitError(f"{_where(key, line)}: unknown time unit {unit!r} in {value!r} "
                        f"(use ns, us, ms, s, min or a bare number of seconds)")
    seconds = number * scale
    if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not allow_zero):
        raise UnitError(f"{_where(key, line)}: a time must be {'non-negative' if allow_zero else 'positive'} "
                        f"and finite, got {value!r}")
    if max_s is not None and seconds > max_s:
        _implausible(f"{_where(key, line)}: {value!r} is {seconds:g} s, over {max_s:g} s; a unit slip? "
                     f"(bare numbers are seconds)", strict)
    return seconds
