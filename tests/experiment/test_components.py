"""Components chosen by name: lazy registry entries, old dotted names as aliases, no probing."""

from __future__ import annotations

import sys

import pytest
from omegaconf import OmegaConf

from ledgermind.errors import ConfigError
from ledgermind.experiment import components
from ledgermind.experiment.app import configured_agent_factory, configured_scorer
from ledgermind.registry import Registry, RegistryError


def test_a_lazy_entry_imports_only_when_looked_up() -> None:
    reg: Registry[object] = Registry("thing")
    reg.add_lazy("dec", "decimal:Decimal", "old.path.Decimal")
    sys.modules.pop("fractions", None)
    reg.add_lazy("frac", "fractions:Fraction")
    assert "fractions" not in sys.modules and "frac" in reg
    import decimal

    assert reg.get("dec") is decimal.Decimal and reg.get("old.path.Decimal") is decimal.Decimal
    with pytest.raises(RegistryError, match="must be 'module:attr'"):
        reg.add_lazy("bad", "decimal.Decimal")
    reg.add_lazy("gone", "no_such_module_xyz:thing")
    with pytest.raises(RegistryError, match="cannot be loaded"):
        reg.get("gone")


def test_names_and_old_dotted_paths_pick_the_same_agent_factory() -> None:
    from ledgermind.pipeline import build_agent
    from ledgermind.pipeline.official import build_official_agent

    assert configured_agent_factory(OmegaConf.create({"agent_factory": "ledgermind"})) is build_agent
    assert (
        configured_agent_factory(OmegaConf.create({"agent_factory": "ledgermind.pipeline.build_agent"}))
        is build_agent
    )
    cfg = OmegaConf.create({"agent_factory": "ledgermind", "pipeline": {"agent_factory": "official"}})
    assert configured_agent_factory(cfg) is build_official_agent


def test_a_run_folder_scorer_must_be_registered() -> None:
    old = OmegaConf.create({"scorer": "ledgermind.scoring.score", "scoring": {"random_fallback_seed": 7}})
    assert configured_scorer(old, trusted=False).keywords["config"].random_letter_seed == 7
    foreign = OmegaConf.create({"scorer": "os.remove"})
    with pytest.raises(ConfigError, match="not one of the project's"):
        configured_scorer(foreign, trusted=False)
    assert components.scorer("json.dumps", None) is __import__("json").dumps  # the user's own, trusted
