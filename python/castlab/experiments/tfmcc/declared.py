"""TFMCC's open settings, declared once for every TFMCC experiment (tfmcc, tfmcc-trap,
tfmcc-scale, and the simulated twins of net-tfmcc-uftp and net-peers): a leaf the experiments
import, so the package and its figures do not import each other.

Each table's first entry is the primary reading (what every experiment runs), the others are
readings the RFC also allows; a claim holds only when it holds under every one (the accounting
rule, ``castlab.claims``).

- The receive-rate window (the TFMCC audit's T9): RFC 4654 §4.3.4 counts the receive rate over
  the last k RTTs, and the RTT a receiver knows is its own R (§4.3.2, R' of §4.3.3 between
  measurements, R_max before the first, §4.1). The text names R and no other window, so the RFC
  as written (``TfmccConfig``'s default) is the only reading. The same R is the window of §5.6's
  "receive rate ... over the last RTT" and of §4.3.1's 10 RTTs without data.

Departures from the text (``ABLATIONS``) are not readings: an experiment may run one beside the
declared reading where it explains a result, never to decide a verdict.
"""

from __future__ import annotations

WINDOW_SETTING = "the receive-rate window (§4.3.4)"

READINGS: dict[str, dict[str, tuple]] = {
    # setting -> reading name -> (TfmccConfig overrides, the sentence or reason)
    WINDOW_SETTING: {
        "k RTTs of the receiver's own R": (
            {}, "RFC 4654 §4.3.4: 'The receive rate in bits/s is measured as the number of bits received over the "
            "last k RTTs, taking into account the IP and transport packet headers, but excluding the link-layer "
            "packet headers. A value for k between 2 and 4 is recommended.' The RTT is the receiver's R; no other "
            "window is named, so there is no second reading."),
    },
}

#: Departures from RFC 4654 run beside the declared reading to explain a result (never a reading).
ABLATIONS: dict[str, tuple] = {
    "windows over max(R, R_max)": (
        {"windows_over_rmax": True}, "counts §4.3.4's k RTTs, §5.6's last RTT and §4.3.1's 10 RTTs over "
        "max(R, R_max), which §3.2 keeps above the packet interval: no sentence of the RFC says so; it shows "
        "what the k·R window does when R is below the packet interval"),
}


def primary(setting: str) -> str:
    """The primary reading's name of one open setting."""
    return next(iter(READINGS[setting]))


def reading_config(setting: str, name: str | None = None) -> dict:
    """The TfmccConfig overrides of one reading (the primary when `name` is None)."""
    return dict(READINGS[setting][name or primary(setting)][0])


def ablation_config(name: str) -> dict:
    """The TfmccConfig overrides of one ablation."""
    return dict(ABLATIONS[name][0])


def declared_readings() -> dict[str, list[str]]:
    """Every open setting's readings by name, the primary first (what a summary records)."""
    return {setting: list(readings) for setting, readings in READINGS.items()}
