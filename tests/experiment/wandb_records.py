"""Read an offline W&B run file (``run-<id>.wandb``) without network or the W&B service.

The file is a LevelDB-style log: a 7-byte header (``:W&B``, magic 0xBEE1, version 0) followed by
32 KiB blocks of chunks, each ``crc32 (4) | length (2, LE) | type (1) | data``, where type is
FULL=1 / FIRST=2 / MIDDLE=3 / LAST=4 and a record's data is a serialized ``wandb_internal_pb2.Record``.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wandb.proto import wandb_internal_pb2 as pb

BLOCK = 32 * 1024
HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def iter_records(path: Path) -> Iterator[pb.Record]:
    data = Path(path).read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B run file"
    pos, pending = HEADER, b""
    while pos + HEADER <= len(data):
        left_in_block = BLOCK - pos % BLOCK
        if left_in_block < HEADER:  # block trailer padding
            pos += left_in_block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + HEADER])
        chunk = data[pos + HEADER : pos + HEADER + length]
        pos += HEADER + length
        if kind == 0 and length == 0:
            pos += BLOCK - pos % BLOCK if pos % BLOCK else 0
            continue
        if kind in (FULL, FIRST):
            pending = chunk
        else:
            pending += chunk
        if kind in (FULL, LAST):
            rec = pb.Record()
            rec.ParseFromString(pending)
            yield rec
            pending = b""


def read_run(run_file: Path) -> dict[str, Any]:
    """``{"config", "history", "summary", "summary_records", "run": {group, job_type, tags}}`` with JSON-decoded
    values (``summary_records``: the key set of each summary record, in order)."""
    config: dict[str, Any] = {}
    history: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    run: dict[str, Any] = {}
    summary_records: list[set[str]] = []
    for rec in iter_records(run_file):
        kind = rec.WhichOneof("record_type")
        if kind == "run":
            run = {"group": rec.run.run_group, "job_type": rec.run.job_type, "tags": list(rec.run.tags)}
            for item in rec.run.config.update:
                config[item.key] = json.loads(item.value_json)
        elif kind == "config":
            for item in rec.config.update:
                config[item.key] = json.loads(item.value_json)
        elif kind == "history":
            history.append({_key(i): json.loads(i.value_json) for i in rec.history.item})
        elif kind == "summary":
            summary_records.append({_key(i) for i in rec.summary.update})
            for item in rec.summary.update:
                summary[_key(item)] = json.loads(item.value_json)
    return {
        "config": config,
        "history": history,
        "summary": summary,
        "summary_records": summary_records,
        "run": run,
    }


def _key(item: Any) -> str:
    return item.key or "/".join(item.nested_key)
