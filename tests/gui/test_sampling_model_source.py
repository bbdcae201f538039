"""The Sampling view's model source: a tiny real model's next-token logits, the generate strip, export, sessions.

The tiny GPT-2 (byte-level BPE) is built once for the module with the
builders of tests/llm and loaded through the path a user's folder takes;
the references are transformers' own forward pass and logits processors.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import compute  # noqa: E402
from gui.model import llm  # noqa: E402
from gui.model.sampling import SamplingModel  # noqa: E402
from gui.model.session import Session  # noqa: E402
from tests.conftest import run_main  # noqa: E402

PROMPT = "the cat sat on"
KNOBS = [
    {"temperature": 1.0, "top_k": None, "top_p": None, "min_p": None},
    {"temperature": 0.7, "top_k": 10, "top_p": None, "min_p": None},
    {"temperature": 1.3, "top_k": None, "top_p": 0.8, "min_p": None},
    {"temperature": 0.5, "top_k": 50, "top_p": 0.9, "min_p": 0.02},
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from tests.llm.builders import build_all

    return str(build_all(tmp_path_factory.mktemp("tiny"), names=("gpt2",))["gpt2"])


@pytest.fixture(scope="module")
def reference(folder):
    """The model and tokenizer as transformers itself loads them."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    return model, AutoTokenizer.from_pretrained(folder)


def forward(reference, ids) -> np.ndarray:
    with torch.no_grad():
        return reference[0](input_ids=torch.tensor([list(ids)])).logits[0, -1].double().numpy()


def set_knobs(m: SamplingModel, knob: dict) -> None:
    m.temperature = knob["temperature"]
    for name in ("top_k", "top_p", "min_p"):
        on = knob[name] is not None
        setattr(m, f"{name}_on", "on" if on else "off")
        if on:
            setattr(m, name, knob[name])


@pytest.fixture
def view(make_view, lab, folder):
    v = make_view("sampling")
    v.model.set_param("logits", "model")
    v.real.run(folder, PROMPT)
    settle(v)
    return v


def settle(view) -> None:
    from PySide6.QtWidgets import QApplication

    assert view.real.job.wait()
    QApplication.processEvents()
    view.flush()


def click_bar(qtbot, plot, i: int) -> None:
    vb = plot.getPlotItem().getViewBox()
    lo, hi = vb.viewRange()[1]
    pos = plot.mapFromScene(vb.mapViewToScene(QPointF(float(i), (lo + hi) / 2)))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def click_cell(qtbot, strip, row: int) -> None:
    qtbot.mouseClick(strip.list.viewport(), Qt.MouseButton.LeftButton, pos=strip.cell_rect(row).center())


# -- the vocabulary ---------------------------------------------------------------------------------
def test_the_logits_are_the_models_own_forward_and_the_bars_name_its_tokens(view, reference):
    tok = reference[1]
    ids = tok(PROMPT)["input_ids"]
    r = view.model.result(view.scores)
    np.testing.assert_allclose(r.vocab.logits, forward(reference, ids), rtol=0, atol=1e-5)
    assert r.size == len(tok)
    # the bars are the most probable tokens, labelled with the tokenizer's own strings (a space as ·)
    expected = np.argsort(-forward(reference, ids), kind="stable")[: r.shown.size]
    assert sorted(r.shown.tolist()) == sorted(expected.tolist())
    assert view.bars._labels == r.labels
    raw = tok.convert_ids_to_tokens(r.shown.tolist())
    plain = [(label, t) for label, t in zip(r.labels, raw) if t.isascii() and t.replace("Ġ", "").isalnum()]
    assert plain, raw
    assert all(label == t.replace("Ġ", "·") for label, t in plain)
    assert view.controls["vocab"].spin.value() == len(tok)  # V shown is the model's
    assert view.model_strip.isVisibleTo(view) and view.generate.isVisibleTo(view)
    assert "gpt2" in view.model_strip.message


