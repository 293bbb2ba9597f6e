"""Audit a whole run directory with S-RFA and write ``srfa.jsonl`` + ``srfa_metrics.json`` beside it.

A run directory (``scripts/run.py`` output) holds ``results.jsonl`` (what was scored),
``trajectories/<id>.json`` (what happened) and ``.hydra/config.yaml`` (which benchmark, so the
item's question, options and images can be found again). The audit reads those and nothing
else, so it works the same on LedgerMind runs, ablations, the native-CoT baseline and
official-protocol replays of any model's saved outputs.

``srfa.jsonl`` gets one line per (item, mode) as each item finishes; a rerun keeps the finished
lines and retries the ones that errored (judge failures), like a run's resume.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ledgermind.backends.recorded import describe_backend
from ledgermind.benchmarks.item import Item
from ledgermind.errors import UserError
from ledgermind.experiment.artefact_label import label_for
from ledgermind.grounding.cascade import GroundingCascade
from ledgermind.jsonl import BadLine, read_jsonl
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.runs.atomic import atomic_write_json, open_append
from ledgermind.runs.claim import recorded_identity
from ledgermind.runs.items import load_items
from ledgermind.runs.reader import RunDir
from ledgermind.srfa.checks import run_checks
from ledgermind.srfa.judge import Judge, JudgeError, shown_options
from ledgermind.srfa.protocol import (
    AtomicClaim,
    SrfaMode,
    SrfaRecord,
    atomic_claims,
    cohen_kappa,
    has_claim_structure,
    label_ledger_mode,
    ledger_evidence,
    markup_entities,
    srfa_metrics,
    trace_text,
)
from ledgermind.srfa.split import MAX_CLAIMS
from ledgermind.tools.base import Tool
from ledgermind.trajectory import Trajectory

SRFA_FILE = "srfa.jsonl"
SRFA_METRICS_FILE = "srfa_metrics.json"
JUDGE_CACHE_FILE = "srfa_responses.sqlite"  # the judge's replies (``cache.path: null``)


@dataclass(frozen=True)
class SrfaSettings:
    mode: SrfaMode = SrfaMode.LEDGER
    gamma: float = PipelineConfig.gamma  # WDG / R4R decision-grounding threshold γ (§3.4), one home
    max_claims: int = MAX_CLAIMS
    progress: bool = True  # a progress bar with rate and ETA on stderr (the OCR pass is the slow part)

    @property
    def modes(self) -> list[SrfaMode]:
        return [SrfaMode.LEDGER, SrfaMode.JUDGE] if self.mode is SrfaMode.BOTH else [self.mode]


class ImageSource(str, Enum):
    """Which picture the audit's evidence was read from: the one the model was sent."""

    OFFICIAL_SCREENSHOT = "official_screenshot"  # MMMU-Pro vision: the dataset's own page image
    RENDERED_PAGE = "rendered_page"  # vision setting without the official page: our rendering
    ITEM_IMAGES = "item_images"  # standard settings: the item's images
    TRAJECTORY_LEDGER = "trajectory_ledger"  # a LedgerMind trace: its own recorded tool outputs


def image_source(item: Item) -> ImageSource:
    """The image the model received for ``item`` (recorded in ``srfa.jsonl``)."""
    if item.meta.get("page_given"):
        return ImageSource.OFFICIAL_SCREENSHOT
    if item.meta.get("setting") == "vision":
        return ImageSource.RENDERED_PAGE
    return ImageSource.ITEM_IMAGES


@dataclass
class RunRecord:
    """What the audit reads of a run directory."""

    run_dir: Path
    results: dict[str, dict[str, Any]]  # id -> last results.jsonl row

    def trajectory(self, item_id: str) -> Trajectory | None:
        data = RunDir(self.run_dir).trajectory(item_id)
        try:
            return Trajectory.from_dict(data) if data is not None else None
        except ValueError:  # valid JSON that is not a trajectory: as good as none (an audit error, retried)
            return None


def load_run(run_dir: Path) -> RunRecord:
    run = RunDir(run_dir)
    if not run.has_results:
        raise UserError(f"not a run directory (no results.jsonl): {run.path}")
    return RunRecord(run.path, run.result_rows())  # a retried id: its last line


def run_items(run_dir: Path, *, trusted: bool = False) -> dict[str, Item]:
    """The benchmark items of a run, rebuilt from its recorded Hydra config (a run folder is data:
    registered benchmarks only, unless ``trusted`` — ``--trust-config`` for your own runs)."""
    run = RunDir(run_dir)
    cfg = run.config()
    if cfg is None:
        raise UserError(f"{run_dir} has no .hydra/config.yaml: cannot find the run's benchmark items")
    return {i.id: i for i in load_items(cfg, None, trusted=trusted)}


