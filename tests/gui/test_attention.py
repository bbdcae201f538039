"""The Attention view: model against compute, file loading, masks, the heatmap, the sweep, export."""

import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

import compute
from gui.model import attention as attn
from gui.model.attention import SWEEP_DK, AttentionModel, LoadError, load_arrays
from tests.conftest import ROOT, run_main


def qkv(seed=0, heads=2, n=6, d=8):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((heads, n, d)) for _ in range(3))


# -- the model ---------------------------------------------------------------------------
@pytest.mark.parametrize(("scaling", "scale"), [("sqrt_dk", None), ("none", 1.0), ("custom", 1 / 0.5)])
def test_weights_and_output_are_compute_attention_to_the_bit(scaling, scale):
    m = AttentionModel(n=12, d_k=16, heads=2, seed=3, scaling=scaling, temperature=0.5, causal="on", padding=2)
    r = m.result()
    q, k, v = attn.random_qkv(12, 16, 2, 3)
    w, out = compute.attention(q, k, v, scale=scale, causal=True, mask=compute.padding_mask(12, 2))
    assert np.array_equal(r.core.weights, w)
    assert np.array_equal(r.core.output, out)
    assert np.array_equal(r.core.scores, compute.attention_scores(q, k, scale=scale))
    assert np.array_equal(r.core.raw, compute.attention_scores(q, k, scale=1.0))
    a = m.arrays()
    assert np.array_equal(a["weights"].data, w[0])
    assert np.array_equal(a["output"].data, out[0])
    assert np.array_equal(a["q"].data, q[0])
    # the selected row's steps: masked keys are -inf and get exactly zero weight
    m.query, m.head = 5, 2
    r = m.result()
    assert r.head == 1
    assert r.query == 4
    assert np.all(np.isneginf(r.steps.scores[5:]))
    np.testing.assert_allclose(r.steps.probs, w[1, 4], rtol=1e-12, atol=1e-15)


def test_scale_without_sqrt_saturates_rows():
    m = AttentionModel(n=32, d_k=512, scaling="none")
    unscaled = m.result().core.weights.max(axis=-1).mean()
    m.scaling = "sqrt_dk"
    scaled = m.result()
    assert unscaled > 0.9 > scaled.core.weights.max(axis=-1).mean()
    assert scaled.core.std_raw == pytest.approx(np.sqrt(512), rel=0.15)
    assert scaled.core.std_scaled == pytest.approx(1.0, rel=0.15)


