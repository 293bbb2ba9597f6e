"""Symmetric Reasoning Faithfulness Audit (S-RFA, paper §4 / Figure 5).

One claim-level audit for every trace — LedgerMind, any ablation, the native-CoT baseline, or a
replayed model's saved outputs — so that UCR_reason, GDR, R4R and WDG (§3.4) are computed under
one protocol on both sides. This module holds the records, the trace extraction, the ``ledger``
mode labeller (our own grounding cascade, no judge model) and the audit metrics. The metric
formulas are the run's own (``ledgermind.metrics``): each audited item becomes a claims-only
trajectory and goes through the same functions, so there is one implementation.

Ledger-mode protocol (identical for every trace; documented in ``docs/srfa.md``):

* claims: a LedgerMind trajectory's claims in force (its SC chain and final DC) — the trace *is*
  its claims; any other trace is split by ``audit.split`` (≤ 10 claims, last answer sentence = DC);
* the DC's answer is the answer the run scored (``results.jsonl`` ``prediction``), never re-parsed;
* evidence: the tool-produced facts of the item (OCR, crop-zoom, detection, search) — the
  trajectory's own tool entries where it has them, else the same OCR/crop-zoom evidence computed
  on demand on the image the model was sent — plus the question text the model was given
  (restating the input is not a hallucination, on either side). The options are not evidence,
  also when OCR read them (garbled) off a vision page (``grounding.option_text_filter``);
* what is checked of a claim is its text with markup stripped and option labels resolved
  (``grounding.normalize.claim_view``); a DC asserts the chosen option's text (or its answer);
* evidence is never another claim of the same trace: every claim is checked against the tool
  evidence alone, as the runtime checks a claim against the leaves of its citation chain. A claim
  the evidence rejects only for numbers that one arithmetic step makes from numbers the chain
  wrote down is ``computed`` (with its operands) when those operands are tool numbers; a claim
  accepted only once the earlier claims' text or numbers are added is ``derived``. Computed
  counts as grounded on the Figure 5 axes, derived does not (``docs/srfa.md``).

What text can decide. The paper's S-RFA judge looks at the image; this audit reads only
text (OCR, crops' OCR, search snippets, the question). A claim about what the picture shows ("the
arrow points to the zygomatic bone", a diagnosis from a micrograph) is not *wrong* because no OCR
line states it: it is **not checkable from text**. Every claim therefore also gets one of three
``TextLabel``s — supported by tool text, unsupported by tool text (the text speaks to the claim and
does not support it, or contradicts it), not checkable from text — and the Figure 5 axes of this
mode are computed over the checkable claims only, with the coverage (share checkable) beside them,
under their own names (``srfa.GDR``, not the runtime's ``GDR``: another protocol).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from ledgermind.claims import Claim, ClaimStatus, ClaimType
from ledgermind.grounding.arithmetic import Derivation, Known, derive, stated_numbers
from ledgermind.grounding.cascade import GroundingCascade, GroundingResult
from ledgermind.grounding.ecc import claim_entities
from ledgermind.grounding.normalize import claim_view, is_markup, strip_markup
from ledgermind.grounding.numbers import Number
from ledgermind.grounding.option_text_filter import without_options
from ledgermind.grounding.tokens import content_tokens
from ledgermind.metrics.faithfulness import decision_claims_in_force, summarize
from ledgermind.records import KEY, Record
from ledgermind.srfa.split import pack, split_trace
from ledgermind.tools.base import ToolKind
from ledgermind.trajectory import PathKind, Trajectory

# Tool kinds whose outputs are evidence "against the image" (or retrieved facts); MLLM outputs
# (observations, readings, VQA, plans) are the model's own statements and never count as support.
EVIDENCE_TOOL_KINDS = frozenset({ToolKind.OCR, ToolKind.CROP, ToolKind.DETECT, ToolKind.SEARCH})


class SrfaMode(str, Enum):
    LEDGER = "ledger"
    JUDGE = "judge"
    BOTH = "both"


class Support(str, Enum):
    """How a ledger-mode label was reached (``docs/srfa.md``, "Labels")."""

    GROUNDED = "grounded"  # the tool evidence accepts the claim as written
    COMPUTED = "computed"  # accepted but for numbers obtained by arithmetic from evidence numbers
    DERIVED = "derived"  # accepted only with the text/numbers of the model's own earlier claims
    UNGROUNDED = "ungrounded"

    @property
    def counts_grounded(self) -> bool:
        """g(c) of the Figure 5 axes: supported by what the tools saw (a computation from tool
        numbers is an [I] step whose leaves are tool facts); a claim resting on the model's own
        statements is not grounded against the image."""
        return self in (Support.GROUNDED, Support.COMPUTED)


class TextLabel(str, Enum):
    """What the text-only audit can say of a claim (module docstring, ``docs/srfa.md``)."""

    SUPPORTED = "supported_by_tool_text"  # Support.counts_grounded: the tool text states it
    UNSUPPORTED = "unsupported_by_tool_text"  # the tool text speaks to its content and does not support it
    NOT_CHECKABLE = "not_checkable_from_text"  # nothing it asserts beyond the question is text a tool read


def text_label(view: str, support: Support, tool_text: Sequence[str], question: str) -> TextLabel:
    """The three-way label of one checked claim text.

    Supported when the cascade accepts it (grounded or computed). Otherwise the claim is checkable
    when what it adds to the question — its content tokens and numbers not in the question — meets
    the tool text: one of those tokens occurs in a tool fact (the text is about the same thing and
    does not say it), or it states a number and the tool text has numbers (a reading OCR can
    decide). A claim whose new content touches no tool text asserts something only the image can
    decide: not checkable from text. The rule is lexical, like ρ, and never reads the answer key.
    """
    if support.counts_grounded:
        return TextLabel.SUPPORTED
    new = content_tokens(view) - content_tokens(question)
    restated = not new and not stated_numbers(view)  # the cascade rejects the question restated
    tool_tokens = frozenset().union(*(content_tokens(t) for t in tool_text))
    asked_numbers = {n.text for n in stated_numbers(question)}
    claimed = [n for n in stated_numbers(view) if n.text not in asked_numbers]
    readable = bool(claimed) and any(stated_numbers(t) for t in tool_text)
    return TextLabel.UNSUPPORTED if restated or new & tool_tokens or readable else TextLabel.NOT_CHECKABLE


@dataclass
class AtomicClaim(Record):
    """One audited claim: SC (state/reasoning) or DC (decision)."""

    ctype: str  # "SC" | "DC"
    text: str
    grounded: bool | None = None  # None: not labelled (judge failure)
    reason: str = ""
    answer: str | None = None  # DC only: the answer it asserts (a letter for MCQ items)
    support: str | None = None  # ledger mode: a Support value; judge mode: None
    operands: list[str] = field(default_factory=list)  # computed/derived numbers: "616 = 2 × 308"
    via: list[str] = field(default_factory=list)  # derived: the earlier claims ("SC-2") it rests on
    text_label: str | None = None  # ledger mode: a TextLabel value (None: judge mode)

    @property
    def checkable(self) -> bool:
        """Could this audit decide the claim? Judge labels (no ``text_label``) count as checkable."""
        return self.text_label != TextLabel.NOT_CHECKABLE.value

    def to_dict(self) -> dict[str, Any]:
        label = None if self.grounded is None else ("grounded" if self.grounded else "ungrounded")
        return {**super().to_dict(), "label": label}


@dataclass
class SrfaRecord(Record):
    """The audit of one trace."""

    item_id: str = field(metadata={KEY: "id"})
    mode: str
    # an audit file's keys in this order: summary fields first, the claims last
    path: str | None = None
    difficulty: str | None = None
    score: float | None = None  # the run's score (None: the run errored on this item)
    prediction: str | None = None
    error: str | None = None  # an audit failure (judge unparsable, server error): retried on rerun
    image_source: str | None = None  # which image the evidence was read from (ImageSource value)
    images: list[str] = field(default_factory=list)  # the audited image files
    claims: list[AtomicClaim] = field(default_factory=list)


# ------------------------------------------------------------------------------ the trace
def trace_text(traj: Trajectory) -> str:
    """The model-written text of a trajectory without a claim structure of its own."""
    model_turns = [t.get("text", "") for t in traj.transcript if t.get("role") == "model"]
    replies = [c.reply for c in traj.model_calls if c.reply]
    if model_turns:
        return "\n".join(model_turns)
    return replies[-1] if replies else traj.raw_answer or ""


def has_claim_structure(traj: Trajectory) -> bool:
    """True for LedgerMind paths, whose trace is the ledger's SC chain and DC."""
    return traj.path in {PathKind.DIRECT, PathKind.FULLPIPE} and bool(traj.ledger.claims())


