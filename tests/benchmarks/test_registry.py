from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pytest

from ledgermind.benchmarks import BENCHMARKS, LoaderConfig, load_benchmark
from ledgermind.benchmarks.registry import own_options
from ledgermind.errors import ConfigError, DataError
from ledgermind.registry import RegistryError


def test_all_loaders_registered() -> None:
    assert {"mmmu_pro", "gauges", "ai2d", "jsonl", "sample", "mmstar", "mmmu", "emma", "vstar"} <= set(
        BENCHMARKS.names()
    )


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
    assert LoaderConfig.from_mapping({"name": "gauges", "path": "p", "limit": 3}) == LoaderConfig(
        path="p", limit=3
    )
    with pytest.raises(RegistryError):
        load_benchmark("nope")


def test_duplicate_ids_rejected(tmp_path) -> None:
    f = tmp_path / "d.jsonl"
    f.write_text('{"id": "a", "question": "q", "answer": "x"}\n{"id": "a", "question": "q", "answer": "y"}\n')
    with pytest.raises(DataError, match="duplicate item id"):
        load_benchmark("jsonl", {"path": str(f)})


def test_a_miss_names_the_closest_registered_name() -> None:
    with pytest.raises(
        RegistryError, match=r"unknown benchmark 'mmmu_prp'; did you mean 'mmmu_pro'\? known: ai2d"
    ):
        load_benchmark("mmmu_prp")
    with pytest.raises(RegistryError) as exc:
        load_benchmark("zzzz")
    assert "did you mean" not in str(exc.value) and "known: ai2d" in str(exc.value)


def test_every_module_of_the_package_registers_without_being_listed() -> None:
    """A loader module registers by being in ledgermind/benchmarks/ (pkgutil), never by a second line."""
    import pkgutil
    import sys

    import ledgermind.benchmarks as package

    modules = {m.name for m in pkgutil.iter_modules(package.__path__) if not m.ispkg}
    assert {"adapters", "gauges", "generic", "mmmu_pro", "bundled_sample"} <= modules
    assert all(f"ledgermind.benchmarks.{m}" in sys.modules for m in modules)
    init = (Path(package.__file__)).read_text(encoding="utf-8")
    assert "import adapters" not in init and "gauges" not in init  # no hand-kept list of loaders


@dataclass(frozen=True)
class _ChartOptions:
    zoom: int = 1


def test_a_loader_reads_its_own_options_without_growing_the_shared_config(monkeypatch) -> None:
    seen: list[LoaderConfig] = []

    @own_options(_ChartOptions)
    def load_charts(config: LoaderConfig) -> list:
        seen.append(config)
        return []

    monkeypatch.setattr(BENCHMARKS, "_items", {**BENCHMARKS._items, "charts": load_charts})
    load_benchmark("charts", {"name": "charts", "path": "p", "zoom": 3})
    load_benchmark("charts", {"path": "p"})
    assert [c.options for c in seen] == [_ChartOptions(zoom=3), _ChartOptions()] and seen[0].path == "p"
    with pytest.raises(ConfigError, match=r"unknown benchmark option\(s\) \['zom'\]; known: .*'zoom'"):
        load_benchmark("charts", {"zom": 3})
    with pytest.raises(ConfigError, match="unknown benchmark option"):
        load_benchmark("gauges", {"zoom": 3})  # another loader's key is not gauges'
    assert "zoom" not in {f.name for f in fields(LoaderConfig)}


def test_a_benchmark_carries_its_own_numeric_tolerance_to_the_scorer(tmp_path) -> None:
    """ChartQA-style relaxed accuracy: ``benchmark.numeric_tolerance`` replaces the type-aware rule
    (an exact count here) for every numeric item of that benchmark, and only there."""
    from ledgermind.scoring import score

    f = tmp_path / "charts.jsonl"
    f.write_text('{"id": "a", "question": "q", "answer": "40", "answer_type": "numeric"}\n')
    (exact,) = load_benchmark("jsonl", {"path": str(f)})
    (relaxed,) = load_benchmark("jsonl", {"path": str(f), "numeric_tolerance": 0.05})
    assert relaxed.meta["numeric_tolerance"] == 0.05 and "numeric_tolerance" not in exact.meta
    assert [score(relaxed, f"Answer: {v}").correct for v in ("41.9", "38.1", "42.1")] == [1.0, 1.0, 0.0]
    assert score(exact, "Answer: 41.9").correct == 0.0 and score(exact, "Answer: 40").correct == 1.0
    with pytest.raises(ConfigError, match="numeric_tolerance must be a fraction"):
        load_benchmark("jsonl", {"path": str(f), "numeric_tolerance": "5%"})


