"""A view's real-model source: which model and prompt it asks for, and what came of them (no Qt).

Shared by the views that run a Hugging Face model (Attention, Sampling).  A
view keeps one :class:`ModelSource`, built around the computation it wants
from a loaded model (``llm.attention_steps``, a next-token function...), and
hands :meth:`ModelSource.steps` to its background job
(:meth:`gui.views.base.BaseView.add_job`) with a :class:`Request`:

>>> from gui.model import llm
>>> source = ModelSource(llm.attention_steps)
>>> request = Request("path/to/tiny-gpt2", "the cat sat")
>>> job = view.add_job(source.steps)                          # doctest: +SKIP
>>> job.request(request.key, request)                         # doctest: +SKIP
>>> job.delivered.connect(lambda key, outcome: source.store(outcome))  # doctest: +SKIP

``steps`` loads the model with :func:`llm.load` (cached by the llm layer:
a second prompt costs one forward pass), then runs the computation,
yielding progress in 0..1 (the load is the first :data:`LOAD_SHARE`; a
cancel takes effect at the next yield) and returns an :class:`Outcome`.  A
:class:`llm.ModelError` does not escape: it becomes ``Outcome.error``, the
one line to show.  :meth:`store` keeps outcomes (a few, by request) and the
last good one (:attr:`ModelSource.latest`), which the view keeps showing
while a new request runs or after one failed.  Headless exports run the
same generator here with :meth:`run_now`.

Also: :func:`unavailable_reason` (why the models extra cannot be used,
without importing torch just to ask), :func:`check_model` (the cheap checks
of a model field: a folder that is not there is refused at once) and
:func:`cached_model_ids` (the model ids in the local Hugging Face cache,
for completion).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gui.model import llm
from gui.model.base import drain
from gui.model.texts import tr

#: The share of a request's progress that loading the model stands for.
LOAD_SHARE = 0.2
#: Outcomes kept by request (each may hold a model's attention: tens of MiB).
KEEP = 3
#: The longest model field (a folder path) and prompt (in characters; tokens are limited by llm).
MAX_MODEL_TEXT = 1024
MAX_PROMPT_TEXT = 4000


def unavailable_reason(*, import_now: bool = False) -> str | None:
    """None when the models extra looks usable, else why not and the install command (one line).

    Importing torch takes seconds, so unless ``import_now`` this only asks
    Python whether torch and transformers are installed while neither is
    imported yet; a broken install then shows when a model is loaded (as
    that load's error).  Once they are imported, or when one is missing,
    the answer is :func:`llm.unavailable_reason`'s.
    """
    names = ("torch", "transformers")
    imported = all(n in sys.modules for n in names)
    installed = all(importlib.util.find_spec(n) is not None for n in names)
    if import_now or imported or not installed:
        return llm.unavailable_reason()
    return None


def _looks_like_path(text: str) -> bool:
    return (text.startswith((".", "~", "/", "\\")) or os.path.isabs(text) or "\\" in text
            or text.count("/") > 1)


def check_model(text: str) -> str:
    """``text`` stripped, if it can name a model; ValueError (llm's message) if it cannot.

    "" (no model yet) and any model id pass (an id is looked up when
    loaded); a folder must exist and hold a ``config.json``; a file, or a
    path to nothing, is refused at once.
    """
    text = text.strip()
    if not text:
        return ""
    folder = Path(os.path.expanduser(text))
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ValueError(tr("llm.error.no_model", path=text))
    elif folder.exists():
        raise ValueError(tr("llm.error.not_folder", path=text))
    elif _looks_like_path(text):
        raise ValueError(tr("llm.error.no_folder", path=text))
    return text


def hub_cache() -> Path:
    """The Hugging Face hub cache folder (``HF_HUB_CACHE``, ``HF_HOME``/hub, or ~/.cache/huggingface/hub)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def cached_model_ids(cache: Path | None = None, limit: int = 200) -> list[str]:
    """The model ids the local hub cache holds (``models--org--name`` folders), sorted; [] if none.

    One directory listing, no import of the hub library: cheap enough for a completer.
    """
    try:
        names = [e.name for e in os.scandir(cache or hub_cache()) if e.is_dir() and e.name.startswith("models--")]
    except OSError:
        return []
    return sorted(n[len("models--"):].replace("--", "/") for n in names)[:limit]


@dataclass(frozen=True)
class Request:
    """One run a view asks for: a model (folder or id, as typed) and a prompt."""

    model: str
    prompt: str

    @property
    def key(self) -> tuple[str, str]:
        """Equal keys ask for the same run (the job's key; outcomes are kept by it)."""
        return (self.model.strip(), self.prompt)


@dataclass(frozen=True, eq=False)
class Outcome:
    """What came of a request: the computation's ``result`` and the model's ``name``, or ``error``."""

    request: Request
    result: Any = None
    name: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class ModelSource:
    """A view's real-model runs: the generator for its job, and the outcomes kept (see the module).

    ``compute(loaded_model, prompt)`` is a generator yielding progress in
    0..1 and returning the result (``llm.attention_steps``), or a plain
    function returning it; it may raise :class:`llm.ModelError`.  With
    ``pass_request`` it is called as ``compute(loaded_model, request)``
    instead, for a view whose requests carry more than a prompt (a
    :class:`Request` subclass with its own ``key``).
    """

    def __init__(self, compute: Callable[[llm.LoadedModel, Any], Any], *, pass_request: bool = False):
        self._compute = compute
        self._pass_request = pass_request
        self._outcomes: dict[tuple[str, str], Outcome] = {}
        #: The last outcome that worked (what the view shows while another runs or after one failed).
        self.latest: Outcome | None = None

    def steps(self, request: Request):
        """Load the model and run the computation: a job generator returning an :class:`Outcome`.

        Pure (thread-safe): it changes nothing here; :meth:`store` keeps what it returns.
        """
        yield 0.0
        try:
            loaded = llm.load(request.model.strip())
            yield LOAD_SHARE
            out = self._compute(loaded, request if self._pass_request else request.prompt)
            if inspect.isgenerator(out):
                while True:
                    try:
                        fraction = next(out)
                    except StopIteration as stop:
                        out = stop.value
                        break
                    yield LOAD_SHARE + (1.0 - LOAD_SHARE) * float(fraction)
        except llm.ModelError as exc:
            return Outcome(request, error=str(exc))
        yield 1.0
        return Outcome(request, result=out, name=loaded.name)

    def store(self, outcome: Outcome) -> Outcome:
        """Keep ``outcome`` (the last :data:`KEEP`); a good one becomes :attr:`latest`."""
        key = outcome.request.key
        self._outcomes.pop(key, None)
        self._outcomes[key] = outcome
        while len(self._outcomes) > KEEP:
            self._outcomes.pop(next(iter(self._outcomes)))
        if outcome.ok:
            self.latest = outcome
        return outcome

    def outcome(self, request: Request) -> Outcome | None:
        """The kept outcome of ``request`` (good or failed), else None (never runs anything)."""
        return self._outcomes.get(request.key)

    def result(self, request: Request) -> Any:
        """The result of ``request`` if it ran and worked, else None."""
        found = self.outcome(request)
        return found.result if found is not None and found.ok else None

    def forget(self, request: Request) -> None:
        """Drop the kept outcome of ``request`` (a Run after a failure tries again)."""
        self._outcomes.pop(request.key, None)

    def run_now(self, request: Request) -> Outcome:
        """Run ``request`` on this thread (headless export, flush) unless kept; returns and keeps its outcome."""
        found = self.outcome(request)
        return found if found is not None else self.store(drain(self.steps(request)))
