"""The Attention core head by head: the shown head is drawn before the other heads and the statistics.

* ``compute.attention_parts(..., out=)`` writes the raw and scaled scores into given arrays: the
  same bits as new arrays (a plain matmul and multiply as reference), and bad ``out`` is refused.
* ``core_steps(..., partial=True)`` yields one partial core whose shown head is the final core's,
  and the final core is the batched ``attention_parts`` of every head, with NumPy's histograms and
  spreads.
* The view draws the partial core's head while the job still computes the statistics (gated here);
  the histogram and the spread keep the last ones until the whole core lands, then show its own.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QApplication

import compute
from gui.model.attention import AttentionModel, sources
from gui.model.attention import core as core_module
from gui.model.attention.statistics import HIST_BINS
from gui.model.texts import tr


# -- compute.attention_parts(out=) ---------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 3), n_q=st.integers(1, 9), n_k=st.integers(1, 9), d=st.integers(1, 6),
       dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       scale=st.sampled_from([None, 1.0, 0.3, 1e-50, 1e40]), seed=st.integers(0, 2**16))
def test_out_gets_the_bits_of_new_arrays(heads, n_q, n_k, d, dtype, scale, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(heads, n, d)).astype(dtype) for n in (n_q, n_k, n_k))
    fresh = compute.attention_parts(q, k, v, scale=scale, weights=False)
    out = (np.full(fresh.raw.shape, np.nan, fresh.raw.dtype), np.full(fresh.raw.shape, np.nan, fresh.raw.dtype))
    got = compute.attention_parts(q, k, v, scale=scale, weights=False, out=out)
    assert got.raw is out[0] and got.scores is out[1]
    np.testing.assert_array_equal(out[0], fresh.raw)
    np.testing.assert_array_equal(out[1], fresh.scores)
    # the reference: one plain matmul in the working dtype and one multiply (or _times' float64 path)
    work = np.float32 if dtype == np.float16 else dtype
    plain = np.matmul(q.astype(work), np.swapaxes(k.astype(work), -1, -2))
    np.testing.assert_array_equal(out[0], plain)
    s = 1.0 / math.sqrt(d) if scale is None else scale
    with np.errstate(all="ignore"):
        ws = work(s)
        expected = plain * ws if np.isfinite(ws) and ws >= np.finfo(work).tiny else (
            (plain.astype(np.float64) * s).astype(work))
    np.testing.assert_array_equal(out[1], expected if s != 1.0 else plain)
    # with a known product, out[0] is left alone and the known array is the raw returned
    again = (np.full_like(out[0], np.nan), np.full_like(out[1], np.nan))
    known = compute.attention_parts(q, k, v, scale=scale, raw=fresh.raw, out=again)
    assert known.raw is fresh.raw and known.scores is again[1] and np.isnan(again[0]).all()
    np.testing.assert_array_equal(again[1], fresh.scores)
    np.testing.assert_array_equal(known.weights, compute.attention(q, k, v, scale=scale)[0])


@pytest.mark.parametrize("make", [
    lambda a: a,  # not a pair
    lambda a: (a, a[:, :, :-1]),  # a wrong shape
    lambda a: (a, a.astype(np.float32)),  # not the working dtype
    lambda a: (a, a),  # the same array twice
    lambda a: (a, np.asfortranarray(a.copy())),
    lambda a: (a, np.broadcast_to(a[:1], a.shape)),  # read-only
])
def test_bad_out_is_refused(make):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(2, 4, 3)) for _ in range(3))
    a = np.zeros((2, 4, 4))
    with pytest.raises(ValueError, match="out must be two writable C-contiguous float64 arrays of shape"):
        compute.attention_parts(q, k, v, weights=False, out=make(a))


# -- core_steps ------------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    dict(n=40, d_k=9, heads=4, seed=3),
    dict(n=33, d_k=5, heads=3, causal="on", padding=4, scaling="custom", temperature=0.5),
    dict(n=20, d_k=7, heads=1),
])
@pytest.mark.parametrize("head", [0, 2])
def test_the_partial_core_is_the_final_cores_shown_head(options, head):
    inputs = AttentionModel(**options).snapshot()
    shown = min(head, inputs.heads - 1)
    steps = core_module.core_steps(inputs, head=head, partial=True)
    fractions, partials = [], []
    while True:
        try:
            step = next(steps)
        except StopIteration as stop:
            core = stop.value
            break
        if isinstance(step, tuple):
            step, partial = step
            partials.append(partial)
            # the shown head is complete when the partial core comes (later heads are written after)
            raw_then, weights_then = partial.raw[shown].copy(), partial.head_weights(shown).copy()
        fractions.append(step)
    assert len(partials) == 1 and not partials[0].statistics and core.statistics
    assert fractions == sorted(fractions) and fractions[-1] < 1 and len(fractions) == inputs.heads + 1  # each head, the histograms
    assert math.isnan(partials[0].std_raw) and partials[0].hist_raw is None
    q, k, v = sources.random_qkv(inputs.n, inputs.d_k, inputs.heads, inputs.seed)
    mask = compute.padding_mask(inputs.n, inputs.padding) if inputs.padding else None
    whole = compute.attention_parts(q, k, v, scale=inputs.scale_factor(), causal=inputs.causal == "on",
                                    mask=mask)
    np.testing.assert_array_equal(raw_then, whole.raw[shown])
    np.testing.assert_array_equal(weights_then, whole.weights[shown])
    np.testing.assert_array_equal(core.raw, whole.raw)
    np.testing.assert_array_equal(core.scores, whole.scores)
    np.testing.assert_array_equal(core.weights, whole.weights)
    assert core.std_raw == np.std(whole.raw) and core.std_scaled == np.std(whole.scores)
    top = max(np.abs(whole.raw).max(), np.abs(whole.scores).max())
    np.testing.assert_array_equal(core.hist_edges, np.linspace(-top, top, HIST_BINS + 1))
    np.testing.assert_array_equal(core.hist_raw, np.histogram(whole.raw, core.hist_edges)[0] / whole.raw.size)
    np.testing.assert_array_equal(core.hist_scaled,
                                  np.histogram(whole.scores, core.hist_edges)[0] / whole.scores.size)
    assert core.parts is partials[0].parts  # the shown head is not computed twice


def test_without_partial_no_core_is_yielded():
    inputs = AttentionModel(n=30, d_k=6, heads=3).snapshot()
    steps = list(_steps(core_module.core_steps(inputs, head=1)))
    assert steps and all(isinstance(s, float) for s in steps)


def _steps(generator):
    while True:
        try:
            yield next(generator)
        except StopIteration:
            return


# -- the view ---------------------------------------------------------------------------------------
def settle(qtbot, ms: int = 30) -> None:
    QApplication.processEvents()
    qtbot.wait(ms)


def _open_large(qtbot, make_view, lab):
    """The Attention view at n = 512, 3 heads, head 2 shown, its first core drawn (d_k = 4)."""
    model = lab.models["attention"]
    model.update_from_dict({"n": 512, "d_k": 4, "heads": 3, "head": 2})
    model.core()
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    return model, view


@pytest.fixture
def gated_statistics(monkeypatch):
    """The job's histograms wait for the gate (in the worker only)."""
    real = core_module.sample_histograms
    gate = threading.Event()

    def slow(*args):
        if threading.current_thread() is not threading.main_thread():
            gate.wait(10)
        return real(*args)

    monkeypatch.setattr(core_module, "sample_histograms", slow)
    return gate


