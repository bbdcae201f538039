"""The Attention view's model source: the shared model strip, its job, the overview and the readouts.

:class:`ModelPart` is built by the view and asked at every redraw
(:meth:`ModelPart.prepare`) to want the current model and prompt: the job
runs them in the background (the previous result stays on screen; a
failure says why in the strip and is not retried until Run), or, while the
view flushes for an export, here.  What is drawn then comes from the
model's core like every other source's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QPushButton, QWidget

from gui.binding import connect_while_alive
from gui.model import llm, llm_source
from gui.model.attention.real import recompute_text
from gui.model.texts import tr
from gui.widgets.model_strip import ModelStrip

RECOMPUTE = "models.attention.readout.recompute"
#: The previous prompt is quoted up to this many characters in the note.
QUOTE = 40


def limits_text() -> str:
    return tr("models.attention.limits", tokens=llm.MAX_PROMPT_TOKENS, layers=llm.MAX_LAYERS, heads=llm.MAX_HEADS)


class ModelPart:
    """The strip (model, prompt, Run), the job, the overview button and the recomputation readout."""

    def __init__(self, view):
        self.view = view
        m = view.model
        self.strip = ModelStrip(prompt_tooltip=f"{tr('param.prompt.tooltip')}. {limits_text()}",
                                object_name="attention.model_strip")
        self.strip.set_values(m.model, m.prompt)
        self.strip.run_requested.connect(self.run)
        self.strip.cancel_requested.connect(self.cancel)
        self.job = view.add_job(m.llm.steps)
        self.job.delivered.connect(self._delivered)
        self.job.failed.connect(lambda _key, text: self.strip.tell(text, error=True))
        self.strip.watch(self.job)
        for name in ("model", "prompt"):
            connect_while_alive(view, getattr(m.events, name), self._follow)
        self._refused = ""  # why the last Run was refused (shown until the next Run or a change of the fields)
        self.overview = QPushButton(tr("models.attention.overview"))
        self.overview.setToolTip(tr("models.attention.overview.tooltip"))
        self.overview.clicked.connect(lambda: m.set_param("head", 0))
        self.check_available()

    # -- availability -------------------------------------------------------------------------
    def check_available(self) -> str | None:
        """Disable the strip and the source's "model" entry with the reason when the extra is missing."""
        reason = llm_source.unavailable_reason()
        self.strip.set_unavailable(reason)
        combo = self.view.source.combo
        item = combo.model().item(combo.findData("model"))
        if item is not None:
            item.setEnabled(reason is None)
            item.setData(reason, Qt.ItemDataRole.ToolTipRole)
        return reason

    # -- user actions ---------------------------------------------------------------------------
    def _follow(self, *_args) -> None:
        m = self.view.model
        self._refused = ""
        self.strip.set_values(m.model, m.prompt)

    def run(self, model: str, prompt: str) -> None:
        """Run: the fields go to the model (refused: the strip says why, nothing changes), then the job."""
        m = self.view.model
        try:
            m.update_from_dict({"model": model, "prompt": prompt})
        except ValueError as exc:
            self._refused = str(exc)
            self.strip.tell(self._refused, error=True)
            return
        self._refused = ""
        request = m.model_request()
        found = m.llm.outcome(request)
        if found is not None and not found.ok:
            m.llm.forget(request)  # a Run after a failure tries again
        self.request(again=True)
        self.view.schedule_redraw()

    def request(self, *, again: bool = False) -> bool:
        """Want the current request's outcome; True if it is kept (nothing to run)."""
        m = self.view.model
        request = m.model_request()
        if not request.model.strip():
            return False
        if m.llm.outcome(request) is not None:
            return True
        if self.view.synchronous:
            m.llm.run_now(request)
            return True
        self.job.request(request.key, request, again=again)
        return False

    def cancel(self) -> None:
        if self.job.cancel() is not None:
            self.strip.tell(tr("models.strip.cancelled"))
            self.view.schedule_redraw()

    def _delivered(self, _key, outcome) -> None:
        self.view.model.llm.store(outcome)
        self.view.schedule_redraw()
        self.view.start_sweep_soon()  # the sweep runs at the model's number of tokens

    # -- drawing ---------------------------------------------------------------------------------
    def prepare(self) -> None:
        """At the start of a redraw: show the strip with the model source, and want its result."""
        m = self.view.model
        shown = m.source == "model"
        self.strip.setVisible(shown)
        self.overview.setVisible(shown)
        if not shown or self.strip.unavailable is not None:
            return
        self.request()
        outcome = m.llm.outcome(m.model_request())
        if self._refused:
            self.strip.tell(self._refused, error=True)
        elif not m.model.strip():
            self.strip.tell(tr("models.strip.no_model"))
        elif outcome is not None and not outcome.ok:
            self.strip.tell(outcome.error, error=True)
        elif outcome is not None:
            self.strip.tell("")  # the note under the controls says what is shown
        elif self.strip.message == tr("models.strip.cancelled"):
            pass  # the cancel's word stays until something else happens
        else:
            self.strip.tell("")

    def show_readout(self, r, form: QFormLayout) -> None:
        """The recomputation row: shown with a real model, the layer's difference and the overall one."""
        label = self.view.readouts[RECOMPUTE]
        a = r.core.real
        form.setRowVisible(label, a is not None)
        if a is None:
            return
        text, tip = recompute_text(a, r.core.layer)
        label.setText(text)
        label.setToolTip(f"{tr(RECOMPUTE + '.tooltip')}\n\n{tip}")

    def notes(self, r) -> list[str]:
        """What the note says about the model shown (and the one asked for, when it is another)."""
        m = self.view.model
        a = r.core.real
        if m.source != "model" or a is None:
            return []
        outcome = m.shown_outcome
        notes = []
        if not m.model_current:
            prompt = a.prompt if len(a.prompt) <= QUOTE else a.prompt[:QUOTE - 1] + "…"
            key = "models.attention.note.running" if self.job.busy else "models.attention.note.previous"
            notes.append(tr(key, name=outcome.name, prompt=prompt.replace("\n", " ")))
        notes.append(tr("models.attention.note.shown", name=outcome.name, tokens=a.n_tokens, layers=a.n_layers,
                        heads=a.n_heads, layer=r.core.layer + 1))
        if r.all_heads:
            notes.append(tr("models.attention.note.grid"))
        if not a.recomputed:
            notes.append(a.note)
        return notes

    def widgets(self) -> list[QWidget]:
        return [self.strip]
