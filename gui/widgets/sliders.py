"""The controls of view-model parameters: one family, one binder, one form helper.

:class:`ValueSlider` is a plain labelled slider + spin box (linear or log;
a log slider's decades are labelled under its ticks by
:class:`gui.widgets.slider_scale.SliderScale`, thinned rather than clipped).
:class:`ParamSlider`, :class:`ParamSpin`, :class:`ParamChoice` and
:class:`ParamSwitch` show one parameter of a view model, each through
:class:`Binding`: the model's value is shown with the widget's signals
blocked (no feedback loop), a user edit goes through ``model.set_param``, a
refused value is reported on the control's ``message`` signal and the
control goes back to the model's value, and the enabled state and the range
follow ``model.applies(name)`` and ``model.bounds(name)`` after every
change of the model.  A disabled control shows ``model.value_in_use(name)``
(or nothing), never a stored value the result does not use.  :func:`param_control` picks the control a parameter's
metadata asks for; :func:`param_form` lays out a form of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)

from gui.binding import connect_while_alive
from gui.model.base import ViewModel
from gui.model.texts import tr
from gui.widgets.signals import signals_blocked
from gui.widgets.slider_scale import Mark, SliderScale

STEPS = 1000


def decade_text(d: int) -> str:
    """10**d written short enough for a slider's tick labels: 0.01, 1, 100, 10k, 1M."""
    if d >= 6:
        return f"{10 ** (d - 6)}M"
    if d >= 4:
        return f"{10 ** (d - 3)}k"
    return f"{10.0 ** d:g}"


class _Blankable:
    """A spin box that can show nothing (a greyed control whose parameter is not in use)."""

    blank = False

    def set_blank(self, blank: bool) -> None:
        if blank != self.blank:
            self.blank = blank
            with signals_blocked(self):
                self.setValue(self.value())  # redraws the text through textFromValue

    def textFromValue(self, value):
        return "" if self.blank else super().textFromValue(value)


class BlankableDoubleSpin(_Blankable, QDoubleSpinBox):
    pass


