"""On the wire, against a greedy server: no request is sent twice, and the census's model-call
count is what the server received. The request-logging fake OpenAI server answers every request
the same way a greedy backbone would (a fixed reply in the requested format), so every repair that
re-asks must change its request (App. E.2) or not send it. Cache off: each call reaches the server."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from ledgermind.experiment.app import run_experiment
from ledgermind.testing.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow  # real OCR on the bundled sample set (cached after the first run)
CONF = Path(__file__).resolve().parents[2] / "conf"


def test_no_byte_identical_request_and_census_counts_what_the_server_received(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        overrides = [
            "backend=vllm_server", f"backend.base_urls=[{srv.base_url}]", "backend.max_retries=0",
            "backend.served_model_name=fake-model", "benchmark=sample", "logger=none", "progress=false",
            "cache.mode=off", "search.provider=none", f"output_dir={tmp_path / 'run'}",
        ]  # fmt: skip
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            metrics = run_experiment(compose("config", overrides=overrides))
        bodies = [json.dumps(b, sort_keys=True) for b in srv.recorded]
    census = metrics["mechanisms"]
    assert metrics["errors"] == 0 and len(bodies) > metrics["n_items"]
    repeats = {b[:120]: n for b, n in collections.Counter(bodies).items() if n > 1}
    assert not repeats, repeats
    assert census["model_calls"] == len(bodies)
    # the fake's replies support nothing, so T5 fires and repairs re-ask: the property is exercised
    assert census["triggers"]["T5"] >= 1 and census["operators"]["ACQUIRE"] >= 1
