"""The view of one trajectory: what the item page shows, computed from the recorded dicts.

Everything the page needs is derived here (boxes per image, the claim chain with resolved
citations; the merged timeline comes from ``report.timeline``) so the template only lays it
out. Values that came from a model, a tool or a dataset stay plain strings; the template engine
escapes them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.report import census_table
from ledgermind.report.highlight import Segment, segments
from ledgermind.report.images import ImageStore, StoredImage
from ledgermind.report.sources import input_image_path
from ledgermind.report.timeline import TimelineRow, item_image_links, timeline
from ledgermind.runs.results import ItemResult
from ledgermind.scoring.numeric import NumericTolerance, explain_match, parse_number

STAGES = ("E", "I", "J")  # the [E] → [I] → [J] → DC chain (App. A, G.3)


@dataclass
class EntryRow:
    id: str
    tool: str
    kappa: str
    fact: str
    sigma: float | None
    omega: str
    superseded_by: str | None
    cited_by: list[str]
    bbox: list[float] | None
    category: str | None
    tool_call_id: str
    image_index: int | None = None  # 1-based index into the item's images, when the pipeline recorded it


@dataclass(frozen=True)
class Box:
    entry_id: str
    omega: str
    tool: str
    x: float
    y: float
    w: float
    h: float


@dataclass
class ImageView:
    name: str
    stored: StoredImage | None
    problem: str | None = None
    boxes: list[Box] = field(default_factory=list)


@dataclass(frozen=True)
class Citation:
    raw: str
    anchor: str | None  # "entry-OC-3" / "claim-SC-2"; None when the id resolves to nothing


@dataclass
class ClaimView:
    id: str
    ctype: str
    stage: str | None
    text: list[Segment]
    citations: list[Citation]
    sigma: float | None
    status: str
    origin: str
    grounded: bool | None
    coverage: float | None
    ecc: bool | None
    ncc: bool | None
    missing_entities: list[str]
    unmatched_numbers: list[str]


@dataclass
class ItemView:
    id: str
    question: str
    options: list[tuple[str, str]]
    gold: str | None
    prediction: str | None
    raw_answer: str
    path: str
    score: float | None
    outcome: str  # correct | partial | wrong | unparsed | error
    error: str | None
    abstained: bool
    difficulty: str | None
    question_types: list[str]
    images: list[ImageView]
    entries: list[EntryRow]
    chain: list[tuple[str, list[ClaimView]]]
    timeline: list[TimelineRow]
    counters: list[census_table.CensusRow]
    triggers: list[str]
    operators: list[str]
    transcript: list[dict[str, str]]
    notes: list[str]
    timings: dict[str, float]
    profile: dict[str, Any]
    has_trajectory: bool
    decision_changes: list[str] = field(default_factory=list)  # defense-line marks that rewrote the decision
    scoring_rule: str | None = None  # a numeric answer: the tolerance that scored it, with its numbers

    @property
    def fired_counters(self) -> list[census_table.CensusRow]:
        """Non-zero counters for the side-by-side page, without the per-place breakdowns (``by_place``):
        the totals per kind say what happened; where is on the item page."""
        return [r for r in self.counters if r.value and not r.name.startswith("by_place")]

    @property
    def decision_label(self) -> str:
        """Truthful heading of ``raw_answer``: the decision after the defense line rewrote it, or as
        extracted from the model's reply (the replies themselves are in the timeline's model calls)."""
        if self.decision_changes:
            return "Decision after the defense line (Alg. 2), not the model's reply"
        return "Decision extracted from the model's reply"


# MarkKind values that rewrite a decision
DEFENSE_MARKS = ("ENTITY_RECHECK", "NUMERIC_SNAP", "VISUAL_FALLBACK")


def outcome_of(result: ItemResult, traj: dict[str, Any] | None) -> str:
    if result.error or (traj or {}).get("error") or result.path is None:
        return "error"
    if result.score >= 1.0:
        return "correct"
    if not result.parsed:
        return "unparsed"
    return "partial" if result.score > 0 else "wrong"


def build_item_view(
    result: ItemResult, traj: dict[str, Any] | None, info: Item | None, store: ImageStore
) -> ItemView:
    t = traj or {}
    ledger = t.get("ledger") or {}
    citers = _citers(ledger.get("claims", []))
    entries = [_entry_row(e, citers) for e in ledger.get("entries", [])]
    claims = [_claim_view(c, {e.id for e in entries}) for c in ledger.get("claims", [])]
    events = t.get("events", [])
    return ItemView(
        id=result.id,
        question=str(t.get("question") or (info.question if info else "")),
        options=[(chr(ord("A") + i), str(o)) for i, o in enumerate((info.options if info else None) or [])],
        gold=result.gold,
        prediction=result.prediction,
        raw_answer=str(t.get("raw_answer") or ""),
        decision_changes=[
            f"{m.get('kind')}: {m.get('detail')}"
            for m in t.get("marks", [])
            if m.get("kind") in DEFENSE_MARKS
        ],
        path=str(result.path or t.get("path") or "ERROR"),
        score=result.score,
        outcome=outcome_of(result, traj),
        error=result.error or t.get("error"),
        abstained=bool(t.get("abstained", False)),
        difficulty=result.difficulty or (info.difficulty if info else None),
        question_types=list(result.question_types),
        images=_images(entries, ledger, info, store),
        entries=entries,
        chain=_chain(claims),
        timeline=timeline(t, item_image_links(info, store)),
        counters=census_table.rows(census_table.item_census(t) if traj is not None else None),
        triggers=[str(e.get("trigger")) for e in events],
        operators=[str(e.get("operator")) for e in events if e.get("operator")],
        transcript=[m for m in t.get("transcript", []) if isinstance(m, dict)],
        notes=[str(n) for n in t.get("notes", [])],
        timings={k: float(v) for k, v in (t.get("timings") or {}).items() if isinstance(v, (int, float))},
        profile=dict(t.get("profile") or {}),
        has_trajectory=traj is not None,
        scoring_rule=_scoring_rule(result, info),
    )


def _scoring_rule(result: ItemResult, info: Item | None) -> str | None:
    """The numeric tolerance behind the score, with the numbers it compared (None: not a number)."""
    if info is None or info.answer_type is not AnswerType.NUMERIC:
        return None
    pred, gold = parse_number(result.prediction or ""), parse_number(result.gold or "")
    if pred is None or gold is None:
        return None
    tol = NumericTolerance(relative_all=info.meta.get("numeric_tolerance"))
    return explain_match(pred, gold, info.meta.get("numeric_kind"), info.meta.get("graduation"), tol)


# ------------------------------------------------------------------------------ ledger
def _entry_row(e: dict[str, Any], citers: dict[str, set[str]]) -> EntryRow:
    """``citers``: entry id -> the claims whose citations name it (``_citers``)."""
    meta = e.get("meta") or {}
    return EntryRow(
        id=str(e.get("id")),
        tool=str(e.get("src", "")),
        kappa=str(e.get("kappa", "")),
        fact=str(e.get("fact", "")),
        sigma=e.get("sigma"),
        omega=str(e.get("omega", "ACTIVE")),
        superseded_by=e.get("superseded_by"),
        cited_by=sorted({*(e.get("dependents") or []), *citers[str(e.get("id"))]}),
        bbox=list(e["bbox"]) if e.get("bbox") else None,
        category=meta.get("category"),
        tool_call_id=str(e.get("tool_call_id", "")),
        image_index=meta.get("image") if isinstance(meta.get("image"), int) else None,
    )


def _citers(claims: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Entry id -> every claim whose citations name it: an entry is shown cited by these as well as by
    its recorded D_e (dropped claims keep their citations)."""
    citers: dict[str, set[str]] = defaultdict(set)
    for c in claims:
        for raw in c.get("citations", []):
            citers[str(raw)].add(str(c.get("id")))
    return citers


