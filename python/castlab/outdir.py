"""Output folders that never mix runs.

``castlab reproduce NAME`` writes into ``out/NAME`` and ``castlab scenario run FILE`` into
``out/SCENARIO`` unless told otherwise; before writing, the folder is read for whose outputs it
holds already (a ``summary.json``'s ``experiment``, a ``reproduce --all`` report, a scenario's
``seed-N`` folders and their parameters). Writing one experiment or scenario over another's
files is refused with the reason: the two would otherwise sit side by side in one folder, a
summary beside another run's CSVs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

__all__ = ["OutDirError", "owners", "check_reproduce_out", "check_all_out", "check_scenario_out"]


class OutDirError(ValueError):
    """The output folder holds another experiment's or scenario's outputs."""


def _summary(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def owners(out: Path) -> dict[str, Any]:
    """What `out` holds: ``{"experiment": name or None (a flat summary.json), "report": bool
    (a reproduce --all folder), "seeds": {seed folder name: (experiment, params)}}``."""
    out = Path(out)
    found: dict[str, Any] = {"experiment": None, "report": False, "seeds": {}}
    if not out.is_dir():
        return found
    s = _summary(out / "summary.json")
    if s is not None:
        found["experiment"] = s.get("experiment")
    found["report"] = (out / "report.json").exists() or (out / "report.md").exists()
    for d in sorted(out.glob("seed-*")):
        s = _summary(d / "summary.json")
        if s is not None:
            found["seeds"][d.name] = (s.get("experiment"), s.get("params"))
    return found


def _refuse(out: Path, what: str, fix: str) -> OutDirError:
    return OutDirError(f"{out} holds {what}; {fix} (outputs of two runs are never mixed in one folder)")


def check_reproduce_out(out: Path, experiment: str) -> None:
    """Refuse to write `experiment`'s outputs into `out` when it holds another's."""
    o = owners(out)
    fix = f"give another --out, e.g. --out {Path(out) / experiment}, or remove it"
    if o["experiment"] not in (None, experiment):
        raise _refuse(out, f"the outputs of experiment {o['experiment']!r}", fix)
    if o["report"]:
        raise _refuse(out, "the outputs of `castlab reproduce --all`", fix)
    if o["seeds"]:
        names = sorted({str(e) for e, _ in o["seeds"].values()})
        raise _refuse(out, f"the seed folders of {', '.join(names)}", fix)


def check_all_out(out: Path, names: list[str]) -> None:
    """`reproduce --all` writes out/NAME per experiment and the report into `out`: refuse when
    `out` is one experiment's or scenario's folder, or a subfolder holds another's outputs."""
    o = owners(out)
    fix = "give another --out or remove it"
    if o["experiment"] is not None:
        raise _refuse(out, f"the outputs of experiment {o['experiment']!r}", fix)
    if o["seeds"]:
        names_ = sorted({str(e) for e, _ in o["seeds"].values()})
        raise _refuse(out, f"the seed folders of {', '.join(names_)}", fix)
    for n in names:
        check_reproduce_out(Path(out) / n, n)


def _canonical(params: Any) -> str:
    return json.dumps(params, sort_keys=True, default=str)


def check_scenario_out(out: Path, scenario_name: str, params: Any) -> None:
    """Refuse to write seed folders of scenario `scenario_name` with the canonical parameters
    `params` into `out` when it holds another experiment's, another scenario's, or the same
    scenario's with other parameters (an edited file, another ``--set``)."""
    o = owners(out)
    fix = f"give another --out, e.g. --out {Path(out).parent / scenario_name}-2, or remove it"
    if o["experiment"] is not None:
        raise _refuse(out, f"the outputs of {o['experiment']!r}", fix)
    if o["report"]:
        raise _refuse(out, "the outputs of `castlab reproduce --all`", fix)
    ours = f"scenario:{scenario_name}"
    want = _canonical(json.loads(_canonical(params)))
    for seed_dir, (exp, p) in o["seeds"].items():
        if exp != ours:
            raise _refuse(out, f"{seed_dir} of {exp!r}", fix)
        if _canonical(p) != want:
            raise _refuse(out, f"{seed_dir} of scenario {scenario_name!r} run with other parameters", fix)