class EvidenceSource:
    """Perception evidence on demand for a trace without a ledger of its own.

    The same tools LedgerMind uses: OCR of every image of the item and, for reading/location
    questions, OCR of the zoomed crop the crop-zoom tool selects. An audit asks once per item; an
    image read before costs nothing (the OCR engine memoises by pixels, the perception cache on disk).
    """

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self.tools = tools

    async def evidence(self, item: Item) -> list[str]:
        from ledgermind.dispatch import QuestionType, profile

        facts: list[str] = []
        zoom = {QuestionType.READ, QuestionType.LOCATION} & profile(item.question or "", item.options).types
        for image in item.images:
            facts += _texts(await self.tools["ocr"].ainvoke(image=image))
            if zoom and "crop_zoom" in self.tools:
                crop = await self.tools["crop_zoom"].ainvoke(image=image, question=item.question)
                if crop.ok and crop.artifacts.get("image") is not None:
                    facts += _texts(await self.tools["ocr"].ainvoke(image=crop.artifacts["image"]))
        return facts


def _texts(output: Any) -> list[str]:
    return [o.text for o in output.observations if o.text.strip()] if output.ok else []


@dataclass(frozen=True)
class _Auditor:
    """What labels the items of one run: the run, the settings and the labellers they need."""

    record: RunRecord
    settings: SrfaSettings
    cascade: GroundingCascade | None
    items: Mapping[str, Item]
    evidence: EvidenceSource | None
    judge: Judge | None

    async def audit(
        self, item_id: str, row: Mapping[str, Any], modes: Sequence[SrfaMode]
    ) -> list[SrfaRecord]:
        base: dict[str, Any] = {k: row.get(k) for k in ("prediction", "difficulty", "path")}
        base |= {"item_id": item_id, "score": None if row.get("error") else row.get("score")}
        if row.get("error"):
            # the run never answered this item (its input never loaded, its model call failed): a run
            # error, counted apart; re-running the audit cannot change it, so it is not an audit error
            return [SrfaRecord(mode=m.value, **base) for m in modes]
        traj = self.record.trajectory(item_id)
        item = self.items.get(item_id)
        if traj is None or item is None:
            why = (
                "no readable trajectory recorded" if traj is None else "item not found in the run's benchmark"
            )
            return [SrfaRecord(mode=m.value, error=why, **base) for m in modes]
        claims = atomic_claims(traj, row.get("prediction"), self.settings.max_claims)
        out: list[SrfaRecord] = []
        if SrfaMode.LEDGER in modes:
            facts, source = await self._evidence(traj, item)
            assert self.cascade is not None  # srfa_run refuses a ledger-mode audit without one
            # the question the model was given is evidence too (restating it is not a hallucination,
            # on either side); the options are not: they are the hypothesis space, and counting them
            # would ground every decision (and every "the answer might be X") by construction
            label_ledger_mode(
                claims,
                [*facts, item.question],
                self.cascade,
                shown_options(item),
                options_in_image=source in (ImageSource.OFFICIAL_SCREENSHOT, ImageSource.RENDERED_PAGE),
                question=item.question or "",
            )
            out.append(
                SrfaRecord(
                    mode=SrfaMode.LEDGER.value,
                    **base,
                    image_source=source.value,
                    images=[str(p) for p in item.images],
                    claims=claims,
                )
            )
        if SrfaMode.JUDGE in modes:
            structured = "\n".join(f"[{c.ctype}] {c.text}" for c in claims)
            trace = structured if has_claim_structure(traj) else trace_text(traj)
            out.append(await self._judged(item, trace, claims, base))
        return out

    async def _evidence(self, traj: Trajectory, item: Item) -> tuple[list[str], ImageSource]:
        """The tool facts of the item and the picture they were read from."""
        if facts := ledger_evidence(traj):
            return facts, ImageSource.TRAJECTORY_LEDGER
        return (await self.evidence.evidence(item) if self.evidence else []), image_source(item)

    async def _judged(
        self, item: Item, trace: str, split: list[AtomicClaim], base: dict[str, Any]
    ) -> SrfaRecord:
        """The judge's labels of the splitter's claims (``both``: the claims the ledger mode labels,
        whether or not this call redoes the ledger record), else its own decomposition."""
        assert self.judge is not None  # srfa_run refuses a judge-mode audit without one
        try:
            if self.settings.mode is SrfaMode.BOTH:
                labels = await self.judge.label(item, trace, split)
                claims = [
                    AtomicClaim(c.ctype, c.text, g, r, c.answer)
                    for c, (g, r) in zip(split, labels, strict=True)
                ]
            else:
                claims = await self.judge.decompose(item, trace, base["prediction"])
        except JudgeError as exc:
            return SrfaRecord(mode=SrfaMode.JUDGE.value, error=str(exc), **base)
        return SrfaRecord(mode=SrfaMode.JUDGE.value, **base, claims=claims)

    def metrics(self, latest: Mapping[str, Mapping[str, SrfaRecord]]) -> dict[str, Any]:
        """The audit's metrics per mode, the judge's protocol, and (``both``) the modes' agreement."""
        settings = self.settings
        out: dict[str, Any] = {
            "mode": settings.mode.value,
            "gamma": settings.gamma,
            "max_claims": settings.max_claims,
        }
        for m in settings.modes:
            out[m.value] = srfa_metrics(latest.get(m.value, {}).values(), settings.gamma)
        if self.judge is not None:
            out["judge_protocol"] = self.judge.describe()
        if settings.mode is SrfaMode.BOTH:
            a, b = [], []
            jud = latest.get("judge", {})
            for item_id, la in latest.get("ledger", {}).items():
                ja = jud.get(item_id)
                if ja is not None and not (ja.error or la.error) and len(ja.claims) == len(la.claims):
                    a += [bool(c.grounded) for c in la.claims]
                    b += [bool(c.grounded) for c in ja.claims]
            out["agreement"] = cohen_kappa(a, b)
        return out


