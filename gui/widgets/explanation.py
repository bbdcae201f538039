"""The explanation beside a view's plots, which the user can fold away to a thin strip."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QTextBrowser, QToolButton, QVBoxLayout, QWidget

from gui.model.texts import tr

#: The narrowest the text may be while shown.
MIN_TEXT_WIDTH = 220
#: Qt's QWIDGETSIZE_MAX: no maximum.
NO_MAXIMUM = 16777215


def explanation_html(text: str) -> str:
    """Turn a resource text into HTML: "### " lines are headings, blank lines split paragraphs.

    Inline HTML in the text (sub/superscripts) is kept as written.
    """
    out = []
    for block in text.split("\n\n"):
        block = block.strip()
        if block.startswith("### "):
            out.append(f"<h3>{html.escape(block[4:])}</h3>")
        elif block:
            out.append(f"<p>{block}</p>")
    return "\n".join(out)


class ExplanationPanel(QWidget):
    """A title with a fold button over the text; folded, only the button is left.

    A click on the button only emits ``toggled(shown)``: the owner applies
    it with :meth:`set_shown` (the window does, to every view, and remembers
    it), so a folded panel is always folded through one path.
    """

    toggled = Signal(bool)

    def __init__(self, text: str, parent=None):
        super().__init__(parent)
        self.setObjectName("explanation_panel")
        self.browser = QTextBrowser()
        self.browser.setObjectName("explanation")
        self.browser.setOpenExternalLinks(False)
        self.browser.setFrameShape(QFrame.Shape.NoFrame)
        self.browser.setHtml(explanation_html(text))
        self.browser.setMinimumWidth(MIN_TEXT_WIDTH)

        self.title = QLabel(tr("explain.title"))
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.button = QToolButton()
        self.button.setObjectName("explanation_toggle")
        self.button.setCheckable(True)
        self.button.setChecked(True)
        self.button.clicked.connect(self.toggled)
        self.header = header = QHBoxLayout()
        header.setContentsMargins(4, 0, 0, 0)
        header.addWidget(self.title, 1)
        header.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(header)
        lay.addWidget(self.browser, 1)
        self._shown = False
        self.set_shown(True)

    @property
    def shown(self) -> bool:
        return self._shown

    def set_shown(self, shown: bool) -> None:
        """Show the text, or fold the panel to its button; emits nothing."""
        self._shown = shown
        self.button.setChecked(shown)
        self.browser.setVisible(shown)
        self.title.setVisible(shown)
        self.button.setArrowType(Qt.ArrowType.RightArrow if shown else Qt.ArrowType.LeftArrow)
        self.button.setAutoRaise(shown)  # folded, the button is all there is: draw it as a button
        self.button.setToolTip(tr("explain.hide.tooltip" if shown else "explain.show.tooltip"))
        # folded, the splitter may not give the panel more than its button
        self.setMaximumWidth(NO_MAXIMUM if shown else self.button.sizeHint().width() + self.header.contentsMargins().left())
