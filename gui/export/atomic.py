"""One export's files land together or not at all, one export per folder at a time.

The steps (:func:`write_set`):

1. Lock the folder (``.softmax-lab.lock``, ``fcntl.flock`` where there is
   one, else a file created with ``O_CREAT | O_EXCL``): a second export into
   the same folder, from this process or another, is refused with
   :class:`FolderBusy`.  The kernel drops the lock of a killed process.
2. Remove what a killed export left: temporaries and backups named
   ``.softmax-lab-tmp-PID-RANDOM-NAME`` / ``.softmax-lab-bak-PID-RANDOM-NAME``
   whose process is gone (a stale backup whose target is missing is put back).
3. Write every file to a temporary beside its target.
4. Place them: without ``overwrite`` each one is linked to its final name
   only if that name is still free (``os.link`` fails on an existing name),
   so a file that appeared meanwhile is never replaced; with ``overwrite`` an
   existing target is first kept as a backup (a hard link, so the name never
   disappears) and then replaced.
5. When every new file is in place the backups are removed.  If placing any
   file fails, the files already placed are taken back and the backups put
   back over them, and :class:`ReplaceError` says which files were restored
   (and which, if any, could not be).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from gui.model.texts import tr

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

TMP_PREFIX = ".softmax-lab-tmp-"
BAK_PREFIX = ".softmax-lab-bak-"
LOCK_NAME = ".softmax-lab.lock"
_OWN = re.compile(r"^\.softmax-lab-(tmp|bak)-(\d+)-[0-9a-z_]{8}-(.+)$")


class ExportError(Exception):
    """An export that could not be done; nothing was written."""

    nothing_written = True


class FolderBusy(ExportError):
    """Another export is writing to the same folder."""


class ReplaceError(ExportError):
    """Placing the new files failed partway; the old files were put back where possible."""

    def __init__(self, message: str, *, new: list[str], restored: list[str], kept: list[str]):
        super().__init__(message)
        self.new, self.restored, self.kept = new, restored, kept
        self.nothing_written = not new and not kept


def shown(path) -> str:
    """A path as text anyone can print: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path).decode("utf-8", errors="replace")


def describe(exc: BaseException) -> str:
    """An error in one line, keeping the OS's reason (no space left, permission denied)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({shown(exc.filename)})" if exc.filename is not None else ""
        return f"{exc.strerror}{where}"
    return str(exc)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _own_name(prefix: str, target: Path) -> Path:
    import secrets  # here, not at start-up: it loads OpenSSL's hashlib (a few ms)

    return target.with_name(f"{prefix}{os.getpid()}-{secrets.token_hex(4)}-{target.name}")


def _create(tmp: Path) -> None:
    """Make the empty temporary ``tmp`` (its name is new: fails if it exists), with the umask's mode."""
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # we hold the folder's lock: our own leftovers are stale too
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # it exists (someone else's), or we cannot tell: leave it
    return True


def remove_stale(folder: Path) -> list[str]:
    """Remove the temporaries and backups of dead exports in ``folder``; returns their names."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _OWN.match(name)
        if not match or _alive(int(match.group(2))):
            continue
        path = Path(folder) / name
        with contextlib.suppress(OSError):
            target = Path(folder) / match.group(3)
            if match.group(1) == "bak" and not target.exists():
                os.rename(path, target)  # the export died after moving the original away
            else:
                path.unlink()
            removed.append(name)
    return removed


@contextlib.contextmanager
def folder_lock(folder: Path):
    """Hold ``folder``'s export lock; raise FolderBusy when another export holds it."""
    path = Path(folder) / LOCK_NAME
    busy = FolderBusy(tr("export.busy", folder=shown(folder)))
    if fcntl is None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise busy from None
    else:
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise busy from None
                raise
            try:  # the holder before us may have removed the file we opened: lock the current one
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
    try:
        with contextlib.suppress(OSError):
            os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still holding it, so no one locks a removed file
        os.close(fd)


def _backup(target: Path) -> Path | None:
    """Keep ``target``'s present content under a backup name; None when there is no target."""
    bak = _own_name(BAK_PREFIX, target)
    try:
        os.link(target, bak)  # the target keeps its name until the new file replaces it
    except FileNotFoundError:
        return None
    except OSError:  # no hard links here (FAT, some network shares): move it aside
        try:
            os.rename(target, bak)
        except FileNotFoundError:
            return None
    return bak


