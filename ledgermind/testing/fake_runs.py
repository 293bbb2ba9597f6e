"""Runs composed from ``conf/`` in this process, as ``ledgermind run`` composes them, and the
overrides of a run against the fake OpenAI servers.

Why one place: the wire check and the benchmarks run the real agent, against ``fake_openai_server``
or the default config, and must see what a user's run sees; against the fake servers only the
client settings differ: no retries (a failure shows as one), no logger, no progress bar, the
fake's model name.
"""

from __future__ import annotations

from typing import Any


def fake_run_overrides(urls: list[str], benchmark: str, limit: int) -> list[str]:
    """The Hydra overrides of a run of ``limit`` items of ``benchmark`` against the fake servers ``urls``."""
    return [
        "backend=vllm_server",
        f"backend.base_urls=[{','.join(urls)}]",
        "backend.max_retries=0",
        "backend.served_model_name=fake-model",
        f"benchmark={benchmark}",
        f"limit={limit}",
        "logger=none",
        "progress=false",
    ]


def run_composed(overrides: list[str]) -> dict[str, Any]:
    """Compose ``conf/config.yaml`` with ``overrides`` and run it in this process; its ``metrics.json``."""
    from ledgermind.experiment.app import run_experiment
    from ledgermind.pipeline.config import compose

    return run_experiment(compose(overrides))
