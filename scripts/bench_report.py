#!/usr/bin/env python
"""Report build time and browser load time for a run of N items (default 200).

    python scripts/bench_report.py --source outputs/2025-01-01/12-00-00 --n 200
    python scripts/bench_report.py            # makes its source first: scripts/run.py limit=3 (tiny model)

The source run's real trajectories (OCR boxes, claims, events) are replicated under new ids
into a temporary run of N items; the report is built ``--repeat`` times and, when chromium and
selenium are installed, the run page and an item page are opened in headless Chromium to time
the load and one filter of the N-row item table (target: build < 30 s, no frozen page).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from ledgermind.report import build_report
from ledgermind.runs.files import RESULTS_FILE, TRAJECTORY_DIR
from ledgermind.runs.reader import RunDir
from ledgermind.runs.trajectories import trajectory_path
from ledgermind.testing.fake_runs import run_composed


def make_source(tmp: Path) -> Path:
    """A run of the default config on 3 items (as ``scripts/run.py limit=3``)."""
    run_composed(["limit=3", "logger=none", "progress=false", f"output_dir={tmp / 'source'}"])
    return tmp / "source"


def replicate(source: Path, n: int, target: Path) -> Path:
    """A run dir of ``n`` items cycling through the source's items (ids made unique)."""
    results = RunDir(source).results()
    if not results:
        raise SystemExit(f"error: {source} has no finished items")
    (target / TRAJECTORY_DIR).mkdir(parents=True)
    for name in ("metrics.json", ".hydra"):
        src = source / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        elif src.exists():
            shutil.copy(src, target / name)
    lines = []
    for k in range(n):
        r = results[k % len(results)]
        new_id = f"{r.id}__{k:04d}"
        traj = json.loads(trajectory_path(source, r.id).read_text())
        traj["item_id"] = new_id
        trajectory_path(target, new_id).write_text(json.dumps(traj))
        lines.append(json.dumps(r.to_dict() | {"id": new_id}))
    (target / RESULTS_FILE).write_text("\n".join(lines) + "\n")
    return target


def browser_times(index: Path) -> dict[str, float]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return {}
    if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
        return {}
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ):
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        out = {}
        t0 = time.perf_counter()
        d.get(index.resolve().as_uri())
        out["run page load (s)"] = time.perf_counter() - t0
        out["run page rows"] = d.execute_script("return document.querySelectorAll('#items tbody tr').length")
        out["filter 'wrong' (ms)"] = d.execute_script(
            "const s = document.getElementById('filter-outcome'); const t = performance.now();"
            "s.value = 'wrong'; s.dispatchEvent(new Event('change')); document.body.offsetHeight; return performance.now() - t;"
        )
        out["sort by model calls (ms)"] = d.execute_script(
            "const th = [...document.querySelectorAll('#items th')].find(h => h.textContent.trim() === 'model calls');"
            "const t = performance.now(); th.click(); document.body.offsetHeight; return performance.now() - t;"
        )
        first = d.execute_script("return document.querySelector('#items tbody tr a').href")
        t0 = time.perf_counter()
        d.get(first)
        out["item page load (s)"] = time.perf_counter() - t0
        return out
    finally:
        d.quit()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--source", type=Path, default=None, help="a finished run whose trajectories are replicated"
    )
    p.add_argument("--n", type=int, default=200, help="items in the benchmarked run")
    p.add_argument("--repeat", type=int, default=3, help="report builds to time")
    p.add_argument("--no-browser", action="store_true", help="skip the headless Chromium timing")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_report_") as tmp:
        source = args.source or make_source(Path(tmp))
        run = replicate(source, args.n, Path(tmp) / "run")
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            index = build_report(run)
            times.append(time.perf_counter() - t0)
        pages = list((run / "report").rglob("*.html"))
        size = sum(p.stat().st_size for p in (run / "report").rglob("*") if p.is_file())
        rows = [
            ("items", args.n),
            ("build time median (s)", f"{statistics.median(times):.2f}"),
            ("build time max (s)", f"{max(times):.2f}"),
            ("pages", len(pages)),
            ("report size (MB)", f"{size / 1e6:.1f}"),
            ("run page size (kB)", f"{index.stat().st_size / 1e3:.0f}"),
        ]
        if not args.no_browser:
            rows += [(k, f"{v:.2f}" if isinstance(v, float) else v) for k, v in browser_times(index).items()]
    width = max(len(k) for k, _ in rows)
    print(f"| {'measure'.ljust(width)} | value |\n|{'-' * (width + 2)}|------:|")
    for k, v in rows:
        print(f"| {k.ljust(width)} | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