def test_sentence_source_is_deterministic_with_token_labels():
    m = AttentionModel(source="sentence", d_k=16, heads=2, seed=1)
    m.sentence = "the cat sat on the mat"
    r = m.result()
    assert r.core.q_labels == ("the·1", "cat", "sat", "on", "the·5", "mat") == r.core.k_labels
    assert r.core.weights.shape == (2, 6, 6)
    # the same token gets the same embedding, hence the same query in every head
    assert np.array_equal(r.core.q[:, 0], r.core.q[:, 4])
    again = AttentionModel(source="sentence", d_k=16, heads=2, seed=1, sentence="the cat sat on the mat").result()
    assert np.array_equal(again.core.q, r.core.q)
    code = ("import numpy as np; from gui.model.attention import token_embedding as t;"
            "print(repr(t('cat', 4).tolist()))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                           env={"PYTHONHASHSEED": "123", "PATH": ""}, check=True)
    assert eval(other.stdout) == attn.token_embedding("cat", 4).tolist()  # stable across processes


def test_load_a_good_npz_and_npy(tmp_path):
    q, k, v = qkv()
    mask = np.ones((6, 6), dtype=bool)
    mask[2] = False
    np.savez(tmp_path / "good.npz", q=q.astype(np.float32), k=k, v=v, mask=mask)
    m = AttentionModel()
    m.load_file(tmp_path / "good.npz")
    assert m.source == "file"
    assert m.file_path.endswith("good.npz")
    r = m.result()
    w, _ = compute.attention(q.astype(np.float32).astype(np.float64), k, v, mask=mask)
    assert np.array_equal(r.core.weights, w)
    assert r.masked_row_indices == [2]
    assert not r.core.weights[0, 2].any()
    np.save(tmp_path / "stack.npy", np.stack([q[0], k[0], v[0]]))
    m.load_file(tmp_path / "stack.npy")
    assert m.result().core.weights.shape == (1, 6, 6)


def _bad_files(tmp_path):
    q, k, v = qkv()
    np.savez(tmp_path / "shape.npz", q=q, k=k[:, :, :5], v=v)
    np.savez(tmp_path / "dtype.npz", q=q.astype(np.complex128), k=k, v=v)
    np.savez(tmp_path / "missing.npz", q=q, v=v)
    np.savez(tmp_path / "mask.npz", q=q, k=k, v=v, mask=np.ones((3, 3), dtype=bool))
    np.save(tmp_path / "pickle.npy", np.array([{"q": 1}], dtype=object), allow_pickle=True)
    np.savez(tmp_path / "pickle.npz", q=np.array([None, 1], dtype=object), k=k, v=v)
    (tmp_path / "text.npz").write_text("not numpy")
    return [
        ("shape.npz", "same last dimension"),
        ("dtype.npz", "dtype complex128"),
        ("missing.npz", "no array named 'k'"),
        ("mask.npz", "array 'mask' has shape (3, 3)"),
        ("pickle.npy", "pickled"),
        ("pickle.npz", "pickled"),
        ("text.npz", "not a NumPy"),
        ("absent.npz", "cannot read absent.npz"),
    ]


def test_bad_files_say_what_is_wrong_and_keep_the_state(tmp_path):
    m = AttentionModel(n=5)
    before = m.result().core.weights
    for name, message in _bad_files(tmp_path):
        with pytest.raises(LoadError, match=re.escape(message)):
            m.load_file(tmp_path / name)
        assert m.source == "random"
        assert m.loaded is None
        assert m.file_path == ""
        assert np.array_equal(m.result().core.weights, before)
    with pytest.raises(LoadError, match="cannot read"):
        load_arrays(tmp_path)  # a folder


def test_sizes_beyond_a_quarter_of_the_memory_are_refused(monkeypatch):
    m = AttentionModel()
    monkeypatch.setattr(attn.sources, "memory_limit", lambda: 10 * 1024**2)
    with pytest.raises(ValueError, match="quarter of this machine's memory"):
        m.set_param("n", 2048)
    assert m.n == 8
    m.set_param("n", 16)
    assert m.n == 16
    assert attn.total_ram() > 0


def test_fully_masked_rows_are_flagged():
    m = AttentionModel(n=6, padding=6)
    r = m.result()
    assert r.masked_row_indices == list(range(6))
    assert not r.core.weights.any()
    assert not r.core.output.any()
    assert np.isnan(r.steps.probs).all()
    m.padding, m.causal = 0, "on"
    assert m.result().masked_row_indices == []


# -- the widget --------------------------------------------------------------------------
def settle(qtbot, view):
    qtbot.wait(30)
    view.flush()


def click_cell(qtbot, heatmap, row, col):
    vb = heatmap.getPlotItem().getViewBox()
    pos = heatmap.mapFromScene(vb.mapViewToScene(QPointF(col + 0.5, row + 0.5)))
    qtbot.mouseClick(heatmap.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_clicking_a_row_selects_the_query(qtbot, make_view, lab):
    view = make_view("attention")
    model = lab.models["attention"]
    click_cell(qtbot, view.weights, 3, 1)
    assert model.query == 4
    settle(qtbot, view)
    r = model.result()
    np.testing.assert_array_equal(view.bars.heights[0], r.core.weights[0, 3])
    assert view.steps.item(0, 5).text() == f"{r.steps.probs[0]:.3f}"
    assert view.weights.highlight.isVisible()
    assert view.weights.highlight.rect().y() == 3
    np.testing.assert_array_equal(view.weights.full_matrix, r.core.weights[0])


def test_causal_and_padding_toggles_update_overlay_and_weights(qtbot, make_view, lab):
    view = make_view("attention")
    model = lab.models["attention"]
    assert not view.weights.overlay.isVisible()
    view.causal.click()
    assert model.causal == "on"
    settle(qtbot, view)
    assert view.weights.overlay.isVisible()
    alpha = view.weights.overlay.image[..., 3]
    np.testing.assert_array_equal(alpha > 0, ~compute.causal_mask(8, 8))
    assert np.allclose(np.triu(view.weights.full_matrix, 1), 0)
    view.spins["padding"].setValue(8)
    settle(qtbot, view)
    assert (view.weights.overlay.image[..., 3] > 0).all()
    assert "8:" in view.readouts["attention.readout.masked"].text()
    view.spins["padding"].setValue(0)
    view.causal.click()
    settle(qtbot, view)
    assert not view.weights.overlay.isVisible()


def test_load_button_and_drop_good_and_bad_files(qtbot, make_view, lab, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    view = make_view("attention")
    model = lab.models["attention"]
    bad = _bad_files(tmp_path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(tmp_path / "missing.npz"), ""))
    view.load_button.click()
    assert "no array named 'k'" in view.note.text()
    assert model.source == "random"
    q, k, v = qkv(heads=1, n=5)
    np.savez(tmp_path / "good.npz", q=q, k=k, v=v)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(tmp_path / "good.npz"), ""))
    view.load_button.click()
    assert model.source == "file"
    assert "good.npz" in view.note.text()
    settle(qtbot, view)
    assert view.weights.full_matrix.shape == (5, 5)

    def drop(path):
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(str(path))])
        event = QDropEvent(QPointF(QPoint(50, 50)), Qt.DropAction.CopyAction, mime,
                           Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
        view.dropEvent(event)
        return event

    assert bad[0][0] == "shape.npz"
    drop(tmp_path / "shape.npz")
    assert "same last dimension" in view.note.text()
    assert model.loaded.path == "good.npz"  # kept
    q, k, v = qkv(heads=3, n=7)
    np.savez(tmp_path / "three.npz", q=q, k=k, v=v)
    assert drop(tmp_path / "three.npz").isAccepted()
    settle(qtbot, view)
    assert model.result().core.heads == 3
    assert view.weights.full_matrix.shape == (7, 7)


def test_sweep_finishes_and_draws_and_can_be_cancelled(qtbot, make_view, lab, monkeypatch):
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.sweep_running and view.sweep_data is not None, timeout=20000)
    assert len(view.sweep.entropy_scaled.xData) == len(SWEEP_DK)
    assert view.arrays()["dk_sweep"].data.shape == (len(SWEEP_DK), 7)

    steps_done = []

    def slow(n, d_ks, seed=0, heads=1):
        for i in range(400):
            time.sleep(0.01)
            steps_done.append(i)
            yield i + 1, 400
        raise AssertionError("never cancelled")

    monkeypatch.setattr(compute, "dk_sweep_steps", slow)
    lab.models["attention"].n = 9
    qtbot.waitUntil(lambda: view.sweep_job.busy, timeout=5000)
    qtbot.waitUntil(lambda: view.sweep_bar.value() > 0, timeout=5000)
    view.sweep_cancel.click()
    qtbot.waitUntil(lambda: not view.sweep_running, timeout=5000)
    assert view.sweep_bar.format() == "sweep cancelled"
    lab.models["attention"].n = 10  # a new n starts a new (slow) sweep; closing the view cancels it
    qtbot.waitUntil(lambda: view.sweep_job.busy, timeout=5000)
    started = len(steps_done)
    view.close()
    assert not view.sweep_running  # closing stopped it at its next step
    assert len(steps_done) < started + 400


