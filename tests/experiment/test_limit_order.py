"""``limit`` with a seeded shuffle or a stratified draw: not only the file's first N rows."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from ledgermind.benchmarks.item import Item
from ledgermind.errors import ConfigError
from ledgermind.runs.items import LimitOrder, load_items, take


def _items() -> list[Item]:  # sorted by subject, as MMMU-Pro's file is
    return [
        Item(f"{s}_{i}", "q?", meta={"subject": s}) for s in ("Art", "Biology", "Clinical") for i in range(5)
    ]


def test_first_shuffle_and_stratified() -> None:
    items = _items()
    assert [i.id for i in take(items, 3, LimitOrder.FIRST)] == ["Art_0", "Art_1", "Art_2"]
    shuffled = take(items, 6, LimitOrder.SHUFFLE, seed=1)
    assert len({i.id for i in shuffled}) == 6 and shuffled == take(
        items, 6, LimitOrder.SHUFFLE, seed=1
    )  # seeded
    assert shuffled != take(items, 6, LimitOrder.SHUFFLE, seed=2) and shuffled != items[:6]
    strat = take(items, 6, LimitOrder.STRATIFIED, seed=1)
    assert sorted(i.meta["subject"] for i in strat) == [
        "Art",
        "Art",
        "Biology",
        "Biology",
        "Clinical",
        "Clinical",
    ]
    assert (
        len(take(items, 99, LimitOrder.STRATIFIED)) == 15 and len(take(items, 99, LimitOrder.SHUFFLE)) == 15
    )
    by_difficulty = [Item(f"d{k}", "q", difficulty=d) for k, d in enumerate(["Easy"] * 8 + ["Hard"] * 2)]
    assert sorted(i.difficulty for i in take(by_difficulty, 4, LimitOrder.STRATIFIED, by="difficulty")) == [
        "Easy",
        "Easy",
        "Hard",
        "Hard",
    ]
    with pytest.raises(ConfigError, match="limit_order must be first, shuffle or stratified"):
        LimitOrder.parse("random")


def test_load_items_applies_the_order_and_its_own_seed(shared_data) -> None:
    def cfg(order: str, seed: int = 0):
        return OmegaConf.create(
            {
                "limit_order": order,
                "limit_seed": seed,
                "limit_by": "subject",
                "benchmark": {
                    "name": "mmmu_pro",
                    "setting": "standard10",
                    "path": str(shared_data / "mmmu_pro_subset"),
                    "limit": None,
                },
            }
        )

    first = load_items(cfg("first"), 12)
    strat = load_items(cfg("stratified"), 12)
    subjects = lambda items: {i.meta.get("subject") for i in items}  # noqa: E731
    assert len(subjects(strat)) > len(subjects(first)) and len(strat) == 12
    assert [i.id for i in load_items(cfg("shuffle", 3), 5)] == [
        i.id for i in load_items(cfg("shuffle", 3), 5)
    ]


@pytest.mark.parametrize("cfg", [{"limit_order": "first"}, {"benchmark": "gauges"}])
def test_a_config_without_a_benchmark_node_is_one_config_error(cfg) -> None:
    # a run folder's recorded config is read back by rescore and report: a foreign one may lack the node
    with pytest.raises(ConfigError, match=r"^the config names no benchmark \(benchmark=NAME\)$"):
        load_items(OmegaConf.create(cfg), None, trusted=False)
