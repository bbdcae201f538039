"""Find out, before Qt aborts, whether a window can be opened on Linux.

When Qt cannot load its xcb platform plugin it aborts the process with a
message that does not say which system library is missing.  This checks
the display and the libraries the plugin needs first, and returns a hint
naming the Debian/Ubuntu packages to install.  Nothing here imports Qt.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping

#: Shared library -> the Debian/Ubuntu package that ships it.
XCB_LIBS = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}

#: Where the messages point a user without a display.
HELP = "softmax-lab export --help"


def hint() -> str:
    """Which packages to install for windows on Linux (in the current language)."""
    from gui.model.texts import tr

    return tr("cli.platform.hint", install="sudo apt-get install " + " ".join(XCB_LIBS.values()), command=HELP)


def _loadable(lib: str) -> bool:
    try:
        ctypes.CDLL(lib)
    except OSError:
        return False
    return True


def platform_problem(env: Mapping[str, str] | None = None) -> str | None:
    """A message saying why no window can be opened, or None when it can."""
    from gui.model.texts import tr

    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return None
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None  # offscreen, wayland, ...: Qt reports its own errors
    if not platform and env.get("WAYLAND_DISPLAY"):
        return None
    if not env.get("DISPLAY"):
        return tr("cli.platform.no_display", prog="softmax-lab", variable="DISPLAY", command=HELP)
    missing = [lib for lib in XCB_LIBS if not _loadable(lib)]
    if missing:
        pkgs = " ".join(XCB_LIBS[lib] for lib in missing)
        return tr("cli.platform.missing", prog="softmax-lab", libraries=", ".join(missing),
                  command=f"sudo apt-get install {pkgs}")
    return None