def atomic_claims(traj: Trajectory, prediction: str | None, max_claims: int) -> list[AtomicClaim]:
    """≤ ``max_claims`` unlabelled claims of one trace; the last one is the DC."""
    if has_claim_structure(traj):
        scs = [c.text for c in traj.ledger.claims(ClaimType.SC) if c.status is ClaimStatus.ACTIVE]
        dcs = decision_claims_in_force(traj)
        decision = dcs[-1].text if dcs else (traj.raw_answer or "")
        statements = pack(scs, max_claims - 1)
    else:
        split = split_trace(trace_text(traj), max_claims)
        statements, decision = list(split.statements), split.decision
    out = [AtomicClaim("SC", s) for s in statements if s.strip()]
    out.append(AtomicClaim("DC", decision or (prediction or ""), answer=prediction))
    return out


# ------------------------------------------------------------------------------ evidence
def ledger_evidence(traj: Trajectory) -> list[str]:
    """Tool-produced facts the trajectory recorded (active or not: the audit reads the record)."""
    outputs = ((e, traj.ledger.tool_output(e.tool_call_id)) for e in traj.ledger.entries())
    return [
        e.fact for e, out in outputs if out is not None and out.kind in EVIDENCE_TOOL_KINDS and e.fact.strip()
    ]


