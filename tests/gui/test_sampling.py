"""The Sampling view and its model: knobs, draws, Gumbel, router, files, worker, export."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import compute
import compute as cs
from gui.model.sampling import CURVE_T, LoadError, SamplingModel, compute_draws, load_logits, router


@pytest.fixture
def model():
    return SamplingModel()


# -- the model -----------------------------------------------------------------------------------
def test_knobs_follow_the_switches(model):
    assert model.knobs() == {"temperature": 1.0, "top_k": 50, "top_p": 0.9, "min_p": None}
    model.top_k_on, model.top_p_on, model.min_p_on = "off", "off", "on"
    assert model.knobs() == {"temperature": 1.0, "top_k": None, "top_p": None, "min_p": 0.05}


def test_result_is_filter_probs_of_the_zipf_row(model):
    model.set_param("vocab", 2000)
    model.set_param("temperature", 0.7)
    r = model.result()
    logits = cs.zipf_logits(2000, seed=0)
    np.testing.assert_array_equal(r.vocab.logits, logits)
    np.testing.assert_array_equal(r.filtered, cs.filter_probs(logits, temperature=0.7, top_k=50, top_p=0.9))
    np.testing.assert_allclose(r.probs, compute.softmax(logits, temperature=0.7), rtol=1e-12)
    assert r.kept == np.count_nonzero(r.filtered)
    # the shown tokens are the most probable, in order
    order = np.argsort(-r.probs, kind="stable")[: model.shown]
    np.testing.assert_array_equal(r.shown, order)
    assert r.entropy == pytest.approx(stats.entropy(r.probs))
    assert r.entropy_filtered == pytest.approx(stats.entropy(r.filtered[r.filtered > 0]))


def test_top_tokens_get_readable_words_and_the_rest_ids(model):
    model.set_param("vocab", 1000)
    r = model.result()
    assert r.labels[0] == "the"  # the most probable token gets the first word
    rest = np.setdiff1d(np.arange(1000), np.argsort(-r.vocab.logits)[:400])
    assert r.vocab.label(int(rest[0])) == f"#{rest[0]}"


def test_cumulative_curve_is_what_top_p_sees(model):
    model.set_param("vocab", 500)
    model.top_k_on = "off"
    r = model.result()
    p = np.sort(r.probs)[::-1]
    np.testing.assert_allclose(r.cum_prob, np.cumsum(p)[r.cum_rank - 1], rtol=1e-12)
    # the cut keeps exactly the tokens that reach top_p
    assert r.top_p_rank == r.kept
    assert np.cumsum(p)[r.top_p_rank - 1] >= 0.9 > np.cumsum(p)[r.top_p_rank - 2]


def test_scores_source_uses_the_score_row(model, lab):
    model.logits = "scores"
    model.top_k_on = model.top_p_on = "off"
    r = model.result(lab.scores)
    np.testing.assert_allclose(r.probs, compute.softmax(lab.scores.values), rtol=1e-15)
    assert r.labels[0] == lab.scores.labels[int(np.argmax(lab.scores.values))]


def test_scores_with_nan_or_all_minus_inf_are_refused(model, lab):
    model.logits = "scores"
    lab.scores.set_values([1.0, float("nan")])
    with pytest.raises(ValueError, match="NaN"):
        model.result(lab.scores)
    lab.scores.set_values([-np.inf, -np.inf])
    with pytest.raises(ValueError, match="-inf"):
        model.result(lab.scores)


def test_draws_match_the_filtered_distribution(model):
    model.set_param("vocab", 300)
    model.set_param("draws", 50_000)
    d = model.draw()
    assert d.counts.sum() == 50_000
    assert np.all(d.counts[d.expected == 0] == 0)  # nothing cut is ever drawn
    keep = d.expected > 0
    ref = stats.chisquare(d.counts[keep], d.expected[keep])
    if np.all(d.expected[keep] >= 5):
        assert d.chi2 == pytest.approx(ref.statistic)
    assert d.p_value > 1e-3


def test_gumbel_max_and_inverse_cdf_histograms_agree(model):
    model.set_param("vocab", 200)
    model.set_param("draws", 20_000)
    a = model.draw()
    model.draw_method = "gumbel_max"
    b = model.draw()
    assert b.inputs.method == "gumbel_max"
    assert a.inputs.method == "inverse_cdf"
    keep = (a.counts + b.counts) >= 10
    table = np.vstack([a.counts[keep], b.counts[keep]])
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_draws_are_cached_and_reproducible(model):
    model.set_param("vocab", 100)
    d1 = model.draw()
    assert model.draw() is d1
    model.set_param("seed", 1)
    assert model.cached_draws() is None
    model.set_param("seed", 0)
    np.testing.assert_array_equal(model.draw().draws, d1.draws)


def test_a_stale_worker_result_is_dropped(model):
    inputs = model.draw_inputs()
    result = compute_draws(inputs)
    model.set_param("draws", 123)
    assert not model.store_draws(result)
    assert model.cached_draws() is None


def test_temperature_curves_match_softmax_at_each_t(model):
    model.set_param("vocab", 300)
    c = model.curves()
    logits = model.result().vocab.logits
    for i in (0, 30, 60):
        p = compute.softmax(logits, temperature=CURVE_T[i])
        assert c["entropy"][i] == pytest.approx(stats.entropy(p), rel=1e-9, abs=1e-12)
        assert c["above_1pct"][i] == np.count_nonzero(p > 0.01)
        top2 = np.sort(p)[-2:]
        assert c["top2_gap"][i] == pytest.approx(top2[1] - top2[0], abs=1e-12)


def test_gumbel_softmax_sharpens_as_tau_falls(model):
    model.set_param("vocab", 100)
    s = model.sharpening()
    assert np.all(np.diff(s) <= 1e-12)  # the largest entry only grows as tau falls
    relaxed, hard = model.gumbel()
    assert relaxed.sum() == pytest.approx(1.0)
    assert hard.sum() == 1
    assert hard[np.argmax(relaxed)] == 1


def test_router_weights_and_loads():
    r = router(experts=8, k=2, tokens=500, seed=3, temperature=1.0)
    assert r.indices.shape == (500, 2)
    np.testing.assert_allclose(r.weights.sum(axis=1), 1.0)
    # a plain loop: the chosen experts are the two largest gates, weights renormalised over them
    for t in range(0, 500, 50):
        g = compute.softmax(r.gate_logits[t])
        top = np.argsort(-g)[:2]
        np.testing.assert_array_equal(np.sort(r.indices[t]), np.sort(top))
        np.testing.assert_allclose(r.weights[t], g[r.indices[t]] / g[r.indices[t]].sum())
    assert r.load.sum() == 1000
    np.testing.assert_array_equal(r.load, np.bincount(r.indices.ravel(), minlength=8))


def test_a_sharper_gate_concentrates_the_gate_mass():
    cv2 = [router(8, 2, 2000, 0, t).importance_cv2 for t in (5.0, 1.0, 0.2, 0.05)]
    assert all(a < b for a, b in zip(cv2, cv2[1:]))
    # the chosen experts do not depend on the temperature (argmax is invariant)
    np.testing.assert_array_equal(router(8, 2, 300, 0, 0.1).load, router(8, 2, 300, 0, 3.0).load)


def test_more_experts_keep_the_first_experts_router(model):
    a = router(4, 1, 50, 0, 1.0)
    b = router(6, 1, 50, 0, 1.0)
    np.testing.assert_allclose(a.gate_logits, b.gate_logits[:, :4])


# -- files ---------------------------------------------------------------------------------------
def test_load_logits_reads_npy_and_npz(tmp_path, model):
    row = np.linspace(-3, 3, 40)
    np.save(tmp_path / "a.npy", row)
    np.savez(tmp_path / "b.npz", logits=row[None, :])
    np.testing.assert_array_equal(load_logits(tmp_path / "a.npy"), row)
    np.testing.assert_array_equal(load_logits(tmp_path / "b.npz"), row)
    model.set_param("logits_file", str(tmp_path / "a.npy"))
    assert model.logits == "file"
    np.testing.assert_array_equal(model.result().vocab.logits, row)


@pytest.mark.parametrize(("array", "match"), [
    (np.array([1.0]), "shape"),
    (np.zeros((3, 4)), "shape"),
    (np.array([1.0, np.nan]), "NaN"),
    (np.array([-np.inf, -np.inf]), "every logit"),
    (np.array(["a", "b"]), "dtype"),
    (np.array([{"a": 1}, 2], dtype=object), "pickled"),
])
def test_bad_logit_files_are_refused_and_nothing_changes(tmp_path, model, array, match):
    path = tmp_path / "bad.npy"
    np.save(path, array, allow_pickle=True)
    before = model.to_dict()
    with pytest.raises(LoadError, match=match):
        model.set_param("logits_file", str(path))
    assert model.to_dict() == before
    assert model.loaded is None


def test_a_file_that_is_not_numpy_is_refused(tmp_path):
    path = tmp_path / "x.npy"
    path.write_text("import os; os.system('echo no')")
    with pytest.raises(LoadError, match="x.npy"):
        load_logits(path)


# -- the view ------------------------------------------------------------------------------------
@pytest.fixture
def view(make_view, lab):
    lab.models["sampling"].vocab = 3000
    v = make_view("sampling")
    v.flush()
    return v


def test_bars_show_the_model(view):
    r = view.model.result(view.scores)
    before, after = view.bars.heights
    np.testing.assert_allclose(before, r.probs[r.shown])
    np.testing.assert_allclose(after, r.filtered[r.shown])
    assert view.readouts["sampling.readout.kept"].text() == f"{r.kept:,} of 3,000"


def test_switching_a_knob_off_redraws(qtbot, view):
    kept = view.model.result(view.scores).kept
    view.controls["top_k_on"].setChecked(False)
    view.controls["top_p_on"].setChecked(False)
    assert view.model.top_k_on == "off"
    assert view.model.top_p_on == "off"
    view.flush()
    assert view.readouts["sampling.readout.kept"].text().startswith("3,000")
    assert kept < 3000
    assert not view.controls["top_k"].isEnabled()


def test_observed_counts_sit_beside_expected(view):
    d = view.model.cached_draws(view.scores)
    assert d is not None
    r = view.model.result(view.scores)
    expected, observed = view.draw_bars.heights
    np.testing.assert_allclose(observed, d.counts[r.shown])
    np.testing.assert_allclose(expected, view.model.draws * r.filtered[r.shown])
    assert "p =" in view.readouts["sampling.readout.chi2"].text()


def test_big_draws_run_in_a_worker_and_land(qtbot, view):
    view.model.set_param("draws", 1_000_000)  # above the synchronous limit
    view.redraw()
    assert view.job.busy
    assert view.progress.isVisibleTo(view)
    qtbot.waitUntil(lambda: not view.job.busy, timeout=60_000)
    d = view.model.cached_draws(view.scores)
    assert d is not None
    assert d.counts.sum() == 1_000_000
    _expected, observed = view.draw_bars.heights
    np.testing.assert_allclose(observed, d.counts[view.model.result(view.scores).shown])
    assert not view.progress.isVisibleTo(view)


def test_gumbel_draws_can_be_cancelled(qtbot, view):
    m = view.model
    m.top_k_on = m.top_p_on = "off"
    m.draw_method = "gumbel_max"
    m.set_param("draws", 1_000_000)  # 3e9 steps: minutes, unless cancelled
    view.redraw()
    assert view.job.busy
    view.cancel_draws()
    qtbot.waitUntil(lambda: not view.job.running, timeout=60_000)
    view.flush()  # a cancelled job is not restarted, not even by a flush's redraw
    assert not view.job.busy
    assert not view.job.running
    assert m.cached_draws(view.scores) is None
    assert view.readouts["sampling.readout.chi2"].text() == "Drawing cancelled"
    m.set_param("draws", 1000)  # new inputs draw again
    view.flush()
    assert m.cached_draws(view.scores) is not None


def test_router_tab_draws(qtbot, view):
    view.tabs.setCurrentIndex(2)
    view.flush()
    rt = view.model.router()
    tokens, experts = view.router_map.matrix.shape
    assert experts == view.model.experts
    assert tokens == 24
    np.testing.assert_allclose(view.router_map.matrix, rt.dense[:24])
    routed, mass = view.router_load.heights
    np.testing.assert_allclose(routed.sum(), 1.0)
    np.testing.assert_allclose(mass.sum(), 1.0)
    view.model.set_param("experts", 16)
    view.flush()
    assert view.router_map.matrix.shape[1] == 16


def test_router_load_is_readable_without_hovering(qtbot, view):
    """The load bars write their shares on the bars (percent, one decimal), and the balanced share is a
    dashed line named in the legend in the theme's text colour (not a label among the bars' labels)."""
    from gui import theme as themes
    from gui.model.texts import tr

    view.tabs.setCurrentIndex(2)
    view.flush()
    rt = view.model.router()
    tokens, k = rt.indices.shape
    chart = view.router_load
    shares = [rt.load / (tokens * k), rt.importance / tokens]
    shown = [(s, i, t.toPlainText()) for s, i, t in chart.values.items() if t.isVisible()]
    assert len(shown) >= rt.gates.shape[1] // 2  # crowded labels thin out, but most bars carry theirs
    for s, i, text in shown:
        assert text == f"{100 * shares[s][i]:.1f}%"
    x, y = chart.ideal.getData()
    np.testing.assert_array_equal(y, np.full(2, 1.0 / view.model.experts))
    assert (x[0], x[1]) == (-0.5, view.model.experts - 0.5)
    names = [label.text for _sample, label in chart.getPlotItem().legend.items]
    assert names[-1] == tr("sampling.router.ideal")
    foreground = themes.current().foreground
    for _sample, label in chart.getPlotItem().legend.items:
        assert f"color:{foreground.lower()}" in label.item.toHtml().replace(" ", "").lower()
    assert view.router_map.getPlotItem().getAxis("bottom").labelText == tr("sampling.router.gates.x")


def test_a_bad_file_shows_an_error_and_keeps_the_state(tmp_path, view):
    path = tmp_path / "bad.npy"
    np.save(path, np.array([1.0, np.nan]))
    messages = []
    view.status.connect(messages.append)
    assert not view.load_path(path)
    assert "NaN" in messages[-1]
    assert "NaN" in view.note.text()
    assert view.model.logits == "zipf"


def test_exports_every_plot_and_the_arrays(tmp_path, view):
    from gui.export import export_view, read_npz

    written = export_view(view, "sampling", tmp_path)
    names = {p.name for p in written}
    for key in ("tokens", "cumulative", "draws", "temperature_curves", "gumbel", "gumbel_sharpening",
                "router_gates", "router_load"):
        assert f"sampling_{key}.png" in names
        assert f"sampling_{key}.svg" in names
    assert "sampling_vocabulary.csv" not in names
    assert "sampling_top_tokens.csv" in names
    data = read_npz(tmp_path / "sampling.npz")
    assert data["logits"].shape == (3000,)
    np.testing.assert_allclose(data["filtered"].sum(), 1.0)
    assert data["draws"].shape == (view.model.draws,)


def test_gumbel_tab_draws_the_relaxed_sample_and_its_sharpening(qtbot, view):
    view.tabs.setCurrentIndex(1)
    view.flush()
    m = view.model
    r = m.result(view.scores)
    relaxed, hard = m.gumbel(view.scores)
    got_relaxed, got_hard = view.gumbel.heights
    np.testing.assert_allclose(got_relaxed, relaxed[r.shown])
    np.testing.assert_allclose(got_hard, hard[r.shown])
    m.set_param("tau", 0.1)
    view.flush()
    x, y = view.sharpening.marker.getData()
    assert y[0] == pytest.approx(m.gumbel(view.scores)[0].max())
