"""``net-baselines``: the real-network rows of ``baselines``. Each of the six schemes' ``castlab
net`` roles on a namespace testbed against one kernel Reno, one CUBIC and one BBR flow (iperf3)
at once, the share beside its simulated twin's.

The testbed, the measurement and the twin are net-peers' (``tfmcc/peers.py``): src - r1 -
{rcv1, rcv2}, a tbf of 1 Mb/s with a pfifo of 50 packets on each receiver's bridge port, kernel
multicast routing (igmpproxy): none of the six roles needs the user-space router (PGMCC's NAKs
and ACKs and TFMCC's reports are unicast to the source; RLM, RLC, FLID-DL and WEBRC receivers
join and leave groups by IGMP). A packet counter at rcv1 gives the scheme's rate and each TCP
flow's per second; the mean after the first 10 s is the reading. The twin is the same path in
the simulator (``peers.twin``: no delay per link, tbf's bucket on the last hops, as the testbed's)
with each kernel flow as Linux runs it (``linux_twin_flow``). The schemes run with
their roles' defaults, their ``config_defaults`` as in the simulated rows (RLM: RLM §4's six
layers of 32·2^m kb/s, 1 KB packets).

Claims, declared before the first run, kind ``derived``: per scheme and kernel flavour, the
scheme's rate at rcv1 over that flow's is in the TCP-friendliness band [0.5, 2] (RFC 3738 §1,
RFC 4654 §1), while all three flows share the bottleneck with it; decided on the mean over the
runs' seeds (one in the quick and the full form: no interval).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from castlab.experiments.baselines.figures import BAND
from castlab.experiments.baselines.topology import SCHEMES as SIM_SCHEMES
from castlab.experiments.common import Result, claim_over_seeds, in_range
from castlab.experiments.net_common import _skip, _unavailable
from castlab.experiments.tfmcc import peers
from castlab.experiments.tfmcc.peers import Scheme, _castlab_rx, _castlab_tx, _none

#: The kernel flows every scheme runs against, one of each at once.
TCP = ("reno", "cubic", "bbr")
QUICK_S, FULL_S = 30.0, 60.0
#: The start order of every run and its twin (net-peers' orders): the scheme first, the three
#: kernel flows ``peers.LEAD_S`` later, measured from the moment both run.
ORDER = "scheme-first"

#: The roles net-peers does not run, in its Scheme shape: the twin's session (kind, config,
#: receivers' protocol) and the roles' command lines, every setting the protocol's default.
EXTRA = {
    "pgmcc": Scheme("pgmcc", "castlab PGMCC", ("pgmcc", {}, "pgmcc"), _none, _castlab_rx("pgmcc-receiver"),
                    _castlab_tx("pgmcc-source")),
    "flid": Scheme("flid", "castlab FLID-DL", ("flid", {}, "flid"), _none, _castlab_rx("flid-receiver"),
                   _castlab_tx("flid-source")),
    "webrc": Scheme("webrc", "castlab WEBRC", ("webrc", {}, "webrc"), _none, _castlab_rx("webrc-receiver"),
                    _castlab_tx("webrc-source")),
}


@contextlib.contextmanager
def schemes():
    """net-peers' schemes with ``EXTRA`` beside them (those it has already are its own), for
    the length of the block: its case runner and twin look schemes up by name."""
    added = [k for k in EXTRA if k not in peers.SCHEMES]
    peers.SCHEMES.update({k: EXTRA[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            peers.SCHEMES.pop(k, None)


def _shares_plot(out: Path, df: pd.DataFrame) -> list[str]:
    """Share per scheme and kernel flow, the testbed's beside the twin's."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.2), dpi=120)
    names = list(df["scheme"])
    xs = np.arange(len(names))
    w = 0.8 / (2 * len(TCP))
    for n, a in enumerate(TCP):
        ax.bar(xs - 0.4 + w * (2 * n + 0.5), df.get(f"share_{a}", np.nan), w, color=f"C{n}", label=f"testbed vs {a}")
        ax.bar(xs - 0.4 + w * (2 * n + 1.5), df.get(f"twin_share_{a}", np.nan), w, color=f"C{n}", alpha=0.45,
               hatch="//", label=f"twin vs {a}")
    ax.axhspan(*BAND, color="0.9", zorder=0)
    ax.set_yscale("log")
    ax.set_xticks(xs, [SIM_SCHEMES[s][0] for s in names])
    ax.set_ylabel("scheme / TCP flow rate at rcv1")
    ax.set_title(f"testbed: {peers.LINK_BPS / 1e6:g} Mb/s tbf, one reno, cubic and bbr flow each", fontsize=9)
    ax.legend(fontsize=6, ncol=3)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    files = ["shares.png", "shares.svg"]
    for f in files:
        fig.savefig(out / f)
    plt.close(fig)
    return files


#: What a scheme's row that falls outside the band shows, beside the kernel flows' own rates.
WHY = {
    "tfmcc": ("castlab's TFMCC on this testbed (no propagation delay; the kernel flows' slow starts fill the "
              "50-packet pfifo) falls after its first losses to its floor of a packet every few seconds and stays "
              "there, as in net-peers (docs/fidelity/tfmcc.md: net-peers' runs, the start-up trap); "
              "tfmcc/logs/source.out"),
    "pgmcc": "PGMCC's window follows its acker's losses as a Reno flow's would",
    "rlm": ("RLM's join experiments meet the queue the TCP flows keep full and back off, as in the simulated rows "
            "(docs/fidelity/baselines.md)"),
    "rlc": ("RLC's receivers fall back at the first loss after each climb, as in the simulated rows "
            "(docs/fidelity/baselines.md)"),
    "flid": "FLID-DL's receivers drop levels in every slot with a loss",
    "webrc": ("started before the kernel flows, WEBRC's receivers keep the wave channels they joined on the idle "
              "link and give them up slowly (at rcv1 946 kb/s 2 s after the TCP flows start, 436 kb/s at 56 s, "
              "22 % loss, in the run of 2026-11-28), so the kernel flows get a fraction of it; its twin, in the "
              "same order, stays nearer the band (twin_share_*); why the testbed's receivers leave more slowly "
              "than the twin's is not investigated"),
}


