"""The Attention core computes each head's weights and output when first needed.

A slider step computes the score matrices of every head (the histogram and
the spread span them all) but the weights and output of the head shown only;
these tests check that what is computed later, head by head, is exactly the
full ``compute.attention`` call's, that a changed input gives a new core, and
that switching the head (or the grid of every head) shows the right data.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model import attention as attn
from gui.model.attention import AttentionModel
from gui.model.attention.core import compute_core
from gui.model.attention.statistics import HIST_BINS, histograms


def full(m: AttentionModel, mask=None):
    """A fresh full computation of ``m``'s random source: (raw, weights, output) of every head."""
    q, k, v = attn.random_qkv(m.n, m.d_k, m.heads, m.seed)
    pad = compute.padding_mask(m.n, m.padding) if m.padding else None
    w, out = compute.attention(q, k, v, causal=m.causal == "on", mask=pad)
    return compute.attention_scores(q, k, 1.0), w, out


@pytest.mark.parametrize(("causal", "padding"), [("off", 0), ("on", 2)])
def test_each_head_alone_equals_the_full_call(causal, padding):
    m = AttentionModel(n=10, d_k=12, heads=4, seed=7, causal=causal, padding=padding)
    core = compute_core(m.snapshot())
    raw, w, out = full(m)
    assert not any(core.parts.computed(h) for h in range(4))  # nothing before it is asked for
    np.testing.assert_array_equal(core.head_weights(2), w[2])
    np.testing.assert_array_equal(core.head_output(2), out[2])
    assert [core.parts.computed(h) for h in range(4)] == [False, False, True, False]
    np.testing.assert_array_equal(core.raw, raw)
    np.testing.assert_array_equal(core.weights, w)  # the rest, stacked with the head computed first
    np.testing.assert_array_equal(core.output, out)
    np.testing.assert_array_equal(core.head_weights(0), w[0])


def test_a_file_mask_per_head_is_sliced_per_head(tmp_path):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((3, 5, 4)) for _ in range(3))
    mask = rng.random((3, 5, 5)) < 0.6
    np.savez(tmp_path / "qkv.npz", q=q, k=k, v=v, mask=mask)
    m = AttentionModel()
    m.load_file(tmp_path / "qkv.npz")
    w, out = compute.attention(q, k, v, mask=mask)
    core = m.core()
    for h in (1, 0, 2):
        np.testing.assert_array_equal(core.head_weights(h), w[h])
        np.testing.assert_array_equal(core.head_output(h), out[h])
    np.testing.assert_array_equal(core.weights, w)


def test_a_changed_input_gives_a_new_core():
    m = AttentionModel(n=8, d_k=16, heads=2)
    first = m.core()
    assert m.cached_core() is first
    m.d_k = 20
    assert m.cached_core() is None
    second = m.core()
    assert second is not first
    _raw, w, out = full(m)
    np.testing.assert_array_equal(m.result().row, w[0, 0])
    np.testing.assert_array_equal(second.head_output(1), out[1])
    m.head = 2  # the head is not an input of the core: the same core, head 2 computed now
    assert m.cached_core() is second
    np.testing.assert_array_equal(m.result().row, w[1, 0])


def settle(qtbot, view):
    qtbot.wait(30)
    view.flush()


def shown(view, model):
    """What the view draws for the shown head: the weight, score and output heatmaps and the bars."""
    return (view.weights.full_matrix, view.scores_map.full_matrix, view.output_map.full_matrix,
            view.bars.heights[0])


def test_switching_the_head_shows_that_head(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 12, "heads": 4, "d_k": 8, "query": 3})
    view = make_view("attention")
    settle(qtbot, view)
    for head in (3, 1, 4):
        model.head = head
        settle(qtbot, view)
        raw, w, out = full(model)
        weights, scores, output, bars = shown(view, model)
        np.testing.assert_array_equal(weights, w[head - 1])
        np.testing.assert_array_equal(scores, raw[head - 1])
        np.testing.assert_array_equal(output, out[head - 1])
        np.testing.assert_array_equal(bars, w[head - 1, 2])
    model.head = 0  # the grid: every head
    settle(qtbot, view)
    _raw, w, _out = full(model)
    tiles = [t for t in view.heads_grid.tiles if t.isVisible()]
    assert len(tiles) == 4
    for h, tile in enumerate(tiles):
        np.testing.assert_array_equal(tile.full_matrix, w[h])


def test_the_worker_computes_the_shown_head_and_the_others_come_when_shown(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 512, "d_k": 4, "heads": 2, "head": 2})
    model.core()
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    model.d_k = 6  # big enough for the worker
    assert attn.needs_worker(model.snapshot())
    qtbot.waitUntil(lambda: model.cached_core() is not None and not view.computing, timeout=20000)
    core = model.cached_core()
    assert core.parts.computed(1) and not core.parts.computed(0)
    _raw, w, out = full(model)
    np.testing.assert_array_equal(view.weights.full_matrix, w[1])
    np.testing.assert_array_equal(view.output_map.full_matrix, out[1])
    model.head = 1  # the other head: computed now, for the same core
    qtbot.waitUntil(lambda: core.parts.computed(0), timeout=5000)
    qtbot.wait(50)
    assert model.cached_core() is core
    np.testing.assert_array_equal(view.weights.full_matrix, w[0])
    np.testing.assert_array_equal(view.output_map.full_matrix, out[0])
    np.testing.assert_array_equal(view.bars.heights[0], w[0, 0])
    np.testing.assert_array_equal(view.arrays()["weights"].npz_data, w)  # the export: every head