def test_large_matrices_are_shown_as_block_maxima(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.n, model.d_k = 600, 4
    view = make_view("attention")
    settle(qtbot, view)
    assert view.weights.matrix.shape == (300, 300)
    assert "300 x 300 block maxima of 600 x 600" in view.note.text()
    assert view.arrays()["weights"].data.shape == (600, 600)


def test_export_writes_plots_and_full_arrays(qtbot, make_view, lab, tmp_path):
    from gui.export import export_view, read_npz

    model = lab.models["attention"]
    model.update_from_dict({"heads": 2, "head": 2, "causal": "on", "n": 6})
    view = make_view("attention")
    written = export_view(view, "attention", tmp_path)
    names = {p.name for p in written}
    assert {"attention_weights.png", "attention_weights.svg", "attention.npz", "attention_weights.csv"} <= names
    data = read_npz(tmp_path / "attention.npz")
    for key, a in model.arrays().items():
        assert np.array_equal(data[key], a.data if a.npz_data is None else a.npz_data)
    q, k, v = model.core().q, model.core().k, model.core().v
    weights, output = compute.attention(q, k, v, causal=True)
    assert data["weights"].shape == (2, 6, 6)  # every head in the .npz
    assert np.array_equal(data["weights"], weights)
    assert np.array_equal(data["output"], output)
    text = (tmp_path / "attention_weights.csv").read_text().splitlines()  # the CSV: the shown head
    assert text[0] == "label," + ",".join(str(j) for j in range(1, 7))
    assert len(text) == 7


def test_headless_export(tmp_path):
    result = run_main("export", "--view", "attention", "--n", "16", "--d_k", "64", "--heads", "2",
                      "--causal", "on", "--padding", "2", "--out", str(tmp_path), "--arrays-only")
    assert result.returncode == 0, result.stderr
    from gui.export import read_npz

    data = read_npz(tmp_path / "attention.npz")
    m = AttentionModel(n=16, d_k=64, heads=2, causal="on", padding=2)
    assert np.array_equal(data["weights"], m.result().core.weights)
    assert (tmp_path / "attention_weights.csv").exists()
    # the d_k sweep is the model's: written headless too, as compute.dk_sweep gives it at n = 16
    sweep = compute.dk_sweep(16, SWEEP_DK, seed=0, heads=1)
    expected = np.column_stack([np.asarray(sweep[c], dtype=float) for c in attn.SWEEP_COLUMNS])
    assert np.array_equal(data["dk_sweep"], expected)
    assert (tmp_path / "attention_dk_sweep.csv").exists()


def test_headless_export_loads_a_file_and_refuses_a_bad_one(tmp_path):
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 5, 4)), rng.normal(size=(3, 7, 4)), rng.normal(size=(3, 7, 2))
    np.savez(tmp_path / "qkv.npz", q=q, k=k, v=v)
    out = tmp_path / "out"
    result = run_main("export", "--view", "attention", "--file", str(tmp_path / "qkv.npz"),
                      "--out", str(out), "--arrays-only")
    assert result.returncode == 0, result.stderr
    from gui.export import read_npz

    data = read_npz(out / "attention.npz")
    weights, output = compute.attention(q, k, v)
    assert np.array_equal(data["weights"], weights)
    assert np.array_equal(data["output"], output)
    (tmp_path / "bad.npz").write_text("not numpy")
    bad = run_main("export", "--view", "attention", "--file", str(tmp_path / "bad.npz"), "--out", str(out))
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "not a NumPy" in bad.stderr


