"""The "Load file / drop a file / refusal message" strip of views that read arrays from disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

from gui.model.texts import tr

SUFFIXES = (".npz", ".npy")


def dropped_file(event) -> str | None:
    """The first local file a drag or drop event carries, or None."""
    mime = event.mimeData()
    if mime is None or not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile():
            return url.toLocalFile()
    return None


class FileStrip(QWidget):
    """A load button beside the file's name; also takes files dropped on a view (see :class:`FileDrops`).

    ``load(path)`` reads and applies a file and returns the message to show,
    or raises ``ValueError`` (the loaders' ``LoadError``) saying why the
    file was refused; then nothing changed.  ``message(text, error)``
    carries either.
    """

    message = Signal(str, bool)

    def __init__(self, load: Callable[[str], str], *, button: str, tooltip: str, dialog_title: str,
                 no_file: str, file_filter: str | None = None, object_name: str = ""):
        super().__init__()
        self._load, self._dialog_title, self._no_file = load, dialog_title, no_file
        self._filter = file_filter if file_filter is not None else tr("file.filter.numpy")
        self.button = QPushButton(button)
        self.button.setToolTip(tooltip)
        self.button.clicked.connect(self.choose_file)
        self.name = QLabel(no_file)
        self.name.setWordWrap(True)
        if object_name:
            self.name.setObjectName(object_name)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.button)
        lay.addWidget(self.name, 1)

    def show_path(self, path: str) -> None:
        """Name the file now in use ("" for none)."""
        self.name.setText(Path(path).name if path else self._no_file)

    def load_path(self, path: str | Path) -> bool:
        """Load ``path``; the message says what was loaded or why it was refused."""
        try:
            text = self._load(str(path))
        except ValueError as exc:  # the loaders' LoadError is a ValueError
            self.message.emit(str(exc), True)
            return False
        self.message.emit(text, False)
        return True

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self._dialog_title, "", self._filter)
        if path:
            self.load_path(path)

    # -- drag and drop on the owning view --------------------------------------------------
    def drag_enter(self, event) -> None:
        """Accept a drag that carries a local file."""
        if dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def drop(self, event) -> None:
        """Load the dropped file (through :meth:`load_path`)."""
        path = dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.load_path(path)


class FileDrops:
    """Mixin for a view with a ``file_strip``: files dropped on the view go to the strip.

    List it before the Qt base class (``class V(FileDrops, BaseView)``) and
    call ``self.setAcceptDrops(True)``.
    """

    file_strip: FileStrip

    def dragEnterEvent(self, event) -> None:
        self.file_strip.drag_enter(event)

    def dragMoveEvent(self, event) -> None:
        self.file_strip.drag_enter(event)

    def dropEvent(self, event) -> None:
        self.file_strip.drop(event)