def _images(
    entries: list[EntryRow], ledger: dict[str, Any], info: Item | None, store: ImageStore
) -> list[ImageView]:
    """Each image of the item, with the boxes of the entries whose tool read that image."""
    item_images = [Path(p) for p in info.images] if info else []
    calls = {o.get("call_id"): o for o in ledger.get("tool_outputs", [])}
    boxes: dict[Path, list[EntryRow]] = defaultdict(list)
    for e in entries:
        if e.bbox and (path := _image_of(e, calls.get(e.tool_call_id), item_images)) is not None:
            boxes[path].append(e)
    views = []
    for path in dict.fromkeys([*item_images, *boxes]):  # the item's own images first
        stored = store.add(path)
        view = ImageView(path.name, *((stored, None) if isinstance(stored, StoredImage) else (None, stored)))
        for e in boxes.get(path, []):
            x0, y0, x1, y1 = (float(v) for v in e.bbox or (0, 0, 0, 0))
            view.boxes.append(Box(e.id, e.omega, e.tool, x0, y0, max(x1 - x0, 0.0), max(y1 - y0, 0.0)))
        views.append(view)
    return views


def _image_of(e: EntryRow, call: dict[str, Any] | None, item_images: list[Path]) -> Path | None:
    """The image an entry's bbox refers to: the tool's recorded input, else the recorded index."""
    if (path := input_image_path(((call or {}).get("inputs") or {}).get("image"))) is not None:
        return path
    if e.image_index is not None and 1 <= e.image_index <= len(item_images):
        return item_images[e.image_index - 1]
    return item_images[0] if len(item_images) == 1 else None


# ------------------------------------------------------------------------------ claims
def _claim_view(c: dict[str, Any], entry_ids: set[str]) -> ClaimView:
    g = c.get("grounding") or {}
    missing = [str(x) for x in g.get("missing_entities") or []]
    unmatched = [str(x) for x in g.get("unmatched_numbers") or []]
    return ClaimView(
        id=str(c.get("id")),
        ctype=str(c.get("ctype", "")),
        stage=c.get("stage"),
        text=segments(str(c.get("text", "")), missing, unmatched),
        citations=[Citation(str(r), _anchor(str(r), entry_ids)) for r in c.get("citations", [])],
        sigma=c.get("sigma"),
        status=str(c.get("status", "ACTIVE")),
        origin=str(c.get("origin", "model")),
        grounded=c.get("grounded"),
        coverage=g.get("coverage"),
        ecc=g.get("ecc"),
        ncc=g.get("ncc"),
        missing_entities=missing,
        unmatched_numbers=unmatched,
    )


def _anchor(raw: str, entry_ids: set[str]) -> str | None:
    if raw in entry_ids:
        return f"entry-{raw}"
    if raw.startswith(("SC-", "DC-")):
        return f"claim-{raw}"
    return None


def _chain(claims: list[ClaimView]) -> list[tuple[str, list[ClaimView]]]:
    groups = [(f"[{s}]", [c for c in claims if c.ctype == "SC" and c.stage == s]) for s in STAGES]
    groups.append(("DC", [c for c in claims if c.ctype == "DC"]))
    groups.append(
        ("other", [c for c in claims if c.ctype != "DC" and (c.ctype != "SC" or c.stage not in STAGES)])
    )
    return [(name, cs) for name, cs in groups if cs]
