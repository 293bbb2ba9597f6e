"""Loader-level adapters for the paper's other benchmarks (§4.1), from their own local files.

Each adapter reads the layout its benchmark is distributed in and maps it onto ``Item``; images
stored inside tables are decoded once into the cache dir. Expected layouts:

* ``mmstar`` — ``Lin-Chen/MMStar`` parquet (columns ``index``, ``question`` with an embedded
  ``Options: A: …, B: …`` list, ``image`` struct, ``answer`` letter, ``category``,
  ``l2_category``) or the VLMEvalKit ``MMStar.tsv`` (base64 ``image``, option columns ``A``–``D``).
* ``mmmu`` — ``MMMU/MMMU`` parquet (per-subject files: ``id``, ``question``, ``options`` as a
  string repr of a list, ``image_1`` … ``image_7``, ``answer``, ``question_type``
  ``multiple-choice``/``open``, ``topic_difficulty``, ``subfield``).
* ``emma`` — ``luckychao/EMMA`` parquet or JSONL (``pid``, ``question`` with ``<image_N>``
  placeholders, ``options`` list or null, ``answer``, ``image_1`` … ``image_5``, ``type``
  ``Multiple Choice``/``Open-ended``, ``subject``, ``category``). JSONL image fields are paths
  relative to the file.
* ``vstar`` — ``craigwu/vstar_bench``: ``test_questions.jsonl`` lines (``question_id``,
  ``image`` path relative to the file, ``text`` with ``(A) …`` option lines, ``label`` letter,
  ``category``) or the ``lmms-lab/vstar-bench`` parquet (same columns, ``image`` struct).

``LoaderConfig.path`` is the file or a directory searched recursively for table files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig
from ledgermind.benchmarks.tables import (
    answer_type,
    image_file,
    letter_columns,
    load_rows,
    numbered_images,
    parse_list,
)
from ledgermind.errors import DataError

_LETTERS = "ABCDEFGHIJ"


def split_inline_options(text: str, pattern: str) -> tuple[str, list[str] | None]:
    """Split ``text`` into (stem, options) using ``pattern`` that captures (letter, option text)."""
    found = list(re.finditer(pattern, text))
    if len(found) < 2 or [m[1] for m in found] != list(_LETTERS[: len(found)]):
        return text, None
    return text[: found[0].start()].strip(), [m[2].strip().rstrip(",").strip() for m in found]


def _meta(row: dict[str, Any], keys: tuple[str, ...], **extra: str) -> dict[str, Any]:
    """The row's non-empty ``keys``, then ``extra``: what an item keeps of its row."""
    return {k: row[k] for k in keys if row.get(k)} | extra


@BENCHMARKS.register("mmstar")
def load_mmstar(config: LoaderConfig) -> list[Item]:
    cache = config.cache_path("mmstar_images")

    def one(row: dict[str, Any], src: Path) -> Item:
        item_id = f"mmstar_{row['index']}"
        question = str(row.get("question", ""))
        options = letter_columns(row)
        if options is None:
            stem, options = split_inline_options(question, r"([A-D]):\s*(.*?)(?=,?\s*[A-D]:|$)")
            question = re.sub(r"\s*Options:\s*$", "", stem) if options else question
        answer = str(row.get("answer", "")).strip()
        meta = _meta(row, ("category", "l2_category", "l2-category", "bench"), source="mmstar")
        image = image_file(row.get("image"), src, cache, item_id)
        return Item(item_id, question, [image], options, answer, AnswerType.MCQ, meta=meta)

    return load_rows(config, config.require_path("mmstar", "MMStar parquet or MMStar.tsv"), one)


@BENCHMARKS.register("mmmu")
def load_mmmu(config: LoaderConfig) -> list[Item]:
    cache = config.cache_path("mmmu_images")

    def one(row: dict[str, Any], src: Path) -> Item:
        item_id = str(row["id"])
        is_mcq = row.get("question_type", "multiple-choice") == "multiple-choice"
        options = parse_list(row.get("options"), f"options of {item_id}") if is_mcq else None
        answer = str(row.get("answer", "")).strip()
        meta = _meta(row, ("subfield", "img_type", "question_type"), source="mmmu")
        images = numbered_images(row, src, cache, item_id, 7)
        kind, difficulty = answer_type(is_mcq, answer), row.get("topic_difficulty") or None
        return Item(item_id, str(row["question"]), images, options, answer, kind, difficulty, meta)

    return load_rows(config, config.require_path("mmmu", "MMMU/MMMU parquet files"), one)


@BENCHMARKS.register("emma")
def load_emma(config: LoaderConfig) -> list[Item]:
    cache = config.cache_path("emma_images")

    def one(row: dict[str, Any], src: Path) -> Item:
        item_id = next((str(row[k]) for k in ("pid", "id") if row.get(k) not in (None, "")), None)
        if item_id is None:  # never an item named "None" (two such rows would abort the load as duplicates)
            raise DataError("EMMA row without 'pid' or 'id'")
        options = parse_list(row.get("options"), f"options of {item_id}") or None  # [] is no options
        is_mcq = bool(options) and str(row.get("type", "Multiple Choice")).lower().startswith("multiple")
        question = re.sub(r"<image_(\d+)>", r"<image \1>", str(row.get("question", "")))
        if row.get("context"):
            question = f"{row['context']}\n{question}"
        answer = str(row.get("answer", "")).strip()
        meta = _meta(row, ("subject", "category", "task", "source"), benchmark="emma")
        images = numbered_images(row, src, cache, item_id, 5)
        kind = answer_type(is_mcq, answer)
        return Item(item_id, question, images, options if is_mcq else None, answer, kind, meta=meta)

    return load_rows(config, config.require_path("emma", "EMMA parquet or JSONL"), one)


@BENCHMARKS.register("vstar")
def load_vstar(config: LoaderConfig) -> list[Item]:
    cache = config.cache_path("vstar_images")

    def one(row: dict[str, Any], src: Path) -> Item:
        item_id = f"vstar_{row['question_id']}"
        text = str(row.get("text") or row.get("question") or "")
        text = re.sub(r"\n?Answer with the option's letter.*$", "", text, flags=re.S)
        stem, options = split_inline_options(text, r"\(([A-D])\)\s*([^\n]+?)\s*(?=\([A-D]\)|\n|$)")
        answer = str(row.get("label") or row.get("answer") or "").strip()
        if options is None or answer not in _LETTERS[: len(options)]:
            raise DataError(
                f"V*Bench item {item_id!r}: cannot find '(A) …' options or a letter label in {src}"
            )
        meta = {"category": row.get("category"), "source": "vstar"}
        image = image_file(row.get("image"), src, cache, item_id)
        return Item(item_id, stem, [image], options, answer, AnswerType.MCQ, meta=meta)

    layout = "V*Bench test_questions.jsonl (+ images) or parquet"
    return load_rows(config, config.require_path("vstar", layout), one)
