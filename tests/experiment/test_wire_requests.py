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
            "backend=vllm_server",
            f"backend.base_urls=[{srv.base_url}]",
            "backend.max_retries=0",
            "backend.served_model_name=fake-model",
            "benchmark=sample",
            "logger=none",
            "progress=false",
            "cache.mode=off",
            "search.provider=none",
            f"output_dir={tmp_path / 'run'}",
        ]
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


def test_a_sweep_sharing_one_cache_sends_each_distinct_request_once(tmp_path: Path) -> None:
    """Three variants, one cache file (what cache.scope=sweep gives a multirun): the server sees no
    request twice across the sweep, and the census's hits account for every call not sent."""
    from ledgermind.devtools import wire_check

    censuses = []
    with FakeOpenAIServer(latency_s=0.0, record=True) as srv:
        for variant in ("full", "no_ecc", "no_dual_read"):
            overrides = [
                "backend=vllm_server",
                f"backend.base_urls=[{srv.base_url}]",
                "backend.max_retries=0",
                "backend.served_model_name=fake-model",
                "benchmark=sample",
                "limit=3",
                "logger=none",
                "progress=false",
                "search.provider=none",
                f"+ablation={variant}",
                f"output_dir={tmp_path / variant}",
                f"cache.path={tmp_path / 'responses.sqlite'}",
            ]
            with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
                censuses.append(run_experiment(compose("config", overrides=overrides))["mechanisms"])
        bodies = [json.dumps(b, sort_keys=True) for b in srv.recorded]
    assert len(bodies) == len(set(bodies)) > 0
    made, hits = sum(c["model_calls"] for c in censuses), sum(c["cache"]["hits"] for c in censuses)
    assert (
        made - hits == len(bodies)
        and censuses[0]["cache"]["shared"] == 0
        and censuses[1]["cache"]["shared"] > 0
    )
    counts = wire_check.sweep_counts(tmp_path)
    assert (counts["made"], counts["sent"], counts["identical_on_wire"]) == (made, len(bodies), 0)


def test_on_two_servers_every_job_of_a_sweep_sends_each_image_to_one_server(tmp_path: Path) -> None:
    """Three variants on two logging servers, one shared cache: each first image (an item's image,
    or a crop of it) reaches one server only, across all jobs, and no request is sent twice.
    Rotation over the same two servers is the contrast: it spreads images, and the count sees it."""
    from ledgermind.devtools import wire_check

    def sweep(routing: str, variants: tuple[str, ...]) -> dict:
        with (
            FakeOpenAIServer(latency_s=0.0, record=True) as a,
            FakeOpenAIServer(latency_s=0.0, record=True) as b,
        ):
            for variant in variants:
                overrides = [
                    "backend=vllm_server",
                    f"backend.base_urls=[{a.base_url},{b.base_url}]",
                    f"backend.routing={routing}",
                    "backend.max_retries=0",
                    "backend.connect_timeout_s=60",  # a busy machine must not fail a server over
                    "backend.served_model_name=fake-model",
                    "benchmark=sample",
                    "logger=none",
                    "progress=false",
                    "search.provider=none",
                    f"+ablation={variant}",
                    f"output_dir={tmp_path / routing / variant}",
                    f"cache.path={tmp_path / routing / 'responses.sqlite'}",
                ]
                with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
                    assert run_experiment(compose("config", overrides=overrides))["errors"] == 0
            return wire_check.server_counts([a.recorded, b.recorded])

    placed = sweep("rendezvous", ("full", "no_ecc", "no_dual_read"))
    assert placed["first_images_on_several_servers"] == 0 and placed["identical_received"] == 0
    assert min(placed["requests_per_server"]) > 0 and placed["first_images"] > 7  # crops too
    rotated = sweep("rotation", ("full",))
    assert rotated["first_images_on_several_servers"] > 0


def test_a_resumed_run_and_another_job_send_each_item_to_the_same_server(tmp_path: Path) -> None:
    """A run of 3 items resumed with ``limit=7`` (the run announces its whole list, finished items
    included) and a fresh job of 7 items send every item to the same one of two servers: the one
    the placement of the whole list names."""
    from ledgermind.backends.placement import item_key, place
    from ledgermind.runs.items import load_items

    def servers_of(out: Path) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for path in (out / "trajectories").glob("*.json"):
            traj = json.loads(path.read_text())
            found[traj["item_id"]] = {c["meta"]["base_url"] for c in traj["model_calls"]}
        return found

    with FakeOpenAIServer(latency_s=0.0) as a, FakeOpenAIServer(latency_s=0.0) as b:

        def run(out: Path, limit: int) -> None:
            overrides = [
                "backend=vllm_server",
                f"backend.base_urls=[{a.base_url},{b.base_url}]",
                "backend.max_retries=0",
                "backend.connect_timeout_s=60",
                "backend.served_model_name=fake-model",
                "benchmark=sample",
                f"limit={limit}",
                "logger=none",
                "progress=false",
                "cache.mode=off",
                "search.provider=none",
                f"output_dir={out}",
            ]
            with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
                assert run_experiment(compose("config", overrides=overrides))["errors"] == 0

        run(tmp_path / "resumed", 3)
        run(tmp_path / "resumed", 7)
        run(tmp_path / "fresh", 7)
        urls = [a.root_url, b.root_url]
    resumed, fresh = servers_of(tmp_path / "resumed"), servers_of(tmp_path / "fresh")
    assert len(resumed) == 7 and resumed == fresh
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["benchmark=sample", "backend=vllm_server"])
    items = load_items(cfg, 7)
    owners = place([item_key(it) for it in items], urls, cfg.backend.load_epsilon)  # the whole list
    assert fresh == {it.id: {owners[item_key(it)][0]} for it in items}


def test_the_wire_check_without_its_data_is_one_line_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    from ledgermind.devtools import wire_check

    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", str(tmp_path))
    assert wire_check.main(["--benchmarks", "gauges", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: benchmark 'gauges': data path not found: {tmp_path}") and err.count("\n") == 1
    )
