"""Agreement with human annotations: the library, the study run, and a CI slice of dev."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermind.errors import UserError
from ledgermind.grounding.cascade import GroundingCascade, GroundingConfig
from ledgermind.studies.agreement import AnnotatedPair, Check, Confusion, evaluate, load_pairs
from ledgermind.studies.grounding_eval import agreement_study, study_pairs

# the study's dev targets, except entity: the shipped ECC forms are the cross-validated choice,
# which gives up the one dev row only the place guard fixed: 61/68 = 0.897 on dev.
# A regression floor there, not a target: docs/grounding.md has the held-out figures.
TARGETS = {"exact_number": 0.97, "entity": 0.89, "bound": 0.80}


def _row(**over):
    row = {
        "id": "r1",
        "subset": "numeric",
        "stratum": "vitc_bound",
        "claim": "more than 5 cases",
        "evidence": ["6 cases"],
        "kind": "other",
        "expected": {"ecc": None, "ncc": True},
    }
    return {**row, **over}


def _write(path: Path, rows) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_confusion_counts_supported_as_positive():
    conf = Confusion()
    for expected, predicted in [(True, True), (True, False), (False, True), (False, False), (False, False)]:
        conf.add(expected, predicted)
    assert (conf.tp, conf.fn, conf.fp, conf.tn, conf.n) == (1, 1, 1, 2, 5)
    assert conf.agreement == pytest.approx(3 / 5)


def test_rows_name_the_check_they_score(tmp_path):
    pairs = load_pairs(
        _write(
            tmp_path / "d.jsonl",
            [_row(), _row(id="r2", subset="entity", expected={"ecc": False, "ncc": None})],
        )
    )
    assert [(p.check, p.expected) for p in pairs] == [(Check.NCC, True), (Check.ECC, False)]


@pytest.mark.parametrize(
    "row",
    [_row(expected={"ecc": None, "ncc": None}), _row(subset="colour"), {"id": "x"}],
)
def test_bad_rows_are_one_line_user_errors(tmp_path, row):
    with pytest.raises(UserError) as err:
        load_pairs(_write(tmp_path / "d.jsonl", [row]))
    assert "\n" not in str(err.value)


def test_missing_file_and_bad_json(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_pairs(tmp_path / "none.jsonl")
    (tmp_path / "bad.jsonl").write_text("{oops\n", encoding="utf-8")
    with pytest.raises(UserError, match="bad.jsonl: line 1 is not valid JSON"):
        load_pairs(tmp_path / "bad.jsonl")


class _NoEntities:
    def entities(self, text):
        return ()

    def entities_many(self, texts):
        return [() for _ in texts]


def test_evaluate_scores_only_the_named_check_and_tallies_strata():
    pairs = [
        AnnotatedPair("a", Check.NCC, "vitc_bound", "more than 5 cases", ("6 cases",), "other", True),
        AnnotatedPair("b", Check.NCC, "vitc_bound", "over 79 %", ("a 79 % rating",), "other", False),
        AnnotatedPair("c", Check.NCC, "wice", "in 1969", ("in 1971",), "other", True),
    ]
    report = evaluate(pairs, GroundingCascade(ner=_NoEntities()))
    assert [v.predicted for v in report.verdicts] == [True, False, False]
    assert report.groups["bound"].agreement == 1.0 and report.groups["exact_number"].fn == 1
    assert [m.pair.id for m in report.misses] == ["c"]
    assert "| vitc_bound | ncc | 2 | 1.000 |" in report.table()
    strict = evaluate(pairs, GroundingCascade(GroundingConfig(ncc_relations=False), ner=_NoEntities()))
    assert [v.predicted for v in strict.verdicts] == [False, True, False]  # Eq. 5: "over 79 %" = 79 %


def _dev_slice(shared_data: Path):
    """All entity and bound rows (one regression there is visible) and every other exact row."""
    pairs = load_pairs(shared_data / "grounding_ext" / "dev.jsonl")
    exact = [p for p in pairs if p.check is Check.NCC and p.stratum != "vitc_bound"]
    return [p for p in pairs if p.check is Check.ECC or p.stratum == "vitc_bound"] + exact[::2]


def test_dev_slice_meets_the_issue_targets(shared_data, ner):
    report = evaluate(_dev_slice(shared_data), GroundingCascade(ner=ner))
    got = {name: conf.agreement for name, conf in report.groups.items()}
    assert all(got[name] >= target for name, target in TARGETS.items()), (got, report.table())


def test_dev_slice_needs_relation_aware_ncc(shared_data, ner):
    report = evaluate(
        _dev_slice(shared_data), GroundingCascade(GroundingConfig(ncc_relations=False), ner=ner)
    )
    assert report.groups["bound"].agreement < TARGETS["bound"]


def test_study_prints_the_table(tmp_path):
    data = _write(
        tmp_path / "d.jsonl",
        [_row(), _row(id="r2", claim="over 79 %", evidence=["79 %"], expected={"ecc": None, "ncc": False})],
    )
    pairs = study_pairs(data, derived=False)
    out = agreement_study(pairs, data, strict_ncc=False, misses=True)
    assert "| vitc_bound | ncc | 2 | 1.000 | 1 | 0 | 0 | 1 |" in out and "r2 [" not in out
    strict = agreement_study(pairs, data, strict_ncc=True, misses=True)
    assert "| vitc_bound | ncc | 2 | 0.000 | 0 | 1 | 1 | 0 |" in strict  # Eq. 5 reads bounds backwards
    assert "r1 [ncc/vitc_bound] human=True auditor=False" in strict  # --misses lists the disagreeing rows
    with pytest.raises(UserError, match="not found"):
        study_pairs(tmp_path / "missing.jsonl", derived=False)
