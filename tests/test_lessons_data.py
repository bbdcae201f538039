"""Lesson files (resources/lessons/*.json): every one validates, a broken one is reported, steps apply exactly.

Qt-free: the numbers each step quotes are checked against the headless
export in tests/gui/test_lessons.py.
"""

import json
import re
import shutil

import pytest

from gui import registry
from gui.model import lessons as L
from gui.model.lab import Lab
from resources import RESOURCES

ALL = L.lessons()


def test_the_lessons_are_listed_in_their_order_and_demos_comes_first():
    assert ALL and ALL[0].id == "demos"
    assert [lesson.order for lesson in ALL] == sorted(lesson.order for lesson in ALL)
    names = [s.name for s in L.steps()]
    assert len(names) == len(set(names))
    assert names[0] == "demos.calculator"


@pytest.mark.parametrize("lesson", ALL, ids=lambda lesson: lesson.id)
def test_every_lesson_validates(lesson):
    assert L.validate(lesson) == []


def test_demos_follows_the_article_with_a_question_and_checks_on_every_step():
    demos = L.lessons()[0]
    assert demos.article == "000_fdc74bae45bcbb89.txt"
    views = [s.view for s in demos.steps]
    # the article's order: calculator, amplification, temperature, normalisations, gradient, stability, heatmap
    order = ["calculator", "temperature", "attention", "normalizers", "gradients", "precision", "attention"]
    assert [v for i, v in enumerate(views) if i == 0 or v != views[i - 1]] == order
    for step in demos.steps:
        assert step.question is not None and 2 <= step.question.choices <= 4, step.name
        assert step.checks, step.name


# -- a broken lesson is reported ------------------------------------------------------------------
@pytest.fixture
def broken(tmp_path):
    """A copy of demos (files and texts) in a scratch folder, for the test to break."""
    lessons, texts = tmp_path / "lessons", tmp_path / "texts"
    lessons.mkdir()
    for lang in ("en", "zh"):
        (texts / lang).mkdir(parents=True)
        shutil.copy(RESOURCES / "texts" / lang / "lesson_demos.json", texts / lang)
    doc = json.loads((RESOURCES / "lessons" / "demos.json").read_text(encoding="utf-8"))

    def write(change=None, zh_drop=()):
        if change:
            change(doc["steps"])
        (lessons / "demos.json").write_text(json.dumps(doc), encoding="utf-8")
        zh = texts / "zh" / "lesson_demos.json"
        table = json.loads(zh.read_text(encoding="utf-8"))
        for key in zh_drop:
            del table[key]
        zh.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
        return L.validate(L.load(lessons / "demos.json"), texts)

    return write


def test_the_copy_is_good_before_it_is_broken(broken):
    assert broken() == []


def test_a_broken_lesson_lists_every_problem(broken):
    def change(steps):
        steps[0]["params"] = {"temperatur": 1.0}  # unknown parameter
        steps[1]["params"] = {"temperature": 1000.0}  # outside 0.01..100
        steps[2]["checks"][0]["array"] = "weights"  # the temperature view exports no "weights"
        steps[3]["checks"][0]["index"] = [0, 99]  # outside the summary row
        steps[4]["labels"] = ["a", "b"]  # 2 labels for 4 scores
        steps[5]["tab"] = "vocab"  # the temperature view has no tabs
        steps[6]["question"] = {"choices": 3, "answer": 4}
        steps[7]["view"] = "no-such-view"
        steps[8]["params"] = {"alpha": "high"}  # a number parameter given a name
        steps[9]["state"] = {"shown": ["softmax", "maxsoft"]}  # extra state the model refuses

    problems = broken(change, zh_drop=["lesson.demos.gap-one.why"])
    text = "\n".join(problems)
    expected = [
        "demos.calculator: the calculator view has no parameter 'temperatur'",
        "demos.gap-zero: temperature must be between 0.01 and 100, got 1000",
        "demos.gap-one: check 1: the temperature view exports no array 'weights'",
        "demos.gap-large: check 1: index [0, 99] does not fit summary",
        "demos.cold: 2 labels for 4 scores",
        "demos.hot: the temperature view has no tab 'vocab' (tabs: none)",
        "demos.sqrt-dk: a question needs 2 to 4 choices and an answer among them (choices 3, answer 4)",
        "demos.direct-negative: unknown view 'no-such-view'",
        "demos.direct-zero: alpha must be a number, got 'high'",
        "demos.hardmax-sparsemax: state: normalizers: 'shown' must name some of",
        "zh: text 'lesson.demos.gap-one.why' is missing or empty",
    ]
    for line in expected:
        assert line in text, f"{line!r} not reported in:\n{text}"
    assert len(problems) == len(expected), text


