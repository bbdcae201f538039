"""Lessons: guided steps through the views, read from ``resources/lessons/*.json`` (no Qt).

A lesson is data (see ``resources/lessons/README.md``): each step names one
view, the scores and every parameter it sets, and its texts live in
``resources/texts/<lang>/lesson_<id>.json``.  Reading a file only checks its
shape (:class:`LessonError`, naming the file and the step); :func:`validate`
checks it against the registry, each model's parameters, the texts of every
language and the arrays each view exports, and lists every problem it finds.

:func:`step_session` turns a step into a :class:`~gui.model.session.Session`
that holds the score row and the step's view only, every parameter the step
does not name at its default; the window applies it with ``lab.restore`` (all
or nothing), so the other views keep whatever the user made there.

Examples
--------
>>> step = find("demos.calculator")
>>> step.view
'calculator'
>>> from gui.model.lab import Lab
>>> lab = Lab()
>>> lab.restore(step_session(step, lab))
[]
>>> [round(float(v), 3) for v in lab.models["calculator"].arrays(lab.scores)["probs"].data]
[0.609, 0.224, 0.136, 0.03]
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from gui.model import npfile
from gui.model.scores import Score, ScoreRow
from gui.model.session import Session
from gui.model.texts import LANGUAGES, tr
from resources import RESOURCES

FORMAT = "softmax-lab-lesson"
LESSONS_DIR = RESOURCES / "lessons"
TEXTS_DIR = RESOURCES / "texts"
#: A lesson file larger than this is refused (the longest needs a few kB).
MAX_BYTES = 256 * 1024
ID = re.compile(r"[A-Za-z0-9-]+\Z")
#: The texts every step has; a step with a question also has question, choice.1..n and why.
STEP_TEXTS = ("title", "do", "notice")
QUESTION_TEXTS = ("question", "why")
STEP_FIELDS = {"id", "view", "scores", "labels", "params", "state", "tab", "question", "checks"}


class LessonError(ValueError):
    """A lesson file that cannot be read; the message names the file (and the step) and says why."""


@dataclass(frozen=True)
class Check:
    """A number the step quotes: ``round(array[index] * scale, decimals) == value``."""

    array: str
    index: tuple[int, ...]
    value: float
    decimals: int
    scale: float = 1.0

    def holds(self, arrays: dict[str, np.ndarray]) -> bool:
        return round(float(arrays[self.array][self.index]) * self.scale, self.decimals) == self.value


@dataclass(frozen=True)
class Question:
    choices: int  # 2 to 4
    answer: int  # 1-based


@dataclass(frozen=True)
class Step:
    lesson: str
    id: str
    view: str
    scores: tuple[float, ...] | None = None
    labels: tuple[str, ...] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    tab: str | None = None
    question: Question | None = None
    checks: tuple[Check, ...] = ()

    @property
    def name(self) -> str:
        """``LESSON.STEP``, as the command line names it."""
        return f"{self.lesson}.{self.id}"

    def key(self, part: str) -> str:
        return f"lesson.{self.lesson}.{self.id}.{part}"

    def text(self, part: str) -> str:
        return tr(self.key(part))

    @property
    def title(self) -> str:
        return self.text("title")

    def text_keys(self) -> list[str]:
        keys = [self.key(p) for p in STEP_TEXTS]
        if self.question is not None:
            keys += [self.key(p) for p in QUESTION_TEXTS]
            keys += [self.key(f"choice.{i}") for i in range(1, self.question.choices + 1)]
        return keys


@dataclass(frozen=True)
class Lesson:
    id: str
    order: float
    article: str
    steps: tuple[Step, ...]
    path: Path | None = None

    @property
    def title(self) -> str:
        return tr(f"lesson.{self.id}.title")

    @property
    def summary(self) -> str:
        return tr(f"lesson.{self.id}.summary")

    def text_keys(self) -> list[str]:
        return [f"lesson.{self.id}.title", f"lesson.{self.id}.summary"] + [k for s in self.steps for k in s.text_keys()]


# -- reading ----------------------------------------------------------------------------------
def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LessonError(tr("lessonfile.expected_number", where=where, value=value))
    number = float(value)
    if not math.isfinite(number):
        raise LessonError(tr("lessonfile.expected_finite", where=where, value=value))
    return number


_KINDS = {str: "lessonfile.kind.text", list: "lessonfile.kind.list", dict: "lessonfile.kind.object"}


def _typed(doc: dict, key: str, kind, where: str, default: Any = None) -> Any:
    value = doc.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise LessonError(tr("lessonfile.must_be_kind", where=where, field=key, kind=tr(_KINDS[kind])))
    return value


def _check(doc: Any, where: str) -> Check:
    if not isinstance(doc, dict):
        raise LessonError(tr("lessonfile.check_not_object", where=where))
    unknown = sorted(set(doc) - {"array", "index", "value", "decimals", "scale"})
    if unknown:
        raise LessonError(tr("lessonfile.unknown_fields", where=where, fields=", ".join(unknown)))
    array = _typed(doc, "array", str, where)
    index = _typed(doc, "index", list, where, [])
    if array is None or not all(isinstance(i, int) and not isinstance(i, bool) for i in index):
        raise LessonError(tr("lessonfile.check_array_index", where=where))
    decimals = doc.get("decimals")
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 12:
        raise LessonError(tr("lessonfile.check_decimals", where=where))
    return Check(array, tuple(index), _number(doc.get("value"), tr("error.where", where=where, what="value")),
                 decimals, _number(doc.get("scale", 1), tr("error.where", where=where, what="scale")))


def _step(lesson: str, doc: Any, k: int, where: str) -> Step:
    if not isinstance(doc, dict):
        raise LessonError(tr("lessonfile.step_not_object", where=where, k=k))
    sid = doc.get("id")
    if not isinstance(sid, str) or not ID.match(sid):
        raise LessonError(tr("lessonfile.bad_id", where=tr("lessonfile.where_step_number", where=where, k=k)))
    where = tr("lessonfile.where_step", where=where, step=sid)
    unknown = sorted(set(doc) - STEP_FIELDS)
    if unknown:
        raise LessonError(tr("lessonfile.unknown_fields", where=where, fields=", ".join(unknown)))
    view = _typed(doc, "view", str, where)
    if view is None:
        raise LessonError(tr("lessonfile.view_missing", where=where))
    scores = _typed(doc, "scores", list, where)
    if scores is not None:
        scores = tuple(_number(v, tr("error.where", where=where, what=f"scores[{i}]")) for i, v in enumerate(scores))
    labels = _typed(doc, "labels", list, where)
    if labels is not None:
        if not all(isinstance(s, str) for s in labels):
            raise LessonError(tr("lessonfile.labels_not_texts", where=where))
        labels = tuple(labels)
    params = _typed(doc, "params", dict, where, {})
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise LessonError(tr("lessonfile.param_kind", where=where, field=f"params.{name}"))
    state = _typed(doc, "state", dict, where, {})
    tab = _typed(doc, "tab", str, where)
    question = _typed(doc, "question", dict, where)
    if question is not None:
        choices, answer = question.get("choices"), question.get("answer")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (choices, answer)):
            raise LessonError(tr("lessonfile.question_numbers", where=where))
        question = Question(choices, answer)
    checks = _typed(doc, "checks", list, where, [])
    checks = tuple(_check(c, tr("lessonfile.where_check", where=where, n=i + 1)) for i, c in enumerate(checks))
    return Step(lesson, sid, view, scores, labels, dict(params), dict(state), tab, question, checks)


def parse(text: str, where: str, path: Path | None = None) -> Lesson:
    """A lesson from its JSON text; LessonError (naming ``where`` and the step) if its shape is wrong."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise LessonError(tr("lessonfile.not_json", where=where, error=exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise LessonError(tr("lessonfile.not_lesson", where=where, format=FORMAT))
    lid = doc.get("id")
    if not isinstance(lid, str) or not ID.match(lid):
        raise LessonError(tr("lessonfile.bad_id", where=where))
    if path is not None and path.stem != lid:
        raise LessonError(tr("lessonfile.wrong_file", where=where, id=lid))
    order = _number(doc.get("order"), tr("error.where", where=where, what="order"))
    article = _typed(doc, "article", str, where, "")
    steps = doc.get("steps")
    if not isinstance(steps, list) or not steps:
        raise LessonError(tr("lessonfile.no_steps", where=where))
    parsed = tuple(_step(lid, s, k + 1, where) for k, s in enumerate(steps))
    ids = [s.id for s in parsed]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise LessonError(tr("lessonfile.repeated_ids", where=where, ids=", ".join(repeated)))
    return Lesson(lid, order, article, parsed, path)


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """A regular UTF-8 file of at most ``max_bytes``; LessonError naming it otherwise."""
    try:
        data = npfile.read_regular(path, max_bytes, where=path.name)
    except npfile.LoadError as exc:
        raise LessonError(str(exc)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LessonError(tr("lessonfile.not_utf8", where=path.name, reason=exc.reason, start=exc.start)) from None


def load(path: Path | str) -> Lesson:
    path = Path(path)
    return parse(read_text(path), path.name, path)


@cache
def _all(folder: Path) -> tuple[Lesson, ...]:
    found = [load(p) for p in sorted(folder.glob("*.json"))]
    return tuple(sorted(found, key=lambda lesson: (lesson.order, lesson.id)))


def lessons(folder: Path = LESSONS_DIR) -> tuple[Lesson, ...]:
    """Every lesson in ``folder``, in their ``order``; LessonError for the first file that cannot be read."""
    return _all(Path(folder))


def steps(folder: Path = LESSONS_DIR) -> list[Step]:
    return [s for lesson in lessons(folder) for s in lesson.steps]


def find(name: str, folder: Path = LESSONS_DIR) -> Step:
    """The step called ``LESSON.STEP``; KeyError whose message names the closest step."""
    every = {s.name: s for s in steps(folder)}
    if name in every:
        return every[name]
    close = difflib.get_close_matches(name, list(every), n=1, cutoff=0.0)
    hint = tr("lessonfile.did_you_mean", name=close[0]) if close else ""
    raise KeyError(tr("lessonfile.no_step", name=name, hint=hint, command="softmax-lab lessons"))


def complete(lesson: Lesson) -> bool:
    """Whether every text the lesson shows exists (in the current language or English);
    the panel and ``lessons`` list only complete lessons (one still being written waits)."""
    try:
        for key in lesson.text_keys():
            tr(key)
    except KeyError:
        return False
    return True


def lesson_of(step: Step, folder: Path = LESSONS_DIR) -> Lesson:
    return next(lesson for lesson in lessons(folder) if lesson.id == step.lesson)


# -- a step as a session -----------------------------------------------------------------------
def step_session(step: Step, lab) -> Session:
    """The session that puts ``lab`` into the step's exact state.

    It holds the score row (the step's, or the lab's when the step sets none)
    and the step's view only: every parameter the step does not name at its
    default, and the view's extra state at its default updated with the
    step's ``state``.  Other views are not in it, so applying it leaves them
    as they are.
    """
    model = lab.models[step.view]
    values = {name: p.default for name, p in model.params().items()}
    values.update(step.params)
    state = type(model)().extra_state()
    state.update(step.state)
    if step.scores is None:
        entries = lab.scores.entries
    else:
        labels = step.labels or tuple(f"Token {i + 1}" for i in range(len(step.scores)))
        entries = tuple(Score(str(lb), float(v)) for lb, v in zip(labels, step.scores, strict=False))
    return Session(scores=entries, views={step.view: values}, current_view=step.view, state={step.view: state})


def differs(session: Session, lab) -> bool:
    """Whether applying a step's ``session`` would change ``lab`` (False: it is already in that state)."""
    if tuple(session.scores) != tuple(lab.scores.entries):
        return True
    for name, values in session.views.items():
        model = lab.models[name]
        specs = model.params()
        try:
            if any(getattr(model, key) != specs[key].check(value) for key, value in values.items()):
                return True
            fresh = type(model)()
            fresh.apply_extra_state(fresh.check_extra_state(session.state.get(name, {})))
        except (KeyError, ValueError, TypeError):
            return True  # applying it will say what is wrong
        if fresh.extra_state() != model.extra_state():
            return True
    return False


def exported(model, scores: ScoreRow) -> dict[str, np.ndarray]:
    """The arrays as ``export`` writes them to the .npz (the full array where it differs from the CSV)."""
    return {k: (a.npz_data if a.npz_data is not None else a.data) for k, a in model.arrays(scores).items()}


# -- validation ---------------------------------------------------------------------------------
def tab_names(view: str) -> tuple[str, ...]:
    """The tab names a view offers to ``tab`` (its model's TAB_NAMES)."""
    from gui import registry

    return tuple(getattr(registry.get(view).model, "TAB_NAMES", ()))


def _texts(lesson: Lesson, lang: str, texts_dir: Path) -> dict[str, Any] | str:
    path = texts_dir / lang / f"lesson_{lesson.id}.json"
    try:
        doc = json.loads(read_text(path, 4 * MAX_BYTES))
    except (LessonError, json.JSONDecodeError) as exc:
        return tr("error.where", where=f"{lang}/{path.name}", what=exc)
    return doc if isinstance(doc, dict) else tr("lessonfile.texts_not_object", where=f"{lang}/{path.name}")


def _validate_texts(lesson: Lesson, texts_dir: Path) -> list[str]:
    problems = []
    wanted = lesson.text_keys()
    for lang in LANGUAGES:
        table = _texts(lesson, lang, texts_dir)
        if isinstance(table, str):
            problems.append(table)
            continue
        for key in wanted:
            value = table.get(key)
            if not isinstance(value, str) or not value.strip():
                problems.append(tr("lessonfile.text_missing", lang=lang, name=key))
        extra = sorted(set(table) - set(wanted))
        if extra:
            problems.append(tr("lessonfile.texts_unused", lang=lang, keys=", ".join(extra)))
    return problems


def _validate_step(step: Step) -> list[str]:
    from gui import registry
    from gui.model.lab import Lab

    where = f"{step.name}"
    try:
        spec = registry.get(step.view)
    except KeyError:
        views = ", ".join(s.name for s in registry.VIEWS)
        return [tr("lessonfile.unknown_view", where=where, view=step.view, views=views)]
    problems = []
    params = spec.model.params()
    for name, value in step.params.items():
        if name not in params:
            problems.append(tr("lessonfile.no_parameter", where=where, view=step.view, name=name))
            continue
        try:
            params[name].check(value)
        except (ValueError, TypeError, OverflowError) as exc:
            problems.append(tr("error.where", where=where, what=exc))
    if step.scores is not None:
        if step.labels is not None and len(step.labels) != len(step.scores):
            problems.append(tr("lessonfile.labels_count", where=where, labels=len(step.labels),
                               scores=len(step.scores)))
        try:
            ScoreRow().set_values(step.scores)
        except ValueError as exc:
            problems.append(tr("lessonfile.scores", where=where, error=exc))
    elif step.labels is not None:
        problems.append(tr("lessonfile.labels_without_scores", where=where))
    try:
        spec.model().check_extra_state(step.state)
    except (ValueError, TypeError) as exc:
        problems.append(tr("lessonfile.state", where=where, error=exc))
    tabs = tab_names(step.view)
    if step.tab is not None and step.tab not in tabs:
        offered = ", ".join(tabs) if tabs else tr("lessonfile.no_tabs")
        problems.append(tr("lessonfile.no_tab", where=where, view=step.view, tab=step.tab, tabs=offered))
    q = step.question
    if q is not None and not (2 <= q.choices <= 4 and 1 <= q.answer <= q.choices):
        problems.append(tr("lessonfile.question_range", where=where, choices=q.choices, answer=q.answer))
    if problems or not step.checks:
        return problems
    lab = Lab()
    skipped = lab.restore(step_session(step, lab))
    problems += [tr("error.where", where=where, what=line) for line in skipped]
    arrays = exported(lab.models[step.view], lab.scores)
    for i, check in enumerate(step.checks, 1):
        if check.array not in arrays:
            problems.append(tr("lessonfile.no_array", where=where, n=i, view=step.view, array=check.array,
                               arrays=", ".join(arrays)))
            continue
        shape = arrays[check.array].shape
        if len(check.index) != len(shape) or not all(-n <= i < n for i, n in zip(check.index, shape, strict=False)):
            problems.append(tr("lessonfile.index_does_not_fit", where=where, n=i, index=list(check.index),
                               array=check.array, shape=list(shape)))
    return problems


def validate(lesson: Lesson, texts_dir: Path = TEXTS_DIR) -> list[str]:
    """Every problem of ``lesson``, one line each (an empty list: it is good)."""
    problems = []
    for step in lesson.steps:
        problems += _validate_step(step)
    return problems + _validate_texts(lesson, texts_dir)
