"""Fixtures for the report tests: real runs on disk (scripted scenario, tiny model) and a headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledgermind.report import build_report
from tests.experiment.conftest import run_script
from tests.report.scenario import build_multirun

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


@pytest.fixture(scope="session")
def scripted_multirun(tmp_path_factory: pytest.TempPathFactory, ner: Any) -> Path:
    """A two-variant multirun (full, no_ecc) of the scripted scenario, with its report built."""
    mp = pytest.MonkeyPatch()
    mp.setenv("LEDGERMIND_ALLOW_SCRIPTED", "1")
    try:
        multi = build_multirun(tmp_path_factory.mktemp("scenario"), ner)
    finally:
        mp.undo()
    build_report(multi)
    return multi


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real small run: the tiny random Qwen2-VL through transformers, real OCR, two sample items.
    Its replies get 48 tokens, not the pipeline's 512: the random model never stops before its
    budget, so the budget is the run's time, and any 48 random tokens are as foreign to the page."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("tiny_run") / "run"
    proc = run_script(
        "run.py",
        "limit=2",
        "concurrency=2",
        "pipeline.max_tokens=48",
        "logger=none",
        "progress=false",
        "report=true",
        f"hydra.run.dir={out}",
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"report: {out / 'report' / 'index.html'}" in proc.stdout  # written by the report=true hook
    return out


@pytest.fixture(scope="session")
def simulated_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """A run of the simulated backbone (a test instrument) on four MMMU-Pro items, report included."""
    out = tmp_path_factory.mktemp("simulated_run") / "run"
    proc = run_script(
        "run.py",
        "backend=simulated",
        "benchmark=mmmu_pro_standard10",
        f"benchmark.path={shared_data / 'mmmu_pro_subset'}",
        "limit=4",
        "logger=none",
        "progress=false",
        "report=true",
        f"hydra.run.dir={out}",
        timeout=600,
        LEDGERMIND_SHARED_DATA=str(shared_data),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _simulated_sweep(
    sweep: Path, shared_data: Path, benchmark: str, data: Path, limit: int, variants: str
) -> Path:
    """A ``-m`` sweep of the simulated backbone over ``variants`` on real data, its report built."""
    proc = run_script(
        "run.py",
        "-m",
        "backend=simulated",
        f"benchmark={benchmark}",
        f"benchmark.path={data}",
        f"limit={limit}",
        "logger=none",
        "progress=false",
        "cache.mode=off",
        f"+ablation={variants}",
        f"hydra.sweep.dir={sweep}",
        timeout=900,
        LEDGERMIND_SHARED_DATA=str(shared_data),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    build_report(sweep)
    return sweep


@pytest.fixture(scope="session")
def simulated_multirun(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """Two variants (full, no_ecc) of the simulated backbone on three MMMU-Pro items, report built."""
    sweep = tmp_path_factory.mktemp("simulated_multirun") / "sweep"
    return _simulated_sweep(
        sweep, shared_data, "mmmu_pro_standard10", shared_data / "mmmu_pro_subset", 3, "full,no_ecc"
    )


@pytest.fixture(scope="session")
def gauges_multirun(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    """Every Table 3 variant of the simulated backbone on two gauge photos (numeric readings, scored
    with the reading tolerance; seven columns side by side), report built.

    The benchmark is a copy of the real set's first two gauges: the simulator traces each zoomed
    crop back to its photo by template matching against every photo of the benchmark, once per
    job, and over the real set's 44 photos that search was most of the sweep's time."""
    root = tmp_path_factory.mktemp("gauges_multirun")
    data = root / "gauges"
    (data / "images").mkdir(parents=True)
    lines = (shared_data / "gauges" / "items.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    for line in lines:
        name = json.loads(line)["image"]
        shutil.copyfile(shared_data / "gauges" / "images" / name, data / "images" / name)
    (data / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    variants = "full,no_ecc,no_dual_read,no_dispatcher,no_ledger,free_form_repair,baseline"
    return _simulated_sweep(root / "sweep", shared_data, "gauges", data, 2, variants)


def screenshot(driver: Any, name: str) -> None:
    """Save what the browser shows as ``$LEDGERMIND_SCREENSHOTS/<name>`` when that is set: the README's
    pictures (docs/img/) are taken by the tests that check the page, so they show the page as tested."""
    folder = os.environ.get("LEDGERMIND_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless system Chromium driven by Selenium (``make test`` installs chromium + chromium-driver).

    Outside CI a machine without a browser skips these tests; in CI (``CI`` set) a missing browser
    is a failure, so the browser checks can never silently stop running."""
    if os.environ.get("CI"):
        from selenium import webdriver
    else:
        webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        msg = "chromium / chromium-driver are not installed (apt-get install -y chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in CHROMIUM_ARGS:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def open_page(driver: Any, path: Path, fragment: str = "") -> list[dict[str, Any]]:
    """Load a report page from disk; returns the console messages of severity SEVERE or worse."""
    assert path.is_file(), f"no such report page: {path}"  # a missing page would load as a blank error page
    driver.get_log("browser")  # drain what earlier pages logged
    driver.get(path.resolve().as_uri() + fragment)
    driver.execute_script("return document.readyState")
    return [m for m in driver.get_log("browser") if m.get("level") in ("SEVERE", "ERROR")]
