"""``ledgermind ls KIND``: every name a run can use, read from ``conf/`` and the registries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ledgermind.cli import ls
from ledgermind.cli.commands import main as ledgermind
from ledgermind.confutil import CONF_DIR
from ledgermind.repair.policy import OPERATORS

GROUP_OF = {"benchmarks": "benchmark", "ablations": "ablation", "backends": "backend", "models": "model"}


def _listed(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("kind", sorted(GROUP_OF))
def test_a_conf_group_lists_every_option_once_with_its_comment(kind: str, capsys) -> None:
    assert ledgermind(["ls", kind]) == 0
    out = capsys.readouterr().out
    files = sorted((CONF_DIR / GROUP_OF[kind]).glob("*.yaml"))
    expected = [
        p.stem for p in files if not p.stem.startswith("_")
    ]  # a file starting with _ is a shared base
    assert _listed(out)[: len(expected)] == expected and expected
    first = files[-1].read_text(encoding="utf-8").splitlines()[0].lstrip("# ")
    assert first[:40] in out  # the option's own first comment says what it is


def test_benchmarks_name_their_loader_and_backends_their_class(capsys) -> None:
    assert ledgermind(["ls", "benchmarks"]) == 0
    assert "mmmu_pro_standard10  [loader mmmu_pro]" in capsys.readouterr().out
    assert ledgermind(["ls", "backends"]) == 0
    assert "[ledgermind.backends.vllm_server.VLLMServerBackend]" in capsys.readouterr().out


def test_operators_come_from_the_operator_table(capsys) -> None:
    assert ledgermind(["ls", "operators"]) == 0
    out = capsys.readouterr().out
    typed = [name.value for name, op in OPERATORS.items() if op.layer is not None]
    assert _listed(out) == typed and "[EVIDENCE] DROP(e)" in out and "FREEFORM" not in out


def test_a_new_option_shows_up_without_an_edit(tmp_path: Path) -> None:
    (tmp_path / "ablation").mkdir()
    (tmp_path / "ablation" / "_flags.yaml").write_text("# shared base\n")
    (tmp_path / "ablation" / "no_verify.yaml").write_text(
        "# w/o verification: a new flag\ndefaults:\n  - _flags\n"
    )
    assert ls.render(ls.ablations(tmp_path)) == "no_verify  w/o verification: a new flag"


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("benchmark", "did you mean benchmarks? "),
        ("operatrs", "did you mean operators? "),
        ("xyzzy", ""),
    ],
)
def test_an_unknown_kind_is_one_line_and_exit_2(kind: str, hint: str, capsys) -> None:
    assert ledgermind(["ls", kind]) == 2
    err = capsys.readouterr().err
    kinds = "benchmarks | ablations | backends | models | operators"
    assert err.strip().splitlines() == [
        f"ledgermind ls: error: unknown kind {kind!r}: {hint}(kinds: {kinds})"
    ]


def test_python_dash_m_ledgermind_lists() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ledgermind", "ls", "models"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.returncode == 0 and "qwen2_5_vl_7b" in proc.stdout and proc.stderr == ""
