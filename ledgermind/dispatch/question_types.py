"""Question types and what they change downstream (App. D.2–D.4, Tables 4–6).

The task plan (App. G.1) needs three things the question text alone determines:

* F(q), the answer-granularity constraint (Table 4) inserted into the plan prompt;
* M(q), the reasoning method (Table 6) the [E]→[I]→[J] chain is told to follow;
* the OC categories (Table 5) the extraction prompt asks for: TEXT, NUMBER, OBJECT and SPATIAL
  always (App. G.2), plus COUNT / COMPARE / DIFF injected by the question type.

The wording below paraphrases the paper's tables; each entry imposes the same requirement.
When several types apply, Table 4's row order decides the single granularity constraint
(an MCQ must still end in one letter even if it is also a reading question), while the methods
of all applicable Table-6 rows are kept, in table order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ledgermind.dispatch.classifier import (
    Classification,
    Complexity,
    Condition,
    DispatchConfig,
    classify,
    option_label,
    strip_image_placeholders,
)
from ledgermind.dispatch.keywords import find_keywords


class QuestionType(str, Enum):
    READ = "read"  # Q_read: instrument / value reading (crop-zoom + Dual-Read, App. D.5)
    LOCATION = "location"  # Q_location (crop-zoom)
    KNOWLEDGE = "knowledge"  # Condition 2: first search round (App. D.6)
    DEEP_KNOWLEDGE = "deep_knowledge"  # Q_deep_knowledge: second search round (App. D.1, D.6)
    DIFF = "diff"  # Q_diff: spot-the-difference
    CHAR_COUNT = "char_count"  # Q_char: character counting
    COUNT = "count"  # Table 6 "Counting"
    COMPARE = "compare"  # Table 6 "Comparison"
    MCQ = "mcq"  # Condition 4


#: Types found by their own cue list (the ``DispatchKeywords`` field named as the type's value).
_CUED_TYPES = tuple(QuestionType(t) for t in "read location diff char_count count compare".split())


class OCCategory(str, Enum):
    TEXT = "TEXT"
    NUMBER = "NUMBER"
    OBJECT = "OBJECT"
    SPATIAL = "SPATIAL"
    COMPARE = "COMPARE"
    COUNT = "COUNT"
    DIFF = "DIFF"


# Table 5 (paraphrased): what an Observation Claim of each category must contain.
OC_INSTRUCTIONS: dict[OCCategory, str] = {
    OCCategory.TEXT: "Copy every piece of visible text exactly, character for character.",
    OCCategory.NUMBER: "Record every numeric value with its unit, keeping all decimal places.",
    OCCategory.OBJECT: "Describe each object: appearance, colour, shape, material and how many there are.",
    OCCategory.SPATIAL: "State where objects are relative to one another and how they are arranged.",
    OCCategory.COMPARE: "For a comparison, record the measurable attributes of each object separately.",
    OCCategory.COUNT: "Sweep the image zone by zone and give every counted target its own ID.",
    OCCategory.DIFF: "Compare the two images on five dimensions: object presence, colour, shape, position, text.",
}

BASE_OC_CATEGORIES = (OCCategory.TEXT, OCCategory.NUMBER, OCCategory.OBJECT, OCCategory.SPATIAL)  # App. G.2
INJECTED_OC_CATEGORIES: dict[QuestionType, OCCategory] = {
    QuestionType.COUNT: OCCategory.COUNT,
    QuestionType.CHAR_COUNT: OCCategory.COUNT,
    QuestionType.COMPARE: OCCategory.COMPARE,
    QuestionType.DIFF: OCCategory.DIFF,
}

# Table 4 (paraphrased), in the table's row order, which is also the precedence order.
GRANULARITY: tuple[tuple[QuestionType, str], ...] = (
    (QuestionType.MCQ, "Reply with exactly one option letter ({letters})."),
    (QuestionType.READ, "Read to the finest graduation of the scale and keep every decimal digit."),
    (
        QuestionType.LOCATION,
        "Name the most specific place possible: the exact toponym, building or landmark.",
    ),
    (QuestionType.DIFF, "List every difference, going through the visual dimensions one at a time."),
    (QuestionType.CHAR_COUNT, "Find each character on its own first, then give the total."),
)
GRANULARITY_OTHER = "Make the answer as specific as the question allows."  # Table 4, "Other"

# Table 6 (paraphrased), in the table's row order.
METHODS: tuple[tuple[QuestionType, str], ...] = (
    (QuestionType.MCQ, "Analyse each option in turn and eliminate those the evidence contradicts."),
    (QuestionType.COUNT, "Check every numbered target in the observations, then confirm the total."),
    (QuestionType.COMPARE, "Extract each object's attribute values, then compare them pair by pair."),
    (QuestionType.READ, "Prefer the crop-zoom evidence and read off the precise value."),
    (QuestionType.LOCATION, "Prefer TEXT observations when identifying the place."),
    (QuestionType.DIFF, "List the differences dimension by dimension from the DIFF observations."),
)
METHOD_DEFAULT = "Reason step by step from the cited observations."


@dataclass(frozen=True)
class QuestionProfile:
    """Everything the pipeline needs to know about a question before looking at the image."""

    complexity: Complexity
    reasons: dict[Condition, tuple[str, ...]]
    types: frozenset[QuestionType]
    granularity: str
    method: str
    oc_categories: tuple[OCCategory, ...]

    @property
    def is_complex(self) -> bool:
        return self.complexity is Complexity.COMPLEX

    def oc_instructions(self) -> dict[OCCategory, str]:
        return {c: OC_INSTRUCTIONS[c] for c in self.oc_categories}


def detect_types(
    question: str, classification: Classification, config: DispatchConfig
) -> frozenset[QuestionType]:
    """Question types from the question text (+ the MCQ / knowledge decisions φ already made)."""
    kw = config.keywords
    q = strip_image_placeholders(question or "")
    found = {qtype for qtype in _CUED_TYPES if find_keywords(q, getattr(kw, qtype.value))}
    if Condition.KNOWLEDGE_FUSION in classification.reasons:
        found.add(QuestionType.KNOWLEDGE)
        # App. D.1: the deep-knowledge markers apply *within* Condition 2 only; "based on" in an
        # ordinary reading or math question must not start a second search round.
        if find_keywords(q, kw.deep_knowledge):
            found.add(QuestionType.DEEP_KNOWLEDGE)
    if Condition.MCQ in classification.reasons:
        found.add(QuestionType.MCQ)
    return frozenset(found)


def granularity(types: frozenset[QuestionType], n_options: int | None = None) -> str:
    """F(q): the first Table-4 row that applies, else "Other"."""
    # Table 4 prints "A/B/C/D/E/F"; with a known option list we name the real letters (MMMU-Pro has up to J).
    letters = "/".join(option_label(i) for i in range(n_options or 6))
    for qtype, text in GRANULARITY:
        if qtype in types:
            return text.format(letters=letters)
    return GRANULARITY_OTHER


def reasoning_method(types: frozenset[QuestionType]) -> str:
    """M(q): the Table-6 methods of every applicable type, in table order."""
    methods = [text for qtype, text in METHODS if qtype in types]
    return " ".join(methods) if methods else METHOD_DEFAULT


def oc_categories(types: frozenset[QuestionType]) -> tuple[OCCategory, ...]:
    """The base categories plus those the question types inject, without duplicates."""
    injected = (INJECTED_OC_CATEGORIES[t] for t in QuestionType if t in types and t in INJECTED_OC_CATEGORIES)
    return tuple(dict.fromkeys([*BASE_OC_CATEGORIES, *injected]))  # enum order → deterministic


def profile(
    question: str, options: Sequence[str] | None = None, config: DispatchConfig | None = None
) -> QuestionProfile:
    """φ(q), the question types, F(q), M(q) and the OC categories of one question."""
    cfg = config or DispatchConfig()
    cls = classify(question, options, cfg)
    types = detect_types(question, cls, cfg)
    n_options = len(options) if options else None
    return QuestionProfile(
        complexity=cls.complexity,
        reasons=cls.reasons,
        types=types,
        granularity=granularity(types, n_options),
        method=reasoning_method(types),
        oc_categories=oc_categories(types),
    )
