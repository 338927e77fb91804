"""help() on every method of the extension prints what it does and its parameters: each
public method and function of castlab._native, and each method of castlab.Simulator and
castlab.net.NetDriver (whose protocol roles and readers are made from the protocol registry),
has a non-empty docstring that names every parameter, and a signature Python can read (help()
and IDEs show both)."""

from __future__ import annotations

import inspect
import pydoc
import re

import castlab
import castlab._native as native


def _public():
    for name in dir(native):
        if name.startswith("_"):
            continue
        obj = getattr(native, name)
        if inspect.isclass(obj):
            for m in dir(obj):
                if m.startswith("_"):
                    continue
                attr = inspect.getattr_static(obj, m)
                yield f"{name}.{m}", attr if type(attr).__name__ == "getset_descriptor" else getattr(obj, m)
        elif callable(obj):
            yield name, obj
    # the Python classes: every method the native class has, plus those made from the
    # protocol registry (one per role and reader) and tcp_goodput_bps
    import castlab.net

    for cls in (castlab.Simulator, castlab.net.NetDriver):
        for m in dir(cls):
            if not m.startswith("_"):
                attr = inspect.getattr_static(cls, m)
                prop = type(attr).__name__ == "getset_descriptor"
                yield f"{cls.__module__}.{cls.__name__}.{m}", attr if prop else getattr(cls, m)


def test_every_public_method_documents_each_parameter():
    missing = {}
    for qual, obj in _public():
        doc = (obj.__doc__ or "").strip()
        if not doc:
            missing[qual] = "no docstring"
            continue
        if type(obj).__name__ == "getset_descriptor":
            continue  # a property: no parameters
        params = [p.name for p in inspect.signature(obj).parameters.values() if p.name not in ("self", "cls")]
        absent = [p for p in params if not re.search(rf"\b{re.escape(p)}\b", doc)]
        if absent:
            missing[qual] = f"does not name {', '.join(absent)}"
    assert not missing, "\n".join(f"{k}: {v}" for k, v in sorted(missing.items()))


def test_help_prints_the_signature_and_the_text():
    text = pydoc.render_doc(castlab.Simulator.channel_stats, renderer=pydoc.plaintext)
    assert "channel_stats(self, /, channel)" in text and "channel" in text.split(")", 1)[1]
    text = pydoc.render_doc(castlab.Simulator.add_link, renderer=pydoc.plaintext)
    assert "queue_limit_pkts=50" in text and "Bernoulli loss" in text
    # a method made from the protocol registry shows its registered signature
    text = pydoc.render_doc(castlab.Simulator.add_rlm_receiver, renderer=pydoc.plaintext)
    assert "add_rlm_receiver(self, node, data_groups, control_group, start=0.0, **config)" in text
    assert "config_defaults" in text.split(")", 1)[1]
