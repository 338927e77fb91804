"""``castlab net router``: castlab-net's user-space multicast router in a router namespace.

The router forwards by itself (kernel forwarding off in its namespace): ARP, static routes, an
IGMP querier with per-interface membership, source-specific multicast forwarding, and per
output interface a DropTail or RED queue drained at the link's rate and a delay line. The
testbed starts one per router namespace (``castlab testbed up TOPOLOGY --routers user``); by
hand::

    ip netns exec ROUTER_NS castlab net router \\
        --iface l0b,10.77.0.1/24,delay=250ms \\
        --iface n0r,10.77.100.1/24,rate=1M,delay=250ms,queue=red:50:5:15:0.1:0.002,lan

With ``--extension KIND [KEY=VALUE ...]`` it hosts a router kind of the protocol registry
(``lmr``, ``nak_aggregator``, ``bcf``: the simulator's extensions, built by the same factory)
on its node ``--node``, for the castlab session the session flags describe (the host roles'
``--session``, ``--key``, ``--port-base``, ``--group-base``, ``--layers``, ``--source-addr``,
or ``--session-file``; ``--host NODE=ADDR`` for the other nodes the extension may address).
KEYs are the kind's own (``hold``) or fields of its config table (``qweight``).

It prints a status line per interface every ``--status-interval`` seconds, runs until
``--duration`` passes (0: until SIGINT, SIGTERM or SIGHUP), drains (forwards what it had
queued, for at most ``--drain`` seconds, and withdraws the memberships it relayed to its
neighbour routers; ``shutdown`` in the stats), then writes ``router_stats.json`` (with the
extension's status snapshot under ``extension``) and ``router_stats.txt`` (``tc -s``-like)
into ``--out``. See docs/real-network.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from castlab.session_flags import SESSION_DEFAULTS, SESSION_FLAGS, parse_override, resolve_session_settings
from castlab.stopping import Stopped, deferred, stop_on_signals


def _wants_session(args: argparse.Namespace) -> bool:
    """A session is opened with an extension or when asked for (before the defaults fill in)."""
    return bool(getattr(args, "extension", None)) or hasattr(args, "session") or bool(
        getattr(args, "session_file", None))


def resolve(args: argparse.Namespace) -> None:
    """Fill the session settings from ``--session-file`` or the defaults (the host roles'
    rules), remembering first whether a session was asked for."""
    args.with_session = _wants_session(args)
    resolve_session_settings(args)


def router_words(args: argparse.Namespace) -> list[str]:
    """The router's own words (parsed in Rust by ``RouterConfig::from_args``), after
    :func:`resolve`. The session's groups are laid out as the host roles lay them out
    (``castlab.net.Session.groups``): data groups 0..layers-1 from node 0, and group
    ``layers`` any-source (a control group, where the protocol has one)."""
    import ipaddress

    words: list[str] = []
    for f in args.iface or []:
        words += ["--iface", f]
    for r in args.route or []:
        words += ["--route", r]
    for flag, v in (("--node", args.node), ("--seed", args.seed), ("--igmp-query-interval", args.igmp_query_interval),
                    ("--igmp-last-member-interval", args.igmp_last_member_interval),
                    ("--igmp-max-groups", getattr(args, "igmp_max_groups", None)),
                    ("--igmp-max-sources", getattr(args, "igmp_max_sources", None))):
        if v is not None:
            words += [flag, str(v)]
    # with or without a session: the groups hosts may join (239.0.0.0/8 unless given)
    if getattr(args, "allow_any_group", False):
        words += ["--allow-any-group"]
    if getattr(args, "with_session", False):
        words += ["--session", str(args.session), "--port-base", str(args.port_base)]
        if args.key is not None:
            words += ["--key", args.key.hex()]
        port = args.group_port if args.group_port is not None else args.port_base
        base = ipaddress.IPv4Address(args.group_base)
        for g in range(args.layers + 1):
            words += ["--group", f"{g}={base + g}:{port}" + ("@0" if g < args.layers else "")]
        hosts = list(args.host or [])
        if not any(h.split("=", 1)[0].strip() == "0" for h in hosts):
            hosts.insert(0, f"0={args.source_addr}")
        for h in hosts:
            words += ["--host", h]
    return words


def _words_for_json(args: argparse.Namespace) -> list[str]:
    """The words without the key's digits."""
    w = router_words(args)
    return [("(hidden)" if i and w[i - 1] == "--key" else x) for i, x in enumerate(w)]


def extension_options(args: argparse.Namespace) -> tuple[object, dict]:
    """``--extension KIND KEY=VALUE ...`` as (kind or None, options): VALUE as JSON
    (numbers, true/false), else a string, as the host roles' ``--config``."""
    ext = getattr(args, "extension", None)
    if not ext:
        return None, {}
    opts: dict = {}
    for w in ext[1:]:
        k, v = parse_override(w)
        if k in opts:
            raise ValueError(f"--extension: {k} given twice")
        opts[k] = v
    return ext[0], opts


