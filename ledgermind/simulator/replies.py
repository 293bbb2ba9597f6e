"""What the simulated model writes for each recognised task, with the faults drawn for it.

Why a module of its own: this is the behavioural model of Table 3's failure modes (F2 phantom
entities and misattributions of real ones, misreadings in crops, observations and decisions, F3
flips, F4 reflection that amplifies, breaks and fixes, T1 format breaks), each a single, visible
decision here, so a reader can check that the simulator injects exactly what the census later
counts. Faults occur wherever a real model makes them, not only where a check looks; and no
behaviour reads an agent constant (README, "Simulated backbone", has the table). Inputs are the
prompt view, the item from the answer key (if recognised), what vision read from the attached
images, and a seeded RNG; the output is text (or a JSON payload when a schema was requested) plus
the list of injected faults.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind.simulator.answer_key import NUMBER_RE, KeyEntry
from ledgermind.simulator.faults import Fault, FaultRates, Injected
from ledgermind.simulator.tasks import LONG_CHAIN, REASONING, SHORT, PromptView, Task, normalise

# Named entities a model might invent; one that occurs in the prompt's evidence is not drawn. Their
# in-evidence counterpart is the relation fault (``Mind.relation``), which names a real entity.
PHANTOM_ENTITIES: tuple[str, ...] = (
    "Harold Finnegan", "the Meridian Institute", "Professor Ingrid Kowalczyk", "the Halvorsen Commission",
    "Dr. Tobias Wren", "the Ashcombe Laboratory", "Marguerite Delacroix-Vance", "the Oberlin Survey",
)  # fmt: skip
ANSWER_IS = re.compile(r"answer is\s+(?:option\s+)?([A-J](?![\w])|-?\d+(?:\.\d+)?)", re.IGNORECASE)
CURRENT_ANSWER = re.compile(r"current answer:\s*(.+)", re.IGNORECASE)


@dataclass
class Draft:
    """A reply under construction: plain text, an optional JSON payload, and the faults injected."""

    text: str
    payload: dict[str, Any] | None = None
    faults: list[Injected] = field(default_factory=list)


@dataclass
class Mind:
    """One request's view of the world: rates, RNG, the recognised item, the prompt, what it sees."""

    rates: FaultRates
    rng: random.Random
    entry: KeyEntry | None
    view: PromptView
    look: Callable[[], Sequence[str]]  # OCR lines of the attached images (empty: no images, nothing legible)
    has_images: bool
    _seen: Sequence[str] | None = None

    @property
    def seen(self) -> Sequence[str]:
        """What vision reads, computed only for replies that use it (OCR is the expensive part)."""
        if self._seen is None:
            self._seen = tuple(self.look())
        return self._seen

    # ------------------------------------------------------------------ answers
    def choose(self, evidence: str | None = None) -> tuple[str, bool]:
        """Gold with p_correct (+ grounding_bonus when the evidence states it), else a distractor."""
        e = self.entry
        if e is None:
            return "", False
        ev = self.view.evidence if evidence is None else evidence
        p = self.rates.p_correct + (self.rates.grounding_bonus if e.evidence_has(e.gold, ev) else 0.0)
        if self.rng.random() < min(1.0, p):
            return e.gold, True
        return self.distractor(), False

    def distractor(self) -> str:
        e = self.entry
        assert e is not None
        if e.is_mcq:
            others = [x for x in e.letters() if x != e.gold]
            return self.rng.choice(others) if others else e.gold
        g = e.gold_number
        if g is None:
            return "none of the above"
        return fmt(self.off_by(g))

    def off_by(self, value: float) -> float:
        r = self.rates
        f = self.rng.uniform(r.misread_min, r.misread_max) * self.rng.choice((-1.0, 1.0))
        return value * (1.0 + f) if value != 0 else f * 10

    def _rate(self, reasoning: float, short: float) -> float:
        t = self.view.task
        return reasoning if t in REASONING else short if t in SHORT else 0.0

    def phantom(self) -> Injected | None:
        """F2: draw whether this reply invents an entity (a warning damps it by ``warning_effect``)."""
        if self.entry is None:
            return None
        rate = self._rate(self.rates.phantom_rate, self.rates.short_phantom_rate)
        rate *= self.rates.warning_effect if self.view.warned else 1.0
        if self.rng.random() >= min(1.0, rate):
            return None
        text = normalise(self.view.evidence)
        candidates = [p for p in PHANTOM_ENTITIES if normalise(p) not in text] or list(PHANTOM_ENTITIES)
        return Injected(Fault.PHANTOM, {"entity": self.rng.choice(candidates), "answer": self.distractor()})

    def relation(self) -> Injected | None:
        """F2 that entity checks cannot see: a name that IS in the evidence, tied to a wrong answer."""
        if self.entry is None:
            return None
        rate = self._rate(self.rates.relation_rate, self.rates.short_relation_rate)
        rate *= self.rates.warning_effect if self.view.warned else 1.0
        if self.rng.random() >= min(1.0, rate):
            return None
        names = in_evidence_names([ln.fact for ln in self.view.ledger] or self.seen, self.view.evidence)
        if not names:
            return None  # nothing named in the evidence to misattribute
        return Injected(Fault.RELATION, {"entity": self.rng.choice(names), "answer": self.distractor()})

    def confabulate(self) -> Injected | None:
        """An invented entity, else a misattributed real one (each at its own rate), else nothing."""
        return self.phantom() or self.relation()

    def flip(self, answer: str, correct: bool) -> tuple[str, Injected | None]:
        """F3: on knowledge questions a chain (or, rarer, a one-line answer) talks itself out of a
        correct answer."""
        e = self.entry
        t = self.view.task
        r = self.rates
        rate = r.overthink_flip_rate if t in LONG_CHAIN else r.short_flip_rate if t in SHORT else 0.0
        if not (correct and e is not None and e.is_knowledge and rate > 0):
            return answer, None
        if self.rng.random() >= rate:
            return answer, None
        wrong = self.distractor()
        return wrong, Injected(Fault.FLIP, {"from": answer, "to": wrong})

    def reasoned_answer(self) -> tuple[str, list[Injected], str | None]:
        """Answer of a reply: chosen, maybe flipped, maybe replaced by a confabulation's distractor."""
        answer, correct = self.choose()
        answer, flipped = self.flip(answer, correct)
        faults = [flipped] if flipped else []
        if conf := self.confabulate():
            faults.append(conf)
            return conf.detail["answer"], faults, conf.detail["entity"]
        return answer, faults, None

    def misread_answer(self, answer: str) -> tuple[str, Injected | None]:
        """A numeric final answer re-read from the attached image, off by misread_min..misread_max."""
        e = self.entry
        if e is None or e.gold_number is None or not self.has_images:
            return answer, None
        try:
            value = float(answer)
        except ValueError:
            return answer, None
        if self.rng.random() >= self.rates.decide_misread_rate:
            return answer, None
        wrong = fmt(self.off_by(value))
        return wrong, Injected(Fault.MISREAD, {"value": float(wrong), "true": value})

    # ------------------------------------------------------------------ helpers
    def supporting_ids(self, answer: str, limit: int = 2) -> list[str]:
        e = self.entry
        ids = [ln.id for ln in self.view.ledger if e is not None and e.evidence_has(answer, ln.fact)]
        return (ids or [ln.id for ln in self.view.ledger])[:limit]

    def cites_for(self, answer: str, entity: str | None) -> list[str]:
        """What a reply cites: the entries naming the entity it brings in (a misattribution cites the
        real source of the name it misuses), then those stating the answer."""
        named = [ln.id for ln in self.view.ledger if entity and normalise(entity) in normalise(ln.fact)]
        return list(dict.fromkeys(named + self.supporting_ids(answer)))[:2]

    def display(self, answer: str) -> str:
        return self.entry.display(answer) if self.entry else answer


