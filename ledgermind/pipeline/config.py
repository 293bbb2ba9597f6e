"""Every constant of the method, with the paper's default and where it comes from.

The dataclasses here are the schema: each constant is defined once, in ``PipelineConfig`` or in
the grounding cascade's ``GroundingConfig`` nested under it as ``grounding`` (the values that
lower layers also default from live in :mod:`ledgermind.paper`, and both dataclasses default from it) (the same names in
the agent, the audit and the scripts). ``conf/pipeline/ledgermind.yaml`` restates the defaults
so that a run's recorded ``.hydra/config.yaml`` shows every value and every key can be overridden
from the command line; ``tests/experiment/test_config_schema.py`` fails if the YAML and these
defaults ever differ. Ablations (``conf/ablation``) state only the ``AblationFlags`` they flip.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ledgermind import paper
from ledgermind.errors import ConfigError
from ledgermind.grounding.cascade import GroundingConfig

T5_ENDINGS = ("abstain", "keep")  # ledgermind.repair.policy.T5Ending values
ALPHA_CHARS = ("visible", "all")  # ledgermind.dispatch.classifier.AlphaChars values

# Keys that moved under ``pipeline.grounding`` (issue 28): an old override must fail naming the
# new key, never silently do nothing.
RENAMED_KEYS: Mapping[str, str] = {
    "beta": "grounding.beta",
    "delta_read": "grounding.delta_read",
    "sigma_verify": "grounding.sigma_verify",
    "sigma_ecc_fail": "grounding.demote_ecc",
    "sigma_ncc_fail": "grounding.demote_ncc",
    "sigma_uncited_judgment": "grounding.demote_uncited",
    "ncc_relations": "grounding.ncc_relations",
    "ncc_approx_rel": "grounding.approx_rel",
}


@dataclass(frozen=True)
class AblationFlags:
    """Table 3 variants. ``full`` = all defaults."""

    use_ledger: bool = True  # False: free-form transcript, prompt-level citations only (w/o Ledger)
    typed_repair: bool = True  # False: free-form self-reflection repair (w/o Typed Repair)
    ecc_ncc: bool = True  # False: support coverage only, also in the defense lines (w/o ECC/NCC)
    dual_read: bool = True  # False: single reading, σ as a normal crop (w/o Dual-Read)
    dispatcher: bool = True  # False: every question through FULLPIPE (w/o Dispatcher)
    baseline: bool = False  # True: native CoT baseline instead of LedgerMind


# The keys of an ablation node (conf/ablation/NAME.yaml) that are not flags: the variant's name and
# how Table 3 shows it (``table``: ledgermind/experiment/variants.py).
LABEL_KEYS = ("name", "table")


@dataclass(frozen=True)
class PipelineConfig:
    # --- evidence gathering (App. A, Alg. 1)
    repair_budget: int = paper.REPAIR_BUDGET  # M (Alg. 1 Require)
    max_oc: int = 15  # N_max observation claims (App. A, G.2)
    sigma_plan: float = 1.0  # task plan as DERIVATION (Alg. 1 line 2)
    sigma_oc: float = 0.92  # OC as PERCEPTION (Alg. 1 line 3)
    sigma_ocr: float | None = None  # None: use the OCR engine's score; a number forces it
    zoom: float = 2.5  # crop-zoom factor (Alg. 1 line 7)
    dual_read_delta: float = 0.15  # Δv agreement threshold (App. D.5)
    sigma_dual_agree: float = 0.97  # (App. D.5)
    # D.5 says a disagreement "triggers hypothesis verification", but its σ 0.65 is above σ_verify
    # 0.6 (Alg. 1), so the σ gate never does: true runs D.5's escalation at the disagreement itself
    # (a third reading, closest to Num(P_oc) adopted, one unit of M); false = Alg. 1's gate only.
    dual_read_escalate: bool = True
    sigma_dual_disagree: float = 0.65  # (App. D.5)
    sigma_retrieval: float = 0.85  # RETRIEVAL entries (Alg. 1 line 20)
    search_chars: int = 600  # truncation of search results (App. D.6)
    # ℓ_e of RETRIEVAL entries in ledger steps (each model call and each recorded tool output is
    # one step; App. B.2 gives the TTL mechanism but no value). A search result outlives the
    # reasoning and decision calls that follow it; when a verification or repair loop runs in
    # between, the decision re-checks it (T2: REFRESH when a decision depends on it, else DROP).
    # Perception does not expire: the image does not change within a question.
    ttl_retrieval: float = 3
    ttl_perception: float = math.inf  # ℓ_e of PERCEPTION entries (images do not change during a question)
    # --- grounded reasoning (App. A, C)
    sigma_revised: float = 0.88  # revised claim as DERIVATION (Alg. 1 line 39)
    # β, σ_verify, the demotions (lines 28, 33), δ_read and NCC's relations: the cascade's own
    # thresholds, one home for the agent and the auditor (ledgermind.grounding.cascade)
    grounding: GroundingConfig = field(default_factory=GroundingConfig)
    # --- verifier and repair (App. E)
    sigma_floor: float = paper.SIGMA_FLOOR  # hard confidence floor (T4, Eq. 19)
    conflict_iou: float = paper.CONFLICT_IOU  # IoU for T3 (Eq. 18)
    per_trigger_budget: int = paper.PER_TRIGGER_BUDGET  # M0 (App. E.2)
    retry_jitter_px: tuple[int, int] = paper.RETRY_JITTER_PX  # RETRY bbox perturbation (App. E.2)
    # What T5 does once no ACQUIRE can be made (M = 0, M0 used up), the same on DIRECT and FULLPIPE:
    # "abstain" is App. E.2's Π(T5); "keep" (default, a documented deviation) lets the unsupported
    # decision stand — ρ is lexical, so a correct option that no evidence *states* (a computed value,
    # a picture option, a fact with no knowledge source) fires T5, and ABSTAIN would turn it into ⊥
    # (it breaks the perfect-model sanity property, tests/simulator/test_sanity.py).
    t5_ending: str = paper.T5_ENDING
    # A model-backed re-invocation (RETRY/REFRESH/repeated ACQUIRE) re-asks with a rephrased
    # instruction; true: as a seeded sampled draw instead (only for backends that honour sampling).
    reinvoke_sampling: bool = False
    repair_costs: Mapping[str, float] = field(
        default_factory=lambda: dict(paper.REPAIR_COSTS)
    )  # λ_type(r)·cost(r) of Eq. 26; the paper gives no numbers, these are our defaults
    gamma: float = paper.GAMMA  # decision-grounding threshold γ of R4R / WDG (Eqs. 9–10)
    # --- dispatcher (App. D.1)
    # φ(q) reads the question text q. Benchmarks such as MMMU-Pro keep their options outside q;
    # rendering them into q would make Condition 4 fire on every item (1671/1671 on MMMU-Pro) and
    # the DIRECT path would never run, contradicting §4.2. True restores that literal variant.
    dispatch_on_rendered_options: bool = False
    # |q| of Condition 5's α(q): "visible" (DEVIATION, default) leaves whitespace and <image N> out;
    # "all" = the paper's every character of q (ledgermind.dispatch.classifier.AlphaChars says why)
    dispatch_alpha_chars: str = "visible"
    # --- decoding
    max_tokens: int = 512
    temperature: float = 0.0
    # Dual-Read's readings must be "calls that do not share context" (App. D.5); a greedy repeat of
    # the same request is the same call. Readings after the first are sampled draws at this
    # temperature with seed + k (our choice: the paper gives no value).
    reading_temperature: float = 0.7
    seed: int = 0
    structured_output: bool = True  # request JSON schemas where the backend supports them

    def __post_init__(self) -> None:
        if self.t5_ending not in T5_ENDINGS:  # a typo must stop the run, not silently pick a rule
            raise ConfigError(
                f"pipeline.t5_ending must be one of {', '.join(T5_ENDINGS)}, got {self.t5_ending!r}"
            )
        if self.dispatch_alpha_chars not in ALPHA_CHARS:
            raise ConfigError(
                f"pipeline.dispatch_alpha_chars must be one of {', '.join(ALPHA_CHARS)}, got {self.dispatch_alpha_chars!r}"
            )

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any] | None) -> PipelineConfig:
        return _from_mapping(cls, m)


def _from_mapping(cls: type, m: Mapping[str, Any] | None) -> Any:
    """Build a frozen config from a (Hydra) mapping; unknown keys are a one-line ConfigError."""
    m = dict(m or {})
    m.pop("_target_", None)
    names = {f.name for f in fields(cls)}
    if cls is PipelineConfig:
        for old in sorted(set(m) & set(RENAMED_KEYS)):
            raise ConfigError(renamed_message(old))
        if "grounding" in m:
            m["grounding"] = GroundingConfig.from_mapping(m["grounding"] or {})
    unknown = sorted(set(m) - names)
    if unknown:
        raise ConfigError(
            f"unknown {cls.__name__} key(s): {', '.join(unknown)}; known: {', '.join(sorted(names))}"
        )
    if "retry_jitter_px" in m:
        m["retry_jitter_px"] = tuple(m["retry_jitter_px"])
    if "repair_costs" in m:
        m["repair_costs"] = dict(m["repair_costs"])
    return cls(**m)


def renamed_message(old: str) -> str:
    return f"pipeline.{old} is now pipeline.{RENAMED_KEYS[old]}; use that key"


def renamed_override_error(overrides: Sequence[str]) -> str | None:
    """The one-line error for a command-line override of a moved key, else None.

    Hydra rejects an unknown key with a long struct error that does not say where the key went;
    the entry points check their overrides first (``pipeline.beta=0.2``, ``+pipeline.beta=0.2``).
    """
    for arg in overrides:
        key = arg.split("=", 1)[0].lstrip("+~")
        if key.startswith("pipeline.") and key.removeprefix("pipeline.") in RENAMED_KEYS:
            return renamed_message(key.removeprefix("pipeline."))
    return None


def flags_from_mapping(m: Mapping[str, Any] | None) -> AblationFlags:
    return _from_mapping(AblationFlags, m)
