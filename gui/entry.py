"""Command-line entry: ``export ...`` runs headless, anything else opens the window."""

from __future__ import annotations

import sys

USAGE = """usage: softmax-lab [export ...]

  softmax-lab                     open the Softmax Lab window
  softmax-lab export --help       render a view headless and write PNG, SVG, .npz, .csv
  softmax-lab --version           print the version
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "export":
        from gui.cli import run_export

        return run_export(argv[1:])
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
