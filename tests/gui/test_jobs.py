"""gui.widgets.jobs.Job: keyed background work, superseded, cancelled and delivered on the GUI thread."""

import threading

import pytest

from gui.widgets.jobs import Job


class Recorder:
    def __init__(self, job: Job):
        self.delivered: list = []
        self.failed: list = []
        self.progress: list[float] = []
        self.busy: list[bool] = []
        self.threads: set = set()
        job.delivered.connect(self._delivered)
        job.failed.connect(lambda key, msg: self.failed.append((key, msg)))
        job.progressed.connect(self.progress.append)
        job.busy_changed.connect(self.busy.append)

    def _delivered(self, key, result) -> None:
        self.threads.add(threading.current_thread())
        self.delivered.append((key, result))


@pytest.fixture
def make_job(qapp):
    jobs = []

    def make(fn):
        job = Job(fn)
        jobs.append(job)
        return job, Recorder(job)

    yield make
    for job in jobs:
        job.shutdown(timeout_s=10)


def test_a_plain_function_is_delivered_on_the_gui_thread(make_job, qtbot):
    job, rec = make_job(lambda x: x * 2)
    assert job.request("a", 21)
    qtbot.waitUntil(lambda: bool(rec.delivered), timeout=5000)
    assert rec.delivered == [("a", 42)]
    assert rec.threads == {threading.main_thread()}
    assert rec.busy == [True, False]
    assert not job.busy


def test_a_generator_yields_progress_and_returns_its_result(make_job, qtbot):
    def steps(n):
        for i in range(n):
            yield (i + 1) / n
        return "done"

    job, rec = make_job(steps)
    job.request("k", 4)
    qtbot.waitUntil(lambda: bool(rec.delivered), timeout=5000)
    assert rec.delivered == [("k", "done")]
    assert rec.progress == [0.25, 0.5, 0.75, 1.0]


def test_a_newer_key_supersedes_stale_work(make_job, qtbot):
    gate = threading.Event()
    reached = []

    def slow(x):
        reached.append(("start", x))
        yield 0.0
        gate.wait(5)
        yield 0.5
        reached.append(("end", x))
        return x

    job, rec = make_job(slow)
    job.request(1, 1)
    qtbot.waitUntil(lambda: bool(reached), timeout=5000)
    job.request(2, 2)  # 1 is asked to stop at its next yield; 2 waits for the thread
    assert job.busy
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.delivered), timeout=5000)
    assert rec.delivered == [(2, 2)]
    assert ("end", 1) not in reached  # stopped at the yield after the gate
    assert ("end", 2) in reached


def test_the_same_key_is_not_started_twice(make_job, qtbot):
    calls = []

    def fn(x):
        calls.append(x)
        return x

    job, rec = make_job(fn)
    job.request("same", 1)
    job.request("same", 1)
    assert job.wait(5)
    assert calls == [1]
    assert rec.delivered == [("same", 1)]


def test_cancel_stops_at_the_next_yield_and_blocks_a_restart_of_that_key(make_job, qtbot):
    gate = threading.Event()
    steps_done = []

    def long(n):
        for i in range(n):
            steps_done.append(i)
            if i == 0:
                gate.wait(5)
            yield i / n
        return "finished"

    job, rec = make_job(long)
    job.request("big", 1000)
    qtbot.waitUntil(lambda: bool(steps_done), timeout=5000)
    assert job.cancel() == "big"
    gate.set()
    qtbot.waitUntil(lambda: not job.running, timeout=5000)
    assert rec.delivered == []
    assert len(steps_done) < 1000
    assert job.cancelled_key == "big"
    assert not job.request("big", 1000)  # not restarted until another key is asked for
    assert job.request("big", 2, again=True)  # unless asked for explicitly
    assert job.cancel() == "big"
    assert job.request("small", 3)
    qtbot.waitUntil(lambda: bool(rec.delivered), timeout=5000)
    assert rec.delivered == [("small", "finished")]


def test_an_error_is_reported_not_raised(make_job, qtbot):
    def bad(_x):
        raise ValueError("no good")

    job, rec = make_job(bad)
    job.request("x", None)
    qtbot.waitUntil(lambda: bool(rec.failed), timeout=5000)
    assert rec.failed == [("x", "ValueError: no good")]
    assert rec.delivered == []


def test_wait_delivers_before_it_returns(make_job):
    job, rec = make_job(lambda x: x + 1)
    job.request("w", 1)
    assert job.wait(5)
    assert rec.delivered == [("w", 2)]


def test_shutdown_refuses_new_work_and_delivers_nothing(make_job, qtbot):
    gate = threading.Event()

    def fn(x):
        gate.wait(5)
        return x

    job, rec = make_job(fn)
    job.request("a", 1)
    gate.set()
    job.shutdown(timeout_s=5)
    assert not job.running
    assert not job.request("b", 2)
    qtbot.wait(50)
    assert rec.delivered == []


def test_wait_inside_an_event_loop_does_not_block_the_start(make_job, qtbot):
    """A request made while an event loop runs, waited for after it returned (export after a redraw)."""
    from PySide6.QtCore import QEventLoop, QTimer

    job, rec = make_job(lambda x: x * 3)
    loop = QEventLoop()

    def request_and_leave():
        job.request("in-loop", 5)
        loop.quit()  # nothing more runs in this loop: a start deferred to a timer would never happen

    QTimer.singleShot(0, request_and_leave)
    loop.exec()
    assert job.wait(5)
    assert rec.delivered == [("in-loop", 15)]
