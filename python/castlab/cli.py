"""The ``castlab`` command: list and reproduce experiments, run the demo."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from castlab import net, stopping
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


class _Progress:
    """The parts a command of several (``reproduce --all``'s experiments, ``scenario run``'s
    seeds) has finished, in a hidden file of its output folder with the command's settings, so
    that the same command started again after a stop runs only the rest. Another command's file
    (other settings, another castlab build) resumes nothing; the file is removed when the
    command completes."""

    def __init__(self, path: Path, settings: dict):
        self.path = path
        self.settings = json.loads(json.dumps(settings, sort_keys=True, default=str))
        self.done: list = []

    def resume(self, parts: list, present) -> list:
        """The parts of `parts` an earlier run of the same command finished whose outputs are
        still there (``present(part)``); they count as done."""
        try:
            prev = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return []
        if not isinstance(prev, dict) or prev.get("settings") != self.settings:
            return []
        self.done = [x for x in prev.get("done", []) if x in parts and present(x)]
        return list(self.done)

    def finished(self, part) -> None:
        # one block: a stop between the two would leave a part said to be kept but missing
        # from the file, so run again by the next command
        with stopping.deferred():
            self.done.append(part)
            self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        with stopping.deferred():  # a stop waits for the file to be whole
            tmp.write_text(json.dumps({"settings": self.settings, "done": self.done}, indent=1) + "\n")
            os.replace(tmp, self.path)

    def complete(self) -> None:
        self.path.unlink(missing_ok=True)


def _build_identity() -> dict:
    """What makes two builds' outputs comparable: castlab's version and commit."""
    from castlab.study.store import castlab_version, git_commit

    return {"castlab_version": castlab_version(), "git_commit": git_commit()}


#: reproduce --all's progress file in its output folder
REPRODUCE_PROGRESS = ".castlab-reproduce-all.json"
#: scenario run's progress file in its output folder
SCENARIO_PROGRESS = ".castlab-scenario-run.json"


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
        with stopping.deferred():  # a stop does not leave `out` half replaced
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
    """A claim as printed: the mark ("ok", "FAIL", "READ" reading-dependent, "UNDC" undecided, or
    in parentheses on a quick run, which is not a verdict), kind, id, ours against the paper, the
    statement; wrapped at `width`."""
    from castlab.experiments.common import QUICK_NOTE

    import textwrap

    marks = {"holds": "ok", "fails": "FAIL", "reading-dependent": "READ", "undecided": "UNDC"}
    mark = marks.get(c.verdict, "FAIL") if not quick else ("(ok)" if c.holds else "(FAIL)")
    ours = f"{c.ours:.6g} {c.unit}" if isinstance(c.ours, float) else f"{c.ours}"
    wrap = lambda text, first: textwrap.fill(text, width, initial_indent=first,  # noqa: E731
                                             subsequent_indent=" " * 7, break_on_hyphens=False)
    lines = [wrap(f"[{c.kind}] {c.id}: ours {ours} vs {c.paper_value}" + (f" ({QUICK_NOTE})" if quick else "")
                  + f" — {c.statement}", f"  {mark:<5}")]
    if c.verdict == "reading-dependent" and not quick:
        lines.append(wrap("holds under some readings the paper allows, not all: "
                          + ", ".join(f"{r['reading']} {r['verdict']}" for r in c.readings), " " * 7))
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


def _reproduce_parallel(names: list[str], out: Path, seed: int, quick: bool, jobs: int,
                        on_done=None) -> tuple[list, list]:
    """Every experiment in a process pool of `jobs` workers, each still written atomically into
    its own folder; ``on_done(name)`` after each that finished. Returns (summaries in `names`
    order, failures as (name, error)); a failed experiment does not stop the others."""
    from castlab.parallel import as_completed, process_pool, stop_pool

    done: dict[str, dict] = {}
    failed: list[tuple[str, str]] = []
    order = _longest_first(names, out)
    with process_pool(jobs) as ex:
        futures = {ex.submit(_reproduce_quiet, n, out / n, seed, quick): n for n in order}
        try:
            for fut in as_completed(futures):
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
                if on_done is not None:
                    on_done(n)
        except BaseException:
            # a stop: the workers ignore SIGINT and SIGHUP, so end them rather than wait for
            # whole experiments; a worker ended before its clean-up ran leaves its partial folder
            for pid in stop_pool(ex):
                for n in names:
                    shutil.rmtree(out / f".{n}.partial-{pid}", ignore_errors=True)
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
    progress = None
    if args.all:
        # an earlier `reproduce --all` with these settings that was stopped: its finished
        # experiments are kept, the rest run
        progress = _Progress(out / REPRODUCE_PROGRESS, {"seed": args.seed, "quick": bool(args.quick),
                                                        "phase_overhead": args.phase_overhead, **_build_identity()})
        kept = progress.resume(names, lambda n: (out / n / "summary.json").is_file())
        if kept:
            one = len(kept) == 1
            print(f"castlab reproduce: {len(kept)} experiment{'' if one else 's'} finished by an earlier run of this "
                  f"command {'is' if one else 'are'} kept ({', '.join(kept)}); running the other "
                  f"{len(names) - len(kept)}", file=sys.stderr)
        progress.save()
    started = time.time()
    try:
        if args.all and not os.environ.get(RUN_CACHE_ENV):
            # experiments that repeat another's runs load them (castlab.experiments.runcache): a
            # fresh folder for this command only, so no cached run outlives the code that made it
            cache = tempfile.mkdtemp(prefix="castlab-runs-")
            os.environ[RUN_CACHE_ENV] = cache
            try:
                return _reproduce_names(args, names, out, progress)
            finally:
                os.environ.pop(RUN_CACHE_ENV, None)
                shutil.rmtree(cache, ignore_errors=True)
        return _reproduce_names(args, names, out, progress)
    except KeyboardInterrupt:
        how = f"stopped by {stopping.what()}"
        if progress is None:
            try:
                whole = (out / "summary.json").stat().st_mtime >= started
            except OSError:
                whole = False
            print(f"castlab reproduce: {how}: " + (f"{names[0]} had finished and is in {out}" if whole else
                  f"{names[0]} did not finish and nothing of it is kept ({out} is as it was); the same command "
                  "runs it again"), file=sys.stderr)
        else:
            # an experiment moved into place (summary.json last) whose end had not been
            # recorded when the stop came (its result on the way back from a worker) is finished
            for n in names:
                with contextlib.suppress(OSError):
                    if n not in progress.done and (out / n / "summary.json").stat().st_mtime >= started:
                        progress.finished(n)
            done = [n for n in names if n in progress.done]
            print(f"castlab reproduce: {how}: {len(done)} of {len(names)} experiments finished and are kept in "
                  f"{out}" + (f" ({', '.join(done)})" if done else "") + f"; nothing of the other "
                  f"{len(names) - len(done)} is kept; the same command runs only those, then writes the report",
                  file=sys.stderr)
        return stopping.exit_code()


def _reproduce_names(args, names: list, out: Path, progress: "_Progress | None") -> int:
    from castlab.parallel import workers
    from castlab.report import write_report

    kept = {n: json.loads((out / n / "summary.json").read_text()) for n in (progress.done if progress else [])}
    todo = [n for n in names if n not in kept]
    jobs = max(1, min(args.jobs or 1, len(todo)))
    failed: list[tuple[str, str]] = []
    ran: dict[str, dict] = {}
    if args.all and jobs > 1:
        t = time.perf_counter()
        summaries, failed = _reproduce_parallel(todo, out, args.seed, args.quick, jobs, on_done=progress.finished)
        ran = {s["experiment"]: s for s in summaries}
        print(f"castlab reproduce: {len(summaries)} experiments on {jobs} jobs in {time.perf_counter() - t:.1f} s",
              file=sys.stderr)
    else:
        # one experiment: its own loop over seeds and points runs on the workers
        with workers(1 if args.all else args.jobs or 1):
            for n in todo:
                target = out / n if args.all else out
                ran[n] = _reproduce_one(n, target, args.seed, args.quick)
                if progress is not None:
                    progress.finished(n)
    summaries = [kept.get(n) or ran[n] for n in names if n in kept or n in ran]
    if args.all:
        write_report(out, summaries)
        progress.complete()
    elif summaries:
        from castlab.report_html import write_html

        print(f"report: {write_html(out, summaries)}", file=sys.stderr)
    for n, err in failed:
        print(f"castlab reproduce: {n} failed: {err}", file=sys.stderr)
    held = all(c["holds"] for s in summaries for c in s["claims"])
    if failed:
        return 1
    return 0 if held or not args.strict else 1


def _cmd_report(args) -> int:
    """Gather the summary.json of every experiment folder under the given folders (each folder
    itself, or its sub-folders one level down) into one report, as `reproduce --all` writes it."""
    import json

    from castlab.report import write_report

    found: dict[str, tuple[Path, dict]] = {}
    for d in map(Path, args.dirs):
        if not d.is_dir():
            print(f"castlab report: {d} is not a folder", file=sys.stderr)
            return 2
        for f in [d / "summary.json", *sorted(d.glob("*/summary.json"))]:
            if not f.is_file():
                continue
            try:
                s = json.loads(f.read_text())
                name = s["experiment"]
            except (ValueError, KeyError, TypeError) as e:
                print(f"castlab report: {f} is not an experiment's summary ({e})", file=sys.stderr)
                return 2
            if name in found:
                print(f"castlab report: {name} is in both {found[name][0]} and {f}", file=sys.stderr)
                return 2
            found[name] = (f, s)
    if not found:
        print(f"castlab report: no summary.json in {', '.join(args.dirs)}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(args.dirs[0])
    out.mkdir(parents=True, exist_ok=True)
    from castlab.experiments import REGISTRY

    order = {n: k for k, n in enumerate(REGISTRY)}  # `castlab list`'s order, as `reproduce --all` writes it
    write_report(out, [found[n][1] for n in sorted(found, key=lambda n: (order.get(n, len(order)), n))])
    return 0


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
        print(f"castlab sweep: stopped by {stopping.what()}: {e.report.ran} runs finished"
              + (f" and are stored in {args.store}" if args.store else " (no --store: not kept)")
              + (f"; {len(e.interrupted)} stopped while running and {len(e.not_run) - len(e.interrupted)} not "
                 f"started are not run" if e.interrupted else f"; {len(e.not_run)} are not run")
              + ("; the same command runs only those" if args.store else ""), file=sys.stderr)
        return stopping.exit_code()
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
        # written whole under a temporary name, then renamed: a stop leaves no half CSV
        csv = Path(args.csv)
        tmp = csv.with_name(f".{csv.name}.{os.getpid()}")
        try:
            df.to_csv(tmp, index=False)
            os.replace(tmp, csv)
        finally:
            tmp.unlink(missing_ok=True)
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
    # an earlier run of this command (same scenario, same build) that was stopped: its finished
    # seeds are kept, the others run
    progress = _Progress(out / SCENARIO_PROGRESS, {"scenario": scenario.to_dict(), **_build_identity()})
    kept = progress.resume(list(seeds), lambda s: (out / f"seed-{s}" / "summary.json").is_file())
    if kept:
        print(f"castlab scenario: {_seeds_text(kept)} finished by an earlier run of this command "
              f"{'are' if len(kept) > 1 else 'is'} kept; running the other {len(seeds) - len(kept)}", file=sys.stderr)
    progress.save()
    every: list[dict] = []
    seed, t_wall = None, time.time()
    try:
        for seed in seeds:
            run_dir = out / f"seed-{seed}"
            if seed in kept:
                rows = json.loads((run_dir / "summary.json").read_text())["flows"]
                every += [{"seed": seed, **r} for r in rows]
                continue
            print(f"[{scenario.name}] seed {seed} -> {run_dir}", file=sys.stderr, flush=True)
            t, t_wall = time.perf_counter(), time.time()
            try:
                scenario.run(seed, run_dir)
            except ScenarioError as e:
                print(f"castlab scenario: {e}", file=sys.stderr)
                return 2
            progress.finished(seed)
            rows = json.loads((run_dir / "summary.json").read_text())["flows"]
            print(f"{scenario.name}, seed {seed}, {scenario.duration:g} s simulated in {time.perf_counter() - t:.2f} s")
            print(format_table(rows))
            every += [{"seed": seed, **r} for r in rows]
    except KeyboardInterrupt:
        if seed is not None and seed not in progress.done:
            # the seed's folder moved into place (summary.json last) before the stop
            with contextlib.suppress(OSError):
                if (out / f"seed-{seed}" / "summary.json").stat().st_mtime >= t_wall:
                    progress.finished(seed)
        done = [s for s in seeds if s in progress.done]
        print(f"castlab scenario: stopped by {stopping.what()} during seed {seed}: "
              + (f"{_seeds_text(done)} finished and are kept in {out}" if done else "no seed finished")
              + ("" if seed in done else f"; nothing of seed {seed} is kept")
              + "; the same command runs only the seeds not finished", file=sys.stderr)
        return stopping.exit_code()
    progress.complete()
    if every:
        write_csv(out / "flows.csv", every)
        print(f"flow table of every seed: {out / 'flows.csv'}", file=sys.stderr)
    return 0


def _seeds_text(seeds: list) -> str:
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


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
    rp = sub.add_parser("report", help="gather experiments' summaries (folders written by `reproduce`) into one "
                        "report, as `reproduce --all` writes it")
    rp.add_argument("dirs", nargs="+", metavar="DIR", help="an experiment's folder, or a folder of them")
    rp.add_argument("--out", default=None, help="where report.md, report.json and status.json go (default: the "
                    "first DIR)")
    rp.set_defaults(fn=_cmd_report)
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
        if args.cmd == "net":
            # the roles and the router stop on signals their own way (castlab.net, castlab.router)
            return args.fn(args)
        # SIGINT, SIGTERM and SIGHUP all take the Ctrl-C path (castlab.stopping): the workers are
        # ended, what finished is kept and said, and the exit code names the signal
        with stopping.handled():
            try:
                return args.fn(args)
            except KeyboardInterrupt:
                print(f"castlab {args.cmd}: stopped by {stopping.what()}", file=sys.stderr)
                return stopping.exit_code()
            finally:
                if stopping.received() is not None:
                    from castlab.parallel import end_resource_tracker

                    end_resource_tracker()
    finally:
        warnings.formatwarning = old_format


def run() -> None:
    """The ``castlab`` program: ``main()``, then exit with its code. After a stop signal the
    process ends as soon as its clean-up is done (``stopping.exit_now``)."""
    code = main()
    if stopping.received() is not None:
        stopping.exit_now(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
