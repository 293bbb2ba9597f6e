"""Per-item execution context: a thin holder of the item's state and its three doors.

One ``ItemContext`` exists per question. It holds the item, its dispatcher profile, the
trajectory (whose ledger is the only state), the budget and the verifier, and three doors:
``model`` (every backend call, timed and recorded: ``model_io``), ``evidence`` (σ/TTL, grounding,
P_oc: ``evidence``) and ``executor`` (every tool call and every repair action: ``executor``).
Collaborators are built complete, in order — each from the parts it uses.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from ledgermind.backends.base import Backend, ContentPart
from ledgermind.benchmarks.item import Item
from ledgermind.dispatch import QuestionProfile
from ledgermind.grounding import GroundingCascade
from ledgermind.ledger import Ledger
from ledgermind.pipeline.config import AblationFlags, PipelineConfig
from ledgermind.pipeline.evidence import EvidenceIO
from ledgermind.pipeline.executor import Executor
from ledgermind.pipeline.mllm_tools import ObserveTool, PlanTool, ReadTool, VQATool
from ledgermind.pipeline.model_io import ModelIO
from ledgermind.pipeline.render import image_parts
from ledgermind.records import encode
from ledgermind.repair import Budget, Verifier
from ledgermind.tools.base import Tool, ToolKind
from ledgermind.trajectory import PathKind, Trajectory


class ItemContext:
    def __init__(
        self,
        item: Item,
        profile: QuestionProfile,
        path: PathKind,
        backend: Backend,
        perception_tools: dict[str, Tool],
        cascade: GroundingCascade,
        cfg: PipelineConfig,
        flags: AblationFlags,
    ) -> None:
        self.item, self.profile, self.cfg, self.flags, self.cascade = item, profile, cfg, flags, cascade
        self.traj = Trajectory(
            item.id, item.question, path, flags=asdict(flags), profile=_profile_dict(profile)
        )
        self.ledger: Ledger = self.traj.ledger
        self.budget = Budget(cfg.repair_budget)
        # no_ledger (DESIGN.md §4): same path and tools, a free-form transcript instead of the
        # ledger — no citation validation, no grounding, no ledger repairs (``executor``).
        self.free_form = not flags.use_ledger
        self.model = ModelIO(backend, cfg, self.traj)
        self.structured = self.model.structured
        call = self.model.call
        self.tools: dict[str, Tool] = {
            **perception_tools,
            "plan": PlanTool(call),
            "observe": ObserveTool(call),
            "read": ReadTool(call),
            "vqa": VQATool(call),
        }
        self.evidence = EvidenceIO(
            item, profile, cfg, self.ledger, cascade, self.tools, free_form=self.free_form
        )
        self.verifier = Verifier(
            self.ledger,
            self.evidence.ground,
            beta=cfg.grounding.beta,
            sigma_floor=cfg.sigma_floor,
            conflict_iou=cfg.conflict_iou,
        )
        self.executor = Executor(
            item, profile, cfg, flags, self.traj, self.model, self.evidence, self.verifier, self.budget
        )

    def user_images(self) -> list[ContentPart]:
        return image_parts(self.item)

    def decision_images(self) -> list[ContentPart]:
        """Alg. 2 line 1, DECIDE(I, {e_i}, {c_j}, e_c, E_s): the item's images re-sent *and* the
        zoomed crop e_c of a reading/location question, so the model sees the 2.5× pixels the
        crop-zoom selected. The crop comes from the ledger (the crop entry's tool output), the
        trajectory's only state."""
        crop = zoomed_crop(self.ledger)
        return image_parts(self.item) + (["Zoomed region:", crop] if crop is not None else [])


def zoomed_crop(ledger: Ledger) -> Any:
    """The zoomed image of the question-selected crop (Alg. 1 line 7) still in force, if any.

    Re-crops (Dual-Read's jittered second view, RETRY) are explicit-box crops without a
    question; the one the model is shown is the zone the crop-zoom chose for the question.
    """
    for entry in reversed(ledger.active()):
        out = ledger.tool_output(entry.tool_call_id)
        if out is not None and out.kind is ToolKind.CROP and out.inputs.get("question"):
            image = out.artifacts.get("image")
            if image is not None:
                return image
    return None


def _profile_dict(p: QuestionProfile) -> dict[str, Any]:
    """The profile as the trajectory records it (enums by value, sets sorted; not how φ decided)."""
    out = {f.name: encode(getattr(p, f.name)) for f in fields(p) if f.name != "classification"}
    return out | {"reasons": {k.value: list(v) for k, v in p.reasons.items()}}
