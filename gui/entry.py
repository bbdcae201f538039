"""Command-line entry: ``export ...`` runs headless, anything else opens the window."""

from __future__ import annotations

import sys

USAGE = """usage: softmax-lab [export ...]

  softmax-lab                     open the Softmax Lab window
  softmax-lab export --help       render a view headless and write PNG, SVG, .npz, .csv
  softmax-lab lessons             list every lesson step (export --lesson LESSON.STEP renders one)
  softmax-lab --version           print the version

  --lang en|zh                    the interface's language (any command; also SOFTMAX_LAB_LANG)
"""


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
                raise ValueError("--lang: " + tr("error.language.unknown", lang=lang, known=", ".join(LANGUAGES)))
        else:
            rest.append(arg)
    return rest, lang


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        argv, lang = take_language(argv)
    except ValueError as exc:
        print(f"softmax-lab: error: {exc}", file=sys.stderr)
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
        print(USAGE, end="")
        return 0
    if argv and argv[0] == "--version":
        import gui

        print(f"softmax-lab {gui.__version__}")
        return 0
    if argv:
        print(f"softmax-lab: error: unknown argument {argv[0]!r} (try --help)", file=sys.stderr)
        return 2

    from gui.platform_check import HINT, platform_problem

    problem = platform_problem()
    if problem:
        print(problem, file=sys.stderr)
        print(HINT, file=sys.stderr)
        return 3
    from gui.app import run

    return run()
