"""No unused import in the package, the perception package, the scripts or the tests (issue 36).

Why: an import nobody uses is a false arrow for a reader (and for ``tests/test_architecture.py``,
which counts it as a dependency). Kept on purpose, and skipped here: an import whose line says
``noqa`` (a registration or an availability probe) and the imports of an ``__init__.py`` (its
re-exports and the registration of its modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pyflakes_checker = pytest.importorskip("pyflakes.checker", reason="pyflakes is in the dev extra")
pyflakes_messages = pytest.importorskip("pyflakes.messages")

ROOT = Path(__file__).resolve().parents[1]


def unused_imports(path: Path) -> list[str]:
    """``path:line: name`` of every import pyflakes finds unused (``noqa`` lines left out)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    checker = pyflakes_checker.Checker(ast.parse(source, filename=str(path)), filename=str(path))
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return [
        f"{name}:{m.lineno}: {m.message_args[0]}"
        for m in checker.messages
        if isinstance(m, pyflakes_messages.UnusedImport) and "noqa" not in lines[m.lineno - 1]
    ]


def test_unused_imports_detector_sees_one(tmp_path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("import os\nimport sys  # noqa: F401\nimport json\njson.dumps(1)\n", encoding="utf-8")
    assert unused_imports(probe) == ["probe.py:1: os"]


def test_no_unused_imports() -> None:
    files = [
        p
        for d in ("ledgermind", "perception", "scripts", "tests")
        for p in sorted((ROOT / d).rglob("*.py"))
        if p.name != "__init__.py"
    ]
    found = [hit for p in files for hit in unused_imports(p)]
    assert not found, "unused imports:\n" + "\n".join(found)
