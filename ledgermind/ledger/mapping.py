"""The deterministic template mapping M : O → Σ* (paper §3.1, App. B.1 table).

The fact of an entry is computed here from the tool's observation, never passed in as free
text; this is what makes Proposition 1 (provenance non-amplification) structural.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ledgermind.ledger.entry import Kappa
from ledgermind.registry import Registry
from ledgermind.tools.base import BBox, Observation, ToolKind, ToolOutput


@dataclass(frozen=True)
class MappedFact:
    """What M yields for one observation: the normalised fact plus the metadata fields."""

    fact: str
    kappa: Kappa
    src: str
    bbox: BBox | None
    score: float | None


Mapper = Callable[[ToolOutput, Observation], MappedFact]
MAPPERS: Registry[Mapper] = Registry("template mapping")


def normalise_text(text: str) -> str:
    """Rule normalisation shared by all mappings: collapse whitespace, strip."""
    return " ".join(str(text).split())


def _perception(out: ToolOutput, obs: Observation) -> MappedFact:
    # OCR: recognised_text, b_e = detection_bbox; crop: crop_metadata, b_e = crop_region.
    return MappedFact(normalise_text(obs.text), Kappa.PERCEPTION, out.tool, obs.bbox, obs.score)


def _retrieval(out: ToolOutput, obs: Observation) -> MappedFact:
    # Web search: snippet, src = URL.
    return MappedFact(normalise_text(obs.text), Kappa.RETRIEVAL, obs.url or out.tool, None, obs.score)


def _derivation(out: ToolOutput, obs: Observation) -> MappedFact:
    # VQA: model_answer, κ = DERIVATION (also the task plan, Alg. 1 line 2).
    return MappedFact(normalise_text(obs.text), Kappa.DERIVATION, out.tool, obs.bbox, obs.score)


for _kind in (ToolKind.OCR, ToolKind.CROP, ToolKind.DETECT, ToolKind.OBSERVE, ToolKind.READ):
    MAPPERS.add(_kind.value, _perception)
MAPPERS.add(ToolKind.SEARCH.value, _retrieval)
for _kind in (ToolKind.VQA, ToolKind.PLAN):
    MAPPERS.add(_kind.value, _derivation)


def map_observations(out: ToolOutput) -> list[tuple[Observation, MappedFact]]:
    """Apply M to every observation, keeping each fact paired with the observation it came from.

    Why pairs: an observation whose fact normalises to nothing is skipped, so the facts are not
    positionally aligned with ``out.observations``; an entry's metadata (category, value, image)
    must come from *its own* observation, never from a neighbour's.
    """
    mapper = MAPPERS.get(out.kind.value)
    pairs = [(obs, mapper(out, obs)) for obs in out.observations]
    return [(obs, f) for obs, f in pairs if f.fact]


def map_output(out: ToolOutput) -> list[MappedFact]:
    """Apply M to every observation of a tool output (empty observations are skipped)."""
    return [f for _, f in map_observations(out)]
