"""The deterministic template mapping M : O → Σ* (paper §3.1, App. B.1 table).

The fact of an entry is computed here from the tool's observation, never passed in as free
text; this is what makes Proposition 1 (provenance non-amplification) structural.
"""

from __future__ import annotations

from dataclasses import dataclass

from ledgermind.ledger.entry import Kappa
from ledgermind.tools.base import BBox, Observation, ToolKind, ToolOutput


@dataclass(frozen=True)
class MappedFact:
    """What M yields for one observation: the normalised fact plus the metadata fields."""

    fact: str
    kappa: Kappa
    src: str
    bbox: BBox | None
    score: float | None


# M's κ per tool kind (App. B.1): the fact is the observation's text, normalised, in every row.
KAPPA_OF = {
    ToolKind.OCR: Kappa.PERCEPTION,  # recognised_text, b_e = detection_bbox
    ToolKind.CROP: Kappa.PERCEPTION,  # crop_metadata, b_e = crop_region
    ToolKind.DETECT: Kappa.PERCEPTION,
    ToolKind.OBSERVE: Kappa.PERCEPTION,
    ToolKind.READ: Kappa.PERCEPTION,
    ToolKind.SEARCH: Kappa.RETRIEVAL,  # snippet, src = URL, no box
    ToolKind.VQA: Kappa.DERIVATION,  # model_answer (also the task plan, Alg. 1 line 2)
    ToolKind.PLAN: Kappa.DERIVATION,
}


def normalise_text(text: str) -> str:
    """Rule normalisation shared by all mappings: collapse whitespace, strip."""
    return " ".join(str(text).split())


def map_fact(out: ToolOutput, obs: Observation) -> MappedFact:
    """M(o) for one observation of ``out``."""
    kappa = KAPPA_OF[out.kind]
    if kappa is Kappa.RETRIEVAL:
        return MappedFact(normalise_text(obs.text), kappa, obs.url or out.tool, None, obs.score)
    return MappedFact(normalise_text(obs.text), kappa, out.tool, obs.bbox, obs.score)


def map_observations(out: ToolOutput) -> list[tuple[Observation, MappedFact]]:
    """Apply M to every observation, keeping each fact paired with the observation it came from.

    Why pairs: an observation whose fact normalises to nothing is skipped, so the facts are not
    positionally aligned with ``out.observations``; an entry's metadata (category, value, image)
    must come from *its own* observation, never from a neighbour's.
    """
    pairs = [(obs, map_fact(out, obs)) for obs in out.observations]
    return [(obs, f) for obs, f in pairs if f.fact]


def map_output(out: ToolOutput) -> list[MappedFact]:
    """Apply M to every observation of a tool output (empty observations are skipped)."""
    return [f for _, f in map_observations(out)]
