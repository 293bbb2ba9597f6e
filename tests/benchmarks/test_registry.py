from __future__ import annotations

import pytest

from ledgermind.benchmarks import BENCHMARKS, LoaderConfig, load_benchmark
from ledgermind.errors import ConfigError, DataError
from ledgermind.registry import RegistryError


def test_all_loaders_registered() -> None:
    assert {"mmmu_pro", "gauges", "ai2d", "jsonl", "sample", "mmstar", "mmmu", "emma", "vstar"} <= set(BENCHMARKS.names())


@pytest.mark.parametrize("name", ["mmmu_pro", "gauges", "ai2d", "jsonl", "mmstar", "mmmu", "emma", "vstar"])
def test_missing_path_is_one_line_data_error(name: str, tmp_path) -> None:
    with pytest.raises(DataError) as exc:
        load_benchmark(name, {"path": str(tmp_path / "absent")})
    msg = str(exc.value)
    assert "\n" not in msg and "absent" in msg and name in msg


def test_no_path_is_data_error() -> None:
    with pytest.raises(DataError, match="needs a data path"):
        load_benchmark("gauges", {})


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="unknown benchmark option"):
        LoaderConfig.from_mapping({"pth": "x"})
    with pytest.raises(ConfigError, match="limit"):
        LoaderConfig.from_mapping({"limit": -1})
    assert LoaderConfig.from_mapping({"name": "gauges", "path": "p", "limit": 3}) == LoaderConfig(path="p", limit=3)
    with pytest.raises(RegistryError):
        load_benchmark("nope")


def test_duplicate_ids_rejected(tmp_path) -> None:
    f = tmp_path / "d.jsonl"
    f.write_text('{"id": "a", "question": "q", "answer": "x"}\n{"id": "a", "question": "q", "answer": "y"}\n')
    with pytest.raises(DataError, match="duplicate item id"):
        load_benchmark("jsonl", {"path": str(f)})
