"""The code's layout rules (README, "Layout"): short modules, views that don't import each other, one job helper."""

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

MAX_LINES = 450
PACKAGES = ("gui", "compute")
THREAD_NAMES = {"QThread", "QRunnable", "QThreadPool", "Thread", "WorkerBase", "FunctionWorker",
                "GeneratorWorker", "create_worker", "thread_worker", "ThreadPoolExecutor"}


def modules(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.parametrize("path", modules(*PACKAGES), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_longer_than_450_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


def view_of(path: Path) -> str | None:
    """The view a module under gui/views belongs to (its module or package name); None for base."""
    rel = path.relative_to(ROOT / "gui" / "views")
    name = rel.parts[0].removesuffix(".py")
    return None if name in ("__init__", "base") else name


def imported_modules(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
            out += [f"{node.module}.{a.name}" for a in node.names]
    return out


def test_no_view_imports_another_view():
    offences = []
    for path in modules("gui/views"):
        own = view_of(path)
        for name in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            parts = name.split(".")
            if parts[:2] == ["gui", "views"] and len(parts) > 2 and parts[2] not in ("base", own):
                offences.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offences == []


def thread_names(tree: ast.AST) -> set[str]:
    """The names of THREAD_NAMES that ``tree`` subclasses or calls."""
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ClassDef):
            names = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
        elif isinstance(node, ast.Call):
            f = node.func
            names = [f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")]
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                names.append(f.value.id)  # QThreadPool.globalInstance()
        found |= THREAD_NAMES & set(names)
    return found


def test_only_the_job_helper_makes_threads_or_workers():
    users = {str(p.relative_to(ROOT)) for p in modules("gui")
             if thread_names(ast.parse(p.read_text(encoding="utf-8")))}
    assert users == {"gui/widgets/jobs.py"}


def test_the_layout_rules_see_what_they_check(tmp_path):
    """The checks above would catch an offence (they are not vacuous)."""
    tree = ast.parse("from gui.views.sampling.bars import StageBars\nimport gui.views.base\n")
    assert "gui.views.sampling.bars" in imported_modules(tree)
    assert view_of(ROOT / "gui" / "views" / "attention" / "view.py") == "attention"
    assert view_of(ROOT / "gui" / "views" / "calculator.py") == "calculator"
    assert view_of(ROOT / "gui" / "views" / "base.py") is None
    assert thread_names(ast.parse("QThreadPool.globalInstance().start(work)")) == {"QThreadPool"}
    assert thread_names(ast.parse("class W(QRunnable): pass\nt = threading.Thread(target=f)")) == {
        "QRunnable", "Thread"}
    assert thread_names(ast.parse("x = pool.start(work)")) == set()
