"""The figure-size step of File > Export Plots: pixels and dpi, remembered between runs."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gui.export.options import CSS_DPI, DPI_RANGE, MAX_PIXELS, MIN_LAYOUT, PIXEL_RANGE, ExportOptions
from gui.model.texts import tr

KEYS = {"width": "export/width", "height": "export/height", "dpi": "export/dpi"}


def load_options(settings: QSettings) -> ExportOptions:
    """The size the user chose last time, or the default when none (or a bad one) was saved."""
    try:
        values = {name: float(settings.value(key)) for name, key in KEYS.items()
                  if settings.value(key) is not None}
        return ExportOptions(**values)
    except (TypeError, ValueError):
        return ExportOptions()


def save_options(settings: QSettings, options: ExportOptions) -> None:
    settings.setValue(KEYS["width"], options.width)
    settings.setValue(KEYS["height"], options.height)
    settings.setValue(KEYS["dpi"], options.dpi)


def _spin(lo: int, hi: int, suffix_key: str, tooltip_key: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(lo, hi)
    spin.setSuffix(tr(suffix_key))
    spin.setToolTip(tr(tooltip_key))
    spin.setAccelerated(True)
    return spin


class ExportOptionsDialog(QDialog):
    """Width and height in pixels and a resolution; a line says what figure they make.

    Changing the resolution keeps the figure's size in inches (the pixels
    follow); changing a side keeps the resolution.  OK is enabled only for
    a figure that :class:`ExportOptions` accepts.
    """

    def __init__(self, options: ExportOptions | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(tr("export.options.title"))
        self.setMinimumWidth(440)
        self.width_box = _spin(*PIXEL_RANGE, "export.options.px", "export.options.width.tooltip")
        self.height_box = _spin(*PIXEL_RANGE, "export.options.px", "export.options.height.tooltip")
        self.dpi_box = _spin(int(DPI_RANGE[0]), int(DPI_RANGE[1]), "export.options.dpi_unit",
                             "export.options.dpi.tooltip")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        intro = QLabel(tr("export.options.intro"))
        intro.setWordWrap(True)
        form = QFormLayout()
        form.addRow(tr("export.options.width"), self.width_box)
        form.addRow(tr("export.options.height"), self.height_box)
        form.addRow(tr("export.options.dpi"), self.dpi_box)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.reset_button = QPushButton(tr("export.options.reset"))
        self.reset_button.setToolTip(tr("export.options.reset.tooltip"))
        self.buttons.addButton(self.reset_button, QDialogButtonBox.ButtonRole.ResetRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.reset_button.clicked.connect(lambda: self.set_options(ExportOptions()))
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        row = QHBoxLayout()
        row.addLayout(form)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        layout.addWidget(self.buttons)
        self._dpi = float((options or ExportOptions()).dpi)
        self.set_options(options or ExportOptions())
        self.width_box.valueChanged.connect(self._update)
        self.height_box.valueChanged.connect(self._update)
        self.dpi_box.valueChanged.connect(self._dpi_changed)

    def set_options(self, options: ExportOptions) -> None:
        for box, value in ((self.width_box, options.width), (self.height_box, options.height),
                           (self.dpi_box, round(options.dpi))):
            box.blockSignals(True)
            box.setValue(int(value))
            box.blockSignals(False)
        self._dpi = float(self.dpi_box.value())
        self._update()

    def _dpi_changed(self, dpi: int) -> None:
        """Keep the inches: scale both sides with the resolution."""
        factor = dpi / self._dpi
        self._dpi = float(dpi)
        for box in (self.width_box, self.height_box):
            box.blockSignals(True)
            box.setValue(round(box.value() * factor))
            box.blockSignals(False)
        self._update()

    def problem(self) -> str | None:
        """What is wrong with the numbers shown, in the user's words, or None."""
        w, h, dpi = self.width_box.value(), self.height_box.value(), float(self.dpi_box.value())
        if w * h > MAX_PIXELS:
            return tr("export.options.too_large", width=w, height=h, limit=MAX_PIXELS // 1_000_000)
        if w * CSS_DPI / dpi < MIN_LAYOUT[0] or h * CSS_DPI / dpi < MIN_LAYOUT[1]:
            return tr("export.options.too_small", w_in=round(w / dpi, 2), h_in=round(h / dpi, 2), dpi=dpi,
                      min_w=round(MIN_LAYOUT[0] / CSS_DPI, 2), min_h=round(MIN_LAYOUT[1] / CSS_DPI, 2))
        return None

    def _update(self, *_args) -> None:
        problem = self.problem()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(problem is None)
        if problem is not None:
            self.summary.setText(problem)
            return
        o = self.options()
        self.summary.setText(tr("export.options.summary", w_in=o.inches[0], h_in=o.inches[1], dpi=o.dpi,
                                scale=o.scale))

    def options(self) -> ExportOptions:
        """The options shown (raises ValueError while :meth:`problem` says why not)."""
        return ExportOptions(self.width_box.value(), self.height_box.value(), self.dpi_box.value())


def ask_export_options(parent: QWidget | None, settings: QSettings) -> ExportOptions | None:
    """Ask for the figure size, starting from the last one; None when the user cancels."""
    dialog = ExportOptionsDialog(load_options(settings), parent)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        options = dialog.options()
    finally:
        dialog.deleteLater()
    save_options(settings, options)
    return options
