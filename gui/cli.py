"""``softmax-lab export``: render a view offscreen and write its files.

The options come from the registry: every parameter of every view's model
becomes ``--NAME``, so a new view's parameters appear here by themselves.
The command builds the very same view widgets as the window.  Messages
name the command ``softmax-lab`` however it was started (the installed
script or main.py in a checkout).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import unicodedata
from pathlib import Path

from gui import registry
from gui.export.atomic import shown
from gui.export.options import ExportOptions
from gui.model import lessons
from gui.model.lab import Lab
from gui.model.scores import parse_score
from gui.model.session import Session, SessionError
from gui.model.texts import tr

EXPORT_SIZE = (1400, 900)
PROG = "softmax-lab export"
#: Qt says this for every top-level window on the offscreen platform; it is harmless.
QT_NOISE = ("This plugin does not support propagateSizeHints()",)


class UsageError(Exception):
    """A bad argument: exit 2 with a one-line reason."""


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so the export's clean-up runs."""


@contextlib.contextmanager
def sigterm_raises():
    """While inside, SIGTERM raises Terminated (where this thread may set handlers)."""
    def handler(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


class WideHelpFormatter(argparse.HelpFormatter):
    """Wraps help by terminal columns, so Chinese help fits the width English does.

    A run of Latin text (``--dpi``, ``1800x1200``) is never split; a line may
    break between two CJK characters, never before closing punctuation.
    """

    def _split_lines(self, text: str, width: int) -> list[str]:
        if _width(text) == len(text):
            return super()._split_lines(text, width)
        lines: list[list[str]] = [[]]
        for token in re.findall(r"\s+|[^\s\u2e80-\uffef]+|.", " ".join(text.split())):
            line = lines[-1]
            if token.isspace() or _width("".join(line) + token) <= width or not line:
                line.append(token)
                continue
            carried = [line.pop()] if token in "，。、；：）？！" and len(line) > 1 else []
            while line and line[-1].isspace():
                line.pop()
            lines.append([*carried, token])
        return ["".join(line).strip() for line in lines]

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if _width(text) == len(text):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in self._split_lines(text, width - len(indent)))


class RawWideHelpFormatter(argparse.RawDescriptionHelpFormatter, WideHelpFormatter):
    """The description and epilog as written; option help wrapped by columns."""


class _Parser(argparse.ArgumentParser):
    """Errors as UsageError; -h and an invalid choice say so in the current language."""

    def __init__(self, formatter_class=WideHelpFormatter, **kwargs) -> None:
        super().__init__(add_help=False, formatter_class=formatter_class, **kwargs)
        self.add_argument("-h", "--help", action="help", help=tr("cli.option.help"))

    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(message)

    def _check_value(self, action, value):
        if action.choices is not None and value not in action.choices:
            raise argparse.ArgumentError(None, tr(
                "cli.error.invalid_choice", option="/".join(action.option_strings) or action.dest, value=value,
                choices=", ".join(map(repr, action.choices))))


def _all_params():
    """{name: [(view, Param), ...]} over the registry, in order.

    Views may share a parameter name with different ranges (the Temperature
    view's scale is 0.1..10, the Precision view's 1..1000): each model checks
    its own, and the help lists each distinct range.
    """
    out: dict = {}
    for spec in registry.VIEWS:
        for name, p in spec.model.params().items():
            out.setdefault(name, []).append((spec.name, p))
    return out


def _describe(p) -> str:
    if p.kind == "path":
        return tr("cli.param.path")
    if p.kind == "text":
        return tr("cli.param.text", limit=int(p.maximum))
    if p.kind == "choice":
        return tr("cli.param.choice", choices=", ".join(p.choices), default=p.default)
    if p.kind == "int":
        return tr("cli.param.range", low=int(p.minimum), high=int(p.maximum), default=int(p.default))
    key = "cli.param.range_log" if p.log else "cli.param.range"
    return tr(key, low=f"{p.minimum:g}", high=f"{p.maximum:g}", default=f"{p.default:g}")


