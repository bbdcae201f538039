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
import signal
import sys
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(message)


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
        return "a file to load"
    if p.kind == "choice":
        return f"one of {', '.join(p.choices)}, default {p.default}"
    if p.kind == "int":
        return f"{int(p.minimum)} to {int(p.maximum)}, default {int(p.default)}"
    scale = ", log scale" if p.log else ""
    return f"{p.minimum:g} to {p.maximum:g}{scale}, default {p.default:g}"


def _add_param_option(parser: argparse.ArgumentParser, name: str, owners) -> None:
    groups: dict[str, list[str]] = {}
    for view, p in owners:
        groups.setdefault(_describe(p), []).append(view)
    help_text = tr(f"param.{name}.label") + ": " + "; ".join(
        f"{text} (views: {', '.join(views)})" for text, views in groups.items()
    )
    kinds = {p.kind for _view, p in owners}
    if kinds == {"choice"}:
        choices = list(dict.fromkeys(c for _view, p in owners for c in p.choices))
        parser.add_argument(f"--{name}", choices=choices, default=None, help=help_text)
    elif kinds == {"path"}:
        parser.add_argument(f"--{name}", default=None, metavar="PATH", help=help_text)
    elif kinds == {"int"}:
        parser.add_argument(f"--{name}", type=int, default=None, metavar="N", help=help_text)
    else:  # each model rejects what does not fit it
        parser.add_argument(f"--{name}", default=None, metavar="X", help=help_text)


def build_parser() -> argparse.ArgumentParser:
    lines = ["views and their parameters:"]
    for spec in registry.VIEWS:
        params = " ".join(f"--{n}" for n in spec.model.params()) or "(none)"
        lines.append(f"  {spec.name:<14}{tr(f'view.{spec.name}.tooltip')}")
        lines.append(f"  {'':<14}parameters: {params}")
    lines += ["", "example:",
              "  softmax-lab export --view temperature --scores 5.2,3.1,1.8 "
              "--temperature 0.5 --out out/",
              "  softmax-lab export --view gradients --plots-only --dpi 300 --out figures/"]
    parser = _Parser(
        prog=PROG,
        description="Render one view without a display and write its plots "
                    "(PNG, SVG) and arrays (.npz, one .csv per array). Each plot is "
                    "a landscape figure, 1200 x 800 pixels at 200 dpi (6 x 4 in) "
                    "unless --size or --dpi say otherwise; the SVG has the same "
                    "size in inches.",
        epilog="\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--view", choices=[s.name for s in registry.VIEWS], help="which view to render")
    which.add_argument("--lesson", metavar="LESSON.STEP",
                       help="render a lesson step's view in that step's state (softmax-lab lessons lists them); "
                            "other options apply on top of it")
    parser.add_argument("--out", required=True, type=Path, help="folder for the files (created if missing)")
    parser.add_argument("--scores", help="comma-separated scores, e.g. 5.2,3.1,1.8 (inf, -inf and nan are accepted)")
    parser.add_argument("--labels", help="comma-separated labels, one per score (default Token 1..n)")
    parser.add_argument("--session", type=Path, help="start from a saved session file")
    parser.add_argument("--theme", choices=("light", "dark"), default="light", help="plot colours (default light)")
    parser.add_argument("--overwrite", action="store_true", help="replace files that already exist")
    parser.add_argument("--size", metavar="WxH",
                        help="the PNG's size in pixels, e.g. 1800x1200 (default 1200x800, "
                             "or 6 x 4 in at --dpi); every plot is laid out at this shape")
    parser.add_argument("--dpi", metavar="N",
                        help="pixels per inch, 50 to 1200 (default 200): text, legends and "
                             "lines scale with it; alone it keeps the 6 x 4 in figure")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--plots-only", action="store_true", help="write only the PNG and SVG files")
    what.add_argument("--arrays-only", action="store_true", help="write only the .npz and .csv files")
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
            raise UsageError(f"--session: {exc}") from None
        for line in skipped:
            print(f"{PROG}: warning: --session: {line}", file=sys.stderr)
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
                raise UsageError(f"--scores: {exc}") from None
        labels = None
        if args.labels is not None:
            labels = [s.strip() for s in args.labels.split(",")]
            if len(labels) != len(values):
                raise UsageError(f"--labels: {len(labels)} labels for {len(values)} scores")
        lab.scores.set_values(values, labels)
    elif args.labels is not None:
        raise UsageError("--labels needs --scores")
    model = lab.models[args.view]
    own = model.params()
    for name in _all_params():
        value = getattr(args, name)
        if value is None:
            continue
        if name not in own:
            raise UsageError(f"--{name} does not apply to the {args.view} view")
        try:
            model.set_param(name, value)
        except ValueError as exc:
            raise UsageError(f"--{name}: {exc}") from None
    return lab


def lesson_step(name: str) -> lessons.Step:
    """The lesson step called ``name``; UsageError naming the closest one."""
    try:
        return lessons.find(name)
    except KeyError as exc:
        raise UsageError(f"--lesson: {exc.args[0]}") from None
    except lessons.LessonError as exc:
        raise UsageError(f"--lesson: {exc}") from None


def run_lessons(argv: list[str]) -> int:
    """``softmax-lab lessons``: every lesson step as ``LESSON.STEP  title``, in order, one per line."""
    parser = _Parser(prog="softmax-lab lessons",
                     description="List every step of every lesson as LESSON.STEP and its title, in order; "
                                 "export --lesson LESSON.STEP renders one.")
    try:
        parser.parse_args(argv)
        found = [lesson for lesson in lessons.lessons() if lessons.complete(lesson)]
    except (UsageError, lessons.LessonError) as exc:
        print(f"softmax-lab lessons: error: {exc}", file=sys.stderr)
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
        raise UsageError(text if text.startswith("--") else f"{flag}: {text}") from None
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
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"{PROG}: error: cannot create {shown(args.out)}: {exc.strerror}", file=sys.stderr)
        return 1

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    previous = quiet_qt()
    try:
        with sigterm_raises():
            return _export(args, lab, options)
    except (KeyboardInterrupt, Terminated) as exc:  # the export removed its temporaries on the way out
        print(f"{PROG}: interrupted; no file was changed", file=sys.stderr)
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
    try:
        written = export.export_view(
            view, args.view, args.out, overwrite=args.overwrite,
            plots=not args.arrays_only, arrays=not args.plots_only, options=options,
        )
    except FileExistsError as exc:
        print(f"{PROG}: error: refusing to replace existing files ({exc}); "
              "pass --overwrite to replace them", file=sys.stderr)
        return 2
    except export.ReplaceError as exc:
        what = "no file was changed" if exc.nothing_written else "the export stopped partway"
        print(f"{PROG}: error: {what}: {exc}", file=sys.stderr)
        return 1
    except export.ExportError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        view.close()
        view.deleteLater()
        app.processEvents()
    for path in written:
        print(shown(path))
    return 0
