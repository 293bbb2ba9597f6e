"""Readers of files someone else made never wait on a FIFO, and never take an unbounded file or line
(ledgermind/bounded_read.py, through the JSONL reader and a run folder's JSON and YAML readers)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ledgermind import bounded_read
from ledgermind.cli.commands import main as ledgermind
from ledgermind.errors import DataError
from ledgermind.jsonl import BadLine, read_jsonl
from ledgermind.runs import files
from ledgermind.runs.claim import check_own_files
from ledgermind.runs.files import RunFileError, read_json_file, read_yaml


def outcome_without_waiting(fn: Callable[[], Any], fifo: Path) -> BaseException | None:
    """What ``fn`` raised (None: it returned), failing when it is still waiting after 10 s; the FIFO
    is then opened for writing once, so a reader that does wait is let go."""
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as e:  # handed back to the test
            outcome.append(e)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail(f"the reader waited on the FIFO {fifo.name}")
    return outcome[0]


@pytest.mark.parametrize(
    ("name", "read", "error"),
    [
        ("x.jsonl", lambda p: list(read_jsonl(p)), DataError),
        ("x.json", read_json_file, RunFileError),
        ("x.yaml", read_yaml, RunFileError),
    ],
)
def test_a_fifo_is_refused_before_a_read_waits_on_it(
    tmp_path: Path, name: str, read: Any, error: type
) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    raised = outcome_without_waiting(lambda: read(fifo), fifo)
    assert isinstance(raised, error), raised
    assert str(raised) == f"{fifo}: cannot be read (is a FIFO (named pipe), not a regular file)"


def test_a_missing_jsonl_file_is_still_not_found(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="JSONL file not found"):
        list(read_jsonl(tmp_path / "absent.jsonl"))


def test_a_line_over_the_bound_is_a_bad_line_and_never_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bounded_read, "MAX_LINE_BYTES", 64)
    path = tmp_path / "r.jsonl"
    exact = json.dumps({"a": "x" * 55})  # 64 bytes without its newline: kept
    assert len(exact) == 64
    path.write_text(f'{{"a": 1}}\n{{"a": "{"y" * 500}"}}\n{exact}\n{{"a": "{"z" * 100}"}}')
    rows = list(read_jsonl(path, bad=BadLine.KEEP))
    assert [r.line_no for r in rows] == [1, 2, 3, 4]
    assert [r.value for r in rows] == [{"a": 1}, None, json.loads(exact), None]
    assert rows[1].error == f"{path}: line 2 is not valid JSON (longer than 64 bytes: '')"
    assert rows[3].error is not None  # an over-long last line is bad, never taken for a torn tail
    with pytest.raises(DataError, match="line 2 is not valid JSON"):
        list(read_jsonl(path))


def test_a_file_over_the_bound_is_refused_in_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(bounded_read, "MAX_FILE_BYTES", 100)
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"pad": "p" * 200}))
    with pytest.raises(RunFileError) as exc:
        files.read_json_file(path)
    assert str(exc.value) == f"{path}: cannot be read (larger than 100 bytes; not read)"
    path.write_text("{}")
    assert files.read_json_file(path) == {}


def test_ls_on_a_run_whose_metrics_is_a_fifo_says_so_in_its_row(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("")
    os.mkfifo(run / "metrics.json")
    os.mkfifo(run / ".lock")
    raised = outcome_without_waiting(lambda: ledgermind(["ls", str(run)]), run / "metrics.json")
    assert raised is None
    row = capsys.readouterr().out.splitlines()[1]
    assert f"unreadable: {run / 'metrics.json'}: is a FIFO (named pipe), not a regular file; not read" in row


@pytest.mark.parametrize("name", ["results.jsonl", "run_identity.json", "wall_time.json", ".lock"])
def test_a_resume_refuses_a_run_file_that_is_a_fifo(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / name)
    with pytest.raises(DataError) as exc:
        check_own_files(tmp_path)
    assert str(exc.value).startswith(
        f"{tmp_path / name} is a FIFO (named pipe), not a regular file; a run folder"
    )


def test_a_recorded_config_that_is_a_fifo_is_named_not_missing(tmp_path: Path) -> None:
    """srfa and the report rebuild items from ``.hydra/config.yaml``: a FIFO there is said to be one,
    not taken for a run without a config."""
    from ledgermind.runs.reader import RunDir

    (tmp_path / ".hydra").mkdir()
    os.mkfifo(tmp_path / ".hydra" / "config.yaml")
    raised = outcome_without_waiting(lambda: RunDir(tmp_path).config(), tmp_path / ".hydra" / "config.yaml")
    assert isinstance(raised, RunFileError) and "is a FIFO (named pipe), not a regular file" in str(raised)
    assert RunDir(tmp_path / "none").config() is None
