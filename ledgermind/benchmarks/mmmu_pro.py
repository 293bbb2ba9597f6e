"""MMMU-Pro (Yue et al., 2025) in its three settings, from local files.

Settings (``LoaderConfig.setting``):

* ``standard10`` — the 10-option question (answer letter A–J), the paper's main setting;
* ``standard4`` — the original MMMU options (``options_orig`` / ``answer_orig``);
* ``vision`` — question and options rendered with the image(s) onto one page
  (``vision.render_page``, following the item's ``vision_font`` / ``vision_fontSize`` /
  ``vision_background``); the model then sees only the page and a text question saying that the
  question and its lettered options are in it (``vision.VISION_QUESTION``).

Layouts (``LoaderConfig.path``):

* the shared subset: a directory with ``items.jsonl`` + ``images/`` (+ ``background_images/``);
  fields are described in ``../shared/data/README.md``;
* the official Hugging Face dump (``MMMU/MMMU_Pro``): a directory or file of ``*.parquet``
  (configs ``standard (10 options)``, ``standard (4 options)``, ``vision``) with ``image_1`` …
  ``image_7`` structs (or one ``image`` column for the vision config), ``options`` as a list or
  its string repr; or a VLMEvalKit ``*.tsv`` with base64 images. For the official layout the
  setting follows the file the user points at: ``standard10``/``standard4`` read ``options`` as
  given, ``vision`` uses the dump's own ``image`` page when present and renders one otherwise.

``<image N>`` in the question or in an option is ``images[N-1]``. ``topic_difficulty`` becomes
``Item.difficulty`` (the Easy/Medium/Hard split of Table 3).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item
from ledgermind.benchmarks.registry import BENCHMARKS, LoaderConfig, has_settings
from ledgermind.benchmarks.tables import (
    contained_path,
    letter_columns,
    load_rows,
    materialise_image,
    numbered_images,
    parse_list,
)
from ledgermind.errors import ConfigError, DataError

SETTINGS = ("standard10", "standard4", "vision")
MAX_IMAGES = 7  # MMMU stores image_1 … image_7
LAYOUT = "a directory with items.jsonl + images/ (shared subset), or official MMMU_Pro *.parquet / *.tsv"


@BENCHMARKS.register("mmmu_pro")
@has_settings
def load_mmmu_pro(config: LoaderConfig) -> list[Item]:
    setting = config.setting or "standard10"
    if setting not in SETTINGS:
        raise ConfigError(f"mmmu_pro setting must be one of {list(SETTINGS)}, got {setting!r}")
    root = config.require_path("mmmu_pro", LAYOUT)
    subset = root.is_dir() and (root / "items.jsonl").is_file()
    cache, pages = config.cache_path("mmmu_pro_images"), config.cache_path("mmmu_pro_vision")

    def build(row: dict[str, Any], source: Path) -> Item:
        # the page is rendered inside the row's build: a page that cannot be rendered is that row's
        # error naming its file and line, and with ``strict`` it stops the load like any bad row
        item = (
            _from_subset_row(row, root, setting)
            if subset
            else _from_official_row(row, source, setting, cache)
        )
        if setting != "vision" or item.meta.get("page_given"):
            return item
        from ledgermind.benchmarks.vision import to_vision_item

        return to_vision_item(item, pages)

    return load_rows(config, root / "items.jsonl" if subset else root, build)


def _from_subset_row(row: dict[str, Any], root: Path, setting: str) -> Item:
    # a missing field is a KeyError: that row's error (``load_rows``)
    item_id, orig = str(row["id"]), "_orig" if setting == "standard4" else ""
    options, answer = row[f"options{orig}"], row[f"answer{orig}"]
    images = [contained_path(root / "images", name, item_id) for name in row.get("images", [])]
    options = parse_list(options, f"options of {item_id}") or []
    meta: dict[str, Any] = {k: row[k] for k in ("subject", "subfield", "img_type") if k in row}
    meta |= {"setting": setting, "source": "mmmu_pro_subset"}
    meta |= {k: row[k] for k in ("vision_font", "vision_fontSize", "vision_background") if row.get(k)}
    bg = meta.get("vision_background")
    if isinstance(bg, str) and not bg.startswith("#"):  # an image file: inside the data folder
        meta["vision_background"] = str(contained_path(root, bg, item_id))
    return _mcq(Item(item_id, row.get("question", ""), images, options, str(answer), meta=meta), row)


def _from_official_row(row: dict[str, Any], source: Path, setting: str, cache: Path) -> Item:
    item_id = str(row.get("id") or row.get("index") or "")
    if not item_id:
        raise DataError("official MMMU-Pro row without 'id'/'index'")
    options = parse_list(row.get("options"), f"options of {item_id}") or letter_columns(row)
    if not options:
        raise DataError(f"row {item_id!r} has neither 'options' nor option columns A, B, ...")
    answer = str(row.get("answer", "")).strip()
    meta: dict[str, Any] = {"setting": setting, "source": "mmmu_pro_official"}
    meta |= {k: row[k] for k in ("subject", "subfield", "img_type") if row.get(k) not in (None, "")}
    if setting == "vision" and row.get("image") not in (None, "") and not row.get("question"):
        from ledgermind.benchmarks.vision import as_page

        page = materialise_image(row["image"], cache, f"{item_id}_page")
        meta["page_given"] = True
        return as_page(_mcq(Item(item_id, "", [page], options, answer, meta=meta), row), page)
    # ``image_1..image_7`` (HF) or ``image`` (TSV, one image or a list of base64) → files
    images = numbered_images(row, source, cache, item_id, MAX_IMAGES)
    if not images and row.get("image") not in (None, ""):
        raw = row["image"]
        listed = isinstance(raw, str) and raw.lstrip().startswith("[")
        raw_list = (parse_list(raw, f"image of {item_id}") or []) if listed else [raw]
        images = [materialise_image(b, cache, f"{item_id}_{k}") for k, b in enumerate(raw_list, 1)]
    return _mcq(Item(item_id, str(row.get("question", "")), images, options, answer, meta=meta), row)


def _mcq(item: Item, row: dict[str, Any]) -> Item:
    """``item`` as the multiple-choice item it is, its gold a letter of its options (``DataError``
    otherwise), with the gold's option text and the row's ``topic_difficulty``."""
    letters = item.option_letters
    if item.answer not in letters:
        raise DataError(
            f"MMMU-Pro item {item.id!r}: answer {item.answer!r} is not one of its option letters {letters}"
        )
    item.meta["answer_text"] = (item.options or [])[letters.index(item.answer)]
    difficulty = row.get("topic_difficulty")
    difficulty = str(difficulty) if difficulty not in (None, "") else None
    return replace(item, answer_type=AnswerType.MCQ, difficulty=difficulty)