def test_a_session_reloads_its_file(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    rng = np.random.default_rng(4)
    np.savez(tmp_path / "qkv.npz", q=rng.normal(size=(4, 3)), k=rng.normal(size=(4, 3)), v=rng.normal(size=(4, 3)))
    lab = Lab()
    lab.models["attention"].set_param("file", tmp_path / "qkv.npz")
    lab.session("attention").save(tmp_path / "s.json")
    other = Lab()
    assert other.restore(Session.load(tmp_path / "s.json")) == []
    m = other.models["attention"]
    assert m.source == "file"
    assert m.loaded is not None
    assert m.file == str(tmp_path / "qkv.npz")
    (tmp_path / "qkv.npz").unlink()  # a moved file: the rest of the session still loads
    skipped = Lab().restore(Session.load(tmp_path / "s.json"))
    assert len(skipped) == 1
    assert "cannot read" in skipped[0]


# -- the main recompute in a worker ------------------------------------------------------
@pytest.fixture
def gated(monkeypatch):
    """core_steps in the view's worker waits for ``gate`` (set it to let jobs finish); records d_k."""
    from gui.model.attention import core as core_module

    real = core_module.core_steps
    gate = threading.Event()
    calls = []

    def slow(inputs, **options):
        if threading.current_thread() is threading.main_thread():  # model.core(): not the view's job
            return (yield from real(inputs, **options))
        calls.append(inputs.d_k)
        gate.wait(10)
        return (yield from real(inputs, **options))

    monkeypatch.setattr(core_module, "core_steps", slow)
    return gate, calls


def big_view(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 512, "d_k": 4})
    model.core()  # cached: the view draws it at once (the gated worker is for the changes)
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    return view, model


def expected_weights(model, d_k):
    q, k, v = attn.random_qkv(model.n, d_k, model.heads, model.seed)
    return compute.attention(q, k, v)[0]


