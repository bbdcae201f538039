"""A labelled slider + spin box for one float, on a linear or log scale."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QWidget,
)
from superqt.utils import signals_blocked

from gui.binding import connect_while_alive
from gui.model.base import ViewModel
from gui.model.texts import tr

STEPS = 1000


def decade_text(d: int) -> str:
    """10**d written short enough for a slider's tick labels: 0.01, 1, 100, 10k, 1M."""
    if d >= 6:
        return f"{10 ** (d - 6)}M"
    if d >= 4:
        return f"{10 ** (d - 3)}k"
    return f"{10.0 ** d:g}"


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
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.slider.setPageStep(STEPS // 20)
        self.spin = QDoubleSpinBox()
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
        if log:
            self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
            self.slider.setTickInterval(round(STEPS / (self._hi - self._lo)))
            grid.addWidget(self._decade_labels(), 1, 1)
        for w in (self, self.label, self.slider, self.spin):
            w.setToolTip(tooltip)

        self.slider.valueChanged.connect(self._slider_moved)
        self.spin.valueChanged.connect(self._spin_changed)
        self.slider.installEventFilter(self)
        self.setValue(default)

    def _decade_labels(self) -> QWidget:
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        decades = range(round(self._lo), round(self._hi) + 1)
        for i, d in enumerate(decades):
            text = f"{10.0 ** d:g}"
            short = decade_text(d)
            lab = QLabel(f"<b>{short}</b>" if d == 0 else short)
            lab.setObjectName(f"decade_{text}")
            font = lab.font()
            font.setPointSizeF(font.pointSizeF() * 0.85)
            lab.setFont(font)
            if i:
                lay.addStretch(1)
            lay.addWidget(lab)
        return row

    # -- conversions -----------------------------------------------------------
    def _to_value(self, pos: int) -> float:
        x = self._lo + (self._hi - self._lo) * pos / STEPS
        return 10.0**x if self.log else x

    def _to_pos(self, value: float) -> int:
        x = math.log10(value) if self.log else value
        return min(max(round((x - self._lo) / (self._hi - self._lo) * STEPS), 0), STEPS)

    # -- API ---------------------------------------------------------------------
    def value(self) -> float:
        return self.spin.value()

    def setValue(self, value: float) -> None:
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


class ParamSlider(ValueSlider):
    """A ValueSlider bound both ways to one parameter of a view model."""

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
        self.setValue(getattr(model, name))
        self.valueEdited.connect(lambda v: model.set_param(name, round(v) if integer else v))
        connect_while_alive(self, getattr(model.events, name), self.setValue)


class ParamChoice(QWidget):
    """A labelled combo box bound both ways to a choice parameter of a view model.

    Item texts come from the ``param.NAME.CHOICE`` resource keys.
    """

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
        self._show(getattr(model, name))
        self.combo.activated.connect(lambda i: model.set_param(name, self.choices[i]))
        connect_while_alive(self, getattr(model.events, name), self._show)

    def _show(self, value: str) -> None:
        with signals_blocked(self.combo):
            self.combo.setCurrentIndex(self.choices.index(value))


class ParamSwitch(QCheckBox):
    """A check box bound both ways to an "off"/"on" choice parameter of a view model."""

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(tr(f"param.{name}.label"), parent)
        self.model, self.name = model, name
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self._show(getattr(model, name))
        self.toggled.connect(lambda on: model.set_param(name, "on" if on else "off"))
        connect_while_alive(self, getattr(model.events, name), self._show)

    def _show(self, value: str) -> None:
        with signals_blocked(self):
            self.setChecked(value == "on")


class ParamSpin(QSpinBox):
    """A spin box bound both ways to one integer parameter; a refused value goes to ``message`` and is undone."""

    message = Signal(str)

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(parent)
        spec = model.params()[name]
        self.setRange(int(spec.minimum), int(spec.maximum))
        self.setKeyboardTracking(False)
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self.model, self.name = model, name
        self._show(getattr(model, name))
        self.valueChanged.connect(self._edited)
        connect_while_alive(self, getattr(model.events, name), self._show)

    def _edited(self, value: int) -> None:
        try:
            self.model.set_param(self.name, value)
        except ValueError as exc:
            self.message.emit(str(exc))
            self._show(getattr(self.model, self.name))

    def _show(self, value: int) -> None:
        with signals_blocked(self):
            self.setValue(int(value))
