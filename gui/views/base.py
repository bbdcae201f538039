"""What every view shares: bindings, throttled redraws, the explanation, export hooks."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.model.base import ExportArray, ViewModel
from gui.model.scores import ScoreRow
from gui.model.texts import tr
from gui.widgets.explanation import ExplanationPanel
from gui.widgets.jobs import Job
from gui.widgets.plot import Plot
from gui.widgets.score_table import ScoreEditor
from gui.widgets.scroll_column import ScrollColumn
from gui.widgets.signals import Throttled
from gui.widgets.sliders import param_form

REDRAW_MS = 16  # about 60 Hz
#: The first split between a view's plots and its explanation (a ratio: the splitter scales it).
SPLIT = (1000, 300)
#: Readouts whose value is the app's own rich-text formula (e<sup>Δ/T</sup>) and never holds a label.
RICH_READOUTS = frozenset({"readout.ratio"})


def grid_page(*rows: tuple[QWidget, ...]) -> QWidget:
    """A tab's page: the widgets of each row side by side (a row of one widget spans both columns)."""
    page = QWidget()
    lay = QGridLayout(page)
    lay.setContentsMargins(0, 0, 0, 0)
    for r, widgets in enumerate(rows):
        for c, w in enumerate(widgets):
            lay.addWidget(w, r, c, 1, 2 if len(widgets) == 1 else 1)
    return page


