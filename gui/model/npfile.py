"""One safe reader for NumPy ``.npy`` and ``.npz`` files, shared by every loader.

Every data file the app reads (the Attention view's q, k, v and mask, the
Sampling view's logits, a session's data files, the command line's
``--file`` options) goes through :func:`open_numpy`:

* only a regular file is opened (a FIFO, a device or a folder is refused
  before anything blocks on it);
* each array's header (shape, dtype, memory order) is read first with
  :mod:`numpy.lib.format`, without reading its data; object and structured
  dtypes are refused (nothing is ever unpickled);
* the caller checks the header against its view's limits, and
  :meth:`NumpyFile.read` checks the declared size against the caller's byte
  limit and against what the file (or the ``.npz`` member's uncompressed
  size) really holds, all before anything is allocated or inflated;
* every failure (a damaged zip, a corrupt deflate stream, a truncated file,
  no memory, an unreadable header) becomes one :class:`LoadError` naming the
  file, what is wrong and what was expected.

Examples
--------
>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.npy")
>>> np.save(path, np.arange(3.0))
>>> with open_numpy(path, expected="a row of floats") as f:
...     f.header().shape
...     f.read(max_bytes=1024).tolist()
(3,)
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import lzma
import math
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from gui.model.texts import tr

NPY_MAGIC = b"\x93NUMPY"
#: Headers longer than this are refused (NumPy's own default).
MAX_HEADER = 10_000
_CHUNK = 16 * 1024**2
#: What reading a damaged file can raise, besides LoadError; each becomes a LoadError.
_READ_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, struct.error,
                RuntimeError, ValueError, MemoryError, OverflowError, RecursionError, KeyError)


class LoadError(ValueError):
    """A file that cannot be used; the message says which, what is wrong and what was expected."""


class MissingFile(LoadError):
    """The file is not there (moved or deleted): a session skips it instead of refusing itself."""


def size_text(nbytes: float) -> str:
    """``nbytes`` for a message: bytes, KiB, MiB or GiB."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return tr("error.npfile.bytes", n=int(nbytes))


def _reason(exc: BaseException) -> str:
    """The first line of an exception's message, at most 160 characters (messages stay one line)."""
    lines = str(exc).strip().splitlines()
    text = lines[0].strip() if lines else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _kind_of(mode: int) -> str:
    for test, key in ((stat.S_ISDIR, "error.npfile.kind.folder"), (stat.S_ISFIFO, "error.npfile.kind.fifo"),
                      (stat.S_ISCHR, "error.npfile.kind.char_device"),
                      (stat.S_ISBLK, "error.npfile.kind.block_device"), (stat.S_ISSOCK, "error.npfile.kind.socket")):
        if test(mode):
            return tr(key)
    return tr("error.npfile.kind.special")


