"""Seed lists as written on the command line: ``"5"``, ``"1-3"``, ``"1,4,7"``, ``"1-3,10"``.

Shared by ``castlab scenario run --seeds`` and ``castlab sweep --seeds``. Ranges are
inclusive; the result keeps the order written and drops repeats. Errors are ``ValueError`` that
quote the bad part.
"""

from __future__ import annotations

__all__ = ["parse_seeds"]

# Our choice: seeds are non-negative and fit the engine's u64; a range this long is a typo.
MAX_SEEDS = 1_000_000


def _int(part: str, text: str) -> int:
    try:
        value = int(part.strip())
    except ValueError:
        raise ValueError(f"seeds: {part.strip()!r} in {text!r} is not an integer") from None
    if value < 0:
        raise ValueError(f"seeds: {value} in {text!r} is negative")
    if value >= 2**64:
        raise ValueError(f"seeds: {value} in {text!r} does not fit in 64 bits")
    return value


def parse_seeds(text: str) -> list[int]:
    """The seeds that ``text`` lists: ``"5"`` -> [5], ``"1-3"`` -> [1, 2, 3], ``"1,4,7"``."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)  # a single seed given as a number
    if not isinstance(text, str):
        raise ValueError(f"seeds: expected a string such as '1-3' or '1,4,7', got {text!r}")
    if not text.strip():
        raise ValueError("seeds: empty (write e.g. '1-3', '1,4,7' or '5')")
    seeds: list[int] = []
    seen: set[int] = set()
    for item in text.split(","):
        if not item.strip():
            raise ValueError(f"seeds: empty item in {text!r}")
        if item.strip().startswith("-"):
            raise ValueError(f"seeds: {item.strip()!r} in {text!r} is negative")
        lo_hi = item.split("-")
        if len(lo_hi) == 1:
            values = [_int(lo_hi[0], text)]
        elif len(lo_hi) == 2:
            lo, hi = _int(lo_hi[0], text), _int(lo_hi[1], text)
            if hi < lo:
                raise ValueError(f"seeds: range {item.strip()!r} in {text!r} runs backwards")
            if hi - lo + 1 + len(seeds) > MAX_SEEDS:
                raise ValueError(f"seeds: {text!r} lists more than {MAX_SEEDS} seeds")
            values = range(lo, hi + 1)
        else:
            raise ValueError(f"seeds: cannot read {item.strip()!r} in {text!r} (write a-b)")
        for v in values:
            if v not in seen:
                seen.add(v)
                seeds.append(v)
    return seeds
