"""The paper's values that more than one layer needs: their one home.

Why a module at the foundation: the config dataclasses (``pipeline.config.PipelineConfig``,
``grounding.cascade.GroundingConfig``) are where a run reads every constant, but the mechanisms
below them (the verifier, the repair policy, the triggers, NCC, the numeric scorer, the trajectory
metrics) also need a default for direct use, and a literal there would be a second home that can
drift (a policy's T5 ending that disagrees with the pipeline's).
So each value is written here once, the config dataclasses default from it, and the lower layers
default from it too. ``tests/test_paper_constants.py`` fails on a literal copy elsewhere.

Values only one room uses (σ_oc, Dual-Read's thresholds, …) stay in ``PipelineConfig``, the
schema Hydra composes the ``pipeline`` node over; a run records every value it used.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# --- grounding (§3.2, App. A, C, E.1)
BETA = 0.15  # decision coverage threshold β (T5, Eq. 20; the auditor's grounded rule)
DELTA_READ = 0.15  # δ_read: relative tolerance for continuous visual readings (App. C; NCC and the scorer)
DEMOTE_ECC = 0.50  # σ after an ECC failure (Alg. 1 line 33, Eq. 4)
DEMOTE_NCC = 0.52  # σ after an NCC failure (Alg. 1 line 33, Eq. 5)
DEMOTE_UNCITED = 0.55  # σ of a judgment with no citation (Alg. 1 line 28)
SIGMA_VERIFY = 0.6  # hypothesis-verification threshold σ_verify (Alg. 1 line 35)

# --- verifier and repair (App. E)
SIGMA_FLOOR = 0.3  # hard confidence floor σ_floor (T4, Eq. 19)
CONFLICT_IOU = 0.5  # IoU above which two boxes with different facts conflict (T3, Eq. 18)
REPAIR_BUDGET = 2  # M, the trajectory repair budget (Alg. 1 Require)
PER_TRIGGER_BUDGET = 2  # M0, repairs per trigger type (App. E.2)
RETRY_JITTER_PX = (15, 40)  # RETRY's bounding-box perturbation ±[15, 40] px (App. E.2)
# What T5 does once no ACQUIRE can be made. App. E.2's Π(T5) is "abstain"; the default "keep" is a
# documented DEVIATION (docs/architecture.md, "T5 ending"): ρ is lexical, so a correct option no
# evidence states would otherwise become ⊥.
T5_ENDING = "keep"
# λ_type(r)·cost(r) of Eq. 26 by repair layer; the paper gives no numbers, these are our defaults.
REPAIR_COSTS: Mapping[str, float] = MappingProxyType({"EVIDENCE": 1.0, "ACTION": 2.0, "TRAJECTORY": 1.0})

# --- metrics (§3.4)
GAMMA = 0.5  # decision-grounding threshold γ of R4R / WDG (Eqs. 9–10)