class ValueSlider(QWidget):
    """Slider and spin box showing the same real value.

    On a log scale the slider moves through log10 of the value, so each
    decade gets the same travel; the decades are labelled under it and the
    spin box always shows (and accepts) the real value.  Double-clicking the
    slider returns it to ``default``.  ``valueEdited`` fires only for user
    changes, never for :meth:`setValue`.
    """

    valueEdited = Signal(float)

    def __init__(self, label: str, minimum: float, maximum: float, default: float,
                 *, log: bool = False, decimals: int = 3, tooltip: str = "",
                 spin_limits: tuple[float, float] | None = None, parent=None):
        super().__init__(parent)
        self.minimum, self.maximum, self.default, self.log = minimum, maximum, default, log
        # the slider travels minimum..maximum; the spin box may show and take values beyond
        self.spin_limits = spin_limits or (minimum, maximum)
        self._lo = math.log10(minimum) if log else minimum
        self._hi = math.log10(maximum) if log else maximum

        self.label = QLabel(label)
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # may be a score's label (Simplex): shown literally
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.slider.setPageStep(STEPS // 20)
        self.spin = BlankableDoubleSpin()
        self.spin.setRange(*self.spin_limits)
        self.spin.setDecimals(decimals)
        self.spin.setSingleStep(0.01 if log else (maximum - minimum) / 100)
        self.spin.setKeyboardTracking(False)
        self.spin.setMinimumWidth(90)
        if log:
            self.spin.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)

        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(0)
        grid.addWidget(self.label, 0, 0)
        grid.addWidget(self.slider, 0, 1)
        grid.addWidget(self.spin, 0, 2)
        grid.setColumnStretch(1, 1)
        self.scale: SliderScale | None = None
        if log:
            self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
            self.slider.setTickInterval(round(STEPS / (self._hi - self._lo)))
            self.scale = self._decade_scale()
            grid.addWidget(self.scale, 1, 1)
        for w in (self.slider, self.scale):
            if w is not None:  # hidden while blank (show_value(None)), keeping their room
                policy = w.sizePolicy()
                policy.setRetainSizeWhenHidden(True)
                w.setSizePolicy(policy)
        for w in (self, self.label, self.slider, self.spin):
            w.setToolTip(tooltip)

        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.slider.installEventFilter(self)
        self.setValue(default)

    def _decade_scale(self) -> SliderScale:
        """The decades' labels under the ticks (the one at 1 in bold), thinned where the row is narrow."""
        decades = range(round(self._lo), round(self._hi) + 1)
        marks = [Mark(self._to_pos(10.0**d), decade_text(d), d == 0) for d in decades]
        return SliderScale(self.slider, marks)

    # -- conversions -----------------------------------------------------------
    def _to_value(self, pos: int) -> float:
        """The value at slider position ``pos``: exactly the bounds at the ends, within them between."""
        if pos <= 0:
            return float(self.minimum)
        if pos >= STEPS:
            return float(self.maximum)
        x = self._lo + (self._hi - self._lo) * pos / STEPS
        value = 10.0**x if self.log else x
        return min(max(value, float(self.minimum)), float(self.maximum))

    def _to_pos(self, value: float) -> int:
        x = math.log10(value) if self.log else value
        return min(max(round((x - self._lo) / (self._hi - self._lo) * STEPS), 0), STEPS)

    # -- API ---------------------------------------------------------------------
    def value(self) -> float:
        return self.spin.value()

    def set_range(self, minimum: float, maximum: float) -> None:
        """Move the slider's travel (linear sliders: a log slider's decades are fixed)."""
        if (minimum, maximum) == (self.minimum, self.maximum) or self.log or maximum <= minimum:
            return
        value = self.value()
        self.minimum, self.maximum = self._lo, self._hi = minimum, maximum
        self.spin_limits = (minimum, maximum)
        with signals_blocked(self.spin):
            self.spin.setRange(minimum, maximum)
        self._place(value)

    def setValue(self, value: float) -> None:
        self.show_value(value)

    def show_value(self, value: float | None) -> None:
        """Show ``value``, or nothing for None (the spin box empty, the slider hidden)."""
        blank = value is None
        self.spin.set_blank(blank)
        for w in (self.slider, self.scale):
            if w is not None:
                w.setVisible(not blank)
        if not blank:
            self._place(value)

    @property
    def blank(self) -> bool:
        return self.spin.blank

    def _place(self, value: float) -> None:
        value = min(max(float(value), self.spin_limits[0]), self.spin_limits[1])
        with signals_blocked(self.slider), signals_blocked(self.spin):
            self.slider.setValue(self._to_pos(value))
            self.spin.setValue(value)

    # -- user edits ----------------------------------------------------------------
    def _slider_moved(self, pos: int) -> None:
        value = self._to_value(pos)
        with signals_blocked(self.spin):
            self.spin.setValue(value)
        self.valueEdited.emit(value)

    def _spin_changed(self, value: float) -> None:
        with signals_blocked(self.slider):
            self.slider.setValue(self._to_pos(value))
        self.valueEdited.emit(value)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.slider and event.type() == QEvent.Type.MouseButtonDblClick:
            self.setValue(self.default)
            self.valueEdited.emit(self.default)
            return True
        return super().eventFilter(obj, event)


class Binding:
    """Binds one control to one parameter of a view model, both ways.

    ``show(value)`` puts a value on the control (called with the control's
    signals blocked; None means "show nothing"); :meth:`write` is what a user
    edit calls.  The control is enabled while ``model.applies(name)`` and
    offers ``model.bounds(name)`` through its optional ``set_range``.  While
    it is disabled it shows ``model.value_in_use(name)`` (the sentence's
    token count, not the stored n), or nothing; the stored value is untouched
    and comes back when the control is enabled again.
    """

    def __init__(self, control: QWidget, model: ViewModel, name: str, show: Callable[[Any], None]):
        self.control, self.model, self.name, self._show = control, model, name, show
        self.spec = model.params()[name]
        self._applies: bool | None = None
        self.follow()
        connect_while_alive(control, getattr(model.events, name), self.refresh)
        connect_while_alive(control, model.events, self.follow)

    def shown_value(self) -> Any:
        """What the control shows: the model's value while it applies, else the value in use (or None)."""
        if self.model.applies(self.name):
            return getattr(self.model, self.name)
        value = self.model.value_in_use(self.name)
        if value is None:
            return None
        try:
            return self.spec.check(value)
        except ValueError:
            return None  # outside what the control can show: show nothing rather than a clamped lie

    def refresh(self, *_args) -> None:
        self.show(self.shown_value())

    def show(self, value: Any) -> None:
        with signals_blocked(self.control):
            self._show(value)

    def write(self, value: Any) -> None:
        """Set the parameter; a refusal goes to the control's ``message`` and the control reverts."""
        if self.spec.kind == "int":
            value = round(value)
        try:
            self.model.set_param(self.name, value)
        except ValueError as exc:
            self.control.message.emit(str(exc))
            self.refresh()

    def follow(self, *_args) -> None:
        """Enabled state, range and (while disabled) the value in use, from the model (after any change of it)."""
        applies = self.model.applies(self.name)
        self.control.setEnabled(applies)
        set_range = getattr(self.control, "set_range", None)
        if set_range is not None:
            set_range(*self.model.bounds(self.name))
        if not applies or applies != self._applies:
            self.refresh()
        self._applies = applies