def test_the_filtered_distribution_equals_transformers_logits_processors(view):
    from transformers import (
        LogitsProcessorList,
        MinPLogitsWarper,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    for knob in KNOBS:
        set_knobs(view.model, knob)
        view.flush()
        r = view.model.result(view.scores)
        procs = LogitsProcessorList([TemperatureLogitsWarper(knob["temperature"])])
        for name, cls in (("top_k", TopKLogitsWarper), ("top_p", TopPLogitsWarper), ("min_p", MinPLogitsWarper)):
            if knob[name] is not None:
                procs.append(cls(knob[name]))
        scores = procs(torch.zeros((1, 1), dtype=torch.long), torch.tensor(r.vocab.logits)[None])
        theirs = torch.softmax(scores, dim=-1)[0].numpy()
        np.testing.assert_allclose(r.filtered, theirs, rtol=0, atol=1e-12, err_msg=str(knob))
        np.testing.assert_allclose(view.bars.heights[1], theirs[r.shown], rtol=0, atol=1e-12)
        if knob["top_k"] or knob["top_p"]:
            assert 0 < r.kept < r.size, knob
        d = view.model.draw(view.scores)  # the draws and their chi-square work on it unchanged
        assert d.counts.sum() == view.model.draws and (d.counts[theirs == 0] == 0).all()
        assert 0 < d.p_value <= 1


# -- the generate strip --------------------------------------------------------------------------------
def test_generate_is_reproducible_by_seed_and_equals_llm_generate(view, qtbot, folder):
    m = view.model
    m.seed = 7
    set_knobs(m, KNOBS[3])
    view.generate.count.setValue(6)
    qtbot.mouseClick(view.generate.all_button, Qt.MouseButton.LeftButton)
    settle(view)
    ids = m.strip.ids
    want = llm.generate(llm.load(folder), PROMPT, 6, **m.knobs(), seed=7)
    assert ids == want.ids and len(ids) == 6
    assert [round(s.probability, 12) for s in m.strip.steps] == [round(s.probability, 12) for s in want.steps]
    assert view.generate.texts() == [s.token for s in want.steps]
    # one at a time, then the rest: the same tokens (each position has its own seed)
    qtbot.mouseClick(view.generate.clear_button, Qt.MouseButton.LeftButton)
    view.flush()
    assert m.strip.steps == ()
    for _ in range(2):
        qtbot.mouseClick(view.generate.next_button, Qt.MouseButton.LeftButton)
        settle(view)
    view.generate.count.setValue(4)
    qtbot.mouseClick(view.generate.all_button, Qt.MouseButton.LeftButton)
    settle(view)
    assert m.strip.ids == ids
    # the vocabulary is now the distribution after the generated tokens
    after = llm.next_token(llm.load(folder), PROMPT, continuation=ids)
    np.testing.assert_array_equal(m.result(view.scores).vocab.logits, after.logits)


def test_clicking_a_bar_appends_that_token(view, qtbot, reference):
    m = view.model
    set_knobs(m, KNOBS[1])
    view.flush()
    r = m.result(view.scores)
    i = 3
    token_id = int(r.shown[i])
    click_bar(qtbot, view.bars, i)
    settle(view)
    (step,) = m.strip.steps
    assert step.token_id == token_id and step.chosen and step.position == 0
    assert step.probability == pytest.approx(r.filtered[token_id], abs=1e-15)
    assert step.rank == 1 + int(np.count_nonzero(r.vocab.logits > r.vocab.logits[token_id]))
    ids = [*reference[1](PROMPT)["input_ids"], token_id]
    np.testing.assert_allclose(m.result(view.scores).vocab.logits, forward(reference, ids), atol=1e-5)
    # and generation goes on from the chosen token
    qtbot.mouseClick(view.generate.next_button, Qt.MouseButton.LeftButton)
    settle(view)
    assert m.strip.ids[0] == token_id and len(m.strip.ids) == 2 and not m.strip.steps[1].chosen


def test_rewinding_shows_the_distribution_a_token_was_drawn_from(view, qtbot, folder):
    m = view.model
    view.generate.count.setValue(5)
    qtbot.mouseClick(view.generate.all_button, Qt.MouseButton.LeftButton)
    settle(view)
    ids = m.strip.ids
    click_cell(qtbot, view.generate, 2)  # token 2 (0-based 1) becomes the last of the context
    settle(view)
    assert m.strip.cursor == 2 and m.strip.ids == ids  # the later tokens stay (dimmed)
    r = m.result(view.scores)
    np.testing.assert_array_equal(r.vocab.logits, llm.next_token(llm.load(folder), PROMPT,
                                                                  continuation=ids[:2]).logits)
    drawn = m.strip.steps[2]
    assert r.filtered[drawn.token_id] == pytest.approx(drawn.probability, abs=1e-15)
    assert "Rewound" in view.note.text()
    click_cell(qtbot, view.generate, 0)  # the prompt's cell: back to the prompt alone
    settle(view)
    assert m.strip.cursor == 0
    qtbot.mouseClick(view.generate.next_button, Qt.MouseButton.LeftButton)  # replaces every later token
    settle(view)
    assert len(m.strip.ids) == 1 and m.strip.cursor == 1


# -- export and sessions ------------------------------------------------------------------------------
def test_the_headless_export_holds_the_models_logits_and_tokens(tmp_path, folder):
    from gui.export import read_npz

    out = tmp_path / "out"
    result = run_main("export", "--view", "sampling", "--logits", "model", "--model", folder,
                      "--prompt", PROMPT, "--top_k", "5", "--out", str(out), "--arrays-only")
    assert result.returncode == 0, result.stderr
    data = read_npz(out / "sampling.npz")
    nt = llm.next_token(llm.load(folder), PROMPT)
    np.testing.assert_array_equal(data["logits"], nt.logits)
    assert tuple(data["tokens"]) == nt.tokens
    np.testing.assert_array_equal(data["filtered"], compute.filter_probs(nt.logits, temperature=1.0, top_k=5,
                                                                         top_p=0.9))
    np.testing.assert_array_equal(data["context_ids"], nt.ids)
    assert not (out / "sampling_tokens.csv").exists()  # the whole vocabulary: .npz only
    from gui.cli import UsageError, build_parser, configure

    args = build_parser().parse_args(["--view", "sampling", "--logits", "model", "--model", str(tmp_path / "gone"),
                                      "--out", str(out)])
    with pytest.raises(UsageError, match="--model.*gone"):
        configure(args)


def test_a_session_keeps_model_prompt_and_the_strip_not_the_weights(view, qtbot, lab, folder):
    from gui.model.lab import Lab

    m = view.model
    qtbot.mouseClick(view.generate.next_button, Qt.MouseButton.LeftButton)
    settle(view)
    click_bar(qtbot, view.bars, 1)
    settle(view)
    m.rewind(1)
    text = Session.capture(lab.scores, lab.models).to_json()
    assert len(text) < 20_000  # ids, probabilities and ranks; no logits, no weights
    fresh = Lab()
    assert fresh.restore(Session.from_json(text)) == []
    f = fresh.models["sampling"]
    assert (f.logits, f.model, f.prompt) == ("model", folder, PROMPT)
    assert f.strip.ids == m.strip.ids and f.strip.cursor == 1
    assert [(s.probability, s.rank, s.chosen) for s in f.strip.steps] == \
        [(s.probability, s.rank, s.chosen) for s in m.strip.steps]
    assert f.strip.steps[1].chosen and not f.strip.steps[0].chosen
    f.ensure_model_result()  # the context is run again from the ids
    np.testing.assert_array_equal(f.result().vocab.logits, m.result(view.scores).vocab.logits)
    np.testing.assert_array_equal(f.arrays()["generated"].data, m.arrays(view.scores)["generated"].data)
    # a damaged strip is skipped with a reason, the rest of the session loads
    import json

    doc = json.loads(text)
    doc["state"]["sampling"]["strip"]["cursor"] = 99
    skipped = Lab().restore(Session.from_json(json.dumps(doc)))
    assert len(skipped) == 1 and "strip" in skipped[0]


def test_without_the_extra_the_source_is_disabled_with_the_reason(make_view, monkeypatch):
    from gui.model.llm import _env

    real_import = _env._import

    def hide_torch(name):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real_import(name)

    monkeypatch.setattr(_env, "_import", hide_torch)
    view = make_view("sampling")
    combo = view.controls["logits"].combo
    item = combo.model().item(combo.findData("model"))
    assert not item.isEnabled()
    assert "softmax-lab[models]" in item.data(Qt.ItemDataRole.ToolTipRole)
    with pytest.raises(ValueError, match=r"softmax-lab\[models\]"):
        view.model.set_param("logits", "model")
    assert view.model.logits == "zipf"
    view.model.logits = "model"  # a lesson or an old session may still ask for it
    view.flush()
    assert not view.model_strip.run_button.isEnabled()
    assert "softmax-lab[models]" in view.model_strip.message
    assert not view.generate.next_button.isEnabled()
    assert view.model.result(view.scores).size == view.model.vocab  # the synthetic row meanwhile
