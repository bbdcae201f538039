"""Softmax Lab: ``python main.py`` opens the window; ``python main.py export --help`` runs headless."""

import sys

from gui.entry import main

if __name__ == "__main__":
    sys.exit(main())
