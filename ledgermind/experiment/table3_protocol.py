"""The protocol note under Table 3: what the runs share (or which fields differ, with --allow-mixed),
their seeds, and whether they ran our one deviation from the paper (the Dual-Read escalation of App. D.5),
read from each run's recorded config because the run identity does not hold it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf

from ledgermind.runs.provenance import differing_fields, shared_protocol_lines
from ledgermind.runs.reader import RunDir

if TYPE_CHECKING:
    from ledgermind.experiment.table3 import RunScores


def protocol_identity(r: RunScores) -> dict[str, Any]:
    """The identity with the decoding seed removed: seeds are a dimension of the table, not a mismatch."""
    ident = r.identity.to_dict()
    if isinstance(ident.get("decoding"), dict):
        ident["decoding"] = {k: v for k, v in ident["decoding"].items() if k != "seed"}
    return ident


def protocol_footer(runs: Sequence[RunScores]) -> str:
    """The shared protocol printed under the table (or which fields differ, with --allow-mixed)."""
    idents = [protocol_identity(r) for r in runs]
    seeds = ", ".join(str(s) for s in sorted({r.seed for r in runs}))
    mixed = differing_fields(idents)
    head = [f"Protocol: MIXED (--allow-mixed); differing fields: {', '.join(mixed)}"] if mixed else []
    lines = [*(head or shared_protocol_lines(idents[0])), f"Seeds: {seeds}", escalation_line(runs)]
    return "\n".join(lines) + "\n"


ESCALATION_DEVIATION = (
    "DEVIATION from App. D.5: at a Dual-Read disagreement a third reading of its own re-crop is taken and the "
    "reading closest to a number in P_oc is adopted; D.5 as written only sets sigma=0.65, which Alg. 1's "
    "sigma_verify=0.6 gate never escalates (pipeline.dual_read_escalate=false measures D.5 as written)"
)


def escalation_line(runs: Sequence[RunScores]) -> str:
    """The ``dual_read_escalate`` row of the protocol note: our deviation from App. D.5, and whether these
    runs had it on (read from each run's recorded ``.hydra/config.yaml``; the identity does not hold it)."""
    switch = {r.run_dir: _recorded_switch(r.run_dir, "dual_read_escalate") for r in runs}
    values = set(switch.values())
    if values == {False}:
        return "dual_read_escalate: off (App. D.5 / Alg. 1 as written: no third reading at a disagreement)"
    if values == {True}:
        state = "on"
    elif values == {None}:
        state = "not recorded (no .hydra/config.yaml; the default is on)"
    else:
        mixed = ", ".join(f"{r.variant}/seed {r.seed}: {switch[r.run_dir]}" for r in runs)
        state = f"MIXED across runs ({mixed})"
    return f"dual_read_escalate: {state} — {ESCALATION_DEVIATION}"


def _recorded_switch(run_dir: Path, key: str) -> bool | None:
    """``pipeline.<key>`` from a run's recorded config (unresolved), or None when not recorded."""
    cfg = RunDir(run_dir).config()  # inert: a run folder is data
    value = None if cfg is None else OmegaConf.select(cfg, f"pipeline.{key}", default=None)
    return value if isinstance(value, bool) else None