async def srfa_run(
    record: RunRecord,
    settings: SrfaSettings,
    *,
    cascade: GroundingCascade | None,
    items: Mapping[str, Item],
    evidence: EvidenceSource | None = None,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """Audit every item of the run; returns (and writes) the audit metrics."""
    modes = settings.modes
    if SrfaMode.LEDGER in modes and cascade is None:
        raise UserError("ledger-mode audit needs the grounding cascade")
    if SrfaMode.JUDGE in modes and judge is None:
        raise UserError("judge-mode audit needs a judge backend (model=… backend=…)")
    auditor = _Auditor(record, settings, cascade, items, evidence, judge)
    done = {(a.item_id, a.mode) for a in read_run_records(record.run_dir) if a.error is None}
    pending = [(i, r) for i, r in record.results.items() if any((i, m.value) not in done for m in modes)]
    bar = tqdm(
        total=len(record.results),
        initial=len(record.results) - len(pending),
        desc="S-RFA (OCR + labels)",
        unit="item",
        file=sys.stderr,
        dynamic_ncols=True,
        disable=not settings.progress,
    )
    with bar, open_append(record.run_dir, record.run_dir / SRFA_FILE) as fh:
        for item_id, row in pending:
            todo = [m for m in modes if (item_id, m.value) not in done]
            for audit in await auditor.audit(item_id, row, todo):
                fh.write(json.dumps(audit.to_dict(), ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            bar.update(1)
    latest = _latest(read_run_records(record.run_dir), set(record.results))
    metrics = auditor.metrics(latest)
    ledger = latest.get(SrfaMode.LEDGER.value, {})
    if cascade is not None and SrfaMode.LEDGER.value in metrics:
        options_of = {i: shown_options(items[i]) for i in ledger if i in items}
        markup = markup_entities(ledger.values(), cascade, options_of)
        metrics[SrfaMode.LEDGER.value]["markup_entities"] = {
            "n": len(markup),
            "examples": sorted(set(markup))[:20],
        }
    identity = recorded_identity(record.run_dir) or {}
    # the checks the run's own backend registers over the ledger-mode audits (``srfa/checks.py``; the
    # simulator: the catch rate against its injected faults), its plugin loaded first
    describe_backend(str(identity.get("backend", "")))
    metrics.update(run_checks((a, t) for i, a in ledger.items() if (t := record.trajectory(i)) is not None))
    metrics["label"] = label_for(identity).line or None
    atomic_write_json(record.run_dir, record.run_dir / SRFA_METRICS_FILE, metrics)
    return metrics


def read_run_records(run_dir: Path) -> list[SrfaRecord]:
    """Every S-RFA record of a run folder, in the order written."""
    path = Path(run_dir) / SRFA_FILE
    if not path.is_file():
        return []
    out = []
    for row in read_jsonl(path, bad=BadLine.SKIP):  # a line cut by a kill or a crash: retried on rerun
        try:
            out.append(SrfaRecord.from_dict(row.value))
        except ValueError:  # valid JSON of another shape (a hand edit, a foreign file) is not a record
            continue
    return out


def srfa_metrics_file(run_dir: Path) -> Path | None:
    """``srfa_metrics.json`` of a run folder, or None when it has not been audited."""
    path = Path(run_dir) / SRFA_METRICS_FILE
    return path if path.is_file() else None


def _latest(audits: Sequence[SrfaRecord], ids: set[str]) -> dict[str, dict[str, SrfaRecord]]:
    """mode -> id -> the last record (a success is never replaced by a later error)."""
    out: dict[str, dict[str, SrfaRecord]] = {}
    for a in audits:
        if a.item_id not in ids:
            continue
        slot = out.setdefault(a.mode, {})
        prev = slot.get(a.item_id)
        if prev is None or prev.error is not None or a.error is None:
            slot[a.item_id] = a
    return out