class ParamSlider(ValueSlider):
    """A ValueSlider bound to one numeric parameter (linear, log or integer)."""

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, parent=None):
        spec = model.params()[name]
        integer = spec.kind == "int"
        super().__init__(
            tr(f"param.{name}.label"), spec.minimum, spec.maximum, spec.default,
            log=spec.log, tooltip=tr(f"param.{name}.tooltip"), decimals=0 if integer else 3, parent=parent,
        )
        if integer:
            self.spin.setSingleStep(1)
        self.model, self.name = model, name
        self.binding = Binding(self, model, name, self.show_value)
        self.valueEdited.connect(self.binding.write)


class ParamSpin(_Blankable, QSpinBox):
    """A spin box bound to one integer parameter (seeds, counts over a huge range)."""

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(parent)
        spec = model.params()[name]
        self.setRange(int(spec.minimum), int(spec.maximum))
        self.setKeyboardTracking(False)
        if spec.maximum - spec.minimum > 1000:
            self.setStepType(QSpinBox.StepType.AdaptiveDecimalStepType)
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self.model, self.name = model, name
        self.binding = Binding(self, model, name, self.show_value)
        self.valueChanged.connect(self.binding.write)

    def set_range(self, minimum: float, maximum: float) -> None:
        """The spin's range; the same range is not set again (QSpinBox would lay out and repaint)."""
        lo, hi = int(minimum), int(maximum)
        if (lo, hi) != (self.minimum(), self.maximum()):
            self.setRange(lo, hi)

    def show_value(self, value: int | None) -> None:
        """Show ``value``, or nothing for None."""
        self.set_blank(value is None)
        if value is not None:
            self.setValue(int(value))


class ParamChoice(QWidget):
    """A labelled combo box bound to a choice parameter; item texts are the ``param.NAME.CHOICE`` texts."""

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(parent)
        spec = model.params()[name]
        self.model, self.name, self.choices = model, name, spec.choices
        self.label = QLabel(tr(f"param.{name}.label"))
        self.combo = QComboBox()
        for c in spec.choices:
            self.combo.addItem(tr(f"param.{name}.{c}"), c)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.combo, 1)
        for w in (self, self.label, self.combo):
            w.setToolTip(tr(f"param.{name}.tooltip"))
        self.binding = Binding(self.combo, model, name, lambda v: self.combo.setCurrentIndex(-1 if v is None else self.choices.index(v)))
        self.binding.control = self  # enabled state and messages on the whole control
        self.combo.activated.connect(lambda i: self.binding.write(self.choices[i]))


class ParamSwitch(QCheckBox):
    """A check box bound to an "off"/"on" choice parameter."""

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(tr(f"param.{name}.label"), parent)
        self.model, self.name = model, name
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self.binding = Binding(self, model, name, lambda v: self.setChecked(v == "on"))
        self.toggled.connect(lambda on: self.binding.write("on" if on else "off"))


def param_control(model: ViewModel, name: str) -> QWidget:
    """The control a parameter's metadata asks for: switch, choice, spin box or slider."""
    spec = model.params()[name]
    if spec.kind == "choice":
        return ParamSwitch(model, name) if spec.choices == ("off", "on") else ParamChoice(model, name)
    if spec.kind == "int" and spec.control == "spin":
        return ParamSpin(model, name)
    if spec.kind in ("int", "float"):
        return ParamSlider(model, name)
    raise ValueError(f"{model.name}.{name} ({spec.kind}) has no control")


def param_form(model: ViewModel, names: Sequence[str], *, message: Callable[[str], Any] | None = None,
               controls: dict[str, QWidget] | None = None) -> QWidget:
    """A form of controls for ``names``; their refusals go to ``message``.

    Controls that carry their own label (sliders, choices, switches) take a
    whole row; spin boxes get a "Label:" caption.  ``controls``, when
    given, receives each control under its parameter name.
    """
    box = QWidget()
    form = QFormLayout(box)
    form.setContentsMargins(0, 0, 0, 0)
    form.setVerticalSpacing(4)
    for name in names:
        control = param_control(model, name)
        if message is not None:
            control.message.connect(message)
        if isinstance(control, ParamSpin):
            caption = QLabel(tr("caption", label=tr(f"param.{name}.label")))
            caption.setToolTip(control.toolTip())
            form.addRow(caption, control)
        else:
            form.addRow(control)
        if controls is not None:
            controls[name] = control
    return box
