"""What the simulated model writes for each recognised task, with the faults drawn for it.

Why a module of its own: this is the behavioural model behind a simulated Table 3, each decision
visible here so a reader can check that nothing in it knows the answer:

* **the answer** a reply states is the model's belief about the item (``beliefs.py``: a real
  model's recorded answers, or a measurable scene perceived through noise), re-drawn when a changed
  request re-rolls the reply (``rephrase_sensitivity``), pulled towards an option the evidence
  states (whichever option that is), or — with ``follow_rate``, whatever confidence is printed —
  the latest judgment the prompt shows;
* **faults** (a phantom entity, a misattributed real one, a mistranscribed number, a suggestible
  focused look, broken or empty replies) are drawn independently of whether that answer is right;
  a phantom or relation fault changes the answer only with ``fault_coupling`` (default 0);
* **the same rates everywhere**: no task, path or ablation has rates of its own.

Inputs are the prompt view, the item as the model can know it, its belief, what vision reads from
the attached images, and seeded RNGs; the output is text (or a JSON payload when a schema was
requested) plus the list of injected faults.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledgermind.simulator.beliefs import Belief, ReadingModel, laplace
from ledgermind.simulator.faults import Fault, FaultRates, Injected
from ledgermind.simulator.items import NUMBER_RE, SeenItem
from ledgermind.simulator.tasks import PromptView, Task, normalise

# Named entities a model might invent; one that occurs in the prompt's evidence is not drawn. Their
# in-evidence counterpart is the relation fault (``Mind.relation``), which names a real entity.
PHANTOM_ENTITIES: tuple[str, ...] = (
    "Harold Finnegan",
    "the Meridian Institute",
    "Professor Ingrid Kowalczyk",
    "the Halvorsen Commission",
    "Dr. Tobias Wren",
    "the Ashcombe Laboratory",
    "Marguerite Delacroix-Vance",
    "the Oberlin Survey",
)


@dataclass
class Draft:
    """A reply under construction: plain text, an optional JSON payload, and the faults injected."""

    text: str
    payload: dict[str, Any] | None = None
    faults: list[Injected] = field(default_factory=list)
    answer: str | None = None  # the answer the reply states (recorded for the census)
    # a scene reading: value, the scene's truth, graduation (census only)
    reading: dict[str, float] | None = None


@dataclass
class Mind:
    """One request's view of the world: rates, RNGs, the item, its belief, the prompt, what it sees.

    ``rng`` draws everything of this reply; ``redrawn`` says whether the request re-rolled the
    reply (then ``rng`` is seeded by the request's bytes, else by its content), and ``item_rng``
    is fixed per (seed, item): the first answer the model holds."""

    rates: FaultRates
    rng: random.Random
    item_rng: Callable[[str], random.Random]
    redrawn: bool
    item: SeenItem | None
    belief: Belief | None
    view: PromptView
    look: Callable[[], Sequence[str]]  # OCR lines of the attached images
    item_look: Callable[[], Sequence[str]]  # OCR lines of the item's own images (its full view)
    has_images: bool
    zoomed: bool  # the attached image is a crop the agent made (a PIL image), not an item file
    _seen: Sequence[str] | None = None

    @property
    def seen(self) -> Sequence[str]:
        """What vision reads, computed only for replies that use it (OCR is the expensive part)."""
        if self._seen is None:
            self._seen = tuple(self.look())
        return self._seen

    @property
    def reader(self) -> ReadingModel:
        r = self.rates
        return ReadingModel(r.read_noise, r.unanchored_noise, r.zoom_precision, r.gross_error_rate)

    # ------------------------------------------------------------------ the answer
    def own_answer(self) -> str:
        """The belief's first answer for this item, or a fresh draw when the request re-rolled, then
        possibly pulled to an option the evidence states."""
        it = self.item
        if it is None:
            return ""
        if it.scene is not None:
            rng = self.rng if self.redrawn else self.item_rng("reading")
            return fmt(self.reader.read(it.scene, rng, legible=self.item_look(), zoomed=False))
        if self.belief is None or not self.belief.answers:
            return ""
        answer = self.belief.draw(self.rng if self.redrawn else self.item_rng("belief"))
        return self.pulled(answer)

    def pulled(self, answer: str) -> str:
        """Evidence stating an option pulls the answer to it with ``evidence_pull`` (the belief
        weighs between several stated ones); which option is right plays no part."""
        it, b = self.item, self.belief
        if it is None or b is None:
            return answer
        evidence = "\n".join(self.view.facts())
        stated = [x for x in it.letters() if it.states(x, evidence)]
        if not stated or self.rng.random() >= self.rates.evidence_pull:
            return answer
        return Belief(tuple(stated), tuple(b.weight(x) + 1e-9 for x in stated), b.source).draw(self.rng)

    def answer_with_faults(self) -> tuple[str, list[Injected], str | None]:
        """(answer, faults, entity): the shown judgment (``follow_rate``) or the model's own answer,
        then a confabulation drawn independently of it, changing it only with ``fault_coupling``."""
        shown = self.as_answer(self.view.shown_judgment())
        answer = shown if shown and self.rng.random() < self.rates.follow_rate else self.own_answer()
        if not answer:
            return "", [], None
        conf = self.phantom() or self.relation()
        if conf is None:
            return answer, [], None
        if self.rng.random() < self.rates.fault_coupling:
            changed = self.changed(answer)
            conf.detail.update({"answer": changed, "from": answer, "coupled": True})
            answer = changed
        else:
            conf.detail.update({"answer": answer, "coupled": False})
        return answer, [conf], conf.detail["entity"]

    def as_answer(self, shown: str | None) -> str | None:
        """A shown judgment as an answer of this item (a letter it offers, or a number)."""
        it = self.item
        if not shown or it is None:
            return None
        if it.is_mcq:
            return shown.upper() if shown.upper() in it.letters() else None
        return shown if NUMBER_RE.fullmatch(shown) else None

    def changed(self, answer: str) -> str:
        """Another answer: a belief draw other than ``answer`` (MCQ), or a fresh reading (scene)."""
        it = self.item
        assert it is not None
        if it.scene is not None:
            delta = laplace(self.rng, max(it.scene.graduation, 1e-6) * 2) or it.scene.graduation
            return fmt(float(answer) + delta)
        if self.belief is None:
            return answer
        return self.belief.draw(self.rng, exclude=[answer])

    def phantom(self) -> Injected | None:
        """F2: this reply invents an entity (at the one ``phantom_rate``)."""
        if self.rng.random() >= self.rates.phantom_rate:
            return None
        text = normalise(self.view.context)
        candidates = [p for p in PHANTOM_ENTITIES if normalise(p) not in text] or list(PHANTOM_ENTITIES)
        return Injected(Fault.PHANTOM, {"entity": self.rng.choice(candidates)})

    def relation(self) -> Injected | None:
        """F2 that entity checks cannot see: a name that IS in the evidence, tied to the answer."""
        if self.rng.random() >= self.rates.relation_rate:
            return None
        names = in_evidence_names(self.view.facts() or list(self.seen), self.view.context)
        if not names:
            return None  # nothing named in the evidence to misattribute
        return Injected(Fault.RELATION, {"entity": self.rng.choice(names)})

    # ------------------------------------------------------------------ helpers
    def cites_for(self, answer: str, entity: str | None) -> list[str]:
        """What a reply cites: the entries naming the entity it brings in (a misattribution cites the
        real source of the name it misuses), then the first two stating the answer (else any two)."""
        it, evidence = self.item, self.view.evidence
        named = [e.id for e in evidence if entity and normalise(entity) in normalise(e.fact)]
        stating = [e.id for e in evidence if it is not None and it.states(answer, e.fact)]
        return list(dict.fromkeys(named + (stating or [e.id for e in evidence])[:2]))[:2]

    def display(self, answer: str) -> str:
        return self.item.display(answer) if self.item else answer


# Evidence facts that are a model's own earlier replies, not something the image or a source names.
NOT_A_NAME = re.compile(
    r"^\s*(answer\b|i am\b|i cannot\b|let me\b|reading\b|no image\b|an image\b|\d+\.\s)", re.IGNORECASE
)


def in_evidence_names(facts: Sequence[str], context: str, max_words: int = 5) -> list[str]:
    """Short names printed in the evidence: their first few words, kept if they hold a capitalised
    word, are not a model's own reply, and the prompt states them."""
    norm = normalise(context)
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


def _stated(answer: str, entity: str | None) -> str:
    """The answer as a reply states it (a confabulation attributes it to its entity)."""
    return f"{answer}, as {entity} described" if entity else answer


# ---------------------------------------------------------------------------------- per task
def plan(m: Mind) -> Draft:
    return Draft(
        "1. Observation targets: the parts of the image the question refers to, and any printed text or values.\n"
        "2. Reasoning method: compare what is observed with each candidate answer.\n"
        "3. Judgment criteria: an answer is confirmed only by visible evidence or retrieved facts.\n"
        "4. Answer form: " + ("option letter" if m.item and m.item.is_mcq else "short answer") + "\n"
        "5. Answer granularity: as the question asks."
    )


def observe(m: Mind) -> Draft:
    """What vision reads, as TEXT/NUMBER observations (each number may be mistranscribed), plus —
    when the request names an option to look for — what a focused look reports."""
    if not m.has_images:
        return Draft("[OC-1] TEXT | no image is attached", {"observations": []})
    cats = m.view.categories or ("TEXT",)
    text_cat = "TEXT" if "TEXT" in cats else cats[0]
    num_cat = "NUMBER" if "NUMBER" in cats else text_cat
    scene_cat = next((c for c in cats if c not in {"TEXT", "NUMBER"}), cats[0])
    obs: list[tuple[str, str]] = []
    faults: list[Injected] = []
    for named in m.item.named_in(m.view.context) if m.item is not None else []:
        seen, fault = focused_look(m, named)
        obs += [(scene_cat, seen)] if seen else []
        faults += [fault] if fault else []
    for line in m.seen[: max(0, m.view.max_items - len(obs))]:
        line, fault = misread_line(m, line)
        faults += [fault] if fault else []
        obs.append((num_cat if NUMBER_RE.fullmatch(line.strip()) else text_cat, line))
    if not obs:
        obs.append((scene_cat, "an image with no legible text"))
    text = "\n".join(f"[OC-{i}] {c} | {t}" for i, (c, t) in enumerate(obs, 1))
    return Draft(text, {"observations": [{"category": c, "text": t} for c, t in obs]}, faults)


def focused_look(m: Mind, named: str) -> tuple[str, Injected | None]:
    """A look for a named option reports seeing it when the model believes it, and — with
    ``look_agree``, suggestible — also when it believes another; the key plays no part."""
    it = m.item
    assert it is not None
    believed = m.own_answer()
    if it.same_answer(believed, named):
        return it.option_text(named), None
    if m.rng.random() < m.rates.look_agree:
        return it.option_text(named), Injected(Fault.SUGGESTED, {"named": named, "believed": believed})
    return "", None


def misread_line(m: Mind, line: str) -> tuple[str, Injected | None]:
    """A transcribed line with its first number mistranscribed at ``observe_misread_rate``, by a
    continuous relative error (Laplace, scale ``observe_misread_scale``)."""
    hit = NUMBER_RE.search(line)
    if hit is None or m.rng.random() >= m.rates.observe_misread_rate:
        return line, None
    true = float(hit.group())
    wrong = fmt(true * (1 + laplace(m.rng, m.rates.observe_misread_scale)) if true else laplace(m.rng, 1.0))
    if wrong == hit.group():
        return line, None
    fault = Injected(Fault.MISREAD, {"value": float(wrong), "true": true, "where": "transcription"})
    return line[: hit.start()] + wrong + line[hit.end() :], fault


def reason(m: Mind, answer: str, faults: list[Injected], entity: str | None) -> Draft:
    cites = m.cites_for(answer, entity)  # real ids; for a phantom none of them names the entity
    e_text = next((e.fact for e in m.view.evidence if e.id in cites), "the observations")
    j_text = (f"According to {entity}, the" if entity else "The") + f" answer is {m.display(answer)}"
    claims = [("E", f"The evidence shows: {e_text}", cites)]
    claims.append(("I", f"This is consistent with {m.display(answer)}", ["SC-1"]))
    claims.append(("J", j_text, cites + ["SC-2"]))
    lines = [
        f"[SC-{i}][{s}] {t} | Based on: {', '.join(f'[{c}]' for c in cs)}"
        for i, (s, t, cs) in enumerate(claims, 1)
    ]
    payload = {"claims": [{"stage": s, "text": t, "cites": cs} for s, t, cs in claims]}
    return Draft("\n".join(lines), payload, faults, answer)


def decide(m: Mind, answer: str, faults: list[Injected], entity: str | None) -> Draft:
    cites = m.cites_for(answer, entity)
    shown = _stated(answer, entity)
    text = f"Answer: {shown} | Based on: {', '.join(f'[{c}]' for c in cites)}"
    return Draft(text, {"answer": shown, "cites": cites}, faults, answer)


def hypothesis(m: Mind, answer: str, faults: list[Injected], entity: str | None) -> Draft:
    assert m.item is not None
    current = m.as_answer(m.view.shown_judgment())
    same = current is not None and m.item.same_answer(current, answer) and entity is None
    lead = "Confirm: " if same else "Revise: " + (f"According to {entity}, " if entity else "")
    conclusion = f"{lead}the answer is {m.display(answer)}"
    return Draft(
        "1. Supporting evidence: " + ("; ".join(m.seen[:2]) or "none visible") + "\n"
        "2. Contradicting evidence: None\n3. Conclusion: " + conclusion,
        faults=faults,
        answer=answer,
    )


def answer_line(m: Mind, answer: str, faults: list[Injected], entity: str | None) -> Draft:
    """Any request for an "Answer: <answer>" line: one line with the answer (and, for a
    confabulation, the entity it is attributed to)."""
    return Draft(f"Answer: {_stated(answer, entity)}", faults=faults, answer=answer)


def read(m: Mind) -> Draft:
    """A context-free reading of the attached image: a measurable scene through the reading noise
    (anchored by the scale labels legible in these pixels), else the first number legible."""
    scene = m.item.scene if m.item is not None else None
    if scene is not None:
        value = m.reader.read(scene, m.rng, legible=m.seen, zoomed=m.zoomed)
        misread = Injected(Fault.MISREAD, {"value": value, "true": scene.value, "where": "reading"})
        return Draft(
            fmt(value),
            {"value": value, "unit": ""},
            [misread] if m.reader.misread(scene, value) else [],
            fmt(value),
            reading={"value": value, "true": scene.value, "graduation": scene.graduation},
        )
    nums = [float(n) for line in m.seen for n in NUMBER_RE.findall(line)]
    if not nums:
        return Draft("I cannot make out a value in this crop.", {"value": None})
    return Draft(fmt(nums[0]), {"value": nums[0], "unit": ""}, [], fmt(nums[0]))


def generic(m: Mind) -> Draft:
    """A request with no recognised format: what is legible, if anything."""
    return Draft("; ".join(m.seen[:3]) if m.seen else "I am not sure.")


# Tasks any request gets a reply to, and tasks that state an answer about a recognised item.
UNANSWERED: dict[Task, Callable[[Mind], Draft]] = {Task.PLAN: plan, Task.OBSERVE: observe, Task.READ: read}
ANSWERED: dict[Task, Callable[[Mind, str, list[Injected], str | None], Draft]] = {
    Task.REASON: reason,
    Task.DECIDE: decide,
    Task.HYPOTHESIS: hypothesis,
    Task.ANSWER: answer_line,
}


def compose(m: Mind) -> Draft:
    """The task's reply; one that states an answer draws it (and its faults) first, and says only
    what is legible when there is no item or no answer."""
    t = m.view.task
    if t in UNANSWERED:
        return UNANSWERED[t](m)
    if m.item is None or t not in ANSWERED:
        return generic(m)
    answer, faults, entity = m.answer_with_faults()
    return ANSWERED[t](m, answer, faults, entity) if answer else generic(m)