class BaseView(QWidget):
    """A view: its controls and plots on the left, its explanation on the right.

    The view holds the shared score row and its own model; it redraws (at
    most about 60 times a second) whenever either changes.  Subclasses build
    their widgets in ``build`` and draw in ``redraw``; they only read state.
    """

    status = Signal(str)
    #: The hover readout this view last sent to ``status`` went stale (new data, or the view was hidden).
    hover_ended = Signal(str)
    #: The user folded (False) or opened (True) the explanation with the panel's own button.
    explanation_toggled = Signal(bool)

    def __init__(self, scores: ScoreRow, model: ViewModel, parent=None):
        super().__init__(parent)
        self.scores = scores
        self.model = model
        self.redraw_count = 0
        self._plots: dict[str, Plot] = {}
        self.readouts: dict[str, QLabel] = {}  # filled by readout_box / add_readouts
        self._jobs: list[Job] = []  # made by add_job: waited for by flush, shut down on close
        self._synchronous = False
        #: A state change arrived while the view was hidden: it redraws when next shown.
        self.stale = False

        self.content = QWidget()
        self.explanation = ExplanationPanel(tr(f"view.{model.name}.explain"))
        self.explanation.toggled.connect(self._explanation_clicked)
        self.explain = self.explanation.browser
        self.controls_scroll: ScrollColumn | None = None  # made by arrange

        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.content)
        splitter.addWidget(self.explanation)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes(list(SPLIT))
        splitter.setChildrenCollapsible(False)
        self._explanation_sizes: list[int] | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(splitter)

        self.build()
        self.schedule_redraw = Throttled(self._redraw, REDRAW_MS, parent=self)
        connect_while_alive(self, scores.events.entries, self.state_changed)
        connect_while_alive(self, model.events, self.state_changed)
        themes.manager().changed.connect(self.state_changed)
        self._redraw()

    # -- for subclasses ----------------------------------------------------------
    def build(self) -> None:
        raise NotImplementedError

    def redraw(self) -> None:
        raise NotImplementedError

    def score_editor(self) -> ScoreEditor:
        """A table over the shared scores whose messages go to the status bar, under it a note
        saying that the scores are shared by all views and every other setting is this view's own."""
        editor = ScoreEditor(self.scores)
        editor.message.connect(self.status)
        editor.shared_note = note = QLabel(tr("scores.shared_note"), objectName="shared_note", wordWrap=True)
        note.setToolTip(tr("scores.shared_note.tooltip"))
        editor.layout().addWidget(note)
        return editor

    def readout_box(self, keys: tuple[str, ...]) -> QGroupBox:
        """A box of caption/value rows for ``keys`` (see :meth:`add_readouts`)."""
        box = QGroupBox()
        self.add_readouts(QFormLayout(box), keys)
        return box

    def add_readouts(self, form: QFormLayout, keys: tuple[str, ...]) -> None:
        """Caption/value rows for ``keys`` in ``form``; the value labels land in ``self.readouts``."""
        for key in keys:
            caption = QLabel(tr("caption", label=tr(key)))
            value = QLabel("–")
            # values may carry score labels ("<b>x</b>" shows literally); only the app's own formulas are rich
            value.setTextFormat(Qt.TextFormat.RichText if key in RICH_READOUTS else Qt.TextFormat.PlainText)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            value.setObjectName(key)
            for w in (caption, value):
                w.setToolTip(tr(f"{key}.tooltip"))
            form.addRow(caption, value)
            self.readouts[key] = value

    def param_group(self, title: str, names: tuple[str, ...]) -> QGroupBox:
        """A titled box of the controls of ``names``; they land in ``self.controls`` (a parameter on several
        tabs gets a control on each, and ``self.controls`` keeps the last)."""
        box = QGroupBox(title)
        lay = QVBoxLayout(box)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.addWidget(param_form(self.model, names, message=self.status, controls=self.controls))
        return box

    def arrange(self, controls: list[QWidget], plots: QWidget, *, min_width: int = 300) -> None:
        """Controls in a column on the left (the first one stretches), plots on the right.

        The column scrolls vertically when the window is shorter than it
        (never sideways: it is at least as wide as its widest control).
        """
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        for i, w in enumerate(controls):
            column.addWidget(w, 1 if i == 0 else 0)
        left.setMinimumWidth(min_width)
        self.controls_scroll = ScrollColumn(left)
        lay = QHBoxLayout(self.content)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.controls_scroll, 2)
        lay.addWidget(plots, 5)

    # -- the explanation ---------------------------------------------------------------
    @property
    def explanation_shown(self) -> bool:
        return self.explanation.shown

    def set_explanation_shown(self, shown: bool) -> None:
        """Show the explanation, or fold it to its button (the plots get the room)."""
        if shown == self.explanation.shown:
            self.explanation.set_shown(shown)  # a click may have left the button out of step
            return
        if not shown:
            # sizes from before the view was ever laid out mean nothing: unfold to the first split
            self._explanation_sizes = self.splitter.sizes() if self.splitter.isVisible() else list(SPLIT)
        self.explanation.set_shown(shown)
        if shown and self._explanation_sizes:
            self.splitter.setSizes(self._explanation_sizes)

    def _explanation_clicked(self, shown: bool) -> None:
        self.set_explanation_shown(shown)
        self.explanation_toggled.emit(shown)

    def add_job(self, function) -> Job:
        """A background job of this view (see gui.widgets.jobs): flush waits for it, close stops it."""
        job = Job(function, self)
        self._jobs.append(job)
        return job

    @property
    def synchronous(self) -> bool:
        """True while :meth:`flush` redraws: compute everything here, whatever its size."""
        return self._synchronous

    def add_plot(self, key: str, plot: Plot) -> Plot:
        self._plots[key] = plot
        plot.hovered.connect(self._hovered)
        return plot

    def _hovered(self, text: str) -> None:
        self._hover_text = text
        self.status.emit(text)

    def _end_hover(self) -> None:
        text, self._hover_text = getattr(self, "_hover_text", ""), ""
        if text:
            self.hover_ended.emit(text)

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._end_hover()
        super().hideEvent(event)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self.stale:
            self.schedule_redraw()

    # -- for the window, the CLI and the tests -----------------------------------------
    def state_changed(self, *_args) -> None:
        """Redraw soon if the view is on screen; a hidden view only notes that it is stale
        (it redraws when shown; :meth:`flush` and exports redraw it at once all the same)."""
        if self.isVisible():
            self.schedule_redraw()
        else:
            self.stale = True

    def _redraw(self, *_args) -> None:
        self.stale = False
        self.redraw()
        self._settle_ranges()
        self.redraw_count += 1
        self._end_hover()  # the readout described the old data

    def _settle_ranges(self) -> None:
        """Run the shown plots' deferred auto-ranges and view mappings now, at the end of the redraw.

        pyqtgraph works out a changed auto-range, and maps a plot's items to a moved range, only when
        the scene prepares to paint; that change then asks for a second paint of the same plot.  Done
        here (what the paint would do first), a changed plot paints once, with the same picture; an
        unchanged one has nothing pending and is left alone."""
        for plot in self.plots().values():
            if plot.isVisible():
                plot.scene().prepareForPaint()

    @property
    def redraw_pending(self) -> bool:
        """Whether the throttle is holding a redraw back (for tests and benchmarks)."""
        return self.schedule_redraw.holding

    def flush(self) -> None:
        """Redraw now, of the current inputs: the jobs are waited for, and what they would still
        compute is computed here (:attr:`synchronous`), so exports are never stale."""
        for job in self._jobs:
            job.wait()
        self.schedule_redraw.cancel()
        self._synchronous = True
        try:
            self._redraw()
        finally:
            self._synchronous = False

    def shutdown(self) -> None:
        """Stop background work for good before the window goes away.

        A child widget gets no close event when its window closes, so the
        window calls this on every view it built.
        """
        for job in self._jobs:
            job.shutdown()

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def plots(self) -> dict[str, Plot]:
        return dict(self._plots)

    def arrays(self) -> dict[str, ExportArray]:
        return self.model.arrays(self.scores)

    # -- tabs, by name (a lesson step's ``tab``) ---------------------------------------------
    def tab_names(self) -> tuple[str, ...]:
        """The names of the view's tabs (``self.tabs``), in order: its model's TAB_NAMES; () without tabs."""
        return tuple(getattr(self.model, "TAB_NAMES", ())) if getattr(self, "tabs", None) is not None else ()

    def select_tab(self, name: str) -> None:
        """Show the tab called ``name``; ValueError naming the tabs there are."""
        names = self.tab_names()
        if name not in names:
            raise ValueError(f"the {self.model.name} view has no tab {name!r} (tabs: {', '.join(names) or 'none'})")
        self.tabs.setCurrentIndex(names.index(name))