def _add_param_option(parser: argparse.ArgumentParser, name: str, owners) -> None:
    groups: dict[str, list[str]] = {}
    for view, p in owners:
        groups.setdefault(_describe(p), []).append(view)
    ranges = tr("cli.param.separator").join(
        tr("cli.param.views", text=text, views=", ".join(views)) for text, views in groups.items()
    )
    help_text = tr("cli.param.help", label=tr(f"param.{name}.label"), ranges=ranges)
    kinds = {p.kind for _view, p in owners}
    if kinds == {"choice"}:
        choices = list(dict.fromkeys(c for _view, p in owners for c in p.choices))
        switch = {"nargs": "?", "const": "on"} if choices == ["off", "on"] else {}  # a bare --quick is "on"
        parser.add_argument(f"--{name}", choices=choices, default=None, help=help_text, **switch)
    elif kinds == {"path"}:
        parser.add_argument(f"--{name}", default=None, metavar="PATH", help=help_text)
    elif kinds == {"text"}:
        parser.add_argument(f"--{name}", default=None, metavar="TEXT", help=help_text)
    elif kinds == {"int"}:
        parser.add_argument(f"--{name}", type=int, default=None, metavar="N", help=help_text)
    else:  # each model rejects what does not fit it
        parser.add_argument(f"--{name}", default=None, metavar="X", help=help_text)


