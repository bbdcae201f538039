"""A saved Benchmark run: the .npz the view's export wrote, read back to compare with a new run (no Qt).

Read through the shared safe reader (:mod:`gui.model.npfile`): a regular
file only, every array's header (shape, dtype) checked against the
export's layout before its data is read, nothing unpickled.  The file must
hold ``throughput_n`` (a float table) and ``throughput_n__columns`` (its
column names: ``n``, ``rows``, ``bytes``, then ``NAME_seconds`` and
``NAME_gbps`` for each implementation timed); ``throughput_rows`` is read
too when it is there.  Every refusal is one LoadError naming the file, what
is wrong and what was expected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gui.model.benchmark.backends import ALL
from gui.model.npfile import LoadError, NumpyFile, open_numpy
from gui.model.texts import tr

TABLES = ("throughput_n", "throughput_rows")
#: The most shapes and columns a saved table may have (a sweep has at most 14 + 7 shapes).
MAX_POINTS = 512
MAX_COLUMNS = 3 + 2 * len(ALL) + 16
MAX_NAME = 64  # characters of a column name


@dataclass(frozen=True)
class SavedTable:
    """One saved table: its columns by name."""

    columns: dict[str, np.ndarray]

    def curves(self, x: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{implementation: (x values, GB/s)}`` for every implementation the table holds."""
        return {name: (self.columns[x], self.columns[f"{name}_gbps"]) for name in ALL
                if f"{name}_gbps" in self.columns}


@dataclass(frozen=True)
class Saved:
    path: str
    by_n: SavedTable
    by_rows: SavedTable | None

    @property
    def name(self) -> str:
        return Path(self.path).name


def _expected() -> str:
    return tr("benchmark.file.expected", table=TABLES[0])


def _table(f: NumpyFile, key: str) -> SavedTable:
    where, expected = f.where, _expected()
    head = f.header(key)
    names_key = f"{key}__columns"
    if names_key not in f.names:
        raise LoadError(tr("benchmark.file.missing", where=where, name=names_key, expected=expected))
    names_head = f.header(names_key)
    if (len(head.shape) != 2 or head.dtype.kind != "f" or not 1 <= head.shape[0] <= MAX_POINTS
            or not 3 <= head.shape[1] <= MAX_COLUMNS):
        raise LoadError(tr("benchmark.file.shape", where=where, name=key, shape=head.shape, dtype=head.dtype,
                           expected=expected))
    if (names_head.shape != (head.shape[1],) or names_head.dtype.kind != "U"
            or names_head.dtype.itemsize > 4 * MAX_NAME):
        raise LoadError(tr("benchmark.file.shape", where=where, name=names_key, shape=names_head.shape,
                           dtype=names_head.dtype, expected=expected))
    data = np.asarray(f.read(key, max_bytes=head.nbytes), dtype=np.float64)
    names = [str(c) for c in f.read(names_key, max_bytes=names_head.nbytes)]
    if "n" not in names or "rows" not in names or len(set(names)) != len(names):
        raise LoadError(tr("benchmark.file.columns", where=where, name=key, columns="n, rows", expected=expected))
    columns = {c: data[:, j].copy() for j, c in enumerate(names)}
    for c in ("n", "rows"):
        if not (np.isfinite(columns[c]).all() and (columns[c] >= 1).all()):
            raise LoadError(tr("benchmark.file.values", where=where, name=key, column=c))
    table = SavedTable(columns)
    if not table.curves("n"):
        raise LoadError(tr("benchmark.file.columns", where=where, name=key, columns="n, rows", expected=expected))
    for name, (_x, gbps) in table.curves("n").items():
        if (gbps < 0).any():
            raise LoadError(tr("benchmark.file.values", where=where, name=key, column=f"{name}_gbps"))
    return table


def load_saved(path: str | os.PathLike) -> Saved:
    """The saved run in ``path`` (a Benchmark export's .npz); LoadError saying why not."""
    expected = _expected()
    with open_numpy(path, expected=expected) as f:
        if f.kind != "npz" or TABLES[0] not in f.names:
            found = ", ".join(f.names[:12]) + (", ..." if len(f.names) > 12 else "") or tr("error.npfile.nothing")
            raise LoadError(tr("benchmark.file.missing_table", where=f.where, found=found, expected=expected))
        by_n = _table(f, TABLES[0])
        by_rows = _table(f, TABLES[1]) if TABLES[1] in f.names else None
    return Saved(os.fspath(path), by_n, by_rows)
