"""The complexity classifier φ(q) of Eq. 6 (App. D.1): SIMPLE → DIRECT path, COMPLEX → FULLPIPE.

φ(q) = COMPLEX if at least one of five conditions holds. The result carries *which* conditions
fired (and on which keywords), because a routing decision that cannot be explained cannot be
audited — and the ``no_dispatcher`` ablation compares exactly these decisions.

Condition 4 looks for option letters in the text, so for a benchmark item whose options are a
list, pass the rendered question + options (``render_with_options``); conditions 1–3 and 5 look
at the question alone, so that option wording ("a thermometer", "the meter") does not change the
route and the option letters do not inflate the ASCII ratio α(q).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from ledgermind.dispatch.keywords import DEFAULT_KEYWORDS, DispatchKeywords, find_keywords

# App. D.1, Condition 4: the paper's regex, verbatim (case-sensitive: option letters are capitals).
MCQ_PATTERN = r"\b([A-F])[.)\s]+\S"
MCQ_MIN_DISTINCT_LETTERS = 2  # App. D.1, Condition 4: "at least two distinct option letters"
NON_ENGLISH_ALPHA_MAX = 0.5  # App. D.1, Condition 5: α(q) ≤ 0.5 → non-English → complex

_IMAGE_PLACEHOLDER = re.compile(r"<image\s*\d+>", re.IGNORECASE)


class Complexity(str, Enum):
    SIMPLE = "simple"
    COMPLEX = "complex"


class AlphaChars(str, Enum):
    """Which characters of q form the denominator |q| of Condition 5's α(q) (App. D.1).

    ``ALL`` is the paper's formula literally: every character of q. ``VISIBLE`` (the default, a
    DEVIATION documented in docs/architecture.md) leaves whitespace and ``<image N>`` placeholders
    out. WHY: Condition 5 detects non-English *language*; spaces and layout tokens are not
    language, and counting them routes English questions as non-English — on the 1,671 MMMU-Pro
    questions exactly 5 change route, all English (a question that is only ``<image 1>`` has
    α = 0.5 literally; formula-heavy English text drops below 0.5 with its spaces).
    """

    VISIBLE = "visible"
    ALL = "all"


class Condition(str, Enum):
    """The five routing conditions of App. D.1."""

    PRECISE_PERCEPTION = "C1_precise_perception"
    KNOWLEDGE_FUSION = "C2_knowledge_fusion"
    VERIFICATION = "C3_verification"
    MCQ = "C4_mcq"
    NON_ENGLISH = "C5_non_english"


@dataclass(frozen=True)
class DispatchConfig:
    """Every dispatcher constant (App. D.1 defaults) plus the keyword lists."""

    keywords: DispatchKeywords = DEFAULT_KEYWORDS
    mcq_pattern: str = MCQ_PATTERN
    mcq_min_distinct_letters: int = MCQ_MIN_DISTINCT_LETTERS
    non_english_alpha_max: float = NON_ENGLISH_ALPHA_MAX
    alpha_chars: AlphaChars = AlphaChars.VISIBLE  # |q| of α(q): see AlphaChars (DEVIATION by default)


@dataclass(frozen=True)
class Classification:
    """φ(q) with its explanation: ``reasons`` maps each fired condition to what triggered it."""

    complexity: Complexity
    reasons: dict[Condition, tuple[str, ...]] = field(default_factory=dict)
    alpha: float = 1.0
    mcq_letters: tuple[str, ...] = ()

    @property
    def is_complex(self) -> bool:
        return self.complexity is Complexity.COMPLEX


def option_label(index: int) -> str:
    """``0 → "A"``, ``9 → "J"``: the MMMU convention ``images``/options are indexed by."""
    return chr(ord("A") + index)


def render_with_options(question: str, options: Sequence[str] | None) -> str:
    """Question followed by its options as ``"A. text"`` lines, the layout the MMMU-Pro prompts use
    and Condition 4 recognises (just the question when there are none)."""
    if not options:
        return question
    lines = [f"{option_label(i)}. {str(opt).strip()}" for i, opt in enumerate(options)]
    return "\n".join([question.rstrip(), *lines])


def strip_image_placeholders(text: str) -> str:
    """Remove ``<image N>`` tokens: they are layout, not language, and would skew α(q)."""
    return _IMAGE_PLACEHOLDER.sub(" ", text)


def ascii_alpha_ratio(text: str, chars_of_q: AlphaChars = AlphaChars.VISIBLE) -> float:
    """α(q) = |{c ∈ q : c ∈ ASCII letters}| / |q| (App. D.1, Condition 5).

    ``VISIBLE``: over non-whitespace characters with image placeholders removed, so that spacing
    conventions (Chinese text has none) and layout tokens do not move the ratio; ``ALL``: over
    every character, as the paper writes it (see ``AlphaChars``). An empty question has no
    evidence of being non-English and gets α = 1.0 (so it is not routed by Condition 5).
    """
    if AlphaChars(chars_of_q) is AlphaChars.ALL:
        chars = list(text)
    else:
        chars = [c for c in strip_image_placeholders(text) if not c.isspace()]
    if not chars:
        return 1.0
    return sum(1 for c in chars if c.isascii() and c.isalpha()) / len(chars)


def mcq_letters(text: str, pattern: str = MCQ_PATTERN) -> tuple[str, ...]:
    """Distinct option letters the Condition-4 regex finds, in order of first appearance.

    Matches are searched at every position (the pattern runs inside a lookahead), not just
    non-overlapping ones: with plain ``findall`` an option ending in a capital ("2.86 A") swallows
    the next line's letter ("A\nB. …" is one match) and a real MCQ would be missed.
    """
    seen: list[str] = []
    for m in re.finditer(f"(?=(?:{pattern}))", text or ""):
        if m.group(1) not in seen:
            seen.append(m.group(1))
    return tuple(seen)


def classify(
    question: str, options: Sequence[str] | None = None, config: DispatchConfig | None = None
) -> Classification:
    """φ(q): route ``question`` (with its ``options``, if any) to SIMPLE or COMPLEX. Deterministic."""
    cfg = config or DispatchConfig()
    kw = cfg.keywords
    q = strip_image_placeholders(question or "")
    reasons: dict[Condition, tuple[str, ...]] = {}

    if hits := find_keywords(q, kw.precise_perception):
        reasons[Condition.PRECISE_PERCEPTION] = hits
    if hits := find_keywords(q, kw.knowledge_all):
        reasons[Condition.KNOWLEDGE_FUSION] = hits
    if hits := _verification_hits(q, kw):
        reasons[Condition.VERIFICATION] = hits
    letters = mcq_letters(render_with_options(question or "", options), cfg.mcq_pattern)
    if len(letters) >= cfg.mcq_min_distinct_letters:
        reasons[Condition.MCQ] = letters
    alpha = ascii_alpha_ratio(question or "", cfg.alpha_chars)
    if alpha <= cfg.non_english_alpha_max:
        reasons[Condition.NON_ENGLISH] = (f"alpha={alpha:.3f}",)

    complexity = Complexity.COMPLEX if reasons else Complexity.SIMPLE
    return Classification(complexity, reasons, alpha, letters)


def _verification_hits(q: str, kw: DispatchKeywords) -> tuple[str, ...]:
    """Condition 3: a verification keyword, or a visual-identification term *and* a fact-check term."""
    hits = find_keywords(q, kw.verification)
    ident, fact = find_keywords(q, kw.visual_identification), find_keywords(q, kw.fact_check)
    if ident and fact:
        hits += tuple(f"{i}+{f}" for i in ident[:1] for f in fact[:1])
    return hits
