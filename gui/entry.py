"""Command-line entry: ``export ...`` runs headless, anything else opens the window."""

from __future__ import annotations

import sys


def usage() -> str:
    """``softmax-lab --help``, in the current language."""
    from gui.model.texts import tr

    rows = [("softmax-lab", tr("cli.usage.window")), ("softmax-lab export --help", tr("cli.usage.export")),
            ("softmax-lab lessons", tr("cli.usage.lessons", command="export --lesson LESSON.STEP")),
            ("softmax-lab --version", tr("cli.usage.version"))]
    lang = ("--lang en|zh", tr("cli.usage.lang", variable="SOFTMAX_LAB_LANG"))
    lines = [tr("cli.usage.line", command="softmax-lab [export ...]"), ""]
    lines += [f"  {command:<32}{text}" for command, text in rows]
    lines += ["", f"  {lang[0]:<32}{lang[1]}"]
    return "\n".join(lines) + "\n"


def _error(message: object) -> None:
    from gui.model.texts import tr

    print(tr("cli.error.line", prog="softmax-lab", message=message), file=sys.stderr)


def take_language(argv: list[str]) -> tuple[list[str], str | None]:
    """``argv`` without its ``--lang X`` / ``--lang=X`` (anywhere, for every command), and X.

    Raises ValueError for a missing or unknown language.
    """
    from gui.model.texts import LANGUAGES, tr

    rest: list[str] = []
    lang = None
    args = iter(argv)
    for arg in args:
        if arg == "--lang" or arg.startswith("--lang="):
            lang = arg.partition("=")[2] if "=" in arg else next(args, "")
            if lang not in LANGUAGES:
                known = ", ".join(LANGUAGES)
                raise ValueError(tr("error.where", where="--lang", what=tr("error.language.unknown", lang=lang, known=known)))
        else:
            rest.append(arg)
    return rest, lang


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        argv, lang = take_language(argv)
    except ValueError as exc:
        _error(exc)
        return 2
    if lang is not None:
        import os

        from gui.model import texts

        texts.set_language(lang)  # the command's texts and figures
        os.environ["SOFTMAX_LAB_LANG"] = lang  # and the window's, over a saved choice
    if argv and argv[0] == "export":
        from gui.cli import run_export

        return run_export(argv[1:])
    if argv and argv[0] == "lessons":
        from gui.cli import run_lessons

        return run_lessons(argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        print(usage(), end="")
        return 0
    if argv and argv[0] == "--version":
        import gui

        print(f"softmax-lab {gui.__version__}")
        return 0
    if argv:
        from gui.model.texts import tr

        _error(tr("cli.error.unknown_argument", arg=argv[0]))
        return 2

    from gui.platform_check import hint, platform_problem

    problem = platform_problem()
    if problem:
        print(problem, file=sys.stderr)
        print(hint(), file=sys.stderr)
        return 3
    from gui.app import run

    return run()