# ------------------------------------------------------------------------------ ledger mode
def label_ledger_mode(
    claims: list[AtomicClaim],
    evidence: Sequence[str],
    cascade: GroundingCascade,
    options: Sequence[str] | None,
    *,
    options_in_image: bool = False,
    question: str = "",
) -> list[AtomicClaim]:
    """Label every claim against the tool evidence alone (see module docstring and ``Support``);
    ``options_in_image``: the options are pixels of the audited page (MMMU-Pro vision). ``question``:
    the question text (also in ``evidence``), set apart so the three-way ``TextLabel`` can tell what
    a claim adds to it."""
    facts = [e for e in evidence if e.strip()]
    pool = [strip_markup(e) for e in without_options(facts, options, in_image=options_in_image)]
    asked = strip_markup(question) if question.strip() else ""
    tool_text = [f for f in pool if f != asked]
    chain = _Chain()
    for i, c in enumerate(claims, 1):
        cid = f"{c.ctype}-{i}"
        view = claim_view(_content(c, options), options)
        support, result, derivations, via = _label(view, pool, chain, cascade, cid)
        c.support = support.value
        c.grounded = support.counts_grounded
        c.operands = [d.expression for d in derivations]
        c.via = via
        c.reason = _reason(support, result, derivations, via)
        c.text_label = text_label(view, support, tool_text, asked).value
        chain.add(cid, view, support, derivations, result)
    return claims


def _content(c: AtomicClaim, options: Sequence[str] | None) -> str:
    """What a claim asserts: a DC the chosen option's text for an MCQ letter (else its free-form
    answer), an SC its text."""
    answer = (c.answer or "") if c.ctype == "DC" else ""
    letter = ord(answer.upper()) - ord("A") if len(answer) == 1 and answer.isalpha() else -1
    return (str(options[letter]) if options and 0 <= letter < len(options) else answer) or c.text


@dataclass
class _Chain:
    """What the earlier claims of one trace stated: their text and the numbers they wrote down."""

    texts: list[tuple[str, str]] = field(default_factory=list)  # (claim id, checked text)
    known: list[Known] = field(default_factory=list)

    def add(
        self,
        cid: str,
        view: str,
        support: Support,
        derivations: Sequence[Derivation],
        result: GroundingResult,
    ) -> None:
        if support is not Support.UNGROUNDED:
            self.texts.append((cid, view))
        unmatched, by_text = set(result.unmatched_numbers), {d.number.text: d for d in derivations}
        self.known += [_known(n, cid, unmatched, by_text.get(n.text)) for n in stated_numbers(view)]


