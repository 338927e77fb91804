"""A simulated twin's internal records in the testbed roles' own files: what ``castlab net ROLE
--out DIR`` writes for the source and each receiver (``source/``, ``rx_HOST/``), written from the
simulator's readers of the same agents, so that a testbed run and its twin can be read side by
side file by file (``lesbcc_rtt.csv``, ``lesbcc_stats.json``, ``rlm_level.csv``, ``rlm_exp.csv``,
``levels.csv``, ``rlc_level.csv``, ``tfmcc_fb.csv``, ``tfmcc_rate.csv``, ...).

The roles' writers (``castlab.net.RegisteredRole.write``, driven by each protocol's
registration) read the driver's records of its one agent; here they read the simulator's records
of the twin's agent. Two differences: the simulator keeps no rate timeline of the driver's kind
(the ``rates`` output, ``rates.csv``), so it is left out, as are the layered source's counters
(``source.json``), which are not a protocol's records; and the times are the simulator's
(second 0 is the twin's start: its receivers' where the scheme starts first, and TCP first the
TCP flows', `lead` seconds before the scheme's source; ``peers.twin_scenario``), where a role's
are its own start.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

# net-peers' castlab schemes: the `castlab net` role of the source and of the receivers
ROLES = {"lesbcc-aimd": ("lesbcc-source", "pgm-receiver"), "lesbcc-tfrc": ("lesbcc-source", "pgm-receiver"),
         "rlm": ("source", "rlm-receiver"), "rlc": ("rlc-source", "rlc-receiver"),
         "tfmcc": ("tfmcc-source", "tfmcc-receiver")}


class _OneAgent:
    """The simulator seen as a driver of one agent: its level timeline holds that agent's rows
    only (a role's driver has no other); every other reader is the simulator's."""

    def __init__(self, sim, agent: int):
        self._sim, self._agent = sim, agent

    def __getattr__(self, name: str):
        return getattr(self._sim, name)

    def level_timeline(self) -> dict:
        d = self._sim.level_timeline()
        keep = np.asarray(d["agent"]) == self._agent
        return {k: np.asarray(v)[keep] for k, v in d.items()}


def write_role(sim, agent: int, cli: str, out: Path) -> list[str]:
    """Write role `cli`'s records of the twin's `agent` into `out`, as the role writes them.
    A role without a registration (the layered source, whose records are its counters of sent
    packets) writes nothing here."""
    from castlab.net import ROLES as NET_ROLES

    cls = NET_ROLES[cli]
    if not getattr(cls, "spec", None):
        return []
    role = object.__new__(cls)
    role.spec = {**cls.spec, "outputs": [o for o in cls.spec["outputs"] if o["kind"] != "rates"]}
    role.drv = _OneAgent(sim, agent)
    role.agent = agent
    role.args = argparse.Namespace(format="csv")
    out.mkdir(parents=True, exist_ok=True)
    return role.write(out)


def write_twin(sim, scheme: str, out: Path, receivers: tuple[str, ...] = ("rcv1", "rcv2")) -> list[str]:
    """The twin's records of `scheme` (a key of ROLES) in `out`: its source's in ``source/``,
    each receiver's in ``rx_HOST/``, as net-peers' testbed case directory holds them.
    `sim` was built from a scenario whose session is ``m`` and whose receivers are named by
    their hosts (``peers.twin``)."""
    if scheme not in ROLES:
        raise ValueError(f"no twin records for {scheme!r} (one of {', '.join(ROLES)})")
    src_cli, rx_cli = ROLES[scheme]
    h = sim.scenario_handles
    files = write_role(sim, h.sessions["m"]["source"], src_cli, out / "source")
    for r in receivers:
        files += write_role(sim, h.receivers[r], rx_cli, out / f"rx_{r}")
    return files
