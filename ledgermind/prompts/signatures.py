"""A phrase that identifies each prompt template by its *text* (what a model actually sees).

Why it exists: test doubles and simulators must recognise which step of the pipeline is asking
only from the request, never from a stage name the pipeline keeps for its own records. Each
signature is a regex that matches the rendered template it names and no other template
(``tests/prompts/test_signatures.py`` checks both directions).
"""

from __future__ import annotations

import re

PROMPT_SIGNATURES: dict[str, str] = {
    "plan": r"You plan how to answer a visual question",
    "observe": r"list at most \d+ fine-grained observations",
    "reason": r"\[E\] Evidence integration",
    "decide": r"Decide the final answer\.",
    "hypothesis": r"Treat the hypothesis as something to falsify",
    "entity_recheck": r"These texts and numbers were confirmed to be visible",
    "direct": r"Text read from the image by OCR",
    "concise": r"Web search results:",
    "dual_read": r"This is a zoomed crop of an instrument or display",
    "visual_fallback": r"\"cannot determine\" is not allowed",
    "reflect": r"Critique the reasoning, then rewrite it",
    "native_cot": r"Tool outputs available to you:",
    "no_ledger": r"Transcript of tool outputs:",
    "switch_vqa": r"(Transcribe the visible text and values|Describe the region relevant to) for this question:",
}


def signature(name: str) -> str:
    """The regex of template ``name``; an unknown name is a clear error."""
    try:
        return PROMPT_SIGNATURES[name]
    except KeyError:
        raise KeyError(
            f"no prompt signature {name!r}; known: {', '.join(sorted(PROMPT_SIGNATURES))}"
        ) from None


def recognise(text: str) -> str | None:
    """The template whose signature occurs in ``text`` (None when none does)."""
    return next((name for name, sig in PROMPT_SIGNATURES.items() if re.search(sig, text, re.MULTILINE)), None)
