"""Refuse, before any item runs, a model that cannot answer: billions of parameters on a backend that
would run it on the CPU, or weights that are neither on disk nor downloadable.

Why the size check: ``model=qwen2_5_vl_7b`` without ``backend=`` composes the default in-process transformers
backend; on a machine without CUDA that meant a hub download attempt per item, every item an
error after half a minute, exit 3 and a retry command that cannot help. A 7B-class model belongs on
a GPU server; the one line says which backend to use. ``LEDGERMIND_ALLOW_CPU_LARGE_MODEL=1`` lets a
user with a very large CPU machine run it anyway.

Why the weights check: an in-process backend downloads a hub model on its first item (or loads
``model.path`` then); offline, or with a path that holds no checkpoint, every item then failed with
the same error and a retry command no retry could help.
A model in the local Hugging Face cache passes without a network call; a model that is not is
looked up on the hub once (short timeout) before any item, and a miss is one line (exit 2).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledgermind.backends.transformers_local import TransformersBackend
from ledgermind.backends.vllm_inprocess import VLLMInProcessBackend
from ledgermind.errors import ConfigError, first_line

CPU_MAX_BILLIONS = 4.0  # the largest model a CPU backend is allowed to load (SmolVLM, the tiny model, 3B)
# by the classes' own names (what a ``_target_`` ends in): a misspelt string silently disabled a check
CPU_BACKENDS = (TransformersBackend.__name__,)  # in-process backends whose device can be the CPU
IN_PROCESS = (TransformersBackend.__name__, VLLMInProcessBackend.__name__)  # they load the weights themselves
HUB_TIMEOUT_S = 10.0
NOT_A_HUB_ID = "not a Hugging Face hub id (ORG/NAME)"
ALLOW_ENV = "LEDGERMIND_ALLOW_CPU_LARGE_MODEL"


def billions(model: Mapping[str, Any]) -> float | None:
    """The parameter count in billions that the model's name or hub id states ("7B", "8b"), else None."""
    for field in ("name", "hub_id"):
        m = re.search(
            r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])",
            str(model.get(field) or "").lower().replace("_", "-"),
        )
        if m:
            return float(m.group(1))
    return None


def on_cpu(backend: Mapping[str, Any], cuda_available: bool | None = None) -> bool:
    """Whether an in-process backend would put the model on the CPU (``device: auto`` without CUDA)."""
    if _target(backend) not in CPU_BACKENDS:
        return False
    device = str(backend.get("device") or "auto")
    if device != "auto":
        return device == "cpu"
    return not (_cuda_available() if cuda_available is None else cuda_available)


def _target(backend: Mapping[str, Any]) -> str:
    return str(backend.get("_target_", "")).rsplit(".", 1)[-1]


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def refuse_large_model_on_cpu(
    model: Mapping[str, Any], backend: Mapping[str, Any], cuda_available: bool | None = None
) -> None:
    """One-line ``ConfigError`` (exit 2) for a model above ``CPU_MAX_BILLIONS`` on a CPU backend."""
    size = billions(model)
    if size is None or size <= CPU_MAX_BILLIONS or os.environ.get(ALLOW_ENV) == "1":
        return
    if not on_cpu(backend, cuda_available):
        return
    name = model.get("name")
    raise ConfigError(
        f"model={name} ({size:g}B parameters) would run on the CPU with the in-process transformers backend; "
        f"serve it on a GPU (python scripts/serve.py model={name} --launch) and add "
        "backend=vllm_server backend.base_urls=[http://HOST:8000/v1]"
    )


def weights_problem(hub_id: str, revision: str | None = None) -> str | None:
    """Why the weights of ``hub_id`` cannot be loaded here, or None when they can (cached or downloadable)."""
    from huggingface_hub import HfApi, try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        if isinstance(try_to_load_from_cache(hub_id, "config.json", revision=revision), str):
            return None
    except HFValidationError:  # a folder path or a typo: the hub client's own error is a traceback
        return NOT_A_HUB_ID
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"}:
        return "its weights are not in the local Hugging Face cache and HF_HUB_OFFLINE is set"
    try:
        HfApi().model_info(hub_id, revision=revision, timeout=HUB_TIMEOUT_S)
    except Exception as exc:
        return f"its weights are not in the local Hugging Face cache and the hub did not answer ({first_line(exc)})"
    return None


def checkpoint_problem(path: str) -> str | None:
    """Why the local checkpoint folder ``path`` cannot be loaded, or None when it looks like one."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        return "no such folder"
    if not (folder / "config.json").is_file():
        return "not a checkpoint folder (no config.json)"
    return None


def refuse_unreachable_weights(model: Mapping[str, Any], backend: Mapping[str, Any]) -> None:
    """One-line ``ConfigError`` (exit 2) when an in-process backend could not load the model's
    weights: a local ``path`` that is no checkpoint folder, or hub weights neither cached nor reachable
    (otherwise every item fails alike, with a retry command no retry can help)."""
    hub_id = model.get("hub_id")
    if _target(backend) not in IN_PROCESS or model.get("builder"):
        return
    if path := model.get("path"):
        if problem := checkpoint_problem(str(path)):
            raise ConfigError(
                f"model.path {path}: {problem}; a local checkpoint is a folder with the model's config.json and weights"
            )
        return
    if not hub_id:
        return
    problem = weights_problem(str(hub_id), model.get("revision"))
    if problem == NOT_A_HUB_ID:
        raise ConfigError(
            f"model {hub_id}: {problem}; a local checkpoint is model=hf model.hub_id=NAME model.path={hub_id}"
        )
    if problem:
        raise ConfigError(
            f"model {hub_id}: {problem}; download them where the hub is reachable "
            f"(huggingface-cli download {hub_id}) and copy the cache here, or give model.path=/local/checkpoint"
        )
