"""Turning an item and the ledger into prompt text and interleaved chat content.

``<image N>`` placeholders refer to ``item.images[N-1]`` wherever they appear (question or
options). We send every referenced image once, labelled "Image N:", in order of N, and leave the
placeholders in the text so the model can tell which image a sentence or an option refers to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ledgermind.backends.base import ContentPart
from ledgermind.benchmarks.item import Item
from ledgermind.claims import Claim
from ledgermind.ledger import EvidenceEntry, Ledger

PLACEHOLDER_RE = re.compile(r"<image\s*(\d+)>", re.IGNORECASE)
MAX_FACT_CHARS = 300


def referenced_images(item: Item) -> list[int]:
    """1-based indices of the images the question or options mention; all images if none are."""
    texts = [item.question, *(item.options or [])]
    idx = sorted({int(m) for t in texts for m in PLACEHOLDER_RE.findall(t or "")})
    idx = [i for i in idx if 1 <= i <= len(item.images)]
    return idx or list(range(1, len(item.images) + 1))


def image_parts(item: Item) -> list[ContentPart]:
    parts: list[ContentPart] = []
    for i in referenced_images(item):
        parts += [f"Image {i}:", Path(item.images[i - 1])]
    return parts


VISION_OPTION = "(shown in the image)"


def pixel_options(item: Item) -> int:
    """Number of options that exist only as pixels (MMMU-Pro vision: ``meta["options"]``, no text)."""
    return 0 if item.options else len(item.meta.get("options") or [])


def dispatch_options(item: Item) -> list[str] | None:
    """The options φ(q), question types and F(q) see: the real ones, or for a vision item one
    placeholder per letter, so that it is treated as the MCQ it is without leaking option text."""
    return item.options or ([VISION_OPTION] * pixel_options(item) or None)


def options_block(item: Item) -> str:
    if n := pixel_options(item):
        letters = "/".join(chr(ord("A") + i) for i in range(n))
        return f"Options: lettered {letters[0]} to {letters[-1]}, shown in the image.\nAnswer with the option letter ({letters})."
    if not item.options:
        return ""
    letters = "/".join(item.option_letters)
    return f"Options:\n{option_lines(item.options)}\nAnswer with the option letter ({letters})."


def option_lines(options: Sequence[str]) -> str:
    """'A. text' lines, one per option (the official MMMU-Pro layout too)."""
    return "\n".join(f"{chr(ord('A') + i)}. {opt}" for i, opt in enumerate(options))


def question_with_options(item: Item) -> str:
    """The question as planning, observation and reasoning prompts state it: the options below it."""
    return item.question + ("\n" + options_block(item) if item.options else "")


def fact_line(e: EvidenceEntry) -> str:
    fact = e.fact if len(e.fact) <= MAX_FACT_CHARS else e.fact[: MAX_FACT_CHARS - 1] + "…"
    cat = f" {e.category}" if e.category else ""
    return f"{e.id} | {e.kappa.value}{cat} | {e.sigma:.2f} | {fact}"


def ledger_block(ledger: Ledger) -> str:
    """Active entries only: claims may cite only ACTIVE entries (invariant I2)."""
    lines = [fact_line(e) for e in ledger.active()]
    return "\n".join(lines) if lines else "(empty)"


def claims_block(claims: Iterable[Claim]) -> str:
    lines = []
    for c in claims:
        if not c.active:
            continue
        stage = f"[{c.stage.value}]" if c.stage else ""
        cites = ", ".join(f"[{x}]" for x in c.citations) or "none"
        lines.append(f"[{c.id}]{stage} {c.text} | Based on: {cites} | confidence {c.sigma:.2f}")
    return "\n".join(lines) if lines else "(none)"


def pool_block(facts: Sequence[str]) -> str:
    return "\n".join(f"- {f}" for f in facts) if facts else "(nothing was read from the image)"


# A decision claim on an MCQ reads "B. <option text>" or "B. <option text>; <words the model added>".
# Written by ``answer.decision_text`` and read back by grounding: the format lives here, once.
_DECISION_WORDS_SEP = "; "


def decision_claim_text(letter: str, option: str, added: str = "") -> str:
    return f"{letter}. {option}" + (f"{_DECISION_WORDS_SEP}{added}" if added else "")


def decision_added_words(item: Item, text: str) -> str:
    """The words a decision claim adds after its option ("" when it adds none or is not an MCQ DC)."""
    letter, dot, body = text.partition(". ")
    opt = option_text(item, letter) if dot and len(letter) == 1 else None
    if not opt or not body.startswith(opt + _DECISION_WORDS_SEP):
        return ""
    return body[len(opt) + len(_DECISION_WORDS_SEP) :]


def option_text(item: Item, letter: str | None) -> str | None:
    """'C' → the text of option C (for grounding the decision's content, not just its label)."""
    if not letter or not item.options:
        return None
    i = ord(letter.upper()) - ord("A")
    return item.options[i] if 0 <= i < len(item.options) else None
