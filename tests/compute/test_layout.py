"""The shape of the package: a facade over private modules, shared helpers in two places.

* Every public name of :mod:`compute` is the object itself, and no submodule
  shares its name (``compute.softmax`` is the function, not a module).
* No module under ``compute/`` takes a private (underscore) name from a
  sibling, except from the designated shared private modules.
* No module under ``compute/`` is longer than the limit.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import types
from pathlib import Path

import pytest

import compute

COMPUTE = Path(compute.__file__).resolve().parent
MODULES = sorted(COMPUTE.rglob("*.py"))
#: The private modules whose underscore helpers the other modules may import.
SHARED_PRIVATE = frozenset({"compute._checks", "compute._rows"})
MAX_LINES = 450


def _module_name(path: Path) -> str:
    parts = path.relative_to(COMPUTE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module an ``ImportFrom`` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def private_imports(path: Path, text: str | None = None) -> list[str]:
    """Every underscore name ``path`` (or ``text`` read as ``path``) imports from a non-shared compute module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text, str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _resolve(node, path)
        if not (source == "compute" or source.startswith("compute.")) or source in SHARED_PRIVATE:
            continue
        for alias in node.names:
            if alias.name.startswith("_") and f"{source}.{alias.name}" not in SHARED_PRIVATE:
                found.append(f"line {node.lineno}: from {source} import {alias.name}")
    return found


@pytest.mark.parametrize("name", compute.__all__)
def test_public_names_are_the_objects_not_submodules(name):
    obj = getattr(compute, name)
    assert not isinstance(obj, types.ModuleType), f"compute.{name} is a module"
    assert importlib.util.find_spec(f"compute.{name}") is None, f"a submodule is named compute.{name}"


def test_all_lists_every_public_name_once():
    assert len(compute.__all__) == len(set(compute.__all__))
    assert all(hasattr(compute, name) for name in compute.__all__)


def test_backends_stays_a_public_subpackage():
    assert isinstance(compute.backends, types.ModuleType)
    assert importlib.import_module("compute.backends") is compute.backends


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(COMPUTE.parent)))
def test_no_module_imports_a_siblings_private_names(path):
    assert private_imports(path) == []


def test_the_private_import_check_sees_what_it_should():
    where = COMPUTE / "_probe.py"  # a module of the package, by name only
    cases = {
        "from compute._softmax import _shift_into": True,
        "from ._filters import _filter_rows": True,
        "from compute import _softmax": True,
        "from compute.backends.cupy_backend import _launch": True,
        "def f():\n    from compute._draws import _gumbel_max_chunks": True,
        "from compute._softmax import softmax": False,
        "from compute._rows import _prepare": False,
        "from compute._checks import _check_count": False,
        "from numpy import _core": False,
    }
    for code, bad in cases.items():
        assert bool(private_imports(where, code)) is bad, code


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(COMPUTE.parent)))
def test_no_module_is_too_long(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines"
