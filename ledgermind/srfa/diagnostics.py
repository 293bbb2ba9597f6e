"""Diagnostics of an audit against things outside it: does per-item GDR say anything
about correctness (AUROC with a bootstrap interval), and do the labels agree with a person's?

Both are *checks* of the audit, not targets: tuning labelling rules to raise the AUROC would
make the audit a correctness predictor, which is not what S-RFA measures.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledgermind.jsonl import read_jsonl
from ledgermind.metrics.faithfulness import gdr
from ledgermind.srfa.protocol import SrfaRecord, as_trajectory, cohen_kappa

SUPPORTED = "supported"
NOT_SUPPORTED = "not_supported"


def auroc(scores: Sequence[float], positive: Sequence[bool]) -> float | None:
    """Area under the ROC curve (Mann–Whitney, ties count one half); None without both classes."""
    pos = [s for s, p in zip(scores, positive, strict=True) if p]
    neg = [s for s, p in zip(scores, positive, strict=True) if not p]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def bootstrap_auroc(
    scores: Sequence[float], positive: Sequence[bool], n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of :func:`auroc` over items (resampled with replacement)."""
    rng = random.Random(seed)
    idx = range(len(scores))
    samples = ([rng.choice(idx) for _ in idx] for _ in range(n_boot))
    values = sorted(
        v for s in samples if (v := auroc([scores[i] for i in s], [positive[i] for i in s])) is not None
    )
    if not values:
        return None, None
    lo = values[int((1 - level) / 2 * len(values))]
    hi = values[min(len(values) - 1, int((1 + level) / 2 * len(values)))]
    return lo, hi


def correctness_table(audits: Iterable[SrfaRecord]) -> dict[str, Any]:
    """n right/wrong, mean GDR of each, and the AUROC of per-item GDR for correctness."""
    scored = [a for a in audits if a.error is None and a.score is not None]
    right = [(a.score or 0.0) >= 1.0 for a in scored]
    gdrs = [gdr(as_trajectory(a)) for a in scored]  # per trace: the run's Eq. 8 over the audit's labels

    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    return {
        "n": len(scored),
        "n_right": sum(right),
        "n_wrong": len(right) - sum(right),
        "GDR_right": mean([g for g, r in zip(gdrs, right, strict=True) if r]),
        "GDR_wrong": mean([g for g, r in zip(gdrs, right, strict=True) if not r]),
        "AUROC": auroc(gdrs, right),
        "AUROC_CI95": list(bootstrap_auroc(gdrs, right)),
    }


@dataclass(frozen=True)
class HandLabel:
    """A person's verdict on one audited claim (claim ``index`` is 1-based within the item)."""

    setting: str
    item_id: str
    index: int
    text: str
    label: str  # SUPPORTED | NOT_SUPPORTED
    reason: str


def read_hand_labels(path: Path) -> list[HandLabel]:
    out = []
    for row in read_jsonl(Path(path), torn_tail=False, what="a hand label"):
        d = row.value
        if d["label"] not in (SUPPORTED, NOT_SUPPORTED):
            raise ValueError(f"hand label must be {SUPPORTED!r} or {NOT_SUPPORTED!r}, got {d['label']!r}")
        out.append(HandLabel(d["setting"], d["id"], int(d["index"]), d["text"], d["label"], d["reason"]))
    return out


def hand_label_agreement(audits: Mapping[str, SrfaRecord], labels: Sequence[HandLabel]) -> dict[str, Any]:
    """Agreement (and Cohen's κ) of the audit's grounded/ungrounded with the hand labels over every
    matched claim (not checkable counted as ungrounded) and, under ``checkable``, over the claims the
    audit could check (a judge's labels are all checkable); a
    hand-labelled claim the audit does not have (different split) is counted as missing. Texts are
    compared up to whitespace: a packed claim joins its sentences with a line break, older
    audits (and the labels) with a space."""
    ours, theirs, missing, checkable = [], [], 0, []
    for h in labels:
        a = audits.get(h.item_id)
        claim = a.claims[h.index - 1] if a is not None and 0 < h.index <= len(a.claims) else None
        if claim is None or claim.text.split() != h.text.split() or claim.grounded is None:
            missing += 1
            continue
        ours.append(bool(claim.grounded))
        theirs.append(h.label == SUPPORTED)
        checkable.append(claim.checkable)
    on_checkable = cohen_kappa(
        [o for o, c in zip(ours, checkable, strict=True) if c],
        [t for t, c in zip(theirs, checkable, strict=True) if c],
    )
    return cohen_kappa(ours, theirs) | {"missing": missing, "checkable": on_checkable}
