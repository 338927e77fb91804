"""The hand-written castlab/_native.pyi must match the compiled module: same classes,
functions, methods and parameters (names, order, defaults)."""

import ast
import inspect
import re
from pathlib import Path

import castlab._native as native

STUB = Path(castlab_path := native.__file__).parent / "_native.pyi"


def _stub_defs():
    tree = ast.parse(STUB.read_text())
    funcs, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    return funcs, classes


def _stub_constants():
    """Module-level names the stub declares with an annotation (`NAME: type`)."""
    tree = ast.parse(STUB.read_text())
    return {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}


def _params(fn: ast.FunctionDef):
    a = fn.args
    names = [x.arg for x in a.args]
    defaults = [None] * (len(a.args) - len(a.defaults)) + [
        ast.literal_eval(d) if not (isinstance(d, ast.Constant) and d.value is Ellipsis) else ... for d in a.defaults
    ]
    out = list(zip(names, defaults))
    if a.kwarg is not None:
        out.append(("**" + a.kwarg.arg, None))
    return out


def _runtime_params(obj):
    sig = inspect.signature(obj)
    out = []
    for p in sig.parameters.values():
        d = None if p.default is inspect.Parameter.empty else p.default
        out.append(("**" + p.name if p.kind is inspect.Parameter.VAR_KEYWORD else p.name, d))
    return out


def _compare(stub_fn, runtime, *, method):
    stub = _params(stub_fn)
    rt = _runtime_params(runtime)
    if method:
        assert stub[0][0] == "self"
        stub = stub[1:]
        if rt and rt[0][0] == "self":
            rt = rt[1:]
    assert [n for n, _ in stub] == [n for n, _ in rt], (stub_fn.name, stub, rt)
    for (n, sd), (_, rd) in zip(stub, rt):
        if sd is not ...:
            assert sd == rd, (stub_fn.name, n, sd, rd)


def test_module_level_names_match():
    funcs, classes = _stub_defs()
    public = {n for n in dir(native) if not n.startswith("_")}
    assert public == set(funcs) | set(classes) | {c for c in _stub_constants() if not c.startswith("_")}
    for name, fn in funcs.items():
        _compare(fn, getattr(native, name), method=False)


def test_class_methods_match():
    _, classes = _stub_defs()
    for cname, methods in classes.items():
        cls = getattr(native, cname)
        runtime = {n for n in dir(cls) if not n.startswith("_")}
        assert runtime == {n for n in methods if not n.startswith("_")}, cname
        for mname, fn in methods.items():
            if mname == "__init__":
                sig = cls.__text_signature__.replace("(", "(self, ", 1) if cls.__text_signature__ != "()" else "(self)"
                stub = [n for n, _ in _params(fn)]
                assert stub == [p.strip().split("=")[0] for p in sig.strip("()").split(",")], (stub, sig)
                continue
            attr = inspect.getattr_static(cls, mname)
            if isinstance(attr, property) or type(attr).__name__ == "getset_descriptor":
                assert any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list), mname
                continue
            _compare(fn, getattr(cls, mname), method=True)


def _all_stub_functions():
    funcs, classes = _stub_defs()
    yield from funcs.values()
    for methods in classes.values():
        yield from methods.values()


def test_every_config_override_names_its_protocol():
    """Protocol settings cross into Python one way: `**config`, checked in Rust against the
    Config's Default. Every registered role that takes them documents which config table
    (`config_defaults("...")`) lists its keys, and that table exists; the methods made from
    the registry carry the registered signature and documentation."""
    import castlab
    from castlab import _registry

    from castlab.net import NetDriver

    seen = 0
    for p in native.protocols():
        for r in p["roles"]:
            if not r["sim"]:
                # a role for the real network only: the simulator has no such method
                assert r["net"] and not hasattr(castlab.Simulator, r["name"]), r["name"]
                m = getattr(NetDriver, r["name"])
                assert m.__doc__.startswith(r["doc"]), r["name"]
                params = list(inspect.signature(m).parameters)
                assert params[4:4 + len(r["net_params"])] == [n for n, _, _ in r["net_params"]], r["name"]
                continue
            m = getattr(castlab.Simulator, r["name"])
            assert m.__doc__ == r["doc"], r["name"]
            params = list(inspect.signature(m).parameters)
            assert params[1:1 + len(r["params"])] == [n for n, _, _ in r["params"]], r["name"]
            if r["config"] is None:
                assert "config" not in params, r["name"]
                continue
            assert params[-1] == "config", r["name"]
            protos = re.findall(r'config_defaults\(\\?"(\w+)\\?"\)', r["doc"])
            assert r["config"] in protos, (r["name"], r["doc"])
            for t in protos:
                assert native.config_defaults(t), (r["name"], t)
            seen += 1
        for r in p["readers"]:
            assert getattr(castlab.Simulator, r["name"]).__doc__ == r["doc"]
    assert seen >= 12
    assert set(_registry.roles()).isdisjoint(dir(native.Simulator))


