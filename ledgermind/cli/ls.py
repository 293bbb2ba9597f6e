"""``ledgermind ls benchmarks|ablations|backends|models|operators``: what a run can name.

Why: a newcomer asked "which benchmarks are there?" had to read ``conf/`` and three registries.
Every listing is read from where the name is defined — the ``conf/<group>/`` options (with the
first comment of each file) and the registries the code looks names up in (``BENCHMARKS``,
``OPERATORS``) — so a new option shows up here without an edit to this file.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ledgermind.cli.commands import EXIT_USAGE
from ledgermind.cli.run_args import first_comment, options
from ledgermind.confutil import CONF_DIR


@dataclass(frozen=True)
class Row:
    """One listed name: what to type, and one line on what it is."""

    name: str
    about: str


def _yaml_key(path: Path, key: str) -> str | None:
    """A top-level scalar of a config file, read as text (the file is never composed or resolved)."""
    m = re.search(rf"^{re.escape(key)}:\s*([^\s#]+)", path.read_text(encoding="utf-8"), re.MULTILINE)
    return m.group(1) if m else None


def _conf_rows(
    group: str, detail: Callable[[Path], str] = lambda _: "", conf_dir: Path = CONF_DIR
) -> list[Row]:
    rows = []
    for name in options(group, conf_dir):
        path = conf_dir / group / f"{name}.yaml"
        rows.append(Row(name, " ".join(x for x in (detail(path), first_comment(path)) if x)))
    return rows


def benchmarks(conf_dir: Path = CONF_DIR) -> list[Row]:
    """``benchmark=NAME`` options and the loader each one names; loaders no option uses, after them."""
    from ledgermind.benchmarks import BENCHMARKS

    rows = _conf_rows("benchmark", lambda p: f"[loader {_yaml_key(p, 'name')}]", conf_dir)
    used = {_yaml_key(conf_dir / "benchmark" / f"{r.name}.yaml", "name") for r in rows}
    rows += [
        Row(n, f"[loader {n}] registered loader without a conf/benchmark option (benchmark.name={n})")
        for n in BENCHMARKS
        if n not in used
    ]
    return rows


def ablations(conf_dir: Path = CONF_DIR) -> list[Row]:
    """``+ablation=NAME`` options (``conf/ablation/``)."""
    return _conf_rows("ablation", conf_dir=conf_dir)


def backends(conf_dir: Path = CONF_DIR) -> list[Row]:
    """``backend=NAME`` options and the class each one builds (its ``_target_``, not imported)."""
    return _conf_rows("backend", lambda p: f"[{_yaml_key(p, '_target_')}]", conf_dir)


def models(conf_dir: Path = CONF_DIR) -> list[Row]:
    """``model=NAME`` options and the weights each one names."""
    return _conf_rows("model", lambda p: f"[{_yaml_key(p, 'hub_id') or _yaml_key(p, 'path')}]", conf_dir)


def operators(conf_dir: Path = CONF_DIR) -> list[Row]:
    """The typed repair operators of Π (``OPERATORS``), with their layer and what they do."""
    from ledgermind.repair.policy import OPERATORS

    return [Row(name.value, f"[{op.layer.value}] {op.summary}") for name, op in OPERATORS.items() if op.layer]


KINDS: dict[str, Callable[[Path], list[Row]]] = {
    "benchmarks": benchmarks,
    "ablations": ablations,
    "backends": backends,
    "models": models,
    "operators": operators,
}


def render(rows: Sequence[Row]) -> str:
    width = max((len(r.name) for r in rows), default=0)
    return "\n".join(f"{r.name:<{width}}  {r.about}".rstrip() for r in rows)


def unknown_kind(kind: str) -> str:
    """One line: the kind asked for, the closest known one, and all of them."""
    close = difflib.get_close_matches(kind, list(KINDS), n=1, cutoff=0.5)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"ledgermind ls: error: unknown kind {kind!r}: {hint}(kinds: {' | '.join(KINDS)})"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ledgermind ls", description=__doc__.split("\n\n")[0])
    p.add_argument("kind", help=" | ".join(KINDS))
    args = p.parse_args(argv)
    if args.kind not in KINDS:
        print(unknown_kind(args.kind), file=sys.stderr)
        return EXIT_USAGE
    print(render(KINDS[args.kind](CONF_DIR)))
    return 0
