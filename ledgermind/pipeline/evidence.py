"""Recording tool outputs for one item: σ and TTL policy, grounding, the P_oc pool.

Why it exists: every tool output must pass through the same σ/TTL policy (App. A, B.2) before
anything reads it (the executor records through it, then verifies: ``executor``), and
grounding (ρ, ECC, NCC) of a claim is defined by the entries it cites — one place for both keeps
them consistent.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, asdict, dataclass, replace
from typing import Any

from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim, ClaimType
from ledgermind.dispatch import QuestionProfile, QuestionType
from ledgermind.dispatch.terms import content_words
from ledgermind.grounding import GroundingCascade, GroundingResult
from ledgermind.grounding.option_labels import resolve_option_refs
from ledgermind.ledger import EvidenceEntry, Kappa, Ledger
from ledgermind.pipeline.config import PipelineConfig
from ledgermind.pipeline.render import decision_added_words, ledger_block, pool_block
from ledgermind.prompts.templates import LEDGER_TITLE, TRANSCRIPT_TITLE
from ledgermind.tools.base import Tool, ToolKind, ToolOutput

MODEL_TOOL_KINDS = frozenset({ToolKind.PLAN, ToolKind.OBSERVE, ToolKind.READ, ToolKind.VQA})


@dataclass(eq=False)
class EvidenceIO:
    item: Item
    profile: QuestionProfile
    cfg: PipelineConfig
    ledger: Ledger
    cascade: GroundingCascade
    tools: dict[str, Tool]
    _: KW_ONLY
    free_form: bool

    # ------------------------------------------------------------------ tools
    def record(
        self, out: ToolOutput, *, derived_from: Sequence[str] = (), sigma: float | None = None
    ) -> list[EvidenceEntry]:
        """σ by tool kind (App. A; a kind not listed keeps the tool's own score) and ℓ_e by kind
        (App. B.2; derivations expire through their leaves)."""
        cfg = self.cfg
        sigmas = {
            ToolKind.PLAN: cfg.sigma_plan,
            ToolKind.OBSERVE: cfg.sigma_oc,
            ToolKind.SEARCH: cfg.sigma_retrieval,
            ToolKind.OCR: cfg.sigma_ocr,
        }
        ttls = {ToolKind.SEARCH: cfg.ttl_retrieval, ToolKind.PLAN: math.inf, ToolKind.VQA: math.inf}
        return self.ledger.record(
            out,
            sigma=sigma if sigma is not None else sigmas.get(out.kind),
            default_sigma=cfg.sigma_oc,
            ttl=ttls.get(out.kind, cfg.ttl_perception),
            derived_from=derived_from,
        )

    def tool_seconds(self) -> float:
        """Time in perception/search tools, repairs' tool calls included (model-backed tools are model time)."""
        return sum(o.latency_s for o in self.ledger.tool_outputs() if o.kind not in MODEL_TOOL_KINDS)

    # ------------------------------------------------------------------ grounding
    def reading_kind(self) -> str:
        return "reading" if QuestionType.READ in self.profile.types else "other"

    def ground(self, claim: Claim, *, audit_only: bool = False) -> GroundingResult:
        """Run the cascade on a claim against its leaf pool P_c and store the verdict on it.

        ``audit_only``: no mechanism of this path acts on the verdict (the baselines' post-hoc
        audit, a decision under ``no_ledger``); the stored verdict says so, so that a census never
        counts a label nobody acted on as a flag."""
        pool = [e.fact for e in self.ledger.leaf_pool(claim.id)]
        judgment = claim.is_judgment or claim.ctype is ClaimType.DC
        text = resolve_option_refs(asserted_content(claim), self.item.options)
        res = self.cascade.check(text, pool, kind=self.reading_kind(), sigma=claim.sigma, judgment=judgment)
        if claim.ctype is ClaimType.DC and not res.grounded:
            res = self._through_judgments(claim, res)
        claim.grounding = result_dict(res) | ({"audit_only": True} if audit_only else {})
        claim.grounded = res.grounded and claim.active
        return res

    def _through_judgments(self, dc: Claim, res: GroundingResult) -> GroundingResult:
        """A decision is supported through the [J] claims it cites (App. A: DC ← SC chain).

        The lexical overlap of "B. <option text>" with evidence is low for a computed answer, so ρ
        of the DC alone would fire T5 on correct answers. When the DC cites an active, grounded
        [J] claim that concluded the same answer, the DC inherits that claim's grounding.
        """
        if self._rationale_fails(dc.text, res):
            return res  # the DC's own added words are unsupported: no [J] claim vouches for them
        for cid in dc.citations:
            j = next((c for c in self.ledger.claims(ClaimType.SC) if c.id == cid), None)
            if j is None or not (j.is_judgment and j.active and j.grounded and j.grounding):
                continue
            if self._same_answer(dc.text, j.text):
                g = j.grounding
                return replace(
                    res,
                    coverage=max(res.coverage, g["coverage"]),
                    ecc=g["ecc"],
                    ncc=g["ncc"],
                    missing_entities=(),
                    unmatched_numbers=(),
                    grounded=True,
                    cited=True,
                )
        return res

    def _rationale_fails(self, dc_text: str, res: GroundingResult) -> bool:
        """Did ECC/NCC fail on words the DC adds after its option ("B. 42; as Dr. X said")?

        Inheritance through a [J] claim covers the *choice* (a computed option's text need not be in
        the evidence); an entity or number the decision itself invents is not the [J] claim's.
        """
        why = decision_added_words(self.item, dc_text).casefold()
        if not why:
            return False
        return any(str(x).casefold() in why for x in (*res.missing_entities, *res.unmatched_numbers))

    def _same_answer(self, decision: str, conclusion: str) -> bool:
        from ledgermind.scoring.mmmu import choice_info, parse_multi_choice_response

        if self.item.options:
            index2ans, letters = choice_info(self.item.options)
            mine = parse_multi_choice_response(f"Answer: {decision}", letters, index2ans).letter
            theirs = parse_multi_choice_response(conclusion, letters, index2ans).letter
            return mine is not None and mine == theirs
        norm = " ".join(decision.lower().split()).strip(" .")
        return bool(norm) and norm in " ".join(conclusion.lower().split())

    def possible_support(self, decision: str) -> str:
        """Could any ACTIVE leaf entry support *some* answer (T5 diagnosis, census ``t5``)?

        For an MCQ: does an entry state any option (ρ(option, {f_e}) ≥ β, i.e. a decision citing
        it could pass the T5 gate); for an open question: the decision's own content. "retrieval"
        when a RETRIEVAL entry could, "perception" when only PERCEPTION entries could, "none" when
        no entry could — then no re-decision can pass T5 and only new evidence can change that.
        """
        from ledgermind.grounding.coverage import support_coverage

        targets = [o for o in (self.item.options or []) if o.strip()] or [decision]
        kinds = {
            e.kappa
            for e in self.ledger.active()
            if e.kappa in {Kappa.PERCEPTION, Kappa.RETRIEVAL}
            and any(support_coverage(t, [e.fact]) >= self.cfg.grounding.beta for t in targets)
        }
        return "retrieval" if Kappa.RETRIEVAL in kinds else ("perception" if kinds else "none")

    def p_oc(self) -> list[EvidenceEntry]:
        """P_oc: active TEXT and NUMBER evidence — categorised OCs plus OCR lines (Alg. 1 line 4)."""
        out = []
        for e in self.ledger.active():
            origin = self.ledger.tool_output(e.tool_call_id)
            kind = origin.kind if origin else None
            if kind is ToolKind.OCR or (
                kind in {ToolKind.OBSERVE, ToolKind.READ} and (e.category in {"TEXT", "NUMBER", None})
            ):
                out.append(e)
        return out

    def p_oc_block(self) -> str:
        return pool_block([e.fact for e in self.p_oc()])

    def evidence_title(self) -> str:
        return TRANSCRIPT_TITLE if self.free_form else LEDGER_TITLE

    def evidence_block(self) -> str:
        """What reasoning and decision prompts show: the ledger, or (no_ledger) a numbered transcript."""
        if self.free_form:
            return (
                "\n".join(f"[{e.id}] {e.src}: {e.fact}" for e in self.ledger.entries()) or "(no tool output)"
            )
        return ledger_block(self.ledger)


# ---------------------------------------------------------------------- search queries (App. D.6)
def _entities(ev: EvidenceIO, texts: list[str]) -> list[str]:
    ner = ev.cascade.ner
    found = (e.text for t in texts for e in (ner.entities(t) if ner else ()) if not e.is_numeric)
    return list(dict.fromkeys(found))


def extract_query(ev: EvidenceIO, round1: list[EvidenceEntry] | None = None, max_words: int = 16) -> str:
    """Round 1: entities from the OCs (P_oc) plus the question's content words. Round 2 (deep
    knowledge, given ``round1``): the question refined with entities found in round-1 results."""
    words = content_words(ev.item.question)
    if round1 is None:
        words = [*_entities(ev, [e.fact for e in ev.p_oc()])[:4], *words]
    else:
        words = [*words[:8], *_entities(ev, [e.fact for e in round1])[:4]]
    return " ".join(list(dict.fromkeys(words))[:max_words])


def result_dict(r: GroundingResult) -> dict[str, Any]:
    d = asdict(r)
    d["missing_entities"] = list(r.missing_entities)
    d["unmatched_numbers"] = list(r.unmatched_numbers)
    return d


_OPTION_LABEL = re.compile(r"^\s*\(?[A-J]\)?[.):]\s+(?=\S)")


def asserted_content(claim: Claim) -> str:
    """What a claim asserts, for grounding. A DC reads "E. <option text>" so the audit shows both
    the letter and what it stands for, but the label is layout: ECC would take "E." for an entity
    and NCC for a number, and demote a correct decision whose option text is in the evidence."""
    if claim.ctype is ClaimType.DC:
        return _OPTION_LABEL.sub("", claim.text, count=1)
    return claim.text