def _port_line(p: dict) -> str:
    drops = p["drops_forced"] + p["drops_early"] + p["drops_delay_line"] + p["drops_ext"]
    return (f"{p['name']}: q={p['backlog']} avg={p['avg']:.2f} sent={p['tx_frames']} drops={drops}"
            f" (forced {p['drops_forced']}, early {p['drops_early']}) groups={p['igmp_groups']}")


def run_router(args: argparse.Namespace, stream=None) -> int:
    """Run the router until ``--duration`` or a signal, then write and summarise."""
    from castlab._native import NetRouter

    stream = sys.stdout if stream is None else stream
    if not args.iface:
        print("castlab net router: --iface: at least one interface is needed", file=sys.stderr)
        return 2
    if not (args.duration >= 0 and args.status_interval > 0 and 0 <= args.drain <= 60):
        print("castlab net router: --duration must be >= 0, --status-interval > 0 and --drain 0-60 s",
              file=sys.stderr)
        return 2
    try:
        resolve(args)
        kind, options = extension_options(args)
        r = NetRouter(router_words(args), kind, options)
        if args.time_extension:
            r.set_extension_timing(True)
        if args.time_transit:
            r.set_transit_timing(True)
        if not 0 <= args.spin_us <= 1000:
            raise ValueError(f"--spin-us {args.spin_us}: must be 0-1000")
        r.set_spin_us(args.spin_us)
    except (ValueError, TypeError, OSError, argparse.ArgumentTypeError) as e:
        # PermissionError (a refused start) is an OSError
        print(f"castlab net router: {e}", file=sys.stderr)
        return 2
    priority = "normal priority"
    if args.realtime:
        try:
            r.set_realtime(args.realtime)
            priority = f"SCHED_FIFO {args.realtime}"
        except OSError as e:
            # forwarding at normal priority still works: say so and go on
            print(f"castlab net router: --realtime refused, running at normal priority: {e}", file=sys.stderr)

    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    ext = f"; hosting {kind} {options or ''} on node {args.node or 0}" if kind else ""
    say(f"[router] {len(args.iface)} interfaces{ext}; {priority}; "
        f"running {'until a signal' if not args.duration else f'{args.duration:g} s'}")

    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)

    def write(why: str | None, drained: dict | None = None) -> None:
        # while running (why None) counts only: the group tables are written once, at the end
        extension = None if kind is None else {"kind": kind, "options": options, "status": r.extension_status()}
        # numpy arrays (a status reader's columns) as lists, without importing numpy here: an
        # import would stall forwarding for a fifth of a second
        text = json.dumps({"stopped_by": why, "duration_s": r.now, "words": _words_for_json(args),
                           "stats": r.stats(), "ports": r.ports(groups=why is not None), "extension": extension,
                           "shutdown": drained},
                          indent=1, default=lambda x: x.tolist() if hasattr(x, "tolist") else str(x))
        tmp = out / "router_stats.json.tmp"
        tmp.write_text(text)
        tmp.replace(out / "router_stats.json")  # a reader never sees half a file

    every = args.stats_every if (args.stats_every and out is not None) else None
    tick = min(args.status_interval, every) if every else args.status_interval
    next_line = [args.status_interval]

    def status() -> None:
        if r.now + 1e-3 >= next_line[0]:
            next_line[0] += args.status_interval
            say(f"[router] t={r.now:7.2f}s " + "; ".join(_port_line(p) for p in r.ports()))
        if every:
            write(None)

    why = "duration"
    with stop_on_signals():
        try:
            if args.duration:
                r.run(args.duration, status=status, status_interval=tick)
            else:
                while True:
                    r.run(3600.0, status=status, status_interval=tick)
        except Stopped as e:  # SIGINT, SIGTERM or SIGHUP, named
            why = str(e)
        except KeyboardInterrupt:
            why = "SIGINT"
        # The way out, whatever ended the run: forward what is queued (at most --drain s) and
        # withdraw the memberships relayed upstream. A signal in the meantime (a second one,
        # or the first after --duration) waits for it to end.
        try:
            with deferred():
                drained = r.shutdown(args.drain)
        except Stopped as e:
            why = f"{why}, then {e}"
    if out is not None:
        write(why, drained)
        (out / "router_stats.txt").write_text(r.stats_text())
    say(f"[router] stopped by {why} after {r.now:.2f} s; drained {drained['forwarded']} of {drained['queued']} "
        f"queued frames in {drained['took_ns'] / 1e6:.0f} ms ({drained['left']} left, {drained['held_dropped']} "
        f"awaiting ARP dropped), withdrew {drained['withdrawn']} relayed memberships")
    say(r.stats_text().rstrip())
    return 0