def _known(n: Number, cid: str, unmatched: set[str], d: Derivation | None) -> Known:
    """A number claim ``cid`` wrote down with its provenance: a tool fact, computed from tool facts
    (its derivation ``d``), or just stated."""
    if n.text not in unmatched:
        return Known(n, "evidence", True)
    ok = d is not None and d.from_evidence
    return Known(n, "computed" if ok else cid, ok, d.expression if d is not None else "")


def _label(
    view: str, pool: list[str], chain: _Chain, cascade: GroundingCascade, cid: str
) -> tuple[Support, GroundingResult, list[Derivation], list[str]]:
    """Grounded against the tool evidence; else computed (only numbers missing, each one step of
    arithmetic from tool numbers); else derived (accepted once the earlier claims' text and
    numbers are added: grounded only through the trace's own claims); else ungrounded."""
    result = cascade.check(view, pool)
    if result.grounded:
        return Support.GROUNDED, result, [], []
    derivations = _derivations(view, result, chain, cid)
    if _all_but_derived_numbers(result, derivations, cascade):
        if all(d.from_evidence for d in derivations):
            return Support.COMPUTED, result, derivations, []
        return Support.DERIVED, result, derivations, list(dict.fromkeys(_operand_claims(derivations)))
    if not chain.texts:
        return Support.UNGROUNDED, result, [], []
    widened = cascade.check(view, pool + [t for _, t in chain.texts])
    wider = _derivations(view, widened, chain, cid)
    if widened.grounded or _all_but_derived_numbers(widened, wider, cascade):
        via = list(dict.fromkeys(_claims_naming(result, chain) + _operand_claims(wider)))
        return Support.DERIVED, widened, wider, via
    return Support.UNGROUNDED, result, [], []


def _all_but_derived_numbers(
    result: GroundingResult, derivations: Sequence[Derivation], cascade: GroundingCascade
) -> bool:
    """The claim passes but for numbers, and each number the evidence lacks has a derivation."""
    passes = result.cited and result.ecc and result.coverage >= cascade.cfg.beta
    return passes and len(derivations) == len(result.unmatched_numbers)


def _derivations(view: str, result: GroundingResult, chain: _Chain, cid: str) -> list[Derivation]:
    """One derivation per unmatched number that has one; operands are the chain's numbers and the
    claim's own numbers stated before it ("2 × 308 = 616")."""
    unmatched = set(result.unmatched_numbers)
    if not unmatched:
        return []
    known = list(chain.known)
    out: list[Derivation] = []
    for n in stated_numbers(view):
        d = derive(n, known) if n.text in unmatched else None
        out += [d] if d is not None else []
        known.append(_known(n, cid, unmatched, d))
    return out


def _operand_claims(derivations: Sequence[Derivation]) -> list[str]:
    return [k.source for d in derivations for k in d.operands if not k.from_evidence]


def _claims_naming(result: GroundingResult, chain: _Chain) -> list[str]:
    """The earlier claims that state an entity the evidence lacks (what the claim rests on)."""
    missing = [m.casefold() for m in result.missing_entities]
    named = [cid for cid, text in chain.texts if any(m in text.casefold() for m in missing)]
    return named or [cid for cid, _ in chain.texts]


def _reason(
    support: Support, result: GroundingResult, derivations: Sequence[Derivation], via: Sequence[str]
) -> str:
    ops = "; ".join(d.expression for d in derivations)
    if support is Support.GROUNDED:
        return f"supported (coverage {result.coverage:.2f})"
    if support is Support.COMPUTED:
        return f"computed from evidence numbers: {ops}"
    if support is Support.DERIVED:
        tail = f" ({ops})" if ops else ""
        return "derived: supported only through the trace's own claims " + ", ".join(via) + tail
    missing = (("entities", result.missing_entities), ("numbers", result.unmatched_numbers))
    parts = [f"{what} not in evidence: {', '.join(names)}" for what, names in missing if names]
    return "; ".join(parts) or f"coverage {result.coverage:.2f} below beta"