def test_the_view_draws_the_shown_head_before_the_statistics(qtbot, make_view, lab, gated_statistics):
    model, view = _open_large(qtbot, make_view, lab)
    settle(qtbot)
    counts_before = view.histogram.raw.yData.copy()
    std_label = view.readouts["attention.readout.std"]
    std_before, count = std_label.text(), view.redraw_count
    model.d_k = 16
    q, k, v = sources.random_qkv(512, 16, 3, model.seed)
    weights, _ = compute.attention(q, k, v)
    qtbot.waitUntil(lambda: np.array_equal(view.weights.full_matrix, weights[1]), timeout=20000)
    assert view.computing and view.compute_row.isVisible()  # the statistics are still to come
    assert view.redraw_count == count  # what tests and the bench wait for: the whole core
    np.testing.assert_array_equal(view.histogram.raw.yData, counts_before)
    assert std_label.text() == std_before
    # what is still the previous result says so: faded curves and legend, a grey spread, the note
    hist = view.histogram
    assert all(i.opacity() < 1 for i in (hist.raw, hist.scaled, hist.getPlotItem().legend))
    assert not std_label.isEnabled()
    assert view.note.text().startswith(tr("attention.compute.partial_note"))
    assert view.sweep_panel.plot.now_line.value() == pytest.approx(math.log10(16))  # the d_k drawn
    model.query = 5  # drawn from the partial core too: the same head
    settle(qtbot)
    np.testing.assert_array_equal(view.bars.heights[0], weights[1][4])
    gated_statistics.set()
    qtbot.waitUntil(lambda: view.redraw_count > count, timeout=20000)
    assert not view.computing
    assert all(i.opacity() == 1 for i in (hist.raw, hist.scaled, hist.getPlotItem().legend))
    assert std_label.isEnabled() and tr("attention.compute.partial_note") not in view.note.text()
    raw = np.matmul(q, np.swapaxes(k, -1, -2))
    assert std_label.text() == f"{np.std(raw):.2f} → {np.std(raw) / 4:.2f}" != std_before
    core = model.core()
    np.testing.assert_array_equal(view.histogram.raw.yData, core.hist_raw)
    assert not np.array_equal(core.hist_raw, counts_before)


