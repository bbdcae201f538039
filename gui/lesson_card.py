"""The card of one lesson step: what to do, a question to answer first, what to notice.

The card only shows texts (read with ``tr`` each time it is filled, so a
language switch is one :meth:`StepCard.show_step` away) and keeps which
choice was picked; applying the step is the Lessons panel's job.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from gui.model.lessons import Step
from gui.model.texts import tr

LETTERS = "ABCD"


def plain(html: str) -> str:
    """The text of a lesson's rich text (for accessible names and tooltips)."""
    return QTextDocumentFragment.fromHtml(html).toPlainText()


def _label(object_name: str, *, heading: bool = False) -> QLabel:
    label = QLabel()
    label.setObjectName(object_name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)  # the lessons' own texts: <sup>, <sub>, <b>
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if heading:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


class ChoiceButton(QPushButton):
    """A push button whose text wraps over as many lines as the panel's width needs."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 5, 8, 5)
        lay.addWidget(self.label)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)

    def set_choice(self, text: str) -> None:
        self.label.setText(text)
        self.setAccessibleName(plain(text))
        self.updateGeometry()

    def choice_text(self) -> str:
        return plain(self.label.text())

    def sizeHint(self):  # noqa: N802 - Qt's name
        return self.layout().sizeHint()

    def minimumSizeHint(self):  # noqa: N802 - Qt's name
        return self.layout().minimumSize()


class StepCard(QWidget):
    """One step's texts; the question's choices reveal the answer and why when one is picked."""

    answered = Signal(int)  # the choice picked (1-based), or 0 when the answer was shown without one

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("lesson_card")
        self.step: Step | None = None
        self.chosen: int | None = None
        self.revealed = False
        self.title = _label("lesson_step_title")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title.setFont(font)
        self.where = _label("lesson_step_view")
        self.do_heading = _label("lesson_do_heading", heading=True)
        self.do = _label("lesson_do")
        self.question_heading = _label("lesson_question_heading", heading=True)
        self.question = _label("lesson_question")
        self.choices = [ChoiceButton() for _ in LETTERS]
        for i, button in enumerate(self.choices, 1):
            button.setObjectName(f"lesson_choice_{i}")
            button.clicked.connect(lambda _=False, i=i: self.choose(i))
        self.show_answer = QLabel()
        self.show_answer.setObjectName("lesson_show_answer")
        self.show_answer.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse
                                                 | Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        self.show_answer.linkActivated.connect(lambda _link: self.reveal())
        self.verdict = _label("lesson_verdict", heading=True)
        self.why = _label("lesson_why")
        self.notice_heading = _label("lesson_notice_heading", heading=True)
        self.notice = _label("lesson_notice")

        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        for w in (self.title, self.where):
            lay.addWidget(w)
        lay.addSpacing(4)
        for w in (self.do_heading, self.do, self.question_heading, self.question, *self.choices,
                  self.show_answer, self.verdict, self.why):
            lay.addWidget(w)
        lay.addSpacing(4)
        lay.addWidget(self.notice_heading)
        lay.addWidget(self.notice)
        lay.addStretch(1)

    # -- filling ------------------------------------------------------------------------------
    def show_step(self, step: Step, *, keep_answer: bool = False) -> None:
        """Show ``step``'s texts in the current language (a new step starts unanswered)."""
        from gui import registry

        if not keep_answer or step is not self.step:
            self.chosen, self.revealed = None, False
        self.step = step
        self.title.setText(step.title)
        self.where.setText(tr("lessons.in_view", view=registry.get(step.view).title))
        self.do_heading.setText(tr("lessons.do"))
        self.do.setText(step.text("do"))
        self.notice_heading.setText(tr("lessons.notice"))
        self.notice.setText(step.text("notice"))
        q = step.question
        for w in (self.question_heading, self.question, self.show_answer):
            w.setVisible(q is not None)
        self.question_heading.setText(tr("lessons.question"))
        self.show_answer.setText(f'<a href="#answer">{tr("lessons.show_answer")}</a>')
        if q is not None:
            self.question.setText(step.text("question"))
        for i, button in enumerate(self.choices, 1):
            shown = q is not None and i <= q.choices
            button.setVisible(shown)
            if shown:
                button.set_choice(f"{LETTERS[i - 1]}. {step.text(f'choice.{i}')}")
        self._sync_answer()

    # -- answering ----------------------------------------------------------------------------
    @property
    def answer_shown(self) -> bool:
        return self.chosen is not None or self.revealed

    def choose(self, choice: int) -> None:
        """Pick choice ``choice`` (1-based): the card says right or wrong, and why."""
        if self.step is None or self.step.question is None or self.answer_shown:
            return
        self.chosen = choice
        self._sync_answer()
        self.answered.emit(choice)

    def reveal(self) -> None:
        """Show the answer and why without picking a choice."""
        if self.step is None or self.step.question is None or self.answer_shown:
            return
        self.revealed = True
        self._sync_answer()
        self.answered.emit(0)

    def _sync_answer(self) -> None:
        q = self.step.question if self.step is not None else None
        shown = q is not None and self.answer_shown
        for w in (self.verdict, self.why):
            w.setVisible(shown)
        if q is not None:
            self.show_answer.setVisible(not shown)
        if not shown:
            for button in self.choices:
                button.setEnabled(True)
            return
        letter = LETTERS[q.answer - 1]
        if self.chosen is None:
            verdict = tr("lessons.answer", letter=letter)
        elif self.chosen == q.answer:
            verdict = tr("lessons.right")
        else:
            verdict = tr("lessons.wrong", letter=letter)
        self.verdict.setText(verdict)
        self.why.setText(self.step.text("why"))
        for i, button in enumerate(self.choices[: q.choices], 1):
            mark = "✓ " if i == q.answer else ("✗ " if i == self.chosen else "")
            button.set_choice(f"{mark}{LETTERS[i - 1]}. {self.step.text(f'choice.{i}')}")
            button.setEnabled(i in (q.answer, self.chosen))
