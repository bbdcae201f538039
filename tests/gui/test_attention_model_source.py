"""The Attention view's real-model source, driven as a user drives it, on tiny models built here.

The models are tests/llm's tiny GPT-2 and Llama (grouped-query attention,
a BOS token, SentencePiece pieces), saved to a folder once per module and
loaded through the path a user's folder takes.  The reference for what the
view shows is ``llm.attention`` on the same folder and prompt (itself
checked against transformers in tests/llm).
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from PySide6.QtCore import Qt  # noqa: E402

from gui.export import read_npz  # noqa: E402
from gui.model import llm  # noqa: E402
from gui.model.lab import Lab  # noqa: E402
from gui.model.session import Session  # noqa: E402
from gui.views.attention.real import RECOMPUTE  # noqa: E402
from tests.conftest import run_main  # noqa: E402

PROMPT = "the cat sat on the mat 猫"
WAIT_MS = 120_000


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from tests.llm.builders import build_all

    return build_all(tmp_path_factory.mktemp("tiny-models"), names=("gpt2", "llama"))


@pytest.fixture(scope="module")
def reference(folders):
    """name -> llm.attention on that folder and PROMPT."""
    return {name: llm.attention(llm.load(str(folder)), PROMPT) for name, folder in folders.items()}


def run_in_view(view, qtbot, folder, prompt=PROMPT):
    """Pick the model source, type the model and the prompt, press Run, wait for the job."""
    view.model.set_param("source", "model")
    view.flush()
    strip = view.model_strip
    strip.model_edit.setText(str(folder))
    strip.prompt_edit.setPlainText(prompt)
    qtbot.mouseClick(strip.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.real.job.busy, timeout=WAIT_MS)
    view.flush()


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_the_view_shows_the_models_weights_tokens_and_recomputation(name, make_view, qtbot, folders, reference):
    view = make_view("attention")
    m = view.model
    run_in_view(view, qtbot, folders[name])
    ref = reference[name]
    a = m.llm_shown
    n = len(ref.ids)
    assert a.weights.shape == (2, 4, n, n)
    np.testing.assert_array_equal(a.weights, ref.weights)
    m.update_from_dict({"layer": 2, "head": 3})
    view.flush()
    shown = view.weights.full_matrix  # the heatmap of the head shown
    np.testing.assert_array_equal(shown, ref.weights[1, 2])
    np.testing.assert_allclose(shown.sum(axis=1), 1.0, atol=1e-6)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert (shown[upper] == 0).all() and (shown[~upper] > 0).all()
    assert view.weights.overlay.isVisible()  # the causal mask is drawn
    # the tokenizer's tokens, on both axes of every heatmap and down the step table
    assert view.weights._rows == view.weights._cols == ref.tokens
    assert view.scores_map._rows == ref.tokens
    steps = view.steps.model()
    assert tuple(steps.headerData(i, Qt.Orientation.Vertical) for i in range(n)) == ref.tokens
    # the lab's recomputation: the readout's numbers are the largest differences, all below 1e-5
    text = view.readouts[RECOMPUTE].text()
    numbers = [float(x) for x in re.findall(r"\d\.\de[-+]\d+", text)]
    assert numbers == [float(f"{ref.recompute_max_abs_diff[1]:.1e}"), float(f"{ref.max_abs_diff:.1e}")]
    assert max(numbers) < 1e-5 and (ref.recompute_max_abs_diff < 1e-5).all()


def test_a_click_on_the_overview_opens_that_layer_and_head_with_every_tool(make_view, qtbot, folders, reference):
    view = make_view("attention")
    m = view.model
    run_in_view(view, qtbot, folders["llama"])
    qtbot.mouseClick(view.real.overview, Qt.MouseButton.LeftButton)
    view.flush()
    assert m.head == 0 and view.weights_stack.currentWidget() is view.model_grid
    assert view.model_grid.shape == (2, 4)
    qtbot.mouseClick(view.model_grid.viewport(), Qt.MouseButton.LeftButton, pos=view.model_grid.cell_center(1, 2))
    view.flush()
    assert (m.layer, m.head) == (2, 3)
    assert view.weights_stack.currentWidget() is view.weights
    ref = reference["llama"]
    np.testing.assert_array_equal(view.weights.full_matrix, ref.weights[1, 2])
    view.weights.cellClicked.emit(4, 0)  # a row click: that query's softmax in the bars and the step table
    view.flush()
    assert m.query == 5
    r = m.result()
    np.testing.assert_allclose(r.steps.probs, ref.weights[1, 2, 4], atol=1e-5)
    np.testing.assert_array_equal(view.bars.heights[0], ref.weights[1, 2, 4])


def test_the_headless_export_holds_the_models_arrays(folders, reference, tmp_path):
    out = tmp_path / "out"
    result = run_main("export", "--view", "attention", "--source", "model", "--model", str(folders["gpt2"]),
                      "--prompt", PROMPT, "--layer", "2", "--out", str(out), "--arrays-only", timeout=300)
    assert result.returncode == 0, result.stderr
    data = read_npz(out / "attention.npz")
    ref = reference["gpt2"]
    np.testing.assert_array_equal(data["model_attention"], ref.weights)
    assert tuple(data["tokens"]) == ref.tokens
    np.testing.assert_allclose(data["recompute_max_abs_diff"], ref.recompute_max_abs_diff, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(data["weights"], ref.weights[1])  # the layer asked for, every head
    assert (out / "attention_model_attention.csv").exists()


def test_a_session_keeps_the_model_and_the_prompt_not_the_weights(folders, tmp_path):
    folder = tmp_path / "mine"
    shutil.copytree(folders["gpt2"], folder)
    lab = Lab()
    m = lab.models["attention"]
    m.update_from_dict({"source": "model", "model": str(folder), "prompt": "猫坐在垫子上", "layer": 2, "query": 3})
    path = tmp_path / "s.json"
    lab.session("attention").save(path)
    assert path.stat().st_size < 20_000  # no weights in it
    again = Lab()
    assert again.restore(Session.load(path)) == []
    got = again.models["attention"]
    assert (got.source, got.model, got.prompt, got.layer, got.query) == ("model", str(folder), "猫坐在垫子上", 2, 3)
    # the model folder is gone: the rest is restored, and the skipped line says why
    shutil.rmtree(folder)
    third = Lab()
    skipped = third.restore(Session.load(path))
    assert len(skipped) == 1 and "no folder" in skipped[0] and str(folder) in skipped[0]
    got = third.models["attention"]
    assert (got.source, got.prompt, got.layer, got.query, got.model) == ("model", "猫坐在垫子上", 2, 3, "")


def test_a_missing_or_broken_model_says_why_and_keeps_what_was_shown(make_view, qtbot, folders, tmp_path):
    view = make_view("attention")
    m = view.model
    run_in_view(view, qtbot, folders["gpt2"])
    before, shown = m.llm_shown, view.weights.full_matrix.copy()
    strip = view.model_strip
    strip.model_edit.setText(str(tmp_path / "gone"))
    qtbot.mouseClick(strip.run_button, Qt.MouseButton.LeftButton)
    view.flush()
    assert "no folder" in strip.message and str(tmp_path / "gone") in strip.message
    assert m.model == str(folders["gpt2"]) and m.llm_shown is before
    np.testing.assert_array_equal(view.weights.full_matrix, shown)
    # a folder that holds a broken model: the job fails, the message says so, the result shown stays
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    run_in_view(view, qtbot, broken)
    assert m.model == str(broken) and "broken" in strip.message and m.llm_shown is before
    np.testing.assert_array_equal(view.weights.full_matrix, shown)
    assert "gpt2" in view.note.text()  # the note names the model still shown


def test_without_the_extra_the_source_is_disabled_with_the_reason(make_view, monkeypatch):
    reason = "Real models need PyTorch: pip install 'softmax-lab[models]'"
    monkeypatch.setattr(llm, "unavailable_reason", lambda: reason)
    view = make_view("attention")
    combo = view.source.combo
    item = combo.model().item(combo.findData("model"))
    assert not item.isEnabled() and item.toolTip() == reason
    assert not view.model_strip.run_button.isEnabled() and view.model_strip.message == reason
    with pytest.raises(ValueError, match="softmax-lab"):
        view.model.set_param("source", "model")
    assert view.model.source == "random"
