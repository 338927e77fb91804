"""The results store: one Parquet file per finished run, plus the run's raw outputs.

Layout of a store directory::

    runs/<key>.parquet     one row: meta columns, the parameters, the metrics
    outputs/<key>/         the files the run wrote (summary.json, CSVs, plots, log.txt)

The key is a hash of (target identity, params, seed, castlab version), so a run is found again
by what it is, not by when it ran. Every write goes to a temporary name in the same directory
and is renamed into place (atomic on POSIX), outputs first and the row last: a run counts as
stored once its row exists, and a process killed at any moment leaves only whole runs (and
perhaps a temporary file that readers ignore and the next write of that run replaces).

A write that fails (the disk fills, a quota, an I/O error) fails before anything is renamed:
both temporary copies are written in full first, so the store keeps whole runs only, the
temporary files are removed, and the writer gets a :class:`StoreWriteError` that says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

__all__ = ["Store", "StoreWriteError", "VersionMixError", "run_key", "castlab_version", "git_commit"]

ROW_SUFFIX = ".parquet"
_META_PARAMS = b"castlab.params"
_META_METRICS = b"castlab.metrics"


class VersionMixError(ValueError):
    """A store holds results of several castlab versions and the reader did not say which."""


class StoreWriteError(OSError):
    """A run could not be written into the store (disk full, quota, I/O error). Nothing of
    that run was kept and the store still holds whole runs only; ``errno`` is the cause's."""

    def __init__(self, root: Path, key: str, cause: OSError):
        why = cause.strerror or str(cause)
        super().__init__(cause.errno, f"results store {root}: could not store run {key}: {why}. Nothing of "
                                      f"that run was kept and the store holds whole runs only; free space "
                                      f"(or choose another store) and run the same sweep again: it runs only "
                                      f"what is missing")
        self.key = key

    def __str__(self) -> str:
        return str(self.strerror)


def run_key(identity: Mapping[str, Any], params: Mapping[str, Any], seed: int, version: str) -> str:
    """The run's key: the first 24 hex digits of SHA-256 over the canonical JSON of (target
    identity, params, seed, castlab version). Values must be JSON (numbers, text, booleans)."""
    doc = {"target": identity, "params": dict(params), "seed": int(seed), "castlab_version": version}
    try:
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"parameters must be numbers, text or booleans to be hashed: {e}") from None
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def castlab_version() -> str:
    from castlab import __version__

    return __version__


def git_commit() -> Optional[str]:
    """The commit castlab was built from: ``castlab._build.GIT_COMMIT`` when a packaged build
    records it, otherwise ``git rev-parse HEAD`` when the package sits in a checkout (with
    ``-dirty`` when the checkout has uncommitted changes); None when neither is known."""
    try:
        from castlab._build import GIT_COMMIT  # type: ignore[import-not-found]

        return str(GIT_COMMIT)
    except ImportError:
        pass
    pkg = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=pkg, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=pkg,
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