def _why(row: dict) -> str:
    flows = ", ".join(f"{a} {row.get('tcp_means', {}).get(a, float('nan')) / 1e3:.0f}" for a in TCP)
    return (f"{WHY[row['scheme']]}. The kernel flows' own rates differ (kb/s: {flows}; baselines-net.csv "
            f"tcp_ALGO_bps), so the ratio over the flow that takes most is the lowest; baselines-net.csv, "
            f"{ORDER}/{row['scheme']}/series.csv")


def run_net_baselines(out: Path, seed: int, quick: bool = False, only: list[str] | None = None,
                      duration: float | None = None) -> Result:
    """The six schemes (``only``: these of them), one testbed run each (30 s quick, 60 s full,
    or ``duration``) at ``seed``, against one kernel reno, cubic and bbr flow at once;
    ``baselines-net.csv`` has the readings and the twins' beside them."""
    names = list(SIM_SCHEMES) if only is None else list(only)
    if unknown := [n for n in names if n not in SIM_SCHEMES]:
        raise ValueError(f"only: unknown schemes {unknown} (known: {list(SIM_SCHEMES)})")
    reason = _unavailable() or (None if shutil.which("iperf3") else "needs iperf3 (make setup installs it with apt)")
    if reason:
        return _skip(reason)
    if duration is None:
        duration = QUICK_S if quick else FULL_S
    with schemes():
        df = peers.peers_table(out, seed, duration, names, TCP, orders=(ORDER,))
    df = df.assign(seed=seed)
    df.to_csv(out / "baselines-net.csv", index=False)
    (out / "peers.csv").unlink(missing_ok=True)
    return _result(out, df, seed, duration)


def refresh_twins(out: Path, tbf_burst: Optional[int] = peers.TESTBED_TBF_BURST_BYTES) -> pd.DataFrame:
    """Recompute the simulated twins of a run's ``baselines-net.csv`` in `out` without the testbed
    (``peers.refresh_twins`` on its rows, at the run's seed and duration): every twin column and
    the twin's rows of windows.csv replaced, the testbed's readings kept; `tbf_burst` the twins'
    token bucket (None: the serialising twins, an ablation). Writes the table back and returns it."""
    table = out / "baselines-net.csv"
    df = pd.read_csv(table)
    seed, duration = int(df["seed"].iloc[0]), float(df["duration_s"].iloc[0])
    df.to_csv(out / "peers.csv", index=False)
    try:
        with schemes():
            new = peers.refresh_twins(out, seed, duration, TCP, tbf_burst=tbf_burst)
    finally:
        (out / "peers.csv").unlink(missing_ok=True)
    new.to_csv(table, index=False)
    return new


def redecide(out: Path) -> Result:
    """The claims, figures and parameters of the run whose ``baselines-net.csv`` is in `out`, from
    that table as it stands (after ``refresh_twins``, say), as run_net_baselines gives them."""
    df = pd.read_csv(out / "baselines-net.csv")
    return _result(out, df, int(df["seed"].iloc[0]), float(df["duration_s"].iloc[0]))


def _result(out: Path, df: pd.DataFrame, seed: int, duration: float) -> Result:
    """Figures, claims (one per scheme and kernel flow) and parameters from the table `df`."""
    files = [*peers.peers_figure(out, df, TCP), *_shares_plot(out, df)]
    claims = []
    for _, r in df.iterrows():
        label = SIM_SCHEMES[r["scheme"]][0]
        tcp_means = {a: float(r.get(f"tcp_{a}_bps", np.nan)) for a in TCP}
        for a in TCP:
            claims.append(claim_over_seeds(
                in_range, [r.get(f"share_{a}", np.nan)], f"net-share-{r['scheme']}-{a}",
                f"ours: on the testbed ({peers.LINK_BPS / 1e6:g} Mb/s tbf, pfifo {peers.QUEUE_PKTS}), {label}'s rate "
                f"at the receiver over the kernel {a} flow's, with one reno, cubic and bbr flow sharing the "
                f"bottleneck, is in the TCP-friendliness band (RFC 3738 §1 / RFC 4654 §1) [twin: "
                f"{r.get(f'twin_share_{a}', np.nan):.3g}]", *BAND, None, "ratio", kind="derived"))
            if claims[-1].verdict != "holds":
                claims[-1].explanation = _why({"scheme": r["scheme"], "tcp_means": tcp_means})
    params = {"network": "real", "topology": peers.topology().description, "routers": "kernel (tbf + pfifo, igmpproxy)",
              "duration_s": duration, "warm_up_s": peers.warm_up(duration), "seed": seed,
              "tcp": "one kernel flow per algorithm at once, iperf3 -C " + "/".join(TCP),
              "order": f"{ORDER}: the kernel flows start {peers.LEAD_S:g} s after the scheme's first data",
              "twin": "net-peers' twin in the same order: the same rates and queues, no delay per link and tbf's "
                      f"bucket of {peers.TESTBED_TBF_BURST_BYTES} bytes on the last hops (the testbed's), each "
                      "kernel flow as Linux runs it",
              "rows": df.to_dict("records")}
    return Result(params, claims, ["baselines-net.csv", *files])
