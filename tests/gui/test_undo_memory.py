"""The undo recorder stays flat: a 10,000-move drag and 10,000 separate steps hold bounded memory."""

from __future__ import annotations

import gc
import os

import pytest
from PySide6.QtGui import QUndoStack

from gui import undo
from gui.model.lab import Lab

MOVES = 10_000
WARM_UP = 1_000
#: After the warm-up, what 10,000 more moves may add (leaking one command per move added 20,000 objects).
MAX_NEW_OBJECTS = 100
MAX_NEW_RSS = 3 * 1024**2


def _rss() -> int:
    """Resident memory of this process in bytes (Linux /proc; ru_maxrss elsewhere is only a peak)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _footprint() -> tuple[int, int]:
    gc.collect()
    return len(gc.get_objects()), _rss()


@pytest.fixture
def recorded(qapp):
    lab = Lab()
    stack = QUndoStack()
    recorder = undo.UndoRecorder(stack)
    recorder.watch(lab.scores, lambda field: f"edit {field}")
    for name, model in lab.models.items():
        recorder.watch(model, lambda field, name=name: f"{name}: {field}")
    yield lab, stack
    stack.clear()


def _drag_temperature(lab: Lab, moves: int) -> None:
    model = lab.models["temperature"]
    for i in range(moves):
        model.temperature = 0.5 + (i % 97) / 50  # what the slider's binder writes, move by move


def _drag_gap(lab: Lab, moves: int) -> None:
    for i in range(moves):
        lab.scores.set_gap(0.1 + (i % 89) / 40)


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")


@needs_proc
@pytest.mark.parametrize("drag", [_drag_temperature, _drag_gap], ids=["temperature", "gap with 1,000 scores"])
def test_a_long_drag_is_one_step_and_memory_stays_flat(recorded, drag, monkeypatch):
    lab, stack = recorded
    # one drag: every move within the merge window, whatever the machine's load (gc.collect between
    # the two halves can take longer than the window on a busy machine)
    monkeypatch.setattr(undo.time, "monotonic", lambda: 0.0)
    lab.scores.set_values([float(i % 17) for i in range(1000)])
    stack.clear()
    start_t, start_entries = lab.models["temperature"].temperature, lab.scores.entries
    drag(lab, WARM_UP)
    objects, rss = _footprint()
    drag(lab, MOVES)
    new_objects, new_rss = _footprint()
    assert new_objects - objects <= MAX_NEW_OBJECTS
    assert new_rss - rss <= MAX_NEW_RSS, f"RSS grew by {(new_rss - rss) / 1024**2:.1f} MiB"
    assert stack.count() == 1  # one drag, one step
    top = stack.command(0)
    last_t, last_entries = lab.models["temperature"].temperature, lab.scores.entries
    stack.undo()
    assert lab.models["temperature"].temperature == start_t
    assert lab.scores.entries == start_entries
    stack.redo()
    assert lab.models["temperature"].temperature == last_t
    assert lab.scores.entries == last_entries
    assert (top.old, top.new) in ((start_t, last_t), (start_entries, last_entries))  # nothing in between


@needs_proc
def test_the_stack_keeps_the_last_steps_only(recorded, monkeypatch):
    lab, stack = recorded
    clock = [0.0]
    monkeypatch.setattr(undo.time, "monotonic", lambda: clock[0])
    lab.scores.set_values([float(i % 17) for i in range(1000)])
    model = lab.models["temperature"]

    def steps(n: int) -> None:
        for i in range(n):
            clock[0] += 1.0  # more than MERGE_SECONDS apart: every move is its own step
            model.temperature = 0.5 + (i % 97) / 50
            lab.scores.set_gap(0.1 + (i % 89) / 40)

    steps(WARM_UP)
    objects, rss = _footprint()
    steps(MOVES)
    new_objects, new_rss = _footprint()
    assert stack.count() == undo.UNDO_LIMIT
    assert new_objects - objects <= MAX_NEW_OBJECTS
    assert new_rss - rss <= MAX_NEW_RSS, f"RSS grew by {(new_rss - rss) / 1024**2:.1f} MiB"
    for _ in range(undo.UNDO_LIMIT):
        stack.undo()
    assert not stack.canUndo()
    # every kept step undone: the temperature from before the last 100 moves (200 steps)
    i = MOVES - undo.UNDO_LIMIT // 2 - 1
    assert model.temperature == 0.5 + (i % 97) / 50


def test_a_change_after_undo_is_a_new_step(recorded):
    lab, stack = recorded
    model = lab.models["temperature"]
    model.temperature = 2.0
    stack.undo()
    assert model.temperature == 1.0
    model.temperature = 3.0  # the undone step is dropped, not merged into
    assert stack.count() == 1
    stack.undo()
    assert model.temperature == 1.0
    stack.redo()
    assert model.temperature == 3.0


def test_the_window_bounds_its_stack(window):
    assert window.undo_stack.undoLimit() == undo.UNDO_LIMIT
