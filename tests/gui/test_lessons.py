"""The Lessons panel, and lessons headless: every quoted number is in the exported arrays.

One window serves the panel tests of this module (building it is the slow
part); the first-launch tests make their own, with their own settings.
"""

import numpy as np
import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication

from gui import cli, entry, lessons, screen_fit
from gui.app import MainWindow
from gui.model import lessons as L
from gui.model.lab import Lab
from gui.model.texts import tr
from tests.conftest import run_main

STEPS = [s for lesson in L.lessons() if L.complete(lesson) for s in lesson.steps]
DEMOS = L.lessons()[0]


def settle(rounds: int = 3) -> None:
    for _ in range(rounds):
        QApplication.processEvents()


# -- headless ------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", [s for s in STEPS if s.checks], ids=lambda s: s.name)
def test_every_number_a_step_quotes_is_in_its_export(step, tmp_path, capsys, qapp):
    """`export --lesson` (in-process) writes the step's view in the step's state; each check holds there."""
    assert cli.run_export(["--lesson", step.name, "--arrays-only", "--out", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()
    npz = tmp_path / f"{step.view}.npz"
    assert str(npz) in written
    with np.load(npz, allow_pickle=False) as arrays:
        for check in step.checks:
            got = float(arrays[check.array][check.index])
            assert round(got * check.scale, check.decimals) == check.value, (check, got)


def test_export_lesson_writes_the_same_files_as_view(tmp_path, capsys, qapp):
    step = L.find("demos.cold")  # temperature view, T = 0.1
    assert cli.run_export(["--lesson", step.name, "--arrays-only", "--out", str(tmp_path / "a")]) == 0
    assert cli.run_export(["--view", "temperature", "--scores", "2,1,0.5,-1", "--temperature", "0.1",
                           "--arrays-only", "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    with np.load(tmp_path / "a" / "temperature.npz") as a, np.load(tmp_path / "b" / "temperature.npz") as b:
        assert a["probs"].tolist() == b["probs"].tolist()


def test_an_unknown_step_exits_2_naming_the_closest(tmp_path, capsys):
    assert entry.main(["export", "--lesson", "demos.gradiant", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "no lesson step 'demos.gradiant'" in err[0] and "did you mean demos.gradient?" in err[0]
    assert list(tmp_path.iterdir()) == []


def test_lessons_lists_every_step_in_order(capsys):
    assert entry.main(["lessons"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{s.name}  {tr(s.key('title'))}" for s in STEPS]
    assert lines[0] == "demos.calculator  Softmax by hand"


def test_lessons_in_chinese_headless():
    done = run_main("--lang", "zh", "lessons")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("demos.calculator  ") and "softmax" in first and "Softmax by hand" not in first


# -- the panel ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def window(qapp, tmp_path_factory):
    w = MainWindow(settings_dir=tmp_path_factory.mktemp("lessons-window"), restore=False)
    w.resize(1260, 690)
    w.show()
    settle()
    yield w
    w.close()
    w.deleteLater()
    settle()


@pytest.fixture
def panel(window, qtbot):
    panel = window.lessons
    panel.open()
    panel.start("demos")
    settle()
    return panel


def state_of(lab: Lab, view: str):
    s = lab.session(view)
    return s.scores, s.views[view], lab.models[view].extra_state()


def wanted(step, lab: Lab):
    """The state the step asks for, checked on a fresh lab with the same scores (an independent apply)."""
    other = Lab()
    other.scores.set_entries(lab.scores.entries)
    other.restore(L.step_session(step, other))
    return state_of(other, step.view)


def test_next_and_back_put_each_step_in_its_exact_state(window, panel, qtbot):
    n = len(DEMOS.steps)
    for k, step in enumerate(DEMOS.steps):
        assert panel.step is step
        assert window.current_name == step.view
        assert state_of(window.lab, step.view) == wanted(step, window.lab), step.name
        assert panel.step_of.text() == tr("lessons.step_of", k=k + 1, n=n)
        assert panel.card.title.text() == tr(step.key("title"))
        assert panel.back_button.isEnabled() == (k > 0)
        if k + 1 < n:
            window.lab.models[step.view].reset()  # the user wanders off; Next puts the next step exactly
            qtbot.mouseClick(panel.next_button, Qt.MouseButton.LeftButton)
    assert panel.next_button.text() == tr("lessons.done")
    qtbot.mouseClick(panel.back_button, Qt.MouseButton.LeftButton)
    assert panel.step is DEMOS.steps[-2]
    assert state_of(window.lab, panel.step.view) == wanted(panel.step, window.lab)
    panel.next()
    panel.next()  # Done: back to the list, the state kept
    assert panel.pages.currentIndex() == 0
    assert state_of(window.lab, "attention") == wanted(DEMOS.steps[-1], window.lab)


def test_entering_a_step_is_one_undo_step_and_undo_returns_to_it(window, panel):
    stack = window.undo_stack
    panel.go(DEMOS.steps.index(L.find("demos.gap-zero")))
    panel.go(DEMOS.steps.index(L.find("demos.gap-one")))
    step = panel.step
    assert stack.undoText() == f"lesson: {tr(step.key('title'))}"
    at_step = state_of(window.lab, "temperature")
    window.lab.models["temperature"].set_param("temperature", 3.0)  # the user's own change
    window.lab.scores.set_value(1, 5.0)
    assert state_of(window.lab, "temperature") != at_step
    stack.undo()
    stack.undo()
    assert state_of(window.lab, "temperature") == at_step
    assert stack.undoText() == f"lesson: {tr(step.key('title'))}"
    before = stack.index()
    stack.undo()  # the whole step at once: back to the step before it (gap-zero's [0, 0, 0, 0])
    assert stack.index() == before - 1
    assert window.lab.scores.values.tolist() == [0, 0, 0, 0]


def test_leaving_a_lesson_keeps_what_the_user_changed(window, panel, qtbot):
    window.lab.models["calculator"].set_param("temperature", 2.5)
    qtbot.mouseClick(panel.all_button, Qt.MouseButton.LeftButton)
    assert panel.pages.currentIndex() == 0
    assert window.lab.models["calculator"].temperature == 2.5
    assert panel.list.currentItem().data(Qt.ItemDataRole.UserRole) == "demos"


def test_a_choice_reveals_right_or_wrong_the_answer_and_why(panel, qtbot):
    card = panel.card
    q = panel.step.question
    assert not card.why.isVisibleTo(panel) and card.show_answer.isVisibleTo(panel)
    visible = [b for b in card.choices if b.isVisibleTo(panel)]
    assert len(visible) == q.choices
    wrong = next(i for i in range(1, q.choices + 1) if i != q.answer)
    qtbot.mouseClick(card.choices[wrong - 1], Qt.MouseButton.LeftButton)
    letter = "ABCD"[q.answer - 1]
    assert card.verdict.text() == tr("lessons.wrong", letter=letter)
    assert card.why.isVisibleTo(panel) and card.why.text() == tr(panel.step.key("why"))
    assert not card.show_answer.isVisibleTo(panel)
    assert card.choices[q.answer - 1].choice_text().startswith("✓ ")
    assert card.choices[wrong - 1].choice_text().startswith("✗ ")

    panel.next()  # a new step starts unanswered; the right choice says so
    card, q = panel.card, panel.step.question
    assert not card.why.isVisibleTo(panel)
    qtbot.mouseClick(card.choices[q.answer - 1], Qt.MouseButton.LeftButton)
    assert card.verdict.text() == tr("lessons.right")

    panel.next()  # "show the answer" reveals it without a choice
    card.show_answer.linkActivated.emit("#answer")
    assert card.verdict.text() == tr("lessons.answer", letter="ABCD"[panel.step.question.answer - 1])
    assert card.why.isVisibleTo(panel)


def test_the_panel_survives_a_language_switch_and_rebuilt_views(window, panel):
    panel.go(DEMOS.steps.index(L.find("demos.heatmap")))
    panel.card.choose(1)
    old_view = window.view("attention")
    window.set_language("zh")
    try:
        settle()
        step = panel.step
        assert panel.windowTitle() == "课程"
        assert panel.card.title.text() == "注意力热力图"
        assert panel.card.verdict.text() == "答对了。"  # the answer given is kept
        assert panel.next_button.text() == "完成"
        panel.back()  # the views were rebuilt: the panel finds the new ones by name
        assert window.current_name == "precision" and window.lab.models["precision"].scale == 500
        panel.go(DEMOS.steps.index(step))
        assert window.view("attention") is not old_view
        assert window.lab.models["attention"].query == 3
    finally:
        window.set_language("en")
    assert panel.card.title.text() == "The attention heatmap"


def test_tabs_are_selected_by_name(window):
    view = window.view("sampling")
    assert view.tab_names() == ("vocab", "gumbel", "router", "speculative")
    view.select_tab("router")
    assert view.tabs.currentWidget() is view.router_tab
    with pytest.raises(ValueError, match="no tab 'nope'"):
        view.select_tab("nope")
    assert window.view("calculator").tab_names() == ()
    step = next((s for s in STEPS if s.tab), None)
    if step is not None:  # a lesson step that names a tab shows it
        window.lessons.apply(step)
        view = window.view(step.view)
        assert view.tab_names()[view.tabs.currentIndex()] == step.tab


# -- first launch -------------------------------------------------------------------------------------
def test_first_launch_shows_the_panel_and_a_dismissal_is_remembered(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(screen_fit, "available_at", lambda point=None: QRect(0, 0, 1366, 736))
    settings = tmp_path / "cfg"
    w = MainWindow(settings_dir=settings, restore=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    panel = w.lessons
    assert panel.isVisible() and panel.pages.currentIndex() == 0
    assert w.dockWidgetArea(panel) == Qt.DockWidgetArea.RightDockWidgetArea
    assert panel.list.count() >= 1 and panel.list.item(0).text() == DEMOS.title
    # a laptop screen: the card takes the explanations' room, without changing the user's choice
    explanation = w.actions_by_key["action.explanation"]
    calc = w.show_view("calculator")
    assert not calc.explanation_shown and not explanation.isChecked() and w.explanation_shown
    panel.close()  # the panel's close button
    assert not panel.isVisible() and calc.explanation_shown and explanation.isChecked()
    assert w.settings.value(lessons.CLOSED_KEY, type=bool) is True
    w.close()

    again = MainWindow(settings_dir=settings, restore=False)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert not again.lessons.isVisible() and again.explanation_shown
    again.actions_by_key["action.lessons"].trigger()  # Help > Lessons
    assert again.lessons.isVisible()
    assert again.settings.value(lessons.CLOSED_KEY, type=bool) is False
    assert "action.lessons" in {k for k, a in again.actions_by_key.items() if a.shortcut().toString() == "F2"}
    again.close()


def test_unfolding_an_explanation_ends_the_hold(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(screen_fit, "available_at", lambda point=None: QRect(0, 0, 1366, 736))
    w = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(w)
    w.show()
    calc = w.show_view("calculator")
    assert not calc.explanation_shown
    calc.explanation.button.click()  # the user opens it: every view shows it, and views built later too
    assert calc.explanation_shown and w.actions_by_key["action.explanation"].isChecked()
    assert w.show_view("gradients").explanation_shown
    w.close()


def test_a_wide_screen_keeps_the_explanations(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(screen_fit, "available_at", lambda point=None: QRect(0, 0, 2560, 1400))
    w = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(w)
    w.show()
    assert w.lessons.isVisible() and w.show_view("calculator").explanation_shown
    w.close()


def test_dismissing_for_a_run_remembers_nothing(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(screen_fit, "available_at", lambda point=None: QRect(0, 0, 1366, 736))
    w = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(w)
    w.lessons.dismiss()
    w.show()
    assert not w.lessons.isVisible() and w.show_view("calculator").explanation_shown
    assert not w.settings.contains(lessons.CLOSED_KEY)
    w.close()
