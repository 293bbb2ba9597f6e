"""Every constant of the method, with the paper's default and where it comes from.

The dataclasses here are the schema, the one home of each constant and its comment: Hydra composes
``pipeline`` over ``PipelineConfig`` (registered as ``pipeline/ledgermind_schema``; the grounding
cascade's ``GroundingConfig`` under ``grounding``), so ``conf/pipeline/ledgermind.yaml`` states only
what differs and a key no code reads stops the run at composition, in struct mode. The values lower
layers also default from live in :mod:`ledgermind.paper`. An ablation (``conf/ablation/NAME.yaml``)
states the flags it turns (which declares them: ``declare_flags``), its ``name`` and, under
``table``, how Table 3 shows it.
"""

from __future__ import annotations

import difflib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, make_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from ledgermind import paper
from ledgermind.benchmarks.registry import LoaderConfig
from ledgermind.confutil import CONF_DIR, parse_yaml_in_c
from ledgermind.dispatch.classifier import AlphaChars
from ledgermind.errors import ConfigError
from ledgermind.grounding.cascade import GroundingConfig
from ledgermind.repair.policy import T5Ending

T = TypeVar("T")


# The keys of an ablation node (conf/ablation/NAME.yaml) that are not flags: the variant's name and
# how Table 3 shows it (``table``: ledgermind/experiment/variants.py).
LABEL_KEYS = ("name", "table")


def declare_flags(folder: Path) -> type:
    """The ablation flags, a frozen dataclass declared by the variant files (``conf/ablation/*.yaml``).

    Why there: a flag exists to make a variant, so the file that turns it is its one declaration
    and a new ablation is that file, the branch that reads the flag and a test. A variant states
    only what it changes, so a flag is a switch whose default (the method, ``full``) is the other
    value. Refused, naming the file: a value that is not true/false, two variants turning a flag
    opposite ways, and a flag named like another (``ecc_nccc`` beside ``ecc_ncc``: a misspelling)."""
    turned: dict[str, tuple[bool, Path]] = {}
    for path in sorted(folder.glob("*.yaml")):
        for flag, value in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if flag in (*LABEL_KEYS, "defaults"):
                continue
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: ablation flag {flag} must be true or false, got {value!r}")
            first, where = turned.setdefault(flag, (value, path))
            if first is not value:
                raise ConfigError(f"{path}: {flag} is {first} in {where.name}: one flag, one default")
    for flag, (_, path) in turned.items():
        if close := difflib.get_close_matches(flag, [f for f in turned if f != flag], n=1, cutoff=0.88):
            raise ConfigError(
                f"{folder}: ablation flags {flag!r} ({path.name}) and {close[0]!r} "
                f"({turned[close[0]][1].name}) differ by a typo: one flag, one name"
            )
    specs = [(flag, bool, field(default=not value)) for flag, (value, _) in sorted(turned.items())]
    return make_dataclass("AblationFlags", specs, frozen=True, namespace={"__module__": __name__})


if TYPE_CHECKING:
    from omegaconf import DictConfig

    @dataclass(frozen=True)
    class AblationFlags:
        """What the type checker sees: the files declare which flags exist, each a bool
        (tests/experiment/test_config_schema.py checks that the code reads only declared ones)."""

        def __init__(self, **flags: bool) -> None: ...
        def __getattr__(self, flag: str) -> bool: ...

else:
    try:
        AblationFlags = declare_flags(CONF_DIR / "ablation")
    # nothing can start without its variants: one line, exit 2, as for any config error
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


@dataclass(frozen=True)
class PipelineConfig:
    # --- evidence gathering (App. A, Alg. 1)
    repair_budget: int = paper.REPAIR_BUDGET  # M (Alg. 1 Require)
    max_oc: int = 15  # N_max observation claims (App. A, G.2)
    sigma_plan: float = 1.0  # task plan as DERIVATION (Alg. 1 line 2)
    sigma_oc: float = 0.92  # OC as PERCEPTION (Alg. 1 line 3)
    sigma_ocr: float | None = None  # None: the OCR engine's own score; a number forces it (App. B.1)
    # (the crop-zoom factor z of Alg. 1 line 7 is the crop tool's own: perception.crop.zoom)
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
    # λ_type(r)·cost(r) of Eq. 26; the paper gives no numbers, these are our defaults
    repair_costs: dict[str, float] = field(default_factory=lambda: dict(paper.REPAIR_COSTS))
    gamma: float = paper.GAMMA  # decision-grounding threshold γ of R4R / WDG (Eqs. 9–10)
    # --- dispatcher (App. D.1)
    # φ(q) reads the question text q. Benchmarks such as MMMU-Pro keep their options outside q;
    # rendering them into q would make Condition 4 fire on every item (1671/1671 on MMMU-Pro) and
    # the DIRECT path would never run, contradicting §4.2. True restores that literal variant.
    dispatch_on_rendered_options: bool = False
    # |q| of Condition 5's α(q): "visible" (DEVIATION, default) leaves whitespace and <image N> out;
    # "all" = the paper's every character of q (ledgermind.dispatch.classifier.AlphaChars says why;
    # 5 of 1,671 MMMU-Pro questions re-route)
    dispatch_alpha_chars: str = "visible"
    # --- decoding (§4.1: the same decoding settings for every variant)
    max_tokens: int = 512
    temperature: float = 0.0
    # Dual-Read's readings must be "calls that do not share context" (App. D.5); a greedy repeat of
    # the same request is the same call. Readings after the first are sampled draws at this
    # temperature with seed + k (our choice: the paper gives no value).
    reading_temperature: float = 0.7
    seed: int = 0
    structured_output: bool = True  # request JSON schemas where the backend supports them

    def __post_init__(self) -> None:
        object.__setattr__(self, "retry_jitter_px", tuple(self.retry_jitter_px))  # OmegaConf gives a list
        for key, choices in (("t5_ending", T5Ending), ("dispatch_alpha_chars", AlphaChars)):
            value, known = getattr(self, key), [c.value for c in choices]
            if value not in known:  # a typo must stop the run, not silently pick a rule
                raise ConfigError(f"pipeline.{key} must be one of {', '.join(known)}, got {value!r}")


