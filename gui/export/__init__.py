"""Writing a view's plots (PNG, SVG) and arrays (.npz, .csv), atomically.

Every file is first written to a temporary file beside its target, and all
of one export's temporaries are renamed only once every one of them was
written, so a failed export (read-only folder, full disk) changes nothing;
replaced files are kept as backups until every new one is in place and put
back if placing fails, and one export at a time holds a folder
(gui.export.atomic).

Each plot is written as a figure of the size :class:`ExportOptions` says
(1200 x 800 pixels at 200 dpi, a 6 x 4 in landscape figure, by default),
laid out at that size whatever its shape on screen (gui.export.figure);
the SVG is fixed up to render alike everywhere (gui.export.svg_fix).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gui.export.atomic import ExportError, FolderBusy, ReplaceError, describe, shown, write_set
from gui.export.options import ExportOptions
from gui.model.base import ExportArray
from gui.model.texts import tr

__all__ = ["ExportError", "ExportOptions", "FolderBusy", "ReplaceError", "describe", "shown", "PLOT_FORMATS", "PNG_WIDTH", "csv_text", "existing",
           "export_view", "plan", "read_npz"]

PLOT_FORMATS = ("png", "svg")
PNG_WIDTH = ExportOptions().width  # pixels, by default


def _png_writer(plot, options: ExportOptions) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        from PySide6.QtCore import QBuffer, QByteArray, QIODevice

        from gui.export.figure import render_png  # Qt: imported only when drawing

        image = render_png(plot, options)
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if image.isNull() or not image.save(buffer, "PNG"):
            raise OSError(tr("export.error.png_encode", width=image.width(), height=image.height()))
        buffer.close()
        with open(tmp, "wb") as fh:  # Python's own write: an OSError keeps its reason (ENOSPC, EACCES)
            fh.write(data.data())

    return write


def _svg_writer(plot, options: ExportOptions) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        from gui.export.figure import render_svg

        tmp.write_bytes(render_svg(plot, options))

    return write


def csv_text(array: ExportArray) -> str:
    """A CSV document: a header naming the columns, then one line per row.

    Floats are written with repr, so they read back to the same bits.  A
    text cell (a label, a column name) that begins with ``=``, ``+``, ``-``,
    ``@``, a tab or a carriage return gets a leading apostrophe, so a
    spreadsheet shows it rather than running it as a formula.
    """

    def text(cell) -> str:
        cell = str(cell)
        return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    data = array.data.reshape(len(array.data), -1)
    header = (["label"] if array.rows is not None else []) + list(array.columns)
    writer.writerow([text(h) for h in header])
    for i, row in enumerate(data):
        cells = [repr(float(v)) for v in row]
        writer.writerow(([text(array.rows[i])] if array.rows is not None else []) + cells)
    return buf.getvalue()


def _npz_writer(arrays: dict[str, ExportArray]) -> Callable[[Path], None]:
    def write(tmp: Path) -> None:
        payload: dict[str, np.ndarray] = {}
        for name, a in arrays.items():
            payload[name] = a.data if a.npz_data is None else a.npz_data
            payload[f"{name}__columns"] = np.array(a.columns, dtype=str)
            if a.rows is not None:
                payload[f"{name}__rows"] = np.array(a.rows, dtype=str)
        with open(tmp, "wb") as fh:
            np.savez(fh, **payload)

    return write


def plan(view, view_name: str, folder: Path, *, plots: bool = True, arrays: bool = True,
         options: ExportOptions | None = None):
    """The (target, writer) pairs of one export, without writing anything."""
    folder = Path(folder)
    options = options or ExportOptions()
    jobs: list[tuple[Path, Callable[[Path], None]]] = []
    if plots:
        for key, plot in view.plots().items():
            jobs.append((folder / f"{view_name}_{key}.png", _png_writer(plot, options)))
            jobs.append((folder / f"{view_name}_{key}.svg", _svg_writer(plot, options)))
    if arrays:
        data = view.arrays()
        jobs.append((folder / f"{view_name}.npz", _npz_writer(data)))
        for key, a in data.items():
            if not a.csv:
                continue
            text = csv_text(a)
            jobs.append((folder / f"{view_name}_{key}.csv",
                         lambda tmp, text=text: tmp.write_text(text, encoding="utf-8")))
    return jobs


def existing(jobs) -> list[Path]:
    return [target for target, _ in jobs if target.exists()]


def export_view(view, view_name: str, folder: Path | str, *, plots: bool = True,
                arrays: bool = True, overwrite: bool = False,
                options: ExportOptions | None = None) -> list[Path]:
    """Export a laid-out view; returns the written paths.

    ``options`` sizes the figures (the default: 1200 x 800 px at 200 dpi).

    Raises FileExistsError (listing the files) when a target exists and
    ``overwrite`` is false, FolderBusy when another export writes to the
    folder, ReplaceError when placing the files failed partway (saying what
    was put back) and ExportError when writing fails.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ExportError(tr("export.error.not_folder", folder=shown(folder)))
    if not view.isVisible():  # pyqtgraph exports a wrong size before the layout is done
        raise ExportError(tr("export.error.not_shown"))
    view.flush()
    jobs = plan(view, view_name, folder, plots=plots, arrays=arrays, options=options)
    clash = existing(jobs)
    if clash and not overwrite:
        raise FileExistsError(", ".join(p.name for p in clash))
    return write_set(jobs, overwrite=overwrite)


def read_npz(path: Path | str) -> dict[str, np.ndarray]:
    """Read an exported .npz back (never unpickling anything)."""
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}
