"""Real-network roles: castlab's agents over UDP and IP multicast, one role per process.

Each role (``castlab net source|sink``, and each protocol's roles from the protocol registry:
``castlab net --help`` lists them) builds a
:class:`castlab._native.NetDriver` from command-line settings, hosts one agent on it, prints a
status line every ``--status-interval`` seconds, stops by itself after ``--duration`` seconds
or on SIGINT, SIGTERM or SIGHUP, runs the shutdown step (the agent leaves the protocol's way
and the driver sends what that takes, ``NetDriver.shutdown``), then writes its records (the
simulator's frames: CSV, or Parquet with ``--format parquet``) and prints a summary with the
driver's counters.

The session layout every process of one session derives from the same flags:

* node 0 is the source host (``--source-addr``), the agent's own node is ``--node`` at
  ``--addr``; castlab port p is UDP port ``(--port-base + p) mod 65536``;
* a layered session's layer m is group m at ``--group-base + m``, and a control group (a
  protocol whose receivers talk to each other) is group ``--layers`` (any-source: every
  receiver sends on it); a single-group session is group 0; all groups use UDP port
  ``--group-port`` (default: the port base itself, which no agent
  port maps to since agent ports start at 1), and data groups are source-specific with
  node 0 as the source.

See docs/real-network.md.
"""

from __future__ import annotations

import abc
import argparse
import ipaddress
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from castlab import _native, _registry
from castlab.session_flags import (DEFAULTS, SESSION_DEFAULTS, SESSION_FLAGS, parse_key,  # noqa: F401 (re-exported)
                                   parse_override, resolve_session_settings)
from castlab.stopping import Stopped, deferred, stop_on_signals


class NetDriver(_native.NetDriver):
    """The real-network driver, with a method per registered role and reader that runs on
    the network (made from the protocol registry: ``castlab._registry``; their generated stub
    is ``castlab/_registered.pyi``)."""


_registry.install(NetDriver, net=True)

SOURCE_NODE = 0
SOURCE_PORT = 1
#: The longest the shutdown step waits to send what the agent queued on stopping (a full socket
#: buffer, the rate cap), seconds.
SHUTDOWN_WITHIN_S = 0.5


