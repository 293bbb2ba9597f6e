"""Logical lines of code: what a reader has to read, without blank lines, comments or docstrings.

The size budget of the product code and of the modules a newcomer reads is counted this way, so
that neither the formatter's line wrapping nor a good docstring counts against a module.

    python -m ledgermind.devtools.loc ledgermind perception scripts
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections.abc import Iterable
from pathlib import Path

_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not (isinstance(body, list) and body and isinstance(body[0], ast.Expr)):
            continue
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def logical_lines(source: str) -> int:
    """Lines that hold code: any token other than a comment, layout or a docstring."""
    docs = _docstring_lines(ast.parse(source))
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _SKIP:
            lines.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in docs)
    return len(lines)


def count_tree(roots: Iterable[Path]) -> dict[Path, int]:
    """Every ``*.py`` below each root; a root that is a file counts as itself."""
    files = [p for r in map(Path, roots) for p in ([r] if r.is_file() else sorted(r.rglob("*.py")))]
    return {p: logical_lines(p.read_text(encoding="utf-8")) for p in files}


def main(argv: list[str] | None = None) -> int:
    counts = count_tree(Path(a) for a in (argv or sys.argv[1:]))
    for path, n in sorted(counts.items(), key=lambda kv: -kv[1])[:20]:
        print(f"{n:6d}  {path}")
    print(f"{sum(counts.values()):6d}  total ({len(counts)} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