def open_regular(path: str | os.PathLike, where: str | None = None) -> BinaryIO:
    """Open ``path`` for reading in binary if it is a regular file; raise LoadError (MissingFile) if not.

    The file is checked with ``os.stat`` before it is opened, then opened
    without blocking and checked again (so a FIFO swapped in between cannot
    hang the open either).
    """
    where = where or Path(path).name or os.fspath(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise LoadError(tr("error.npfile.not_regular", where=where, kind=_kind_of(mode)))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise MissingFile(tr("error.npfile.no_such_file", where=where)) from None
    except OSError as exc:
        raise LoadError(tr("error.npfile.cannot_read", where=where, reason=exc.strerror or _reason(exc))) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise LoadError(tr("error.npfile.not_regular", where=where, kind=_kind_of(mode)))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike, max_bytes: int, where: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; LoadError (MissingFile) otherwise."""
    where = where or Path(path).name or os.fspath(path)
    with open_regular(path, where) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise LoadError(tr("error.npfile.too_big", where=where, size=size_text(size),
                                   limit=size_text(max_bytes)))
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise LoadError(tr("error.npfile.cannot_read", where=where, reason=exc.strerror or _reason(exc))) from None
    if len(data) > max_bytes:
        raise LoadError(tr("error.npfile.over_limit", where=where, limit=size_text(max_bytes)))
    return data


@dataclass(frozen=True)
class Header:
    """What a .npy header declares: shape, dtype and memory order (nothing of the data is read)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool

    @property
    def count(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


def _looks_like_text(head: bytes) -> bool:
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a character cut by the sample's end is still text
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


class NumpyFile:
    """An open .npy or .npz; use through :func:`open_numpy` as a context manager.

    ``kind`` is "npy" (one array, ``name=None``) or "npz" (``names`` lists
    its arrays).  Call :meth:`header` first, check it against the view's
    limits, then :meth:`read`.  Errors raised inside the ``with`` block
    (other than LoadError) become LoadError naming the file.
    """

    def __init__(self, path: str | os.PathLike, expected: str):
        self.path = Path(path)
        self.where = self.path.name or os.fspath(path)
        self.expected = expected
        self._fh: BinaryIO | None = None
        self._zip: zipfile.ZipFile | None = None
        self._headers: dict[str | None, tuple[Header, int]] = {}

    # -- context -----------------------------------------------------------------------------
    def __enter__(self) -> NumpyFile:
        try:
            self._open()
        except BaseException as exc:
            self.close()
            self._refuse(exc)
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.close()
        if exc is not None and not isinstance(exc, LoadError) and isinstance(exc, _READ_ERRORS):
            self._refuse(exc)

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
        if self._fh is not None:
            self._fh.close()
        self._zip = self._fh = None

    def _refuse(self, exc: BaseException):
        """Raise the LoadError that stands for ``exc``."""
        if isinstance(exc, LoadError):
            raise exc
        where, expected = self.where, self.expected
        if isinstance(exc, MemoryError):
            raise LoadError(tr("error.npfile.no_memory", where=where)) from None
        if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError, lzma.LZMAError, struct.error)):
            raise LoadError(tr("error.npfile.damaged", where=where, reason=_reason(exc))) from None
        if isinstance(exc, RecursionError):
            raise LoadError(tr("error.npfile.nested", where=where, expected=expected)) from None
        if isinstance(exc, OSError):
            raise LoadError(tr("error.npfile.cannot_read", where=where, reason=exc.strerror or _reason(exc))) from None
        if isinstance(exc, (ValueError, OverflowError, RuntimeError, KeyError)):
            raise LoadError(tr("error.npfile.unreadable", where=where, reason=_reason(exc),
                               expected=expected)) from None
        raise exc

    def _open(self) -> None:
        self._fh = open_regular(self.path, self.where)
        magic = self._fh.read(len(NPY_MAGIC))
        self._fh.seek(0)
        if magic == NPY_MAGIC:
            self.kind, self.names = "npy", ()
            return
        if magic[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
            self.kind = "npz"
            self._zip = zipfile.ZipFile(self._fh)
            self._members = {info.filename[:-4]: info for info in self._zip.infolist()
                             if info.filename.endswith(".npy") and not info.is_dir()}
            self.names = tuple(self._members)
            return
        if not magic:
            raise LoadError(tr("error.npfile.empty", where=self.where, expected=self.expected))
        if _looks_like_text(magic + self._fh.read(4096)):
            raise LoadError(tr("error.npfile.text", where=self.where, expected=self.expected))
        raise LoadError(tr("error.npfile.not_numpy", where=self.where, expected=self.expected))

    # -- headers and data --------------------------------------------------------------------
    def _label(self, name: str | None) -> str:
        return self.where if name is None else tr("error.npfile.array_label", where=self.where, name=name)

    def _stream(self, name: str | None) -> tuple[BinaryIO, int]:
        """A stream at the start of array ``name`` and how many bytes it holds in all."""
        if self.kind == "npy":
            if name is not None:
                raise LoadError(tr("error.npfile.npy_not_named", where=self.where, name=repr(name),
                                   expected=self.expected))
            self._fh.seek(0)
            return self._fh, os.fstat(self._fh.fileno()).st_size
        info = self._members.get(name)
        if info is None:
            raise LoadError(tr("error.npfile.no_array", where=self.where, name=repr(name), expected=self.expected))
        return self._zip.open(info), info.file_size

    def header(self, name: str | None = None) -> Header:
        """The header of array ``name`` (None for a .npy): refuses object and structured dtypes."""
        if name not in self._headers:
            fp, total = self._stream(name)
            try:
                self._headers[name] = (self._read_header(fp, name)[0], total)
            finally:
                if fp is not self._fh:
                    fp.close()
        return self._headers[name][0]

    def _read_header(self, fp: BinaryIO, name: str | None) -> tuple[Header, int]:
        """The header at the start of ``fp`` and the offset of the data after it."""
        label = self._label(name)
        prefix = fp.read(len(NPY_MAGIC) + 2)
        if len(prefix) < len(NPY_MAGIC) + 2 or prefix[:len(NPY_MAGIC)] != NPY_MAGIC:
            raise LoadError(tr("error.npfile.not_array", label=label, expected=self.expected))
        version = (prefix[-2], prefix[-1])
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(fp, max_header_size=MAX_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = npy_format.read_array_header_2_0(fp, max_header_size=MAX_HEADER)
        else:
            raise LoadError(tr("error.npfile.version", label=label, version=f"{version[0]}.{version[1]}",
                               expected=self.expected))
        if dtype.hasobject:
            raise LoadError(tr("error.npfile.pickled", label=label, expected=self.expected))
        if dtype.fields is not None or dtype.subdtype is not None:
            raise LoadError(tr("error.npfile.structured", label=label, dtype=dtype, expected=self.expected))
        if any(s < 0 for s in shape):
            raise LoadError(tr("error.npfile.impossible_shape", label=label, shape=shape))
        return Header(tuple(int(s) for s in shape), dtype, bool(fortran)), fp.tell()

    def read(self, name: str | None = None, *, max_bytes: int) -> np.ndarray:
        """The data of array ``name``, after its header fits ``max_bytes`` and what the file holds."""
        head = self.header(name)
        total = self._headers[name][1]
        label = self._label(name)
        if head.nbytes > max_bytes:
            raise LoadError(tr("error.npfile.over_limit_shape", label=label, shape=head.shape, dtype=head.dtype,
                               size=size_text(head.nbytes), limit=size_text(max_bytes)))
        fp, _ = self._stream(name)
        try:
            _, offset = self._read_header(fp, name)
            held = total - offset
            if head.nbytes > held:
                raise LoadError(tr("error.npfile.truncated_header", label=label, shape=head.shape, dtype=head.dtype,
                                   size=size_text(head.nbytes), held=size_text(max(held, 0))))
            out = np.empty(head.count, dtype=head.dtype)
            buffer = memoryview(out.view(np.uint8).reshape(-1))
            done = 0
            while done < head.nbytes:
                got = fp.readinto(buffer[done:done + _CHUNK])
                if not got:
                    raise LoadError(tr("error.npfile.truncated_data", label=label, done=size_text(done),
                                       size=size_text(head.nbytes)))
                done += got
            if fp is not self._fh:
                fp.read(1)  # reaching the member's end checks its CRC-32
        finally:
            if fp is not self._fh:
                fp.close()
        return out.reshape(head.shape, order="F" if head.fortran_order else "C")


def open_numpy(path: str | os.PathLike, *, expected: str) -> NumpyFile:
    """Open a .npy/.npz safely (see the module docstring); ``expected`` ends every message."""
    return NumpyFile(path, expected)
