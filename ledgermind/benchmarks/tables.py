"""Small readers shared by the loaders: JSONL records, and tables in the official HF layouts.

Official dataset dumps come as parquet (Hugging Face ``datasets`` export: image columns are
structs ``{"bytes": ..., "path": ...}``) or TSV (VLMEvalKit: images as base64 strings). Both are
read into plain ``dict`` rows; images are written once to a cache directory, so that an ``Item``
always points at image *files* like every other loader's items do.
"""

from __future__ import annotations

import ast
import base64
import binascii
import csv
import hashlib
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ledgermind.benchmarks.item import AnswerType, Item, askable, failed_item
from ledgermind.benchmarks.registry import LoaderConfig
from ledgermind.diskio import atomic_write_bytes
from ledgermind.errors import DataError
from ledgermind.jsonl import BadLine, JsonlRow, read_jsonl

TABLE_SUFFIXES = (".parquet", ".tsv", ".jsonl")
_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF87a", ".gif"), (b"GIF89a", ".gif"))
ROW_IDS = ("id", "pid", "index", "question_id")  # what a row's error item is named by


def contained_path(root: Path, name: Any, item_id: str) -> Path:
    """``root / name``, refused (``DataError`` naming the item) if it resolves outside ``root``.

    Dataset files are untrusted input: an image name such as ``../../../../etc/passwd`` must never
    be opened (and, with a server backend, sent over the network). Absolute names are refused
    unless they point inside ``root``; symlinks are resolved before the check.
    """
    if not isinstance(name, str | Path) or not str(name):
        raise DataError(f"item {item_id!r}: image name {name!r} is not a file name")
    base = Path(root).resolve()
    try:
        target = (base / Path(name)).resolve()
    except (ValueError, OSError) as exc:  # an embedded NUL byte, a name too long for the file system
        raise DataError(
            f"item {item_id!r}: image name {str(name)[:80]!r} is not a usable file name ({exc})"
        ) from None
    if target != base and base not in target.parents:
        raise DataError(
            f"item {item_id!r}: image path {str(name)!r} is outside the data directory {base}; refused"
        )
    return target


def load_rows(config: LoaderConfig, path: Path, build: Callable[[dict[str, Any], Path], Item]) -> list[Item]:
    """``build(row, its file)`` for the first ``config.limit`` rows of the table files at ``path``: the
    one loading path of every loader (``limit`` cuts rows before they are built, so it also limits
    rendering and decoding work)."""
    items: list[Item] = []
    files = table_files(path)
    for f in files:
        left = None if config.limit is None else config.limit - len(items)
        if left == 0:
            break
        # a row without an id is named by its line; with several files, also by its file, or two
        # files' bad first lines would be two items ``line1`` and abort the load as duplicates
        tag = f"{f.relative_to(path)}:" if len(files) > 1 else ""
        items += [
            _row_item(row, n, f, build, config.strict, tag) for n, row in enumerate(read_table(f)[:left], 1)
        ]
    return items


def _row_item(
    row: dict[str, Any] | JsonlRow,
    lineno: int,
    source: Path,
    build: Callable[[dict[str, Any], Path], Item],
    strict: bool,
    tag: str = "",
) -> Item:
    """``build(row, source)``; a row that fails is an error item (``meta.load_error``) naming its file and line.

    One bad row must not abort a 1,730-item benchmark: the run goes on and the row is reported
    as an error. ``strict`` restores the abort (the first bad row raises its ``DataError``).
    A row without an id of its own is named ``{tag}line{n}`` (``tag``: its file, when there are several).
    """
    if isinstance(row, JsonlRow):  # a line that is not a record: its ``error`` says why
        if strict:
            raise DataError(row.error)
        return failed_item(f"{tag}line{row.line_no}", str(row.error))
    try:
        return askable(build(row, source))
    except (DataError, ValueError, TypeError, KeyError, OSError) as exc:
        # anything one row's values can make a loader raise is that row's error, never the benchmark's
        where = f"{source}:{lineno}"
        if strict:  # the one line that stops the load names the row as the error item would
            raise DataError(f"{where}: {exc}") from None
        row_id = next((row[k] for k in ROW_IDS if str(row.get(k) or "").strip()), f"{tag}row{lineno}")
        cause = exc if isinstance(exc, DataError) else f"{type(exc).__name__}: {exc}"
        return failed_item(str(row_id), f"{where}: {cause}")


def table_files(path: Path) -> list[Path]:
    """``path`` itself, or the sorted table files under it (recursively: HF dumps nest by config)."""
    if path.is_file():
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in TABLE_SUFFIXES)
    if not files:
        raise DataError(f"no {'/'.join(TABLE_SUFFIXES)} files under {path}")
    return files


