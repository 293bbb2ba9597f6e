"""Sanity property on real data: a perfect simulated model (faults off, p_correct 1) keeps every
answer under every variant, and nothing abstains. A loss names the mechanism that took it.

Real MMMU-Pro subset items and real gauge photos, the real agent, real OCR through the user's
perception and vision caches, as a run uses them (the cold path has its own tests:
tests/perception/test_perception_cache.py, tests/experiment/test_perception_sweep.py).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from PIL import Image

from ledgermind.backends.build import build_backend
from ledgermind.benchmarks.item import Item
from ledgermind.experiment import variants
from ledgermind.experiment.runner import answer_text
from ledgermind.pipeline import build_agent
from ledgermind.runs.items import load_items
from ledgermind.scoring import score
from ledgermind.simulator.sanity import attribute

CONF = Path(__file__).resolve().parents[2] / "conf"
VARIANTS = variants.names()  # conf/ablation: every Table 3 variant, in row order
N_ITEMS = {"mmmu_pro_standard10": 3, "gauges": 2}


def _cfg(benchmark: str, variant: str, out: Path):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                "backend=simulated",
                "backend.faults=off",
                "backend.banner=false",
                f"benchmark={benchmark}",
                f"+ablation={variant}",
                "logger=none",
                "cache.mode=off",
                f"output_dir={out}",
            ],
        )


def _pictures_only(item: Item) -> bool:
    """Every option is an image ("<image 3>"): no option text for the evidence to state."""
    return bool(item.options) and all(re.fullmatch(r"\s*<image\s*\d+>\s*", o) for o in item.options)


def _transparent(item: Item) -> bool:
    """A photo with an alpha channel (perception composites it onto white before cropping)."""

    def has_alpha(p) -> bool:
        with Image.open(p) as im:
            return im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info

    return any(has_alpha(p) for p in item.images)


# Beyond the first items, the kinds the full sanity run (make table3-sim, faults off) once lost.
HARD_CASES = {"mmmu_pro_standard10": _pictures_only, "gauges": _transparent}


def _items(cfg, benchmark: str) -> list[Item]:
    every = load_items(cfg, None)
    items = every[: N_ITEMS[benchmark]]
    hard = next((it for it in every if HARD_CASES[benchmark](it)), None)
    assert hard is not None, f"no {HARD_CASES[benchmark].__name__} item in {benchmark}"
    return items + ([hard] if hard not in items else [])


@pytest.mark.slow
@pytest.mark.parametrize("benchmark", sorted(N_ITEMS))
def test_perfect_model_keeps_every_answer_under_every_variant(benchmark, shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", str(shared_data))
    losses = []
    cfgs = {variant: _cfg(benchmark, variant, tmp_path) for variant in VARIANTS}
    backend = build_backend(cfgs["full"].backend, {"name": "sim"})
    items = _items(cfgs["full"], benchmark)  # the benchmark config is the same under every variant
    for variant, cfg in cfgs.items():
        agent = build_agent(cfg, backend)

        async def solve_all(agent=agent, items=items):
            return [await agent.solve(it) for it in items]

        for item, traj in zip(items, asyncio.run(solve_all())):
            if traj.abstained or score(item, answer_text(traj)).correct < 1:
                losses.append(
                    f"{variant}/{item.id}: gold={item.answer} got={traj.answer!r} <- {attribute(traj.to_dict())}"
                )
    assert not losses, "a mechanism destroyed correct answers of a perfect model:\n" + "\n".join(losses)
