"""Compose and instantiate every option of every config group (new options are picked up automatically)."""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from ledgermind.errors import MissingExtraError
from ledgermind.pipeline.config import AblationFlags, PipelineConfig, ablation_flags, build
from tests.conftest import SHARED_DATA
from tests.experiment.conftest import REPO

CONF = REPO / "conf"
SHARED = SHARED_DATA.resolve()
GROUP_DIRS = sorted(p for p in CONF.iterdir() if p.is_dir() and p.name != "hydra")
OPTIONS = [
    (g.name, f.stem) for g in GROUP_DIRS for f in sorted(g.glob("*.yaml")) if not f.stem.startswith("_")
]  # _x: a base


def _compose(*overrides: str) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def _override(group: str, option: str) -> list[str]:
    # ablation and experiment are not in the defaults list: they are added with +ablation=NAME
    sel = f"+{group}={option}" if group in ("ablation", "experiment") else f"{group}={option}"
    extra = {
        ("backend", "scripted"): ["backend.allow_scripted=true"],
        ("backend", "replay"): [
            f"backend.path={SHARED / 'mmmu_pro_subset/gpt4o_outputs/standard10_direct.jsonl'}"
        ],
        ("pipeline", "official"): [f"pipeline.prompts_path={SHARED / 'mmmu_pro_official/prompts.yaml'}"],
        ("experiment", "table3"): ["backend.base_urls=[http://localhost:8000/v1]"],
        ("model", "hf"): ["model.hub_id=ORG/Some-VL-2B"],
    }
    return [sel, *extra.get((group, option), [])]


# Options whose objects read the real data when built: the recorded replies, the official prompts,
# the simulator's beliefs (recorded GPT-4o answers). Elsewhere the data is read only when a run starts.
READS_SHARED_DATA = {("backend", "replay"), ("pipeline", "official"), ("experiment", "table3_sim")}


def _instantiate_targets(node: Any) -> list[Any]:
    """Instantiate every sub-node that has a ``_target_``; return the objects."""
    if isinstance(node, DictConfig):
        if "_target_" in node:
            return [instantiate(node, _convert_="all")]
        return [obj for v in node.values() for obj in _instantiate_targets(v)]
    return []


def _check_model(cfg: DictConfig) -> None:
    from ledgermind.backends.model_ref import ModelRef

    assert ModelRef.from_mapping(OmegaConf.to_container(cfg.model, resolve=True)).name == cfg.model.name


def _check_backend(cfg: DictConfig) -> None:
    from ledgermind.backends.base import Backend
    from ledgermind.backends.build import build_backend

    if "vllm" in cfg.backend._target_.lower() and "inprocess" in cfg.backend._target_.lower():
        if importlib.util.find_spec("vllm") is None:
            pytest.skip(
                "vllm is not installed here (the in-process engine needs it; pip install 'ledgermind[vllm]')"
            )
    assert isinstance(build_backend(cfg.backend, cfg.model), Backend)


def _check_benchmark(cfg: DictConfig) -> None:
    from ledgermind.benchmarks import BENCHMARKS, LoaderConfig

    node = OmegaConf.to_container(cfg.benchmark, resolve=True)
    LoaderConfig.from_mapping(node)
    assert cfg.benchmark.name in BENCHMARKS


def _check_pipeline(cfg: DictConfig) -> None:
    node = OmegaConf.to_container(cfg.pipeline, resolve=True)
    if node.get("agent_factory"):  # a pipeline with its own agent (pipeline=official)
        from ledgermind.experiment.app import configured_agent_factory

        agent = configured_agent_factory(cfg)(cfg, object())
        assert callable(agent.solve)
        return
    # composed over the schema: every PipelineConfig field, the dataclass's defaults (the seed follows the run's)
    assert set(node) == {f.name for f in dataclasses.fields(PipelineConfig)}
    assert build(PipelineConfig, node, "pipeline") == PipelineConfig(seed=cfg.seed)


def _check_ablation(cfg: DictConfig) -> None:
    node = OmegaConf.to_container(cfg.ablation, resolve=True)
    name = node.pop("name")
    assert node.pop("table")["display"]  # how Table 3 shows it (experiment/variants.py), not a flag
    flags = ablation_flags(node)
    changed = {
        f.name
        for f in dataclasses.fields(AblationFlags)
        if getattr(flags, f.name) != getattr(AblationFlags(), f.name)
    }
    expected = {
        "full": set(),
        "no_ledger": {"use_ledger"},
        "free_form_repair": {"typed_repair"},
        "no_ecc": {"ecc_ncc"},
        "no_dual_read": {"dual_read"},
        "no_dispatcher": {"dispatcher"},
        "baseline": {"baseline"},
    }
    assert changed == expected.get(name, changed), f"{name} flips {changed}"


def _check_logger(cfg: DictConfig) -> None:
    from ledgermind.experiment.wandb_logger import ExperimentLogger

    assert isinstance(instantiate(cfg.logger), ExperimentLogger)


def _check_experiment(cfg: DictConfig) -> None:
    """An experiment composes a runnable config: its model, backend and benchmark instantiate."""
    for check in (_check_model, _check_backend, _check_benchmark):
        check(cfg)
    assert (
        "experiment" not in cfg and "ablation" not in cfg
    )  # @package _global_; variants come from its sweep


def _check_generic(group: str) -> Callable[[DictConfig], None]:
    def check(cfg: DictConfig) -> None:
        OmegaConf.to_container(cfg[group], resolve=True, throw_on_missing=False)
        _instantiate_targets(cfg[group])

    return check


