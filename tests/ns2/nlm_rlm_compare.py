"""ns-2's own RLM (McCanne's MMG/ns, run by tests/ns2/rlm.tcl with ``nlm=N``) against castlab's
RLM on the topology of Figure 8 of Nakauchi, Morikawa and Aoyama's NLM paper, the set-up on
which the NLM paper compares NLM with RLM (the NLM authors used ns). For docs/fidelity/nlm.md
and tests/protocols/test_nlm.py.

    python tests/ns2/nlm_rlm_compare.py [--seeds 1-5] [--duration 600]

Two set-ups, each with the same receiver start times in both simulators:
- fig11: one session, B = 1.6 Mb/s, the receiver starts at 20 s, 1.3 Mb/s of CBR cross
  traffic from 90 s; the paper's RLM drops layers 5, 4 and 3 at 98, 114 and 130 s;
- fig12: two sessions, B = 1.7 Mb/s, receivers start at 20 and 120 s; the paper's RLM keeps
  S1 at 5 layers and S2 below its fair share (4 layers).

Each receiver is reduced to the same numbers: when it dropped layers 5, 4 and 3 for good after
90 s (``nlm.rlm_drop_times``), when it first reached level 2 after 90 s, how long its first
stay at level 3 after 90 s lasted and the loss it saw there (lost over lost + received, at the
receiver, over the joined layers), and the level it held longest over 300-600 s.
ns-2 runs with its rlm_param as shipped plus rlm.tcl's rearm=1; castlab with the same constants
(``nlm.topology.NS2_MMG_RLM``, the RLM side of the NLM experiments).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

from castlab.experiments.nlm import figures as NF
from castlab.experiments.nlm import metrics as NM
from castlab.experiments.nlm import topology as NT

HERE = Path(__file__).resolve().parent


def _rlm_compare():
    spec = importlib.util.spec_from_file_location("rlm_compare", HERE / "rlm_compare.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("rlm_compare", mod)  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return sys.modules["rlm_compare"]


C = _rlm_compare()

SETUPS = {
    "fig11": {"n": 1, "bneck": 1.6e6, "starts": [20.0], "cross": (NF.CROSS_START_S, NF.CROSS_BPS)},
    "fig12": {"n": 2, "bneck": 1.7e6, "starts": [20.0, 120.0], "cross": None},
}


def run_ns2(setup: str, seed: int, duration_s: float, timeout_s: float = 300.0) -> list:
    s = SETUPS[setup]
    opts = {"nlm": s["n"], "bneck": s["bneck"], "starts": ",".join(repr(t) for t in s["starts"])}
    if s["cross"]:
        opts["cross"] = f"{s['cross'][0]!r}:{s['cross'][1]!r}"
    runs = C._ns2(NT.LINK_DELAY_S, duration_s, seed, -1.0, True, None, opts, timeout_s)
    return list(runs.values())


def run_castlab(setup: str, seed: int, duration_s: float, **cfg) -> list:
    s = SETUPS[setup]
    net = NT.Fig8("rlm", seed, s["n"], s["bneck"], s["starts"], s["cross"], rlm={"record": "arrivals", **cfg})
    net.run(duration_s, "")
    out = []
    for a, st in zip(net.receivers, s["starts"]):
        r = net.sim.rlm_records(a)
        out.append(C.Run(st, r["level_time_ns"] / 1e9, r["level"].astype(int), r["arr_time_ns"] / 1e9,
                         r["loss_time_ns"] / 1e9, r["loss_count"].astype(np.int64), duration_s))
    return out


def summarize(run, after_s: float = NF.CROSS_START_S) -> dict:
    t = np.concatenate([[0.0], run.level_t])
    lv = np.concatenate([[0], run.level])
    drops = NM.rlm_drop_times(t, lv, after_s)
    at2 = np.nonzero((t >= after_s) & (lv <= 2))[0]
    # the first stay at level 3 at or after after_s
    k = int(np.searchsorted(t, after_s, side="right")) - 1
    idx = [i for i in range(max(k, 0), len(t)) if lv[i] == 3]
    stay, stay_loss = float("nan"), float("nan")
    if idx:
        i = idx[0]
        a = max(t[i], after_s)
        b = t[i + 1] if i + 1 < len(t) else run.duration_s
        stay = b - a
        lost = run.loss_n[(run.loss_t >= a) & (run.loss_t < b)].sum()
        got = np.count_nonzero((run.arr_t >= a) & (run.arr_t < b))
        stay_loss = float(lost / (lost + got)) if lost + got else float("nan")
    ends = np.append(t[1:], run.duration_s)
    w0, w1 = 300.0, run.duration_s
    dur = np.clip(np.minimum(ends, w1) - np.maximum(t, w0), 0, None)
    held = int(np.argmax(np.bincount(lv, weights=dur))) if dur.sum() > 0 else -1
    return {**{f"drop{layer}_s": v for layer, v in drops.items()},
            "level2_s": float(t[at2[0]]) if at2.size else float("nan"),
            "first_stay3_s": stay, "first_stay3_loss": stay_loss, "held_300_600": held}


def parse_seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--duration", type=float, default=600.0)
    args = ap.parse_args()
    for setup in SETUPS:
        print(f"## {setup}")
        for seed in parse_seeds(args.seeds):
            for name, runs in (("ns2", run_ns2(setup, seed, args.duration)),
                               ("castlab", run_castlab(setup, seed, args.duration))):
                for i, r in enumerate(runs):
                    s = summarize(r)
                    cells = " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in s.items())
                    print(f"seed {seed} {name:8s} S{i + 1} {cells}")


if __name__ == "__main__":
    main()
