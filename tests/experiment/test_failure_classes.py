"""One failure classification at the item boundary, driven through scripts/run.py as a user would.

A cache that cannot be written never fails a tool (the run works, one warning); a disk or engine
that fails is an item error with its cause (exit 3) that the printed command retries; only a tool
that legitimately found nothing is a repair event (T1).

The read-only and full directories are real: a read-only bind mount / a tiny tmpfs inside a user +
mount namespace (``unshare -rm``), so the kernel itself answers EROFS / ENOSPC. One child holds the
namespace and makes both runs, one after the other, each as ``run_script`` makes it (its own agent,
cache and OCR engine): a second child would only pay Python and the project's imports again. A
non-root user without namespaces gets a ``chmod 555`` directory for the read-only case.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from ledgermind.errors import BackendError, ConfigError, FailureKind, classify_failure
from ledgermind.experiment.failures import tool_failure
from ledgermind.image_decode import ImageNotFoundError
from ledgermind.tools.base import Observation, Tool, ToolKind
from perception.image_io import ImageTooSmallError
from tests.experiment.conftest import run_script, run_scripts_in_child
from tests.tools.test_search import SERPER_OK, FakeApis

# the simulated backbone on two sample items, real PP-OCRv5: seconds, and OCR really runs
SIM = ["backend=simulated", "benchmark=sample", "logger=none", "progress=false", "limit=2"]


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    return probe.returncode == 0


NS = _namespaces_work()


def _wrapped(argv: list[str], *, readonly: Path | None = None, full: Path | None = None) -> list[str]:
    """``argv`` run with ``readonly`` mounted read-only / ``full`` a full 64 KiB tmpfs."""
    steps = []
    if readonly is not None:
        steps.append(
            f"mount --bind {shlex.quote(str(readonly))} {shlex.quote(str(readonly))} && "
            f"mount -o remount,bind,ro {shlex.quote(str(readonly))}"
        )
    if full is not None:
        q = shlex.quote(str(full))
        steps.append(
            f"mount -t tmpfs -o size=64k tmpfs {q} && (head -c 1048576 /dev/zero > {q}/fill 2>/dev/null; true)"
        )
    script = " && ".join([*steps, 'exec "$@"'])
    return ["unshare", "-rm", "sh", "-c", script, "sh", *argv]


def _run(out: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    """scripts/run.py on the two sample items, in this process."""
    return run_script("run.py", *SIM, f"hydra.run.dir={out}", *extra, **env)


def _run_in_namespace(
    runs: dict[str, list[str]], answers: Path, *, readonly: Path, full: Path | None
) -> dict[str, subprocess.CompletedProcess[str]]:
    """scripts/run.py on the two sample items once per entry of ``runs`` (name: extra arguments), all
    in one child with ``readonly`` mounted read-only and ``full`` a full 64 KiB tmpfs."""
    if NS:
        wrap = functools.partial(_wrapped, readonly=readonly, full=full)
    elif os.geteuid() != 0:
        readonly.chmod(0o555)
        wrap = list
    else:
        pytest.skip("needs user+mount namespaces (unshare -rm) to make a real read-only directory")
    done = run_scripts_in_child([("run.py", [*SIM, *extra]) for extra in runs.values()], answers, wrap)
    return {name: proc for name, (proc, _) in zip(runs, done, strict=True)}


def _results(out: Path) -> dict[str, dict]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    return {r["id"]: r for r in rows}  # the last line of an id wins


def _verdicts(out: Path) -> dict[str, tuple]:
    return {i: (r["prediction"], r["score"], r["error"]) for i, r in _results(out).items()}


def _warnings(proc: subprocess.CompletedProcess[str], what: str) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if ln.startswith(f"warning: {what}")]


# ------------------------------------------------------------------------------ classification
class _Raises(Tool):
    name = "ocr"
    kind = ToolKind.OCR

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def _run(self, image: object, region: object = None) -> list[Observation]:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "kind", "cause"),
    [
        (
            OSError(errno.EROFS, "Read-only file system"),
            FailureKind.INFRASTRUCTURE,
            "infrastructure failed (ocr)",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device"),
            FailureKind.INFRASTRUCTURE,
            "infrastructure failed (ocr)",
        ),
        (MemoryError(), FailureKind.INFRASTRUCTURE, "infrastructure failed (ocr)"),
        (ConfigError("bad engine setting"), FailureKind.INFRASTRUCTURE, "infrastructure failed (ocr)"),
        (ImageNotFoundError("image not found: x.png"), FailureKind.DATA, "image failed (ocr)"),
        (BackendError("server down"), FailureKind.MODEL, "model call failed (ocr)"),
        (ImageTooSmallError("image 2x2 too small"), FailureKind.EVIDENCE, None),
        (RuntimeError("no text region found"), FailureKind.EVIDENCE, None),
        (ValueError("crop region is empty"), FailureKind.EVIDENCE, None),
    ],
)
def test_a_tool_failure_is_classified_where_it_is_raised(
    exc: Exception, kind: FailureKind, cause: str | None
) -> None:
    assert classify_failure(exc) is kind
    out = _Raises(exc).invoke(image="x.png")
    assert out.error is not None and out.failure is kind and not out.ok  # T1 sees it either way
    found = tool_failure(out)
    assert (found is None) if cause is None else found.startswith(cause)
    # the class survives the trajectory record (a resume / audit reads it back)
    assert type(out).from_dict(out.to_dict()).failure is kind


# ------------------------------------------------------------------------------ caches are best-effort
@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """The verdicts of the two items as an ordinary run gives them (the user's perception cache)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    proc = _run(out)
    assert proc.returncode == 0, proc.stderr
    return _verdicts(out)


@pytest.fixture(scope="module")
def unwritable(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, subprocess.CompletedProcess[str]]]:
    """Two runs, each into an empty perception cache: ``ro/`` read-only, ``full/`` on a full disk
    (only where a namespace can mount a tmpfs); each leaves ``<name>/run`` and ``<name>/cache``."""
    root = tmp_path_factory.mktemp("unwritable")
    names = ["ro", "full"] if NS else ["ro"]
    for name in names:
        (root / name / "cache").mkdir(parents=True)
    runs = {
        name: [f"hydra.run.dir={root / name / 'run'}", f"perception.cache_dir={root / name / 'cache'}"]
        for name in names
    }
    procs = _run_in_namespace(
        runs,
        root / "answers.json",
        readonly=root / "ro" / "cache",
        full=root / "full" / "cache" if NS else None,
    )
    return root, procs


