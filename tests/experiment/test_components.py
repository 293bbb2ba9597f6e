"""Components chosen by name: lazy registry entries, a run folder's dotted path never imported, no probing."""

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
    reg.add_lazy("dec", "decimal:Decimal")
    sys.modules.pop("fractions", None)
    reg.add_lazy("frac", "fractions:Fraction")
    assert "fractions" not in sys.modules and "frac" in reg
    import decimal

    assert reg.get("dec") is decimal.Decimal
    with pytest.raises(RegistryError, match="must be 'module:attr'"):
        reg.add_lazy("bad", "decimal.Decimal")
    reg.add_lazy("gone", "no_such_module_xyz:thing")
    with pytest.raises(RegistryError, match="cannot be loaded"):
        reg.get("gone")


def test_a_name_or_the_users_own_dotted_path_picks_the_agent_factory() -> None:
    from ledgermind.pipeline import build_agent
    from ledgermind.pipeline.official import build_official_agent

    assert configured_agent_factory(OmegaConf.create({"agent_factory": "ledgermind"})) is build_agent
    own = OmegaConf.create({"agent_factory": "ledgermind.pipeline.official.build_official_agent"})
    assert configured_agent_factory(own) is build_official_agent  # not registered under that path: imported
    cfg = OmegaConf.create({"agent_factory": "ledgermind", "pipeline": {"agent_factory": "official"}})
    assert configured_agent_factory(cfg) is build_official_agent


def test_a_run_folder_scorer_must_be_registered() -> None:
    ours = OmegaConf.create({"scorer": "ledgermind", "scoring": {"random_fallback_seed": 7}})
    assert configured_scorer(ours, trusted=False).keywords["config"].random_letter_seed == 7
    for foreign in ("os.remove", "ledgermind.scoring.score"):  # a dotted path, even to our own scorer
        with pytest.raises(ConfigError, match="not one of the project's"):
            configured_scorer(OmegaConf.create({"scorer": foreign}), trusted=False)
    assert components.scorer("json.dumps", None) is __import__("json").dumps  # the user's own, trusted