def test_a_large_change_runs_in_the_worker_and_lands(qtbot, make_view, lab, gated):
    gate, calls = gated
    view, model = big_view(qtbot, make_view, lab)
    before = view.weights.full_matrix.copy()
    assert attn.needs_worker(model.snapshot())
    assert not view.compute_row.isVisible()
    model.d_k = 8
    qtbot.waitUntil(lambda: view.compute_row.isVisible(), timeout=5000)
    assert view.compute_bar.maximum() == 0
    assert "computing" in view.note.text()
    assert np.array_equal(view.weights.full_matrix, before)  # the previous result stays shown
    gate.set()
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    assert calls == [8]
    assert not view.compute_row.isVisible()
    assert "computing" not in view.note.text()
    assert np.array_equal(view.weights.full_matrix, expected_weights(model, 8)[0])


def test_a_newer_value_supersedes_an_older_one(qtbot, make_view, lab, gated):
    gate, calls = gated
    view, model = big_view(qtbot, make_view, lab)
    model.d_k = 8
    qtbot.waitUntil(lambda: calls == [8], timeout=5000)
    model.d_k = 16
    qtbot.wait(40)
    model.d_k = 32
    qtbot.wait(40)
    assert view.compute_row.isVisible()
    assert calls == [8]  # at most one job: 16 and 32 wait for it
    gate.set()
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    assert calls == [8, 32]  # 16 never started; 8's result was dropped
    assert np.array_equal(view.weights.full_matrix, expected_weights(model, 32)[0])
    assert np.array_equal(model.cached_core().weights, expected_weights(model, 32))


def test_cancel_keeps_the_shown_result_and_puts_the_settings_back(qtbot, make_view, lab, gated):
    gate, calls = gated
    view, model = big_view(qtbot, make_view, lab)
    model.d_k = 8
    qtbot.waitUntil(lambda: view.compute_row.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: calls == [8], timeout=5000)  # the product is under way: it cannot be stopped
    view.compute_cancel.click()
    assert model.d_k == 4
    assert view.d_k.value() == 4
    assert not view.compute_row.isVisible()
    assert "cancelled" in view.note.text()
    gate.set()
    qtbot.waitUntil(lambda: not view.compute_running, timeout=20000)
    settle(qtbot, view)
    assert calls == [8]
    assert np.array_equal(view.weights.full_matrix, expected_weights(model, 4)[0])
    assert view.readouts["attention.readout.scale"].text().startswith("1/√4")


def test_closing_while_a_job_runs_leaves_no_thread(qtbot, make_view, lab, gated):
    gate, _calls = gated
    view, model = big_view(qtbot, make_view, lab)
    model.d_k = 8
    qtbot.waitUntil(lambda: view.core_job.busy, timeout=5000)
    opener = threading.Timer(0.3, gate.set)
    opener.start()
    view.close()  # waits for the product in progress
    assert not view.compute_running
    opener.join()


def test_flush_and_export_wait_for_the_current_result(qtbot, make_view, lab, gated, tmp_path):
    from gui.export import export_view, read_npz

    gate, _calls = gated
    view, model = big_view(qtbot, make_view, lab)
    model.d_k = 8
    qtbot.waitUntil(lambda: view.core_job.busy, timeout=5000)
    model.d_k = 16  # the running job (8) is stale: export computes 16 itself
    gate.set()
    view.flush()
    assert not view.computing
    assert np.array_equal(view.weights.full_matrix, expected_weights(model, 16)[0])
    assert np.array_equal(view.arrays()["weights"].data, expected_weights(model, 16)[0])
    model.d_k = 32
    export_view(view, "attention", tmp_path)
    data = read_npz(tmp_path / "attention.npz")
    assert np.array_equal(data["weights"], expected_weights(model, 32))  # every head
    qtbot.waitUntil(lambda: not view.compute_running, timeout=20000)