def _router_kinds() -> list[str]:
    from castlab import _registry

    return list(_registry.scenario_kinds()[2])


def add_router_parser(roles) -> None:
    """Register ``castlab net router`` under ``castlab net``'s subparsers."""
    p = roles.add_parser("router", help="the user-space multicast router (run inside a router namespace)")
    p.add_argument("--iface", action="append",
                   metavar="NAME,ADDR/LEN[,rate=R][,delay=D][,queue=Q][,lan][,peer=NODE]",
                   help="an interface (repeatable): rate in bit/s (k/M/G), delay in s or ms, queue "
                        "droptail:LIMIT or red:LIMIT:MIN:MAX:MAX_P:W_Q[:gentle], lan for a shared segment, "
                        "peer the castlab node at the link's far end (where an extension's reply goes)")
    p.add_argument("--route", action="append", metavar="DST/LEN,via=GW|DST/LEN,dev=IFACE",
                   help="a static route (repeatable)")
    p.add_argument("--node", type=int, default=None, help="the router's castlab node id (for extensions)")
    p.add_argument("--igmp-query-interval", default=None, help="RFC 3376 §8.2 (default 125 s)")
    p.add_argument("--igmp-last-member-interval", default=None, help="RFC 3376 §8.8 (default 1 s)")
    p.add_argument("--igmp-max-groups", type=int, default=None, metavar="N",
                   help="groups with members per interface, at most; reports for more are dropped and counted "
                        "(igmp_groups_full; default 256)")
    p.add_argument("--igmp-max-sources", type=int, default=None, metavar="N",
                   help="source-specific memberships per interface, at most (igmp_sources_full; default 1024)")
    p.add_argument("--extension", nargs="+", default=None, metavar=("KIND", "KEY=VALUE"),
                   help="host a registered router kind (" + ", ".join(_router_kinds()) + ") with its keys "
                        "and config fields; needs the session below")
    p.add_argument("--host", action="append", default=None, metavar="NODE=ADDR",
                   help="the address of a castlab node the extension may send to (repeatable; node 0 is "
                        "--source-addr)")
    g = p.add_argument_group("session (as the host roles take it; with --extension, --session or --session-file, "
                             "castlab datagrams of other sessions are counted and dropped)")
    g.add_argument("--session-file", default=None, metavar="FILE", help="JSON object of session settings")
    for flag, dest, kw, text in SESSION_FLAGS:
        g.add_argument(flag, dest=dest, default=argparse.SUPPRESS, **kw,
                       help=f"{text} (default {SESSION_DEFAULTS[dest][1]})"
                       + ("; also seeds RED's draws and the extension's stream" if dest == "seed" else ""))
    g.add_argument("--layers", type=int, default=argparse.SUPPRESS,
                   help="the session's data groups, as the host roles' (default 6)")
    p.add_argument("--realtime", type=int, nargs="?", const=10, default=None, metavar="PRIORITY",
                   help="run the forwarding loop under SCHED_FIFO at PRIORITY (1-99, default 10): frames are "
                        "handled as soon as they arrive on a busy machine; refused (with a warning, the "
                        "router runs on) without CAP_SYS_NICE or with real-time throttling off")
    p.add_argument("--spin-us", type=int, default=0, metavar="US",
                   help="wake US microseconds before each delay-line deadline and poll without sleeping "
                        "until it: hand-overs on time instead of a timer wake-up late (default 0)")
    p.add_argument("--time-extension", action="store_true",
                   help="count the extension's calls and the ns inside them (ext_*_calls, ext_*_ns in the stats)")
    p.add_argument("--time-transit", action="store_true",
                   help="histogram each forwarded frame's transit through the router (kernel receive "
                        "timestamp to sendmmsg; `transit` per port in router_stats.json)")
    p.add_argument("--duration", type=float, default=0.0, help="seconds to run (default 0: until a signal)")
    p.add_argument("--drain", type=float, default=1.0, metavar="S",
                   help="on the way out (a signal or the end of --duration), forward what is queued for at "
                        "most S seconds before exiting (default %(default)s)")
    p.add_argument("--status-interval", type=float, default=5.0, help="seconds between status lines")
    p.add_argument("--out", default=None, help="directory for router_stats.json and router_stats.txt")
    p.add_argument("--stats-every", type=float, default=None, metavar="S",
                   help="also rewrite router_stats.json every S seconds while running (stopped_by null), "
                        "for readers such as Testbed.qdisc_stats")
    p.set_defaults(fn=run_router)


def main(argv=None) -> int:
    """``python -m castlab.router ARGS``: the role without the ``castlab`` command's imports,
    so that the testbed's routers are forwarding within a fraction of a second of their start."""
    p = argparse.ArgumentParser(prog="castlab net")
    add_router_parser(p.add_subparsers(dest="role", required=True))
    args = p.parse_args(["router", *(sys.argv[1:] if argv is None else argv)])
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