class Store:
    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.outputs = self.root / "outputs"

    def create(self) -> "Store":
        self.runs.mkdir(parents=True, exist_ok=True)
        self.outputs.mkdir(parents=True, exist_ok=True)
        return self

    def _row_files(self) -> list[Path]:
        if not self.runs.is_dir():
            return []
        return sorted(p for p in self.runs.iterdir() if p.name.endswith(ROW_SUFFIX) and not p.name.startswith("."))

    def statuses(self) -> dict[str, str]:
        """{key: status} of every stored run."""
        import pyarrow.parquet as pq

        out = {}
        for p in self._row_files():
            try:
                t = pq.read_table(p, columns=["status"])
            except Exception as e:  # noqa: BLE001 - an unreadable row is run again and rewritten
                warnings.warn(f"{p}: unreadable ({e}); its run counts as missing", stacklevel=2)
                continue
            out[p.name[: -len(ROW_SUFFIX)]] = t.column("status")[0].as_py()
        return out

    def write(self, row: Mapping[str, Any], params: Iterable[str], metrics: Iterable[str],
              files: Optional[Mapping[str, bytes]] = None) -> None:
        """Store one finished run: its files into outputs/<key>/ and its row into runs/. Both
        are written in full under temporary names first, then renamed into place, outputs
        first: a failure while writing (``StoreWriteError``) leaves the store as it was."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        key = row["key"]
        self.create()
        tag = f"tmp-{os.getpid()}"
        tmp = self.outputs / f".{key}.{tag}"
        tmp_row = self.runs / f".{key}.{tag}"
        table = pa.Table.from_pylist([dict(row)])
        meta = {_META_PARAMS: json.dumps(list(params)).encode(), _META_METRICS: json.dumps(list(metrics)).encode()}
        table = table.replace_schema_metadata(meta)
        try:
            if files is not None:
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir()
                for rel, data in files.items():
                    dest = tmp / rel
                    if tmp.resolve() not in dest.resolve().parents:
                        raise ValueError(f"output path {rel!r} leaves the run folder")
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.write_bytes(data)
            pq.write_table(table, tmp_row)
            with open(tmp_row, "rb+") as f:
                os.fsync(f.fileno())
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            with contextlib.suppress(OSError):
                tmp_row.unlink()
            if isinstance(e, OSError):
                raise StoreWriteError(self.root, key, e) from e
            raise
        if files is not None:
            final = self.outputs / key
            if final.exists():
                old = self.outputs / f".{key}.old-{os.getpid()}"
                os.replace(final, old)
                os.replace(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, final)
        os.replace(tmp_row, self.runs / f"{key}{ROW_SUFFIX}")

    def read(self, version: Optional[str] = None):
        """Every stored row as one pandas DataFrame (one row per run, a column per parameter and
        per metric; ``df.attrs["params"]`` and ``df.attrs["metrics"]`` name them).

        Rows of different castlab versions are never mixed silently: when the store holds more
        than one, ``version`` must name the one to read, or be ``"all"``."""
        import pandas as pd
        import pyarrow.parquet as pq

        frames, params, metrics = [], [], []
        for p in self._row_files():
            try:
                t = pq.read_table(p)
            except Exception as e:  # noqa: BLE001 - name the file, whatever pyarrow raised
                raise ValueError(f"{p}: not a readable results row ({e}); remove it, and the next sweep runs "
                                 f"that run again") from e
            md = t.schema.metadata or {}
            for names, field in ((params, _META_PARAMS), (metrics, _META_METRICS)):
                for n in json.loads(md.get(field, b"[]")):
                    if n not in names:
                        names.append(n)
            frames.append(t.replace_schema_metadata(None))
        if not frames:
            df = pd.DataFrame(columns=["key", "target", "seed", "status", "castlab_version"])
        else:
            df = _concat(frames)
        versions = sorted(set(df["castlab_version"].dropna()))
        if version is None:
            if len(versions) > 1:
                raise VersionMixError(
                    f"{self.root} holds results of castlab versions {', '.join(versions)}; they are not mixed "
                    f"silently: read one with version='{versions[-1]}' (--version), or all with version='all' "
                    f"(--all-versions)")
        elif version != "all":
            if version not in versions:
                raise ValueError(f"{self.root} has no results of castlab version {version!r} "
                                 f"(it has: {', '.join(versions) or 'none'})")
            df = df[df["castlab_version"] == version].reset_index(drop=True)
        df = _sorted(df, params)
        df.attrs["params"] = [p for p in params if p in df.columns]
        df.attrs["metrics"] = [m for m in metrics if m in df.columns]
        return df


def _concat(tables):
    """One DataFrame from one-row tables whose columns differ: Arrow concatenates them in one go
    (missing columns become nulls); when a column's type differs between runs (a parameter given
    as 10 in one and "10ms" in another) pandas does it, column by column, as objects."""
    import pandas as pd
    import pyarrow as pa

    try:
        return pa.concat_tables(tables, promote_options="permissive").to_pandas()
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pd.concat([t.to_pandas() for t in tables], ignore_index=True)


def _sorted(df, params: list[str]):
    """Rows in a stable order: target, the parameters, seed (key last, for ties)."""
    cols = [c for c in ["target", *params, "seed", "key"] if c in df.columns]
    if df.empty or not cols:
        return df
    try:
        return df.sort_values(cols, kind="mergesort", na_position="last").reset_index(drop=True)
    except TypeError:  # a parameter holds values of several types
        return df.sort_values([c for c in ("target", "seed", "key") if c in df.columns],
                              kind="mergesort").reset_index(drop=True)
