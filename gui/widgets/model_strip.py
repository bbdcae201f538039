"""The real-model strip of a view: a model field, a prompt box, Run and Cancel, progress and one status line.

Shared by the views with a model source (Attention, Sampling).  The strip
only shows and asks; the view owns the state:

- ``run_requested(model, prompt)`` fires on Run, Enter in the model field
  and Ctrl+Enter in the prompt box; the view writes both to its model
  (which may refuse them: then it calls :meth:`tell` with the reason) and
  starts its job.  ``cancel_requested`` fires on Cancel.
- :meth:`set_values` shows the model's values (a session, an undo) without
  firing anything; :meth:`values` reads the fields.
- :meth:`watch` follows a :class:`gui.widgets.jobs.Job`: the progress bar
  and Cancel show while it is busy (the first :data:`LOAD_SHARE` of the
  progress reads "loading the model").
- :meth:`tell` writes the status line (an error in the theme's highlight
  colour); :meth:`set_unavailable` disables everything with the reason and
  the install command when the models extra is missing.

The model field completes the model ids of the local Hugging Face cache
(one directory listing, when the strip is built); the folder button picks
a model folder.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QCompleter,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.model.llm_source import LOAD_SHARE, cached_model_ids
from gui.model.texts import tr

#: The prompt box shows this many lines of text.
PROMPT_LINES = 3


class ModelStrip(QWidget):
    """Model field with folder button and completion, prompt box, Run/Cancel, progress, status line."""

    run_requested = Signal(str, str)
    cancel_requested = Signal()

    def __init__(self, *, prompt_tooltip: str = "", object_name: str = "model_strip", parent=None):
        super().__init__(parent)
        self.setObjectName(object_name)
        self._unavailable: str | None = None
        self._error = False
        self.model_edit = QLineEdit()
        self.model_edit.setObjectName(f"{object_name}.model")
        self.model_edit.setPlaceholderText(tr("models.strip.placeholder"))
        self.model_edit.setToolTip(tr("param.model.tooltip"))
        ids = cached_model_ids()
        if ids:
            completer = QCompleter(ids, self.model_edit)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            self.model_edit.setCompleter(completer)
        self.model_edit.returnPressed.connect(self.run)
        self.folder_button = QPushButton(tr("models.strip.folder"))
        self.folder_button.setToolTip(tr("models.strip.folder.tooltip"))
        self.folder_button.clicked.connect(self.choose_folder)
        self.prompt_edit = QPlainTextEdit()
        self.prompt_edit.setObjectName(f"{object_name}.prompt")
        self.prompt_edit.setPlaceholderText(tr("models.strip.prompt.placeholder"))
        self.prompt_edit.setToolTip(prompt_tooltip or tr("param.prompt.tooltip"))
        self.prompt_edit.setTabChangesFocus(True)
        line = self.prompt_edit.fontMetrics().lineSpacing()
        self.prompt_edit.setFixedHeight(PROMPT_LINES * line + 12)
        self.prompt_edit.installEventFilter(self)
        self.run_button = QPushButton(tr("models.strip.run"))
        self.run_button.setObjectName(f"{object_name}.run")
        self.run_button.setToolTip(tr("models.strip.run.tooltip"))
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton(tr("models.strip.cancel"))
        self.cancel_button.setToolTip(tr("models.strip.cancel.tooltip"))
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.cancel_button.setEnabled(False)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(True)
        self.bar.setToolTip(tr("models.strip.progress.tooltip"))
        self.bar.hide()
        self.status = QLabel()
        self.status.setObjectName(f"{object_name}.status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.hide()

        model_row = QHBoxLayout()
        model_row.setContentsMargins(0, 0, 0, 0)
        model_row.addWidget(self.model_edit, 1)
        model_row.addWidget(self.folder_button)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(4)
        self.model_caption = QLabel(tr("caption", label=tr("param.model.label")))
        self.model_caption.setToolTip(tr("param.model.tooltip"))
        form.addRow(self.model_caption, model_row)
        self.prompt_caption = QLabel(tr("caption", label=tr("param.prompt.label")))
        self.prompt_caption.setToolTip(self.prompt_edit.toolTip())
        form.addRow(self.prompt_caption)
        form.addRow(self.prompt_edit)
        run_row = QHBoxLayout()
        run_row.setContentsMargins(0, 0, 0, 0)
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.bar, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addLayout(form)
        lay.addLayout(run_row)
        lay.addWidget(self.status)
        themes.manager().changed.connect(self._color_status)

    # -- the fields ------------------------------------------------------------------------
    def values(self) -> tuple[str, str]:
        """(model, prompt) as typed."""
        return self.model_edit.text(), self.prompt_edit.toPlainText()

    def set_values(self, model: str, prompt: str) -> None:
        """Show the view model's model and prompt (fires nothing; the cursor stays where it can)."""
        if self.model_edit.text() != model:
            self.model_edit.setText(model)
        if self.prompt_edit.toPlainText() != prompt:
            self.prompt_edit.setPlainText(prompt)

    def run(self) -> None:
        if self._unavailable is None:
            self.run_requested.emit(*self.values())

    def choose_folder(self) -> None:
        start = self.model_edit.text().strip()
        folder = QFileDialog.getExistingDirectory(self, tr("models.strip.folder.dialog"), start)
        if folder:
            self.model_edit.setText(folder)
            self.run()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """Ctrl+Enter (or Enter with any modifier) in the prompt box runs; plain Enter is a new line."""
        if obj is self.prompt_edit and event.type() == QEvent.Type.KeyPress and \
                event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.run()
            return True
        return super().eventFilter(obj, event)

    # -- the job ------------------------------------------------------------------------------
    def watch(self, job) -> None:
        """Show ``job``'s progress and offer Cancel while it is busy."""
        job.busy_changed.connect(self.set_busy)
        job.progressed.connect(self.progressed)

    def set_busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)
        self.bar.setVisible(busy)
        if busy:
            self.progressed(0.0)

    def progressed(self, fraction: float) -> None:
        loading = fraction < LOAD_SHARE
        self.bar.setFormat(tr("models.strip.progress.load") if loading else tr("models.strip.progress.run"))
        self.bar.setValue(round(100 * fraction))

    # -- what the strip says --------------------------------------------------------------------
    def tell(self, text: str, *, error: bool = False) -> None:
        """One status line ("" hides it); an error reads in the theme's highlight colour."""
        if self._unavailable is not None:
            text, error = self._unavailable, True
        self._error = error
        self.status.setText(text)
        self.status.setVisible(bool(text))
        self._color_status()

    @property
    def message(self) -> str:
        return self.status.text()

    def _color_status(self, *_args) -> None:
        theme = themes.current()
        palette = QPalette()  # only the text colour is set: every other role follows the theme
        palette.setColor(QPalette.ColorRole.WindowText, QColor(theme.highlight if self._error else theme.muted))
        self.status.setPalette(palette)

    def set_unavailable(self, reason: str | None) -> None:
        """Disable the fields and Run with ``reason`` (the install command in it), or enable them (None)."""
        was, self._unavailable = self._unavailable, reason
        for w in (self.model_edit, self.folder_button, self.prompt_edit, self.run_button, self.model_caption,
                  self.prompt_caption):
            w.setEnabled(reason is None)
        if reason is not None:
            self.tell(reason, error=True)
        elif was is not None and self.status.text() == was:
            self.tell("")

    @property
    def unavailable(self) -> str | None:
        """The reason given to :meth:`set_unavailable`, or None while the strip is usable."""
        return self._unavailable
