"""The Sampling view's model source: the shared model strip, the generate strip, their job and notes.

:class:`ModelPart` is built by the view and asked at every redraw
(:meth:`ModelPart.prepare`) to want the logits after the strip's context:
the job runs them in the background (the previous distribution stays on
screen; a failure says why in the model strip and is not retried until
Run), or, while the view flushes for an export, here.  Generating and
clicking a bar run in the same job; their tokens join the strip when they
land (:meth:`gui.model.sampling.SamplingModel.take_outcome`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model import llm, llm_source
from gui.model.sampling import MAX_V, SamplingResult
from gui.model.texts import tr
from gui.views.sampling.generate import Cell, GenerateStrip, short_number
from gui.widgets.model_strip import ModelStrip


def limits_text() -> str:
    return tr("sampling_model.limits", v=f"{MAX_V:,}", tokens=llm.MAX_CONTEXT_TOKENS,
              generate=llm.MAX_GENERATE_TOKENS)


class ModelPart:
    """The model strip (model, prompt, Run), the generate strip and the job behind both."""

    def __init__(self, view):
        self.view = view
        m = view.model
        self.strip = ModelStrip(prompt_tooltip=f"{tr('param.prompt.tooltip')}. {limits_text()}",
                                object_name="sampling.model_strip")
        self.strip.set_values(m.model, m.prompt)
        self.strip.run_requested.connect(self.run)
        self.strip.cancel_requested.connect(self.cancel)
        self.generate = GenerateStrip()
        self.generate.next_requested.connect(lambda: self.act(m.generate_request(1)))
        self.generate.generate_requested.connect(lambda n: self.act(m.generate_request(n)))
        self.generate.clear_requested.connect(m.clear_strip)
        self.generate.rewind_requested.connect(m.rewind)
        self.job = view.add_job(m.llm.steps)
        self.job.delivered.connect(self._delivered)
        self.job.failed.connect(lambda _key, text: self.strip.tell(text, error=True))
        self.strip.watch(self.job)
        for name in ("model", "prompt"):
            connect_while_alive(view, getattr(m.events, name), self._follow)
        self._action = None  # the key of the action (generate, choose) the job works on
        self.check_available()

    # -- availability -------------------------------------------------------------------------
    def check_available(self) -> str | None:
        """Disable the strip and the ``model`` entry of the logits choice with the reason when the extra is missing."""
        reason = llm_source.unavailable_reason()
        self.strip.set_unavailable(reason)
        choice = self.view.controls["logits"]
        combo = choice.combo
        for w in (choice, choice.label, combo):
            w.setToolTip(tr("sampling_model.logits.tooltip"))  # the sources, the model's among them
        item = combo.model().item(combo.findData("model"))
        if item is not None:
            item.setEnabled(reason is None)
            item.setData(reason, Qt.ItemDataRole.ToolTipRole)
        return reason

    # -- user actions ---------------------------------------------------------------------------
    def _follow(self, *_args) -> None:
        m = self.view.model
        self.strip.set_values(m.model, m.prompt)

    def run(self, model: str, prompt: str) -> None:
        """Run: the fields go to the model (refused: the strip says why, nothing changes), then the job."""
        m = self.view.model
        try:
            m.update_from_dict({"model": model, "prompt": prompt})
        except ValueError as exc:
            self.strip.tell(str(exc), error=True)
            return
        request = m.model_request()
        found = m.llm.outcome(request)
        if found is not None and not found.ok:
            m.llm.forget(request)  # a Run after a failure tries again
        self.request(again=True)
        self.view.schedule_redraw()

    def act(self, request) -> None:
        """Generate or append a chosen token (in the job; the distribution shown stays until it lands)."""
        m = self.view.model
        if m.logits != "model" or not m.model.strip() or self.strip.unavailable is not None:
            return
        m.llm.forget(request)  # an action that failed before is tried again
        self._action = request.key
        self.job.request(request.key, request, again=True)

    def choose(self, index: int) -> None:
        """A click on bar ``index`` of the top tokens: append that token instead of a drawn one.

        Only while the bars are the current context's (not the previous result shown while it runs).
        """
        m = self.view.model
        if m.logits != "model" or not m.model_current:
            return
        r = m.result(self.view.scores)
        if 0 <= index < r.shown.size:
            self.act(m.choose_request(int(r.shown[index])))

    def request(self, *, again: bool = False) -> bool:
        """Want the look at the current context; True if it is kept (nothing to run)."""
        m = self.view.model
        request = m.model_request()
        if not request.model.strip():
            return False
        if m.llm.outcome(request) is not None:
            return True
        if self.view.synchronous:
            m.take_outcome(m.llm.run_now(request))
            return True
        if self._action is not None and self.job.busy and self.job.wanted_key == self._action and not again:
            return False  # an action is running: its result brings the next look
        self.job.request(request.key, request, again=again)
        return False

    def cancel(self) -> None:
        if self.job.cancel() is not None:
            self.strip.tell(tr("models.strip.cancelled"))
            self.view.schedule_redraw()

    def _delivered(self, key, outcome) -> None:
        if key == self._action:
            self._action = None
            if not outcome.ok:
                self.strip.tell(outcome.error, error=True)
        self.view.model.take_outcome(outcome)
        self.view.schedule_redraw()

    # -- drawing ---------------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        return self.view.model.logits == "model"

    def prepare(self) -> None:
        """At the start of a redraw: the strips only with the model source, and the look wanted."""
        m = self.view.model
        shown = self.active
        self.strip.setVisible(shown)
        self.generate.setVisible(shown)
        if not shown or self.strip.unavailable is not None:
            return
        self.request()
        outcome = m.llm.outcome(m.model_request())
        if not m.model.strip():
            self.strip.tell(tr("models.strip.no_model"))
        elif outcome is not None and not outcome.ok:
            self.strip.tell(outcome.error, error=True)
        elif outcome is not None:
            nt = outcome.result.next
            self.strip.tell(tr("sampling_model.ready", name=outcome.name, tokens=len(nt.ids),
                               v=f"{nt.logits.size:,}"))
        elif self.strip.message == tr("models.strip.cancelled"):
            pass  # the cancel's word stays until something else happens
        else:
            self.strip.tell("")

    def show(self, r: SamplingResult) -> None:
        """The generate strip: the prompt's end, each token with its probability and rank, the cursor."""
        if not self.active:
            return
        m = self.view.model
        strip = m.strip_now
        v = r.size if m.model_shown is not None else 0
        cells = [Cell(m.token_text(s), s.probability, s.rank, self._tooltip(m.token_text(s), s, v), s.chosen)
                 for s in strip.steps]
        self.generate.show_cells(m.prompt, cells, strip.cursor)
        self.generate.set_enabled(m.model_shown is not None and self.strip.unavailable is None)
        self.view.bars.setToolTip(tr("sampling_model.bars.click") if m.model_shown is not None else "")
        self.view.controls["vocab"].binding.refresh()  # V in use came with a result, not a field change

    @staticmethod
    def _tooltip(token: str, s: llm.GenStep, v: int) -> str:
        how = ("sampling_model.strip.cut" if s.chosen and not s.kept else
               "sampling_model.strip.chosen" if s.chosen else "sampling_model.strip.drawn")
        return tr("sampling_model.strip.cell.tooltip", position=s.position + 1, token=token, ident=s.token_id,
                  p=fmt(s.probability), rank=f"{s.rank:,}", v=f"{v:,}" if v else "?", how=tr(how))

    def notes(self) -> list[str]:
        """What the note says about the model shown (and the one asked for, when it is another)."""
        m = self.view.model
        if not self.active:
            return []
        shown = m.shown_outcome
        if shown is None:
            return [tr("sampling_model.note.no_model")]
        nt = shown.result.next
        notes = []
        if not m.model_current:
            key = "sampling_model.note.running" if self.job.busy else "sampling_model.note.previous"
            notes.append(tr(key, name=shown.name))
        notes.append(tr("sampling_model.note.shown", name=shown.name, tokens=len(nt.ids), v=f"{nt.logits.size:,}"))
        strip = m.strip_now
        if m.model_current and strip.cursor < len(strip.steps):
            s = strip.steps[strip.cursor]
            notes.append(tr("sampling_model.note.rewound", position=s.position + 1, token=m.token_text(s),
                            p=short_number(s.probability), rank=f"{s.rank:,}"))
        return notes