def markup_entities(
    audits: Iterable[SrfaRecord], cascade: GroundingCascade, options_of: Mapping[str, Sequence[str] | None]
) -> list[str]:
    """Entities the cascade's NER finds in the checked text of audited claims that are typography
    (LaTeX, Markdown, ``A.``-labelled option fragments): there must be none, since a markup token
    taken for an entity fails ECC for what the text never asserted. Without NER there are none."""
    if cascade.ner is None:
        return []
    out = []
    for a in audits:
        options = options_of.get(a.item_id)
        for c in a.claims:
            view = claim_view(_content(c, options), options)
            out += [e.text for e in claim_entities(view, cascade.ner, cascade.aliases) if is_markup(e.text)]
    return out


# ------------------------------------------------------------------------------ metrics
def as_trajectory(audit: SrfaRecord) -> Trajectory:
    """A claims-only trajectory, so the audit uses the run's metric functions unchanged."""
    try:
        path = PathKind(audit.path)
    except ValueError:  # another agent's path name (e.g. an official-protocol replay)
        path = PathKind.BASELINE
    t = Trajectory(audit.item_id, "", path)
    for i, c in enumerate(audit.claims, 1):
        claim = Claim(f"{c.ctype}-{i}", ClaimType(c.ctype), c.text)
        claim.grounded = bool(c.grounded)
        t.ledger.add_claim(claim)
    return t


def srfa_metrics(audits: Iterable[SrfaRecord], gamma: float) -> dict[str, Any]:
    """Acc, UCR_reason, GDR, R4R, WDG (γ) over the items the run scored and the audit labelled,
    overall and by difficulty; audit errors and run errors are counted apart."""
    audits = list(audits)
    ok = [a for a in audits if a.error is None and a.score is not None]
    out = _axes(ok, gamma)
    out["n_items"] = len(audits)
    out["audit_errors"] = sum(1 for a in audits if a.error is not None)
    out["run_errors"] = sum(1 for a in audits if a.error is None and a.score is None)
    levels = sorted({a.difficulty or "unknown" for a in ok})
    out["by_difficulty"] = {
        k: _axes([a for a in ok if (a.difficulty or "unknown") == k], gamma) for k in levels
    }
    out["by_outcome"] = {
        "correct": _axes([a for a in ok if (a.score or 0) >= 1.0], gamma),
        "wrong": _axes([a for a in ok if (a.score or 0) < 1.0], gamma),
    }
    return out


AXIS_NAMES = ("UCR_reason", "GDR", "R4R", "WDG")
PREFIX = "srfa."  # S-RFA's axes are another protocol than the run's trajectory metrics: other names
CHECKABLE_NOTE = (
    "srfa.* over claims the text-only audit can check (supported / unsupported by tool text); claims "
    "not checkable from text are left out and counted in coverage; all_claims: not checkable counted as ungrounded"
)


def _axes(audits: Sequence[SrfaRecord], gamma: float) -> dict[str, Any]:
    """The Figure 5 axes of an audit (``srfa.*``) with the share of claims it could check beside them."""
    if not audits:
        empty = dict.fromkeys(PREFIX + k for k in AXIS_NAMES)
        return {"n": 0, "Acc": None, **empty, "gamma": gamma, "coverage": _coverage(())}
    s = _summary(audits, gamma)
    out = {
        "n": len(audits),
        "Acc": sum(float(a.score or 0.0) for a in audits) / len(audits),
        **checkable_axes(audits, gamma),
        "gamma": gamma,
        "n_claims": sum(len(a.claims) for a in audits),
        "coverage": _coverage(audits),
        "all_claims": {f"{PREFIX}{k}": s[k] for k in AXIS_NAMES},
        "support": support_counts(audits),
    }
    if any(c.text_label for a in audits for c in a.claims):
        out["text_labels"] = text_label_counts(audits)
        out["protocol"] = CHECKABLE_NOTE
    return out


