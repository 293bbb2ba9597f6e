"""One home per constant: the dataclasses are the schema, the YAML restates them exactly.

The YAML under ``conf/`` keeps every value visible in a run's recorded config and overridable from
the command line; these tests fail the moment a YAML value and its dataclass default differ, a key
exists on one side only, a constant is defined twice, or an ablation restates a flag it does not
change.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from ledgermind.cli.run_args import options, preprocess
from ledgermind.errors import ConfigError
from ledgermind.grounding.cascade import GroundingConfig, build_cascade
from ledgermind.pipeline.agent import grounding_config
from ledgermind.pipeline.config import RENAMED_KEYS, AblationFlags, PipelineConfig
from tests.experiment.conftest import REPO

CONF = REPO / "conf"
NESTED = {"grounding": GroundingConfig}  # PipelineConfig fields that are dataclasses of their own


def _compose(*overrides: str) -> dict[str, Any]:
    """The composed ``pipeline`` and (when selected) ``ablation`` nodes, resolved."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    return {k: OmegaConf.to_container(cfg[k], resolve=True) for k in ("pipeline", "ablation") if k in cfg}


def _same(yaml_value: Any, default: Any) -> bool:
    if isinstance(default, tuple):
        return list(default) == yaml_value
    if isinstance(default, float) and math.isinf(default):
        return yaml_value == default
    return (
        type(yaml_value) is type(default)
        and yaml_value == default
        or (
            isinstance(default, float)
            and isinstance(yaml_value, int)
            and not isinstance(yaml_value, bool)
            and float(yaml_value) == default
        )
    )


def _mismatches(node: dict[str, Any], schema: Any, prefix: str) -> list[str]:
    """Every key of ``node`` vs every field of the dataclass ``schema``: missing, extra or differing."""
    names = {f.name for f in dataclasses.fields(schema)}
    out = [f"{prefix}{k}: not a {schema.__name__} field" for k in sorted(set(node) - names)]
    out += [f"{prefix}{k}: missing from the YAML" for k in sorted(names - set(node))]
    default = schema()
    for k in sorted(set(node) & names):
        if k in NESTED and schema is PipelineConfig:
            out += _mismatches(node[k], NESTED[k], f"{prefix}{k}.")
        elif not _same(node[k], getattr(default, k)):
            out.append(f"{prefix}{k}: YAML {node[k]!r} != dataclass {getattr(default, k)!r}")
    return out


def test_pipeline_yaml_is_exactly_the_dataclass_defaults() -> None:
    assert _mismatches(_compose()["pipeline"], PipelineConfig, "pipeline.") == []


def test_the_walk_catches_a_drifted_default() -> None:
    node = _compose()["pipeline"]
    node["grounding"]["demote_ecc"] = 0.49
    node["max_oc"] = 16
    assert _mismatches(node, PipelineConfig, "pipeline.") == [
        "pipeline.grounding.demote_ecc: YAML 0.49 != dataclass 0.5",
        "pipeline.max_oc: YAML 16 != dataclass 15",
    ]


def test_no_constant_is_defined_twice() -> None:
    pipeline = {f.name for f in dataclasses.fields(PipelineConfig)}
    grounding = {f.name for f in dataclasses.fields(GroundingConfig)}
    assert pipeline & grounding == set()
    assert not set(RENAMED_KEYS) & pipeline  # a moved key has one home, the new one
    assert {v.removeprefix("grounding.") for v in RENAMED_KEYS.values()} <= grounding


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


def test_each_ablation_states_only_what_it_changes_and_the_run_records_every_flag() -> None:
    """The flag defaults have one home, ``AblationFlags``: a variant file states its changes only,
    and the recorded node (``variants.run_node``) holds every flag, in the dataclass's order."""
    from ledgermind.experiment.variants import run_node

    base = dataclasses.asdict(AblationFlags())
    assert not any(n.startswith("_") for n in options("ablation"))  # no YAML copy of the defaults
    for name in options("ablation"):
        raw = yaml.safe_load((CONF / "ablation" / f"{name}.yaml").read_text(encoding="utf-8"))
        stated = {k: v for k, v in raw.items() if k not in {"name", "table"}}
        assert raw["name"] == name and "defaults" not in raw
        assert set(stated) <= set(base) and all(base[k] != v for k, v in stated.items()), f"{name}: {stated}"
        composed = _compose(f"+ablation={name}")["ablation"]
        assert composed == {**stated, "name": name, "table": raw["table"]}
        recorded = run_node(composed)
        assert list(recorded) == [*base, "name"] and recorded == {**base, **stated, "name": name}


def test_no_ecc_turns_both_checks_off_and_full_keeps_the_pipeline_grounding() -> None:
    cfg = PipelineConfig.from_mapping({"grounding": {"delta_read": 0.2, "ncc_relations": False}})
    full = grounding_config(cfg, AblationFlags())
    assert full == dataclasses.replace(GroundingConfig(), delta_read=0.2, ncc_relations=False)
    off = build_cascade(grounding_config(cfg, AblationFlags(ecc_ncc=False))).cfg
    assert (off.ecc_enabled, off.ncc_enabled, off.delta_read) == (False, False, 0.2)
    assert build_cascade(GroundingConfig(), ecc=False).cfg.ecc_enabled is False


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_KEYS.items()))
def test_an_old_key_fails_naming_the_new_one(old: str, new: str) -> None:
    with pytest.raises(ConfigError, match=f"pipeline.{old} is now pipeline.{new}"):
        PipelineConfig.from_mapping({old: 0.3})
    for arg in (f"pipeline.{old}=0.3", f"+pipeline.{old}=0.3"):
        with pytest.raises(ConfigError, match=f"pipeline.{old} is now pipeline.{new}"):
            preprocess([arg])


def test_new_keys_override_from_the_command_line() -> None:
    node = _compose("pipeline.grounding.demote_ecc=0.4", "pipeline.grounding.beta=0.2")["pipeline"]
    cfg = PipelineConfig.from_mapping(node)
    assert (cfg.grounding.demote_ecc, cfg.grounding.beta) == (0.4, 0.2)
    assert preprocess(["pipeline.grounding.beta=0.2"]) == ["pipeline.grounding.beta=0.2"]