def test_every_method_in_the_stub_has_a_docstring():
    """`_native.pyi` carries docstrings (editors show them)."""
    import ast
    from pathlib import Path

    stub = Path(native.__file__).with_name("_native.pyi")
    missing = []
    for cls in ast.parse(stub.read_text()).body:
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and ast.get_docstring(fn) is None:
                    missing.append(f"{cls.name}.{fn.name}")
    assert not missing, missing


def test_every_registered_function_is_in_castlab_functions_with_its_signature():
    """A protocol's functions (offline models) come from the registry as module functions of
    `castlab.functions`, with the registered parameters, defaults and documentation; the
    native module itself lists none of them."""
    import castlab.functions as functions

    import pytest

    seen = 0
    for p in native.protocols():
        for f in p["functions"]:
            fn = getattr(functions, f["name"])
            assert fn.__doc__ == f["doc"], f["name"]
            sig = inspect.signature(fn).parameters
            want = [n for n, _, _ in f["params"]] + (["config"] if f["config"] is not None else [])
            assert list(sig) == want, f["name"]
            for n, default, required in f["params"]:
                assert (sig[n].default is inspect.Parameter.empty) == required, (f["name"], n)
                if not required:
                    assert sig[n].default == default, (f["name"], n)
            if f["config"] is not None:
                assert f'config_defaults(\\"{f["config"]}\\")' in f["doc"] or \
                    f'config_defaults("{f["config"]}")' in f["doc"], f["name"]
            assert not hasattr(native, f["name"]), f["name"]
            seen += 1
    assert seen >= 1 and sorted(functions.__all__) == functions.__all__
    with pytest.raises(ValueError, match="no registered function"):
        native.call_function("no_such_function", {})
    f = next(f for p in native.protocols() for f in p["functions"] if f["config"] is None)
    with pytest.raises(TypeError, match="missing argument"):
        native.call_function(f["name"], {})
    required = {n: 0 for n, _, req in f["params"] if req}
    with pytest.raises(TypeError, match="takes no config overrides"):
        native.call_function(f["name"], required, {"x": 1})


def test_the_registry_stubs_are_generated_and_current():
    """`castlab/_registered.pyi` (the registry-made methods of the simulator and the network
    driver) and `castlab/functions.pyi` hold what `python -m castlab._stub` generates from the
    registry: a role, reader or function added, renamed or re-documented in Rust without
    regenerating them fails here."""
    import subprocess
    import sys

    from castlab import _stub

    assert _stub.stale() == [], "run: python -m castlab._stub"
    r = subprocess.run([sys.executable, "-m", "castlab._stub", "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_registry_stub_lists_every_made_method_with_its_signature_and_doc():
    """Each method the registry installs on castlab.Simulator and castlab.net.NetDriver, and
    each function of castlab.functions, is in the generated stubs with the same parameters
    (names, order, defaults) and docstring as the live one; and nothing else is."""
    import castlab
    import castlab.functions as functions
    from castlab import _registry, _stub
    from castlab.net import NetDriver

    def stub_of(text):
        tree = ast.parse(text)
        return ({n.name: {f.name: f for f in n.body if isinstance(f, ast.FunctionDef)}
                 for n in tree.body if isinstance(n, ast.ClassDef)},
                {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)})

    classes, _ = stub_of(_stub.registered())
    made = {"Simulator": set(), "NetDriver": set()}
    for p in _registry.protocols():
        for r in p["roles"] + p["readers"]:
            if r["sim"]:
                made["Simulator"].add(r["name"])
            if r["net"]:
                made["NetDriver"].add(r["name"])
    for cname, cls in (("Simulator", castlab.Simulator), ("NetDriver", NetDriver)):
        assert set(classes[cname]) == made[cname], cname
        for name, fn in classes[cname].items():
            live = getattr(cls, name)
            _compare(fn, live, method=True)
            assert ast.get_docstring(fn) == inspect.cleandoc(live.__doc__), (cname, name)
    _, funcs = stub_of(_stub.functions())
    assert sorted(funcs) == functions.__all__
    for name, fn in funcs.items():
        _compare(fn, getattr(functions, name), method=False)
        assert ast.get_docstring(fn) == inspect.cleandoc(getattr(functions, name).__doc__), name