# The schema of each node of the composed config that a dataclass here describes: a value equal to
# its default is code, not choice (``non_default``), so the run's config hash leaves it out.
NODE_SCHEMAS: dict[str, type] = {
    "pipeline": PipelineConfig,
    "ablation": AblationFlags,
    "benchmark": LoaderConfig,
}


def register_schemas() -> None:
    """Make ``PipelineConfig`` Hydra's schema of ``pipeline`` (``pipeline/ledgermind_schema``, the
    first entry of ``conf/pipeline/ledgermind.yaml``'s defaults); every composition calls this, and
    so it also gives the composition the faster YAML parser."""
    from hydra.core.config_store import ConfigStore

    parse_yaml_in_c()

    ConfigStore.instance().store(group="pipeline", name="ledgermind_schema", node=schema(PipelineConfig))


def compose(overrides: Sequence[str], config_name: str = "config") -> DictConfig:
    """``conf/<config_name>.yaml`` with Hydra ``overrides``, composed in this process over the
    pipeline's schema as ``ledgermind run`` composes it. Hydra's errors pass through: each caller
    words them for its user."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    register_schemas()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name, overrides=list(overrides))


def schema(cls: type) -> Any:
    """The dataclass as a typed, closed OmegaConf node that overrides may still change (OmegaConf
    makes a frozen dataclass's node read-only, which would refuse every override)."""
    from omegaconf import DictConfig, OmegaConf

    node = OmegaConf.structured(cls)
    for sub in (node, *(v for v in node.values() if isinstance(v, DictConfig))):
        sub._set_flag("readonly", None)
    return node


def build(cls: type[T], values: Mapping[str, Any] | None, at: str) -> T:
    """The frozen dataclass from a composed node or a plain mapping found at key ``at`` of the config:
    an unknown key or a wrong type is OmegaConf's error naming the full key (``pipeline.zom``)."""
    from omegaconf import DictConfig, OmegaConf

    merged = OmegaConf.merge({at: schema(cls)}, {at: values or {}})
    assert isinstance(merged, DictConfig)
    return OmegaConf.to_object(merged[at])  # type: ignore[return-value]


def ablation_flags(ablation: Mapping[str, Any] | None) -> AblationFlags:
    """The flags of a variant node (``conf/ablation/NAME.yaml`` or the composed ``cfg.ablation``)."""
    return build(
        AblationFlags, {k: v for k, v in (ablation or {}).items() if k not in LABEL_KEYS}, "ablation"
    )


def chosen_values(config: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved config with each schema node (``NODE_SCHEMAS``) reduced to what it sets beyond the
    dataclass's defaults: what a run's config hash covers. Why: the defaults are code, like the rest
    of the code (``git`` in the provenance); hashing them made every new key, even one whose default
    keeps the old behaviour, a new experiment, and every unfinished run folder refused to resume."""
    out = dict(config)
    for key, cls in NODE_SCHEMAS.items():
        node = out.get(key)
        if isinstance(node, Mapping) and set(node) <= {f.name for f in fields(cls)} | set(LABEL_KEYS):
            out[key] = non_default(cls, node)
    return out


def non_default(cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``values`` that differ from the dataclass's defaults (recursing into a nested
    dataclass), and any key it does not know; what a config chose beyond the code's defaults."""
    defaults = {f.name: getattr(cls(), f.name) for f in fields(cls)}
    out: dict[str, Any] = {}
    for k, v in values.items():
        if is_dataclass(d := defaults.get(k)) and isinstance(v, Mapping):
            if sub := non_default(type(d), v):
                out[k] = sub
        elif k not in defaults or _canon(v) != _canon(d):
            out[k] = v
    return out


def _canon(value: Any) -> Any:
    """A value as JSON reads it back: a tuple default equals the list the config holds, 3 equals 3.0."""
    return json.loads(json.dumps(value, default=str))