# -- the histograms' sample ------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 70), min_size=1, max_size=3), most=st.integers(1, 3000))
def test_the_histogram_sample_strides_through_every_key(shape, most):
    from gui.model.attention.statistics import strided_sample

    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    got = strided_sample(a, most)
    if a.size <= most:
        np.testing.assert_array_equal(got, a.reshape(-1))  # small: all of it
        return
    n_k = shape[-1]
    # a plain loop: the smallest stride from size // most up that shares no factor with n_k
    stride = a.size // most
    while any(stride % f == 0 and n_k % f == 0 for f in range(2, min(stride, n_k) + 1)):
        stride += 1
    np.testing.assert_array_equal(got, a.reshape(-1)[::stride])
    assert got.size <= 2 * most  # about most entries, never far more
    taken = got.astype(np.int64)  # the entries are their own flat indices
    if taken.size >= n_k:  # then every key column is in the sample
        assert set((taken % n_k).tolist()) == set(range(n_k))


def test_flush_does_not_leave_the_job_waiting_for_a_draw(qtbot, make_view, lab, monkeypatch):
    """flush blocks this thread on the job, so the job must not wait for the partial core's draw."""
    from gui.views.attention import job as job_module

    waited = []
    real = job_module.core_job

    def recording(request):
        drawn = request[2]
        result = yield from real(request)
        waited.append(drawn.is_set())
        return result

    monkeypatch.setattr(job_module, "core_job", recording)
    model, view = _open_large(qtbot, make_view, lab)
    model.d_k = 24
    QApplication.processEvents()
    assert view.compute_running
    view.flush()
    assert waited and waited[-1]  # its event was set: it went on at once
    q, k, v = sources.random_qkv(512, 24, 3, model.seed)
    np.testing.assert_array_equal(view.weights.full_matrix, compute.attention(q, k, v)[0][1])


def test_a_newer_change_keeps_the_partial_core_on_screen(qtbot, make_view, lab, gated_statistics):
    """A second change while the first job's statistics run: the view keeps the first job's head
    (newer than the last whole core) instead of going back to the whole core before it."""
    model, view = _open_large(qtbot, make_view, lab)

    def weights(d_k):
        q, k, v = sources.random_qkv(512, d_k, 3, model.seed)
        return compute.attention(q, k, v)[0][1]

    model.d_k = 16
    qtbot.waitUntil(lambda: np.array_equal(view.weights.full_matrix, weights(16)), timeout=20000)
    model.d_k = 40  # the d_k = 16 job waits in its histograms
    settle(qtbot, 100)
    assert view.computing
    np.testing.assert_array_equal(view.weights.full_matrix, weights(16))  # not d_k = 4's again
    assert view.note.text().startswith(tr("attention.compute.partial_note"))
    gated_statistics.set()
    qtbot.waitUntil(lambda: not view.computing, timeout=20000)
    np.testing.assert_array_equal(view.weights.full_matrix, weights(40))
    assert model.core().scores.shape == (3, 512, 512) and view.histogram.raw.opacity() == 1


def test_cancel_draws_the_last_whole_core_again(qtbot, make_view, lab, gated_statistics):
    model, view = _open_large(qtbot, make_view, lab)
    before = view.weights.full_matrix.copy()
    model.d_k = 16
    qtbot.waitUntil(lambda: not np.array_equal(view.weights.full_matrix, before), timeout=20000)
    view.cancel_compute()
    gated_statistics.set()
    qtbot.waitUntil(lambda: not view.compute_running, timeout=20000)
    settle(qtbot)
    assert model.d_k == 4 and not view.computing
    np.testing.assert_array_equal(view.weights.full_matrix, before)
    assert view.histogram.raw.opacity() == 1 and view.readouts["attention.readout.std"].isEnabled()