@pytest.mark.slow
def test_read_only_perception_cache_runs_with_ocr_working_and_warns_once(
    unwritable: tuple[Path, dict], reference: dict
) -> None:
    root, procs = unwritable
    cache, ro = root / "ro" / "cache", procs["ro"]
    assert ro.returncode == 0, ro.stderr
    assert " unparsed, 0 errors)" in ro.stdout  # (an open question with no recorded belief may be unparsed)
    assert len(_warnings(ro, "perception cache")) == 1, ro.stderr
    assert "Read-only file system" in _warnings(ro, "perception cache")[0] or not NS
    assert _verdicts(root / "ro" / "run") == reference  # OCR really worked
    traj = "".join(p.read_text() for p in (root / "ro" / "run" / "trajectories").iterdir())
    assert "OSError" not in traj and "Read-only" not in traj
    assert list(cache.iterdir()) == []  # nothing was written


@pytest.mark.slow
@pytest.mark.skipif(not NS, reason="a real full disk needs a tmpfs mount (unshare -rm)")
def test_full_perception_cache_runs_with_ocr_working_and_warns_once(
    unwritable: tuple[Path, dict], reference: dict
) -> None:
    root, procs = unwritable
    full = procs["full"]
    assert full.returncode == 0, full.stderr
    warned = _warnings(full, "perception cache")
    assert len(warned) == 1 and "No space left on device" in warned[0], full.stderr
    assert _verdicts(root / "full" / "run") == reference


# ------------------------------------------------------------------------------ a failing engine is an item error
def test_an_engine_whose_disk_fails_is_an_item_error_with_its_cause_and_resume_retries(
    tmp_path: Path,
) -> None:
    out, marker = tmp_path / "run", tmp_path / "disk-failing"
    marker.touch()
    engine = ["perception.cache_dir=off", "perception.ocr._target_=tests.experiment.fakes.DiskFailingOCR"]
    failed = _run(out, *engine, FAKE_OCR_EIO=str(marker))
    assert failed.returncode == 3, failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"error: 2 of 2 items failed (infrastructure failed (ocr): OSError: [Errno 5] Input/output error: '{marker}'); "
        "retry them with: python scripts/run.py "
    ), last
    assert "(0 unparsed, 2 errors)" in failed.stdout
    rows = _results(out)
    assert all(
        r["error"].startswith("infrastructure failed (ocr)") and r["score"] == 0 for r in rows.values()
    )
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["errors"] == 2 and metrics["n_scored"] == 0

    marker.unlink()  # the disk is back: the printed command retries exactly the failed items
    retry = shlex.split(last.split("retry them with: ", 1)[1])
    assert retry[:2] == ["python", "scripts/run.py"]
    again = run_script("run.py", *retry[2:], FAKE_OCR_EIO=str(marker))
    assert again.returncode == 0, again.stderr
    assert " unparsed, 0 errors)" in again.stdout
    assert all(r["error"] is None for r in _results(out).values())
    assert len((out / "results.jsonl").read_text().splitlines()) == 4  # the retries supersede the failures


# ------------------------------------------------------------------------------ a failing remote service is an item error
def test_an_unreachable_search_api_is_an_item_error_and_resume_retries_it(tmp_path: Path) -> None:
    """The bar-chart item searches (a knowledge question): with a key set and the API unreachable the
    item is an error naming the service, not an answer without search; once the API is up, the
    printed command retries it."""
    out = tmp_path / "run"
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))  # bound, never listening: every connection is refused
    port = dead.getsockname()[1]
    keys = {"SERPER_API_KEY": "serper-key", "SERPAPI_API_KEY": ""}
    search = ["item_ids=[sample_bar_chart]", "search.provider=web", "+search.max_retries=0"]
    try:
        failed = _run(out, *search, f"+search.serper_url=http://127.0.0.1:{port}/serper", **keys)
    finally:
        dead.close()
    assert failed.returncode == 3, failed.stderr
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "error: 1 of 1 items failed (infrastructure failed (web_search): SearchServiceError: "
        "all search providers failed: serper: ConnectError (after 0 retries)); retry them with: "
    ), last
    assert "1 errors)" in failed.stdout
    assert json.loads((out / "metrics.json").read_text())["errors"] == 1

    apis = FakeApis(port)  # the service is back, at the same address
    apis.steps["/serper"] = [SERPER_OK] * 20
    try:
        retry = shlex.split(last.split("retry them with: ", 1)[1])
        assert retry[:2] == ["python", "scripts/run.py"]
        again = run_script("run.py", *retry[2:], **keys)
    finally:
        apis.server.shutdown()
    assert again.returncode == 0, again.stderr
    assert " 0 errors)" in again.stdout and apis.hits["/serper"] >= 1
    assert _results(out)["sample_bar_chart"]["error"] is None