# Ledger facts that are a model's own earlier replies, not something the image or a source names.
NOT_A_NAME = re.compile(
    r"^\s*(answer\b|i am\b|i cannot\b|let me\b|reading\b|no image\b|an image\b|\d+\.\s)", re.IGNORECASE
)


def in_evidence_names(facts: Sequence[str], evidence: str, max_words: int = 5) -> list[str]:
    """Short names printed in the evidence (ledger facts, else what the image shows): their first
    few words, kept if they hold a capitalised word, are not a model's own reply, and the prompt
    states them."""
    norm = normalise(evidence)
    out: list[str] = []
    for fact in facts:
        name = " ".join(fact.split()[:max_words]).strip(" .,;:")
        if not name or NOT_A_NAME.match(name) or not re.search(r"\b[A-Z][^\W\d_]{2,}", name):
            continue
        if normalise(name) in norm and name not in out:
            out.append(name)
    return out


def fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.4g}"


def _answer_line(answer: str, entity: str | None) -> str:
    return f"Answer: {answer}, as {entity} described" if entity else f"Answer: {answer}"


# ---------------------------------------------------------------------------------- per task
def plan(m: Mind) -> Draft:
    return Draft(
        "1. Observation targets: the parts of the image the question refers to, and any printed text or values.\n"
        "2. Reasoning method: compare what is observed with each candidate answer.\n"
        "3. Judgment criteria: an answer is confirmed only by visible evidence or retrieved facts.\n"
        "4. Answer form: " + ("option letter" if m.entry and m.entry.is_mcq else "short answer") + "\n"
        "5. Answer granularity: as the question asks."
    )


