"""The control column of the Sampling view, built from the model's parameter metadata.

Every control is bound through :mod:`gui.widgets.sliders`: what is enabled
comes from ``SamplingModel.applies`` and refusals go to ``message``.  Each
control also lands in ``controls`` under its parameter name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QGridLayout, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gui.model.sampling import SWITCHED_KNOBS, SamplingModel
from gui.model.texts import tr
from gui.widgets.file_strip import FileStrip
from gui.widgets.score_table import ScoreEditor
from gui.widgets.sliders import param_control, param_form

Message = Callable[[str], object]


def bound(model: SamplingModel, name: str, message: Message, controls: dict[str, QWidget]) -> QWidget:
    """The control the metadata asks for, its refusals going to ``message``."""
    control = controls[name] = param_control(model, name)
    control.message.connect(message)
    return control


def form_box(title: str, model: SamplingModel, names: Sequence[str], message: Message,
             controls: dict[str, QWidget], *extra: QWidget) -> QGroupBox:
    """A titled group of the controls of ``names`` (then ``extra`` widgets)."""
    box = QGroupBox(title)
    lay = QVBoxLayout(box)
    lay.addWidget(param_form(model, names, message=message, controls=controls))
    for w in extra:
        lay.addWidget(w)
    return box


def knobs_box(model: SamplingModel, message: Message, controls: dict[str, QWidget]) -> QGroupBox:
    """Temperature, then each switched knob: its on/off switch beside its slider."""
    box = QGroupBox(tr("sampling.group.knobs"))
    grid = QGridLayout(box)
    grid.addWidget(bound(model, "temperature", message, controls), 0, 0, 1, 2)
    for row, name in enumerate(SWITCHED_KNOBS, start=1):
        grid.addWidget(bound(model, f"{name}_on", message, controls), row, 0)
        slider = bound(model, name, message, controls)
        slider.label.hide()  # the switch names it
        grid.addWidget(slider, row, 1)
    grid.setColumnStretch(1, 1)
    return box


class VocabularyBox(QGroupBox):
    """Where the logits come from: the source, V, a logits file, the seed and the score table."""

    def __init__(self, model: SamplingModel, editor: ScoreEditor, load: Callable[[str], str], message: Message,
                 controls: dict[str, QWidget]):
        super().__init__(tr("sampling.group.vocab"))
        lay = QVBoxLayout(self)
        lay.addWidget(param_form(model, ("logits", "vocab"), message=message, controls=controls))
        self.files = FileStrip(load, button=tr("sampling.load"), tooltip=tr("sampling.load.tooltip"),
                               dialog_title=tr("sampling.load"), no_file=tr("sampling.no_file"),
                               file_filter=tr("sampling.load.filter"))
        lay.addWidget(self.files)
        seed_row = QWidget()
        row = QHBoxLayout(seed_row)
        row.setContentsMargins(0, 0, 0, 0)
        caption = QLabel(tr("param.seed.label"))
        caption.setToolTip(tr("param.seed.tooltip"))
        row.addWidget(caption)
        row.addWidget(bound(model, "seed", message, controls), 1)
        lay.addWidget(seed_row)
        self.editor = editor
        editor.setMinimumHeight(150)
        lay.addWidget(editor, 1)
        self.stretch = QWidget()  # takes the room the score table would when it is hidden
        lay.addWidget(self.stretch, 1)

    def add_source_widget(self, widget: QWidget) -> None:
        """A source's own widget (the model strip) right under the source choice."""
        self.layout().insertWidget(1, widget)

    def show_result(self, model: SamplingModel) -> None:
        """The score table only for the score source, the file's name only for the file source."""
        scores = model.logits == "scores"
        self.editor.setVisible(scores)
        self.stretch.setVisible(not scores)
        self.files.name.setVisible(model.logits == "file")
        self.files.show_path(model.file_path)
