"""item_ids / item_ids_file run exactly the named items; an unknown id is one line and exit 2;
the README's recipe reruns one item of a past run with its recorded config and response cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.backends.base import Backend, GenerationRequest, Message
from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError, DataError
from ledgermind.experiment.item_filter import requested_ids, select_items
from ledgermind.trajectory import PathKind, Trajectory
from tests.experiment.conftest import FAKE_OVERRIDES, run_script
from tests.experiment.fakes import fake_items


class AskingAgent:
    """Answers with whatever the backend replies to the question (so the response cache matters)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    async def solve(self, item: Item) -> Trajectory:
        reply = await self.backend.generate(GenerationRequest([Message.text("user", item.question)]))
        return Trajectory(item.id, item.question, PathKind.DIRECT, answer=reply.text, raw_answer=reply.text)


def build_asking_agent(cfg, backend: Backend) -> AskingAgent:
    return AskingAgent(backend)


def ids_of(run_dir: Path) -> list[str]:
    return sorted(json.loads(x)["id"] for x in (run_dir / "results.jsonl").read_text().splitlines())


def test_requested_ids_from_list_and_file(tmp_path: Path) -> None:
    f = tmp_path / "ids.txt"
    f.write_text("# failed last night\nq2\n\nq5\nq2\n")
    assert requested_ids({}) is None and requested_ids({"item_ids": None, "item_ids_file": None}) is None
    assert requested_ids({"item_ids": ["q1", 7]}) == ["q1", "7"]
    assert requested_ids({"item_ids": ["q1"], "item_ids_file": str(f)}) == ["q1", "q2", "q5"]
    with pytest.raises(ConfigError, match="select no item"):
        requested_ids({"item_ids": []})
    with pytest.raises(DataError, match="cannot be read"):
        requested_ids({"item_ids_file": str(tmp_path / "missing.txt")})


def test_select_items_keeps_benchmark_order_and_names_unknown_ids() -> None:
    items = fake_items(6)
    assert [it.id for it in select_items(items, ["q4", "q1"])] == ["q1", "q4"]
    with pytest.raises(DataError, match=r"unknown item id\(s\) 'q9', 'x' in fake \(6 items; e\.g\. q0, q1"):
        select_items(items, ["q1", "q9", "x"], "fake")


@pytest.mark.slow
def test_run_py_item_filters(tmp_path: Path) -> None:
    common = [*FAKE_OVERRIDES, "logger=none"]
    by_list = run_script("run.py", *common, "item_ids=[q1,q4]", f"hydra.run.dir={tmp_path / 'a'}")
    assert by_list.returncode == 0, by_list.stderr
    assert ids_of(tmp_path / "a") == ["q1", "q4"]
    assert json.loads((tmp_path / "a" / "metrics.json").read_text())["identity"]["n_items"] == 2

    f = tmp_path / "ids.txt"
    f.write_text("q2\nq5\nq0\n")
    by_file = run_script(
        "run.py", *common, f"item_ids_file={f}", "limit=2", f"hydra.run.dir={tmp_path / 'b'}"
    )
    assert by_file.returncode == 0, by_file.stderr
    assert ids_of(tmp_path / "b") == ["q0", "q2"]  # benchmark order, then limit

    bad = run_script("run.py", *common, "item_ids=[q1,nope]", f"hydra.run.dir={tmp_path / 'c'}")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("error: unknown item id(s) 'nope' in fake")
    assert not (tmp_path / "c" / "results.jsonl").exists()


@pytest.mark.slow
def test_readme_recipe_reruns_one_item_of_a_past_run_exactly(tmp_path: Path) -> None:
    run = tmp_path / "run"
    agent = "agent_factory=tests.experiment.test_item_filter.build_asking_agent"
    first = run_script(
        "run.py", *FAKE_OVERRIDES, agent, "backend.default=A", "logger=none", f"hydra.run.dir={run}"
    )
    assert first.returncode == 0, first.stderr
    # the command of README "Reproducibility", verbatim apart from the paths (replay never asks the model)
    recipe = [
        "--config-path",
        str(run / ".hydra"),
        "--config-name",
        "config",
        "item_ids=[q2]",
        "cache.mode=replay",
        f"cache.path={run / 'responses.sqlite'}",
    ]
    rerun = run_script("run.py", *recipe, f"hydra.run.dir={tmp_path / 'rerun'}")
    assert rerun.returncode == 0, rerun.stderr
    old = next(
        json.loads(x) for x in (run / "results.jsonl").read_text().splitlines() if json.loads(x)["id"] == "q2"
    )
    [new] = [json.loads(x) for x in (tmp_path / "rerun" / "results.jsonl").read_text().splitlines()]
    keep = ("id", "prediction", "score", "parsed", "path", "model_calls")
    assert {k: new[k] for k in keep} == {k: old[k] for k in keep} and new["prediction"] == "A"
    live = run_script(
        "run.py", *recipe[:5], "cache.mode=off", "backend.default=B", f"hydra.run.dir={tmp_path / 'live'}"
    )
    assert live.returncode == 0, live.stderr
    assert json.loads((tmp_path / "live" / "results.jsonl").read_text())["prediction"] == "B"
    # another model (here: the scripted one saying "B") is never answered from this recording
    other = run_script("run.py", *recipe, "backend.default=B", f"hydra.run.dir={tmp_path / 'other'}")
    assert other.returncode == 3, other.stderr
    assert (
        "replay mode: no recorded reply"
        in json.loads((tmp_path / "other" / "results.jsonl").read_text())["error"]
    )
    old_id = json.loads((run / "metrics.json").read_text())["identity"]
    new_id = json.loads((tmp_path / "rerun" / "metrics.json").read_text())["identity"]
    for field in ("prompts_sha256", "decoding", "model", "git"):
        assert new_id[field] == old_id[field]