# -- the heads grid -----------------------------------------------------------------------
def test_head_zero_shows_every_head_in_a_grid_and_a_click_selects_head_and_query(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"heads": 4, "head": 0, "n": 6, "d_k": 8, "causal": "on"})
    view = make_view("attention")
    settle(qtbot, view)
    assert view.spins["head"].text() == "all"
    assert view.weights_stack.currentWidget() is view.heads_grid
    assert not view.weights.isVisible()
    tiles = [t for t in view.heads_grid.tiles if t.isVisible()]
    assert len(tiles) == 4
    q, k, v = attn.random_qkv(6, 8, 4, 0)
    w, _ = compute.attention(q, k, v, causal=True)
    for h, tile in enumerate(tiles):
        assert tile.getPlotItem().titleLabel.text == f"head {h + 1}"
        assert not tile._texts
        assert not tile.colorbar.isVisible()
        np.testing.assert_array_equal(tile.full_matrix, w[h])
        assert tile.overlay.isVisible()
    assert np.array_equal(model.arrays()["weights"].data, w[0])  # the export keeps head 1
    assert "head 1" in view.note.text()
    click_cell(qtbot, tiles[2], 3, 1)
    assert (model.head, model.query) == (3, 4)
    settle(qtbot, view)
    assert view.weights_stack.currentWidget() is view.weights
    np.testing.assert_array_equal(view.weights.full_matrix, w[2])
    np.testing.assert_array_equal(view.bars.heights[0], w[2, 3])
    model.heads = 2
    model.head = 0
    settle(qtbot, view)
    assert [t.isVisible() for t in view.heads_grid.tiles] == [True, True, False, False]


# -- the tables source --------------------------------------------------------------------
def test_tables_start_from_the_shown_values_and_typing_changes_the_weights(qtbot, make_view, lab):
    from PySide6.QtWidgets import QLineEdit

    model = lab.models["attention"]
    model.update_from_dict({"n": 20, "d_k": 32, "heads": 2})
    view = make_view("attention")
    shown = model.result()
    view.source.combo.setCurrentIndex(view.source.choices.index("tables"))
    view.source.combo.activated.emit(view.source.choices.index("tables"))
    assert model.source == "tables"
    t = model.tables
    assert t.q.shape == (16, 16)
    assert t.v.shape == (16, 16)
    assert np.array_equal(t.q, shown.core.q[0, :16, :16])
    assert np.array_equal(t.k, shown.core.k[0, :16, :16])
    settle(qtbot, view)
    assert view.tables_tabs.isVisible()
    assert not view.d_k.isEnabled()
    assert view.weights.full_matrix.shape == (16, 16)
    table = view.matrix_tables["q"]
    table.setCurrentIndex(table.model().index(0, 0))
    table.edit(table.currentIndex())
    (editor,) = table.viewport().findChildren(QLineEdit)
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClicks(editor, "3.5")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not table.viewport().findChildren(QLineEdit))  # commits queued
    assert model.tables.q[0, 0] == 3.5
    settle(qtbot, view)
    q = t.q.copy()
    q[0, 0] = 3.5
    w, _ = compute.attention(q, t.k, t.v)
    np.testing.assert_array_equal(view.weights.full_matrix, w)
    assert not np.array_equal(w, compute.attention(t.q, t.k, t.v)[0])
    # a bad entry turns red and keeps the last good value
    idx = table.model().index(0, 1)
    table.model().setData(idx, "abc")
    assert model.tables.q[0, 1] == t.q[0, 1]
    assert table.model().data(idx, Qt.ItemDataRole.BackgroundRole) is not None
    assert "not a number" in view.note.text()


def test_pasting_a_tsv_block_fills_the_table(qtbot, make_view, lab):
    from PySide6.QtGui import QGuiApplication

    model = lab.models["attention"]
    model.source = "tables"
    view = make_view("attention")
    table = view.matrix_tables["k"]
    n, d = model.tables.k.shape
    before = model.tables.k.copy()
    table.setCurrentIndex(table.model().index(1, 2))
    QGuiApplication.clipboard().setText("a\tb\tc\n1\t2\t3\n4\tx\t6\n")  # a header, then a 2 x 3 block
    table.setFocus()
    qtbot.keyClick(table, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    k = model.tables.k
    np.testing.assert_array_equal(k[1:3, 2:5], [[1, 2, 3], [4, before[2, 3], 6]])
    np.testing.assert_array_equal(np.delete(k, [1, 2], axis=0), np.delete(before, [1, 2], axis=0))
    assert table.model().invalid.keys() == {(2, 3)}
    assert "1 were not numbers" in view.note.text()
    table.paste("9\t9\t9\t9\t9\t9\n" * 20)  # cells beyond the table are dropped
    assert model.tables.k.shape == (n, d)
    assert (model.tables.k[1:, 2:8] == 9).all()
    assert not table.model().invalid
    settle(qtbot, view)
    w, _ = compute.attention(model.tables.q, model.tables.k, model.tables.v)
    np.testing.assert_array_equal(view.weights.full_matrix, w)
