"""gui.allocator: the app asks glibc's malloc to serve large arrays from its heaps (freed memory
is reused by the next slider step instead of being mapped afresh), unless the user set glibc's own
variables or the C library is another."""

from __future__ import annotations

import ctypes
import platform

import numpy as np
import pytest

from gui import allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def mapped_bytes() -> int:
    """Bytes malloc holds in blocks mapped on their own (mallinfo2's hblkhd)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("glibc without mallinfo2 (before 2.33)")
    libc.mallinfo2.restype = MallInfo2
    return int(libc.mallinfo2().hblkhd)


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_the_app_serves_a_large_array_from_the_heap(qapp):
    from gui.app import make_app

    make_app()
    assert allocator.keep_freed_memory()  # in force in the app's process
    before = mapped_bytes()
    block = np.empty(24 << 20, dtype=np.uint8)  # below the 32 MiB threshold: not a mapping of its own
    block[::4096] = 1
    assert mapped_bytes() - before < 24 << 20
    del block


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
@pytest.mark.parametrize("name", allocator.USER_VARIABLES)
def test_the_users_own_malloc_settings_are_kept(monkeypatch, name):
    calls = []
    monkeypatch.setenv(name, "65536")
    monkeypatch.setattr(ctypes, "CDLL", lambda *_a: calls.append(_a) or pytest.fail("mallopt called"))
    assert allocator._apply() is False
    assert not calls


def test_nothing_is_asked_of_another_c_library(monkeypatch):
    monkeypatch.setattr(platform, "libc_ver", lambda *_a, **_k: ("", ""))
    assert allocator._apply() is False
