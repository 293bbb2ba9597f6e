"""docs/paper_tests.md names, per equation and algorithm line, the tests that pin it;
this test keeps that table true: every ``tests/….py::name`` it cites must be a test function
defined in that file, and every row must cite at least one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "paper_tests.md"
CITED = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_test_named_in_paper_tests_md_exists() -> None:
    cited = CITED.findall(DOC.read_text(encoding="utf-8"))
    assert len(cited) > 50  # the table is there (and the pattern still matches its spelling)
    missing = []
    cache: dict[str, set[str]] = {}
    for file, name in cited:
        path = REPO / file
        if not path.exists():
            missing.append(f"{file} (no such file)")
            continue
        names = cache.setdefault(file, _defined(path))
        if name not in names or not name.startswith("test"):
            missing.append(f"{file}::{name}")
    assert not missing, "docs/paper_tests.md names tests that do not exist: " + ", ".join(missing)


def test_every_row_of_paper_tests_md_cites_a_test() -> None:
    rows = [
        line
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith(("| Eq.", "| line"))
    ]
    assert rows and all(CITED.search(row) for row in rows), [r for r in rows if not CITED.search(r)]
