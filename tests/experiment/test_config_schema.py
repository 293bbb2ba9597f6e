"""One home per constant: the dataclasses are the schema Hydra composes over; the YAML states only
what differs, and a key no code reads is refused before a run starts."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf
from omegaconf.errors import ConfigKeyError

from ledgermind.cli.run_args import options
from ledgermind.errors import ConfigError
from ledgermind.grounding.cascade import GroundingConfig, build_cascade
from ledgermind.pipeline.agent import grounding_config
from ledgermind.pipeline.config import (
    AblationFlags,
    PipelineConfig,
    ablation_flags,
    build,
    chosen_values,
    declare_flags,
    register_schemas,
    schema,
)
from ledgermind.runs.claim import IdentityMismatch
from tests.experiment.conftest import REPO

CONF = REPO / "conf"


def _compose(*overrides: str) -> dict[str, Any]:
    """The composed ``pipeline`` and (when selected) ``ablation`` nodes, resolved."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    return {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("pipeline", "ablation") if k in cfg}


def test_the_pipeline_yaml_states_only_what_differs_and_composes_to_the_dataclass() -> None:
    raw = yaml.safe_load((CONF / "pipeline" / "ledgermind.yaml").read_text(encoding="utf-8"))
    assert set(raw) == {"defaults", "seed"} and raw["seed"] == "${seed}"  # the run's seed, nothing restated
    node = _compose("seed=3")["pipeline"]
    assert build(PipelineConfig, node, "pipeline") == PipelineConfig(seed=3)
    assert chosen_values({"pipeline": _compose()["pipeline"]}) == {
        "pipeline": {}
    }  # all defaults: nothing chosen


@pytest.mark.parametrize("override", ["pipeline.zoom=8", "pipeline.grounding.bta=0.2", "pipeline.max_oc=abc"])
def test_a_key_no_code_reads_or_a_wrong_type_is_refused_at_composition(override: str) -> None:
    with pytest.raises(ConfigCompositionException):
        _compose(override)


def test_an_added_key_is_refused_before_the_run_claims_its_folder(tmp_path) -> None:
    """``+pipeline.KEY`` opens the node to any key; the run checks it against the schema first."""
    from ledgermind.experiment.app import run_experiment

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            "config", overrides=["+pipeline.zom=8", f"output_dir={tmp_path / 'run'}", "logger=none"]
        )
    with pytest.raises(ConfigKeyError, match="pipeline.zom"):
        run_experiment(cfg, agent_factory=lambda *_: None, scorer=lambda *_: None)
    assert not (tmp_path / "run").exists()


def test_no_constant_is_defined_twice() -> None:
    pipeline = {f.name for f in dataclasses.fields(PipelineConfig)}
    grounding = {f.name for f in dataclasses.fields(GroundingConfig)}
    assert pipeline & grounding == set()


def test_srfa_reads_the_pipeline_names() -> None:
    srfa = yaml.safe_load((CONF / "srfa.yaml").read_text(encoding="utf-8"))["srfa"]
    assert srfa["gamma"] is None and srfa["max_claims"] is None  # defined once: PipelineConfig / MAX_CLAIMS
    from ledgermind.srfa.run import SrfaSettings
    from ledgermind.srfa.split import MAX_CLAIMS

    assert (SrfaSettings().gamma, SrfaSettings().max_claims) == (PipelineConfig().gamma, MAX_CLAIMS)
    assert set(srfa["grounding"]) <= {f.name for f in dataclasses.fields(GroundingConfig)}
    assert build_cascade({"beta": 0.2}).cfg == dataclasses.replace(GroundingConfig(), beta=0.2)
    with pytest.raises(ConfigError, match="unknown grounding config keys"):
        build_cascade({"sigma_ecc_fail": 0.4})  # the old pipeline name is not a grounding key


def test_each_ablation_states_only_what_it_changes_and_its_flags_are_built_from_it() -> None:
    """The flag defaults have one home, ``AblationFlags``: a variant file states its changes only."""
    base = dataclasses.asdict(AblationFlags())
    assert not any(n.startswith("_") for n in options("ablation"))  # no YAML copy of the defaults
    for name in options("ablation"):
        raw = yaml.safe_load((CONF / "ablation" / f"{name}.yaml").read_text(encoding="utf-8"))
        stated = {k: v for k, v in raw.items() if k not in {"name", "table"}}
        assert raw["name"] == name and "defaults" not in raw
        assert set(stated) <= set(base) and all(base[k] != v for k, v in stated.items()), f"{name}: {stated}"
        composed = _compose(f"+ablation={name}")["ablation"]
        assert composed == {**stated, "name": name, "table": raw["table"]}
        assert ablation_flags(composed) == AblationFlags(**stated)
        assert chosen_values({"ablation": {**stated, "name": name}})["ablation"] == {**stated, "name": name}
    with pytest.raises(ConfigKeyError, match="ecc_nc"):
        ablation_flags({"name": "typo", "ecc_nc": False})


def test_no_ecc_turns_both_checks_off_and_full_keeps_the_pipeline_grounding() -> None:
    cfg = build(PipelineConfig, {"grounding": {"delta_read": 0.2, "ncc_relations": False}}, "pipeline")
    full = grounding_config(cfg, AblationFlags())
    assert full == dataclasses.replace(GroundingConfig(), delta_read=0.2, ncc_relations=False)
    off = build_cascade(grounding_config(cfg, AblationFlags(ecc_ncc=False))).cfg
    assert (off.ecc_enabled, off.ncc_enabled, off.delta_read) == (False, False, 0.2)
    assert build_cascade(GroundingConfig(), ecc=False).cfg.ecc_enabled is False