def test_a_text_no_step_uses_and_an_empty_one_are_reported(broken, tmp_path):
    zh = tmp_path / "texts" / "zh" / "lesson_demos.json"
    table = json.loads(zh.read_text(encoding="utf-8"))
    table["lesson.demos.calculator.choice.4"] = "a fourth choice for a question of three"
    table["lesson.demos.cold.notice"] = "  "
    zh.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    problems = broken()
    assert "zh: text key(s) no step uses: lesson.demos.calculator.choice.4" in problems
    assert "zh: text 'lesson.demos.cold.notice' is missing or empty" in problems


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe not utf-8", "demos.json: not UTF-8 text"),
    (b"{", "demos.json: not a JSON file"),
    (b'{"format": "softmax-lab-session"}', "demos.json: not a Softmax Lab lesson"),
    (b'{"format": "softmax-lab-lesson", "id": "other", "order": 1, "steps": [{"id": "a", "view": "calculator"}]}',
     "demos.json: the lesson 'other' must be in other.json"),
    (b'{"format": "softmax-lab-lesson", "id": "demos", "order": 1, "steps": [{"id": "one", "view": "calculator", '
     b'"scores": [1, "two"]}]}', "demos.json: step 'one': scores[1]: expected a number"),
    (b'{"format": "softmax-lab-lesson", "id": "demos", "order": 1, "steps": [{"id": "one", "view": "calculator", '
     b'"checks": [{"array": "probs", "index": [0], "value": 1}]}]}',
     "demos.json: step 'one': check 1: 'decimals' must be"),
    (b'{"format": "softmax-lab-lesson", "id": "demos", "order": 1, "steps": [{"id": "one", "view": "calculator", '
     b'"colour": "red"}]}', "demos.json: step 'one': unknown field(s) colour"),
])
def test_a_file_that_cannot_be_read_names_itself_and_the_step(tmp_path, content, message):
    path = tmp_path / "demos.json"
    path.write_bytes(content)
    with pytest.raises(L.LessonError, match="^" + re.escape(message)):
        L.load(path)


def test_a_lesson_file_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "demos.json"
    path.write_bytes(b" " * (L.MAX_BYTES + 1))
    with pytest.raises(L.LessonError, match="demos.json"):
        L.load(path)


# -- finding and applying a step ------------------------------------------------------------------
def test_find_names_the_closest_step():
    assert L.find("demos.calculator").view == "calculator"
    with pytest.raises(KeyError, match="did you mean demos.calculator"):
        L.find("demos.calculater")


def test_a_step_puts_its_view_into_its_exact_state_and_leaves_the_others_alone(lab):
    step = L.find("demos.cold")  # temperature view, T = 0.1, the article's row
    lab.scores.set_values([5, 4, 3])
    lab.models["temperature"].set_param("scale", 3.0)  # not named by the step: back to its default
    lab.models["gradients"].set_param("temperature", 2.0)  # another view: untouched
    lab.models["normalizers"].set_shown(["softmax"])
    assert lab.restore(L.step_session(step, lab)) == []
    assert lab.scores.values.tolist() == [2, 1, 0.5, -1]
    assert lab.scores.labels == ("Token 1", "Token 2", "Token 3", "Token 4")
    params = registry.get("temperature").model.params()
    assert lab.models["temperature"].to_dict() == {**{n: p.default for n, p in params.items()}, "temperature": 0.1}
    assert lab.models["gradients"].temperature == 2.0
    assert lab.models["normalizers"].shown == ("softmax",)

    # a step's extra state is exact too: the normalizers step shows three methods, a later one all
    lab.restore(L.step_session(L.find("demos.hardmax-sparsemax"), lab))
    assert lab.models["normalizers"].shown == ("softmax", "hardmax", "sparsemax")
    lab.restore(L.step_session(L.find("demos.direct-zero"), lab))
    assert lab.models["normalizers"].shown == Lab().models["normalizers"].shown


def test_a_step_without_scores_keeps_the_users_row(lab):
    lab.scores.set_values([1, 2], ["x", "y"])
    step = L.find("demos.heatmap")
    assert step.scores is None
    lab.models["attention"].set_sentence("a b c")
    lab.restore(L.step_session(step, lab))
    assert lab.scores.labels == ("x", "y")
    assert lab.models["attention"].sentence == Lab().models["attention"].sentence  # the default sentence
    assert (lab.models["attention"].source, lab.models["attention"].query) == ("sentence", 3)
