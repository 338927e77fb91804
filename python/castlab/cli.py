"""The ``castlab`` command: list and reproduce experiments, run the demo."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from castlab import net
from castlab.assign import parse_assignment, parse_grid


def _cmd_list(args) -> int:
    """One experiment a line: name and paper in columns sized to the longest entry, then the
    figure and what it shows."""
    from castlab.experiments import REGISTRY

    width = max(len(n) for n in REGISTRY)
    paper = max(len(e.paper) for e in REGISTRY.values())
    for name, e in REGISTRY.items():
        print(f"{name:<{width}}  {e.paper:<{paper}}  {e.figure}: {e.description}")
    return 0


def net_unavailable():
    """Why the real-network (net-*) experiments cannot run here (they need root and the
    testbed's tools), or None."""
    from castlab.testbed import available

    return available()


def _move_into(done: Path, out: Path) -> None:
    """Move every file of the finished folder `done` into `out` (same names are replaced, other
    files in `out` are left alone), summary.json last, then remove `done`."""
    out.mkdir(parents=True, exist_ok=True)
    entries = sorted(done.iterdir(), key=lambda p: p.name == "summary.json")
    for p in entries:
        dest = out / p.name
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        os.replace(p, dest)
    done.rmdir()


def _reproduce_one(name: str, out: Path, seed: int, quick: bool) -> dict:
    """Run one experiment into a temporary sibling of `out` and move it into place only once
    complete: an interrupted run leaves `out` as it was (no seed-2 CSVs beside a seed-1
    summary)."""
    from castlab.experiments import REGISTRY
    from castlab.experiments.common import QUICK_NOTE, write_summary
    from castlab.report import KIND_ORDER

    exp = REGISTRY[name]
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    print(f"[{name}] running (seed {seed}{', quick' if quick else ''}) -> {out}", file=sys.stderr, flush=True)
    t = time.perf_counter()
    try:
        result = exp.run(work, seed, quick=quick)
        wall = time.perf_counter() - t
        summary = write_summary(work, exp, seed, result, wall, quick=quick)
        _move_into(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    ok = sum(c.holds for c in result.claims)
    paper = [c for c in result.claims if c.kind == "paper"]
    print(f"[{name}] {ok}/{len(result.claims)} claims hold ({sum(c.holds for c in paper)}/{len(paper)} of the "
          f"paper's), {wall:.1f} s" + (f" — {QUICK_NOTE} (shorter settings)" if quick else ""),
          file=sys.stderr, flush=True)
    for c in sorted(result.claims, key=lambda c: KIND_ORDER.get(c.kind, len(KIND_ORDER))):
        print(_claim_text(c, quick))
    return summary


def _claim_text(c, quick: bool, width: int = 100) -> str:
    """A claim as printed: the mark ("ok", "FAIL", or in parentheses on a quick run, which is
    not a verdict), kind, id, ours against the paper, the statement; wrapped at `width`."""
    from castlab.experiments.common import QUICK_NOTE

    import textwrap

    mark = ("ok" if c.holds else "FAIL") if not quick else ("(ok)" if c.holds else "(FAIL)")
    ours = f"{c.ours:.6g} {c.unit}" if isinstance(c.ours, float) else f"{c.ours}"
    wrap = lambda text, first: textwrap.fill(text, width, initial_indent=first,  # noqa: E731
                                             subsequent_indent=" " * 7, break_on_hyphens=False)
    lines = [wrap(f"[{c.kind}] {c.id}: ours {ours} vs {c.paper_value}" + (f" ({QUICK_NOTE})" if quick else "")
                  + f" — {c.statement}", f"  {mark:<5}")]
    if c.explanation and not c.holds:
        lines.append(wrap(f"why: {c.explanation}", " " * 7))
    if c.paper_inconsistent:
        lines.append(wrap(f"the paper contradicts itself: {c.paper_inconsistent}", " " * 7))
    return "\n".join(lines)


def _reproduce_quiet(name: str, out: Path, seed: int, quick: bool) -> tuple[dict, str]:
    """_reproduce_one in a worker process: its per-claim lines come back as text, so experiments
    that finish together do not interleave their listings."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        summary = _reproduce_one(name, out, seed, quick)
    return summary, buf.getvalue()


def _longest_first(names: list[str], out: Path) -> list[str]:
    """`names` with the longest experiments first, by the wall times of the summaries a previous
    run left in `out` (unknown ones first, in their order): a long experiment started last
    would leave the other workers idle at the end."""
    wall: dict[str, float] = {}
    for n in names:
        try:
            wall[n] = float(json.loads((out / n / "summary.json").read_text())["wall_s"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return sorted(names, key=lambda n: -wall.get(n, float("inf")))


def _reproduce_parallel(names: list[str], out: Path, seed: int, quick: bool, jobs: int) -> tuple[list, list]:
    """Every experiment in a process pool of `jobs` workers, each still written atomically into
    its own folder. Returns (summaries in `names` order, failures as (name, error)); a failed
    experiment does not stop the others."""
    from castlab.parallel import process_pool, stop_pool

    import concurrent.futures as cf

    done: dict[str, dict] = {}
    failed: list[tuple[str, str]] = []
    order = _longest_first(names, out)
    with process_pool(jobs) as ex:
        futures = {ex.submit(_reproduce_quiet, n, out / n, seed, quick): n for n in order}
        try:
            for fut in cf.as_completed(futures):
                n = futures[fut]
                try:
                    summary, text = fut.result()
                except Exception as e:  # noqa: BLE001 - reported with the others at the end
                    failed.append((n, f"{type(e).__name__}: {e}"))
                    print(f"[{n}] FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
                    continue
                sys.stdout.write(text)
                sys.stdout.flush()
                done[n] = summary
        except BaseException:
            # Ctrl-C: the workers ignore SIGINT, so stop them rather than wait for whole experiments
            stop_pool(ex)
            raise
    return [done[n] for n in names if n in done], failed


def _cmd_reproduce(args) -> int:
    from castlab.experiments import REGISTRY
    from castlab.experiments.runcache import RUN_CACHE_ENV

    if args.all:
        names = list(REGISTRY)
        net_names = [n for n in names if n.startswith("net-")]
        reason = None if args.no_net else net_unavailable()
        if args.no_net or reason:
            names = [n for n in names if n not in net_names]
            why = "--no-net" if args.no_net else f"{reason}; --no-net leaves them out without this note"
            print(f"castlab reproduce: skipping the real-network experiments {', '.join(net_names)} ({why})",
                  file=sys.stderr)
    elif args.name:
        if args.name not in REGISTRY:
            print(f"castlab: unknown experiment {args.name!r}; `castlab list` shows them", file=sys.stderr)
            return 2
        names = [args.name]
    else:
        print("castlab reproduce: give an experiment NAME or --all", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print(f"castlab reproduce: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
        return 2
    if args.phase_overhead is not None:
        from castlab.simulator import PHASE_ENV

        if not (0.0 <= args.phase_overhead <= 1.0):
            print(f"castlab reproduce: --phase-overhead must be in [0, 1] s, got {args.phase_overhead}",
                  file=sys.stderr)
            return 2
        # every simulator of the run, in this process and in the workers it starts, reads it
        os.environ[PHASE_ENV] = repr(args.phase_overhead)
    # Default folders never mix runs: out/NAME for one experiment, out/ (out/NAME each and the
    # report) for --all; a folder holding another experiment's outputs is refused.
    out = Path(args.out) if args.out else (Path("out") if args.all else Path("out") / names[0])
    from castlab.outdir import OutDirError, check_all_out, check_reproduce_out

    try:
        check_all_out(out, names) if args.all else check_reproduce_out(out, names[0])
    except OutDirError as e:
        print(f"castlab reproduce: {e}", file=sys.stderr)
        return 2
    jobs = min(args.jobs or 1, len(names))
    failed: list[tuple[str, str]] = []
    if args.all and not os.environ.get(RUN_CACHE_ENV):
        # experiments that repeat another's runs load them (castlab.experiments.runcache): a
        # fresh folder for this command only, so no cached run outlives the code that made it
        cache = tempfile.mkdtemp(prefix="castlab-runs-")
        os.environ[RUN_CACHE_ENV] = cache
        try:
            return _reproduce_names(args, names, out, jobs, failed)
        finally:
            os.environ.pop(RUN_CACHE_ENV, None)
            shutil.rmtree(cache, ignore_errors=True)
    return _reproduce_names(args, names, out, jobs, failed)


def _reproduce_names(args, names: list, out: Path, jobs: int, failed: list) -> int:
    from castlab.parallel import workers
    from castlab.report import write_report

    if args.all and jobs > 1:
        t = time.perf_counter()
        summaries, failed = _reproduce_parallel(names, out, args.seed, args.quick, jobs)
        print(f"castlab reproduce: {len(summaries)} experiments on {jobs} jobs in {time.perf_counter() - t:.1f} s",
              file=sys.stderr)
    else:
        summaries = []
        # one experiment: its own loop over seeds and points runs on the workers
        with workers(1 if args.all else args.jobs or 1):
            for n in names:
                target = out / n if args.all else out
                summaries.append(_reproduce_one(n, target, args.seed, args.quick))
    if args.all:
        write_report(out, summaries)
    elif summaries:
        from castlab.report_html import write_html

        print(f"report: {write_html(out, summaries)}", file=sys.stderr)
    for n, err in failed:
        print(f"castlab reproduce: {n} failed: {err}", file=sys.stderr)
    held = all(c["holds"] for s in summaries for c in s["claims"])
    if failed:
        return 1
    return 0 if held or not args.strict else 1


def _cmd_sweep(args) -> int:
    from castlab.study.runner import SweepInterrupted
    from castlab.study.store import StoreWriteError

    from castlab.seeds import parse_seeds
    from castlab.study.runner import run_sweep

    try:
        grid = parse_grid(args.grid)
        seeds = parse_seeds(args.seeds)
        if args.jobs is not None and args.jobs < 1:
            raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
        kw = dict(store=args.store, quick=args.quick, progress=not args.no_progress)
        if args.dask:
            from castlab.study.cluster import dask_executor

            with dask_executor(args.dask, args.jobs) as ex:
                rep = run_sweep(args.target, grid, seeds, executor=ex, **kw)
        else:
            rep = run_sweep(args.target, grid, seeds, jobs=args.jobs, **kw)
    except ValueError as e:
        print(f"castlab sweep: {e}", file=sys.stderr)
        return 2
    except StoreWriteError as e:
        print(f"castlab sweep: {e}", file=sys.stderr)
        return 1
    except SweepInterrupted as e:
        print(f"castlab sweep: interrupted: {e.report.ran} runs finished"
              + (f" and are stored in {args.store}" if args.store else "")
              + f"; {len(e.interrupted)} stopped while running and {len(e.not_run) - len(e.interrupted)} not started "
              f"are not run" + ("; the same command runs them" if args.store else ""), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("castlab sweep: interrupted", file=sys.stderr)
        return 130
    print(f"castlab sweep: {rep.total} runs: {rep.ran - rep.failed} ran, {rep.failed} failed, "
          f"{rep.skipped} already stored" + (f"; store {args.store}" if args.store else ""), file=sys.stderr)
    if rep.rows and rep.metrics:
        import pandas as pd

        from castlab.study import aggregate

        from castlab.study.results import format_aggregate

        df = pd.DataFrame(rep.rows)
        df.attrs.update(params=rep.params, metrics=rep.metrics)
        print(format_aggregate(aggregate(df)))
    return 1 if rep.failed else 0


def _cmd_results(args) -> int:
    import pandas as pd

    from castlab.study import aggregate, results

    version = "all" if args.all_versions else args.version
    if args.html is not None:
        from castlab.study.html import write_store_html

        try:
            page = write_store_html(args.store, args.html or None, confidence=args.confidence)
        except ValueError as e:
            print(f"castlab results: {e}", file=sys.stderr)
            return 2
        print(f"castlab results: {page}", file=sys.stderr)
        return 0
    try:
        df = results(args.store, version=version)
        if args.aggregate:
            by = args.by.split(",") if args.by else None
            metrics = args.metrics.split(",") if args.metrics else None
            df = aggregate(df, by=by, metrics=metrics, confidence=args.confidence)
    except ValueError as e:
        print(f"castlab results: {e}", file=sys.stderr)
        return 2
    if args.csv:
        df.to_csv(args.csv, index=False)
        print(f"castlab results: {len(df)} rows -> {args.csv}", file=sys.stderr)
    elif args.aggregate:
        from castlab.study.results import format_aggregate

        print(format_aggregate(df, args.confidence))
    else:
        with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 50):
            print(df.to_string(index=False))
    return 0


def _cmd_plot(args) -> int:
    from castlab.plot import plot_path

    metrics = [m for item in args.metric or [] for m in item.split(",") if m.strip()] or None
    try:
        png = plot_path(args.path, args.out, metrics=metrics, x=args.x, seed=args.seed)
    except ValueError as e:
        print(f"castlab plot: {e}", file=sys.stderr)
        return 2
    print(f"castlab plot: {png}", file=sys.stderr)
    return 0


def _add_study_parsers(sub) -> None:
    s = sub.add_parser("sweep", help="run an experiment or a scenario file over a grid of parameters times seeds")
    s.add_argument("target", help="an experiment name (`castlab list`) or a scenario file (.toml)")
    s.add_argument("--grid", action="append", metavar="KEY=V1,V2",
                   help="a parameter and its values (repeat for more; the sweep runs their product)")
    s.add_argument("--seeds", default="1", help="seeds, e.g. 1-10 or 1,3,5 (default 1)")
    s.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core; 1 runs here)")
    s.add_argument("--store", metavar="DIR", help="results store: finished runs are kept, stored runs skipped")
    s.add_argument("--dask", metavar="ADDRESS", help="run on Dask: 'local' (a LocalCluster) or tcp://host:port")
    s.add_argument("--quick", action="store_true", help="experiments' shorter settings")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(fn=_cmd_sweep)
    r = sub.add_parser("results", help="read a results store: one row per run, or aggregated over seeds")
    r.add_argument("store", metavar="DIR")
    r.add_argument("--aggregate", action="store_true", help="mean and Student-t interval over seeds per group")
    r.add_argument("--by", help="with --aggregate: grouping columns, comma-separated (default: the parameters)")
    r.add_argument("--metrics", help="with --aggregate: metrics, comma-separated (default: all numeric ones)")
    r.add_argument("--confidence", type=float, default=0.95)
    r.add_argument("--csv", metavar="FILE", help="write a CSV instead of printing")
    r.add_argument("--html", nargs="?", const="", default=None, metavar="FILE",
                   help="write a page to open in a browser (default STORE/report.html): the aggregate over seeds "
                        "and a plot per metric against the swept parameter")
    r.add_argument("--version", dest="version", help="read the results of this castlab version only")
    r.add_argument("--all-versions", action="store_true", help="read the results of every castlab version together")
    r.set_defaults(fn=_cmd_results)
    pl = sub.add_parser("plot", help="plot a results store (a metric against a grid parameter) or a scenario run "
                        "(levels, rates and queues over time)")
    pl.add_argument("path", help="a results store (--store of a sweep) or a scenario run's --out folder")
    pl.add_argument("--metric", action="append", metavar="NAME",
                    help="store: the metric(s) to draw, full or short names (loss: every *.loss); default the first")
    pl.add_argument("--x", metavar="PARAM", help="store: the grid parameter on the x axis (default: the first varying)")
    pl.add_argument("--seed", type=int, help="scenario run: which seed (default: the first)")
    pl.add_argument("--out", metavar="FILE.png", help="the PNG (default: PATH/plot.png or PATH/plot-seed-N.png)")
    pl.set_defaults(fn=_cmd_plot)


def _cmd_run(args) -> int:
    from castlab import demo

    rows = demo.main(duration=args.duration, seed=args.seed)
    print(f"castlab demo: 6-layer source (32·2^m kb/s) behind a 1.5 Mb/s bottleneck, {args.duration:g} s, seed {args.seed}")
    print(f"{'receiver':<8} {'access':>9} {'level':>5} {'offered':>10} {'throughput':>11} {'received':>8} "
          f"{'lost':>6} {'loss':>7} {'worst 1 s':>9}")
    for r in rows:
        print(f"{r['receiver']:<8} {r['access_kbps']:>6.0f} kb {r['level']:>5} {r['offered_kbps']:>7.0f} kb "
              f"{r['throughput_kbps']:>8.1f} kb {r['received']:>8} {r['lost']:>6} {r['loss']:>7.2%} {r['worst_loss_1s']:>9.2%}")
    print("Fixed subscriptions: the receiver that takes all six layers (2.0 Mb/s) overloads the shared 1.5 Mb/s\n"
          "bottleneck, and every receiver behind it loses packets. Adapting the level is what RLM is for.")
    return 0


def _cmd_scenario_run(args) -> int:
    """`castlab scenario run FILE --seeds 1-3 --out DIR`: per seed, DIR/seed-N/ holds what
    `reproduce` writes (summary.json, CSVs) and flows.csv; DIR/flows.csv has every seed's rows."""
    from castlab.scenario import Scenario, ScenarioError, format_table, write_csv
    from castlab.seeds import parse_seeds

    try:
        scenario = Scenario.from_toml(args.file, strict=not args.lenient)
        if args.set:
            scenario = scenario.with_params(dict(parse_assignment(kv, "--set") for kv in args.set))
        seeds = parse_seeds(args.seeds) if args.seeds else scenario.seeds
    except (ScenarioError, ValueError, OSError) as e:
        print(f"castlab scenario: {e}", file=sys.stderr)
        return 2
    from castlab.outdir import OutDirError, check_scenario_out

    out = Path(args.out) if args.out else Path("out") / scenario.name
    try:
        check_scenario_out(out, scenario.name, scenario.to_dict())
    except OutDirError as e:
        print(f"castlab scenario: {e}", file=sys.stderr)
        return 2
    every: list[dict] = []
    for seed in seeds:
        run_dir = out / f"seed-{seed}"
        print(f"[{scenario.name}] seed {seed} -> {run_dir}", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            scenario.run(seed, run_dir)
        except ScenarioError as e:
            print(f"castlab scenario: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            done = [r["seed"] for r in every if r["seed"] != seed]
            print(f"castlab scenario: interrupted during seed {seed}; finished seeds "
                  f"{sorted(set(done)) or 'none'} are in {out}", file=sys.stderr)
            return 130
        rows = json.loads((run_dir / "summary.json").read_text())["flows"]
        print(f"{scenario.name}, seed {seed}, {scenario.duration:g} s simulated in {time.perf_counter() - t:.2f} s")
        print(format_table(rows))
        every += [{"seed": seed, **r} for r in rows]
    if every:
        write_csv(out / "flows.csv", every)
        print(f"flow table of every seed: {out / 'flows.csv'}", file=sys.stderr)
    return 0


def _cmd_scenario_check(args) -> int:
    """`castlab scenario check FILE`: read and check the file without running it; `--json`
    prints the canonical form (SI units, defaults filled in, entries named)."""
    from castlab.scenario import Scenario, ScenarioError

    try:
        scenario = Scenario.from_toml(args.file, strict=not args.lenient)
    except (ScenarioError, OSError) as e:
        print(f"castlab scenario: {e}", file=sys.stderr)
        return 2
    print(json.dumps(scenario.to_dict(), indent=2) if args.json else f"ok: {scenario!r}")
    return 0


def _add_scenario_parser(sub) -> None:
    sc = sub.add_parser("scenario", help="run a scenario file (TOML; see docs/guide.md, Scenarios)")
    ssub = sc.add_subparsers(dest="scenario_cmd", required=True)
    r = ssub.add_parser("run", help="run FILE for each seed and print the per-receiver and per-flow table")
    r.add_argument("file", help="the scenario file (.toml)")
    r.add_argument("--seeds", help="seeds: 5, 1-3 or 1,4,7 (default: the file's `seeds`)")
    r.add_argument("--out", default=None, help="output directory (default: out/NAME, the scenario's name)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a value by its dotted key (links.NAME.delay=20ms, duration=60s); repeatable")
    r.add_argument("--lenient", action="store_true",
                   help="implausible values (rate < 1 kb/s, delay > 100 s) warn instead of failing")
    r.set_defaults(fn=_cmd_scenario_run)
    c = ssub.add_parser("check", help="check FILE (keys, units, nodes) without running it")
    c.add_argument("file")
    c.add_argument("--json", action="store_true", help="print the canonical scenario as JSON")
    c.add_argument("--lenient", action="store_true", help="implausible values warn instead of failing")
    c.set_defaults(fn=_cmd_scenario_check)


def _version() -> str:
    from castlab import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="castlab", description="Multicast congestion control toolkit")
    p.add_argument("--version", action="version", version=f"castlab {_version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list the experiments").set_defaults(fn=_cmd_list)
    r = sub.add_parser("reproduce", help="reproduce an experiment (a paper figure or an engine check)")
    r.add_argument("name", nargs="?", help="experiment name (see `castlab list`)")
    r.add_argument("--all", action="store_true", help="every experiment, with a report")
    r.add_argument("--out", default=None,
                   help="output directory (default: out/NAME; with --all, out/ with a folder per experiment)")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--quick", action="store_true", help="shorter runs, for a smoke test")
    r.add_argument("--strict", action="store_true", help="exit 1 if any claim does not hold")
    r.add_argument("--no-net", action="store_true",
                   help="with --all: leave out the real-network experiments (net-*: root and the namespace testbed)")
    r.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default 1): with --all, experiments run at once; with NAME, its runs over seeds and points")
    r.add_argument("--phase-overhead", type=float, default=None, metavar="SECONDS",
                   help="phase randomisation: every packet waits a uniform random time of up to SECONDS at "
                        "its sender (ns-2's overhead_; default off)")
    r.set_defaults(fn=_cmd_reproduce)
    _add_study_parsers(sub)
    d = sub.add_parser("run", help="run the built-in demo and print per-receiver throughput and loss")
    d.add_argument("--duration", type=float, default=60.0)
    d.add_argument("--seed", type=int, default=1)
    d.set_defaults(fn=_cmd_run)
    _add_scenario_parser(sub)
    net.add_parsers(sub)
    from castlab.testbed import cli as testbed_cli

    testbed_cli.add_parsers(sub)
    args = p.parse_args(argv)
    import warnings

    # warnings about the user's input (a unit-less delay, an implausible rate) as one plain line
    old_format = warnings.formatwarning
    warnings.formatwarning = lambda msg, cat, *a, **k: f"castlab: warning: {msg}\n"
    try:
        return args.fn(args)
    finally:
        warnings.formatwarning = old_format


if __name__ == "__main__":
    sys.exit(main())
