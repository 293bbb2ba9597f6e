"""The mutation runner's accepted-survivors table (``ledgermind/devtools/mutation.py``; docs/mutation.md):
every row names a mutant of a function ``make mutation`` mutates, with a class and a
reason, and the runner labels survivors accepted / UNCLASSIFIED from it. (Whether a row still
matches a survivor of the last run is ``scripts/mutation.py --check``; that needs the mutation
runs, so it is not a unit test.)"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from ledgermind.devtools import mutation

REPO = Path(__file__).resolve().parents[1]


def test_every_accepted_row_names_a_mutated_function_and_a_reason() -> None:
    m = mutation
    patterns = m.accepted_patterns()
    assert patterns, "docs/mutation.md has no accepted survivors table"
    globs = [g for mod in m.MODULES.values() for g in mod.globs()]
    stray = [p for p in patterns if not any(fnmatch.fnmatchcase(p, g) for g in globs)]
    assert not stray, f"accepted patterns outside the mutated functions: {stray}"
    rows = [
        line
        for line in (REPO / "docs" / "mutation.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    ]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) >= 4 and cells[2] and len(cells[3]) > 20, row  # class and a real reason


def test_classify_labels_survivors_only(tmp_path: Path) -> None:
    m = mutation
    verdicts = {
        "a.x_f__mutmut_1": "survived",
        "a.x_f__mutmut_2": "killed",
        "a.x_f__mutmut_3": "no_tests",
        "a.x_g__mutmut_1": "survived",
    }
    assert m.classify(verdicts, ["a.x_f__mutmut_[13]"]) == {
        "a.x_f__mutmut_1": "accepted",
        "a.x_f__mutmut_3": "accepted",
        "a.x_g__mutmut_1": "UNCLASSIFIED",
    }
    doc = tmp_path / "m.md"
    doc.write_text(
        "## Accepted survivors\n| mutant | f | c | r |\n|---|---|---|---|\n"
        "| `p.x_f__mutmut_1` | f | equivalent | because |\n## Next\n| `q.x_g__mutmut_2` | g | x | y |\n"
    )
    assert m.accepted_patterns(doc) == ["p.x_f__mutmut_1"]  # rows of other sections do not count


def test_check_without_a_recorded_run_is_one_line_not_every_row_stale(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A fresh checkout has no build/mutation: --check must say so, not call all accepted rows stale."""
    monkeypatch.setattr(mutation, "WORK", tmp_path)
    (tmp_path / "ledger" / "mutants").mkdir(parents=True)  # one module has a run, one has none
    for flag in ("--check", "--report", "--survivors"):
        assert mutation.main([flag, "--modules", "ledger grounding"]) == 2
        out = capsys.readouterr()
        assert out.out == "" and out.err.count("\n") == 1
        assert out.err.startswith(f"no mutation run recorded for grounding under {tmp_path}; run it first")
