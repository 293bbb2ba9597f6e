"""Answer each item from a saved ``{id, response}`` JSONL: score any model's outputs by our run path.

Published MMMU-Pro outputs (and anyone's saved replies) are files of ``{"id": ..., "response":
...}`` lines. Replaying them through ``scripts/run.py pipeline=official backend=replay
backend.path=FILE`` scores them with exactly the loader, parser and metrics a live run uses, so
a live number and a published one are computed the same way. The reply is chosen by
``GenerationRequest.item_id``; a missing id is a ``BackendError``, i.e. a per-item error, never a
wrong answer. Other fields of a line are ignored (the official files also carry the official
parser's verdict, which a test compares against).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledgermind.backends.base import BACKENDS, Backend, GenerationRequest, Reply
from ledgermind.errors import BackendError, ConfigError, DataError
from ledgermind.jsonl import read_jsonl


def read_replies(path: Path, field: str = "response") -> dict[str, str | BackendError]:
    """``id -> response`` of a JSONL file; a malformed line is a one-line ``DataError`` naming it.

    An id given twice with different replies is refused (which one is "the" reply would be
    decided by line order, silently). A reply that is null or not text (a list, a number, an
    object: ``["Answer: 16.50"]`` is not the reply "Answer: 16.50") is kept as the ``BackendError``
    that item gets at ``generate``, never as text made from it.
    """
    if not path.is_file():
        raise ConfigError(f"backend.path: replies file not found: {path}")
    out: dict[str, str | BackendError] = {}
    # a malformed line: DataError naming it
    for n, row in enumerate((r.value for r in read_jsonl(path, torn_tail=False)), 1):
        if not isinstance(row, dict) or "id" not in row or field not in row:
            raise DataError(f"{path}: record {n} needs 'id' and {field!r}")
        text, item_id = row[field], str(row["id"])
        if not isinstance(text, str):
            kind = "null" if text is None else f"a JSON {type(text).__name__}, not text"
            text = BackendError(f"replay: the reply for item {item_id!r} in {path} is {kind}")
        if item_id in out and str(out[item_id]) != str(text):
            raise DataError(
                f"{path}: record {n} repeats id {item_id!r} with a different {field!r}; keep one reply per id"
            )
        out[item_id] = text
    return out


@BACKENDS.register("replay")
class ReplayBackend(Backend):
    """Replays saved replies by item id. Not cached (the file *is* the cache)."""

    name = "replay"
    cacheable = False

    def __init__(self, model: Mapping[str, Any], path: str | None = None, field: str = "response") -> None:
        if not path:
            raise ConfigError("backend=replay needs backend.path=FILE (a JSONL of {id, response})")
        self.path = Path(path).expanduser()
        self.replies = read_replies(self.path, field)
        self._model_id = str(model.get("name") or "replay")

    async def generate(self, request: GenerationRequest) -> Reply:
        if not request.item_id:
            raise BackendError("replay backend: the request names no item (the agent must set item_id)")
        try:
            text = self.replies[request.item_id]
        except KeyError:
            raise BackendError(f"replay: no reply for item {request.item_id!r} in {self.path}") from None
        if isinstance(text, BackendError):
            raise BackendError(str(text))  # a fresh error per call: no traceback piles up on the stored one
        return self.reply(text, meta={"replay_file": str(self.path)})
