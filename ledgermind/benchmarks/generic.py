"""Generic JSONL VQA format: bring your own data (full description in ``docs/data_format.md``).

One JSON object per line::

    {"id": "q1",                       # required, unique
     "question": "What is ... <image 1>?",  # required; <image N> = images[N-1] (optional)
     "images": ["imgs/a.png"],         # paths inside the JSONL file's directory (others are refused); "image": "a.png" also accepted
     "options": ["red", "blue"],       # optional; present → multiple choice, answer is a letter
     "answer": "B",                    # gold: option letter, number, or free text
     "answer_type": "mcq",             # optional: mcq | numeric | open (inferred when absent)
     "difficulty": "Easy",             # optional: Easy / Medium / Hard
     "meta": {"numeric_kind": "reading", "graduation": 0.5}}  # optional, free-form

Inference of ``answer_type``: options → ``mcq``; a gold that is a plain number (``tables.numeric_gold``) → ``numeric``
(exact unless ``meta.numeric_kind`` is ``reading``); otherwise ``open``.
``LoaderConfig.path`` is the JSONL file or a directory holding ``items.jsonl``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, ValidationError

from ledgermind.benchmarks.item import OPTION_LABELS, AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig
from ledgermind.benchmarks.tables import answer_type, contained_path, load_rows, numeric_gold
from ledgermind.errors import DataError

LAYOUT = "a .jsonl file (or a directory with items.jsonl) in the generic VQA format of docs/data_format.md"


def jsonl_path(config: LoaderConfig, benchmark: str, layout: str = LAYOUT) -> Path:
    p = config.require_path(benchmark, layout)
    return p / "items.jsonl" if p.is_dir() else p


Scalar = StrictStr | StrictInt | StrictFloat


class GenericRecord(BaseModel):
    """The shape of one generic record, checked before anything reads it.

    A row of the wrong shape must be that item's error, never a silently different item: without
    this, ``options: "abc"`` became three options a/b/c and ``options: 5`` or ``meta: [1, 2]``
    crashed the loader. Unknown keys are allowed (datasets carry their own fields).
    """

    model_config = ConfigDict(extra="allow")

    id: StrictStr | StrictInt
    question: StrictStr
    images: list[StrictStr] | StrictStr | None = None
    image: StrictStr | None = None
    options: list[Scalar] | None = None
    answer: Scalar | None = None
    answer_type: StrictStr | None = None
    difficulty: StrictStr | None = None
    meta: dict[str, Any] | None = None


def validated(row: dict[str, Any], where: str) -> dict[str, Any]:
    """``row`` if it has the generic record's shape, else one ``DataError`` naming the field."""
    try:
        GenericRecord.model_validate(row)
    except ValidationError as exc:
        err = exc.errors()[0]
        # union branches add their type to the location ("images.list[str]"): keep the field path only
        field = ".".join(str(p) for p in err["loc"] if not (isinstance(p, str) and "[" in p)) or "record"
        raise DataError(
            f"{where}: record {row.get('id')!r}: field {field!r}: {err['msg']} (got {err.get('input')!r:.60})"
        ) from None
    return row


NUMERIC_KINDS = ("reading", "count", "exact")  # scoring/numeric.py: reading → tolerant, else exact


def checked_numeric_meta(meta: dict[str, Any], item_id: Any) -> dict[str, Any]:
    """``meta`` if its scoring keys are what the numeric scorer reads, else a ``DataError``.

    ``meta`` is free-form, but these two keys steer scoring: a graduation given as text (``"0.1"``)
    made the scorer raise ``TypeError`` for some replies and not others, and an unknown kind
    (``"Reading"``) silently scored a reading exactly."""
    kind = meta.get("numeric_kind")
    if kind is not None and kind not in NUMERIC_KINDS:
        raise DataError(
            f"record: item {item_id!r}: meta.numeric_kind {kind!r} is not one of {list(NUMERIC_KINDS)}"
        )
    grad = meta.get("graduation")
    if grad is not None and (
        isinstance(grad, bool) or not isinstance(grad, int | float) or not math.isfinite(grad) or grad <= 0
    ):
        raise DataError(f"record: item {item_id!r}: meta.graduation {grad!r} is not a positive number")
    return meta


def infer_answer_type(row: dict[str, Any]) -> AnswerType:
    if row.get("answer_type"):
        try:
            return AnswerType(str(row["answer_type"]).lower())
        except ValueError:
            raise DataError(f"item {row.get('id')!r}: answer_type must be mcq, numeric or open") from None
    return answer_type(bool(row.get("options")), str(row.get("answer", "")))


def item_from_record(row: dict[str, Any], source: Path) -> Item:
    """One generic record → ``Item``; relative image paths resolve against ``source``'s folder."""
    row = validated(row, "record")
    if not str(row["id"]).strip():  # an item named "" cannot be selected, reported or told apart
        raise DataError(f"record: the id {row['id']!r} is blank")
    images = row.get("images")  # null, like absent, means no images (the record's schema allows it)
    if images is None:
        images = [row["image"]] if row.get("image") else []
    if isinstance(images, str):
        images = [images]
    answer_type = infer_answer_type(row)
    options = row.get("options")
    answer = None if row.get("answer") is None else str(row["answer"]).strip()
    if answer_type is AnswerType.NUMERIC and answer is not None and numeric_gold(answer) is None:
        # the scorer would read no number (or another one) from this gold: never a right answer
        raise DataError(f"record: numeric item {row['id']!r}: answer {answer!r} is not a plain number")
    if answer_type is AnswerType.MCQ:
        letters = list(OPTION_LABELS[: len(options or [])])
        if not options or answer not in letters:
            raise DataError(f"record: MCQ item {row['id']!r} needs options and an answer letter in {letters}")
    elif options:  # the prompt would ask for an option letter that the open/numeric scorer never reads
        raise DataError(
            f"record: item {row['id']!r} has options but answer_type {answer_type.value!r}: "
            "options make an item mcq (answer: an option letter); drop one of them"
        )
    return Item(
        id=str(row["id"]),
        question=str(row["question"]),
        images=[contained_path(source.parent, p, str(row["id"])) for p in images],
        options=[str(o) for o in options] if options else None,
        answer=answer,
        answer_type=answer_type,
        difficulty=row.get("difficulty"),
        meta=checked_numeric_meta(dict(row.get("meta") or {}), row["id"]),
    )


@BENCHMARKS.register("jsonl")
def load_jsonl(config: LoaderConfig) -> list[Item]:
    return load_rows(config, jsonl_path(config, "jsonl"), item_from_record)


@BENCHMARKS.register("ai2d")
def load_ai2d(config: LoaderConfig) -> list[Item]:
    """AI2D diagram questions (``../shared/data/ai2d_sample``): generic records, 4 options, letter answers."""
    path = jsonl_path(config, "ai2d", "a directory with items.jsonl + the PNGs")
    items = load_rows(config, path, item_from_record)
    for it in items:
        it.meta.setdefault("source", "ai2d")
    return items