def observe(m: Mind) -> Draft:
    """What vision reads, as TEXT/NUMBER observations; each number may be misread. Nothing else:
    the answer key never enters evidence (it decides only whether a final answer is right)."""
    if not m.has_images:
        return Draft("[OC-1] TEXT | no image is attached", {"observations": []})
    cats = m.view.categories or ("TEXT",)
    text_cat = "TEXT" if "TEXT" in cats else cats[0]
    num_cat = "NUMBER" if "NUMBER" in cats else text_cat
    scene_cat = next((c for c in cats if c not in {"TEXT", "NUMBER"}), cats[0])
    obs: list[tuple[str, str]] = []
    faults: list[Injected] = []
    if m.view.focus and m.entry is not None:
        seen, fault = focused_look(m, m.entry)
        obs += [(scene_cat, seen)] if seen else []
        faults += [fault] if fault else []
    for line in m.seen[: m.view.max_items - len(obs)]:
        line, fault = misread_line(m, line)
        faults += [fault] if fault else []
        obs.append((num_cat if NUMBER_RE.fullmatch(line.strip()) else text_cat, line))
    if not obs:
        obs.append((scene_cat, "an image with no legible text"))
    text = "\n".join(f"[OC-{i}] {c} | {t}" for i, (c, t) in enumerate(obs, 1))
    return Draft(text, {"observations": [{"category": c, "text": t} for c, t in obs]}, faults)


def focused_look(m: Mind, e: KeyEntry) -> tuple[str, Injected | None]:
    """A look focused on an answer the request names ("evidence for or against: B. Apollo 11"):
    the model reports seeing it when it is right and not when it is wrong (non-text perception of
    what the request asks about); at ``misperceive_rate`` it reports the opposite. The content it
    states comes from the request; the key decides only whether that content is true."""
    named = named_answer(e, m.view.focus)
    if not named:
        return "", None
    truthful = m.rng.random() >= m.rates.misperceive_rate
    sees = e.is_gold(named) == truthful
    fault = None if truthful else Injected(Fault.MISPERCEIVE, {"named": named, "reported": sees})
    if not sees:
        return "", fault
    return (e.option_text(named) if e.is_mcq else f"the value shown is {named}"), fault


def named_answer(e: KeyEntry, focus: str) -> str:
    """The option letter ("B. Apollo 11" → "B") or the number a focus text names ("" if none)."""
    if e.is_mcq:
        hit = re.match(r"\s*\(?([A-J])[.):]", focus)
        return hit.group(1) if hit and e.option_text(hit.group(1)) else ""
    num = NUMBER_RE.search(focus)
    return num.group() if num else ""


def misread_line(m: Mind, line: str) -> tuple[str, Injected | None]:
    """A transcribed line with its first number misread at ``observe_misread_rate``."""
    hit = NUMBER_RE.search(line)
    if hit is None or m.rng.random() >= m.rates.observe_misread_rate:
        return line, None
    true = float(hit.group())
    wrong = fmt(m.off_by(true))
    fault = Injected(Fault.MISREAD, {"value": float(wrong), "true": true})
    return line[: hit.start()] + wrong + line[hit.end() :], fault


