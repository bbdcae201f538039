"""The Lessons panel: a dock on the right with the list of lessons and the card of the current step.

Entering a step (Start, Next, Back) applies it as one undo step: the step's
session (``gui.model.lessons.step_session``) is restored inside an undo
macro, so the recorder files every field it changes under one entry named
"lesson: <step title>", and Undo after the user's own changes returns to the
step's state.  Leaving a lesson changes nothing.  The panel holds no view:
it asks the window for the step's view by name each time (views are rebuilt
by a language switch), and :meth:`LessonsDock.retranslate` re-reads every
text it shows.  It is shown until the user closes it; closing is remembered
in the window's settings and Help > Lessons opens it again.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui import screen_fit
from gui.lesson_card import StepCard, plain
from gui.model import lessons as model
from gui.model.session import SessionError
from gui.model.texts import tr
from gui.views.base import BaseView

if TYPE_CHECKING:
    from gui.app import MainWindow

#: The settings key that remembers the user closed the panel.
CLOSED_KEY = "lessons/closed"
#: The panel's narrowest and first width.  The widest views take a 1260 px window with their
#: explanation, so on a screen narrower than FOLD_BELOW the panel takes the explanations' room.
MIN_WIDTH, FIRST_WIDTH = 200, 280
FOLD_BELOW = 1700


class LessonsDock(QDockWidget):
    """The lesson list and the step card, docked on the right of ``window``."""

    def __init__(self, window: MainWindow):
        super().__init__(window)
        self.window_ = window
        self.setObjectName("lessons_dock")
        self.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                         | QDockWidget.DockWidgetFeature.DockWidgetMovable)
        self.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.lesson_id: str | None = None
        self.index = 0
        self._error = ""
        self.holding = False  # the views' explanations are folded to give the panel room
        self._watched = None  # the View > Show Explanation action whose toggles end that

        self.pages = QStackedWidget()
        self.pages.addWidget(self._list_page())
        self.pages.addWidget(self._card_page())
        self.pages.setMinimumWidth(MIN_WIDTH)
        self.setWidget(self.pages)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self)
        window.resizeDocks([self], [FIRST_WIDTH], Qt.Orientation.Horizontal)
        window.stack.widgetAdded.connect(self._view_added)
        self.retranslate()
        shown = not window.settings.value(CLOSED_KEY, False, type=bool)
        self.setVisible(shown)
        if shown:
            self._take_room()

    # -- building ---------------------------------------------------------------------------
    def _list_page(self) -> QWidget:
        page = QWidget()
        self.intro = QLabel(wordWrap=True, objectName="lessons_intro")
        self.list = QListWidget(objectName="lessons_list")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)  # the summary under it has the whole title
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemActivated.connect(lambda _item: self.start())
        self.list.currentRowChanged.connect(lambda _row: self._sync_summary())
        self.summary = QLabel(wordWrap=True, objectName="lessons_summary")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.start_button = QPushButton(objectName="lessons_start")
        self.start_button.clicked.connect(lambda: self.start())
        lay = QVBoxLayout(page)
        lay.addWidget(self.intro)
        lay.addWidget(self.list, 1)
        lay.addWidget(self.summary)
        lay.addWidget(self.start_button)
        return page

    def _card_page(self) -> QWidget:
        page = QWidget()
        self.all_button = QToolButton(objectName="lessons_all")
        self.all_button.setArrowType(Qt.ArrowType.LeftArrow)
        self.all_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.all_button.clicked.connect(self.leave)
        self.lesson_title = QLabel(wordWrap=True, objectName="lessons_lesson_title")
        self.card = StepCard()
        self.scroll = QScrollArea(objectName="lessons_scroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.card)
        self.back_button = QPushButton(objectName="lessons_back")
        self.back_button.clicked.connect(self.back)
        self.next_button = QPushButton(objectName="lessons_next")
        self.next_button.clicked.connect(self.next)
        self.step_of = QLabel(objectName="lessons_step_of", alignment=Qt.AlignmentFlag.AlignCenter)
        nav = QHBoxLayout()
        nav.addWidget(self.back_button)
        nav.addStretch(1)
        nav.addWidget(self.next_button)
        lay = QVBoxLayout(page)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.all_button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addWidget(self.lesson_title)
        lay.addWidget(self.scroll, 1)
        lay.addWidget(self.step_of)
        lay.addLayout(nav)
        return page

    # -- the lessons ----------------------------------------------------------------------------
    def lessons(self) -> tuple[model.Lesson, ...]:
        """Every lesson; () with the reason kept for the list when a file cannot be read."""
        try:
            found = model.lessons()
        except model.LessonError as exc:
            self._error = tr("lessons.failed", error=exc)
            return ()
        self._error = ""
        return tuple(x for x in found if model.complete(x))  # a lesson still being written waits for its texts

    @property
    def lesson(self) -> model.Lesson | None:
        return next((x for x in self.lessons() if x.id == self.lesson_id), None)

    @property
    def step(self) -> model.Step | None:
        lesson = self.lesson
        return lesson.steps[self.index] if lesson is not None else None

    # -- moving through a lesson -------------------------------------------------------------------
    def start(self, lesson_id: str | None = None) -> None:
        """Open a lesson (the selected one by default) at its first step."""
        if lesson_id is None:
            item = self.list.currentItem()
            if item is None:
                return
            lesson_id = item.data(Qt.ItemDataRole.UserRole)
        self.lesson_id = lesson_id
        self.go(0)

    def go(self, index: int) -> None:
        """Enter step ``index`` of the open lesson: apply its exact state, show its card."""
        lesson = self.lesson
        if lesson is None:
            return
        self.index = max(0, min(index, len(lesson.steps) - 1))
        step = lesson.steps[self.index]
        self.apply(step)
        self.pages.setCurrentIndex(1)
        self._sync_card(keep_answer=False)
        self.scroll.verticalScrollBar().setValue(0)

    def next(self) -> None:
        lesson = self.lesson
        if lesson is not None and self.index + 1 < len(lesson.steps):
            self.go(self.index + 1)
        else:
            self.leave()

    def back(self) -> None:
        if self.index > 0:
            self.go(self.index - 1)

    def leave(self) -> None:
        """Back to the list; the views keep whatever the user changed."""
        self.pages.setCurrentIndex(0)
        self._select_row(self.lesson_id)

    def apply(self, step: model.Step) -> list[str]:
        """Put the window into ``step``'s state as one undo step; returns the settings that were skipped."""
        w = self.window_
        session = model.step_session(step, w.lab)
        skipped: list[str] = []
        if model.differs(session, w.lab):
            w.undo_stack.beginMacro(tr("lessons.undo", title=plain(step.title)))
            try:
                skipped = w.lab.restore(session)
            except SessionError as exc:  # validated lessons never get here; the view is still shown
                skipped = [str(exc)]
            finally:
                w.undo_stack.endMacro()
        view = w.show_view(step.view)
        if step.tab is not None:
            view.select_tab(step.tab)
        if skipped:
            w.show_status(tr("lessons.skipped", step=step.name, items="; ".join(skipped)))
        return skipped

    # -- showing and closing -------------------------------------------------------------------
    def open(self) -> None:
        """Show the panel (Help > Lessons) and forget that it was closed."""
        self.window_.settings.setValue(CLOSED_KEY, False)
        self._take_room()
        self.show()
        self.raise_()
        (self.list if self.pages.currentIndex() == 0 else self.next_button).setFocus()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.window_.settings.setValue(CLOSED_KEY, True)
        super().closeEvent(event)
        self._give_room()

    def dismiss(self) -> None:
        """Hide the panel for this run only (nothing remembered): the window as without lessons."""
        self.hide()
        self._give_room()

    # -- room: on a narrow screen the card takes the place of the views' explanations ---------------
    def _take_room(self) -> None:
        """Hold every view's explanation folded while the panel is open on a narrow screen.

        The user's saved choice is not touched: closing the panel shows them
        again as that choice says, and unfolding one (its button or View >
        Show Explanation) ends the hold at once.
        """
        w = self.window_
        if self.holding or not w.explanation_shown or screen_fit.available_at().width() >= FOLD_BELOW:
            return
        self.holding = True
        for view in w.views.values():
            view.set_explanation_shown(False)
        self._sync_explanation_action()

    def _give_room(self) -> None:
        if not self.holding:
            return
        self.holding = False
        w = self.window_
        for view in w.views.values():
            view.set_explanation_shown(w.explanation_shown)
        self._sync_explanation_action()

    def _view_added(self, index: int) -> None:
        view = self.window_.stack.widget(index)
        if self.holding and isinstance(view, BaseView):  # built later, or again after a language switch
            view.set_explanation_shown(False)

    def _sync_explanation_action(self) -> None:
        action = getattr(self.window_, "actions_by_key", {}).get("action.explanation")
        if action is None:
            return
        with QSignalBlocker(action):
            action.setChecked(self.window_.explanation_shown and not self.holding)
        if action is not self._watched:  # the menus are rebuilt by a language switch
            self._watched = action
            action.toggled.connect(self._explanation_toggled)

    def _explanation_toggled(self, shown: bool) -> None:
        if shown:
            self.holding = False  # the user asked for the explanations: they win

    def retranslate(self) -> None:
        """Read every text the panel shows again (after a language switch)."""
        self.setWindowTitle(tr("lessons.title"))
        self.intro.setText(tr("lessons.intro"))
        self.start_button.setText(tr("lessons.start"))
        self.start_button.setToolTip(tr("lessons.start.tooltip"))
        self.all_button.setText(tr("lessons.all"))
        self.all_button.setToolTip(tr("lessons.all.tooltip"))
        self.back_button.setText(tr("lessons.back"))
        self.back_button.setToolTip(tr("lessons.back.tooltip"))
        self.list.setToolTip(tr("lessons.list.tooltip"))
        row = self.list.currentRow()
        self.list.clear()
        for lesson in self.lessons():
            item = QListWidgetItem(lesson.title)
            item.setData(Qt.ItemDataRole.UserRole, lesson.id)
            item.setToolTip(lesson.summary)
            self.list.addItem(item)
        self.list.setCurrentRow(max(row, 0) if self.list.count() else -1)
        self._sync_summary()
        if self.step is not None:
            self._sync_card(keep_answer=True)
        self._sync_explanation_action()

    def _sync_summary(self) -> None:
        item = self.list.currentItem()
        lesson = next((x for x in self.lessons() if item is not None and x.id == item.data(Qt.ItemDataRole.UserRole)),
                      None)
        if lesson is None:
            self.summary.setText(html.escape(self._error))
        else:
            self.summary.setText(f"<b>{html.escape(lesson.title)}</b><br>{html.escape(lesson.summary)}"
                                 f"<br>{html.escape(tr('lessons.steps', n=len(lesson.steps)))}")
        self.start_button.setEnabled(lesson is not None)

    def _select_row(self, lesson_id: str | None) -> None:
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole) == lesson_id:
                self.list.setCurrentRow(row)

    def _sync_card(self, *, keep_answer: bool) -> None:
        lesson, step = self.lesson, self.step
        if lesson is None or step is None:
            return
        n = len(lesson.steps)
        self.lesson_title.setText(lesson.title)
        self.card.show_step(step, keep_answer=keep_answer)
        self.step_of.setText(tr("lessons.step_of", k=self.index + 1, n=n))
        self.back_button.setEnabled(self.index > 0)
        last = self.index + 1 >= n
        self.next_button.setText(tr("lessons.done" if last else "lessons.next"))
        self.next_button.setToolTip(tr("lessons.done.tooltip" if last else "lessons.next.tooltip"))
