"""The Qt-free state layer: score row, parameters, view models, sessions."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui import registry
from gui.model.base import ExportArray
from gui.model.calculator import CalculatorModel
from gui.model.lab import Lab
from gui.model.scores import DEFAULT_SCORES, Score, ScoreRow, parse_score
from gui.model.session import Session, SessionError
from gui.model.temperature import CURVE_T, TemperatureModel
from tests.conftest import ROOT


def test_gui_model_and_registry_import_no_qt():
    code = (
        "import sys, gui.model, gui.model.lab, gui.model.session, gui.registry, gui.platform_check;"
        "bad=[m for m in sys.modules if m.split('.')[0] in "
        "('PySide6','PyQt5','PyQt6','shiboken6','pyqtgraph','qtpy','superqt')];"
        "assert not bad, bad"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- parsing what a user types --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("2", 2.0), (" -1.5 ", -1.5), ("1e3", 1000.0), ("\u22123", -3.0), ("inf", math.inf), ("-inf", -math.inf)],
)
def test_parse_score_reads_numbers(text, value):
    assert parse_score(text)[0] == value


@pytest.mark.parametrize("text", ["", "   ", "abc", "1,5", "2+3", "__import__('os')"])
def test_parse_score_rejects_non_numbers_with_a_reason(text):
    with pytest.raises(ValueError) as info:
        parse_score(text)
    assert str(info.value)


def test_parse_score_explains_special_values():
    assert "zero weight" in parse_score("-inf")[1]
    assert "all the weight" in parse_score("inf")[1]
    value, note = parse_score("nan")
    assert math.isnan(value)
    assert "NaN" in note
    value, note = parse_score("1e400")
    assert value == math.inf
    assert "read as inf" in note
    assert parse_score("-1e400")[0] == -math.inf
    assert parse_score("2.5")[1] is None


# -- the shared score row --------------------------------------------------------


def test_default_scores_are_the_articles_example():
    row = ScoreRow()
    assert row.values.tolist() == [2.0, 1.0, 0.5, -1.0]
    assert np.round(compute.softmax(row.values), 3).tolist() == [0.609, 0.224, 0.136, 0.030]


def test_score_row_edits_emit_one_event_each():
    row = ScoreRow()
    seen = []
    row.events.entries.connect(lambda new, old: seen.append((len(old), len(new))))
    row.insert(1, 7.0)
    row.set_value(0, 3.0)
    row.remove([1])
    row.move(0, +1)
    assert seen == [(4, 5), (5, 5), (5, 4), (4, 4)]
    assert row.values.tolist() == [1.0, 3.0, 0.5, -1.0]
    assert row.labels[1] == "Token 1"


def test_score_row_never_becomes_empty():
    row = ScoreRow()
    with pytest.raises(ValueError, match="at least one"):
        row.remove(range(4))
    assert len(row) == 4
    row.remove([0, 1, 2])
    with pytest.raises(ValueError):
        row.remove([0])
    with pytest.raises(ValueError):
        row.set_entries(())
    assert len(row) == 1


def test_new_rows_get_unused_labels():
    row = ScoreRow()
    row.insert(4)
    row.insert(0)
    assert len(set(row.labels)) == 6


def test_gap_moves_only_the_top_score():
    row = ScoreRow()
    row.set_values([5.2, 3.1, 1.8])
    assert row.gap == pytest.approx(2.1)
    row.set_gap(0.5)
    assert row.values.tolist() == [3.6, 3.1, 1.8]
    row.set_values([1.0, 4.0, 2.0])
    row.set_gap(3.0)
    assert row.values.tolist() == [1.0, 5.0, 2.0]
    row.set_values([1.0])
    assert row.gap is None
    row.set_values([1.0, -math.inf])
    assert row.gap is None
    with pytest.raises(ValueError):
        row.set_gap(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=2, max_size=8), st.floats(0, 10))
def test_ratio_of_top_two_is_exp_gap_over_t(values, gap):
    row = ScoreRow()
    row.set_values(values)
    row.set_gap(gap)
    model = TemperatureModel(temperature=2.0)
    r = model.result(row)
    assert r.gap == pytest.approx(gap, abs=1e-9)
    assert r.ratio == pytest.approx(math.exp(gap / 2.0), rel=1e-9)


# -- parameters ------------------------------------------------------------------


def test_params_come_from_the_model_fields():
    specs = TemperatureModel.params()
    assert list(specs) == ["temperature", "scale"]
    assert specs["temperature"].log
    assert specs["temperature"].minimum == 0.01
    assert specs["temperature"].maximum == 100.0


@pytest.mark.parametrize("bad", [0, -1, 1000, math.nan, math.inf, "hot", True, None])
def test_set_param_rejects_out_of_range_values_and_keeps_the_old_one(bad):
    model = TemperatureModel()
    with pytest.raises(ValueError, match="temperature"):
        model.set_param("temperature", bad)
    assert model.temperature == 1.0


def test_update_from_dict_is_all_or_nothing():
    model = TemperatureModel()
    with pytest.raises(ValueError):
        model.update_from_dict({"temperature": 0.5, "scale": 99.0})
    assert model.to_dict() == {"temperature": 1.0, "scale": 1.0}
    with pytest.raises(ValueError, match="no parameter"):
        model.update_from_dict({"heat": 0.5})


def test_export_array_checks_its_columns():
    with pytest.raises(ValueError):
        ExportArray(np.zeros((3, 2)), ("a",))
    with pytest.raises(ValueError):
        ExportArray(np.zeros(3), ("a",), ("x", "y"))


# -- what the views compute --------------------------------------------------------


def test_calculator_arrays_are_compute_to_the_bit():
    row = ScoreRow()
    model = CalculatorModel(temperature=0.7)
    arrays = model.arrays(row)
    probs = compute.softmax(row.values, temperature=0.7)
    assert np.array_equal(arrays["probs"].data, probs)
    steps = arrays["steps"].data
    assert np.array_equal(steps[:, 5], probs)
    assert np.array_equal(steps[:, 6], compute.log_softmax(row.values, temperature=0.7))
    assert np.array_equal(steps[:, 0], row.values)
    assert arrays["steps"].rows == row.labels
    assert arrays["summary"].data[0, 1] == compute.entropy(probs)


def test_calculator_shows_the_articles_hand_computation():
    row = ScoreRow()
    r = CalculatorModel().result(row)
    assert np.round(r.raw_exps, 3).tolist() == [7.389, 2.718, 1.649, 0.368]
    assert np.round(r.steps.probs, 3).tolist() == [0.609, 0.224, 0.136, 0.030]
    assert r.steps.probs.sum() == pytest.approx(1.0, abs=1e-15)
    row.set_values([2, 1, 0.1])
    r = CalculatorModel().result(row)
    # The article adds the rounded terms, 7.389 + 2.718 + 1.105 = 11.212; the exact sum is 11.2125...
    assert round(float(np.round(r.raw_exps, 3).sum()), 3) == 11.212
    assert round(float(r.raw_exps.sum()), 4) == 11.2125
    assert np.round(r.steps.probs, 3).tolist() == [0.659, 0.242, 0.099]


def test_calculator_readouts_match_a_plain_loop():
    row = ScoreRow()
    r = CalculatorModel().result(row)
    p = [math.exp(v) / sum(math.exp(u) for u in row.values) for v in row.values]
    h = -sum(x * math.log(x) for x in p)
    assert r.entropy == pytest.approx(h, rel=1e-13)
    assert r.perplexity == pytest.approx(math.exp(h), rel=1e-13)
    assert r.argmax == 0
    assert r.max_weight == pytest.approx(max(p), rel=1e-13)


def test_calculator_special_values():
    row = ScoreRow()
    row.set_values([1.0, -math.inf, 0.0])
    r = CalculatorModel().result(row)
    assert r.steps.probs[1] == 0.0
    row.set_values([1.0, math.nan])
    r = CalculatorModel().result(row)
    assert np.isnan(r.steps.probs).all()
    assert r.argmax is None
    assert math.isnan(r.max_weight)


@pytest.mark.parametrize(
    ("t", "percent"),
    [(0.5, [98.4, 1.5, 0.1]), (1.0, [86.5, 10.6, 2.9]), (2.0, [65.2, 22.8, 11.9])],
)
def test_temperature_reproduces_the_articles_numbers(t, percent):
    row = ScoreRow()
    row.set_values([5.2, 3.1, 1.8])
    r = TemperatureModel(temperature=t).result(row)
    assert np.round(100 * r.probs, 1).tolist() == percent
    assert np.round(100 * r.probs_t1, 1).tolist() == [86.5, 10.6, 2.9]


def test_temperature_arrays_are_compute_to_the_bit():
    row = ScoreRow()
    row.set_values([5.2, 3.1, 1.8])
    model = TemperatureModel(temperature=0.5, scale=1.5)
    a = model.arrays(row)
    logits = row.values * 1.5
    assert np.array_equal(a["probs"].data[:, 0], logits)
    assert np.array_equal(a["probs"].data[:, 1], compute.softmax(logits, temperature=0.5))
    assert np.array_equal(a["probs"].data[:, 2], compute.softmax(logits))
    curve = a["entropy_curve"].data
    assert np.array_equal(curve[:, 0], CURVE_T)
    expected = [compute.entropy(compute.softmax(logits, temperature=t)) for t in CURVE_T]
    assert np.array_equal(curve[:, 1], expected)


def test_entropy_curve_runs_between_the_two_limits():
    row = ScoreRow()
    r = TemperatureModel().result(row)
    assert r.entropy_cold == 0.0
    assert r.entropy_hot == pytest.approx(math.log(4))
    h = r.curve_entropy
    assert np.all(np.diff(h) >= -1e-12)  # entropy never falls as T rises
    assert h[0] == pytest.approx(0.0, abs=1e-20)
    assert h[-1] == pytest.approx(math.log(4), rel=1e-3)
    row.set_values([2.0, 2.0, 0.0])
    assert TemperatureModel().result(row).entropy_cold == pytest.approx(math.log(2))


def test_entropy_curve_is_cached_until_the_scores_or_scale_change():
    row = ScoreRow()
    model = TemperatureModel()
    first = model.result(row).curve_entropy
    model.temperature = 3.0
    assert model.result(row).curve_entropy is first
    model.scale = 2.0
    assert model.result(row).curve_entropy is not first


# -- sessions ------------------------------------------------------------------------


def test_session_round_trip_keeps_every_value(tmp_path):
    lab = Lab()
    lab.scores.set_values([1.5, -math.inf, math.inf, math.nan], ["a", "b", "c", "d"])
    lab.models["temperature"].set_param("temperature", 0.37)
    lab.models["temperature"].set_param("scale", 2.5)
    lab.models["calculator"].set_param("temperature", 4.0)
    path = tmp_path / "s.json"
    lab.session("temperature").save(path)
    json.loads(path.read_text())  # standard JSON: no bare NaN/Infinity

    other = Lab()
    session = Session.load(path)
    other.restore(session)
    assert session.current_view == "temperature"
    assert other.scores.labels == ("a", "b", "c", "d")
    v = other.scores.values
    assert v[0] == 1.5
    assert v[1] == -math.inf
    assert v[2] == math.inf
    assert math.isnan(v[3])
    assert other.models["temperature"].to_dict() == {"temperature": 0.37, "scale": 2.5}
    assert other.models["calculator"].temperature == 4.0
    assert "seed" not in json.loads(path.read_text())  # Lab.seed is gone: nothing read it


def test_a_session_keeps_the_typed_sentence_and_the_edited_tables(tmp_path):
    lab = Lab()
    attention = lab.models["attention"]
    attention.sentence = "a typed sentence"
    attention.set_param("source", "tables")
    attention.tables = attention.tables.with_value("k", 1, 2, 7.25)
    path = tmp_path / "s.json"
    lab.session("attention").save(path)
    other = Lab()
    assert other.restore(Session.load(path)) == []
    m = other.models["attention"]
    assert m.sentence == "a typed sentence"
    assert m.source == "tables"
    for which in ("q", "k", "v"):
        np.testing.assert_array_equal(getattr(m.tables, which), getattr(attention.tables, which))
    assert m.tables.k[1, 2] == 7.25
    assert m.result().core.k[0, 1, 2] == 7.25  # the restored tables are what is computed


def test_a_version_1_session_still_opens(tmp_path):
    path = tmp_path / "v1.json"
    path.write_text(json.dumps({
        "format": "softmax-lab-session", "version": 1, "seed": 7,
        "scores": [{"label": "a", "value": 3.0}, {"label": "b", "value": 1.0}],
        "views": {"temperature": {"temperature": 0.5}}, "current_view": "temperature",
    }))
    lab = Lab()
    assert lab.restore(Session.load(path)) == []
    assert lab.scores.values.tolist() == [3.0, 1.0]
    assert lab.models["temperature"].temperature == 0.5


@pytest.mark.parametrize(("state", "message"), [
    ({"attention": {"tables": {"q": [[1.0]], "k": [[1.0]]}}}, "exactly q, k and v"),
    ({"attention": {"tables": {"q": [[1.0, "x"]], "k": [[1.0]], "v": [[1.0]]}}}, "must hold numbers"),
    ({"attention": {"tables": {"q": [[1.0]] * 17, "k": [[1.0]] * 17, "v": [[1.0]] * 17}}}, "shape (17, 1)"),
    ({"attention": {"sentence": 5}}, "not text"),
    ({"attention": {"colour": "red"}}, "no saved state named colour"),
    ({"calculator": {"x": 1}}, "calculator keeps no saved state"),
])
def test_bad_saved_state_is_skipped_and_reported(tmp_path, state, message):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({
        "format": "softmax-lab-session", "version": 2,
        "scores": [{"label": "a", "value": 4.0}], "views": {}, "state": state,
    }))
    lab = Lab()
    before = lab.models["attention"].extra_state()
    skipped = lab.restore(Session.load(path))
    assert len(skipped) == 1
    assert message in skipped[0]
    assert lab.models["attention"].extra_state() == before
    assert lab.scores.values.tolist() == [4.0]  # the rest of the session still loads


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("not json", "not a JSON"),
        ('{"format": "other"}', "not a Softmax Lab session"),
        ('{"format": "softmax-lab-session", "version": 99, "scores": []}', "unsupported"),
        ('{"format": "softmax-lab-session", "version": 1, "scores": []}', "non-empty"),
        ('{"format": "softmax-lab-session", "version": 1, "scores": [{"value": "x"}]}', "expected a number"),
        ('{"format": "softmax-lab-session", "version": 1, "scores": [{"value": 1}], "seed": "x"}', "seed"),
    ],
)
def test_bad_session_files_change_nothing(tmp_path, doc, message):
    path = tmp_path / "bad.json"
    path.write_text(doc)
    lab = Lab()
    before = (lab.scores.entries, {n: m.to_dict() for n, m in lab.models.items()})
    with pytest.raises(SessionError, match=message):
        lab.restore(Session.load(path))
    assert (lab.scores.entries, {n: m.to_dict() for n, m in lab.models.items()}) == before


def test_a_setting_that_no_longer_fits_is_skipped_not_the_whole_session(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "format": "softmax-lab-session", "version": 1,
        "scores": [{"label": "a", "value": 5.0}, {"label": "b", "value": 1.0}],
        "views": {"temperature": {"temperature": -1, "scale": 2.0, "heat": 3},
                  "gone": {"x": 1}},
    }))
    lab = Lab()
    skipped = lab.restore(Session.load(path))
    assert lab.scores.values.tolist() == [5.0, 1.0]  # the scores are not lost
    assert lab.models["temperature"].scale == 2.0
    assert lab.models["temperature"].temperature == 1.0  # kept
    assert len(skipped) == 3
    assert any("temperature must be" in s for s in skipped)
    assert any("no parameter 'heat'" in s for s in skipped)
    assert any("no view 'gone'" in s for s in skipped)


def test_every_registered_view_has_texts_and_a_model():
    from gui.model.texts import tr

    names = [spec.name for spec in registry.VIEWS]
    assert names[:2] == ["calculator", "temperature"]
    assert len(set(names)) == len(names)
    for spec in registry.VIEWS:
        assert spec.model.name == spec.name
        assert tr(f"view.{spec.name}.explain").count(".") >= 3
        for p in spec.model.params():
            assert tr(f"param.{p}.label")
            assert tr(f"param.{p}.tooltip")


def test_default_scores_constant_is_not_shared_mutable():
    a, b = ScoreRow(), ScoreRow()
    a.set_value(0, 9.0)
    assert b.entries == DEFAULT_SCORES
    assert isinstance(DEFAULT_SCORES[0], Score)


def test_texts_merge_one_file_per_view_and_fall_back_to_english(monkeypatch):
    from gui.model import texts
    from resources import RESOURCES

    files = sorted((RESOURCES / "texts" / "en").glob("*.json"))
    assert {f.stem for f in files} >= {"app", "calculator", "temperature"}
    total = sum(len(json.loads(f.read_text())) for f in files)
    assert len(texts._table("en")) == total  # no key lost or repeated
    monkeypatch.setenv("SOFTMAX_LAB_LANG", "xx")  # a language with no files yet
    assert texts.tr("view.calculator.title") == "Calculator"
    with pytest.raises(KeyError):
        texts.tr("no.such.key")


def test_path_parameters_take_file_names_and_reject_other_values():
    from dataclasses import dataclass
    from typing import ClassVar

    from psygnal import evented

    from gui.model.base import ViewModel, path_param

    @evented
    @dataclass
    class Files(ViewModel):
        name: ClassVar[str] = "files"
        file: str = path_param()

    m = Files()
    spec = m.params()["file"]
    assert spec.kind == "path"
    assert spec.default == ""
    m.set_param("file", ROOT / "README.md")
    assert m.file == str(ROOT / "README.md")
    assert m.to_dict() == {"file": str(ROOT / "README.md")}
    with pytest.raises(ValueError, match="must be a file path"):
        m.set_param("file", 3.0)


def test_export_array_can_carry_the_full_array_for_the_npz(tmp_path):
    from gui.export import _npz_writer, read_npz

    stack = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    a = ExportArray(stack[0], ("a", "b", "c", "d"), npz_data=stack)
    target = tmp_path / "x.npz"
    _npz_writer({"w": a})(target)
    assert np.array_equal(read_npz(target)["w"], stack)
    with pytest.raises(ValueError, match="full array"):
        ExportArray(stack[0], ("a", "b", "c", "d"), npz_data=stack[0, 0])
