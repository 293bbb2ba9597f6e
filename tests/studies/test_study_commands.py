"""``ledgermind eval-grounding`` / ``eval-perception``: a user mistake is one ``error:`` line and exit 2
(the option named where K was the mistake), never a traceback; the report goes to stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermind import cli
from ledgermind.cli.commands import run_study
from ledgermind.errors import UserError
from ledgermind.studies.kfold import FoldCountError


def test_run_study_prints_the_report_or_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_study(lambda: "table", folds=0) == 0
    assert capsys.readouterr().out == "table\n"

    def bad_k() -> str:
        raise FoldCountError("k-fold cross-validation needs at least 2 folds, got 1")

    assert run_study(bad_k, folds=1) == 2
    assert (
        capsys.readouterr().err == "error: --folds 1: k-fold cross-validation needs at least 2 folds, got 1\n"
    )

    def missing() -> str:
        raise UserError("annotated pairs file not found: x")

    assert run_study(missing, folds=5) == 2  # not K's fault: no --folds in the line
    assert capsys.readouterr().err == "error: annotated pairs file not found: x\n"


def test_run_study_lets_a_bug_through() -> None:
    """Only a user's mistake is one line: a bug in a study keeps its traceback."""
    with pytest.raises(ZeroDivisionError):
        run_study(lambda: str(1 / 0), folds=0)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["eval-grounding", "--data", "{tmp}/none.jsonl"],
            "error: annotated pairs file not found: {tmp}/none.jsonl",
        ),
        (
            ["eval-grounding", "--folds", "1"],
            "error: --folds 1: k-fold cross-validation needs at least 2 folds, got 1",
        ),
        (
            ["eval-grounding", "--folds", "-1"],
            "error: --folds -1: k-fold cross-validation needs at least 2 folds, got -1",
        ),
        (
            ["eval-perception", "--folds", "1"],
            "error: --folds 1: k-fold cross-validation needs at least 2 folds, got 1",
        ),
        (["eval-perception", "--config", "{tmp}/none.yaml"], "error: --config {tmp}/none.yaml: no such file"),
    ],
)
def test_a_study_command_with_a_bad_option_is_one_line(
    argv: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The option is the mistake reported, with or without the shared data (here: none)."""
    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", str(tmp_path / "no-data"))
    assert cli.main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.strip() == says.format(tmp=tmp_path) and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["eval-grounding"], "error: annotated pairs file not found: {tmp}/grounding_ext/dev.jsonl"),
        (["eval-perception"], "error: no items.jsonl in {tmp}/gauges"),
    ],
)
def test_the_study_commands_find_the_shared_data_where_the_configs_do(
    argv: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """$LEDGERMIND_SHARED_DATA moves the data for conf/benchmark/*.yaml; the studies follow it too."""
    monkeypatch.setenv("LEDGERMIND_SHARED_DATA", str(tmp_path))
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.startswith(says.format(tmp=tmp_path))
