"""The one JSONL reader (ledgermind/jsonl.py) with its explicit options: what each bad line becomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind.errors import DataError
from ledgermind.jsonl import BadLine, read_jsonl


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    return path


def test_keep_yields_each_bad_line_in_its_place_with_its_reason(tmp_path: Path) -> None:
    path = _file(tmp_path, b'{"a": 1}\n{oops\n\xff\xfe\n[1]\n{"a": 2}\n')
    rows = list(read_jsonl(path, bad=BadLine.KEEP, objects=True, torn_tail=False, what="a record"))
    assert [r.line_no for r in rows] == [1, 2, 3, 4, 5]
    assert [r.value for r in rows] == [{"a": 1}, None, None, None, {"a": 2}]
    assert (
        rows[1].error
        == f"{path}: line 2 is not a record (Expecting property name enclosed in double quotes: '{{oops')"
    )
    assert "line 3 is not a record (not UTF-8 at byte 0" in str(rows[2].error)
    assert "line 4 is not a record (a JSON list: '[1]')" in str(rows[3].error)


def test_one_undecodable_line_is_that_lines_error_not_the_files(tmp_path: Path) -> None:
    path = _file(tmp_path, b'{"a": 1}\n"\xff"\n')
    with pytest.raises(DataError, match="line 2 is not valid JSON"):
        list(read_jsonl(path))
    assert [r.value for r in read_jsonl(path, bad=BadLine.SKIP)] == [{"a": 1}]
    assert [r.value for r in read_jsonl(path, decode_errors="replace")] == [{"a": 1}, "\ufffd"]


def test_a_torn_tail_is_silent_only_where_asked_and_a_missing_file_is_one_line(tmp_path: Path) -> None:
    path = _file(tmp_path, b'{"a": 1}\n{"a": 2')
    assert [r.value for r in read_jsonl(path)] == [{"a": 1}]
    with pytest.raises(DataError, match="line 2 is not valid JSON"):
        list(read_jsonl(path, torn_tail=False))
    with pytest.raises(DataError, match="JSONL file not found"):
        list(read_jsonl(tmp_path / "absent.jsonl"))
    raw = _file(tmp_path, '{"t": "a\u2028b"}\n'.encode())  # a raw line separator inside a string is one line
    assert [r.value for r in read_jsonl(raw)] == [{"t": "a\u2028b"}]