@pytest.mark.parametrize("env", [None, "/data/elsewhere"])
def test_a_missing_data_path_names_the_variable_that_moves_it(tmp_path, monkeypatch, env) -> None:
    if env is None:
        monkeypatch.delenv("LEDGERMIND_SHARED_DATA", raising=False)
    else:
        monkeypatch.setenv("LEDGERMIND_SHARED_DATA", env)
    missing = tmp_path / "mmmu_pro_subset"
    with pytest.raises(DataError) as err:
        LoaderConfig(path=str(missing)).require_path("mmmu_pro", "items.jsonl + images/")
    source = "LEDGERMIND_SHARED_DATA is unset" if env is None else f"LEDGERMIND_SHARED_DATA={env}"
    assert str(err.value) == (
        f"benchmark 'mmmu_pro': data path not found: {missing} (expected items.jsonl + images/); {source}: "
        "set it to the folder that holds the benchmarks, or give benchmark.path=..."
    )


def test_derived_files_go_under_the_one_cache_root(tmp_path, monkeypatch) -> None:
    """A benchmark's rendered pages follow ``$XDG_CACHE_HOME`` as the perception cache does, and
    ``$LEDGERMIND_CACHE`` moves both."""
    from perception.cache import default_perception_cache_dir

    monkeypatch.delenv("LEDGERMIND_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert LoaderConfig().cache_path("mmmu") == tmp_path / "xdg" / "ledgermind" / "mmmu"
    assert default_perception_cache_dir() == tmp_path / "xdg" / "ledgermind" / "perception"
    monkeypatch.setenv("LEDGERMIND_CACHE", str(tmp_path / "own"))
    assert LoaderConfig().cache_path("mmmu") == tmp_path / "own" / "mmmu"
    assert default_perception_cache_dir() == tmp_path / "own" / "perception"


def test_conf_cache_paths_follow_the_same_root(tmp_path, monkeypatch) -> None:
    """``conf/``'s cache paths (responses, the tiny model, the simulator's vision cache) resolve
    under ``confutil.cache_root`` whichever variable sets it: a YAML rule that ignored
    ``$XDG_CACHE_HOME`` would look for the tiny model where ``make_tiny_model`` did not put it."""
    from ledgermind.confutil import cache_root
    from ledgermind.pipeline.config import compose

    for env in ({"XDG_CACHE_HOME": str(tmp_path / "xdg")}, {"LEDGERMIND_CACHE": str(tmp_path / "own")}):
        monkeypatch.delenv("LEDGERMIND_CACHE", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        tiny = compose([])
        sim = compose(["backend=simulated"])
        assert Path(tiny.cache.root) == cache_root() / "responses"
        assert Path(tiny.model.path) == cache_root() / "tiny-qwen2-vl"
        assert Path(sim.backend.vision_cache_dir) == cache_root() / "simulator_vision"


def test_a_setting_the_loader_does_not_have_is_refused_not_ignored(tmp_path) -> None:
    """``benchmark=sample benchmark.setting=vision`` loaded the plain sample set (and the run was
    labelled sample/vision); a loader without settings refuses the key in one line."""
    with pytest.raises(
        ConfigError, match=r"benchmark 'sample' has no settings, so benchmark\.setting='x'.*mmmu_pro"
    ):
        load_benchmark("sample", {"path": str(tmp_path), "setting": "x"})
    with pytest.raises(ConfigError, match=r"benchmark\.split='x' would be ignored: no loader has splits"):
        load_benchmark("mmmu_pro", {"path": str(tmp_path), "split": "x"})


def test_a_loader_with_settings_still_reads_them(shared_data) -> None:
    (item,) = load_benchmark(
        "mmmu_pro", {"path": str(shared_data / "mmmu_pro_subset"), "setting": "standard4", "limit": 1}
    )
    assert item.meta["setting"] == "standard4" and len(item.options or []) == 4
