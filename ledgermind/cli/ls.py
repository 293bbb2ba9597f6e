"""``ledgermind ls [DIR ...]``: the runs, newest first; ``ledgermind ls components [KIND]``: what a run can name.

Why: "what did I run, and how did it go?" is the first question after a run, and "which benchmarks
are there?" the first before one. Runs are read as data (``runs.reader``: nothing is composed or
executed). Every component listing is read from where the name is defined — the ``conf/<group>/``
options (with the leading comment of each file) and the registries the code looks names up in
(``BENCHMARKS``, ``OPERATORS``) — so a new option shows up here without an edit to this file.
"""

from __future__ import annotations

import argparse
import fcntl
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ledgermind.bounded_read import open_regular
from ledgermind.cli.commands import EXIT_USAGE, aligned
from ledgermind.cli.run_args import closest, first_comment, options
from ledgermind.confutil import CONF_DIR
from ledgermind.errors import DataError
from ledgermind.metrics.stats import wilson_interval
from ledgermind.runs.files import IDENTITY_FILE, LOCK_FILE, METRICS_FILE, RESULTS_FILE, RunFileError
from ledgermind.runs.reader import RunDir, find_runs

DEFAULT_OUTPUTS = Path("outputs")


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
    paths = [conf_dir / group / f"{name}.yaml" for name in options(group, conf_dir)]
    return [Row(p.stem, " ".join(x for x in (detail(p), first_comment(p)) if x)) for p in paths]


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


RUN_COLUMNS = (
    "date",
    "model",
    "benchmark",
    "variant",
    "n",
    "accuracy [95% CI]",
    "errors",
    "status",
    "folder",
)


def _is_running(path: Path) -> bool:
    """Another process holds the run's lock (read-only probe: a shared lock on a read-only handle)."""
    try:
        with open_regular(path / LOCK_FILE) as fh:  # a FIFO named .lock is no run's lock, and never waited on
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:  # held: BlockingIOError; no lock file (or not a file): not running
        return isinstance(exc, BlockingIOError)
    return False


def _accuracy(metrics: dict[str, Any]) -> str:
    n, acc = int(metrics.get("n_scored") or 0), metrics.get("accuracy")
    if not isinstance(acc, int | float) or (ci := wilson_interval(float(acc) * n, n)) is None:
        return "-"
    return f"{100 * float(acc):.1f} [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def run_row(path: Path) -> tuple[float, list[str]]:
    """(modification time, cells) of one run folder; a damaged file is said in the status cell."""
    run = RunDir(path)
    stamp = max(
        (p.stat().st_mtime for p in (path / RESULTS_FILE, path / METRICS_FILE) if p.is_file()), default=0.0
    )
    try:
        metrics = run.metrics()
        claimed = (run.json_object(IDENTITY_FILE) or {}).get("identity")
        results = run.results()
    except RunFileError as exc:
        return stamp, ["-"] * (len(RUN_COLUMNS) - 2) + [f"unreadable: {exc}", str(path)]
    ident = (metrics or {}).get("identity") or (claimed if isinstance(claimed, dict) else {})
    errors = sum(1 for r in results if r.error)
    if metrics is not None:
        status = "finished" + (" with errors (rerun retries them)" if errors else "")
    else:
        status = ("running" if _is_running(path) else "unfinished") + f", {len(results)} items done"
    when = datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "-"
    cells = [str(ident.get(k) or "-") for k in ("model", "benchmark", "variant")]
    n = (metrics or {}).get("n_items", len(results))
    return stamp, [when, *cells, str(n), _accuracy(metrics or {}), str(errors), status, str(path)]


def runs(roots: Sequence[Path]) -> str:
    """The runs below ``roots`` as a table, newest first."""
    rows = sorted((run_row(p) for p in find_runs(roots)), key=lambda r: -r[0])
    return aligned([RUN_COLUMNS, *(cells for _, cells in rows)])


def render(rows: Sequence[Row]) -> str:
    return aligned([(r.name, r.about) for r in rows])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="ledgermind ls",
        description=__doc__.split("\n\n")[0],
        epilog=f"components: ledgermind ls components [{' | '.join(KINDS)}]",
    )
    p.add_argument("paths", nargs="*", type=Path, help="run or sweep folders to list (default: outputs)")
    args = p.parse_args(argv)
    if args.paths[:1] == [Path("components")]:
        return _components([str(x) for x in args.paths[1:]])
    try:
        print(runs(args.paths or [DEFAULT_OUTPUTS]))
    except DataError as exc:
        kind = next((str(x) for x in args.paths if str(x) in KINDS and not x.exists()), None)
        hint = f" (the {kind} a run can name: ledgermind ls components {kind})" if kind else ""
        print(f"ledgermind ls: error: {exc}{hint}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _components(kinds: list[str]) -> int:
    if unknown := [k for k in kinds if k not in KINDS]:  # one line: the closest known kind, and all of them
        hint = closest(unknown[0], list(KINDS), cutoff=0.5)
        print(
            f"ledgermind ls components: error: unknown kind {unknown[0]!r}: {hint}(kinds: {' | '.join(KINDS)})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    chosen = kinds or list(KINDS)
    print("\n\n".join((f"{k}:\n" if len(chosen) > 1 else "") + render(KINDS[k](CONF_DIR)) for k in chosen))
    return 0
