"""Claims (OC / SC with stages E, I, J / DC) and a tolerant parser for model output.

Paper §3.1 and App. G.2–G.3. Models — open ones especially — produce messy text: missing
brackets, bold markers, "Based on" spelled differently, unknown ids. The parser never raises on
model output: whatever it cannot attach to a valid ledger entry becomes a *structural*
grounding failure (an empty or partial support set), which the cascade then handles.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ledgermind.records import Record


class ClaimType(str, Enum):
    OC = "OC"  # observation claim: records a tool output (its evidence entry is the claim)
    SC = "SC"  # state claim: aggregates / infers over evidence
    DC = "DC"  # decision claim: determines the final answer


class Stage(str, Enum):
    """Stage of a state claim in the [E] → [I] → [J] chain (App. A, G.3)."""

    E = "E"  # evidence integration
    I = "I"  # noqa: E741 — inference (the paper's name)
    J = "J"  # judgment


class ClaimStatus(str, Enum):
    ACTIVE = "ACTIVE"
    DROPPED = "DROPPED"  # uncited non-judgment claim (Alg. 1 line 26) or removed by repair
    INVALIDATED = "INVALIDATED"  # a cited entry was dropped (DROP propagation, Eq. 15)


class ClaimOrigin(str, Enum):
    MODEL = "model"  # produced by a reasoning / decision stage
    REPAIR = "repair"  # revised through a typed repair step (tool-backed)
    FREEFORM = "freeform"  # rewritten by free-form self-reflection (ablation; no provenance)


@dataclass
class Claim(Record):
    id: str
    ctype: ClaimType
    text: str
    stage: Stage | None = None
    citations: list[str] = field(default_factory=list)  # raw ids as the model wrote them
    sigma: float = 1.0
    status: ClaimStatus = ClaimStatus.ACTIVE
    origin: ClaimOrigin = ClaimOrigin.MODEL
    unknown_citations: list[str] = field(default_factory=list)  # ids that resolve to nothing
    grounding: dict[str, Any] | None = None  # last GroundingResult as a dict
    grounded: bool | None = None  # g(c) of §3.4, set by the verifier
    step: int = 0  # trajectory step at which the claim was made

    @property
    def is_judgment(self) -> bool:
        return self.ctype is ClaimType.SC and self.stage is Stage.J

    @property
    def active(self) -> bool:
        return self.status is ClaimStatus.ACTIVE


# --------------------------------------------------------------------------- parsing

_ID_RE = re.compile(r"\b(OC|SC|DC|E)\s*[-_#]?\s*(\d+)\b", re.IGNORECASE)
_CLEAN_RE = re.compile(r"[*`_]{1,3}")
_SC_HEAD_RE = re.compile(
    r"^\s*(?:[-•\d.)\s]*)\[?\s*SC\s*[-_#]?\s*(\d+)\s*\]?\s*[\[(]?\s*([EIJ])\s*[\])]?\s*[:.\-–]?\s*(.*)$",
    re.IGNORECASE,
)
_OC_HEAD_RE = re.compile(
    r"^\s*(?:[-•\d.)\s]*)\[?\s*OC\s*[-_#]?\s*(\d+)\s*\]?\s*[:.\-–]?\s*([A-Za-z_]+)\s*[|:]\s*(.*)$",
    re.IGNORECASE,
)
# "Based on" anywhere; other citation keywords only right after "|" or "(" (so prose survives).
_BASED_ON_RE = re.compile(
    r"(?:[|(]\s*)?\bbased\s+on\b\s*[:\-]?|[|(]\s*(?:cites?|citations?|sources?|evidence)\s*[:\-]?",
    re.IGNORECASE,
)


def extract_citations(text: str) -> list[str]:
    """All ids mentioned in a citation tail, normalised, in order, without duplicates."""
    return list(dict.fromkeys(f"{m.group(1).upper()}-{int(m.group(2))}" for m in _ID_RE.finditer(text)))


def split_citation_tail(body: str) -> tuple[str, list[str]]:
    """Split ``conclusion | Based on: [OC-1], [SC-2]`` into text and citations."""
    m = _BASED_ON_RE.search(body)
    if m:
        return body[: m.start()].strip(" |-–(").strip(), extract_citations(body[m.end() :])
    if "|" in body:
        head, tail = body.rsplit("|", 1)
        cites = extract_citations(tail)
        if cites:
            return head.strip(), cites
    # citations written inline, e.g. "The year is 1969 [OC-2]."
    cites = extract_citations(body)
    text = _ID_RE.sub("", body)
    text = re.sub(r"\[\s*[,\s]*\]|\(\s*[,\s]*\)", "", text)
    return " ".join(text.split()).strip(" ,;"), cites


@dataclass(frozen=True)
class ParsedOC:
    index: int
    category: str
    text: str


def parse_oc_lines(text: str, max_items: int = 15) -> list[ParsedOC]:
    """Parse ``[OC-i] CATEGORY | description`` lines (App. G.2); also a JSON ``observations`` list."""
    data = _try_json(text)
    if isinstance(data, dict) and isinstance(data.get("observations"), list):
        obs = [(i, o) for i, o in enumerate(data["observations"], 1) if isinstance(o, dict)]
        rows: list[Any] = [(i, o.get("category", "OBJECT"), o.get("text", "")) for i, o in obs]
    else:
        rows = [m.groups() for m in map(_OC_HEAD_RE.match, _CLEAN_RE.sub("", text).splitlines()) if m]
    out = [ParsedOC(int(i), str(c).upper(), str(body).strip()) for i, c, body in rows if str(body).strip()]
    return out[:max_items]


def parse_sc_lines(text: str, start_index: int = 1) -> list[Claim]:
    """Parse ``[SC-j][E/I/J] conclusion | Based on: [OC-a], [SC-b]`` lines (App. G.3).

    Also accepts a JSON object ``{"claims": [{"stage": "E", "text": ..., "cites": [...]}]}``
    (what structured-output backends return). Lines that do not look like claims are ignored.
    """
    data = _try_json(text)
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        parsed = [_json_claim(i, c) for i, c in enumerate(data["claims"], start_index) if isinstance(c, dict)]
    else:
        parsed = [_line_claim(m) for m in map(_SC_HEAD_RE.match, _CLEAN_RE.sub("", text).splitlines()) if m]
    claims = [
        Claim(id=f"SC-{n}", ctype=ClaimType.SC, text=body, stage=Stage(stage), citations=cites)
        for n, stage, body, cites in parsed
        if body and stage in {"E", "I", "J"}
    ]
    # Models repeat or skip SC numbers; keep their numbering when it is unique, else renumber.
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        for i, c in enumerate(claims, start_index):
            c.id = f"SC-{i}"
    return claims


def _line_claim(m: re.Match[str]) -> tuple[int, str, str, list[str]]:
    body, cites = split_citation_tail(m.group(3))
    return int(m.group(1)), m.group(2).upper(), body, cites


def _json_claim(n: int, c: dict[str, Any]) -> tuple[int, str, str, list[str]]:
    cites = c.get("cites", c.get("citations", []))
    cites = extract_citations(" ".join(map(str, cites))) if isinstance(cites, list) else []
    return n, str(c.get("stage", "")).strip().upper()[:1], str(c.get("text", "")).strip(), cites


def _try_json(text: str) -> Any:
    s = text.strip()
    if s.startswith("```"):
        s = s.strip("`")
        s = s[s.find("\n") + 1 :] if "\n" in s else s
    start = s.find("{")
    end = s.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        from ledgermind.backends.base import reply_json

        return reply_json(s[start : end + 1])
    except (json.JSONDecodeError, ValueError):
        return None