CHECKS: dict[str, Callable[[DictConfig], None]] = {
    "model": _check_model,
    "backend": _check_backend,
    "benchmark": _check_benchmark,
    "pipeline": _check_pipeline,
    "ablation": _check_ablation,
    "logger": _check_logger,
    "experiment": _check_experiment,
}


def test_every_group_has_options() -> None:
    names = {g for g, _ in OPTIONS}
    assert {"model", "backend", "perception", "benchmark", "pipeline", "logger", "ablation"} <= names
    assert {o for g, o in OPTIONS if g == "ablation"} >= {
        "full",
        "no_ledger",
        "free_form_repair",
        "no_ecc",
        "no_dual_read",
        "no_dispatcher",
        "baseline",
    }


@pytest.mark.slow
@pytest.mark.parametrize(("group", "option"), OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_compose_and_instantiate(group: str, option: str) -> None:
    if (group, option) in READS_SHARED_DATA and not SHARED.is_dir():
        pytest.skip(
            f"{group}={option} reads the real data when built; none at {SHARED} (set LEDGERMIND_SHARED_DATA)"
        )
    cfg = _compose(*_override(group, option))
    try:
        CHECKS.get(group, _check_generic(group))(cfg)
    except MissingExtraError as e:
        pytest.skip(f"{group}={option}: {e}")


def test_default_config_composes() -> None:
    cfg = _compose()
    assert "ablation" not in cfg  # only via +ablation=NAME
    assert cfg.seed == 0 and cfg.concurrency >= 1 and cfg.limit is None
    assert cfg.logger._target_.endswith("WandbLogger") and cfg.logger.mode == "offline"
    assert cfg.model.name == "tiny_qwen2_vl" and cfg.backend._target_.endswith("TransformersBackend")


def test_two_base_urls_resolve_and_reach_the_backend() -> None:
    """Data-parallel serving: one vLLM server per GPU, listed in backend.base_urls."""
    from ledgermind.backends.build import build_backend

    urls = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
    cfg = _compose("model=qwen2_5_vl_7b", "backend=vllm_server", f"backend.base_urls=[{','.join(urls)}]")
    assert list(cfg.backend.base_urls) == urls
    backend = build_backend(cfg.backend, cfg.model)
    # the client keeps server roots (it appends /v1/... itself)
    assert [u.rstrip("/").removesuffix("/v1") for u in backend.base_urls] == [
        "http://127.0.0.1:8001",
        "http://127.0.0.1:8002",
    ]


def test_slurm_launcher_example_is_complete() -> None:
    node = OmegaConf.load(CONF / "hydra" / "launcher" / "submitit_slurm.yaml")
    assert node._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert node.gpus_per_node == 1 and node.tasks_per_node == 1
    try:
        from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf
    except ImportError:
        pytest.skip(
            "hydra-submitit-launcher not installed (pip install 'ledgermind[submitit]'): checked the file only"
        )
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=["hydra/launcher=submitit_slurm", "+ablation=no_ecc"],
            return_hydra_config=True,
        )
    assert cfg.hydra.launcher._target_ == node._target_ and cfg.hydra.launcher.max_num_timeout == 3

    schema = {f.name for f in dataclasses.fields(SlurmQueueConf)}
    assert set(node) == schema  # it replaces the plugin's defaults, so every field is listed


# ------------------------------------------------------------------------------ the YAML parser
YAML_FILES = sorted([*CONF.rglob("*.yaml"), *(REPO / "tests" / "experiment" / "conf").rglob("*.yaml")])
OMEGACONF_RULES = """\
exp: 1e-3
underscored: 1_000.5
sexagesimal: 190:20:30.15
date: 2001-12-14
not_a_number: 1_0x
infinity: -.inf
yes_is: yes
path: !!python/object/apply:pathlib.Path [a, b]
"""


def _python_parsed(text: str) -> Any:
    from omegaconf import _utils

    return yaml.load(text, Loader=_utils.get_yaml_loader.python_loader())


NO_LIBYAML = pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")


@NO_LIBYAML
@pytest.mark.parametrize("path", YAML_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_c_parser_reads_every_config_file_as_omegaconf_does(path) -> None:
    """Composition parses with libyaml (confutil.parse_yaml_in_c, installed by register_schemas): every
    file of conf/ must come out exactly as OmegaConf's own pure-Python loader reads it."""
    from omegaconf import _utils

    from ledgermind.pipeline.config import register_schemas

    register_schemas()
    assert hasattr(_utils.get_yaml_loader, "python_loader")  # installed, once
    assert OmegaConf.load(path) == OmegaConf.create(_python_parsed(path.read_text(encoding="utf-8")))


@NO_LIBYAML
def test_the_c_parser_keeps_omegaconfs_rules() -> None:
    """OmegaConf's float forms, no timestamps, its Path constructor, and its duplicate-key refusal."""
    from omegaconf import _utils
    from yaml.cyaml import CParser

    from ledgermind.pipeline.config import register_schemas

    register_schemas()
    cfg = OmegaConf.create(OMEGACONF_RULES)
    assert issubclass(_utils.get_yaml_loader(), CParser)
    assert OmegaConf.to_container(cfg) == _python_parsed(OMEGACONF_RULES)
    assert cfg.exp == 0.001 and cfg.underscored == 1000.5 and cfg.infinity == float("-inf")
    assert cfg.date == "2001-12-14" and cfg.not_a_number == "1_0x" and cfg.yes_is is True
    assert cfg.sexagesimal == pytest.approx(685230.15) and str(cfg.path) == "a/b"
    with pytest.raises(yaml.constructor.ConstructorError, match="found duplicate key a"):
        OmegaConf.create("a: 1\na: 2\n")