def _place_new(tmp: Path, target: Path) -> None:
    """Give ``tmp`` the name ``target`` only if no file has that name (FileExistsError otherwise)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except OSError:  # no hard links: the folder lock keeps other exports out; check, then rename
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from None
        os.rename(tmp, target)
        return
    os.unlink(tmp)


def _roll_back(placed: list[tuple[Path, Path | None]]) -> tuple[list[str], list[str], list[str]]:
    """Take back the placed files, newest first; returns (new, restored, kept)."""
    new, restored, kept = [], [], []
    for target, bak in reversed(placed):
        try:
            if bak is None:
                target.unlink()
            else:
                os.replace(bak, target)
                restored.append(target.name)
        except OSError:
            (new if bak is None else kept).append(target.name if bak is None else f"{target.name} ({bak.name})")
    return new, restored, kept


def write_set(jobs: Iterable[tuple[Path, Callable[[Path], None]]], *, overwrite: bool) -> list[Path]:
    """Write several files into one folder so that all of them land or none changes.

    Each job is ``(target, writer)``; ``writer(tmp)`` writes the content to the
    path it is given.  Raises FolderBusy, FileExistsError (a target exists and
    ``overwrite`` is false), ReplaceError (placing failed partway; see its
    ``restored``) or ExportError (writing failed; nothing changed).
    """
    jobs = [(Path(t), w) for t, w in jobs]
    if not jobs:
        return []
    folder = jobs[0][0].parent
    try:
        with folder_lock(folder):
            remove_stale(folder)
            if not overwrite:
                clash = [t.name for t, _ in jobs if os.path.lexists(t)]
                if clash:
                    raise FileExistsError(", ".join(clash))
            staged: list[tuple[Path, Path]] = []
            try:
                for target, writer in jobs:
                    tmp = _own_name(TMP_PREFIX, target)  # writers pick the format from its suffix
                    staged.append((tmp, target))  # before it exists: an interrupt from here on removes it
                    _create(tmp)
                    writer(tmp)
                    if not tmp.exists() or tmp.stat().st_size == 0:
                        raise OSError(tr("export.empty_file", name=target.name))
                _place_all(staged, overwrite)
            finally:
                for tmp, _ in staged:
                    with contextlib.suppress(OSError):
                        tmp.unlink()
    except (ExportError, FileExistsError):
        raise
    except OSError as exc:
        raise ExportError(describe(exc)) from exc
    return [target for _, target in staged]


def _place_all(staged: list[tuple[Path, Path]], overwrite: bool) -> None:
    placed: list[tuple[Path, Path | None]] = []
    try:
        for tmp, target in staged:
            if overwrite:
                bak = _backup(target)
                try:
                    os.replace(tmp, target)
                except BaseException:
                    if bak is not None and not os.path.lexists(target):
                        with contextlib.suppress(OSError):
                            os.rename(bak, target)  # moved aside (no hard links): put it back
                    elif bak is not None:
                        with contextlib.suppress(OSError):
                            bak.unlink()  # the target was never touched
                    raise
                placed.append((target, bak))
            else:
                _place_new(tmp, target)
                placed.append((target, None))
    except BaseException as exc:
        if not placed:
            if isinstance(exc, FileExistsError) and not overwrite:
                raise FileExistsError(target.name) from None  # appeared meanwhile: ask as before
            raise
        new, restored, kept = _roll_back(placed)
        if isinstance(exc, Exception):
            reason = tr("export.replace_failed", name=target.name, error=describe(exc))
            parts = [reason]
            if restored:
                parts.append(tr("export.restored", files=", ".join(restored)))
            removed = [t.name for t, b in placed if b is None and t.name not in new]
            if removed:
                parts.append(tr("export.removed_new", files=", ".join(removed)))
            if new:
                parts.append(tr("export.left_new", files=", ".join(new)))
            if kept:
                parts.append(tr("export.kept_backup", files=", ".join(kept)))
            raise ReplaceError("; ".join(parts), new=new, restored=restored, kept=kept) from exc
        raise
    for _, bak in placed:
        if bak is not None:
            with contextlib.suppress(OSError):
                bak.unlink()