# -- the histograms: one sort for both samples ---------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 3000), scale=st.sampled_from([1.0, 0.125, 0.37, 1 / np.sqrt(77), 2.5]),
       seed=st.integers(0, 2**16), on_edges=st.booleans())
def test_histograms_are_numpys(size, scale, seed, on_edges):
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal(size) * 4
    raw[: size // 3] = np.round(raw[: size // 3])  # ties
    top = float(max(np.abs(raw).max(), np.abs(raw * scale).max(), 1e-12))
    edges = np.linspace(-top, top, HIST_BINS + 1)
    if on_edges:
        raw[: min(size, 61)] = edges[: min(size, 61)]  # values exactly on the edges
    other = np.clip(rng.standard_normal(size) * 4 * scale, -top, top)  # not raw * scale: sorted apart
    for scaled in (raw * scale, other):
        counts_raw, counts_scaled = histograms(raw, scaled, scale, edges)
        np.testing.assert_array_equal(counts_raw, np.histogram(raw, edges)[0])
        np.testing.assert_array_equal(counts_scaled, np.histogram(scaled, edges)[0])


def test_the_core_histograms_and_spread_are_numpys_of_every_head():
    m = AttentionModel(n=40, d_k=24, heads=3, scaling="custom", temperature=0.7, causal="on")
    core = compute_core(m.snapshot())
    raw, _w, _out = full(m)
    top = float(max(np.abs(raw).max(), np.abs(core.scores).max(), 1e-12))
    edges = np.linspace(-top, top, HIST_BINS + 1)
    np.testing.assert_array_equal(core.hist_edges, edges)
    np.testing.assert_array_equal(core.hist_raw, np.histogram(raw.reshape(-1), edges)[0] / raw.size)
    np.testing.assert_array_equal(core.hist_scaled, np.histogram(core.scores.reshape(-1), edges)[0] / raw.size)
    assert core.std_raw == float(raw.std())
    assert core.hist_raw.sum() == pytest.approx(1.0)


def test_a_large_core_has_numpys_spread_and_histograms():
    m = AttentionModel(n=512, d_k=4, heads=1, seed=4)
    core = compute_core(m.snapshot())
    raw, _w, _out = full(m)
    assert core.std_raw == float(raw.std())
    assert core.std_scaled == float((raw / 2.0).std())  # the scale 1/√4 is exact in binary
    edges = core.hist_edges
    # 512 x 512 scores are more than HIST_SAMPLE: a sample strided through every key (its own test:
    # test_attention_partial.py), counted as np.histogram counts it
    from gui.model.attention.core import HIST_SAMPLE
    from gui.model.attention.statistics import strided_sample

    sample = strided_sample(core.scores, HIST_SAMPLE)
    assert HIST_SAMPLE // 2 < sample.size <= HIST_SAMPLE < raw.size
    np.testing.assert_array_equal(core.hist_scaled, np.histogram(sample, edges)[0] / sample.size)


def test_the_sweep_is_drawn_again_only_when_it_changes_and_the_mark_follows_d_k(qtbot, make_view, lab):
    import math

    from gui.model.attention import SWEEP_DK

    model = lab.models["attention"]
    model.update_from_dict({"n": 12, "d_k": 16})
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.sweep_running and view.sweep_data is not None, timeout=20000)
    settle(qtbot, view)

    def expect(n):
        sweep = compute.dk_sweep(n, SWEEP_DK, seed=0, heads=1)
        np.testing.assert_array_equal(view.sweep.entropy_scaled.yData, np.asarray(sweep["entropy_scaled"]) / math.log(n))
        np.testing.assert_array_equal(view.sweep.std.yData, sweep["std_qk"])

    expect(12)
    curve = view.sweep.entropy_scaled.yData
    model.d_k = 40
    settle(qtbot, view)
    assert view.sweep.entropy_scaled.yData is curve  # not set again: the same sweep
    assert view.sweep.now_line.value() == pytest.approx(math.log10(40))
    model.n = 20  # a new sweep (n keys)
    qtbot.waitUntil(lambda: not view.sweep_running and view.sweep_data is not None, timeout=20000)
    settle(qtbot, view)
    expect(20)
    assert view.sweep.now_line.value() == pytest.approx(math.log10(40))


@pytest.mark.parametrize("n", [12, 512])
def test_the_core_computes_the_head_asked_for_and_no_other(n):
    m = AttentionModel(n=n, d_k=4, heads=2, seed=9, causal="on")
    core = compute_core(m.snapshot(), head=1)
    assert core.parts.computed(1) and not core.parts.computed(0)
    _raw, w, out = full(m)
    np.testing.assert_array_equal(core.head_weights(1), w[1])
    np.testing.assert_array_equal(core.head_output(1), out[1])
    np.testing.assert_array_equal(core.head_weights(0), w[0])