def read_table(path: Path) -> Sequence[dict[str, Any] | JsonlRow]:
    """Rows of one parquet / TSV / JSONL file."""
    if path.suffix == ".jsonl":  # a line that is not a JSON object stays a JsonlRow: that row's error
        rows = read_jsonl(path, bad=BadLine.KEEP, torn_tail=False, objects=True, what="a valid JSON object")
        return [row.value if row.error is None else row for row in rows]
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            raise DataError(f"cannot read parquet file {path}: {exc}") from None
    if path.suffix == ".tsv":
        csv.field_size_limit(sys.maxsize)  # base64 images exceed the default 128 KB field limit
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh, delimiter="\t"))
    raise DataError(f"unsupported table format {path.suffix!r}: {path}")


def parse_list(value: Any, what: str = "options") -> list[str] | None:
    """A list column that may be a real list or its Python/JSON string repr (HF MMMU stores ``str(list)``)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise DataError(f"{what} is not a list: {value[:80]!r}") from None
    if isinstance(value, list | tuple):
        if any(isinstance(v, list | tuple | dict) for v in value):
            raise DataError(f"{what} is nested (a list inside the list): {str(value)[:80]!r}")
        return [str(v) for v in value]
    raise DataError(f"{what} is not a list: {str(value)[:80]!r}")


def image_bytes(value: Any) -> bytes | None:
    """Raw image bytes from an HF image struct, raw bytes, or a base64 string; None if empty."""
    if value is None or value == "":
        return None
    if isinstance(value, dict):
        return image_bytes(value.get("bytes"))
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise DataError(f"image field is neither bytes nor base64 ({value[:40]!r}...)") from None
    raise DataError(f"unsupported image field of type {type(value).__name__}")


def materialise_image(value: Any, cache_dir: Path, stem: str) -> Path:
    """Write an image field's bytes (``image_bytes``) under ``cache_dir`` (content-addressed, so re-runs
    reuse the file) and return its path; an empty field is a ``DataError``."""
    if (data := image_bytes(value)) is None:
        raise DataError(f"item {stem!r}: empty image field")
    digest = hashlib.sha256(data).hexdigest()[:16]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
    # the file suffix the image's first bytes announce (``.bin`` for none we know)
    webp = data.startswith(b"RIFF") and data[8:12] == b"WEBP"
    suffix = ".webp" if webp else next((sfx for magic, sfx in _MAGIC if data.startswith(magic)), ".bin")
    out = cache_dir / f"{safe}_{digest}{suffix}"
    if not out.exists():  # a temporary name per write: the jobs of a sweep load at once
        atomic_write_bytes(out, data)
    return out


def image_file(value: Any, source: Path, cache: Path, stem: str) -> Path:
    """An image field: a path (relative to the table file) or embedded bytes/base64."""
    if isinstance(value, str) and not (len(value) > 256 and re.fullmatch(r"[A-Za-z0-9+/=\s]+", value[:512])):
        return contained_path(source.parent, value, stem)
    if isinstance(value, dict) and not value.get("bytes") and value.get("path"):
        return contained_path(source.parent, value["path"], stem)
    return materialise_image(value, cache, stem)


def numbered_images(row: dict[str, Any], source: Path, cache: Path, item_id: str, n: int) -> list[Path]:
    images = []
    for k in range(1, n + 1):
        v = row.get(f"image_{k}")
        if v in (None, "") or (isinstance(v, dict) and not v.get("bytes") and not v.get("path")):
            break
        images.append(image_file(v, source, cache, f"{item_id}_{k}"))
    return images


# One number as the numeric scorer reads it (``scoring/numeric.py``: sign, thousands commas in groups
# of three, decimals, exponent); this layer may not import the scorer, and
# tests/benchmarks/test_gauges_ai2d_generic.py checks that both read the same number.
PLAIN_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][-+]?\d+)?")


def numeric_gold(answer: str) -> float | None:
    """The number ``answer`` is, if it is one plain number the numeric scorer reads as that same
    number; else None.

    ``float`` alone is not the test: it takes ``"inf"``, ``"NaN"`` and ``"1_000"``, and after
    dropping thousands commas it reads ``"1,5"`` as 15, while the scorer reads those golds as
    nothing, 0 and 5; such an item could never be scored right, or would be scored right for the
    wrong number."""
    text = answer.strip()
    if not re.search(r"\d", text) or not PLAIN_NUMBER.fullmatch(text):
        return None
    return float(text.replace(",", ""))


def answer_type(is_mcq: bool, answer: str) -> AnswerType:
    """MCQ, else numeric when the gold is a plain number (``numeric_gold``), else open."""
    if is_mcq:
        return AnswerType.MCQ
    return AnswerType.OPEN if numeric_gold(answer) is None else AnswerType.NUMERIC


def letter_columns(row: dict[str, Any]) -> list[str] | None:
    """Options stored as columns ``A`` … ``J`` (VLMEvalKit TSVs), up to the first empty one."""
    out = []
    for letter in "ABCDEFGHIJ":
        v = row.get(letter)
        if v in (None, "") or (isinstance(v, float) and v != v):  # NaN from pandas-written TSVs
            break
        out.append(str(v))
    return out or None
