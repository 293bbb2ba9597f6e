"""The grounding cascade (§3.2, App. A lines 23–34, App. C) and its config."""

from __future__ import annotations

import pytest

from ledgermind.errors import ConfigError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig, demoted_sigma
from perception.ner import Entity


class FixedNER:
    """Returns preset entities so cascade logic is tested independently of spaCy's choices."""

    def __init__(self, names=()):
        self.names = names

    def entities(self, text):
        return tuple(Entity(n, "PROPN", text.find(n), text.find(n) + len(n)) for n in self.names if n in text)

    def entities_many(self, texts):
        return [self.entities(t) for t in texts]


def test_paper_examples_end_to_end(ner):
    cascade = GroundingCascade(ner=ner)
    phantom = cascade.check("Apollo 11 landed on the Moon.", ["Apollo 13 flew to the Moon."])
    assert not phantom.ecc and not phantom.grounded and phantom.sigma_after == 0.50
    year = cascade.check("The landing was in 1969.", ["The landing was in 1971."])
    assert year.ecc and not year.ncc and year.sigma_after == 0.52 and year.unmatched_numbers == ("1969",)
    reading = cascade.check("The thermometer reads 36.8 °C.", ["thermometer 36.7 °C"], kind="reading")
    assert reading.grounded and reading.sigma_after == 1.0
    label = cascade.check("The answer is option C.", ["Option B: thermometer"])
    assert not label.ncc and label.unmatched_numbers == ("option C",)


def test_ecc_takes_priority_when_both_fail():
    cascade = GroundingCascade(ner=FixedNER(["Zeus"]))
    result = cascade.check("Zeus threw 7 bolts", ["Hera threw 6 bolts"], sigma=0.9)
    assert not result.ecc and not result.ncc and result.sigma_after == 0.50


def test_uncited_judgment_is_demoted_and_non_judgment_dropped():
    cascade = GroundingCascade(ner=FixedNER())
    judged = cascade.check("the liquid is blue", [], sigma=0.9)
    assert judged.sigma_after == 0.55 and not judged.grounded and not judged.dropped
    other = cascade.check("the liquid is blue", ["  "], sigma=0.9, judgment=False)
    assert other.dropped and other.sigma_after == 0.9  # blank facts do not count as citations


def test_uncited_with_entity_failure_ends_at_ecc_value():
    result = GroundingCascade(ner=FixedNER(["Zeus"])).check("Zeus is angry", [], sigma=0.9)
    assert result.sigma_after == 0.50


def test_demotion_never_raises_confidence():
    assert demoted_sigma(0.3, cited=True, ecc=False, ncc=True, judgment=True, cfg=GroundingConfig()) == 0.3


def test_non_judgment_claims_are_not_demoted():
    result = GroundingCascade(ner=FixedNER(["Zeus"])).check("Zeus", ["Hera"], sigma=0.92, judgment=False)
    assert not result.ecc and result.sigma_after == 0.92


def test_grounded_needs_coverage_at_least_beta():
    cascade = GroundingCascade(GroundingConfig(beta=0.5), ner=FixedNER())
    assert not cascade.check("blue liquid in tube", ["blue sky"]).grounded  # ρ = 1/3
    assert cascade.check("blue liquid", ["blue sky"]).grounded  # ρ = 1/2


def test_no_ecc_ablation_uses_coverage_only():
    cfg = GroundingConfig(ecc_enabled=False, ncc_enabled=False)
    cascade = GroundingCascade(cfg, ner=FixedNER(["Zeus"]))
    result = cascade.check("Zeus threw 7 bolts", ["Hera threw 6 bolts"], sigma=0.9)
    assert result.ecc and result.ncc and not result.ecc_applied and not result.ncc_applied
    assert result.grounded and result.sigma_after == 0.9 and result.missing_entities == ()
    assert result.unmatched_numbers == ()  # unchecked numbers are none unmatched (readers iterate it)
    assert GroundingCascade(cfg).ner is None  # no NER is loaded when ECC is off


def test_demotion_values_come_from_config():
    cfg = GroundingConfig(demote_ecc=0.4, demote_ncc=0.45, demote_uncited=0.42)
    cascade = GroundingCascade(cfg, ner=FixedNER(["Zeus"]))
    assert cascade.check("Zeus", ["Hera"]).sigma_after == 0.4
    assert cascade.check("7 bolts", ["6 bolts"]).sigma_after == 0.45
    assert cascade.check("bolts", []).sigma_after == 0.42


@pytest.mark.parametrize(
    "kwargs",
    [
        {"beta": 1.5},
        {"delta_read": -0.1},
        {"demote_ecc": 0.7},
        {"demote_uncited": 0.65, "sigma_verify": 0.6},
        {"beta": True},
        {"ncc_relations": "yes"},
        {"approx_rel": 2.0},
        {"ncc_unit_conversion": 1},
    ],
)
def test_invalid_config_is_a_config_error(kwargs):
    with pytest.raises(ConfigError):
        GroundingConfig(**kwargs)


def test_config_from_mapping_rejects_unknown_keys():
    assert GroundingConfig.from_mapping({"beta": 0.2}).beta == 0.2
    with pytest.raises(ConfigError, match="unknown"):
        GroundingConfig.from_mapping({"betta": 0.2})


def test_paper_defaults():
    cfg = GroundingConfig()
    assert (
        cfg.beta,
        cfg.delta_read,
        cfg.demote_ecc,
        cfg.demote_ncc,
        cfg.demote_uncited,
        cfg.sigma_verify,
    ) == (0.15, 0.15, 0.50, 0.52, 0.55, 0.6)


def test_relation_aware_ncc_is_the_default_and_one_switch_restores_eq5():
    claim, pool = "Goa confirmed more than 5 cases.", ["Goa has confirmed a total of 6 cases."]
    relation_aware = GroundingCascade(GroundingConfig(), ner=FixedNER(["Goa"])).check(claim, pool)
    strict = GroundingCascade(GroundingConfig(ncc_relations=False), ner=FixedNER(["Goa"])).check(claim, pool)
    assert relation_aware.ncc and relation_aware.sigma_after == 1.0
    assert not strict.ncc and strict.unmatched_numbers == ("5",) and strict.sigma_after == 0.52


def test_pipeline_config_carries_the_switch():
    from ledgermind.pipeline.agent import grounding_config
    from ledgermind.pipeline.config import AblationFlags, PipelineConfig

    assert grounding_config(PipelineConfig(), AblationFlags()).ncc_relations is True
    cfg = grounding_config(
        PipelineConfig(grounding=GroundingConfig(ncc_relations=False, approx_rel=0.05)), AblationFlags()
    )
    assert (cfg.ncc_relations, cfg.approx_rel) == (False, 0.05)
