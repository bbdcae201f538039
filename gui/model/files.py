"""Atomic file writes: a temporary file in the target folder, then a rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from gui.model.texts import tr


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_path_for(target: Path) -> Path:
    """A fresh, unused temporary path beside ``target`` with the same suffix.

    Keeping the suffix matters: some writers (Qt's image writer) pick the
    format from it.
    """
    fd, name = tempfile.mkstemp(
        prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=target.parent
    )
    os.close(fd)
    os.chmod(name, 0o666 & ~_umask())  # mkstemp makes 0600; exports are ordinary files
    return Path(name)


def write_all_atomic(jobs: Iterable[tuple[Path, Callable[[Path], None]]]) -> list[Path]:
    """Write several files so that either all of them land or none changes.

    Each job is ``(target, writer)``; ``writer(tmp)`` writes the content to the
    temporary path it is given.  All temporaries are written first; only when
    every one succeeded are they renamed over their targets.  On any error the
    temporaries are removed and the error propagates, leaving the targets as
    they were.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, writer in jobs:
            target = Path(target)
            tmp = temp_path_for(target)
            staged.append((tmp, target))
            writer(tmp)
            if not tmp.exists() or tmp.stat().st_size == 0:
                raise OSError(tr("export.empty_file", name=target.name))
        for tmp, target in staged:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    return [target for _, target in staged]


def write_text_atomic(target: Path, text: str) -> None:
    write_all_atomic([(Path(target), lambda tmp: tmp.write_text(text, encoding="utf-8"))])