def reason(m: Mind) -> Draft:
    answer, faults, entity = m.reasoned_answer()
    cites = m.cites_for(answer, entity)  # real ids; for a phantom none of them names the entity
    e_text = next((ln.fact for ln in m.view.ledger if ln.id in cites), "the observations")
    j_text = f"The answer is {m.display(answer)}"
    if entity:
        j_text = f"According to {entity}, the answer is {m.display(answer)}"
    claims = [("E", f"The evidence shows: {e_text}", cites)]
    claims.append(("I", f"This is consistent with {m.display(answer)}", ["SC-1"]))
    claims.append(("J", j_text, cites + ["SC-2"]))
    lines = [f"[SC-{i}][{s}] {t} | Based on: {', '.join(f'[{c}]' for c in cs)}" for i, (s, t, cs) in enumerate(claims, 1)]
    payload = {"claims": [{"stage": s, "text": t, "cites": cs} for s, t, cs in claims]}
    return Draft("\n".join(lines), payload, faults)


def followed_claim(m: Mind) -> str | None:
    """The answer of the most confident [J] claim shown, echoed with probability
    confidence ** ``follow_sharpness``: a smooth trust in the printed confidence, with no cut-off of
    its own (and none of the agent's); otherwise the model decides afresh."""
    judged = sorted((c for c in m.view.claims if c.stage == "J"), key=lambda c: -c.sigma)
    hits = [(c, hit) for c in judged if (hit := ANSWER_IS.search(c.text))]
    if not hits:
        return None
    claim, hit = hits[0]
    if m.rng.random() >= max(0.0, min(1.0, claim.sigma)) ** m.rates.follow_sharpness:
        return None
    return hit.group(1).upper() if m.entry and m.entry.is_mcq else hit.group(1)


def decide(m: Mind) -> Draft:
    followed = followed_claim(m)
    if followed is not None:
        answer, faults, entity = followed, [], None
        if conf := m.confabulate():
            faults.append(conf)
            answer, entity = conf.detail["answer"], conf.detail["entity"]
    else:
        answer, faults, entity = m.reasoned_answer()
    if entity is None:
        answer, misread = m.misread_answer(answer)
        faults += [misread] if misread else []
    cites = m.cites_for(answer, entity)
    text = f"{_answer_line(answer, entity)} | Based on: {', '.join(f'[{c}]' for c in cites)}"
    shown = f"{answer}, as {entity} described" if entity else answer
    return Draft(text, {"answer": shown, "cites": cites}, faults)


def hypothesis(m: Mind) -> Draft:
    answer, faults, entity = m.reasoned_answer()
    hyp = re.search(r"Current hypothesis:\s*(.+)", m.view.evidence)
    current = ANSWER_IS.search(hyp.group(1)) if hyp else None
    same = current is not None and current.group(1).upper() == answer.upper()
    lead = f"According to {entity}, " if entity else ""
    conclusion = f"Confirm: {hyp.group(1).strip()}" if same and hyp else f"Revise: {lead}the answer is {m.display(answer)}"
    return Draft(
        "1. Supporting evidence: " + ("; ".join(m.seen[:2]) or "none visible") + "\n"
        "2. Contradicting evidence: None\n3. Conclusion: " + conclusion,
        faults=faults,
    )


def short_answer(m: Mind, *, prefix: str = "Answer: ") -> Draft:
    """DIRECT / ENTITY_RECHECK / VISUAL_FALLBACK / CONCISE: one line with the answer (which may be
    flipped or confabulated at the one-line rates)."""
    answer, faults, entity = m.reasoned_answer()
    if not answer:
        return generic(m)
    return Draft((prefix + answer) if not entity else _answer_line(answer, entity), faults=faults)


def read(m: Mind) -> Draft:
    """A context-free reading: the needle value for a known gauge, else the first number legible."""
    true = m.entry.gold_number if m.entry is not None else None
    if true is None:
        nums = [float(n) for line in m.seen for n in NUMBER_RE.findall(line)]
        true = nums[0] if nums else None
    if true is None:
        return Draft("I cannot make out a value in this crop.", {"value": None})
    value, faults = true, []
    if m.rng.random() < m.rates.misread_rate:
        value = float(fmt(m.off_by(true)))
        faults.append(Injected(Fault.MISREAD, {"value": value, "true": true}))
    return Draft(fmt(value), {"value": value, "unit": ""}, faults)


