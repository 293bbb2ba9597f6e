"""The benchmark item every loader produces and the agent consumes."""

from __future__ import annotations

import hashlib
import json
import string
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ledgermind.bounded_read import open_regular
from ledgermind.errors import DataError
from ledgermind.jsonl import valid_text
from ledgermind.records import Record

# the prompt labels options A..Z: a 27th option would be labelled "[" and could not be answered
OPTION_LABELS = string.ascii_uppercase


class AnswerType(str, Enum):
    MCQ = "mcq"  # gold is an option letter
    NUMERIC = "numeric"  # gold is a number, scored with a type-aware tolerance
    OPEN = "open"  # free text, scored by exact match or a judge model


@dataclass
class Item(Record):
    """One question. ``images[N-1]`` is ``<image N>`` wherever it appears (question or options)."""

    id: str
    question: str
    images: list[Path] = field(default_factory=list)
    options: list[str] | None = None
    answer: str | None = None
    answer_type: AnswerType = AnswerType.OPEN
    difficulty: str | None = None  # Easy / Medium / Hard (Table 3 split)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """The text a model, OCR matching and every record will see is valid text (``valid_text``)."""
        self.question = valid_text(self.question)
        self.options = None if self.options is None else [valid_text(o) for o in self.options]
        self.answer = None if self.answer is None else valid_text(self.answer)

    def content_sha256(self) -> str:
        """sha256 of what the item asks and expects: id, question, options, gold, answer type and
        the bytes of every image. A verdict belongs to this content; a resume or a table compares
        it, never only the id (an edited question or gold under the same id is another item)."""
        payload = {
            "id": self.id,
            "question": self.question,
            "options": self.options,
            "answer": self.answer,
            "answer_type": self.answer_type.value,
            "images": [_file_sha256(p) for p in self.images],
        }
        return hashlib.sha256(
            json.dumps(payload, sort_keys=True, default=str).encode("utf-8", "surrogatepass")
        ).hexdigest()

    @property
    def option_letters(self) -> list[str]:
        return list(OPTION_LABELS[: len(self.options or [])])


def _file_sha256(path: Any) -> str:
    """An image's bytes digest; a path that cannot be read digests as its name (the item errors anyway).
    Only a regular file is read: a FIFO named like an image would make every run wait for a writer."""
    try:
        with open_regular(path) as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except (OSError, TypeError, ValueError):
        return f"unreadable:{path}"


def failed_item(item_id: str, cause: str) -> Item:
    """A placeholder for an item the loader could not build: the runner records ``cause`` as the
    item's error (never a wrong answer) and never sends it to a model."""
    return Item(id=item_id, question="", meta={"load_error": cause})


def askable(item: Item) -> Item:
    """``item`` if it can be put to a model; else a ``DataError`` that makes the row an error item.

    A blank question, an option without a label or a multiple-choice gold that is none of the option
    letters would still get a prompt, a reply and a score: a verdict on a question nobody asked, or
    one no reply can get right."""
    if not item.question.strip():
        raise DataError(f"item {item.id!r}: the question is empty")
    if len(item.options or []) > len(OPTION_LABELS):
        raise DataError(
            f"item {item.id!r}: {len(item.options or [])} options, more than the "
            f"{len(OPTION_LABELS)} labels A-Z"
        )
    if item.answer_type is AnswerType.MCQ and item.answer is not None:
        # a gold no option carries can never be answered: every reply would be scored wrong
        shown = item.options or item.meta.get("options") or []  # vision: the options are pixels
        letters = list(OPTION_LABELS[: len(shown)])
        if item.answer not in letters:
            raise DataError(
                f"item {item.id!r}: answer {item.answer!r} is not one of its option letters {letters}"
            )
    return item
