"""Seed lists as people type them: ``"1-3,7"`` -> ``[1, 2, 3, 7]``."""

from __future__ import annotations

__all__ = ["parse_seeds"]


def parse_seeds(text: str) -> list[int]:
    """The seeds named by `text`: comma-separated integers and inclusive ranges ``a-b``, in the
    order given, each seed once (``"1-3,7"`` -> ``[1, 2, 3, 7]``). Seeds are non-negative.
    A malformed piece raises ``ValueError`` naming it."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"seeds: expected text such as '1-3,7', got {text!r}")
    seeds: list[int] = []
    seen: set[int] = set()
    for piece in text.split(","):
        p = piece.strip()
        lo_text, dash, hi_text = p.partition("-")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if dash else lo
        except ValueError:
            raise ValueError(f"seeds: cannot read {p!r} in {text!r} (expected N or A-B with A <= B, N >= 0)") from None
        if lo < 0 or hi < lo:
            raise ValueError(f"seeds: {p!r} in {text!r} is not a range A-B with 0 <= A <= B")
        if hi - lo >= 1_000_000:
            raise ValueError(f"seeds: {p!r} in {text!r} names over a million seeds; probably a typo")
        for s in range(lo, hi + 1):
            if s not in seen:
                seen.add(s)
                seeds.append(s)
    return seeds
