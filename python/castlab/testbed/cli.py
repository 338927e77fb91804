"""``castlab testbed up | down | status``."""

from __future__ import annotations

import sys
import time

from castlab.testbed import (Testbed, available, down_by_name, list_testbeds, netem_available, removed_elsewhere,
                             topologies)


def _up(args) -> int:
    reason = available()
    if reason:
        print(f"castlab testbed: {reason}", file=sys.stderr)
        return 2
    reg = topologies()[args.topology]
    kw = {}
    if args.receivers is not None:
        kw[reg.receivers] = args.receivers
    if args.rate is not None:
        kw["rate_bps"] = args.rate
    if args.queue is not None:
        kw["queue_pkts"] = args.queue
    ext = {}
    if args.extension:
        if args.routers != "user":
            print("castlab testbed: --extension needs --routers user", file=sys.stderr)
            return 2
        topo = reg.make(**kw)
        ext = {"extensions": {r: (args.extension, {}) for r in topo.routers}, "session": {"session": args.session}}
    try:
        tb = Testbed(reg.make(**kw), args.name, routers=args.routers, **ext)
    except ValueError as e:
        print(f"castlab testbed: {e}", file=sys.stderr)
        return 2
    if args.detach:
        tb.detached = True  # left up on purpose: the next testbed does not remove it as stale
        try:
            tb.up()
        except RuntimeError as e:
            print(f"castlab testbed: {e}", file=sys.stderr)
            return 1
        print(tb.describe())
        print(f"left up; run commands with `ip netns exec {tb.ns('src')} ...`; remove with "
              f"`castlab testbed down {args.name}`")
        return 0
    try:
        with tb:
            print(tb.describe(), flush=True)
            print(f"up; run commands with `ip netns exec {tb.ns('src')} ...`; Ctrl-C or `castlab testbed "
                  f"down {args.name}` tears it down (processes left in its namespaces too)", flush=True)
            end = time.monotonic() + args.duration if args.duration else None
            next_check = 0.0
            while end is None or time.monotonic() < end:
                time.sleep(0.2)
                if tb.failed:
                    print(f"castlab testbed: {tb.failed}", file=sys.stderr)
                    return 1
                if time.monotonic() >= next_check:  # `testbed down` from another shell ends this one
                    next_check = time.monotonic() + 1.0
                    why = removed_elsewhere(tb)
                    if why:
                        print(f"castlab testbed: {args.name!r} is gone: {why}; tearing down the rest",
                              file=sys.stderr, flush=True)
                        break
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:
        print(f"castlab testbed: {e}", file=sys.stderr)
        return 1
    print(f"testbed {args.name!r} torn down", file=sys.stderr)
    return 0


def _down(args) -> int:
    names = list(list_testbeds()) if args.all else [args.name]
    for n in names:
        removed = down_by_name(n)
        print(f"testbed {n!r}: removed {', '.join(removed) if removed else 'nothing (not found)'}")
    return 0


def _status(args) -> int:
    reason = available()
    print(f"testbed support: {'yes' if reason is None else 'no: ' + reason}")
    if reason is None:
        print(f"netem (propagation delay): {'yes' if netem_available() else 'no: bottlenecks have no propagation delay'}")
    tbs = list_testbeds()
    if not tbs:
        print("no testbed is up")
    for n, nss in tbs.items():
        print(f"testbed {n!r}: {' '.join(sorted(nss))}")
    return 0


class _TopologyNames:
    """The registered topologies' names, read only when the command line names one (or asks
    for help): building the parser for every command does not import the experiments."""

    def __contains__(self, name) -> bool:
        return name in topologies()

    def __iter__(self):
        return iter(sorted(topologies()))


def add_parsers(sub) -> None:
    t = sub.add_parser("testbed", help="a real network of namespaces on this host (root)")
    ts = t.add_subparsers(dest="testbed_cmd", required=True)
    u = ts.add_parser("up", help="build a topology; tears it down on Ctrl-C, SIGTERM or error")
    u.add_argument("topology", choices=_TopologyNames(), metavar="TOPOLOGY", help="one of %(choices)s")
    u.add_argument("--name", default="tb", help="testbed name (namespaces cl-NAME-*), alphanumeric, <= 6 chars")
    u.add_argument("--receivers", type=int, help="receiver hosts")
    u.add_argument("--rate", type=float, help="bottleneck rate, bit/s")
    u.add_argument("--queue", type=int, help="bottleneck queue, packets")
    u.add_argument("--routers", choices=("kernel", "user"), default="kernel",
                   help="kernel forwarding with igmpproxy and tc (default), or castlab's user-space router "
                        "(delays, RED, exact queue lengths; docs/testbed.md)")
    u.add_argument("--extension", default=None, metavar="KIND",
                   help="a router extension every user router hosts (a registered router kind, e.g. bcf, lmr)")
    u.add_argument("--session", type=int, default=77,
                   help="the castlab session id the extension serves (the roles' --session; default %(default)s)")
    u.add_argument("--duration", type=float, default=0.0, help="tear down after this many seconds (0: on Ctrl-C)")
    u.add_argument("--detach", action="store_true", help="leave it up and return (remove with `down`)")
    u.set_defaults(fn=_up)
    d = ts.add_parser("down", help="remove a testbed (its namespaces and the processes it started)")
    d.add_argument("name", nargs="?", default="tb")
    d.add_argument("--all", action="store_true", help="every castlab testbed on this host")
    d.set_defaults(fn=_down)
    s = ts.add_parser("status", help="what this host supports, and the testbeds that are up")
    s.set_defaults(fn=_status)