def test_new_keys_override_from_the_command_line() -> None:
    node = _compose("pipeline.grounding.demote_ecc=0.4", "pipeline.grounding.beta=0.2")["pipeline"]
    cfg = build(PipelineConfig, node, "pipeline")
    assert (cfg.grounding.demote_ecc, cfg.grounding.beta) == (0.4, 0.2)
    assert chosen_values({"pipeline": node})["pipeline"] == {"grounding": {"demote_ecc": 0.4, "beta": 0.2}}


@dataclasses.dataclass(frozen=True)
class _PipelineWithNewKey(PipelineConfig):
    search_rounds: int = 1  # a new constant whose default is what the code did before


@pytest.fixture
def _pipeline_schema() -> Iterator[type]:
    """Lets a test register another pipeline schema; the real one is registered again afterwards."""
    store = ConfigStore.instance()
    yield lambda cls: store.store(group="pipeline", name="ledgermind_schema", node=schema(cls))
    register_schemas()


def test_an_unfinished_run_resumes_after_a_new_default_keeping_key_or_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _pipeline_schema: Callable[[type], None]
) -> None:
    """The config hash covers what a run chooses, not the schema's defaults (``chosen_values``): a run
    folder made before a new key or a new variant's flag resumes after it, and choosing the new
    value is another run."""
    from ledgermind.experiment.app import run_experiment
    from ledgermind.pipeline import config
    from ledgermind.runs.reader import RunDir
    from tests.experiment.conftest import FAKE_OVERRIDES

    out = tmp_path / "run"

    def run(*extra: str) -> dict[str, Any]:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[*FAKE_OVERRIDES, "+ablation=no_ecc", "logger=none", f"output_dir={out}", *extra],
            )
        return run_experiment(cfg)

    assert run("limit=2")["n_items"] == 2  # the benchmark has more: the folder is unfinished
    identity = (out / "run_identity.json").read_text(encoding="utf-8")
    _pipeline_schema(_PipelineWithNewKey)  # the composed config now carries pipeline.search_rounds: 1
    flags = config.declare_flags(_variant_files(tmp_path, NO_SEARCH))  # w/o Search declares `search`
    assert flags().search is True and flags(search=False) != flags()
    monkeypatch.setattr(config, "AblationFlags", flags)
    monkeypatch.setitem(config.NODE_SCHEMAS, "ablation", flags)
    monkeypatch.setitem(config.NODE_SCHEMAS, "pipeline", _PipelineWithNewKey)
    assert run("limit=3")["n_items"] == 3  # resumed: one more item, the first two kept
    assert len(RunDir(out).results()) == 3
    assert (out / "run_identity.json").read_text(encoding="utf-8") == identity
    for chosen in ("pipeline.search_rounds=2", "+ablation.search=false"):
        with pytest.raises(IdentityMismatch, match="holds another experiment"):
            run("limit=3", chosen)


NO_SEARCH = "name: no_search\nsearch: false\ntable: {display: w/o Search, row: 5.5}\n"


def _variant_files(tmp_path: Path, new: str) -> Path:
    """conf/ablation with one more variant file, ``new`` (its text)."""
    folder = tmp_path / "ablation"
    shutil.copytree(CONF / "ablation", folder)
    (folder / "new.yaml").write_text(new, encoding="utf-8")
    return folder


def test_the_variant_files_declare_the_flags_and_their_defaults(tmp_path: Path) -> None:
    """A flag is what some variant turns; its default, the method's value, is the other one."""
    assert (
        AblationFlags().use_ledger is True and AblationFlags().baseline is False
    )  # the method: ledger, no CoT
    flags = declare_flags(_variant_files(tmp_path, NO_SEARCH))
    assert {f.name: f.default for f in dataclasses.fields(flags)} == {
        **dataclasses.asdict(AblationFlags()),
        "search": True,
    }


@pytest.mark.parametrize(
    ("new", "message"),
    [
        (
            "name: x\necc_nccc: false\n",
            "ablation flags 'ecc_nccc' (new.yaml) and 'ecc_ncc' (no_ecc.yaml) differ by a typo: one flag, one name",
        ),
        ("name: x\nbaseline: false\n", "new.yaml: baseline is True in baseline.yaml: one flag, one default"),
        ("name: x\nsearch: 2\n", "new.yaml: ablation flag search must be true or false, got 2"),
    ],
)
def test_a_misspelt_conflicting_or_non_switch_flag_in_a_variant_file_is_refused(
    tmp_path: Path, new: str, message: str
) -> None:
    with pytest.raises(ConfigError) as e:
        declare_flags(_variant_files(tmp_path, new))
    assert str(e.value).endswith(message) and "\n" not in str(e.value)


def test_the_code_reads_exactly_the_declared_flags() -> None:
    """The branch's check: the files declare the flags, so the type checker sees any name; every
    ``flags.NAME`` / ``….flags.NAME`` the package reads must be declared, and every declared flag read
    (``flags.append``: a list named flags, in the CLI)."""
    read = set()
    for path in (REPO / "ledgermind").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and "flags" in (
                getattr(node.value, "id", None),
                getattr(node.value, "attr", None),
            ):
                read.add(node.attr)
    assert read - set(dir(list)) == {f.name for f in dataclasses.fields(AblationFlags)}
