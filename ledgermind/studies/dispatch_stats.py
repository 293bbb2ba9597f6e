"""Routing statistics over a question file: ``python -m ledgermind.studies.dispatch_stats FILE.jsonl``.

Prints the SIMPLE/COMPLEX split, how often each condition fired and the question-type counts,
twice: on the question text alone and on question + lettered options (what Condition 4 sees for
a benchmark item). Useful to check a keyword-list change before spending GPU hours on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ledgermind.dispatch.classifier import DispatchConfig
from ledgermind.dispatch.question_types import profile
from ledgermind.errors import DataError
from ledgermind.jsonl import bad_line, read_jsonl


@dataclass
class DispatchStats:
    total: int = 0
    complexity: Counter[str] = field(default_factory=Counter)
    conditions: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        return {
            "total": self.total,
            "complexity": dict(sorted(self.complexity.items())),
            "conditions": dict(sorted(self.conditions.items())),
            "types": dict(sorted(self.types.items())),
        }


def dispatch_stats(
    questions: Iterable[tuple[str, Sequence[str] | None]], config: DispatchConfig | None = None
) -> DispatchStats:
    """Aggregate ``profile`` over ``(question, options)`` pairs."""
    stats = DispatchStats()
    for question, options in questions:
        prof = profile(question, options, config)
        stats.total += 1
        stats.complexity[prof.complexity.value] += 1
        stats.conditions.update(c.value for c in prof.reasons)
        stats.types.update(t.value for t in prof.types)
    return stats


def read_questions(path: Path) -> list[tuple[str, list[str] | None]]:
    """``(question, options)`` from a JSONL file whose lines have ``question`` and optional ``options``."""
    if not path.is_file():
        raise DataError(f"question file not found: {path}")
    out = []
    for row in read_jsonl(path, torn_tail=False, what="a question record"):
        try:
            out.append((str(row.value["question"]), row.value.get("options")))
        except (KeyError, TypeError, AttributeError):
            raise bad_line(path, row.line_no, row.text, "a question record") from None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path)
    args = ap.parse_args(argv)
    try:
        rows = read_questions(args.path)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = {
        "question_only": dispatch_stats((q, None) for q, _ in rows).as_dict(),
        "with_options": dispatch_stats(rows).as_dict(),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