def reflect(m: Mind) -> Draft:
    """F4: self-reflection without new evidence rewrites the reasoning around the answer it has and
    may add a claim supported by nothing; it changes a correct answer to a wrong one, or a wrong one
    to the right one, at their own rates (self-correction without feedback does both); it
    re-answers only when there is no answer."""
    current = CURRENT_ANSWER.search(m.view.evidence)
    held = current.group(1).strip() if current else ""
    if m.entry is not None and m.entry.is_mcq:  # an MCQ answer is a letter; anything else is re-answered
        letter = re.match(r"([A-J])\b", held)
        held = letter.group(1) if letter else ""
    answer = held if held and not held.startswith("(") else m.choose()[0]
    faults: list[Injected] = []
    lines = ["Critique: the flagged step may not follow from the observations; re-checking it."]
    if m.rng.random() < m.rates.reflection_amplify_rate:
        entity = m.rng.choice(PHANTOM_ENTITIES)
        sentence = f"Moreover, {entity} reported exactly this finding."
        lines.append(sentence)
        faults.append(Injected(Fault.AMPLIFY, {"text": sentence, "entity": entity}))
    if answer and m.entry is not None:
        answer, change = rethink(m, answer)
        faults += [change] if change else []
    lines.append(f"Rewrite: the answer is {m.display(answer)}." if answer else "Rewrite: unchanged.")
    lines.append(f"Answer: {answer or '(unchanged)'}")
    return Draft("\n".join(lines), faults=faults)


def rethink(m: Mind, answer: str) -> tuple[str, Injected | None]:
    """Reflection's own change of answer: right → wrong at ``reflection_break_rate``, wrong → right
    at ``reflection_fix_rate`` (the latter recorded too, so the census shows both directions)."""
    e = m.entry
    assert e is not None
    if e.is_gold(answer):
        if m.rng.random() < m.rates.reflection_break_rate:
            wrong = m.distractor()
            return wrong, Injected(Fault.REFLECT_BREAK, {"from": answer, "to": wrong})
    elif m.rng.random() < m.rates.reflection_fix_rate:
        return e.gold, Injected(Fault.REFLECT_FIX, {"from": answer, "to": e.gold})
    return answer, None


def chain(m: Mind) -> Draft:
    """NATIVE_COT / NO_LEDGER: a step-by-step chain ending in 'Answer:'."""
    answer, faults, entity = m.reasoned_answer()
    if not answer:
        return generic(m)
    cite = " [1]" if m.view.task is Task.NO_LEDGER and "[1]" in m.view.evidence else ""
    steps = [
        f"Step 1: The tool outputs show: {'; '.join(m.seen[:2]) or 'little legible text'}{cite}.",
        f"Step 2: Weighing the candidates, {m.display(answer)} fits best"
        + (f", as {entity} established." if entity else "."),
        f"Answer: {answer}",
    ]
    return Draft("\n".join(steps), faults=faults)


def generic(m: Mind) -> Draft:
    """An unrecognised prompt: a short generic answer (what is legible, if anything)."""
    return Draft("; ".join(m.seen[:3]) if m.seen else "I am not sure.")


def compose(m: Mind) -> Draft:
    t = m.view.task
    if t is Task.PLAN:
        return plan(m)
    if t is Task.OBSERVE:
        return observe(m)
    if t is Task.REASON:
        return reason(m) if m.entry else generic(m)
    if t is Task.DECIDE:
        return decide(m) if m.entry else generic(m)
    if t is Task.HYPOTHESIS:
        return hypothesis(m) if m.entry else generic(m)
    if t is Task.READ:
        return read(m)
    if t is Task.REFLECT:
        return reflect(m)
    if t in {Task.NATIVE_COT, Task.NO_LEDGER}:
        return chain(m)
    if t in {Task.DIRECT, Task.ENTITY_RECHECK, Task.VISUAL_FALLBACK}:
        return short_answer(m)
    if t is Task.CONCISE:
        return short_answer(m, prefix="")
    return generic(m)
