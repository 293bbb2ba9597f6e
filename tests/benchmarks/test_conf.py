"""Every conf/benchmark option names a registered loader and yields a valid LoaderConfig."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from ledgermind.benchmarks import BENCHMARKS, LoaderConfig, load_benchmark
from ledgermind.errors import DataError


def _options(repo_root):
    return sorted((repo_root / "conf" / "benchmark").glob("*.yaml"))


def test_every_option(repo_root, monkeypatch) -> None:
    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", "/data/x")
    files = _options(repo_root)
    assert len(files) >= 10
    for f in files:
        node = OmegaConf.to_container(OmegaConf.load(f), resolve=True)
        assert node["name"] in BENCHMARKS, f.name
        cfg = LoaderConfig.from_mapping(node)
        if cfg.path:
            assert cfg.path.startswith("/data/x/"), f.name


@pytest.mark.parametrize("name", ["jsonl", "mmstar", "mmmu", "emma", "vstar"])
def test_unset_path_options_fail_with_clear_message(repo_root, name: str) -> None:
    node = OmegaConf.to_container(OmegaConf.load(repo_root / "conf" / "benchmark" / f"{name}.yaml"))
    with pytest.raises(DataError, match="needs a data path"):
        load_benchmark(node["name"], node)
