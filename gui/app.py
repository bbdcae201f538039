"""The main window: the view list, menus, status bar, sessions, undo, theme."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import traceback
from pathlib import Path

import numpy as np
import PySide6
from PySide6.QtCore import QLocale, QRect, QSettings, Qt, qVersion
from PySide6.QtGui import QAction, QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QWidget,
)

import compute
import gui
from gui import export, language, lessons, menus, registry, screen_fit
from gui import theme as themes
from gui.allocator import keep_freed_memory
from gui.export.dialog import ask_export_options
from gui.first_paint import after_first_paint, exit_after_first_paint
from gui.help import plain
from gui.model import texts
from gui.model.lab import Lab
from gui.model.session import Session, SessionError
from gui.model.texts import tr
from gui.qt import pg
from gui.undo import UndoRecorder, undo_text
from gui.views.base import BaseView
from gui.widgets.cell_table import shorten
from gui.window_backend import FallbackRelay, backend_name

LAST_SESSION = "last-session.json"


def config_dir() -> Path:
    """Where settings and the last session live (SOFTMAX_LAB_CONFIG_DIR overrides)."""
    env = os.environ.get("SOFTMAX_LAB_CONFIG_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "softmax-lab"


class MainWindow(QMainWindow):
    """One window: the registered views on the left, the chosen one on the right."""

    def __init__(self, lab: Lab | None = None, *, settings_dir: Path | None = None, restore: bool = True):
        super().__init__()
        self.lab = lab or Lab()
        self.settings_dir = Path(settings_dir or config_dir())
        self.settings = QSettings(str(self.settings_dir / "settings.ini"), QSettings.Format.IniFormat)
        texts.set_language(texts.initial_language(self.settings.value("language"), QLocale.system().name()))
        language.apply_fonts(texts.language())
        self.setWindowTitle(tr("app.title"))
        self.views: dict[str, BaseView] = {}
        self._tab_choices: dict[str, list[int]] = {}  # of views dropped by a language switch

        self.undo_stack = QUndoStack(self)
        self.recorder = UndoRecorder(self.undo_stack)
        self.recorder.watch(self.lab.scores, lambda _f: tr("undo.edit_scores"))
        for name, model in self.lab.models.items():
            self.recorder.watch(model, lambda field, name=name: undo_text(name, field))

        self.nav = QListWidget()
        self.nav.setObjectName("views")
        self.nav.setMaximumWidth(180)
        self.nav.setMinimumWidth(120)
        self.stack = QStackedWidget()
        for spec in registry.VIEWS:
            item = QListWidgetItem(spec.title)
            item.setData(Qt.ItemDataRole.UserRole, spec.name)
            item.setToolTip(tr(f"view.{spec.name}.tooltip"))
            self.nav.addItem(item)
            holder = QWidget()  # replaced by the view when it is first shown
            self.stack.addWidget(holder)
        self.nav.currentRowChanged.connect(self._select_row)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.nav)
        splitter.addWidget(self.stack)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([160, 1240])
        self.setCentralWidget(splitter)

        self.backend_label = QLabel(tr("readout.backend", backend=backend_name()))
        self.backend_label.setToolTip(tr("readout.backend.tooltip", min=f"{compute.backends.GPU_MIN_ELEMENTS:,}"))
        self.statusBar().addPermanentWidget(self.backend_label)
        self.fallback_relay = FallbackRelay(self)
        self.fallback_relay.message.connect(self._backend_fell_back)
        compute.add_fallback_listener(self.fallback_relay.relay)
        self._build_menus()

        themes.manager().set_mode(str(self.settings.value("theme", "system")))
        self._sync_theme_actions()
        self.statusBar().showMessage(tr("app.ready"), 5000)
        self.sync_actions()
        language.warn_once_without_cjk(self)
        self.lessons = lessons.LessonsDock(self)  # Help > Lessons; shown until the user closes it
        self._restore_geometry(restore)
        if restore:
            self._restore()
        if self.nav.currentRow() < 0:
            self.nav.setCurrentRow(0)

    # -- views -------------------------------------------------------------------
    @property
    def current_name(self) -> str:
        return registry.VIEWS[max(self.nav.currentRow(), 0)].name

    def view(self, name: str) -> BaseView:
        """The view called ``name``, built the first time it is asked for."""
        if name not in self.views:
            spec = registry.get(name)
            index = registry.VIEWS.index(spec)
            view = spec.widget_class()(self.lab.scores, self.lab.models[name])
            view.status.connect(self.show_status)
            view.hover_ended.connect(self._clear_hover)
            view.set_explanation_shown(self.explanation_shown)
            view.explanation_toggled.connect(self.set_explanation_shown)
            old = self.stack.widget(index)
            self.stack.removeWidget(old)
            old.deleteLater()
            self.stack.insertWidget(index, view)
            self.views[name] = view
            language.restore_tab_choices(view, self._tab_choices.pop(name, []))
        return self.views[name]

    def forget_view(self, name: str) -> None:
        """Drop a built view; it is built again from its model (which keeps everything) when next shown."""
        view = self.views.pop(name, None)
        if view is not None:
            self._tab_choices[name] = language.tab_choices(view)
            view.shutdown()
            index = self.stack.indexOf(view)
            self.stack.removeWidget(view)
            self.stack.insertWidget(index, QWidget())
            view.deleteLater()

    def show_view(self, name: str) -> BaseView:
        index = registry.VIEWS.index(registry.get(name))
        self.nav.setCurrentRow(index)
        return self.view(name)

    def _select_row(self, row: int) -> None:
        if row < 0:
            return
        name = registry.VIEWS[row].name
        view = self.view(name)
        self.stack.setCurrentWidget(view)

    def show_status(self, text: str) -> None:
        if text:
            self.statusBar().showMessage(shorten(text), 8000)  # a pasted megabyte is not echoed whole

    def _clear_hover(self, text: str) -> None:
        """A view's hover readout went stale: take it off the status bar if it is still there."""
        if self.statusBar().currentMessage() == shorten(text):
            self.statusBar().clearMessage()

    # -- menus --------------------------------------------------------------------
    def _action(self, key: str, slot, shortcut=None) -> QAction:
        return menus.add_action(self, key, slot, shortcut)

    def _build_menus(self) -> None:
        menus.build_menus(self)
        self._sync_backend_actions(probe=False)
        # probe CuPy (an import and a driver call) once the window has painted, then apply the saved choice
        after_first_paint(self, self._restore_backend)

    def _clipboard(self, op: str) -> None:
        """Send Copy/Paste to the focused table (a widget with that method)."""
        w = QApplication.focusWidget()
        while w is not None:
            if callable(getattr(w, op, None)) and not isinstance(w, QMainWindow):
                getattr(w, op)()
                return
            w = w.parentWidget()

    # -- the explanation panel -------------------------------------------------------
    @property
    def explanation_shown(self) -> bool:
        return self.settings.value("explanation_shown", True, type=bool)

    def set_explanation_shown(self, shown: bool) -> None:
        """Show or fold the explanation in every view (the View menu and each panel's button); remembered."""
        shown = bool(shown)
        self.settings.setValue("explanation_shown", shown)
        self.actions_by_key["action.explanation"].setChecked(shown)
        for view in self.views.values():
            view.set_explanation_shown(shown)

    def set_language(self, lang: str) -> None:
        """Show the interface in ``lang`` ("en", "zh") from now on; remembered."""
        language.switch(self, lang)

    def sync_actions(self) -> None:
        """Check the menu entries of the current theme, language and explanation choice."""
        self._sync_theme_actions()
        self.language_actions[texts.language()].setChecked(True)
        self.actions_by_key["action.explanation"].setChecked(self.explanation_shown)

    def set_theme(self, mode: str) -> None:
        themes.manager().set_mode(mode)
        self.settings.setValue("theme", mode)
        self._sync_theme_actions()

    def _sync_theme_actions(self) -> None:
        self.theme_actions[themes.manager().mode].setChecked(True)

    # -- the compute backend -----------------------------------------------------------
    def set_backend(self, name: str, *, remember: bool = True) -> bool:
        """Switch compute's backend; when it stays on NumPy the status bar says why."""
        reason = compute.set_backend(name)
        if remember:
            self.settings.setValue("backend", name)
        if reason:
            self.show_status(tr("backend.refused", backend=name, reason=reason))
        else:
            self.show_status(tr("backend.active", backend=backend_name()))
        self._sync_backend_actions()
        self._refresh_views()
        return reason is None

    def _restore_backend(self) -> None:
        saved = str(self.settings.value("backend", "numpy"))
        if saved != "numpy" and saved in self.backend_actions:
            self.set_backend(saved, remember=False)
        else:
            self._sync_backend_actions()

    def _sync_backend_actions(self, probe: bool = True) -> None:
        available = compute.available_backends() if probe else ["numpy"]
        reasons = compute.unavailable_reasons() if probe else {}
        for name, action in self.backend_actions.items():
            action.setEnabled(name in available or not probe)
            action.setToolTip(reasons.get(name, tr(f"action.backend_{name}.tooltip")))
        self.backend_actions[compute.active()].setChecked(True)
        self.backend_label.setText(tr("readout.backend", backend=backend_name()))

    def _backend_fell_back(self, text: str) -> None:
        """A kernel failed: compute fell back to NumPy; say why, once."""
        message = compute.take_fallback_message() or text
        self.show_status(tr("backend.fell_back", reason=message))
        self._sync_backend_actions(probe=False)

    def _refresh_views(self) -> None:
        for view in self.views.values():
            view.state_changed()  # a hidden view only notes it is stale, as for any other change

    def about(self) -> None:
        QMessageBox.about(self, plain(tr("action.about")), self.about_text())

    @staticmethod
    def about_text() -> str:
        return tr(
            "app.about",
            version=gui.__version__,
            qt=qVersion(),
            pyside=PySide6.__version__,
            pyqtgraph=pg.__version__,
            numpy=np.__version__,
            python=platform.python_version(),
            backend=backend_name(),
        )

    # -- sessions ---------------------------------------------------------------------
    def save_session(self, path: Path | str) -> None:
        self.lab.session(self.current_name).save(path)

    def open_session(self, path: Path | str) -> list[str]:
        """Load a session file; returns the settings it had to skip.

        A file that is not a session raises SessionError and changes nothing.
        """
        session = Session.load(path)
        skipped = self.lab.restore(session)
        if session.current_view and session.current_view in self.lab.models:
            self.show_view(session.current_view)
        return skipped

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("session.open"), "", tr("session.filter"))
        if not path:
            return
        try:
            skipped = self.open_session(path)
        except SessionError as exc:
            QMessageBox.warning(self, tr("session.failed_title"), str(exc))
            return
        self.show_status(tr("session.loaded", path=path))
        if skipped:
            QMessageBox.warning(self, tr("session.partial_title"),
                                tr("session.partial", items="\n".join(skipped)))

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("session.save"), "session.json", tr("session.filter"))
        if not path:
            return
        try:
            self.save_session(path)
        except OSError as exc:
            QMessageBox.warning(self, tr("session.save_failed_title"), str(exc))
            return
        self.show_status(tr("session.saved", path=path))

    # -- export -------------------------------------------------------------------------
    def ask_overwrite(self, folder: Path, files: str) -> bool:
        answer = QMessageBox.question(
            self, tr("export.overwrite_title"),
            tr("export.overwrite", folder=folder, files=files.replace(", ", "\n")),
        )
        return answer == QMessageBox.StandardButton.Yes

    def report_error(self, title: str, text: str) -> None:
        QMessageBox.warning(self, title, text)

    def export_current(self, folder: Path | str, *, plots: bool = True, arrays: bool = True,
                       options: export.ExportOptions | None = None) -> list[Path]:
        """Export the shown view to ``folder`` (figures sized by ``options``), asking before replacing files."""
        folder = Path(folder)
        name = self.current_name
        view = self.view(name)
        try:
            try:
                written = export.export_view(view, name, folder, plots=plots, arrays=arrays, options=options)
            except FileExistsError as exc:
                if not self.ask_overwrite(folder, str(exc)):
                    return []
                written = export.export_view(view, name, folder, plots=plots, arrays=arrays, overwrite=True,
                                             options=options)
        except export.ExportError as exc:
            key = "export.failed" if exc.nothing_written else "export.failed_partly"  # say what was left
            self.report_error(tr("export.failed_title"), tr(key, error=exc))
            return []
        self.show_status(tr("export.done", count=len(written), folder=export.shown(folder)))
        return written

    def export_dialog(self, *, plots: bool, arrays: bool) -> None:
        options = ask_export_options(self, self.settings) if plots else None  # size and dpi, remembered
        if plots and options is None:
            return
        what = tr("export.plots") if plots else tr("export.arrays")
        folder = QFileDialog.getExistingDirectory(
            self, tr("export.choose_dir", what=what, view=registry.get(self.current_name).title)
        )
        if folder:
            self.export_current(folder, plots=plots, arrays=arrays, options=options)

    # -- start and end -----------------------------------------------------------------
    def _restore_geometry(self, restore: bool) -> None:
        """The saved geometry if it fits its screen's available area, else a share of the screen."""
        saved = self.settings.value("window/geometry") if restore else None
        rect = None
        if isinstance(saved, QRect):
            rect = screen_fit.fitted(saved, screen_fit.available_at(saved.center()))
        if rect is None:
            self.setGeometry(screen_fit.first_geometry(screen_fit.available_at()))
            return
        self.setGeometry(rect)
        if self.settings.value("window/maximized", False, type=bool):
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)

    def _restore(self) -> None:
        """Reopen the last session; whatever is wrong with it, the window still comes up.

        A session that cannot be restored is moved to ``last-session.json.bad``
        (closing writes a fresh one) and the status bar says why in one line.
        """
        last = self.settings_dir / LAST_SESSION
        if last.exists() or last.is_symlink():
            try:
                skipped = self.open_session(last)
                if skipped:
                    self.show_status(tr("session.restore_partial", items="; ".join(skipped)))
            except Exception as exc:  # noqa: BLE001 - nothing in a saved file may stop the start
                if not isinstance(exc, SessionError):
                    traceback.print_exc()
                with contextlib.suppress(OSError):
                    last.replace(last.with_name(LAST_SESSION + ".bad"))
                reason = " ".join(str(exc).split()) or type(exc).__name__
                reason = reason if len(reason) <= 240 else reason[:237] + "..."
                self.statusBar().showMessage(tr("session.restore_failed", error=reason), 30000)
        self.undo_stack.clear()

    def closeEvent(self, event) -> None:
        compute.remove_fallback_listener(self.fallback_relay.relay)
        for view in self.views.values():  # no thread may outlive the window
            view.shutdown()
        try:
            self.settings_dir.mkdir(parents=True, exist_ok=True)
            self.settings.setValue("window/geometry", self.normalGeometry())
            self.settings.setValue("window/maximized", self.isMaximized())
            self.settings.sync()
            self.save_session(self.settings_dir / LAST_SESSION)
        except OSError as exc:  # a read-only config folder must not stop the app closing
            print(tr("session.save_failed_stderr", error=exc), file=sys.stderr)
        super().closeEvent(event)


def make_app(argv: list[str] | None = None) -> QApplication:
    keep_freed_memory()  # a slider's large arrays reuse freed memory (gui/allocator.py)
    app = QApplication.instance()
    if app is None:  # an existing app keeps its (themed) style: a second call must not reset it
        app = QApplication(argv or [sys.argv[0]])
        app.setStyle("Fusion")
    app.setApplicationName("Softmax Lab")
    app.setOrganizationName("Softmax Lab")
    app.setApplicationVersion(gui.__version__)
    language.apply_fonts(texts.language())  # a CJK family for Chinese (headless exports too)
    return app


def run() -> int:
    app = make_app()
    window = MainWindow()
    exit_after_first_paint(window)  # SOFTMAX_LAB_EXIT_AFTER_PAINT=1 (bench/startup.py)
    window.show()
    return app.exec()
