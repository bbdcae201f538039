"""Start-up time: launch to the main window's first paint, beside a bare PySide6 + pyqtgraph window.

Run from the repository root::

    python bench/startup.py              # 7 runs each
    python bench/startup.py --runs 3     # quick look
    python bench/startup.py --imports 15 # also the 15 packages slowest to import (-X importtime)

Each run starts a fresh ``python`` subprocess on the offscreen platform with an empty
config folder (no saved session or settings):

* **app**: ``python main.py`` with ``SOFTMAX_LAB_EXIT_AFTER_PAINT=1``; the window prints a
  ``time.time()`` stamp at the first paint event of it or a widget in it, and quits
  (``gui/first_paint.py``).
* **bare**: a script written to a temp file: ``QApplication``, a ``QMainWindow`` holding one
  ``pg.PlotWidget``, ``show()``, the same stamp at the first paint in that window, quit.
* **bare_no_cuda**: the same script, keeping ``cuda.bindings`` out of pyqtgraph's import as
  ``gui/qt.py`` does for the app (where CUDA Python is installed, pyqtgraph's RawImageWidget
  imports it, about 0.1 s); shown beside the goal's ratio so the saving is not hidden in it.

All get one fresh bytecode cache (``PYTHONPYCACHEPREFIX`` in a temp folder, written by the
discarded warm-up run), so none compiles source at a timed start, as with an installed app;
``--no-bytecode-cache`` keeps the environment's own settings instead (with
``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__``, every start compiles those modules).

A run's time is the stamp minus ``time.time()`` taken just before the subprocess was
started: interpreter start, imports, building the window, the first paint.  The kinds
run in turn (after one discarded warm-up of each) so a change in the machine's load hits
all.  ``ratio`` is the app's median over the bare window's median; ``ratio_to_bare_no_cuda``
the app's over ``bare_no_cuda``'s; ``ratio_of_rounds`` (and ``..._to_bare_no_cuda``) the median
of each round's own ratio, steadier when the machine's load drifts during the runs.  ``cpu_s``
gives the CPU seconds each process had used by its first paint (``time.process_time()``) and
``cpu_ratio`` their medians' ratio: on a machine shared with other jobs the wall-clock times
move with the load, the CPU seconds much less.

Prints one JSON document to stdout.  Nothing is asserted: it only measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

BARE = '''\
import json, os, sys, time
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
if "--no-cuda" in sys.argv:  # skip pyqtgraph's CUDA Python import, as gui/qt.py does
    sys.modules["cuda.bindings"] = None
import PySide6
import pyqtgraph as pg
if "--no-cuda" in sys.argv:
    del sys.modules["cuda.bindings"]
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget


class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget) and watched.window() is window:
            print(json.dumps({"painted_at": time.time(), "cpu_s": time.process_time()}), flush=True)
            app.removeEventFilter(self)
            QTimer.singleShot(0, app.quit)
        return False


app = QApplication(sys.argv)
window = QMainWindow()
window.setCentralWidget(pg.PlotWidget())
probe = FirstPaint()
app.installEventFilter(probe)
window.resize(1280, 800)
window.show()
sys.exit(app.exec())
'''


def environment(config_dir: str, pycache: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(QT_QPA_PLATFORM="offscreen", SOFTMAX_LAB_CONFIG_DIR=config_dir, SOFTMAX_LAB_EXIT_AFTER_PAINT="1")
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    if pycache is not None:  # bytecode cached there (written by the warm-up run), as an installed app has
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def one_run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from just before starting ``command`` to the first-paint stamp it prints, and its CPU seconds then."""
    start = time.time()
    done = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            return record["painted_at"] - start, record["cpu_s"]
    raise RuntimeError(f"{command} printed no stamp (exit {done.returncode}):\n{done.stderr[-2000:]}")