def checkable_axes(audits: Sequence[SrfaRecord], gamma: float) -> dict[str, Any]:
    """UCR_reason, GDR, R4R, WDG over checkable claims only (the run's metric functions, one
    implementation): an item with no checkable claim leaves UCR_reason; an item whose decision is
    not checkable leaves GDR, R4R and WDG (its GDR would be a guess, not 0)."""
    with_claims, decided = _checkable_claims(audits), checkable_decisions(audits)
    ucr, dec = _summary(with_claims, gamma), _summary(decided, gamma)
    return {
        f"{PREFIX}UCR_reason": ucr["UCR_reason"] if with_claims else None,
        **{f"{PREFIX}{k}": dec[k] if decided else None for k in ("GDR", "R4R", "WDG")},
        "n_items_checkable": {"claims": len(with_claims), "decision": len(decided)},
    }


def checkable_decisions(audits: Iterable[SrfaRecord]) -> list[SrfaRecord]:
    """The audits reduced to their checkable claims, kept only when the decision is checkable
    (what ``srfa.GDR`` is computed over: a decision the text cannot decide has no GDR)."""
    return [a for a in _checkable_claims(audits) if any(c.ctype == "DC" for c in a.claims)]


def _checkable_claims(audits: Iterable[SrfaRecord]) -> list[SrfaRecord]:
    """The audits reduced to their checkable claims, kept when one is left."""
    return [r for a in audits if (r := replace(a, claims=[c for c in a.claims if c.checkable])).claims]


def _summary(audits: Sequence[SrfaRecord], gamma: float) -> dict[str, Any]:
    """The run's trajectory metrics (``metrics.faithfulness.summarize``) over audited items."""
    return summarize([as_trajectory(a) for a in audits], [float(a.score or 0.0) for a in audits], gamma)


def _coverage(audits: Iterable[SrfaRecord]) -> dict[str, float | None]:
    """Share of claims (all, SC, DC) the audit could check; judge labels count as checkable."""
    claims = [c for a in audits for c in a.claims if c.grounded is not None]

    def share(kind: str | None) -> float | None:
        sel = [c for c in claims if kind is None or c.ctype == kind]
        return sum(c.checkable for c in sel) / len(sel) if sel else None

    return {"claims": share(None), "SC": share("SC"), "DC": share("DC")}


def text_label_counts(audits: Iterable[SrfaRecord]) -> dict[str, dict[str, int]]:
    """Claims by type (SC/DC) and three-way ``TextLabel``."""
    return _counts(audits, "text_label", TextLabel)


def support_counts(audits: Iterable[SrfaRecord]) -> dict[str, dict[str, int]]:
    """Ledger-mode claims by type (SC/DC) and how they were supported (``Support``); the ``derived``
    ones are those grounded only through the trace's own claims (not grounded on the axes)."""
    return _counts(audits, "support", Support)


def _counts(audits: Iterable[SrfaRecord], attr: str, values: type[Enum]) -> dict[str, dict[str, int]]:
    """Claims by type and by the value of one label field (every value listed, zeros included)."""
    out: dict[str, dict[str, int]] = {}
    for a in audits:
        for c in a.claims:
            if (value := getattr(c, attr)) is not None:
                slot = out.setdefault(c.ctype, {v.value: 0 for v in values})
                slot[value] = slot.get(value, 0) + 1
    return out


# ------------------------------------------------------------------------------ agreement
def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """Cohen's κ and the 2×2 confusion matrix of two labelings of the same claims."""
    if len(a) != len(b):
        raise ValueError("the two labelings must cover the same claims")
    n, pairs = len(a), Counter(zip(a, b, strict=True))
    tt, ff, tf, ft = (pairs[(x, y)] for x, y in ((True, True), (False, False), (True, False), (False, True)))
    confusion = {"both_grounded": tt, "both_ungrounded": ff, "ledger_only": tf, "judge_only": ft}
    if n == 0:
        return {"n": 0, "kappa": None, "agreement": None, "confusion": confusion}
    po, pa, pb = (tt + ff) / n, (tt + tf) / n, (tt + ft) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = 1.0 if pe == 1.0 else (po - pe) / (1 - pe)
    return {"n": n, "kappa": kappa, "agreement": po, "confusion": confusion}