def parse_rate(text: str) -> float:
    """A rate in bit/s: a bare number (``32e3``) or with a k/M/G suffix (``32k``, ``1.5M``)."""
    t = str(text).strip()
    mult = {"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9}
    try:
        if t and t[-1] in mult:
            v = float(t[:-1]) * mult[t[-1]]
        else:
            v = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a rate in bit/s: {text!r}") from None
    if not (v > 0 and v != float("inf")):
        raise argparse.ArgumentTypeError(f"a rate must be positive and finite: {text!r}")
    return v


def parse_floats(text: str) -> list[float]:
    """Comma-separated numbers (``100e3,200e3``), each with an optional k/M/G suffix."""
    try:
        return [parse_rate(x) for x in str(text).split(",") if x.strip()] or _no_floats(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"comma-separated positive numbers: {e}") from None


def _no_floats(text: str) -> list[float]:
    raise argparse.ArgumentTypeError(f"no numbers in {text!r}")


def parse_host(text: str) -> tuple[int, str]:
    """``NODE=ADDR``: another castlab node's id and IPv4 address."""
    n, sep, a = str(text).partition("=")
    try:
        node = int(n)
        ipaddress.IPv4Address(a)
    except ValueError:
        node = -1
    if not sep or node < 0:
        raise argparse.ArgumentTypeError(f"--host wants NODE=ADDR (a node id >= 0, an IPv4 address), got {text!r}")
    return node, a


@dataclass
class Session:
    """Everything a role's process needs to address the others."""

    session_id: int
    key: Optional[bytes]
    iface_addr: str
    ttl: int
    port_base: int
    group_base: str
    group_port: Optional[int]
    source_addr: str
    addr: str
    node: int
    allow_any_group: bool
    rate_cap_bps: float
    rate_cap_burst_bytes: int
    seed: int
    #: Other nodes this process may address (a router hosting an extension, say): (id, address).
    hosts: tuple = ()
    #: A pcap file for everything this process sends and receives (None: no capture).
    pcap: Optional[str] = None

    @classmethod
    def from_args(cls, a: argparse.Namespace) -> "Session":
        source = a.role == "source" or (a.role in _net_roles() and _net_roles()[a.role]["source"])
        addr = a.source_addr if source else a.addr
        node = SOURCE_NODE if source else a.node
        if not source and node == SOURCE_NODE:
            raise ValueError("--node: node 0 is the source host; a receiver needs another node id")
        return cls(a.session, a.key, a.iface_addr, a.ttl, a.port_base, a.group_base, a.group_port,
                   a.source_addr, addr, node, a.allow_any_group, a.rate_cap, a.rate_cap_burst, a.seed,
                   tuple(getattr(a, "host", None) or ()), getattr(a, "pcap", None))

    def group_addr(self, g: int) -> str:
        return str(ipaddress.IPv4Address(self.group_base) + g)

    def groups(self, data: int, control: bool) -> list[tuple[int, str, int, Optional[int]]]:
        """Data groups 0..data-1 (source: node 0) and, with ``control``, an any-source group."""
        port = self.group_port if self.group_port is not None else self.port_base
        out = [(g, self.group_addr(g), port, SOURCE_NODE) for g in range(data)]
        if control:
            out.append((data, self.group_addr(data), port, None))
        return out

    def driver(self, groups, pgm_flow: Optional[int] = None) -> NetDriver:
        """The driver; with ``pgm_flow``, speaking PGM (RFC 3208) for that flow instead of
        castlab's envelope."""
        nodes = [(SOURCE_NODE, self.source_addr)]
        if self.node != SOURCE_NODE:
            nodes.append((self.node, self.addr))
        known = dict(nodes)
        for n, addr in self.hosts:
            if n in known and known[n] != addr:
                raise ValueError(f"--host: node {n} is {known[n]} already (got {addr})")
            known.setdefault(n, addr)
        nodes = list(known.items())
        cfg = {"session_id": self.session_id, "key": self.key, "iface_addr": self.iface_addr, "ttl": self.ttl,
               "port_base": self.port_base, "allow_any_group": self.allow_any_group,
               "rate_cap_bps": self.rate_cap_bps, "rate_cap_burst_bytes": self.rate_cap_burst_bytes,
               "seed": self.seed}
        if pgm_flow is not None:
            if self.key is not None:
                raise ValueError("--key: PGM on the wire carries no MAC; --wire pgm takes no key")
            cfg.update(pgm_wire=True, pgm_flow=pgm_flow)
        d = NetDriver(nodes, groups, cfg)
        if self.pcap:
            d.set_pcap(self.pcap)  # before any agent starts: its first packets are captured too
        return d


def _fmt_rate(bps: float) -> str:
    if bps >= 1e6:
        return f"{bps / 1e6:.2f} Mb/s"
    return f"{bps / 1e3:.1f} kb/s"


def _loss(lost: int, received: int) -> float:
    """Loss rate; NaN when nothing arrived or was lost (no rate, not a rate of 0)."""
    return lost / (lost + received) if lost + received else float("nan")


class Role(abc.ABC):
    """One role: builds its agent, describes its status, writes its records."""

    name = ""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.session = Session.from_args(args)
        self.overrides = dict(args.config or [])
        self.agent = args.agent_id if args.agent_id is not None else self.session.node
        self.drv: NetDriver = None  # type: ignore[assignment]
        self._last = (0.0, 0, 0)

    @abc.abstractmethod
    def build(self) -> None:
        """Create the driver and add this role's agent to it."""

    @abc.abstractmethod
    def status(self) -> str:
        """One status line."""

    def write(self, out: Path) -> list[str]:
        return []

    # ---- shared pieces
    def frame(self, stem: Path, df) -> str:
        """One table of the records, in the --format asked for."""
        return _write_frame(stem, df, getattr(self.args, "format", "csv"))

    def prefixed(self, out: Path, name: str, rec: dict, tables: Optional[dict[str, list[str]]] = None) -> list[str]:
        return _write_prefixed(out, name, rec, tables, getattr(self.args, "format", "csv"))

    def _rates(self) -> tuple[float, float]:
        """(sent, received) bit/s since the previous status line, from the driver's counters."""
        s = self.drv.stats()
        t = self.drv.now
        t0, sent0, rx0 = self._last
        dt = max(t - t0, 1e-9)
        self._last = (t, s["bytes_sent"], s["bytes_received"])
        return (s["bytes_sent"] - sent0) * 8 / dt, (s["bytes_received"] - rx0) * 8 / dt

    def _rejected(self) -> int:
        s = self.drv.stats()
        return sum(s[k] for k in ("malformed", "foreign_session", "unauthenticated", "bad_mac", "wrong_source",
                                  "wrong_size", "misdirected", "stale_epoch", "unconfirmed_epoch", "replayed"))


class SourceRole(Role):
    name = "source"

    def build(self) -> None:
        a = self.args
        if a.rates is not None:  # explicit layer rates (a paper's own, not doubling ones)
            if len(a.rates) != a.layers:
                raise ValueError(f"--rates: {len(a.rates)} rates for --layers {a.layers}")
            if any(r <= 0 for r in a.rates):
                raise ValueError("--rates: every layer's rate must be > 0")
            rates = list(a.rates)
        else:
            rates = [a.base_rate * 2 ** m for m in range(a.layers)]  # McCanne et al. §4: 32·2^m kb/s
        if sum(rates) > self.session.rate_cap_bps:
            raise ValueError(f"{'--rates' if a.rates is not None else '--base-rate'}: the {a.layers} layers offer {_fmt_rate(sum(rates))}, more than "
                             f"--rate-cap {_fmt_rate(self.session.rate_cap_bps)}; raise the cap if you mean it")
        self.drv = self.session.driver(self.session.groups(a.layers, control=True))
        self.drv.add_layered_source(self.agent, SOURCE_NODE, SOURCE_PORT, list(range(a.layers)), rates,
                                    packet_size=a.packet_size, flow=a.flow, jitter=not a.no_jitter)
        self.rates = rates

    def status(self) -> str:
        sent, _ = self._rates()
        n = sum(self.drv.source_sent(self.agent))
        s = self.drv.stats()
        return (f"layers={self.args.layers} offered={_fmt_rate(sum(self.rates))} sending={_fmt_rate(sent)} "
                f"sent={n} cap_drops={s['rate_cap_drops']}")

    def write(self, out: Path) -> list[str]:
        per = self.drv.source_sent(self.agent)
        return [_write_json(out / "source.json", {"layers": self.args.layers, "rates_bps": self.rates,
                                                   "sent_per_layer": per})]


class SinkRole(Role):
    name = "sink"

    def build(self) -> None:
        a = self.args
        self.drv = self.session.driver(self.session.groups(a.layers, control=False))
        self.drv.add_sink(self.agent, a.node, a.port, list(range(a.layers)), [(0.0, a.level)], record="arrivals")

    def status(self) -> str:
        _, rx = self._rates()
        arr = self.drv.sink_arrivals(self.agent)
        lost = int(self.drv.sink_losses(self.agent)["count"].sum())
        got = len(arr["time_ns"])
        return (f"level={self.drv.sink_level(self.agent)} rate={_fmt_rate(rx)} received={got} lost={lost} "
                f"loss={_loss(lost, got):.2%} rejected={self._rejected()}")

    def write(self, out: Path) -> list[str]:
        from castlab.frames import arrivals_frame, level_frame, losses_frame

        return [self.frame(out / "arrivals", arrivals_frame(self.drv, self.agent)),
                self.frame(out / "losses", losses_frame(self.drv, self.agent)),
                self.frame(out / "levels", level_frame(self.drv))]


#: The ambient SPM interval a PGM-wire source gets unless ``--config spm_interval=...`` says
#: otherwise (our choice: an OpenPGM receiver can NAK only after an SPM; see the source's
#: `spm_interval` field).
PGM_SPM_INTERVAL_S = 0.5


def config_defaults_of(table: str) -> dict:
    from castlab._native import config_defaults

    return config_defaults(table)


def _net_roles() -> dict[str, dict]:
    """The protocols' `castlab net` roles, from the protocol registry, by command name."""
    return {r["cli"]: r for p in _registry.protocols() for r in p["net_roles"]}


class RegisteredRole(Role):
    """A protocol's role as its registration describes it: the groups it uses, its flags,
    its status line and what it writes."""

    spec: dict = {}

    def _layers(self) -> int:
        from castlab._native import config_defaults

        g = self.spec["groups"]
        if g == "one":
            return 1
        if g == "layers":
            return self.args.layers
        return int(self.overrides.get("layers", config_defaults(self.spec["layers_from"])["layers"]))

    def build(self) -> None:
        a, spec = self.args, self.spec
        n = self._layers()
        control = spec["groups"] == "layers" and spec["control"]
        params = {name for name, _, _ in _registry.roles()[spec["role"]]["net_params"]}
        given = {"groups": list(range(n)), "data_groups": list(range(n)), "group": 0, "control_group": n}
        kw = {k: v for k, v in given.items() if k in params}
        cfg = dict(spec["defaults"])
        for fl in spec["flags"]:
            (cfg if fl["config"] else kw)[fl["name"]] = getattr(a, fl["name"])
        # `--wire` is the driver's: PGM on the wire for the role's flow
        self.wire = kw.pop("wire", "castlab")
        pgm_flow = None
        if self.wire == "pgm":
            pgm_flow = int(kw.get("flow", 1))
            fields = _registry.roles()[spec["role"]].get("config")
            known = config_defaults_of(fields) if fields else {}
            if "spm_interval" in known:
                cfg["spm_interval"] = PGM_SPM_INTERVAL_S
            # RFC 3208's packets carry one sequence number, which an RDATA repeats: ACKs count it
            if "pgm_seq_acks" in known:
                cfg["pgm_seq_acks"] = True
        self.drv = self.session.driver(self.session.groups(n, control=control), pgm_flow=pgm_flow)
        cfg.update(self.overrides or {})
        node, port = (SOURCE_NODE, SOURCE_PORT) if spec["source"] else (a.node, a.port)
        getattr(self.drv, spec["role"])(self.agent, node, port, **kw, **cfg)

    def status(self) -> str:
        sent, rx = self._rates()
        line = getattr(self.drv, self.spec["status"])(self.agent)
        return line.format(sent=_fmt_rate(sent), rx=_fmt_rate(rx), rejected=self._rejected(),
                           datagrams_sent=self.drv.stats()["datagrams_sent"])

    def write(self, out: Path) -> list[str]:
        import pandas as pd

        from castlab.frames import level_frame

        files: list[str] = []
        for o in self.spec["outputs"]:
            kind = o["kind"]
            if kind == "levels":
                files.append(self.frame(out / "levels", level_frame(self.drv)))
            elif kind == "rates":
                df = pd.DataFrame(self.drv.rate_timeline())
                df.insert(0, "time_s", df["time_ns"].to_numpy() / 1e9)
                files.append(self.frame(out / "rates", df))
            elif kind == "json":
                files.append(_write_json(out / o["file"], getattr(self.drv, o["reader"])(self.agent)))
            elif kind == "prefixed":
                rec = getattr(self.drv, o["reader"])(self.agent)
                files += self.prefixed(out, o["name"], rec, o["tables"] or None)
            else:  # columns
                rec = getattr(self.drv, o["reader"])(self.agent)
                df = pd.DataFrame({new: rec[old] for old, new in o["columns"]})
                df.insert(0, "time_s", df["time_ns"] / 1e9)
                rest = {k: v for k, v in rec.items() if k not in {old for old, _ in o["columns"]}}
                files += [self.frame(out / o["file"], df), _write_json(out / o["rest"], rest)]
        return files


def _role_class(spec: dict) -> type[Role]:
    return type(f"Role_{spec['cli']}", (RegisteredRole,), {"name": spec["cli"], "spec": spec})


ROLES: dict[str, type[Role]] = {r.name: r for r in (SourceRole, SinkRole)}
ROLES.update({cli: _role_class(spec) for cli, spec in _net_roles().items()})


def _jsonable(x):
    import numpy as np

    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _write_json(path: Path, obj) -> str:
    path.write_text(json.dumps(_jsonable(obj), indent=2) + "\n")
    return str(path)


def _write_frame(stem: Path, df, fmt: str) -> str:
    """One table, as CSV or Parquet (--format)."""
    if fmt == "parquet":
        path = stem.with_suffix(".parquet")
        df.to_parquet(path, index=False)
    else:
        path = stem.with_suffix(".csv")
        df.to_csv(path, index=False)
    return str(path)


def _write_prefixed(out: Path, name: str, rec: dict, tables: Optional[dict[str, list[str]]] = None,
                    fmt: str = "csv") -> list[str]:
    """Split a records dict into tables and write each as ``<name>_<table>``: the columns of
    ``tables[t]`` where given, else one table per column-name prefix (``loss_time_ns``,
    ``loss_count`` -> table ``loss`` with columns ``time_ns``, ``count``); a ``time_s``
    column is added beside ``time_ns``. Scalars go to ``<name>_counts.json``."""
    import numpy as np
    import pandas as pd

    tables = dict(tables or {})
    taken = {c for cols in tables.values() for c in cols}
    scalars = {}
    for k, v in rec.items():
        if isinstance(v, np.ndarray):
            if k not in taken:
                tables.setdefault(k.split("_", 1)[0], []).append(k)
        else:
            scalars[k] = v
    files = []
    for t, cols in tables.items():
        df = pd.DataFrame({c[len(t) + 1:] if c.startswith(t + "_") else c: rec[c] for c in cols})
        if "time_ns" in df:
            df.insert(0, "time_s", df["time_ns"].to_numpy() / 1e9)
        files.append(_write_frame(out / f"{name}_{t}", df, fmt))
    if scalars:
        files.append(_write_json(out / f"{name}_counts.json", scalars))
    return files


def run_role(args: argparse.Namespace, stream=None) -> int:
    """Run one role to the end of ``--duration`` (or a signal), then write and summarise."""
    stream = sys.stdout if stream is None else stream
    try:
        resolve_session_settings(args)
    except ValueError as e:
        print(f"castlab net {args.role}: {e}", file=sys.stderr)
        return 2
    for flag, v in (("--duration", args.duration), ("--status-interval", args.status_interval)):
        if not (v > 0 and v != float("inf")):
            print(f"castlab net {args.role}: {flag}: must be a positive number of seconds (got {v})", file=sys.stderr)
            return 2
    try:
        role = ROLES[args.role](args)
        role.build()
    except (ValueError, OSError) as e:
        print(f"castlab net {args.role}: {e}", file=sys.stderr)
        return 2

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    s = role.session
    why = "duration"

    def status() -> None:
        st = role.drv.stats()  # the timers' lateness, cumulative: a soak run follows its drift
        say(f"[{role.name}] t={role.drv.now:7.2f}s {role.status()} timers={st['timer_fires']} "
            f"late_total_us={st['late_total_ns'] // 1000} late_max_us={st['late_max_ns'] // 1000}")

    with stop_on_signals():
        say(f"[{role.name}] session {s.session_id} agent {role.agent} node {s.node} at {s.addr} "
            f"port base {s.port_base} groups from {s.group_base} ttl {s.ttl} iface {s.iface_addr} "
            f"cap {_fmt_rate(s.rate_cap_bps)}{' keyed' if s.key else ''}; running {args.duration:g} s")
        try:
            role.drv.run(args.duration, status=status, status_interval=args.status_interval)
        except Stopped as e:  # SIGINT, SIGTERM or SIGHUP, named
            why = str(e)
        except KeyboardInterrupt:
            why = "SIGINT"
        # The shutdown step, whatever ended the run: the agent leaves the protocol's way (a
        # leave report, its layers left top first, a PGM source's last SPM with OPT_FIN) and
        # the driver sends it, waiting at most SHUTDOWN_WITHIN_S. A signal in
        # the meantime (a second one, or the first after --duration) waits for it to end.
        try:
            with deferred():
                role.drv.shutdown(SHUTDOWN_WITHIN_S)
        except Stopped as e:
            why = f"{why}, then {e}"
    if role.drv.now - role._last[0] >= 0.2:  # a last status line unless one was just printed
        status()
    captured = role.drv.flush_pcap()
    stats = role.drv.stats()
    stats["pcap_records"] = captured
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        files = role.write(out)
        files.append(_write_json(out / "net_stats.json", {"role": role.name, "stopped_by": why,
                                                          "duration_s": role.drv.now, "params": _params(args),
                                                          "stats": stats}))
        say(f"[{role.name}] records: {', '.join(files)}")
    late = f"late timers mean {stats['late_mean_ns'] / 1e3:.0f} us max {stats['late_max_ns'] / 1e3:.0f} us"
    drops = " ".join(f"{k}={stats[k]}" for k in ("malformed", "foreign_session", "unauthenticated", "bad_mac",
                                                   "wrong_source", "wrong_size", "misdirected", "stale_epoch",
                                                   "unconfirmed_epoch")
                     if stats[k])
    say(f"[{role.name}] stopped by {why} after {role.drv.now:.2f} s: sent {stats['datagrams_sent']} datagrams "
        f"({stats['bytes_sent']} B), received {stats['datagrams_received']} ({stats['bytes_received']} B), "
        f"delivered {stats['delivered']}, rejected {role._rejected()}{' (' + drops + ')' if drops else ''}, "
        f"rate-cap drops {stats['rate_cap_drops']}, send errors {stats['send_errors'] + stats['send_would_block']}, "
        f"join errors {stats['join_errors']}, peer restarts {stats['peer_restarts']}, {late}"
        + (f"; last error: {stats['last_error']}" if stats["last_error"] else ""))
    return 0


def _params(args: argparse.Namespace) -> dict:
    d = {k: v for k, v in vars(args).items() if k not in ("fn", "key")}
    d["keyed"] = args.key is not None
    d["network"] = "real"
    return d


def add_parsers(sub) -> None:
    """Register ``castlab net ROLE`` under the ``castlab`` command's subparsers."""
    net = sub.add_parser("net", help="run one real-network role (UDP / IP multicast); see docs/real-network.md")
    roles = net.add_subparsers(dest="role", required=True)

    def common(p: argparse.ArgumentParser, receiver: bool) -> None:
        g = p.add_argument_group("session (the same on every process of a session; may come from --session-file)")
        g.add_argument("--session-file", default=None, metavar="FILE",
                       help="JSON object of session settings: keys are the flags below and --layers, without "
                            "the leading dashes (group-base or group_base); flags given on the command line win")
        for flag, dest, kw, text in SESSION_FLAGS:
            g.add_argument(flag, dest=dest, default=argparse.SUPPRESS, **kw,
                           help=f"{text} (default {SESSION_DEFAULTS[dest][1]})")
        h = p.add_argument_group("this process")
        if receiver:
            h.add_argument("--addr", default="127.0.0.2", help="this host's address (default %(default)s)")
            h.add_argument("--node", type=int, default=1,
                           help="this host's node id, not 0 (the source's) (default %(default)s)")
            h.add_argument("--port", type=int, default=1, help="the agent's castlab port (default %(default)s)")
        else:
            p.set_defaults(addr=None, node=SOURCE_NODE, port=SOURCE_PORT)
        h.add_argument("--agent-id", type=int, default=None,
                       help="agent id, seeds its random stream with --seed (default: the node id)")
        h.add_argument("--duration", type=float, default=60.0, help="seconds to run (default %(default)s)")
        h.add_argument("--status-interval", type=float, default=1.0, help="seconds between status lines")
        h.add_argument("--out", default=None, help="directory for the records")
        h.add_argument("--format", choices=("csv", "parquet"), default="csv",
                       help="the records' tables as CSV or Parquet (default %(default)s)")
        h.add_argument("--rate-cap", type=parse_rate, default=DEFAULTS["rate_cap_bps"],
                       help="hard cap on this process's sending rate, bit/s (default %(default).0f)")
        h.add_argument("--rate-cap-burst", type=int, default=DEFAULTS["rate_cap_burst_bytes"],
                       help="the cap's token-bucket depth, bytes (default %(default)s)")
        h.add_argument("--config", type=parse_override, action="append", metavar="NAME=VALUE",
                       help="override a protocol config field (repeatable; durations in seconds)")
        h.add_argument("--host", type=parse_host, action="append", metavar="NODE=ADDR",
                       help="another node's address (repeatable): a router whose extension this agent answers")
        h.add_argument("--pcap", default=None, metavar="FILE",
                       help="write what this process sends and receives to a pcap file (Wireshark, tshark)")

    p = roles.add_parser("source", help="layered CBR source (McCanne et al. §4: layer m at base·2^m)")
    common(p, receiver=False)
    p.add_argument("--layers", type=int, default=argparse.SUPPRESS, help="(default 6; may come from --session-file)")
    p.add_argument("--base-rate", type=parse_rate, default=32e3, help="layer 0's rate, bit/s (default 32e3)")
    p.add_argument("--rates", type=parse_floats, default=None, metavar="R0,R1,...",
                   help="every layer's rate, bit/s, comma-separated, one per layer (instead of --base-rate's "
                        "doubling)")
    p.add_argument("--packet-size", type=int, default=1000, help="bytes (default %(default)s)")
    p.add_argument("--flow", type=int, default=1)
    p.add_argument("--no-jitter", action="store_true", help="exact intervals instead of McCanne et al. §4's jitter")

    p = roles.add_parser("sink", help="measuring receiver at a fixed level")
    common(p, receiver=True)
    p.add_argument("--layers", type=int, default=argparse.SUPPRESS,
                   help="must match the source's (default 6; may come from --session-file)")
    p.add_argument("--level", type=int, default=1, help="layers to subscribe to (default %(default)s)")

    for cli, spec in _net_roles().items():
        p = roles.add_parser(cli, help=spec["help"])
        common(p, receiver=not spec["source"])
        if spec["groups"] == "layers":
            p.add_argument("--layers", type=int, default=argparse.SUPPRESS,
                           help="must match the source's (default 6; may come from --session-file)")
        for fl in spec["flags"]:
            if fl["choices"] is not None:
                p.add_argument(f"--{fl['name']}", choices=tuple(fl["choices"]), default=fl["default"], help=fl["help"])
            elif fl.get("kind") == "floats":
                p.add_argument(f"--{fl['name']}", type=parse_floats, default=list(fl["default"]), help=fl["help"])
            else:
                p.add_argument(f"--{fl['name']}", type=int, default=fl["default"], help=fl["help"])

    for r in roles.choices.values():
        r.set_defaults(fn=run_role)
    # the user-space router is not an agent role: its own parser and runner (castlab/router.py)
    from castlab.router import add_router_parser
    add_router_parser(roles)