def slowest_imports(command: list[str], env: dict[str, str], count: int) -> list[dict]:
    """The ``count`` packages whose modules took the most import time (their own, not what they imported).

    From ``python -X importtime`` of one start, counting the modules loaded by the first paint
    (the hook's ``modules``); gui and compute count per module, anything else per top-level
    package, with the chain that first pulled the package in.
    """
    done = subprocess.run([command[0], "-X", "importtime", *command[1:]], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    loaded = set(json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{")))["modules"])
    rows = []  # (self us, depth, name), in the order Python finishes them (children first)
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \|( *)(\S+)", line)
        if m and m[3] in loaded:
            rows.append((int(m[1]), len(m[2]) // 2, m[3]))
    own: dict[str, float] = {}
    chains: dict[str, str] = {}
    for i, (us, depth, name) in enumerate(rows):
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] in ("gui", "compute") else parts[0]
        own[key] = own.get(key, 0.0) + us / 1000
        if key not in chains:  # who imported it: the next rows up the tree
            chain, want = [name], depth - 1
            for _us, d, parent in rows[i + 1:]:
                if d == want:
                    chain.append(parent)
                    want -= 1
            chains[key] = " <- ".join(chain)
    top = sorted(own, key=lambda k: -own[k])[:count]
    return [{"module": k, "own_ms": round(own[k], 1), "first_imported_by": chains[k]} for k in top]


def summary(times: list[float]) -> dict:
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "max_s": round(max(times), 4), "runs_s": [round(t, 4) for t in times]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (default 7)")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="keep this environment's bytecode settings (PYTHONDONTWRITEBYTECODE=1 makes "
                             "every start compile the modules that have no .pyc)")
    parser.add_argument("--imports", type=int, default=0, metavar="N",
                        help="also list the N packages that took the app longest to import (-X importtime)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="softmax-lab-startup-") as tmp:
        bare_script = Path(tmp) / "bare_window.py"
        bare_script.write_text(BARE, encoding="utf-8")
        commands = {"app": [sys.executable, str(REPO_ROOT / "main.py")],
                    "bare": [sys.executable, str(bare_script)],
                    "bare_no_cuda": [sys.executable, str(bare_script), "--no-cuda"]}
        pycache = None if args.no_bytecode_cache else str(Path(tmp) / "pycache")
        times: dict[str, list[float]] = {kind: [] for kind in commands}
        cpu: dict[str, list[float]] = {kind: [] for kind in commands}
        load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
        for run in range(args.runs + 1):
            for kind, command in commands.items():
                config = tempfile.mkdtemp(dir=tmp)  # empty every time: no saved session
                elapsed, cpu_s = one_run(command, environment(config, pycache))
                if run:  # run 0 warms the disk and bytecode caches
                    times[kind].append(elapsed)
                    cpu[kind].append(cpu_s)
        load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
        medians = {kind: statistics.median(runs) for kind, runs in times.items()}
        result = {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": load_after,
            "runs": args.runs,
            "bytecode_cache": pycache is not None,
            **{kind: summary(runs) for kind, runs in times.items()},
            "ratio": round(medians["app"] / medians["bare"], 3),
            "ratio_to_bare_no_cuda": round(medians["app"] / medians["bare_no_cuda"], 3),
            # each round's own ratio (its runs follow each other), median over rounds: steadier under drifting load
            "ratio_of_rounds": round(statistics.median(a / b for a, b in zip(times["app"], times["bare"])), 3),
            "ratio_of_rounds_to_bare_no_cuda": round(
                statistics.median(a / b for a, b in zip(times["app"], times["bare_no_cuda"])), 3),
            # CPU seconds each process had used by its first paint: what the load on a shared machine moves least
            "cpu_s": {kind: summary(runs) for kind, runs in cpu.items()},
            "cpu_ratio": round(statistics.median(cpu["app"]) / statistics.median(cpu["bare"]), 3),
            "cpu_ratio_to_bare_no_cuda": round(statistics.median(cpu["app"]) / statistics.median(cpu["bare_no_cuda"]),
                                               3),
        }
        if args.imports:
            env = environment(tempfile.mkdtemp(dir=tmp), pycache)
            result["slowest_imports"] = slowest_imports(commands["app"], env, args.imports)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