def build_parser() -> argparse.ArgumentParser:
    lines = [tr("cli.epilog.views")]
    for spec in registry.VIEWS:
        params = " ".join(f"--{n}" for n in spec.model.params()) or tr("cli.epilog.no_parameters")
        lines.append(f"  {spec.name:<14}{tr(f'view.{spec.name}.tooltip')}")
        lines.append(f"  {'':<14}{tr('cli.epilog.parameters', params=params)}")
    lines += ["", tr("cli.epilog.example"),
              "  softmax-lab export --view temperature --scores 5.2,3.1,1.8 "
              "--temperature 0.5 --out out/",
              "  softmax-lab export --view gradients --plots-only --dpi 300 --out figures/"]
    parser = _Parser(
        prog=PROG,
        description=tr("cli.export.description"),
        epilog="\n".join(lines),
        formatter_class=RawWideHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--view", choices=[s.name for s in registry.VIEWS], help=tr("cli.option.view"))
    which.add_argument("--lesson", metavar="LESSON.STEP",
                       help=tr("cli.option.lesson", command="softmax-lab lessons"))
    parser.add_argument("--out", required=True, type=Path, help=tr("cli.option.out"))
    parser.add_argument("--scores", help=tr("cli.option.scores"))
    parser.add_argument("--labels", help=tr("cli.option.labels"))
    parser.add_argument("--session", type=Path, help=tr("cli.option.session"))
    parser.add_argument("--theme", choices=("light", "dark"), default="light", help=tr("cli.option.theme", default="light"))
    parser.add_argument("--overwrite", action="store_true", help=tr("cli.option.overwrite"))
    parser.add_argument("--size", metavar="WxH", help=tr("cli.option.size"))
    parser.add_argument("--dpi", metavar="N", help=tr("cli.option.dpi"))
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--plots-only", action="store_true", help=tr("cli.option.plots_only"))
    what.add_argument("--arrays-only", action="store_true", help=tr("cli.option.arrays_only"))
    for name, owners in _all_params().items():
        _add_param_option(parser, name, owners)
    return parser


def configure(args: argparse.Namespace) -> Lab:
    """Build the Lab the arguments describe; raise UsageError for bad values."""
    lab = Lab()
    if args.session is not None:
        try:
            skipped = lab.restore(Session.load(args.session))
        except SessionError as exc:
            raise UsageError(tr("error.where", where="--session", what=exc)) from None
        for line in skipped:
            warning = tr("error.where", where="--session", what=line)
            print(tr("cli.warning.line", prog=PROG, message=warning), file=sys.stderr)
    args.lesson_step = None
    if args.lesson is not None:
        args.lesson_step = lesson_step(args.lesson)
        lab.restore(lessons.step_session(args.lesson_step, lab))
        args.view = args.lesson_step.view
    if args.scores is not None:
        values = []
        for cell in args.scores.split(","):
            try:
                values.append(parse_score(cell)[0])
            except ValueError as exc:
                raise UsageError(tr("error.where", where="--scores", what=exc)) from None
        labels = None
        if args.labels is not None:
            labels = [s.strip() for s in args.labels.split(",")]
            if len(labels) != len(values):
                count = tr("cli.error.labels_count", labels=len(labels), scores=len(values))
                raise UsageError(tr("error.where", where="--labels", what=count))
        lab.scores.set_values(values, labels)
    elif args.labels is not None:
        raise UsageError(tr("cli.error.labels_need_scores"))
    model = lab.models[args.view]
    own = model.params()
    for name in _all_params():
        value = getattr(args, name)
        if value is None:
            continue
        if name not in own:
            raise UsageError(tr("cli.error.does_not_apply", option=f"--{name}", view=args.view))
        try:
            model.set_param(name, value)
        except ValueError as exc:
            raise UsageError(tr("error.where", where=f"--{name}", what=exc)) from None
    return lab


def lesson_step(name: str) -> lessons.Step:
    """The lesson step called ``name``; UsageError naming the closest one."""
    try:
        return lessons.find(name)
    except KeyError as exc:
        raise UsageError(tr("error.where", where="--lesson", what=exc.args[0])) from None
    except lessons.LessonError as exc:
        raise UsageError(tr("error.where", where="--lesson", what=exc)) from None


def run_lessons(argv: list[str]) -> int:
    """``softmax-lab lessons``: every lesson step as ``LESSON.STEP  title``, in order, one per line."""
    parser = _Parser(prog="softmax-lab lessons", description=tr(
        "cli.lessons.description", name="LESSON.STEP", command="export --lesson LESSON.STEP"))
    try:
        parser.parse_args(argv)
        found = [lesson for lesson in lessons.lessons() if lessons.complete(lesson)]
    except (UsageError, lessons.LessonError) as exc:
        print(tr("cli.error.line", prog="softmax-lab lessons", message=exc), file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
    for lesson in found:
        for step in lesson.steps:
            print(f"{step.name}  {step.title}")
    return 0


def figure_options(args: argparse.Namespace) -> ExportOptions:
    """The figure size ``--size`` and ``--dpi`` ask for; raise UsageError."""
    try:
        options = ExportOptions.from_args(size=args.size, dpi=args.dpi)
    except ValueError as exc:
        flag = "--dpi" if str(exc).startswith("--dpi") else "--size"
        text = str(exc)
        raise UsageError(text if text.startswith("--") else tr("error.where", where=flag, what=text)) from None
    return options


def quiet_qt():
    """Drop Qt's known harmless messages (QT_NOISE); every other one still goes to stderr.

    Returns the handler that was installed before, to put back.
    """
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    def handler(mode, context, message: str) -> None:
        if any(noise in message for noise in QT_NOISE):
            return
        print(qFormatLogMessage(mode, context, message), file=sys.stderr)

    quiet_qt.handler = handler  # keep it alive while Qt holds it
    return qInstallMessageHandler(handler)


def run_export(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        lab = configure(args)
        options = figure_options(args)
    except UsageError as exc:
        print(tr("cli.error.line", prog=PROG, message=exc), file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = tr("cli.error.cannot_create", path=shown(args.out), reason=exc.strerror)
        print(tr("cli.error.line", prog=PROG, message=reason), file=sys.stderr)
        return 1

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    previous = quiet_qt()
    try:
        with sigterm_raises():
            return _export(args, lab, options)
    except (KeyboardInterrupt, Terminated) as exc:  # the export removed its temporaries on the way out
        print(tr("cli.error.interrupted", prog=PROG), file=sys.stderr)
        return 130 if isinstance(exc, KeyboardInterrupt) else 143
    finally:
        from PySide6.QtCore import qInstallMessageHandler

        qInstallMessageHandler(previous)


def _export(args: argparse.Namespace, lab: Lab, options: ExportOptions) -> int:
    from gui import export
    from gui import theme as themes
    from gui.app import make_app

    app = make_app()
    themes.manager().set_mode(args.theme)
    spec = registry.get(args.view)
    view = spec.widget_class()(lab.scores, lab.models[args.view])
    view.resize(*EXPORT_SIZE)
    view.show()
    if args.lesson_step is not None and args.lesson_step.tab is not None:
        view.select_tab(args.lesson_step.tab)
    app.processEvents()
    measure = getattr(view, "measure_for_export", None)
    if measure is not None:  # a view that measures only when asked (the benchmark) measures now
        measure()
    try:
        written = export.export_view(
            view, args.view, args.out, overwrite=args.overwrite,
            plots=not args.arrays_only, arrays=not args.plots_only, options=options,
        )
    except FileExistsError as exc:
        message = tr("cli.error.refusing_to_replace", files=exc)
        print(tr("cli.error.line", prog=PROG, message=message), file=sys.stderr)
        return 2
    except export.ReplaceError as exc:
        key = "cli.error.nothing_written" if exc.nothing_written else "cli.error.stopped_partway"
        print(tr("cli.error.line", prog=PROG, message=tr(key, error=exc)), file=sys.stderr)
        return 1
    except export.ExportError as exc:
        print(tr("cli.error.line", prog=PROG, message=exc), file=sys.stderr)
        return 1
    finally:
        view.close()
        view.deleteLater()
        app.processEvents()
    for path in written:
        print(shown(path))
    return 0
