"""Every conf/benchmark option names a registered loader and yields a valid LoaderConfig; the loader
defaults have one home, ``_loader.yaml``."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ledgermind.benchmarks import BENCHMARKS, LoaderConfig, load_benchmark
from ledgermind.errors import DataError


def _options(repo_root):
    return sorted(f for f in (repo_root / "conf" / "benchmark").glob("*.yaml") if not f.stem.startswith("_"))


def _composed(repo_root, name: str) -> dict:
    with initialize_config_dir(config_dir=str(repo_root / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"benchmark={name}", "output_dir=unused"])
    return OmegaConf.to_container(cfg.benchmark, resolve=True)  # type: ignore[return-value]


def test_every_option(repo_root, monkeypatch) -> None:
    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", "/data/x")
    files = _options(repo_root)
    assert len(files) >= 10
    for f in files:
        node = _composed(repo_root, f.stem)
        assert node["name"] in BENCHMARKS, f.name
        cfg = LoaderConfig.from_mapping(node)
        if cfg.path:
            assert cfg.path.startswith("/data/x/"), f.name


def test_the_loader_defaults_live_in_loader_yaml_and_each_option_states_only_its_own(repo_root) -> None:
    base = yaml.safe_load((repo_root / "conf" / "benchmark" / "_loader.yaml").read_text(encoding="utf-8"))
    assert base.pop("name") == "???"  # every option must name its loader
    assert base == {
        k: v for k, v in dataclasses.asdict(LoaderConfig()).items() if k != "options"
    }  # a loader's own
    for f in _options(repo_root):
        raw = yaml.safe_load(f.read_text(encoding="utf-8"))
        assert raw.pop("defaults") == ["_loader", "_self_"], f.name
        assert "name" in raw and all(base.get(k, object()) != v for k, v in raw.items()), (
            f"{f.name} restates a default"
        )
        keys = list(_composed(repo_root, f.stem))
        assert keys[: len(base) + 1] == ["name", *base], (
            f.name
        )  # the recorded config's key order; own keys after


@pytest.mark.parametrize("name", ["jsonl", "mmstar", "mmmu", "emma", "vstar"])
def test_unset_path_options_fail_with_clear_message(repo_root, name: str) -> None:
    node = _composed(repo_root, name)
    with pytest.raises(DataError, match="needs a data path"):
        load_benchmark(node["name"], node)
