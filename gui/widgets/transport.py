"""Transport controls over one integer parameter of a view model: a step through a run.

:class:`Transport` shows reset, back, play/pause, forward and end buttons, a
step slider with a "step i of n" label and a speed (steps per second).  It is
bound to the parameter like every other control (through
:class:`gui.widgets.sliders.Binding`): the model's value is shown with the
slider's signals blocked, every move goes through ``model.set_param``, and the
range is ``model.bounds(name)``, read again after every change of the model
(and on :meth:`Transport.follow`, for ranges that depend on data the model
reads).  A value beyond the range shows as its end: the model may hold "past
the end" to mean "the end".

Play steps forward on a timer and stops at the end; from the end it starts
over.  :meth:`Transport.stop` pauses (a window calls it on close).  The texts
are ``PREFIX.reset``, ``PREFIX.play`` and so on, so each view keeps its own
wording (see ``resources/texts/en/online.json``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gui.model.base import ViewModel
from gui.model.texts import tr
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import Binding

#: Steps per second when playing, and its range (1 .. MAX_SPEED).
DEFAULT_SPEED = 2
MAX_SPEED = 60


def _row(*widgets: QWidget | None) -> QWidget:
    """Widgets side by side; None is a stretch."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        if w is None:
            lay.addStretch(1)
        else:
            lay.addWidget(w, 1 if isinstance(w, QSlider) else 0)
    return row


class Transport(QGroupBox):
    """Step through a run: buttons, a step slider, a speed, and a timer that plays.

    ``model.NAME`` is the step (an integer parameter); ``prefix`` picks the
    texts.  ``message`` carries a refused value's reason, as the other
    controls' does.
    """

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, *, prefix: str, parent=None):
        super().__init__(tr(f"{prefix}.transport.title"), parent)
        self.model, self.name, self.prefix = model, name, prefix
        self._lo, self._hi = (int(b) for b in model.bounds(name))
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

        self.reset_button = self._button("reset", lambda: self.go_to(self._lo))
        self.back_button = self._button("back", lambda: self.go_to(self.step - 1))
        self.play_button = self._button("play", None)
        self.forward_button = self._button("forward", lambda: self.go_to(self.step + 1))
        self.end_button = self._button("end", lambda: self.go_to(self._hi))
        self.play_button.setCheckable(True)
        self.play_button.setMinimumWidth(max(self.play_button.fontMetrics().horizontalAdvance(tr(f"{prefix}.{k}"))
                                             for k in ("play", "pause")) + 16)
        self.play_button.toggled.connect(self._play_toggled)

        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setToolTip(tr(f"{prefix}.step.tooltip"))
        self.slider.valueChanged.connect(self.go_to)
        self.label = QLabel()
        self.label.setMinimumWidth(90)
        self.label.setToolTip(tr(f"{prefix}.step.tooltip"))

        self.speed = QSpinBox()
        self.speed.setRange(1, MAX_SPEED)
        self.speed.setValue(DEFAULT_SPEED)
        self.speed.setSuffix(tr(f"{prefix}.speed.suffix"))
        self.speed.setToolTip(tr(f"{prefix}.speed.tooltip"))
        self.speed.valueChanged.connect(self._speed_changed)
        self._speed_changed(DEFAULT_SPEED)
        speed_label = QLabel(tr(f"{prefix}.speed"))
        speed_label.setToolTip(tr(f"{prefix}.speed.tooltip"))

        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(_row(self.reset_button, self.back_button, self.play_button, self.forward_button,
                           self.end_button))
        lay.addWidget(_row(self.slider, self.label))
        lay.addWidget(_row(speed_label, None, self.speed))
        self.binding = Binding(self, model, name, lambda _value: self._display())

    def _button(self, key: str, clicked) -> QPushButton:
        button = QPushButton(tr(f"{self.prefix}.{key}"))
        button.setToolTip(tr(f"{self.prefix}.{key}.tooltip"))
        # as narrow as its text (the style's 80 px minimum would make the row 440 px wide)
        button.setMinimumWidth(button.fontMetrics().horizontalAdvance(button.text()) + 16)
        if clicked is not None:
            button.clicked.connect(clicked)
        return button

    # -- the step ------------------------------------------------------------------------------
    @property
    def step(self) -> int:
        """The step shown: the model's value within the range (beyond the end is the end)."""
        return min(max(int(getattr(self.model, self.name)), self._lo), self._hi)

    @property
    def last(self) -> int:
        """The end of the range the model offers now."""
        return self._hi

    def go_to(self, step: int) -> None:
        """Go to ``step``, kept within the range; nothing is written if the model is there already."""
        step = min(max(int(step), self._lo), self._hi)
        if step != getattr(self.model, self.name):
            self.binding.write(step)

    def set_range(self, lo: float, hi: float) -> None:
        """The range from ``model.bounds`` (called by the binding after every change of the model)."""
        self._lo, self._hi = int(lo), max(int(lo), int(hi))
        self._display()

    def follow(self) -> None:
        """Read the range again (for a range that depends on data outside the model)."""
        self.binding.follow()

    def _display(self) -> None:
        step = self.step
        with signals_blocked(self.slider):
            self.slider.setRange(self._lo, self._hi)
            self.slider.setValue(step)
        self.label.setText(tr(f"{self.prefix}.step.label", step=step, steps=self._hi))
        self.reset_button.setEnabled(step > self._lo)
        self.back_button.setEnabled(step > self._lo)
        self.forward_button.setEnabled(step < self._hi)
        self.end_button.setEnabled(step < self._hi)

    # -- playing -------------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    def stop(self) -> None:
        """Pause (the button shows Play again)."""
        self.play_button.setChecked(False)

    def _play_toggled(self, on: bool) -> None:
        self.play_button.setText(tr(f"{self.prefix}.{'pause' if on else 'play'}"))
        if on:
            if self.step >= self._hi:
                self.go_to(self._lo)  # at the end, play starts over
            self.timer.start()
        else:
            self.timer.stop()

    def _speed_changed(self, speed: int) -> None:
        self.timer.setInterval(round(1000 / speed))

    def _tick(self) -> None:
        if self.step < self._hi:
            self.go_to(self.step + 1)
        if self.step >= self._hi:
            self.stop()
