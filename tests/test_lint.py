"""The code passes ruff with the project's settings (pyproject.toml [tool.ruff]): CI runs it as a test."""

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def ruff_command() -> list[str] | None:
    try:
        import ruff  # noqa: F401  (the test extra installs it; its binary sits beside the interpreter)
    except ImportError:
        return [shutil.which("ruff")] if shutil.which("ruff") else None
    return [sys.executable, "-m", "ruff"]


def test_ruff_finds_nothing():
    command = ruff_command()
    if command is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' brings it)")
    done = subprocess.run([*command, "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_would_see_an_offence(tmp_path):
    """The check is not vacuous: the same command flags an unused import."""
    command = ruff_command()
    if command is None:
        pytest.skip("ruff is not installed")
    (tmp_path / "bad.py").write_text("import os\n", encoding="utf-8")
    done = subprocess.run([*command, "check", "--no-cache", "--isolated", "bad.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "F401" in done.stdout
