"""Per-file test time from pytest's ``--junitxml`` reports: ``python tests/junit_per_file.py BEFORE.xml
[AFTER.xml] [--top N]`` prints a Markdown table (seconds of setup + call + teardown per test file, and the
number of tests each run reached), largest first, with the totals.

Why: the suite is timed on a shared 2-core machine whose load changes between runs; a per-file sum
shows where the time goes and which files a change made cheaper, which one wall time cannot.
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_file(classname: str) -> str:
    """``tests.experiment.test_cli.TestX`` -> ``experiment/test_cli.py`` (a class name is dropped)."""
    parts = [p for p in classname.split(".") if p]
    for end in range(len(parts), 0, -1):
        path = Path(*parts[:end]).with_suffix(".py")
        if (ROOT / path).is_file():
            return str(path.relative_to("tests"))
    return classname


def per_file(report: Path) -> tuple[Counter[str], Counter[str]]:
    seconds: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        name = test_file(case.get("classname", ""))
        seconds[name] += float(case.get("time", 0))
        tests[name] += 1
    return seconds, tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, help="one or two junit XML files")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    runs = [per_file(r) for r in args.reports]
    files = sorted({f for s, _ in runs for f in s}, key=lambda f: -max(s[f] for s, _ in runs))
    head = " | ".join(f"{r.stem} (s) | tests" for r in args.reports)
    print(f"| test file | {head} |")
    print("|---|" + "---:|---:|" * len(runs))
    for f in files[: args.top]:
        cells = " | ".join(f"{s[f]:.0f} | {t[f]}" if t[f] else "not reached | 0" for s, t in runs)
        print(f"| `{f}` | {cells} |")
    totals = " | ".join(f"{sum(s.values()):.0f} | {sum(t.values())}" for s, t in runs)
    print(f"| all files | {totals} |")


if __name__ == "__main__":
    main()
