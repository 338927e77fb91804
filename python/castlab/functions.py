"""The protocols' registered functions: what a protocol offers without a simulator or a
network (an offline model, a formula of its paper), each with the signature and documentation
registered beside its code in Rust (``castlab._native.protocols()``, key ``functions``).

    from castlab.functions import NAME
"""

from __future__ import annotations

from castlab import _registry

_FUNCTIONS = _registry.functions()
globals().update(_FUNCTIONS)

__all__ = sorted(_FUNCTIONS)
