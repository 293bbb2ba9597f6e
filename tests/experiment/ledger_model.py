"""A request-driven fake model for end-to-end runs that must cite ledger ids.

It reads only what a real model reads — the prompt text of the request — and answers by which
instruction the text carries (the prompt's own words, as the scripted backend's rules do) and by
what the evidence block in the text says: it cites the id of the line that states a fact, never an
id fixed in advance, so it keeps working whatever numbering the real OCR produces. It never looks
at the pipeline's stage name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ledgermind.backends.base import Backend, GenerationRequest, Reply
from ledgermind.prompts.signatures import recognise


def _entry_id(text: str, *words: str) -> str | None:
    """The id of the evidence line ("OC-7 | RETRIEVAL | 0.85 | …") that contains every word."""
    for line in text.splitlines():
        m = re.match(r"\s*(OC-\d+) \|", line)
        if m and all(w.lower() in line.lower() for w in words):
            return m.group(1)
    return None


def _claim_id(text: str, *words: str) -> str | None:
    """The id of the claim line ("[SC-3][J] … | Based on: …") whose text contains every word."""
    for line in text.splitlines():
        m = re.match(r"\s*\[(SC-\d+)\]", line)
        if m and all(w.lower() in line.split("| Based on")[0].lower() for w in words):
            return m.group(1)
    return None


class ApolloHistorian(Backend):
    """Knows the Apollo 11 plaque; first misnames it (Apollo 13) in its judgment, then revises."""

    name = "apollo_historian"
    supports_structured_output = False

    def __init__(self, model: Mapping[str, Any] | None = None, **_: Any) -> None:
        self.model_name = str((model or {}).get("name", "fake"))
        self.requests: list[GenerationRequest] = []

    @property
    def model_id(self) -> str:
        return f"apollo-historian:{self.model_name}"

    async def generate(self, request: GenerationRequest) -> Reply:
        self.requests.append(request)
        text = request.last_user_text()
        return Reply(self._answer(recognise(text), text), backend=self.name, model=self.model_id)

    def _answer(self, prompt: str | None, text: str) -> str:
        if prompt == "plan":
            return "1. Observation targets: the plaque text and its year"
        if prompt == "observe":
            return "[OC-1] TEXT | Apollo 11 Plaque\n[OC-2] NUMBER | 1969"
        if prompt == "reason":
            fact = _entry_id(text, "RETRIEVAL", "1969")
            plaque = _entry_id(text, "apollo 11") or fact
            return (
                f"[SC-1][E] landed 1969 | Based on: [{fact}]\n"
                f"[SC-2][J] It is the Apollo 13 plaque from 1969 | Based on: [{plaque}], [{fact}]"
            )
        if prompt == "hypothesis":
            return "3. Conclusion: Revise: Apollo 11 plaque from 1969"
        if prompt == "decide":
            cites = [c for c in (_claim_id(text, "landed"), _claim_id(text, "Apollo 11 plaque")) if c]
            return f"Answer: Apollo 11 | Based on: {', '.join(f'[{c}]' for c in cites) or 'none'}"
        return "Answer: Apollo 11"
